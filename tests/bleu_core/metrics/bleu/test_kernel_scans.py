"""BLEU's one-scan tokenizers == sacrebleu 2.6.0 on adversarial text: intl's three regexes run side by
side in the scan that splits (a regex-2 match decided one character late, regex 1 consuming the
punctuation regex 2 would start at, runs of plain characters, symbols, digits on either side,
Unicode whitespace as a regex character), and 13a's and zh's runs of multi-byte characters, with
the UTF-8 validation in the same scan. Expected values come from sacrebleu, run here."""

import itertools
import random

import numpy as np
import pyarrow as pa
import pytest

from bleu_core import Bleu

from ....oracle import sacre_corpus
from .test_kernel_bytes import assert_invalid_utf8

#: one character of each kind the scans tell apart: plain ASCII and multi-byte letters, digits
#: (ASCII and \p{N} beyond it), \p{P} (ASCII, Latin-1, CJK), \p{S} (ASCII and beyond), whitespace
#: (ASCII, U+00A0, U+3000, U+2028), a Chinese character, a 4-byte character, NUL and a control
ALPHABET = ["a", "Z", "é", "ж", "東", "1", "٣", "²", "½", ".", ",", "-", "!", "'", '"', "(", "«", "»", "¡", "。",
            "、", "—", "“", "$", "+", "©", "€", "<", "&", " ", "\t", "\n", "\u00a0", "\u3000", "\u2028",
            "\U0001F600", "\U00020000", "\x00", "\x1c"]


def _check(tokenize, cands, refs, lowercase=False):
    kw = dict(tokenize=tokenize, lowercase=lowercase)
    metric = Bleu(**kw)
    expected = np.array(sacre_corpus(cands, refs, **kw)[1], dtype=np.int64)
    np.testing.assert_array_equal(metric.batch_stats(cands, refs), expected)
    np.testing.assert_array_equal(metric.batch_stats(pa.array(cands), pa.array(refs)), expected)
    np.testing.assert_array_equal(metric.batch_stats_many([cands, cands], refs)[1], expected)


def _pairs_and_triples():
    """Every string of two and three characters of a smaller alphabet (where the regexes' matches
    overlap), each a candidate against its own reverse and a fixed reference."""
    small = ["a", "é", "1", "٣", ".", ",", "«", "¡", "$", "©", " ", "\u3000"]
    texts = ["".join(p) for n in (2, 3) for p in itertools.product(small, repeat=n)]
    return texts, [[t[::-1], "a . 1 ,"] for t in texts]


@pytest.mark.parametrize("tokenize", ["intl", "13a", "zh"])
@pytest.mark.parametrize("lowercase", [False, True])
def test_every_short_string_matches_sacrebleu(tokenize, lowercase):
    cands, refs = _pairs_and_triples()
    _check(tokenize, cands, refs, lowercase=lowercase)


@pytest.mark.parametrize("tokenize", ["intl", "13a", "zh"])
@pytest.mark.parametrize("lowercase", [False, True])
def test_random_strings_match_sacrebleu(tokenize, lowercase):
    rng = random.Random(34)
    cands = ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 24))) for _ in range(1500)]
    refs = [["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 24))), c[::-1], c.upper()] for c in cands]
    _check(tokenize, cands, refs, lowercase=lowercase)


#: written out: what each regex does, and where the scan must look back or ahead
INTL_CASES = [
    "a.,b", "a..b", "a...", "...", ".a.", "1.5", "1,000.50", "a.1", "1.a", ".1", "1.", "-1", "a-b", "x!?y", "«a»",
    "¡Hola!", "“quoted”.", "a$b", "$5.00", "5$", "©2024.", "a.$", "$.a", "a .b", "a. b", "٣.٣", "²,a", "a,²",
    "東京。晴れ", "ж.ж", "é,é", "a\u00a0.b", "a.\u3000b", "\u3000.\u3000", ".\u2028.", "a\n.b", "a\x00.b",
    "\x1c.,", "😀.😀", "a" * 40 + "." + "é" * 40, "word.word,word!word?word", "(a)(b)", "a'b'c", "&amp;.&",
]


@pytest.mark.parametrize("lowercase", [False, True])
def test_intl_cases_match_sacrebleu(lowercase):
    cands = INTL_CASES + [c + " " + c for c in INTL_CASES]
    refs = [[c, c.replace(".", " . ")] for c in INTL_CASES[::-1] + INTL_CASES]
    _check("intl", cands, refs, lowercase=lowercase)


#: invalid UTF-8 inside runs of multi-byte characters, after a character the intl scan keeps
#: pending, and at the end of the text (the NUL after it must end the sequence)
INVALID = [b"\xc3\xa9\xc3", b"\xc3\xa9\xc3\xa9\x80", b"ab\xe6\x9d\xb1\xe6\x9d", b"a.\xff", b"\xe6\x9d\xb1.\xc3",
           b"a\xed\xa0\x80b", b"\xe0\x9f\xbf", b"\xf4\x90\x80\x80.", b"x\xf0\x9f\x98\x80\xf0\x9f\x98", b"\xc3\x00",
           b"\xe2\x80\xa8\xe2\x80", b"\xe3\x80\x80\xe3"]


@pytest.mark.parametrize("tokenize", ["intl", "13a", "zh"])
def test_invalid_utf8_in_runs_names_row_and_column(tokenize):
    metric = Bleu(tokenize=tokenize)
    for raw in INVALID:
        with pytest.raises(UnicodeDecodeError):  # the expectation: Python's strict decoder refuses it
            raw.decode("utf-8")
        assert_invalid_utf8(metric, raw)

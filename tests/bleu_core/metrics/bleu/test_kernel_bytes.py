"""BLEU's kernel near the bytes == sacrebleu 2.6.0: the characters whose UTF-8 lead bytes the fused
13a scan must look at (every Unicode whitespace, the punctuation and symbols beside them, 4-byte
characters), 13a's rewrites found in the scan, invalid UTF-8 wherever it can hide (errors naming
row and column, as Python's strict decoder judges the bytes), and rows on both sides of the packed
n-gram keys' limits (65,535 distinct tokens, order 4). Expected values come from sacrebleu, run
here, or from Python's decoder."""

import sys

import numpy as np
import pyarrow as pa
import pytest

from bleu_core import Bleu
from bleu_core.errors import BatchInputError

from ....oracle import sacre_corpus

TOKENIZERS = ["13a", "intl", "zh", "char", "none"]

#: every code point str.split() splits at, above ASCII and in it
SPACES = [c for c in range(sys.maxunicode + 1) if chr(c).isspace()]
#: their neighbours (same lead bytes, mostly punctuation the tokenizers treat otherwise)
NEIGHBOURS = sorted({c + d for c in SPACES if c > 0x7F for d in (-1, 1)} - set(SPACES))
#: punctuation, symbols and digits with lead bytes 0xC2, 0xE1, 0xE2, 0xE3, 0xEF, and 4-byte characters
OTHERS = [0xA1, 0xA7, 0xAB, 0xB7, 0xBB, 0xBF, 0x2010, 0x2013, 0x2014, 0x2018, 0x2019, 0x201C, 0x201D, 0x201E,
          0x2026, 0x2030, 0x20AC, 0x2212, 0x3001, 0x3002, 0x300C, 0x300D, 0x4E00, 0xFF01, 0xFF0C, 0xFF10, 0xFFE5,
          0x1F600, 0x10000, 0x1D7CE, 0x20000, 0x10FFFF, 0x0660, 0x00B2, 0x1680, 0x169B]
CHARS = [chr(c) for c in SPACES + NEIGHBOURS + OTHERS]


def _sentences(c):
    return [f"a{c}b", f"{c}", f" {c} ", f"1{c}.", f"x.{c}2,", f"{c}{c}-{c}", f"A {c} b{c}c. 3-{c}", f"{c}end{c}",
            f"&amp;{c}&quot;", f"<skipped>{c}x"]


def assert_invalid_utf8(metric, raw: bytes):
    """``raw`` (not UTF-8) as a candidate and as a second reference: each an error naming its row and column."""
    cands = pa.array([b"fine", raw], pa.binary()).cast(pa.string(), safe=False)
    with pytest.raises(BatchInputError, match="row 1, candidate: invalid UTF-8"):
        metric.batch_stats(cands, pa.array([["a"], ["b"]]))
    refs = pa.ListArray.from_arrays(pa.array([0, 2], pa.int32()),
                                    pa.array([b"a", raw], pa.binary()).cast(pa.string(), safe=False))
    with pytest.raises(BatchInputError, match=r"row 0, references\[1\]: invalid UTF-8"):
        metric.batch_stats(["a"], refs)


def _check(tokenize, cands, refs, lowercase=False, order=4):
    kw = dict(tokenize=tokenize, lowercase=lowercase, max_ngram_order=order)
    metric = Bleu(**kw)
    expected = np.array(sacre_corpus(cands, refs, **kw)[1], dtype=np.int64)
    np.testing.assert_array_equal(metric.batch_stats(cands, refs), expected)
    np.testing.assert_array_equal(metric.batch_stats(pa.array(cands), pa.array(refs)), expected)
    # several systems of the same references (stats_many)
    many = metric.batch_stats_many([cands, cands[::-1]], refs)
    np.testing.assert_array_equal(many[0], expected)
    expected_rev = np.array(sacre_corpus(cands[::-1], refs, **kw)[1], dtype=np.int64)
    np.testing.assert_array_equal(many[1], expected_rev)


@pytest.mark.parametrize("tokenize", TOKENIZERS)
@pytest.mark.parametrize("lowercase", [False, True])
def test_lead_byte_classes_match_sacrebleu(tokenize, lowercase):
    cands, refs = [], []
    for i, c in enumerate(CHARS):
        sents = _sentences(c)
        other = CHARS[(i * 7 + 3) % len(CHARS)]
        for j, s in enumerate(sents):
            cands.append(s)
            refs.append([sents[(j + 1) % len(sents)], s.replace(c, other) + f" {c}"])
    _check(tokenize, cands, refs, lowercase=lowercase)


@pytest.mark.parametrize("order", [1, 2, 4, 5, 9])
def test_orders_and_references_match_sacrebleu(order):
    cands, refs = [], []
    for i, c in enumerate(CHARS):
        s = f"the{c}cat sat . on{c} the mat{c} , the cat{c}"
        cands.append(s)
        refs.append([s.replace("cat", "dog"), None if i % 3 else "the cat sat", f"on{c} the mat{c} , the cat{c}"])
    _check("13a", cands, refs, order=order)
    _check("intl", cands, refs, order=order)


REWRITES = ["a &quot;b&quot; c", "x&amp;lt;y", "&lt;&gt;", "a & b", "<", "a<b", "<skipped>", "a <skipped> b",
            "x-\ny", "x\ny", "x\n", "\n", "-\n-\n", "a&amp;quot;", "é&quot;ü", "“&amp;”", "ü<skipped>\u2003",
            "1.\n2", "x,&quot;", "&&&", "<<skipped>skipped>", "a\u00a0&amp;\u3000b", "\u0085<\u2028>"]


@pytest.mark.parametrize("lowercase", [False, True])
def test_13a_rewrites_match_sacrebleu(lowercase):
    cands = REWRITES + [r + " tail" for r in REWRITES]
    refs = [[r, "a b c"] for r in REWRITES[::-1] + REWRITES]
    _check("13a", cands, refs, lowercase=lowercase)


#: byte strings Python's strict decoder refuses, around the lead bytes and the 13a rewrites
INVALID = [b"\xff", b"a\xffb", b"\x80", b"a \x80", b"\xc2", b"a\xc2", b"\xc2 ", b"\xc2\x20b", b"\xc0\x80", b"\xc1\xbf",
           b"\xe2\x80", b"x \xe2\x80", b"\xe2\x80 ", b"\xe0\x80\x80", b"\xed\xa0\x80", b"\xf0\x80\x80\x80",
           b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\xf0\x9f\x98", b"a\xf0\x9f\x98 ", b"\xe2\x80\x80\x80",
           b"\xe2<skipped>\x80\x9c", b"\xc3&amp;", b"\xe3\x80\x80\x80 ", b"ok\n\xa0", b"\xe2\x80\x83\xe2",
           b"a b c \xe2\x80\xa8\xc2", b"&quot;\xff", b"x" * 20 + b"\xe2\x82"]


def _string_array(values):
    return pa.array(values, pa.binary()).cast(pa.string(), safe=False)


@pytest.mark.parametrize("tokenize", TOKENIZERS)
@pytest.mark.parametrize("lowercase", [False, True])
def test_invalid_utf8_names_row_and_column(tokenize, lowercase):
    metric = Bleu(tokenize=tokenize, lowercase=lowercase)
    for raw in INVALID:
        with pytest.raises(UnicodeDecodeError):  # the expectation: Python's strict decoder refuses it
            raw.decode("utf-8")
        cands = _string_array([b"fine", b"also fine", raw])
        with pytest.raises(BatchInputError, match="row 2, candidate: invalid UTF-8"):
            metric.batch_stats(cands, pa.array([["a"], ["b"], ["c"]]))
        refs = pa.ListArray.from_arrays(pa.array([0, 1, 3], pa.int32()), _string_array([b"a", b"b", raw]))
        with pytest.raises(BatchInputError, match=r"row 1, references\[1\]: invalid UTF-8"):
            metric.batch_stats(["a", "b"], refs)


@pytest.mark.parametrize("distinct", [65535, 65536])
@pytest.mark.parametrize("order", [4, 5])
def test_rows_around_the_packed_key_limit_match_sacrebleu(distinct, order):
    """A candidate of `distinct` distinct tokens (65,535: its n-grams packed into 64-bit keys;
    65,536: counted the other way), repeated in part, against references sharing its n-grams."""
    words = [f"w{i}" for i in range(distinct)]
    cand = " ".join(words + words[:50] + words[-50:])
    ref1 = " ".join(words[::2] + words[-100:])
    ref2 = " ".join(words[-60:] + words[:3] + words[-70:])
    _check("13a", [cand, "a b c d", cand[:1000]], [[ref1, ref2], ["a b c d e"], [ref2]], order=order)

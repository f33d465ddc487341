"""intl's and zh's flag table made from the input's own characters (``flag_table_for``: what a
small list input uses instead of the ~0.3 CPU-s table of every code point) gives sacrebleu 2.6.0's
statistics, lowercase included (characters whose lowercase is another character, or two, or depends
on the context: Greek capital sigma). Expected values come from sacrebleu, run here."""

import importlib
import random

import numpy as np
import pytest

from bleu_core import Bleu
from bleu_core.tokenizers import _unicode

from ...oracle import sacre_corpus

ALPHABET = ["a", "Z", "é", "ж", "東", "1", "٣", "²", "½", ".", ",", "-", "!", "'", '"', "(", "«", "»", "¡", "。",
            "、", "—", "“", "$", "+", "©", "€", "<", "&", " ", "\t", "\u00a0", "\u3000", "\U0001F600",
            "\U00020000", "Σ", "İ", "ẞ", "Ω", "ﬁ", "Ⅻ", "Ǆ"]

LOWERCASE_TRAPS = ["ΟΔΥΣΣΕΥΣ.", "ΣΑΣ, ΣΑΣ!", "Σ.", "İstanbul'da İ.", "STRASSE ẞ!", "Ⅻ Ǆ ﬁ (Ω)", "ΑΣ«ΣΑ»Σ"]


class _NotBuilt:
    """Stands for ``flag_table`` not built yet; fails the test if the whole table is asked for."""

    def cache_info(self):
        return type("Info", (), {"currsize": 0})()

    def __call__(self):
        raise AssertionError("the whole flag table was built for a small list input")


@pytest.fixture
def small_tables(monkeypatch):
    # the tokenizers bind flag_table when first imported: imported before the stand-in, so that it
    # never outlives this test in them
    for name in ("tokenizer_intl", "tokenizer_zh"):
        importlib.import_module(f"bleu_core.tokenizers.{name}")

    monkeypatch.setattr(_unicode, "flag_table", _NotBuilt())
    monkeypatch.setenv("BEAMBLEU_CACHE_DIR", "")  # no kept table either (test_flag_table_cache.py: with one)


@pytest.mark.parametrize("tokenize", ["intl", "zh"])
@pytest.mark.parametrize("lowercase", [False, True])
def test_own_characters_table_matches_sacrebleu(small_tables, tokenize, lowercase):
    rng = random.Random(7)
    cands = ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 20))) for _ in range(400)] + LOWERCASE_TRAPS
    refs = [["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 20))), c[::-1].upper()] for c in cands]
    kw = dict(tokenize=tokenize, lowercase=lowercase)
    expected = np.array(sacre_corpus(cands, refs, **kw)[1], dtype=np.int64)
    metric = Bleu(**kw)
    np.testing.assert_array_equal(metric.batch_stats(cands, refs), expected)
    np.testing.assert_array_equal(metric.batch_stats_many([cands[::-1], cands], refs)[1], expected)


def test_flags_of_the_characters_given_and_of_all_ascii(small_tables):
    table = _unicode.flag_table_for(["x٣", "Σ"], lowercase=True)
    assert len(table) == _unicode.UNI_SIZE
    # by hand: Arabic-Indic three is \p{N}; '.' (ASCII, always in) is \p{P}; '+' \p{S}; a letter none
    assert table[ord("٣")] == _unicode.F_N
    assert table[ord(".")] == _unicode.F_P and table[ord("+")] == _unicode.F_S and table[ord("x")] == 0
    # both lowercase forms of capital sigma are letters: present, no flag; a character absent: 0
    assert table[ord("σ")] == table[ord("ς")] == 0 and table[ord("東")] == 0


def test_the_whole_table_when_the_text_is_large_or_not_strings(monkeypatch):
    whole = object()
    monkeypatch.setattr(_unicode, "flag_table", type("T", (), {"cache_info": _NotBuilt.cache_info,
                                                             "__call__": lambda self: whole})())
    monkeypatch.setattr(_unicode, "SMALL_TEXT", 10)
    monkeypatch.setenv("BEAMBLEU_CACHE_DIR", "")
    assert _unicode.flag_table_for(["abcdef", "ghijkl"], lowercase=False) is whole
    assert _unicode.flag_table_for(["abc", b"def"], lowercase=False) is whole

"""Tokenizers: scalar forms equal sacrebleu's; the kernel's Unicode tables equal their sources."""

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bleu_core import batch_stats, get_tokenizer
from bleu_core.tokenizers import SPM_TOKENIZERS, TOKENIZERS
from bleu_core.tokenizers._unicode import F_N, F_P, F_S, F_ZH, flag_table
from bleu_core.tokenizers.tokenizer_zh import chinese_ranges

from ...oracle import has_mecab
from ...strategies import segment
from sacrebleu.metrics.bleu import _get_tokenizer


@pytest.mark.parametrize("name", [t for t in TOKENIZERS if t not in SPM_TOKENIZERS and ("mecab" not in t or has_mecab(t))])
@settings(max_examples=200, deadline=None)
@given(line=st.one_of(segment, st.text()))
def test_scalar_tokenizer_equals_sacrebleu(name, line):
    ours = get_tokenizer(name)
    theirs = _get_tokenizer(name)()
    assert ours(line) == theirs(line)
    assert ours.signature() == theirs.signature()


def test_zh_table_is_what_sacrebleus_comparisons_evaluate():
    from sacrebleu.tokenizers.tokenizer_zh import TokenizerZh

    flags = np.frombuffer(flag_table(), dtype=np.uint8)
    ours = (flags & F_ZH) != 0
    # brute force over every code point with sacrebleu's own predicate
    brute = np.array([TokenizerZh._is_chinese_char.__wrapped__(chr(c)) if not 0xD800 <= c <= 0xDFFF else False
                      for c in range(0x110000)])
    np.testing.assert_array_equal(ours, brute)


def test_zh_two_character_bounds_issue_298():
    # ('\u20000', '\u2a6d6') is ('\u2000' '0', '\u2a6d' '6'): it accepts U+2001..U+2A6D,
    # general punctuation and arrows among them, and not CJK Extension B at U+20000
    ranges = chinese_ranges()
    assert (0x2001, 0x2A6D) in ranges
    assert (0x2F81, 0x2FA1) in ranges
    flags = np.frombuffer(flag_table(), dtype=np.uint8)
    assert not flags[0x20000] & F_ZH and not flags[0x2000] & F_ZH and flags[0x2026] & F_ZH


def test_intl_table_equals_regex_module():
    import regex

    flags = np.frombuffer(flag_table(), dtype=np.uint8)
    rng = np.random.default_rng(0)
    cps = np.concatenate([np.arange(0, 0x3000), rng.integers(0x3000, 0x110000, 20000)])
    for cp in cps:
        if 0xD800 <= cp <= 0xDFFF:
            continue
        ch = chr(int(cp))
        assert bool(flags[cp] & F_N) == bool(regex.match(r"\p{N}", ch)), hex(cp)
        assert bool(flags[cp] & F_P) == bool(regex.match(r"\p{P}", ch)), hex(cp)
        assert bool(flags[cp] & F_S) == bool(regex.match(r"\p{S}", ch)), hex(cp)


def test_python_whitespace_not_ascii_nor_arrow():
    # U+0085, U+00A0, U+2028, U+3000 and \x1c are whitespace to str.split(); U+200B and U+FEFF are not
    line = "a\x85b\xa0c\u2028d\u3000e\x1cf\u200bg\ufeffh"
    stats = batch_stats([line], [[line]], tokenize="none", max_ngram_order=1)
    assert stats[0, 0] == len(line.split()) == 6


@pytest.mark.parametrize("tokenize", ["13a", "intl", "zh", "char", "none"])
def test_sliced_and_chunked_arrow_inputs(tokenize):
    cands = pa.array(["x", "The cat, 3.5!", None, "中文 测试", "a-b"])
    refs = pa.array([["x"], ["the cat 3.5 !", None], [""], ["中文测试"], ["a - b", "ab"]])
    got = batch_stats(cands.slice(3), refs.slice(3), tokenize=tokenize)
    want = batch_stats(["中文 测试", "a-b"], [["中文测试"], ["a - b", "ab"]], tokenize=tokenize)
    np.testing.assert_array_equal(got, want)
    chunked = pa.chunked_array([cands.slice(3, 1), cands.slice(4)])
    np.testing.assert_array_equal(batch_stats(chunked, refs.slice(3), tokenize=tokenize), want)
    # int32 and int64 offsets give the same result
    big = batch_stats(cands.slice(3).cast(pa.large_string()), refs.slice(3).cast(pa.large_list(pa.large_string())),
                      tokenize=tokenize)
    np.testing.assert_array_equal(big, want)


@pytest.mark.parametrize("tokenize", ["13a", "zh", "intl"])
@settings(max_examples=1500, deadline=None)
@given(line=st.text(alphabet=".,-0 9a€中'\u00a0(!\t\x00", max_size=16))
def test_dense_punctuation_chains_match_sacrebleu(tokenize, line):
    """Runs like '..,.', '1.,2', '-.-5', '. ,', '(.5', '中.,' stress the left-to-right, non-overlapping
    match rules (13a and zh decide them in one scan of the text, from its neighbours: _bleu.c's
    split_regexp)."""
    from ...oracle import sacre_corpus

    refs = [[line[::-1], line.replace(".", ". ")], [". , - 0 9 a"]]
    cands = [line, line]
    got = batch_stats(cands, refs, tokenize=tokenize)
    _, theirs = sacre_corpus(cands, refs, tokenize=tokenize)
    assert got.tolist() == [list(map(int, r)) for r in theirs]
    assert get_tokenizer(tokenize)(line.rstrip()) == _get_tokenizer(tokenize)()(line.rstrip())

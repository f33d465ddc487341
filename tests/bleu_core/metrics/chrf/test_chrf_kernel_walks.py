"""The chrF kernel's n-gram walks (bleu_core.metrics.chrf._chrf) on inputs picked to reach each of their paths.

The kernel walks a segment's character n-grams position by position: the first PACKED_MAX (3)
orders are packed into the key, longer ones chained on the slot of their prefix; positions with all
`char_order` orders ahead take a loop with constant bounds (order 6 its own, unrolled), the last
`char_order - 1` positions a general one; a reference's walk stops at the first n-gram the
candidate lacks; a row's last reference is counted without resetting its counters (the table is
cleared after it), the others with. Each test below is compared with sacrebleu 2.6.0's own
statistics, computed in the test (``CHRF(...)._extract_corpus_statistics``).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from bleu_core.metrics.chrf.kernel import chrf_batch_stats, chrf_batch_stats_many

from .test_chrf_kernel import sacre_stats


def check(cands, refs, **opts):
    """stats (rows and sums) and stats_many (the candidates as two systems) equal sacrebleu's."""
    expected = sacre_stats(cands, refs, **opts)
    np.testing.assert_array_equal(chrf_batch_stats(cands, refs, **opts), expected)
    np.testing.assert_array_equal(chrf_batch_stats(cands, refs, per_row=False, **opts), expected.sum(axis=0))
    other = cands[1:] + cands[:1]
    rows = chrf_batch_stats_many([cands, other], refs, **opts)
    np.testing.assert_array_equal(rows[0], expected)
    np.testing.assert_array_equal(rows[1], sacre_stats(other, refs, **opts))


def many_distinct(rng: random.Random, n: int) -> str:
    """n characters drawn from several thousand distinct code points (CJK, Hangul, astral, Latin),
    with spaces of several Unicode kinds between some of them."""
    pools = [range(0x4E00, 0x4E00 + 3000), range(0xAC00, 0xAC00 + 1500), range(0x1F300, 0x1F300 + 600),
             range(0x20000, 0x20000 + 500), range(0x61, 0x7B)]
    spaces = [" ", "\t", "\u3000", "\u00a0", "\x1c", "\x85", "\u2009"]
    out = []
    for _ in range(n):
        if rng.random() < 0.08:
            out.append(rng.choice(spaces))
        else:
            out.append(chr(rng.choice(rng.choice(pools))))
    return "".join(out)


@pytest.mark.parametrize("char_order", [1, 2, 3, 4, 5, 6, 7, 10])
@pytest.mark.parametrize("word_order", [0, 2])
def test_lengths_around_the_order(char_order, word_order):
    """Candidates and references of every length from 0 to char_order + 2 (the walks' tail
    positions, the constant-bound loop's first position), with repeats, in both roles."""
    words = ["ab", "ab", "abc", "b.", ".a", "ca", "abcab"]
    cands, refs = [], []
    for n in range(char_order + 3):
        for m in range(char_order + 3):
            cands.append(("ab" * 8)[:n])
            refs.append([("abca" * 4)[:m], ("ab" * 8)[:m]])
            cands.append(" ".join(words[: n % 7]))
            refs.append([" ".join(words[m % 7:]), None][: 1 + (n + m) % 2])
    check(cands, refs, char_order=char_order, word_order=word_order)


@pytest.mark.parametrize("opts", [
    {},
    {"word_order": 2},
    {"word_order": 1, "whitespace": True},
    {"lowercase": True, "word_order": 2},
    {"char_order": 4, "word_order": 3, "eps_smoothing": True},
])
def test_rows_with_thousands_of_distinct_characters(opts):
    """Long rows whose characters are drawn from thousands of code points (astral ones too):
    n-grams of many distinct characters, and shared ones between candidate and references."""
    rng = random.Random(34)
    cands, refs = [], []
    for _ in range(12):
        base = many_distinct(rng, rng.randrange(200, 2500))
        cut = rng.randrange(len(base) + 1)
        cands.append(base)
        refs.append([base[cut:] + base[:cut], many_distinct(rng, 300), base[: len(base) // 2]])
    cands.append(many_distinct(rng, 5000))
    refs.append([cands[-1][::-1], cands[-1]])
    check(cands, refs, **opts)


@pytest.mark.parametrize("opts", [{}, {"word_order": 2}, {"char_order": 3}, {"char_order": 8, "word_order": 1}])
def test_high_counts_and_clipping(opts):
    """N-grams occurring hundreds of times on either side: matches are min(hyp, ref) per n-gram."""
    cands = ["a" * 700, "ab " * 300, "abcabc" * 50 + "x", "é" * 10, "a a a a b"]
    refs = [["a" * 300, "a" * 1000], ["ab " * 500, "ba " * 5], ["abc" * 7, "cab" * 200],
            ["é" * 400], ["a " * 100, "b " * 200, "a a"]]
    check(cands, refs, **opts)


@pytest.mark.parametrize("opts", [{}, {"word_order": 2}])
def test_missing_references_anywhere(opts):
    """Missing references (None) before, between and after the real ones: the last real one,
    counted without resetting its counters, is not always the list's last; earlier ones are
    counted after others reset theirs."""
    cands = ["the cat sat", "the cat sat", "the cat sat", "a dog, a cat.", "x"]
    refs = [
        ["the cat sat on", None, None],
        [None, "cat sat the", "the the cat cat sat sat"],
        ["sat", "the cat sat", None, "cat"],
        [None, "a dog", None, "a cat, a dog.", None],
        ["x", "x x", "xx"],
    ]
    check(cands, refs, **opts)


def test_random_pairs_of_a_small_alphabet():
    """Many pairs over a 3-letter alphabet: long repeated runs, every prefix shared, every order."""
    rng = random.Random(7)
    cands = ["".join(rng.choice("ab c") for _ in range(rng.randrange(0, 60))) for _ in range(200)]
    refs = [["".join(rng.choice("abc ") for _ in range(rng.randrange(0, 60))) for _ in range(rng.randrange(1, 4))]
            for _ in range(200)]
    for opts in ({}, {"word_order": 2}, {"char_order": 9, "word_order": 3}):
        check(cands, refs, **opts)

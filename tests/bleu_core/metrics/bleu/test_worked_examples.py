"""The seed document's worked examples, with the arithmetic written out by hand."""

import math

import pytest

from bleu_core import BleuStats, corpus_bleu, sentence_bleu

REF = "the cat is on the mat"


def test_cat_on_mat_is_57_893():
    # candidate "the cat is on mat" (c = 5) vs "the cat is on the mat" (r = 6)
    # 1-grams: the cat is on mat -> all 5 in the reference          -> 5/5
    # 2-grams: the-cat cat-is is-on on-mat -> on-mat missing          -> 3/4
    # 3-grams: the-cat-is cat-is-on is-on-mat                         -> 2/3
    # 4-grams: the-cat-is-on cat-is-on-mat                            -> 1/2
    # product of precisions = 1 * 3/4 * 2/3 * 1/2 = 1/4
    # BP = exp(1 - 6/5) = exp(-0.2); BLEU = BP * (1/4) ** (1/4)
    s = corpus_bleu(["the cat is on mat"], [[REF]])
    assert (s.sys_len, s.ref_len) == (5, 6)
    assert s.counts == [5, 3, 2, 1] and s.totals == [5, 4, 3, 2]
    expected = 100 * math.exp(-0.2) * 0.25 ** 0.25
    assert s.score == pytest.approx(expected, abs=1e-12)
    assert round(s.score, 3) == 57.893
    assert s.bp == pytest.approx(math.exp(-0.2))


def test_short_candidate_brevity_penalty_0_6065():
    # "the cat is on" : every n-gram is in the reference, c = 4, r = 6
    # BP = exp(1 - 6/4) = exp(-0.5) = 0.60653
    s = corpus_bleu(["the cat is on"], [[REF]])
    assert s.precisions == [100.0, 100.0, 100.0, 100.0]
    assert round(s.bp, 4) == 0.6065
    assert s.bp == pytest.approx(math.exp(-0.5))
    assert s.score == pytest.approx(100 * math.exp(-0.5))


def test_clipping_red_red_red_blue():
    # candidate red x3 + blue; reference "red blue green white" has red once and blue once
    # clipped unigram matches = min(3, 1) + min(1, 1) = 2 of 4 -> p1 = 1/2
    s = corpus_bleu(["red red red blue"], [["red blue green white"]])
    assert s.counts[0] == 2 and s.totals[0] == 4
    assert s.precisions[0] == 50.0


def test_the_the_the_cat():
    # candidate "the the the cat" vs "the cat the mat"
    # unigrams: the x3 (ref has 2) -> 2, cat -> 1: p1 = 3/4
    # bigrams: the-the x2 (ref 0), the-cat (ref 1): p2 = 1/3
    s = corpus_bleu(["the the the cat"], [["the cat the mat"]])
    assert s.counts[:2] == [3, 1] and s.totals[:2] == [4, 3]
    assert s.precisions[0] == 75.0
    assert s.precisions[1] == pytest.approx(100 / 3)


def test_corpus_precision_is_ratio_of_sums_not_mean():
    # pair 1: p1 = 3/4 (above); pair 2: "cat" vs "cat": p1 = 1/1
    # corpus p1 = (3 + 1) / (4 + 1) = 4/5, not the mean (3/4 + 1) / 2 = 7/8
    s = corpus_bleu(["the the the cat", "cat"], [["the cat the mat"], ["cat"]])
    assert s.counts[0] == 4 and s.totals[0] == 5
    assert s.precisions[0] == 80.0
    assert s.precisions[0] != 87.5


def test_stats_add_and_score_once():
    a = corpus_bleu(["the the the cat"], [["the cat the mat"]])
    b = corpus_bleu(["cat"], [["cat"]])
    va = BleuStats([a.sys_len, a.ref_len, *a.counts, *a.totals])
    vb = BleuStats([b.sys_len, b.ref_len, *b.counts, *b.totals])
    both = corpus_bleu(["the the the cat", "cat"], [["the cat the mat"], ["cat"]])
    assert (va + vb).score().score == both.score
    assert sum([va, vb]).score().score == both.score


def test_closest_reference_length_ties_go_to_shorter():
    # c = 3; references of length 2 and 4 are both 1 away -> r = 2 (the shorter)
    s = corpus_bleu(["a b c"], [["a b", "a b c d"]])
    assert s.ref_len == 2
    # a missing reference (None) is ignored; an empty one ("") has length 0
    assert corpus_bleu(["a b c"], [[None, "a b c d"]]).ref_len == 4
    assert corpus_bleu(["a"], [["", "a b c"]]).ref_len == 0


def test_clip_is_max_count_in_a_single_reference():
    # "a a a": ref1 has a x1, ref2 has a x2 -> clip 2 (not 1 + 2 = 3)
    s = corpus_bleu(["a a a"], [["a b", "a a c"]])
    assert s.counts[0] == 2


def test_sentence_bleu_effective_order_default():
    # "hello there world" vs "hello world .": p1 = 2/3, p2 = 0/2 -> exp smoothing 1/(2*2),
    # p3 = 0/1 -> 1/(4*1), p4 has no 4-grams -> effective order 3
    s = sentence_bleu("hello there world", ["hello world ."])
    expected = 100 * math.exp((math.log(2 / 3) + math.log(1 / 4) + math.log(1 / 4)) / 3)
    assert s.score == pytest.approx(expected, abs=1e-12)
    assert "eff:yes" in s.signature


def test_no_match_is_zero_and_empty_candidate_bp_zero():
    s = corpus_bleu(["x y"], [["a b"]])
    assert s.score == 0.0 and s.precisions == [0.0] * 4
    e = corpus_bleu([""], [["a b"]])
    assert e.bp == 0.0 and e.score == 0.0

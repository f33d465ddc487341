"""The statistics of a concatenation are the sum of the parts, for any split."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from bleu_core import Bleu, BleuStats

from ..strategies import corpus


@settings(max_examples=150, deadline=None)
@given(data=corpus(max_pairs=12), cuts=st.lists(st.integers(0, 12), max_size=4),
       tokenize=st.sampled_from(["13a", "intl", "zh", "char", "none"]), order=st.integers(1, 5))
def test_concatenation_is_sum_of_parts(data, cuts, tokenize, order):
    cands, refs = data
    metric = Bleu(tokenize=tokenize, max_ngram_order=order)
    whole = metric.batch_stats(cands, refs, per_row=False)
    bounds = sorted({0, len(cands), *[min(c, len(cands)) for c in cuts]})
    parts = [metric.batch_stats(cands[a:b], refs[a:b], per_row=False) for a, b in zip(bounds, bounds[1:]) if b > a]
    np.testing.assert_array_equal(whole, np.sum(parts, axis=0))
    # rows, summed in any order, give the same totals; the score is a function of the sum only
    rows = metric.batch_stats(cands, refs)
    perm = np.random.default_rng(len(cands)).permutation(len(rows))
    total = BleuStats.sum(rows[perm])
    np.testing.assert_array_equal(total.vector, whole)
    assert metric.score(total).score == metric.corpus_score(cands, refs).score


def test_zero_is_identity_and_add_checks_order():
    a = BleuStats([3, 4, 2, 1, 0, 0, 3, 2, 1, 0])
    assert a + BleuStats.zero(4) == a
    assert BleuStats.sum([], max_ngram_order=4) == BleuStats.zero(4)
    try:
        a + BleuStats.zero(3)
    except ValueError as exc:
        assert "order" in str(exc)
    else:
        raise AssertionError("adding vectors of different orders must fail")
    assert a.vector.dtype == np.int64


@settings(max_examples=100, deadline=None)
@given(data=corpus(max_pairs=12), cuts=st.lists(st.integers(0, 12), max_size=4),
       word_order=st.integers(0, 2), lowercase=st.booleans())
def test_every_metric_of_a_set_is_a_sum(data, cuts, word_order, lowercase):
    """BLEU and chrF side by side (one MetricSet, as the pipeline counts them): the statistics of a
    concatenation are the sum of the parts', each metric's slice is that metric's own statistics, and
    each score of the summed slice equals the metric's corpus score."""
    from bleu_core import Chrf, MetricSet

    cands, refs = data
    metrics = MetricSet([Bleu(lowercase=lowercase), Chrf(word_order=word_order, lowercase=lowercase)])
    whole = metrics.batch_stats(cands, refs, per_row=False)
    bounds = sorted({0, len(cands), *[min(c, len(cands)) for c in cuts]})
    parts = [metrics.batch_stats(cands[a:b], refs[a:b], per_row=False) for a, b in zip(bounds, bounds[1:]) if b > a]
    np.testing.assert_array_equal(whole, np.sum(parts, axis=0))
    assert whole.shape == (metrics.width,) == (10 + 3 * (6 + word_order),)
    rows = metrics.batch_stats(cands, refs)
    np.testing.assert_array_equal(rows.sum(axis=0), whole)
    for metric, part in zip(metrics, metrics.split(whole)):
        np.testing.assert_array_equal(part, metric.batch_stats(cands, refs, per_row=False))
        assert metric.score(part).score == metric.corpus_score(cands, refs).score
    np.testing.assert_array_equal(metrics.check_stats(whole), whole)

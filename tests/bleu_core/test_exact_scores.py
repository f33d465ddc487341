"""bleu_core.resampling.sacrebleu.exact_scores: the scores of many exact totals at once (the counter
bootstrap's replicates, the randomization trials' pseudo-systems, the per-item bootstrap), which
must be ``metric.score(row).score`` row for row: that is their definition, computed here one row at
a time. Random and adversarial totals: zeros, empty sides, counts around 2**53 (where float64 stops
holding every integer), BLEU's smoothing methods, effective order and weights, chrF/chrF++ with
beta and eps smoothing, TER with one or several reference counts. Where cheap, sacrebleu 2.6.0's
``_compute_score_from_stats`` on the same totals too. Then the score stage that uses it: intervals
and both paired tests equal to their row-by-row definitions."""

import ast
from pathlib import Path

import numpy as np
import pytest

from bleu_core import scoring
from bleu_core.metrics.bleu import Bleu
from bleu_core.metrics.chrf import Chrf
from bleu_core.metrics.ter import Ter
from bleu_core.metrics.ter.reference import EDIT_NAMES, MAX_REFS
from bleu_core.protocol import SacrebleuArithmetic
from bleu_core.resampling.sacrebleu import exact_scores

sacrebleu = pytest.importorskip("sacrebleu")

BIG = 2**53  # float64 holds every integer below it
HUGE = [BIG - 3, BIG - 1, BIG, BIG + 1, BIG + 3, 2**60 + 1, 2**62 - 1]


def by_row(metric, totals):
    return [metric.score(row).score for row in totals]


def check(metric, totals):
    """exact_scores equals metric.score row for row (same floats, NaN nowhere)."""
    totals = np.asarray(totals, dtype=np.int64)
    got = exact_scores(metric, totals)
    assert got.dtype == np.float64 and got.shape == (len(totals),)
    expected = by_row(metric, totals)
    assert not any(x != x for x in expected)
    assert got.tolist() == expected
    return expected


# ------------------------------------------------------------------------------ BLEU


def bleu_totals(rng, n: int, order: int = 4) -> np.ndarray:
    """Random BLEU totals ``[c, r, matches_1..N, totals_1..N]`` (matches <= totals) and adversarial rows."""
    scale = rng.choice([10, 1000, 10**6, 10**12], size=(n, 1))
    tot = rng.integers(0, 2**62, size=(n, order)) % (scale + 1)
    tot[rng.random((n, order)) < 0.05] = 0  # an order with no candidate n-grams: the effective order
    match = (tot * rng.random((n, order))).astype(np.int64)
    match[rng.random((n, order)) < 0.1] = 0  # no match in an order: the smoothing
    match[rng.random(n) < 0.03] = 0  # no match at all: the early stop
    lengths = rng.integers(0, 2**62, size=(n, 2)) % (scale + 1)
    rows = [np.hstack([lengths, match, tot]).astype(np.int64)]
    adversarial = [[0] * (2 + 2 * order), [5, 0] + [0] * order + [1] * order, [0, 7] + [1] * order + [1] * order,
                   [3, 9] + [2] + [0] * (order - 1) + [4] + [0] * (order - 1)]
    for h in HUGE:
        adversarial += [[h, h] + [h] * order + [h] * order,  # every precision 100
                        [h, h - 1 if h > 1 else h] + [1] * order + [h] * order,
                        [1, h] + [h // 2] * order + [h] * order,  # the brevity penalty of a huge ratio
                        [h, 3] + [0] + [h // 3] * (order - 1) + [h] * order,
                        [12, 12] + [3] * order + [h] * order, [h, h] + [0] * order + [h] * order]
    rows.append(np.array(adversarial, dtype=np.int64))
    return np.vstack(rows)


BLEU_CASES = [
    {}, {"smooth_method": "floor"}, {"smooth_method": "floor", "smooth_value": 0.3}, {"smooth_method": "add-k"},
    {"smooth_method": "add-k", "smooth_value": 3}, {"smooth_method": "none"}, {"effective_order": True},
    {"smooth_method": "floor", "effective_order": True}, {"smooth_method": "add-k", "effective_order": True},
    {"smooth_method": "none", "effective_order": True}, {"max_ngram_order": 2}, {"max_ngram_order": 6},
    {"max_ngram_order": 1, "smooth_method": "exp"}, {"max_ngram_order": 3, "effective_order": True},
]


@pytest.mark.parametrize("kw", BLEU_CASES, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()) or "default")
def test_bleu_equals_score_row_by_row_and_sacrebleu(kw):
    metric = Bleu(**kw)
    totals = bleu_totals(np.random.default_rng(34), 1500, metric.max_ngram_order)
    expected = check(metric, totals)
    theirs = sacrebleu.BLEU(**kw)
    small = np.flatnonzero(totals.max(axis=1) < BIG).tolist()  # sacrebleu's own arithmetic on Python ints
    assert [theirs._compute_score_from_stats(totals[i].tolist()).score for i in small] == [expected[i] for i in small]


def test_bleu_with_weights_equals_score_row_by_row():
    """Weights (beambleu's option; sacrebleu has none) take the row-by-row path: still the same scores."""
    check(Bleu(weights=(0.4, 0.3, 0.2, 0.1)), bleu_totals(np.random.default_rng(5), 300))


# ------------------------------------------------------------------------------ chrF


def chrf_totals(rng, n: int, orders: int) -> np.ndarray:
    """Random chrF totals ``[hyp, ref, match]`` per order (match <= hyp, ref) and adversarial rows."""
    scale = rng.choice([10, 1000, 10**6, 10**12], size=(n, 1))
    hyp = rng.integers(0, 2**62, size=(n, orders)) % (scale + 1)
    ref = rng.integers(0, 2**62, size=(n, orders)) % (scale + 1)
    hyp[rng.random((n, orders)) < 0.03] = 0  # an empty candidate side
    ref[rng.random((n, orders)) < 0.03] = 0  # an empty reference side
    match = (np.minimum(hyp, ref) * rng.random((n, orders))).astype(np.int64)
    match[rng.random((n, orders)) < 0.05] = 0
    match[rng.random(n) < 0.03] = 0  # nothing matched: precision and recall 0
    rows = [np.stack([hyp, ref, match], axis=2).reshape(n, 3 * orders)]
    adversarial = [[0, 0, 0] * orders, [4, 0, 0] * orders, [0, 4, 0] * orders, [5, 5, 5] * orders,
                   [0, 0, 0] * (orders - 1) + [3, 3, 1]]
    for h in HUGE:
        adversarial += [[h, h, h] * orders, [h, 1, 1] * orders, [1, h, 1] * orders, [h, h - 7, 2**40] * orders,
                        [h, h, 0] * (orders - 1) + [h, h, h // 3]]
    rows.append(np.array(adversarial, dtype=np.int64))
    return np.vstack(rows).astype(np.int64)


CHRF_CASES = [
    {}, {"word_order": 2}, {"beta": 1}, {"beta": 3, "word_order": 2}, {"char_order": 4}, {"char_order": 1},
    {"eps_smoothing": True}, {"eps_smoothing": True, "word_order": 2, "beta": 1}, {"beta": 0},
]


@pytest.mark.parametrize("kw", CHRF_CASES, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()) or "default")
def test_chrf_equals_score_row_by_row_and_sacrebleu(kw):
    metric = Chrf(**kw)
    orders = metric.width // 3
    totals = chrf_totals(np.random.default_rng(35), 1500, orders)
    expected = check(metric, totals)
    theirs = sacrebleu.CHRF(**kw)
    small = np.flatnonzero(totals.max(axis=1) < BIG).tolist()
    assert [theirs._compute_score_from_stats(totals[i].tolist()).score for i in small] == [expected[i] for i in small]


# ------------------------------------------------------------------------------ TER


def ter_row(edits, lengths) -> list:
    """A TER totals row: the edits split into insertions .. shifts, then ``lengths`` ({k: S_k})."""
    parts = [edits // 4, edits // 4, edits // 4, edits - 3 * (edits // 4)]
    row = [edits] + parts + [0] * MAX_REFS
    for k, s in lengths.items():
        row[len(EDIT_NAMES) + k - 1] = s
    return row


def ter_totals(rng, n: int) -> np.ndarray:
    rows = []
    for _ in range(n):
        scale = int(rng.choice([10, 1000, 10**6, 10**12]))
        edits = int(rng.integers(0, scale)) * int(rng.random() > 0.05)
        ks = rng.choice([1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 64], size=int(rng.choice([1, 1, 1, 2, 3])), replace=False)
        rows.append(ter_row(edits, {int(k): int(rng.integers(0, scale)) * int(rng.random() > 0.05) for k in ks}))
    for k in (1, 3, 7, 64):
        rows += [ter_row(0, {}), ter_row(9, {}), ter_row(0, {k: 0}), ter_row(5, {k: 0}), ter_row(0, {k: 11})]
        for h in HUGE:  # from 2**53 on, S_k / k in floats can round twice: the row is scored by the metric
            rows += [ter_row(h, {k: h}), ter_row(3, {k: h}), ter_row(h, {k: 3 * k}), ter_row(h, {k: h, 2: 5})]
    rows += [ter_row(10, {1: 4, 3: 5}), ter_row(7, {3: 1, 5: 1, 6: 1, 7: 1}), ter_row(1, {3: BIG - 1, 9: 1})]
    return np.array(rows, dtype=np.int64)


@pytest.mark.parametrize("kw", [{}, {"normalized": True, "case_sensitive": True}])
def test_ter_equals_score_row_by_row_and_sacrebleu(kw):
    metric = Ter(**kw)
    totals = ter_totals(np.random.default_rng(36), 1500)
    expected = check(metric, totals)
    # sacrebleu scores [edits, sum of average reference lengths]: with one reference count, S / k
    lengths = totals[:, len(EDIT_NAMES):]
    theirs = sacrebleu.TER(**kw)
    for i in np.flatnonzero(((lengths != 0).sum(axis=1) <= 1) & (totals.max(axis=1) < BIG)).tolist():
        k = int(np.argmax(lengths[i] != 0)) + 1
        assert theirs._compute_score_from_stats([int(totals[i, 0]), int(lengths[i].sum()) / k]).score == expected[i]


def test_ter_length_past_2_53_is_the_exact_quotient():
    """S = 2**53 + 1 over k = 3: the float division of float(S) rounds twice and misses the exact
    quotient's rounding; the score must divide by the correctly rounded S / 3, as ``score`` does."""
    s = BIG + 1
    row = np.array([ter_row(BIG, {3: s})], dtype=np.int64)
    from fractions import Fraction

    length = float(Fraction(s, 3))
    assert exact_scores(Ter(), row).tolist() == [100 * (BIG / length)]


# ------------------------------------------------------------------------------ other metrics, the score stage


class _Plugin(Chrf):
    """A metric with the protocol's default arithmetic (as a plugin has it), whose score is its own."""

    def sacrebleu_arithmetic(self):
        return SacrebleuArithmetic(self)

    def score(self, stats, *args, **kwargs):
        out = super().score(stats, *args, **kwargs)
        out.score = out.score / 2 + 1
        return out


def test_a_plugin_metric_is_scored_row_by_row_with_its_own_score():
    metric = _Plugin()
    totals = chrf_totals(np.random.default_rng(1), 50, 6)
    expected = check(metric, totals)
    assert expected != by_row(Chrf(), totals)
    assert exact_scores(metric, np.zeros((0, metric.width), dtype=np.int64)).shape == (0,)


@pytest.mark.parametrize("metric", [Bleu(), Chrf(word_order=2), Ter()], ids=["bleu", "chrf++", "ter"])
def test_score_stage_intervals_and_paired_tests_are_the_row_by_row_definitions(metric):
    """score_metric's replicate scores and interval, and paired_test's bootstrap and randomization
    p-values, computed here from ``metric.score`` of every replicate and trial one by one."""
    from bleu_core.resampling import counter as bs

    rng = np.random.default_rng(7)
    if isinstance(metric, Bleu):
        rows = bleu_totals(rng, 40)[:40] % 50
        rows[:, 2:6] = np.minimum(rows[:, 2:6], rows[:, 6:10])
    elif isinstance(metric, Chrf):
        rows = chrf_totals(rng, 40, 8)[:40] % 50
        for i in range(0, rows.shape[1], 3):
            rows[:, i + 2] = np.minimum(rows[:, i + 2], np.minimum(rows[:, i], rows[:, i + 1]))
    else:
        rows = np.array([ter_row(int(e), {2: int(s)}) for e, s in zip(rng.integers(0, 9, 40), rng.integers(0, 20, 40))])
    other = np.roll(rows, 1, axis=0)
    keys = bs.row_keys_from_position("f", 0, len(rows))
    results = {}
    for method, n in ((scoring.BOOTSTRAP, 300), (scoring.RANDOMIZATION, 200)):
        draw = scoring.Resampling(method, n, seed=11)
        for name, r in (("sys", rows), ("base", other)):
            block = scoring.replicate_block(r, keys, draw)
            results[method, name] = scoring.score_metric(metric, r.sum(axis=0), None, block, draw), block
    (sys_bs, sys_block), (base_bs, base_block) = results[scoring.BOOTSTRAP, "sys"], results[scoring.BOOTSTRAP, "base"]
    expected = by_row(metric, sys_block)
    assert sys_bs.replicate_scores == expected
    empty = ~sys_block.any(axis=1)
    kept = [s for s, e in zip(expected, empty) if not e]
    ci = bs.percentile_interval(kept)
    assert (sys_bs.interval.mean, sys_bs.interval.low, sys_bs.interval.high) == (ci["mean"], ci["low"], ci["high"])
    keep = ~(empty | ~base_block.any(axis=1))
    p = bs.paired_p_value(np.array(expected)[keep], np.array(by_row(metric, base_block))[keep],
                          metric.score(rows.sum(axis=0)).score, metric.score(other.sum(axis=0)).score)
    assert scoring.paired_test(sys_bs, base_bs).p_value == p
    (sys_ar, _), (base_ar, _) = results[scoring.RANDOMIZATION, "sys"], results[scoring.RANDOMIZATION, "base"]
    a, b = bs.randomization_trials(base_ar.totals, base_ar.swapped, sys_ar.totals, sys_ar.swapped)
    observed = abs(metric.score(other.sum(axis=0)).score - metric.score(rows.sum(axis=0)).score)
    diffs = [abs(x - y) for x, y in zip(by_row(metric, a), by_row(metric, b))]
    p = (sum(d >= observed for d in diffs) + 1) / (len(diffs) + 1)
    assert scoring.paired_test(sys_ar, base_ar).p_value == p


def _module_level_imports(path: Path):
    """The modules a file imports outside functions and outside ``if TYPE_CHECKING:``."""
    tree = ast.parse(path.read_text())
    names = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names.append(node.module or "")
    return names


@pytest.mark.parametrize("module", ["scoring.py", "resampling/sacrebleu.py"])
def test_score_stage_imports_numpy_only_where_it_resamples(module):
    """``beambleu score``'s plain path imports the score stage: numpy is imported inside the
    functions that resample, not by the module (the control: items.py imports it at the top)."""
    root = Path(__file__).resolve().parents[2] / "bleu_core"
    assert "numpy" not in _module_level_imports(root / module)
    assert "numpy" in _module_level_imports(root / "items.py")

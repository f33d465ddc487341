"""bleu_core.resampling.sacrebleu with several systems at once, as ``beambleu score`` calls it: one
draw, one product and one scoring call per metric for every system, against sacrebleu 2.6.0's own
expressions of ``_paired_bs_test`` and ``_paired_ar_test`` (its numpy draws and products, its
metrics' ``_compute_score_from_stats`` / ``_aggregate_and_compute``) run system by system here;
and statistics large enough to leave float32's exact integers, where the products fall back to
sacrebleu's float32 sums and to float64."""

import numpy as np
import pytest

from bleu_core import compat
from bleu_core.resampling import sacrebleu as nr

from ...oracle import REPO, read_lines

sacrebleu = pytest.importorskip("sacrebleu")

SAMPLE = REPO / "examples" / "sample"
METRICS = {"BLEU": {}, "CHRF": {"word_order": 2}, "TER": {}}


def _systems():
    refs = [read_lines(SAMPLE / f"ref.{k}.txt") for k in "AB"]
    alpha, beta = read_lines(SAMPLE / "sys.alpha.txt"), read_lines(SAMPLE / "sys.beta.txt")
    mixed = [[b if i % 3 == k else a for i, (a, b) in enumerate(zip(alpha, beta))] for k in (0, 1)]
    return alpha, [*mixed, beta], refs


def _both():
    """(our metrics, sacrebleu's, our per-segment statistics of the baseline and of each system,
    sacrebleu's)."""
    base, systems, refs = _systems()
    ours = [getattr(compat, n)(**kw) for n, kw in METRICS.items()]
    theirs = [getattr(sacrebleu, n)(**kw) for n, kw in METRICS.items()]
    cores = [o._metric for o in ours]
    stats = [[nr.segment_statistics(c, o._extract_corpus_statistics(h, refs)) for c, o in zip(cores, ours)]
             for h in [base, *systems]]
    sacre = [[t._extract_corpus_statistics(h, refs) for t in theirs] for h in [base, *systems]]
    return cores, theirs, stats, sacre


def _same(got, expected) -> bool:
    got, expected = np.asarray(got), np.asarray(expected)
    return got.dtype == expected.dtype and got.shape == expected.shape and got.tobytes() == expected.tobytes()


def test_paired_bootstrap_of_many_systems_at_once_is_sacrebleus_system_by_system():
    cores, theirs, stats, sacre = _both()
    n, seed = 150, 12345
    shared, samples = nr.paired_samples(cores, stats[0], stats[1:], "bs", n, seed)
    for k, system in enumerate(sacre[1:]):
        # sacrebleu's _paired_bs_test, one system at a time, its generator seeded for each
        idxs = np.random.default_rng(seed).choice(len(system[0]), size=(n, len(system[0])), replace=True)
        for m, metric in enumerate(theirs):
            bl = np.array(sacre[0][m], dtype="float32")
            own = np.array(system[m], dtype="float32")
            scores_bl = np.array([metric._compute_score_from_stats(s.sum(0)).score for s in bl[idxs]])
            scores_sys = np.array([metric._compute_score_from_stats(s.sum(0)).score for s in own[idxs]])
            diffs = np.abs(scores_sys - scores_bl)
            sample, replicates = samples[k][m]
            assert _same(sample, diffs - diffs.mean())
            assert _same(replicates, scores_sys)
            assert _same(np.array(shared[m]), scores_bl)


def _sacrebleu_ar(theirs, sacre, n, seed):
    """Per system, per metric, |score(A_t) - score(B_t)| as sacrebleu's _paired_ar_test computes it."""
    out = []
    for system in sacre[1:]:
        pos = np.random.default_rng(seed).integers(2, size=(n, len(system[0])), dtype=bool)
        neg = ~pos
        per = []
        for m, metric in enumerate(theirs):
            shuf_a = pos @ sacre[0][m] + neg @ system[m]
            shuf_b = neg @ sacre[0][m] + pos @ system[m]
            a = np.array([metric._aggregate_and_compute(x).score for x in shuf_a[:, None]])
            b = np.array([metric._aggregate_and_compute(x).score for x in shuf_b[:, None]])
            per.append(np.abs(np.array(a) - np.array(b)))
        out.append(per)
    return out


@pytest.mark.parametrize("coins", [16 * 30, nr.BLOCK_COINS])
def test_randomization_of_many_systems_at_once_is_sacrebleus_system_by_system(monkeypatch, coins):
    """Blocks of 16 trials (30 segments) and one block of all 300."""
    monkeypatch.setattr(nr, "BLOCK_COINS", coins)
    cores, theirs, stats, sacre = _both()
    _, samples = nr.paired_samples(cores, stats[0], stats[1:], "ar", 300, 12345)
    expected = _sacrebleu_ar(theirs, sacre, 300, 12345)
    for k in range(len(expected)):
        for m in range(len(theirs)):
            assert _same(samples[k][m][0], expected[k][m])
            assert samples[k][m][1] is None


# ------------------------------------------------------------------ past float32's exact integers


def _big_bleu_rows(rng, n, bits):
    """Valid BLEU statistics with lengths below ``2**bits``."""
    sys_len = rng.integers(1, 2**bits, size=n)
    ref_len = rng.integers(1, 2**bits, size=n)
    total = np.stack([np.maximum(sys_len - g, 0) for g in range(4)], axis=1)
    correct = (total * rng.random((n, 4))).astype(np.int64)
    return np.column_stack([sys_len, ref_len, correct, total]).astype(np.int64)


def _big(bits=19):
    """The baseline and two systems of 64 segments; with lengths below 2**19 they add up to about
    2**24, so that some bootstrap replicates' sums pass float32's exact integers and some do not."""
    rng = np.random.default_rng(11)
    return [_big_bleu_rows(rng, 64, bits) for _ in range(3)]


def _sacrebleu_bs(rows, n, seed):
    metric = sacrebleu.BLEU()
    idxs = np.random.default_rng(seed).choice(len(rows[0]), size=(n, len(rows[0])), replace=True)
    return [[metric._compute_score_from_stats(s.sum(0)).score for s in np.array(r, dtype="float32")[idxs]]
            for r in rows]


def _ours_bs(rows, n, seed):
    core = compat.BLEU()._metric
    stats = [[nr.segment_statistics(core, r)] for r in rows]
    return [per[0] for per in nr._bootstrap([core], stats, n, np.random.default_rng(seed))]


def test_bootstrap_sums_past_float32_integers_are_sacrebleus():
    rows = _big()
    expected = _sacrebleu_bs(rows, 200, 5)
    replicate_sums = np.array(rows[0], dtype="float32")[
        np.random.default_rng(5).choice(64, size=(200, 64), replace=True)].sum(1)
    assert (replicate_sums.max(axis=1) >= 2**24).any() and (replicate_sums.max(axis=1) < 2**24).any()
    assert _ours_bs(rows, 200, 5) == expected


def test_bootstrap_sums_past_float32_integers_differ_without_the_check(monkeypatch):
    """The check above can fail: taking every float32 product as exact gives other scores."""
    monkeypatch.setattr(nr, "F32_EXACT", float("inf"))
    rows = _big()
    assert _ours_bs(rows, 200, 5) != _sacrebleu_bs(rows, 200, 5)


def _ours_ar(rows, n, seed):
    core = compat.BLEU()._metric
    stats = [[nr.segment_statistics(core, r)] for r in rows]
    _, samples = nr.paired_samples([core], stats[0], stats[1:], "ar", n, seed)
    return [per[0][0] for per in samples]


def test_randomization_past_float32_integers_is_sacrebleus():
    rows = _big(21)
    assert np.abs(rows[0] - rows[1]).sum(0).max() >= 2**24  # the product cannot be float32's
    expected = _sacrebleu_ar([sacrebleu.BLEU()], [[r] for r in rows], 256, 9)
    for got, want in zip(_ours_ar(rows, 256, 9), expected):
        assert _same(got, want[0])


def test_randomization_past_float32_integers_differs_in_float32(monkeypatch):
    """The check above can fail: a float32 product of these differences gives other scores."""
    monkeypatch.setattr(nr, "F32_EXACT", float("inf"))
    rows = _big(21)
    expected = _sacrebleu_ar([sacrebleu.BLEU()], [[r] for r in rows], 256, 9)
    assert any(not _same(got, want[0]) for got, want in zip(_ours_ar(rows, 256, 9), expected))

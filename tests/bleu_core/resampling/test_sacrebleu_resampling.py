"""bleu_core.resampling.sacrebleu: sacrebleu 2.6.0's draws, replicate by replicate and in blocks of
trials, against sacrebleu's own resampling functions (run here) on the bundled sample; the
numpy facts the chunking rests on; the p-value's strict count, by hand."""

import numpy as np
import pytest

from bleu_core import compat
from bleu_core.resampling import sacrebleu as nr

from ...oracle import REPO, read_lines, seed_env

sacrebleu = pytest.importorskip("sacrebleu")
from sacrebleu.significance import PairedTest as SacrePairedTest  # noqa: E402
from sacrebleu.significance import _bootstrap_resample  # noqa: E402

SAMPLE = REPO / "examples" / "sample"


def sample():
    refs = [read_lines(SAMPLE / f"ref.{k}.txt") for k in "AB"]
    alpha, beta = read_lines(SAMPLE / "sys.alpha.txt"), read_lines(SAMPLE / "sys.beta.txt")
    # two systems taking a third of their lines from beta, not the same ones: close scores, many differing
    # segments, so that the p-values are far from 1 / (T + 1)
    one, two = ([b if i % 3 == k else a for i, (a, b) in enumerate(zip(alpha, beta))] for k in (0, 1))
    return [("one", one), ("two", two)], refs


METRICS = {"BLEU": {}, "CHRF": {"word_order": 2}, "TER": {}}


# ------------------------------------------------------------------ numpy's streams


def test_choice_rows_one_at_a_time_are_the_rows_of_one_matrix():
    for n in (1, 7, 61, 300):
        whole = np.random.default_rng(12345).choice(n, size=(50, n), replace=True)
        rng = np.random.default_rng(12345)
        rows = np.stack([rng.choice(n, size=n, replace=True) for _ in range(50)])
        assert (rows == whole).all()


def test_boolean_coins_continue_only_across_multiples_of_32():
    """Why :func:`trial_block` exists: numpy draws bool coins 32 per 32-bit word and drops the rest
    at the end of a call, so blocks of trials continue the stream only at multiples of 32 coins."""
    n, t = 30, 64
    whole = np.random.default_rng(12345).integers(2, size=(t, n), dtype=bool)
    rng = np.random.default_rng(12345)
    by_row = np.concatenate([rng.integers(2, size=(1, n), dtype=bool) for _ in range(t)])
    assert not (by_row == whole).all()
    block = nr.trial_block(n, t) // 2 or 1
    assert (block * n) % 32 == 0
    rng = np.random.default_rng(12345)
    by_block = np.concatenate([rng.integers(2, size=(block, n), dtype=bool) for _ in range(t // block)])
    assert (by_block == whole).all()


@pytest.mark.parametrize("n_rows", [1, 7, 32, 61, 1000, 4_000_001])
def test_trial_blocks_hold_multiples_of_32_coins(n_rows):
    for n_trials in (1, 5, 10_000):
        block = nr.trial_block(n_rows, n_trials)
        assert 1 <= block <= n_trials
        assert block == n_trials or (block * n_rows) % 32 == 0


# ------------------------------------------------------------------ against sacrebleu's functions


@pytest.mark.parametrize("name", sorted(METRICS))
@pytest.mark.parametrize("seed", [12345, 7])
def test_bootstrap_scores_equal_sacrebleus_resamples(name, seed):
    systems, refs = sample()
    hyps = systems[1][1]
    ours, theirs = getattr(compat, name)(**METRICS[name]), getattr(sacrebleu, name)(**METRICS[name])
    rows = ours._extract_corpus_statistics(hyps, refs)
    with seed_env(seed):
        _, expected = _bootstrap_resample(theirs._extract_corpus_statistics(hyps, refs), theirs, 120)
    got = nr.bootstrap_scores([ours._metric], [nr.segment_statistics(ours._metric, rows)], 120, seed)[0]
    assert [type(x) for x in got] == [type(x.score) for x in expected]
    assert got == [x.score for x in expected]


def _ar_p_values(module, paired_test, n):
    systems, refs = sample()
    metrics = {name: getattr(module, name)(**kw) for name, kw in METRICS.items()}
    with seed_env(12345):
        _, scores = paired_test(systems, metrics, refs, test_type="ar", n_samples=n, n_ar_confidence=40)()
    return {k: [(r.p_value, r.mean, r.ci) for r in v] for k, v in scores.items() if k != "System"}


@pytest.mark.parametrize("coins", [32, 30 * 32, nr.BLOCK_COINS])
def test_randomization_in_blocks_equals_sacrebleu(monkeypatch, coins):
    """Blocks of 16 and 32 trials (30 segments: 480 and 960 coins; a block of 32 coins is rounded
    up to 16 trials, the least multiple of 32 coins), and one block of all 999: the p-values, and
    the intervals the ar test draws after its coins, are sacrebleu's."""
    monkeypatch.setattr(nr, "BLOCK_COINS", coins)
    expected = _ar_p_values(sacrebleu, SacrePairedTest, 999)
    assert any(0.01 < p < 0.99 for p, _, _ in sum(expected.values(), []) if p is not None)  # not all at 1 / (T + 1)
    assert _ar_p_values(compat, compat.PairedTest, 999) == expected


def test_randomization_in_blocks_that_drop_coins_differs(monkeypatch):
    """The check above can fail: blocks of one trial each (30 coins, not a multiple of 32) draw
    other coins than sacrebleu's, and other p-values."""
    monkeypatch.setattr(nr, "trial_block", lambda n_rows, n_trials: 1)
    assert _ar_p_values(compat, compat.PairedTest, 999) != _ar_p_values(sacrebleu, SacrePairedTest, 999)


# ------------------------------------------------------------------ by hand


def test_p_value_counts_strictly_greater_differences():
    d = np.array([0.0, 0.0, 1.0, 2.0])
    assert nr.p_value(d, 1.0) == 2 / 5  # only 2.0 exceeds 1.0
    assert nr.p_value(d, 0.0) == 3 / 5
    assert nr.p_value(np.zeros(9), 0.0) == 1 / 10  # a copy of the baseline: 1 / (n + 1)


def test_ter_segment_statistics_are_average_reference_lengths():
    from bleu_core.metrics.ter import EDIT_NAMES, Ter

    rows = np.zeros((3, Ter().width), dtype=np.int64)
    rows[:, 0] = [4, 0, 2]
    base = len(EDIT_NAMES)
    rows[0, base + 1] = 7  # two references, 7 words in all
    rows[1, base + 2] = 10  # three references, 10 words
    rows[2, base] = 5  # one reference
    assert nr.segment_statistics(Ter(), rows).tolist() == [[4.0, 3.5], [0.0, 10 / 3], [2.0, 5.0]]


def test_seeds_as_sacrebleu_reads_them():
    assert nr.bootstrap_seed("none", 99) is None and nr.bootstrap_seed("0", 0) == 0
    assert nr.paired_seed("0", 0) is None and nr.paired_seed("None", 5) is None and nr.paired_seed("42", 42) == 42


# ------------------------------------------------------------------ vectorised scores, against sacrebleu's


def _bleu_sums(rng, n):
    """Valid BLEU sums, many on the edges: no candidate words, no matches at some or every
    order, candidates shorter and longer than the references."""
    sys_len = rng.integers(0, 9, size=n) * rng.integers(1, 40, size=n)
    ref_len = rng.integers(0, 60, size=n)
    total = np.stack([np.maximum(sys_len - g, 0) for g in range(4)], axis=1)
    correct = (total * rng.random((n, 4)) * rng.integers(0, 2, size=(n, 4))).astype(np.int64)
    return np.column_stack([sys_len, ref_len, correct, total]).astype(np.int64)


def _chrf_sums(rng, n, orders):
    # a count is 0 in about 1 cell of 100, so that most rows take the vectorised path and some not
    hyp = (rng.random((n, orders)) > 0.01) * rng.integers(1, 300, size=(n, orders))
    ref = (rng.random((n, orders)) > 0.01) * rng.integers(1, 300, size=(n, orders))
    match = (np.minimum(hyp, ref) * rng.random((n, orders)) * rng.integers(0, 2, size=(n, orders))).astype(np.int64)
    return np.stack([hyp, ref, match], axis=2).reshape(n, 3 * orders).astype(np.int64)


VECTOR_CASES = [
    ("BLEU", {}), ("BLEU", {"smooth_method": "floor"}), ("BLEU", {"smooth_method": "add-k"}),
    ("BLEU", {"smooth_method": "none"}), ("BLEU", {"smooth_method": "floor", "smooth_value": 0.3}),
    ("BLEU", {"effective_order": True}), ("CHRF", {}), ("CHRF", {"word_order": 2}),
    ("CHRF", {"beta": 1, "eps_smoothing": True}), ("TER", {}),
]


@pytest.mark.parametrize("name,kw", VECTOR_CASES)
def test_vectorised_scores_equal_sacrebleus_on_every_row(name, kw):
    """replicate_scores (float32 sums, the bootstrap's) and trial_scores (exact sums, the
    randomization test's) against sacrebleu's _compute_score_from_stats row by row: equal values
    and equal types, on rows that take every branch of the scalar code."""
    rng = np.random.default_rng(2026)
    ours, theirs = getattr(compat, name)(**kw), getattr(sacrebleu, name)(**kw)
    if name == "BLEU":
        rows = _bleu_sums(rng, 3000)
    elif name == "CHRF":
        rows = _chrf_sums(rng, 3000, ours._metric.orders)
    else:
        edits = rng.integers(0, 3, size=3000) * rng.integers(0, 50, size=3000)
        rows = np.column_stack([edits, rng.integers(0, 2, size=3000) * rng.integers(1, 90, size=3000)])
    core = ours._metric
    f32 = rows.astype(np.float32)
    got = nr.replicate_scores(core, f32)
    expected = [theirs._compute_score_from_stats(row).score for row in f32]
    assert [type(x) for x in got] == [type(x) for x in expected]
    assert got == expected
    exact = rows.astype(np.float64) if name == "TER" else rows
    got = nr.trial_scores(core, exact)
    expected = [theirs._compute_score_from_stats(list(row)).score for row in
                (exact.tolist() if name != "TER" else exact)]
    assert np.array(got).dtype == np.array(expected).dtype
    assert got == expected


def test_integer_bootstrap_sums_leave_float32_exactness_to_sacrebleus_sum():
    """Past 2**24 a float32 sum depends on its order: such replicates are summed as sacrebleu sums
    them (row after row), the others by the exact product; all equal sacrebleu's sums."""
    rng = np.random.default_rng(3)
    held = rng.integers(0, 2**22, size=(40, 3)).astype(np.float32)
    held[:20, 2] = rng.integers(0, 50, size=20)
    idx = np.stack([rng.choice(40, size=40, replace=True) for _ in range(30)])
    got = nr._replicate_sums(held, True, idx, nr._multiplicities(idx, 40))
    expected = np.stack([held[i].sum(0) for i in idx])
    assert (expected > 2**24).any()  # the check can fail: some sums are past float32's integers
    assert got.tobytes() == expected.tobytes()

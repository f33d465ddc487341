"""The bootstrap kernel's loops (the two-pass unchecked loop, the checked one) and the count stage's
corpus-from-groups replicate totals, each against the numpy definition of the weights
(``counter.weights``: ``searchsorted`` over the thresholds, a matrix product in Python integers),
never against the kernel itself."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from bleu_core.resampling import counter as bs


def exact_totals(w: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """w @ rows in Python integers (no int64 wrap possible)."""
    return np.array((w.astype(object) @ rows.astype(object)), dtype=object)


@pytest.mark.parametrize("width,B", [(1, 1), (3, 7), (28, 64), (69, 5)])
def test_unchecked_loop_equals_the_definition(width, B):
    rng = np.random.default_rng(width)
    n = 4000  # 4000 * B draws: weights of 5 and more (P ~ 0.4%) occur, the loop's rare branch
    rows = rng.integers(0, 1000, size=(n, width)).astype(np.int64)
    keys = bs.row_keys_from_position("f.parquet", 17, n)
    g = rng.integers(0, 5, size=n)
    out = bs.bootstrap_totals(rows, keys, B, 5, [np.zeros(n, np.int64), 1 + g], 6)
    w = bs.weights(keys, B, 5)
    if B * n > 20_000:
        assert w.max() >= 5
    assert (out[0] == w @ rows).all()
    for j in range(5):
        assert (out[1 + j] == w[:, g == j] @ rows[g == j]).all()


@pytest.mark.parametrize("thresholds", [bs.SWAP_THRESHOLDS, bs.THRESHOLDS[:2], bs.THRESHOLDS[:4], bs.THRESHOLDS[:5]])
def test_unchecked_loop_with_fewer_thresholds(thresholds):
    """1 to 5 thresholds (the coins have one): the weight counts the thresholds at or below the draw."""
    rng = np.random.default_rng(len(thresholds))
    n, width, B = 2000, 4, 50
    rows = rng.integers(0, 100, size=(n, width)).astype(np.int64)
    keys = bs.row_keys_from_position("g.parquet", 0, n)
    out = bs.bootstrap_totals(rows, keys, B, 11, None, 1, thresholds=thresholds)
    w = bs.weights(keys, B, 11, thresholds=thresholds)
    assert w.max() == len(thresholds)
    assert (out[0] == w @ rows).all()


def test_checked_loop_near_int64_equals_the_definition():
    """Statistics near 2**57: the kernel's bound (20 x the row maxima) exceeds int64, so it takes the
    checked loop; the sums themselves fit and equal the definition's Python-integer sums."""
    rng = np.random.default_rng(8)
    n, width, B = 6, 3, 40
    rows = rng.integers(2**56, 2**57, size=(n, width)).astype(np.int64)
    keys = bs.row_keys_from_position("h.parquet", 0, n)
    w = bs.weights(keys, B, 3)
    assert 20 * int(rows.max(axis=1).sum()) > 2**63 - 1  # the bound cannot rule overflow out
    want = exact_totals(w, rows)
    assert max(want.ravel()) <= 2**63 - 1
    out = bs.bootstrap_totals(rows, keys, B, 3)
    assert (out[0].astype(object) == want).all()


# ---------------------------------------------------------------- the count stage's replicate totals

def count_bootstrap(stats, row_keys, sets, n_boot, seed, randomization=False):
    """``BatchToStats._bootstrap`` of a batch (``sets``: (inverse, n_groups) per grouping set)."""
    pytest.importorskip("apache_beam")
    from beambleu.beam.count import BatchToStats

    fn = BatchToStats.__new__(BatchToStats)
    fn.config = SimpleNamespace(n_boot=n_boot, seed=seed, randomization=randomization)
    return fn._bootstrap(stats, row_keys, [(i, ("c",), inv, np.zeros(k, np.int64)) for i, (inv, k) in enumerate(sets)])


@pytest.mark.parametrize("randomization", [False, True])
def test_corpus_replicates_are_the_sum_of_every_row(randomization):
    rng = np.random.default_rng(21)
    n, width, B = 3000, 12, 30
    stats = rng.integers(0, 50, size=(n, width)).astype(np.int64)
    keys = bs.row_keys_from_position("c.parquet", 5, n)
    by_system = rng.integers(0, 7, size=n)
    by_lang = rng.integers(0, 2, size=n)
    out = count_bootstrap(stats, keys, [(by_system, 7), (by_lang, 2)], B, 77, randomization)
    w = bs.swaps(keys, B, 77) if randomization else bs.weights(keys, B, 77)
    assert out.shape == (1 + 7 + 2, B, width)
    assert (out[0] == w @ stats).all()
    for j in range(7):
        assert (out[1 + j] == w[:, by_system == j] @ stats[by_system == j]).all()
    for j in range(2):
        assert (out[8 + j] == w[:, by_lang == j] @ stats[by_lang == j]).all()
    # no grouping set: the corpus alone
    alone = count_bootstrap(stats, keys, [], B, 77, randomization)
    assert alone.shape == (1, B, width) and (alone[0] == w @ stats).all()


def test_corpus_replicates_that_overflow_raise_the_kernels_error():
    """Each group's replicate totals fit int64 but the corpus's do not: the error is the kernel's
    own, as when the corpus is drawn as a set of its own."""
    n, width, B = 4, 1, 50
    stats = np.full((n, width), 2**60, dtype=np.int64)
    keys = bs.row_keys_from_position("o.parquet", 0, n)
    w = bs.weights(keys, B, 1)
    groups = np.arange(n)
    assert (w.max(axis=0) <= 7).all() and exact_totals(w, stats).max() > 2**63 - 1  # the corpus overflows
    with pytest.raises(OverflowError, match=r"exceeds int64 \(2\*\*63 - 1\) at row"):
        count_bootstrap(stats, keys, [(groups, n)], B, 1)


def test_thresholds_past_32_bits_are_refused():
    """The draws are 32-bit: a threshold of 2**32 or more could never be reached by the definition,
    and the vector loop compares the thresholds as 32-bit numbers, so the kernel refuses it rather
    than count a truncated one."""
    rows = np.ones((3, 2), dtype=np.int64)
    keys = bs.row_keys_from_position("h.parquet", 0, 3)
    for top in (1 << 32, 1 << 63, (1 << 64) - 1):
        with pytest.raises(ValueError, match=r"below 2\*\*32"):
            bs.bootstrap_totals(rows, keys, 20, 1, None, 1, thresholds=np.array([5, top], dtype=np.uint64))
        with pytest.raises(ValueError, match=r"below 2\*\*32"):  # the reference definition says the same
            bs.weights(keys, 20, 1, thresholds=np.array([5, top], dtype=np.uint64))
    top = np.array([(1 << 32) - 1], dtype=np.uint64)  # the largest accepted: only a draw of 2**32 - 1 reaches it
    out = bs.bootstrap_totals(rows, keys, 20, 1, None, 1, thresholds=top)
    assert (out[0] == bs.weights(keys, 20, 1, thresholds=top) @ rows).all()


def test_thresholds_out_of_order_are_refused():
    """The two loops count the thresholds at or below a draw in two ways (every one of the first four, or
    the leading run) that agree only for thresholds in order: out of order, the kernel refuses them
    rather than give a weight that depends on which loop ran."""
    rows = np.ones((3, 2), dtype=np.int64)
    keys = bs.row_keys_from_position("h.parquet", 0, 3)
    backwards = np.array([1 << 31, 1 << 30], dtype=np.uint64)
    with pytest.raises(ValueError, match="ascending"):
        bs.bootstrap_totals(rows, keys, 4, 1, None, 1, thresholds=backwards)
    equal = np.array([1 << 30, 1 << 30], dtype=np.uint64)  # in order (not decreasing): accepted
    out = bs.bootstrap_totals(rows, keys, 4, 1, None, 1, thresholds=equal)
    w = bs.weights(keys, 4, 1, thresholds=equal)
    assert (out[0] == w @ rows).all()

"""The bootstrap kernel (``_resample.bootstrap``) against its definition, computed plainly in the test.

The definition (the kernel's docstring): ``out[groups[s, i], b] += w[b, i] * stats[i]`` for every
row i, replicate b and grouping set s, where ``w[b, i]`` counts the thresholds at or below replicate
b's 32-bit draw: the low 32 bits of ``mix(mix(key_i ^ seed_key) + (b // 2 + 1) * G)`` for an even b,
its high 32 bits for an odd b, G = 0x9E3779B97F4A7C15, mix = splitmix64's finaliser.
The expected totals below are Python integers: the weights from that formula in Python (``_weights``),
the sums as object arrays of Python ints (exact, never wrapping), so a total past int64 shows as one.

Every case runs on each build of the kernel's unchecked loop the CPU has (AVX-512, AVX2, generic:
``_resample._set_isa``), and covers what its fast paths depend on: weights drawn sixteen replicates
at a time (replicate counts around multiples of 16), blocks of eight rows of the same groups, their
sums staged in int32 while a bound allows (rows just inside and just past that bound), heavy weights
(>= 8) and more than four thresholds, runs of one row, many groups, two grouping sets, totals that
start non-zero, and totals near and past int64's limit (the checked loop, its OverflowError naming
the first row whose sums pass it).
"""

from __future__ import annotations

import bisect

import numpy as np
import pytest

from bleu_core.resampling import _resample, counter as bs

M64 = (1 << 64) - 1
M32 = (1 << 32) - 1
G = 0x9E3779B97F4A7C15
INT64_MAX = (1 << 63) - 1
INT32_MAX = (1 << 31) - 1


def _mix(x: int) -> int:
    x &= M64
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & M64
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def _weights(keys, seed_key: int, thresholds, n_boot: int):
    """w[b][i] as Python ints, from the definition."""
    thr = [int(t) for t in thresholds]
    ks = [_mix(int(k) ^ seed_key) for k in keys]
    return [[bisect.bisect_right(thr, _draw32(k, b)) for k in ks] for b in range(n_boot)]


def _draw32(k: int, b: int) -> int:
    """Replicate b's 32-bit draw for the mixed key k: a half of draw b // 2."""
    x = _mix(k + (b // 2 + 1) * G)
    return x >> 32 if b % 2 else x & 0xFFFFFFFF


def _expected(keys, seed_key, thresholds, groups, stats, n_boot, out0):
    """(the totals as an object array of Python ints, the first row after which one passes
    INT64_MAX or None), adding the rows in order as the checked loop does."""
    w = _weights(keys, seed_key, thresholds, n_boot)
    out = np.array(out0.tolist(), dtype=object).reshape(out0.shape)
    first_bad = None
    for i, row in enumerate(stats.tolist()):
        for s in range(groups.shape[0]):
            g = int(groups[s, i])
            for b in range(n_boot):
                if w[b][i]:
                    out[g, b] += np.array([w[b][i] * v for v in row], dtype=object)
        if first_bad is None and max(out.reshape(-1).tolist(), default=0) > INT64_MAX:
            first_bad = i
    return out, first_bad


@pytest.fixture(params=[2, 1, 0], ids=["widest", "avx2", "generic"])
def isa(request):
    previous = _resample._set_isa(request.param)
    yield request.param
    _resample._set_isa(previous)


def _run(keys, seed_key, thresholds, groups, stats, n_boot, out0):
    out = out0.copy()
    _resample.bootstrap(np.ascontiguousarray(keys, dtype=np.uint64), seed_key,
                        np.ascontiguousarray(thresholds, dtype=np.uint64), np.ascontiguousarray(groups, np.int64),
                        groups.shape[0], np.ascontiguousarray(stats, np.int64), stats.shape[1], n_boot, out)
    return out


def _check(keys, seed_key, thresholds, groups, stats, n_boot, n_groups, out0=None):
    if out0 is None:
        out0 = np.zeros((n_groups, n_boot, stats.shape[1]), np.int64)
    expected, first_bad = _expected(keys, seed_key, thresholds, groups, stats, n_boot, out0)
    if first_bad is not None:
        with pytest.raises(OverflowError, match=rf"exceeds int64 \(2\*\*63 - 1\) at row {first_bad}$"):
            _run(keys, seed_key, thresholds, groups, stats, n_boot, out0)
        return None
    got = _run(keys, seed_key, thresholds, groups, stats, n_boot, out0)
    assert got.tolist() == expected.tolist()
    return got


def test_the_python_weights_are_the_reference_weights():
    """The test's weights are those of counter.weights (the numpy definition), so the cases below
    check the kernel against the same draws as every other test."""
    keys = bs.row_keys_from_position("w", 0, 40)
    assert bs.weights(keys, 33, seed=5).tolist() == _weights(keys, bs.seed_key(5), bs.THRESHOLDS, 33)


@pytest.mark.parametrize("n_boot", [1, 15, 16, 17, 33])
@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 17, 40])
def test_one_group_every_row_count_and_replicate_count(isa, n, n_boot):
    rng = np.random.default_rng(n * 100 + n_boot)
    stats = rng.integers(0, 50, size=(n, 5)).astype(np.int64)
    keys = bs.row_keys_from_position("one", 3, n)
    _check(keys, bs.seed_key(7), bs.THRESHOLDS, np.zeros((1, n), np.int64), stats, n_boot, 1)


def test_zero_rows_leave_the_totals_as_they_were(isa):
    out0 = np.arange(2 * 3 * 4, dtype=np.int64).reshape(2, 3, 4)
    got = _run(np.zeros(0, np.uint64), 1, bs.THRESHOLDS, np.zeros((1, 0), np.int64), np.zeros((0, 4), np.int64), 3,
               out0)
    assert got.tolist() == out0.tolist()


@pytest.mark.parametrize("width", [1, 7, 8, 9, 28])
def test_groups_in_runs_of_every_length_two_sets_and_totals_that_start_non_zero(isa, width):
    """Runs of 1 to 20 rows (blocks of 8 and their remainders, stage flushes at each new run), a
    second set of interleaved groups (rows of one run in different groups), and a start."""
    rng = np.random.default_rng(width)
    runs = [1, 8, 3, 16, 9, 1, 1, 20, 8, 17]
    g1 = np.repeat(np.arange(len(runs)), runs)
    n = len(g1)
    g2 = len(runs) + (np.arange(n) % 3 == 0)  # two groups, interleaved
    stats = rng.integers(0, 1000, size=(n, width)).astype(np.int64)
    keys = bs.row_keys_from_position("runs", 0, n)
    n_groups = len(runs) + 2
    out0 = rng.integers(0, 10**6, size=(n_groups, 37, width)).astype(np.int64)
    _check(keys, bs.seed_key(11), bs.THRESHOLDS, np.stack([g1, g2]), stats, 37, n_groups, out0)
    # the same with the sets in the other order and a single set
    _check(keys, bs.seed_key(11), bs.THRESHOLDS, np.stack([g2, g1]), stats, 37, n_groups, out0)
    _check(keys, bs.seed_key(11), bs.THRESHOLDS, g1[None, :], stats, 37, n_groups)


def test_many_groups_one_row_each(isa):
    n = 300
    stats = np.random.default_rng(1).integers(0, 30, size=(n, 3)).astype(np.int64)
    keys = bs.row_keys_from_ids(list(range(n)))
    groups = np.stack([np.arange(n), np.full(n, n)])
    _check(keys, bs.seed_key(2), bs.THRESHOLDS, groups, stats, 20, n + 1)


@pytest.mark.parametrize("value", [
    INT32_MAX // 56,  # eight rows at weight 7: a block's bound just inside int32
    INT32_MAX // 56 + 1,  # just past it: the block adds in int64
    INT32_MAX // 56 // 3,  # three blocks fill the stage: flushed before the fourth
    INT32_MAX // 7 + 1,  # one row past it on its own
    1 << 40,
])
def test_rows_at_the_int32_stage_bound(isa, value):
    """Rows whose largest statistic puts a block's bound (7 x the sum of its rows' largest
    statistics) at, just past and well past INT32_MAX; every other statistic is smaller."""
    n = 64
    stats = np.zeros((n, 4), np.int64)
    stats[:, 0] = value
    stats[:, 1] = value - 1
    stats[::5, 2] = value // 3
    keys = bs.row_keys_from_position("bound", 0, n)
    _check(keys, bs.seed_key(3), bs.THRESHOLDS, np.zeros((1, n), np.int64), stats, 40, 1)


@pytest.mark.parametrize("value", [
    INT32_MAX // 56,  # a block's sums reach its bound, INT32_MAX - 15
    INT32_MAX // 56 + 1,  # past INT32_MAX: int64
    INT32_MAX // 56 // 3,  # three blocks reach the stage's bound; the fourth would pass it
    INT32_MAX // 56 // 3 + 1,
])
def test_sums_that_reach_the_int32_bound(isa, value):
    """Seven thresholds at 0: every weight is 7, so the sums are the bounds themselves (the
    Poisson weights almost never come near them)."""
    n = 48
    stats = np.full((n, 9), value, np.int64)
    stats[:, 3] = 0
    keys = bs.row_keys_from_position("seven", 0, n)
    got = _check(keys, bs.seed_key(3), np.zeros(7, np.uint64), np.zeros((1, n), np.int64), stats, 18, 1)
    assert got[0, :, 0].tolist() == [7 * n * value] * 18


@pytest.mark.parametrize("thresholds", [
    [1 << 31],  # the randomization test's fair coin (K = 1)
    [1 << 30, 1 << 31],  # K = 2
    [1 << 29, 1 << 30, 3 << 30],  # K = 3
    [1 << 28, 1 << 29, 1 << 30, 1 << 31],  # K = 4: a draw at or above the fourth is weight 4
    [1 << 27, 1 << 28, 1 << 29, 1 << 30, 1 << 31],  # K = 5: counted on past the fourth
    [(k + 1) << 26 for k in range(40)],  # K = 40, weights up to 40 (most blocks heavy)
    [0] + [(k + 1) << 24 for k in range(254)],  # K = 255: weights >= 1, the largest the byte path takes
    [(k + 1) << 23 for k in range(300)],  # K = 300: the plain loop
    [5, 5, 5, 5, 5, M32, M32],  # equal thresholds; M32 only at the top of the range
    [0, 1 << 31, M32],  # the ends of the range: 0 is at or below every draw, M32 only at the top
])
def test_other_thresholds_and_heavy_weights(isa, thresholds):
    n = 50
    stats = np.random.default_rng(len(thresholds)).integers(0, 100, size=(n, 6)).astype(np.int64)
    keys = bs.row_keys_from_position("thr", 0, n)
    groups = np.stack([np.arange(n) // 20])
    _check(keys, bs.seed_key(4), np.array(thresholds, dtype=np.uint64), groups, stats, 35, 3)


def test_the_swap_totals_are_the_definition_with_its_seed(isa):
    n = 30
    stats = np.random.default_rng(9).integers(0, 20, size=(n, 4)).astype(np.int64)
    keys = bs.row_keys_from_position("swap", 0, n)
    got = bs.swap_totals(stats, keys, 19, seed=123)
    expected, _ = _expected(keys, bs.seed_key(123 ^ bs._SWAP_SALT), bs.SWAP_THRESHOLDS,
                            np.zeros((1, n), np.int64), stats, 19, np.zeros((1, 19, 4), np.int64))
    assert got.tolist() == expected.tolist()


@pytest.mark.parametrize("scale", [0, 1, 2, 3])
def test_totals_near_and_past_int64(isa, scale):
    """Statistics near INT64_MAX / (weights x rows): the run's bound does not fit int64, so the
    checked loop runs; it gives the exact totals when they fit, else OverflowError naming the first
    row after which a total passes INT64_MAX (computed here in Python integers)."""
    n = 24
    big = [INT64_MAX // 64, INT64_MAX // 40, INT64_MAX // 20, INT64_MAX // 3][scale]
    stats = np.zeros((n, 3), np.int64)
    stats[:, 0] = big
    stats[::3, 1] = big // 2
    stats[:, 2] = 1
    keys = bs.row_keys_from_position("near", 0, n)
    _check(keys, bs.seed_key(6), bs.THRESHOLDS, np.zeros((1, n), np.int64), stats, 4, 1)


def test_a_start_that_leaves_no_room(isa):
    """Totals that start at INT64_MAX - 1: any weighted statistic of 2 or more passes the limit."""
    n = 10
    stats = np.zeros((n, 2), np.int64)
    stats[4, 0] = 2
    keys = bs.row_keys_from_position("room", 0, n)
    out0 = np.full((1, 5, 2), INT64_MAX - 1, np.int64)
    _check(keys, bs.seed_key(8), bs.THRESHOLDS, np.zeros((1, n), np.int64), stats, 5, 1, out0)
    stats[4, 0] = 1
    stats[4, 1] = 0
    _check(keys, bs.seed_key(8), bs.THRESHOLDS, np.zeros((1, n), np.int64), stats, 1, 1,
           np.full((1, 1, 2), INT64_MAX - 20, np.int64))

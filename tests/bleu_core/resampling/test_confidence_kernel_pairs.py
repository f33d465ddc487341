"""The bootstrap kernel's int16 path against its definition (the reference of test_resample_kernel).

Where the CPU has AVX2, ``_resample.bootstrap`` adds blocks of sixteen rows of the same groups whose
statistics all fit int16 (at most 32767) with pairwise int16 products (two rows' weights times their
statistics, summed in int32 lanes), and stages those sums in int32 while a bound (the largest weight
times the block's largest statistics) allows. These cases sit on what that path depends on: the
int16 limit (32767 in, 32768 out, one such row in a block), every count of 8-column vectors (widths
1 to 40: one to five, past the four added at once), replicate counts around its chunks of 64 and
its 16-replicate steps, runs of rows around sixteen, two grouping sets, and weights of 255 on
statistics of 32767, whose sums reach the stage's bound exactly. The expected totals are Python
integers from the definition, computed in the test (test_resample_kernel's ``_check``).
"""

from __future__ import annotations

import numpy as np
import pytest

from bleu_core.resampling import _resample, counter as bs

from .test_resample_kernel import INT32_MAX, _check

INT16_MAX = (1 << 15) - 1


@pytest.fixture(autouse=True, params=[2, 1, 0], ids=["widest", "avx2", "generic"])
def build(request):
    """Every case on each build of the kernel's unchecked loop the CPU has (``_set_isa``)."""
    previous = _resample._set_isa(request.param)
    yield request.param
    _resample._set_isa(previous)


@pytest.mark.parametrize("value", [INT16_MAX, INT16_MAX + 1])
@pytest.mark.parametrize("where", ["all", "one"])
def test_statistics_at_and_past_the_int16_limit(value, where):
    """32767 is the largest statistic the int16 path takes; 32768 sends its block to the byte
    path, also when only one row of the block has it."""
    n = 48
    rng = np.random.default_rng(value)
    stats = rng.integers(0, 200, size=(n, 12)).astype(np.int64)
    if where == "all":
        stats[:, 3] = value
    else:
        stats[21, 5] = value
    keys = bs.row_keys_from_position("int16", 0, n)
    _check(keys, bs.seed_key(21), bs.THRESHOLDS, np.zeros((1, n), np.int64), stats, 37, 1)


@pytest.mark.parametrize("width", [1, 7, 8, 9, 16, 24, 28, 32, 33, 40])
def test_every_count_of_column_vectors(width):
    n = 40
    stats = np.random.default_rng(width).integers(0, INT16_MAX + 1, size=(n, width)).astype(np.int64)
    keys = bs.row_keys_from_position("widths", 5, n)
    _check(keys, bs.seed_key(22), bs.THRESHOLDS, np.zeros((1, n), np.int64), stats, 21, 1)


@pytest.mark.parametrize("n_boot", [1, 15, 16, 17, 63, 64, 65, 80, 130])
def test_replicate_counts_around_the_chunks(n_boot):
    n = 32
    stats = np.random.default_rng(n_boot).integers(0, 3000, size=(n, 10)).astype(np.int64)
    keys = bs.row_keys_from_position("chunks", 0, n)
    _check(keys, bs.seed_key(23), bs.THRESHOLDS, np.zeros((1, n), np.int64), stats, n_boot, 1)


def test_runs_around_sixteen_rows_and_two_sets():
    """Runs of 15, 16, 17, 31, 32 and 33 rows (a block of sixteen ends inside a run, or the next run
    starts inside it), a second set of interleaved groups, totals that start non-zero."""
    rng = np.random.default_rng(5)
    runs = [15, 16, 17, 31, 32, 33, 1, 16]
    g1 = np.repeat(np.arange(len(runs)), runs)
    n = len(g1)
    g2 = len(runs) + (np.arange(n) // 40 % 2)  # two groups, in runs of 40 rows
    stats = rng.integers(0, 5000, size=(n, 28)).astype(np.int64)
    keys = bs.row_keys_from_position("runs16", 0, n)
    n_groups = len(runs) + 2
    out0 = rng.integers(0, 10**6, size=(n_groups, 19, 28)).astype(np.int64)
    _check(keys, bs.seed_key(24), bs.THRESHOLDS, np.stack([g1, g2]), stats, 19, n_groups, out0)
    _check(keys, bs.seed_key(24), bs.THRESHOLDS, g1[None, :], stats, 19, n_groups)


def test_weights_of_255_on_the_largest_statistics_reach_the_stage_bound():
    """255 thresholds at 0: every weight is 255, the largest a byte holds. A block of sixteen rows of
    32767 then adds 255 x 16 x 32767 to each total, the block's bound; sixteen blocks fit in int32
    (2,139,095,040), the seventeenth does not, so the stage is added into the totals before it."""
    n = 16 * 20
    stats = np.full((n, 9), INT16_MAX, np.int64)
    stats[:, 4] = 0
    keys = bs.row_keys_from_position("w255", 0, n)
    assert 16 * (255 * 16 * INT16_MAX) <= INT32_MAX < 17 * (255 * 16 * INT16_MAX)
    got = _check(keys, bs.seed_key(25), np.zeros(255, np.uint64), np.zeros((1, n), np.int64), stats, 17, 1)
    assert got[0, :, 0].tolist() == [255 * n * INT16_MAX] * 17


def test_the_pipeline_statistics_of_bleu_and_chrf():
    """Statistics shaped like BLEU's and chrF's side by side (28 columns, the run of
    ``-m bleu chrf``): sentence lengths up to a few hundred tokens, character counts up to a few
    thousand, runs of a system's rows, 100 replicates."""
    rng = np.random.default_rng(28)
    n = 200
    length = rng.integers(0, 300, size=n)
    chars = length * 5
    stats = np.zeros((n, 28), np.int64)
    stats[:, 0] = length
    stats[:, 1] = length + rng.integers(-5, 6, size=n).clip(-length, None)
    for j in range(4):
        stats[:, 6 + j] = np.maximum(length - j, 0)
        stats[:, 2 + j] = stats[:, 6 + j] // (j + 2)
    for j in range(6):
        stats[:, 10 + 3 * j] = np.maximum(chars - j, 0)
        stats[:, 11 + 3 * j] = np.maximum(chars - j + 3, 0)
        stats[:, 12 + 3 * j] = stats[:, 10 + 3 * j] // 2
    groups = np.repeat(np.arange(4), [70, 45, 60, 25])[None, :]
    keys = bs.row_keys_from_position("bleu-chrf", 1000, n)
    _check(keys, bs.seed_key(bs.DEFAULT_SEED), bs.THRESHOLDS, groups, stats, 100, 4)

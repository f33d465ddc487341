"""Poisson bootstrap of corpus BLEU: replicate weights, weighted statistics, intervals, p-values.

Resampling a corpus of n pairs with replacement gives each pair a multinomial count; the Poisson
bootstrap draws each pair's count independently from Poisson(1), which has the same mean and
nearly the same spread, and needs no knowledge of n. That makes it a sum over pairs, so it fits
the one-pass combine: replicate b of a group is the vector ``sum_i w[b, i] * stats_i`` (int64,
exact), and the BLEU of each replicate is computed once, on its totals, like the point score.

Each weight is a pure function of (seed, row identity, replicate index): a counter-based
generator (splitmix64's finaliser over the three; each 64-bit draw gives two replicates their
32-bit uniforms) followed by the exact Poisson(1) inverse CDF of a 32-bit uniform.
The same row gets the same weights on every runner, sharding, order and retry, and two systems
scored on the same segments (same row identity) share weights, which is what makes the paired
test paired.
"""

from __future__ import annotations

# the seed and replicate-count checks, which the command lines need before anything is drawn, live in
# numpy-free .seeds; numpy (and hashlib, decimal, statistics) is imported by the functions that draw (and
# THRESHOLDS made at first use)
from .seeds import (DEFAULT_N, DEFAULT_SEED, MAX_REPLICATE_BYTES, MAX_SEED, check_replicates, check_seed,
                    max_replicates, seed_from_env)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Sequence

    import numpy as np

__all__ = ["BLOCK_ROWS", "DEFAULT_N", "DEFAULT_SEED", "MAX_REPLICATE_BYTES", "MAX_SEED", "MAX_WEIGHT",
           "SWAP_THRESHOLDS", "THRESHOLDS", "bootstrap_totals", "check_replicates", "check_seed", "exact_mean",
           "hash_text", "max_replicates", "paired_p_value", "percentile_interval", "randomization_p_value",
           "randomization_test", "randomization_trials", "replicate_scores", "row_keys_from_ids",
           "row_keys_from_position", "seed_from_env", "seed_key", "swap_totals", "swaps", "weights"]

#: the largest weight: the number of thresholds, k = 0..11 (P(Poisson(1) > 12) < 2**-32, so the
#: 32-bit quantile of k = 12 would be 2**32, which no draw reaches)
MAX_WEIGHT = 12
#: rows per block when drawing weights (bounds the temporary B x rows arrays)
BLOCK_ROWS = 2048

_M64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15
_C1 = 0xBF58476D1CE4E5B9
_C2 = 0x94D049BB133111EB


def _poisson_thresholds() -> np.ndarray:
    """T[k] = ceil(P(X <= k) * 2**32) for X ~ Poisson(1), k = 0..MAX_WEIGHT-1, computed in
    50-digit decimal arithmetic so that every platform gets the same integers. A weight counts the
    thresholds at or below a 32-bit draw x, so it is the smallest k with x / 2**32 < P(X <= k): the
    exact Poisson(1) quantile of the uniform x / 2**32."""
    from decimal import ROUND_CEILING, Decimal, getcontext

    import numpy as np

    getcontext().prec = 50
    e_inv = Decimal(1).exp() ** -1
    term, cdf, out = Decimal(1), Decimal(0), []
    for k in range(MAX_WEIGHT):
        if k:
            term /= k
        cdf += term
        out.append(int((cdf * e_inv * (1 << 32)).to_integral_value(rounding=ROUND_CEILING)))
    return np.array(out, dtype=np.uint64)


def _swap_thresholds() -> np.ndarray:
    """A weight of 1 where the 32-bit draw is >= 2**31: a fair coin per (row, trial)."""
    import numpy as np

    return np.array([1 << 31], dtype=np.uint64)


#: THRESHOLDS (the Poisson(1) inverse CDF, :func:`_poisson_thresholds`) and SWAP_THRESHOLDS (the
#: randomization test's coins, :func:`_swap_thresholds`): uint64 arrays, made at their first use
#: (the module's ``__getattr__``)
THRESHOLDS: np.ndarray
SWAP_THRESHOLDS: np.ndarray
_LAZY = {"THRESHOLDS": _poisson_thresholds, "SWAP_THRESHOLDS": _swap_thresholds}


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return _thresholds(name)


def _thresholds(name: str) -> np.ndarray:
    """THRESHOLDS or SWAP_THRESHOLDS, made once."""
    value = globals().get(name)
    if value is None:
        value = globals()[name] = _LAZY[name]()
    return value


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser, in place on a uint64 array (wrapping arithmetic)."""
    import numpy as np

    x ^= x >> np.uint64(30)
    x *= np.uint64(_C1)
    x ^= x >> np.uint64(27)
    x *= np.uint64(_C2)
    x ^= x >> np.uint64(31)
    return x


def _mix_int(x: int) -> int:
    x &= _M64
    x ^= x >> 30
    x = (x * _C1) & _M64
    x ^= x >> 27
    x = (x * _C2) & _M64
    x ^= x >> 31
    return x


def hash_text(text: str) -> int:
    """A stable 64-bit hash of a string (BLAKE2b), the same in every process and platform."""
    import hashlib

    return int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")


_INT_SALT = 0x5BD1E9955BD1E995


def row_keys_from_ids(values: Sequence) -> np.ndarray:
    """Row identities from an id column's values (strings or integers, or an integer numpy
    array; not null). An integer id and the string of its digits are different identities."""
    import numpy as np

    if isinstance(values, np.ndarray) and values.dtype.kind in "iu":
        return _mix(values.astype(np.int64).view(np.uint64) ^ np.uint64(_INT_SALT))
    if len(values) and all(type(v) is int for v in values):
        return row_keys_from_ids(np.array(values, dtype=np.int64))
    out = np.empty(len(values), dtype=np.uint64)
    for i, v in enumerate(values):
        if v is None:
            raise ValueError(f"row {i}: the id is null")
        if isinstance(v, (bytes, bytearray)):
            v = bytes(v).decode("utf-8", "surrogateescape")
        if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
            out[i] = _mix_int(int(v) ^ _INT_SALT)
        else:
            out[i] = hash_text("s\0" + str(v))
    return out


def row_keys_from_position(source: str, first_row: int, n: int) -> np.ndarray:
    """Row identities from the file and the row index within it."""
    import numpy as np

    rows = np.arange(first_row, first_row + n, dtype=np.uint64)
    return _mix(rows ^ np.uint64(hash_text("f\0" + source)))


def weights(row_keys: np.ndarray, n_boot: int, seed: int = DEFAULT_SEED, thresholds: Optional[np.ndarray] = None
            ) -> np.ndarray:
    """int64[n_boot, len(row_keys)]: Poisson(1) weight of each row in each replicate (the
    reference definition, in numpy; :func:`bootstrap_totals` computes the same in C);
    ``thresholds``: :data:`THRESHOLDS` when None (each below 2**32).

    Row key r, mixed with the seed's key, is k = mix(r ^ seed_key); its draw j is
    x_j = mix(k + (j + 1) * G) (mod 2**64, G = 0x9E3779B97F4A7C15, mix = splitmix64's finaliser).
    Replicate b's 32-bit uniform is the low half of draw b // 2 for an even b, the high half for
    an odd b, and its weight the number of thresholds at or below it."""
    import numpy as np

    if thresholds is None:
        thresholds = _thresholds("THRESHOLDS")
    if len(thresholds) and int(np.max(thresholds)) >> 32:
        raise ValueError("thresholds must be below 2**32 (the draws are 32-bit)")
    keys = np.asarray(row_keys, dtype=np.uint64)
    skey = np.uint64(seed_key(seed))
    out = np.empty((n_boot, len(keys)), dtype=np.int64)
    n_draws = (n_boot + 1) // 2
    draw = (np.arange(1, n_draws + 1, dtype=np.uint64) * np.uint64(_GOLDEN))[:, None]
    for start in range(0, len(keys), BLOCK_ROWS):
        block = _mix(keys[start:start + BLOCK_ROWS] ^ skey)
        x = _mix(block[None, :] + draw)  # wraps mod 2**64
        halves = np.empty((2 * n_draws, x.shape[1]), dtype=np.uint64)
        halves[0::2] = x & np.uint64(0xFFFFFFFF)
        halves[1::2] = x >> np.uint64(32)
        out[:, start:start + BLOCK_ROWS] = np.searchsorted(thresholds, halves[:n_boot], side="right")
    return out


def percentile_interval(scores: Sequence[float]) -> Dict[str, float]:
    """sacrebleu's estimate: mean of the replicate scores and the 95% percentile interval
    (sorted scores at index n // 40 and n - n // 40 - 1)."""
    s = sorted(scores)
    n = len(s)
    lo_i = n // 40
    hi_i = n - lo_i - 1
    low, high = s[lo_i], s[hi_i]
    return {"mean": exact_mean(s), "low": low, "high": high, "half_width": 0.5 * (high - low)}


def exact_mean(values: Sequence[float]) -> float:
    """``statistics.mean`` of floats, the same float, ~30x faster for a thousand replicates: the
    exact sum over the count, correctly rounded once. Each finite float is a 53-bit integer times
    a power of two (``numpy.frexp``), so the sum is one integer over a power of two, and Python's
    ``int / int`` rounds correctly, as ``statistics``' Fractions do. Empty input and non-finite
    values go to ``statistics.mean`` itself (its errors, infinities and NaN), and so do values that
    are not all Python floats (``statistics.mean`` keeps their type: numpy float32 scores give a
    float32 mean, as sacrebleu's chrF intervals have).

    First, without numpy: the exact sum as two floats, ``S = fsum(values)`` (the correctly rounded
    sum) and ``R = fsum(values, -S)`` (what S left out, rounded), taken when ``fsum(values, -S, -R)``
    is 0: a sum of floats is a multiple of 2**-1074, so its correctly rounded value is 0 only when
    it is 0, and then the sum is exactly S + R (replicate scores, of a few exponents, always are)."""
    if set(map(type, values)) != {float}:
        import statistics

        return statistics.mean(values)
    exact = _fsum_pair(values)
    if exact is not None:
        (a, b), (c, d) = exact[0].as_integer_ratio(), exact[1].as_integer_ratio()
        return (a * d + c * b) / (b * d * len(values))  # int / int: correctly rounded
    import numpy as np

    a = np.asarray(values, dtype=np.float64)
    if not np.isfinite(a).all():
        import statistics

        return statistics.mean(values)
    m, e = np.frexp(a)
    ints = (m * 2.0 ** 53).astype(np.int64)
    e = e - 53
    low = int(e.min())
    # the sum of ints[i] << shifts[i]: values of one shift summed in int64 first, in runs of at most
    # 1023 (|ints| < 2**53, so a run's sum is exact), then the few runs as Python integers
    shifts = e - low
    order = np.argsort(shifts, kind="stable")
    shifts, ints = shifts[order], ints[order]
    at = np.arange(len(shifts))
    runs = np.flatnonzero(np.r_[True, shifts[1:] != shifts[:-1]])
    cuts = np.flatnonzero((at - runs[np.searchsorted(runs, at, side="right") - 1]) % 1023 == 0)
    total = sum(map(int.__lshift__, np.add.reduceat(ints, cuts).tolist(), shifts[cuts].tolist()))
    return total / (len(a) << -low) if low < 0 else (total << low) / len(a)


def _fsum_pair(values: Sequence[float]) -> Optional[tuple]:
    """(S, R), finite floats whose sum is exactly the sum of ``values`` (finite floats), or None
    (see :func:`exact_mean`)."""
    import math
    from itertools import chain

    try:
        s = math.fsum(values)
        r = math.fsum(chain(values, (-s,)))
        if math.isfinite(s) and math.isfinite(r) and math.fsum(chain(values, (-s, -r))) == 0.0:
            return s, r
    except (OverflowError, ValueError):  # an intermediate overflow, or infinities of both signs
        pass
    return None


def randomization_p_value(differences: Sequence[float], observed: float) -> float:
    """p-value of the paired approximate randomization test (Noreen 1989; Riezler and Maxwell
    2005; sacrebleu's ``--paired-ar``): ``differences`` are |score(A_t) - score(B_t)| of the
    trials' pseudo-systems, ``observed`` the |difference| of the real pair, p = (c + 1) / (T + 1).

    As :func:`paired_p_value`, c counts trial differences **>=** the observed one, where sacrebleu
    2.6.0 counts **>**: a system compared with an identical copy of the baseline (every trial
    difference 0) gets p = 1 here and p = 1 / (T + 1), "significant", there. Ties are not rare
    here: a trial that swaps only segments the systems translate identically, or every segment
    where they differ, reproduces the observed difference exactly, so systems differing on a few
    segments get large p-values here and small ones in sacrebleu. Counting those trials is the
    test's definition (a difference reached by chance); sacrebleu's strict count drops them."""
    import numpy as np

    d = np.asarray(differences, dtype=np.float64)
    c = int(np.sum(d >= observed))
    return (c + 1) / (len(d) + 1)


def paired_p_value(system: Sequence[float], baseline: Sequence[float], system_score: float,
                   baseline_score: float) -> float:
    """sacrebleu's paired bootstrap p-value (after Koehn 2004, as in Moses'
    bootstrap-hypothesis-difference-significance.pl): the observed |difference| against the
    replicate |differences| centred on their mean, p = (c + 1) / (B + 1).

    One deliberate difference: c counts centred replicate differences **>=** the observed one,
    where sacrebleu 2.6.0 counts **>**. With distinct systems ties have probability ~0 and the
    two agree; for a system compared with itself (all differences 0) sacrebleu's count gives
    p = 1 / (B + 1), a "significant" difference from itself, and this one gives p = 1.
    """
    import numpy as np

    sys_b = np.asarray(system, dtype=np.float64)
    bl_b = np.asarray(baseline, dtype=np.float64)
    diff = abs(baseline_score - system_score)
    sample = np.abs(sys_b - bl_b)
    centred = sample - sample.mean()
    c = int(np.sum(centred >= diff))
    return (c + 1) / (len(centred) + 1)


def replicate_scores(bleu, boot: np.ndarray) -> List[float]:
    """BLEU of each replicate's totals (rows of ``boot``), with the metric's own arithmetic."""
    return [bleu.score(row).score for row in boot]


def seed_key(seed: int) -> int:
    """The generator's 64-bit key of a seed (one key per seed: :func:`check_seed` refuses the
    others)."""
    return _mix_int(check_seed(seed) * _GOLDEN + 0x632BE59BD9B4E019)


#: the randomization test's swap bits come from the same generator with another key, so that
#: they are independent of the bootstrap's weights for the same seed
_SWAP_SALT = 0xA5A5_0F0F_C3C3_5A5A


def swap_totals(rows: np.ndarray, row_keys: np.ndarray, n_trials: int, seed: int = DEFAULT_SEED,
                group_sets: Optional[Sequence[np.ndarray]] = None, n_groups: int = 1) -> np.ndarray:
    """The approximate randomization test's trial totals: int64[n_groups, n_trials, width], the
    sum of the statistics of the rows whose swap bit is set in each trial.

    Trial t swaps row i between the two systems when s(seed, row key, t) = 1, a fair coin from the
    counter-based generator of :func:`bootstrap_totals` (its kernel, with one threshold at 2**31
    and a seed key of its own). A system X's swapped totals S_t(X) and its total T(X) are all the
    test needs: with baseline B, the trial's pseudo-systems are
    ``S_t(B) + T(X) - S_t(X)`` and ``T(B) - S_t(B) + S_t(X)`` (:func:`randomization_trials`). The
    bits depend on the row's identity only, so two systems scored on the same segments get the
    same swaps on every runner and sharding."""
    return bootstrap_totals(rows, row_keys, n_trials, seed ^ _SWAP_SALT, group_sets, n_groups,
                            thresholds=_thresholds("SWAP_THRESHOLDS"))


def swaps(row_keys: np.ndarray, n_trials: int, seed: int = DEFAULT_SEED) -> np.ndarray:
    """int64[n_trials, len(row_keys)] of 0/1: the swap bits (the reference definition, in numpy,
    of what :func:`swap_totals` computes in C)."""
    return weights(row_keys, n_trials, seed ^ _SWAP_SALT, thresholds=_thresholds("SWAP_THRESHOLDS"))


def randomization_trials(base_total: np.ndarray, base_swapped: np.ndarray, sys_total: np.ndarray,
                         sys_swapped: np.ndarray):
    """The pseudo-systems' totals of every trial, int64[n_trials, width] each: A_t takes the
    baseline's statistics on swapped rows and the system's on the others, B_t the opposite."""
    a = base_swapped + (sys_total - sys_swapped)
    b = (base_total - base_swapped) + sys_swapped
    return a, b


def randomization_test(metric, base_total, base_swapped, sys_total, sys_swapped) -> float:
    """p-value of ``metric``'s paired approximate randomization test from the two systems'
    totals and swapped trial totals (each system's score is computed on its totals, every trial's
    on the pseudo-systems' totals, all with the metric's own arithmetic)."""
    import numpy as np

    a, b = randomization_trials(np.asarray(base_total), np.asarray(base_swapped), np.asarray(sys_total),
                                np.asarray(sys_swapped))
    observed = abs(metric.score(base_total).score - metric.score(sys_total).score)
    diffs = [abs(metric.score(x).score - metric.score(y).score) for x, y in zip(a, b)]
    return randomization_p_value(diffs, observed)


def bootstrap_totals(rows: np.ndarray, row_keys: np.ndarray, n_boot: int, seed: int = DEFAULT_SEED,
                     group_sets: Optional[Sequence[np.ndarray]] = None, n_groups: int = 1,
                     thresholds: Optional[np.ndarray] = None) -> np.ndarray:
    """Replicate totals of per-pair statistics: int64[n_groups, n_boot, width].

    ``group_sets`` holds, for each grouping set, every row's index into the output (indices of
    different sets must not overlap if their totals are to stay apart); by default all rows go
    to group 0. Each weight is drawn once and added to the row's group in every set. This is
    :func:`weights` then ``w @ rows``, fused in the C kernel (exact int64 sums: OverflowError
    rather than wrapping; ValueError for negative statistics, thresholds out of order or of 2**32
    or more, or an ``n_boot`` that :func:`check_replicates` refuses)."""
    import numpy as np

    from . import _resample  # the compiled kernel: a missing build fails this call only, not the import

    if thresholds is None:
        thresholds = _thresholds("THRESHOLDS")
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    check_replicates(n_boot, rows.shape[1])
    keys = np.ascontiguousarray(row_keys, dtype=np.uint64)
    if group_sets is None:
        group_sets = [np.zeros(len(keys), dtype=np.int64)]
    groups = np.ascontiguousarray(np.stack([np.asarray(g, dtype=np.int64) for g in group_sets]))
    out = np.zeros((n_groups, n_boot, rows.shape[1]), dtype=np.int64)
    if len(keys):
        _resample.bootstrap(keys, seed_key(seed), thresholds, groups, len(group_sets), rows, rows.shape[1], n_boot,
                            out)
    return out

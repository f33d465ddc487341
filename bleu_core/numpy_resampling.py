"""sacrebleu's resampling, draw for draw, without its B x N memory.

sacrebleu 2.6.0 resamples with ``numpy.random.default_rng(seed)``: a bootstrap replicate is an
index vector from ``Generator.choice(N, N)`` (all B at once), the segments' statistics are held
as float32 and a replicate's statistics are the float32 column sums of the indexed rows; a paired
approximate randomization trial is a row of ``Generator.integers(2, dtype=bool)`` coins (all T x N
at once), the pseudo-systems' statistics the matrix products of the coins with each system's
statistics. Its p-values count the resampled differences strictly greater than the observed one.

This module draws the same numbers from the same generator, but replicate by replicate (bootstrap)
or in blocks of trials (randomization), so that memory is O(N x width) for the statistics plus one
replicate's indices or one block's coins, never B x N:

- ``choice(N, size=(B, N))`` fills its output row after row from the same stream, so B calls of
  ``choice(N, size=N)`` give the same rows (``tests/test_numpy_resampling.py`` checks it);
- ``integers(2, dtype=bool)`` takes its coins 32 at a time from one 32-bit draw and drops the
  unused ones at the end of a call, so a block of trials is the same as sacrebleu's rows only when
  it holds a multiple of 32 coins: :func:`trial_block` picks such blocks.

Per metric, :func:`segment_statistics` gives sacrebleu's per-segment statistics from beambleu's
(the same columns for BLEU and chrF; for TER the edits and the average reference length, which
sacrebleu holds as a float), and :func:`replicate_score` / :func:`trial_score` score a sum with the
arithmetic and the numpy scalar types sacrebleu's ``_compute_score_from_stats`` sees, so that the
replicate scores, their mean and the p-values are sacrebleu's, bit for bit.
"""

from __future__ import annotations

import math
from typing import List, Optional, Sequence, Tuple

import numpy as np

#: the two ways ``beambleu score`` and ``bleu_core.compat`` draw resamples
SACREBLEU, COUNTER = "sacrebleu", "counter"
METHODS = (SACREBLEU, COUNTER)
#: most coins drawn at once by the randomization test (then rounded to a multiple of 32 per block)
BLOCK_COINS = 1 << 22


def _kind(metric) -> str:
    from .bleu import Bleu
    from .chrf import Chrf
    from .ter import Ter

    for cls, name in ((Bleu, "bleu"), (Chrf, "chrf"), (Ter, "ter")):
        if isinstance(metric, cls):
            return name
    return "other"


def segment_statistics(metric, rows: np.ndarray) -> np.ndarray:
    """sacrebleu's per-segment statistics of beambleu's ``int64[n, width]`` rows: the rows
    themselves for BLEU and chrF (the same columns in the same order), ``float64[n, 2]`` for TER
    (the edits, and the average reference length ``S_k / k`` of a segment with k references, as
    sacrebleu divides it). A metric sacrebleu does not have keeps its rows."""
    rows = np.asarray(rows, dtype=np.int64)
    if _kind(metric) != "ter":
        return rows
    from .ter import EDIT_NAMES

    lengths = rows[:, len(EDIT_NAMES):]
    avg = np.zeros(len(rows), dtype=np.float64)
    for k in range(lengths.shape[1]):  # one k is non-zero per segment: the sum adds x / k to zeros
        avg += lengths[:, k] / (k + 1)
    return np.column_stack([rows[:, 0].astype(np.float64), avg])


def _ter_rate(edits, ref_length):
    if ref_length > 0:
        rate = edits / ref_length
    elif edits > 0:
        rate = 1.0
    else:
        rate = 0.0
    return 100 * rate


def replicate_score(metric, sums: np.ndarray):
    """The score of one bootstrap replicate's float32 sums, computed on numpy float32 scalars
    as sacrebleu computes it (its result is then a numpy float32 for chrF and TER, a float for
    BLEU, as in sacrebleu)."""
    kind = _kind(metric)
    if kind == "bleu":
        from .bleu_score import bleu_of_checked

        # the lengths become ints, the n-gram counts stay float32 scalars (sacrebleu's types)
        values = [int(sums[0]), int(sums[1])] + list(sums[2:])
        return bleu_of_checked(values, metric.max_ngram_order, metric.smooth_method, metric.smooth_value,
                               metric.effective_order, metric.weights, None).score
    if kind == "chrf":
        return metric._f_score(list(sums))
    if kind == "ter":
        return _ter_rate(sums[0], sums[1])
    return metric.score(np.rint(sums).astype(np.int64)).score


def trial_score(metric, sums: np.ndarray):
    """The score of one randomization trial's pseudo-system (exact int64 sums; float64 for
    TER), as sacrebleu scores it."""
    if _kind(metric) == "ter":
        return _ter_rate(sums[0], sums[1])
    return metric.score(sums).score


def bootstrap_scores(metrics: Sequence, stats: Sequence[np.ndarray], n: int, seed) -> List[list]:
    """Per metric, the scores of ``n`` bootstrap replicates of one system (``stats[m]``: metric
    m's :func:`segment_statistics`), drawn as sacrebleu draws them from ``default_rng(seed)``
    (None: fresh entropy; a Generator: continue its stream); every metric sees the same
    replicates, as every sacrebleu metric draws from a generator of the same seed."""
    rng = np.random.default_rng(seed)
    held = [np.asarray(s, dtype=np.float32) for s in stats]
    n_rows = len(held[0])
    out: List[list] = [[] for _ in metrics]
    for _ in range(n):
        idx = rng.choice(n_rows, size=n_rows, replace=True)
        for m, metric in enumerate(metrics):
            out[m].append(replicate_score(metric, held[m][idx].sum(0)))
    return out


def paired_bootstrap_scores(metrics: Sequence, base: Sequence[np.ndarray], system: Sequence[np.ndarray], n: int,
                            seed: Optional[int]) -> List[Tuple[np.ndarray, np.ndarray]]:
    """Per metric, (the baseline's, the system's) replicate scores on the same ``n`` replicates,
    as sacrebleu's paired bootstrap draws them for one system."""
    both = bootstrap_scores(list(metrics) * 2, list(base) + list(system), n, seed)
    k = len(metrics)
    return [(np.array(both[m]), np.array(both[k + m])) for m in range(k)]


def trial_block(n_rows: int, n_trials: int) -> int:
    """Trials per block of coins: a multiple of 32 coins (so that blocks continue sacrebleu's
    stream), about :data:`BLOCK_COINS` of them, at least one step."""
    step = 32 // math.gcd(max(n_rows, 1), 32)
    return min(n_trials, step * max(1, BLOCK_COINS // (step * max(n_rows, 1))))


def randomization_differences(metrics: Sequence, base: Sequence[np.ndarray], system: Sequence[np.ndarray],
                              n: int, seed) -> List[np.ndarray]:
    """Per metric, |score(A_t) - score(B_t)| of the ``n`` trials of sacrebleu's paired approximate
    randomization test of one system: A_t takes the baseline's statistics where the trial's coin
    is set, the system's elsewhere, B_t the opposite (the same products sacrebleu computes, on a
    block of trials at a time). ``seed`` as in :func:`bootstrap_scores`: a Generator is left where
    sacrebleu's is after its coins (its ``ar`` test's intervals draw from there)."""
    rng = np.random.default_rng(seed)
    n_rows = len(base[0])
    block = trial_block(n_rows, n)
    diffs: List[list] = [[] for _ in metrics]
    done = 0
    while done < n:
        t = min(block, n - done)
        pos = rng.integers(2, size=(t, n_rows), dtype=bool)
        neg = ~pos
        for m, metric in enumerate(metrics):
            a = pos @ base[m] + neg @ system[m]
            b = neg @ base[m] + pos @ system[m]
            diffs[m].extend(abs(trial_score(metric, x) - trial_score(metric, y)) for x, y in zip(a, b))
        done += t
    return [np.array(d) for d in diffs]


def p_value(differences: np.ndarray, observed: float) -> float:
    """sacrebleu's p-value: (c + 1) / (n + 1), c counting the differences strictly above the
    observed one (a system equal to the baseline gets 1 / (n + 1))."""
    c = np.sum(differences > observed).item()
    return (c + 1) / (len(differences) + 1)


def paired_bootstrap_p_value(base_scores: np.ndarray, sys_scores: np.ndarray, observed: float) -> float:
    """The paired bootstrap's p-value: the replicates' |differences| centred on their mean
    against the observed |difference|."""
    sample = np.abs(sys_scores - base_scores)
    return p_value(sample - sample.mean(), observed)


def numpy_interval(scores) -> Tuple[float, float]:
    """(mean, half-width) of replicate scores as the paired tests estimate them: numpy's sort
    and mean, the 95% percentile bounds at n // 40 and n - n // 40 - 1."""
    s = np.sort(np.asarray(scores))
    lo = len(s) // 40
    return s.mean(), 0.5 * (s[len(s) - lo - 1] - s[lo])


def bootstrap_seed(label, seed: int) -> Optional[int]:
    """The generator seed of sacrebleu's confidence intervals: None for ``none``."""
    return None if str(label).lower() == "none" else seed


def paired_seed(label, seed: int) -> Optional[int]:
    """The generator seed of sacrebleu's paired tests: None for ``none`` and for 0 (sacrebleu
    draws fresh entropy for a seed of 0 there)."""
    return None if str(label).lower() == "none" or not seed else seed

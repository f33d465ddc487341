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
  ``choice(N, size=N)`` give the same rows (``tests/bleu_core/resampling/test_sacrebleu_resampling.py`` checks it);
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

__all__ = ["BLOCK_COINS", "CHUNK_CELLS", "COUNTER", "F32_EXACT", "METHODS", "SACREBLEU", "bootstrap_scores",
           "bootstrap_seed", "numpy_interval", "p_value", "paired_samples", "paired_seed", "randomization_differences",
           "replicate_score", "replicate_scores", "segment_statistics", "trial_block", "trial_score", "trial_scores"]

#: the two ways ``beambleu score`` and ``bleu_core.compat`` draw resamples
SACREBLEU, COUNTER = "sacrebleu", "counter"
METHODS = (SACREBLEU, COUNTER)
#: most coins drawn at once by the randomization test (then rounded to a multiple of 32 per block)
BLOCK_COINS = 1 << 22


def segment_statistics(metric, rows: np.ndarray) -> np.ndarray:
    """sacrebleu's per-segment statistics of beambleu's ``int64[n, width]`` rows (each metric's
    :meth:`~bleu_core.protocol.Metric.sacrebleu_arithmetic` knows how sacrebleu holds them)."""
    return metric.sacrebleu_arithmetic().segment_statistics(rows)


def replicate_score(metric, sums: np.ndarray):
    """The score of one bootstrap replicate's float32 sums, as sacrebleu computes it."""
    return metric.sacrebleu_arithmetic().replicate_score(sums)


def trial_score(metric, sums: np.ndarray):
    """The score of one randomization trial's pseudo-system (exact sums), as sacrebleu scores it."""
    return metric.sacrebleu_arithmetic().trial_score(sums)


def replicate_scores(metric, sums: np.ndarray) -> list:
    """:func:`replicate_score` of every row of ``float32[n, width]`` sums (vectorised where the
    metric's arithmetic can, value for value and type for type the same)."""
    return metric.sacrebleu_arithmetic().replicate_scores(np.asarray(sums, dtype=np.float32))


def trial_scores(metric, sums: np.ndarray) -> list:
    """:func:`trial_score` of every row of exact sums (int64, or float64 for TER)."""
    return metric.sacrebleu_arithmetic().trial_scores(np.asarray(sums))


#: most cells of the replicate-by-segment multiplicity matrix held at once by the bootstrap
CHUNK_CELLS = 1 << 21
#: float32 holds every integer up to 2**24 exactly
F32_EXACT = float(2**24)


def _integral(held: np.ndarray) -> bool:
    """Whether float32 statistics are all non-negative integers: then a replicate's sums are exact
    integers, in any order, while they stay within :data:`F32_EXACT` (each partial sum is at most
    the total)."""
    return bool(held.size == 0 or (held.min() >= 0 and np.all(held == np.rint(held))))


def _multiplicities(idx: np.ndarray, n_rows: int) -> np.ndarray:
    """``float64[b, n_rows]``: how often each replicate (a row of ``idx``) draws each segment."""
    b = len(idx)
    flat = (np.arange(b, dtype=np.int64)[:, None] * n_rows + idx).ravel()
    return np.bincount(flat, minlength=b * n_rows).reshape(b, n_rows).astype(np.float64)


def _replicate_sums(held: np.ndarray, exact: bool, idx: np.ndarray, counts) -> np.ndarray:
    """sacrebleu's ``held[i].sum(0)`` (float32, row after row) of every index row ``i`` of ``idx``:
    as the product of the multiplicities with the statistics when that is exact, else (and for any
    replicate whose sums leave float32's exact integers) by sacrebleu's own sum."""
    if not exact:
        return np.stack([held[i].sum(0) for i in idx]) if len(idx) else np.zeros((0, held.shape[1]), np.float32)
    sums = counts @ held.astype(np.float64)
    big = np.flatnonzero((sums > F32_EXACT).any(axis=1)) if sums.size else []
    sums = sums.astype(np.float32)
    for r in big:
        sums[r] = held[idx[r]].sum(0)
    return sums


def bootstrap_scores(metrics: Sequence, stats: Sequence[np.ndarray], n: int, seed) -> List[list]:
    """Per metric, the scores of ``n`` bootstrap replicates of one system (``stats[m]``: metric
    m's :func:`segment_statistics`), drawn as sacrebleu draws them from ``default_rng(seed)``
    (None: fresh entropy; a Generator: continue its stream); every metric sees the same
    replicates, as every sacrebleu metric draws from a generator of the same seed. The replicates
    are drawn in chunks of :data:`CHUNK_CELLS` indices, summed as sacrebleu sums them and scored
    by :func:`replicate_scores`."""
    return _bootstrap(metrics, [stats], n, np.random.default_rng(seed))[0]


def _bootstrap(metrics: Sequence, systems: Sequence[Sequence[np.ndarray]], n: int, rng) -> List[List[list]]:
    held = [[np.asarray(s, dtype=np.float32) for s in stats] for stats in systems]
    exact = [[_integral(h) for h in per] for per in held]
    n_rows = len(held[0][0])
    chunk = max(1, min(n, CHUNK_CELLS // max(n_rows, 1)))
    out: List[List[list]] = [[[] for _ in metrics] for _ in systems]
    done = 0
    while done < n:
        b = min(chunk, n - done)
        idx = np.stack([rng.choice(n_rows, size=n_rows, replace=True) for _ in range(b)])
        counts = _multiplicities(idx, n_rows) if any(map(any, exact)) else None
        for k in range(len(systems)):
            for m, metric in enumerate(metrics):
                out[k][m].extend(replicate_scores(metric, _replicate_sums(held[k][m], exact[k][m], idx, counts)))
        done += b
    return out


def trial_block(n_rows: int, n_trials: int) -> int:
    """Trials per block of coins: a multiple of 32 coins (so that blocks continue sacrebleu's
    stream), about :data:`BLOCK_COINS` of them, at least one step."""
    step = 32 // math.gcd(max(n_rows, 1), 32)
    return min(n_trials, step * max(1, BLOCK_COINS // (step * max(n_rows, 1))))


def _exact_in_float64(*stats: np.ndarray) -> bool:
    return all(s.size == 0 or np.abs(s).sum(0).max() < 2**52 for s in stats)


def _randomization(metrics: Sequence, base: Sequence[np.ndarray], systems: Sequence[Sequence[np.ndarray]], n: int,
                   rng) -> List[List[np.ndarray]]:
    """Per system, per metric, |score(A_t) - score(B_t)| of ``n`` trials whose coins all systems
    share, drawn from ``rng`` a block at a time (left after the coins). A_t takes the baseline's
    statistics where the trial's coin is set, the system's elsewhere, B_t the opposite. sacrebleu
    computes them as ``pos @ base + ~pos @ system`` and the opposite; for integer statistics the
    same exact sums come from one float64 product per block for every system and metric,
    ``A = sum(system) + coins @ (base - system)``, ``B = sum(base) - coins @ (base - system)``
    (exact while the sums stay below 2**52); fractional statistics (TER's average lengths) keep
    sacrebleu's products."""
    n_rows = len(base[0])
    block = trial_block(n_rows, n)
    ints = [base[i].dtype.kind in "iu" and _exact_in_float64(base[i], *(s[i] for s in systems))
            for i in range(len(metrics))]
    columns, at, width = [], {}, 0
    for k, system in enumerate(systems):
        for m in range(len(metrics)):
            if ints[m]:
                at[k, m] = slice(width, width + base[m].shape[1])
                width += base[m].shape[1]
                columns.append((base[m] - system[m]).astype(np.float64))
    differences = np.hstack(columns) if columns else None
    base_totals = [b.sum(0).astype(np.float64) for b in base]
    totals = [[s.sum(0).astype(np.float64) for s in system] for system in systems]
    diffs = [[[] for _ in metrics] for _ in systems]
    done = 0
    while done < n:
        t = min(block, n - done)
        pos = rng.integers(2, size=(t, n_rows), dtype=bool)
        neg = None if all(ints) else ~pos
        product = pos.astype(np.float64) @ differences if differences is not None else None
        for k, system in enumerate(systems):
            for m, metric in enumerate(metrics):
                if ints[m]:
                    p = product[:, at[k, m]]
                    a, b = totals[k][m] + p, base_totals[m] - p
                else:
                    a, b = pos @ base[m] + neg @ system[m], neg @ base[m] + pos @ system[m]
                diffs[k][m].append(np.abs(np.array(trial_scores(metric, a)) - np.array(trial_scores(metric, b))))
        done += t
    return [[np.concatenate(d) if d else np.zeros(0) for d in per] for per in diffs]


def randomization_differences(metrics: Sequence, base: Sequence[np.ndarray], system: Sequence[np.ndarray],
                              n: int, seed) -> List[np.ndarray]:
    """Per metric, |score(A_t) - score(B_t)| of the ``n`` trials of sacrebleu's paired approximate
    randomization test of one system (see :func:`_randomization`). ``seed`` as in
    :func:`bootstrap_scores`: a Generator is left where sacrebleu's is after its coins (its ``ar``
    test's intervals draw from there)."""
    return _randomization(metrics, base, [system], n, np.random.default_rng(seed))[0]


def _fixed(seed) -> bool:
    return seed is not None and not isinstance(seed, np.random.Generator)


def paired_samples(metrics: Sequence, base: Sequence[np.ndarray], systems: Sequence[Sequence[np.ndarray]],
                   test: str, n: int, seed, n_confidence: int = 0) -> Tuple[Optional[List[list]], List[List[tuple]]]:
    """sacrebleu's paired test (``test``: ``"bs"`` or ``"ar"``, ``n`` replicates or trials) of
    every system against the baseline, with its draws: (the baseline's replicate scores per
    metric when every system shared them, else None; per system, per metric, (the sample whose
    values above the observed |difference| :func:`p_value` counts, the system's replicate scores
    for its interval or None)).

    - ``bs``: the baseline's and the system's scores on the same replicates; the sample is their
      |differences| centred on their mean, the interval the system's replicates'.
    - ``ar``: the trials' |differences|; with ``n_confidence`` > 0 the interval is a bootstrap of
      the system drawn from the same generator after the coins.

    sacrebleu seeds a generator of its own for every system: with a fixed seed every system
    sees the same replicates or coins, so they are drawn once for all; with None (fresh entropy)
    each system draws its own."""
    if _fixed(seed):
        return _paired(metrics, base, systems, test, n, np.random.default_rng(seed), n_confidence)
    return None, [_paired(metrics, base, [system], test, n, np.random.default_rng(seed), n_confidence)[1][0]
                  for system in systems]


def _paired(metrics, base, systems, test: str, n: int, rng, n_confidence: int):
    if test == "bs":
        drawn = _bootstrap(metrics, [base, *systems], n, rng)
        out = []
        for own in drawn[1:]:
            per = []
            for b, o in zip(drawn[0], own):
                o = np.array(o)
                sample = np.abs(o - np.array(b))
                per.append((sample - sample.mean(), o))
            out.append(per)
        return drawn[0], out
    diffs = _randomization(metrics, base, systems, n, rng)
    conf = _bootstrap(metrics, systems, n_confidence, rng) if n_confidence > 0 else None
    return None, [[(d, None if conf is None else np.array(conf[k][m])) for m, d in enumerate(per)]
                  for k, per in enumerate(diffs)]


def p_value(differences: np.ndarray, observed: float) -> float:
    """sacrebleu's p-value: (c + 1) / (n + 1), c counting the differences strictly above the
    observed one (a system equal to the baseline gets 1 / (n + 1))."""
    c = np.sum(differences > observed).item()
    return (c + 1) / (len(differences) + 1)


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

"""sacrebleu's resampling, draw for draw, without its B x N memory.

sacrebleu 2.6.0 resamples with ``numpy.random.default_rng(seed)``: a bootstrap replicate is an
index vector from ``Generator.choice(N, N)`` (all B at once), the segments' statistics are held
as float32 and a replicate's statistics are the float32 column sums of the indexed rows; a paired
approximate randomization trial is a row of ``Generator.integers(2, dtype=bool)`` coins (all T x N
at once), the pseudo-systems' statistics the matrix products of the coins with each system's
statistics. Its p-values count the resampled differences strictly greater than the observed one.

This module draws the same numbers from the same generator, but in chunks of replicates
(bootstrap) or in blocks of trials (randomization), so that memory is O(N x width) for the
statistics plus one chunk's indices or one block's coins, never B x N; the draws of every system
of a paired test are made once and summed by one matrix product per chunk or block:

- ``choice(N, size=(B, N))`` fills its output row after row from the same stream, so chunks of
  rows, or B calls of ``choice(N, size=N)``, give the same rows
  (``tests/bleu_core/resampling/test_sacrebleu_resampling.py`` checks it);
- ``integers(2, dtype=bool)`` takes its coins 32 at a time from one 32-bit draw and drops the
  unused ones at the end of a call, so a block of trials is the same as sacrebleu's rows only when
  it holds a multiple of 32 coins: :func:`trial_block` picks such blocks.

Per metric, :func:`segment_statistics` gives sacrebleu's per-segment statistics from beambleu's
(the same columns for BLEU and chrF; for TER the edits and the average reference length, which
sacrebleu holds as a float), and :func:`replicate_score` / :func:`trial_score` score a sum with the
arithmetic and the numpy scalar types sacrebleu's ``_compute_score_from_stats`` sees, so that the
replicate scores, their mean and the p-values are sacrebleu's, bit for bit.

:func:`exact_scores` scores exact integer totals (beambleu's counter bootstrap and randomization
trials, the per-item bootstrap of :mod:`bleu_core.items`) as the metric's own ``score`` does, row
for row, many at once through the same vectorised arithmetic.
"""

from __future__ import annotations

import math

from .seeds import COUNTER, METHODS, SACREBLEU  # the two ways `score` and compat draw resamples (numpy-free)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (start-up)
if TYPE_CHECKING:  # numpy is imported by the functions that draw and score (off `score`'s plain path)
    from typing import List, Optional, Sequence, Tuple

    import numpy as np

__all__ = ["BLOCK_COINS", "CHUNK_CELLS", "COUNTER", "F32_EXACT", "METHODS", "SACREBLEU", "bootstrap_scores",
           "bootstrap_seed", "exact_scores", "numpy_interval", "p_value", "paired_samples", "paired_seed",
           "randomization_differences", "replicate_score", "replicate_scores", "segment_statistics", "trial_block",
           "trial_score", "trial_scores"]

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
    import numpy as np

    return metric.sacrebleu_arithmetic().replicate_scores(np.asarray(sums, dtype=np.float32))


def trial_scores(metric, sums: np.ndarray) -> list:
    """:func:`trial_score` of every row of exact sums (int64, or float64 for TER)."""
    import numpy as np

    return metric.sacrebleu_arithmetic().trial_scores(np.asarray(sums))


def exact_scores(metric, totals) -> np.ndarray:
    """``float64[n]``: ``metric.score(row).score`` of every row of exact integer ``totals``
    (``int64[n, width]`` in the metric's own columns: the replicate totals of beambleu's counter
    bootstrap, a randomization trial's pseudo-systems, :func:`bleu_core.items.bootstrap`'s resamples),
    equal to it row for row. A built-in metric's arithmetic scores them many at once (its
    ``exact_scores``, the exact-sum forms of sacrebleu's arithmetic); any other metric (a plugin's)
    is scored row by row."""
    import numpy as np

    totals = np.asarray(totals, dtype=np.int64)
    if len(totals) == 0:
        return np.zeros(0, dtype=np.float64)
    arithmetic = getattr(metric, "sacrebleu_arithmetic", None)  # a duck-typed metric may have none
    vectorised = None if arithmetic is None else getattr(arithmetic(), "exact_scores", None)
    if vectorised is not None:
        return vectorised(totals)
    return np.array([metric.score(row).score for row in totals], dtype=np.float64)


#: most cells of the replicate-by-segment multiplicity matrix held at once by the bootstrap
CHUNK_CELLS = 1 << 21
#: float32 holds every integer up to 2**24 exactly
F32_EXACT = float(2**24)
#: most cells of the integer counts made at once for the multiplicities (fresh memory costs more than the calls)
MULTIPLICITY_CELLS = 1 << 16


def _integral(held: np.ndarray) -> bool:
    """Whether float32 statistics are all non-negative integers: then a replicate's sums are exact
    integers, in any order, while they stay within :data:`F32_EXACT` (each partial sum is at most
    the total)."""
    import numpy as np

    return bool(held.size == 0 or (held.min() >= 0 and np.all(held == np.rint(held))))


def _multiplicities(idx: np.ndarray, n_rows: int) -> np.ndarray:
    """``float32[b, n_rows]`` (float64 past :data:`F32_EXACT` rows, where a count might not be a
    float32 integer): how often each replicate (a row of ``idx``) draws each segment."""
    import numpy as np

    counts = np.empty((len(idx), n_rows), dtype=np.float32 if n_rows <= F32_EXACT else np.float64)
    step = max(1, MULTIPLICITY_CELLS // max(n_rows, 1))
    for first in range(0, len(idx), step):  # a few replicates at a time: small integer temporaries
        part = idx[first:first + step]
        flat = (np.arange(len(part), dtype=np.int64)[:, None] * n_rows + part).ravel()
        counts[first:first + len(part)] = np.bincount(flat, minlength=len(part) * n_rows).reshape(len(part), n_rows)
    return counts


def _replicate_sums(held: np.ndarray, exact: bool, idx: np.ndarray, counts, product=None) -> np.ndarray:
    """sacrebleu's ``held[i].sum(0)`` (float32, row after row) of every index row ``i`` of ``idx``:
    as the product of the multiplicities with the statistics (``product``, when a wider product
    has it already) when that is exact, else (and for any replicate whose sums reach float32's
    last exact integer) by sacrebleu's own sum. The product of float32 multiplicities and integer
    statistics is computed in float32 and is exact below 2**24: every term and partial sum is a
    non-negative integer no greater than the total, and a total at or past 2**24 rounds to at
    least 2**24 (rounding is monotonic and 2**24 is a float32), which sends its replicate to
    sacrebleu's sum."""
    import numpy as np

    if not exact:
        return np.stack([held[i].sum(0) for i in idx]) if len(idx) else np.zeros((0, held.shape[1]), np.float32)
    if product is None:
        product = counts @ held.astype(counts.dtype)
    big = np.flatnonzero((product >= F32_EXACT).any(axis=1)) if product.size else []
    sums = product.astype(np.float32)
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
    import numpy as np

    return _bootstrap(metrics, [stats], n, np.random.default_rng(seed))[0]


def _side_by_side(blocks: Sequence[np.ndarray], dtype):
    """(the matrices ``blocks`` side by side as one ``dtype`` matrix, or None when there are none;
    each one's columns in it)."""
    import numpy as np

    at, width = [], 0
    for block in blocks:
        at.append(slice(width, width + block.shape[1]))
        width += block.shape[1]
    return (np.hstack([b.astype(dtype) for b in blocks]) if blocks else None), at


def _scores_of_many(score, metric, sums: Sequence[np.ndarray]) -> List[list]:
    """``score(metric, s)`` of every matrix of sums in ``sums`` (rows are scored one by one, so one
    call on all of them at once gives the same values and types)."""
    import numpy as np

    every = score(metric, np.concatenate(sums)) if len(sums) > 1 else score(metric, sums[0])
    out, at = [], 0
    for s in sums:
        out.append(every[at:at + len(s)])
        at += len(s)
    return out


def _bootstrap(metrics: Sequence, systems: Sequence[Sequence[np.ndarray]], n: int, rng) -> List[List[list]]:
    import numpy as np

    held = [[np.asarray(s, dtype=np.float32) for s in stats] for stats in systems]
    exact = [[_integral(h) for h in per] for per in held]
    n_rows = len(held[0][0])
    chunk = max(1, min(n, CHUNK_CELLS // max(n_rows, 1)))
    # every system's and metric's integer statistics side by side: one product per chunk for all
    parts = [(k, m) for k in range(len(systems)) for m in range(len(metrics)) if exact[k][m]]
    dtype = np.float32 if n_rows <= F32_EXACT else np.float64
    wide, at = _side_by_side([held[k][m] for k, m in parts], dtype)
    columns = dict(zip(parts, at))
    out: List[List[list]] = [[[] for _ in metrics] for _ in systems]
    done = 0
    while done < n:
        b = min(chunk, n - done)
        # one call draws the rows b calls of choice(N, size=N) draw (tests/bleu_core/resampling checks it)
        idx = rng.choice(n_rows, size=(b, n_rows), replace=True)
        counts = _multiplicities(idx, n_rows) if parts else None
        product = counts @ wide if parts else None
        for m, metric in enumerate(metrics):
            sums = [_replicate_sums(held[k][m], exact[k][m], idx, counts,
                                    product[:, columns[k, m]] if exact[k][m] else None)
                    for k in range(len(systems))]
            for k, scores in enumerate(_scores_of_many(replicate_scores, metric, sums)):
                out[k][m].extend(scores)
        done += b
    return out


def trial_block(n_rows: int, n_trials: int) -> int:
    """Trials per block of coins: a multiple of 32 coins (so that blocks continue sacrebleu's
    stream), about :data:`BLOCK_COINS` of them, at least one step."""
    step = 32 // math.gcd(max(n_rows, 1), 32)
    return min(n_trials, step * max(1, BLOCK_COINS // (step * max(n_rows, 1))))


def _exact_in_float64(*stats: np.ndarray) -> bool:
    import numpy as np

    return all(s.size == 0 or np.abs(s).sum(0).max() < 2**52 for s in stats)


def _randomization(metrics: Sequence, base: Sequence[np.ndarray], systems: Sequence[Sequence[np.ndarray]], n: int,
                   rng) -> List[List[np.ndarray]]:
    """Per system, per metric, |score(A_t) - score(B_t)| of ``n`` trials whose coins all systems
    share, drawn from ``rng`` a block at a time (left after the coins). A_t takes the baseline's
    statistics where the trial's coin is set, the system's elsewhere, B_t the opposite. sacrebleu
    computes them as ``pos @ base + ~pos @ system`` and the opposite; for integer statistics the
    same exact sums come from one product per block for every system and metric,
    ``A = sum(system) + coins @ (base - system)``, ``B = sum(base) - coins @ (base - system)``
    (exact while the sums stay below 2**52; the product is float32 when the absolute differences
    of every column add up to less than 2**24, so that each of its partial sums is a float32
    integer, else float64); fractional statistics (TER's average lengths) keep sacrebleu's
    products. Each block's pseudo-systems are scored once per metric, every system's at once (a
    row's score depends on that row alone)."""
    import numpy as np

    n_rows = len(base[0])
    block = trial_block(n_rows, n)
    ints = [base[i].dtype.kind in "iu" and _exact_in_float64(base[i], *(s[i] for s in systems))
            for i in range(len(metrics))]
    parts = [(k, m) for k in range(len(systems)) for m in range(len(metrics)) if ints[m]]
    differences = [base[m] - systems[k][m] for k, m in parts]
    small = all(d.size == 0 or np.abs(d).sum(0).max() < F32_EXACT for d in differences)
    dtype = np.float32 if small else np.float64
    wide, at = _side_by_side(differences, dtype)
    columns = dict(zip(parts, at))
    base_totals = [b.sum(0).astype(np.float64) for b in base]
    totals = [[s.sum(0).astype(np.float64) for s in system] for system in systems]
    diffs = [[[] for _ in metrics] for _ in systems]
    coins = np.empty((block, n_rows), dtype=dtype) if parts else None  # one buffer: fresh pages cost
    done = 0
    while done < n:
        t = min(block, n - done)
        pos = rng.integers(2, size=(t, n_rows), dtype=bool)
        neg = None if all(ints) else ~pos
        if parts:
            np.copyto(coins[:t], pos)
            product = coins[:t] @ wide
        for m, metric in enumerate(metrics):
            # A_t and B_t of every system, one after another
            if ints[m]:
                sides = np.empty((2 * len(systems), t, base[m].shape[1]), dtype=np.float64)
                for k in range(len(systems)):
                    p = product[:, columns[k, m]]
                    np.add(totals[k][m], p, out=sides[2 * k])
                    np.subtract(base_totals[m], p, out=sides[2 * k + 1])
            else:
                sides = np.stack([side for system in systems for side in
                                  (pos @ base[m] + neg @ system[m], neg @ base[m] + pos @ system[m])])
            scores = trial_scores(metric, sides.reshape(-1, sides.shape[2]))
            for k in range(len(systems)):
                a, b = scores[2 * k * t:(2 * k + 1) * t], scores[(2 * k + 1) * t:(2 * k + 2) * t]
                diffs[k][m].append(np.abs(np.array(a) - np.array(b)))
        done += t
    return [[np.concatenate(d) if d else np.zeros(0) for d in per] for per in diffs]


def randomization_differences(metrics: Sequence, base: Sequence[np.ndarray], system: Sequence[np.ndarray],
                              n: int, seed) -> List[np.ndarray]:
    """Per metric, |score(A_t) - score(B_t)| of the ``n`` trials of sacrebleu's paired approximate
    randomization test of one system (see :func:`_randomization`). ``seed`` as in
    :func:`bootstrap_scores`: a Generator is left where sacrebleu's is after its coins (its ``ar``
    test's intervals draw from there)."""
    import numpy as np

    return _randomization(metrics, base, [system], n, np.random.default_rng(seed))[0]


def _fixed(seed) -> bool:
    import numpy as np

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
    import numpy as np

    if _fixed(seed):
        return _paired(metrics, base, systems, test, n, np.random.default_rng(seed), n_confidence)
    return None, [_paired(metrics, base, [system], test, n, np.random.default_rng(seed), n_confidence)[1][0]
                  for system in systems]


def _paired(metrics, base, systems, test: str, n: int, rng, n_confidence: int):
    import numpy as np

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
    import numpy as np

    c = np.sum(differences > observed).item()
    return (c + 1) / (len(differences) + 1)


def numpy_interval(scores) -> Tuple[float, float]:
    """(mean, half-width) of replicate scores as the paired tests estimate them: numpy's sort
    and mean, the 95% percentile bounds at n // 40 and n - n // 40 - 1."""
    import numpy as np

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

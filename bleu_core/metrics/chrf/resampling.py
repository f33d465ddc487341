"""chrF under sacrebleu's resampling (:mod:`bleu_core.resampling.sacrebleu`): sacrebleu holds chrF's
per-segment statistics in beambleu's columns and order, and scores a replicate's float32 sums with
its F-beta arithmetic on float32 scalars."""

from __future__ import annotations

import numpy as np

from ...protocol import SacrebleuArithmetic
from .score import f_score

__all__ = ["ChrfArithmetic", "chrf_rows"]


# The score of many sums at once, equal value for value (and type for type) to calling
# :func:`replicate_score` (``float32`` sums) or :func:`trial_score` (exact sums) on each row:
# the rows on the usual path go through numpy with the same operations, in the same order and on
# the same dtypes as the scalar code (numpy's +, -, *, / are IEEE's on arrays as on scalars, and a
# Python number meets a float32 array as it meets a float32 scalar); logarithms, exponentials and
# the sum of the logarithms stay Python's own ``math.log``, ``math.exp`` and ``sum``, mapped over the
# rows; a row off that path (an order with no candidate n-grams, no matches at all, an empty
# reference side, BLEU weights, chrF's eps smoothing) is scored by the scalar function.


def chrf_rows(metric, sums: np.ndarray):
    """(scores in the sums' float dtype, mask of rows left to the scalar function) of chrF sums."""
    n = len(sums)
    if metric.eps_smoothing:
        return np.zeros(n, dtype=sums.dtype), np.ones(n, dtype=bool)
    factor = metric.beta**2
    off = np.zeros(n, dtype=bool)
    sum_prec = sum_rec = 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in range(0, sums.shape[1], 3):
            hyp, ref, match = sums[:, i], sums[:, i + 1], sums[:, i + 2]
            off |= (hyp <= 0) | (ref <= 0)
            sum_prec = sum_prec + match / hyp
            sum_rec = sum_rec + match / ref
        effective = sums.shape[1] // 3
        avg_prec = sum_prec / effective
        avg_rec = sum_rec / effective
        off |= (avg_prec + avg_rec) == 0
        f = (1 + factor) * avg_prec * avg_rec
        f = f / ((factor * avg_prec) + avg_rec)
        return 100 * f, off


class ChrfArithmetic(SacrebleuArithmetic):
    """chrF's statistics as sacrebleu resamples them."""

    def replicate_score(self, sums: np.ndarray):
        return f_score(list(sums), self.metric.beta, self.metric.eps_smoothing)

    def replicate_scores(self, sums: np.ndarray) -> list:
        scores, off = chrf_rows(self.metric, sums)
        return self.fill(list(scores), off, self.replicate_score, sums)

    def trial_scores(self, sums: np.ndarray) -> list:
        if sums.size and max(sums.max(), -sums.min()) >= 2**53:
            return super().trial_scores(sums)
        f64 = np.asarray(sums, dtype=np.float64)
        scores, off = chrf_rows(self.metric, f64)
        return self.fill(scores.tolist(), off, lambda row: self.trial_score(row.astype(np.int64)), f64)

    def exact_scores(self, totals: np.ndarray) -> np.ndarray:
        """``float64[n]``: ``metric.score(row).score`` of every row of exact ``int64`` totals (a
        trial's sums are exact and scored by the metric's own ``score``: :meth:`trial_scores`)."""
        return np.asarray(self.trial_scores(totals), dtype=np.float64)

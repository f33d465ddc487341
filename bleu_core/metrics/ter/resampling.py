"""TER under sacrebleu's resampling (:mod:`bleu_core.resampling.sacrebleu`): sacrebleu holds a
segment's TER statistics as two floats, its edits and its average reference length ``S_k / k``, and
scores sums of them as edits over length."""

from __future__ import annotations

import numpy as np

from ...protocol import SacrebleuArithmetic
from .reference import EDIT_NAMES
from .score import ter_rate

__all__ = ["TerArithmetic", "ter_rows"]


def ter_rows(sums: np.ndarray):
    edits, ref_length = sums[:, 0], sums[:, 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = edits / ref_length
    return 100 * rate, ~(ref_length > 0)


class TerArithmetic(SacrebleuArithmetic):
    """TER's statistics as sacrebleu resamples them."""

    def segment_statistics(self, rows) -> np.ndarray:
        """``float64[n, 2]``: the edits, and the average reference length ``S_k / k`` of a segment
        with k references, as sacrebleu divides it."""
        rows = np.asarray(rows, dtype=np.int64)
        lengths = rows[:, len(EDIT_NAMES):]
        avg = np.zeros(len(rows), dtype=np.float64)
        for k in range(lengths.shape[1]):  # one k is non-zero per segment: the sum adds x / k to zeros
            avg += lengths[:, k] / (k + 1)
        return np.column_stack([rows[:, 0].astype(np.float64), avg])

    def replicate_score(self, sums: np.ndarray):
        return ter_rate(sums[0], sums[1])

    trial_score = replicate_score

    def replicate_scores(self, sums: np.ndarray) -> list:
        scores, off = ter_rows(sums)
        return self.fill(list(scores), off, self.replicate_score, sums)

    def trial_scores(self, sums: np.ndarray) -> list:
        f64 = np.asarray(sums, dtype=np.float64)
        scores, off = ter_rows(f64)
        return self.fill(scores.tolist(), off, self.trial_score, f64)

    def exact_scores(self, totals: np.ndarray) -> np.ndarray:
        """``float64[n]``: ``metric.score(row).score`` of every row of exact ``int64`` totals (beambleu's
        columns: edits, then the reference words summed per reference count). Its reference length is
        the sum of ``S_k / k`` correctly rounded: where one count is present and ``S_k`` is below 2**53,
        that is the float division ``S_k / k``, and the row is sacrebleu's edits over length
        (:meth:`trial_scores`); other rows are scored by the metric one by one."""
        totals = np.asarray(totals, dtype=np.int64)
        lengths = totals[:, len(EDIT_NAMES):]
        present = lengths != 0
        k = np.argmax(present, axis=1) + 1  # the one count present (1 where none is: the length is 0)
        length = lengths[np.arange(len(totals)), k - 1]
        simple = (present.sum(axis=1) <= 1) & (length < 2**53)
        out = np.asarray(self.trial_scores(np.column_stack([totals[:, 0].astype(np.float64), length / k])),
                         dtype=np.float64)
        for i in np.flatnonzero(~simple).tolist():
            out[i] = self.metric.score(totals[i]).score
        return out

"""BLEU under sacrebleu's resampling (:mod:`bleu_core.resampling.sacrebleu`): sacrebleu holds BLEU's
per-segment statistics in beambleu's columns and order, and scores a replicate's float32 sums with
the lengths made ints and the n-gram counts left float32 scalars."""

from __future__ import annotations

import math
import sys

import numpy as np

from ...kernels import use_reference
from ...protocol import SacrebleuArithmetic
from .score import SMOOTH_DEFAULTS, bleu_of_checked

__all__ = ["BleuArithmetic", "bleu_rows"]


# The score of many sums at once, equal value for value (and type for type) to calling
# :func:`replicate_score` (``float32`` sums) or :func:`trial_score` (exact sums) on each row:
# the rows on the usual path go through numpy with the same operations, in the same order and on
# the same dtypes as the scalar code (numpy's +, -, *, / are IEEE's on arrays as on scalars, and a
# Python number meets a float32 array as it meets a float32 scalar); logarithms, exponentials and
# the sum of the logarithms stay Python's own ``math.log``, ``math.exp`` and ``sum``, mapped over the
# rows; a row off that path (an order with no candidate n-grams, no matches at all, an empty
# reference side, BLEU weights, chrF's eps smoothing) is scored by the scalar function.


if sys.version_info < (3, 12):
    def _sum_of_columns(columns: list) -> np.ndarray:
        """Python's ``sum`` of each row of float columns: before 3.12 it adds them one after another
        to 0, as these column adds do."""
        total = np.zeros(len(columns[0]), dtype=np.float64)
        for column in columns:
            total = total + column
        return total
else:
    def _sum_of_columns(columns: list) -> np.ndarray:
        """Python's ``sum`` of each row of float columns (compensated since 3.12)."""
        return np.array(list(map(sum, zip(*(c.tolist() for c in columns)))), dtype=np.float64)


def _my_logs(values: np.ndarray) -> np.ndarray:
    """sacrebleu's ``my_log`` of every value: ``math.log``, and -9999999999 for 0.0 (as the float
    ``sum()`` adds it)."""
    positive = values != 0
    if positive.all():
        return _each(math.log, values)
    logs = np.full(len(values), -9999999999.0)
    logs[positive] = _each(math.log, values[positive])
    return logs


#: the functions :func:`_each` hands to the C library in one call: ``_resample.libm_each``'s kinds
_LIBM = {math.log: 0, math.exp: 1}


def _each(function, values: np.ndarray) -> np.ndarray:
    """``function`` (``math.log``, ``math.exp``) of every float64 value, as Python floats see them:
    the C library's ``log``/``exp`` over the whole array in one call (what ``math.log`` and
    ``math.exp`` return there, bit for bit), else (a value outside their finite domain, where Python
    raises or returns an infinity or a NaN, or under ``BEAMBLEU_KERNELS=python``) Python's function
    mapped over the values."""
    values = np.ascontiguousarray(values, dtype=np.float64)
    kind = _LIBM.get(function)
    if kind is not None and not use_reference():
        from ...resampling import _resample  # the compiled kernel (built with the others)

        out = np.empty(len(values), dtype=np.float64)
        if _resample.libm_each(values, out, kind):
            return out
    return np.fromiter(map(function, memoryview(values)), np.float64, len(values))


def bleu_rows(metric, sums: np.ndarray, f32: bool):
    """(scores as a float64 array, mask of rows left to the scalar function) of BLEU sums."""
    order = metric.max_ngram_order
    n = len(sums)
    lengths = np.trunc(sums[:, :2].astype(np.float64))  # int() of the lengths (exact for float32)
    sys_len, ref_len = lengths[:, 0], lengths[:, 1]
    correct = [sums[:, 2 + i] for i in range(order)]
    total = [sums[:, 2 + order + i] for i in range(order)]
    method = metric.smooth_method
    value = metric.smooth_value if metric.smooth_value is not None else SMOOTH_DEFAULTS[method]
    off = np.zeros(n, dtype=bool) if metric.weights is None else np.ones(n, dtype=bool)
    off |= ~np.any(np.stack(correct) != 0, axis=0)  # the early stop: the scalar code returns 0.0
    precisions = []
    mteval = np.ones(n, dtype=np.float64)
    for i in range(order):
        c, t = correct[i], total[i]
        if method == "add-k" and i > 0:
            c = c + value
            t = t + value
        off |= t == 0  # a break: the effective order, left to the scalar code
        zero = c == 0
        with np.errstate(divide="ignore", invalid="ignore"):
            p = 100.0 * c / t
            if method == "exp":
                mteval = np.where(zero, mteval * 2, mteval)
                m = mteval.astype(np.float32) if f32 else mteval
                p = np.where(zero, 100.0 / (m * t), p)
            elif method == "floor":
                p = np.where(zero, 100.0 * value / t, p)
            else:
                p = np.where(zero, 0.0, p)
        precisions.append(np.asarray(p, dtype=np.float64))
    on = np.flatnonzero(~off)
    scores = np.zeros(n, dtype=np.float64)
    if len(on):
        everywhere = len(on) == n
        total_log = _sum_of_columns([_my_logs(pr if everywhere else pr[on]) for pr in precisions])
        exps = _each(math.exp, total_log / order)
        s, r = sys_len[on], ref_len[on]
        bp = np.ones(len(on), dtype=np.float64)
        short = np.flatnonzero(s < r)
        if len(short):
            # math.exp(1 - r / s) where the candidate side has words, 0.0 where it has none
            s_short = s[short]
            words = s_short > 0
            bp_short = np.zeros(len(short), dtype=np.float64)
            bp_short[words] = _each(math.exp, 1 - r[short][words] / s_short[words])
            bp[short] = bp_short
        scores[on] = bp * exps
    return scores, off


class BleuArithmetic(SacrebleuArithmetic):
    """BLEU's statistics as sacrebleu resamples them."""

    def replicate_score(self, sums: np.ndarray):
        m = self.metric
        # the lengths become ints, the n-gram counts stay float32 scalars (sacrebleu's types)
        values = [int(sums[0]), int(sums[1])] + list(sums[2:])
        return bleu_of_checked(values, m.max_ngram_order, m.smooth_method, m.smooth_value, m.effective_order,
                               m.weights, None).score

    def replicate_scores(self, sums: np.ndarray) -> list:
        scores, off = bleu_rows(self.metric, sums, True)
        return self.fill(scores.tolist(), off, self.replicate_score, sums)

    def trial_scores(self, sums: np.ndarray) -> list:
        if sums.size and max(sums.max(), -sums.min()) >= 2**53:
            return super().trial_scores(sums)
        f64 = np.asarray(sums, dtype=np.float64)
        scores, off = bleu_rows(self.metric, f64, False)
        return self.fill(scores.tolist(), off, lambda row: self.trial_score(row.astype(np.int64)), f64)

    def exact_scores(self, totals: np.ndarray) -> np.ndarray:
        """``float64[n]``: ``metric.score(row).score`` of every row of exact ``int64`` totals (a
        trial's sums are exact and scored by the metric's own ``score``: :meth:`trial_scores`)."""
        return np.asarray(self.trial_scores(totals), dtype=np.float64)

"""chrF's score arithmetic, signature and score object: the F-beta of summed statistics, with
sacrebleu 2.6.0's operations in its order, so that scores are bit-identical."""

from __future__ import annotations


from ...protocol import Metric, Score, nrefs_label
from ...records import record
from ...signature import SignatureFields

__all__ = ["EPS", "ChrfScore", "ChrfSignature", "chrf_name", "f_score"]

#: sacrebleu's stand-in for an undefined precision, recall or per-order F-score
EPS = 1e-16


def chrf_name(beta: int, word_order: int) -> str:
    """sacrebleu's score name: ``chrF2``, and one ``+`` per word order (``chrF2++``)."""
    return f"chrF{beta}" + "+" * word_order


def f_score(values: list[int], beta: int, eps_smoothing: bool) -> float:
    """chrF (0-100) of checked statistics (``[hyp, ref, match]`` per order), with sacrebleu's
    arithmetic, operation for operation: see :meth:`~bleu_core.metrics.chrf.Chrf.f_score`."""
    factor = beta**2
    sum_f = 0.0
    sum_prec, sum_rec, effective = 0.0, 0.0, 0
    for i in range(0, len(values), 3):
        hyp, ref, match = values[i : i + 3]
        prec = match / hyp if hyp > 0 else EPS
        rec = match / ref if ref > 0 else EPS
        denom = factor * prec + rec
        sum_f += (1 + factor) * prec * rec / denom if denom > 0 else EPS
        if hyp > 0 and ref > 0:
            sum_prec += prec
            sum_rec += rec
            effective += 1
    if eps_smoothing:
        return 100 * sum_f / (len(values) // 3)
    if effective == 0:
        return 0.0
    avg_prec = sum_prec / effective
    avg_rec = sum_rec / effective
    if not avg_prec + avg_rec:
        return 0.0
    f = (1 + factor) * avg_prec * avg_rec
    f /= (factor * avg_prec) + avg_rec
    return 100 * f


class ChrfSignature(SignatureFields):
    """sacrebleu's chrF signature, field for field, with our version:
    ``nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:beambleu-0.1.0`` (``bs``/``seed``
    after ``nrefs`` when bootstrapping)."""

    def __init__(self, metric: Metric, nrefs, n_bootstrap: int | None = None, seed: int | None = None):
        super().__init__(nrefs_label(nrefs), n_bootstrap, seed, case="lc" if metric.lowercase else "mixed",
                         eff="no" if metric.eps_smoothing else "yes", nc=metric.char_order, nw=metric.word_order,
                         space="yes" if metric.whitespace else "no")

    ABBR = {**SignatureFields.ABBR, "case": "c", "eff": "e", "space": "s"}


@record
class ChrfScore(Score):
    """A chrF score (0-100) and the statistics it came from (``stats``: ``[hyp, ref, match]``
    per order, character orders first)."""

    score: float
    stats: list[int]
    char_order: int
    word_order: int
    beta: int
    signature: str | None = None

    @property
    def name(self) -> str:
        return chrf_name(self.beta, self.word_order)

    @property
    def hyp_counts(self) -> list[int]:
        return list(self.stats[0::3])

    @property
    def ref_counts(self) -> list[int]:
        return list(self.stats[1::3])

    @property
    def matches(self) -> list[int]:
        return list(self.stats[2::3])

    def stat_fields(self) -> dict:
        return dict(hyp_counts=self.hyp_counts, ref_counts=self.ref_counts, matches=self.matches)

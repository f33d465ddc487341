"""TER's signature and score object (sacrebleu's ``TERScore`` fields)."""

from __future__ import annotations


from ...protocol import Metric, Score, nrefs_label
from ...records import record
from ...signature import SignatureFields
from .reference import EDIT_NAMES

__all__ = ["TerScore", "TerSignature", "ter_rate"]


def ter_rate(edits, ref_length):
    """TER (0-100) of summed edits and reference length, as sacrebleu divides them: 100 when the
    references are empty and some edit is needed, 0 when neither has anything."""
    if ref_length > 0:
        rate = edits / ref_length
    elif edits > 0:
        rate = 1.0
    else:
        rate = 0.0
    return 100 * rate


class TerSignature(SignatureFields):
    """sacrebleu's TER signature, field for field, with our version:
    ``nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:beambleu-0.1.0`` (``bs``/``seed``
    after ``nrefs`` when bootstrapping)."""

    def __init__(self, metric: Metric, nrefs, n_bootstrap: int | None = None, seed: int | None = None):
        super().__init__(nrefs_label(nrefs), n_bootstrap, seed, case="mixed" if metric.case_sensitive else "lc",
                         tok="tercom", norm=metric.normalized, punct=not metric.no_punct, asian=metric.asian_support)

    ABBR = {**SignatureFields.ABBR, "case": "c", "tok": "t", "norm": "nr", "punct": "pn", "asian": "as"}


@record
class TerScore(Score):
    """A TER score (0-100, lower is better), the statistics it came from and ``ref_length``, the
    sum of average reference lengths it divided by (sacrebleu's ``TERScore`` fields:
    ``num_edits`` and ``ref_length``)."""

    score: float
    stats: list[int]
    ref_length: float
    signature: str | None = None
    #: how ``ref_length`` was summed: ``"exact"`` (the correctly rounded exact sum of the average
    #: lengths, from the totals: ``beambleu run``, any sharding) or ``"corpus order"`` (sacrebleu's
    #: float additions in corpus order: ``beambleu score``, the compat API, the library's
    #: ``corpus_score``). The two are equal when every pair has a power of two of references (1, 2,
    #: 4, ..., 64), and may differ in the last bits otherwise (and so, rarely, in a printed digit).
    ref_length_sum: str = "exact"

    name = "TER"

    @property
    def num_edits(self) -> int:
        return self.stats[0]

    def stat_fields(self) -> dict:
        edits = dict(zip(EDIT_NAMES, self.stats))
        return dict(num_edits=self.num_edits, ref_length=self.ref_length, ref_length_sum=self.ref_length_sum, **edits,
                    ref_lengths=list(self.stats[len(EDIT_NAMES):]))

"""sacrebleu's ``sacrebleu.metrics.ter``: :class:`TER` and :class:`TERScore`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence

from ...metrics.ter import Ter
from ...sums import column_sums
from .base import Score, _Metric

if TYPE_CHECKING:
    import numpy as np

__all__ = ["TER", "TERScore"]


class TERScore(Score):
    """sacrebleu's TER score: ``score``, ``num_edits`` (an int) and ``ref_length`` (the summed
    average reference lengths, a float)."""

    def __init__(self, score: float, num_edits, ref_length: float):
        super().__init__("TER", score)
        self.num_edits = int(num_edits)
        self.ref_length = ref_length


class TER(_Metric, metric=Ter):
    """sacrebleu's ``TER``: same arguments, defaults, attributes and results; ``references``
    (streams) are kept for calls that pass ``references=None``. Scores of per-segment statistics
    add the segments' average reference lengths as floats in segment order, as sacrebleu does,
    so they are sacrebleu's for any number of references up to TER's bound of 64 per segment
    (:data:`bleu_core.metrics.ter.MAX_REFS`; more is refused with one line)."""

    _reads_row_lists = True

    def __init__(self, normalized: bool = False, no_punct: bool = False, asian_support: bool = False,
                 case_sensitive: bool = False, references: Optional[Sequence[Sequence[Optional[str]]]] = None):
        super().__init__()
        self._metric = Ter(normalized=normalized, no_punct=no_punct, asian_support=asian_support,
                           case_sensitive=case_sensitive)
        if references is not None:
            self._ref_cache = self._cache_references(references)

    def _aggregate_and_compute(self, stats: np.ndarray) -> TERScore:
        import numpy as np

        rows = np.asarray(stats, dtype=np.int64).reshape(-1, self._metric.width)
        return self._score(column_sums(rows), Ter.ordered_ref_length(rows))

    def _compute_score_from_stats(self, stats) -> TERScore:
        import numpy as np

        return self._score(np.asarray(stats, dtype=np.int64), None)

    def _score(self, totals: np.ndarray, ref_length: Optional[float]) -> TERScore:
        core = self._metric.score(totals, ref_length=ref_length)
        return TERScore(core.score, core.num_edits, core.ref_length)


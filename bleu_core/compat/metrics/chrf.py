"""sacrebleu's ``sacrebleu.metrics.chrf``: :class:`CHRF` (chrF and chrF++) and :class:`CHRFScore`."""

from __future__ import annotations

from typing import Optional, Sequence

from ...metrics.chrf import Chrf
from .base import Score, _Metric

__all__ = ["CHRF", "CHRFScore"]


class CHRFScore(Score):
    """sacrebleu's chrF score: ``score``, ``char_order``, ``word_order``, ``beta``; the name is
    ``chrF<beta>`` with one ``+`` per word order."""

    def __init__(self, score: float, char_order: int, word_order: int, beta: int):
        self.beta = beta
        self.char_order = char_order
        self.word_order = word_order
        super().__init__(f"chrF{beta}" + "+" * word_order, score)


class CHRF(_Metric, metric=Chrf):
    """sacrebleu's ``CHRF`` (chrF, and chrF++ with ``word_order=2``): same arguments, defaults,
    attributes and results; ``references`` (streams) are kept for calls that pass
    ``references=None``."""

    CHAR_ORDER = 6
    WORD_ORDER = 0
    BETA = 2
    _PUNCTS = set('!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~')

    def __init__(self, char_order: int = CHAR_ORDER, word_order: int = WORD_ORDER, beta: int = BETA,
                 lowercase: bool = False, whitespace: bool = False, eps_smoothing: bool = False,
                 references: Optional[Sequence[Sequence[Optional[str]]]] = None):
        super().__init__()
        self._metric = Chrf(char_order=char_order, word_order=word_order, beta=beta, lowercase=lowercase,
                            whitespace=whitespace, eps_smoothing=eps_smoothing)
        if references is not None:
            self._ref_cache = self._cache_references(references)

    @property
    def order(self) -> int:
        """Character plus word orders."""
        return self._metric.orders

    _scores_totals = _reads_row_lists = True

    def _compute_score_from_stats(self, stats) -> CHRFScore:
        import numpy as np

        return self._score_totals(np.asarray(stats, dtype=np.int64))

    def _score_totals(self, totals) -> CHRFScore:
        m = self._metric  # (Chrf.score reads an int64 array or Python ints as the same Python ints)
        return CHRFScore(m.score(totals).score, m.char_order, m.word_order, m.beta)


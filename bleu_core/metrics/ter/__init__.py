"""TER, the Translation Edit Rate (Snover et al. 2006), exactly as sacrebleu 2.6.0 computes it:
:class:`Ter`, its score and the ``corpus_ter``/``sentence_ter`` functions (``metric.py`` describes
the definition; ``reference.py`` is its readable one-pair path)."""

from .metric import Ter, corpus_ter, sentence_ter
from .reference import EDIT_NAMES, MAX_REFS, STAT_NAMES, STATS_WIDTH
from .score import TerScore, TerSignature

__all__ = ["EDIT_NAMES", "MAX_REFS", "STAT_NAMES", "STATS_WIDTH", "Ter", "TerScore", "TerSignature", "corpus_ter",
           "sentence_ter"]

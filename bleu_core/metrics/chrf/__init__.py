"""chrF (Popović 2015) and chrF++ (Popović 2017), exactly as sacrebleu 2.6.0 computes them:
:class:`Chrf`, its score and the ``corpus_chrf``/``sentence_chrf`` functions."""

from .metric import MAX_ORDER, Chrf, corpus_chrf, sentence_chrf
from .score import ChrfScore, ChrfSignature

__all__ = ["MAX_ORDER", "Chrf", "ChrfScore", "ChrfSignature", "corpus_chrf", "sentence_chrf"]

"""BLEU (Papineni et al., 2002), exactly as sacrebleu 2.6.0 computes it: :class:`Bleu`, its score,
statistics and the ``corpus_bleu``/``sentence_bleu`` functions."""

from .kernel import batch_stats
from .metric import Bleu, corpus_bleu, sentence_bleu
from .reference import BleuStats
from .score import SMOOTH_METHODS, BleuScore, BleuSignature, compute_bleu

__all__ = ["Bleu", "BleuScore", "BleuSignature", "BleuStats", "SMOOTH_METHODS", "batch_stats", "compute_bleu",
           "corpus_bleu", "sentence_bleu"]

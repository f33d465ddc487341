"""bleu_core: corpus BLEU from sufficient statistics, exactly as sacrebleu 2.6.0 computes it.

No Apache Beam here: ``bleu_core`` is a plain library (numpy + pyarrow + a small C kernel).

>>> from bleu_core import corpus_bleu
>>> round(corpus_bleu(["the cat is on mat"], [["the cat is on the mat"]]).score, 3)
57.893
"""

__version__ = "0.1.0"

from .batch import BatchInputError, batch_stats
from .metric import Bleu, corpus_bleu, sentence_bleu
from .score import SMOOTH_METHODS, BleuScore, Signature, compute_bleu
from .stats import BleuStats
from .tokenizers import DEFAULT_TOKENIZER, TOKENIZERS, get_tokenizer

__all__ = [
    "__version__",
    "Bleu",
    "BleuScore",
    "BleuStats",
    "BatchInputError",
    "Signature",
    "SMOOTH_METHODS",
    "TOKENIZERS",
    "DEFAULT_TOKENIZER",
    "batch_stats",
    "compute_bleu",
    "corpus_bleu",
    "get_tokenizer",
    "sentence_bleu",
]

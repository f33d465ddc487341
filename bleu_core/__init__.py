"""bleu_core: corpus BLEU, chrF, chrF++ and TER from sufficient statistics, exactly as sacrebleu 2.6.0
computes them.

No Apache Beam here: ``bleu_core`` is a plain library (numpy + pyarrow + a small C kernel).

>>> from bleu_core import corpus_bleu
>>> round(corpus_bleu(["the cat is on mat"], [["the cat is on the mat"]]).score, 3)
57.893

``bleu_core.compat`` is sacrebleu 2.6.0's Python API on the same kernels (``BLEU``, ``CHRF``,
``PairedTest``, ``corpus_bleu``, ... with sacrebleu's reference streams); ``BLEU`` and ``CHRF``
are exported here too.
"""

from .compat import BLEU, CHRF
from .errors import BatchInputError, InputError
from .metrics.bleu import Bleu, corpus_bleu, sentence_bleu
from .metrics.bleu.kernel import batch_stats
from .metrics.bleu.reference import BleuStats
from .metrics.bleu.score import SMOOTH_METHODS, BleuScore, BleuSignature, compute_bleu
from .metrics.chrf import Chrf, ChrfScore, corpus_chrf, sentence_chrf
from .metrics.ter import Ter, TerScore, corpus_ter, sentence_ter
from .protocol import Metric, MetricSet, Score
from .tokenizers import DEFAULT_TOKENIZER, TOKENIZERS, get_tokenizer
from .version import __version__

__all__ = [
    "__version__",
    "BLEU",
    "CHRF",
    "Bleu",
    "BleuScore",
    "BleuSignature",
    "BleuStats",
    "BatchInputError",
    "InputError",
    "Chrf",
    "ChrfScore",
    "Metric",
    "MetricSet",
    "Score",
    "corpus_chrf",
    "sentence_chrf",
    "Ter",
    "TerScore",
    "corpus_ter",
    "sentence_ter",
    "SMOOTH_METHODS",
    "TOKENIZERS",
    "DEFAULT_TOKENIZER",
    "batch_stats",
    "compute_bleu",
    "corpus_bleu",
    "get_tokenizer",
    "sentence_bleu",
]

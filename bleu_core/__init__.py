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

from importlib import import_module

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

# The names above are imported on first use (PEP 562), and this package imports none of its modules
# itself: a package whose __init__ imports its children can deadlock Python's import locks when two
# threads import it and one of its modules at once, as Beam's SDK harness does when it unpickles
# DoFns in parallel (thread A holds the child's lock and waits for the package; thread B holds the
# package's and waits for the child). The modules below import each other without circles
# (tests/test_layers.py), so concurrent imports of them cannot deadlock.
_EXPORTS = {
    "BLEU": ".compat",
    "CHRF": ".compat",
    "BatchInputError": ".errors",
    "InputError": ".errors",
    "Bleu": ".metrics.bleu",
    "corpus_bleu": ".metrics.bleu",
    "sentence_bleu": ".metrics.bleu",
    "batch_stats": ".metrics.bleu.kernel",
    "BleuStats": ".metrics.bleu.reference",
    "SMOOTH_METHODS": ".metrics.bleu.score",
    "BleuScore": ".metrics.bleu.score",
    "BleuSignature": ".metrics.bleu.score",
    "compute_bleu": ".metrics.bleu.score",
    "Chrf": ".metrics.chrf",
    "ChrfScore": ".metrics.chrf",
    "corpus_chrf": ".metrics.chrf",
    "sentence_chrf": ".metrics.chrf",
    "Ter": ".metrics.ter",
    "TerScore": ".metrics.ter",
    "corpus_ter": ".metrics.ter",
    "sentence_ter": ".metrics.ter",
    "Metric": ".protocol",
    "MetricSet": ".protocol",
    "Score": ".protocol",
    "DEFAULT_TOKENIZER": ".tokenizers",
    "TOKENIZERS": ".tokenizers",
    "get_tokenizer": ".tokenizers",
    "__version__": ".version",
}


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(_EXPORTS[name], __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))

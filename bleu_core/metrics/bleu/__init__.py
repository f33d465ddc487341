"""BLEU (Papineni et al., 2002), exactly as sacrebleu 2.6.0 computes it: :class:`Bleu`, its score,
statistics and the ``corpus_bleu``/``sentence_bleu`` functions."""

from importlib import import_module

__all__ = ["Bleu", "BleuScore", "BleuSignature", "BleuStats", "SMOOTH_METHODS", "batch_stats", "compute_bleu",
           "corpus_bleu", "sentence_bleu"]

# imported on first use, as bleu_core's own names are (see bleu_core/__init__.py: a package that imports
# its modules in its __init__ can deadlock the import locks of threads importing it at once)
_EXPORTS = {
    "batch_stats": ".kernel",
    "Bleu": ".metric",
    "corpus_bleu": ".metric",
    "sentence_bleu": ".metric",
    "BleuStats": ".reference",
    "SMOOTH_METHODS": ".score",
    "BleuScore": ".score",
    "BleuSignature": ".score",
    "compute_bleu": ".score",
}


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(_EXPORTS[name], __name__), name)
    globals()[name] = value
    return value

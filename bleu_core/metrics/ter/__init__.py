"""TER, the Translation Edit Rate (Snover et al. 2006), exactly as sacrebleu 2.6.0 computes it:
:class:`Ter`, its score and the ``corpus_ter``/``sentence_ter`` functions (``metric.py`` describes
the definition; ``reference.py`` is its readable one-pair path)."""

from importlib import import_module

__all__ = ["EDIT_NAMES", "MAX_REFS", "STAT_NAMES", "STATS_WIDTH", "Ter", "TerScore", "TerSignature", "corpus_ter",
           "sentence_ter"]

# imported on first use, as bleu_core's own names are (see bleu_core/__init__.py: a package that imports
# its modules in its __init__ can deadlock the import locks of threads importing it at once)
_EXPORTS = {
    "Ter": ".metric",
    "corpus_ter": ".metric",
    "sentence_ter": ".metric",
    "EDIT_NAMES": ".reference",
    "MAX_REFS": ".reference",
    "STAT_NAMES": ".reference",
    "STATS_WIDTH": ".reference",
    "TerScore": ".score",
    "TerSignature": ".score",
}


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(_EXPORTS[name], __name__), name)
    globals()[name] = value
    return value

"""chrF (Popović 2015) and chrF++ (Popović 2017), exactly as sacrebleu 2.6.0 computes them:
:class:`Chrf`, its score and the ``corpus_chrf``/``sentence_chrf`` functions."""

from importlib import import_module

__all__ = ["MAX_ORDER", "Chrf", "ChrfScore", "ChrfSignature", "corpus_chrf", "sentence_chrf"]

# imported on first use, as bleu_core's own names are (see bleu_core/__init__.py: a package that imports
# its modules in its __init__ can deadlock the import locks of threads importing it at once)
_EXPORTS = {
    "MAX_ORDER": ".metric",
    "Chrf": ".metric",
    "corpus_chrf": ".metric",
    "sentence_chrf": ".metric",
    "ChrfScore": ".score",
    "ChrfSignature": ".score",
}


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(_EXPORTS[name], __name__), name)
    globals()[name] = value
    return value

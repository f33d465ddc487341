"""beambleu: the Beam pipeline of bleu_core's metrics (no Beam import at package import time).

The component a user's own pipeline embeds is imported on first use: :class:`Score` (pairs ->
typed results), :class:`ReadPairs` and :class:`WriteResults` (see :mod:`beambleu.beam.component`)."""

from importlib import import_module

__all__ = ["ReadPairs", "Score", "ScoreResult", "WriteResults"]

_EXPORTS = {name: ".beam.component" for name in __all__}


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(_EXPORTS[name], __name__), name)
    globals()[name] = value
    return value

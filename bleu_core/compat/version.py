"""``__version__``: beambleu's (sacrebleu's ``sacrebleu.version`` holds its own)."""

from ..version import __version__

__all__ = ["__version__"]

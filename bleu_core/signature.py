"""sacrebleu's reproducibility signatures, shared by every metric."""

from __future__ import annotations

from .version import __version__

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Dict, List, Tuple

__all__ = ["SignatureFields", "parse_signature"]


class SignatureFields:
    """A sacrebleu signature: ``key:value`` fields in sacrebleu's order, ``|``-joined, fields that
    are None left out, the version last. ``format(short=True)`` uses sacrebleu's abbreviations
    (``--short``: ``nrefs`` -> ``#``, ``case`` -> ``c``, ...); :meth:`update` sets a field as
    sacrebleu's ``Signature.update`` does (the paired tests add ``bs``/``ar`` and ``seed``).
    Subclasses give the constructor their own fields (after the global ones) and add their
    abbreviations to :attr:`ABBR`. A signature stays this object until it is
    printed: :meth:`fields` gives what the JSON outputs show of it, never a parse of its text."""

    #: sacrebleu's abbreviations of the fields every metric has
    ABBR = {"version": "v", "nrefs": "#", "bs": "bs", "ar": "ar", "seed": "rs"}

    info: dict

    def __init__(self, nrefs, n_bootstrap=None, seed=None, version: str | None = None, **fields):
        """The global fields first (``nrefs``, as its label: ``"1"``, ``"var"``; ``bs`` and
        ``seed`` when bootstrapping; ``ar``, which the paired test sets), then the metric's
        ``fields`` in order, then ``version`` (beambleu's by default)."""
        if version is None:
            version = f"beambleu-{__version__}"
        self.info = {"nrefs": nrefs, "bs": n_bootstrap, "ar": None, "seed": seed, **fields, "version": version}

    def items(self) -> List[Tuple[str, str]]:
        """The printed fields, in order: (full key, value as printed), the version last."""
        fields = [(k, _text(v)) for k, v in self.info.items() if v is not None and k != "version"]
        fields.append(("version", _text(self.info["version"])))
        return fields

    def fields(self) -> Dict[str, str]:
        """The printed fields as a dict (sacrebleu's JSON keys of a signature)."""
        return dict(self.items())

    def format(self, short: bool = False) -> str:
        return "|".join(f"{self.ABBR.get(k, k) if short else k}:{v}" for k, v in self.items())

    def update(self, key: str, value) -> None:
        self.info[key] = value

    def __str__(self) -> str:
        return self.format()


def parse_signature(text: str) -> Dict[str, str]:
    """The fields of a signature given as text (sacrebleu's ``Score.format(signature=...)`` API,
    or a result file read back): ``{"nrefs": "1", ...}``, in order."""
    fields = {}
    for part in text.split("|"):
        if part:
            key, _, value = part.partition(":")
            fields[key] = value
    return fields


def _text(value) -> str:
    """A field's value as sacrebleu prints it (booleans as yes/no)."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)

"""sacrebleu's reproducibility signatures, shared by every metric."""

from __future__ import annotations


class SignatureFields:
    """A sacrebleu signature: ``key:value`` fields in sacrebleu's order, ``|``-joined, fields that
    are None left out, the version last. ``format(short=True)`` uses sacrebleu's abbreviations
    (``--short``: ``nrefs`` -> ``#``, ``case`` -> ``c``, ...); :meth:`update` sets a field as
    sacrebleu's ``Signature.update`` does (the paired tests add ``bs``/``ar`` and ``seed``).
    Subclasses fill ``info`` (with the global fields ``nrefs``, ``bs``, ``ar``, ``seed`` first)
    and add their own abbreviations to :attr:`ABBR`."""

    #: sacrebleu's abbreviations of the fields every metric has
    ABBR = {"version": "v", "nrefs": "#", "bs": "bs", "ar": "ar", "seed": "rs"}

    info: dict

    def format(self, short: bool = False) -> str:
        fields = [(k, v) for k, v in self.info.items() if v is not None and k != "version"]
        fields.append(("version", self.info["version"]))
        return "|".join(f"{self.ABBR.get(k, k) if short else k}:{_text(v)}" for k, v in fields)

    def update(self, key: str, value) -> None:
        self.info[key] = value

    def __str__(self) -> str:
        return self.format()


def _text(value) -> str:
    """A field's value as sacrebleu prints it (booleans as yes/no)."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)

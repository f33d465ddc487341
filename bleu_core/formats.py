"""How a score is printed, once per output form (sacrebleu's conventions; no arithmetic here).

* :func:`score_text`: the number, with the interval after it (``77.1 (μ = 77.0 ± 6.8)``);
* :func:`score_line`: sacrebleu's text line ``NAME|signature = score (μ ...) verbose``;
* :func:`sacrebleu_json`: sacrebleu's JSON object of one score (its keys and its rounding);
* :func:`fields`: beambleu's own JSON object of one score (full precision, the statistics).

As in sacrebleu's ``Score.format``, an interval shows only when its mean is positive.
"""

from __future__ import annotations

import json

from .signature import SignatureFields, parse_signature

__all__ = ["Signature", "fields", "sacrebleu_json", "score_line", "score_text", "signature_fields", "signature_text"]

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Dict, Optional, Union

    Signature = Union[SignatureFields, str, None]


def __getattr__(name: str):
    """``Signature``, the type of a signature argument (``Union[SignatureFields, str, None]``), made
    when asked for: typing is not imported by `beambleu score`'s start-up."""
    if name == "Signature":
        from typing import Union

        return Union[SignatureFields, str, None]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _shown(interval) -> bool:
    return interval is not None and interval.mean > 0


def signature_text(signature: Signature, short: bool = False) -> str:
    if signature is None:
        return ""
    return signature if isinstance(signature, str) else signature.format(short)


def signature_fields(signature: Signature) -> Dict[str, str]:
    """A signature's fields (an object's own, or those of a text given by a caller)."""
    if not signature:
        return {}
    return parse_signature(signature) if isinstance(signature, str) else signature.fields()


def score_text(score: float, width: int = 2, interval=None) -> str:
    """The score with ``width`` decimals, then ``(μ = mean ± half-width)`` when bootstrapped."""
    text = f"{score:.{width}f}"
    if _shown(interval):
        text += f" ({interval.text(width)})"
    return text


def score_line(name: str, score: float, width: int = 2, signature: Signature = None, interval=None,
               verbose: str = "", score_only: bool = False, short: bool = False, paired=None) -> str:
    """sacrebleu's text line: ``NAME|signature = score (μ = mean ± ci) verbose`` (the head is the
    name alone without a signature), or the score part alone (``score_only``). ``paired`` (a
    :class:`~bleu_core.scoring.Paired`) adds `` (p = 0.0123)*`` as ``beambleu run`` prints it."""
    sc = score_text(score, width, interval)
    if score_only:
        return sc
    sig = signature_text(signature, short)
    line = f"{name}|{sig} = {sc}" if sig else f"{name} = {sc}"
    if verbose:
        line += f" {verbose}"
    if paired is not None:
        line += f" (p = {paired.p_value:.4f}){'*' if paired.significant else ''}"
    return line


def sacrebleu_json(name: str, score: float, signature: Signature, width: int = 2, interval=None,
                   verbose: str = "", extra: Optional[Dict] = None) -> str:
    """sacrebleu's JSON object of one score (``-f json``): ``name``, the rounded ``score``, the
    ``signature``, the interval (``confidence_mean``, ``confidence_var``: the half-width,
    ``confidence``), ``verbose_score``, then the signature's fields as keys; ``extra`` is added
    after them (``--with-stats``). Indented by one space, as sacrebleu prints it."""
    d = {"name": name, "score": float(f"{score:.{width}f}"), "signature": signature_text(signature)}
    if _shown(interval):
        mean, half = f"{interval.mean:.{width}f}", f"{interval.half_width:.{width}f}"
        d.update(confidence_mean=float(mean), confidence_var=float(half), confidence=f"μ = {mean} ± {half}")
    if verbose:
        d["verbose_score"] = verbose
    d.update(signature_fields(signature))
    if extra:
        d.update((k, v) for k, v in extra.items() if k not in d)
    return json.dumps(d, indent=1, ensure_ascii=False)


def fields(name: str, score: float, signature: Signature, verbose: str, stats: Dict) -> Dict:
    """beambleu's JSON object of one score: ``name``, ``score`` (full precision), ``signature``,
    ``verbose_score``, the signature's fields, then the metric's statistics (``stats``)."""
    d = {"name": name, "score": score}
    sig = signature_text(signature)
    if sig:
        d["signature"] = sig
    if verbose:
        d["verbose_score"] = verbose
    d.update(signature_fields(signature))
    d.update(stats)
    return d

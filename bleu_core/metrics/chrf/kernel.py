"""The vectorised chrF / chrF++ path: Arrow arrays in, sacrebleu's chrF statistics matrix out.

The work happens in the compiled kernel ``bleu_core.metrics.chrf._chrf``, which reads the Arrow buffers in
place and decodes, lowercases, splits and counts character and word n-grams in one call per
batch (see the comment at the top of ``_chrf.c``); Python touches only the arrays.
"""

from __future__ import annotations

import operator

from ...kernels.buffers import as_lists, list_buffers, new_out, raise_row_error, require_compiled, stats_many_lists

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (start-up)
if TYPE_CHECKING:
    from typing import List

    import numpy as np

    from ...kernels.arrow import ArrayLike

# Python lists of text go to the kernel as buffers made without pyarrow (bleu_core.kernels.buffers);
# Arrow arrays import bleu_core.kernels.arrow (pyarrow) when they are first given

__all__ = ["chrf_batch_stats", "chrf_batch_stats_many"]

try:
    from . import _chrf
except ImportError as exc:  # pragma: no cover - a broken build
    _chrf = None
    _CHRF_ERROR = exc


def _count(value, name: str) -> int:
    """An int option >= 0 (bools are refused: they are almost always a misplaced flag)."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an int, not bool")
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an int, got {type(value).__name__}") from None
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return value


def _orders(char_order, word_order, beta):
    """The checked orders, and float(beta ** 2), float(1 + beta ** 2) as sacrebleu computes them."""
    require_compiled(_chrf, globals().get("_CHRF_ERROR"), "chrF kernel")
    char_order = _count(char_order, "char_order")
    word_order = _count(word_order, "word_order")
    beta = _count(beta, "beta")
    if char_order + word_order < 1:
        raise ValueError("char_order + word_order must be >= 1")
    try:  # sacrebleu multiplies floats by the int beta ** 2: the same conversions, done once
        return char_order, word_order, float(beta**2), float(1 + beta**2)
    except OverflowError:
        raise ValueError(f"beta is too large: beta ** 2 does not fit a float (beta = {beta})") from None


def chrf_batch_stats(
    candidates: ArrayLike,
    references,
    *,
    char_order: int = 6,
    word_order: int = 0,
    beta: int = 2,
    lowercase: bool = False,
    whitespace: bool = False,
    eps_smoothing: bool = False,
    per_row: bool = True,
) -> np.ndarray:
    """chrF statistics of a batch, exactly as sacrebleu 2.6.0's ``CHRF`` extracts them.

    ``candidates``: Arrow string array (or a sequence of str); ``references``: Arrow
    list<string> array (or a sequence of sequences), where a null entry is a missing reference
    and ``""`` a real empty one. Returns ``int64[n, 3 * (char_order + word_order)]`` when
    ``per_row``, else its ``int64[3 * (char_order + word_order)]`` column sums: for each
    character order, then each word order, ``[hyp_count, ref_count, match_count]`` of the
    reference with the best F score (``beta`` and ``eps_smoothing`` only matter for that
    choice). Raises :class:`BatchInputError` naming the row for a null candidate, a row without
    any reference, or text that is not valid UTF-8, and OverflowError if a column sum exceeds
    int64.
    """
    char_order, word_order, factor, one_plus = _orders(char_order, word_order, beta)
    width = 3 * (char_order + word_order)
    bufs = list_buffers(candidates, references)
    if bufs is not None:
        (hd, ho, hv), (rd, ro, rv), list_offsets, n = bufs.candidates, bufs.references, bufs.list_offsets, bufs.n
    else:
        from ...kernels.arrow import list_parts, string_buffers, to_arrow

        cand, refs = to_arrow(candidates, references)
        child, list_offsets = list_parts(refs)
        hd, ho, hv = string_buffers(cand, "candidates")
        rd, ro, rv = string_buffers(child, "references")
        n = len(cand)
    out = new_out(n, width, per_row)
    try:
        _chrf.stats(hd, ho, hv, rd, ro, rv, list_offsets, char_order, word_order, factor, one_plus,
                    bool(eps_smoothing), bool(lowercase), bool(whitespace), out, bool(per_row))
    except ValueError as exc:
        raise_row_error(exc)
    return out


def chrf_batch_stats_many(systems, references, *, char_order: int = 6, word_order: int = 0, beta: int = 2,
                          lowercase: bool = False, whitespace: bool = False, eps_smoothing: bool = False,
                          per_row: bool = True) -> List[np.ndarray]:
    """:func:`chrf_batch_stats` of each candidate list in ``systems`` for the same ``references``,
    in order, each row's references prepared once for all systems (``_chrf.stats_many``). The
    numbers are :func:`chrf_batch_stats`'s system by system, and so is the error of a bad row
    (the systems are then scored one by one to find the first)."""
    opts = dict(char_order=char_order, word_order=word_order, beta=beta, lowercase=lowercase,
                whitespace=whitespace, eps_smoothing=eps_smoothing, per_row=per_row)
    systems = list(systems)
    if len(systems) < 2:
        return [chrf_batch_stats(c, references, **opts) for c in systems]
    char_order, word_order, factor, one_plus = _orders(char_order, word_order, beta)
    options = (char_order, word_order, factor, one_plus, bool(eps_smoothing), bool(lowercase), bool(whitespace))
    systems, references = as_lists(systems, references)
    outs = stats_many_lists(_chrf.stats_many, options, systems, references, 3 * (char_order + word_order), per_row,
                            lambda c, r: chrf_batch_stats(c, r, **opts))
    if outs is not None:
        return outs
    from ...kernels.arrow import stats_many, to_arrow

    cand, refs = to_arrow(systems[0], references)
    return stats_many(_chrf.stats_many, options, cand, refs, systems, 3 * (char_order + word_order), per_row,
                      lambda c, r: chrf_batch_stats(c, r, **opts))

"""The vectorised TER path: Arrow arrays in, beambleu's TER statistics matrix out.

The work happens in the compiled kernel ``bleu_core.metrics.ter._ter``, which reads the Arrow buffers in
place and lowercases, removes punctuation, splits, numbers the words and runs the banded edit
distance and the shift search in one call per batch (see the comment at the top of ``_ter.c``).

Tercom's ``normalized`` rules are the exception: they are a chain of regular-expression
substitutions over the whole text (entities, punctuation, possessives, periods and commas next to
digits, CJK ranges), cheap next to the shift search and easy to get subtly wrong in C, so with
``normalized`` the words are made here by :func:`bleu_core.metrics.ter.tercom_words` (each distinct text
once; references twice over, as sacrebleu does) and the kernel only splits them. Without it,
tokenizing twice changes nothing (``str.lower`` is idempotent on every code point, and removing
punctuation and splitting are too), so the kernel tokenizes references once.
"""

from __future__ import annotations

from ...kernels.buffers import list_buffers, new_out, raise_row_error, require_compiled
from .reference import STATS_WIDTH, tercom_words

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (start-up)
if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

    from ...kernels.arrow import ArrayLike

# Python lists of text go to the kernel as buffers made without pyarrow (bleu_core.kernels.buffers);
# Arrow arrays and the normalized option import bleu_core.kernels.arrow (pyarrow) when they are first met

__all__ = ["ter_batch_stats"]

try:
    from . import _ter
except ImportError as exc:  # pragma: no cover - a broken build
    _ter = None
    _TER_ERROR = exc


def _normalized_words(arr: pa.Array, case_sensitive: bool, no_punct: bool, asian_support: bool,
                      passes: int) -> pa.Array:
    """The array of each text's normalised words joined by spaces, after ``passes`` tokenizations
    (2 for references, as sacrebleu tokenizes them twice); nulls kept, each distinct text once."""
    import pyarrow as pa

    out, memo = [], {}
    for s in arr.to_pylist():
        if s is not None:
            words = memo.get(s)
            if words is None:
                words = s
                for _ in range(passes):
                    words = " ".join(tercom_words(words, case_sensitive, True, no_punct, asian_support))
                memo[s] = words
            s = words
        out.append(s)
    return pa.array(out, type=pa.large_string())


def ter_batch_stats(candidates: ArrayLike, references, *, case_sensitive: bool = False, normalized: bool = False,
                    no_punct: bool = False, asian_support: bool = False, per_row: bool = True) -> np.ndarray:
    """TER statistics of a batch, exactly as sacrebleu 2.6.0's ``TER`` computes them.

    ``candidates``: Arrow string array (or a sequence of str); ``references``: Arrow
    list<string> array (or a sequence of sequences), where a null entry is a missing reference
    and ``""`` a real empty one. Returns ``int64[n, 69]`` when ``per_row``, else its column sums
    (the layout of :mod:`bleu_core.metrics.ter`). Raises :class:`BatchInputError` naming the row for a
    null candidate, a row without any reference or with more than 64
    (:data:`~bleu_core.metrics.ter.reference.MAX_REFS`), or text that is not valid
    UTF-8, and OverflowError if a column sum exceeds int64.
    """
    require_compiled(_ter, globals().get("_TER_ERROR"), "TER kernel")
    lowercase, punct = not case_sensitive, bool(no_punct)
    bufs = None if normalized else list_buffers(candidates, references)
    if bufs is not None:
        out = new_out(bufs.n, STATS_WIDTH, per_row)
        try:
            _ter.stats(*bufs.candidates, *bufs.references, bufs.list_offsets, bool(lowercase), bool(punct),
                       bool(asian_support), out, bool(per_row))
        except ValueError as exc:
            raise_row_error(exc)
        return out
    from ...kernels.arrow import as_string, check_utf8, list_parts, string_buffers, to_arrow

    cand, refs = to_arrow(candidates, references)
    child, list_offsets = list_parts(refs)
    if normalized:
        cand, child = as_string(cand, "candidates"), as_string(child, "references")
        check_utf8(cand, child, list_offsets)
        cand = _normalized_words(cand, case_sensitive, punct, asian_support, 1)
        child = _normalized_words(child, case_sensitive, punct, asian_support, 2)
        lowercase = punct = False
    hd, ho, hv = string_buffers(cand, "candidates")
    rd, ro, rv = string_buffers(child, "references")
    out = new_out(len(cand), STATS_WIDTH, per_row)
    try:
        _ter.stats(hd, ho, hv, rd, ro, rv, list_offsets, bool(lowercase), bool(punct), bool(asian_support), out,
                   bool(per_row))
    except ValueError as exc:
        raise_row_error(exc)
    return out

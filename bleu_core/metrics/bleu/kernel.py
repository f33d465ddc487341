"""BLEU's vectorised batch path: Arrow arrays in, an ``int64[n, 2+2N]`` matrix (or its sum) out.

The work happens in BLEU's compiled kernel ``bleu_core.metrics.bleu._bleu``, which reads the Arrow buffers
in place (UTF-8 data, offsets, validity) and tokenizes, splits, interns and counts n-grams in
one call per batch; Python touches only the arrays, never a token. The Arrow marshalling it
shares with the other metrics is in :mod:`bleu_core.kernels.arrow`.
"""

from __future__ import annotations

from ...kernels.buffers import (RowLists, as_lists, list_buffers, new_out, raise_row_error, require_compiled,
                                stats_many_lists)
from ...tokenizers import get_tokenizer

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (start-up)
if TYPE_CHECKING:
    from typing import List, Optional

    import numpy as np
    import pyarrow as pa

    from ...kernels.arrow import ArrayLike

# Python lists of text with a tokenizer the kernel implements go to the kernel as buffers made
# without pyarrow (bleu_core.kernels.buffers); Arrow arrays and the other tokenizers import
# bleu_core.kernels.arrow (pyarrow) when they are first given

__all__ = ["batch_stats", "batch_stats_many"]

try:
    from . import _bleu
except ImportError as exc:  # pragma: no cover - a broken build
    _bleu = None
    _KERNEL_ERROR = exc


def _require_kernel():
    require_compiled(_bleu, globals().get("_KERNEL_ERROR"))


def batch_stats(
    candidates: ArrayLike,
    references,
    *,
    tokenize: str = "13a",
    lowercase: bool = False,
    max_ngram_order: int = 4,
    per_row: bool = True,
    spm_model: Optional[str] = None,
) -> np.ndarray:
    """BLEU statistics of a batch.

    ``candidates``: Arrow string array (or a sequence of str); ``references``: Arrow
    list<string> array (or a sequence of sequences), where a null entry is a missing reference
    and ``""`` a real empty one. Returns ``int64[n, 2+2N]`` when ``per_row`` else the
    ``int64[2+2N]`` sum. Raises :class:`BatchInputError` naming the row for a null candidate,
    a row without any reference, or text that is not valid UTF-8. ``spm_model`` is the model file of
    a SentencePiece tokenizer (default: sacrebleu's).
    """
    _require_kernel()
    tok = get_tokenizer(tokenize, spm_model)
    lowercase = bool(lowercase)
    if tok.kernel_id is not None and not hasattr(tok, "encode_ids"):
        bufs = list_buffers(candidates, references)
        if bufs is not None:
            out = new_out(bufs.n, 2 + 2 * max_ngram_order, per_row)
            try:
                _bleu.stats(*bufs.candidates, *bufs.references, bufs.list_offsets, tok.kernel_id, int(lowercase),
                            max_ngram_order, _list_flags(tok, [candidates], references, lowercase), out, int(per_row))
            except ValueError as exc:
                raise_row_error(exc)
            return out
    from ...kernels.arrow import as_string, check_utf8, list_parts, string_buffers, to_arrow

    cand, refs = to_arrow(candidates, references)
    child, list_offsets = list_parts(refs)
    if hasattr(tok, "encode_ids"):  # SentencePiece: the kernel counts piece ids
        return _stats_from_ids(tok, cand, child, list_offsets, lowercase, max_ngram_order, per_row)
    if tok.kernel_id is None:
        cand, child = as_string(cand, "candidates"), as_string(child, "references")
        check_utf8(cand, child, list_offsets)
        cand, child = _pretokenize(tok, cand, lowercase), _pretokenize(tok, child, lowercase)
        kernel_id, lowercase = 0, False
    else:
        kernel_id = tok.kernel_id
    hd, ho, hv = string_buffers(cand, "candidates")
    rd, ro, rv = string_buffers(child, "references")
    n, width = len(cand), 2 + 2 * max_ngram_order
    out = new_out(n, width, per_row)
    try:
        _bleu.stats(hd, ho, hv, rd, ro, rv, list_offsets, kernel_id, int(lowercase), max_ngram_order, tok.flags(),
                    out, int(per_row))
    except ValueError as exc:
        raise_row_error(exc)
    return out


def _list_flags(tok, systems, references, lowercase: bool):
    """The tokenizer's flag table for list inputs: only their characters' flags when the
    tokenizer can make such a table (``flags_for``: intl, zh), else :meth:`Tokenizer.flags`."""
    flags_for = getattr(tok, "flags_for", None)
    if flags_for is None:
        return tok.flags()

    def strings():
        for candidates in systems:
            yield from candidates
        if type(references) is RowLists:  # (empty and missing references have no characters)
            yield from filter(None, references.flat)
            return
        for row in references:
            if isinstance(row, str):
                yield row
                continue
            for r in row:
                if r is not None:
                    yield r

    return flags_for(strings(), lowercase)


def batch_stats_many(systems, references, *, tokenize: str = "13a", lowercase: bool = False, max_ngram_order: int = 4,
                     per_row: bool = True, spm_model: Optional[str] = None) -> List[np.ndarray]:
    """:func:`batch_stats` of each candidate list in ``systems`` for the same ``references``, in
    order. With a tokenizer the kernel implements, each row's references are tokenized (and their
    tokens hashed) once for all systems (``_bleu.stats_many``); the numbers are the same as
    :func:`batch_stats`'s system by system, and so is the error of a bad row (then the systems
    are scored one by one to find the first)."""
    _require_kernel()
    systems = list(systems)
    tok = get_tokenizer(tokenize, spm_model)
    one = dict(tokenize=tokenize, lowercase=lowercase, max_ngram_order=max_ngram_order, per_row=per_row,
               spm_model=spm_model)
    if not systems:
        return []
    if len(systems) == 1:
        return [batch_stats(systems[0], references, **one)]
    if tok.kernel_id is not None and not hasattr(tok, "encode_ids"):
        systems, references = as_lists(systems, references)
        flags = _list_flags(tok, systems, references, bool(lowercase))
        outs = stats_many_lists(_bleu.stats_many, (tok.kernel_id, int(bool(lowercase)), max_ngram_order, flags),
                                systems, references, 2 + 2 * max_ngram_order, per_row,
                                lambda c, r: batch_stats(c, r, **one))
        if outs is not None:
            return outs
    from ...kernels.arrow import stats_many, to_arrow

    cand, refs = to_arrow(systems[0], references)
    if hasattr(tok, "encode_ids") or tok.kernel_id is None or len(systems) == 1:
        return [batch_stats(c, refs, **one) for c in [cand, *systems[1:]]]
    return stats_many(_bleu.stats_many, (tok.kernel_id, int(bool(lowercase)), max_ngram_order, tok.flags()), cand,
                      refs, systems, 2 + 2 * max_ngram_order, per_row, lambda c, r: batch_stats(c, r, **one))


def _stats_from_ids(tok, cand, child, list_offsets, lowercase, order, per_row) -> np.ndarray:
    """Statistics of token ids (see ``TokenizerSPM.encode_ids``), counted by ``_bleu.stats_ids``."""
    from ...kernels.arrow import as_string, check_utf8

    cand, child = as_string(cand, "candidates"), as_string(child, "references")
    check_utf8(cand, child, list_offsets)
    hyp, ref = tok.encode_ids([cand, child], lowercase)
    n, width = len(cand), 2 + 2 * order
    out = new_out(n, width, per_row)
    try:
        _bleu.stats_ids(*hyp, *ref, list_offsets, order, out, int(per_row))
    except ValueError as exc:
        raise_row_error(exc)
    return out


def _pretokenize(tok, arr: pa.Array, lowercase: bool) -> pa.Array:
    """Tokenizers the kernel does not implement (MeCab): Python per segment, then kernel 'none'."""
    import pyarrow as pa

    out = []
    for s in arr.to_pylist():
        if s is None:
            out.append(None)
            continue
        if lowercase:
            s = s.lower()
        out.append(tok(s.rstrip()))
    return pa.array(out, type=pa.large_string())

"""Arrow marshalling for every metric's batch path: Python sequences or Arrow arrays in, the
buffers a compiled kernel reads in place out (UTF-8 data, int64 offsets, validity), and a
kernel's bad-row error as :class:`~bleu_core.errors.BatchInputError`.

Used by BLEU's (:mod:`bleu_core.metrics.bleu.kernel`) and chrF's (:mod:`bleu_core.metrics.chrf.kernel`) batch paths
and by the pipeline; nothing here knows a metric. Python lists of text reach the kernels without
pyarrow (:mod:`bleu_core.kernels.buffers`, where ``require_compiled`` and ``raise_row_error`` live:
they are named here too).
"""

from __future__ import annotations

from typing import Callable, List, Optional, Sequence, Tuple, Union

import numpy as np
import pyarrow as pa

from ..errors import BatchInputError
from .buffers import raise_row_error, require_compiled, utf8_buffers

__all__ = ["ArrayLike", "as_list_array", "as_string", "check_utf8", "invalid_utf8_mask", "list_parts", "nrefs_per_row",
           "raise_row_error", "reference_groups", "require_compiled", "stats_many", "string_buffers", "to_arrow"]

ArrayLike = Union[pa.Array, pa.ChunkedArray, Sequence]


def _combine(arr) -> pa.Array:
    if isinstance(arr, pa.ChunkedArray):
        return arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    return arr


def as_string(arr: pa.Array, what: str) -> pa.Array:
    """``arr`` as a string or large_string array (string_view and all-null arrays are cast)."""
    if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type):
        return arr
    if pa.types.is_string_view(arr.type) or pa.types.is_null(arr.type):
        return arr.cast(pa.large_string())
    raise TypeError(f"{what} must be strings, got Arrow type {arr.type}")


def string_buffers(arr: pa.Array, what: str):
    """(data, int64 offsets, validity bytes or None) of a string array, zero-copy where possible."""
    arr = as_string(arr, what)
    n = len(arr)
    bufs = arr.buffers()
    width = np.int32 if pa.types.is_string(arr.type) else np.int64
    if bufs[1] is None:
        offsets = np.zeros(n + 1, width)
    else:
        offsets = np.frombuffer(bufs[1], dtype=width, count=arr.offset + n + 1)[arr.offset :]
    offsets = offsets.astype(np.int64, copy=False)
    data = bufs[2] if bufs[2] is not None else b""
    # the kernels trust the offsets: an array built from raw buffers without validation could make them read
    # outside the data (one vectorised check; Arrow-made arrays always pass)
    if n and (offsets[0] < 0 or offsets[-1] > len(data) or (np.diff(offsets) < 0).any()):
        raise ValueError(f"{what}: malformed Arrow string array (offsets outside the data or decreasing)")
    valid = None
    if arr.null_count:
        valid = np.asarray(arr.is_valid()).view(np.uint8)
    return data, np.ascontiguousarray(offsets), valid


def as_list_array(refs: pa.Array) -> pa.Array:
    """A list_view or large_list_view array as the list (large_list) array of the same lists;
    other arrays unchanged. Views may point anywhere in their child array, in any order, so the
    child is taken in row order (Arrow's own cast from list_view is not used: pyarrow 25 makes
    an invalid array, one offset short)."""
    large = pa.types.is_large_list_view(refs.type)
    if not (large or pa.types.is_list_view(refs.type)):
        return refs
    n = len(refs)
    starts = np.asarray(refs.offsets, dtype=np.int64)  # (of this slice's rows)
    sizes = np.asarray(refs.sizes, dtype=np.int64)
    mask = None
    if refs.null_count:
        valid = np.asarray(refs.is_valid())
        sizes = np.where(valid, sizes, 0)  # a null row's view means nothing
        mask = pa.array(~valid)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    take = np.repeat(starts - offsets[:-1], sizes) + np.arange(offsets[-1], dtype=np.int64)
    if len(take) and (take.min() < 0 or take.max() >= len(refs.values)):
        raise ValueError("references: malformed Arrow list_view array (a view outside its child array)")
    values = refs.values.take(pa.array(take))
    cls, width = (pa.LargeListArray, pa.int64()) if large else (pa.ListArray, pa.int32())
    return cls.from_arrays(pa.array(offsets, width), values, mask=mask)


def list_parts(refs: pa.Array) -> Tuple[pa.Array, np.ndarray]:
    """(flat child string array, int64 list offsets into it) of a list<string> array."""
    if not (pa.types.is_list(refs.type) or pa.types.is_large_list(refs.type)):
        raise TypeError(f"references must be a list<string> array, got Arrow type {refs.type}")
    if refs.null_count:
        row = int(np.flatnonzero(~np.asarray(refs.is_valid()))[0])
        raise BatchInputError(row, "references", "the reference list is null")
    n = len(refs)
    width = np.int32 if pa.types.is_list(refs.type) else np.int64
    offsets = np.frombuffer(refs.buffers()[1], dtype=width, count=refs.offset + n + 1)[refs.offset :]
    offsets = offsets.astype(np.int64)
    # the child array of a sliced list array is the whole of it (e.g. a batch of a row group):
    # keep only this slice's references, so that nothing is tokenized or checked twice
    child = refs.values
    first, last = (int(offsets[0]), int(offsets[-1])) if n else (0, 0)
    if 0 <= first <= last <= len(child):  # (else malformed: the kernels say so)
        child, offsets = child.slice(first, last - first), offsets - first
    return child, offsets


def _large_strings(texts: list) -> pa.Array:
    """``pa.array(texts, pa.large_string())``, built from its buffers when every value is a str or
    None: ``pa.array`` of a Python list imports pandas where it is installed (to tell a pandas
    object), which is most of the start-up of a small ``beambleu score``."""
    parts = utf8_buffers(texts)
    if parts is None:
        return pa.array(texts, type=pa.large_string())
    data, offsets, valid = parts
    nulls = len(texts) - sum(valid) if valid is not None else 0
    return pa.Array.from_buffers(pa.large_string(), len(texts),
                                 [_validity_bitmap(valid) if nulls else None, pa.py_buffer(offsets),
                                  pa.py_buffer(data)], null_count=nulls)


def _validity_bitmap(valid: bytearray):
    """An Arrow validity bitmap (LSB first) of one byte per value."""
    return pa.py_buffer(np.packbits(np.frombuffer(bytes(valid), dtype=np.uint8), bitorder="little").tobytes())


def _large_string_lists(refs: list) -> Optional[pa.Array]:
    """``pa.array(refs, pa.large_list(pa.large_string()))`` from its buffers, for a list of lists
    or tuples of str or None; None when another value is met (``pa.array`` then decides)."""
    flat = []
    lengths = np.zeros(len(refs) + 1, dtype=np.int64)
    for i, r in enumerate(refs):
        if type(r) not in (list, tuple):
            return None
        flat.extend(r)
        lengths[i + 1] = len(r)
    values = utf8_buffers(flat)
    if values is None:
        return None
    data, offsets, valid = values
    nulls = len(flat) - sum(valid) if valid is not None else 0
    child = pa.Array.from_buffers(pa.large_string(), len(flat),
                                  [_validity_bitmap(valid) if nulls else None, pa.py_buffer(offsets),
                                   pa.py_buffer(data)], null_count=nulls)
    return pa.LargeListArray.from_buffers(pa.large_list(pa.large_string()), len(refs),
                                          [None, pa.py_buffer(np.cumsum(lengths))], children=[child])


def to_arrow(candidates: ArrayLike, references) -> Tuple[pa.Array, pa.Array]:
    """Normalise Python sequences or Arrow arrays to (string array, list<string> array); a
    list_view references array becomes a list array (:func:`as_list_array`)."""
    cand = _combine(candidates) if isinstance(candidates, (pa.Array, pa.ChunkedArray)) else None
    if cand is None:
        if isinstance(candidates, str):
            raise TypeError("candidates must be a sequence of strings, not a single string")
        cand = _large_strings(list(candidates))
    if isinstance(references, (pa.Array, pa.ChunkedArray)):
        refs = as_list_array(_combine(references))
    else:
        refs = list(references)
        for i, r in enumerate(refs):
            if isinstance(r, str) or not isinstance(r, Sequence):
                raise TypeError(
                    f"references[{i}] must be a sequence of reference strings (one list per candidate)"
                )
        fast = _large_string_lists(refs)
        refs = pa.array(refs, type=pa.large_list(pa.large_string())) if fast is None else fast
    if len(cand) != len(refs):
        raise ValueError(f"{len(cand)} candidates but {len(refs)} reference lists")
    return cand, refs


def reference_groups(candidates: pa.Array, references: pa.Array) -> Optional[Tuple[np.ndarray, np.ndarray]]:
    """How the rows of a batch that repeat a reference list can share it (a long table: each
    system's row of a segment carries that segment's references): ``(firsts, slots)``, where
    ``firsts[u]`` is a row with the u-th distinct list and ``slots[s, u]`` the (s+1)-th row with
    it, or ``len(references)`` where fewer rows have it. Lists are equal when their references
    are, value for value (null = missing); the order of the lists is unspecified. None where
    sharing would not pay (fewer than half the rows repeat a list, or the padding of the slots
    would double the candidates) or is not tried (not string candidates and list<string>
    references, a null list: the plain path says what is wrong)."""
    import pyarrow.compute as pc

    n = len(references)
    if n < 4 or not (pa.types.is_string(candidates.type) or pa.types.is_large_string(candidates.type)):
        return None
    if not (pa.types.is_list(references.type) or pa.types.is_large_list(references.type)) or references.null_count:
        return None
    child, offsets = list_parts(references)
    if not (pa.types.is_string(child.type) or pa.types.is_large_string(child.type)):
        return None
    codes = np.asarray(pc.dictionary_encode(child).indices.fill_null(-1), dtype=np.int64)
    lengths = np.diff(offsets)
    width = int(lengths.max())
    if (lengths == width).all():
        keys = codes.reshape(n, width)
    else:  # rows with fewer references: padded with a code no reference has
        keys = np.full((n, width), -2, dtype=np.int64)
        keys[np.repeat(np.arange(n), lengths), np.arange(len(codes)) - np.repeat(offsets[:-1], lengths)] = codes
    # each row's codes as one int64 (digits in base `base`), renumbered densely before it could overflow
    base = int(codes.max(initial=0)) + 3
    key = np.zeros(n, dtype=np.int64)
    for column in keys.T:
        if int(key.max(initial=0)) >= (1 << 62) // base:
            key = np.unique(key, return_inverse=True)[1].reshape(-1)
        key = key * base + (column + 2)
    _, firsts, inverse = np.unique(key, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    groups = len(firsts)
    counts = np.bincount(inverse, minlength=groups)
    depth = int(counts.max())
    if 2 * groups > n or groups * depth > 2 * n:
        return None
    order = np.argsort(inverse, kind="stable")
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n) - np.repeat(np.cumsum(counts) - counts, counts)
    slots = np.full((depth, groups), n, dtype=np.int64)
    slots[rank, inverse] = np.arange(n)
    return firsts, slots


def stats_many(kernel, options: tuple, cand: pa.Array, refs: pa.Array, systems: Sequence, width: int,
               per_row: bool, one_by_one: Callable) -> List[np.ndarray]:
    """A kernel's ``stats_many`` over several systems' candidates for the same references:
    ``cand`` is the first system's as Arrow, ``systems`` all of them as given; ``kernel`` is called
    as ``kernel([(data, offsets, valid, out) per system], ref_data, ref_offsets, ref_valid,
    list_offsets, *options, per_row)``. Returns each system's ``int64[n, width]`` (or its sums).
    On a bad row, ``one_by_one(candidates, refs)`` (the metric's batch_stats) is run system by
    system, so that the error raised is the first one it meets."""
    try:
        child, list_offsets = list_parts(refs)
        rd, ro, rv = string_buffers(child, "references")
        cands = [cand] + [to_arrow(c, refs)[0] for c in systems[1:]]
        outs = [np.zeros((len(cand), width) if per_row else width, dtype=np.int64) for _ in cands]
        kernel([(*string_buffers(c, "candidates"), o) for c, o in zip(cands, outs)], rd, ro, rv, list_offsets,
               *options, int(per_row))
    except (ValueError, TypeError, OverflowError):
        for c in systems:
            one_by_one(c, refs)
        raise
    return outs


def invalid_utf8_mask(array: pa.Array) -> Optional[np.ndarray]:
    """Mask of the values of a string array that are not valid UTF-8, or None when all are (one
    full Arrow validation; the values are looked at one by one only when it fails)."""
    if not (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)):
        return None
    try:
        array.validate(full=True)
        return None
    except pa.ArrowInvalid:
        pass
    binary = pa.large_binary() if pa.types.is_large_string(array.type) else pa.binary()
    mask = np.zeros(len(array), dtype=bool)
    for i, value in enumerate(array.cast(binary).to_pylist()):
        if value is not None:
            try:
                value.decode("utf-8")
            except UnicodeDecodeError:
                mask[i] = True
    return mask


def check_utf8(cand: pa.Array, child: pa.Array, list_offsets: np.ndarray) -> None:
    """BatchInputError naming the first row with text that is not UTF-8, for the paths that
    decode text in Python (the kernel checks it itself)."""
    bad = invalid_utf8_mask(cand)
    if bad is not None:
        raise BatchInputError(int(np.flatnonzero(bad)[0]), "candidate", "invalid UTF-8")
    bad = invalid_utf8_mask(child)
    if bad is not None:
        j = int(np.flatnonzero(bad)[0])
        row = int(np.searchsorted(list_offsets, j, side="right") - 1)
        raise BatchInputError(row, "references", "invalid UTF-8", j - int(list_offsets[row]))


def nrefs_per_row(references) -> np.ndarray:
    """Number of present (non-null) references of each row."""
    refs = as_list_array(_combine(references)) if isinstance(references, (pa.Array, pa.ChunkedArray)) else None
    if refs is None:
        return np.array([sum(r is not None for r in row) for row in references], dtype=np.int64)
    import pyarrow.compute as pc

    flat_valid = pc.is_valid(refs.flatten())
    parents = pc.list_parent_indices(refs)
    counts = np.bincount(np.asarray(parents), weights=np.asarray(flat_valid, dtype=np.int64), minlength=len(refs))
    return counts.astype(np.int64)

"""Accumulators and per-batch grouping: plain numpy, no Beam (the CombineFn wraps these).

An accumulator is one int64 vector::

    [c, r, matches_1..N, totals_1..N, (B bootstrap replicates of those 2 + 2N), n_pairs,
     nrefs_min, nrefs_max]

Everything but the last two entries adds; ``nrefs_min``/``nrefs_max`` take min/max (they make
the signature's ``nrefs``: one number, or ``var``). The zero has ``nrefs_min = INT64_MAX`` and
``nrefs_max = 0``, so merging is commutative and associative with an identity. Without
``--confidence``/``--paired-bs`` B is 0; with them the replicate block holds B weighted totals
(see :mod:`bleu_core.bootstrap`), so an accumulator's size is O(B), whatever the corpus size.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

INT64_MAX = np.iinfo(np.int64).max


def width(order: int, n_boot: int = 0) -> int:
    return (2 + 2 * order) * (1 + n_boot) + 3


def zero(order: int, n_boot: int = 0) -> np.ndarray:
    acc = np.zeros(width(order, n_boot), dtype=np.int64)
    acc[-2] = INT64_MAX
    return acc


def merge_into(acc: np.ndarray, other: np.ndarray) -> np.ndarray:
    """acc <- acc (+) other, in place; returns acc."""
    acc[:-2] += other[:-2]
    if other[-2] < acc[-2]:
        acc[-2] = other[-2]
    if other[-1] > acc[-1]:
        acc[-1] = other[-1]
    return acc


def stats_of(acc: np.ndarray, order: int) -> np.ndarray:
    return acc[:2 + 2 * order]


def boot_of(acc: np.ndarray, order: int) -> np.ndarray:
    """int64[B, 2 + 2N]: the bootstrap replicates' totals (B = 0 without bootstrap)."""
    k = 2 + 2 * order
    return acc[k:-3].reshape(-1, k)


def n_pairs(acc: np.ndarray) -> int:
    return int(acc[-3])


def nrefs_of(acc: np.ndarray):
    lo, hi = int(acc[-2]), int(acc[-1])
    if acc[-3] == 0:
        return None
    return lo if lo == hi else "var"


def from_totals(totals: np.ndarray, nrefs: np.ndarray, boot: Optional[np.ndarray] = None) -> np.ndarray:
    """Accumulator of ``len(nrefs)`` pairs whose statistics sum to ``totals`` (and whose
    bootstrap replicates sum to ``boot``, int64[B, len(totals)], if given)."""
    k = len(totals)
    nb = 0 if boot is None else boot.size
    acc = np.empty(k + nb + 3, dtype=np.int64)
    acc[:k] = totals
    if nb:
        acc[k:k + nb] = boot.reshape(-1)
    acc[-3] = len(nrefs)
    acc[-2] = nrefs.min() if len(nrefs) else INT64_MAX
    acc[-1] = nrefs.max() if len(nrefs) else 0
    return acc


def from_rows(rows: np.ndarray, nrefs: np.ndarray, boot: Optional[np.ndarray] = None) -> np.ndarray:
    """Accumulator of a block of per-pair statistics rows."""
    return from_totals(rows.sum(axis=0), nrefs, boot)


GROUP_KEY_TYPES = "string, large_string, an integer type or dictionary<string>"


def group_key_type_ok(t: pa.DataType) -> bool:
    if pa.types.is_dictionary(t):
        return group_key_type_ok(t.value_type)
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_integer(t)


def group_rows(columns: Sequence[pa.Array]) -> Tuple[List[tuple], np.ndarray]:
    """Distinct key tuples of the rows and each row's index into them (nulls are a key value)."""
    n = len(columns[0])
    code = np.zeros(n, dtype=np.int64)
    dictionaries = []
    cards = []
    for col in columns:
        if isinstance(col, pa.ChunkedArray):
            col = col.combine_chunks()
        if pa.types.is_dictionary(col.type):
            col = col.cast(col.type.value_type)
        enc = pc.dictionary_encode(col, null_encoding="encode")
        idx = np.asarray(enc.indices.fill_null(0), dtype=np.int64)
        dictionaries.append(enc.dictionary.to_pylist())
        card = max(len(enc.dictionary), 1)
        cards.append(card)
        code = code * card + idx
    uniq, inverse = np.unique(code, return_inverse=True)
    keys = []
    for u in uniq.tolist():
        parts = []
        for card, values in zip(reversed(cards), reversed(dictionaries)):
            parts.append(values[u % card] if values else None)
            u //= card
        keys.append(tuple(reversed(parts)))
    return keys, inverse.reshape(-1)


def accumulate_groups(rows: np.ndarray, nrefs: np.ndarray, inverse: np.ndarray, n_groups: int,
                      boot: Optional[np.ndarray] = None) -> np.ndarray:
    """One accumulator per group: int64[n_groups, width] (``boot``: int64[n_groups, B, k])."""
    order = np.argsort(inverse, kind="stable")
    sorted_inv = inverse[order]
    starts = np.flatnonzero(np.r_[True, sorted_inv[1:] != sorted_inv[:-1]])
    k = rows.shape[1]
    nb = 0 if boot is None else boot.shape[1] * k
    out = np.empty((n_groups, k + nb + 3), dtype=np.int64)
    out[:, :k] = np.add.reduceat(rows[order], starts, axis=0)
    if nb:
        out[:, k:k + nb] = boot.reshape(n_groups, nb)
    out[:, -3] = np.diff(np.r_[starts, len(order)])
    nr = nrefs[order]
    out[:, -2] = np.minimum.reduceat(nr, starts)
    out[:, -1] = np.maximum.reduceat(nr, starts)
    return out


def refs_from_columns(columns: Sequence[pa.Array]) -> pa.Array:
    """One list<string> array from several string columns (row i: [col0[i], col1[i], ...])."""
    cols = [c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c for c in columns]
    cols = [c.cast(pa.large_string()) for c in cols]
    n, k = len(cols[0]), len(cols)
    flat = pa.concat_arrays(cols)
    take = (np.arange(n)[:, None] + np.arange(k)[None, :] * n).reshape(-1)
    values = flat.take(pa.array(take))
    offsets = pa.array(np.arange(0, n * k + 1, k, dtype=np.int64))
    return pa.LargeListArray.from_arrays(offsets, values)


def first_true(mask: np.ndarray) -> Optional[int]:
    idx = np.flatnonzero(mask)
    return int(idx[0]) if len(idx) else None

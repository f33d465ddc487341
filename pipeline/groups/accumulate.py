"""Accumulators: plain numpy, no Beam (:mod:`beambleu.groups.grouptable` holds many of them and combines them).

An accumulator is one int64 vector::

    [statistics (k), (B bootstrap replicates of those k), n_pairs, nrefs_min, nrefs_max]

where the k statistics are those of the run's metrics side by side
(:class:`bleu_core.protocol.MetricSet`; for BLEU alone ``[c, r, matches_1..N, totals_1..N]``).

Everything but the last two entries adds; ``nrefs_min``/``nrefs_max`` take min/max (they make
the signature's ``nrefs``: one number, or ``var``). The zero has ``nrefs_min = INT64_MAX`` and
``nrefs_max = 0`` (see :func:`beambleu.groups.grouptable._zeros`), so merging is commutative and
associative with an identity. Without
``--confidence``/``--paired-bs`` B is 0; with them the replicate block holds B weighted totals
(see :mod:`bleu_core.resampling.counter`), so an accumulator's size is O(B), whatever the corpus size.

Sums are exact or fail: every added entry of an accumulator is a count in 0 .. 2**63 - 1
(:func:`from_totals` checks its inputs, :func:`from_rows`/:func:`accumulate_groups` sum with
:func:`bleu_core.sums.column_sums`, :mod:`beambleu.groups.grouptable` keeps the invariant), and a sum that
would leave int64 raises OverflowError instead of wrapping.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

import numpy as np
import pyarrow as pa

from bleu_core.kernels.arrow import invalid_utf8_mask
from bleu_core.sums import column_sums

__all__ = ["GROUP_KEY_TYPES", "INT64_MAX", "Namer", "accumulate_groups", "boot_of", "first_invalid_utf8", "first_true",
           "from_groups", "from_rows", "from_totals", "group_key_type_ok", "n_pairs", "nrefs_of", "refs_from_columns",
           "stats_of", "width"]

INT64_MAX = np.iinfo(np.int64).max

#: names a statistic by its column (``MetricSet.stat_name``); the default when none is given
Namer = Callable[[int], str]


def _statistic(i: int) -> str:
    return f"statistic {i}"


def width(k: int, n_boot: int = 0) -> int:
    """Entries of an accumulator of ``k`` statistics and ``n_boot`` replicates."""
    return k * (1 + n_boot) + 3


def stats_of(acc: np.ndarray, k: int) -> np.ndarray:
    return acc[:k]


def boot_of(acc: np.ndarray, k: int) -> np.ndarray:
    """int64[B, k]: the bootstrap replicates' totals (B = 0 without bootstrap)."""
    return acc[k:-3].reshape(-1, k)


def n_pairs(acc: np.ndarray) -> int:
    return int(acc[-3])


def nrefs_of(acc: np.ndarray):
    lo, hi = int(acc[-2]), int(acc[-1])
    if acc[-3] == 0:
        return None
    return lo if lo == hi else "var"


def _entry_name(i: int, k: int, name: Namer) -> str:
    """Name of entry ``i`` of an accumulator's statistics and replicates (``k`` statistics)."""
    return name(i) if i < k else f"{name(i % k)} of bootstrap replicate {i // k}"


def from_totals(totals: np.ndarray, nrefs: np.ndarray, boot: Optional[np.ndarray] = None,
                name: Namer = _statistic) -> np.ndarray:
    """Accumulator of ``len(nrefs)`` pairs whose statistics sum to ``totals`` (and whose
    bootstrap replicates sum to ``boot``, int64[B, len(totals)], if given); ValueError if any of
    them is negative (they are counts)."""
    return _accumulator(totals, len(nrefs), nrefs.min(initial=INT64_MAX), nrefs.max(initial=0), boot, name)


def _accumulator(totals: np.ndarray, n: int, lo: int, hi: int, boot: Optional[np.ndarray],
                 name: Namer) -> np.ndarray:
    """Accumulator of ``n`` pairs of ``lo`` to ``hi`` references (INT64_MAX and 0 for none) whose
    statistics sum to ``totals`` and replicates to ``boot``."""
    k = len(totals)
    nb = 0 if boot is None else boot.size
    acc = np.empty(k + nb + 3, dtype=np.int64)
    acc[:k] = totals
    if nb:
        acc[k:k + nb] = boot.reshape(-1)
    acc[-3] = n
    if acc[:-2].min() < 0:
        i = int(np.flatnonzero(acc[:-2] < 0)[0])
        raise ValueError(f"statistics are counts, got {_entry_name(i, k, name)} = {acc[i]}")
    acc[-2], acc[-1] = lo, hi
    return acc


def from_rows(rows: np.ndarray, nrefs: np.ndarray, boot: Optional[np.ndarray] = None,
              name: Namer = _statistic) -> np.ndarray:
    """Accumulator of a block of per-pair statistics rows (summed exactly, or OverflowError)."""
    return from_totals(column_sums(rows, what="the statistics of a batch", name=name), nrefs, boot, name)


def from_groups(groups: np.ndarray, k: int, boot: Optional[np.ndarray] = None,
                name: Namer = _statistic) -> np.ndarray:
    """The accumulator of a batch from its groups' (:func:`accumulate_groups` of every row of the
    batch, ``k`` statistics): what :func:`from_rows` gives for the batch's rows, from the groups'
    few rows (their sums checked the same way); ``boot`` is the batch's replicates, as there."""
    totals = column_sums(groups[:, :k], what="the statistics of a batch", name=name)
    return _accumulator(totals, int(groups[:, -3].sum()), groups[:, -2].min(initial=INT64_MAX),
                        groups[:, -1].max(initial=0), boot, name)


GROUP_KEY_TYPES = "string, large_string, an integer type or dictionary<string>"


def group_key_type_ok(t: pa.DataType) -> bool:
    if pa.types.is_dictionary(t):
        return group_key_type_ok(t.value_type)
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_integer(t)


def first_invalid_utf8(array) -> Optional[int]:
    """Index of the first value of ``array`` (string, large_string or dictionary<string>, or a
    ChunkedArray of them) that is not valid UTF-8, else None (always None for other types).
    Cheap when the text is valid: one full Arrow validation; the values are looked at one by
    one only when it fails."""
    if isinstance(array, pa.ChunkedArray):
        offset = 0
        for chunk in array.chunks:
            bad = first_invalid_utf8(chunk)
            if bad is not None:
                return offset + bad
            offset += len(chunk)
        return None
    if pa.types.is_dictionary(array.type):
        bad_entries = invalid_utf8_mask(array.dictionary)
        if bad_entries is None:
            return None
        indices = np.asarray(array.indices.fill_null(0), dtype=np.int64)
        return first_true(bad_entries[indices] & np.asarray(array.is_valid()))
    bad = invalid_utf8_mask(array)
    return None if bad is None else first_true(bad)


def accumulate_groups(rows: np.ndarray, nrefs: np.ndarray, inverse: np.ndarray, n_groups: int,
                      boot: Optional[np.ndarray] = None, name: Namer = _statistic) -> np.ndarray:
    """One accumulator per group: int64[n_groups, width] (``boot``: int64[n_groups, B, k])."""
    order = np.argsort(inverse, kind="stable")
    sorted_inv = inverse[order]
    starts = np.flatnonzero(np.r_[True, sorted_inv[1:] != sorted_inv[:-1]])
    k = rows.shape[1]
    nb = 0 if boot is None else boot.shape[1] * k
    out = np.empty((n_groups, k + nb + 3), dtype=np.int64)
    out[:, :k] = column_sums(rows[order], starts, what="the statistics of a group in a batch",
                             name=name)
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

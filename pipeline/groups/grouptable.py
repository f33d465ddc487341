"""Group tables: many groups' accumulators in one compact block, summed exactly (numpy + pyarrow, and
one CombineFn).

A :class:`GroupTable` holds the DISTINCT keys of one grouping set (an Arrow table: the set's key
columns, in order) and their accumulators (``int64[n, width]``, the layout of
:mod:`beambleu.groups.accumulate`: everything adds but the last two entries, ``nrefs_min``/``nrefs_max``, which
take min/max). A batch of rows becomes a few such blocks (one per shard, see :func:`shard_of`) instead
of one Python element per group, and :class:`GroupTableCombineFn` sums blocks with bounded pending
memory.

Key columns are normalised once: dictionaries are decoded, strings become ``large_string``, signed
integers and unsigned ones up to 32 bits ``int64``, ``uint64`` stays ``uint64``, an all-null column of
type ``null`` stays ``null``. Blocks whose column types differ are unified when merged (``null`` takes
the other type; ``int64`` with ``uint64`` gives ``int64`` if every value fits, else ``uint64`` if none
is negative, else ``TypeError``; a string with an integer is a ``TypeError``).

**Canonical order**: rows sorted by the key columns lexicographically, each column with nulls first,
then by value (integers by their numeric value, strings by their UTF-8 bytes, which is Python's
``str`` order). Every table's rows are distinct and in this order, so a merge gives the same table
whatever the order and grouping of its inputs. The order is defined once, by :func:`_order_arrays`:
:func:`canonical_order` (the sort), :func:`_compare` (row-wise, for merges and checks) and the final
k-way merge of sorted parts (:func:`beambleu.io.outputs.merged_parts`) all go through it; there is no
Python implementation of the order to keep in step.

A group key has one representation from the batch to the group table: a row of a normalised Arrow
key table (:func:`key_table`, made once per batch). It becomes Python values only to be written
into a group's JSON object (:func:`iter_rows`); the group table's key columns are cast from the
Arrow columns (:func:`beambleu.groups.results.part_table`).

Sums are checked: all additive entries are non-negative, each addition is one pair of them, so a
negative result is an overflow and raises ``OverflowError``.
"""

from __future__ import annotations

from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import accumulate

__all__ = ["INT64_MAX", "Columns", "GroupTable", "canonical_order", "count_not_above", "group_ids", "iter_rows",
           "key_column", "key_table", "key_type", "merge", "restore", "shard_of", "split_by_shard", "unify_keys"]

INT64_MAX = accumulate.INT64_MAX
_CHUNK = 1 << 16  # rows per vectorised step where a step allocates per-row temporaries
_WIDE = 1 << 10  # accumulators at least this wide (--confidence's replicate blocks) are added row by row
_RUNS = 64  # at most this many rows (or runs of rows) are moved one by one, more in one vectorised step

Columns = Union[pa.Table, Sequence[Union[pa.Array, pa.ChunkedArray]]]


# -- key columns -----------------------------------------------------------------------------------

def key_type(t: pa.DataType) -> pa.DataType:
    """The normalised type of a key column of Arrow type ``t`` (see the module doc); ``TypeError``
    for a type a group key cannot have (floats, bytes, booleans, views...: they have no canonical
    order here). The group table writes ``large_string`` as ``string``
    (:func:`beambleu.commands.run.key_types`)."""
    if pa.types.is_dictionary(t):
        t = t.value_type
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return pa.large_string()
    if pa.types.is_integer(t):
        return t if t == pa.uint64() else pa.int64()
    if pa.types.is_null(t):
        return t
    raise TypeError(f"a group key column must be {accumulate.GROUP_KEY_TYPES}, found {t}")


def key_column(col: Union[pa.Array, pa.ChunkedArray]) -> pa.Array:
    """One key column in its normalised type (:func:`key_type`), as a single-chunk array."""
    target = key_type(col.type)
    if pa.types.is_dictionary(col.type):
        col = col.cast(col.type.value_type)
    if col.type != target:
        col = col.cast(target)
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    return col


def key_table(keys: Columns, names: Optional[Sequence[str]] = None) -> pa.Table:
    if isinstance(keys, pa.Table):
        names, keys = keys.column_names, keys.columns
    if names is None:
        names = [str(i) for i in range(len(keys))]
    if not keys:
        raise ValueError("a group table needs at least one key column")
    return pa.table([key_column(c) for c in keys], names=list(names))


def _valid(col: pa.Array) -> np.ndarray:
    if col.null_count == 0:
        return np.ones(len(col), dtype=bool)
    return np.asarray(col.is_valid())


_ZERO = {pa.large_string(): "", pa.int64(): 0, pa.uint64(): 0}


def _order_arrays(col: pa.Array, validity: bool) -> List[pa.Array]:
    """THE canonical order, defined once (every sort and every comparison of keys, in this module
    and in :func:`beambleu.io.outputs.merged_parts`, goes through here): a normalised key column as
    null-free Arrow arrays whose lexicographic ascending order, by Arrow's own comparison of their
    types (``bool``: false < true; ``int64``/``uint64``: numeric; ``large_string``: UTF-8 bytes,
    unsigned, a prefix first), is the column's canonical order: its validity (nulls first; left out
    when ``validity`` is false, i.e. when no row compared is null) and its values with nulls set to
    the type's zero. A ``null`` column has none (all its rows are equal)."""
    if pa.types.is_null(col.type):
        return []
    values = col if col.null_count == 0 else col.fill_null(_ZERO[col.type])
    return [pa.array(_valid(col)), values] if validity else [values]


def canonical_order(keys: Columns) -> np.ndarray:
    """The permutation (int64 indices) that puts the rows of ``keys`` in canonical order: Arrow's
    stable sort over :func:`_order_arrays` (equal keys keep their input order)."""
    table = key_table(keys)
    arrays = [a for col in table.columns for a in _order_arrays(col.chunk(0), col.null_count > 0)]
    if not arrays:
        return np.arange(table.num_rows, dtype=np.int64)
    names = [str(i) for i in range(len(arrays))]
    order = pc.sort_indices(pa.table(arrays, names=names), sort_keys=[(n, "ascending") for n in names])
    return np.asarray(order).astype(np.int64, copy=False)


def _compare(a: pa.Table, b: pa.Table) -> Tuple[np.ndarray, np.ndarray]:
    """Row-wise lexicographic (a < b, a == b) of two key tables of equal length and types: Arrow's
    comparison kernels over the same :func:`_order_arrays` that :func:`canonical_order` sorts."""
    lt = np.zeros(a.num_rows, dtype=bool)
    eq = np.ones(a.num_rows, dtype=bool)
    for x, y in zip(a.columns, b.columns):
        x, y = x.combine_chunks(), y.combine_chunks()
        validity = x.null_count > 0 or y.null_count > 0
        for p, q in zip(_order_arrays(x, validity), _order_arrays(y, validity)):
            lt |= eq & np.asarray(pc.less(p, q))
            eq &= np.asarray(pc.equal(p, q))
    return lt, eq


def group_ids(keys: Columns) -> Tuple[np.ndarray, np.ndarray]:
    """``(inverse, first)``: each row's group number, groups numbered in canonical key order, and
    the first row of each group. Exact for any number of columns and values: each column's
    distinct values (Arrow's hash of the exact bytes or integers) are ranked by
    :func:`canonical_order`, and the rows' tuples of ranks, numbered densely column by column (a
    number that keeps the tuples' lexicographic order), are grouped with numpy's stable
    ``unique``: the keys themselves (strings) are compared only among a column's distinct values;
    the rows are sorted by their integer codes."""
    table = key_table(keys)
    n = table.num_rows
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    codes, size = np.zeros(n, dtype=np.int64), 1
    for col in table.columns:
        if pa.types.is_null(col.type):
            continue  # every row equal
        encoded = pc.dictionary_encode(col.chunk(0), null_encoding="encode")  # a null is one more value
        values = encoded.dictionary
        rank = np.empty(len(values), dtype=np.int64)
        rank[canonical_order([values])] = np.arange(len(values), dtype=np.int64)
        codes = codes * len(values) + rank[np.asarray(encoded.indices)]
        size *= len(values)
        if size > 1 << 31:  # numbered densely again (in order), so that the next column cannot overflow
            distinct, codes = np.unique(codes, return_inverse=True)
            size = len(distinct)
    _, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
    return inverse.reshape(-1).astype(np.int64, copy=False), first.astype(np.int64, copy=False)


def count_not_above(keys: pa.Table, bound: pa.Table) -> int:
    """How many rows of ``keys`` (normalised, in canonical order) are at most the one row of
    ``bound`` (same types): a binary search with :func:`_compare`."""
    below, found = _lower_bound(keys, bound)
    return int(below[0]) + int(found[0])


# -- the table -------------------------------------------------------------------------------------

class GroupTable:
    """Distinct keys of one grouping set, in canonical order, and their accumulators.

    ``GroupTable(keys, accs)`` checks that the keys are distinct and in canonical order (build from
    unsorted rows with :meth:`from_rows`); accumulator entries must be non-negative."""

    __slots__ = ("keys", "accs")

    def __init__(self, keys: Columns, accs: np.ndarray, names: Optional[Sequence[str]] = None):
        keys = key_table(keys, names)
        accs = np.ascontiguousarray(accs, dtype=np.int64)
        if accs.ndim != 2 or accs.shape[0] != keys.num_rows or accs.shape[1] < 3:
            raise ValueError(f"accumulators of shape {accs.shape} for {keys.num_rows} keys")
        if keys.num_rows > 1:
            lt, _ = _compare(keys.slice(0, keys.num_rows - 1), keys.slice(1))
            if not lt.all():
                raise ValueError("group keys must be distinct and in canonical order (use GroupTable.from_rows)")
        self.keys, self.accs = keys, accs

    @classmethod
    def _make(cls, keys: pa.Table, accs: np.ndarray) -> "GroupTable":
        """Without checks: ``keys`` already normalised, distinct and in canonical order."""
        table = cls.__new__(cls)
        table.keys, table.accs = keys.combine_chunks(), accs
        return table

    @classmethod
    def from_rows(cls, keys: Columns, stats: np.ndarray, nrefs: np.ndarray, boot: Optional[np.ndarray] = None,
                  groups: Optional[Tuple[np.ndarray, np.ndarray]] = None,
                  names: Optional[Sequence[str]] = None) -> "GroupTable":
        """The groups of a batch: ``keys`` one row per pair (Arrow columns or table), ``stats``
        int64[n, k] and ``nrefs`` int64[n] per pair; ``boot`` int64[n_groups, B, k] per group in the
        order of ``groups = group_ids(keys)`` (pass ``groups`` when it was computed already)."""
        table = key_table(keys, names)
        inverse, first = groups if groups is not None else group_ids(table)
        accs = accumulate.accumulate_groups(stats, nrefs, inverse, len(first), boot)
        return cls._make(table.take(first), accs)

    @property
    def names(self) -> List[str]:
        return self.keys.column_names

    @property
    def width(self) -> int:
        return self.accs.shape[1]

    @property
    def nbytes(self) -> int:
        return self.keys.nbytes + self.accs.nbytes

    def __len__(self) -> int:
        return self.accs.shape[0]

    def __eq__(self, other) -> bool:
        return (isinstance(other, GroupTable) and self.keys.equals(other.keys)
                and np.array_equal(self.accs, other.accs))

    __hash__ = None

    def __repr__(self) -> str:
        return f"GroupTable({len(self)} keys of {self.names}, width {self.width})"

    def __reduce__(self):
        return restore, (_ipc_bytes(self.keys), _pack_accs(self.accs))


def _ipc_bytes(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


_NARROW = (np.uint8, np.uint16, np.uint32, np.int64)
#: the largest value of each narrow type but the last (a column above them all stays int64)
_NARROW_TOPS = np.array([np.iinfo(t).max for t in _NARROW[:-1]], dtype=np.int64)


def _pack_accs(accs: np.ndarray) -> Tuple[int, int, bytes, bytes]:
    """Each column in the narrowest of uint8/16/32 that holds it (else int64): the columns' codes,
    then the columns of each code in turn (uint8 first), row by row. A few numpy calls whatever the
    width (with ``--confidence`` an accumulator has k x (B + 1) + 3 columns), one pass for the
    codes: a column's bitwise OR is negative when one of its entries is, and otherwise below
    2**8, 2**16 or 2**32 exactly when its largest entry is."""
    n, w = accs.shape
    codes = np.full(w, 3, dtype=np.uint8)
    if n:
        bits = np.bitwise_or.reduce(accs, axis=0)
        narrow = bits >= 0
        codes[narrow] = np.searchsorted(_NARROW_TOPS, bits[narrow], side="left")
    parts = []
    for code, t in enumerate(_NARROW):
        cols = np.flatnonzero(codes == code)
        if len(cols):
            parts.append(np.take(accs, cols, axis=1).astype(t).tobytes())
    return n, w, codes.tobytes(), b"".join(parts)


def restore(keys_ipc: bytes, packed: Tuple[int, int, bytes, bytes]) -> GroupTable:
    keys = pa.ipc.open_stream(keys_ipc).read_all()
    n, w, codes, data = packed
    codes = np.frombuffer(codes, dtype=np.uint8)
    accs = np.empty((n, w), dtype=np.int64)
    at = 0
    for code, t in enumerate(_NARROW):
        cols = np.flatnonzero(codes == code)
        if len(cols):
            count = n * len(cols)
            accs[:, cols] = np.frombuffer(data, dtype=t, count=count, offset=at).reshape(n, len(cols))
            at += count * np.dtype(t).itemsize
    return GroupTable._make(keys, accs)


# -- merging ---------------------------------------------------------------------------------------

def _unified_type(types: List[pa.DataType], columns: List[pa.Array], name: str) -> pa.DataType:
    kinds = {t for t in types if not pa.types.is_null(t)}
    if len(kinds) <= 1:
        return kinds.pop() if kinds else pa.null()
    if kinds != {pa.int64(), pa.uint64()}:
        raise TypeError(f"group key column {name!r} has values of types {sorted(map(str, kinds))}")
    big = any(c.type == pa.uint64() and len(c) and (pc.max(c).as_py() or 0) > INT64_MAX for c in columns)
    if not big:
        return pa.int64()
    if any(c.type == pa.int64() and len(c) and (pc.min(c).as_py() or 0) < 0 for c in columns):
        raise TypeError(f"group key column {name!r} holds negative integers and integers above 2**63-1")
    return pa.uint64()


def unify_keys(keys: List[pa.Table]) -> List[pa.Table]:
    """Normalised key tables of the same column names, cast to one type per column (see the module
    doc); a table already of those types is returned as it is."""
    targets = []
    for j, name in enumerate(keys[0].column_names):
        cols = [k.column(j).combine_chunks() for k in keys]
        targets.append(_unified_type([c.type for c in cols], cols, name))
    schema = pa.schema([(name, typ) for name, typ in zip(keys[0].column_names, targets)])
    return [k if k.schema.equals(schema) else k.cast(schema) for k in keys]


def _unify(tables: List[GroupTable]) -> List[GroupTable]:
    """The tables with one key type per column (see the module doc)."""
    names, width = tables[0].names, tables[0].width
    for t in tables[1:]:
        if t.names != names or t.width != width:
            raise ValueError(f"cannot merge group tables of keys {t.names} (width {t.width}) "
                             f"and {names} (width {width})")
    keys = unify_keys([t.keys for t in tables])
    return [t if k is t.keys else GroupTable._make(k, t.accs) for t, k in zip(tables, keys)]


def _zeros(n: int, width: int) -> np.ndarray:
    out = np.zeros((n, width), dtype=np.int64)
    out[:, -2] = INT64_MAX
    return out


def _add_rows(out: np.ndarray, index: np.ndarray, accs: np.ndarray, rows: Optional[np.ndarray] = None) -> None:
    """out[index] (+)= accs[rows] (``rows``: every row when None), checked; ``index`` holds no
    repeats. A few wide rows (replicate blocks) add in place, row by row; others in chunks of
    gathered rows. On OverflowError ``out`` may be partly updated."""
    if out.shape[1] >= _WIDE and len(index) <= _RUNS:
        for i, r in zip(index.tolist(), range(len(index)) if rows is None else rows.tolist()):
            o, a = out[i], accs[r]
            np.add(o[:-2], a[:-2], out=o[:-2])
            if o[:-2].min(initial=0) < 0:
                raise OverflowError("a group's statistics overflow 64-bit integers")
            o[-2], o[-1] = min(o[-2], a[-2]), max(o[-1], a[-1])
        return
    if rows is not None:
        accs = accs[rows]
    for s in range(0, len(index), _CHUNK):
        i, a = index[s:s + _CHUNK], accs[s:s + _CHUNK]
        cur = out[i]
        np.add(cur[:, :-2], a[:, :-2], out=cur[:, :-2])
        if (cur[:, :-2] < 0).any():
            raise OverflowError("a group's statistics overflow 64-bit integers")
        np.minimum(cur[:, -2], a[:, -2], out=cur[:, -2])
        np.maximum(cur[:, -1], a[:, -1], out=cur[:, -1])
        out[i] = cur


def _sum_aligned(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a`` (+)= ``b`` row for row into a new matrix, checked as :func:`_add_rows` checks."""
    out = np.empty_like(a)
    np.add(a[:, :-2], b[:, :-2], out=out[:, :-2])
    if out.size and out[:, :-2].min(initial=0) < 0:
        raise OverflowError("a group's statistics overflow 64-bit integers")
    np.minimum(a[:, -2], b[:, -2], out=out[:, -2])
    np.maximum(a[:, -1], b[:, -1], out=out[:, -1])
    return out


def _group_sum(tables: List[GroupTable]) -> GroupTable:
    """Sort-based merge of (unified) tables: cost O(total rows log total rows)."""
    keys = pa.concat_tables([t.keys for t in tables]).combine_chunks()
    inverse, first = group_ids(keys)
    out = _zeros(len(first), tables[0].width)
    at = 0
    for t in tables:
        _add_rows(out, inverse[at:at + len(t)], t.accs)
        at += len(t)
    return GroupTable._make(keys.take(first), out)


def _lower_bound(big: pa.Table, small: pa.Table) -> Tuple[np.ndarray, np.ndarray]:
    """For each row of ``small``: how many rows of ``big`` (canonical order) are below it, and whether
    the row there equals it. A vectorised binary search: O(len(small) log len(big)) comparisons."""
    g, p = big.num_rows, small.num_rows
    lo, hi = np.zeros(p, dtype=np.int64), np.full(p, g, dtype=np.int64)
    for _ in range(g.bit_length()):
        active = np.flatnonzero(lo < hi)
        if not len(active):
            break
        mid = (lo[active] + hi[active]) // 2
        lt, _ = _compare(big.take(mid), small.take(active))
        lo[active[lt]] = mid[lt] + 1
        hi[active[~lt]] = mid[~lt]
    found = np.zeros(p, dtype=bool)
    inside = np.flatnonzero(lo < g)
    if len(inside):
        found[inside] = _compare(big.take(lo[inside]), small.take(inside))[1]
    return lo, found


def _merge_pair(big: GroupTable, small: GroupTable) -> GroupTable:
    """Merge a small table into a big one without sorting the big one: O(len(big)) copying."""
    pos, found = _lower_bound(big.keys, small.keys)
    if len(small) == len(big) and found.all():
        # the same keys (both distinct and in canonical order): row j adds to row j, one pass over
        # whole columns (with --confidence an accumulator is k x (B + 1) + 3 wide)
        return GroupTable._make(big.keys, _sum_aligned(big.accs, small.accs))
    new = np.flatnonzero(~found)
    g, n_new = len(big), len(new)
    big_at = np.arange(g, dtype=np.int64)
    big_at += np.searchsorted(pos[new], big_at, side="right")
    new_at = pos[new] + np.arange(n_new, dtype=np.int64)
    source = np.empty(g + n_new, dtype=np.int64)
    source[big_at] = np.arange(g)
    source[new_at] = g + np.arange(n_new)
    keys = pa.concat_tables([big.keys, small.keys.take(new)]).take(source)
    out = np.empty((g + n_new, big.width), dtype=np.int64)
    _copy_rows(out, big_at, big.accs)
    _copy_rows(out, new_at, small.accs, new)
    matched = np.flatnonzero(found)
    _add_rows(out, big_at[pos[matched]], small.accs, matched)
    return GroupTable._make(keys, out)


def _copy_rows(out: np.ndarray, index: np.ndarray, accs: np.ndarray, rows: Optional[np.ndarray] = None) -> None:
    """``out[index] = accs[rows]`` (``rows``: every row when None; both ascending): each row copied
    once, a run of rows consecutive in both as one slice, with no gathered copy in between."""
    if not len(index):
        return
    if rows is None:
        rows = np.arange(len(accs))
    cuts = (np.flatnonzero((np.diff(index) != 1) | (np.diff(rows) != 1)) + 1).tolist()
    if len(cuts) > _RUNS:
        out[index] = accs[rows]
        return
    for a, b in zip([0] + cuts, cuts + [len(index)]):
        i, r = int(index[a]), int(rows[a])
        out[i:i + b - a] = accs[r:r + b - a]


def merge(tables: Iterable[GroupTable]) -> GroupTable:
    """The sum of group tables of one grouping set: keys distinct, in canonical order, accumulators
    merged exactly (``OverflowError`` on overflow). Commutative and associative; inputs are not
    modified. The largest input is merged with the sum of the others by binary search, so adding a
    few rows to a large table costs one copy of it, not a sort."""
    tables = list(tables)
    if not tables:
        raise ValueError("merge needs at least one group table")
    tables = _unify(tables)
    if len(tables) == 1:
        return tables[0]
    i_big = max(range(len(tables)), key=lambda i: len(tables[i]))
    rest = tables[:i_big] + tables[i_big + 1:]
    small = rest[0] if len(rest) == 1 else _group_sum(rest)
    return _merge_pair(tables[i_big], small)


# -- shards ----------------------------------------------------------------------------------------

_M1, _M2, _P = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB), np.uint64(0x100000001B3)
_SEED_INT, _SEED_BYTE = np.uint64(0x9E3779B97F4A7C15), np.uint64(0x632BE59BD9B4E019)
_SEED_LEN = np.uint64(0x85EBCA77C2B2AE63)
_NULL_HASH = np.uint64(0x27D4EB2F165667C5)


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser (a bijection of uint64 with good avalanche), on a uint64 array."""
    x = x ^ (x >> np.uint64(30))
    x *= _M1
    x ^= x >> np.uint64(27)
    x *= _M2
    x ^= x >> np.uint64(31)
    return x


def _string_hash(col: pa.Array) -> np.ndarray:
    """uint64 per row from the UTF-8 bytes (a ``large_string`` array): the sum of one mixed value
    per (position, byte), mixed with the length."""
    n = len(col)
    offsets = np.frombuffer(col.buffers()[1], dtype=np.int64)[col.offset:col.offset + n + 1]
    data = col.buffers()[2]
    data = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, dtype=np.uint8)
    base = offsets[0]
    lengths = np.diff(offsets)
    pos = np.arange(offsets[-1] - base, dtype=np.int64) - np.repeat(offsets[:-1] - base, lengths)
    byte = data[base:offsets[-1]].astype(np.uint64)
    per_byte = _mix((pos.astype(np.uint64) << np.uint64(8) | byte) ^ _SEED_BYTE)
    sums = np.zeros(len(per_byte) + 1, dtype=np.uint64)
    np.cumsum(per_byte, out=sums[1:])
    return _mix((sums[offsets[1:] - base] - sums[offsets[:-1] - base]) ^ _mix(lengths.astype(np.uint64) ^ _SEED_LEN))


def _column_hash(col: pa.Array) -> np.ndarray:
    if pa.types.is_null(col.type):
        return np.full(len(col), _NULL_HASH, dtype=np.uint64)
    if pa.types.is_large_string(col.type):
        h = _string_hash(col)
    else:
        h = _mix(np.asarray(col.fill_null(0)).view(np.uint64) ^ _SEED_INT)
    if col.null_count:
        h[~_valid(col)] = _NULL_HASH
    return h


def shard_of(keys: Columns, n_shards: int, exclude: Optional[Union[str, int]] = None) -> np.ndarray:
    """int64 shard number in ``[0, n_shards)`` per row, a fixed function of the key values (not of the
    process, the run, the Arrow type width or dictionary encoding); ``exclude`` (a column name or
    index) is left out, so rows equal on the other columns share a shard."""
    table = key_table(keys)
    skip = table.column_names.index(exclude) if isinstance(exclude, str) else exclude
    cols = [c.chunk(0) for j, c in enumerate(table.columns) if j != skip]
    out = np.empty(table.num_rows, dtype=np.int64)
    for s in range(0, table.num_rows, _CHUNK):
        h = np.zeros(min(_CHUNK, table.num_rows - s), dtype=np.uint64)
        for col in cols:
            h = _mix(h * _P ^ _column_hash(col.slice(s, _CHUNK)))
        out[s:s + len(h)] = (h % np.uint64(n_shards)).astype(np.int64)
    return out


def split_by_shard(table: GroupTable, shards: np.ndarray) -> Dict[int, GroupTable]:
    """The table's rows by shard number (each part keeps the canonical order)."""
    shards = np.asarray(shards, dtype=np.int64)
    if len(shards) and (shards == shards[0]).all():  # one shard (e.g. a set grouped by the system alone)
        return {int(shards[0]): table}
    order = np.argsort(shards, kind="stable")
    ordered = shards[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]) if len(order) else []
    ends = list(starts[1:]) + [len(order)]
    return {int(ordered[a]): GroupTable._make(table.keys.take(order[a:b]), table.accs[order[a:b]])
            for a, b in zip(starts, ends)}


# -- rows and Parquet parts ------------------------------------------------------------------------

def iter_rows(table: GroupTable, batch_rows: int = _CHUNK) -> Iterator[Tuple[tuple, np.ndarray]]:
    """``(key tuple, accumulator)`` per group, in the table's (canonical) order."""
    for s in range(0, len(table), batch_rows):
        keys = table.keys.slice(s, batch_rows)
        yield from zip(zip(*(c.to_pylist() for c in keys.columns)), table.accs[s:s + batch_rows])

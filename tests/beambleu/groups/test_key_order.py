"""The canonical order of group keys, checked against rules stated here by hand (not the code).

The rules (beambleu.groups.grouptable's module doc): rows compare column by column, the first column
that differs decides; in a column a null comes before every value; integers compare by their
numeric value (whatever their Arrow width or signedness: int8 .. int64, uint8 .. uint64, and an
int64 column merged with a uint64 one); strings by the bytes of their UTF-8 encoding, unsigned,
a prefix before its extensions (so code-point order: U+FFFF before U+10000, which UTF-16 order
would reverse; "a" before "a\\x00"; "" before "a"; null before ""); dictionary-encoded strings by
their values, never their indices; a column of Arrow type null holds only nulls (all equal).
Group keys cannot be floats or bytes (so NaN, negative zero and bytes-vs-str never arise): such
columns are refused.

Every place that orders keys must follow the rules: the sort (``canonical_order``, ``group_ids``),
the row-wise comparison (``_compare``, used by merges' binary search and by ``GroupTable``'s check),
merges of tables, the CombineFn, and the final k-way merge of sorted Parquet parts
(``outputs.merged_parts``), which used to have an order of its own in Python.
"""

import functools
import itertools
import pickle
import random

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from beambleu.beam.combine import GroupTableCombineFn
from beambleu.groups import grouptable as gt

TRICKY = ["", "a", "a\x00", "a\x00b", "ab", "b", "Z", "é", "\u00ff", "\u0100", "\u07ff", "\u0800", "\uffff",
          "\U00010000", "😀", "\U0010ffff", "中文", "\x00", "\x7f", "\x80"]
INTS = [-2**63, -2**31 - 1, -1, 0, 1, 2**31, 2**63 - 1]
UINTS = [0, 1, 2**32, 2**63 - 1, 2**63, 2**64 - 1]

#: column kind -> (Arrow type, values)
KINDS = {
    "int64": (pa.int64(), st.one_of(st.sampled_from(INTS), st.integers(-2**63, 2**63 - 1))),
    "int8": (pa.int8(), st.integers(-128, 127)),
    "uint32": (pa.uint32(), st.integers(0, 2**32 - 1)),
    "uint64": (pa.uint64(), st.one_of(st.sampled_from(UINTS), st.integers(0, 2**64 - 1))),
    "string": (pa.string(), st.one_of(st.sampled_from(TRICKY), st.text(max_size=3))),
    "large_string": (pa.large_string(), st.one_of(st.sampled_from(TRICKY), st.text(max_size=3))),
    "dictionary": (pa.dictionary(pa.int8(), pa.string()), st.sampled_from(TRICKY)),
    "null": (pa.null(), st.none()),
}


def hand_compare_value(x, y) -> int:
    """-1, 0, 1 for two values of one column, from the rules above."""
    if x is None or y is None:
        return (x is not None) - (y is not None)
    if isinstance(x, str):
        bx, by = x.encode("utf-8"), y.encode("utf-8")
        for p, q in zip(bx, by):  # unsigned bytes, the first difference decides
            if p != q:
                return -1 if p < q else 1
        return (len(bx) > len(by)) - (len(bx) < len(by))  # a prefix first
    return (x > y) - (x < y)


def hand_compare(a: tuple, b: tuple) -> int:
    for x, y in zip(a, b):
        c = hand_compare_value(x, y)
        if c:
            return c
    return 0


hand_key = functools.cmp_to_key(hand_compare)


def arrow_column(typ, values):
    if pa.types.is_dictionary(typ):
        # the dictionary in reverse order of first appearance: its indices are not the value order
        distinct = list(dict.fromkeys(v for v in values if v is not None))[::-1]
        indices = pa.array([None if v is None else distinct.index(v) for v in values], pa.int8())
        return pa.DictionaryArray.from_arrays(indices, pa.array(distinct, pa.string()))
    return pa.array(values, typ)


def arrow_keys(types, rows):
    return pa.table([arrow_column(t, [r[j] for r in rows]) for j, t in enumerate(types)],
                    names=[f"c{j}" for j in range(len(types))])


@st.composite
def key_rows(draw, min_size=1, max_size=30):
    kinds = draw(st.lists(st.sampled_from(sorted(KINDS)), min_size=1, max_size=3))
    types = [KINDS[k][0] for k in kinds]
    pool = draw(st.lists(st.tuples(*(st.none() | KINDS[k][1] for k in kinds)), min_size=1, max_size=12))
    rows = draw(st.lists(st.sampled_from(pool), min_size=min_size, max_size=max_size))
    return types, rows


def hand_sorted_distinct(rows):
    out = []
    for r in sorted(rows, key=hand_key):
        if not out or hand_compare(out[-1], r):
            out.append(r)
    return out


def accs_for(n, first=0):
    accs = np.zeros((n, 7), dtype=np.int64)
    accs[:, 0] = np.arange(first, first + n)
    accs[:, 4] = 1
    accs[:, 5] = accs[:, 6] = 1
    return accs


SETTINGS = dict(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@settings(**SETTINGS)
@given(key_rows())
def test_sort_and_row_compare_follow_the_hand_rules(case):
    types, rows = case
    keys = arrow_keys(types, rows)
    order = gt.canonical_order(keys)
    assert [rows[i] for i in order] == sorted(rows, key=hand_key)  # stable: equal keys keep their order
    inverse, first = gt.group_ids(keys)
    distinct = hand_sorted_distinct(rows)
    assert [rows[i] for i in first] == distinct
    # each group's row is its first: the lowest row whose key equals it by the hand rules
    assert first.tolist() == [next(i for i, r in enumerate(rows) if hand_compare(r, d) == 0) for d in distinct]
    assert [distinct.index(r) for r in rows] == inverse.tolist()
    # every pair of rows, through the row-wise comparison the merges' binary search uses
    normal = gt.key_table(keys)
    pairs = list(itertools.product(range(len(rows)), repeat=2))[:400]
    left = normal.take([i for i, _ in pairs])
    right = normal.take([j for _, j in pairs])
    lt, eq = gt._compare(left, right)
    expected = [hand_compare(rows[i], rows[j]) for i, j in pairs]
    assert lt.tolist() == [c < 0 for c in expected]
    assert eq.tolist() == [c == 0 for c in expected]


def test_group_ids_of_many_columns_of_many_values_follow_the_hand_rules():
    """Five columns of thousands of distinct values each: the product of their numbers of values
    (above 2**63) does not fit in int64, so the rows' codes must be numbered again on the way."""
    rnd = random.Random(20261207)
    tricky_s = ["", "a", "a\x00", "é", "\U0001f600"]
    tricky_i, tricky_u = [-2**63, -1, 0, 1, 2**63 - 1], [0, 2**63, 2**64 - 1]
    n = 12000
    columns = [[rnd.choice(tricky_s + [None]) if rnd.random() < 0.01 else f"w{rnd.randrange(10**9)}" for _ in range(n)],
               [rnd.choice(tricky_i) if rnd.random() < 0.01 else rnd.randrange(-2**63, 2**63) for _ in range(n)],
               [rnd.choice(tricky_u) if rnd.random() < 0.01 else rnd.randrange(2**64) for _ in range(n)],
               [rnd.choice(tricky_s) if rnd.random() < 0.01 else f"v{rnd.randrange(10**9)}" for _ in range(n)],
               [rnd.randrange(-10**12, 10**12) for _ in range(n)]]
    rows = list(zip(*columns))
    rows += rows[:3000]  # some keys twice
    rnd.shuffle(rows)
    types = [pa.large_string(), pa.int64(), pa.uint64(), pa.string(), pa.int64()]
    inverse, first = gt.group_ids(arrow_keys(types, rows))
    distinct = sorted(set(rows), key=hand_key)  # (no two distinct tuples compare equal here: no ints mixed)
    number = {r: i for i, r in enumerate(distinct)}
    assert inverse.tolist() == [number[r] for r in rows]
    first_row = {}
    for i, r in enumerate(rows):
        first_row.setdefault(r, i)
    assert first.tolist() == [first_row[r] for r in distinct]


@settings(**SETTINGS)
@given(key_rows(min_size=2))
def test_a_group_table_accepts_exactly_the_hand_sorted_distinct_keys(case):
    types, rows = case
    distinct = hand_sorted_distinct(rows)
    table = gt.GroupTable(arrow_keys(types, distinct), accs_for(len(distinct)))
    assert [k for k, _ in gt.iter_rows(table)] == distinct
    if len(distinct) > 1:
        i = len(distinct) // 2
        swapped = distinct[:i - 1] + [distinct[i], distinct[i - 1]] + distinct[i + 1:]
        with pytest.raises(ValueError, match="canonical order"):
            gt.GroupTable(arrow_keys(types, swapped), accs_for(len(swapped)))


@settings(**SETTINGS)
@given(key_rows(min_size=2, max_size=40), st.randoms(use_true_random=False))
def test_merges_and_the_combine_fn_follow_the_hand_rules(case, rnd):
    """Tables merged by binary search into the biggest (``_merge_pair``) and by a sort of the rest
    (``_group_sum``), pickled on the way as Beam does."""
    types, rows = case
    distinct = hand_sorted_distinct(rows)
    pieces = [[r for r in distinct if rnd.random() < 0.5] for _ in range(rnd.randint(1, 4))]
    pieces = [p for p in pieces if p] or [distinct]
    tables = [pickle.loads(pickle.dumps(gt.GroupTable(arrow_keys(types, p), accs_for(len(p)))))
              for p in pieces]
    expect = [r for r in distinct if any(r in p for p in pieces)]
    assert [k for k, _ in gt.iter_rows(gt.merge(tables))] == expect
    fn = GroupTableCombineFn(min_pending_bytes=0, pending_ratio=0.5)
    acc = fn.add_inputs(fn.create_accumulator(), tables)
    assert [k for k, _ in gt.iter_rows(fn.extract_output(acc))] == expect


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(-2**63, -1), st.integers(0, 2**63 - 1)), min_size=1, max_size=10),
       st.lists(st.one_of(st.none(), st.integers(0, 2**64 - 1)), min_size=1, max_size=10))
def test_int64_and_uint64_columns_merge_in_numeric_order(signed, unsigned):
    fits = all(v is None or v < 2**63 for v in unsigned)
    if not fits and any(v is not None and v < 0 for v in signed):
        signed = [None if v is None else abs(v) for v in signed]
    a = hand_sorted_distinct([(v,) for v in signed])
    b = hand_sorted_distinct([(v,) for v in unsigned])
    merged = gt.merge([gt.GroupTable(arrow_keys([pa.int64()], a), accs_for(len(a))),
                       gt.GroupTable(arrow_keys([pa.uint64()], b), accs_for(len(b)))])
    assert [k for k, _ in gt.iter_rows(merged)] == hand_sorted_distinct(a + b)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(key_rows(min_size=1, max_size=60), st.integers(1, 5), st.integers(1, 4), st.integers(1, 7))
def test_the_final_merge_of_parts_follows_the_hand_rules(tmp_path_factory, case, n_parts, batch_rows, chunk_rows):
    """outputs.merged_parts on parts written as the pipeline writes them (key columns in the group
    table's types: string, int64, uint64), read a few rows at a time, so that most rounds of the
    merge stop at a bound inside the parts."""
    from beambleu.io.outputs import merged_parts

    types, rows = case
    distinct = hand_sorted_distinct(rows)
    table = gt.GroupTable(arrow_keys(types, distinct), accs_for(len(distinct)))
    table_types = {pa.large_string(): pa.string(), pa.null(): pa.string()}
    folder = tmp_path_factory.mktemp("parts")
    paths = []
    for s, part in gt.split_by_shard(table, gt.shard_of(table.keys, n_parts)).items():
        keys = part.keys.cast(pa.schema([(f.name, table_types.get(f.type, f.type)) for f in part.keys.schema]))
        paths.append(str(folder / f"part-{s}.parquet"))
        pq.write_table(keys.append_column("first", pa.array(part.accs[:, 0])), paths[-1], row_group_size=2)
    names = table.names
    got, firsts = [], []
    for chunk in merged_parts(paths, names, chunk_rows=chunk_rows, batch_rows=batch_rows):
        got += list(zip(*(chunk.column(n).to_pylist() for n in names)))
        firsts += chunk.column("first").to_pylist()
    assert got == distinct
    assert firsts == list(range(len(distinct)))


@pytest.mark.parametrize("typ, values", [(pa.float64(), [0.0, -0.0, float("nan")]), (pa.binary(), [b"a", b"b"]),
                                         (pa.bool_(), [True, False])])
def test_keys_that_have_no_canonical_order_are_refused(typ, values):
    with pytest.raises(TypeError, match="group key column must be"):
        gt.group_ids([pa.array(values, typ)])


def test_the_group_table_part_from_arrow_keys_equals_the_one_from_python_values():
    """results.part_table casts the Arrow keys to the table's types; the Python values in the JSON
    objects would give the same table, byte for byte."""
    from beambleu.groups import results
    from bleu_core.protocol import MetricSet
    from bleu_core import Bleu

    keys = arrow_keys([pa.large_string(), pa.int64(), pa.uint64()],
                      hand_sorted_distinct([(s, i, u) for s in ["", None, "é", "\U00010000"]
                                            for i in [None, -1, 2**63 - 1] for u in [None, 2**64 - 1]]))
    keys = keys.rename_columns(["doc", "n", "u"])
    bleu = np.array([5, 6, 4, 3, 2, 1, 5, 4, 3, 2, 1, 1, 1], dtype=np.int64)  # c, r, matches, totals; pairs, nrefs
    accs = np.tile(bleu, (keys.num_rows, 1))
    accs[:, 0] += np.arange(keys.num_rows)
    table = gt.GroupTable(keys, accs)
    metrics = MetricSet([Bleu()])
    layout = results.TableLayout({"doc": pa.string(), "n": pa.int64(), "u": pa.uint64(), "other": pa.string()},
                                 metrics)
    docs = [{"group_by": ["doc", "n", "u"], "key": dict(zip(["doc", "n", "u"], key)),
             **results.group_doc(metrics, acc)} for key, acc in gt.iter_rows(table)]
    from_arrow = results.part_table(docs, layout, table.accs, table.keys)
    from_python = results.part_table(docs, layout, table.accs)
    assert from_arrow.schema.equals(from_python.schema, check_metadata=True)
    assert from_arrow.equals(from_python)
    sink_a, sink_b = pa.BufferOutputStream(), pa.BufferOutputStream()
    pq.write_table(from_arrow, sink_a)
    pq.write_table(from_python, sink_b)
    assert sink_a.getvalue() == sink_b.getvalue()

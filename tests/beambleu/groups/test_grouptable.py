"""beambleu.groups.grouptable: exact block merges against a pure-Python group-by, stable shards, sorted parts."""

import os
import pickle
import random
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from beambleu.beam.combine import GroupTableCombineFn
from beambleu.groups import grouptable as gt

ROOT = Path(__file__).resolve().parents[3]
K = 4  # statistics per pair in these tests; accumulator width K + 3

INT64 = [-2**63, -1, 0, 1, 2**63 - 1]
UINT64 = [0, 1, 2**63 - 1, 2**63, 2**64 - 1]
TEXT = ["", "a", "b", "é", "中文", "\x00", "a\x00", "😀", "Z"]
KINDS = {
    "int64": (pa.int64(), st.one_of(st.sampled_from(INT64), st.integers(-2**63, 2**63 - 1))),
    "int32": (pa.int32(), st.integers(-2**31, 2**31 - 1)),
    "uint64": (pa.uint64(), st.one_of(st.sampled_from(UINT64), st.integers(0, 2**64 - 1))),
    "string": (pa.string(), st.one_of(st.sampled_from(TEXT), st.text(max_size=4))),
    "large_string": (pa.large_string(), st.one_of(st.sampled_from(TEXT), st.text(max_size=4))),
    "dictionary": (pa.dictionary(pa.int32(), pa.string()), st.sampled_from(TEXT)),
    "null": (pa.null(), st.none()),
}


def py_order(key):
    """Canonical order written out: per column nulls first, then by value (str: code points)."""
    return tuple((v is not None, 0 if v is None else v) for v in key)


def py_group_by(rows):
    """rows: (key tuple, stats list, nrefs) -> [(key, [sum stats..., n_pairs, min nrefs, max nrefs])], sorted."""
    out = {}
    for key, stats, nrefs in rows:
        acc = out.setdefault(key, [0] * K + [0, 2**63 - 1, 0])
        for j in range(K):
            acc[j] += stats[j]
        acc[K] += 1
        acc[K + 1] = min(acc[K + 1], nrefs)
        acc[K + 2] = max(acc[K + 2], nrefs)
    return sorted(out.items(), key=lambda kv: py_order(kv[0]))


def table_rows(table):
    return [(key, acc.tolist()) for key, acc in gt.iter_rows(table)]


def arrow_keys(types, names, keys):
    cols = []
    for j, t in enumerate(types):
        values = [k[j] for k in keys]
        if pa.types.is_dictionary(t):
            cols.append(pa.array(values, pa.string()).dictionary_encode())
        else:
            cols.append(pa.array(values, t))
    return pa.table(cols, names=names)


def block_table(types, names, rows):
    keys = arrow_keys(types, names, [r[0] for r in rows])
    stats = np.array([r[1] for r in rows], dtype=np.int64).reshape(len(rows), K)
    nrefs = np.array([r[2] for r in rows], dtype=np.int64)
    return gt.GroupTable.from_rows(keys, stats, nrefs)


@st.composite
def grouped_rows(draw):
    kinds = draw(st.lists(st.sampled_from(sorted(KINDS)), min_size=1, max_size=5))
    types = [KINDS[k][0] for k in kinds]
    value = [st.none() | KINDS[k][1] for k in kinds]
    pool = draw(st.lists(st.tuples(*value), min_size=1, max_size=8))
    rows = draw(st.lists(st.tuples(st.sampled_from(pool), st.lists(st.integers(0, 10**6), min_size=K, max_size=K),
                                   st.integers(1, 4)), min_size=1, max_size=40))
    return types, [f"c{j}" for j in range(len(kinds))], rows


def random_blocks(rnd, rows):
    rows = list(rows)
    rnd.shuffle(rows)
    cuts = sorted(rnd.sample(range(1, len(rows)), rnd.randint(0, len(rows) - 1))) if len(rows) > 1 else []
    return [rows[a:b] for a, b in zip([0] + cuts, cuts + [len(rows)])]


def random_merge(rnd, tables):
    tables = list(tables)
    while len(tables) > 1:
        rnd.shuffle(tables)
        k = rnd.randint(2, len(tables))
        tables = [gt.merge(tables[:k])] + tables[k:]
    return tables[0]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(grouped_rows(), st.randoms(use_true_random=False))
def test_blocks_merged_in_any_order_equal_a_python_group_by(case, rnd):
    types, names, rows = case
    tables = [block_table(types, names, block) for block in random_blocks(rnd, rows)]
    expected = py_group_by(rows)
    merged = random_merge(rnd, tables)
    assert table_rows(merged) == expected
    assert merged.names == names
    # the same through the CombineFn, with compaction after every block and accumulators pickled
    fn = GroupTableCombineFn(min_pending_bytes=rnd.choice([0, 1 << 30]), pending_ratio=rnd.choice([0, 0.5]))
    accs = []
    for table in tables:
        if not accs or rnd.random() < 0.5:
            accs.append(fn.create_accumulator())
        fn.add_inputs(accs[-1], [table])
    accs = [pickle.loads(pickle.dumps(fn.compact(a) if rnd.random() < 0.5 else a)) for a in accs]
    rnd.shuffle(accs)
    assert table_rows(fn.extract_output(fn.merge_accumulators(accs))) == expected


@settings(max_examples=100, deadline=None)
@given(grouped_rows())
def test_pickle_round_trip_and_group_ids_order(case):
    types, names, rows = case
    table = block_table(types, names, rows)
    assert pickle.loads(pickle.dumps(table)) == table
    keys = arrow_keys(types, names, [r[0] for r in rows])
    inverse, first = gt.group_ids(keys)
    distinct = sorted({r[0] for r in rows}, key=py_order)
    assert [distinct[i] for i in inverse] == [r[0] for r in rows]
    assert [rows[i][0] for i in first] == distinct


def test_from_rows_places_each_groups_bootstrap_block():
    keys = pa.table({"doc": ["b", "a", "b"]})
    stats = np.array([[1, 2, 3, 4], [10, 20, 30, 40], [100, 200, 300, 400]], dtype=np.int64)
    nrefs = np.array([2, 1, 3])
    groups = gt.group_ids(keys)
    assert groups[0].tolist() == [1, 0, 1]
    boot = np.arange(2 * 2 * K, dtype=np.int64).reshape(2, 2, K)  # group 0 ("a"): 0..7, group 1 ("b"): 8..15
    table = gt.GroupTable.from_rows(keys, stats, nrefs, boot, groups)
    assert table_rows(table) == [(("a",), [10, 20, 30, 40] + list(range(8)) + [1, 1, 1]),
                                 (("b",), [101, 202, 303, 404] + list(range(8, 16)) + [2, 2, 3])]


def test_types_are_unified_across_blocks():
    acc = np.array([[1, 1, 1, 1, 1, 1, 1]], dtype=np.int64)

    def one(col):
        return gt.GroupTable(pa.table({"k": col}), acc)

    strings = [one(pa.array(["x"])), one(pa.array(["x"], pa.large_string())),
               one(pa.array(["x"]).dictionary_encode())]
    assert table_rows(gt.merge(strings)) == [(("x",), [3, 3, 3, 3, 3, 1, 1])]
    ints = [one(pa.array([7], pa.int32())), one(pa.array([7], pa.uint64())), one(pa.array([None], pa.null()))]
    merged = gt.merge(ints)
    assert merged.keys.schema.field("k").type == pa.int64()
    assert table_rows(merged) == [((None,), [1, 1, 1, 1, 1, 1, 1]), ((7,), [2, 2, 2, 2, 2, 1, 1])]
    big = gt.merge([one(pa.array([2**64 - 1], pa.uint64())), one(pa.array([7], pa.int64()))])
    assert table_rows(big) == [((7,), [1] * 7), ((2**64 - 1,), [1] * 7)]
    with pytest.raises(TypeError, match="negative"):
        gt.merge([one(pa.array([2**64 - 1], pa.uint64())), one(pa.array([-1], pa.int64()))])
    with pytest.raises(TypeError):
        gt.merge([one(pa.array(["7"])), one(pa.array([7]))])
    with pytest.raises(ValueError):
        gt.merge([one(pa.array([7])), gt.GroupTable(pa.table({"other": [7]}), acc)])


def test_constructor_refuses_unsorted_or_repeated_keys():
    acc = np.ones((2, 7), dtype=np.int64)
    gt.GroupTable(pa.table({"k": [None, "a"]}), acc)
    for keys in (["b", "a"], ["a", "a"], ["a", None]):
        with pytest.raises(ValueError, match="canonical order"):
            gt.GroupTable(pa.table({"k": keys}), acc)
    with pytest.raises(ValueError):
        gt.GroupTable(pa.table({"k": ["a", "b"]}), np.ones((3, 7), dtype=np.int64))


def test_overflow_raises():
    half = 2**62
    acc = np.array([[half, 1, 1, 1, 1, 1, 1]], dtype=np.int64)
    one = gt.GroupTable(pa.table({"k": ["a"]}), acc)
    assert gt.merge([one, gt.GroupTable(pa.table({"k": ["b"]}), acc)]).accs[:, 0].tolist() == [half, half]
    with pytest.raises(OverflowError):
        gt.merge([one, one])
    # three addends whose wrapped total would be positive again: each pairwise step is checked
    near = gt.GroupTable(pa.table({"k": ["a"]}), np.array([[2**63 - 1, 1, 1, 1, 1, 1, 1]], dtype=np.int64))
    with pytest.raises(OverflowError):
        gt.merge([near, near, near])
    fn = GroupTableCombineFn(min_pending_bytes=0)
    with pytest.raises(OverflowError):
        fn.add_inputs(fn.create_accumulator(), [one, one])


def shard_example():
    keys = pa.table({"doc": ["", "a", "é", None, "中文😀", "doc-000000001"] * 2,
                     "n": pa.array([0, -1, 2**63 - 1, None, -2**63, 5] + [1, 2, 3, 4, 5, 6], pa.int64()),
                     "u": pa.array([2**64 - 1, 2**63, 0, None, 1, 2] * 2, pa.uint64())})
    return f"{gt.shard_of(keys, 1000).tolist()} {gt.shard_of(keys, 7, exclude='n').tolist()}"


def test_shard_of_is_the_same_in_every_process():
    script = "from tests.beambleu.groups.test_grouptable import shard_example; print(shard_example())"
    outs = []
    for seed in ("0", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        outs.append(subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, check=True,
                                   capture_output=True, text=True).stdout)
    assert outs[0] == outs[1] == shard_example() + "\n"


def test_shard_of_depends_on_values_not_encoding():
    words = ["", "a", "é", None, "中文", "doc-1"] * 50
    ints = list(range(-150, 150))
    ref = gt.shard_of([pa.array(words), pa.array(ints)], 13)
    assert ref.min() >= 0 and ref.max() < 13 and len(set(ref.tolist())) > 5
    for col in (pa.array(words, pa.large_string()), pa.array(words).dictionary_encode(),
                pa.chunked_array([pa.array(words[:7]), pa.array(words[7:])])):
        for ints_col in (pa.array(ints, pa.int32()), pa.array(ints, pa.int64())):
            assert gt.shard_of([col, ints_col], 13).tolist() == ref.tolist()
    sliced = pa.array(["pad"] * 3 + words)[3:]
    assert gt.shard_of([sliced, pa.array(ints)], 13).tolist() == ref.tolist()
    small = pa.array([0, 1, 2**40], pa.uint64())
    assert gt.shard_of([small], 13).tolist() == gt.shard_of([pa.array([0, 1, 2**40])], 13).tolist()


def test_shard_of_ignores_the_excluded_column():
    docs = [f"doc-{i}" for i in range(2000)]
    system_a = pa.table({"system": ["A"] * 2000, "doc": docs, "line": list(range(2000))})
    system_b = pa.table({"system": ["baseline"] * 2000, "doc": docs, "line": list(range(2000))})
    assert gt.shard_of(system_a, 8, exclude="system").tolist() == gt.shard_of(system_b, 8, exclude="system").tolist()
    assert gt.shard_of(system_a, 8, exclude=0).tolist() == gt.shard_of(system_b, 8, exclude=0).tolist()
    differ = gt.shard_of(system_a, 8) != gt.shard_of(system_b, 8)
    assert differ.mean() > 0.7  # about 7/8 move when the system value counts


@pytest.mark.parametrize("column", [pa.array([f"doc-{i:09d}" for i in range(160_000)]),
                                    pa.array(np.arange(160_000, dtype=np.int64) * 16),
                                    pa.array(np.arange(160_000, dtype=np.uint64) << np.uint64(40))])
def test_shards_spread_evenly(column):
    counts = np.bincount(gt.shard_of([column], 16), minlength=16)
    assert abs(counts - 10_000).max() < 500, counts  # binomial sd 97: 5 sd


def test_split_by_shard_partitions_in_canonical_order():
    keys = pa.table({"doc": [f"d{i:03d}" for i in range(300)]})
    table = gt.GroupTable(keys, np.arange(300 * 7, dtype=np.int64).reshape(300, 7))
    shards = gt.shard_of(table.keys, 5)
    parts = gt.split_by_shard(table, shards)
    assert sorted(parts) == sorted(set(shards.tolist()))
    for s, part in parts.items():
        expect = [i for i in range(300) if shards[i] == s]
        assert table_rows(part) == [((f"d{i:03d}",), list(range(7 * i, 7 * i + 7))) for i in expect]
    assert gt.merge(list(parts.values())) == table


@settings(max_examples=30, deadline=None)
@given(grouped_rows(), st.integers(1, 6), st.integers(1, 5))
def test_merged_parts_come_out_in_canonical_order(tmp_path_factory, case, n_parts, chunk_rows):
    """outputs.merged_parts: sorted Parquet parts (one per shard, as the final step reads them)
    merged into one sequence in canonical key order, every row once."""
    import pyarrow.parquet as pq

    from beambleu.io.outputs import merged_parts

    types, names, rows = case
    table = block_table(types, names, rows)
    folder = tmp_path_factory.mktemp("parts")
    paths = []
    for s, part in gt.split_by_shard(table, gt.shard_of(table.keys, n_parts)).items():
        paths.append(str(folder / f"part-{s}.parquet"))
        accs = pa.FixedSizeListArray.from_arrays(pa.array(part.accs.reshape(-1)), part.width)
        pq.write_table(part.keys.append_column("acc", accs), paths[-1], row_group_size=3)
    got = []
    for chunk in merged_parts(paths, list(names), chunk_rows=chunk_rows):
        assert chunk.num_rows <= chunk_rows
        keys = zip(*(chunk.column(n).to_pylist() for n in names))
        got += [(tuple(k), a) for k, a in zip(keys, chunk.column("acc").to_pylist())]
    assert got == [(tuple(k), v) for k, v in py_group_by(rows)]


def test_combine_per_key_under_beam():
    import apache_beam as beam
    from apache_beam.runners.portability.fn_api_runner import FnApiRunner
    from apache_beam.testing.util import assert_that, equal_to

    rnd = random.Random(7)
    rows = [((rnd.choice(["x", "y", None]), rnd.randint(0, 30)), [rnd.randint(0, 9) for _ in range(K)],
            rnd.randint(1, 3)) for _ in range(400)]
    types, names = [pa.string(), pa.int64()], ["doc", "line"]
    elements, expected = [], {}
    for block in random_blocks(rnd, rows):
        table = block_table(types, names, block)
        for s, part in gt.split_by_shard(table, gt.shard_of(table.keys, 3)).items():
            elements.append(((0, s), part))
    shard = dict(zip([k for k, _ in py_group_by(rows)], gt.shard_of(arrow_keys(types, names, [k for k, _ in py_group_by(rows)]), 3)))
    for key, acc in py_group_by(rows):
        expected.setdefault((0, int(shard[key])), []).append((key, acc))

    with beam.Pipeline(runner=FnApiRunner()) as p:
        out = (p | beam.Create(elements)
               | beam.CombinePerKey(GroupTableCombineFn(min_pending_bytes=2000))
               | beam.MapTuple(lambda k, table: (k, table_rows(table))))
        assert_that(out, equal_to(list(expected.items())))


def test_pickled_size_per_group():
    n, width = 1_000_000, 13
    rng = np.random.default_rng(0)
    accs = rng.integers(0, 3000, size=(n, width), dtype=np.int64)
    accs[:, -3:] = [1, 1, 1]
    keys = pa.table({"doc": pa.array(np.char.mod("doc-%09d", np.arange(n)).astype(object), pa.large_string())})
    table = gt.GroupTable._make(keys, accs)
    t0 = time.perf_counter()
    blob = pickle.dumps(table, pickle.HIGHEST_PROTOCOL)
    t1 = time.perf_counter()
    assert pickle.loads(blob) == table
    print(f"\npickled GroupTable: {len(blob) / n:.1f} bytes/group for {n} groups of width {width} "
          f"(in memory {table.nbytes / n:.1f}); dumps {t1 - t0:.2f}s, loads {time.perf_counter() - t1:.2f}s")
    assert len(blob) / n < 60  # keys 21 (8-byte offsets + 13 bytes) + stats 10 x 2 + 3 x 1


def test_group_table_statistics_columns_come_from_the_totals_and_equal_the_json():
    """results.part_table takes each metric's statistics columns and n_pairs from the accumulators; they are
    the values the scored JSON objects show (BLEU's counts/totals/sys_len/ref_len, chrF's per-order counts),
    with add-k smoothing (whose JSON counts are the real ones) and with bootstrap columns in between."""
    from beambleu.groups import accumulate as acc_ops
    from beambleu.groups import results
    from bleu_core import Bleu, Chrf
    from bleu_core.protocol import MetricSet

    metrics = MetricSet([Bleu(smooth_method="add-k", smooth_value=1.0), Chrf(word_order=2)])
    pairs = {"a": [("the cat sat on the mat", ["the cat is on the mat", "a cat sat on a mat"]),
                   ("hello there", ["hello", "there"])],
             "b": [("red red red blue", ["red blue", "blue red"])]}
    keys, accs = [], []
    for key, rows in pairs.items():
        stats = metrics.batch_stats([h for h, _ in rows], [r for _, r in rows], per_row=True)
        boot = np.zeros((4, metrics.width), dtype=np.int64)  # 4 replicates: the layout only
        accs.append(acc_ops.from_rows(stats, np.array([len(r) for _, r in rows]), boot.reshape(-1)))
        keys.append(key)
    accs = np.stack(accs)
    sig = results.Significance(n_boot=4)
    layout = results.TableLayout({"system": pa.string()}, metrics, sig)
    docs = [{"group_by": ["system"], "key": {"system": k}, **results.group_doc(metrics, acc, sig)}
            for k, acc in zip(keys, accs)]
    table = results.part_table(docs, layout, accs).to_pydict()
    for j, d in enumerate(docs):
        bleu, chrf = d["scores"]
        assert (bleu["metric"], chrf["metric"]) == ("bleu", "chrf")
        assert table["n_pairs"][j] == d["n_pairs"] == len(pairs[keys[j]])
        assert table["nrefs"][j] == bleu["nrefs"] == chrf["nrefs"] == 2
        assert (table["bleu_sys_len"][j], table["bleu_ref_len"][j]) == (bleu["sys_len"], bleu["ref_len"])
        for n in range(4):
            assert table[f"bleu_counts_{n + 1}"][j] == bleu["counts"][n]
            assert table[f"bleu_totals_{n + 1}"][j] == bleu["totals"][n]
        for i, name in enumerate(Chrf(word_order=2).stat_names()):
            assert table["chrf_" + name][j] == chrf[("hyp_counts", "ref_counts", "matches")[i % 3]][i // 3]
    # hand count for "red red red blue" against "red blue" / "blue red": 4 candidate words, closest reference 2
    assert (table["bleu_sys_len"][1], table["bleu_ref_len"][1], table["bleu_counts_1"][1],
            table["bleu_totals_1"][1]) == (4, 2, 2, 4)
    # the shared columns right after the keys, then each metric's, prefixed with its id, its interval
    # columns right after its signature
    names = list(table)
    assert names[:4] == ["group_by", "system", "n_pairs", "nrefs"] and names[4] == "bleu_score"
    assert names[names.index("bleu_signature") + 1] == "bleu_confidence_mean"
    assert names[names.index("chrf_signature") + 1] == "chrf_confidence_mean"
    assert all(n.startswith(("bleu_", "chrf_")) for n in names[4:] if n != results.JSON_COLUMN)
    with pytest.raises(ValueError, match="2 accumulators for 1 groups"):
        results.part_table(docs[:1], layout, accs)

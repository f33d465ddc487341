"""Merging group tables of wide accumulators (``--confidence``: k x (B + 1) + 3 entries), whose rows
are copied as runs of slices and added in place row by row: the same sums as a plain dictionary of
Python integers built in the test, for tables whose keys interleave, append, repeat and match, in
any order, and the same OverflowError for a sum past int64."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest

from beambleu.groups import grouptable as gt

WIDTH = 1031  # wider than the row-by-row threshold (1024): k = 10 statistics, B = 102 replicates, 3 more
INT64_MAX = (1 << 63) - 1


def _table(keys, rng, low=0, high=10**6):
    """A table of distinct sorted string keys and random accumulators (nrefs entries 1..4)."""
    keys = sorted(set(keys))
    accs = rng.integers(low, high, size=(len(keys), WIDTH), dtype=np.int64)
    accs[:, -2] = rng.integers(1, 5, size=len(keys))
    accs[:, -1] = accs[:, -2] + rng.integers(0, 2, size=len(keys))
    return gt.GroupTable(pa.table({"k": pa.array(keys, pa.large_string())}), accs)


def _expected(tables):
    """key -> accumulator as Python ints: additive entries summed, nrefs_min min, nrefs_max max."""
    out = {}
    for t in tables:
        for key, acc in zip(t.keys.column(0).to_pylist(), t.accs.tolist()):
            if key not in out:
                out[key] = list(acc)
            else:
                cur = out[key]
                out[key] = [a + b for a, b in zip(cur[:-2], acc[:-2])] + [min(cur[-2], acc[-2]),
                                                                           max(cur[-1], acc[-1])]
    return out


def _rows(table):
    return dict(zip(table.keys.column(0).to_pylist(), table.accs.tolist()))


@pytest.mark.parametrize("seed", range(12))
def test_wide_tables_merge_to_the_python_sums(seed):
    rng = np.random.default_rng(seed)
    pick = random.Random(seed)
    names = [f"sys{i:03d}" for i in range(80)]
    tables = []
    for _ in range(pick.randint(2, 5)):
        kind = pick.random()
        if kind < 0.3:  # a run of consecutive keys (appends, and one shared at the boundary)
            a = pick.randint(0, 70)
            keys = names[a:a + pick.randint(1, 10)]
        elif kind < 0.6:  # scattered keys (interleaving runs)
            keys = pick.sample(names, pick.randint(1, 70))
        else:  # many keys, some of them in every other table
            keys = names[::pick.randint(1, 4)]
        tables.append(_table(keys, rng))
    want = _expected(tables)
    for order in (tables, tables[::-1]):
        assert _rows(gt.merge(order)) == want
    big, small = max(tables, key=len), min(tables, key=len)
    assert _rows(gt.merge([big, small])) == _expected([big, small])
    # the inputs are left as they were
    assert _rows(gt.merge(tables)) == want


def test_a_wide_sum_past_int64_raises():
    rng = np.random.default_rng(1)
    a = _table(["a", "b", "c"], rng)
    b = _table(["b", "d"], rng)
    b.accs[0, 7] = INT64_MAX - int(a.accs[1, 7]) + 1  # "b": one entry's sum passes INT64_MAX by 1
    with pytest.raises(OverflowError, match="overflow 64-bit integers"):
        gt.merge([a, b])
    b.accs[0, 7] -= 1  # exactly INT64_MAX
    assert _rows(gt.merge([a, b]))["b"][7] == INT64_MAX

"""Exact keys and integers at any size: group keys checked against a pure-Python group-by, checked
(never wrapping) statistics sums, validated statistics vectors, the replicate-count limit, and
invalid UTF-8 in key columns reported with its row."""

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from bleu_core import Bleu, BleuStats, compute_bleu
from bleu_core.resampling import counter as bs
from bleu_core.kernels.arrow import list_parts, string_buffers
from beambleu.groups import accumulate as acc_ops
from beambleu.groups import grouptable

from ..oracle import REPO

INT64_MIN, INT64_MAX, UINT64_MAX = -2**63, 2**63 - 1, 2**64 - 1

# ----------------------------------------------------------------------------- group keys

POOLS = {
    "int64": [INT64_MIN, INT64_MIN + 1, -1, 0, 1, INT64_MAX - 1, INT64_MAX],
    "uint64": [0, 1, 2**63 - 1, 2**63, 2**63 + 1, UINT64_MAX - 1, UINT64_MAX],
    "string": ["", "0", "None", "a", "A", "é", "日本", " ", "a\0b"],
}
KINDS = ["int64", "uint64", "string", "large_string", "dictionary", "dictionary_dup", "int8"]


def _column(kind, n, card, null_rate, seed, chunks):
    """An Arrow column of ``n`` values drawn from ``card`` distinct ones (extremes included), with
    nulls; also returns the Python values (None for null) the pure-Python group-by uses."""
    rng = np.random.default_rng(seed)
    if kind in ("int64", "int8"):
        lo, hi = (INT64_MIN, INT64_MAX) if kind == "int64" else (-128, 127)
        pool = [v for v in POOLS["int64"] if lo <= v <= hi] if kind == "int64" else [-128, -1, 0, 127]
        pool += [int(v) for v in rng.integers(lo, hi, card, endpoint=True)]
    elif kind == "uint64":
        pool = POOLS["uint64"] + [int(v) for v in rng.integers(0, UINT64_MAX, card, dtype=np.uint64, endpoint=True)]
    else:
        pool = POOLS["string"] + [f"v{int(v)}" for v in rng.integers(0, 2**62, card)]
    pool = list(dict.fromkeys(pool))[:max(card, 1)]
    values = [pool[i] for i in rng.integers(0, len(pool), n)]
    values = [None if rng.random() < null_rate else v for v in values]
    if kind == "dictionary_dup":
        # a dictionary holding duplicate values: equal strings must still be one key
        distinct = list(dict.fromkeys(v for v in values if v is not None)) or ["x"]
        dictionary = distinct + distinct
        indices = [None if v is None else distinct.index(v) + len(distinct) * int(rng.integers(0, 2))
                   for v in values]
        arr = pa.DictionaryArray.from_arrays(pa.array(indices, pa.int32()), pa.array(dictionary, pa.string()))
    else:
        arrow_type = {"int64": pa.int64(), "int8": pa.int8(), "uint64": pa.uint64(), "string": pa.string(),
                      "large_string": pa.large_string(), "dictionary": pa.string()}[kind]
        arr = pa.array(values, arrow_type)
        if kind == "dictionary":
            arr = arr.dictionary_encode()
    if chunks > 1 and n:
        cuts = sorted({0, n, *[int(c) for c in rng.integers(0, n, chunks - 1)]})
        arr = pa.chunked_array([arr.slice(a, b - a) for a, b in zip(cuts, cuts[1:])], type=arr.type)
    return arr, values


def _check_group_rows(columns, values):
    """grouptable.group_ids (the pipeline's per-batch grouping) against a pure-Python group-by
    (a dict of tuples; null is None, apart from "" and 0)."""
    n = len(values[0])
    rows = list(zip(*values))
    expected = {}
    for i, row in enumerate(rows):
        expected.setdefault(row, []).append(i)
    inverse, first = grouptable.group_ids(columns)
    assert len(inverse) == n
    keys = [rows[f] for f in first]  # each group's key, as the test's own Python values
    assert len(keys) == len(expected) == len(set(keys))
    got = {}
    for i in range(n):
        got.setdefault(keys[inverse[i]], []).append(i)
    assert got == expected


def _columns(n, specs):
    """Columns and their Python values from (kind, cardinality, null rate, seed, chunks) specs."""
    columns, values = [], []
    for kind, cardinality, null_rate, seed, chunks in specs:
        card = {"low": 3, "high": max(n // 2, 1), "unique": max(n, 1)}[cardinality]
        arr, vals = _column(kind, n, card, null_rate, seed, chunks)
        columns.append(arr)
        values.append(vals)
    return columns, values


@st.composite
def key_columns(draw, max_rows):
    n = draw(st.integers(0, max_rows))
    specs = draw(st.lists(st.tuples(st.sampled_from(KINDS), st.sampled_from(["low", "high", "unique", "unique"]),
                                    st.sampled_from([0.0, 0.1, 0.5]), st.integers(0, 2**32), st.integers(1, 3)),
                          min_size=1, max_size=7))
    return _columns(n, specs)


# seven high-cardinality columns of every kind: the product of the cardinalities is far above 2**63
MANY_WIDE_COLUMNS = _columns(3000, [(kind, "unique", 0.05, seed, 2) for seed, kind in enumerate(KINDS)])


@settings(max_examples=25, deadline=None)
@given(data=key_columns(max_rows=3000))
@example(data=MANY_WIDE_COLUMNS)
def test_group_keys_match_a_python_group_by(data):
    _check_group_rows(*data)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(data=key_columns(max_rows=20000))
def test_group_keys_match_a_python_group_by_long(data):
    _check_group_rows(*data)


def test_group_keys_stay_exact_on_many_high_cardinality_columns():
    """Seven columns of ~16384 distinct values each: the product of the cardinalities is ~2**98."""
    n = 16384
    rng = np.random.default_rng(7)
    values = []
    for j in range(7):
        if j % 3 == 0:
            values.append([int(x) for x in rng.integers(INT64_MIN, INT64_MAX, n, endpoint=True)])
        elif j % 3 == 1:
            values.append([int(x) for x in rng.integers(2**63, UINT64_MAX, n, dtype=np.uint64, endpoint=True)])
        else:
            values.append([f"doc-{int(x)}" for x in rng.permutation(n)])
    # pairs of rows that agree on every column but the last, so the last column decides the key
    for j in range(6):
        values[j][1::2] = values[j][0::2]
    columns = [pa.array(v, [pa.int64(), pa.uint64(), pa.string()][j % 3]) for j, v in enumerate(values)]
    columns = [c.dictionary_encode() if j % 3 == 2 else c for j, c in enumerate(columns)]
    _check_group_rows(columns, values)


# ----------------------------------------------------------------------------- invalid UTF-8

def _bad_strings(large=False):
    """["ok", "\\xff\\xfe" (invalid), "b", None, "\\xc3" (invalid, truncated)]."""
    data = b"ok\xff\xfeb\xc3"
    offsets = np.array([0, 2, 4, 5, 5, 6], dtype=np.int64 if large else np.int32)
    validity = pa.array([True, True, True, False, True]).buffers()[1]
    return pa.Array.from_buffers(pa.large_string() if large else pa.string(), 5,
                                 [validity, pa.py_buffer(offsets.tobytes()), pa.py_buffer(data)])


def test_first_invalid_utf8_finds_the_row():
    assert acc_ops.first_invalid_utf8(_bad_strings()) == 1
    assert acc_ops.first_invalid_utf8(_bad_strings(large=True)) == 1
    assert acc_ops.first_invalid_utf8(_bad_strings().slice(2)) == 2  # "b", None, then the truncated one
    chunked = pa.chunked_array([pa.array(["x", "y", "z"]), _bad_strings().slice(2)])
    assert acc_ops.first_invalid_utf8(chunked) == 5
    # dictionary<string>: the first row whose index names an invalid entry (entry 0 is unused)
    dictionary = pa.DictionaryArray.from_arrays(pa.array([2, None, 2, 4, 1], pa.int32()), _bad_strings())
    assert acc_ops.first_invalid_utf8(dictionary) == 3
    assert acc_ops.first_invalid_utf8(pa.array(["a", None, "é"])) is None
    assert acc_ops.first_invalid_utf8(pa.array([1, 2])) is None


def test_id_column_invalid_utf8_is_found_before_decoding():
    """The id column's check: the row of the first invalid id, and the valid ids still hash."""
    ids = pa.chunked_array([pa.array(["s1", "s2"]), _bad_strings()])
    assert acc_ops.first_invalid_utf8(ids) == 3
    assert len(bs.row_keys_from_ids(ids.slice(0, 3).to_pylist())) == 3


# ----------------------------------------------------------------------------- statistics vectors

def test_bleu_stats_add_and_sum_raise_instead_of_wrapping():
    a = BleuStats([2**62] * 10)
    with pytest.raises(OverflowError, match="int64"):
        a + a
    with pytest.raises(OverflowError):
        sum([a, a])
    with pytest.raises(OverflowError):
        BleuStats.sum([a, BleuStats([1] * 10), a])
    big = BleuStats([INT64_MAX] * 10)
    assert (big + BleuStats.zero(4)) == big  # the largest representable total still adds exactly


INVALID = [
    ([5, 5, 50, 5, 5, 5, 5, 5, 5, 5], ValueError, "matches_1 = 50 exceeds totals_1 = 5"),
    ([5, 5, 5, 5, 5, 6, 5, 5, 5, 5], ValueError, "matches_4 = 6 exceeds totals_4 = 5"),
    ([5, -1, 5, 4, 3, 2, 5, 4, 3, 2], ValueError, "r = -1"),
    ([2**63] * 10, ValueError, "2\\*\\*63 - 1"),
    ([5, 5, 1.5, 0, 0, 0, 5, 4, 3, 2], TypeError, "integers"),
]


@pytest.mark.parametrize("vector, error, message", INVALID)
def test_invalid_statistics_are_refused_everywhere(vector, error, message):
    with pytest.raises(error, match=message):
        BleuStats(vector)
    with pytest.raises(error, match=message):
        Bleu().score(vector)
    if len(vector) == 10:
        with pytest.raises(error, match=message):
            compute_bleu(vector, max_ngram_order=4)
        with pytest.raises(error, match=message):
            compute_bleu(np.array(vector, dtype=object), max_ngram_order=4)


def test_bleu_score_validates_raw_vectors():
    with pytest.raises(ValueError, match="exceeds"):  # scored 177.8 (and 1000 for larger matches)
        Bleu().score([5, 5, 50, 5, 5, 5, 5, 5, 5, 5])
    for wrong_length in ([5, 5, 5, 5, 5, 5, 5, 5, 5], [1, 1], [5, 5, 5, 5, 5, 5, 5, 5]):
        with pytest.raises(ValueError):
            Bleu().score(wrong_length)
        with pytest.raises(ValueError, match="2 \\+ 2"):
            compute_bleu(wrong_length, max_ngram_order=4)
    with pytest.raises(ValueError, match="one-dimensional"):
        BleuStats(np.ones((2, 10), np.int64))


# ----------------------------------------------------------------------------- accumulators

def test_batch_and_group_sums_are_checked():
    rows = np.full((3, 10), 2**62, np.int64)  # 3 * 2**62 > 2**63 - 1 (and wraps to a negative int64)
    with pytest.raises(OverflowError, match="statistics of a batch overflows int64: c would exceed"):
        acc_ops.from_rows(rows, np.ones(3, np.int64), name=Bleu().stat_name)
    with pytest.raises(OverflowError):
        acc_ops.accumulate_groups(rows, np.ones(3, np.int64), np.zeros(3, np.int64), 1)
    # sums that fit are exact even when the fast bound check cannot prove it
    rows = np.array([[INT64_MAX // 2] * 10, [INT64_MAX // 2 + 1] * 10, [0] * 10], np.int64)
    acc = acc_ops.from_rows(rows, np.ones(3, np.int64))
    assert acc_ops.stats_of(acc, 10).tolist() == [INT64_MAX] * 10
    groups = acc_ops.accumulate_groups(rows, np.ones(3, np.int64), np.array([0, 0, 1]), 2)
    assert groups[:, :10].tolist() == [[INT64_MAX] * 10, [0] * 10]
    with pytest.raises(ValueError, match="counts"):
        acc_ops.from_totals(np.array([1, 1, 1, 1, 1, -1, 1, 1, 1, 1]), np.array([1]))


def test_batch_sums_from_its_groups():
    """A batch's accumulator made from its groups' (the run's grouped path) is the one made from its rows:
    sums, pair count, fewest and most references, replicates; and the same overflow is refused."""
    rng = np.random.default_rng(34)
    for n, n_groups, n_boot in [(1, 1, 0), (7, 3, 0), (500, 9, 0), (64, 5, 2)]:
        rows = rng.integers(0, 1000, (n, 6), dtype=np.int64)
        nrefs = rng.integers(1, 4, n, dtype=np.int64)
        inverse = np.r_[np.arange(n_groups), rng.integers(0, n_groups, n - n_groups)] if n >= n_groups else None
        boot = rng.integers(0, 5000, (n_boot + 1, n_boot, 6), dtype=np.int64) if n_boot else None
        groups = acc_ops.accumulate_groups(rows, nrefs, inverse, n_groups)
        got = acc_ops.from_groups(groups, 6, None if boot is None else boot[0])
        assert got.tolist() == acc_ops.from_rows(rows, nrefs, None if boot is None else boot[0]).tolist()
        # and by hand: the column sums, n, min and max of nrefs
        assert got[:6].tolist() == [int(sum(int(r[j]) for r in rows)) for j in range(6)]
        assert got[-3:].tolist() == [n, int(min(nrefs)), int(max(nrefs))]
    rows = np.full((3, 10), 2**62, np.int64)  # three groups that fit, whose sum does not
    groups = acc_ops.accumulate_groups(rows, np.ones(3, np.int64), np.array([0, 1, 2]), 3)
    with pytest.raises(OverflowError, match="statistics of a batch overflows int64: c would exceed"):
        acc_ops.from_groups(groups, 10, name=Bleu().stat_name)


# ----------------------------------------------------------------------------- the kernels

def test_bootstrap_kernel_is_exact_or_raises():
    """Weighted sums of statistics near 2**62 with Poisson weights >= 2: the kernel must equal the
    exact Python-integer sums, or raise OverflowError exactly when one of them exceeds int64."""
    raised = []
    for value, n_rows in [(2**62, 2), (2**61, 8), (2**57, 50), (2**56, 50), (2**40, 300)]:
        keys = bs.row_keys_from_position("big.parquet", 0, n_rows)
        rows = np.full((n_rows, 10), value, np.int64)
        n_boot = 40
        w = bs.weights(keys, n_boot)
        assert w.max() >= 2
        exact = [sum(int(x) for x in w[b]) * value for b in range(n_boot)]
        if max(exact) > INT64_MAX:
            with pytest.raises(OverflowError, match="int64"):
                bs.bootstrap_totals(rows, keys, n_boot)
            raised.append(value)
        else:
            assert bs.bootstrap_totals(rows, keys, n_boot)[0, :, 0].tolist() == exact
    assert raised == [2**62, 2**61, 2**57]


def test_bootstrap_kernel_refuses_sizes_that_overflow():
    """Sizes whose products overflow Py_ssize_t are refused (run in a child: a crash fails the test)."""
    code = """
import numpy as np
from bleu_core.resampling import _resample, counter as bs
keys = bs.row_keys_from_position("f", 0, 4)
stats, groups, out = np.zeros((4, 10), np.int64), np.zeros((1, 4), np.int64), np.zeros(10, np.int64)
for n_sets, width, n_boot in [(1, 10, 2**62), (1, 2**62, 3), (1, 2**61, 2**61), (2**62, 10, 1), (1, 10, 1)]:
    try:
        _resample.bootstrap(keys, 1, bs.THRESHOLDS, groups, n_sets, stats, width, n_boot, out)
        print("accepted")
    except ValueError as exc:
        print("refused:", exc)
try:
    _resample.bootstrap(keys, 1, bs.THRESHOLDS, groups, 1, -np.ones((4, 10), np.int64), 10, 1, out)
except ValueError as exc:
    print("refused:", exc)
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[:4] == ["refused: bootstrap: sizes too large (their products overflow Py_ssize_t)"] * 4
    assert lines[4:] == ["accepted", "refused: bootstrap: statistics must be non-negative"]


def test_statistics_kernel_checks_its_batch_sum():
    """The kernel adds a batch's statistics into ``out``: a sum past int64 raises, never wraps."""
    from bleu_core.metrics.bleu import _bleu

    hd, ho, hv = string_buffers(pa.array(["a b", "a"]), "candidates")
    child, list_offsets = list_parts(pa.array([["a b"], ["a"]]))
    rd, ro, rv = string_buffers(child, "references")
    out = np.zeros(10, np.int64)
    _bleu.stats(hd, ho, hv, rd, ro, rv, list_offsets, _bleu.TOK_NONE, 0, 4, None, out, 0)
    assert out.tolist() == [3, 3, 3, 1, 0, 0, 3, 1, 0, 0]
    out[:] = INT64_MAX - 1
    with pytest.raises(OverflowError, match="int64"):
        _bleu.stats(hd, ho, hv, rd, ro, rv, list_offsets, _bleu.TOK_NONE, 0, 4, None, out, 0)


def test_id_kernel_reads_rows_through_their_index_and_checks_it():
    """``stats_ids`` (spBLEU): each side is a dictionary of id lists and an index per row; every
    offset and index is checked before a row is read."""
    from bleu_core.metrics.bleu import _bleu

    def ids(*lists):
        offsets = np.cumsum([0] + [len(x) for x in lists]).astype(np.int64)
        return np.array([i for x in lists for i in x], np.int32), offsets

    hyp, ref = ids([1, 2], [1]), ids([1, 2], [3])
    lists = np.array([0, 1, 2], np.int64)

    def run(hyp_index, ref_index, hyp_valid=None, hyp_side=hyp, per_row=1):
        out = np.zeros((2, 10) if per_row else 10, np.int64)
        hi = None if hyp_index is None else np.array(hyp_index, np.int32)
        ri = None if ref_index is None else np.array(ref_index, np.int32)
        _bleu.stats_ids(*hyp_side, hi, hyp_valid, *ref, ri, None, lists, 4, out, per_row)
        return out.tolist()

    # row 0: candidate [1] vs reference [1, 2]: c=1, r=2, one unigram match of 1;
    # row 1: candidate [1, 2] vs reference [3]: c=2, r=1, no match, 2 unigrams and 1 bigram
    assert run([1, 0], [0, 1]) == [[1, 2, 1, 0, 0, 0, 1, 0, 0, 0], [2, 1, 0, 0, 0, 0, 2, 1, 0, 0]]
    assert run([1, 0], [0, 1], per_row=0) == [3, 3, 1, 0, 0, 0, 3, 1, 0, 0]
    # no index: row i is entry i (row 0: [1, 2] vs [1, 2]; row 1: [1] vs [3])
    assert run(None, None) == [[2, 2, 2, 1, 0, 0, 2, 1, 0, 0], [1, 1, 0, 0, 0, 0, 1, 0, 0, 0]]
    with pytest.raises(ValueError, match="index points outside its dictionary"):
        run([2, 0], [0, 1])
    with pytest.raises(ValueError, match="index points outside its dictionary"):
        run([0, 0], [0, -1])
    # a null candidate's index is never read: the row is refused as null, wherever it points
    with pytest.raises(ValueError) as err:
        run([99, 0], [0, 1], hyp_valid=np.array([0, 1], np.uint8))
    assert err.value.args == (0, -1, "candidate is null")
    # a null reference's index is never read either: row 1 keeps no reference and is refused
    out = np.zeros(10, np.int64)
    with pytest.raises(ValueError) as err:
        _bleu.stats_ids(*hyp, np.array([1, 0], np.int32), None, *ref, np.array([0, 99], np.int32),
                        np.array([1, 0], np.uint8), lists, 4, out, 0)
    assert err.value.args == (1, -1, "no reference (all references are missing)")
    with pytest.raises(ValueError, match="offsets are not monotonic"):
        run([1, 0], [0, 1], hyp_side=(hyp[0], np.array([0, 5, 3], np.int64)))
    with pytest.raises(ValueError, match="token ids must be >= 0"):
        run([1, 0], [0, 1], hyp_side=(np.array([1, -2, 1], np.int32), hyp[1]))
    with pytest.raises(ValueError, match="offset buffers have inconsistent lengths"):
        run([0, 0, 0], [0, 1])  # three candidates, two rows of references


def test_flatten_ids_packs_sentencepiece_lists():
    """SentencePiece's nested id lists become int32 values and int64 offsets; anything that is not
    a list of lists of ints in int32's non-negative range is refused, and a value's __index__ is
    never called (it could change the lists under the loop)."""
    from bleu_core.tokenizers import _spm_ids

    class Index:
        def __index__(self):
            raise AssertionError("__index__ was called")

    values, offsets = _spm_ids.flatten_ids([[1, 2], [], [2**31 - 1]])
    assert np.frombuffer(values, np.int32).tolist() == [1, 2, 2**31 - 1]
    assert np.frombuffer(offsets, np.int64).tolist() == [0, 2, 2, 3]
    values, offsets = _spm_ids.flatten_ids([])
    assert len(values) == 0 and np.frombuffer(offsets, np.int64).tolist() == [0]
    for bad in ([[-1]], [[2**31]], [[2**80]]):
        with pytest.raises(ValueError, match="not an int in 0..2"):
            _spm_ids.flatten_ids(bad)
    for bad in ([1], [[1.5]], ([1],), [(1,)], [[Index()]]):
        with pytest.raises(TypeError):
            _spm_ids.flatten_ids(bad)


# ----------------------------------------------------------------------------- replicate limit

def test_replicate_count_is_checked_up_front():
    cap = bs.max_replicates(10)
    assert cap == 100_000 and cap * 10 * 8 <= bs.MAX_REPLICATE_BYTES
    assert bs.check_replicates(1) == 1 and bs.check_replicates(cap) == cap
    for bad in (0, -1):
        with pytest.raises(ValueError, match="at least 1"):
            bs.check_replicates(bad)
    with pytest.raises(ValueError, match=r"10000000 resamples .* use 100000 or fewer"):
        bs.check_replicates(10_000_000)
    with pytest.raises(ValueError, match="use 7692 or fewer"):  # BLEU-64: 130 statistics per replicate
        bs.check_replicates(10_000, 130)
    with pytest.raises(TypeError):
        bs.check_replicates(10.0)
    keys = bs.row_keys_from_position("f", 0, 1)
    with pytest.raises(ValueError, match="use 100000 or fewer"):
        bs.bootstrap_totals(np.ones((1, 10), np.int64), keys, cap + 1)
    with pytest.raises(ValueError, match="at least 1"):
        bs.bootstrap_totals(np.ones((1, 10), np.int64), keys, 0)


@pytest.mark.parametrize("metric", ["bleu", "chrf"])
def test_kernels_refuse_offsets_outside_the_data(metric):
    """An Arrow array made from raw buffers without validation (offsets 0, 100, 5 over 5 bytes) is refused
    before a kernel reads past its data."""
    from bleu_core import Chrf

    bad = pa.Array.from_buffers(pa.string(), 2, [None, pa.py_buffer(np.array([0, 100, 5], np.int32).tobytes()),
                                                 pa.py_buffer(b"hello")])
    m = Bleu() if metric == "bleu" else Chrf()
    with pytest.raises(ValueError, match="malformed Arrow string array"):
        m.batch_stats(bad, [["a"], ["b"]])
    with pytest.raises(ValueError, match="malformed Arrow string array"):
        m.batch_stats(["a", "b"], pa.ListArray.from_arrays(pa.array([0, 1, 2], pa.int32()), bad))

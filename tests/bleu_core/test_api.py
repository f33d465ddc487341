"""Argument checking of the public API: clear exceptions naming the argument, never asserts."""

import numpy as np
import pyarrow as pa
import pytest

from bleu_core import BatchInputError, Bleu, BleuStats, batch_stats, compute_bleu, corpus_bleu, sentence_bleu


@pytest.mark.parametrize(
    "kwargs,exc,word",
    [
        ({"tokenize": "13b"}, ValueError, "tokenize"),
        ({"tokenize": 13}, TypeError, "tokenize"),
        ({"smooth_method": "linear"}, ValueError, "smooth_method"),
        ({"smooth_value": "1"}, TypeError, "smooth_value"),
        ({"smooth_value": -1.0}, ValueError, "smooth_value"),
        ({"max_ngram_order": 0}, ValueError, "max_ngram_order"),
        ({"max_ngram_order": 2.0}, TypeError, "max_ngram_order"),
        ({"lowercase": "yes"}, TypeError, "lowercase"),
        ({"effective_order": 1}, TypeError, "effective_order"),
        ({"weights": [0.5, 0.5]}, ValueError, "weights"),
        ({"weights": [0.5, 0.5, 0.5, -0.5]}, ValueError, "weights"),
    ],
)
def test_bad_options(kwargs, exc, word):
    with pytest.raises(exc, match=word):
        corpus_bleu(["a"], [["a"]], **kwargs)


def test_bad_inputs():
    with pytest.raises(TypeError, match="candidates"):
        corpus_bleu("a b", [["a b"]])
    with pytest.raises(ValueError, match=r"candidates\[1\] is None"):
        corpus_bleu(["a", None], [["a"], ["b"]])
    with pytest.raises(TypeError, match=r"references\[0\]"):
        corpus_bleu(["a"], ["a"])
    with pytest.raises(ValueError, match="different lengths"):
        corpus_bleu(["a", "b"], [["a"]])
    with pytest.raises(ValueError, match=r"references\[0\]: no reference"):
        corpus_bleu(["a"], [[None, None]])
    with pytest.raises(TypeError, match=r"references\[0\]\[1\]"):
        corpus_bleu(["a"], [["a", 3]])
    with pytest.raises(ValueError, match="no segments"):
        corpus_bleu([], [])
    with pytest.raises(TypeError, match="candidate"):
        sentence_bleu(None, ["a"])


def test_batch_errors_name_row_and_column():
    with pytest.raises(BatchInputError, match="row 1, candidate: candidate is null") as e:
        batch_stats(pa.array(["a", None]), pa.array([["a"], ["b"]]))
    assert (e.value.row, e.value.column) == (1, "candidate")
    with pytest.raises(BatchInputError, match="row 0, references: no reference"):
        batch_stats(pa.array(["a"]), pa.array([[None]], type=pa.list_(pa.string())))
    with pytest.raises(BatchInputError, match="row 0, references: no reference"):
        batch_stats(pa.array(["a"]), pa.array([[]], type=pa.list_(pa.string())))
    with pytest.raises(BatchInputError, match="row 1, references: the reference list is null"):
        batch_stats(pa.array(["a", "b"]), pa.array([["a"], None], type=pa.list_(pa.string())))
    with pytest.raises(TypeError, match="strings"):
        batch_stats(pa.array([1, 2]), pa.array([["a"], ["b"]]))


def test_invalid_utf8_is_reported_not_decoded():
    bad = pa.Array.from_buffers(pa.string(), 2, [None, pa.py_buffer(b"\x00\x00\x00\x00\x01\x00\x00\x00\x03\x00\x00\x00"),
                                                 pa.py_buffer(b"a\xff\xfe")])
    with pytest.raises(BatchInputError, match="row 1, candidate: invalid UTF-8"):
        batch_stats(bad, pa.array([["a"], ["b"]]))
    with pytest.raises(BatchInputError, match=r"row 1, references\[0\]: invalid UTF-8"):
        batch_stats(pa.array(["a", "b"]), pa.ListArray.from_arrays(pa.array([0, 1, 2], pa.int32()), bad))


def test_input_errors_share_one_base_and_keep_their_text():
    """bleu_core.errors.InputError is the base of every input error; each keeps its own text, and
    located() places a batch's error in its file without touching the original."""
    from beambleu.io.inputs import ERROR_MARK, PipelineInputError
    from beambleu.io.textfiles import InputError as TextInputError
    from bleu_core.errors import InputError

    err = BatchInputError(2, "references", "invalid UTF-8", 1)
    assert isinstance(err, InputError) and isinstance(err, ValueError)
    assert str(err) == "row 2, references[1]: invalid UTF-8" and err.file is None
    placed = err.located(file="a.parquet", row_offset=100)
    assert type(placed) is BatchInputError and str(placed) == "a.parquet: row 102, references[1]: invalid UTF-8"
    assert (placed.file, placed.row, placed.column, placed.ref_index, placed.reason) == \
        ("a.parquet", 102, "references", 1, "invalid UTF-8")
    assert (str(err), err.row, err.file) == ("row 2, references[1]: invalid UTF-8", 2, None)
    assert str(InputError("bad", file="f", row=3, column="candidate")) == "f: row 3, candidate: bad"
    assert str(InputError("bad")) == "bad"

    text = TextInputError("ref.txt", "invalid UTF-8 (byte 0xff)", 7, 3)
    assert isinstance(text, InputError) and str(text) == "ref.txt: line 7, column 3: invalid UTF-8 (byte 0xff)"
    assert (text.path, text.line, text.file, text.row, text.column) == ("ref.txt", 7, "ref.txt", 6, 3)
    assert str(TextInputError("ref.txt", "is empty")) == "ref.txt: is empty"

    pipe = PipelineInputError(ERROR_MARK + "x.parquet: no files match [while running 'Read']")
    assert isinstance(pipe, InputError) and pipe.message == pipe.reason == "x.parquet: no files match"
    assert str(pipe) == ERROR_MARK + "x.parquet: no files match"


def test_add_k_does_not_mutate_and_reports_real_counts():
    stats = [4, 4, 2, 0, 0, 0, 4, 3, 2, 1]
    before = list(stats)
    s = compute_bleu(stats, max_ngram_order=4, smooth_method="add-k")
    assert stats == before
    assert s.counts == [2, 0, 0, 0] and s.totals == [4, 3, 2, 1]
    # precisions use c + k over t + k for n > 1: 100 * 1 / 4, 1 / 3, 1 / 2
    assert s.precisions == [50.0, 25.0, 100.0 / 3, 50.0]


def test_lone_surrogates_fall_back_to_scalar_path():
    # Python strings may hold lone surrogates (no UTF-8 form); sacrebleu scores them, so do we
    s = corpus_bleu(["a \ud800 b"], [["a \ud800 b"]])
    assert s.counts == [3, 2, 1, 0] and s.totals == [3, 2, 1, 0]


def test_weights_and_order_in_signature():
    s = corpus_bleu(["a b c"], [["a b c"]], max_ngram_order=2, weights=[0.75, 0.25])
    assert s.score == pytest.approx(100.0)
    # "a b x" vs "a b c": p1 = 2/3 (a, b), p2 = 1/2 (a-b): 100 * (2/3)^0.75 * (1/2)^0.25
    w = corpus_bleu(["a b x"], [["a b c"]], max_ngram_order=2, weights=[0.75, 0.25])
    assert w.score == pytest.approx(100 * (2 / 3) ** 0.75 * (1 / 2) ** 0.25)
    assert "order:2" in s.signature and "weights:0.75,0.25" in s.signature
    assert "order" not in corpus_bleu(["a b c"], [["a b c"]]).signature


def test_bleu_score_roundtrip_fields():
    m = Bleu()
    s = m.score(BleuStats([5, 6, 5, 3, 2, 1, 5, 4, 3, 2]), nrefs={1})
    d = s.to_dict()
    for key in ("name", "score", "signature", "verbose_score", "nrefs", "case", "eff", "tok", "smooth", "version",
                "counts", "totals", "precisions", "bp", "ratio", "sys_len", "ref_len"):
        assert key in d
    assert d["nrefs"] == "1" and d["tok"] == "13a"
    assert m.signature({1, 2}).format().startswith("nrefs:var|")


def test_parquet_stats_streams_a_file(tmp_path):
    import pyarrow.parquet as pq

    from bleu_core.parquet import parquet_stats

    cands = ["the cat is on mat", "red red red blue", "cat", ""]
    refs = [["the cat is on the mat"], ["red blue green white"], ["cat"], ["a", None]]
    pq.write_table(pa.table({"candidate": cands, "references": refs}), tmp_path / "x.parquet", row_group_size=3)
    stats = parquet_stats(tmp_path / "x.parquet", batch_size=2)
    assert Bleu().score(stats).score == corpus_bleu(cands, refs).score
    assert parquet_stats(tmp_path / "x.parquet", per_row=True, batch_size=3) == stats


@pytest.mark.parametrize("bad", [
    [(1, 0, None)],                 # system 1's candidate 0 is null
    [(2, 1, None)],
    [(0, 1, None)],
    [(2, 0, 7)],                    # not a string
    [(1, 1, "a\udcff")],            # not encodable: a lone surrogate
    [(1, 0, None), (0, 1, None)],   # row by row, system 1's row 0 comes first; one by one, system 0's row 1
    [(2, 0, None), (1, 1, 7)],
])
def test_several_systems_fail_as_one_by_one(bad):
    """Bleu.batch_stats_many (references once for all systems) raises what batch_stats raises
    for the first system with a bad row, system by system: same type, same message."""
    from bleu_core import MetricSet
    from bleu_core.metrics.chrf import Chrf

    refs = [["a b c", None], ["b c d", "a"]]
    systems = [["a b", "c d"], ["a b c", "b"], ["x", "b c d"]]
    for system, row, value in bad:
        systems[system][row] = value
    for metric in (Bleu(), MetricSet([Bleu(), Chrf()])):
        first = None
        for candidates in systems:
            try:
                metric.batch_stats(candidates, refs)
            except Exception as exc:  # noqa: BLE001 - what batch_stats raises, whatever it is
                first = exc
                break
        assert first is not None, "the case must be one batch_stats refuses"
        with pytest.raises(type(first)) as got:
            metric.batch_stats_many(systems, refs)
        assert str(got.value) == str(first)


def test_several_systems_with_a_row_without_references():
    """A row whose references are all missing is the row named, whichever system meets it."""
    with pytest.raises(BatchInputError, match="row 1, references: no reference") as e:
        Bleu().batch_stats_many([["a", "b"], ["c", "d"]], [["a"], [None]])
    assert (e.value.row, e.value.column) == (1, "references")


def test_reference_groups_by_hand():
    """Rows 0, 2, 4 repeat one list, rows 1, 3 another ([None, "b"] differs from ["b"] and from
    ["", "b"]); row 5 is alone: 3 lists for 6 rows, 3 slots deep, padded with 6."""
    import pyarrow as pa

    from bleu_core.kernels.arrow import reference_groups

    cands = pa.array(["c0", "c1", "c2", "c3", "c4", "c5"])
    refs = pa.array([["a", "b"], [None, "b"], ["a", "b"], [None, "b"], ["a", "b"], ["b"]])
    firsts, slots = reference_groups(cands, refs)
    lists = refs.to_pylist()
    assert sorted(lists[f] == lists[0] for f in firsts) == [False, False, True]
    by_first = {int(f): [int(r) for r in slots[:, u]] for u, f in enumerate(firsts)}
    assert by_first == {0: [0, 2, 4], 1: [1, 3, 6], 5: [5, 6, 6]}
    # sharing that would not pay, and inputs the plain path must judge
    assert reference_groups(cands, pa.array([["a"], ["b"], ["c"], ["d"], ["a"], ["e"]])) is None  # 5 lists
    assert reference_groups(cands, pa.array([["a"]] * 5 + [["b"]])) is not None
    assert reference_groups(cands, pa.array([["a"]] * 5 + [None])) is None           # a null list
    assert reference_groups(pa.array([1, 2, 3, 4, 5, 6]), pa.array([["a"]] * 6)) is None  # not strings
    assert reference_groups(cands, pa.array([["", "b"], ["b"], ["", "b"], ["b"], [None, "b"], ["b"]])) is not None


def _invalid_utf8_at(strings, row):
    """An Arrow string array of ``strings`` whose value ``row`` is the bytes a\\xff (not UTF-8)."""
    data = [s.encode() if i != row else b"a\xff" for i, s in enumerate(strings)]
    offsets = np.cumsum([0] + [len(d) for d in data]).astype(np.int32)
    return pa.Array.from_buffers(pa.string(), len(data), [None, pa.py_buffer(offsets.tobytes()),
                                                          pa.py_buffer(b"".join(data))])


def test_rows_sharing_references_fail_as_batch_stats():
    """batch_stats_shared scores rows out of order (grouped by reference list), yet raises what
    batch_stats raises: the first bad row's error, a candidate's or a reference list's, in a batch
    where the lists are shared (checked: reference_groups plans it)."""
    from bleu_core import MetricSet
    from bleu_core.kernels.arrow import reference_groups
    from bleu_core.metrics.chrf import Chrf
    from bleu_core.protocol import batch_stats_shared

    cands = ["a b", "b c", "c d", "d e", "e f", "f g", "g h", "h i"]
    refs = [["a b c"], ["b c d", None]] * 4
    flat = [r for row in refs for r in row]
    offsets = pa.array(np.cumsum([0] + [len(r) for r in refs]), pa.int32())
    cases = [
        (pa.array(cands[:3] + [None] + cands[4:]), pa.array(refs)),        # row 3: a null candidate
        (_invalid_utf8_at(cands, 5), pa.array(refs)),                       # row 5: a candidate not UTF-8
        (pa.array(cands), pa.array(refs[:6] + [[None]] + refs[7:])),        # row 6: no reference
        (pa.array(cands), pa.ListArray.from_arrays(offsets, _invalid_utf8_at([r or "" for r in flat], 7))),
        (pa.array(cands[:6] + [None] + cands[7:]), pa.array(refs[:2] + [[None]] + refs[3:])),  # row 2 first
    ]
    for metric in (Bleu(), MetricSet([Bleu(), Chrf()])):
        for c, r in cases:
            assert reference_groups(c, r) is not None
            with pytest.raises(BatchInputError) as plain:
                metric.batch_stats(c, r)
            with pytest.raises(BatchInputError) as shared:
                batch_stats_shared(metric, c, r)
            assert str(shared.value) == str(plain.value)

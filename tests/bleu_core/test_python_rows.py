"""Statistics as Python ints, without numpy (issue 34): ``MetricSet.batch_stats_lists``, the kernels'
``memoryview`` outputs, the integer sums and the buffers made from lists.

``beambleu score``'s plain path holds its statistics as Python ints so that it never imports numpy; these
tests hold that path to sacrebleu's per-segment statistics (run here), to hand counts, and to the numpy
path's errors. Whether numpy stays unimported is checked in a fresh process
(``tests/beambleu/commands/test_cli_startup.py`` for the command; here for ``bleu_core`` itself).
"""

from __future__ import annotations

import array
import subprocess
import sys

import numpy as np
import pytest
from sacrebleu.metrics import BLEU, CHRF

from bleu_core.errors import BatchInputError
from bleu_core.kernels.buffers import list_buffers, new_out, python_rows, utf8_buffers
from bleu_core.metrics.bleu import Bleu
from bleu_core.metrics.chrf import Chrf
from bleu_core.metrics.ter import Ter
from bleu_core.protocol import MetricSet
from bleu_core.resampling import counter, seeds
from bleu_core.sums import INT64_MAX, checked_add, checked_add_ints, column_sums, column_sums_ints

from ..oracle import REPO, to_streams

HYPS = ["The cat sat on the mat.", "Ünïcode — ça marche, n'est-ce pas ?", "", "a b c d", "x"]
REFS = [["The cat is on the mat.", "A cat sat on a mat."], ["Unicode : ça marche, n'est-ce pas?", None],
        ["", "nothing"], ["a", None], ["x y", "x"]]
HYPS_B = ["The dog sat on the mat.", "Unicode, ça marche ?", "empty", "a b", "y"]


def _sacrebleu_rows(metric, hyps, refs):
    return [list(map(int, row)) for row in metric._extract_corpus_statistics(hyps, to_streams(refs))]


@pytest.mark.parametrize("per_row", [True, False])
def test_bleu_and_chrf_lists_are_sacrebleus_statistics(per_row):
    """Two systems, BLEU and chrF++ side by side: each metric's columns of each row are sacrebleu's
    per-segment statistics (whose layout beambleu keeps), and without ``per_row`` their column sums."""
    metrics = MetricSet([Bleu(), Chrf(word_order=2)])
    out = metrics.batch_stats_lists([HYPS, HYPS_B], REFS, per_row=per_row)
    assert len(out) == 2
    for hyps, stats in zip([HYPS, HYPS_B], out):
        parts = [_sacrebleu_rows(m, hyps, REFS) for m in (BLEU(), CHRF(word_order=2))]
        expected = [a + b for a, b in zip(*parts)]
        if not per_row:
            expected = [sum(col) for col in zip(*expected)]
        assert stats == expected
        assert all(type(x) is int for x in (stats if not per_row else stats[0]))


@pytest.mark.parametrize("metrics", [[Ter()], [Bleu(), Ter()], [Chrf(), Ter(normalized=True)], [Bleu(tokenize="char")]])
@pytest.mark.parametrize("per_row", [True, False])
def test_lists_equal_the_arrays(metrics, per_row):
    """The same numbers as ``batch_stats_many``'s arrays, for every metric (TER's normalized option and a
    tokenizer the list buffers do not serve take the Arrow path; their rows are lists all the same)."""
    metrics = MetricSet(metrics)
    lists = metrics.batch_stats_lists([HYPS, HYPS_B], REFS, per_row=per_row)
    arrays = metrics.batch_stats_many([HYPS, HYPS_B], REFS, per_row=per_row)
    assert lists == [a.tolist() for a in arrays]


def test_empty_batch():
    metrics = MetricSet([Bleu(), Chrf()])
    assert metrics.batch_stats_lists([[]], [], per_row=True) == [[]]
    assert metrics.batch_stats_lists([[]], [], per_row=False) == [[0] * metrics.width]
    assert metrics.batch_stats_lists([], []) == []


@pytest.mark.parametrize("hyps, refs", [(["a", None], [["a"], ["b"]]), (["a", "b"], [["a"], [None]]),
                                        (["a", "\udc80"], [["a"], ["b"]]), (["a", "b"], [["a"], ["\udc80"]])])
def test_bad_rows_raise_what_the_arrays_raise(hyps, refs):
    metrics = MetricSet([Bleu(), Chrf()])
    with pytest.raises((BatchInputError, TypeError, ValueError)) as theirs:
        metrics.batch_stats_many([hyps], refs)
    with pytest.raises(type(theirs.value)) as ours:
        metrics.batch_stats_lists([hyps], refs)
    assert str(ours.value) == str(theirs.value)


def test_new_out_is_a_buffer_within_python_rows():
    assert isinstance(new_out(2, 3, True), np.ndarray)
    with python_rows():
        rows, sums, empty = new_out(2, 3, True), new_out(2, 3, False), new_out(0, 3, True)
    assert isinstance(new_out(2, 3, False), np.ndarray)  # the mode ends with the block
    assert rows.tolist() == [[0, 0, 0], [0, 0, 0]] and rows.format == "q" and not rows.readonly
    assert sums.tolist() == [0, 0, 0] and empty.tolist() == []


def test_integer_sums_and_their_overflow_messages():
    """Hand counts, and the same OverflowError messages as the numpy sums."""
    rows = [[1, 2, 3], [4, 5, 6]]
    assert column_sums_ints(rows, 3) == [5, 7, 9] and column_sums_ints([], 3) == [0, 0, 0]
    total = [10, 20, 30]
    assert checked_add_ints(total, [1, 2, 3]) == [11, 22, 33] == total
    big = [[1, INT64_MAX], [0, 1]]
    with pytest.raises(OverflowError) as ours:
        column_sums_ints(big, 2)
    with pytest.raises(OverflowError) as theirs:
        column_sums(np.array(big, dtype=np.int64))
    assert str(ours.value) == str(theirs.value) == \
        f"the sum of statistics overflows int64: column 1 would exceed 2**63 - 1 = {INT64_MAX}"
    total, before = [5, INT64_MAX - 1, 0], [5, INT64_MAX - 1, 0]
    name = ["hyp", "ref", "match"].__getitem__
    with pytest.raises(OverflowError) as ours:
        checked_add_ints(total, [0, 2, 0], what="the statistics of a system", name=name)
    with pytest.raises(OverflowError) as theirs:
        checked_add(np.array(before), np.array([0, 2, 0]), what="the statistics of a system", name=name)
    assert str(ours.value) == str(theirs.value) == \
        f"the statistics of a system overflows int64: ref would exceed 2**63 - 1 = {INT64_MAX}"
    assert total == before  # left as it was


@pytest.mark.parametrize("texts", [["abc", "", "de"], ["é", "ab", "€x", "𝄞"], ["a", None, "b"], []])
def test_utf8_buffers_offsets_are_byte_lengths(texts):
    data, offsets, valid = utf8_buffers(texts)
    encoded = [b"" if t is None else t.encode() for t in texts]
    assert data == b"".join(encoded)
    assert isinstance(offsets, array.array) and offsets.typecode == "q"
    assert offsets.tolist() == [sum(map(len, encoded[:i])) for i in range(len(texts) + 1)]
    assert valid == (None if None not in texts else bytearray(int(t is not None) for t in texts))


def test_utf8_buffers_refuse_what_has_no_utf8_form():
    assert utf8_buffers(["a", "\ud800"]) is None
    assert utf8_buffers(["a", 3]) is None
    bufs = list_buffers(["ab", "c"], [["ab"], ["x", None]])
    assert bufs.list_offsets.tolist() == [0, 1, 3] and bufs.n == 2


def test_ter_ordered_sum_of_lists_is_sacrebleus_float_sum():
    """TER's sum of average reference lengths, added row by row as sacrebleu adds them: 3 references of
    lengths summing to 4 average 4/3; a row with no reference words adds 0. The rows as lists and as an
    array give the same float."""
    ter = Ter()
    width = ter.width
    rows = []
    for refs, total in ((3, 4), (1, 2), (3, 0), (5, 7)):
        row = [0] * width
        row[5 + refs - 1] = total  # (edits, ins, del, sub, shift), then the length in the column of the count
        rows.append(row)
    expected = 0.0
    for part in (4 / 3, 2 / 1, 0 / 1, 7 / 5):
        expected += part
    assert ter.ordered_sum(rows) == expected
    assert ter.ordered_sum(np.array(rows, dtype=np.int64)) == expected
    assert ter.ordered_sum(rows[2:], ter.ordered_sum(rows[:2])) == expected


def test_scores_of_lists_equal_scores_of_arrays():
    for metric in (Bleu(), Chrf(word_order=2), Ter()):
        (rows,) = MetricSet([metric]).batch_stats_lists([HYPS], REFS)
        for row in rows + [column_sums_ints(rows, metric.width)]:
            assert metric.score(row).format(3) == metric.score(np.array(row, dtype=np.int64)).format(3)


def test_seed_helpers_are_counters():
    """bleu_core.resampling.counter re-exports the numpy-free seed and replicate-count checks."""
    for name in ("DEFAULT_N", "DEFAULT_SEED", "MAX_REPLICATE_BYTES", "MAX_SEED", "check_replicates", "check_seed",
                 "max_replicates", "seed_from_env"):
        assert getattr(counter, name) is getattr(seeds, name)
    assert counter.check_seed(np.uint64(7)) == 7 and counter.check_replicates(np.int64(5)) == 5
    with pytest.raises(TypeError):
        seeds.check_seed(True)
    assert counter.THRESHOLDS.dtype == np.uint64 and len(counter.THRESHOLDS) == counter.MAX_WEIGHT
    assert counter.SWAP_THRESHOLDS.tolist() == [1 << 31]


def test_counting_imports_no_numpy():
    """Statistics, their sums and scores of lists, in a fresh process: numpy is never imported (the check
    sees numpy when a numpy path runs)."""
    code = """
import sys
from bleu_core.protocol import MetricSet
from bleu_core.metrics.bleu import Bleu
from bleu_core.metrics.chrf import Chrf
from bleu_core.metrics.ter import Ter
from bleu_core.resampling import counter, seeds
from bleu_core.sums import column_sums_ints
metrics = MetricSet([Bleu(), Chrf(), Ter()])
rows = metrics.batch_stats_lists([["a b c", "d"]], [["a b", None], ["d e"]])[0]
totals = column_sums_ints(rows, metrics.width)
[m.score(totals[s]).score for m, s in zip(metrics, metrics.slices)]
seeds.check_replicates(1000)
print("numpy" in sys.modules, end=" ")
if sys.argv[1:] == ["arrays"]:
    metrics.batch_stats_many([["a"]], [["a"]])
print("numpy" in sys.modules)
"""
    for args, expected in (([], "False False"), (["arrays"], "False True")):
        out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=REPO,
                             check=True).stdout
        assert out.strip() == expected


class _Lengths(Bleu):
    """A metric whose batch path slices another metric's array (as a plugin's may): it never sees a buffer
    of python_rows, whose memoryviews do not slice in two dimensions."""

    id = "lengths"
    plain_buffers = False

    @property
    def width(self) -> int:
        return 2

    def batch_stats_many(self, systems, references, per_row: bool = True):
        out = [Bleu().batch_stats(c, references, per_row=True)[:, :2] for c in systems]
        return out if per_row else [column_sums(rows) for rows in out]


@pytest.mark.parametrize("per_row", [True, False])
def test_a_metric_without_plain_buffers_gets_arrays(per_row):
    metrics = MetricSet([Chrf(), _Lengths()])
    lists = metrics.batch_stats_lists([HYPS, HYPS_B], REFS, per_row=per_row)
    bleu = [_sacrebleu_rows(BLEU(), hyps, REFS) for hyps in (HYPS, HYPS_B)]
    chrf = [_sacrebleu_rows(CHRF(), hyps, REFS) for hyps in (HYPS, HYPS_B)]
    expected = [[c + b[:2] for c, b in zip(cs, bs)] for cs, bs in zip(chrf, bleu)]
    if not per_row:
        expected = [[sum(col) for col in zip(*rows)] for rows in expected]
    assert lists == expected

"""The plain path of ``corpus_score`` (no bootstrap) of ``bleu_core.compat``'s BLEU and CHRF: the kernel
sums the statistics of lists of ``str`` as they are (no row per segment, no numpy), and any input it
declines goes through the full path, which raises its own errors in their order. Everything is compared
with sacrebleu 2.6.0 run here, or with the messages the full path has always raised.
"""

import os
import subprocess
import sys

import pytest

from bleu_core import compat
from bleu_core.kernels.buffers import RowLists, list_buffers

pytest.importorskip("sacrebleu")
import sacrebleu  # noqa: E402

ASCII = (["The dog bit the man.", "It wasn't surprising.", "The man had just bitten him.", ""],
         [["The dog bit the man.", "It was not unexpected.", "The man bit him first.", "x"],
          ["The dog had bit the man.", "No way.", "", "y y"]])
# wide and narrow characters in one list (a 4-byte one among 3- and 2-byte ones), and lines that are ASCII
MIXED = (["그는 현재 4개월 된 생쥐가 있다고 덧붙였다.", "Él dijo: «sí» 😀 .", "plain ASCII line", "東京 は 大きい 。"],
         [["그는 현재 4개월 된 당뇨병 생쥐가 있다고 말했다.", "Él dijo «sí» 😀.", "plain ASCII line!", "東京は大きい。"],
          ["그는 생쥐가 있다고 덧붙였다.", "dijo que sí", "a plain line", "東京 は 大きい"],
          ["현재", "«sí»", "ASCII", "。"]])

MAKERS = {
    "bleu": ("BLEU", {}),
    "bleu-intl-lc": ("BLEU", dict(tokenize="intl", lowercase=True)),
    "bleu-addk": ("BLEU", dict(smooth_method="add-k")),
    "bleu-floor": ("BLEU", dict(smooth_method="floor", smooth_value=0.2)),
    "bleu-char-eff": ("BLEU", dict(tokenize="char", effective_order=True)),
    "chrf": ("CHRF", {}),
    "chrf++": ("CHRF", dict(word_order=2)),
    "chrf-ws-lc": ("CHRF", dict(whitespace=True, lowercase=True)),
}


def made(module, maker, **more):
    name, options = maker
    return getattr(module, name)(**options, **more)


def versioned_as_sacrebleu(text: str) -> str:
    return text.replace("beambleu-0.1.0", "2.6.0")


def assert_same(ours, theirs, m_ours, m_theirs):
    assert type(ours.score) is type(theirs.score) and ours.score == theirs.score
    for name in ("counts", "totals", "precisions", "bp", "sys_len", "ref_len", "ratio", "char_order", "word_order",
                 "beta"):
        if hasattr(theirs, name):
            value = getattr(ours, name)
            assert value == getattr(theirs, name), name
            assert [type(v) for v in (value if isinstance(value, list) else [value])] == \
                [type(v) for v in (getattr(theirs, name) if isinstance(value, list) else [getattr(theirs, name)])], name
    sig_ours, sig_theirs = m_ours.get_signature(), m_theirs.get_signature()
    assert versioned_as_sacrebleu(ours.format(signature=sig_ours.format())) == \
        theirs.format(signature=sig_theirs.format())
    assert versioned_as_sacrebleu(sig_ours.format(short=True)) == sig_theirs.format(short=True)


@pytest.mark.parametrize("maker", MAKERS.values(), ids=MAKERS.keys())
@pytest.mark.parametrize("data", [ASCII, MIXED], ids=["ascii", "mixed"])
@pytest.mark.parametrize("streams", [1, 2], ids=["1ref", "2refs"])
@pytest.mark.parametrize("container", [list, tuple])
def test_plain_corpus_score_is_sacrebleus(maker, data, streams, container):
    hyps, refs = data
    refs = container(container(s) for s in refs[:streams])
    ours, theirs = made(compat, maker), made(sacrebleu, maker)
    assert ours._corpus_totals(container(hyps), refs) is not None  # the plain path takes it
    assert_same(ours.corpus_score(container(hyps), refs), theirs.corpus_score(list(hyps), [list(s) for s in refs]),
                ours, theirs)


@pytest.mark.parametrize("maker", MAKERS.values(), ids=MAKERS.keys())
def test_cached_references_take_the_plain_path(maker):
    hyps, refs = MIXED
    ours, theirs = made(compat, maker, references=refs), made(sacrebleu, maker, references=refs)
    assert isinstance(ours._ref_cache, RowLists) and ours._corpus_totals(hyps, None) is not None
    assert_same(ours.corpus_score(hyps, None), theirs.corpus_score(hyps, None), ours, theirs)


@pytest.mark.parametrize("name", ["BLEU", "CHRF"])
@pytest.mark.parametrize("hyps, refs", [
    (["é", "b", "c"], [["é", None, "c"], ["x", "b", None]]),  # missing references: nrefs var
    (["é", "b", "c"], [["é", "b", "c"], [None, None, None]]),  # one stream all missing: nrefs 1
    (["a \ud800 b .", "c d"], [["a \ud800 b", "c d e"]]),  # text without a UTF-8 form
    (["é \udfff", "c d"], [["a b", "c d e"]]),
])
def test_inputs_it_declines_are_scored_as_sacrebleu_scores_them(name, hyps, refs):
    ours, theirs = getattr(compat, name)(), getattr(sacrebleu, name)()
    assert ours._corpus_totals(hyps, refs) is None
    assert_same(ours.corpus_score(hyps, refs), theirs.corpus_score(hyps, refs), ours, theirs)


@pytest.mark.parametrize("hyps, refs, error, message", [
    (["é", None, "c"], [["a", "b", "c"]], TypeError, "BLEU: Undefined line in hypotheses stream!"),
    (["a", None, "c"], [["a", "b", "c"]], TypeError, "BLEU: Undefined line in hypotheses stream!"),
    (["é", 3, "c"], [["a", "b", "c"]], TypeError, "BLEU: hypothesis 1 is a int, not a string."),
    (["é", b"x", "c"], [["a", "b", "c"]], TypeError, "BLEU: hypothesis 1 is a bytes, not a string."),
    (["é", "b", "c"], [["a", 5, "c"]], TypeError, "BLEU: reference of segment 1 is a int, not a string or None."),
    (["é", "b", "c"], [["a", "b", "c"], ["a", "b"]], ValueError,
     "BLEU: reference streams have different lengths (2, 3 lines); mark a missing reference with None"),
    (["é", "b", "c"], [["a", "b"]], ValueError, "BLEU: 3 hypotheses but 2 reference lines"),
    (["é", "b"], [["a", "b", "c"]], ValueError, "BLEU: 2 hypotheses but 3 reference lines"),
    (["é", "b"], [["a", None], ["c", None]], ValueError,
     "BLEU: segment 1 has no reference (None in every reference stream)"),
    # a bad hypothesis is named before a bad reference stream, as the full path checks them
    ([None, "b"], [["a"], ["b", "c"]], TypeError, "BLEU: Each element of `hyps` should be a string."),
    (["é", None], [["a"], ["b", "c"]], TypeError, "BLEU: Undefined line in hypotheses stream!"),
])
def test_inputs_it_declines_raise_the_full_paths_errors(hyps, refs, error, message):
    metric = compat.BLEU()
    assert metric._corpus_totals(hyps, refs) is None
    assert not hasattr(metric, "num_refs")  # the plain path sets it only when it succeeds
    with pytest.raises(error) as raised:
        metric.corpus_score(hyps, refs)
    assert str(raised.value) == message


def test_tokenized_period_warning_counts_the_lines(caplog):
    import logging

    hyps = ["é sentence ."] * 60 + ["a sentence ."] * 60 + ["no period"] * 5 + ["other .", "x ."]
    refs = [["a sentence."] * len(hyps)]
    with caplog.at_level(logging.WARNING, logger="bleu_core.compat"):
        compat.BLEU().corpus_score(hyps, refs)
    assert "That's 122 lines that end in a tokenized period" in caplog.text  # 60 + 60 + 2, counted by hand


def test_a_plain_score_imports_neither_numpy_nor_logging_nor_other_metrics():
    code = """if True:
        import sys
        from bleu_core.compat import BLEU, CHRF
        hyps, refs = ["é a b c d", "x y"], [["é a b c", "x y z"]]
        BLEU().corpus_score(hyps, refs).format()
        CHRF(word_order=2).corpus_score(hyps, refs).format()
        loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("numpy", "pyarrow", "pandas", "logging")
                        or m.startswith("bleu_core.metrics.ter"))
        print(loaded)
    """
    env = {**os.environ, "BEAMBLEU_KERNELS": "c"}  # (the readable reference paths read lists with pyarrow)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    assert out.strip() == "[]"


def test_row_lists_are_the_lists_of_their_streams():
    streams = [["a", "b", "c"], ["A", "B", "C"], ["1", "2", "3"]]
    rows = RowLists.of_streams(streams)
    lists = [list(t) for t in zip(*streams)]
    assert len(rows) == 3 and list(rows) == lists and [rows[i] for i in range(-3, 3)] == lists + lists
    assert rows[1:] == lists[1:] and rows[::-1] == lists[::-1] and rows[5:] == []
    with pytest.raises(IndexError):
        rows[3]
    one = RowLists.of_streams([("x", "y")])
    assert list(one) == [["x"], ["y"]] and one.flat == ["x", "y"]
    with pytest.raises(ValueError):
        RowLists([], 0)


@pytest.mark.parametrize("streams", [[["é", "b", ""]], [["é", "b", ""], ["c", "", "😀"]]])
def test_row_lists_buffers_are_the_lists_buffers(streams):
    hyps = ["x", "é", "z"]
    ours = list_buffers(hyps, RowLists.of_streams(streams))
    lists = list_buffers(hyps, [list(t) for t in zip(*streams)])
    assert ours.n == lists.n == 3
    assert ours.candidates == lists.candidates and ours.references == lists.references
    assert ours.list_offsets == lists.list_offsets and ours.list_offsets.typecode == "q"

"""Python lists reach the kernels without pyarrow (issue 34): ``corpus_score`` of plain lists (checked in a few
passes, :func:`bleu_core.protocol.checked_chunks`), the compat classes, and several metrics over several systems
(:meth:`MetricSet.batch_stats_many`, each list's buffers made once) give sacrebleu's numbers, and what is not
plain still takes the checked path with its messages.

Expected values are sacrebleu's, computed in the test; the messages are written out here.
"""

from __future__ import annotations

import pytest
import sacrebleu

from bleu_core import Bleu, Chrf, Ter, compat
from bleu_core.protocol import MetricSet

from ..oracle import REPO

SAMPLE = REPO / "examples" / "sample"


def _lines(name, n=60):
    return (SAMPLE / name).read_text(encoding="utf-8").splitlines()[:n]


HYP, HYP_B, REF = _lines("sys.alpha.txt"), _lines("sys.beta.txt"), _lines("ref.A.txt")
OTHER = REF[1:] + REF[:1]  # a second reference stream
SACRE = {"bleu": sacrebleu.BLEU, "chrf": sacrebleu.CHRF, "chrf++": lambda: sacrebleu.CHRF(word_order=2),
         "ter": sacrebleu.TER}
OURS = {"bleu": Bleu, "chrf": Chrf, "chrf++": lambda: Chrf(word_order=2), "ter": Ter}


class Text(str):
    """A str subclass: the same text."""


@pytest.mark.parametrize("metric", sorted(SACRE))
@pytest.mark.parametrize("layout", ["lists", "tuples", "subclass", "missing"])
def test_plain_lists_score_as_sacrebleu(metric, layout):
    hyps, streams = list(HYP), [list(REF), list(OTHER)]
    if layout == "missing":  # a None reference in some rows: sacrebleu skips it
        streams[1] = [None if i % 3 == 0 else r for i, r in enumerate(streams[1])]
    expected = SACRE[metric]().corpus_score(hyps, streams).score
    refs = [[r for r in pair] for pair in zip(*streams)]
    if layout == "tuples":
        hyps, refs = tuple(hyps), tuple(tuple(r) for r in refs)
    elif layout == "subclass":
        hyps, refs = [Text(h) for h in hyps], [[Text(r) for r in pair] for pair in refs]
    assert OURS[metric]().corpus_score(hyps, refs).score == expected


@pytest.mark.parametrize("name", ["BLEU", "CHRF", "TER"])
def test_compat_streams_score_as_sacrebleu(name):
    for streams in ([REF], [REF, OTHER], [REF, [None if i % 2 else r for i, r in enumerate(OTHER)]]):
        theirs = getattr(sacrebleu, name)()
        ours = getattr(compat, name)()
        assert str(ours.corpus_score(HYP, streams)) == str(theirs.corpus_score(HYP, streams))
        assert ours.num_refs == theirs.num_refs


def test_lone_surrogates_take_the_scalar_path():
    hyps, refs = ["a \ud800 b", "c d e"], [["a b \ud800"], ["c d"]]
    for metric in SACRE:
        assert OURS[metric]().corpus_score(hyps, refs).score == \
            SACRE[metric]().corpus_score(hyps, [[r[0] for r in refs]]).score


@pytest.mark.parametrize("hyps, refs, error, message", [
    (["a", None], [["a"], ["b"]], ValueError, "candidates[1] is None"),
    (["a", 3], [["a"], ["b"]], TypeError, "candidates[1] must be a str, got int"),
    (["a", "b"], [["a"], [None, None]], ValueError, "references[1]: no reference (all references are missing)"),
    (["a", "b"], [["a"], []], ValueError, "references[1]: no reference (all references are missing)"),
    (["a", "b"], [["a"], "b"], TypeError, "references[1] must be a list of reference strings"),
    (["a", "b"], [["a"], ["b", b"c"]], TypeError, "references[1][1] must be a str or None, got bytes"),
    (["a", "b"], [["a"]], ValueError, "candidates and references have different lengths"),
])
@pytest.mark.parametrize("metric", ["bleu", "chrf", "ter"])
def test_what_is_not_plain_is_checked_pair_by_pair(metric, hyps, refs, error, message):
    with pytest.raises(error) as info:
        OURS[metric]().corpus_score(hyps, refs)
    assert str(info.value).startswith(message)


def test_several_metrics_and_systems_share_the_buffers():
    """Each system's statistics, summed, score as sacrebleu scores that system (every metric)."""
    metrics = MetricSet([Bleu(), Chrf(), Ter()])
    refs = [list(pair) for pair in zip(REF, OTHER)]
    stats = metrics.batch_stats_many([HYP, HYP_B], refs, per_row=True)
    for hyps, rows in zip([HYP, HYP_B], stats):
        totals = rows.sum(axis=0)
        for metric, cols, make in zip(metrics, metrics.slices, (sacrebleu.BLEU, sacrebleu.CHRF, sacrebleu.TER)):
            # (TER: two references per pair, so the exact sum of average reference lengths is sacrebleu's float sum)
            assert metric.score(totals[cols]).score == make().corpus_score(hyps, [REF, OTHER]).score

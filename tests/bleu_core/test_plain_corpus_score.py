"""bleu_core's own list API, ``Metric.corpus_score(candidates, per-pair reference lists)``: lists of str go to
the kernels as they are, each chunk summed there (``Metric._plain_corpus_totals``: no row per pair, no numpy);
anything else takes the checked path. Expected scores come from sacrebleu 2.6.0 run here on the same text;
expected errors are the API's messages, written out."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest
import sacrebleu

from bleu_core import Bleu, Chrf, protocol
from bleu_core.kernels import use_reference

WORDS = ["the", "cat", "sat", "on", "a", "mat", ".", ",", "l'été", "Straße", "ÉCOLE", "东京", "won't", "&", "<b>",
         "50%", "3.14", "--", "naïve", "ﬁ", "İstanbul", "ΣΊΣΥΦΟΣ"]


def _corpus(seed: int, n: int, nrefs: int):
    rng = random.Random(seed)

    def line():
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 12)))

    return [line() for _ in range(n)], [[line() for _ in range(nrefs)] for _ in range(n)]


def _streams(refs):
    return [list(s) for s in zip(*refs)]


CASES = [
    (Bleu, {}, sacrebleu.BLEU, {}),
    (Bleu, {"tokenize": "intl", "lowercase": True}, sacrebleu.BLEU, {"tokenize": "intl", "lowercase": True}),
    (Bleu, {"tokenize": "char", "smooth_method": "floor"}, sacrebleu.BLEU, {"tokenize": "char", "smooth_method": "floor"}),
    (Bleu, {"tokenize": "zh", "max_ngram_order": 2}, sacrebleu.BLEU, {"tokenize": "zh", "max_ngram_order": 2}),
    (Chrf, {}, sacrebleu.CHRF, {}),
    (Chrf, {"word_order": 2, "lowercase": True}, sacrebleu.CHRF, {"word_order": 2, "lowercase": True}),
]


@pytest.mark.parametrize("ours, kw, theirs, skw", CASES)
@pytest.mark.parametrize("nrefs", [1, 3])
@pytest.mark.parametrize("as_tuples", [False, True])
def test_lists_score_as_sacrebleu(monkeypatch, ours, kw, theirs, skw, nrefs, as_tuples):
    monkeypatch.setattr(protocol, "CHUNK", 7)  # several chunks, the last a short one
    hyps, refs = _corpus(nrefs * 10 + len(kw), 40, nrefs)
    expected = theirs(**skw).corpus_score(hyps, _streams(refs))
    metric = ours(**kw)
    assert metric._plain_corpus_totals(hyps, refs) is not None  # the plain path takes these
    if as_tuples:
        hyps, refs = tuple(hyps), tuple(tuple(r) for r in refs)
    got = metric.corpus_score(hyps, refs)
    assert got.score == expected.score
    assert got.format().split(" = ", 1)[1] == expected.format().split(" = ", 1)[1]
    assert f"nrefs:{nrefs}|" in got.format()


def test_a_missing_reference_takes_the_checked_path():
    # sacrebleu marks a missing reference with None in its stream; the checked path reads it, the plain one declines
    hyps, refs = ["a b", "b"], [["a b", None], ["b", "c"]]
    assert Bleu()._plain_corpus_totals(hyps, refs) is None
    expected = sacrebleu.BLEU().corpus_score(hyps, [["a b", "b"], [None, "c"]])
    got = Bleu().corpus_score(hyps, refs)
    assert got.score == expected.score and "nrefs:var|" in got.format()


def test_lone_surrogates_take_the_checked_path():
    # no UTF-8 form: scored by the scalar path; sacrebleu scores the same text
    hyps, refs = ["a\ud800 b", "b"], [["a\ud800 b"], ["b c"]]
    assert Chrf()._plain_corpus_totals(hyps, refs) is None
    assert Chrf().corpus_score(hyps, refs).score == sacrebleu.CHRF().corpus_score(hyps, _streams(refs)).score


@pytest.mark.parametrize("hyps, refs, error, message", [
    (["a", None], [["a"], ["b"]], ValueError, "candidates[1] is None"),
    (["a", "b"], [["a"], []], ValueError, "references[1]: no reference (all references are missing)"),
    (["a", "b"], [["a"], [None]], ValueError, "references[1]: no reference (all references are missing)"),
    (["a", "b"], [["a"], [3]], TypeError, "references[1][0] must be a str or None, got int"),
    (["a", "b"], [["a"]], ValueError, "candidates and references have different lengths (more candidates after item 1)"),
    ([], [], ValueError, "candidates: no segments to score"),
])
@pytest.mark.parametrize("metric", [Bleu, Chrf])
def test_bad_input_raises_the_checked_paths_error(metric, hyps, refs, error, message):
    with pytest.raises(error) as info:
        metric().corpus_score(hyps, refs)
    assert str(info.value) == message


@pytest.mark.skipif(use_reference(), reason="BEAMBLEU_KERNELS=python: the reference paths compute with numpy")
def test_no_numpy():
    code = ("import sys\nfrom bleu_core import Bleu, Chrf\n"
            "h, r = ['the cat sat .'] * 50, [['the cat sat on the mat .', 'a cat sat .']] * 50\n"
            "print(Bleu().corpus_score(h, r).score, Chrf().corpus_score(h, r).score, 'numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    h, r = ["the cat sat ."] * 50, [["the cat sat on the mat ."] * 50, ["a cat sat ."] * 50]
    assert out == [str(sacrebleu.BLEU().corpus_score(h, r).score), str(sacrebleu.CHRF().corpus_score(h, r).score),
                   "False"]

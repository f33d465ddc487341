"""bleu_core.compat's chrF and chrF++: the facts of sacrebleu 2.6.0's test_chrf.py, and
bit-identity with sacrebleu 2.6.0 on real lines with missing and empty references."""

import math

import pytest

from bleu_core import compat

from ...oracle import ragged_references
from ..metrics.chrf.test_chrf import (EFFECTIVE_ORDER_BETA3, EPS_SMOOTHING_BETA3, KEEP_WHITESPACE_BETA3,
    SENTENCE_EPS_SMOOTHING)

sacrebleu = pytest.importorskip("sacrebleu")

TOL = 1e-4

# the facts of sacrebleu 2.6.0's test_chrf.py are ported once, in tests/bleu_core/metrics/chrf/test_chrf.py


@pytest.mark.parametrize("hyps, refs, expected", EPS_SMOOTHING_BETA3)
def test_chrf_eps_smoothing(hyps, refs, expected):
    score = compat.corpus_chrf(hyps, [refs], char_order=6, word_order=0, beta=3, eps_smoothing=True).score
    assert abs(score - expected) < TOL


@pytest.mark.parametrize("hyps, refs, expected", EFFECTIVE_ORDER_BETA3)
def test_chrf_effective_order(hyps, refs, expected):
    score = compat.corpus_chrf(hyps, [refs], char_order=6, word_order=0, beta=3, eps_smoothing=False).score
    assert abs(score - expected) < TOL


@pytest.mark.parametrize("hyps, refs, expected", KEEP_WHITESPACE_BETA3)
def test_chrf_keep_whitespace(hyps, refs, expected):
    score = compat.corpus_chrf(hyps, [refs], char_order=6, word_order=0, beta=3, remove_whitespace=False).score
    assert abs(score - expected) < TOL


@pytest.mark.parametrize("hyp, refs, expected", SENTENCE_EPS_SMOOTHING)
def test_sentence_chrf(hyp, refs, expected):
    assert abs(compat.sentence_chrf(hyp, refs, eps_smoothing=True).score - expected) < TOL


def test_score_names():
    assert compat.CHRF().corpus_score(["a"], [["a"]]).name == "chrF2"
    assert compat.CHRF(word_order=2).corpus_score(["a"], [["a"]]).name == "chrF2++"
    assert compat.CHRF(beta=1, word_order=1).sentence_score("a", ["a"]).name == "chrF1+"
    assert (compat.CHRF.CHAR_ORDER, compat.CHRF.WORD_ORDER, compat.CHRF.BETA) == (6, 0, 2)


# ------------------------------------------------------------------ bit-identity with sacrebleu 2.6.0

CHRF_OPTIONS = [
    {},
    {"word_order": 2},
    {"word_order": 2, "beta": 1, "lowercase": True},
    {"whitespace": True},
    {"eps_smoothing": True},
    {"eps_smoothing": True, "word_order": 2, "whitespace": True},
    {"char_order": 4, "word_order": 1, "beta": 3},
    {"beta": 0},
]


def assert_same_chrf(ours, theirs):
    assert type(ours.score) is float and ours.score == theirs.score
    assert (ours.name, ours.char_order, ours.word_order, ours.beta) == \
        (theirs.name, theirs.char_order, theirs.word_order, theirs.beta)
    assert repr(ours) == repr(theirs)
    assert ours.format(width=17, signature="nrefs:1|x:y") == theirs.format(width=17, signature="nrefs:1|x:y")
    assert ours.format(is_json=True, signature="a:b") == theirs.format(is_json=True, signature="a:b")


@pytest.mark.parametrize("options", CHRF_OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default")
def test_corpus_and_sentence_scores_identical_to_sacrebleu(options):
    hyps, refs = ragged_references(300)
    ours, theirs = compat.CHRF(**options), sacrebleu.CHRF(**options)
    assert_same_chrf(ours.corpus_score(hyps, refs), theirs.corpus_score(hyps, refs))
    assert ours.get_signature().format().replace("beambleu-0.1.0", "2.6.0") == theirs.get_signature().format()
    assert ours._extract_corpus_statistics(hyps, refs).tolist() == theirs._extract_corpus_statistics(hyps, refs)
    for i in range(0, len(hyps), 7):
        segment_refs = [stream[i] for stream in refs]
        assert_same_chrf(ours.sentence_score(hyps[i], segment_refs), theirs.sentence_score(hyps[i], segment_refs))


def test_module_functions_identical_to_sacrebleus():
    hyps, refs = ragged_references(100)
    for kwargs in ({}, {"word_order": 2, "remove_whitespace": False}, {"beta": 1, "eps_smoothing": True}):
        assert_same_chrf(compat.corpus_chrf(hyps, refs, **kwargs), sacrebleu.corpus_chrf(hyps, refs, **kwargs))
        one = [stream[5] for stream in refs]
        assert_same_chrf(compat.sentence_chrf(hyps[5], one, **kwargs), sacrebleu.sentence_chrf(hyps[5], one, **kwargs))


def test_identity_is_a_real_check():
    hyps, refs = ragged_references(50)
    ours, theirs = compat.CHRF().corpus_score(hyps, refs), sacrebleu.CHRF().corpus_score(hyps, refs)
    ours.score = math.nextafter(ours.score, 0)
    with pytest.raises(AssertionError):
        assert_same_chrf(ours, theirs)

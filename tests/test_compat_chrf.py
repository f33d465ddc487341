"""bleu_core.compat's chrF and chrF++: the facts of sacrebleu 2.6.0's test_chrf.py, and
bit-identity with sacrebleu 2.6.0 on real lines with missing and empty references."""

import math

import pytest

from bleu_core import compat

from .oracle import CORPORA, read_lines

sacrebleu = pytest.importorskip("sacrebleu")

TOL = 1e-4

SENTENCES = [
    ("Co nás nejvíc trápí, protože lékaři si vybírají, kdo bude žít a kdo zemře.",
     ["Nejvíce smutní jsme z toho, že musíme rozhodovat o tom, kdo bude žít a kdo zemře."], 39.14078509),
    ("Nebo prostě nemají vybavení, které by jim pomohlo, uvedli lékaři.",
     ["A někdy nemáme ani potřebný materiál, abychom jim pomohli, popsali lékaři."], 31.22557079),
    ("Lapali po dechu, jejich životy skončily dřív, než skutečně začaly.",
     ["Lapali po dechu a pak jejich život skončil - dřív, než skutečně mohl začít, připomněli."], 57.15704367),
]

# eps smoothing (chrF++.py, NLTK, Moses): orders a short text lacks count as epsilon
EPS_CASES = [
    (["abcdefg"], ["hijklmnop"], 0.0),
    (["a"], ["b"], 0.0),
    ([""], ["b"], 0.0),
    ([""], ["ref"], 0.0),
    ([""], ["reference"], 0.0),
    (["aa"], ["ab"], 8.3333),
    (["a", "b"], ["a", "c"], 8.3333),
    (["a"], ["a"], 16.6667),
    (["a b c"], ["a b c"], 50.0),
    (["a b c"], ["abc"], 50.0),
    ([" risk assessment must be made of those who are qualified and expertise in the sector - these are the "
      "scientists ."],
     ["risk assessment has to be undertaken by those who are qualified and expert in that area - that is the "
      "scientists ."], 63.361730),
    ([" Die    Beziehung zwischen  Obama und Netanjahu ist nicht gerade  freundlich. "],
     ["Das Verhältnis zwischen Obama und Netanyahu ist nicht gerade freundschaftlich."], 64.1302698),
    (["Niemand hat die Absicht, eine Mauer zu errichten"], ["Niemand hat die Absicht, eine Mauer zu errichten"], 100.0),
]

# effective-order averaging (sacrebleu's default, as before 2.0.0)
EFFECTIVE_CASES = [
    (["a"], ["a"], 100.0),
    ([""], ["reference"], 0.0),
    (["a b c"], ["a b c"], 100.0),
    (["a b c"], ["abc"], 100.0),
    ([""], ["c"], 0.0),
    (["a", "b"], ["a", "c"], 50.0),
    (["aa"], ["ab"], 25.0),
]

WHITESPACE_CASES = [
    (["Die Beziehung zwischen Obama und Netanjahu ist nicht gerade freundlich."],
     ["Das Verhältnis zwischen Obama und Netanyahu ist nicht gerade freundschaftlich."], 67.3481606),
    (["risk assessment must be made of those who are qualified and expertise in the sector - these are the "
      "scientists ."],
     ["risk assessment has to be undertaken by those who are qualified and expert in that area - that is the "
      "scientists ."], 65.2414427),
]


@pytest.mark.parametrize("hyps, refs, expected", EPS_CASES)
def test_chrf_eps_smoothing(hyps, refs, expected):
    score = compat.corpus_chrf(hyps, [refs], char_order=6, word_order=0, beta=3, eps_smoothing=True).score
    assert abs(score - expected) < TOL


@pytest.mark.parametrize("hyps, refs, expected", EFFECTIVE_CASES)
def test_chrf_effective_order(hyps, refs, expected):
    score = compat.corpus_chrf(hyps, [refs], char_order=6, word_order=0, beta=3, eps_smoothing=False).score
    assert abs(score - expected) < TOL


@pytest.mark.parametrize("hyps, refs, expected", WHITESPACE_CASES)
def test_chrf_keep_whitespace(hyps, refs, expected):
    score = compat.corpus_chrf(hyps, [refs], char_order=6, word_order=0, beta=3, remove_whitespace=False).score
    assert abs(score - expected) < TOL


@pytest.mark.parametrize("hyp, refs, expected", SENTENCES)
def test_sentence_chrf(hyp, refs, expected):
    assert abs(compat.sentence_chrf(hyp, refs, eps_smoothing=True).score - expected) < TOL


def test_score_names():
    assert compat.CHRF().corpus_score(["a"], [["a"]]).name == "chrF2"
    assert compat.CHRF(word_order=2).corpus_score(["a"], [["a"]]).name == "chrF2++"
    assert compat.CHRF(beta=1, word_order=1).sentence_score("a", ["a"]).name == "chrF1+"
    assert (compat.CHRF.CHAR_ORDER, compat.CHRF.WORD_ORDER, compat.CHRF.BETA) == (6, 0, 2)


# ------------------------------------------------------------------ bit-identity with sacrebleu 2.6.0

def real_data(n=300):
    """WMT21 en-de (system happypoet) with reference streams A, C, D: None and "" placeholders
    give 1 to 3 references per line; some hypotheses are empty."""
    folder = CORPORA / "wmt21" / "en-de"
    if not (folder / "ref.D.txt").exists():
        pytest.skip(f"shared corpora not found at {CORPORA}")
    hyps = read_lines(folder / "sys.happypoet.txt")[:n]
    a, c, d = (read_lines(folder / f"ref.{k}.txt")[:n] for k in "ACD")
    a = ["" if i % 23 == 6 else x for i, x in enumerate(a)]
    c = [None if i % 4 == 2 else "" if i % 10 == 7 else x for i, x in enumerate(c)]
    d = [None if i % 3 == 1 else x for i, x in enumerate(d)]
    hyps = ["" if i % 29 == 11 else x for i, x in enumerate(hyps)]
    return hyps, [a, c, d]


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
    hyps, refs = real_data()
    ours, theirs = compat.CHRF(**options), sacrebleu.CHRF(**options)
    assert_same_chrf(ours.corpus_score(hyps, refs), theirs.corpus_score(hyps, refs))
    assert ours.get_signature().format().replace("beambleu-0.1.0", "2.6.0") == theirs.get_signature().format()
    assert ours._extract_corpus_statistics(hyps, refs).tolist() == theirs._extract_corpus_statistics(hyps, refs)
    for i in range(0, len(hyps), 7):
        segment_refs = [stream[i] for stream in refs]
        assert_same_chrf(ours.sentence_score(hyps[i], segment_refs), theirs.sentence_score(hyps[i], segment_refs))


def test_module_functions_identical_to_sacrebleus():
    hyps, refs = real_data(100)
    for kwargs in ({}, {"word_order": 2, "remove_whitespace": False}, {"beta": 1, "eps_smoothing": True}):
        assert_same_chrf(compat.corpus_chrf(hyps, refs, **kwargs), sacrebleu.corpus_chrf(hyps, refs, **kwargs))
        one = [stream[5] for stream in refs]
        assert_same_chrf(compat.sentence_chrf(hyps[5], one, **kwargs), sacrebleu.sentence_chrf(hyps[5], one, **kwargs))


def test_identity_is_a_real_check():
    hyps, refs = real_data(50)
    ours, theirs = compat.CHRF().corpus_score(hyps, refs), sacrebleu.CHRF().corpus_score(hyps, refs)
    ours.score = math.nextafter(ours.score, 0)
    with pytest.raises(AssertionError):
        assert_same_chrf(ours, theirs)

"""chrF / chrF++ (bleu_core.metrics.chrf): sacrebleu 2.6.0's own expectations, the scalar path, the
kernel and sacrebleu agreeing bit for bit on adversarial text, the algebra of sums, the
signature and output forms, validation, and worked examples computed by hand."""

import json
import pickle
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sacrebleu.metrics.chrf import CHRF

from bleu_core import __version__
from bleu_core.errors import BatchInputError
from bleu_core.metrics.chrf import Chrf, ChrfScore, corpus_chrf, sentence_chrf
from bleu_core.metrics.chrf.reference import split_words
from bleu_core.protocol import Stat

from ....oracle import to_streams
from ....strategies import segment

OURS = f"version:beambleu-{__version__}"
THEIRS = "version:2.6.0"


def sacre(**opts) -> CHRF:
    return CHRF(**opts)


def one_ref_each(refs):
    """sacrebleu's single reference stream -> our per-candidate reference lists."""
    return [[r] for r in refs]


# ----------------------------------------------------------------------------- sacrebleu's own cases
# Inputs and expected scores of sacrebleu 2.6.0's test/test_chrf.py: (candidates, one reference
# per candidate, score). Each is checked against the published number and against sacrebleu.

RISK_HYP = ("risk assessment must be made of those who are qualified and expertise in the sector - these are the "
            "scientists .")
RISK_REF = ("risk assessment has to be undertaken by those who are qualified and expert in that area - that is the "
            "scientists .")

EPS_SMOOTHING_BETA3 = [
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
    ([" " + RISK_HYP], [RISK_REF], 63.361730),
    ([" Die    Beziehung zwischen  Obama und Netanjahu ist nicht gerade  freundlich. "],
     ["Das Verhältnis zwischen Obama und Netanyahu ist nicht gerade freundschaftlich."], 64.1302698),
    (["Niemand hat die Absicht, eine Mauer zu errichten"], ["Niemand hat die Absicht, eine Mauer zu errichten"],
     100.0),
]

EFFECTIVE_ORDER_BETA3 = [
    (["a"], ["a"], 100.0),
    ([""], ["reference"], 0.0),
    (["a b c"], ["a b c"], 100.0),
    (["a b c"], ["abc"], 100.0),
    ([""], ["c"], 0.0),
    (["a", "b"], ["a", "c"], 50.0),
    (["aa"], ["ab"], 25.0),
]

KEEP_WHITESPACE_BETA3 = [
    (["Die Beziehung zwischen Obama und Netanjahu ist nicht gerade freundlich."],
     ["Das Verhältnis zwischen Obama und Netanyahu ist nicht gerade freundschaftlich."], 67.3481606),
    ([RISK_HYP], [RISK_REF], 65.2414427),
]

SENTENCE_EPS_SMOOTHING = [
    ("Co nás nejvíc trápí, protože lékaři si vybírají, kdo bude žít a kdo zemře.",
     ["Nejvíce smutní jsme z toho, že musíme rozhodovat o tom, kdo bude žít a kdo zemře."], 39.14078509),
    ("Nebo prostě nemají vybavení, které by jim pomohlo, uvedli lékaři.",
     ["A někdy nemáme ani potřebný materiál, abychom jim pomohli, popsali lékaři."], 31.22557079),
    ("Lapali po dechu, jejich životy skončily dřív, než skutečně začaly.",
     ["Lapali po dechu a pak jejich život skončil - dřív, než skutečně mohl začít, připomněli."], 57.15704367),
]


def _check_published(cands, refs, expected, **opts):
    ours = corpus_chrf(cands, one_ref_each(refs), **opts)
    assert ours.score == pytest.approx(expected, abs=1e-4)
    assert ours.score == sacre(**opts).corpus_score(cands, [refs]).score
    metric = Chrf(**opts)
    assert metric.score(metric.scalar_stats(cands, one_ref_each(refs)).sum(axis=0)).score == ours.score


@pytest.mark.parametrize("cands, refs, expected", EPS_SMOOTHING_BETA3)
def test_sacrebleu_cases_eps_smoothing(cands, refs, expected):
    _check_published(cands, refs, expected, beta=3, eps_smoothing=True)


@pytest.mark.parametrize("cands, refs, expected", EFFECTIVE_ORDER_BETA3)
def test_sacrebleu_cases_effective_order(cands, refs, expected):
    _check_published(cands, refs, expected, beta=3, eps_smoothing=False)


@pytest.mark.parametrize("cands, refs, expected", KEEP_WHITESPACE_BETA3)
def test_sacrebleu_cases_keep_whitespace(cands, refs, expected):
    _check_published(cands, refs, expected, beta=3, whitespace=True)


@pytest.mark.parametrize("cand, refs, expected", SENTENCE_EPS_SMOOTHING)
def test_sacrebleu_cases_sentence_level(cand, refs, expected):
    ours = sentence_chrf(cand, refs, eps_smoothing=True)
    assert ours.score == pytest.approx(expected, abs=1e-4)
    assert ours.score == sacre(eps_smoothing=True).sentence_score(cand, refs).score


# ----------------------------------------------------------------------------- worked examples


def test_worked_example_effective_order():
    # candidate "ab", reference "abc", chrF2 with char_order=3 (factor = beta^2 = 4)
    #   order 1: a b       vs a b c      -> hyp 2, ref 3, match 2: P = 1, R = 2/3
    #   order 2: ab        vs ab bc      -> hyp 1, ref 2, match 1: P = 1, R = 1/2
    #   order 3: (none)    vs abc        -> hyp 0, ref 1, match 0: not in the effective order
    # mean P = 1, mean R = (2/3 + 1/2) / 2 = 7/12
    # F2 = (1 + 4) * P * R / (4 * P + R) = (35/12) / (55/12) = 7/11
    metric = Chrf(char_order=3)
    stats = metric.scalar_stats(["ab"], [["abc"]])
    assert stats.tolist() == [[2, 3, 2, 1, 2, 1, 0, 1, 0]]
    assert metric.score(stats[0]).score == pytest.approx(100 * 7 / 11, abs=1e-12)
    assert corpus_chrf(["ab"], [["abc"]], char_order=3).score == pytest.approx(100 * 7 / 11, abs=1e-12)


def test_worked_example_eps_smoothing():
    # same statistics, per-order F2 averaged over all 3 orders:
    #   order 1: 5 * 1 * (2/3) / (4 + 2/3) = 5/7
    #   order 2: 5 * 1 * (1/2) / (4 + 1/2) = 5/9
    #   order 3: P = eps (no candidate n-grams), R = 0/1 = 0 -> F = 5 * eps * 0 / (4 * eps) = 0
    # score = 100 * (5/7 + 5/9 + 0) / 3 = 100 * 80/189
    metric = Chrf(char_order=3, eps_smoothing=True)
    assert metric.f_score([2, 3, 2, 1, 2, 1, 0, 1, 0]) == pytest.approx(100 * 80 / 189, abs=1e-12)


def test_worked_example_reference_without_ngrams_of_an_order():
    # candidate "abc" vs reference "ab", char_order=3: the reference has no 3-gram, so the
    # candidate's 3-gram "abc" is not counted either: order 3 is [0, 0, 0]
    #   order 1: hyp 3, ref 2, match 2: P = 2/3, R = 1
    #   order 2: hyp 2 (ab bc), ref 1 (ab), match 1: P = 1/2, R = 1
    # mean P = 7/12, mean R = 1 -> F2 = 5 * (7/12) / (4 * 7/12 + 1) = (35/12) / (40/12) = 7/8
    metric = Chrf(char_order=3)
    stats = metric.scalar_stats(["abc"], [["ab"]])[0]
    assert stats.tolist() == [3, 2, 2, 2, 1, 1, 0, 0, 0]
    assert metric.score(stats).score == pytest.approx(100 * 7 / 8, abs=1e-12)


def test_worked_example_whitespace_lowercase_and_beta():
    # "A b" vs "ab", char_order=2: whitespace removed -> "Ab" vs "ab"
    #   order 1: A b vs a b -> match 1 (b): P = R = 1/2; order 2: Ab vs ab -> match 0: P = R = 0
    #   beta = 1: mean P = mean R = 1/4 -> F1 = 2 * (1/16) / (1/2) = 1/4
    assert corpus_chrf(["A b"], [["ab"]], char_order=2, beta=1).score == pytest.approx(25.0, abs=1e-12)
    # lowercased, every n-gram matches: 100
    assert corpus_chrf(["A b"], [["ab"]], char_order=2, beta=1, lowercase=True).score == 100.0
    # whitespace kept: "A b" has 1-grams A, ' ', b and 2-grams "A ", " b": only b matches
    #   order 1: P = 1/3, R = 1/2; order 2: P = 0, R = 0; mean P = 1/6, mean R = 1/4
    #   F1 = 2 * (1/24) / (1/6 + 1/4) = (1/12) / (5/12) = 1/5
    stats = Chrf(char_order=2, beta=1, whitespace=True).scalar_stats(["A b"], [["ab"]])[0]
    assert stats.tolist() == [3, 2, 1, 2, 1, 0]
    assert corpus_chrf(["A b"], [["ab"]], char_order=2, beta=1, whitespace=True).score == pytest.approx(20.0, abs=1e-12)


def test_worked_example_chrf_plus_plus_words():
    # chrF++ words: "the cat." -> the, cat, . ; "(the cat" -> (, the, cat
    # word_order=2, no character n-grams:
    #   1-grams: the cat . vs ( the cat -> hyp 3, ref 3, match 2
    #   2-grams: the-cat cat-. vs (-the the-cat -> hyp 2, ref 2, match 1
    # mean P = mean R = (2/3 + 1/2) / 2 = 7/12 -> F2 = 7/12 (P = R)
    metric = Chrf(char_order=0, word_order=2)
    stats = metric.scalar_stats(["the cat."], [["(the cat"]])[0]
    assert stats.tolist() == [3, 3, 2, 2, 2, 1]
    assert metric.score(stats).score == pytest.approx(100 * 7 / 12, abs=1e-12)
    assert metric.name == "chrF2++" and Chrf(word_order=1).name == "chrF2+" and Chrf(beta=3).name == "chrF3"


@pytest.mark.parametrize("text, words", [
    ("the cat.", ["the", "cat", "."]),
    ("(hi there", ["(", "hi", "there"]),
    ("(hi)", ["(hi", ")"]),          # only one mark comes off, the trailing one first
    ('"quoted"', ['"quoted', '"']),
    (". , x", [".", ",", "x"]),      # one-character tokens stay whole
    ("...", ["..", "."]),
    ("don't", ["don't"]),            # inner punctuation stays
    ("«x»", ["«x»"]),                # not in string.punctuation
    ("a\u3000b.\u2028c", ["a", "b", ".", "c"]),
])
def test_split_words(text, words):
    assert split_words(text) == words
    assert sacre(word_order=2)._remove_punctuation(text) == words


def test_best_reference_first_wins_ties():
    # "a" vs "b" and vs "bb" both have F = 0, with different statistics (char_order=2):
    #   vs "b":  [1, 1, 0, 0, 0, 0];  vs "bb": [1, 2, 0, 0, 1, 0] (no candidate 2-gram)
    # the first reference in the list is kept, a later one only when strictly better
    metric = Chrf(char_order=2)
    assert metric.scalar_stats(["a"], [["b", "bb"]]).tolist() == [[1, 1, 0, 0, 0, 0]]
    assert metric.scalar_stats(["a"], [["bb", "b"]]).tolist() == [[1, 2, 0, 0, 1, 0]]
    assert metric.scalar_stats(["a"], [[None, "bb", "a", "b"]]).tolist() == [[1, 1, 1, 0, 0, 0]]
    for refs in (["b", "bb"], ["bb", "b"], [None, "bb", None, "a"]):
        np.testing.assert_array_equal(metric.batch_stats(["a"], [refs]), metric.scalar_stats(["a"], [refs]))
        assert sacre(char_order=2)._extract_corpus_statistics(["a"], to_streams([refs])) == \
            metric.scalar_stats(["a"], [refs]).tolist()


# ----------------------------------------------------------------------------- properties

ALPHABET = (list("abcAB .,;!?()'\"-") + ["\t", "\n", "\x0b", "\x1c", "\x85", "\xa0", "\u2009", "\u3000", "\u2028",
            "é", "e\u0301", "É", "İ", "ß", "ẞ", "Σ", "ς", "ǅ", "中", "文", "\U0001F600", "\U00020000", "\U0001D7D9",
            "\x00"])
small_text = st.lists(st.sampled_from(ALPHABET), max_size=14).map("".join)
text = st.one_of(small_text, segment)


@st.composite
def reference(draw, cand):
    """A missing reference, fresh text, the candidate itself, or the candidate edited."""
    kind = draw(st.sampled_from(["missing", "fresh", "copy", "edit"]))
    if kind == "missing":
        return None
    if kind == "fresh":
        return draw(text)
    if kind == "copy":
        return cand
    i = draw(st.integers(0, len(cand)))
    j = draw(st.integers(i, len(cand)))
    return cand[:i] + draw(small_text) + cand[j:]


@st.composite
def chrf_corpus(draw, max_pairs=5):
    """(candidates, references): 1..4 references per candidate, at least one present."""
    cands, refs = [], []
    for _ in range(draw(st.integers(1, max_pairs))):
        cand = draw(text)
        row = [draw(reference(cand)) for _ in range(draw(st.integers(1, 4)))]
        if all(r is None for r in row):
            row[draw(st.integers(0, len(row) - 1))] = draw(st.one_of(text, st.just(cand)))
        cands.append(cand)
        refs.append(row)
    return cands, refs


options = st.fixed_dictionaries({
    "char_order": st.integers(0, 7),
    "word_order": st.integers(0, 3),
    "beta": st.integers(0, 3),
    "lowercase": st.booleans(),
    "whitespace": st.booleans(),
    "eps_smoothing": st.booleans(),
}).filter(lambda o: o["char_order"] + o["word_order"] >= 1)


def check_all_paths(cands, refs, opts):
    metric = Chrf(**opts)
    oracle = sacre(**opts)
    streams = to_streams(refs)
    expected = np.array(oracle._extract_corpus_statistics(cands, streams), dtype=np.int64)
    expected = expected.reshape(len(cands), metric.width)
    np.testing.assert_array_equal(metric.scalar_stats(cands, refs), expected)
    np.testing.assert_array_equal(metric.batch_stats(cands, refs), expected)
    arrow = (pa.array(cands, type=pa.large_string()), pa.array(refs, type=pa.large_list(pa.large_string())))
    np.testing.assert_array_equal(metric.batch_stats(*arrow, per_row=False), expected.sum(axis=0))
    # corpus level, bit for bit
    theirs = oracle.corpus_score(cands, streams)
    ours = corpus_chrf(cands, refs, **opts)
    assert ours.score == theirs.score
    assert ours.stats == expected.sum(axis=0).tolist()
    assert metric.score(metric.scalar_stats(cands, refs).sum(axis=0)).score == theirs.score
    assert ours.signature.replace(OURS, THEIRS) == oracle.get_signature().format()
    assert ours.name == theirs.name
    # sentence level, bit for bit
    for cand, row, stats in zip(cands, refs, expected):
        their = oracle.sentence_score(cand, row).score
        assert sentence_chrf(cand, row, **opts).score == their
        assert metric.score(stats).score == their


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=chrf_corpus(), opts=options)
def test_paths_agree_with_sacrebleu(data, opts):
    check_all_paths(*data, opts)


@pytest.mark.slow
@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=chrf_corpus(), opts=options)
def test_paths_agree_with_sacrebleu_long(data, opts):
    check_all_paths(*data, opts)


def test_lone_surrogates_use_the_scalar_path():
    # no UTF-8 form, so no Arrow array: corpus_chrf falls back to the reference path, as sacrebleu scores them
    cands, refs = ["a\ud800b c"], [["a\ud800b", None]]
    assert corpus_chrf(cands, refs).score == sacre().corpus_score(cands, to_streams(refs)).score


# ----------------------------------------------------------------------------- algebra


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(a=chrf_corpus(), b=chrf_corpus(), opts=options)
def test_concatenation_is_sum_of_parts(a, b, opts):
    metric = Chrf(**opts)
    whole = (a[0] + b[0], a[1] + b[1])
    for stats in (metric.scalar_stats, metric.batch_stats):
        rows = stats(*whole)
        np.testing.assert_array_equal(rows, np.vstack([stats(*a), stats(*b)]))
        np.testing.assert_array_equal(rows.sum(axis=0), stats(*a).sum(axis=0) + stats(*b).sum(axis=0))
    summed = metric.batch_stats(*whole, per_row=False)
    np.testing.assert_array_equal(summed, metric.batch_stats(*a, per_row=False) + metric.batch_stats(*b, per_row=False))
    total, _ = metric.corpus_stats(*whole)
    np.testing.assert_array_equal(total, summed)
    assert metric.score(total).score == corpus_chrf(*whole, **opts).score


# ----------------------------------------------------------------------------- signature and output forms

CANDS = ["the cat is on mat", "hello world!", "Niemand hat die Absicht"]
REFS = [["the cat is on the mat", "the cat sat on the mat"], ["hello there world", "Hello world !"],
        ["niemand hat die Absicht, eine Mauer", "Keiner hat die Absicht"]]


@pytest.mark.parametrize("opts", [
    {},
    {"word_order": 2},
    {"char_order": 4, "word_order": 1, "beta": 1, "lowercase": True, "whitespace": True, "eps_smoothing": True},
    {"beta": 0, "eps_smoothing": True},
])
def test_signature_text_and_json_match_sacrebleu(opts):
    oracle = sacre(**opts)
    theirs = oracle.corpus_score(CANDS, to_streams(REFS))
    their_sig = oracle.get_signature().format()
    ours = corpus_chrf(CANDS, REFS, **opts)
    assert ours.signature.endswith(f"|{OURS}") and ours.signature.replace(OURS, THEIRS) == their_sig
    assert Chrf(**opts).signature({2}).format() == ours.signature
    for width in (1, 2, 4):
        assert ours.format(width=width).replace(OURS, THEIRS) == theirs.format(width=width, signature=their_sig)
        assert ours.format(width=width, score_only=True) == theirs.format(width=width, score_only=True)
    their_json = json.loads(theirs.format(signature=their_sig, is_json=True))
    d = ours.to_dict()
    assert list(d)[:len(their_json)] == list(their_json)
    assert list(d)[len(their_json):] == ["hyp_counts", "ref_counts", "matches"]
    assert d["score"] == ours.score and round(d["score"], 2) == their_json["score"]  # ours: full precision
    for key, value in their_json.items():
        if key not in ("score", "signature", "version"):
            assert d[key] == value
    assert d["version"] == f"beambleu-{__version__}" and d["signature"] == ours.signature
    assert d["hyp_counts"] + d["ref_counts"] + d["matches"] == \
        ours.stats[0::3] + ours.stats[1::3] + ours.stats[2::3]


def test_signature_variable_nrefs_and_bootstrap():
    refs = [["the cat is on the mat", None], ["hello there world", "Hello world !"], [None, "Keiner hat"]]
    oracle = sacre(word_order=2)
    oracle.corpus_score(CANDS, to_streams(refs), n_bootstrap=20)
    ours = Chrf(word_order=2).signature({1, 2}, n_bootstrap=20, seed=oracle.seed).format()
    assert ours.replace(OURS, THEIRS) == oracle.get_signature().format()
    assert ours.startswith("nrefs:var|bs:20|seed:")
    assert Chrf().signature(3).format() == f"nrefs:3|case:mixed|eff:yes|nc:6|nw:0|space:no|{OURS}"
    assert corpus_chrf(CANDS, refs).signature.startswith("nrefs:var|")


def test_text_line_matches_sacrebleu_command_line(tmp_path):
    hyp, ref = tmp_path / "hyp.txt", tmp_path / "ref.txt"
    hyp.write_text("".join(c + "\n" for c in CANDS), encoding="utf-8")
    ref.write_text("".join(r[0] + "\n" for r in REFS), encoding="utf-8")
    for args, opts in ([], {}), (["--chrf-word-order", "2", "--chrf-lowercase"], {"word_order": 2, "lowercase": True}):
        cli = subprocess.run([sys.executable, "-m", "sacrebleu", str(ref), "-i", str(hyp), "-m", "chrf", "-f", "text",
                              *args], capture_output=True, text=True, check=True)
        ours = corpus_chrf(CANDS, [r[:1] for r in REFS], **opts)
        assert ours.format(width=1).replace(OURS, THEIRS) == cli.stdout.strip()


def test_score_without_nrefs_has_no_signature():
    s = Chrf().score([2, 2, 2, 1, 1, 1] + [0] * 12)
    assert s.signature is None and s.format() == "chrF2 = 100.00" and "signature" not in s.to_dict()
    assert str(s) == s.format()


def test_stat_names_and_table_columns():
    metric = Chrf(char_order=2, word_order=1)
    assert metric.width == 9 and metric.id == "chrf" and metric.column_prefix == "chrf_"
    assert metric.stat_names() == ["char1_hyp", "char1_ref", "char1_match", "char2_hyp", "char2_ref", "char2_match",
                                   "word1_hyp", "word1_ref", "word1_match"]
    columns = metric.table_columns()
    assert [name for name, _, _ in columns] == ["score", "signature"] + metric.stat_names()
    assert [t for _, t, _ in columns] == [pa.float64(), pa.string()] + [pa.int64()] * 9
    score = metric.score([5, 6, 4, 4, 5, 2, 2, 3, 1], nrefs=1)
    d, stats = score.to_dict(), [5, 6, 4, 4, 5, 2, 2, 3, 1]

    def value(get):  # a statistic is taken from the totals, the rest from the score's JSON object
        return stats[get.index] if isinstance(get, Stat) else get(d)

    assert [value(get) for _, _, get in columns] == [score.score, score.signature, 5, 6, 4, 4, 5, 2, 2, 3, 1]
    assert [value(get) for _, _, get in pickle.loads(pickle.dumps(columns))] == [value(get) for _, _, get in columns]
    assert score.hyp_counts == [5, 4, 2] and score.ref_counts == [6, 5, 3] and score.matches == [4, 2, 1]
    assert isinstance(score, ChrfScore) and metric.sentence_metric() is metric


# ----------------------------------------------------------------------------- validation


def _one_line(exc_info):
    assert "\n" not in str(exc_info.value) and str(exc_info.value)


@pytest.mark.parametrize("opts, error", [
    ({"char_order": -1}, ValueError),
    ({"word_order": -2}, ValueError),
    ({"beta": -1}, ValueError),
    ({"char_order": 0, "word_order": 0}, ValueError),
    ({"char_order": 6.0}, TypeError),
    ({"char_order": True}, TypeError),
    ({"word_order": "2"}, TypeError),
    ({"beta": 2.5}, TypeError),
    ({"beta": None}, TypeError),
    ({"lowercase": 1}, TypeError),
    ({"whitespace": "yes"}, TypeError),
    ({"eps_smoothing": None}, TypeError),
    # refused when the metric is made, not when the first batch is counted (or the memory runs out)
    ({"char_order": 65}, ValueError),
    ({"word_order": 10**20}, ValueError),
    ({"beta": 10**200}, ValueError),
])
def test_bad_options(opts, error):
    with pytest.raises(error) as exc_info:
        Chrf(**opts)
    _one_line(exc_info)
    with pytest.raises(error):
        corpus_chrf(["a"], [["a"]], **opts)


@pytest.mark.parametrize("vector, error", [
    ([1, 1, 1], ValueError),                                  # width 3, expected 6
    ([1, 1, 1, 1, 1, 1, 0], ValueError),
    ([2, 2, 3, 1, 1, 1], ValueError),                         # match > hyp
    ([3, 2, 3, 1, 1, 1], ValueError),                         # match > ref
    ([1, 1, 1, 1, 1, -1], ValueError),
    ([1, 1, 1, 1, 1, 2**63], ValueError),
    (np.zeros((2, 3), dtype=np.int64), ValueError),
    ([1.0, 1, 1, 1, 1, 1], TypeError),
    (np.ones(6), TypeError),
    ([True, 1, 1, 1, 1, 1], TypeError),
    (["1", 1, 1, 1, 1, 1], TypeError),
    (7, TypeError),
])
def test_bad_stats(vector, error):
    metric = Chrf(char_order=1, word_order=1)
    with pytest.raises(error) as exc_info:
        metric.check_stats(vector)
    _one_line(exc_info)
    with pytest.raises(error):
        metric.score(vector)


def test_good_stats_are_int64():
    metric = Chrf(char_order=1, word_order=1)
    out = metric.check_stats([3, 2, 2, np.int64(0), 0, 0])
    assert out.dtype == np.int64 and out.tolist() == [3, 2, 2, 0, 0, 0]
    assert metric.check_stats(np.array([2**63 - 1] * 6, dtype=np.uint64)).tolist() == [2**63 - 1] * 6


def test_bad_rows_name_the_row():
    metric = Chrf()
    with pytest.raises(ValueError, match=r"references\[1\]") as exc_info:
        metric.scalar_stats(["a", "b"], [["a"], [None, None]])
    _one_line(exc_info)
    with pytest.raises(ValueError, match=r"references\[1\]"):
        corpus_chrf(["a", "b"], [["a"], [None]])
    with pytest.raises(ValueError, match=r"candidates\[0\]"):
        metric.scalar_stats([None], [["a"]])
    with pytest.raises(BatchInputError) as exc_info:
        metric.batch_stats(pa.array(["a", None]), pa.array([["a"], ["b"]]))
    assert exc_info.value.row == 1
    with pytest.raises(BatchInputError) as exc_info:
        metric.batch_stats(["a", "b"], [["a"], [None]])
    assert exc_info.value.row == 1
    with pytest.raises(TypeError):
        sentence_chrf(["a"], ["a"])

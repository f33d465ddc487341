"""bleu_core.compat's corpus BLEU: the facts of sacrebleu 2.6.0's test_bleu.py (inputs and
expected numbers), and bit-identity with sacrebleu 2.6.0 run here on real lines with 1-3
references, missing (None) and empty ("") ones included."""

import math

import pytest

from bleu_core import compat
from bleu_core import corpus_bleu as beambleu_corpus_bleu

from ...oracle import CORPORA, read_lines

sacre_metrics = pytest.importorskip("sacrebleu.metrics")

# ------------------------------------------------------------------ facts from sacrebleu's test_bleu.py

TOL = 1e-8

REFS = [
    ["The dog bit the man.", "It was not unexpected.", "The man bit him first."],
    ["The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."],
]
HYPS = ["The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."]


@pytest.mark.parametrize("hyps, refs, expected", [
    (["this is a test", "another test"], [["ref1", "ref2"]], 0.0),  # no match at all: 0, not undefined
    (["this is a test"], [["this is a test"]], 1.0),
    (["this is a fest"], [["this is a test"]], 0.223606797749979),
])
def test_raw_corpus_bleu(hyps, refs, expected):
    assert abs(compat.raw_corpus_bleu(hyps, refs, 0.01).score / 100 - expected) < TOL


@pytest.mark.parametrize("hyps, kwargs, expected", [
    (HYPS, {}, 48.530827),
    (("", "", ""), {}, 0.0),  # empty hypotheses are scored, not dropped
    (HYPS, {"tokenize": "none"}, 49.1919566),
    (HYPS, {"tokenize": "13a"}, 48.530827),
    (HYPS, {"tokenize": "intl"}, 43.91623493),
    (HYPS, {"smooth_method": "none"}, 48.530827),
])
def test_corpus_bleu(hyps, kwargs, expected):
    assert abs(compat.corpus_bleu(hyps, REFS, **kwargs).score - expected) < TOL


@pytest.mark.parametrize("hyp, ref, expected", [
    ("test", "a test", 0.3678794411714425),
    ("a test", "a test", 1.0),
    ("a little test", "a test", 0.03218297948685433),
])
def test_effective_order(hyp, ref, expected):
    assert abs(compat.raw_corpus_bleu([hyp], [[ref]], 0.01).score / 100 - expected) < TOL


def test_statistics():
    result = compat.raw_corpus_bleu(["am I am a character sequence"], [["I am a symbol string sequence a a"]], 0.01)
    assert (result.counts, result.totals) == ([4, 2, 1, 0], [6, 5, 4, 3])


def test_compute_bleu_from_statistics():
    score = compat.BLEU.compute_bleu([9, 7, 5, 3], [10, 8, 6, 4], 11, 11).score / 100
    assert abs(score - 0.8375922397) < TOL


def test_floor_offset():
    hyp, ref = ["am I am a character sequence"], [["I am a symbol string sequence a a"]]
    assert abs(compat.raw_corpus_bleu(hyp, ref, 0.0).score / 100 - 0) < TOL
    for value in ((None,), ()):  # None, and no value, both mean floor's default 0.1
        assert abs(compat.raw_corpus_bleu(hyp, ref, *value).score / 100 - 0.1555722182) < TOL


@pytest.mark.parametrize("common, total, sys_len, ref_len, offset", [
    ([0, 0, 0, 0], [4, 4, 2, 1], 0, 1, 0.0),
    ([0, 0, 0, 0], [10, 11, 12, 0], 14, 10, 0.0),
    ([0, 0, 0, 0], [0, 0, 0, 0], 0, 0, 0.0),
    ([6, 5, 4, 0], [6, 5, 4, 3], 6, 6, 0.0),
    ([0, 0, 0, 0], [0, 0, 0, 0], 0, 0, 0.1),
    ([0, 0, 0, 0], [0, 0, 0, 0], 1, 5, 0.01),
])
def test_degenerate_statistics_score_zero(common, total, sys_len, ref_len, offset):
    score = compat.BLEU.compute_bleu(common, total, sys_len, ref_len, smooth_method="floor", smooth_value=offset)
    assert score.score == 0.0


@pytest.mark.parametrize("order, expected", [(1, "77.65"), (2, "60.50"), (3, "53.93"), (4, "48.53"), (5, "46.14"),
                                             (6, "43.28")])
def test_max_ngram_order(order, expected):
    assert f"{compat.BLEU(max_ngram_order=order).corpus_score(HYPS, REFS).score:.2f}" == expected


# ------------------------------------------------------------------ the two layouts

def test_streams_are_the_transpose_of_beambleus_per_candidate_lists():
    streams = [["A1", "A2", "A3"], ["B1", None, ""]]
    hyps = ["A1 x", "A2 y", "z B3"]
    per_candidate = [["A1", "B1"], ["A2", None], ["A3", ""]]
    assert compat.corpus_bleu(hyps, streams).score == beambleu_corpus_bleu(hyps, per_candidate).score
    assert compat.corpus_bleu(HYPS, REFS).score == beambleu_corpus_bleu(HYPS, [list(r) for r in zip(*REFS)]).score


# ------------------------------------------------------------------ bit-identity with sacrebleu 2.6.0

N_LINES = 300


def real_data():
    """300 lines of WMT21 en-de (system ICL) with three reference streams, where stream C is
    missing (None) on some lines and empty on others, stream D missing on every third line and
    empty on others, stream A empty now and then (so some lines have only an empty reference),
    and some hypotheses are empty: 1 to 3 references per line."""
    folder = CORPORA / "wmt21" / "en-de"
    if not (folder / "ref.D.txt").exists():
        pytest.skip(f"shared corpora not found at {CORPORA}")
    a, c, d = (read_lines(folder / f"ref.{k}.txt")[:N_LINES] for k in "ACD")
    hyps = read_lines(folder / "sys.ICL.txt")[:N_LINES]
    a = ["" if i % 17 == 8 else x for i, x in enumerate(a)]
    c = [None if i % 7 == 3 else "" if i % 11 == 5 else x for i, x in enumerate(c)]
    d = [None if i % 3 == 0 else "" if i % 13 == 2 else x for i, x in enumerate(d)]
    hyps = ["" if i % 19 == 4 else x for i, x in enumerate(hyps)]
    return hyps, [a, c, d]


def unversioned(signature: str) -> str:
    """A signature without its version (and beambleu's ``order:N`` field, which sacrebleu lacks)."""
    return "|".join(f for f in signature.split("|") if not f.startswith(("version:", "order:")))


def assert_same_bleu(ours, theirs):
    """Every number of two BLEU score objects is the same float or int, and so is every line."""
    assert type(ours.score) is float and ours.score == theirs.score
    assert ours.counts == theirs.counts and ours.totals == theirs.totals
    assert [type(x) for x in ours.counts + ours.totals] == [type(x) for x in theirs.counts + theirs.totals]
    assert ours.precisions == theirs.precisions
    for field in ("bp", "sys_len", "ref_len", "ratio"):
        assert getattr(ours, field) == getattr(theirs, field), field
    assert ours.prec_str == theirs.prec_str and ours._verbose == theirs._verbose
    assert repr(ours) == repr(theirs) and str(ours) == str(theirs)
    for width in (1, 2, 17):
        assert ours.format(width=width, signature="nrefs:1|x:y") == theirs.format(width=width, signature="nrefs:1|x:y")
    assert ours.format(is_json=True, signature="a:b") == theirs.format(is_json=True, signature="a:b")


BLEU_OPTIONS = [
    {},
    {"lowercase": True, "tokenize": "intl"},
    {"tokenize": "none", "smooth_method": "floor"},
    {"tokenize": "char", "smooth_method": "add-k", "smooth_value": 0.5},
    {"smooth_method": "add-k"},
    {"smooth_method": "none", "effective_order": True},
    {"tokenize": "zh", "smooth_method": "floor", "smooth_value": 0.3},
    {"max_ngram_order": 2},
    {"max_ngram_order": 6, "effective_order": True, "smooth_method": "exp"},
]


@pytest.mark.parametrize("options", BLEU_OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default")
def test_corpus_score_identical_to_sacrebleu(options):
    hyps, refs = real_data()
    ours_metric, theirs_metric = compat.BLEU(**options), sacre_metrics.BLEU(**options)
    assert_same_bleu(ours_metric.corpus_score(hyps, refs), theirs_metric.corpus_score(hyps, refs))
    assert unversioned(ours_metric.get_signature().format()) == unversioned(theirs_metric.get_signature().format())
    assert "nrefs:var" in ours_metric.get_signature().format()
    # per-segment statistics too, not only their sum
    ours_rows = ours_metric._extract_corpus_statistics(hyps, refs).tolist()
    assert ours_rows == theirs_metric._extract_corpus_statistics(hyps, refs)


def test_order_field_in_the_signature_when_not_4():
    hyps, refs = real_data()
    metric = compat.BLEU(max_ngram_order=6)
    metric.corpus_score(hyps[:5], [r[:5] for r in refs])
    assert "|order:6|" in metric.get_signature().format()
    metric = compat.BLEU()
    metric.corpus_score(hyps[:5], [r[:5] for r in refs])
    assert "order" not in metric.get_signature().format()


def test_add_k_counts_are_reported_smoothed_as_sacrebleu_reports_them():
    # sacrebleu adds k to the matches and totals of orders 2..N in place and reports them so
    ours = compat.BLEU(smooth_method="add-k", smooth_value=0.5).corpus_score(["a b c d"], [["a b x d"]])
    assert ours.counts == [3, 1.5, 0.5, 0.5] and ours.totals == [4, 3.5, 2.5, 1.5]
    theirs = sacre_metrics.BLEU(smooth_method="add-k", smooth_value=0.5).corpus_score(["a b c d"], [["a b x d"]])
    assert_same_bleu(ours, theirs)
    # nothing matched: sacrebleu returns before smoothing, the counts stay the real ones
    assert compat.BLEU(smooth_method="add-k").corpus_score(["x y"], [["a b"]]).counts == [0, 0, 0, 0]


def test_compute_bleu_static_identical_to_sacrebleu():
    for method, value in (("none", None), ("exp", None), ("floor", 0.2), ("add-k", 2)):
        ours = compat.BLEU.compute_bleu([9, 0, 5, 0], [10, 8, 6, 4], 11, 13, smooth_method=method, smooth_value=value,
                                        effective_order=True)
        theirs = sacre_metrics.BLEU.compute_bleu([9, 0, 5, 0], [10, 8, 6, 4], 11, 13, smooth_method=method,
                                                 smooth_value=value, effective_order=True)
        assert_same_bleu(ours, theirs)


def test_module_functions_identical_to_sacrebleus():
    import sacrebleu

    hyps, refs = real_data()
    for kwargs in ({}, {"smooth_method": "floor", "lowercase": True, "tokenize": "intl", "use_effective_order": True}):
        assert_same_bleu(compat.corpus_bleu(hyps, refs, **kwargs), sacrebleu.corpus_bleu(hyps, refs, **kwargs))
    assert_same_bleu(compat.raw_corpus_bleu(hyps, refs), sacrebleu.raw_corpus_bleu(hyps, refs))
    assert_same_bleu(compat.raw_corpus_bleu(hyps, refs, 0.3), sacrebleu.raw_corpus_bleu(hyps, refs, 0.3))


def test_identity_is_a_real_check():
    """The comparison above sees a one-ulp difference in the score and a changed count."""
    hyps, refs = real_data()
    ours = compat.BLEU().corpus_score(hyps, refs)
    theirs = sacre_metrics.BLEU().corpus_score(hyps, refs)
    ours.score = math.nextafter(ours.score, math.inf)
    with pytest.raises(AssertionError):
        assert_same_bleu(ours, theirs)
    ours = compat.BLEU().corpus_score(hyps, refs)
    ours.counts = [ours.counts[0] + 1] + ours.counts[1:]
    with pytest.raises(AssertionError):
        assert_same_bleu(ours, theirs)

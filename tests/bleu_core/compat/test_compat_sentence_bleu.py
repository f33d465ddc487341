"""bleu_core.compat's sentence BLEU: the facts of sacrebleu 2.6.0's test_sentence_bleu.py, and
bit-identity with sacrebleu 2.6.0 on real lines with missing and empty references."""

import logging

import pytest

from bleu_core import compat

from ...oracle import CORPORA, read_lines

sacrebleu = pytest.importorskip("sacrebleu")

TOL = 1e-3

# sacrebleu issue #98: Romanian with comma-below vs cedilla letters
REF = "producţia de zahăr brut se exprimă în zahăr alb;"
SYS = "Producția de zahăr primă va fi exprimată în ceea ce privește zahărul alb;"

CASES = [
    ("exp", None, False, "13a", 8.493),
    ("none", None, False, "13a", 0.0),
    ("floor", None, False, "13a", 4.51688),  # floor's default is 0.1
    ("floor", 0.1, False, "13a", 4.51688),
    ("floor", 0.5, False, "13a", 10.10),
    ("add-k", None, False, "13a", 14.882),  # add-k's default is 1
    ("add-k", 1, False, "13a", 14.882),
    ("add-k", 2, False, "13a", 21.389),
    ("exp", None, False, "none", 7.347),
    ("exp", None, False, "intl", 8.493),
    ("exp", None, False, "char", 40.8759),
    ("exp", None, True, "char", 42.0267),
]

# sacrebleu issue #141: nothing matches, every smoothing gives 0
SYS_0, REF_0 = "this is a cat", "okay thanks"
ZERO_CASES = [("exp", None), ("none", None), ("floor", None), ("floor", 0.1), ("add-k", None), ("add-k", 1)]


@pytest.mark.parametrize("method, value, lowercase, tok, expected", CASES)
def test_sentence_bleu_function(method, value, lowercase, tok, expected):
    score = compat.sentence_bleu(SYS, [REF], smooth_method=method, smooth_value=value, tokenize=tok,
                                 lowercase=lowercase, use_effective_order=True)
    assert abs(score.score - expected) < TOL


@pytest.mark.parametrize("method, value, lowercase, tok, expected", CASES)
def test_bleu_sentence_score(method, value, lowercase, tok, expected):
    metric = compat.BLEU(lowercase=lowercase, force=False, tokenize=tok, smooth_method=method, smooth_value=value,
                         effective_order=True)
    assert abs(metric.sentence_score(SYS, [REF]).score - expected) < TOL


@pytest.mark.parametrize("method, value", ZERO_CASES)
def test_sentence_score_without_any_match_is_zero(method, value):
    metric = compat.BLEU(smooth_method=method, smooth_value=value, effective_order=True)
    assert metric.sentence_score(SYS_0, [REF_0]).score == 0.0


def test_effective_order_is_the_functions_default_not_the_classs(caplog):
    assert compat.sentence_bleu("a b", ["a b c"]).score == sacrebleu.sentence_bleu("a b", ["a b c"]).score
    with caplog.at_level(logging.WARNING, logger="bleu_core.compat"):
        plain = compat.BLEU().sentence_score("a b", ["a b c"])
    assert plain.score == 0.0  # no 3- and 4-grams: 0 without effective order
    assert "effective_order" in caplog.text


# ------------------------------------------------------------------ bit-identity with sacrebleu 2.6.0

def real_lines(n=120):
    """WMT21 en-de lines with 1-3 references per line: None and "" placeholders as in
    test_compat_bleu."""
    folder = CORPORA / "wmt21" / "en-de"
    if not (folder / "ref.D.txt").exists():
        pytest.skip(f"shared corpora not found at {CORPORA}")
    hyps = read_lines(folder / "sys.UF.txt")[:n]
    a, c, d = (read_lines(folder / f"ref.{k}.txt")[:n] for k in "ACD")
    c = [None if i % 5 == 1 else "" if i % 9 == 4 else x for i, x in enumerate(c)]
    d = [None if i % 3 == 0 else x for i, x in enumerate(d)]
    return [(h, [x, y, z]) for h, x, y, z in zip(hyps, a, c, d)]


@pytest.mark.parametrize("options", [
    {"effective_order": True},
    {"effective_order": True, "smooth_method": "floor", "smooth_value": 0.2, "lowercase": True},
    {"effective_order": True, "smooth_method": "add-k", "tokenize": "intl"},
    {"effective_order": False, "smooth_method": "none", "tokenize": "char"},
])
def test_sentence_scores_identical_to_sacrebleu(options):
    ours, theirs = compat.BLEU(**options), sacrebleu.BLEU(**options)
    for hyp, refs in real_lines():
        a, b = ours.sentence_score(hyp, refs), theirs.sentence_score(hyp, refs)
        assert (a.score, a.counts, a.totals, a.precisions, a.bp, a.sys_len, a.ref_len) == \
            (b.score, b.counts, b.totals, b.precisions, b.bp, b.sys_len, b.ref_len), (hyp, refs)
        assert repr(a) == repr(b)
        assert ours.get_signature().format().split("|")[0] == theirs.get_signature().format().split("|")[0]


def test_sentence_bleu_function_identical_to_sacrebleu():
    for hyp, refs in real_lines(40):
        assert compat.sentence_bleu(hyp, refs).score == sacrebleu.sentence_bleu(hyp, refs).score
        assert compat.sentence_bleu(hyp, refs, smooth_method="floor", use_effective_order=False).score == \
            sacrebleu.sentence_bleu(hyp, refs, smooth_method="floor", use_effective_order=False).score

"""bleu_core.compat as a drop-in for sacrebleu 2.6.0's Python API: names, parameters and
defaults, class constants, cached references, signatures, formatting, bootstrap intervals,
argument errors, and the documented differences.

sacrebleu's own test_api.py tests only its test-set registry and downloads (get_source_file,
get_available_testsets, ...), which bleu_core.compat passes on from the installed sacrebleu
(test_compat_modules.py; test_sacrebleu_suite.py runs that file itself): this file tests the
metric API, against sacrebleu run here.
"""

import inspect
import logging

import numpy as np
import pytest

import bleu_core
from bleu_core.resampling import counter as bootstrap
from bleu_core import compat

from ...oracle import CORPORA, has_mecab, read_lines, seed_env

pytest.importorskip("sacrebleu")
import sacrebleu  # noqa: E402
import sacrebleu.significance  # noqa: E402

HYPS = ["The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."]
REFS = [["The dog bit the man.", "It was not unexpected.", "The man bit him first."],
        ["The dog had bit the man.", None, ""]]


def versioned_as_sacrebleu(text: str) -> str:
    return text.replace("beambleu-0.1.0", "2.6.0")


# ------------------------------------------------------------------ names, parameters, constants

def test_package_exports_compat_classes_and_keeps_its_own_layout():
    assert bleu_core.BLEU is compat.BLEU and bleu_core.CHRF is compat.CHRF
    assert {"BLEU", "CHRF", "Bleu", "Chrf", "corpus_bleu", "corpus_chrf"} <= set(bleu_core.__all__)
    # bleu_core.corpus_bleu keeps beambleu's layout: one reference list per candidate
    per_candidate = bleu_core.corpus_bleu(["a b c d", "e f g h"], [["a b c d"], ["e f g h"]])
    streams = compat.corpus_bleu(["a b c d", "e f g h"], [["a b c d", "e f g h"]])
    assert per_candidate.score == streams.score and per_candidate.counts == streams.counts == [8, 6, 4, 2]


@pytest.mark.parametrize("name, theirs", [
    ("corpus_bleu", sacrebleu.corpus_bleu), ("raw_corpus_bleu", sacrebleu.raw_corpus_bleu),
    ("sentence_bleu", sacrebleu.sentence_bleu), ("corpus_chrf", sacrebleu.corpus_chrf),
    ("sentence_chrf", sacrebleu.sentence_chrf),
    ("BLEU", sacrebleu.BLEU), ("CHRF", sacrebleu.CHRF),
    ("BLEU.compute_bleu", sacrebleu.BLEU.compute_bleu),
    ("BLEU.corpus_score", sacrebleu.BLEU.corpus_score), ("BLEU.sentence_score", sacrebleu.BLEU.sentence_score),
    ("CHRF.corpus_score", sacrebleu.CHRF.corpus_score), ("CHRF.sentence_score", sacrebleu.CHRF.sentence_score),
    ("BLEU.get_signature", sacrebleu.BLEU.get_signature),
    ("BLEUScore", sacrebleu.metrics.BLEUScore), ("CHRFScore", sacrebleu.metrics.CHRFScore),
    ("BLEUScore.format", sacrebleu.metrics.BLEUScore.format),
    ("PairedTest", sacrebleu.significance.PairedTest), ("Result", sacrebleu.significance.Result),
    ("Signature.format", sacrebleu.metrics.base.Signature.format),
])
def test_same_parameters_and_defaults_as_sacrebleu(name, theirs):
    ours = compat
    for part in name.split("."):
        ours = getattr(ours, part)
    params = [(p.name, p.kind, p.default) for p in inspect.signature(ours).parameters.values()]
    assert params == [(p.name, p.kind, p.default) for p in inspect.signature(theirs).parameters.values()]


def test_class_constants():
    assert compat.BLEU.SMOOTH_DEFAULTS == sacrebleu.BLEU.SMOOTH_DEFAULTS
    assert compat.BLEU.TOKENIZER_DEFAULT == sacrebleu.BLEU.TOKENIZER_DEFAULT == "13a"
    assert compat.BLEU._TOKENIZER_MAP == sacrebleu.BLEU._TOKENIZER_MAP
    # every sacrebleu tokenizer, the sentencepiece ones (spm, flores101, flores200, spBLEU-1K) included
    assert set(compat.BLEU.TOKENIZERS) == set(sacrebleu.BLEU.TOKENIZERS)
    assert {"spm", "flores101", "flores200", "spBLEU-1K"} <= set(compat.BLEU.TOKENIZERS)
    for name in ("CHAR_ORDER", "WORD_ORDER", "BETA", "_PUNCTS"):
        assert getattr(compat.CHRF, name) == getattr(sacrebleu.CHRF, name)
    assert compat.MAX_NGRAM_ORDER == 4


def test_option_attributes_read_as_sacrebleus_and_setting_them_recomputes():
    kwargs = {"lowercase": True, "smooth_method": "floor", "smooth_value": 0.3, "max_ngram_order": 3,
              "effective_order": True, "trg_lang": "de", "force": True}
    ours, theirs = compat.BLEU(**kwargs), sacrebleu.BLEU(**kwargs)
    for attr in ("lowercase", "smooth_method", "smooth_value", "max_ngram_order", "effective_order", "trg_lang",
                 "tokenizer_signature", "_force"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    assert ours.tokenizer("Hello, world!") == theirs.tokenizer("Hello, world!")
    ours.lowercase = False
    assert ours.corpus_score(HYPS, REFS).score == compat.BLEU(**{**kwargs, "lowercase": False}).corpus_score(
        HYPS, REFS).score
    with pytest.raises(ValueError, match="smooth_method"):
        ours.smooth_method = "bogus"
    chrf_kwargs = {"char_order": 5, "word_order": 2, "beta": 1, "lowercase": True, "whitespace": True,
                   "eps_smoothing": True}
    ours, theirs = compat.CHRF(**chrf_kwargs), sacrebleu.CHRF(**chrf_kwargs)
    for attr in (*chrf_kwargs, "order"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr


@pytest.mark.parametrize("trg_lang, expected", [("", "13a"), ("de", "13a"), ("zh", "zh"), ("ja", "ja-mecab"),
                                                ("ko", "ko-mecab")])
def test_target_language_picks_the_tokenizer(trg_lang, expected):
    if expected.endswith("mecab") and not has_mecab(expected):
        pytest.skip(f"{expected} is not installed")
    metric = compat.BLEU(trg_lang=trg_lang)
    assert metric.tokenizer_signature == sacrebleu.BLEU(trg_lang=trg_lang).tokenizer_signature
    assert metric.tokenizer_signature.startswith(expected)


def test_explicit_tokenizer_wins_over_target_language_with_a_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="bleu_core.compat"):
        metric = compat.BLEU(trg_lang="zh", tokenize="13a")
    assert metric.tokenizer_signature == "13a" and "'zh'" in caplog.text


# ------------------------------------------------------------------ references: streams and cache

def test_cached_references_are_used_when_none_are_given():
    metric = compat.BLEU(references=REFS)
    assert metric.num_refs == -1  # 2, 1 and 2 references: variable
    cached = metric.corpus_score(HYPS, None)
    assert cached.score == compat.BLEU().corpus_score(HYPS, REFS).score == sacrebleu.BLEU().corpus_score(
        HYPS, REFS).score
    assert metric.get_signature().format().startswith("nrefs:var|")
    # references given at call time win, and set the signature's count (as in sacrebleu)
    one = metric.corpus_score(HYPS, REFS[:1])
    assert one.score == sacrebleu.BLEU().corpus_score(HYPS, REFS[:1]).score
    assert metric.get_signature().format().startswith("nrefs:1|")
    assert metric.corpus_score(HYPS, None).score == cached.score
    chrf = compat.CHRF(references=REFS)
    assert chrf.corpus_score(HYPS, None).score == sacrebleu.CHRF().corpus_score(HYPS, REFS).score


def test_no_references_and_no_cache():
    for module in (compat, sacrebleu):
        with pytest.raises(RuntimeError, match="No references provided and the cache is empty."):
            module.BLEU().corpus_score(HYPS, None)


def test_empty_reference_counts_and_none_does_not():
    ours, theirs = compat.BLEU(), sacrebleu.BLEU()
    for refs in ([["a b c", ""]], [["a b c", None], ["", "d"]]):
        hyps = ["a b c", "d e"]
        assert ours.corpus_score(hyps, refs).score == theirs.corpus_score(hyps, refs).score
        assert ours.get_signature().format().split("|")[0] == theirs.get_signature().format().split("|")[0]


# ------------------------------------------------------------------ signatures

@pytest.mark.parametrize("make, refs", [
    (lambda m: m.BLEU(), REFS[:1]),
    (lambda m: m.BLEU(lowercase=True, smooth_method="floor", smooth_value=0.25, tokenize="char"), REFS),
    (lambda m: m.BLEU(smooth_method="add-k", effective_order=True, tokenize="none"), REFS),
    (lambda m: m.CHRF(), REFS),
    (lambda m: m.CHRF(word_order=2, whitespace=True, eps_smoothing=True, lowercase=True), REFS[:1]),
])
def test_signature_as_sacrebleus_but_the_version(make, refs):
    ours, theirs = make(compat), make(sacrebleu)
    for metric in (ours, theirs):
        with pytest.raises(ValueError, match="Number of references unknown, please evaluate the metric first."):
            metric.get_signature()
    ours.corpus_score(HYPS, refs)
    theirs.corpus_score(HYPS, refs)
    for short in (False, True):
        assert versioned_as_sacrebleu(ours.get_signature().format(short=short)) == \
            theirs.get_signature().format(short=short)
    assert ours.get_signature().format().endswith("|version:beambleu-0.1.0")
    assert ours.get_signature().format(short=True).endswith("|v:beambleu-0.1.0")
    assert str(ours.get_signature()) == repr(ours.get_signature()) == ours.get_signature().format()
    # bootstrap fields appear after a bootstrap and stay, as in sacrebleu
    with seed_env(99):
        ours.corpus_score(HYPS, refs, n_bootstrap=20)
        theirs.corpus_score(HYPS, refs, n_bootstrap=20)
    ours.sentence_score(HYPS[0], [REFS[0][0]])
    theirs.sentence_score(HYPS[0], [REFS[0][0]])
    for short in (False, True):
        assert versioned_as_sacrebleu(ours.get_signature().format(short=short)) == \
            theirs.get_signature().format(short=short)
    assert "|bs:20|seed:99|" in ours.get_signature().format()


def test_signature_update():
    for module in (compat, sacrebleu):
        metric = module.BLEU()
        metric.corpus_score(HYPS, REFS)
        sig = metric.get_signature()
        sig.update("test", "wmt17")
        sig.update("ar", 100)
        assert sig.format().startswith("nrefs:var|ar:100|test:wmt17|case:mixed|")
        assert sig.format(short=True).startswith("#:var|ar:100|t:wmt17|c:mixed|")


# ------------------------------------------------------------------ formatting

def test_format_and_repr_as_sacrebleus_with_and_without_an_interval():
    ours, theirs = compat.BLEU().corpus_score(HYPS, REFS), sacrebleu.BLEU().corpus_score(HYPS, REFS)
    for step in ("plain", "interval"):
        if step == "interval":
            for s in (ours, theirs):
                s._mean, s._ci = 44.123456, 3.2
        for kwargs in ({}, {"width": 4}, {"score_only": True}, {"signature": "nrefs:2|x:y"},
                       {"signature": "nrefs:2|x:y", "is_json": True, "width": 3}):
            assert ours.format(**kwargs) == theirs.format(**kwargs), kwargs
        assert repr(ours) == repr(theirs) and str(ours) == str(theirs)
    assert "(μ = 44.12 ± 3.20)" in ours.format()
    for module in (compat, sacrebleu):  # JSON takes its keys from the signature: none, no JSON
        with pytest.raises(ValueError):
            module.CHRF().corpus_score(HYPS, REFS).format(is_json=True)


def test_estimate_ci_as_sacrebleus():
    scores = [compat.CHRFScore(x, 6, 0, 2) for x in (50.0, 51.5, 49.25, 52.0, 48.0, 50.5, 47.75, 53.0)]
    ours, theirs = compat.CHRFScore(50.0, 6, 0, 2), sacrebleu.metrics.CHRFScore(50.0, 6, 0, 2)
    ours.estimate_ci(scores)
    theirs.estimate_ci(scores)
    assert (ours._mean, ours._ci) == (theirs._mean, theirs._ci) and ours.format() == theirs.format()


def test_result_repr():
    assert repr(compat.Result(1.5, 0.25, 1.0, 0.5)) == repr(sacrebleu.significance.Result(1.5, 0.25, 1.0, 0.5))
    assert repr(compat.Result(2.0)) == "score=2.0,p_value=None,mean=None,ci=None"


# ------------------------------------------------------------------ bootstrap intervals

def test_interval_uses_beambleus_draws_on_line_numbers(monkeypatch):
    """With ``RESAMPLING = "counter"``, corpus_score(n_bootstrap=B) resamples segment i with the
    Poisson weights of row key ``row_keys_from_ids(i + 1)`` and seed SACREBLEU_SEED, as ``beambleu
    score --resampling counter`` does."""
    monkeypatch.setattr(compat, "RESAMPLING", "counter")
    hyps, refs = HYPS * 10, [r * 10 for r in REFS]
    metric = compat.BLEU()
    with seed_env(4321):
        score = metric.corpus_score(hyps, refs, n_bootstrap=300)
    rows = metric._extract_corpus_statistics(hyps, refs)
    boot = bootstrap.bootstrap_totals(rows, bootstrap.row_keys_from_ids(np.arange(1, 31)), 300, 4321)[0]
    expected = bootstrap.percentile_interval([bleu_core.Bleu().score(b).score for b in boot])
    assert (score._mean, score._ci) == (expected["mean"], expected["half_width"])
    assert "|bs:300|seed:4321|" in metric.get_signature().format()
    # and the same as the paired test's baseline interval with the same seed
    with seed_env(4321):
        _, res = compat.PairedTest([("a", hyps)], {"BLEU": compat.BLEU()}, refs, test_type="bs", n_samples=300)()
    assert (res["BLEU"][0].mean, res["BLEU"][0].ci) == (score._mean, score._ci)


def test_seed_none_is_a_fresh_seed_printed_none():
    metric = compat.CHRF()
    with seed_env("NONE"):
        metric.corpus_score(HYPS, REFS, n_bootstrap=50)
    assert "|bs:50|seed:none|" in metric.get_signature().format()


def test_too_many_resamples(monkeypatch):
    """The counter draws' cap (sacrebleu's draws have none, as sacrebleu)."""
    monkeypatch.setattr(compat, "RESAMPLING", "counter")
    with pytest.raises(ValueError, match="resamples is above the limit"):
        compat.BLEU().corpus_score(HYPS, REFS, n_bootstrap=10**6)


def test_interval_agrees_with_sacrebleus_within_monte_carlo_noise(monkeypatch):
    """The counter draws (``RESAMPLING = "counter"``; the default draws give sacrebleu's numbers
    exactly, tests/bleu_core/compat/test_compat_significance.py): different draws, the same interval up to noise.
    Over 30 seeds on these 300 lines, the half-width of a 1000-resample interval varied with a
    standard deviation of 3.5% of its value (both sacrebleu's and ours), so the difference of two
    has about 5%: 20% is 4 of those. The bootstrap mean has standard error sd / sqrt(1000),
    sd = half-width / 1.96: allow 4 * sqrt(2) of those."""
    folder = CORPORA / "wmt21" / "en-de"
    if not (folder / "ref.D.txt").exists():
        pytest.skip(f"shared corpora not found at {CORPORA}")
    refs = [read_lines(folder / f"ref.{k}.txt")[:300] for k in "ACD"]
    hyps = read_lines(folder / "sys.ICL.txt")[:300]
    monkeypatch.setattr(compat, "RESAMPLING", "counter")
    for make in (lambda m: m.BLEU(), lambda m: m.CHRF(word_order=2)):
        with seed_env(12345):
            ours = make(compat).corpus_score(hyps, refs, n_bootstrap=1000)
            theirs = make(sacrebleu).corpus_score(hyps, refs, n_bootstrap=1000)
        assert ours.score == theirs.score
        assert abs(ours._ci - theirs._ci) <= 0.2 * theirs._ci
        assert abs(ours._mean - theirs._mean) <= 4 * 2**0.5 * theirs._ci / 1.96 / 1000**0.5


# ------------------------------------------------------------------ argument errors

CALLS = [
    ("sentence", (1, ["a"])),
    ("sentence", ("a", "a")),
    ("sentence", ("a", [1])),
    ("corpus", ((x for x in ["a"]), [["a"]])),
    ("corpus", ([1, "a"], [["a", "b"]])),
    ("corpus", (["a", None], [["a", "b"]])),
    ("corpus", (["a"], {"a": 1})),
    ("corpus", (["a"], [1])),
    ("corpus", (["a"], [[1]])),
]


@pytest.mark.parametrize("kind, args", CALLS)
@pytest.mark.parametrize("metric", ["BLEU", "CHRF"])
def test_same_argument_errors_as_sacrebleu(metric, kind, args):
    errors = []
    for module in (compat, sacrebleu):
        instance = getattr(module, metric)()
        call = instance.sentence_score if kind == "sentence" else instance.corpus_score
        with pytest.raises(Exception) as info:
            call(*args)
        errors.append((type(info.value), str(info.value)))
    assert errors[0] == errors[1]
    assert errors[0][0] is TypeError and errors[0][1].startswith(f"{metric}: ")


@pytest.mark.parametrize("hyps, refs, error, message", [
    # sacrebleu silently truncates to the shortest of these
    (["a", "b", "c"], [["a", "b"]], ValueError, "BLEU: 3 hypotheses but 2 reference lines"),
    (["a", "b"], [["a", "b"], ["a"]], ValueError, "BLEU: reference streams have different lengths \\(1, 2 lines\\)"),
    # sacrebleu fails inside, or scores a negative reference length
    (["a", "b"], [["a", None], ["b", None]], ValueError, "BLEU: segment 1 has no reference"),
    # sacrebleu takes the characters of a string for lines
    (["a", "b"], ["ab"], TypeError, "BLEU: Each element of `refs` should be a sequence of strings."),
    (["a", "b"], [["a", "b"], "ab"], TypeError, "BLEU: reference stream 1 should be a sequence of strings."),
    (["a", 2], [["a", "b"]], TypeError, "BLEU: hypothesis 1 is a int, not a string."),
    (["a", "b"], [["a", 2]], TypeError, "BLEU: reference of segment 1 is a int, not a string or None."),
    ([], [["a"]], ValueError, "BLEU: `hyps` is empty"),
    (["a"], [], ValueError, "BLEU: `refs` is empty"),
])
def test_inputs_sacrebleu_mishandles_raise(hyps, refs, error, message):
    with pytest.raises(error, match=message):
        compat.BLEU().corpus_score(hyps, refs)


def test_truncation_is_what_sacrebleu_would_do():
    """The length check is a deliberate difference: sacrebleu scores the first lines only."""
    assert sacrebleu.BLEU().corpus_score(["a b c d", "x"], [["a b c d"]]).sys_len == 4  # "x" is not scored


@pytest.mark.parametrize("kwargs, error, message", [
    ({"smooth_method": "bogus"}, ValueError, "smooth_method: unknown smoothing 'bogus'"),
    ({"tokenize": "spm2"}, ValueError, "tokenize: unknown tokenizer 'spm2'"),
    ({"max_ngram_order": 0}, ValueError, "max_ngram_order must be between 1 and 64"),
    ({"smooth_value": -1.0, "smooth_method": "floor"}, ValueError, "smooth_value must be a finite number >= 0"),
    ({"lowercase": "yes"}, TypeError, "lowercase must be a bool"),
])
def test_bad_options_raise_when_the_metric_is_made(kwargs, error, message):
    with pytest.raises(error, match=message):
        compat.BLEU(**kwargs)


def test_sentence_score_without_references():
    with pytest.raises(ValueError, match="CHRF: The argument `refs` is empty"):
        compat.CHRF().sentence_score("a", [])
    with pytest.raises(ValueError, match="segment 0 has no reference"):
        compat.BLEU().sentence_score("a", [None, None])


# ------------------------------------------------------------------ other inputs

def test_tokenized_period_warning(caplog):
    hyps = ["a sentence ."] * 100
    refs = [["a sentence."] * 100]
    with caplog.at_level(logging.WARNING, logger="bleu_core.compat"):
        compat.BLEU(force=True).corpus_score(hyps, refs)
        assert "tokenized period" not in caplog.text
        compat.BLEU().corpus_score(hyps, refs)
        assert "That's 100 lines that end in a tokenized period" in caplog.text


def test_text_without_a_utf8_form_is_scored_as_sacrebleu_scores_it():
    hyps, refs = ["a \ud800 b .", "c d"], [["a \ud800 b", "c d e"]]
    assert compat.corpus_bleu(hyps, refs).score == sacrebleu.corpus_bleu(hyps, refs).score
    assert compat.corpus_chrf(hyps, refs).score == sacrebleu.corpus_chrf(hyps, refs).score


def test_tuples_and_other_sequences_are_accepted():
    assert compat.corpus_bleu(tuple(HYPS), tuple(tuple(r) for r in REFS)).score == \
        sacrebleu.corpus_bleu(HYPS, REFS).score

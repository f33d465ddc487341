"""bleu_core.items (the per-item API of evaluation harnesses) against sacrebleu 2.6.0, run here:
per-item statistics against sacrebleu's per-segment statistics, corpus scores and their text
against sacrebleu's corpus_score, bootstrap replicates against sacrebleu's corpus_score of the
resampled items, on small adversarial inputs and on a real WMT system (when ../shared/corpora
exists), and the one-line errors of bad inputs."""

from __future__ import annotations

import numpy as np
import pytest

from bleu_core.items import bootstrap, corpus_score, item_stats, metric_of, resample_counts
from bleu_core.metrics.bleu import Bleu
from bleu_core.metrics.chrf import Chrf
from bleu_core.metrics.ter import Ter

from ..oracle import CORPORA, load_system, read_lines, to_streams

sacrebleu = pytest.importorskip("sacrebleu")
from sacrebleu.metrics import BLEU, CHRF, TER  # noqa: E402

CANDIDATES = [
    "The cat sat on the mat.",
    "",                                            # an empty candidate
    "a a a a a a a a",                             # repeated n-grams: clipping
    "Hello,   world!! (really?)  ",                # spaces and punctuation
    "北京是中国的首都。它很大",                       # CJK without spaces
    "¿Qué tal? Ça va — très bien… 1,000.5 $3",     # accents, dashes, numbers
    "the THE the",                                 # case
    "x",
    "it is a guide to action which ensures that the military always obeys the commands of the party",
    "ein Haus am See",
]
REFERENCES = [
    ["The cat is on the mat.", "There is a cat on the mat."],
    ["", "nothing"],                               # an empty reference
    ["a a", None],                                 # a missing reference
    ["Hello world! (really)", "hello , world"],
    ["北京是中国的首都。", "中国的首都是北京"],
    ["Qué tal? Ça va très bien... 1,000.5 $3", None],
    ["The the the", "THE"],
    ["y", "x y"],
    ["it is a guide to action that ensures that the military will forever heed party commands",
     "it is the guiding principle which guarantees the military forces always being under the command of the party"],
    ["ein Haus am See", "das Haus am See"],
]
TWO_REFS = [refs if len([r for r in refs if r is not None]) == 2 else [refs[0], refs[0]] for refs in REFERENCES]

BLEU_OPTIONS = [
    {},
    {"tokenize": "zh"}, {"tokenize": "char"}, {"tokenize": "intl"}, {"tokenize": "none"},
    {"lowercase": True},
    {"smooth_method": "floor", "smooth_value": 0.2}, {"smooth_method": "add-k"}, {"smooth_method": "none"},
    {"effective_order": True},
]
CHRF_OPTIONS = [{}, {"word_order": 2}, {"lowercase": True}, {"whitespace": True}, {"eps_smoothing": True},
                {"char_order": 4, "beta": 1}]
TER_OPTIONS = [{}, {"normalized": True}, {"no_punct": True}, {"asian_support": True}, {"case_sensitive": True}]


def _theirs(metric_id, opts):
    return {"bleu": lambda o: BLEU(**o), "chrf": lambda o: CHRF(**o), "ter": lambda o: TER(**o)}[metric_id](opts)


CASES = ([("bleu", o) for o in BLEU_OPTIONS] + [("chrf", o) for o in CHRF_OPTIONS]
         + [("ter", o) for o in TER_OPTIONS])


def _ter_rows(rows):
    """beambleu's TER rows as sacrebleu's segment statistics, by the documented layout: the
    edits, and the average reference length (the reference words of the row's k references,
    held in column ref_len_k, over k)."""
    out = []
    for row in rows.tolist():
        lengths = row[5:]
        k = next((i + 1 for i, v in enumerate(lengths) if v), 1)
        out.append([row[0], sum(lengths) / k])
    return out


@pytest.mark.parametrize("metric_id,opts", CASES, ids=[f"{m}-{o}" for m, o in CASES])
def test_item_stats_and_corpus_score_equal_sacrebleu(metric_id, opts):
    theirs = _theirs(metric_id, opts)
    streams = to_streams(REFERENCES)
    stats = item_stats(metric_id, CANDIDATES, REFERENCES, **opts)
    assert stats.dtype == np.int64 and stats.shape == (len(CANDIDATES), metric_of(metric_id, **opts).width)
    seg = theirs._extract_corpus_statistics(CANDIDATES, streams)
    if metric_id == "ter":
        assert _ter_rows(stats) == [[float(a), float(b)] for a, b in seg]
    else:
        assert stats.tolist() == [list(map(int, row)) for row in seg]
    ours, want = corpus_score(metric_id, stats, **opts), theirs.corpus_score(CANDIDATES, streams)
    assert ours.score == want.score
    assert str(ours) == str(want)
    assert ours.format(width=4) == want.format(width=4)
    fields = {"bleu": ("counts", "totals", "precisions", "bp", "sys_len", "ref_len"),
              "chrf": ("char_order", "word_order", "beta", "name"), "ter": ("num_edits", "ref_length")}[metric_id]
    for field in fields:
        assert getattr(ours, field) == getattr(want, field), field


def test_metric_objects_and_ids_agree():
    by_id = item_stats("bleu", CANDIDATES, REFERENCES, tokenize="zh", lowercase=True)
    by_object = item_stats(Bleu(tokenize="zh", lowercase=True), CANDIDATES, REFERENCES)
    assert np.array_equal(by_id, by_object)
    assert corpus_score(Bleu(tokenize="zh", lowercase=True), by_object).score == \
        BLEU(tokenize="zh", lowercase=True).corpus_score(CANDIDATES, to_streams(REFERENCES)).score
    # a totals vector scores as the rows it sums
    assert corpus_score("bleu", by_id.sum(axis=0)).score == corpus_score("bleu", by_id).score


def test_subsets_of_items_score_as_sacrebleu_on_those_items():
    stats = item_stats("chrf", CANDIDATES, REFERENCES, word_order=2)
    pick = [8, 0, 0, 3, 9]
    want = CHRF(word_order=2).corpus_score([CANDIDATES[i] for i in pick], to_streams([REFERENCES[i] for i in pick]))
    assert corpus_score("chrf", stats[pick], word_order=2).score == want.score


def test_ter_three_references_in_row_order_as_sacrebleu():
    refs = [r + ["a third one", "the cat"][: 1 + i % 2] for i, r in enumerate(TWO_REFS)]  # 3 or 4 references
    stats = item_stats("ter", CANDIDATES, refs)
    want = TER().corpus_score(CANDIDATES, to_streams(refs))
    got = corpus_score("ter", stats)
    assert (got.score, got.ref_length, got.num_edits) == (want.score, want.ref_length, want.num_edits)


# ------------------------------------------------------------------------------ the bootstrap


def _resampled(candidates, references, counts):
    idx = np.repeat(np.arange(len(candidates)), counts)
    return [candidates[i] for i in idx], [references[i] for i in idx]


@pytest.mark.parametrize("metric_id,opts,refs", [
    ("bleu", {}, REFERENCES), ("bleu", {"smooth_method": "floor"}, REFERENCES), ("bleu", {"tokenize": "char"}, TWO_REFS),
    ("chrf", {}, REFERENCES), ("chrf", {"word_order": 2, "eps_smoothing": True}, TWO_REFS),
    ("ter", {}, REFERENCES), ("ter", {"normalized": True}, TWO_REFS),
])
def test_bootstrap_replicates_equal_sacrebleu_on_the_resampled_items(metric_id, opts, refs):
    stats = item_stats(metric_id, CANDIDATES, refs, **opts)
    scores = bootstrap(metric_id, stats, 40, seed=7, **opts)
    counts = resample_counts(len(CANDIDATES), 40, seed=7)
    assert scores.dtype == np.float64 and scores.shape == (40,)
    assert (counts.sum(axis=1) == len(CANDIDATES)).all()
    theirs = _theirs(metric_id, opts)
    for b in (0, 1, 17, 39):
        hyps, rs = _resampled(CANDIDATES, refs, counts[b])
        assert scores[b] == theirs.corpus_score(hyps, to_streams(rs)).score, b
    assert len(set(scores.tolist())) > 5  # the replicates differ


def test_bootstrap_is_reproducible_and_seeded():
    stats = item_stats("bleu", CANDIDATES, REFERENCES)
    a = bootstrap("bleu", stats, 200, seed=3)
    assert np.array_equal(a, bootstrap("bleu", stats, 200, seed=3))
    assert not np.array_equal(a, bootstrap("bleu", stats, 200, seed=4))
    assert np.array_equal(a[:50], bootstrap("bleu", stats, 50, seed=3))  # the first replicates do not depend on B
    assert bootstrap("bleu", stats, 10).shape == (10,)  # fresh entropy
    assert np.array_equal(bootstrap("bleu", stats, 20, seed=np.random.default_rng(9)),
                          bootstrap("bleu", stats, 20, seed=9))


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 37, 600, 1300])
def test_resample_counts_are_draws_with_replacement(n):
    """Each row is n draws with replacement: it sums to n, and an item's count is Binomial(n, 1/n)
    (checked on its frequencies of 0, 1, 2 and 3, and its mean and variance)."""
    from math import comb

    b = max(4000, 400_000 // n)
    counts = resample_counts(n, b, seed=n)
    assert counts.shape == (b, n) and counts.dtype == np.int64
    assert (counts.sum(axis=1) == n).all()
    flat = counts.ravel()
    p = 1.0 / n
    for k in range(4):
        want = comb(n, k) * p**k * (1 - p) ** (n - k) if k <= n else 0.0
        assert abs(np.mean(flat == k) - want) < 0.006, (k, np.mean(flat == k), want)
    assert abs(flat.mean() - 1.0) < 1e-12  # the rows sum to n exactly
    assert abs(flat.var() - (1 - p)) < 0.02
    if n > 1:  # two items' counts are negatively correlated: covariance -1/n
        cov = np.mean((counts[:, 0] - 1.0) * (counts[:, 1] - 1.0))
        assert abs(cov + p) < 0.03


def test_bootstrap_of_real_sized_corpus_matches_the_counts():
    """10,000 items: every replicate is the score of counts @ stats (exact integer totals)."""
    rng = np.random.default_rng(0)
    stats = item_stats("bleu", CANDIDATES, REFERENCES)[rng.integers(0, len(CANDIDATES), 10_000)]
    scores = bootstrap("bleu", stats, 30, seed=1)
    counts = resample_counts(len(stats), 30, seed=1)
    metric = Bleu()
    assert [metric.score(c @ stats).score for c in counts] == scores.tolist()
    # the standard error shrinks with the corpus: a sanity check on the spread
    assert 0 < scores.std() < 1.0


# ------------------------------------------------------------------------------ real data


@pytest.mark.corpora
def test_real_wmt_system_against_sacrebleu():
    folder = CORPORA / "wmt22" / "cs-en"
    if not (folder / "ref.B.txt").exists():
        pytest.skip(f"shared corpora not found at {CORPORA}")
    hyps, streams = load_system("wmt22/cs-en", "Online-A", ("B", "C"))
    refs = [list(r) for r in zip(*streams)]
    for metric_id, opts in (("bleu", {}), ("chrf", {"word_order": 2})):
        theirs = _theirs(metric_id, opts)
        stats = item_stats(metric_id, hyps, refs, **opts)
        assert stats.tolist() == [list(map(int, row)) for row in theirs._extract_corpus_statistics(hyps, streams)]
        want = theirs.corpus_score(hyps, streams)
        got = corpus_score(metric_id, stats, **opts)
        assert (got.score, str(got)) == (want.score, str(want))
        scores = bootstrap(metric_id, stats, 1000, seed=0, **opts)
        counts = resample_counts(len(hyps), 3, seed=0)  # the first replicates of the same draws
        for b in range(3):
            h, r = _resampled(hyps, refs, counts[b])
            assert scores[b] == theirs.corpus_score(h, to_streams(r)).score
        assert scores.min() < want.score < scores.max()
    n = 300  # TER on a sample of the lines (sacrebleu's TER is slow)
    stats = item_stats("ter", hyps[:n], refs[:n])
    want = TER().corpus_score(hyps[:n], [s[:n] for s in streams])
    assert corpus_score("ter", stats).score == want.score
    assert read_lines(folder / "ref.B.txt")[0] == streams[0][0]


# ------------------------------------------------------------------------------ bad inputs


def _one_line(excinfo):
    text = str(excinfo.value)
    assert text and "\n" not in text
    return text


@pytest.mark.parametrize("call,error,words", [
    # sacrebleu's layout: one stream per reference (2 streams for 3 candidates)
    (lambda: item_stats("bleu", ["a", "b", "c"], [["A", "B", "C"], ["A2", "B2", "C2"]]), ValueError, "reference lists"),
    (lambda: item_stats("bleu", ["a", "b"], ["A", "B"]), TypeError, "is a string"),
    (lambda: item_stats("bleu", "a b", [["a"]]), TypeError, "list of strings"),
    (lambda: item_stats("bleu", ["a", None], [["a"], ["b"]]), ValueError, "candidates[1]"),
    (lambda: item_stats("bleu", ["a", "b"], [["a"], [None]]), ValueError, "references[1]"),
    (lambda: item_stats("nosuchmetric", ["a"], [["a"]]), ValueError, "unknown metric"),
    (lambda: item_stats(Bleu(), ["a"], [["a"]], tokenize="zh"), TypeError, "metric object"),
    (lambda: item_stats("bleu", ["a"], [["a"]], tokenize="nosuch"), ValueError, "nosuch"),
    (lambda: item_stats(42, ["a"], [["a"]]), TypeError, "metric id"),
    (lambda: corpus_score("bleu", np.zeros((3, 9), dtype=np.int64)), ValueError, "columns"),
    (lambda: corpus_score("bleu", np.zeros((0, 10), dtype=np.int64)), ValueError, "no items"),
    (lambda: corpus_score("bleu", -np.ones((2, 10), dtype=np.int64)), ValueError, "negative"),
    (lambda: corpus_score("bleu", np.full((2, 10), 0.5)), TypeError, "integers"),
    (lambda: corpus_score("chrf", np.zeros((2, 10, 1), dtype=np.int64)), ValueError, "matrix"),
    (lambda: bootstrap("bleu", np.ones((3, 10), dtype=np.int64), 0), ValueError, "at least 1"),
    (lambda: bootstrap("bleu", np.ones((3, 10), dtype=np.int64), 5, seed="x"), TypeError, "seed"),
    (lambda: bootstrap("bleu", np.ones(10, dtype=np.int64), 5), ValueError, "matrix"),
    (lambda: bootstrap("ter", np.ones((3, 10), dtype=np.int64), 5), ValueError, "columns"),
    (lambda: resample_counts(0, 5), ValueError, "n_items"),
])
def test_bad_inputs_raise_one_line(call, error, words):
    with pytest.raises(error) as excinfo:
        call()
    assert words in _one_line(excinfo)


def test_stream_layout_of_the_same_length_is_read_per_item():
    """Square inputs cannot be told apart: the documented layout is the one used."""
    stats = item_stats("bleu", ["a b", "c d"], [["a b", "x"], ["c d", "y"]])
    assert stats[:, 0].tolist() == [2, 2] and stats[:, 2].tolist() == [2, 2]


def test_empty_input_and_plugin_style_metrics():
    assert item_stats("chrf", [], []).shape == (0, Chrf().width)
    assert item_stats(Ter(), ["a"], [["a"]]).shape == (1, Ter().width)

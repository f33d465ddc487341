"""TER (bleu_core.metrics.ter, bleu_core.metrics.ter._ter): sacrebleu 2.6.0's own expectations, the scalar path, the
kernel and sacrebleu agreeing bit for bit (statistics, edit breakdown, scores) on arbitrary text
with every option, shifts and the candidate cap, the exact reference-length sum, the signature,
validation and bad rows, and worked examples computed by hand."""

import pickle
import random
from contextlib import contextmanager
from fractions import Fraction

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sacrebleu.metrics import lib_ter
from sacrebleu.metrics.ter import TER
from sacrebleu.tokenizers.tokenizer_ter import TercomTokenizer

from bleu_core import __version__
from bleu_core.errors import BatchInputError
from bleu_core.protocol import Stat
from bleu_core.metrics.ter import MAX_REFS, STAT_NAMES, Ter, TerScore, corpus_ter, sentence_ter
from bleu_core.metrics.ter.reference import MAX_SHIFT_CANDIDATES, shifted, tercom_words

from ....oracle import to_streams
from ....strategies import EDGE

OPTIONS = [dict(normalized=a, no_punct=b, asian_support=c, case_sensitive=d)
           for a in (False, True) for b in (False, True) for c in (False, True) for d in (False, True)]
OURS = f"version:beambleu-{__version__}"


def sacre_stats(candidates, references, **opts):
    """sacrebleu's per-segment [edits, average reference length] and its corpus score."""
    metric = TER(**opts)
    streams = to_streams(references)
    return metric._extract_corpus_statistics(candidates, streams), metric.corpus_score(candidates, streams)


@contextmanager
def final_traces():
    """The trace of the last edit distance sacrebleu computes for each candidate/reference pair
    (that of the shifted candidate: its insertions, deletions and substitutions), in order."""
    traces, original = [], lib_ter.BeamEditDistance

    class Recording(original):
        def __init__(self, words_ref):
            super().__init__(words_ref)
            traces.append(None)

        def __call__(self, words_hyp):
            distance, trace = super().__call__(words_hyp)
            traces[-1] = trace
            return distance, trace

    lib_ter.BeamEditDistance = Recording
    try:
        yield traces
    finally:
        lib_ter.BeamEditDistance = original


@contextmanager
def shift_rounds():
    """The candidates sacrebleu has counted after each round of its shift search, per pair."""
    counts, original = [], lib_ter._shift

    def recording(*args):
        result = original(*args)
        counts.append(result[2])
        return result

    lib_ter._shift = recording
    try:
        yield counts
    finally:
        lib_ter._shift = original


def agree(candidates, references, **opts):
    """Scalar path == kernel == sacrebleu: statistics, sums and scores (returns the kernel's rows)."""
    ours = Ter(**opts)
    rows = ours.batch_stats(candidates, references)
    assert rows.tolist() == ours.scalar_stats(candidates, references).tolist()
    theirs, score = sacre_stats(candidates, references, **opts)
    for row, refs, (edits, avg_len) in zip(rows.tolist(), references, theirs):
        k = sum(r is not None for r in refs)
        assert row[0] == edits and row[0] == sum(row[1:5])
        assert row[5 + k - 1] / k == avg_len and sum(row[5:]) == row[5 + k - 1]
    mine = ours.corpus_score(candidates, references)
    assert mine.score == score.score and mine.ref_length == score.ref_length and mine.num_edits == score.num_edits
    assert (ours.batch_stats(candidates, references, per_row=False) == rows.sum(axis=0)).all()
    return rows


# ----------------------------------------------------------------------------- sacrebleu's own cases
# Inputs and expected scores of sacrebleu 2.6.0's test/test_ter.py (one reference per candidate,
# scores within 1e-3), and of its test/test_tokenizer_ter.py.

WMT19_HYPS = [
    'wählen Sie " Bild neu berechnen , " um beim Ändern der Bildgröße Pixel hinzuzufügen oder zu entfernen , damit '
    'das Bild ungefähr dieselbe Größe aufweist wie die andere Größe .',
    'wenn Sie alle Aufgaben im aktuellen Dokument aktualisieren möchten , wählen Sie im Menü des '
    'Aufgabenbedienfelds die Option " Alle Aufgaben aktualisieren . "',
    'klicken Sie auf der Registerkarte " Optionen " auf die Schaltfläche " Benutzerdefiniert " und geben Sie Werte '
    'für " Fehlerkorrektur-Level " und " Y / X-Verhältnis " ein .',
    'Sie können beispielsweise ein Dokument erstellen , das ein Auto über die Bühne enthält .',
    'wählen Sie im Dialogfeld " Neu aus Vorlage " eine Vorlage aus und klicken Sie auf " Neu . "',
]
WMT19_REFS = [
    'wählen Sie " Bild neu berechnen , " um beim Ändern der Bildgröße Pixel hinzuzufügen oder zu entfernen , damit '
    'die Darstellung des Bildes in einer anderen Größe beibehalten wird .',
    'wenn Sie alle Aufgaben im aktuellen Dokument aktualisieren möchten , wählen Sie im Menü des '
    'Aufgabenbedienfelds die Option " Alle Aufgaben aktualisieren . "',
    'klicken Sie auf der Registerkarte " Optionen " auf die Schaltfläche " Benutzerdefiniert " und geben Sie für '
    '" Fehlerkorrektur-Level " und " Y / X-Verhältnis " niedrigere Werte ein .',
    'Sie können beispielsweise ein Dokument erstellen , das ein Auto enthalt , das sich über die Bühne bewegt .',
    'wählen Sie im Dialogfeld " Neu aus Vorlage " eine Vorlage aus und klicken Sie auf " Neu . "',
]

SACREBLEU_CASES = [
    (["aaaa bbbb cccc dddd"], ["aaaa bbbb cccc dddd"], 0),  # perfect match
    (["dddd eeee ffff"], ["aaaa bbbb cccc"], 1),  # no overlap
    ([""], ["a"], 1),  # empty hypothesis
    (["d e f g h a b c"], ["a b c d e f g h"], 1 / 8),  # one shift fixes it
    (WMT19_HYPS, WMT19_REFS, 0.136),  # WMT dev data (2019)
]


@pytest.mark.parametrize("hyps,refs,expected", SACREBLEU_CASES)
def test_sacrebleu_cases(hyps, refs, expected):
    score = corpus_ter(hyps, [[r] for r in refs])
    assert abs(score.score - 100 * expected) < 1e-3
    assert score.score == TER().corpus_score(hyps, [refs]).score
    agree(hyps, [[r] for r in refs])


@pytest.mark.parametrize("opts,text,expected", [
    ({}, "a b c d", "a b c d"),
    ({}, "", ""),
    ({}, "a b c d.", "a b c d."),
    ({}, "A B C D.", "a b c d."),
    ({"no_punct": True}, "a b c d.", "a b c d"),
    ({"no_punct": True}, "A ; B ) C : D.", "a b c d"),
    ({"normalized": True}, "a b (c) d.", "a b ( c ) d ."),
    ({"normalized": True}, "Jim's car.", "jim 's car ."),
    ({"normalized": True}, "4.2", "4.2"),
    ({"normalized": True, "asian_support": True}, "美众院公布对特", "美 众 院 公 布 对 特"),
    ({"normalized": True, "asian_support": True}, "りの拳銃を持", "りの 拳 銃 を 持"),
])
def test_sacrebleu_tokenizer_cases(opts, text, expected):
    assert tercom_words(text, **opts) == expected.split()
    ours = Ter(**opts)
    row = ours.batch_stats([text], [[expected]])[0]
    assert row[0] == 0 and row[5] == len(expected.split())  # the kernel's words are the same


# ----------------------------------------------------------------------------- worked by hand


def test_hand_counts():
    # 8 reference words; moving the block "a b c" to the front is one shift, then all match
    assert Ter().batch_stats(["d e f g h a b c"], [["a b c d e f g h"]]).tolist() == [[1, 0, 0, 0, 1, 8] + [0] * 63]
    # "the cat sat" -> "the cat sat down": one insertion; "a cat sat" -> one substitution; lowercased first
    rows = Ter().batch_stats(["The cat sat", "a CAT sat", "the the cat sat"],
                             [["the cat sat down"], ["the cat sat"], ["the cat sat"]])
    assert rows[:, :6].tolist() == [[1, 1, 0, 0, 0, 4], [1, 0, 0, 1, 0, 3], [1, 0, 1, 0, 0, 3]]
    # an empty reference costs one deletion per candidate word; the average length of 2 refs (0 + 3) is 1.5
    row = Ter().batch_stats(["x y"], [["", "x y z"]])[0]
    assert row.tolist() == [1, 1, 0, 0, 0, 0, 3] + [0] * 62  # "x y z" wins: 1 insertion < 2 deletions
    assert Ter().score(row).score == 100 * (1 / 1.5)


def test_zero_length_rules():
    ours = Ter()
    assert ours.corpus_score(["a b"], [[""]]).score == 100.0  # empty references, non-empty candidate
    assert ours.corpus_score([""], [[""]]).score == 0.0  # both empty
    assert ours.corpus_score([" "], [["\t"]]).score == TER().corpus_score([" "], [["\t"]]).score == 0.0
    assert ours.batch_stats(["a b c"], [[""]]).tolist() == [[3, 0, 3, 0, 0] + [0] * 64]


def test_references_are_tokenized_twice():
    # sacrebleu tokenizes a reference when it reads it and again when it splits it: with normalized,
    # "cat's<TAB>a" becomes "cat's a", then "cat 's a"; the candidate is tokenized once
    rows = agree(["cat's\ta"], [["cat's\ta"]], normalized=True)
    assert rows[0, :6].tolist() == [2, 1, 0, 1, 0, 3]
    # without normalized a second pass changes nothing, which the kernel's single pass rests on
    assert all(chr(c).lower().lower() == chr(c).lower() for c in range(0x110000) if not 0xD800 <= c < 0xE000)


def test_ties_keep_the_first_reference():
    # both references need 1 edit: the first one's breakdown (a substitution) is kept
    row = Ter().batch_stats(["a b c"], [["a b d", "a b c d"]])[0]
    assert row[:5].tolist() == [1, 0, 0, 1, 0] and row[6] == 7


def test_shifted_is_sacrebleus_perform_shift():
    rng = random.Random(5)
    for _ in range(2000):
        n = rng.randrange(1, 15)
        words = list(range(n))
        start = rng.randrange(n)
        length = rng.randrange(1, n - start + 1)
        target = rng.randrange(n + 1)
        assert shifted(words, start, length, target) == lib_ter._perform_shift(words, start, length, target)


# ----------------------------------------------------------------------------- properties

VOCAB = ["a", "b", "c", "d", "The", "the", "cat's", "1.5", "2,000", "x-3", "(y)", "&amp;", "中文", "。", "ｘ", "！", "è"]

word = st.one_of(st.sampled_from(VOCAB), st.sampled_from(EDGE), st.text(min_size=1, max_size=3))


@st.composite
def text_pairs(draw, max_words=40):
    """A reference of arbitrary words and a candidate made from it: blocks moved (shifts), words
    replaced, dropped and added; or an unrelated candidate."""
    ref = draw(st.lists(word, max_size=max_words))
    hyp = list(ref)
    if draw(st.booleans()) or not hyp:
        hyp = draw(st.lists(word, max_size=max_words))
    for _ in range(draw(st.integers(0, 3))):
        if len(hyp) > 1:
            i = draw(st.integers(0, len(hyp) - 1))
            j = draw(st.integers(i, min(len(hyp), i + 12)))
            block, hyp = hyp[i:j], hyp[:i] + hyp[j:]
            k = draw(st.integers(0, len(hyp)))
            hyp[k:k] = block
    for _ in range(draw(st.integers(0, 3))):
        if hyp:
            hyp[draw(st.integers(0, len(hyp) - 1))] = draw(word)
    sep = draw(st.sampled_from([" ", " ", "  ", "\t", "\u3000"]))
    return sep.join(hyp), sep.join(ref)


@st.composite
def ter_corpus(draw, max_pairs=4, max_refs=4):
    n, nrefs = draw(st.integers(1, max_pairs)), draw(st.integers(1, max_refs))
    cands, refs = [], []
    for _ in range(n):
        hyp, ref = draw(text_pairs())
        row = [ref] + [draw(text_pairs())[1] if draw(st.booleans()) else draw(text_pairs())[0]
                       for _ in range(nrefs - 1)]
        row = [None if k and draw(st.integers(0, 4)) == 0 else r for k, r in enumerate(row)]
        draw(st.randoms()).shuffle(row)
        cands.append(hyp)
        refs.append(row)
    return cands, refs


#: the fast runs (tests/bleu_core/metrics/ter/test_ter_slow.py runs the same properties with many more examples)
SLOW_OK = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                           HealthCheck.data_too_large])


@SLOW_OK
@given(case=ter_corpus(), opts=st.sampled_from(OPTIONS))
def test_scalar_kernel_and_sacrebleu_agree(case, opts):
    agree(*case, **opts)


@SLOW_OK
@given(text=st.lists(word, max_size=30).map(" ".join), opts=st.sampled_from(OPTIONS))
def test_words_are_sacrebleus_tokenizer(text, opts):
    tok = TercomTokenizer(**opts)
    assert tercom_words(text, **opts) == tok(text.rstrip()).split()


@SLOW_OK
@given(pair=text_pairs(), opts=st.sampled_from(OPTIONS))
def test_breakdown_is_sacrebleus_final_alignment(pair, opts):
    hyp, ref = pair
    with final_traces() as traces:
        (edits, _), = TER(**opts)._extract_corpus_statistics([hyp], [[ref]])
    row = Ter(**opts).batch_stats([hyp], [[ref]])[0].tolist()
    if traces:  # (an empty reference has no alignment: every candidate word is deleted)
        trace = traces[-1]
        counts = [trace.count("i"), trace.count("d"), trace.count("s")]
        assert row[1:4] == counts and row[4] == edits - sum(counts)
    else:
        assert row[1:5] == [0, edits, 0, 0]
    assert row[0] == edits


def reordered(rng, n_words, vocab, moves):
    ref = [f"w{rng.randrange(vocab)}" for _ in range(n_words)]
    hyp = list(ref)
    for _ in range(moves):
        i = rng.randrange(len(hyp))
        j = min(len(hyp), i + rng.randrange(1, 12))
        block, hyp = hyp[i:j], hyp[:i] + hyp[j:]
        k = rng.randrange(len(hyp) + 1)
        hyp[k:k] = block
    hyp = [w if rng.random() > 0.15 else f"w{rng.randrange(vocab)}" for w in hyp]
    return " ".join(hyp), " ".join(ref)


def test_the_candidate_cap():
    # long segments over a small vocabulary: sacrebleu's search stops at 1,000 candidates, some
    # rounds with a gain they do not apply; the kernel and the scalar path stop where it does
    rng = random.Random(7)
    capped = 0
    for _ in range(12):
        hyp, ref = reordered(rng, 60, 4, 5)
        with shift_rounds() as counts:
            agree([hyp], [[ref]])
        capped += counts[-1] >= MAX_SHIFT_CANDIDATES
    assert capped >= 6


def test_long_and_lopsided_segments():
    rng = random.Random(11)
    cases = [reordered(rng, 200, 30, 8), reordered(rng, 150, 6, 3)]
    ref = " ".join(f"w{rng.randrange(9)}" for _ in range(140))
    cases += [("w1 w2", ref), (ref, "w3 w1"), ("w1", ref), (ref[: len(ref) // 3], ref)]  # ratios 70, 1/70, 140, 3
    for hyp, ref in cases:
        agree([hyp], [[ref]])
    assert Ter().batch_stats(["w1 w2"], [[ref]])[0, 5] == 140  # a beam widened to ceil(70 / 2 + 25)


def test_many_shifts():
    rng = random.Random(3)
    hyps, refs = zip(*(reordered(rng, 40, 40, 6) for _ in range(20)))
    rows = agree(list(hyps), [[r] for r in refs])
    assert rows[:, 4].max() >= 4


# ----------------------------------------------------------------------------- the reference-length sum


def test_sums_are_exact_and_shard_free():
    rng = random.Random(2)
    hyps, refs = [], []
    for i in range(60):
        hyp, ref = reordered(rng, rng.randrange(1, 30), 10, 2)
        others = [reordered(rng, rng.randrange(1, 30), 10, 1)[0] for _ in range(i % 4)]
        hyps.append(hyp)
        refs.append([ref] + others)
    ours = Ter()
    rows = ours.batch_stats(hyps, refs)
    for k in (1, 2, 4):  # 1, 2 and 4 references: any sharding gives sacrebleu's score
        pick = [i for i, r in enumerate(refs) if len(r) == k]
        theirs = TER().corpus_score([hyps[i] for i in pick], to_streams([refs[i] for i in pick])).score
        for parts in (1, 3, 7):
            shards = [rows[pick][j::parts].sum(axis=0) for j in range(parts)]
            assert ours.score(sum(shards)).score == theirs
    # with 3 references sacrebleu's float sum depends on its order; corpus_score adds it in order
    assert ours.corpus_score(hyps, refs).score == TER().corpus_score(hyps, to_streams(refs)).score
    totals = rows.sum(axis=0)
    exact = sum(Fraction(int(s), k) for k, s in enumerate(totals[5:], start=1))
    assert ours.score(totals).ref_length == float(exact)
    assert ours.score(totals).score == 100 * (int(totals[0]) / float(exact))


def test_three_references_reproduce_sacrebleus_order():
    # averages of 3 references are not exact floats: summed in order they drift from the exact sum,
    # corpus_score keeps sacrebleu's float, score(totals) the correctly rounded exact one
    hyps = ["a"] * 40
    refs = [["a", "b c", "d e f g"]] * 40  # average 7/3 each
    ours, theirs = Ter().corpus_score(hyps, refs), TER().corpus_score(hyps, to_streams(refs))
    assert (ours.score, ours.ref_length) == (theirs.score, theirs.ref_length)
    drift = 0.0
    for _ in range(40):
        drift += 7 / 3
    exact = Ter().score(Ter().batch_stats(hyps, refs).sum(0)).ref_length
    assert ours.ref_length == drift != float(Fraction(280, 3)) == exact
    with pytest.raises(ValueError, match="is not the statistics' reference length"):
        Ter().score(Ter().batch_stats(hyps, refs).sum(0), ref_length=94.0)


# ----------------------------------------------------------------------------- API, signature, outputs


def test_signature_and_text_line():
    hyps, refs = WMT19_HYPS, [[r] for r in WMT19_REFS]
    for opts in OPTIONS:
        ours, theirs = Ter(**opts), TER(**opts)
        score = ours.corpus_score(hyps, refs)
        their_score = theirs.corpus_score(hyps, [WMT19_REFS])
        sig = ours.signature({1})
        assert sig.format().replace(OURS, "version:2.6.0") == str(theirs.get_signature())
        assert sig.format(short=True).replace(f"v:beambleu-{__version__}", "v:2.6.0") == \
            theirs.get_signature().format(short=True)
        signed = ours.score(ours.batch_stats(hyps, refs).sum(0), {1})
        assert signed.format() == their_score.format(signature=sig.format())
        assert signed.format(width=4, score_only=True) == their_score.format(width=4, score_only=True)
        assert score.name == "TER" and isinstance(score, TerScore)
    d = Ter().score(Ter().batch_stats(hyps, refs).sum(0), {1}).to_dict()
    assert d["name"] == "TER" and d["tok"] == "tercom" and d["norm"] == "no" and d["punct"] == "yes"
    assert d["num_edits"] == d["edits"] == sum(d[k] for k in ("insertions", "deletions", "substitutions", "shifts"))
    assert d["ref_lengths"][0] == sum(len(r.split()) for r in WMT19_REFS)


def test_sentence_ter_and_columns():
    score = sentence_ter("d e f g h a b c", ["a b c d e f g h", None])
    assert score.score == TER().sentence_score("d e f g h a b c", ["a b c d e f g h"]).score == 12.5
    ours = Ter(no_punct=True)
    assert ours.width == 69 and MAX_REFS == 64 and ours.stat_names() == list(STAT_NAMES)
    # each statistic under its group-table name, then the sentence score, all with the id as prefix
    assert ours.pair_column_names() == [f"ter_{n}" for n in STAT_NAMES] + ["ter_score"]
    assert {name for name, _, field in ours.table_columns() if isinstance(field, Stat)} == set(STAT_NAMES)
    rows = ours.batch_stats(["a b", "c"], [["a c"], ["c", "c d"]])
    cols = ours.pair_columns(rows)
    assert list(cols) == ours.pair_column_names()
    assert cols["ter_score"].to_pylist() == [TER(no_punct=True).sentence_score(h, r).score
                                       for h, r in (("a b", ["a c"]), ("c", ["c", "c d"]))]
    totals = rows.sum(0)
    d = ours.score(totals, {1, 2}).to_dict()

    def value(field):  # a statistic is taken from the totals, the rest from the score's JSON object
        return int(totals[field.index]) if isinstance(field, Stat) else field(d)

    table = {name: value(field) for name, _, field in ours.table_columns()}
    assert table["signature"].startswith("nrefs:var|case:lc|tok:tercom|norm:no|punct:no|asian:no|")
    assert table["ref_len_2"] == 3 and table["edits"] == d["edits"] and table["ref_length"] == 2 + 1.5
    assert value(pickle.loads(pickle.dumps(ours.table_columns()))[7][2]) == d["shifts"]
    assert pickle.loads(pickle.dumps(ours)) == ours


def test_arrow_inputs():
    cand = pa.chunked_array([["a b", None], ["c d e"]], type=pa.string())
    refs = pa.array([["x"], ["a b", None], ["d c e", "c d"]], type=pa.list_(pa.string()))
    sliced_c, sliced_r = cand.combine_chunks().slice(2), refs.slice(2)
    assert Ter().batch_stats(sliced_c, sliced_r).tolist() == Ter().scalar_stats(["c d e"], [["d c e", "c d"]]).tolist()
    view = pa.array(["c d e"], type=pa.string_view())
    assert Ter().batch_stats(view, sliced_r).tolist() == Ter().batch_stats(sliced_c, sliced_r).tolist()


# ----------------------------------------------------------------------------- validation and bad rows


@pytest.mark.parametrize("kwargs,error", [
    (dict(normalized=1), TypeError), (dict(no_punct="yes"), TypeError), (dict(asian_support=None), TypeError),
    (dict(case_sensitive=np.bool_(True)), TypeError),
])
def test_option_validation(kwargs, error):
    with pytest.raises(error, match="must be a bool"):
        Ter(**kwargs)


def test_bad_rows():
    ours = Ter()
    with pytest.raises(BatchInputError, match="row 1, candidate: candidate is null"):
        ours.batch_stats(["a", None], [["a"], ["b"]])
    with pytest.raises(BatchInputError, match=r"row 1, references: no reference \(all references are missing\)"):
        ours.batch_stats(["a", "b"], [["a"], [None, None]])
    with pytest.raises(BatchInputError, match=r"row 0, references\[65\]: more than 64 references \(TER's statistics "
                                              r"hold at most 64 per pair\)"):
        ours.batch_stats(["a"], [["a", None] + ["a"] * 64])
    assert ours.batch_stats(["a"], [["a"] * 64 + [None]])[0, 5 + 63] == 64
    bad = pa.array([b"ok", b"\xff"], type=pa.binary()).cast(pa.string(), safe=False)
    with pytest.raises(BatchInputError, match="row 1, candidate: invalid UTF-8"):
        ours.batch_stats(bad, pa.array([["a"], ["b"]]))
    refs = pa.ListArray.from_arrays(pa.array([0, 1, 3], pa.int32()), pa.array([b"a", b"b", b"\xc3("]).cast(
        pa.string(), safe=False))
    for metric in (ours, Ter(normalized=True)):
        with pytest.raises(BatchInputError, match=r"row 1, references\[1\]: invalid UTF-8"):
            metric.batch_stats(["a", "b"], refs)
    with pytest.raises(ValueError, match=r"references\[1\]: no reference"):
        ours.corpus_score(["a", "b"], [["a"], [None]])
    with pytest.raises(ValueError, match=r"references\[0\]: more than 64 references"):
        ours.scalar_stats(["a"], [["a"] * 65])
    with pytest.raises(ZeroDivisionError):  # (what sacrebleu does with such a row)
        TER().corpus_score(["a", "b"], [["a", None]])


def test_lone_surrogates_take_the_scalar_path():
    hyps, refs = ["a \ud800 b", "c"], [["a b \ud800"], ["c"]]
    assert Ter().corpus_score(hyps, refs).score == TER().corpus_score(hyps, to_streams(refs)).score


def test_check_stats():
    ours = Ter()
    good = [3, 1, 1, 0, 1, 5] + [0] * 63
    assert ours.check_stats(good).tolist() == good
    with pytest.raises(ValueError, match="is not insertions"):
        ours.check_stats([3, 1, 1, 0, 0, 5] + [0] * 63)
    with pytest.raises(ValueError, match="69 values"):
        ours.check_stats(good[:-1])
    with pytest.raises(ValueError, match="between 0 and 2"):
        ours.check_stats([0, 0, 0, 0, 0, -1] + [0] * 63)
    with pytest.raises(TypeError, match="integers"):
        ours.check_stats([1.0] + good[1:])


def test_threads_share_nothing():
    from concurrent.futures import ThreadPoolExecutor

    rng = random.Random(9)
    pairs = [reordered(rng, 30, 8, 3) for _ in range(200)]
    hyps, refs = [h for h, _ in pairs], [[r] for _, r in pairs]
    want = Ter().batch_stats(hyps, refs)
    with ThreadPoolExecutor(4) as pool:
        for got in pool.map(lambda _: Ter().batch_stats(hyps, refs), range(8)):
            assert (got == want).all()


def test_the_json_says_how_the_reference_lengths_were_summed():
    # three references each: 2 + 3 + 4 = 9 words (average 3) and 1 + 1 + 3 = 5 words (average 5/3)
    ours = Ter()
    hyps, refs = ["a b c", "d e"], [["a b", "a b c", "a b c d"], ["d", "e", "d e f"]]
    rows = ours.batch_stats(hyps, refs)
    from_totals = ours.score(rows.sum(axis=0)).to_dict()  # what beambleu run does, for any sharding
    in_order = ours.corpus_score(hyps, refs).to_dict()  # what beambleu score and the compat API do
    assert from_totals["ref_length_sum"] == "exact" and in_order["ref_length_sum"] == "corpus order"
    assert from_totals["ref_lengths"] == [0, 0, 14] + [0] * 61
    assert from_totals["ref_length"] == float(Fraction(14, 3))  # 9/3 + 5/3, correctly rounded
    assert in_order["ref_length"] == 3.0 + 5 / 3  # sacrebleu's float additions, in order

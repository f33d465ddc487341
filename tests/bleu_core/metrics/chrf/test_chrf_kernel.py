"""The compiled chrF/chrF++ kernel (bleu_core.metrics.chrf._chrf via chrf_batch_stats) == sacrebleu 2.6.0's CHRF statistics.

Every expected value is sacrebleu's own per-segment statistics, computed here with
``CHRF(...)._extract_corpus_statistics``; a few hand counts pin down the rules the comparisons rely on.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sacrebleu.metrics import CHRF

from bleu_core.metrics.chrf import _chrf
from bleu_core.errors import BatchInputError
from bleu_core.metrics.chrf.kernel import chrf_batch_stats

from ....oracle import read_lines, to_streams


def sacre_stats(cands, refs, **opts) -> np.ndarray:
    """sacrebleu's per-segment chrF statistics; refs is one list per candidate (None = missing)."""
    width = 3 * (opts.get("char_order", 6) + opts.get("word_order", 0))
    seg = CHRF(**opts)._extract_corpus_statistics(cands, to_streams(refs))
    return np.array(seg, dtype=np.int64).reshape(len(cands), width)


def check(cands, refs, **opts):
    """Kernel rows and column sums equal sacrebleu's, on lists and on Arrow arrays."""
    expected = sacre_stats(cands, refs, **opts)
    got = chrf_batch_stats(cands, refs, **opts)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, expected)
    arrow = chrf_batch_stats(pa.array(cands, pa.string()), pa.array(refs, pa.list_(pa.string())), **opts)
    np.testing.assert_array_equal(arrow, expected)
    np.testing.assert_array_equal(chrf_batch_stats(cands, refs, per_row=False, **opts), expected.sum(axis=0))


# ----------------------------------------------------------------------------- edge cases

EDGE_PAIRS = [
    ("", [""]),
    ("", ["a"]),
    ("a", [""]),
    ("   ", ["  \t "]),
    ("\t\n", ["x"]),
    ("!!! ... ,", [". , !!!"]),
    ("a b c", ["c b a"]),
    ("(hi)", ["(hi", "hi)", "( hi )"]),
    ("'quoted' end.", ["quoted end .", "'quoted end."]),
    ("x. .x -y- ..", ["x . . x - y- .."]),
    ("aaaaaaaaaa", ["aaaa", "aaaaaaaaaaaaaaa"]),
    ("ab ab ab ab", ["abab abab", "ba ba"]),
    ("Café crème brûlée", ["cafe creme brulee", "Café crème"]),
    ("e\u0301 \u0301e é", ["é e\u0301"]),
    ("東京は晴れ。東京", ["東京は雨。", "東京 は 晴れ"]),
    ("😀😀 \U0001D7D9\U0001F600 😀", ["😀 😀😀", "\U0001D7D9"]),
    ("İstanbul ẞtraße ΟΔΟΣ Σ", ["istanbul strasse οδος σ", "i̇stanbul ßtraße οδοσ"]),
    ("a\u3000b\u00a0c\u0085d\u2028e\u2029f", ["a b c d e f", "abcdef"]),
    ("a\x1cb\x1dc\x1ed\x1ff\x0bg\x0ch", ["a b c d f g h"]),
    ("zero\u200bwidth \ufeffbom \u180emvs", ["zero width bom mvs", "zero\u200bwidth"]),
    ("a-b a - b", ["a-b", None, "a - b"]),
    ("The cat sat on the mat.", [None, "The cat is on the mat.", None, "A cat sat on a mat"]),
]

EDGE_OPTIONS = [
    {},
    {"word_order": 2},
    {"lowercase": True},
    {"lowercase": True, "word_order": 2},
    {"whitespace": True},
    {"whitespace": True, "word_order": 2, "lowercase": True},
    {"char_order": 1, "word_order": 1},
    {"char_order": 0, "word_order": 3},
    {"char_order": 9, "word_order": 4},
    {"eps_smoothing": True, "beta": 1, "word_order": 2},
]


@pytest.mark.parametrize("opts", EDGE_OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default")
def test_edge_cases(opts):
    cands = [c for c, _ in EDGE_PAIRS]
    refs = [r for _, r in EDGE_PAIRS]
    check(cands, refs, **opts)


def test_hand_counts():
    """Counts worked out by hand for the punctuation rule, the whitespace rules and empty orders."""
    got = chrf_batch_stats(["(hi)"], [["(hi )"]], char_order=2, word_order=1)
    # chars: both are '(hi)' once the space is removed: 1-grams 4/4/4, 2-grams 3/3/3.
    # words: '(hi)' -> ['(hi', ')'] (the last-character rule comes first); '(hi' of the reference ends in a
    # letter, so it loses its '(' -> ['(', 'hi', ')']: 2 hypothesis words, 3 reference words, 1 match (')')
    np.testing.assert_array_equal(got, [[4, 4, 4, 3, 3, 3, 2, 3, 1]])
    # no reference n-gram of an order: that order's hypothesis count is 0
    got = chrf_batch_stats(["abc"], [["a"]], char_order=2)
    np.testing.assert_array_equal(got, [[3, 1, 1, 0, 0, 0]])
    # U+00A0 and U+3000 split words (str.split), U+200B does not
    got = chrf_batch_stats(["a\u00a0b\u3000c\u200bd"], [["a b c\u200bd"]], char_order=1, word_order=1)
    np.testing.assert_array_equal(got, [[5, 5, 5, 3, 3, 3]])


def test_high_orders_with_repeats():
    """Orders past the packed range (> 3 characters) and long word n-grams, on text full of repeats."""
    cands = ["ab" * 20, "abc abc abc abc abc abc abc", "a a a a a a a a b", "xyxyxyxyxyxyx yx", "ab" * 20]
    refs = [["ab" * 11 + "ba" * 3], ["abc abc abc abc abd abc"], ["a a a a b a a"], ["yxyxyx xyxy", "xy" * 9],
            ["b" + "ab" * 25]]
    for char_order, word_order in [(7, 0), (10, 5), (16, 8), (45, 2), (0, 10)]:
        check(cands, refs, char_order=char_order, word_order=word_order)


# ----------------------------------------------------------------------------- options

CORPUS = (
    ["The quick brown fox, (hi) jumps!", "", "Ünïcödé ÀÉÎ straße", "a b a b a", "  tabs\tand\nlines  ",
     "ΟΔΟΣ Σ."],
    [["the quick brown fox (hi) jumps !", "A quick fox."], [""], [None, "unicode aei strasse", "Ünïcödé"],
     ["b a b a b", "a b"], ["tabs and lines"], ["οδος σ.", None]],
)


@pytest.mark.parametrize("char_order, word_order", [(c, w) for c in range(8) for w in range(4) if c + w])
def test_options_grid(char_order, word_order):
    cands, refs = CORPUS
    for beta in (0, 1, 2, 3):
        for lowercase in (False, True):
            for whitespace in (False, True):
                for eps_smoothing in (False, True):
                    check(cands, refs, char_order=char_order, word_order=word_order, beta=beta,
                          lowercase=lowercase, whitespace=whitespace, eps_smoothing=eps_smoothing)


def test_best_reference_ties_keep_the_first():
    """beta=0 scores precision only: refs of different lengths can tie, and the first one is kept."""
    short, long_ = "ab", "abxyz"
    a = chrf_batch_stats(["ab"], [[short, long_]], char_order=2, beta=0)
    b = chrf_batch_stats(["ab"], [[long_, short]], char_order=2, beta=0)
    np.testing.assert_array_equal(a, [[2, 2, 2, 1, 1, 1]])
    np.testing.assert_array_equal(b, [[2, 5, 2, 1, 4, 1]])
    for refs in ([short, long_], [long_, short], [None, long_, None, short], [short, short, long_]):
        check(["ab"], [refs], char_order=2, beta=0)
        check(["ab"], [refs], char_order=2, beta=0, eps_smoothing=True)
    # a strictly better later reference wins
    check(["the cat sat"], [["a dog ran", "the cat sat", "the cat"]], word_order=2)


count = st.one_of(st.integers(0, 12), st.integers(0, 10**9))


@settings(max_examples=300, deadline=None)
@given(beta=st.one_of(st.integers(0, 4), st.integers(0, 10**6)), eps_smoothing=st.booleans(),
       triples=st.lists(st.tuples(count, count, count), min_size=1, max_size=10))
def test_f_score_is_sacrebleus_bit_for_bit(beta, eps_smoothing, triples):
    """The score that ranks references: the kernel's doubles are sacrebleu's, bit for bit."""
    stats = [v for hyp, ref, match in triples for v in (hyp, ref, min(match, hyp, ref))]
    metric = CHRF(char_order=len(triples), beta=beta, eps_smoothing=eps_smoothing)
    expected = metric._compute_f_score(stats)
    got = _chrf.f_score(stats, float(beta**2), float(1 + beta**2), eps_smoothing)
    assert got.hex() == expected.hex()


# ----------------------------------------------------------------------------- Arrow inputs

def test_arrow_types_and_slices():
    cands, refs = CORPUS
    expected = sacre_stats(cands, refs, word_order=2)
    for ctype in (pa.string(), pa.large_string()):
        for ltype in (pa.list_(pa.string()), pa.large_list(pa.large_string()), pa.list_(pa.large_string())):
            c, r = pa.array(cands, ctype), pa.array(refs, ltype)
            np.testing.assert_array_equal(chrf_batch_stats(c, r, word_order=2), expected)
            # non-zero offsets: slices of longer arrays
            c2, r2 = pa.array(["pad", "pad"] + cands, ctype), pa.array([["x"], ["y"]] + refs, ltype)
            np.testing.assert_array_equal(chrf_batch_stats(c2[2:], r2[2:], word_order=2), expected)
            np.testing.assert_array_equal(chrf_batch_stats(c2[3:5], r2[3:5], word_order=2), expected[1:3])
    chunked_c = pa.chunked_array([pa.array(cands[:2]), pa.array(cands[2:])])
    chunked_r = pa.chunked_array([pa.array(refs[:3]), pa.array(refs[3:])])
    np.testing.assert_array_equal(chrf_batch_stats(chunked_c, chunked_r, word_order=2), expected)
    assert chrf_batch_stats([], [], word_order=2).shape == (0, 24)
    np.testing.assert_array_equal(chrf_batch_stats([], [], per_row=False), np.zeros(18, np.int64))


# ----------------------------------------------------------------------------- errors

def test_error_rows_name_the_row():
    with pytest.raises(BatchInputError, match="row 1, candidate: candidate is null"):
        chrf_batch_stats(pa.array(["a", None, "c"]), [["a"], ["b"], ["c"]])
    with pytest.raises(BatchInputError, match=r"row 2, references: no reference \(all references are missing\)"):
        chrf_batch_stats(["a", "b", "c"], [["a"], ["b", None], [None, None]])
    with pytest.raises(BatchInputError, match=r"row 1, references: no reference \(all references are missing\)"):
        chrf_batch_stats(["a", "b"], [["a"], []])
    with pytest.raises(BatchInputError, match="row 1, references: the reference list is null"):
        chrf_batch_stats(["a", "b"], pa.array([["a"], None], pa.list_(pa.string())))
    bad = pa.array([b"ok", b"ok", b"a\xffb"], pa.binary()).cast(pa.string(), safe=False)
    with pytest.raises(BatchInputError, match="row 2, candidate: invalid UTF-8") as err:
        chrf_batch_stats(bad, [["a"], ["b"], ["c"]], word_order=2)
    assert (err.value.row, err.value.column, err.value.ref_index) == (2, "candidate", None)
    refs = pa.ListArray.from_arrays(pa.array([0, 1, 3, 4], pa.int32()),
                                    pa.array([b"a", b"b", b"\xc3(", b"d"], pa.binary()).cast(pa.string(), safe=False))
    with pytest.raises(BatchInputError, match=r"row 1, references\[1\]: invalid UTF-8") as err:
        chrf_batch_stats(["a", "b", "c"], refs, lowercase=True)
    assert (err.value.row, err.value.column, err.value.ref_index) == (1, "references", 1)
    with pytest.raises(TypeError, match="candidates must be strings"):
        chrf_batch_stats(pa.array([1, 2]), [["a"], ["b"]])
    with pytest.raises(ValueError, match="2 candidates but 1 reference lists"):
        chrf_batch_stats(["a", "b"], [["a"]])


@pytest.mark.parametrize("kwargs, error, message", [
    ({"char_order": -1}, ValueError, "char_order must be >= 0"),
    ({"word_order": -2}, ValueError, "word_order must be >= 0"),
    ({"beta": -1}, ValueError, "beta must be >= 0"),
    ({"char_order": 0, "word_order": 0}, ValueError, r"char_order \+ word_order must be >= 1"),
    ({"char_order": 6.0}, TypeError, "char_order must be an int, got float"),
    ({"word_order": "2"}, TypeError, "word_order must be an int, got str"),
    ({"beta": True}, TypeError, "beta must be an int, not bool"),
    ({"beta": 2.5}, TypeError, "beta must be an int, got float"),
    ({"beta": 10**200}, ValueError, "beta is too large"),
])
def test_option_validation(kwargs, error, message):
    with pytest.raises(error, match=message):
        chrf_batch_stats(["a"], [["a"]], **kwargs)


def test_numpy_integer_options():
    check(["a b c"], [["a b d"]], char_order=np.int64(3), word_order=np.int32(2), beta=np.uint8(1))


def test_column_sums_overflow_is_an_error():
    """per_row=False adds into `out` with checked additions: a sum past int64 raises, it never wraps."""
    data = np.frombuffer(b"aa", np.uint8)
    offsets = np.array([0, 2], np.int64)
    list_offsets = np.array([0, 1], np.int64)
    out = np.zeros(3, np.int64)
    _chrf.stats(data, offsets, None, data, offsets, None, list_offsets, 1, 0, 4.0, 5.0, False, False, False, out, False)
    np.testing.assert_array_equal(out, [2, 2, 2])
    out[:] = [2**63 - 2, 0, 0]
    with pytest.raises(OverflowError, match="row 0 .* exceeds int64"):
        _chrf.stats(data, offsets, None, data, offsets, None, list_offsets, 1, 0, 4.0, 5.0, False, False, False, out,
                    False)


def test_malformed_offsets_are_refused_before_reading():
    """The raw kernel checks offsets against the data before it reads a row (Arrow never makes these)."""
    data = np.frombuffer(b"abcdefghij", np.uint8)
    good = np.array([0, 3, 5], np.int64)
    lists = np.array([0, 1, 2], np.int64)

    def run(hyp_offsets, ref_offsets):
        out = np.zeros(2 * 18, np.int64)
        _chrf.stats(data, np.array(hyp_offsets, np.int64), None, data, np.array(ref_offsets, np.int64), None, lists,
                    6, 0, 4.0, 5.0, False, False, False, out, True)
        return out

    assert run(good, good)[:3].tolist() == [3, 3, 3]
    with pytest.raises(ValueError, match="offsets are not monotonic"):
        run([0, 100, 5], good)  # row 0 would end past the data
    with pytest.raises(ValueError, match="offsets are not monotonic"):
        run(good, [0, -5, 3])  # reference 1 would start before it
    with pytest.raises(ValueError, match="offsets point outside their data"):
        run([0, 3, 11], good)


def test_threads_share_nothing():
    """The kernel runs without the GIL (taking it back only for str.lower): concurrent calls agree."""
    from concurrent.futures import ThreadPoolExecutor

    cands = [c for c, _ in EDGE_PAIRS] * 50
    refs = [r for _, r in EDGE_PAIRS] * 50
    opts = {"word_order": 2, "lowercase": True}
    expected = chrf_batch_stats(cands, refs, **opts)
    with ThreadPoolExecutor(4) as pool:
        for got in pool.map(lambda _: chrf_batch_stats(cands, refs, **opts), range(8)):
            np.testing.assert_array_equal(got, expected)


# ----------------------------------------------------------------------------- properties

SPECIAL = list(" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000"
               "\u200b\ufeff\u180e"
               "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
               "aAbB0İIıẞßΣσςÉé\u0301\u0345東京。😀\U0001D7D9\U00010400ǅ")
alphabet = st.one_of(st.sampled_from(SPECIAL), st.sampled_from("ab ab."), st.characters(codec="utf-8"))
text = st.text(alphabet, max_size=40)


@st.composite
def chrf_case(draw):
    n = draw(st.integers(1, 5))
    cands, refs = [], []
    for _ in range(n):
        cands.append(draw(text))
        row = draw(st.lists(st.one_of(st.none(), text), min_size=1, max_size=4))
        if all(r is None for r in row):
            row[draw(st.integers(0, len(row) - 1))] = draw(text)
        refs.append(row)
    char_order = draw(st.integers(0, 9))
    word_order = draw(st.integers(1 if char_order == 0 else 0, 4))
    opts = {"char_order": char_order, "word_order": word_order, "beta": draw(st.integers(0, 4)),
            "lowercase": draw(st.booleans()), "whitespace": draw(st.booleans()),
            "eps_smoothing": draw(st.booleans())}
    return cands, refs, opts


def _property(case):
    cands, refs, opts = case
    check(cands, refs, **opts)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=chrf_case())
def test_matches_sacrebleu_on_arbitrary_text(case):
    _property(case)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=chrf_case())
def test_matches_sacrebleu_on_arbitrary_text_long(case):
    _property(case)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=chrf_case(), others=st.lists(st.lists(text, min_size=5, max_size=5), min_size=1, max_size=3))
def test_several_systems_at_once_match_sacrebleu(case, others):
    """chrf_batch_stats_many (a row's references prepared once for all systems): each system's
    rows and sums are sacrebleu's for that system alone."""
    from bleu_core.metrics.chrf.kernel import chrf_batch_stats_many

    cands, refs, opts = case
    systems = [cands] + [other[:len(cands)] for other in others]
    rows = chrf_batch_stats_many(systems, refs, **opts)
    sums = chrf_batch_stats_many(systems, refs, per_row=False, **opts)
    assert len(rows) == len(sums) == len(systems)
    for system, got, total in zip(systems, rows, sums):
        expected = sacre_stats(system, refs, **opts)
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(total, expected.sum(axis=0))


def test_several_systems_fail_as_one_by_one():
    """The error of a bad row is the one the systems taken one by one meet first: system 0's
    null at row 1, not system 1's at row 0 (which the rows taken in order meet first)."""
    from bleu_core.metrics.chrf.kernel import chrf_batch_stats_many

    refs = [["a b"], ["c d"]]
    with pytest.raises(BatchInputError, match="row 1, candidate: candidate is null"):
        chrf_batch_stats_many([["a", None], [None, "c"]], refs)
    with pytest.raises(BatchInputError, match="row 0, candidate: candidate is null"):
        chrf_batch_stats_many([["a", "b"], [None, "c"]], refs)


# ----------------------------------------------------------------------------- real data

@pytest.mark.corpora
@pytest.mark.parametrize("folder, system, letters, word_order", [
    ("wmt21/en-de", "HuaweiTSC", "ACD", 2),  # chrF++ with three references
    ("wmt22/en-zh", "Online-B", "AB", 0),  # chrF on Chinese with two
])
def test_real_system_output_all_references(corpora, folder, system, letters, word_order):
    path = corpora / folder / f"sys.{system}.txt"
    if not path.exists():
        pytest.skip(f"{folder}/sys.{system}.txt not in this copy of the corpora")
    cands = read_lines(path)
    streams = [read_lines(corpora / folder / f"ref.{x}.txt") for x in letters]
    refs = [list(r) for r in zip(*streams)]
    metric = CHRF(word_order=word_order)
    expected = np.array(metric._extract_corpus_statistics(cands, streams), dtype=np.int64)
    got = chrf_batch_stats(pa.array(cands), pa.array(refs), word_order=word_order)
    np.testing.assert_array_equal(got, expected)
    summed = chrf_batch_stats(pa.array(cands), pa.array(refs), word_order=word_order, per_row=False)
    np.testing.assert_array_equal(summed, expected.sum(axis=0))

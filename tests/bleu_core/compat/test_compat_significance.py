"""bleu_core.compat's PairedTest and bootstrap intervals: by default (sacrebleu's draws) the
same results as sacrebleu 2.6.0's objects, value for value and type for type, on WMT17 en-de
and on the bundled sample; with ``compat.RESAMPLING = "counter"`` (beambleu's own draws) the facts of
sacrebleu 2.6.0's test_significance.py (WMT17 en-de, baseline LIUM-NMT, BLEU with
tokenize='none'; p-values from Moses and multeval); the result structure and signatures of
sacrebleu's PairedTest, and agreement with ``beambleu score --paired-bs`` in both modes.

The counter draws are not sacrebleu's (counter-based Poisson weights and coin flips instead of
numpy's resamples), so their p-value is compared with the published one within Monte Carlo noise: an
estimate of p from n independent draws has standard error sqrt(p (1 - p) / n); the published
values are themselves estimates (Moses: mean of 3 runs of 2000 resamples, multeval: 10000
trials), so the difference of the two has standard error sqrt(p (1 - p) (1/n + 1/n_ref)). The
tolerance is 4 such standard errors (a false failure about once in 16000 comparisons), plus
sacrebleu's own 0.01 for what Monte Carlo does not cover (the Poisson against the multinomial
bootstrap, Moses' and multeval's own details).
"""

import contextlib
import json
import math
import subprocess
import sys

import pytest

from bleu_core import compat

from ...oracle import CORPORA, REPO, read_lines, seed_env

sacrebleu = pytest.importorskip("sacrebleu")
from sacrebleu.significance import PairedTest as SacrePairedTest  # noqa: E402

WMT17 = CORPORA / "wmt17" / "en-de"
BASELINE = "LIUM-NMT.4900"

# Moses' bootstrap-hypothesis-difference-significance.pl, 2000 resamples, mean of 3 runs; and
# multeval's approximate randomization, 10000 trials (BLEU); for the systems of the shared copy
MOSES_P = {"C-3MA.4959": 0.00000, "online-A.0": 0.00000, "online-B.0": 0.38100, "online-F.0": 0.00000,
           "PROMT-Rule-based.4735": 0.00000, "SYSTRAN.4847": 0.20983, "uedin-nmt.4722": 0.00000}
MULTEVAL_P = {"C-3MA.4959": 0.0001, "online-A.0": 0.0001, "online-B.0": 0.94111, "online-F.0": 0.0001,
              "PROMT-Rule-based.4735": 0.0001, "SYSTRAN.4847": 0.59914, "uedin-nmt.4722": 0.0001}
N_BS, N_MOSES = 2000, 3 * 2000
N_AR, N_MULTEVAL = 10000, 10000


def tolerance(p: float, n: int, n_ref: int) -> float:
    """4 standard errors of the difference of two Monte Carlo estimates of p, plus 0.01."""
    return 4 * math.sqrt(p * (1 - p) * (1 / n + 1 / n_ref)) + 0.01


def lines(path):
    """The segments of a file made from sacrebleu's pickle: one per line, text unchanged."""
    return path.read_text(encoding="utf-8").split("\n")[:-1]


@pytest.fixture(scope="module")
def wmt17():
    if not (WMT17 / "ref.A.txt").exists():
        pytest.skip(f"WMT17 en-de not found in {CORPORA}")
    names = [BASELINE] + sorted(MOSES_P)
    systems = [(f"newstest2017.{n}.en-de", lines(WMT17 / f"sys.{n}.txt")) for n in names]
    return systems, [lines(WMT17 / "ref.A.txt")]


@contextlib.contextmanager
def draws(method):
    """``compat.RESAMPLING = method`` for the block."""
    old, compat.RESAMPLING = compat.RESAMPLING, method
    try:
        yield
    finally:
        compat.RESAMPLING = old


@pytest.fixture(scope="module")
def bs_run(wmt17):
    systems, refs = wmt17
    with seed_env(12345), draws("counter"):
        metrics = {"BLEU": compat.BLEU(references=refs, tokenize="none")}
        return compat.PairedTest(systems, metrics, references=None, test_type="bs", n_samples=N_BS)()


@pytest.fixture(scope="module")
def ar_run(wmt17):
    systems, refs = wmt17
    with seed_env(12345), draws("counter"):
        metrics = {"BLEU": compat.BLEU(references=refs, tokenize="none")}
        return compat.PairedTest(systems, metrics, references=None, test_type="ar", n_samples=N_AR)()


def p_values(run):
    _, scores = run
    return {name.split(".", 1)[1].rsplit(".", 1)[0]: r.p_value for name, r in zip(scores["System"], scores["BLEU"])}


@pytest.mark.parametrize("name, expected", sorted(MOSES_P.items()))
def test_paired_bootstrap_p_value_matches_moses(bs_run, name, expected):
    assert abs(p_values(bs_run)[name] - expected) <= tolerance(expected, N_BS, N_MOSES)


@pytest.mark.parametrize("name, expected", sorted(MULTEVAL_P.items()))
def test_approximate_randomization_p_value_matches_multeval(ar_run, name, expected):
    assert abs(p_values(ar_run)[name] - expected) <= tolerance(expected, N_AR, N_MULTEVAL)


def test_tolerance_rejects_a_wrong_p_value(bs_run, ar_run):
    """The tolerances are not vacuous: for the two close systems, the p-value of another of
    them, or one off by 0.1, is rejected."""
    for run, expected, n, n_ref in ((bs_run, MOSES_P, N_BS, N_MOSES), (ar_run, MULTEVAL_P, N_AR, N_MULTEVAL)):
        ours = p_values(run)
        for name, other in (("SYSTRAN.4847", "online-B.0"), ("online-B.0", "SYSTRAN.4847")):
            tol = tolerance(expected[name], n, n_ref)
            assert abs(ours[other] - expected[name]) > tol
            assert abs(ours[name] + 0.1 - expected[name]) > tol


def test_results_scores_and_signatures(wmt17, bs_run, ar_run):
    systems, refs = wmt17
    sacre_bleu = sacrebleu.BLEU(tokenize="none")
    for (sigs, scores), kind, n in ((bs_run, "bs", N_BS), (ar_run, "ar", N_AR)):
        assert list(scores) == ["System", "BLEU"] and list(sigs) == ["BLEU"]
        assert scores["System"] == [name for name, _ in systems]
        assert sigs["BLEU"].format() == \
            f"nrefs:1|{kind}:{n}|seed:12345|case:mixed|eff:no|tok:none|smooth:exp|version:beambleu-0.1.0"
        results = scores["BLEU"]
        assert all(isinstance(r, compat.Result) for r in results)
        assert results[0].p_value is None and all(0 < r.p_value <= 1 for r in results[1:])
        for (name, hyps), r in zip(systems, results):
            if name.split(".")[1] in (BASELINE.split(".")[0], "SYSTRAN", "online-B"):  # sacrebleu is slow: 3 of 8
                assert r.score == sacre_bleu.corpus_score(hyps, refs).score  # point scores are exact
            if kind == "bs":
                assert abs(r.mean - r.score) < r.ci  # the interval is around the score
            else:
                assert r.mean is None and r.ci is None


# ------------------------------------------------------------------ against sacrebleu's PairedTest on small data

SAMPLE = REPO / "examples" / "sample"


def sample():
    refs = [read_lines(SAMPLE / f"ref.{k}.txt") for k in "AB"]
    alpha, beta = read_lines(SAMPLE / "sys.alpha.txt"), read_lines(SAMPLE / "sys.beta.txt")
    return [("alpha", alpha), ("beta", beta), ("alpha-again", list(alpha))], refs


def unversioned(signature) -> str:
    return signature.format().rsplit("|version:", 1)[0]


@pytest.mark.parametrize("test_type, n_samples, n_ar_confidence", [
    ("bs", 50, -1), ("ar", 60, -1), ("ar", 40, 30), ("ar", 40, 0), ("bs", 50, 0),
])
def test_same_structure_and_signatures_as_sacrebleu(test_type, n_samples, n_ar_confidence):
    systems, refs = sample()

    def run(module, paired_test):
        metrics = {"BLEU": module.BLEU(), "chrF": module.CHRF(word_order=2)}
        with seed_env(7):
            return paired_test(systems, metrics, refs, test_type=test_type, n_samples=n_samples,
                               n_ar_confidence=n_ar_confidence)()

    (our_sigs, ours), (their_sigs, theirs) = run(compat, compat.PairedTest), run(sacrebleu, SacrePairedTest)
    assert list(our_sigs) == list(their_sigs) == ["BLEU", "chrF2++"]
    assert {k: unversioned(s) for k, s in our_sigs.items()} == {k: unversioned(s) for k, s in their_sigs.items()}
    assert list(ours) == list(theirs) and ours["System"] == theirs["System"]
    for metric in ("BLEU", "chrF2++"):
        for a, b in zip(ours[metric], theirs[metric]):
            assert_same_result(a, b)


def assert_same_result(ours, theirs):
    """The same score, p-value, mean and half-width, of the same types (sacrebleu's chrF and TER
    replicates are numpy float32), and the same repr."""
    for field in ("score", "p_value", "mean", "ci"):
        a, b = getattr(ours, field), getattr(theirs, field)
        assert a == b and type(a) is type(b), (field, a, b)
    assert repr(ours) == repr(theirs)


def test_a_copy_of_the_baseline_is_significant_as_in_sacrebleu():
    """An identical system: every resampled difference is 0 and so is the observed one; sacrebleu's
    strict count gives p = 1 / (n + 1), 'significant', and so do sacrebleu's draws here."""
    systems, refs = sample()
    for test_type in ("bs", "ar"):
        runs = [paired_test(systems, {"BLEU": module.BLEU()}, refs, test_type=test_type, n_samples=200)()[1]
                for module, paired_test in ((compat, compat.PairedTest), (sacrebleu, SacrePairedTest))]
        assert runs[0]["BLEU"][2].p_value == 1 / 201
        for a, b in zip(runs[0]["BLEU"], runs[1]["BLEU"]):
            assert_same_result(a, b)


def test_a_copy_of_the_baseline_is_not_significant_with_counter_draws():
    """The counter draws count ties as at least as extreme (p = 1 for a copy of the baseline)."""
    systems, refs = sample()
    for test_type in ("bs", "ar"):
        with draws("counter"):
            _, scores = compat.PairedTest(systems, {"BLEU": compat.BLEU()}, refs, test_type=test_type, n_samples=200)()
        assert scores["BLEU"][2].p_value == 1.0
        assert scores["BLEU"][1].p_value == 1 / 201  # 58 BLEU apart: never reached by chance


# ------------------------------------------------------------------ sacrebleu's draws on WMT17, against sacrebleu

CLOSE = ("SYSTRAN.4847", "online-B.0")  # the two systems whose p-values are far from 0 (Moses, multeval)


@pytest.fixture(scope="module")
def wmt17_close(wmt17):
    """The baseline, the two systems close to it, and a copy of the baseline; the first 300 segments."""
    systems, refs = wmt17
    keep = [s for s in systems if s[0].split(".", 1)[1].rsplit(".", 1)[0] in (BASELINE,) + CLOSE]
    keep.append(("copy-of-baseline", list(keep[0][1])))
    return [(name, hyps[:300]) for name, hyps in keep], [r[:300] for r in refs]


@pytest.mark.corpora
@pytest.mark.parametrize("test_type, n_samples, n_ar_confidence, seed", [
    ("bs", 1000, -1, 12345), ("ar", 10000, -1, 12345), ("ar", 2000, 200, 7), ("bs", 300, -1, "0042"),
])
def test_paired_test_equals_sacrebleu_on_wmt17(wmt17_close, test_type, n_samples, n_ar_confidence, seed):
    """Every Result of sacrebleu's draws equals sacrebleu's: BLEU, chrF++ and TER (5 to 10 s each)."""
    systems, refs = wmt17_close

    def run(module, paired_test):
        metrics = {"BLEU": module.BLEU(references=refs), "chrF": module.CHRF(word_order=2, references=refs),
                   "TER": module.TER(references=refs)}
        with seed_env(seed):
            return paired_test(systems, metrics, None, test_type=test_type, n_samples=n_samples,
                               n_ar_confidence=n_ar_confidence)()

    (our_sigs, ours), (their_sigs, theirs) = run(compat, compat.PairedTest), run(sacrebleu, SacrePairedTest)
    assert {k: unversioned(s) for k, s in our_sigs.items()} == {k: unversioned(s) for k, s in their_sigs.items()}
    assert list(ours) == list(theirs) == ["System", "BLEU", "chrF2++", "TER"]
    for metric in ("BLEU", "chrF2++", "TER"):
        assert len(ours[metric]) == len(theirs[metric]) == 4
        for a, b in zip(ours[metric], theirs[metric]):
            assert_same_result(a, b)
        assert ours[metric][3].p_value == 1 / (n_samples + 1)  # the copy of the baseline, strict count


@pytest.mark.corpora
@pytest.mark.parametrize("seed", [12345, "0042", 0])
def test_corpus_score_interval_equals_sacrebleu(wmt17_close, seed):
    """``corpus_score(n_bootstrap=B)``: sacrebleu's ``_mean`` and ``_ci``, value and type, and
    its signature, for BLEU, chrF++ and TER; the counter draws give other numbers."""
    systems, refs = wmt17_close
    hyps = systems[1][1]
    for name, kwargs in (("BLEU", {}), ("CHRF", {"word_order": 2}), ("TER", {})):
        with seed_env(seed):
            ours, theirs = getattr(compat, name)(**kwargs), getattr(sacrebleu, name)(**kwargs)
            a, b = ours.corpus_score(hyps, refs, n_bootstrap=300), theirs.corpus_score(hyps, refs, n_bootstrap=300)
            with draws("counter"):
                counter = getattr(compat, name)(**kwargs).corpus_score(hyps, refs, n_bootstrap=300)
        for field in ("score", "_mean", "_ci"):
            assert getattr(a, field) == getattr(b, field), (name, field)
            assert type(getattr(a, field)) is type(getattr(b, field)), (name, field)
        assert a.format(3) == b.format(3) and unversioned(ours.get_signature()) == unversioned(theirs.get_signature())
        assert (counter._mean, counter._ci) != (a._mean, a._ci)


@pytest.mark.parametrize("resampling", ["sacrebleu", "counter"])
def test_same_numbers_as_beambleu_score_paired_bs(resampling):
    """The same draws as the command line (the counter draws: 1-based line numbers as row keys),
    the same seed."""
    systems, refs = sample()
    with seed_env(12345), draws(resampling):
        _, scores = compat.PairedTest(systems[:2], {"BLEU": compat.BLEU(), "chrF": compat.CHRF()}, refs,
                                      test_type="bs")()
    proc = subprocess.run([sys.executable, "-m", "beambleu.cli", "score", *(str(SAMPLE / f"ref.{k}.txt") for k in "AB"),
                           "-i", str(SAMPLE / "sys.alpha.txt"), str(SAMPLE / "sys.beta.txt"), "--paired-bs",
                           "-m", "bleu", "chrf", "--resampling", resampling], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    for metric in ("BLEU", "chrF2"):
        for row, result in zip(rows, scores[metric]):
            cli = row[metric]  # sacrebleu's field names (mean, ci), or beambleu's longer ones
            mean, ci = cli.get("mean", cli.get("confidence_mean")), cli.get("ci", cli.get("confidence_half_width"))
            assert (result.score, result.p_value, result.mean, result.ci) == (cli["score"], cli["p_value"], mean, ci)


def test_n_jobs_is_accepted_and_changes_nothing():
    systems, refs = sample()
    runs = [compat.PairedTest(systems, {"BLEU": compat.BLEU()}, refs, test_type="bs", n_samples=100, n_jobs=j)()[1]
            for j in (1, 0, 2)]
    first, *others = [[repr(r) for r in run["BLEU"]] for run in runs]
    assert all(other == first for other in others)


def test_seed_none_draws_a_fresh_seed():
    systems, refs = sample()
    with seed_env("None"):
        sigs, scores = compat.PairedTest(systems, {"BLEU": compat.BLEU()}, refs, test_type="ar", n_samples=100)()
    assert "|seed:none|" in sigs["BLEU"].format()
    assert scores["BLEU"][1].p_value == 1 / 101


def test_argument_errors():
    systems, refs = sample()
    with draws("numpy"):
        with pytest.raises(ValueError, match="RESAMPLING = 'numpy': choose one of 'sacrebleu', 'counter'"):
            compat.PairedTest(systems, {"BLEU": compat.BLEU()}, refs)
        with pytest.raises(ValueError, match="RESAMPLING = 'numpy'"):
            compat.BLEU().corpus_score(systems[0][1], refs, n_bootstrap=10)
    with pytest.raises(ValueError, match="Unknown test type 'xx'"):
        compat.PairedTest(systems, {"BLEU": compat.BLEU()}, refs, test_type="xx")
    with pytest.raises(TypeError, match="metrics\\['BLEU'\\] must be a bleu_core.compat BLEU or CHRF"):
        compat.PairedTest(systems, {"BLEU": sacrebleu.BLEU()}, refs)
    with pytest.raises(ValueError, match="3 hypotheses but 2 reference lines"):
        compat.PairedTest([("a", ["x", "y"]), ("b", ["x", "y", "z"])], {"BLEU": compat.BLEU()}, [["x", "y"]])()

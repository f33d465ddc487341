"""Poisson bootstrap: the weights, their exact sums, intervals and paired p-values, in bleu_core,
`beambleu score` and the pipeline; agreement with sacrebleu's --confidence / --paired-bs on
real systems."""

from __future__ import annotations

import json
import math
import statistics
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from bleu_core.resampling import counter as bs

from ...oracle import CORPORA, read_lines, sacrebleu

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "examples" / "sample"
needs_corpora = pytest.mark.skipif(not (CORPORA / "MANIFEST.tsv").exists(), reason="shared corpora not present")


# ---------------------------------------------------------------------------- the weights

def test_poisson_thresholds_are_the_cdf_in_32_bit_fixed_point():
    """T[k] = ceil(2**32 * P(X <= k)), X ~ Poisson(1), for every k whose value is below 2**32:
    checked against a rational e**-1 accurate to 1e-40 (the alternating series), computed here
    independently. A draw x in [0, 2**32) is at or above T[k] exactly when x / 2**32 >= P(X <= k),
    so the count of thresholds at or below it is the Poisson(1) quantile of x / 2**32."""
    e_inv = sum(Fraction((-1) ** j, math.factorial(j)) for j in range(40))
    cdf, expected = Fraction(0), []
    for k in range(30):
        cdf += e_inv / math.factorial(k)
        exact = cdf * 2 ** 32
        if exact > 2 ** 32 - 1:  # ceil would be 2**32: no 32-bit draw reaches it
            break
        expected.append(math.ceil(exact))  # no value is within 1e-30 of an integer: the slack is moot
    assert bs.THRESHOLDS.tolist() == expected
    assert len(expected) == bs.MAX_WEIGHT == 12  # P(X > 12) = 6.3e-11 < 2**-32 = 2.3e-10 < P(X > 11)
    assert expected[0] == 1580030169  # 2**32 / e = 1580030168.7...
    assert bs.SWAP_THRESHOLDS.tolist() == [1 << 31]


def test_weights_have_poisson_1_moments_and_frequencies():
    keys = bs.row_keys_from_ids(list(range(20000)))
    w = bs.weights(keys, 200)
    freq = np.bincount(w.ravel(), minlength=5) / w.size
    for k in range(5):  # P(X = k) = e**-1 / k!; 4M draws: 5 sigma is below 0.0013
        assert abs(freq[k] - math.exp(-1) / math.factorial(k)) < 0.0013
    assert abs(w.mean() - 1) < 0.003 and abs(w.var() - 1) < 0.006
    # replicates and rows are not correlated with each other
    assert abs(np.corrcoef(w[0], w[1])[0, 1]) < 0.03
    assert abs(np.corrcoef(w[:, 0], w[:, 1])[0, 1]) < 0.2


def test_weights_depend_only_on_row_identity_seed_and_replicate():
    ids = [f"doc{i % 50}:{i}" for i in range(3000)]
    keys = bs.row_keys_from_ids(ids)
    w = bs.weights(keys, 64, seed=7)
    perm = np.random.default_rng(1).permutation(len(ids))
    assert (bs.weights(bs.row_keys_from_ids([ids[i] for i in perm]), 64, seed=7) == w[:, perm]).all()
    assert (bs.weights(keys[:1000], 64, seed=7) == w[:, :1000]).all()
    assert not (bs.weights(keys, 64, seed=8) == w).all()
    # integer and string ids are different identities; equal ids are equal
    assert bs.row_keys_from_ids([5])[0] != bs.row_keys_from_ids(["5"])[0]
    assert bs.row_keys_from_ids([5, 5])[0] == bs.row_keys_from_ids([5, 5])[1]
    with pytest.raises(ValueError, match="row 1: the id is null"):
        bs.row_keys_from_ids(["a", None])


def test_kernel_equals_the_numpy_definition_with_groups():
    rng = np.random.default_rng(3)
    n, width, B = 3000, 10, 37
    rows = rng.integers(0, 60, size=(n, width)).astype(np.int64)
    keys = bs.row_keys_from_position("some/file.parquet", 1000, n)
    g1 = rng.integers(0, 4, size=n)
    g2 = rng.integers(0, 3, size=n)
    out = bs.bootstrap_totals(rows, keys, B, 99, [np.zeros(n, np.int64), 1 + g1, 5 + g2], 8)
    w = bs.weights(keys, B, 99)
    assert (out[0] == w @ rows).all()
    for g in range(4):
        assert (out[1 + g] == w[:, g1 == g] @ rows[g1 == g]).all()
    for g in range(3):
        assert (out[5 + g] == w[:, g2 == g] @ rows[g2 == g]).all()
    # sums over chunks are the sum over the whole: the combine is exact
    halves = sum(bs.bootstrap_totals(rows[s], keys[s], B, 99) for s in (slice(0, 1234), slice(1234, n)))
    assert (halves == out[:1]).all()


def test_percentile_interval_is_sacrebleus_estimate():
    from sacrebleu.significance import estimate_ci

    scores = np.random.default_rng(5).normal(30, 2, size=1000)
    ci = bs.percentile_interval(scores.tolist())
    mean, half = estimate_ci(scores)
    assert ci["mean"] == pytest.approx(mean, abs=1e-9) and ci["half_width"] == pytest.approx(half, abs=1e-12)
    s = sorted(scores)
    assert (ci["low"], ci["high"]) == (s[25], s[974])  # 1000 // 40 = 25


def test_paired_p_value_is_sacrebleus_except_for_a_system_against_itself():
    from sacrebleu.significance import _compute_p_value

    rng = np.random.default_rng(11)
    base = rng.normal(30, 1, 1000)
    for shift in (0.05, 0.5, 3.0):
        system = base + shift + rng.normal(0, 0.3, 1000)
        ours = bs.paired_p_value(system, base, 30 + shift, 30)
        diffs = np.abs(system - base)
        assert ours == _compute_p_value(diffs - diffs.mean(), shift)
    # identical systems: every difference is 0; sacrebleu's strict count says p = 1/(B+1)
    assert bs.paired_p_value(base, base, 30, 30) == 1.0
    assert _compute_p_value(np.zeros(1000), 0.0) == 1 / 1001


# ------------------------------------------------------------------------- beambleu score

def score_cli(*args):
    proc = subprocess.run([sys.executable, "-m", "beambleu.cli", "score", *map(str, args)], capture_output=True,
                          text=True, cwd=REPO, timeout=300)
    return proc


def test_score_confidence_fields_and_signature():
    proc = score_cli(SAMPLE / "ref.A.txt", SAMPLE / "ref.B.txt", "-i", SAMPLE / "sys.alpha.txt", "--confidence",
                     "--confidence-n", "300", "--seed", "4", "--with-stats")
    assert proc.returncode == 0, proc.stderr
    d = json.loads(proc.stdout)
    assert d["signature"].startswith("nrefs:2|bs:300|seed:4|case:mixed")
    assert d["bs"] == "300" and d["seed"] == "4"
    assert d["confidence_low"] <= d["confidence_mean_exact"] <= d["confidence_high"]
    assert d["confidence_half_width"] == pytest.approx((d["confidence_high"] - d["confidence_low"]) / 2)
    # sacrebleu's keys, rounded to -w as sacrebleu rounds them
    assert d["confidence_mean"] == float(f"{d['confidence_mean_exact']:.1f}")
    assert d["confidence_var"] == float(f"{d['confidence_half_width']:.1f}")
    assert d["confidence"] == f"μ = {d['confidence_mean_exact']:.1f} ± {d['confidence_half_width']:.1f}"
    assert list(d)[:6] == ["name", "score", "signature", "confidence_mean", "confidence_var", "confidence"]
    # the point score is untouched by the bootstrap
    plain = json.loads(score_cli(SAMPLE / "ref.A.txt", SAMPLE / "ref.B.txt", "-i", SAMPLE / "sys.alpha.txt",
                                 "--with-stats").stdout)
    assert d["score_exact"] == plain["score_exact"] and d["counts"] == plain["counts"]


def test_score_paired_bs_against_itself_and_a_worse_system(tmp_path):
    """The counter draws: a copy of the baseline gets p = 1 (ties count), and the same weights."""
    copy = tmp_path / "alpha-copy.txt"
    copy.write_bytes((SAMPLE / "sys.alpha.txt").read_bytes())
    proc = score_cli(SAMPLE / "ref.A.txt", "-i", SAMPLE / "sys.alpha.txt", SAMPLE / "sys.beta.txt", copy,
                     "--paired-bs", "--paired-bs-n", "500", "--resampling", "counter")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert rows[0]["system"].startswith("Baseline: ") and rows[0]["BLEU"]["p_value"] is None
    beta, same = rows[1]["BLEU"], rows[2]["BLEU"]
    assert list(beta) == ["score", "p_value", "mean", "ci"]  # sacrebleu's Result
    assert beta["p_value"] == 1 / 501  # 58 BLEU worse: never beaten by chance
    assert same["p_value"] == 1.0
    assert same["mean"] == rows[0]["BLEU"]["mean"] and same["ci"] == rows[0]["BLEU"]["ci"]  # same lines, weights


@pytest.mark.parametrize("args,message", [
    (["-i", "A", "B", "--confidence"], "--confidence is for one system"),
    (["-i", "A", "--paired-bs"], "the paired tests need a baseline and at least one more system"),
    (["-i", "A", "--paired-ar"], "the paired tests need a baseline and at least one more system"),
    (["-i", "A", "--paired-ar", "--paired-bs"], "not allowed with argument"),
    (["-i", "A", "--confidence", "-sl"], "--sentence-level does not combine"),
    (["-i", "A", "--confidence-n", "1", "--confidence"], "needs at least 2 resamples"),
])
def test_score_bootstrap_usage_errors(args, message):
    a = str(SAMPLE / "sys.alpha.txt")
    args = [a if x == "A" else str(SAMPLE / "sys.beta.txt") if x == "B" else x for x in args]
    proc = score_cli(SAMPLE / "ref.A.txt", *args)
    assert proc.returncode in (1, 2) and message in proc.stderr, proc.stderr
    assert proc.stdout == ""


# ---------------------------------------------------------------------- agreement with sacrebleu

def _sacre_replicates(hyps, refs, n, seed=12345):
    """sacrebleu 2.6.0's own bootstrap (its functions, its RNG) of one system."""
    import os

    from sacrebleu.metrics import BLEU
    from sacrebleu.significance import _bootstrap_resample

    metric = BLEU()
    stats = metric._extract_corpus_statistics(hyps, refs)  # refs: one list of lines per reference
    old = os.environ.get("SACREBLEU_SEED")
    os.environ["SACREBLEU_SEED"] = str(seed)
    try:
        _, scores = _bootstrap_resample(stats, metric, n)
    finally:
        if old is None:
            del os.environ["SACREBLEU_SEED"]
        else:
            os.environ["SACREBLEU_SEED"] = old
    return sorted(s.score for s in scores)


def _our_replicates(hyps, refs, n, seed=12345):
    from bleu_core import Bleu

    bleu = Bleu()
    rows = bleu.batch_stats(hyps, [list(r) for r in zip(*refs)], per_row=True)
    keys = bs.row_keys_from_ids(list(range(1, len(hyps) + 1)))
    return bs.replicate_scores(bleu, bs.bootstrap_totals(rows, keys, n, seed)[0])


@pytest.mark.slow
@needs_corpora
@pytest.mark.parametrize("folder", ["wmt22/de-en", "wmt21/xh-zu"])
def test_interval_bounds_within_0_3_bleu_of_sacrebleu(folder):
    d = CORPORA / folder
    refs = [read_lines(r) for r in sorted(d.glob("ref.*.txt"))[:2]]
    systems = sorted(d.glob("sys.*.txt"))[:3]
    for sys_file in systems:
        hyps = read_lines(sys_file)
        theirs = _sacre_replicates(hyps, refs, 1000)
        ours = sorted(_our_replicates(hyps, refs, 1000))
        lo_i = 1000 // 40
        for ours_b, theirs_b in ((ours[lo_i], theirs[lo_i]), (ours[-lo_i - 1], theirs[-lo_i - 1])):
            assert abs(ours_b - theirs_b) <= 0.3, (sys_file.name, ours_b, theirs_b)
        assert abs(statistics.mean(ours) - statistics.mean(theirs)) <= 0.3


@pytest.mark.slow
@needs_corpora
def test_paired_decisions_agree_with_sacrebleu_on_clear_cut_pairs(tmp_path):
    d = CORPORA / "wmt22/de-en"
    refs = sorted(d.glob("ref.*.txt"))[:1]
    from sacrebleu.metrics import BLEU

    ref_lines = [read_lines(r) for r in refs]
    scored = sorted((BLEU().corpus_score(read_lines(f), ref_lines).score, f) for f in d.glob("sys.*.txt"))
    (lo, worst), (hi, best) = scored[0], scored[-1]
    assert hi - lo > 2
    copy = tmp_path / "best-again.txt"
    copy.write_bytes(best.read_bytes())
    sacre = subprocess.run([sys.executable, "-m", "sacrebleu", *map(str, refs), "-i", str(best), str(worst), str(copy),
                            "-m", "bleu", "--paired-bs", "-f", "json"], capture_output=True, text=True, timeout=600)
    assert sacre.returncode == 0, sacre.stderr
    theirs = [r["BLEU"]["p_value"] for r in json.loads(sacre.stdout)]
    ours = json.loads(score_cli(*refs, "-i", best, worst, copy, "--paired-bs", "--resampling", "counter").stdout)
    assert theirs[1] < 0.05 and ours[1]["BLEU"]["p_value"] < 0.05  # far apart: both find the difference
    assert ours[2]["BLEU"]["p_value"] >= 0.05  # identical: no difference with the counter draws
    assert ours[1]["BLEU"]["score"] == json.loads(sacre.stdout)[1]["BLEU"]["score"]  # point scores exact


def test_randomization_swaps_are_fair_coins_and_the_kernel_equals_the_numpy_definition():
    keys = bs.row_keys_from_ids(np.arange(1, 3001))
    w = bs.swaps(keys, 400, 7)
    assert set(np.unique(w)) == {0, 1} and abs(w.mean() - 0.5) < 0.005  # 1.2M coins: sd 0.00046
    assert abs(np.corrcoef(w[:, :-1].ravel(), w[:, 1:].ravel())[0, 1]) < 0.01  # neighbours independent
    rows = np.random.default_rng(1).integers(0, 40, size=(3000, 6))
    assert (bs.swap_totals(rows, keys, 400, 7)[0] == w @ rows).all()
    # independent of the bootstrap's weights for the same seed, and of another seed
    assert not (bs.swaps(keys, 50, 8) == w[:50]).all()
    assert abs(np.corrcoef(w[:50].ravel(), (bs.weights(keys, 50, 7) > 0).ravel())[0, 1]) < 0.02


def test_randomization_test_by_hand():
    """Two one-segment-type systems under a mean-of-statistic 'metric': the pseudo-systems of a trial take
    the baseline's rows where the coin says swap, the system's elsewhere (and the opposite)."""
    class Mean:
        def score(self, totals):
            return type("S", (), {"score": totals[0] / max(totals[1], 1)})()

    base_rows = np.array([[1, 1]] * 4)   # the baseline: 1 of 1 on every segment
    sys_rows = np.array([[0, 1]] * 4)    # the system: 0 of 1
    keys = bs.row_keys_from_ids([1, 2, 3, 4])
    n = 64
    w = bs.swaps(keys, n, 3)
    a, b = bs.randomization_trials(base_rows.sum(0), w @ base_rows, sys_rows.sum(0), w @ sys_rows)
    # trial t: A holds the baseline's rows where swapped, so A's numerator is the number of swaps
    assert (a[:, 0] == w.sum(1)).all() and (b[:, 0] == 4 - w.sum(1)).all()
    diffs = np.abs(a[:, 0] - b[:, 0]) / 4
    c = int((diffs >= 1.0).sum())  # observed |1 - 0| = 1: only trials swapping all or none reach it
    assert c == int(((w.sum(1) == 0) | (w.sum(1) == 4)).sum())
    p = bs.randomization_test(Mean(), base_rows.sum(0), w @ base_rows, sys_rows.sum(0), w @ sys_rows)
    assert p == (c + 1) / (n + 1)
    # a system against an identical baseline: every trial difference is 0 >= 0, so p = 1
    assert bs.randomization_test(Mean(), base_rows.sum(0), w @ base_rows, base_rows.sum(0), w @ base_rows) == 1.0


@pytest.mark.slow
@needs_corpora
def test_paired_ar_agrees_with_sacrebleu_on_real_systems(tmp_path):
    """sacrebleu --paired-ar and beambleu score --paired-ar on wmt22 de-en (1984 lines, 9 systems), 2000
    trials each: by default (sacrebleu's draws) the same JSON; with --resampling counter the same point
    scores; the same decision at p < 0.05 wherever sacrebleu's p is clear-cut
    (below 0.01 or above 0.2); every p-value within the noise of two independent 2000-trial estimates,
    4 * sqrt(2 p (1 - p) / 2000) + 2 / 2001; a copy of the baseline: p = 1 here, 1/2001 in sacrebleu (its
    strict count, see bootstrap.randomization_p_value)."""
    d = CORPORA / "wmt22/de-en"
    refs = sorted(d.glob("ref.*.txt"))[:1]
    systems = sorted(d.glob("sys.*.txt"))
    copy = tmp_path / "copy-of-baseline.txt"
    copy.write_bytes(systems[0].read_bytes())
    args = [*map(str, refs), "-i", *map(str, systems), str(copy), "-m", "bleu", "--paired-ar", "-parn", "2000",
            "-f", "json"]
    sacre = subprocess.run([sys.executable, "-m", "sacrebleu", *args], capture_output=True, text=True, timeout=900)
    assert sacre.returncode == 0, sacre.stderr
    theirs = json.loads(sacre.stdout)
    assert score_cli(*args).stdout == sacre.stdout
    ours = json.loads(score_cli(*args, "--resampling", "counter").stdout)
    assert [r["system"] for r in ours] == [r["system"] for r in theirs]
    assert [r["BLEU"]["score"] for r in ours] == [r["BLEU"]["score"] for r in theirs]
    clear = 0
    for o, t in zip(ours[1:-1], theirs[1:-1]):
        p, q = o["BLEU"]["p_value"], t["BLEU"]["p_value"]
        assert abs(p - q) <= 4 * math.sqrt(2 * q * (1 - q) / 2000) + 2 / 2001, (o["system"], p, q)
        if q < 0.01 or q > 0.2:
            clear += 1
            assert (p < 0.05) == (q < 0.05), (o["system"], p, q)
    assert clear >= 5
    assert ours[-1]["BLEU"]["p_value"] == 1.0 and theirs[-1]["BLEU"]["p_value"] == 1 / 2001


# ---------------------------------------------------------------------------- the pipeline

beam = pytest.importorskip("apache_beam")

from ...pipeline_helpers import bleu_of, corpus_rows, load, run_cli, write_shards  # noqa: E402

BOOT_FIELDS = ("score", "confidence_mean", "confidence_low", "confidence_high", "confidence_half_width",
               "confidence", "p_value", "signature")


def boot_view(doc):
    pick = lambda g: {**{k: bleu_of(g).get(k) for k in BOOT_FIELDS}, "n_pairs": g["n_pairs"]}  # noqa: E731
    return {"corpus": pick(doc["corpus"]), "groups": [(g["group_by"], g["key"], pick(g)) for g in doc["groups"]],
            "bootstrap": doc.get("bootstrap")}


@pytest.fixture(scope="module")
def seg_rows():
    if not (CORPORA / "MANIFEST.tsv").exists():
        pytest.skip("shared corpora not present")
    rows = corpus_rows()
    for r in rows:
        r["seg"] = f"{r['langpair']}:{r['line']}"
    return rows


def _schema():
    import pyarrow as pa

    from ...pipeline_helpers import SCHEMA

    return SCHEMA.append(pa.field("seg", pa.string()))


PAIRED = ["--group-by", "system,langpair", "--group-by", "langpair", "--paired-bs", "--paired-bs-n", "200",
          "--id-column", "seg", "--progress", "off"]


def _same_on_every_sharding(seg_rows, tmp_path, *flags):
    """`beambleu run FLAGS` on 1 shard, 7 shards, and 7 shards with worker processes: the three
    results (resampling fields of the corpus and every group), asserted identical."""
    docs = []
    for n_shards, extra in ((1, []), (7, []), (7, ["--direct_running_mode=multi_processing",
                                                   "--direct_num_workers=2"])):
        d = tmp_path / f"s{n_shards}-{len(extra)}"
        glob = write_shards(seg_rows, d / "in", n_shards=n_shards, row_group_size=1500, shuffle_seed=n_shards,
                            schema=_schema())
        rc, _, err = run_cli("--input", glob, *flags, "--output", d / "r.json", *extra)
        assert rc == 0, err
        docs.append(load(d / "r.json"))
    assert boot_view(docs[0]) == boot_view(docs[1]) == boot_view(docs[2])
    return docs


@needs_corpora
def test_pipeline_randomization_test_is_identical_for_1_and_7_shards_and_for_worker_processes(seg_rows, tmp_path):
    baseline = sorted({r["system"] for r in seg_rows if r["langpair"] == "wmt22/de-en"})[0]
    docs = _same_on_every_sharding(seg_rows, tmp_path, "--group-by", "system,langpair", "--paired-ar",
                                   "--paired-ar-n", "300", "--id-column", "seg", "--progress", "off",
                                   "--baseline", baseline)
    tested = [g for g in docs[0]["groups"] if g["key"]["langpair"] == "wmt22/de-en" and g["key"]["system"] != baseline]
    assert len(tested) >= 5 and all(0 < bleu_of(g)["p_value"] <= 1 and "confidence_low" not in bleu_of(g)
                                    for g in tested)
    assert docs[0]["bootstrap"]["method"] == "approximate-randomization"


@needs_corpora
def test_pipeline_bootstrap_is_identical_for_1_and_7_shards_and_for_worker_processes(seg_rows, tmp_path):
    baseline = sorted({r["system"] for r in seg_rows if r["langpair"] == "wmt22/de-en"})[0]
    docs = _same_on_every_sharding(seg_rows, tmp_path, *PAIRED, "--baseline", baseline)
    doc = docs[0]
    assert doc["bootstrap"] == {"n": 200, "seed": 12345, "method": "poisson", "paired": True, "baseline": baseline,
                                "system_column": "system"}
    tested = [g for g in doc["groups"] if g["group_by"] == ["system", "langpair"]
              and g["key"]["langpair"] == "wmt22/de-en" and g["key"]["system"] != baseline]
    assert tested and all(0 < bleu_of(g)["p_value"] <= 1 for g in tested)
    base = [g for g in doc["groups"] if g["group_by"] == ["system", "langpair"] and g["key"]["system"] == baseline]
    assert base and all(bleu_of(g)["p_value"] is None and g["baseline"] == baseline for g in base)
    # other langpairs have no such baseline system: said, not invented
    other = [g for g in doc["groups"] if g["group_by"] == ["system", "langpair"]
             and g["key"]["langpair"] != "wmt22/de-en"]
    assert other and all(bleu_of(g)["p_value"] is None and "paired_note" in g for g in other)
    assert all("p_value" not in bleu_of(g) and "p_value" not in g for g in doc["groups"]
               if g["group_by"] == ["langpair"])


@needs_corpora
def test_pipeline_paired_test_equals_beambleu_score_on_the_same_segments(tmp_path):
    """One test set through `beambleu convert` + `beambleu run --id-column line --resampling counter`, and
    through `beambleu score -i BASE SYS... --resampling counter`: the same weights, so the same intervals
    and p-values (and the same signatures)."""
    d = CORPORA / "wmt21/xh-zu"
    refs = sorted(d.glob("ref.*.txt"))[:1]
    systems = sorted(d.glob("sys.*.txt"))[:3]
    from beambleu.cli import main

    for f in systems:
        name = f.name[len("sys."):-len(".txt")]
        assert main(["convert", *map(str, refs), "-i", str(f), "--set", f"system={name}", "-o",
                     str(tmp_path / "in" / f"{name}.parquet")]) == 0
    base = systems[0].name[len("sys."):-len(".txt")]
    rc, _, err = run_cli("--input", tmp_path / "in" / "*.parquet", "--group-by", "system", "--paired-bs",
                         "--paired-bs-n", "300", "--baseline", base, "--id-column", "line", "--output",
                         tmp_path / "r.json", "--progress", "off", "--resampling", "counter")
    assert rc == 0, err
    groups = {g["key"]["system"]: bleu_of(g) for g in load(tmp_path / "r.json")["groups"]}
    proc = score_cli(*refs, "-i", *systems, "--paired-bs", "--paired-bs-n", "300", "--resampling", "counter", "-f",
                     "text", "-nc")
    assert proc.returncode == 0, proc.stderr
    for g in groups.values():  # the table's signature line is the run's
        assert f" - BLEU       {g['signature']}\n" in proc.stdout
    proc = score_cli(*refs, "-i", *systems, "--paired-bs", "--paired-bs-n", "300", "--resampling", "counter")
    assert proc.returncode == 0, proc.stderr
    for f, row in zip(systems, json.loads(proc.stdout)):
        g = groups[f.name[len("sys."):-len(".txt")]]
        for k, theirs in (("score", "score"), ("p_value", "p_value"), ("confidence_mean", "mean"),
                          ("confidence_half_width", "ci")):
            assert g[k] == row["BLEU"][theirs], (f.name, k)


def test_pipeline_wide_format_paired_and_confidence(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    hyp_a = (SAMPLE / "sys.alpha.txt").read_text().splitlines()
    hyp_b = (SAMPLE / "sys.beta.txt").read_text().splitlines()
    refs = [list(r) for r in zip((SAMPLE / "ref.A.txt").read_text().splitlines(),
                                 (SAMPLE / "ref.B.txt").read_text().splitlines())]
    pq.write_table(pa.table({"alpha": hyp_a, "beta": hyp_b, "alpha2": hyp_a, "references": refs}),
                   tmp_path / "wide.parquet", row_group_size=7)
    rc, _, err = run_cli("--input", tmp_path / "wide.parquet", "--candidate-columns", "alpha,beta,alpha2",
                         "--paired-bs", "--baseline", "alpha", "--paired-bs-n", "400", "--output", tmp_path / "r.json",
                         "--groups-output", tmp_path / "g.csv", "--progress", "off")
    assert rc == 0, err
    doc = load(tmp_path / "r.json")
    by = {g["key"]["system"]: bleu_of(g) for g in doc["groups"]}
    assert by["alpha"]["p_value"] is None
    assert by["beta"]["p_value"] == 1 / 401 and by["beta"]["significant"]
    assert by["alpha2"]["p_value"] == 1.0 and not by["alpha2"]["significant"]
    assert by["alpha2"]["confidence_low"] == by["alpha"]["confidence_low"]  # same rows, same weights
    header = (tmp_path / "g.csv").read_text().splitlines()[0].split(",")
    assert {"bleu_confidence_low", "bleu_confidence_high", "bleu_p_value", "bleu_baseline"} <= set(header)


@pytest.mark.parametrize("args,message", [
    (["--paired-bs"], "--paired-bs needs --baseline SYSTEM"),
    (["--paired-bs", "--baseline", "alpha", "--group-by", "system"], "--paired-bs in long format needs --id-column"),
    (["--paired-bs", "--baseline", "alpha", "--id-column", "line"], "needs a --group-by that includes"),
    (["--baseline", "alpha"], "--baseline is for --paired-bs"),
    (["--paired-ar", "--baseline", "alpha", "--id-column", "line", "--group-by", "system", "--paired-ar-n", "100001"],
     "above the limit of 100000 (the corpus and every group keep each resample's 10 int64 totals, at most 8 MB "
     "each); use 100000 or fewer (sacrebleu's default is 10000)"),
    (["--paired-bs", "--baseline", "alpha", "--id-column", "line", "--group-by", "system", "--paired-bs-n", "100001"],
     "use 100000 or fewer (sacrebleu's default is 1000)"),
    (["--confidence", "--seed", str(2**64 + 7)], f"--seed {2**64 + 7}: outside 0 .. 2**64 - 1"),
    (["--confidence", "--seed", "-7"], "--seed -7: outside 0 .. 2**64 - 1"),
])
def test_pipeline_bootstrap_usage_errors(tmp_path, args, message):
    rc, _, err = run_cli("--input", SAMPLE / "shards" / "*.parquet", "--output", tmp_path / "r.json", *args)
    assert rc == 2 and message in err, err
    assert not (tmp_path / "r.json").exists()


def test_pipeline_null_id_is_named(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"candidate": ["a b", "c d"], "references": [["a b"], ["c d"]], "seg": ["s1", None]}),
                   tmp_path / "in.parquet")
    rc, _, err = run_cli("--input", tmp_path / "in.parquet", "--confidence", "--id-column", "seg", "--output",
                         tmp_path / "r.json")
    assert rc == 1 and f"{tmp_path / 'in.parquet'}: row 1, column 'seg': the id is null" in err, err
    assert not (tmp_path / "r.json").exists()


def test_confidence_accumulators_stay_o_of_b():
    """The accumulator of a group holds B replicate vectors, whatever the corpus size."""
    import pyarrow as pa

    from beambleu.groups import accumulate as acc_ops
    from beambleu.groups import grouptable

    assert acc_ops.width(10, 1000) == 10 * 1001 + 3  # BLEU-4: 10 statistics
    a = acc_ops.from_totals(np.arange(10), np.array([2, 2]), np.ones((3, 10), np.int64))
    one = grouptable.GroupTable(pa.table({"k": ["x"]}), a.reshape(1, -1))
    merged = grouptable.merge([one, one]).accs[0]
    assert merged.shape == a.shape
    assert (acc_ops.boot_of(merged, 10) == 2).all() and acc_ops.n_pairs(merged) == 4
    assert (acc_ops.stats_of(merged, 10) == 2 * np.arange(10)).all()


# ------------------------------------------------------------------------------- report

def _sample_result(tmp_path):
    out = tmp_path / "r.json"
    rc, _, err = run_cli("--input", SAMPLE / "shards" / "*.parquet", "--group-by", "system", "--group-by",
                         "system,langpair", "--paired-bs", "--baseline", "alpha", "--id-column", "line",
                         "--paired-bs-n", "300", "--output", out, "--progress", "off")
    assert rc == 0, err
    return out


def report_cli(*args):
    return subprocess.run([sys.executable, "-m", "beambleu.cli", "report", *map(str, args)], capture_output=True,
                          text=True, cwd=REPO, timeout=300)


def test_report_table_and_plot(tmp_path):
    out = _sample_result(tmp_path)
    doc = load(out)
    proc = report_cli(out, "--plot", tmp_path / "p.png")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    by = {g["key"]["system"]: bleu_of(g) for g in doc["groups"] if g["group_by"] == ["system", "langpair"]}
    alpha = next(ln for ln in lines if ln.startswith("alpha"))
    beta = next(ln for ln in lines if ln.startswith("beta"))
    a = by["alpha"]
    assert f"{a['score']:.1f} [{a['confidence_low']:.1f}, {a['confidence_high']:.1f}] (b)" in alpha
    assert beta.rstrip().endswith("*") and f"{by['beta']['score']:.1f}" in beta
    corpus = bleu_of(doc["corpus"])
    assert lines[0] == (f"corpus: BLEU {corpus['score']:.1f} [{corpus['confidence_low']:.1f}, "
                        f"{corpus['confidence_high']:.1f}] on 60 pairs")
    assert "en-en" in proc.stdout  # the langpair column
    png = (tmp_path / "p.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    svg = report_cli(out, "--group-by", "system", "--plot", tmp_path / "p.svg")
    assert svg.returncode == 0 and (tmp_path / "p.svg").read_text().lstrip().startswith("<?xml")


def test_report_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"corpus": 1,\n "x": }')
    proc = report_cli(bad)
    assert proc.returncode == 1 and f"{bad}: line 2, column 7" in proc.stderr, proc.stderr
    out = _sample_result(tmp_path)
    proc = report_cli(out, "--group-by", "domain")
    assert proc.returncode == 1 and "no grouping set domain" in proc.stderr
    code = ("import builtins, sys\nreal = builtins.__import__\n"
            "def fake(name, *a, **k):\n    if name.startswith('matplotlib'):\n"
            "        raise ImportError('no matplotlib')\n"
            "    return real(name, *a, **k)\nbuiltins.__import__ = fake\nfrom beambleu.cli import main\n"
            "sys.exit(main(sys.argv[1:]))\n")
    proc = subprocess.run([sys.executable, "-c", code, "report", str(out), "--plot", str(tmp_path / "x.png")],
                          capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 2 and "pip install 'beambleu[plot]'" in proc.stderr
    assert not (tmp_path / "x.png").exists()


def test_report_reads_beambleu_score_json(tmp_path):
    paired = score_cli(SAMPLE / "ref.A.txt", SAMPLE / "ref.B.txt", "-i", SAMPLE / "sys.alpha.txt",
                       SAMPLE / "sys.beta.txt", "--paired-bs", "--paired-bs-n", "300")
    (tmp_path / "p.json").write_text(paired.stdout)
    rows = json.loads(paired.stdout)
    proc = report_cli(tmp_path / "p.json", "--plot", tmp_path / "p.png")
    assert proc.returncode == 0, proc.stderr
    a, b = rows[0]["BLEU"], rows[1]["BLEU"]  # sacrebleu's fields: the interval shown is mean -/+ half-width
    assert f"{a['score']:.1f} [{a['mean'] - a['ci']:.1f}, {a['mean'] + a['ci']:.1f}] (b)" in proc.stdout
    assert f"{b['score']:.1f} [{b['mean'] - b['ci']:.1f}, {b['mean'] + b['ci']:.1f}] *" in proc.stdout
    assert (tmp_path / "p.png").read_bytes()[:4] == b"\x89PNG"
    single = score_cli(SAMPLE / "ref.A.txt", "-i", SAMPLE / "sys.alpha.txt", "--confidence", "--with-stats")
    (tmp_path / "s.json").write_text(single.stdout)
    d = json.loads(single.stdout)
    proc = report_cli(tmp_path / "s.json")
    assert proc.returncode == 0 and proc.stdout.startswith(
        f"corpus: BLEU {d['score']:.1f} [{d['confidence_low']:.1f}, {d['confidence_high']:.1f}]")


def test_readme_report_example_is_what_the_commands_print(tmp_path):
    """The README's `beambleu run ... --paired-bs` + `beambleu report` example, run as written."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = readme.split("<!-- report-output -->\n```text\n", 1)[1].split("```", 1)[0]
    out = tmp_path / "result.json"
    rc, _, err = run_cli("--input", SAMPLE / "shards" / "*.parquet", "--group-by", "system,langpair", "--paired-bs",
                         "--baseline", "alpha", "--id-column", "line", "--output", out, "--overwrite")
    assert rc == 0, err
    proc = report_cli(out)
    assert proc.returncode == 0 and proc.stdout == block


def test_integer_ids_hash_the_same_from_python_ints_numpy_and_mixed_lists():
    ids = [0, 1, -5, 2 ** 62, 12345]
    a = bs.row_keys_from_ids(ids)
    assert (bs.row_keys_from_ids(np.array(ids, dtype=np.int64)) == a).all()
    assert (bs.row_keys_from_ids(np.array(ids[:2], dtype=np.int32)) == a[:2]).all()
    mixed = bs.row_keys_from_ids(ids + ["x"])  # the per-value path
    assert (mixed[:-1] == a).all()


def test_the_generator_refuses_seeds_it_cannot_tell_apart():
    """The counter-based generator keys on 64 bits: seed 5 + 2**64 would draw seed 5's weights
    (and -1 those of 2**64 - 1), so the library refuses such seeds instead."""
    keys = bs.row_keys_from_position("f", 0, 8)
    assert (bs.weights(keys, 4, seed=2**64 - 1) != bs.weights(keys, 4, seed=5)).any()
    for seed in (5 + 2**64, -1, 2**70):
        with pytest.raises(ValueError, match="outside 0 .. 2\\*\\*64 - 1"):
            bs.weights(keys, 4, seed=seed)
        with pytest.raises(ValueError, match="outside 0 .. 2\\*\\*64 - 1"):
            bs.bootstrap_totals(np.ones((8, 10), dtype=np.int64), keys, 4, seed)


def _error_line(err):
    lines = [ln for ln in err.splitlines() if ln.startswith("beambleu: error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("test", ["--paired-bs", "--paired-ar"])
def test_pipeline_unknown_baseline_is_one_line_naming_the_systems_and_writes_nothing(tmp_path, test):
    """The systems of the long format are known after the pass: a --baseline none of them is ends the
    run with one line naming it and the systems there are (exit 1), and no output (it exited 0
    without a p-value)."""
    out = tmp_path / "out"
    out.mkdir()
    rc, stdout, err = run_cli("--input", SAMPLE / "shards" / "*.parquet", "--group-by", "system", "--group-by",
                              "system,langpair", test, "--baseline", "gamma", "--id-column", "line",
                              "--output", out / "r.json", "--groups-output", out / "g.parquet", "--progress", "off")
    assert rc == 1 and stdout == ""
    assert _error_line(err) == ("beambleu: error: --baseline 'gamma': no such system in --system-column 'system' "
                                "(the systems: 'alpha', 'beta')")
    assert list(out.iterdir()) == []


def _integer_systems(tmp_path):
    """The sample shards with the systems as integers (alpha 1, beta 2) and as their text."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.concat_tables([pq.read_table(p) for p in sorted((SAMPLE / "shards").glob("*.parquet"))])
    codes = pa.array([{"alpha": 1, "beta": 2}[s] for s in table.column("system").to_pylist()], pa.int64())
    i = table.schema.get_field_index("system")
    (tmp_path / "int").mkdir()
    (tmp_path / "text").mkdir()
    pq.write_table(table.set_column(i, "system", codes), tmp_path / "int" / "all.parquet")
    pq.write_table(table.set_column(i, "system", codes.cast(pa.string())), tmp_path / "text" / "all.parquet")


@pytest.mark.parametrize("test", ["--paired-bs", "--paired-ar"])
def test_pipeline_integer_system_column_takes_its_baseline_as_an_integer(tmp_path, test):
    """--baseline 1 of an integer --system-column is the system 1: the same p-values as the
    same rows with the systems as text (the same ids, so the same draws); a --baseline that is no
    integer is bad usage before the job."""
    _integer_systems(tmp_path)
    docs = {}
    for kind in ("int", "text"):
        rc, _, err = run_cli("--input", tmp_path / kind / "all.parquet", "--group-by", "system", test, "--baseline",
                             "1", "--id-column", "line", "--output", tmp_path / f"{kind}.json", "--progress", "off")
        assert rc == 0, err
        docs[kind] = {str(g["key"]["system"]): g for g in load(tmp_path / f"{kind}.json")["groups"]}
    p_value = {kind: {k: bleu_of(g)["p_value"] for k, g in d.items()} for kind, d in docs.items()}
    assert p_value["int"]["2"] is not None and p_value["int"]["2"] == p_value["text"]["2"]
    assert p_value["int"]["1"] is None and docs["int"]["2"]["baseline"] == 1
    assert load(tmp_path / "int.json")["bootstrap"]["baseline"] == 1
    rc, _, err = run_cli("--input", tmp_path / "int" / "all.parquet", "--group-by", "system", test, "--baseline",
                         "alpha", "--id-column", "line", "--output", tmp_path / "bad.json", "--progress", "off")
    assert rc == 2 and _error_line(err) == ("beambleu: error: --baseline 'alpha': --system-column 'system' holds "
                                            "integers (int64): name one of them")
    assert not (tmp_path / "bad.json").exists()


def _sample_with(tmp_path, beta_lines):
    """The sample shards with beta's rows replaced by the rows of ``beta_lines`` (its line ids, in
    order: a missing id drops the segment, an id given twice repeats its row)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    alpha = pq.read_table(SAMPLE / "shards" / "alpha.parquet")
    beta = pq.read_table(SAMPLE / "shards" / "beta.parquet")
    lines = beta.column("line").to_pylist()
    beta = beta.take(pa.array([lines.index(i) for i in beta_lines]))
    d = tmp_path / "in"
    d.mkdir()
    pq.write_table(alpha, d / "alpha.parquet")
    pq.write_table(beta, d / "beta.parquet")
    return d / "*.parquet"


@pytest.mark.parametrize("test", ["--paired-bs", "--paired-ar"])
@pytest.mark.parametrize("case", ["missing", "twice", "extra", "baseline twice"])
def test_pipeline_paired_test_on_unpaired_segments_is_one_line_naming_system_and_segment(tmp_path, test, case):
    """A paired test needs every system on the baseline's segments, each once (sacrebleu: the same
    lines): a system lacking one of the baseline's segments, having one twice, or having one the
    baseline lacks, or a baseline with a segment twice, ends the run with one line naming the system
    and the segment id (exit 1) and no output, in each grouping set with the system column (the
    test is per group). Today's code gave each a p-value."""
    import pyarrow.parquet as pq

    ids = list(range(1, 31))
    beta_lines = {"missing": ids[:6] + ids[7:], "twice": ids[:8] + [7] + ids[8:], "extra": ids,
                  "baseline twice": ids}[case]
    glob = _sample_with(tmp_path, beta_lines)
    if case in ("extra", "baseline twice"):  # alpha loses segment 7, or gets it twice
        import pyarrow as pa

        a = pq.read_table(tmp_path / "in" / "alpha.parquet")
        keep = [i for i in range(a.num_rows) if a.column("line")[i].as_py() != 7]
        if case == "baseline twice":
            keep = list(range(a.num_rows)) + [6]
        pq.write_table(a.take(pa.array(keep)), tmp_path / "in" / "alpha.parquet")
    out = tmp_path / "out"
    out.mkdir()
    rc, stdout, err = run_cli("--input", glob, "--group-by", "system", "--group-by", "system,langpair", test,
                              "--baseline", "alpha", "--id-column", "line", "--output", out / "r.json",
                              "--groups-output", out / "g.parquet", "--progress", "off")
    expected = {
        "missing": "system 'beta' lacks segment 7 of the baseline 'alpha' (--id-column 'line')",
        "twice": "system 'beta' has segment 7 twice (--id-column 'line')",
        "extra": "system 'beta' has segment 7, which the baseline 'alpha' lacks (--id-column 'line')",
        "baseline twice": "system 'alpha' has segment 7 twice (--id-column 'line')",
    }[case]
    assert (rc, stdout) == (1, ""), err
    assert _error_line(err) == f"beambleu: error: {test}: {expected}"
    assert list(out.iterdir()) == []


def test_pipeline_paired_test_names_the_group_of_the_unpaired_segment(tmp_path):
    """With the segments of two language pairs, a segment missing in one of them is named with its
    group's other key values (the test pairs the groups of each language pair); ids repeating
    across language pairs are not duplicates within a group of (system, langpair) alone."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    d = tmp_path / "in"
    d.mkdir()
    for name in ("alpha", "beta"):
        t = pq.read_table(SAMPLE / "shards" / f"{name}.parquet")
        lp = pa.array(["de-en"] * 15 + ["fr-en"] * 15)
        t = t.set_column(t.schema.get_field_index("langpair"), "langpair", lp)
        t = t.set_column(t.schema.get_field_index("line"), "line", pa.array(list(range(1, 16)) * 2, pa.int64()))
        if name == "beta":
            t = t.take(pa.array([i for i in range(30) if i != 15 + 3]))  # fr-en line 4
        pq.write_table(t, d / f"{name}.parquet")
    rc, _, err = run_cli("--input", d / "*.parquet", "--group-by", "system,langpair", "--paired-bs",
                         "--baseline", "alpha", "--id-column", "line", "--output", tmp_path / "r.json",
                         "--progress", "off")
    assert rc == 1
    assert _error_line(err) == ("beambleu: error: --paired-bs: system 'beta' lacks segment 4 of the baseline "
                                "'alpha' in langpair='fr-en' (--id-column 'line')")
    assert not (tmp_path / "r.json").exists()
    # the same data, complete: ids 1..15 twice per system are one each in every (system, langpair) group
    t = pq.read_table(SAMPLE / "shards" / "beta.parquet")
    t = t.set_column(t.schema.get_field_index("langpair"), "langpair", pa.array(["de-en"] * 15 + ["fr-en"] * 15))
    t = t.set_column(t.schema.get_field_index("line"), "line", pa.array(list(range(1, 16)) * 2, pa.int64()))
    pq.write_table(t, d / "beta.parquet")
    rc, _, err = run_cli("--input", d / "*.parquet", "--group-by", "system,langpair", "--paired-bs",
                         "--baseline", "alpha", "--id-column", "line", "--output", tmp_path / "r.json",
                         "--progress", "off")
    assert rc == 0, err
    assert all(bleu_of(g)["p_value"] is not None for g in load(tmp_path / "r.json")["groups"]
               if g["key"]["system"] == "beta")


# ---------------------------------------------------------------- groups too small for their interval

def _tiny_corpus(tmp_path, candidates, references):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "tiny.parquet"
    pq.write_table(pa.table({"candidate": candidates, "references": [[r] for r in references],
                             "seg": list(range(1, len(candidates) + 1))}), path)
    return path


def test_a_one_line_perfect_corpus_gets_sacrebleus_interval_and_says_it_is_too_small(tmp_path):
    """sacrebleu resamples the one line of a 1-line corpus: every resample is that line, 100.0 ± 0.0.
    The Poisson bootstrap leaves the line out of a replicate with probability e**-1; such empty
    replicates are left out (each other replicate is k >= 1 copies of the line: the line's score,
    sacrebleu's score of k copies), counted and announced in the JSON and the summary line. Today:
    64.2 ± 50.0 (the empty replicates scored 0)."""
    line = "the cat sat on the mat"
    path = _tiny_corpus(tmp_path, [line], [line])
    score = sacrebleu.corpus_bleu([line], [[line]]).score
    assert all(sacrebleu.corpus_bleu([line] * k, [[line] * k]).score == score for k in range(1, 8))
    # the replicates that draw the line 0 times: the generator's reference definition, for the id 1
    empty = int((bs.weights(bs.row_keys_from_ids([1]), 1000, 12345)[:, 0] == 0).sum())
    assert 291 <= empty <= 445  # 1000 e**-1 = 368 within 5 sigma (15.3)
    rc, stdout, err = run_cli("--input", path, "--confidence", "--id-column", "seg", "--output", tmp_path / "r.json",
                              "--progress", "off")
    assert rc == 0, err
    d = bleu_of(load(tmp_path / "r.json")["corpus"])
    assert (d["confidence_mean"], d["confidence_low"], d["confidence_high"]) == (score, score, score)
    assert d["confidence_half_width"] == 0.0 and d["confidence"] == "μ = 100.0 ± 0.0"
    note = (f"too small for its interval: {empty} of 1000 resamples drew none of its pairs and are left out "
            f"(the interval is of the other {1000 - empty})")
    assert d["confidence_empty_resamples"] == empty and d["confidence_note"] == note
    assert stdout.splitlines()[0].endswith(f"= 100.0 (μ = 100.0 ± 0.0) 100.0/100.0/100.0/100.0 (BP = 1.000 "
                                           f"ratio = 1.000 hyp_len = 6 ref_len = 6) [{note}]")
    # beambleu score: sacrebleu's own line for the same file (its version field aside)
    (tmp_path / "h.txt").write_text(line + "\n")
    theirs = subprocess.run([sys.executable, "-m", "sacrebleu", tmp_path / "h.txt", "-i", tmp_path / "h.txt", "-ci",
                             "-f", "text"], capture_output=True, text=True)
    ours = subprocess.run([sys.executable, "-m", "beambleu.cli", "score", tmp_path / "h.txt", "-i",
                           tmp_path / "h.txt", "-ci", "-f", "text"], capture_output=True, text=True)
    assert theirs.returncode == 0 and ours.returncode == 0, (theirs.stderr, ours.stderr)
    assert ours.stdout.replace("beambleu-0.1.0", "2.6.0") == theirs.stdout


def test_the_interval_of_a_tiny_group_is_of_its_non_empty_replicates(tmp_path):
    """Three lines, 200 replicates: each replicate's score is sacrebleu's BLEU of the lines repeated
    as the replicate draws them (its weights, from the generator's reference definition); the
    interval is sacrebleu's estimate (mean; sorted scores at B'//40 and B' - B'//40 - 1) over the
    B' replicates that drew at least one line; the others are counted."""
    cands = ["the cat sat on the mat", "a dog ran in the park today", "it is raining"]
    refs = ["the cat sat on a mat", "the dog ran in the park", "it is not raining now"]
    path = _tiny_corpus(tmp_path, cands, refs)
    w = bs.weights(bs.row_keys_from_ids([1, 2, 3]), 200, 12345)
    scores = []
    for row in w:
        if row.sum():
            hyp = [c for c, k in zip(cands, row) for _ in range(k)]
            ref = [r for r, k in zip(refs, row) for _ in range(k)]
            scores.append(sacrebleu.corpus_bleu(hyp, [ref]).score)
    kept, empty = len(scores), 200 - len(scores)
    assert 0 < empty < 20  # 200 e**-3 = 10
    s = sorted(scores)
    low, high = s[kept // 40], s[kept - kept // 40 - 1]
    rc, stdout, err = run_cli("--input", path, "--confidence", "--confidence-n", "200", "--id-column", "seg",
                              "--output", tmp_path / "r.json", "--progress", "off")
    assert rc == 0, err
    d = bleu_of(load(tmp_path / "r.json")["corpus"])
    assert d["confidence_low"] == pytest.approx(low, abs=1e-9) and d["confidence_high"] == pytest.approx(high, abs=1e-9)
    assert d["confidence_mean"] == pytest.approx(statistics.mean(scores), abs=1e-9)
    assert d["confidence_empty_resamples"] == empty
    assert f"{empty} of 200 resamples drew none of its pairs" in stdout.splitlines()[0]


def test_the_group_table_counts_the_empty_replicates_of_each_group(tmp_path):
    """Per group: a 1-pair group's empty replicates are counted in the table as in the JSON; a
    30-pair group has none (e**-30 per replicate), 0."""
    import pyarrow.parquet as pq

    rc, _, err = run_cli("--input", SAMPLE / "shards" / "*.parquet", "--group-by", "system", "--group-by", "line",
                         "--confidence", "--id-column", "line", "--output", tmp_path / "r.json",
                         "--groups-output", tmp_path / "g.parquet", "--progress", "off")
    assert rc == 0, err
    table = pq.read_table(tmp_path / "g.parquet").to_pylist()
    docs = load(tmp_path / "r.json")["groups"]
    for row, doc in zip(table, docs):
        assert row["bleu_confidence_empty_resamples"] == bleu_of(doc).get("confidence_empty_resamples", 0)
        if doc["group_by"] == ["system"]:
            assert row["bleu_confidence_empty_resamples"] == 0 and "confidence_note" not in bleu_of(doc)
        else:  # 2 pairs (alpha's and beta's) of the same id: both drawn, or neither, e**-1 of the time
            w = bs.weights(bs.row_keys_from_ids([doc["key"]["line"]]), 1000, 12345)[:, 0]
            assert row["bleu_confidence_empty_resamples"] == int((w == 0).sum()) > 0


def test_report_marks_the_groups_too_small_for_their_interval(tmp_path):
    """`beambleu report` marks with ~ a score whose interval left out empty resamples, and says
    what ~ means; groups of 30 pairs (no empty resample) are not marked."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    line = "the cat sat on the mat"
    pq.write_table(pa.table({"candidate": [line, "a b c"], "references": [[line], ["a b c d"]],
                             "system": ["x", "y"]}), tmp_path / "two.parquet")
    for name, inp in (("tiny", tmp_path / "two.parquet"), ("sample", SAMPLE / "shards" / "*.parquet")):
        rc, _, err = run_cli("--input", inp, "--group-by", "system", "--confidence", "--output",
                             tmp_path / f"{name}.json", "--progress", "off")
        assert rc == 0, err
    report = subprocess.run([sys.executable, "-m", "beambleu.cli", "report", tmp_path / "tiny.json"],
                            capture_output=True, text=True)
    assert report.returncode == 0, report.stderr
    lines = report.stdout.splitlines()
    assert [ln.split()[0] for ln in lines if ln.endswith(" ~")] == ["x", "y"]
    assert lines[0].endswith("] ~ on 2 pairs")
    assert lines[-1] == ("~: too small for its interval: resamples that drew none of its pairs left out "
                         "(see confidence_note)")
    sample = subprocess.run([sys.executable, "-m", "beambleu.cli", "report", tmp_path / "sample.json"],
                            capture_output=True, text=True)
    assert sample.returncode == 0 and "~" not in sample.stdout, sample.stderr

"""TER's last corners, against sacrebleu 2.6.0 run here (its command line and its Python API):

- 3, 5, 6, 7 (or 9, ...) references: sacrebleu adds the segments' average reference lengths as
  floats in segment order, which differs from the exact sum in the last bits; ``beambleu score``
  (text, ``-ci``, the table of systems, ``--paired-bs``/``--paired-ar``), the library and the compat
  API must print and return sacrebleu's numbers, and ``run``'s exact sum is what it says it is;
- more than 8 references (sacrebleu takes any number): 9, 12, 20 and 64 are scored, 65 refused
  with one line by every path;
- the compat API's short signatures, for every TER option (and BLEU's and chrF's).
"""

from __future__ import annotations

import itertools
import json
import os
import random
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest
from sacrebleu.metrics import BLEU as SacreBLEU, CHRF as SacreCHRF, TER as SacreTER
from sacrebleu.tokenizers.tokenizer_ter import TercomTokenizer

import bleu_core.compat as compat
from bleu_core import scoring
from bleu_core.metrics.bleu import Bleu
from bleu_core.metrics.ter import Ter, corpus_ter
from bleu_core.protocol import MetricSet

from ....cli_parity import BEAMBLEU_VERSION, SACREBLEU_VERSION, comparable, first_difference, run_both
from ....oracle import to_streams

WORDS = "the a cat dog sat on mat ran big".split()


def write_lines(path, lines):
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return str(path)


def random_corpus(seed: int, n: int, k: int):
    """n candidates and k references each (some empty), from a small vocabulary."""
    rng = random.Random(seed)

    def sentence():
        return " ".join(rng.choice(WORDS) for _ in range(rng.choice([0, 1, 2, 3, 4, 5, 7, 11])))

    return [sentence() for _ in range(n)], [[sentence() for _ in range(k)] for _ in range(n)]


def sacrebleu_in_order(refs) -> float:
    """sacrebleu's reference length written out by hand: each segment's average length, added as
    floats in segment order (the words of a reference are its split() words, lowercased)."""
    total = 0.0
    tok = TercomTokenizer()
    for row in refs:
        total += sum(len(tok(r).split()) for r in row) / len(row)
    return total


def exact_sum(refs) -> Fraction:
    return sum((Fraction(sum(len(r.split()) for r in row), len(row)) for row in refs), Fraction(0))


def assert_same_output(args, tmp_path):
    ours, theirs = run_both(args, cwd=tmp_path)
    assert ours.returncode == theirs.returncode == 0, (ours.stderr.decode(), theirs.stderr.decode())
    a = comparable(ours.stdout, BEAMBLEU_VERSION, False)
    b = comparable(theirs.stdout, SACREBLEU_VERSION, False)
    assert a == b, first_difference(a, b)
    return a


# ----------------------------------------------------------------------------- the 16-line corpus


@pytest.fixture(scope="module")
def sixteen(tmp_path_factory):
    """15 lines `a` against reference `a` and one `a b c d` against `a`, and two all-empty reference
    files: 3 edits over 16 times 1/3, TER 56.25 exactly, which sacrebleu's float sum of the sixteen
    1/3 makes 56.25000000000001 (prints 56.3) and the exact sum 56.25 (prints 56.2)."""
    d = tmp_path_factory.mktemp("sixteen")
    write_lines(d / "ref", ["a"] * 16)
    write_lines(d / "empty1", [""] * 16)
    write_lines(d / "empty2", [""] * 16)
    write_lines(d / "hyp", ["a"] * 15 + ["a b c d"])
    write_lines(d / "same", ["a"] * 15 + ["a b c d"])
    write_lines(d / "perfect", ["a"] * 16)
    return d


def test_the_sixteen_lines_are_the_corner_they_claim():
    hyps, refs = ["a"] * 15 + ["a b c d"], [["a", "", ""]] * 16
    theirs = SacreTER().corpus_score(hyps, to_streams(refs))
    third = 0.0
    for _ in range(16):
        third += 1 / 3
    assert theirs.num_edits == 3 and theirs.ref_length == third != 16 / 3
    assert f"{theirs.score:.1f}" == "56.3" and f"{100 * (3 / (16 / 3)):.1f}" == "56.2"
    ours = Ter()
    rows = ours.batch_stats(hyps, refs)
    assert ours.score(rows.sum(axis=0)).score == 100 * (3 / (16 / 3)) == 56.25  # the exact sum: run's
    assert ours.corpus_score(hyps, refs).score == theirs.score  # in order: sacrebleu's
    state = scoring.InOrder(MetricSet([ours]))
    state.add(rows[:5])
    state.add(rows[5:])
    result = scoring.score_metric(ours, rows.sum(axis=0), {3}, ordered=state[0])
    assert result.score.score == theirs.score and result.score.ref_length_sum == "corpus order"


@pytest.mark.parametrize("args", [
    ["-m", "ter"],
    ["-m", "ter", "-f", "text"],
    ["-m", "ter", "-f", "text", "-w", "16"],
    ["-m", "ter", "-ci", "-f", "text"],
    ["-m", "ter", "-ci"],
    ["-m", "bleu", "chrf", "ter", "-f", "text"],
], ids=["json", "text", "w16", "ci-text", "ci-json", "three-metrics"])
def test_score_prints_sacrebleus_bytes(sixteen, args):
    out = assert_same_output(["ref", "empty1", "empty2", "-i", "hyp", *args], sixteen)
    assert "56.3" in out or "56.2500000000000142" in out


@pytest.mark.parametrize("args", [
    ["-i", "hyp", "same", "perfect"],
    ["-i", "hyp", "same", "perfect", "-f", "text"],
    ["-i", "hyp", "perfect", "same", "--paired-bs", "-f", "text"],
    ["-i", "hyp", "perfect", "--paired-ar", "-f", "text"],
    ["-i", "hyp", "perfect", "--paired-ar"],
], ids=["table-json", "table-text", "paired-bs", "paired-ar-text", "paired-ar-json"])
def test_the_table_and_the_paired_tests(sixteen, args):
    out = assert_same_output(["ref", "empty1", "empty2", "-m", "ter", *args], sixteen)
    assert "56.3" in out or "56.250000000000014" in out


def test_with_stats_says_the_sum_is_in_corpus_order(sixteen):
    proc = subprocess.run([sys.executable, "-m", "beambleu", "score", "ref", "empty1", "empty2", "-i", "hyp",
                           "-m", "ter", "-f", "json", "--with-stats"], cwd=sixteen, capture_output=True)
    assert proc.returncode == 0, proc.stderr.decode()
    d = json.loads(proc.stdout)
    theirs = SacreTER().corpus_score(["a"] * 15 + ["a b c d"], [["a"] * 16, [""] * 16, [""] * 16])
    assert d["ref_length_sum"] == "corpus order"
    assert (d["score_exact"], d["ref_length"]) == (theirs.score, theirs.ref_length)


# ----------------------------------------------------------------------------- 3, 5, 6, 7 references


CORPORA = [(seed, k) for k in (3, 5, 6, 7) for seed in (1, 2)]


@pytest.mark.parametrize("seed,k", CORPORA)
def test_library_and_compat_add_in_sacrebleus_order(seed, k):
    hyps, refs = random_corpus(seed, 60, k)
    theirs = SacreTER().corpus_score(hyps, to_streams(refs))
    assert theirs.ref_length == sacrebleu_in_order(refs)  # the oracle is what this file says it is
    ours = corpus_ter(hyps, refs)
    assert (ours.score, ours.ref_length, ours.num_edits) == (theirs.score, theirs.ref_length, theirs.num_edits)
    mine = compat.TER().corpus_score(hyps, to_streams(refs))
    assert (mine.score, mine.ref_length, mine.num_edits) == (theirs.score, theirs.ref_length, theirs.num_edits)
    # run's score: the correctly rounded exact sum, whatever the sharding
    metric = Ter()
    rows = metric.batch_stats(hyps, refs)
    shards = [rows[i::3].sum(axis=0) for i in range(3)]
    exact = metric.score(shards[2] + shards[0] + shards[1])
    assert exact.ref_length == float(exact_sum(refs)) and exact.ref_length_sum == "exact"


def test_the_corpora_are_corners():
    """At least some of the random corpora's float sums differ from their exact sums (so the tests
    above and below can tell the two apart)."""
    differ = 0
    for seed, k in CORPORA:
        _, refs = random_corpus(seed, 60, k)
        differ += sacrebleu_in_order(refs) != float(exact_sum(refs))
    assert differ >= 4


@pytest.mark.parametrize("k,seed", [(3, 3), (5, 5), (6, 16), (7, 7)])
def test_score_command_with_k_references(tmp_path, k, seed):
    hyps, refs = random_corpus(seed, 60, k)  # seeds chosen so that each corpus is a corner (checked)
    theirs = SacreTER().corpus_score(hyps, to_streams(refs))
    assert theirs.score != 100 * (theirs.num_edits / float(exact_sum(refs)))  # the exact sum scores otherwise
    names = [write_lines(tmp_path / f"ref{j}", [row[j] for row in refs]) for j in range(k)]
    write_lines(tmp_path / "hyp", hyps)
    write_lines(tmp_path / "other", list(reversed(hyps)))
    assert_same_output([*names, "-i", "hyp", "-m", "ter", "-w", "16"], tmp_path)
    assert_same_output([*names, "-i", "hyp", "other", "-m", "ter", "-w", "16", "-f", "text"], tmp_path)


# ----------------------------------------------------------------------------- more than 8 references


@pytest.mark.parametrize("k", [9, 12, 20, 64])
def test_many_references_everywhere(k):
    hyps, refs = random_corpus(100 + k, 25, k)
    theirs = SacreTER().corpus_score(hyps, to_streams(refs))
    ours = corpus_ter(hyps, refs)
    assert (ours.score, ours.ref_length, ours.num_edits) == (theirs.score, theirs.ref_length, theirs.num_edits)
    mine = compat.TER().corpus_score(hyps, to_streams(refs))
    assert (mine.score, mine.ref_length) == (theirs.score, theirs.ref_length)
    metric = Ter()
    rows = metric.batch_stats(hyps, refs)
    assert rows.tolist() == metric.scalar_stats(hyps, refs).tolist()  # kernel == reference path
    # each pair's edits are sacrebleu's, and its reference words sit in column ref_len_k
    segs = SacreTER()._extract_corpus_statistics(hyps, to_streams(refs))
    assert rows[:, 0].tolist() == [int(s[0]) for s in segs]
    assert rows[:, 5 + k - 1].tolist() == [sum(len(r.split()) for r in row) for row in refs]
    assert (np.delete(rows[:, 5:], k - 1, axis=1) == 0).all()
    # run's exact sum, and sacrebleu's segment statistics under its resampling
    assert metric.score(rows.sum(axis=0)).ref_length == float(exact_sum(refs))
    assert metric.sacrebleu_arithmetic().segment_statistics(rows).tolist() == [list(map(float, s)) for s in segs]
    sentence = Ter().sentence_score(hyps[3], refs[3])
    assert sentence.score == SacreTER().sentence_score(hyps[3], refs[3]).score


def test_more_than_64_references_are_refused_with_one_line(tmp_path):
    hyps, refs = ["a b"], [["a"] * 65]
    with pytest.raises(ValueError, match=r"^references\[0\]: more than 64 references \(TER's statistics hold at "
                                         r"most 64 per pair\)$"):
        corpus_ter(hyps, refs)
    with pytest.raises(ValueError, match="more than 64 references"):
        compat.TER().corpus_score(hyps, to_streams(refs))
    with pytest.raises(ValueError, match="more than 64 references"):
        Ter().scalar_stats(hyps, refs)
    assert SacreTER().corpus_score(hyps, to_streams(refs)).score == 100.0  # sacrebleu has no bound
    names = [write_lines(tmp_path / f"r{j}", ["a"]) for j in range(65)]
    write_lines(tmp_path / "hyp", ["a b"])
    proc = subprocess.run([sys.executable, "-m", "beambleu", "score", *names, "-i", "hyp", "-m", "ter"],
                          cwd=tmp_path, capture_output=True)
    err = proc.stderr.decode()
    assert proc.returncode == 1 and proc.stdout == b"", err
    assert err.count("\n") == 1 and err.startswith("beambleu: error: ") and "more than 64 references" in err
    ok = subprocess.run([sys.executable, "-m", "beambleu", "score", *names[:64], "-i", "hyp", "-m", "ter", "-b"],
                        cwd=tmp_path, capture_output=True)
    assert ok.returncode == 0 and ok.stdout == b"100.0\n", ok.stderr.decode()


@pytest.mark.parametrize("k", [9, 12, 20])
def test_score_command_with_many_references(tmp_path, k):
    hyps, refs = random_corpus(200 + k, 30, k)
    names = [write_lines(tmp_path / f"ref{j:02d}", [row[j] for row in refs]) for j in range(k)]
    write_lines(tmp_path / "hyp", hyps)
    write_lines(tmp_path / "other", hyps[::-1])
    assert_same_output([*names, "-i", "hyp", "-m", "ter", "-w", "16"], tmp_path)
    assert_same_output([*names, "-i", "hyp", "-m", "ter", "-ci", "-f", "text"], tmp_path)
    assert_same_output([*names, "-i", "hyp", "other", "-m", "ter", "--paired-bs", "-f", "text"], tmp_path)


def test_run_with_20_references(tmp_path):
    """``beambleu run`` takes them too, and divides by the exact sum it documents."""
    hyps, refs = random_corpus(220, 30, 20)
    names = [write_lines(tmp_path / f"ref{j:02d}", [row[j] for row in refs]) for j in range(20)]
    write_lines(tmp_path / "hyp", hyps)
    env = {**os.environ, "BEAMBLEU_DEBUG": "0"}
    conv = subprocess.run([sys.executable, "-m", "beambleu", "convert", *names, "-i", "hyp", "-o", "c.parquet"],
                          cwd=tmp_path, capture_output=True, env=env)
    assert conv.returncode == 0, conv.stderr.decode()
    proc = subprocess.run([sys.executable, "-m", "beambleu", "run", "--input", "c.parquet", "--metrics", "ter",
                           "--output", "r.json", "--progress", "off"], cwd=tmp_path, capture_output=True, env=env)
    assert proc.returncode == 0, proc.stderr.decode()
    doc = json.loads((tmp_path / "r.json").read_text())
    found = [s for s in _scores(doc) if s.get("name") == "TER"]
    assert found, doc
    theirs = SacreTER().corpus_score(hyps, to_streams(refs))
    words = sum(sum(len(r.split()) for r in row) for row in refs)
    for s in found:
        assert s["ref_length"] == float(Fraction(words, 20)) and s["ref_length_sum"] == "exact"
        assert s["num_edits"] == theirs.num_edits
        assert s["ref_lengths"] == [0] * 19 + [words] + [0] * 44
        assert s["score"] == 100 * theirs.num_edits / float(Fraction(words, 20))


def _scores(node):
    """Every JSON object of a result document that has a ``name`` and a ``score``."""
    if isinstance(node, dict):
        if "name" in node and "score" in node:
            yield node
        for v in node.values():
            yield from _scores(v)
    elif isinstance(node, list):
        for v in node:
            yield from _scores(v)


# ----------------------------------------------------------------------------- signatures


def _without_version(text: str) -> str:
    return text.rsplit("|", 1)[0]


@pytest.mark.parametrize("normalized,no_punct,asian_support,case_sensitive",
                         list(itertools.product([False, True], repeat=4)))
def test_ter_short_signatures(normalized, no_punct, asian_support, case_sensitive):
    opts = dict(normalized=normalized, no_punct=no_punct, asian_support=asian_support, case_sensitive=case_sensitive)
    hyps, refs = ["a b", "c"], [["a c", "a"], ["c", None]]
    theirs, ours = SacreTER(**opts), compat.TER(**opts)
    theirs.corpus_score(hyps, to_streams(refs))
    ours.corpus_score(hyps, to_streams(refs))
    for short in (True, False):
        a, b = ours.get_signature().format(short=short), theirs.get_signature().format(short=short)
        assert _without_version(a) == _without_version(b)
        assert a.endswith(("|v:" if short else "|version:") + BEAMBLEU_VERSION)
    want = (f"#:var|c:{'mixed' if case_sensitive else 'lc'}|t:tercom|nr:{'yes' if normalized else 'no'}"
            f"|pn:{'no' if no_punct else 'yes'}|as:{'yes' if asian_support else 'no'}")
    assert _without_version(ours.get_signature().format(short=True)) == want


@pytest.mark.parametrize("opts", [
    dict(), dict(lowercase=True), dict(tokenize="intl", smooth_method="floor", smooth_value=0.2),
    dict(tokenize="char", effective_order=True), dict(smooth_method="add-k"), dict(smooth_method="none"),
])
def test_bleu_short_signatures(opts):
    theirs, ours = SacreBLEU(**opts), compat.BLEU(**opts)
    for metric in (theirs, ours):
        metric.corpus_score(["a b c d"], [["a b c e"], ["a"]])
    for short in (True, False):
        assert _without_version(ours.get_signature().format(short=short)) == \
            _without_version(theirs.get_signature().format(short=short))


@pytest.mark.parametrize("opts", [
    dict(), dict(word_order=2), dict(char_order=4, beta=1, lowercase=True, whitespace=True),
    dict(eps_smoothing=True),
])
def test_chrf_short_signatures(opts):
    theirs, ours = SacreCHRF(**opts), compat.CHRF(**opts)
    for metric in (theirs, ours):
        metric.corpus_score(["a b c d"], [["a b c e"]])
    for short in (True, False):
        assert _without_version(ours.get_signature().format(short=short)) == \
            _without_version(theirs.get_signature().format(short=short))


def test_in_order_leaves_other_metrics_alone():
    metrics = MetricSet([Bleu(), Ter()])
    state = scoring.InOrder(metrics)
    hyps, refs = random_corpus(7, 20, 3)
    state.add(metrics.batch_stats(hyps, refs))
    assert state[0] is None and state[1] == SacreTER().corpus_score(hyps, to_streams(refs)).ref_length
    state.add(np.zeros((0, metrics.width), dtype=np.int64))  # nothing added: nothing changes
    assert state[1] == SacreTER().corpus_score(hyps, to_streams(refs)).ref_length

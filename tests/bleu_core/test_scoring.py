"""The score stage (bleu_core.scoring) and the formatters (bleu_core.formats): one implementation,
Beam-free, used by every surface; writers do not score.

Expected values are sacrebleu 2.6.0's (run here) or hand calculations written out in the test."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bleu_core import Bleu, Chrf, MetricSet, formats, scoring
from bleu_core.signature import parse_signature

ROOT = Path(__file__).resolve().parents[2]

#: the score stage and what it is made of: none may import Apache Beam
SCORE_STAGE = ["bleu_core/scoring.py", "bleu_core/formats.py", "bleu_core/signature.py", "bleu_core/sums.py",
               "bleu_core/resampling/counter.py", "bleu_core/protocol.py", "bleu_core/compat/__init__.py", "bleu_core/compat/metrics/base.py",
               "bleu_core/compat/significance.py", "pipeline/groups/results.py",
               "pipeline/groups/document.py", "pipeline/commands/score.py", "pipeline/commands/report.py"]
#: writers: they write what was scored, and import no scorer
WRITERS = ["pipeline/io/outputs.py", "pipeline/io/ownership.py", "pipeline/groups/document.py"]
SCORERS = ("bleu_core.scoring", "bleu_core.metrics.bleu.score", "bleu_core.metrics.bleu", "bleu_core.metrics.chrf",
           "bleu_core.protocol", "bleu_core.resampling.counter", "bleu_core.compat")


def _imports(path: str):
    """Every module a file imports (absolute names; ``pipeline/`` is the package beambleu, so ``from ..groups
    import x`` in pipeline/io/outputs.py is beambleu.groups.x)."""
    tree = ast.parse((ROOT / path).read_text())
    parts = path[:-len(".py")].split("/")
    package = ["beambleu" if parts[0] == "pipeline" else parts[0], *parts[1:-1]]  # the file's package
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[:len(package) - node.level + 1] + ([base] if base else []))
            names.add(base)
            names.update(f"{base}.{a.name}" for a in node.names)
    return names


@pytest.mark.parametrize("path", SCORE_STAGE)
def test_the_score_stage_does_not_import_beam(path):
    assert not [n for n in _imports(path) if n.split(".")[0] == "apache_beam"]


def test_the_score_stage_loads_without_beam_at_run_time():
    code = ("import sys; import bleu_core.scoring, bleu_core.formats, beambleu.groups.results, beambleu.groups.document, "
            "beambleu.commands.score, beambleu.commands.report; print('apache_beam' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


@pytest.mark.parametrize("path", WRITERS)
def test_writers_import_no_scorer(path):
    assert not [n for n in _imports(path) if n.startswith(SCORERS)]


def test_the_import_check_sees_imports():
    """The two checks above would pass on a file that imports nothing: this one shows they read real imports."""
    assert "apache_beam.io.filesystems.FileSystems" in _imports("pipeline/io/outputs.py")
    assert "bleu_core.scoring" in _imports("pipeline/groups/results.py")
    assert "beambleu.io.ownership" in _imports("pipeline/io/outputs.py")  # `from . import ownership`, resolved


# ----------------------------------------------------------------------------- signatures


def test_signature_of_each_resampling_in_sacrebleu_order():
    bleu = Bleu()
    assert scoring.signature(bleu, 2).format() == "nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:beambleu-0.1.0"
    boot = scoring.Resampling(scoring.BOOTSTRAP, 1000, 7, "7")
    assert scoring.signature(bleu, 1, boot).format() == \
        "nrefs:1|bs:1000|seed:7|case:mixed|eff:no|tok:13a|smooth:exp|version:beambleu-0.1.0"
    ar = scoring.Resampling(scoring.RANDOMIZATION, 10000, 12345, "none")
    assert scoring.signature(Chrf(), 1, ar).format(short=True) == \
        "#:1|ar:10000|rs:none|c:mixed|e:yes|nc:6|nw:0|s:no|v:beambleu-0.1.0"


def test_signature_fields_come_from_the_object_not_a_parse():
    sig = scoring.signature(Bleu(), "var")
    assert sig.fields() == {"nrefs": "var", "case": "mixed", "eff": "no", "tok": "13a", "smooth": "exp",
                            "version": "beambleu-0.1.0"}
    assert parse_signature(sig.format()) == sig.fields()
    score = scoring.score_metric(Bleu(), [5, 6, 5, 3, 2, 1, 5, 4, 3, 2], nrefs=1).score
    assert score.signature_object is not None and score.to_dict()["nrefs"] == "1"


# ----------------------------------------------------------------------------- results


def test_score_all_splits_the_totals_and_scores_each_metric_once():
    metrics = MetricSet([Bleu(max_ngram_order=1), Chrf(char_order=1, word_order=0)])
    # BLEU-1: c=4, r=5, matches=3, totals=4 -> p1 = 3/4, BP = exp(1 - 5/4); chrF-1: hyp=4, ref=5, match=3
    totals = np.array([4, 5, 3, 4, 4, 5, 3], dtype=np.int64)
    bleu, chrf = scoring.score_all(metrics, totals, nrefs={1})
    assert bleu.score.score == pytest.approx(100 * np.exp(1 - 5 / 4) * 0.75, rel=1e-12)
    p, r = 3 / 4, 3 / 5
    assert chrf.score.score == pytest.approx(100 * (1 + 4) * p * r / (4 * p + r), rel=1e-12)
    assert bleu.interval is None and bleu.signature.format().startswith("nrefs:1|")


class _Ratio:
    """A metric whose score is 100 * statistic 0 / statistic 1 (exact in floating point here)."""

    class _Score:
        def __init__(self, score):
            self.score = score

        def sign(self, signature):
            assert signature is None  # no reference count given: no signature
            return self

    def score(self, totals):
        return self._Score(100 * int(totals[0]) / int(totals[1]))


def test_intervals_and_the_paired_bootstrap_from_replicates():
    boot = scoring.Resampling(scoring.BOOTSTRAP, 3)
    reps = np.array([[2, 4], [4, 4], [3, 4]])  # replicate scores 50, 100, 75
    sys_ = scoring.score_metric(_Ratio(), [3, 4], None, reps, boot)
    assert sys_.replicate_scores == [50.0, 100.0, 75.0]
    # sacrebleu's interval: sorted [50, 75, 100], index n // 40 = 0 and n - 0 - 1 = 2
    assert (sys_.interval.mean, sys_.interval.low, sys_.interval.high, sys_.interval.half_width) == (75, 50, 100, 25)
    base = scoring.score_metric(_Ratio(), [2, 4], None, np.array([[2, 4]] * 3), boot)
    paired = scoring.paired_test(sys_, base)
    # |replicate differences| 0, 50, 25 centred on their mean 25: -25, 25, 0; observed |75 - 50| = 25;
    # centred differences >= 25: one -> p = (1 + 1) / (3 + 1)
    assert paired.p_value == (1 + 1) / (3 + 1) and paired.difference == 25 and not paired.significant


def test_the_randomization_test_from_swapped_totals():
    ar = scoring.Resampling(scoring.RANDOMIZATION, 2)
    # baseline rows [1, 2], [1, 2]; system rows [2, 2], [2, 2]; trial 0 swaps row 0, trial 1 swaps nothing
    base = scoring.score_metric(_Ratio(), [2, 4], None, np.array([[1, 2], [0, 0]]), ar)
    system = scoring.score_metric(_Ratio(), [4, 4], None, np.array([[2, 2], [0, 0]]), ar)
    # trial 0: A = [1, 2] + ([4, 4] - [2, 2]) = 75, B = ([2, 4] - [1, 2]) + [2, 2] = 75 -> 0;
    # trial 1: A = [0, 0] + [4, 4] = 100, B = [2, 4] + [0, 0] = 50 -> 50
    # observed |100 - 50| = 50; trials >= 50: 1 -> p = (1 + 1) / (2 + 1)
    assert scoring.paired_test(system, base).p_value == 2 / 3


def test_a_paired_test_needs_both_systems_resampled():
    m = Bleu(max_ngram_order=1)
    plain = scoring.score_metric(m, [4, 4, 3, 4], 1)
    with pytest.raises(ValueError, match="needs both systems resampled"):
        scoring.paired_test(plain, plain)


def test_a_replicate_block_of_the_wrong_size_is_refused():
    with pytest.raises(ValueError, match="holds 2 replicates, expected 3"):
        scoring.score_metric(Bleu(max_ngram_order=1), [4, 4, 3, 4], 1, np.zeros((2, 4), np.int64),
                             scoring.Resampling(scoring.BOOTSTRAP, 3))


def test_add_is_checked():
    total = np.array([2**62, 1], dtype=np.int64)
    scoring.add(total, np.array([2**62 - 1, 1]))
    assert total.tolist() == [2**63 - 1, 2]
    with pytest.raises(OverflowError, match="overflows int64"):
        scoring.add(total, np.array([1, 0]))
    assert total.tolist() == [2**63 - 1, 2]  # restored


# ----------------------------------------------------------------------------- formats against sacrebleu


def _sacrebleu_score(mean=None, ci=None):
    from sacrebleu.metrics.bleu import BLEUScore

    s = BLEUScore(57.893006746741, [5, 3, 2, 1], [5, 4, 3, 2], [100.0, 75.0, 66.66666666666667, 50.0],
                  0.8187307530779819, 5, 6)
    if mean is not None:
        s._mean, s._ci = mean, ci
    return s


@pytest.mark.parametrize("mean,ci", [(None, None), (57.1, 3.25), (0.0, 0.0)])
@pytest.mark.parametrize("width", [1, 2, 4])
def test_formats_are_sacrebleus(mean, ci, width):
    sig = "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0"
    theirs = _sacrebleu_score(mean, ci)
    interval = None if mean is None else scoring.Interval(mean, 0.0, 0.0, ci)
    verbose = theirs._verbose
    assert formats.score_line("BLEU", theirs.score, width, sig, interval, verbose) == theirs.format(width, False, sig)
    assert formats.score_text(theirs.score, width, interval) == theirs.format(width, True, sig)
    assert formats.sacrebleu_json("BLEU", theirs.score, sig, width, interval, verbose) == \
        theirs.format(width, False, sig, is_json=True)


def test_a_zero_mean_interval_is_not_shown_as_in_sacrebleu():
    assert formats.score_text(0.0, 1, scoring.Interval(0.0, 0.0, 0.0, 0.0)) == "0.0"
    assert formats.score_text(0.0, 1, scoring.Interval(0.5, 0.0, 1.0, 0.5)) == "0.0 (μ = 0.5 ± 0.5)"


def test_with_stats_extra_fields_follow_sacrebleus_and_never_replace_them():
    text = formats.sacrebleu_json("BLEU", 57.89, "nrefs:1|version:x", 1, extra={"score": 1, "score_exact": 57.89,
                                                                                  "nrefs": "2", "counts": [1]})
    d = json.loads(text)
    assert list(d) == ["name", "score", "signature", "nrefs", "version", "score_exact", "counts"]
    assert d["score"] == 57.9 and d["nrefs"] == "1"

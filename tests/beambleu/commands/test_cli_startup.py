"""`beambleu score` starts light (issue 34): scoring text files imports what the job needs and no more.

Checked by the modules a run leaves in ``sys.modules`` (a tiny wrapper around ``beambleu.cli.main`` in a
subprocess), never by timing; the speed itself is ``python -m benchmarks.startup``'s. The output is still
sacrebleu's, byte for byte (the signature's version aside).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ...cli_parity import BEAMBLEU_VERSION, SACREBLEU_VERSION, normalise_version
from ...oracle import REPO

SAMPLE = REPO / "examples" / "sample"
REF, REF_B, HYP, HYP_B = (str(SAMPLE / name) for name in ("ref.A.txt", "ref.B.txt", "sys.alpha.txt", "sys.beta.txt"))

# runs `beambleu ARGS...` in this process and prints, after its output, the modules it loaded
_WRAPPER = """
import json, sys
from beambleu.cli import main
rc = main(sys.argv[2:])
sys.stdout.flush()
with open(sys.argv[1], "w") as f:
    json.dump(sorted(sys.modules), f)
sys.exit(rc)
"""

#: what a plain run must not import: the pipeline's and the commands it does not run
NEVER = ("pandas", "apache_beam", "importlib.metadata", "beambleu.commands.report", "beambleu.commands.convert",
         "beambleu.commands.run", "beambleu.commands.stderr_filter")


def _env():
    env = {k: v for k, v in os.environ.items() if k not in ("SACREBLEU_FORMAT", "NO_COLOR", "BEAMBLEU_DEBUG")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


def loaded(tmp_path, *args, env=None):
    """(CompletedProcess of ``beambleu ARGS``, the modules it had loaded when it ended); ``env``: more
    environment variables."""
    listing = tmp_path / "modules.json"
    proc = subprocess.run([sys.executable, "-c", _WRAPPER, str(listing), *args], capture_output=True, text=True,
                          env={**_env(), **(env or {})}, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return proc, set(json.loads(listing.read_text()))


def sacrebleu(tmp_path, *args):
    proc = subprocess.run([sys.executable, "-m", "sacrebleu", *args], capture_output=True, text=True, env=_env(),
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def same(ours: str, theirs: str) -> bool:
    return normalise_version(ours, BEAMBLEU_VERSION) == normalise_version(theirs, SACREBLEU_VERSION)


def _imported(modules: set, name: str) -> bool:
    return any(m == name or m.startswith(name + ".") for m in modules)


@pytest.mark.parametrize("args", [["-m", "bleu"], ["-m", "bleu", "chrf", "-f", "text"],
                                  ["-m", "chrf", "--chrf-word-order", "2", "-b"]])
def test_plain_score_imports_no_pandas_and_prints_sacrebleus_bytes(tmp_path, args):
    proc, modules = loaded(tmp_path, "score", REF, "-i", HYP, *args)
    assert same(proc.stdout, sacrebleu(tmp_path, REF, "-i", HYP, *args))
    assert [m for m in NEVER if _imported(modules, m)] == []


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_several_systems_import_no_pandas(tmp_path, fmt):
    proc, modules = loaded(tmp_path, "score", REF, "-i", HYP, HYP_B, "-m", "bleu", "chrf", "-f", fmt)
    assert same(proc.stdout, sacrebleu(tmp_path, REF, "-i", HYP, HYP_B, "-m", "bleu", "chrf", "-f", fmt))
    # the text table is tabulate's, which reads its own version with importlib.metadata (as under sacrebleu)
    never = NEVER if fmt == "json" else [m for m in NEVER if m != "importlib.metadata"]
    assert [m for m in never if _imported(modules, m)] == []


# pyarrow: the kernels read buffers made from the lines (bleu_core/kernels/buffers.py), every metric's (TER's too),
# for one system or several (MetricSet.batch_stats_many keeps lists as lists), in every output form
@pytest.mark.parametrize("args", [["-m", "bleu", "chrf", "ter"], ["-m", "bleu", "chrf", "ter", "-f", "text", "-b"],
                                  ["-m", "ter", "chrf", "--width", "4", "-f", "text"],
                                  ["-m", "chrf", "--chrf-word-order", "2", "--sentence-level"],
                                  ["-m", "ter", "-sl"], ["-i", HYP, HYP_B, "-m", "bleu", "chrf", "ter"],
                                  ["-i", HYP, HYP_B, "-m", "bleu", "chrf", "-f", "json"]])
def test_plain_score_imports_no_pyarrow(tmp_path, args):
    inputs = [] if "-i" in args else ["-i", HYP]
    proc, modules = loaded(tmp_path, "score", REF, *inputs, *args)
    assert same(proc.stdout, sacrebleu(tmp_path, REF, *inputs, *args))
    assert not _imported(modules, "pyarrow")


def test_pyarrow_check_sees_an_import(tmp_path):
    """The check above sees pyarrow when a run does import it: the reference paths
    (``BEAMBLEU_KERNELS=python``) take the lines through Arrow."""
    _, modules = loaded(tmp_path, "score", REF, "-i", HYP, "-m", "bleu", "chrf", "ter",
                        env={"BEAMBLEU_KERNELS": "python"})
    assert _imported(modules, "pyarrow")


# numpy: a job that draws nothing holds its statistics as Python ints, from the kernels' buffers to the score
# (MetricSet.batch_stats_lists, bleu_core/sums.py's integer sums); the parser's resampling checks are numpy-free
# (bleu_core/resampling/seeds.py): every metric, one system or the table, one reference or several, each output form
@pytest.mark.parametrize("args", [[], ["-m", "bleu", "chrf", "ter"], ["-m", "bleu", "chrf", "ter", "-f", "text", "-b"],
                                  ["-m", "ter", "chrf", "--width", "4", "-f", "text"],
                                  ["-m", "chrf", "--chrf-word-order", "2", "--sentence-level"], ["-m", "ter", "-sl"],
                                  ["-sl", "-w", "3"], ["-i", HYP, HYP_B, "-m", "bleu", "chrf", "ter"],
                                  ["-i", HYP, HYP_B, "-m", "bleu", "chrf", "-f", "json"],
                                  ["-i", HYP, HYP_B, "-m", "chrf", "bleu", "-f", "text", "--width", "3"]])
@pytest.mark.parametrize("refs", [[REF], [REF, REF_B]])
def test_plain_score_imports_no_numpy(tmp_path, args, refs):
    inputs = [] if "-i" in args else ["-i", HYP]
    proc, modules = loaded(tmp_path, "score", *refs, *inputs, *args)
    assert same(proc.stdout, sacrebleu(tmp_path, *refs, *inputs, *args))
    assert not _imported(modules, "numpy")


# typing (its import alone is some 12M instructions, 3-4% of `score -tok intl` on 2,000 lines), dataclasses and
# inspect (with the data classes made, about a quarter of that run's CPU), gzip and signal: the modules on score's
# path take typing's names under TYPE_CHECKING only, its data classes are bleu_core.records', gzip is imported for
# a .gz file and signal where a handler is installed (`run`); TER's reference path and score object load only when TER is scored
# (intl and zh: the test below, once their table is kept)
@pytest.mark.parametrize("args", [["-m", "bleu"], ["-lc", "-f", "text"], ["-m", "chrf", "-f", "text"],
                                  ["-m", "bleu", "chrf", "ter", "-f", "text"], ["-i", HYP, HYP_B, "-m", "bleu", "chrf"]])
def test_plain_score_imports_no_typing_dataclasses_gzip_or_signal(tmp_path, args):
    inputs = [] if "-i" in args else ["-i", HYP]
    proc, modules = loaded(tmp_path, "score", REF, *inputs, *args)
    assert same(proc.stdout, sacrebleu(tmp_path, REF, *inputs, *args))
    never = ["typing", "dataclasses", "inspect", "gzip", "signal"]
    if "ter" not in args:
        never += ["bleu_core.metrics.ter.reference", "bleu_core.metrics.ter.score"]
    assert [m for m in never if m in modules] == []


def test_a_gzipped_file_still_imports_gzip(tmp_path):
    """The check above sees gzip when a file is gzipped (and the score is still sacrebleu's)."""
    import gzip

    gz = tmp_path / "ref.txt.gz"
    with open(REF, "rb") as src, gzip.open(gz, "wb") as dst:
        dst.write(src.read())
    proc, modules = loaded(tmp_path, "score", str(gz), "-i", HYP, "-m", "bleu")
    assert same(proc.stdout, sacrebleu(tmp_path, REF, "-i", HYP, "-m", "bleu"))
    assert "gzip" in modules


@pytest.mark.parametrize("args", [["-m", "bleu", "--confidence", "--confidence-n", "50", "-f", "text"],
                                  ["-i", HYP, HYP_B, "-m", "bleu", "chrf", "--paired-bs", "--paired-bs-n", "50",
                                   "-f", "text"],
                                  ["-i", HYP, HYP_B, "-m", "chrf", "--paired-ar", "--paired-ar-n", "50", "-f", "text"]])
def test_confidence_still_works(tmp_path, args):
    """What resampling needs is imported when it is asked for (and the check above sees it)."""
    inputs = [] if "-i" in args else ["-i", HYP]
    proc, modules = loaded(tmp_path, "score", REF, *inputs, *args)
    assert same(proc.stdout, sacrebleu(tmp_path, REF, *inputs, *args))
    assert _imported(modules, "numpy")


# intl and zh read the Unicode flag table kept in the cache folder (bleu_core/tokenizers/_unicode.py): the first
# run computes and keeps it, later runs import neither regex nor numpy; a BLEU run loads no other metric's kernel
_UNICODE_LINES = ["\u00abDas kostet 3,5 \u20ac\u00bb, sagte er \u2014 (ungef\u00e4hr) \u00a7 12!",
                  "\u4eca\u5929\u5929\u6c14\u5f88\u597d\u3002\u6211\u4eec\u53bb\u516c\u56ed\u5427\uff01",
                  "\u0395\u039b\u039b\u0391\u03a3, \u03c3\u03bf\u03c6\u03af\u03b1\u00b7 \u0661\u0662\u0663 + \u00bd",
                  "ASCII: a-b, c.d; e/f 10.5% #tag @me"]


@pytest.mark.parametrize("tokenize", ["intl", "zh"])
@pytest.mark.parametrize("lower", [[], ["-lc"]])
def test_intl_and_zh_read_the_kept_flag_table(tmp_path, tokenize, lower):
    ref, hyp = tmp_path / "ref", tmp_path / "hyp"
    ref.write_text("\n".join(_UNICODE_LINES) + "\n", encoding="utf-8")
    hyp.write_text("\n".join(line[::-1] if i % 2 else line.upper() for i, line in enumerate(_UNICODE_LINES)) + "\n",
                   encoding="utf-8")
    args = ["score", str(ref), "-i", str(hyp), "-tok", tokenize, *lower, "-m", "bleu"]
    expected = sacrebleu(tmp_path, *args[1:])
    env = {"BEAMBLEU_CACHE_DIR": str(tmp_path / "cache")}
    first, _ = loaded(tmp_path, *args, env=env)
    assert same(first.stdout, expected)
    assert list((tmp_path / "cache" / "unicode").glob("flags-*.bin"))
    later, modules = loaded(tmp_path, *args, env=env)
    assert same(later.stdout, expected)
    assert [m for m in ("regex", "numpy", "bleu_core.metrics.chrf._chrf", "bleu_core.metrics.ter._ter", "typing",
                        "gzip") if _imported(modules, m)] == []


# ----------------------------------------------------------------------------- a file named `-`

@pytest.mark.parametrize("args", [["ref", "-i", "-"], ["-", "-i", "hyp"], ["-", "-i", "-"], ["ref", "-i", "hyp", "-"],
                                  ["-", "-i", "-", "hyp", "--paired-bs", "--paired-bs-n", "100", "-f", "text"],
                                  ["-", "-i", "hyp", "-m", "chrf", "ter"]])
def test_a_file_named_dash_is_read_as_sacrebleu_reads_it(tmp_path, args):
    """sacrebleu opens a reference or -i file named `-` (./-); standard input is read only without -i."""
    lines = (SAMPLE / "sys.alpha.txt").read_text().splitlines(keepends=True)
    (tmp_path / "-").write_text("".join(lines[:12]))
    (tmp_path / "ref").write_text("".join((SAMPLE / "ref.A.txt").read_text().splitlines(keepends=True)[:12]))
    (tmp_path / "hyp").write_text("".join((SAMPLE / "sys.beta.txt").read_text().splitlines(keepends=True)[:12]))
    stdin = (tmp_path / "ref").read_text()  # what neither program may read
    ours = subprocess.run([sys.executable, "-m", "beambleu", "score", *args], capture_output=True, text=True,
                          input=stdin, env=_env(), cwd=tmp_path)
    theirs = subprocess.run([sys.executable, "-m", "sacrebleu", *args], capture_output=True, text=True, input=stdin,
                            env=_env(), cwd=tmp_path)
    assert ours.returncode == theirs.returncode == 0, ours.stderr
    assert same(ours.stdout, theirs.stdout)

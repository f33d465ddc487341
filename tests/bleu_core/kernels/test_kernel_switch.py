"""``BEAMBLEU_KERNELS=python`` (bleu_core.kernels): every built-in metric's batch_stats and
batch_stats_many run its reference path (scalar_stats), with the compiled kernels' numbers and
errors. Each case runs in a fresh interpreter, since the switch is read once, at import."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

# Runs in a subprocess: optionally poisons the compiled kernels (any use of one raises KernelCalled,
# a BaseException no `except Exception` of the batch paths can swallow), then prints the statistics
# and errors of every metric on hand-made pairs, as JSON.
SCRIPT = textwrap.dedent(r'''
    import json, sys, types

    class KernelCalled(BaseException):
        pass

    class Poisoned(types.ModuleType):
        def __getattr__(self, name):
            if name.startswith("__"):
                raise AttributeError(name)
            raise KernelCalled(f"{self.__name__}.{name} was used")

    if sys.argv[1] == "poison":
        for name in ("bleu_core.metrics.bleu._bleu", "bleu_core.metrics.chrf._chrf", "bleu_core.metrics.ter._ter"):
            sys.modules[name] = Poisoned(name)

    import numpy as np
    import pyarrow as pa
    import bleu_core.kernels
    from bleu_core import Bleu
    from bleu_core.metrics.chrf import Chrf
    from bleu_core.metrics.ter import Ter
    from bleu_core.protocol import MetricSet, batch_stats_shared

    CANDS = ["The cat sat on the mat.", "", "Hello, World!  It's 1,000 e-mails.",
             "猫が好きです。中文，你好",
             "ΣΑΣ ὀδυσσεύς straße İstanbul", "a a a a b b"]
    REFS = [["The cat is on the mat.", None, "A cat sat on a mat"], ["nothing here"],
            [None, "hello world! it is 1.000 emails"], ["我喜欢猫。", "猫が好き"],
            ["σας Οδυσσεύς strasse istanbul", ""], ["a b a b", "b b a a a", "a"]]
    METRICS = [Bleu(), Bleu(tokenize="intl", lowercase=True), Bleu(tokenize="zh"),
               Bleu(tokenize="char", max_ngram_order=2), Bleu(tokenize="none", max_ngram_order=6),
               Chrf(), Chrf(word_order=2, lowercase=True, whitespace=True),
               Chrf(char_order=3, beta=1, eps_smoothing=True),
               Ter(), Ter(normalized=True, no_punct=True, asian_support=True, case_sensitive=True)]
    BAD = [(["a", None, "c"], [["a"], ["b"], ["c"]]),
           (["a", "b", "c"], [["a"], ["b", None], [None, None]]),
           (["a", "b"], pa.array([["a"], None], pa.list_(pa.string()))),
           (["a", "b"], [["a"], ["r"] * 65]),
           (pa.Array.from_buffers(pa.string(), 2, [None, pa.py_buffer(np.array([0, 1, 3], np.int32).tobytes()),
                                                    pa.py_buffer(b"a\xff\xfe")]), [["a"], ["b"]]),
           (["a", "b"], [["a"]])]

    def error(call):
        try:
            call()
        except Exception as exc:
            return [type(exc).__name__, str(exc), getattr(exc, "row", None)]
        return None

    arrow_cands = pa.chunked_array([pa.array(CANDS[:2], pa.string()), pa.array(CANDS[2:], pa.string())])
    arrow_refs = pa.array(REFS, pa.large_list(pa.large_string()))
    out = {"kernels": bleu_core.kernels.KERNELS, "reference": bleu_core.kernels.use_reference(), "metrics": []}
    for m in METRICS:
        out["metrics"].append({
            "rows": m.batch_stats(CANDS, REFS).tolist(),
            "arrow": m.batch_stats(arrow_cands, arrow_refs).tolist(),
            "sums": m.batch_stats(arrow_cands, arrow_refs, per_row=False).tolist(),
            "many": [x.tolist() for x in m.batch_stats_many([CANDS, CANDS[::-1], [""] * len(CANDS)], REFS)],
            "many_sums": [x.tolist() for x in m.batch_stats_many([CANDS, CANDS[::-1]], arrow_refs, per_row=False)],
            "errors": [error(lambda: m.batch_stats(c, r)) for c, r in BAD]
                      + [error(lambda: m.batch_stats_many([["a", "b", "c"], ["a", None, "c"]], [["a"], ["b"], ["c"]]))],
        })
    both = MetricSet([METRICS[0], METRICS[6], METRICS[9]])
    out["set"] = both.batch_stats(arrow_cands, arrow_refs).tolist()
    out["shared"] = batch_stats_shared(both, CANDS * 3, REFS * 3).tolist()
    print(json.dumps(out))
''')


def run(kernels, poison, *extra):
    env = {**os.environ, "BEAMBLEU_KERNELS": kernels}
    return subprocess.run([sys.executable, "-c", SCRIPT, "poison" if poison else "plain", *extra], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def compiled():
    """What the compiled kernels give (BEAMBLEU_KERNELS=c, kernels untouched)."""
    proc = run("c", poison=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_the_reference_paths_give_the_kernels_numbers_and_errors_without_calling_a_kernel(compiled):
    proc = run("python", poison=True)
    assert proc.returncode == 0, proc.stderr  # a poisoned kernel used raises KernelCalled: a traceback here
    got = json.loads(proc.stdout)
    assert (got["kernels"], got["reference"]) == ("python", True)
    assert (compiled["kernels"], compiled["reference"]) == ("c", False)
    for theirs, ours in zip(compiled["metrics"], got["metrics"]):
        assert ours == theirs
    assert got["set"] == compiled["set"]
    assert got["shared"] == compiled["shared"]
    # the cases are what they claim to be: numbers, and each bad batch refused naming its row
    rows = compiled["metrics"][0]["rows"]
    assert len(rows) == 6 and rows[0][:2] == [7, 7] and any(any(r) for r in rows)
    errors = compiled["metrics"][-1]["errors"]
    assert [e[0] for e in errors] == ["BatchInputError"] * 5 + ["ValueError", "BatchInputError"]
    assert errors[0][1] == "row 1, candidate: candidate is null"
    assert errors[1][1] == "row 2, references: no reference (all references are missing)"
    assert errors[2][1] == "row 1, references: the reference list is null"
    assert errors[3][1] == "row 1, references[64]: more than 64 references (TER's statistics hold at most 64 per pair)"
    assert errors[4][1] == "row 1, candidate: invalid UTF-8"
    assert errors[-1][1] == "row 1, candidate: candidate is null"


def test_the_poison_is_felt_by_the_compiled_path():
    """The control: with the compiled kernels switched on, the same poisoned run fails (so the
    test above would fail if the python switch still reached a kernel)."""
    proc = run("c", poison=True)
    assert proc.returncode != 0
    assert "KernelCalled" in proc.stderr and "was used" in proc.stderr


@pytest.mark.parametrize("value", ["fortran", "C", "py", "python "])
def test_an_invalid_value_is_a_one_line_error_at_import(value):
    env = {**os.environ, "BEAMBLEU_KERNELS": value}
    proc = subprocess.run([sys.executable, "-c", "from bleu_core import Bleu"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert last == (f"ValueError: BEAMBLEU_KERNELS={value!r} is not a choice: use 'c' (the compiled kernels, the "
                    f"default) or 'python' (every metric's readable reference path)")


@pytest.mark.parametrize("value, kernels", [(None, "c"), ("", "c"), ("c", "c"), ("python", "python")])
def test_the_valid_values(value, kernels):
    env = {k: v for k, v in os.environ.items() if k != "BEAMBLEU_KERNELS"}
    if value is not None:
        env["BEAMBLEU_KERNELS"] = value
    code = "import bleu_core.kernels as k; print(k.KERNELS, k.use_reference(), 'KERNELS' in k.__all__)"
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [kernels, str(kernels == "python"), "True"]


@pytest.mark.parametrize("value, line", [("python", "beambleu kernels: python"), ("c", "beambleu kernels: c")])
def test_the_pytest_header_says_which_kernels_ran(value, line):
    env = {**os.environ, "BEAMBLEU_KERNELS": value}
    proc = subprocess.run([sys.executable, "-m", "pytest", "--co", "-p", "no:cacheprovider",
                           "tests/bleu_core/kernels/test_kernel_switch.py::test_the_valid_values"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert any(x.startswith(line) for x in proc.stdout.splitlines()), proc.stdout


def test_pytest_refuses_an_invalid_value_in_one_line():
    env = {**os.environ, "BEAMBLEU_KERNELS": "fortran"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "--co", "-q", "-p", "no:cacheprovider",
                           "tests/bleu_core/kernels/test_kernel_switch.py::test_the_valid_values"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 4  # pytest's usage error
    assert "BEAMBLEU_KERNELS='fortran' is not a choice" in proc.stderr
    assert "Traceback" not in proc.stderr

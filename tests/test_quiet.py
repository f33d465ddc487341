"""Beam's import-time chatter stays off a program that uses beambleu as a library, and off the
engine scripts: without the gcp extra (here: apitools made unimportable by a sitecustomize on
PYTHONPATH), importing Apache Beam logs "apitools not found ..." on the root logger. Importing
beambleu's transforms and running ComputeMetrics in one's own pipeline prints nothing on stderr,
and `deploy/engines.py` (which `deploy/prism/prism.sh` runs) does not import Beam at all. The
program's own logging still shows."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("apache_beam")

REPO = Path(__file__).resolve().parents[1]
CHATTER = "apitools not found"


def python(tmp_path, code: str, *args: str, cwd=None) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter where apitools cannot be imported (as without the gcp extra)."""
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text("import sys\nsys.modules['apitools'] = None  # as without the gcp extra\n")
    paths = [str(site), *([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True,
                          env=env, cwd=cwd or tmp_path, timeout=300)


def test_the_chatter_is_there_to_drop(tmp_path):
    """Without beambleu, importing Beam says it: what the other tests show gone is really there."""
    proc = python(tmp_path, "import apache_beam")
    assert proc.returncode == 0, proc.stderr
    assert CHATTER in proc.stderr


def test_a_users_pipeline_with_compute_metrics_prints_nothing(tmp_path):
    proc = python(tmp_path, """
        import sys
        import beambleu.transforms as bt
        import apache_beam as beam
        import pyarrow as pa
        from bleu_core.metrics.bleu.metric import Bleu

        batch = pa.record_batch({"candidate": ["the cat sat"], "references": [["the cat sat"]]})
        with beam.Pipeline() as p:
            _ = (p | beam.Create([batch]) | bt.ComputeMetrics([Bleu()])
                 | beam.Map(lambda kv: print("key", kv[0])))
        """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "key (-1, 0)\n"
    assert proc.stderr == ""


def test_the_programs_own_logging_still_shows(tmp_path):
    proc = python(tmp_path, """
        import logging
        import beambleu
        beambleu.Score  # beambleu's component: imports beambleu.beam.component, and Beam
        logging.warning("the program's own warning")
        logging.getLogger("mine").error("and its error")
        """)
    assert proc.returncode == 0, proc.stderr
    assert CHATTER not in proc.stderr
    assert "the program's own warning" in proc.stderr and "and its error" in proc.stderr


def test_the_engine_scripts_do_not_import_beam(tmp_path):
    proc = python(tmp_path, f"""
        import runpy, sys
        sys.argv = ["deploy/engines.py", "versions"]
        try:
            runpy.run_path({str(REPO / "deploy" / "engines.py")!r}, run_name="__main__")
        except SystemExit as exc:
            assert not exc.code, exc.code
        print("beam imported:", "apache_beam" in sys.modules)
        """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].startswith("prism\tbeam ")
    assert proc.stdout.splitlines()[-1] == "beam imported: False"
    assert proc.stderr == ""


def test_prism_sh_start_says_only_where_prism_listens(tmp_path):
    from .engines import fetch_or_skip

    fetch_or_skip("prism")
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import sys\nsys.modules['apitools'] = None\n")
    env = {**os.environ, "PYTHONPATH": str(site), "PYTHON": sys.executable}
    script, state = str(REPO / "deploy" / "prism" / "prism.sh"), str(tmp_path / "state")
    start = subprocess.run([script, "start", "--state", state], capture_output=True, text=True, env=env, timeout=120)
    try:
        assert start.returncode == 0, start.stderr
        assert start.stderr == ""
        assert start.stdout.startswith("prism listening on localhost:"), start.stdout
    finally:
        stop = subprocess.run([script, "stop", "--state", state], capture_output=True, text=True, env=env, timeout=60)
    assert stop.returncode == 0 and stop.stderr == "", stop.stderr

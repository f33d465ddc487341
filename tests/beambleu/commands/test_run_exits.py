"""`beambleu run --runner dask` without a cluster address (the DaskRunner starts a local cluster)
exits once its outputs are written, with the local runner's result. It used to print its result
and then hang: the local cluster starts multiprocessing's resource tracker, which inherited the
stderr filter's pipe and kept it open, so the filter waited for an end of file that came only when
the command itself exited (and closing the pipe's reader waited on the reading thread's lock).
The command runs in a fresh process, as a user runs it: there the tracker starts during the run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("apache_beam")
pytest.importorskip("distributed")

REPO = Path(__file__).resolve().parents[3]
SHARDS = str(REPO / "examples" / "sample" / "shards" / "*.parquet")


def _run(tmp_path: Path, name: str, *extra: str) -> subprocess.CompletedProcess:
    out = tmp_path / f"{name}.json"
    cmd = [sys.executable, "-m", "beambleu", "run", "--input", SHARDS, "--group-by", "system", "--output", str(out),
           *extra]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=240, cwd=tmp_path)


def test_dask_local_cluster_run_exits_with_the_local_result(tmp_path):
    local = _run(tmp_path, "local")
    assert local.returncode == 0, local.stderr
    dask = _run(tmp_path, "dask", "--runner", "dask")  # (a hang fails here: TimeoutExpired after 240 s)
    assert dask.returncode == 0, dask.stderr
    assert "Traceback" not in dask.stderr
    a, b = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("local", "dask"))
    assert a["corpus"] == b["corpus"] and a["grouping_sets"] == b["grouping_sets"]
    assert dask.stdout == local.stdout

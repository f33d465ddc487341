"""Beam's Prism runner, built here from the Go module at the installed apache-beam's version
(`python deploy/engines.py fetch prism`), started once for this module (`start prism`) with an
external SDK worker pool, and also started by Beam itself (`--runner PrismRunner --prism_location`).
Every output is the local runner's, byte for byte (tests/engine_parity.py). The faults: a binary
that cannot start, an SDK worker killed mid-job, and a bad row; a failed run is one ``beambleu:
error:`` line, a non-zero exit and no output at all."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("apache_beam")

from ...engine_parity import BUSY, CASES, REAL_FOLDER, assert_engine_matches_local, real_available  # noqa: E402
from ...engines import (assert_failed_cleanly, beambleu_subprocess, engine_service, fetch_or_skip,  # noqa: E402
    killing_a_busy_worker)
from ...pipeline_helpers import corpus_rows, run_cli, write_shards  # noqa: E402


@pytest.fixture(scope="module")
def prism(tmp_path_factory):
    binary = fetch_or_skip("prism")
    state = tmp_path_factory.mktemp("prism")
    with engine_service("prism", state) as job, engine_service("worker-pool", state) as pool:
        yield {"binary": binary, "job": job, "pool": pool, "state": state}


def prism_options(prism, pool=None):
    pool = pool or prism["pool"]
    return ["--runner", "PrismRunner", f"--job_endpoint=localhost:{prism['job']['port']}",
            "--environment_type=EXTERNAL", f"--environment_config=localhost:{pool['port']}"]


def logs(prism):
    return lambda: "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}"
                             for p in sorted(prism["state"].glob("*.log")))


@pytest.mark.parametrize("name", list(CASES))
def test_prism_equals_local_runner(engine_inputs, prism, name, tmp_path):
    case = CASES[name]
    if case.data == "real" and not real_available():
        pytest.skip("shared corpora not present")
    assert_engine_matches_local(engine_inputs, case, prism_options(prism), tmp_path / "out", logs=logs(prism))


def test_prism_runner_started_by_beam(engine_inputs, prism, tmp_path):
    """The user's command: Beam starts the Prism binary itself and runs the workers in process."""
    assert_engine_matches_local(engine_inputs, CASES["sample-confidence"],
                                ["--runner", "PrismRunner", f"--prism_location={prism['binary']}",
                                 "--environment_type=LOOPBACK"], tmp_path / "out")


def test_prism_binary_that_cannot_start_is_one_line(engine_inputs, tmp_path):
    """A --prism_location that is not a program: one line, exit 1, no output, in bounded time."""
    bad = tmp_path / "prism"
    bad.write_text("not a program\n")
    out = tmp_path / "r.json"
    proc = beambleu_subprocess(["run", "--input", engine_inputs.glob("sample"), "--output", out,
                                "--runner", "PrismRunner", f"--prism_location={bad}"], timeout=120)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("beambleu: error: "), proc.stderr
    assert "Traceback" not in proc.stderr
    assert not out.exists()


def test_prism_bad_row_leaves_no_output(prism, tmp_path):
    """A row with a null candidate fails the job on Prism: one line naming the row, exit 1, and
    none of --output, --groups-output, --sentence-output is left behind."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"candidate": ["fine", None, "x"], "references": [["fine"], ["fine"], ["x"]],
                      "system": ["a", "a", "b"]})
    pq.write_table(table, tmp_path / "bad.parquet")
    outs = [tmp_path / "out.json", tmp_path / "groups.csv", tmp_path / "pairs"]
    proc = beambleu_subprocess(["run", "--input", tmp_path / "bad.parquet", "--group-by", "system",
                                "--output", outs[0], "--groups-output", outs[1], "--sentence-output", outs[2],
                                "--progress", "off", *prism_options(prism)], timeout=300)
    line = assert_failed_cleanly(proc, outs)
    assert proc.returncode == 1, proc.stderr
    assert "bad.parquet: row 1, column 'candidate': candidate is null" in line, proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.parquet"], list(tmp_path.iterdir())


@pytest.mark.skipif(not real_available(), reason="shared corpora not present")
def test_prism_sdk_worker_killed_mid_job(prism, tmp_path):
    """SIGKILL the Python SDK worker that a worker pool of its own started for a Prism job, once it
    is busy: the run gives the local runner's bytes or fails cleanly (one line, non-zero, no
    output); it never exits 0 with another number, and it ends in bounded time."""
    rows = corpus_rows([REAL_FOLDER])
    big = [dict(r, line=r["line"] + 100_000 * k) for k in range(8) for r in rows]  # about 143k pairs
    glob = write_shards(big, tmp_path / "big", n_shards=4, row_group_size=4000, shuffle_seed=5)
    argv = ["--input", glob, *BUSY, "--progress", "off"]
    out = tmp_path / "out"
    outs = [out / "result.json", out / "groups.csv"]
    with engine_service("worker-pool", tmp_path / "pool") as pool:
        with killing_a_busy_worker(pool["pid"], min_cpu=1.0, poll=0.05) as killed:
            t0 = time.monotonic()
            proc = beambleu_subprocess(["run", *argv, "--output", outs[0], "--groups-output", outs[1],
                                        *prism_options(prism, pool)], timeout=300)
    assert "pid" in killed, (f"no SDK worker was busy long enough to be killed (the busiest used "
                             f"{killed['busiest']:.1f} CPU-s after connecting; exit {proc.returncode})\n{proc.stderr}")
    if proc.returncode == 0:
        local = tmp_path / "local"
        local.mkdir()
        rc, _, err = run_cli(*argv, "--output", local / "result.json", "--groups-output", local / "groups.csv")
        assert rc == 0, err
        assert (out / "result.json").read_bytes() == (local / "result.json").read_bytes(), "exit 0 with another result"
        assert (out / "groups.csv").read_bytes() == (local / "groups.csv").read_bytes()
    else:
        assert_failed_cleanly(proc, outs)
    print(f"SDK worker {killed['pid']} killed {killed['at'] - t0:.1f} s into the run; beambleu exit "
          f"{proc.returncode}; stderr: {proc.stderr.strip()[-300:]}")


def test_component_example_pipeline_on_prism(prism, tmp_path):
    """A user's own pipeline embedding beambleu.Score (examples/beam_pipeline.py) on Prism with the external
    worker pool: the document equals `beambleu run`'s on the local runner."""
    import subprocess
    import sys

    from .test_component import REPO, SAMPLE, _run_doc, _scored
    from ...pipeline_helpers import load

    out = tmp_path / "example.json"
    proc = subprocess.run([sys.executable, "examples/beam_pipeline.py", "--input", SAMPLE, "--output", str(out),
                           *prism_options(prism)], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:] + logs(prism)()
    assert _scored(load(out)) == _scored(_run_doc(tmp_path, SAMPLE, "--group-by", "system", "-m", "bleu", "chrf"))

"""An engine that fails is one line saying why and what to do, within seconds (issue 34, item 5):

* a job server Beam is to start on a port that is in use (Beam: ``Service failed to start up with
  error 0`` after 16-18 s);
* a Flink cluster without a TaskManager, or with fewer task slots than ``--parallelism`` (Beam: a
  300 s wait for slots, then a ``TimeoutException``);
* a Python SDK worker that died mid-job (Beam: ``CANCELLED: client cancelled`` on Flink, ``SDK
  worker disconnected`` on Prism);
* a job server jar or Prism binary named but missing (Beam: build it with ``./gradlew``);
* a dask worker restarted by its nanny at its ``--memory-limit`` (dask: ``KilledWorker`` and a link).

Each run is a ``beambleu`` child process with a timeout, and its time is bounded. The engines
(Prism, the Flink job server, each with an SDK worker pool of the test's own; a dask cluster with
a small memory limit) are started once, by the one test that uses each, one at a time; a test skips, naming why, when its engine
cannot be fetched here (and fails instead under ``BEAMBLEU_REQUIRE_ENGINES=1``)."""

from __future__ import annotations

import json
import os
import random
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import List
from unittest import mock

import pytest

pytest.importorskip("apache_beam")

from ...engines import (DaskCluster, assert_failed_cleanly, beambleu_subprocess, engine_service,  # noqa: E402
                        fetch_or_skip, killing_a_busy_worker)

SAMPLE = Path(__file__).resolve().parents[3] / "examples" / "sample" / "shards" / "*.parquet"

#: a check made before the job: Beam's import and the planning, then one line (seconds, not 16 or 300)
QUICK = 60.0


def error_line(proc, outputs: List[Path]) -> str:
    line = assert_failed_cleanly(proc, outputs)
    assert proc.returncode == 1, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    print(line)  # (pytest -s shows what users see)
    return line


def quick_run(args: List[str], tmp_path: Path):
    """``beambleu run`` on the sample, with ``args``; (process, seconds, output path)."""
    out = tmp_path / "r.json"
    t0 = time.monotonic()
    proc = beambleu_subprocess(["run", "--input", SAMPLE, "--output", out, *map(str, args)], timeout=QUICK * 2)
    return proc, time.monotonic() - t0, out


# ------------------------------------------------------------------------- 1. a port in use

RUNNERS = {"flink": ("FlinkRunner", "flink-job-server", "--flink_job_server_jar"),
           "spark": ("SparkRunner", "spark-job-server", "--spark_job_server_jar"),
           "prism": ("PrismRunner", "prism", "--prism_location")}


@pytest.fixture
def busy_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield s.getsockname()[1]


@pytest.mark.parametrize("engine", list(RUNNERS))
def test_job_port_in_use_is_one_line_at_once(engine, busy_port, tmp_path):
    runner, name, flag = RUNNERS[engine]
    path = fetch_or_skip(name)
    proc, took, out = quick_run(["--runner", runner, f"{flag}={path}", f"--job_port={busy_port}"], tmp_path)
    line = error_line(proc, [out])
    assert f"port {busy_port} (--job_port) is in use" in line, line
    assert "pass another --job_port" in line and f"--job_endpoint=localhost:{busy_port}" in line, line
    assert took < QUICK, took


def test_artifact_port_in_use_is_one_line(busy_port, tmp_path):
    path = fetch_or_skip("flink-job-server")
    proc, took, out = quick_run(["--runner", "FlinkRunner", f"--flink_job_server_jar={path}",
                                 f"--artifact_port={busy_port}"], tmp_path)
    assert f"port {busy_port} (--artifact_port) is in use" in error_line(proc, [out])
    assert took < QUICK, took


# ------------------------------------------------------------------------- 2. Flink without TaskManagers

class FlinkRest:
    """A Flink REST API's /overview, as a JobManager without (or with few) TaskManagers answers it."""

    def __init__(self, taskmanagers: int, slots: int):
        overview = {"taskmanagers": taskmanagers, "slots-total": slots, "slots-available": slots,
                    "jobs-running": 0, "flink-version": "1.19.0"}

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                body = json.dumps(overview if self.path.rstrip("/") == "/overview" else {}).encode()
                self.send_response(200 if self.path.rstrip("/") == "/overview" else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize("endpoint", [False, True], ids=["beam-starts-the-job-server", "job-endpoint"])
def test_flink_cluster_without_taskmanager_is_one_line_at_once(endpoint, busy_port, tmp_path):
    """A JobManager whose REST API says 0 TaskManagers: one line before the job, naming how to
    start one; with or without a --job_endpoint (there, beambleu asks the --flink_master given)."""
    path = fetch_or_skip("flink-job-server")
    with FlinkRest(taskmanagers=0, slots=0) as rest:
        where = [f"--job_endpoint=localhost:{busy_port}"] if endpoint else [f"--flink_job_server_jar={path}"]
        proc, took, out = quick_run(["--runner", "FlinkRunner", f"--flink_master=localhost:{rest.port}", *where],
                                    tmp_path)
    line = error_line(proc, [out])
    assert f"the Flink cluster at http://localhost:{rest.port} has no TaskManager" in line, line
    assert "bin/taskmanager.sh start" in line and "--flink_master=[local]" in line, line
    assert took < QUICK, took


def test_flink_parallelism_beyond_the_clusters_slots_is_one_line(tmp_path):
    path = fetch_or_skip("flink-job-server")
    with FlinkRest(taskmanagers=1, slots=2) as rest:
        proc, took, out = quick_run(["--runner", "FlinkRunner", f"--flink_master=localhost:{rest.port}",
                                     f"--flink_job_server_jar={path}", "--parallelism=4"], tmp_path)
    line = error_line(proc, [out])
    assert "--parallelism 4 needs 4 task slots" in line and "has 2 (1 TaskManagers)" in line, line
    assert took < QUICK, took


def test_flink_master_that_does_not_answer_is_one_line(busy_port, tmp_path):
    """Beam starts the job server here, so the cluster's REST API must answer here too."""
    path = fetch_or_skip("flink-job-server")
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    proc, took, out = quick_run(["--runner", "FlinkRunner", f"--flink_master=localhost:{closed}",
                                 f"--flink_job_server_jar={path}"], tmp_path)
    line = error_line(proc, [out])
    assert f"no Flink REST API answers at http://localhost:{closed}/overview" in line, line
    assert took < QUICK, took


# ------------------------------------------------------------------------- 3. a dead SDK worker

def busy_input(folder: Path) -> str:
    """About 120k pairs scored with BLEU, chrF and TER per system: some seconds of an SDK worker's CPU."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = random.Random(7)
    words = [f"w{i}" for i in range(3000)]
    folder.mkdir(parents=True, exist_ok=True)
    for shard in range(4):
        n = 30_000
        sent = [" ".join(rng.choices(words, k=rng.randint(12, 30))) for _ in range(2 * n)]
        table = pa.table({"line": list(range(shard * n, (shard + 1) * n)),
                          "system": [f"s{i % 4}" for i in range(n)],
                          "candidate": sent[:n], "references": [[r] for r in sent[n:]]})
        pq.write_table(table, folder / f"part-{shard}.parquet", row_group_size=2500)
    return str(folder / "*.parquet")


BUSY = ["--metrics", "bleu,chrf,ter", "--group-by", "system", "--id-column", "line", "--progress", "off"]


@pytest.fixture(scope="module")
def busy(tmp_path_factory):
    return busy_input(tmp_path_factory.mktemp("busy"))


@pytest.fixture  # used by one test: started for it and stopped after it, one engine at a time
def prism(tmp_path_factory):
    fetch_or_skip("prism")
    state = tmp_path_factory.mktemp("prism")
    with engine_service("prism", state) as job:
        yield {"job": job, "state": state}


@pytest.fixture  # used by one test: started for it and stopped after it, one engine at a time
def flink(tmp_path_factory):
    """The Flink job server with Flink inside it ([local])."""
    fetch_or_skip("flink-job-server")
    state = tmp_path_factory.mktemp("flink")
    with engine_service("flink-job-server", state, master="[local]") as job:
        yield {"job": job, "state": state}


def kill_an_sdk_worker(busy: str, runner: List[str], tmp_path: Path):
    """Run the busy job with an SDK worker pool of its own and SIGKILL the worker once busy."""
    outs = [tmp_path / "out.json"]
    with engine_service("worker-pool", tmp_path / "pool") as pool:
        with killing_a_busy_worker(pool["pid"], min_cpu=1.0, poll=0.05) as killed:
            t0 = time.monotonic()
            proc = beambleu_subprocess(["run", "--input", busy, *BUSY, "--output", outs[0], *runner,
                                        "--environment_type=EXTERNAL",
                                        f"--environment_config=localhost:{pool['port']}"], timeout=300)
            took = time.monotonic() - t0
    assert "pid" in killed, (f"no SDK worker was busy long enough to be killed (the busiest used "
                             f"{killed['busiest']:.1f} CPU-s after connecting; exit {proc.returncode})\n{proc.stderr}")
    line = error_line(proc, outs)
    assert "the Python SDK worker running the job died" in line, line
    assert f"worker pool at localhost:{pool['port']}" in line and "Beam's log: " in line, line
    assert took - (killed["at"] - t0) < 120, (took, killed)  # the failure is reported, not waited out
    return line


def test_prism_dead_sdk_worker_is_one_line(busy, prism, tmp_path):
    line = kill_an_sdk_worker(busy, ["--runner", "PrismRunner", f"--job_endpoint=localhost:{prism['job']['port']}"],
                              tmp_path)
    assert "(SDK worker disconnected)" in line, line


def test_flink_dead_sdk_worker_is_one_line(busy, flink, tmp_path):
    line = kill_an_sdk_worker(busy, ["--runner", "FlinkRunner", f"--job_endpoint=localhost:{flink['job']['port']}",
                                     "--parallelism=2"], tmp_path)
    assert "(CANCELLED: client cancelled)" in line, line


def test_engine_failures_are_told_from_input_errors():
    """What Beam said when a worker died, as the runners here say it; a bad row is never re-worded."""
    from apache_beam.options.pipeline_options import PipelineOptions

    from beambleu.beam.runners import explain_failure

    opts = PipelineOptions(["--environment_type=LOOPBACK"])
    flink = RuntimeError("Pipeline BeamApp-x failed in state FAILED: org.apache.beam.vendor.grpc.v1p60p1.io.grpc."
                         "StatusRuntimeException: CANCELLED: client cancelled")
    prism = RuntimeError("Pipeline job-001 failed in state FAILED: bundle inst002 stage-002 failed:SDK worker "
                         "disconnected: worker[job-001[job]_ref_Environment_default_environment_1], 1 active "
                         "instructions, error: context canceled")
    for exc, said in [(flink, "CANCELLED: client cancelled"), (prism, "SDK worker disconnected")]:
        line = explain_failure(exc, opts)
        assert line.startswith(f"the Python SDK worker running the job died ({said})"), line
        assert "\n" not in line and line.endswith("it ran in this process: its log is Beam's log"), line
    bad_row = RuntimeError("CANCELLED: client cancelled\nbeambleu-input-error: a.parquet: row 1: candidate is null")
    assert explain_failure(bad_row, opts) is None
    assert explain_failure(RuntimeError("something else"), opts) is None


# ------------------------------------------------------------------------- 4. a missing jar or binary

@pytest.mark.parametrize("engine", list(RUNNERS))
def test_missing_job_server_jar_names_the_fetch(engine, tmp_path):
    runner, name, flag = RUNNERS[engine]
    missing = tmp_path / "nowhere" / ("prism" if engine == "prism" else "job-server.jar")
    cache = tmp_path / "cache"
    out = tmp_path / "r.json"
    t0 = time.monotonic()
    proc = beambleu_subprocess(["run", "--input", SAMPLE, "--output", out, "--runner", runner, f"{flag}={missing}"],
                               env={"BEAMBLEU_ENGINES_HOME": str(cache)}, timeout=QUICK * 2)
    line = error_line(proc, [out])
    assert f"{flag}={missing}: no such file" in line, line
    assert f"`python deploy/engines.py fetch {name}`" in line and str(cache) in line, line
    assert "gradlew" not in proc.stderr, proc.stderr
    assert time.monotonic() - t0 < QUICK


# ------------------------------------------------------------------------- 5. a dask worker out of memory

#: a worker's limit: above what it needs to import Beam and beambleu, below what the input's one
#: row group of 300k pairs takes (about 0.5 GB)
MEMORY_LIMIT = "400MB"


@pytest.fixture(scope="module")
def small_dask(tmp_path_factory):
    """One dask worker with a 400 MB memory limit, neither pausing nor spilling (so its nanny
    restarts it at 95 % of its limit), and a scheduler that gives a task up when the first worker
    running it dies."""
    pytest.importorskip("distributed")
    worker_env = {"DASK_DISTRIBUTED__WORKER__MEMORY__PAUSE": "False",
                  "DASK_DISTRIBUTED__WORKER__MEMORY__SPILL": "False",
                  "DASK_DISTRIBUTED__WORKER__MEMORY__TARGET": "False"}
    with mock.patch.dict(os.environ, {"DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "0"}):
        cluster = DaskCluster(tmp_path_factory.mktemp("dask-small"), n_workers=1, worker_env=worker_env,
                              worker_args=["--memory-limit", MEMORY_LIMIT])
        cluster.__enter__()
    try:
        yield cluster
    finally:
        cluster.__exit__(None, None, None)


def test_dask_worker_over_its_memory_limit_is_one_line(small_dask, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = 300_000
    text = "the quick brown fox jumps over the lazy dog " * 6
    pq.write_table(pa.table({"candidate": [f"{text}{i}" for i in range(n)], "references": [[text, text + "x"]] * n}),
                   tmp_path / "big.parquet", row_group_size=n)
    out = tmp_path / "out.json"
    t0 = time.monotonic()
    proc = beambleu_subprocess(["run", "--input", tmp_path / "big.parquet", "--output", out, "--progress", "off",
                                "--runner", "dask", f"--dask_client_address={small_dask.address}"], timeout=300)
    took = time.monotonic() - t0
    line = error_line(proc, [out])
    assert "exceeded its memory limit" in line and "of 400 MB)" in line, line + small_dask.logs()
    assert "dask worker --memory-limit" in line and "--batch-size" in line, line
    assert "killed.html" not in line, line
    assert took < 240, took


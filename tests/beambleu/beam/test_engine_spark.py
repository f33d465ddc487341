"""Beam's Spark runner, for real, three ways, each engine started once for this module:

* embedded: the Spark job server (Beam 2.62.0's runner libraries as a pathing jar,
  `python deploy/engines.py fetch spark-job-server`) running Spark inside itself (`local[2]`);
* a Spark 3.5.7 standalone cluster on loopback (deploy/spark/cluster.py: a master and one worker
  from the pyspark wheel) with a job server submitting to it (`spark://127.0.0.1:PORT`); every
  test there checks on the master's web UI that the job ran there as an application;
* the user's command, where Beam starts the job server itself (`--runner SparkRunner
  --spark_job_server_jar`) with the workers in beambleu's own process (LOOPBACK).

The first two run the Python code in an external SDK worker pool (EXTERNAL), as a cluster's
sidecar does. Every output is the local runner's, byte for byte (tests/engine_parity.py). Then the
faults: an SDK worker killed mid-job, a job server that cannot start, a job that fails leaving
none of its outputs."""

from __future__ import annotations

import importlib.util
import sys
import time
from typing import Dict, List

import pytest

pytest.importorskip("apache_beam")

from ...engine_parity import CASES, assert_engine_matches_local, real_available  # noqa: E402
from ...engines import (REPO, assert_failed_cleanly, beambleu_subprocess, deploy_engines, engine_service,  # noqa: E402
    engines_required, fetch_or_skip, killing_a_busy_worker)
from ...pipeline_helpers import corpus_rows, run_cli, write_shards  # noqa: E402

# SDK harnesses kept for a minute within a job instead of one per Spark task (Beam's default, 0,
# starts a Python process for every task of every stage: several times slower here)
CACHE = "--environment_cache_millis=60000"


def spark_cluster_module():
    """deploy/spark/cluster.py, imported by path (deploy/ is not a package)."""
    name = "beambleu_deploy_spark_cluster"
    if name not in sys.modules:
        deploy_engines()  # cluster.py shares this module
        spec = importlib.util.spec_from_file_location(name, REPO / "deploy" / "spark" / "cluster.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def _fail_or_skip(what: str, e: Exception):
    if engines_required():
        pytest.fail(f"{what}: {e}")
    pytest.skip(f"{what} cannot be had here: {e}")


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    """The job server's jar and the module's folder."""
    jar = fetch_or_skip("spark-job-server")
    return {"jar": jar, "state": tmp_path_factory.mktemp("spark")}


# Each job server gets an SDK worker pool of its own. The pool keys the harnesses it starts by the
# worker id the JVM asks for, and ids start again at "1-1" in every JVM (every application's
# executor on the cluster): shared, a StopWorker("1-1") the embedded job server sends when its
# cached harness expires (--environment_cache_millis) kills a cluster executor's "1-1" harness
# mid-job (seen: "CANCELLED: call already cancelled", the stage's 4 attempts failed).

@pytest.fixture(scope="module")
def embedded(spark):
    cl = spark_cluster_module()
    state = spark["state"] / "embedded"
    with engine_service("worker-pool", state) as pool:
        job = cl.start_job_server(state, master="local[2]")
        try:
            yield {**spark, "pool": pool, "job": job, "job_state": state}
        finally:
            deploy_engines().stop("spark-job-server", state)


@pytest.fixture(scope="module")
def cluster(spark):
    cl = spark_cluster_module()
    state = spark["state"] / "cluster"
    try:
        cl.spark_home()
    except cl.EngineError as e:
        _fail_or_skip(f"Spark {cl.spark_version()} (pyspark)", e)
    rec = cl.start(state)
    try:
        with engine_service("worker-pool", state) as pool:
            job = cl.start_job_server(state, master=rec["master_url"])
            try:
                yield {**spark, "pool": pool, "job": job, "job_state": state, "cluster": rec}
            finally:
                deploy_engines().stop("spark-job-server", state)
    finally:
        cl.stop(state)


def portable_options(engine: Dict, cache: bool = True) -> List[str]:
    """--runner SparkRunner with a --job_endpoint is Beam's PortableRunner submitting to that job server.
    On the cluster the executors would fetch the job server's 235 jars (272 MB) from the driver for
    every application; given only the pathing jar (--files_to_stage), they fetch that and read the
    jars its manifest names from this machine's ~/.m2."""
    opts = ["--runner", "SparkRunner", f"--job_endpoint=localhost:{engine['job']['port']}",
            "--environment_type=EXTERNAL", f"--environment_config=localhost:{engine['pool']['port']}"]
    if cache:
        opts.append(CACHE)
    if "cluster" in engine:
        opts.append(f"--files_to_stage={engine['jar']}")
    return opts


def logs(engine: Dict):
    def text() -> str:
        files = sorted(engine["job_state"].glob("*.log"))  # the job server's and its worker pool's
        files += sorted(engine["job_state"].glob("spark-cluster/logs/*.out"))
        files += sorted(engine["job_state"].glob("spark-cluster/work/*/*/stderr"))[-2:]
        return "\n".join(f"--- {p}\n{p.read_text(errors='replace')[-3000:]}" for p in files)
    return text


def applications(engine: Dict) -> Dict[str, Dict]:
    """{application id: its entry} of the cluster master's active and completed applications."""
    doc = spark_cluster_module().master_json(engine["cluster"]["ui_port"], timeout=10)
    return {a["id"]: a for a in doc.get("activeapps", []) + doc.get("completedapps", [])}


def assert_one_new_application(engine: Dict, before: Dict[str, Dict]) -> Dict:
    """The run was one application on the cluster: it ran on its worker's cores, and it finished."""
    new = {k: v for k, v in applications(engine).items() if k not in before}
    assert len(new) == 1, f"expected one new application on {engine['cluster']['master_url']}, got {new}"
    (app,) = new.values()
    assert app["name"].startswith("BeamApp-"), app
    assert app["cores"] >= 1, app
    return app


@pytest.mark.parametrize("name", list(CASES))
def test_spark_embedded_equals_local_runner(engine_inputs, embedded, name, tmp_path):
    case = CASES[name]
    if case.data == "real" and not real_available():
        pytest.skip("shared corpora not present")
    assert_engine_matches_local(engine_inputs, case, portable_options(embedded), tmp_path / "out",
                                logs=logs(embedded))


@pytest.mark.parametrize("name", list(CASES))
def test_spark_cluster_equals_local_runner(engine_inputs, cluster, name, tmp_path):
    case = CASES[name]
    if case.data == "real" and not real_available():
        pytest.skip("shared corpora not present")
    engine_inputs.local_outputs(case)  # the local run first, so that only the engine's run is timed
    before = applications(cluster)
    assert_engine_matches_local(engine_inputs, case, portable_options(cluster), tmp_path / "out",
                                logs=logs(cluster))
    app = assert_one_new_application(cluster, before)
    deadline = time.monotonic() + 30  # the master marks it FINISHED once the driver has stopped
    while app.get("state") != "FINISHED" and time.monotonic() < deadline:
        time.sleep(0.5)
        app = applications(cluster)[app["id"]]
    assert app["state"] == "FINISHED", app


def test_spark_runner_started_by_beam(engine_inputs, spark, tmp_path):
    """The user's command: Beam starts the job server jar itself, Spark in it, the workers in process."""
    assert_engine_matches_local(engine_inputs, CASES["sample-paired-ar"],
                                ["--runner", "SparkRunner", "--spark_master_url=local[2]",
                                 f"--spark_job_server_jar={spark['jar']}", "--environment_type=LOOPBACK"],
                                tmp_path / "out")


# ---------------------------------------------------------------------------------------- faults

def assert_one_error_line_and_no_outputs(proc, outputs) -> str:
    """Exit 1 (bad input or a failed job, not a crash), then assert_failed_cleanly's checks."""
    assert proc.returncode == 1, proc.stderr
    return assert_failed_cleanly(proc, outputs)


# the SDK worker is killed once it has used this much CPU since it connected to the runner: inside
# the scoring of the big input (its TER alone about 4 CPU-s, shared by the harnesses)
KILL_AT_CPU = 1.0


@pytest.mark.skipif(not real_available(), reason="shared corpora not present")
def test_spark_cluster_sdk_worker_killed_mid_job(cluster, tmp_path):
    """SIGKILL an SDK harness while the cluster's executor is feeding it, with Beam's default
    environment (no --environment_cache_millis). The run must give the local runner's bytes, or one
    error line and no output: never exit 0 with another number. What happens here: the executor's
    tasks fail, Spark retries them (spark.task.maxFailures is 4 on a cluster), the retries start a
    new harness, and the result is identical. (With --environment_cache_millis the retries reuse the
    dead harness and fail 4 times; the run is then one error line and no output.)"""
    rows = corpus_rows()
    big = [dict(r, line=r["line"] + 100_000 * k) for k in range(8) for r in rows]  # 184k pairs
    glob = write_shards(big, tmp_path / "big", n_shards=4, row_group_size=4000)
    # TER beside BLEU and chrF keeps a harness busy for seconds past KILL_AT_CPU (see engine_parity.BUSY)
    flags = ["--input", glob, "--metrics", "bleu,chrf,ter", "--group-by", "system,langpair", "--progress", "off"]
    local = tmp_path / "local.json"
    rc, _, err = run_cli(*flags, "--output", local)
    assert rc == 0, err

    before_apps = applications(cluster)
    out = tmp_path / "spark.json"
    with killing_a_busy_worker(cluster["pool"]["pid"], min_cpu=KILL_AT_CPU, poll=0.05) as killed:
        proc = beambleu_subprocess(["run", *flags, "--output", out, *portable_options(cluster, cache=False)],
                                   timeout=300)
    assert "pid" in killed, (f"the job ended before an SDK worker was killed (the busiest used "
                             f"{killed['busiest']:.1f} CPU-s after connecting)\n{proc.stderr}")
    assert_one_new_application(cluster, before_apps)
    if proc.returncode == 0:
        assert out.read_bytes() == local.read_bytes(), "exit 0 with another result"
        print(f"SDK worker {killed['pid']} killed at {killed['cpu']:.1f} s CPU: the retries gave the identical result")
    else:
        line = assert_one_error_line_and_no_outputs(proc, [out])
        print(f"SDK worker {killed['pid']} killed at {killed['cpu']:.1f} s CPU: the run failed, no output: {line}")


def test_spark_job_server_jar_that_cannot_start_is_one_line(engine_inputs, tmp_path):
    """A --spark_job_server_jar that is not a jar: one line, exit 1, no output, in bounded time."""
    bad = tmp_path / "job-server.jar"
    bad.write_text("not a jar\n")
    out = tmp_path / "r.json"
    t0 = time.monotonic()
    proc = beambleu_subprocess(["run", "--input", engine_inputs.glob("sample"), "--output", out,
                                "--runner", "SparkRunner", "--spark_master_url=local[2]",
                                f"--spark_job_server_jar={bad}", "--environment_type=LOOPBACK"], timeout=120)
    assert_one_error_line_and_no_outputs(proc, [out])
    assert time.monotonic() - t0 < 120


def test_spark_failed_job_leaves_no_output(embedded, tmp_path):
    """A row the job rejects (a null candidate) fails the job on Spark: one line naming the row,
    and none of --output, --groups-output, --sentence-output is left behind."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"candidate": ["fine", None, "x"], "references": [["fine"], ["fine"], ["x"]],
                      "system": ["a", "a", "b"]})
    pq.write_table(table, tmp_path / "bad.parquet")
    outputs = [tmp_path / "out.json", tmp_path / "groups.csv", tmp_path / "pairs"]
    proc = beambleu_subprocess(["run", "--input", tmp_path / "bad.parquet", "--group-by", "system",
                                "--output", outputs[0], "--groups-output", outputs[1], "--sentence-output",
                                outputs[2], *portable_options(embedded)], timeout=300)
    line = assert_one_error_line_and_no_outputs(proc, outputs)
    assert "bad.parquet: row 1, column 'candidate': candidate is null" in line, proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.parquet"]

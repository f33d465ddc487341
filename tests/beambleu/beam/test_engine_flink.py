"""Beam's Flink runner, three ways, each engine started once for this module:

* embedded: Beam 2.62.0's Flink job server (deploy/engines.py, a pathing jar of the runner
  libraries) running Flink 1.19 inside itself (``--flink-master [local]``), with an external Python
  SDK worker pool;
* a real Flink 1.19.0 session cluster on loopback (deploy/flink/cluster.py: a JobManager and a
  TaskManager with 4 slots) behind the same job server (``--flink-master localhost:<REST port>``);
  its REST API must show each job finished there;
* the user's command, where Beam starts the job server itself (``--flink_job_server_jar``).

Every output is the local runner's, byte for byte (tests/engine_parity.py). The faults: an SDK
worker killed mid-job, a job server that cannot start, and a bad row; a failed run is one
``beambleu: error:`` line, a non-zero exit and no output at all."""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path
from typing import Dict, List

import pytest

pytest.importorskip("apache_beam")

from ...engine_parity import (BUSY, CASES, REAL_FOLDER, Outputs, assert_engine_matches_local, real_available)  # noqa: E402
from ...engines import (REPO, assert_failed_cleanly, beambleu_subprocess, engine_service, engines_required,  # noqa: E402
    fetch_or_skip, killing_a_busy_worker)
from ...pipeline_helpers import corpus_rows, run_cli, write_shards  # noqa: E402

PARALLELISM = ["--parallelism", "2"]


def deploy_cluster():
    """deploy/flink/cluster.py, the script users run, imported as a module."""
    name = "beambleu_deploy_flink_cluster"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, REPO / "deploy" / "flink" / "cluster.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def logs_of(*dirs: Path):
    def logs() -> str:
        files = [p for d in dirs for p in sorted(d.rglob("*")) if p.is_file() and p.suffix in (".log", ".out")]
        return "\n".join(f"--- {p}\n{p.read_text(errors='replace')[-3000:]}" for p in files)
    return logs


def external(job: Dict, pool: Dict) -> List[str]:
    return ["--runner", "FlinkRunner", f"--job_endpoint=localhost:{job['port']}",
            "--environment_type=EXTERNAL", f"--environment_config=localhost:{pool['port']}", *PARALLELISM]


def skip_real(case):
    if case.data == "real" and not real_available():
        pytest.skip("shared corpora not present")


# ------------------------------------------------------------------------------------------ engines

@pytest.fixture(scope="module")
def embedded(tmp_path_factory):
    """The job server with Flink inside it ([local]) and an SDK worker pool."""
    jar = fetch_or_skip("flink-job-server")
    state = tmp_path_factory.mktemp("flink-embedded")
    with engine_service("flink-job-server", state, master="[local]") as job, \
            engine_service("worker-pool", state) as pool:
        yield {"jar": jar, "job": job, "pool": pool, "state": state, "logs": logs_of(state)}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A Flink session cluster on loopback, the job server in front of it, and an SDK worker pool."""
    fetch_or_skip("flink-job-server")
    fc = deploy_cluster()
    state = tmp_path_factory.mktemp("flink-cluster")
    try:
        rec = fc.start(state, timeout=180)
    except fc.EngineError as e:
        if engines_required():
            pytest.fail(f"the Flink cluster did not start: {e}")
        pytest.skip(f"a Flink cluster cannot be started here: {e}")
    try:
        with engine_service("flink-job-server", state, master=f"localhost:{rec['rest_port']}") as job, \
                engine_service("worker-pool", state) as pool:
            yield {"cluster": rec, "job": job, "pool": pool, "state": state, "fc": fc, "logs": logs_of(state)}
    finally:
        fc.stop(state)


def cluster_jobs(cluster) -> Dict[str, Dict]:
    return {j["jid"]: j for j in cluster["fc"].jobs(cluster["cluster"]["rest_port"])}


def new_jobs(cluster, before: Dict[str, Dict]) -> List[Dict]:
    return [j for jid, j in cluster_jobs(cluster).items() if jid not in before]


# ------------------------------------------------------------------------------------------ parity

@pytest.mark.parametrize("name", list(CASES))
def test_flink_embedded_equals_local_runner(engine_inputs, embedded, name, tmp_path):
    case = CASES[name]
    skip_real(case)
    assert_engine_matches_local(engine_inputs, case, external(embedded["job"], embedded["pool"]), tmp_path / "out",
                                logs=embedded["logs"])


def test_flink_runner_started_by_beam(engine_inputs, embedded, tmp_path):
    """The user's command: Beam starts the job server jar itself, Flink runs in it ([local]) and
    the Python workers run in the submitting process (LOOPBACK)."""
    assert_engine_matches_local(engine_inputs, CASES["sample-confidence"],
                                ["--runner", "FlinkRunner", "--flink_master=[local]",
                                 f"--flink_job_server_jar={embedded['jar']}", "--environment_type=LOOPBACK",
                                 *PARALLELISM], tmp_path / "out")


# ------------------------------------------------------------------------------------------ faults

def test_flink_job_server_that_cannot_start_is_one_line(engine_inputs, tmp_path):
    """A --flink_job_server_jar that is not a jar: one line, exit 1, no output, in bounded time."""
    bad = tmp_path / "job-server.jar"
    bad.write_text("not a jar\n")
    out = tmp_path / "r.json"
    t0 = time.monotonic()
    proc = beambleu_subprocess(["run", "--input", engine_inputs.glob("sample"), "--output", out,
                                "--runner", "FlinkRunner", "--flink_master=[local]",
                                f"--flink_job_server_jar={bad}", "--environment_type=LOOPBACK"], timeout=180)
    assert proc.returncode == 1, proc.stderr
    assert_failed_cleanly(proc, [out])
    assert proc.stderr.strip().startswith("beambleu: error: "), proc.stderr
    assert time.monotonic() - t0 < 180


def test_flink_bad_row_leaves_no_output(embedded, tmp_path):
    """A row with a null candidate fails the job: one line naming the row, exit 1, and none of
    --output, --groups-output, --sentence-output is left (they are staged and renamed only after
    the job succeeded)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"candidate": ["fine", None, "x"], "references": [["fine"], ["fine"], ["x"]]})
    pq.write_table(table, tmp_path / "bad.parquet")
    outs = [tmp_path / "out.json", tmp_path / "groups.csv", tmp_path / "pairs"]
    proc = beambleu_subprocess(["run", "--input", tmp_path / "bad.parquet", "--output", outs[0],
                                "--groups-output", outs[1], "--sentence-output", outs[2], "--progress", "off",
                                *external(embedded["job"], embedded["pool"])], timeout=300)
    line = assert_failed_cleanly(proc, outs)
    assert proc.returncode == 1, proc.stderr
    assert "bad.parquet: row 1, column 'candidate': candidate is null" in line, proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.parquet"], list(tmp_path.iterdir())


# ------------------------------------------------------------------------------------------ the cluster

@pytest.mark.parametrize("name", list(CASES))
def test_flink_cluster_equals_local_runner(engine_inputs, cluster, name, tmp_path):
    """On the real cluster: the job must be one the cluster's REST API lists as FINISHED, every
    task finished, its operators run with parallelism 2."""
    case = CASES[name]
    skip_real(case)
    before = cluster_jobs(cluster)
    assert_engine_matches_local(engine_inputs, case, external(cluster["job"], cluster["pool"]), tmp_path / "out",
                                logs=cluster["logs"])
    ran = new_jobs(cluster, before)
    assert len(ran) == 1, ran
    assert ran[0]["state"] == "FINISHED" and ran[0]["name"].startswith("BeamApp-"), ran
    assert ran[0]["tasks"]["finished"] == ran[0]["tasks"]["total"] > 0, ran
    vertices = cluster["fc"].rest_get(cluster["cluster"]["rest_port"], f"/jobs/{ran[0]['jid']}")["vertices"]
    assert max(v["parallelism"] for v in vertices) == 2, vertices  # --parallelism 2, on the cluster's slots


def test_flink_cluster_status_reports_slots(cluster):
    """deploy/flink/cluster.py status: the TaskManager and its 4 slots, as the REST API says."""
    st = cluster["fc"].status(cluster["state"])
    assert st["overview"]["taskmanagers"] == 1 and st["overview"]["slots-total"] == 4, st
    assert st["overview"]["flink-version"] == cluster["fc"].FLINK_VERSION, st
    assert len(st["alive"]) == 2, st  # JobManager and TaskManager


@pytest.mark.skipif(not real_available(), reason="shared corpora not present")
def test_flink_cluster_sdk_worker_killed_mid_job(cluster, tmp_path):
    """SIGKILL one of the Python SDK workers the pool started for a job on the cluster, once it is
    busy: the run either gives the local runner's result or fails cleanly (one line, non-zero,
    no output); it never exits 0 with a different number."""
    rows = corpus_rows([REAL_FOLDER])  # every system, every segment: about 18k pairs, 8 times over
    big = [dict(r, line=r["line"] + 100_000 * k) for k in range(8) for r in rows]
    glob = write_shards(big, tmp_path / "big", n_shards=4, row_group_size=2000, shuffle_seed=3)
    argv = ["--input", glob, *BUSY, "--progress", "off"]

    with engine_service("worker-pool", tmp_path / "pool") as pool:
        with killing_a_busy_worker(pool["pid"], min_cpu=1.0, poll=0.1) as killed:
            out = tmp_path / "out"
            outs = [out / "result.json", out / "groups.csv"]
            before = cluster_jobs(cluster)
            t0 = time.monotonic()
            proc = beambleu_subprocess(["run", *argv, "--output", outs[0], "--groups-output", outs[1],
                                        *external(cluster["job"], pool)], timeout=300)
    assert "pid" in killed, (f"no SDK worker was busy long enough to be killed (the busiest used "
                             f"{killed['busiest']:.1f} CPU-s after connecting; exit {proc.returncode})\n{proc.stderr}")
    ran = new_jobs(cluster, before)
    if proc.returncode == 0:  # then it must be the local runner's result, byte for byte
        local = tmp_path / "local"
        local.mkdir()
        rc, _, err = run_cli(*argv, "--output", local / "result.json", "--groups-output", local / "groups.csv")
        assert rc == 0, err
        got = Outputs((out / "result.json").read_bytes(), (out / "groups.csv").read_bytes(), None, None)
        assert got.result == (local / "result.json").read_bytes()
        assert got.groups == (local / "groups.csv").read_bytes()
        assert [j["state"] for j in ran][-1:] == ["FINISHED"], ran
    else:
        assert_failed_cleanly(proc, outs)
        assert ran and ran[-1]["state"] == "FAILED", ran
    print(f"SDK worker {killed['pid']} killed {killed['at'] - t0:.1f} s into the run, at {killed['cpu']:.1f} CPU-s; "
          f"beambleu exit "
          f"{proc.returncode}; cluster jobs: {[j['state'] for j in ran]}; stderr: {proc.stderr.strip()[-300:]}")


def test_flink_cluster_that_does_not_report_its_slots_is_started_once_more(tmp_path, monkeypatch, capsys):
    """No Flink needed: the retry policy of deploy/flink/cluster.py's start(). A first start that
    timed out waiting for /overview keeps its logs aside and is followed by one start on fresh
    ports; a second such start, or a first one with --rest-port, is the error."""
    fc = deploy_cluster()
    calls = []

    def start_once(state, slots, rest_port, timeout):
        calls.append(rest_port)
        (state / "flink-cluster" / "log").mkdir(parents=True, exist_ok=True)
        (state / "flink-cluster" / "log" / "jm.log").write_text(f"attempt {len(calls)}\n")
        if len(calls) == 1:
            raise fc._NotReady("the Flink cluster did not report a TaskManager with slots\nlog tail")
        return {"rest_port": 1234, "log_dir": str(state / "flink-cluster" / "log")}

    monkeypatch.setattr(fc, "_start_once", start_once)
    rec = fc.start(tmp_path, timeout=1)
    assert calls == [None, None] and rec["rest_port"] == 1234
    assert (tmp_path / "flink-cluster.attempt-1" / "log" / "jm.log").read_text() == "attempt 1\n"
    assert (tmp_path / "flink-cluster" / "log" / "jm.log").read_text() == "attempt 2\n"
    assert rec["earlier_attempt_logs"] == str(tmp_path / "flink-cluster.attempt-1" / "log")
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "did not report a TaskManager" in err[0] and "once more" in err[0], err

    calls.clear()
    with pytest.raises(fc._NotReady):
        fc.start(tmp_path / "given", rest_port=4321, timeout=1)
    assert calls == [4321]

    def never(state, slots, rest_port, timeout):
        calls.append(rest_port)
        raise fc._NotReady("still not")

    calls.clear()
    monkeypatch.setattr(fc, "_start_once", never)
    with pytest.raises(fc._NotReady, match="still not"):
        fc.start(tmp_path / "twice", timeout=1)
    assert calls == [None, None]

"""The environment of the dask workers beambleu starts or sets up: dask's nanny puts
``MALLOC_TRIM_THRESHOLD_=65536`` in each worker's environment, which pins glibc's mmap threshold
(every buffer above 128 KiB mapped and unmapped anew); the DaskRunner's local cluster and
deploy/dask/start-local-cluster.sh leave it out (``runners.DASK_WORKER_CONFIG`` /
``DASK_WORKER_ENV``), and keep dask's other variables. Each test starts its own small cluster (a
few seconds) and stops it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("apache_beam")
pytest.importorskip("distributed")

from ...engines import env_with_this_python, free_port  # noqa: E402

REPO = Path(__file__).resolve().parents[3]
WATCHED = ("MALLOC_TRIM_THRESHOLD_", "OMP_NUM_THREADS")

#: a Beam job on the runner of ``pipeline_options`` (or Beam's own DaskRunner with ``plain``):
#: each worker that runs an element writes its environment's WATCHED variables to a file
JOB = """
import json, os, sys
import apache_beam as beam
from beambleu.beam.runners import close_result, import_dask_runner, pipeline_options

out, plain = sys.argv[1], sys.argv[2] == "plain"
opts, runner = pipeline_options([], "dask")
if plain:
    runner = import_dask_runner().DaskRunner()

def env(x):
    with open(os.path.join(out, f"{os.getpid()}-{x}.json"), "w") as f:
        json.dump({k: os.environ.get(k) for k in %r}, f)
    return x

p = beam.Pipeline(runner=runner, options=opts)
_ = p | beam.Create(list(range(4))) | beam.Map(env)
result = p.run()
result.wait_until_finish()
close_result(result, timeout=30)
""" % (WATCHED,)


def _worker_environs(tmp_path: Path, plain: bool) -> list:
    out = tmp_path / ("plain" if plain else "beambleu")
    out.mkdir()
    proc = subprocess.run([sys.executable, "-c", JOB, str(out), "plain" if plain else "beambleu"],
                          capture_output=True, text=True, timeout=180, cwd=tmp_path,
                          env={k: v for k, v in env_with_this_python().items() if k not in WATCHED})
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = [json.loads(p.read_text()) for p in sorted(out.glob("*.json"))]
    assert len(found) == 4, proc.stderr[-3000:]
    assert all(os.getpid() != int(p.name.split("-")[0]) for p in out.glob("*.json"))  # run by the workers
    return found


def test_local_cluster_workers_keep_glibcs_thresholds(tmp_path):
    """`--runner dask` without an address: the workers of the local cluster have no
    MALLOC_TRIM_THRESHOLD_ and keep dask's OMP_NUM_THREADS=1; Beam's DaskRunner alone gives them
    dask's 65536 (so the check sees the workers' real environment)."""
    assert {e["MALLOC_TRIM_THRESHOLD_"] for e in _worker_environs(tmp_path, plain=True)} == {"65536"}
    ours = _worker_environs(tmp_path, plain=False)
    assert {e["MALLOC_TRIM_THRESHOLD_"] for e in ours} == {None}
    assert {e["OMP_NUM_THREADS"] for e in ours} == {"1"}


def test_the_config_holds_only_while_the_runner_starts_its_cluster(monkeypatch):
    """DASK_WORKER_CONFIG is set around the DaskRunner's run_pipeline (where its Client starts
    the local cluster's nannies) and dask's own value is back afterwards."""
    import dask

    from beambleu.beam import runners

    key = "distributed.nanny.pre-spawn-environ"
    seen = []
    base = runners.import_dask_runner().DaskRunner
    monkeypatch.setattr(base, "run_pipeline", lambda self, pipeline, options: seen.append(dict(dask.config.get(key))))
    runners.make_dask_runner().run_pipeline(None, None)
    assert seen[0]["MALLOC_TRIM_THRESHOLD_"] is None and seen[0]["OMP_NUM_THREADS"] == 1
    assert dask.config.get(key)["MALLOC_TRIM_THRESHOLD_"] == 65536


def _script_cluster_environs(tmp_path: Path, env: dict) -> dict:
    """deploy/dask/start-local-cluster.sh with one worker: {worker: its WATCHED variables}."""
    from distributed import Client

    port = free_port()
    log = open(tmp_path / f"cluster-{port}.log", "wb")
    proc = subprocess.Popen(["bash", str(REPO / "deploy" / "dask" / "start-local-cluster.sh"), "1", str(port)],
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=tmp_path,
                            env={**{k: v for k, v in env_with_this_python().items() if k not in WATCHED}, **env})
    log.close()
    try:
        with Client(f"tcp://127.0.0.1:{port}", timeout=120) as client:
            client.wait_for_workers(1, timeout=120)
            return client.run(lambda: {k: os.environ.get(k) for k in WATCHED})
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # the script's trap stops the scheduler and the worker
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_deploy_script_workers_keep_glibcs_thresholds(tmp_path):
    """The script's workers have no MALLOC_TRIM_THRESHOLD_ (dask's OMP_NUM_THREADS=1 stays), and
    a DASK_DISTRIBUTED__NANNY__PRE_SPAWN_ENVIRON of the caller's is kept."""
    (environ,) = _script_cluster_environs(tmp_path, {}).values()
    assert environ == {"MALLOC_TRIM_THRESHOLD_": None, "OMP_NUM_THREADS": "1"}
    mine = {"DASK_DISTRIBUTED__NANNY__PRE_SPAWN_ENVIRON": "{'MALLOC_TRIM_THRESHOLD_': 4096}"}
    (environ,) = _script_cluster_environs(tmp_path, mine).values()
    assert environ == {"MALLOC_TRIM_THRESHOLD_": "4096", "OMP_NUM_THREADS": "1"}


def test_the_script_and_the_runner_agree():
    """The deploy script's nanny environment is runners.DASK_WORKER_ENV's."""
    from beambleu.beam.runners import DASK_WORKER_ENV

    (name, value), = DASK_WORKER_ENV.items()
    text = (REPO / "deploy" / "dask" / "start-local-cluster.sh").read_text()
    assert f'nanny_environ="{value}"' in text and f'export {name}="${{{name}:-$nanny_environ}}"' in text

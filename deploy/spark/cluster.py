#!/usr/bin/env python3
"""A Spark standalone cluster on this machine (loopback only): one master, one worker.

    python deploy/spark/cluster.py fetch                    # installs Spark; prints SPARK_HOME
    python deploy/spark/cluster.py start [--cores 2] [--memory 8g] [--state DIR] [--timeout S]
    python deploy/spark/cluster.py status [--state DIR]     # the master's URL and its workers
    python deploy/spark/cluster.py stop [--state DIR]
    python deploy/spark/cluster.py start-job-server [--cluster | --master M] [--port P] [--state DIR]
    python deploy/spark/cluster.py stop-job-server [--state DIR]

Spark comes from the ``pyspark`` wheel at the version Beam's Spark job server is built with here
(``deploy/engines.py``'s spark-job-server: Spark 3.5.7), installed in its own virtual environment
under ``$BEAMBLEU_ENGINES_HOME/spark-<version>/venv`` (never in the environment beambleu runs in):
the wheel carries Spark's jars and ``bin/``, ``sbin/`` scripts, so the package folder is a
SPARK_HOME. A standalone master and the driver that submits to it must run the same Spark.

``start`` runs a master on 127.0.0.1 (a free port, a free web UI port) and one worker (``--cores``,
``--memory``: what the worker offers its executors; each executor takes Spark's default 1 GiB) with
Spark's own ``sbin/spark-daemon.sh``, as ``sbin/start-master.sh`` and ``sbin/start-worker.sh`` do
(the wheel does not carry those two). Its conf, logs, pid files and the worker's folder are in
``DIR/spark-cluster/``. The cluster is up when the master's web UI (``/json/``) reports an ALIVE
worker, within ``--timeout`` seconds; otherwise the logs' last lines are printed and what was
started is stopped. ``DIR/spark-cluster.json`` records the master URL, the ports and the pids.
``stop`` runs spark-daemon.sh's stop for the worker and the master, then kills whatever of their
process group is left (executors included). DIR defaults as in deploy/engines.py.

``start-job-server`` is deploy/engines.py's ``start spark-job-server`` plus one setting the standalone
cluster needs: Spark's ``jars/`` holds Guava 14, which comes first on an executor's class path and
shadows the Guava the job server's jars need (Beam's GCS file system registrar then fails the first
task of every executor with NoSuchMethodError; Spark retries it). The job server is started with
``-Dspark.executor.extraClassPath`` naming its own Guava jars (through JDK_JAVA_OPTIONS), which
Spark puts before ``jars/``. ``--cluster`` submits to the master of ``start``'s cluster.
Errors are one line on stderr and exit status 1.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional

HERE = Path(__file__).resolve().parent


def _engines():
    """deploy/engines.py as a module, under the name the tests import it by."""
    name = "beambleu_deploy_engines"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, HERE.parent / "engines.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


eng = _engines()
EngineError = eng.EngineError

MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
RECORD = "spark-cluster.json"
INSTALL_TIMEOUT = eng.FETCH_TIMEOUT


def spark_version() -> str:
    """The Spark the job server is built with (its spark-core dependency)."""
    for group, artifact, version in eng.JOB_SERVERS["spark-job-server"]["deps"]:
        if group == "org.apache.spark" and artifact.startswith("spark-core_"):
            return version
    raise EngineError("deploy/engines.py's spark-job-server names no spark-core")


def venv_dir(version: Optional[str] = None) -> Path:
    return eng.engines_home() / f"spark-{version or spark_version()}" / "venv"


def _installed_home(venv: Path, version: str) -> Optional[Path]:
    marker = venv / "beambleu-spark-home.txt"
    if not marker.exists():
        return None
    home = Path(marker.read_text().strip())
    if (home / "sbin" / "spark-daemon.sh").exists() and list(home.glob(f"jars/spark-core_*-{version}.jar")):
        return home
    return None


def spark_home(version: Optional[str] = None) -> Path:
    """SPARK_HOME: the pyspark package folder of the engines' own venv, installed the first time
    (python -m venv, then pip install pyspark==VERSION, within INSTALL_TIMEOUT seconds)."""
    version = version or spark_version()
    venv = venv_dir(version)
    home = _installed_home(venv, version)
    if home:
        return home
    if venv.exists():  # a half-made one: start again
        import shutil

        shutil.rmtree(venv)
    venv.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + INSTALL_TIMEOUT

    def run(argv: List[str], what: str) -> subprocess.CompletedProcess:
        left = deadline - time.monotonic()
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=max(left, 1))
        except subprocess.TimeoutExpired:
            raise EngineError(f"{what} did not finish within {INSTALL_TIMEOUT:.0f} s "
                              "(BEAMBLEU_FETCH_TIMEOUT)") from None
        if proc.returncode != 0:
            lines = [ln.strip() for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip()]
            raise EngineError(f"{what} failed: " + (lines[-1] if lines else f"exit status {proc.returncode}"))
        return proc

    run([sys.executable, "-m", "venv", str(venv)], f"creating {venv}")
    py = venv / "bin" / "python"
    run([str(py), "-m", "pip", "install", "--disable-pip-version-check", "-q", f"pyspark=={version}"],
        f"pip install pyspark=={version} into {venv}")
    found = run([str(py), "-c", "import os, pyspark; print(os.path.dirname(pyspark.__file__))"],
                "importing pyspark").stdout.strip()
    (venv / "beambleu-spark-home.txt").write_text(found + "\n")
    home = _installed_home(venv, version)
    if not home:
        raise EngineError(f"pyspark {version} in {venv} has no sbin/spark-daemon.sh or Spark {version} jars")
    return home


# ---------------------------------------------------------------------------------------- the cluster

def _dirs(state: Path) -> Dict[str, Path]:
    root = state / "spark-cluster"
    return {"SPARK_CONF_DIR": root / "conf", "SPARK_LOG_DIR": root / "logs", "SPARK_PID_DIR": root / "pids",
            "SPARK_WORKER_DIR": root / "work"}


def daemon_env(home: Path, state: Path) -> Dict[str, str]:
    env = dict(os.environ)
    env.update({k: str(v) for k, v in _dirs(state).items()})
    env.update({"SPARK_HOME": str(home), "SPARK_IDENT_STRING": "beambleu", "SPARK_LOCAL_IP": "127.0.0.1",
                "SPARK_MASTER_HOST": "127.0.0.1"})
    for var in ("SPARK_MASTER_PORT", "SPARK_MASTER_WEBUI_PORT", "SPARK_WORKER_PORT", "SPARK_WORKER_WEBUI_PORT",
                "SPARK_WORKER_CORES", "SPARK_WORKER_MEMORY", "SPARK_NO_DAEMONIZE"):
        env.pop(var, None)  # the command line says these
    return env


def master_json(ui_port: int, timeout: float = 2.0) -> Dict:
    """The master's state as its web UI serves it (workers, activeapps, completedapps, ...)."""
    return eng.loopback_json(ui_port, "/json/", timeout)


def _alive_workers(doc: Dict) -> List[Dict]:
    return [w for w in doc.get("workers", []) if w.get("state") == "ALIVE"]


def _pid_file(state: Path, cls: str) -> Path:
    return _dirs(state)["SPARK_PID_DIR"] / f"spark-beambleu-{cls}-1.pid"


def _read_pid(path: Path) -> Optional[int]:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def _logs_tail(state: Path, n: int = 15) -> str:
    parts = []
    for log in sorted(_dirs(state)["SPARK_LOG_DIR"].glob("*.out")):
        parts.append(f"--- {log}\n{eng.tail(log, n)}")
    return "\n".join(parts)


def _daemon(home: Path, state: Path, action: str, cls: str, args: List[str], timeout: float = 60) -> int:
    """sbin/spark-daemon.sh ACTION CLASS 1 ARGS, in a new session: the daemon it leaves running is
    in a process group of its own, whose id is returned (spark-daemon.sh's own pid)."""
    argv = ["bash", str(home / "sbin" / "spark-daemon.sh"), action, cls, "1", *args]
    log = _dirs(state)["SPARK_LOG_DIR"] / "spark-daemon.log"
    with open(log, "ab") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=daemon_env(home, state), start_new_session=True)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise EngineError(f"spark-daemon.sh {action} {cls} did not return within {timeout:.0f} s") from None
    if proc.returncode != 0:
        raise EngineError(f"spark-daemon.sh {action} {cls} exited with status {proc.returncode}; "
                          f"its output ({log}) ends:\n{eng.tail(log)}")
    return proc.pid


def start(state: Path, cores: int = 2, memory: str = "8g", timeout: float = 120.0) -> Dict:
    """Start the master and one worker; wait until the master reports the worker ALIVE."""
    record_file = state / RECORD
    if record_file.exists():
        old = json.loads(record_file.read_text())
        if any(eng._alive(p) for p in old.get("pids", {}).values()):
            raise EngineError(f"a Spark cluster is already running ({old['master_url']}); stop it first: "
                              f"python deploy/spark/cluster.py stop --state {state}")
        record_file.unlink()
    home = spark_home()
    for d in _dirs(state).values():
        d.mkdir(parents=True, exist_ok=True)
    port, ui_port, worker_ui_port = eng.free_port(), eng.free_port(), eng.free_port()
    while len({port, ui_port, worker_ui_port}) < 3:
        ui_port, worker_ui_port = eng.free_port(), eng.free_port()
    master_url = f"spark://127.0.0.1:{port}"
    record = {"service": "spark-cluster", "master_url": master_url, "port": port, "ui_port": ui_port,
              "ui": f"http://127.0.0.1:{ui_port}", "worker_ui_port": worker_ui_port, "cores": cores,
              "memory": memory, "spark_home": str(home), "version": spark_version(), "groups": {}, "pids": {},
              "dirs": {k: str(v) for k, v in _dirs(state).items()}}
    deadline = time.monotonic() + timeout
    try:
        record["groups"]["master"] = _daemon(home, state, "start", MASTER_CLASS,
                                             ["--host", "127.0.0.1", "--port", str(port),
                                              "--webui-port", str(ui_port)])
        record["groups"]["worker"] = _daemon(home, state, "start", WORKER_CLASS,
                                             ["--host", "127.0.0.1", "--webui-port", str(worker_ui_port),
                                              "--cores", str(cores), "--memory", memory, master_url])
        for name, cls in (("master", MASTER_CLASS), ("worker", WORKER_CLASS)):
            pid = _read_pid(_pid_file(state, cls))
            if pid:
                record["pids"][name] = pid
        record_file.write_text(json.dumps(record, indent=1) + "\n")  # so that stop finds it from here on
        while True:
            for name, pid in record["pids"].items():
                if not eng._alive(pid):
                    raise EngineError(f"the Spark {name} (pid {pid}) exited")
            with contextlib.suppress(OSError, ValueError):
                if _alive_workers(master_json(ui_port)):
                    return record
            if time.monotonic() > deadline:
                raise EngineError(f"the Spark master at {master_url} reported no ALIVE worker within {timeout:.0f} s")
            time.sleep(0.5)
    except EngineError as e:
        tail = _logs_tail(state)
        _stop(state, record)
        raise EngineError(f"{e} (stopped); the logs end:\n{tail}") from None


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _stop(state: Path, record: Dict, grace: float = eng.STOP_GRACE) -> bool:
    running = any(eng._alive(p) for p in record.get("pids", {}).values())
    home = Path(record["spark_home"])
    for cls in (WORKER_CLASS, MASTER_CLASS):
        if _pid_file(state, cls).exists():
            with contextlib.suppress(EngineError, OSError):
                _daemon(home, state, "stop", cls, [], timeout=30)
    deadline = time.monotonic() + grace
    groups = list(record.get("groups", {}).values())
    while time.monotonic() < deadline and any(_group_alive(g) for g in groups):
        time.sleep(0.2)
    for pgid in groups:  # whatever is left: the daemons, the worker's executors
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
    for pid in record.get("pids", {}).values():
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    for cls in (WORKER_CLASS, MASTER_CLASS):
        with contextlib.suppress(OSError):
            _pid_file(state, cls).unlink()
    with contextlib.suppress(OSError):
        (state / RECORD).unlink()
    return running


def stop(state: Path) -> bool:
    """Stop the cluster `start` made; False when none was running."""
    record_file = state / RECORD
    if not record_file.exists():
        return False
    return _stop(state, json.loads(record_file.read_text()))


def status(state: Path) -> Optional[Dict]:
    """The record and the master's /json/ of a running cluster, or None."""
    record_file = state / RECORD
    if not record_file.exists():
        return None
    record = json.loads(record_file.read_text())
    try:
        return {**record, "master": master_json(record["ui_port"])}
    except (OSError, ValueError):
        return None


# ---------------------------------------------------------------------------------------- the job server

def guava_class_path() -> str:
    """The job server's own Guava jars (from its resolved class path), for the executors."""
    cp_file = eng.fetch_job_server("spark-job-server").parent / "classpath.txt"
    jars = [p for p in cp_file.read_text().strip().split(os.pathsep)
            if "/com/google/guava/guava/" in p or "/com/google/guava/failureaccess/" in p]
    return os.pathsep.join(jars)


def job_server_env() -> Dict[str, str]:
    env = eng.env_with_this_python()
    opts = f"-Dspark.executor.extraClassPath={guava_class_path()}"
    env["JDK_JAVA_OPTIONS"] = f"{env['JDK_JAVA_OPTIONS']} {opts}" if env.get("JDK_JAVA_OPTIONS") else opts
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    return env


def start_job_server(state: Path, master: Optional[str] = None, port: Optional[int] = None,
                     timeout: float = 120.0) -> Dict:
    """deploy/engines.py's spark-job-server, with the executors' Guava first (see the module's doc)."""
    return eng.start("spark-job-server", state, port=port, master=master, timeout=timeout, env=job_server_env())


def cluster_master(state: Path) -> str:
    st = status(state)
    if not st:
        raise EngineError(f"no Spark cluster is running for {state}; start one: "
                          f"python deploy/spark/cluster.py start --state {state}")
    return st["master_url"]


# ---------------------------------------------------------------------------------------- command line

def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="deploy/spark/cluster.py", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("fetch", help="install Spark (pyspark) in its own venv and print SPARK_HOME")
    cmds = {}
    for name, what in (("start", "start the master and one worker"), ("status", "the master's URL and workers"),
                       ("stop", "stop the cluster"), ("start-job-server", "start Beam's Spark job server"),
                       ("stop-job-server", "stop it")):
        p = cmds[name] = sub.add_parser(name, help=what)
        p.add_argument("--state", type=Path, default=None, help="where logs and records go")
    cmds["start"].add_argument("--cores", type=int, default=2, help="cores the worker offers (default 2)")
    cmds["start"].add_argument("--memory", default="8g", help="memory the worker offers its executors (default 8g)")
    cmds["start"].add_argument("--timeout", type=float, default=120.0, help="seconds to wait for an ALIVE worker")
    js = cmds["start-job-server"]
    where = js.add_mutually_exclusive_group()
    where.add_argument("--cluster", action="store_true", help="submit to the cluster `start` made (same --state)")
    where.add_argument("--master", default=None, help="local[N] (default local[2]) or spark://HOST:PORT")
    js.add_argument("--port", type=int, default=None, help="the job port (default: a free one)")
    js.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for the port")
    args = parser.parse_args(argv)
    state = getattr(args, "state", None) or eng.default_state()
    try:
        if args.cmd == "fetch":
            print(spark_home())
        elif args.cmd == "start":
            rec = start(state, args.cores, args.memory, args.timeout)
            print(f"Spark {rec['version']} master {rec['master_url']} (web UI {rec['ui']}), one worker with "
                  f"{rec['cores']} cores and {rec['memory']}; logs in {rec['dirs']['SPARK_LOG_DIR']}")
        elif args.cmd == "status":
            st = status(state)
            if not st:
                print("no Spark cluster is running")
                return 1
            workers = _alive_workers(st["master"])
            print(f"{st['master_url']} {st['master'].get('status')}, {len(workers)} ALIVE worker(s), "
                  f"{len(st['master'].get('activeapps', []))} active and "
                  f"{len(st['master'].get('completedapps', []))} completed application(s); web UI {st['ui']}")
        elif args.cmd == "stop":
            print("Spark cluster stopped" if stop(state) else "no Spark cluster was running")
        elif args.cmd == "start-job-server":
            master = cluster_master(state) if args.cluster else args.master
            rec = start_job_server(state, master, args.port, args.timeout)
            print(f"spark-job-server listening on localhost:{rec['port']}, submitting to {master or 'local[2]'} "
                  f"(pid {rec['pid']}, log {rec['log']})")
        else:
            stopped = eng.stop("spark-job-server", state)
            print("spark-job-server stopped" if stopped else "spark-job-server was not running")
    except EngineError as e:
        print(f"deploy/spark/cluster.py: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

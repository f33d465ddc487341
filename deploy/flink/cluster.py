#!/usr/bin/env python3
"""A real Flink session cluster on this machine's loopback: one JobManager and one TaskManager.

    python deploy/flink/cluster.py start [--state DIR] [--slots 4] [--rest-port P] [--timeout S]
    python deploy/flink/cluster.py status [--state DIR]
    python deploy/flink/cluster.py stop [--state DIR]
    python deploy/flink/cluster.py home                   # installs Flink if needed; prints FLINK_HOME

Flink comes from PyPI: the ``apache-flink`` wheel and ``apache-flink-libraries`` together carry a
whole Flink distribution (``bin/start-cluster.sh``, ``lib/flink-dist-*.jar``, ``conf/``) inside the
``pyflink`` package. They pin an old apache-beam (< 2.49) for PyFlink's own Python API, which
beambleu does not use, so they go to a virtual environment of their own,
``$BEAMBLEU_ENGINES_HOME/flink-<version>/venv`` (default ``~/.cache/beambleu/engines``), installed
with ``--no-deps``: only the Java distribution is needed, and nothing from it is imported.

The version is Flink 1.19.0, the Flink that Beam 2.62.0's ``beam-runners-flink-1.19`` is built
against (its Maven dependencies are the 1.19.0 jars, and the job server of deploy/engines.py runs
them as the cluster's client), so client and cluster are the same release.

``start`` writes its own Flink configuration directory (``FLINK_CONF_DIR``) under
``DIR/flink-cluster/``: every address is 127.0.0.1, the REST and RPC ports are free ones (or
``--rest-port``), the TaskManager has ``--slots`` task slots (4) and memory sized for a
2-core/24 GiB machine, and the logs, pid files and temporary files stay in that directory. It
starts a JobManager and a TaskManager on localhost with Flink's ``bin/jobmanager.sh`` and
``bin/taskmanager.sh`` (what ``bin/start-cluster.sh`` does on localhost, but side by side) and
waits, at most ``--timeout`` seconds, until the REST endpoint's ``/overview`` reports a TaskManager and its
slots; then it writes ``DIR/flink-cluster.json`` and prints one line with the REST address (the
``--flink-master`` of the job server, the ``--flink_master`` of Beam's FlinkRunner). A cluster
that starts but does not report its slots in time is stopped (its logs and JVM thread dumps kept
in ``DIR/flink-cluster.attempt-1/``) and started once more on fresh ports, unless ``--rest-port``
was given; one that still does not come up is stopped and the end of its logs printed. ``stop`` stops both daemons
with their scripts (what ``bin/stop-cluster.sh`` does) and then kills whatever of the cluster is
left (its pids and process group). ``status`` prints the REST ``/overview`` (exit 3 when no
cluster answers).
DIR defaults to ``$BEAMBLEU_ENGINES_STATE`` or ``./.beambleu-engines``, as for deploy/engines.py.
Errors are one line on stderr (after the log tail, if any) and exit status 1.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Dict, List, Optional


def _deploy_engines():
    """deploy/engines.py, loaded by path (deploy/ is not a package) under the name the tests give it,
    so that a process that has both shares one module and one EngineError."""
    import importlib.util

    name = "beambleu_deploy_engines"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).resolve().parents[1] / "engines.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


engines = _deploy_engines()

EngineError = engines.EngineError

FLINK_VERSION = "1.19.0"
PACKAGES = [f"apache-flink=={FLINK_VERSION}", f"apache-flink-libraries=={FLINK_VERSION}"]
SLOTS = 4
JOBMANAGER_MEMORY = "1280m"
TASKMANAGER_MEMORY = "3072m"
# what Flink's own config.yaml passes to every JVM so that Flink runs on Java 17
JAVA_OPTS = ("--add-exports=java.base/sun.net.util=ALL-UNNAMED --add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED "
             "--add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED "
             "--add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.net=ALL-UNNAMED "
             "--add-opens=java.base/java.io=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED "
             "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.lang.reflect=ALL-UNNAMED "
             "--add-opens=java.base/java.text=ALL-UNNAMED --add-opens=java.base/java.time=ALL-UNNAMED "
             "--add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/java.util.concurrent=ALL-UNNAMED "
             "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED "
             "--add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED")
RECORD = "flink-cluster.json"
# bin/start-cluster.sh without its ssh branch, and with the two daemons started side by side
# (each spends seconds in Flink's bash-java-utils before its JVM starts; a TaskManager that is up
# first retries until the JobManager answers)
START = '"$1/jobmanager.sh" start & jm=$!; "$1/taskmanager.sh" start & tm=$!; wait "$jm" && wait "$tm"'
# and bin/stop-cluster.sh the same way: each daemon script SIGTERMs its process, waits up to 10 s,
# then SIGKILLs it
STOP = '"$1/taskmanager.sh" stop & tm=$!; "$1/jobmanager.sh" stop & jm=$!; wait "$tm"; wait "$jm"'


# ---------------------------------------------------------------------------------------- install

def venv_dir() -> Path:
    return engines.engines_home() / f"flink-{FLINK_VERSION}" / "venv"


def _find_home(venv: Path) -> Optional[Path]:
    for home in sorted(venv.glob("lib/python*/site-packages/pyflink")):
        if (home / "bin" / "start-cluster.sh").exists() and list(home.glob("lib/flink-dist-*.jar")):
            return home
    return None


def flink_home() -> Path:
    """The Flink distribution inside the venv, which is created the first time (bounded in time)."""
    venv = venv_dir()
    done = venv / ".beambleu-installed"
    if done.exists():
        home = _find_home(venv)
        if home:
            return home
    if venv.exists():  # a half-made one: start again
        shutil.rmtree(venv)
    venv.parent.mkdir(parents=True, exist_ok=True)
    proc = engines._run_bounded([sys.executable, "-m", "venv", str(venv)], f"creating {venv}")
    if proc.returncode != 0:
        raise EngineError(f"python -m venv {venv} failed: {(proc.stderr.strip().splitlines() or ['?'])[-1]}")
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
           "--no-deps", *PACKAGES]
    proc = engines._run_bounded(pip, f"installing Flink {FLINK_VERSION} from PyPI")
    if proc.returncode != 0:
        lines = [ln.strip() for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip()]
        raise EngineError(f"pip install {' '.join(PACKAGES)} failed: " + (lines[-1] if lines else
                                                                           f"exit status {proc.returncode}"))
    home = _find_home(venv)
    if home is None:
        raise EngineError(f"{' '.join(PACKAGES)} installed, but no Flink distribution (bin/start-cluster.sh, "
                          f"lib/flink-dist-*.jar) was found under {venv}")
    for script in (home / "bin").glob("*.sh"):  # pip keeps the modes, but be sure
        script.chmod(script.stat().st_mode | 0o111)
    done.write_text(" ".join(PACKAGES) + "\n")
    return home


# ---------------------------------------------------------------------------------------- config

def config_yaml(rest_port: int, rpc_port: int, slots: int, work: Path) -> str:
    """Flink 1.19's config.yaml (standard YAML, nested keys) for a loopback cluster in `work`."""
    return f"""\
# written by deploy/flink/cluster.py: a loopback session cluster on one machine
env:
  java:
    opts:
      all: {JAVA_OPTS}
  log:
    dir: {work / 'log'}
  pid:
    dir: {work / 'pid'}
jobmanager:
  bind-host: 127.0.0.1
  rpc:
    address: 127.0.0.1
    port: {rpc_port}
  memory:
    process:
      size: {JOBMANAGER_MEMORY}
  execution:
    failover-strategy: region
taskmanager:
  bind-host: 127.0.0.1
  host: 127.0.0.1
  numberOfTaskSlots: {slots}
  memory:
    process:
      size: {TASKMANAGER_MEMORY}
parallelism:
  default: 2
rest:
  address: 127.0.0.1
  bind-address: 127.0.0.1
  port: {rest_port}
io:
  tmp:
    dirs: {work / 'tmp'}
blob:
  storage:
    directory: {work / 'blobs'}
web:
  tmpdir: {work / 'web'}
"""


def write_conf(home: Path, work: Path, rest_port: int, rpc_port: int, slots: int) -> Path:
    conf = work / "conf"
    for d in (conf, work / "log", work / "pid", work / "tmp", work / "blobs", work / "web"):
        d.mkdir(parents=True, exist_ok=True)
    (conf / "config.yaml").write_text(config_yaml(rest_port, rpc_port, slots, work))
    (conf / "masters").write_text(f"localhost:{rest_port}\n")
    (conf / "workers").write_text("localhost\n")
    for name in ("log4j.properties", "log4j-console.properties", "log4j-cli.properties", "logback.xml"):
        src = home / "conf" / name
        if src.exists():
            shutil.copyfile(src, conf / name)
    return conf


# ---------------------------------------------------------------------------------------- REST

def rest_get(port: int, path: str, timeout: float = 5.0) -> Dict:
    return engines.loopback_json(port, path, timeout)


def overview(port: int) -> Optional[Dict]:
    """REST /overview, or None while it does not answer."""
    try:
        return rest_get(port, "/overview")
    except (OSError, ValueError, urllib.error.URLError):
        return None


def jobs(port: int) -> List[Dict]:
    """REST /jobs/overview: every job the cluster has run or runs (jid, name, state, ...)."""
    return rest_get(port, "/jobs/overview")["jobs"]


# ---------------------------------------------------------------------------------------- start/stop

def _env(home: Path, conf: Path) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FLINK_", "_FLINK"))}
    env["FLINK_CONF_DIR"] = str(conf)
    return env


def _pids(work: Path) -> List[int]:
    pids = []
    for f in sorted((work / "pid").glob("*.pid")):
        for line in f.read_text().split():
            with contextlib.suppress(ValueError):
                pids.append(int(line))
    return pids


def log_tail(work: Path, n: int = 15) -> str:
    parts = []
    for p in sorted((work / "log").glob("*")):
        text = engines.tail(p, n)
        if text.strip():
            parts.append(f"--- {p}\n{text}")
    return "\n".join(parts)


class _NotReady(EngineError):
    """Started, but the REST /overview did not report a TaskManager with slots in time."""


def thread_dumps(work: Path, pids: List[int]) -> List[Path]:
    """``jcmd PID Thread.print`` of each live Flink JVM into WORK/log/threads-PID.txt (what a hung
    JobManager was doing), each bounded in time; the files written."""
    jcmd = shutil.which("jcmd") or (str(Path(os.environ["JAVA_HOME"]) / "bin" / "jcmd")
                                    if os.environ.get("JAVA_HOME") else None)
    written = []
    if not jcmd:
        return written
    for pid in pids:
        if not engines._alive(pid):
            continue
        out = work / "log" / f"threads-{pid}.txt"
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            with open(out, "wb") as f:
                subprocess.run([jcmd, str(pid), "Thread.print"], stdout=f, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL, timeout=20)
            written.append(out)
    return written


def start(state: Path, slots: int = SLOTS, rest_port: Optional[int] = None, timeout: float = 120.0) -> Dict:
    """Start the cluster and wait until a TaskManager has registered its slots; returns the record
    (rest_port, rpc_port, pids, ...) also written to STATE/flink-cluster.json.

    A cluster that started but did not report its slots within ``timeout`` (seen once in CI: the
    JobManager stopped answering right after the TaskManager registered) is stopped, its logs and
    thread dumps kept in STATE/flink-cluster.attempt-1/, and started once more on fresh ports, unless
    the REST port was given; so the wait is bounded by twice ``timeout``."""
    state = Path(state).resolve()
    try:
        return _start_once(state, slots, rest_port, timeout)
    except _NotReady as e:
        if rest_port is not None:
            raise
        kept = state / "flink-cluster.attempt-1"
        if kept.exists():
            shutil.rmtree(kept)
        with contextlib.suppress(OSError):
            (state / "flink-cluster").rename(kept)
        print(f"deploy/flink/cluster.py: {str(e).partition(chr(10))[0]}; its logs are in {kept / 'log'}; "
              f"starting it once more", file=sys.stderr)
        record = _start_once(state, slots, None, timeout)
        record["earlier_attempt_logs"] = str(kept / "log")
        (state / RECORD).write_text(json.dumps(record, indent=1) + "\n")
        return record


def _start_once(state: Path, slots: int, rest_port: Optional[int], timeout: float) -> Dict:
    if shutil.which("java") is None:
        raise EngineError("java is not installed (Flink needs Java 11 or 17)")
    state = Path(state).resolve()  # Flink's scripts run in the work folder: every path absolute
    state.mkdir(parents=True, exist_ok=True)
    record_file = state / RECORD
    if record_file.exists():
        old = json.loads(record_file.read_text())
        if any(engines._alive(p) for p in old.get("pids", [])):
            raise EngineError(f"a Flink cluster is already running (REST port {old['rest_port']}); "
                              f"stop it first: python deploy/flink/cluster.py stop --state {state}")
        record_file.unlink()
    home = flink_home()
    work = state / "flink-cluster"
    if work.exists():
        shutil.rmtree(work)
    rest_port = rest_port or engines.free_port()
    rpc_port = engines.free_port()
    for port in (rest_port, rpc_port):
        if engines.port_open(port):
            raise EngineError(f"port {port} is already in use; give another with --rest-port")
    conf = write_conf(home, work, rest_port, rpc_port, slots)
    env = _env(home, conf)
    record = {"service": "flink-cluster", "flink": FLINK_VERSION, "flink_home": str(home), "conf": str(conf),
              "work": str(work), "rest_port": rest_port, "rpc_port": rpc_port, "slots": slots,
              "log_dir": str(work / "log")}
    with open(work / "log" / "start-cluster.out", "wb") as out:
        proc = subprocess.Popen(["bash", "-c", START, "start-cluster", str(home / "bin")], stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, cwd=work,
                                start_new_session=True)
    record["pgid"] = proc.pid  # the daemons it starts stay in its process group
    deadline = time.monotonic() + timeout
    try:
        try:
            proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            raise EngineError(f"starting the JobManager and TaskManager (bin/jobmanager.sh, bin/taskmanager.sh) did not return within {timeout:.0f} s") from None
        if proc.returncode != 0:
            raise EngineError(f"bin/jobmanager.sh or bin/taskmanager.sh exited with status {proc.returncode}")
        record["pids"] = _pids(work)
        record_file.write_text(json.dumps(record, indent=1) + "\n")
        while True:
            ov = overview(rest_port)
            if ov and ov.get("taskmanagers", 0) >= 1 and ov.get("slots-total", 0) >= 1:
                record.update(pids=_pids(work), flink_reported=ov.get("flink-version"),
                              taskmanagers=ov["taskmanagers"], slots_total=ov["slots-total"])
                record_file.write_text(json.dumps(record, indent=1) + "\n")
                return record
            dead = [p for p in _pids(work) if not engines._alive(p)]
            if dead:
                raise EngineError(f"a Flink process (pid {dead[0]}) exited while the cluster was starting")
            if time.monotonic() > deadline:
                dumps = thread_dumps(work, _pids(work))
                raise _NotReady(f"the Flink cluster did not report a TaskManager with slots on "
                                f"http://127.0.0.1:{rest_port}/overview within {timeout:.0f} s"
                                + (f" (last: {ov})" if ov else " (the REST endpoint never answered)")
                                + (f"; thread dumps: {', '.join(d.name for d in dumps)}" if dumps else ""))
            time.sleep(0.5)
    except BaseException as e:
        logs = log_tail(work)
        record["pids"] = _pids(work)
        _stop_record(record)
        with contextlib.suppress(FileNotFoundError):
            record_file.unlink()
        if isinstance(e, EngineError):
            raise type(e)(f"{e} (stopped; its logs are in {work / 'log'})" + (f"\n{logs}" if logs else "")) from None
        raise


def _stop_record(record: Dict) -> None:
    home, conf, work = Path(record["flink_home"]), Path(record["conf"]), Path(record["work"])
    if (home / "bin" / "jobmanager.sh").exists() and conf.exists():
        with contextlib.suppress(subprocess.TimeoutExpired, OSError):
            subprocess.run(["bash", "-c", STOP, "stop-cluster", str(home / "bin")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           stdin=subprocess.DEVNULL, env=_env(home, conf), cwd=work, timeout=60)
    pids = set(record.get("pids", [])) | (set(_pids(work)) if work.exists() else set())
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + engines.STOP_GRACE
    while time.monotonic() < deadline and any(engines._alive(p) for p in pids):
        time.sleep(0.2)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    if record.get("pgid"):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(record["pgid"], signal.SIGKILL)  # whatever of the group is left
    for pid in pids:  # reap them when they are our children (started in this process)
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, os.WNOHANG)


def stop(state: Path) -> bool:
    """Stop a cluster started by `start`; False when none was running."""
    record_file = state / RECORD
    if not record_file.exists():
        return False
    record = json.loads(record_file.read_text())
    running = any(engines._alive(p) for p in record.get("pids", []))
    _stop_record(record)
    record_file.unlink()
    return running


def status(state: Path) -> Optional[Dict]:
    """The record plus the REST /overview, or None when no cluster is recorded in STATE."""
    record_file = state / RECORD
    if not record_file.exists():
        return None
    record = json.loads(record_file.read_text())
    record["alive"] = [p for p in record.get("pids", []) if engines._alive(p)]
    record["overview"] = overview(record["rest_port"])
    return record


# ---------------------------------------------------------------------------------------- command line

def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="deploy/flink/cluster.py", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("home", help=f"install Flink {FLINK_VERSION} if needed and print FLINK_HOME")
    for name in ("start", "status", "stop"):
        p = sub.add_parser(name, help=f"{name} the cluster")
        p.add_argument("--state", type=Path, default=None, help="where the config, logs and record go")
        if name == "start":
            p.add_argument("--slots", type=int, default=SLOTS, help="task slots of the TaskManager")
            p.add_argument("--rest-port", type=int, default=None, help="REST port (default: a free one)")
            p.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for the TaskManager")
    args = parser.parse_args(argv)
    state = getattr(args, "state", None) or engines.default_state()
    try:
        if args.cmd == "home":
            print(flink_home())
        elif args.cmd == "start":
            rec = start(state, args.slots, args.rest_port, args.timeout)
            print(f"flink-cluster {FLINK_VERSION} on localhost:{rec['rest_port']} (REST; --flink-master "
                  f"localhost:{rec['rest_port']}), {rec['taskmanagers']} TaskManager, {rec['slots_total']} slots, "
                  f"logs in {rec['log_dir']}")
        elif args.cmd == "status":
            rec = status(state)
            if rec is None:
                print("flink-cluster is not running")
                return 3
            ov = rec["overview"]
            if ov is None:
                print(f"flink-cluster recorded (REST port {rec['rest_port']}) but its REST endpoint does not answer; "
                      f"live pids: {rec['alive']}")
                return 3
            print(f"flink-cluster {ov.get('flink-version')} on localhost:{rec['rest_port']}: "
                  f"{ov['taskmanagers']} TaskManager, {ov['slots-available']}/{ov['slots-total']} slots free, "
                  f"jobs running {ov['jobs-running']}, finished {ov['jobs-finished']}, failed {ov['jobs-failed']}")
        else:
            print("flink-cluster stopped" if stop(state) else "flink-cluster was not running")
    except EngineError as e:
        text = str(e)
        first, _, rest = text.partition("\n")
        if rest:  # the end of the logs first, so that the last line says what failed
            print(rest, file=sys.stderr)
        print(f"deploy/flink/cluster.py: {first}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Beam's engines on one machine: fetch them, start them, stop them.

    python deploy/engines.py versions                      # what each engine pins
    python deploy/engines.py fetch ENGINE                  # prints the jar's or binary's path
    python deploy/engines.py start SERVICE [--port P] [--master M] [--state DIR] [--timeout S]
    python deploy/engines.py stop SERVICE [--state DIR]

ENGINE is prism, flink-job-server or spark-job-server. SERVICE is one of those or worker-pool
(Beam's Python SDK worker pool, for --environment_type EXTERNAL). ``start`` runs the service in
the background (its own process group, its log in ``DIR/SERVICE.log``), waits until its port
answers (at most ``--timeout`` seconds), writes ``DIR/SERVICE.json`` (pid, port, command) and prints
one line with the address; a service that exits or does not answer in time is stopped, and the
last lines of its log are printed. ``stop`` ends the process group (SIGTERM, then SIGKILL after
10 s). DIR defaults to ``$BEAMBLEU_ENGINES_STATE`` or ``./.beambleu-engines``. The per-engine
scripts in deploy/flink, deploy/spark and deploy/prism call this; the tests and benchmarks import it.

Where things come from
----------------------
``fetch`` is beambleu's own (:mod:`beambleu.beam.engines`, which ``beambleu run --runner FlinkRunner``,
``SparkRunner`` or ``PrismRunner`` calls when no jar or binary is given): a job server is Beam
2.62.0's Flink or Spark runner library and its dependencies, resolved with Maven into a *pathing
jar* (a manifest naming the main class and every dependency, linked into ``lib/`` beside it, on
``Class-Path``), which Beam's FlinkRunner and SparkRunner start like their shaded jar; Prism is built
with ``go install`` from the Go module at the installed apache-beam's version (without Go, Beam's
release binary is downloaded). Why 2.62.0, and what Maven Central serves: see that module.

Jars, their ``lib/`` folders and binaries go to ``$BEAMBLEU_ENGINES_HOME`` (default
``~/.cache/beambleu/engines``), so a second fetch costs nothing; a job server's folder copied there
from another machine is used as it is. ``BEAMBLEU_MAVEN_REPOSITORY`` replaces Maven Central,
``BEAMBLEU_PRISM_RELEASES`` Beam's GitHub releases. Errors are one line on stderr and exit status 1.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional

try:  # what fetches and caches the engines is beambleu's own (`beambleu run` fetches them too)
    from beambleu.beam.engines import (FETCH_TIMEOUT, JOB_SERVERS, PRISM_MODULE, EngineError, beam_version,
                                       engines_home, fetch, fetch_job_server, fetch_prism, job_server_jar,
                                       jvm_options, manifest, prism_binary, run_bounded as _run_bounded)
except ImportError as exc:  # pragma: no cover - run outside beambleu's environment
    sys.exit(f"deploy/engines.py: beambleu is not installed in this environment (pip install -e '.[beam]'): {exc}")

__all__ = ["FETCH_TIMEOUT", "JOB_SERVERS", "PRISM_MODULE", "SERVICES", "SPARK_JAVA_OPENS", "STOP_GRACE",
           "_run_bounded",  # (deploy/flink/cluster.py's name for beambleu.beam.engines.run_bounded)
           "EngineError", "beam_version", "default_state", "engines_home", "env_with_this_python", "fetch",
           "fetch_job_server", "fetch_prism", "free_port", "job_server_jar", "jvm_options", "loopback_json", "main",
           "manifest",
           "port_open", "prism_binary", "service_argv", "start", "stop", "tail", "versions"]

# what Beam's SparkRunner passes to java on Java 17 (Spark reaches into these packages)
SPARK_JAVA_OPENS = ["--add-opens=java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens=java.base/java.nio=ALL-UNNAMED",
                    "--add-opens=java.base/java.util=ALL-UNNAMED",
                    "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED"]

STOP_GRACE = 10.0


def default_state() -> Path:
    return Path(os.environ.get("BEAMBLEU_ENGINES_STATE") or ".beambleu-engines")


# ---------------------------------------------------------------------------------------- services

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def loopback_json(port: int, path: str, timeout: float = 5.0):
    """GET http://127.0.0.1:PORT/PATH as JSON, never through a proxy: urllib's ``urlopen`` uses an
    opener built at its first call from the proxy variables of that moment, and a process that
    once called it under ``http_proxy`` would send loopback requests to that proxy ever after."""
    import json
    import urllib.request

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(f"http://127.0.0.1:{port}{path}", timeout=timeout) as r:
        return json.loads(r.read())


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket() as s:
        s.settimeout(1.0)
        return s.connect_ex((host, port)) == 0


def service_argv(service: str, port: int, master: Optional[str]) -> List[str]:
    """The command that runs `service` listening on `port`."""
    if service == "prism":
        return [str(fetch_prism()), "--job_port", str(port), "--serve_http=false"]
    if service == "flink-job-server":
        return ["java", *jvm_options(service), "-jar", str(fetch_job_server(service)),
                "--flink-master", master or "[local]",
                "--job-port", str(port), "--artifact-port", "0", "--expansion-port", "0"]
    if service == "spark-job-server":
        return ["java", *SPARK_JAVA_OPENS, "-jar", str(fetch_job_server(service)),
                "--spark-master-url", master or "local[2]",
                "--job-port", str(port), "--artifact-port", "0", "--expansion-port", "0"]
    if service == "worker-pool":
        return [sys.executable, "-m", "apache_beam.runners.worker.worker_pool_main", f"--service_port={port}"]
    raise EngineError(f"unknown service {service!r} (choose from {', '.join(SERVICES)})")


SERVICES = ["prism", "flink-job-server", "spark-job-server", "worker-pool"]


def env_with_this_python() -> Dict[str, str]:
    """The environment with this interpreter's bin/ first on PATH: Beam's worker pool starts SDK
    workers with the `python` it finds there, so they import the same beambleu."""
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    return env


def tail(path: Path, n: int = 20) -> str:
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join(lines[-n:])


def start(service: str, state: Path, port: Optional[int] = None, master: Optional[str] = None,
          timeout: float = 120.0, env: Optional[Dict[str, str]] = None) -> Dict:
    """Start `service` in the background and wait until its port answers; its record (pid, port,
    argv, log) is returned and written to STATE/SERVICE.json."""
    state.mkdir(parents=True, exist_ok=True)
    record_file = state / f"{service}.json"
    if record_file.exists():
        old = json.loads(record_file.read_text())
        if _alive(old["pid"]):
            raise EngineError(f"{service} is already running (pid {old['pid']}, port {old['port']}); "
                              f"stop it first: python deploy/engines.py stop {service} --state {state}")
    port = port or free_port()
    if port_open(port):
        raise EngineError(f"port {port} is already in use; give another with --port")
    argv = service_argv(service, port, master)
    log_path = state / f"{service}.log"
    with open(log_path, "wb") as log:
        try:
            proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    env=env or env_with_this_python(), start_new_session=True, cwd=state)
        except FileNotFoundError:
            raise EngineError(f"{argv[0]} is not installed ({service} needs it)") from None
    deadline = time.monotonic() + timeout
    while not port_open(port):
        if proc.poll() is not None:
            raise EngineError(f"{service} exited with status {proc.returncode} before listening on port {port}; "
                              f"its log ({log_path}) ends:\n{tail(log_path)}")
        if time.monotonic() > deadline:
            _kill_group(proc.pid)
            raise EngineError(f"{service} did not listen on port {port} within {timeout:.0f} s (stopped); "
                              f"its log ({log_path}) ends:\n{tail(log_path)}")
        time.sleep(0.2)
    record = {"service": service, "pid": proc.pid, "port": port, "argv": argv, "log": str(log_path)}
    record_file.write_text(json.dumps(record, indent=1) + "\n")
    return record


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _kill_group(pid: int, grace: float = STOP_GRACE) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                break
        except ChildProcessError:  # not our child: poll for it
            if not _alive(pid):
                break
        time.sleep(0.1)
    else:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)  # whatever of the group is left


def stop(service: str, state: Path) -> bool:
    """Stop a service started by `start`; False when none was running."""
    record_file = state / f"{service}.json"
    if not record_file.exists():
        return False
    record = json.loads(record_file.read_text())
    running = _alive(record["pid"])
    if running:
        _kill_group(record["pid"])
    record_file.unlink()
    return running


# ---------------------------------------------------------------------------------------- command line

def versions() -> List[str]:
    lines = [f"prism\tbeam {beam_version()}\tgo install {PRISM_MODULE}@v{beam_version()}"]
    for name, spec in JOB_SERVERS.items():
        lines.append(f"{name}\tbeam {spec['beam']}\t{spec['engine']}\t{spec['main']}")
    return lines


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="deploy/engines.py", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("versions", help="what each engine pins")
    f = sub.add_parser("fetch", help="build or resolve an engine and print its path")
    f.add_argument("engine", choices=["prism", *JOB_SERVERS])
    for name in ("start", "stop"):
        p = sub.add_parser(name, help=f"{name} a service")
        p.add_argument("service", choices=SERVICES)
        p.add_argument("--state", type=Path, default=None, help="where logs and pid records go")
        if name == "start":
            p.add_argument("--port", type=int, default=None, help="port to listen on (default: a free one)")
            p.add_argument("--master", default=None,
                           help="the job server's engine: [local] or HOST:PORT (Flink), local[N] or "
                                "spark://HOST:PORT (Spark)")
            p.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for the port")
    args = parser.parse_args(argv)
    try:
        if args.cmd == "versions":
            print("\n".join(versions()))
        elif args.cmd == "fetch":
            print(fetch(args.engine))
        elif args.cmd == "start":
            rec = start(args.service, args.state or default_state(), args.port, args.master, args.timeout)
            print(f"{args.service} listening on localhost:{rec['port']} (pid {rec['pid']}, log {rec['log']})")
        else:
            state = args.state or default_state()
            print(f"{args.service} stopped" if stop(args.service, state) else f"{args.service} was not running")
    except EngineError as e:
        print(f"deploy/engines.py: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

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
Beam publishes each Java job server as one shaded jar (``beam-runners-flink-<flink>-job-server``,
``beam-runners-spark-3-job-server``), but Maven Central as served here has none of those jars, at
any version. It does serve the runner libraries they are built from, and the job server's main
class is in them. So ``fetch`` resolves the runner library and its dependencies with Maven (a
generated ``pom.xml`` and ``mvn dependency:build-classpath``) and writes a *pathing jar*: a jar
with only a manifest, naming the main class and listing every dependency jar on ``Class-Path``.
``java -jar`` runs it like the shaded jar, so it goes where Beam expects a job-server jar
(``--flink_job_server_jar``, ``--spark_job_server_jar``) and Beam's FlinkRunner and SparkRunner
start it themselves.

The installed apache-beam is 2.77.0, but the newest Beam whose Flink and Spark runners resolve with
all their dependencies is 2.62.0: 2.70.0's runners are served but their
``beam-runners-java-job-service`` is not, and no runner between the two is. A 2.62.0 job server
runs 2.77.0 Python pipelines: the client and the job server speak the portable Runner API, and the
SDK harness that runs the Python code is the installed 2.77.0 one. Beam 2.62.0's served Flink
runner is for Flink 1.19 only; its Spark 3 runner is given Spark 3.5 (the ``pyspark`` 3.5 line).
Prism is built from the Go module at the installed apache-beam's own version.

Jars and binaries go to ``$BEAMBLEU_ENGINES_HOME`` (default ``~/.cache/beambleu/engines``), the
jars' dependencies to Maven's own repository (``~/.m2``), so a second fetch costs nothing. Errors
are one line on stderr and exit status 1.
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
import zipfile
from pathlib import Path
from typing import Dict, List, Optional

PRISM_MODULE = "github.com/apache/beam/sdks/v2/go/cmd/prism"

# Java job servers: what each is made of
JOB_SERVERS: Dict[str, Dict] = {
    "flink-job-server": {
        "beam": "2.62.0",
        "engine": "Flink 1.19.0",
        "main": "org.apache.beam.runners.flink.FlinkJobServerDriver",
        "deps": [
            ("org.apache.beam", "beam-runners-flink-1.19", "2.62.0"),
            ("org.apache.beam", "beam-runners-java-job-service", "2.62.0"),
            ("org.slf4j", "slf4j-simple", "1.7.30"),
        ],
    },
    "spark-job-server": {
        "beam": "2.62.0",
        "engine": "Spark 3.5.7",
        "main": "org.apache.beam.runners.spark.SparkJobServerDriver",
        "deps": [
            ("org.apache.beam", "beam-runners-spark-3", "2.62.0"),
            ("org.apache.beam", "beam-runners-java-job-service", "2.62.0"),
            # Beam's Spark runner declares Spark "provided": the job server brings its own
            ("org.apache.spark", "spark-core_2.12", "3.5.7"),
            ("org.apache.spark", "spark-streaming_2.12", "3.5.7"),
            ("org.slf4j", "slf4j-simple", "1.7.30"),
        ],
    },
}

# what Beam's SparkRunner passes to java on Java 17 (Spark reaches into these packages)
SPARK_JAVA_OPENS = ["--add-opens=java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens=java.base/java.nio=ALL-UNNAMED",
                    "--add-opens=java.base/java.util=ALL-UNNAMED",
                    "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED"]

FETCH_TIMEOUT = float(os.environ.get("BEAMBLEU_FETCH_TIMEOUT", "1200"))
STOP_GRACE = 10.0


class EngineError(Exception):
    """A fetch or start that failed; its text is the one line printed."""


def engines_home() -> Path:
    return Path(os.environ.get("BEAMBLEU_ENGINES_HOME") or Path.home() / ".cache" / "beambleu" / "engines")


def default_state() -> Path:
    return Path(os.environ.get("BEAMBLEU_ENGINES_STATE") or ".beambleu-engines")


def beam_version() -> str:
    try:
        import apache_beam
    except ImportError:
        raise EngineError("apache-beam is not installed in this environment (pip install -e '.[beam]')") from None
    return apache_beam.__version__


# ---------------------------------------------------------------------------------------- fetch

def _run_bounded(argv: List[str], what: str, **kwargs) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=FETCH_TIMEOUT, **kwargs)
    except FileNotFoundError:
        raise EngineError(f"{argv[0]} is not installed ({what} needs it)") from None
    except subprocess.TimeoutExpired:
        raise EngineError(f"{what} did not finish in {FETCH_TIMEOUT:.0f} s") from None


def _pom(name: str) -> str:
    spec = JOB_SERVERS[name]
    deps = "\n".join(
        f"    <dependency><groupId>{g}</groupId><artifactId>{a}</artifactId><version>{v}</version></dependency>"
        for g, a, v in spec["deps"])
    return ("<project xmlns=\"http://maven.apache.org/POM/4.0.0\">\n"
            "  <modelVersion>4.0.0</modelVersion>\n"
            f"  <groupId>beambleu.engines</groupId><artifactId>{name}</artifactId>"
            f"<version>{spec['beam']}</version>\n"
            f"  <dependencies>\n{deps}\n  </dependencies>\n</project>\n")


def manifest(main: str, jars: List[Path]) -> bytes:
    """MANIFEST.MF naming `main` and the jars (file: URLs) on Class-Path, lines folded at 72 bytes."""
    def fold(line: str) -> List[bytes]:
        raw, out = line.encode(), []
        while raw:
            width = 72 if not out else 71
            out.append((b" " if out else b"") + raw[:width])
            raw = raw[width:]
        return out

    class_path = " ".join(p.resolve().as_uri() for p in jars)
    lines = [b"Manifest-Version: 1.0", f"Main-Class: {main}".encode(), *fold(f"Class-Path: {class_path}"),
             b"Created-By: beambleu deploy/engines.py", b"", b""]
    return b"\r\n".join(lines)


def job_server_jar(name: str) -> Path:
    beam = JOB_SERVERS[name]["beam"]
    return engines_home() / f"beam-{name}-{beam}" / f"beam-{name}-{beam}.jar"


def fetch_job_server(name: str) -> Path:
    """The pathing jar of a Java job server, resolved with Maven the first time."""
    jar = job_server_jar(name)
    cp_file = jar.parent / "classpath.txt"
    if jar.exists() and cp_file.exists():
        jars = [Path(p) for p in cp_file.read_text().strip().split(os.pathsep) if p]
        if jars and all(p.exists() for p in jars):
            return jar
    jar.parent.mkdir(parents=True, exist_ok=True)
    (jar.parent / "pom.xml").write_text(_pom(name))
    proc = _run_bounded(["mvn", "-B", "-q", "-f", str(jar.parent / "pom.xml"), "dependency:build-classpath",
                         f"-Dmdep.outputFile={cp_file}"], f"resolving the {name} with Maven")
    if proc.returncode != 0:
        errors = [ln.strip() for ln in (proc.stdout + proc.stderr).splitlines() if "ERROR" in ln]
        raise EngineError(f"Maven could not resolve the {name}: "
                          + (errors[0] if errors else f"exit status {proc.returncode}"))
    jars = [Path(p) for p in cp_file.read_text().strip().split(os.pathsep) if p]
    tmp = jar.with_name(jar.name + ".tmp")
    with zipfile.ZipFile(tmp, "w") as z:
        z.writestr("META-INF/MANIFEST.MF", manifest(JOB_SERVERS[name]["main"], jars))
    os.replace(tmp, jar)
    return jar


def prism_binary(version: Optional[str] = None) -> Path:
    version = version or beam_version()
    return engines_home() / f"prism-{version}" / "prism"


def fetch_prism(version: Optional[str] = None) -> Path:
    """Beam's Prism runner, built with `go install` from the Go module at the installed Beam's version."""
    version = version or beam_version()
    binary = prism_binary(version)
    if binary.exists():
        return binary
    binary.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "GOBIN": str(binary.parent), "GOFLAGS": os.environ.get("GOFLAGS", "") + " -mod=mod"}
    proc = _run_bounded(["go", "install", f"{PRISM_MODULE}@v{version}"], f"building Prism v{version}", env=env)
    if proc.returncode != 0 or not binary.exists():
        lines = [ln.strip() for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip()]
        raise EngineError(f"go install {PRISM_MODULE}@v{version} failed: "
                          + (lines[-1] if lines else f"exit status {proc.returncode}"))
    return binary


def fetch(engine: str) -> Path:
    if engine == "prism":
        return fetch_prism()
    if engine in JOB_SERVERS:
        return fetch_job_server(engine)
    raise EngineError(f"nothing to fetch for {engine!r} (choose from prism, {', '.join(JOB_SERVERS)})")


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
        return ["java", "-jar", str(fetch_job_server(service)), "--flink-master", master or "[local]",
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

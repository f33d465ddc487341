"""Real engines on loopback for the tests and benchmarks: a dask cluster, an S3 server (moto), a GCS
emulator, and Beam's engines (Prism, Flink, Spark and the SDK worker pool) through deploy/engines.py.

Each is started as separate processes from this interpreter's environment (so the workers import
the same beambleu), waits until it answers, and is stopped (process group killed) on exit.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Dict, Iterator, List, Optional


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode} before listening on {port}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"{what} did not listen on port {port} within {timeout:.0f} s")


def env_with_this_python() -> Dict[str, str]:
    """The environment with this interpreter's bin/ first on PATH: Beam's worker pool starts
    SDK workers with the `python` it finds there."""
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    return env


class Service:
    """Background processes started in their own process group, logging to files."""

    def __init__(self, log_dir: Path):
        self.log_dir = Path(log_dir)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.procs: List[subprocess.Popen] = []

    def start(self, name: str, argv: List[str], env: Optional[Dict[str, str]] = None) -> subprocess.Popen:
        log = open(self.log_dir / f"{name}.log", "wb")
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env or env_with_this_python(),
                                start_new_session=True, cwd=self.log_dir)
        log.close()
        self.procs.append(proc)
        return proc

    def stop(self) -> None:
        for proc in reversed(self.procs):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in reversed(self.procs):
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        self.procs.clear()

    def launch(self) -> None:
        """Start the processes and wait until they answer (subclasses)."""

    def __enter__(self):
        try:
            self.launch()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def logs(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}" for p in sorted(self.log_dir.glob("*.log")))


class DaskCluster(Service):
    """`dask scheduler` and N `dask worker` processes (one process, one thread each, with a nanny
    that restarts a worker that dies) on 127.0.0.1, configured as deploy/dask/start-local-cluster.sh
    configures its workers (``beambleu.beam.runners.DASK_WORKER_ENV``). ``worker_env`` adds to the
    workers' environment (dask reads its configuration from ``DASK_...`` variables)."""

    def __init__(self, log_dir: Path, n_workers: int = 2, worker_env: Optional[Dict[str, str]] = None,
                 worker_args: Optional[List[str]] = None):
        super().__init__(log_dir)
        self.n_workers = n_workers
        self.worker_env = worker_env or {}
        self.worker_args = list(worker_args or [])  # more `dask worker` options (e.g. --memory-limit)
        self.port = free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"

    def launch(self) -> None:
        from beambleu.beam.runners import DASK_WORKER_ENV

        sched = self.start("scheduler", [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host",
                                         "127.0.0.1", "--port", str(self.port), "--no-dashboard"])
        wait_for_port(self.port, sched, "dask scheduler")
        for i in range(self.n_workers):
            self.start(f"worker-{i}", [sys.executable, "-m", "distributed.cli.dask_worker", self.address,
                                       "--nworkers", "1", "--nthreads", "1", "--no-dashboard",
                                       "--name", f"worker-{i}", "--local-directory", str(self.log_dir),
                                       *self.worker_args],
                       env={**env_with_this_python(), **DASK_WORKER_ENV, **self.worker_env})
        with self.client() as client:  # registered, running or not (a paused worker never runs)
            deadline = time.monotonic() + 120
            while len(client.scheduler_info(n_workers=-1)["workers"]) < self.n_workers:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{self.n_workers} dask workers did not start within 120 s\n{self.logs()}")
                time.sleep(0.1)

    def scheduler(self) -> subprocess.Popen:
        return self.procs[0]

    def client(self):
        from distributed import Client

        return Client(self.address, timeout=60)

    def worker_pids(self) -> Dict[str, int]:
        """{worker address: pid of the worker process itself (not its nanny)}"""
        with self.client() as client:
            return client.run(os.getpid)


@contextlib.contextmanager
def moto_s3(log_dir: Path) -> Iterator[Dict[str, str]]:
    """An S3 server (moto in server mode) on loopback; yields the environment a client needs."""
    svc = Service(log_dir)
    port = free_port()
    try:
        proc = svc.start("moto", [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)])
        wait_for_port(port, proc, "moto server")
        yield {"AWS_ACCESS_KEY_ID": "beambleu-test-key", "AWS_SECRET_ACCESS_KEY": "beambleu-test-secret",
               "AWS_DEFAULT_REGION": "us-east-1", "endpoint": f"http://127.0.0.1:{port}"}
    finally:
        svc.stop()


@contextlib.contextmanager
def gcs_emulator(log_dir: Path) -> Iterator[Dict[str, str]]:
    """gcp-storage-emulator on loopback; yields STORAGE_EMULATOR_HOST and a project."""
    svc = Service(log_dir)
    port = free_port()
    try:
        proc = svc.start("gcs", [sys.executable, "-m", "gcp_storage_emulator", "start", "--host", "127.0.0.1",
                                 "--port", str(port), "--in-memory"])
        wait_for_port(port, proc, "GCS emulator")
        yield {"STORAGE_EMULATOR_HOST": f"http://127.0.0.1:{port}", "GOOGLE_CLOUD_PROJECT": "beambleu-test"}
    finally:
        svc.stop()


def beambleu_subprocess(args: List[str], env: Optional[Dict[str, str]] = None, timeout: float = 600,
                        cwd: Optional[str] = None) -> subprocess.CompletedProcess:
    """`beambleu ...` in a child process with a timeout (a portable job whose worker is broken
    hangs rather than fails)."""
    return subprocess.run([sys.executable, "-m", "beambleu.cli", *map(str, args)], capture_output=True, text=True,
                          env={**env_with_this_python(), **(env or {})}, timeout=timeout, cwd=cwd)


# ----------------------------------------------------------------- Beam's engines (deploy/engines.py)

REPO = Path(__file__).resolve().parents[1]


def deploy_engines():
    """deploy/engines.py, the script users run, imported as a module (deploy/ is not a package)."""
    import importlib.util

    name = "beambleu_deploy_engines"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, REPO / "deploy" / "engines.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def engines_required() -> bool:
    """.ci/run sets BEAMBLEU_REQUIRE_ENGINES=1: there an engine that cannot be fetched or started
    fails its tests instead of skipping them."""
    return os.environ.get("BEAMBLEU_REQUIRE_ENGINES") == "1"


def fetch_or_skip(engine: str) -> Path:
    """The engine's jar or binary; a test skips (naming why) when it cannot be had here, unless
    engines are required."""
    import pytest

    eng = deploy_engines()
    try:
        return eng.fetch(engine)
    except eng.EngineError as e:
        if engines_required():
            pytest.fail(f"{engine}: {e}")
        pytest.skip(f"{engine} cannot be fetched here: {e}")


@contextlib.contextmanager
def engine_service(service: str, state: Path, **kwargs) -> Iterator[Dict]:
    """A service of deploy/engines.py, started for the duration of the block; yields its record."""
    eng = deploy_engines()
    record = eng.start(service, state, **kwargs)
    try:
        yield record
    finally:
        eng.stop(service, state)


# ---------------------------------------------------------------------------------------- faults

def assert_failed_cleanly(proc, outputs: List[Path]) -> str:
    """Exit non-zero, exactly one `beambleu: error: ...` line, no traceback, no output left."""
    assert proc.returncode != 0, proc.stderr
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("beambleu: error")]
    assert len(errors) == 1, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    left = [str(p) for p in outputs if p.exists()]
    assert not left, f"outputs left behind by a failed run: {left}\n{proc.stderr}"
    return errors[0]


def descendants(pid: int) -> List[int]:
    """Every descendant of `pid` (from /proc)."""
    parents = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            parents[int(d.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parents.items() if pp == p]
        out += kids
        todo += kids
    return out


def cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def connected(pid: int) -> bool:
    """Whether process ``pid`` holds an established TCP connection (an SDK worker's control
    channel, made once its imports are done): one of its socket descriptors in /proc/PID/net/tcp{,6}
    with state 01."""
    try:
        inodes = set()
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            link = os.readlink(fd)
            if link.startswith("socket:["):
                inodes.add(link[8:-1])
    except OSError:
        return False
    for table in ("tcp", "tcp6"):
        try:
            rows = Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if len(fields) > 9 and fields[3] == "01" and fields[9] in inodes:
                return True
    return False


@contextlib.contextmanager
def killing_a_busy_worker(pool_pid: int, min_cpu: float, poll: float) -> Iterator[Dict[str, float]]:
    """While the block runs, SIGKILL the first descendant of ``pool_pid`` started during it (an SDK
    worker the pool started for the block's job, not one an earlier job left behind) that has used
    ``min_cpu`` CPU seconds since it connected to the runner, looking every ``poll`` seconds. Counting
    from the connection, not from its start: its imports alone take 2-3 CPU-s, and a worker killed
    before it connected is a runner waiting for a worker (Prism: "didn't get control connection"
    after a minute), not the dead worker these tests are about. Yields a dict that then holds its
    ``pid``, the monotonic time ``at`` of the kill and its ``cpu`` seconds since connecting (without
    them, none got that busy: then ``busiest`` is the most CPU any of them was seen with since)."""
    killed: Dict[str, float] = {"busiest": 0.0}
    done = threading.Event()
    earlier = set(descendants(pool_pid))
    since: Dict[int, float] = {}  # a connected worker's CPU seconds when it was first seen connected

    def kill_a_busy_worker():
        while not done.is_set():
            for pid in set(descendants(pool_pid)) - earlier:
                if pid not in since:
                    if not connected(pid):
                        continue
                    since[pid] = cpu_seconds(pid)
                cpu = cpu_seconds(pid) - since[pid]
                killed["busiest"] = max(killed["busiest"], cpu)
                if cpu >= min_cpu:
                    os.kill(pid, signal.SIGKILL)
                    killed.update(pid=pid, at=time.monotonic(), cpu=cpu)
                    return
            time.sleep(poll)

    killer = threading.Thread(target=kill_a_busy_worker, daemon=True)
    killer.start()
    try:
        yield killed
    finally:
        done.set()
        killer.join(5)

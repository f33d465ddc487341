"""Runner-specific set-up: which Beam runner runs the job, how it is tuned and waited for.

Everything that knows about a particular engine (the local FnApiRunner's worker processes,
Beam's DaskRunner, its partitions, what it cannot run and a bounded wait for its cluster,
closing a runner's client, the Flink and Spark job server jars and the Prism binary that
beambleu fetches when none is given, the progress line each runner can feed) lives here, so
that ``run_command`` only plans, builds the pipeline and reports.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import time
from typing import Dict, List, Optional

from ..errors import Parser, UsageError
from ..io.inputs import PipelineInputError
from ..io.stores import TimeoutOptions
from . import engines
from .progress import FnApiRunner, JobMetrics, Progress, result_source, show_progress

__all__ = ["DASK_MAX_PARTITIONS", "DASK_NAMES", "ENGINE_RUNNERS", "JOB_ENDPOINT_PROBE_SECONDS",
           "MULTIPROCESS_THRESHOLD", "ClusterError", "StallWatch", "beam_option_parser", "check_job_endpoint",
           "close_result", "import_dask_runner", "partition_dask_input", "pipeline_options", "resolve_engine",
           "scale_local_runner", "wait_until_finish", "wants_dask", "with_progress"]

#: below this many pairs one in-process worker is faster than starting worker processes
MULTIPROCESS_THRESHOLD = 2_000_000


#: ``--runner`` names served by Beam's DaskRunner (which Beam cannot find by a short name itself)
DASK_NAMES = ("dask", "daskrunner")


def wants_dask(runner: Optional[str], beam_argv: List[str]) -> bool:
    return (runner or "").lower() in DASK_NAMES or any(a.startswith("--dask_") for a in beam_argv)


def import_dask_runner():
    """Beam's DaskRunner module (it defines the ``--dask_*`` options), or a clear error."""
    try:
        import dask.distributed  # noqa: F401
        from apache_beam.runners.dask import dask_runner
    except ImportError as exc:
        raise PipelineInputError(f"--runner dask needs the dask extra: pip install 'beambleu[dask]' ({exc})") from None
    return dask_runner


def beam_option_parser() -> argparse.ArgumentParser:
    """Every option Beam knows (all PipelineOptions subclasses imported so far)."""
    from apache_beam.options.pipeline_options import PipelineOptions


    parser = Parser(add_help=False, exit_on_error=False)  # no prefix matching: -l is not -lc
    seen = set()

    def visit(cls):
        for sub in cls.__subclasses__():
            if sub not in seen:
                seen.add(sub)
                try:
                    sub._add_argparse_args(parser)
                except argparse.ArgumentError:
                    pass  # the same option defined by two classes
                visit(sub)

    visit(PipelineOptions)
    return parser


def pipeline_options(beam_argv: List[str], runner: Optional[str]):
    """(PipelineOptions, runner object or None when Beam resolves ``--runner`` by name)."""
    from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions

    opts = PipelineOptions(beam_argv)
    runner_obj = None
    name = (runner or "").lower() or None
    if name is None or name in ("fnapirunner", "fnapi"):
        runner_obj = FnApiRunner()  # Beam's, whose counters the progress line can read while it runs
    elif name in DASK_NAMES:
        runner_obj = import_dask_runner().DaskRunner()
    else:
        opts.view_as(StandardOptions).runner = runner
    return opts, runner_obj


def scale_local_runner(opts, beam_argv: List[str], total_rows: int) -> None:
    """One worker process per core for large inputs on the local runner, unless the user chose."""
    from apache_beam.options.pipeline_options import DirectOptions

    user_set = any(a.startswith(("--direct_num_workers", "--direct_running_mode")) for a in beam_argv)
    if not user_set and total_rows >= MULTIPROCESS_THRESHOLD and (os.cpu_count() or 1) > 1:
        direct = opts.view_as(DirectOptions)
        direct.direct_running_mode = "multi_processing"
        direct.direct_num_workers = os.cpu_count()


#: most dask tasks per stage beambleu asks for: work items beyond this share partitions
DASK_MAX_PARTITIONS = 4096


def partition_dask_input(opts, beam_argv: List[str], n_items: int) -> None:
    """One dask partition (so one task) per row group, unless the user chose.

    Beam's DaskRunner puts 128 created elements in a partition by default, and the reshuffle
    keeps that count: our few hundred row-group work items would all be read by one task on one
    worker while the others idle."""
    if any(a.startswith(("--dask_npartitions", "--dask_partition_size")) for a in beam_argv):
        return
    from apache_beam.runners.dask.dask_runner import DaskOptions

    opts.view_as(DaskOptions).npartitions = max(1, min(n_items, DASK_MAX_PARTITIONS))


def close_result(result, timeout: float = 5.0) -> None:
    """Disconnect a runner's client (the DaskRunner leaves its dask Client open), giving up after
    ``timeout`` seconds: a scheduler that stopped answering must not hold the exit."""
    client = getattr(result, "client", None)
    if client is not None and hasattr(client, "close"):
        try:
            client.close(timeout=timeout)
        except Exception:  # pragma: no cover - best effort
            pass


# --- the progress line ---------------------------------------------------------------------------

#: runners whose job service reports the counters only once the job has ended
_COUNT_AT_END = ("FlinkRunner", "SparkRunner")


def with_progress(runner_obj, opts, total_pairs: Optional[int], sink):
    """(runner, :class:`~beambleu.beam.progress.Progress`): the runner object the pipeline is to be
    given (the one Beam would make from ``--runner`` when ``runner_obj`` is None), whose
    ``run_pipeline`` shows the progress line on ``sink`` from the start of the job; pass the
    progress to :func:`wait_until_finish`."""
    if runner_obj is None:
        from apache_beam.options.pipeline_options import StandardOptions
        from apache_beam.runners.runner import create_runner

        runner_obj = create_runner(opts.view_as(StandardOptions).runner or StandardOptions.DEFAULT_RUNNER)
    name = type(runner_obj).__name__
    note = f"none counted yet ({name}'s job server reports counters when the job ends)" \
        if name in _COUNT_AT_END else ""
    progress = Progress(total_pairs, sink, note=note)
    return show_progress(runner_obj, progress), progress


# --- a portable runner's job server ------------------------------------------------------------

#: ``--runner`` (lower case, "runner" left out) -> the engine beambleu fetches for it, Beam's option
#: naming it, and what messages call it
ENGINE_RUNNERS = {
    "flink": ("flink-job-server", "FlinkRunnerOptions", "flink_job_server_jar", "JAR"),
    "spark": ("spark-job-server", "SparkRunnerOptions", "spark_job_server_jar", "JAR"),
    "prism": ("prism", "PrismRunnerOptions", "prism_location", "PATH"),
}


def resolve_engine(opts) -> Optional[str]:
    """``--runner FlinkRunner``, ``SparkRunner`` or ``PrismRunner`` without a ``--job_endpoint``
    and without Beam's option naming its job server jar or binary: beambleu's, from its cache
    (:mod:`beambleu.beam.engines`), fetched there the first time (one line says so); where it
    cannot be had, one line saying how to stage it (a :class:`PipelineInputError`: exit 1). The
    path set, or None when the user's own (or no) engine is used."""
    from apache_beam.options import pipeline_options as po

    name = (opts.view_as(po.StandardOptions).runner or "").lower()
    name = name[:-len("runner")] if name.endswith("runner") else name
    if name not in ENGINE_RUNNERS or opts.view_as(po.PortableOptions).job_endpoint:
        return None
    engine, options_class, flag, metavar = ENGINE_RUNNERS[name]
    view = opts.view_as(getattr(po, options_class))
    if getattr(view, flag):
        return None
    path = engines.cached(engine)
    label = engines.ENGINES[engine]
    if path is None:
        _say(f"fetching {label} (once: it is kept in {engines.engines_home()})")
        try:
            path = engines.fetch(engine)
        except engines.EngineError as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise PipelineInputError(f"could not fetch {label} ({reason}): {engines.staging_hint(engine)}, or pass "
                                     f"--{flag}={metavar}") from None
        _say(f"fetched {label} to {path}")
    setattr(view, flag, str(path))
    return str(path)


#: how long a given --job_endpoint may take to accept a connection before the job is refused
JOB_ENDPOINT_PROBE_SECONDS = 10.0


def check_job_endpoint(opts) -> None:
    """A portable job's ``--job_endpoint`` must accept a connection before the job is built: Beam
    itself would wait ``--job_server_timeout`` (300 s) and end in a bare FutureTimeoutError. The
    probe waits at most 10 s (or ``--job_server_timeout`` when that is shorter). Without one,
    the job server jar or Prism binary Beam is to start must be had (:func:`resolve_engine`)."""
    from apache_beam.options.pipeline_options import PortableOptions

    portable = opts.view_as(PortableOptions)
    endpoint = portable.job_endpoint
    if not endpoint:
        resolve_engine(opts)
        return
    if endpoint == "embed":
        return
    host, _, port = endpoint.rpartition(":")
    if not port.isdigit():
        raise UsageError(f"--job_endpoint {endpoint}: expected HOST:PORT")
    wait = min(JOB_ENDPOINT_PROBE_SECONDS, float(portable.job_server_timeout or JOB_ENDPOINT_PROBE_SECONDS))
    deadline = time.monotonic() + wait
    while True:
        try:
            socket.create_connection((host.strip("[]") or "localhost", int(port)),
                                     timeout=max(0.5, deadline - time.monotonic())).close()
            return
        except OSError as exc:
            if time.monotonic() + 0.5 >= deadline:
                reason = exc.strerror or type(exc).__name__
                raise ClusterError(f"no job server answers at {endpoint} ({reason}, waited {wait:g} s); start one "
                                   "(python deploy/engines.py start ...) or correct --job_endpoint") from None
            time.sleep(0.5)


# --- waiting for a job, bounded on dask ------------------------------------------------------

class ClusterError(RuntimeError):
    """The cluster failed, not the input: a lost scheduler or a job that made no progress."""


def wait_until_finish(result, opts, progress: Optional[Progress] = None) -> None:
    """Wait for the job. A dask job that makes no progress for ``--dask_stall_timeout`` seconds, or
    whose scheduler is lost, ends in a :class:`ClusterError` (one line saying why); workers
    paused under memory pressure are announced on stderr as they are seen. Other runners'
    results are waited for as Beam does (the local runner has run the job inside ``run()``).

    Progress is a worker that answers the scheduler and runs a task or changes its tasks'
    states. The tasks left behind are released when the client is closed.

    ``progress`` (from :func:`with_progress`): the line follows the job while it runs, and says
    all pairs done once it has ended; a job that fails erases it."""
    if progress is None:
        _wait(result, opts)
        return
    source = result_source(result)
    progress.watch(source)
    try:
        _wait(result, opts)
    except BaseException:
        progress.abort()
        raise
    progress.finish(source.final() if isinstance(source, JobMetrics) else None)


def _wait(result, opts) -> None:
    futures, client = getattr(result, "futures", None), getattr(result, "client", None)
    if futures is None or client is None:
        result.wait_until_finish()
        return

    stall_timeout = opts.view_as(TimeoutOptions).dask_stall_timeout
    futures = list(futures) if isinstance(futures, (list, tuple)) else [futures]
    watch = StallWatch(client.scheduler.address, stall_timeout)
    poll, answer_within = min(1.0, stall_timeout / 10), min(5.0, max(1.0, stall_timeout / 4))
    while not all(f.done() for f in futures):
        asked = time.monotonic()
        stalled = watch.observe(_identity(client, answer_within), asked)
        if stalled:
            raise ClusterError(f"{stalled}; --dask_stall_timeout={stall_timeout:g} sets this limit")
        time.sleep(poll)
    for f in futures:
        if f.status == "error":
            f.result()  # raises the worker's exception, as Beam's wait does
        elif f.status != "finished":  # cancelled or lost: the scheduler went away or dropped the job
            raise ClusterError(f"lost the dask scheduler at {watch.address} before the job finished "
                               f"(the job's result is {f.status})")


def _identity(client, timeout: float) -> Optional[dict]:
    """The scheduler's view of its workers, or None when it does not answer within ``timeout``."""
    try:
        return client.sync(client.scheduler.identity, n_workers=-1, callback_timeout=timeout)
    except Exception:  # a closed comm, a timeout, a client that gave up reconnecting
        return None


def _say(message: str) -> None:
    print(f"beambleu: {message}", file=sys.stderr, flush=True)


class StallWatch:
    """Tells a slow dask job from a stalled one, from successive snapshots of the scheduler."""

    #: a worker's task states in which it works
    WORKING = ("executing", "long-running", "flight")

    def __init__(self, address: str, timeout: float):
        self.address, self.timeout = address, timeout
        self.workers: Dict[str, dict] = {}  # worker address -> its previous snapshot
        self.heard: Dict[str, float] = {}  # worker address -> when its heartbeat last advanced
        self.paused: set = set()  # workers announced as paused
        self.last_progress: Optional[float] = None
        self.silent_since: Optional[float] = None  # the scheduler's
        self.silence_announced = False

    def observe(self, state: Optional[dict], now: float) -> Optional[str]:
        """Record one snapshot (None: the scheduler did not answer); the reason the job is
        stalled, or None while it may still progress."""
        if self.last_progress is None:
            self.last_progress = now
        if state is None:
            if self.silent_since is None:
                self.silent_since = now
            # a missed answer or two is normal (the scheduler is busy taking the job's graph): say so
            # once it has been silent for half the limit
            if not self.silence_announced and now - self.silent_since >= self.timeout / 2:
                self.silence_announced = True
                _say(f"the dask scheduler at {self.address} does not answer; giving up after {self.timeout:g} s")
            if now - self.silent_since >= self.timeout:
                return f"the dask scheduler at {self.address} has not answered for {self.timeout:g} s"
            return None
        self.silent_since, self.silence_announced = None, False
        workers = state.get("workers", {})
        for addr, w in workers.items():
            before = self.workers.get(addr)
            counts = w.get("metrics", {}).get("task_counts", {})
            if before is None or w.get("last_seen") != before.get("last_seen"):
                self.heard[addr] = now
                changed = before is not None and counts != before.get("metrics", {}).get("task_counts", {})
                if changed or any(counts.get(s) for s in self.WORKING):
                    self.last_progress = now
            self._announce(addr, w)
        self.workers = workers
        if now - self.last_progress < self.timeout:
            return None
        return f"the dask cluster at {self.address} made no progress for {self.timeout:g} s ({self._why(now)})"

    def _announce(self, addr: str, w: dict) -> None:
        if w.get("status") != "paused":
            self.paused.discard(addr)
        elif addr not in self.paused:
            self.paused.add(addr)
            memory, limit = w.get("metrics", {}).get("memory"), w.get("memory_limit")
            use = f" ({memory / 1e9:.1f} GB of its {limit / 1e9:.1f} GB limit)" if memory and limit else ""
            _say(f"dask worker {w.get('name', addr)} is paused under memory pressure{use}: it starts no task "
                 f"until memory is freed; giving up after {self.timeout:g} s without progress")

    def _why(self, now: float) -> str:
        if not self.workers:
            return "no workers"
        names = {a: str(w.get("name", a)) for a, w in self.workers.items()}
        silent = sorted(names[a] for a in names if now - self.heard.get(a, now) >= min(5.0, self.timeout / 2))
        paused = sorted(names[a] for a in names if a in self.paused)
        n = len(names)
        parts = ([f"{len(silent)} of {n} workers not answering: {', '.join(silent)}"] if silent else []) + \
                ([f"{len(paused)} of {n} workers paused under memory pressure: {', '.join(paused)}"] if paused else [])
        return "; ".join(parts) or f"{n} workers idle"

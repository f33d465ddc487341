"""Runner-specific set-up: which Beam runner runs the job, how it is tuned and waited for.

Everything that knows about a particular engine (the local FnApiRunner's worker processes,
Beam's DaskRunner, its partitions, what it cannot run and a bounded wait for its cluster,
closing a runner's client, the Flink and Spark job server jars and the Prism binary that
beambleu fetches when none is given, what an engine Beam starts needs (its jar, free ports, a
Flink cluster with task slots) checked before the job, an engine's failure told in one line (a
dead SDK worker, a dask worker over its memory limit), the progress line each runner can feed)
lives here, so that ``run_command`` only plans, builds the pipeline and reports.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import socket
import sys
import time
from typing import Dict, List, Optional

from ..errors import Parser, UsageError
from ..io.inputs import PipelineInputError
from ..io.stores import TimeoutOptions
from . import engines
from .progress import FnApiRunner, JobMetrics, Progress, result_source, show_progress

__all__ = ["DASK_MAX_PARTITIONS", "DASK_NAMES", "DASK_PARTITIONS_PER_THREAD", "DASK_THREADS_SECONDS",
           "DASK_WORKER_CONFIG", "DASK_WORKER_ENV", "ENGINE_RUNNERS", "JOB_ENDPOINT_PROBE_SECONDS",
           "FLINK_REST_SECONDS", "MULTIPROCESS_THRESHOLD", "PRISM_EXPERIMENTS", "ClusterError", "StallWatch",
           "beam_option_parser", "check_engine_start", "check_flink_master", "check_job_endpoint", "close_result",
           "default_jvm_options", "explain_failure", "import_dask_runner", "make_dask_runner", "one_local_worker",
           "partition_dask_input", "pipeline_options", "port_in_use", "resolve_engine", "scale_local_runner",
           "wait_until_finish", "wants_dask", "with_progress"]

#: below this many pairs one in-process worker is faster than starting worker processes
MULTIPROCESS_THRESHOLD = 2_000_000


#: ``--runner`` names served by Beam's DaskRunner (which Beam cannot find by a short name itself)
DASK_NAMES = ("dask", "daskrunner")

#: dask configuration for the worker processes beambleu starts (the DaskRunner's local cluster, without
#: ``--dask_client_address``) and its deploy/dask script starts. dask's nanny puts
#: ``MALLOC_TRIM_THRESHOLD_=65536`` in every worker's environment; glibc then keeps its mmap threshold
#: fixed at 128 KiB (any threshold set by hand stops it adapting), so each larger buffer (a batch's
#: statistics, the kernels' scratch) is mapped afresh and unmapped again: 2.4x the minor page faults
#: and 5-10% more CPU on 1M pairs in a plain read-and-count loop (a fixed 64 MiB trim threshold still
#: gave 1.8x the faults). None leaves glibc its own adaptive thresholds; dask's other variables
#: (``OMP_NUM_THREADS=1``, which also sizes Arrow's thread pool) stay.
DASK_WORKER_CONFIG = {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}

#: :data:`DASK_WORKER_CONFIG` as the environment of a ``dask worker`` command (dask reads
#: ``DASK_*`` variables; a dict value is merged into dask's own)
DASK_WORKER_ENV = {"DASK_DISTRIBUTED__NANNY__PRE_SPAWN_ENVIRON": "{'MALLOC_TRIM_THRESHOLD_': None}"}


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


def make_dask_runner():
    """Beam's DaskRunner, whose local cluster (started when there is no ``--dask_client_address``)
    gets :data:`DASK_WORKER_CONFIG`; a cluster at an address was configured where it was started."""
    import dask

    class DaskRunner(import_dask_runner().DaskRunner):
        def run_pipeline(self, pipeline, options):
            with dask.config.set(DASK_WORKER_CONFIG):  # read by each nanny as the client starts it
                return super().run_pipeline(pipeline, options)

    return DaskRunner()


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


#: experiments beambleu gives a Prism job. Prism splits a bundle whose input and outputs did not move
#: between two of its progress requests (every 0.1 s at first), as a read-and-count step's work item (a
#: row group, summed before it leaves the step) often does, and runs the rest as a bundle of its own in
#: the same SDK worker: a second thread under the one GIL, which the kernels hold. On 1M pairs that
#: cost the worker 0.96 system CPU-seconds instead of 0.35, and 0.90x the local runner's pairs per
#: CPU-second instead of 1.00x (python -m benchmarks.engines --engines prism --size 1000000 --rounds 2
#: --variant 'prism:nosplit=--experiments=prism_disable_sdf_split')
PRISM_EXPERIMENTS = ("prism_disable_sdf_split",)


def pipeline_options(beam_argv: List[str], runner: Optional[str]):
    """(PipelineOptions, runner object or None when Beam resolves ``--runner`` by name); a Prism job
    gets :data:`PRISM_EXPERIMENTS`."""
    from apache_beam.options.pipeline_options import DebugOptions, PipelineOptions, StandardOptions

    opts = PipelineOptions(beam_argv)
    runner_obj = None
    name = (runner or "").lower() or None
    if name is None or name in ("fnapirunner", "fnapi"):
        runner_obj = FnApiRunner()  # Beam's, whose counters the progress line can read while it runs
    elif name in DASK_NAMES:
        runner_obj = make_dask_runner()
    else:
        opts.view_as(StandardOptions).runner = runner
        if name.removesuffix("runner") == "prism":
            for experiment in PRISM_EXPERIMENTS:
                opts.view_as(DebugOptions).add_experiment(experiment)
    return opts, runner_obj


def scale_local_runner(opts, beam_argv: List[str], total_rows: int) -> None:
    """One worker process per core for large inputs on the local runner, unless the user chose."""
    from apache_beam.options.pipeline_options import DirectOptions

    user_set = any(a.startswith(("--direct_num_workers", "--direct_running_mode")) for a in beam_argv)
    if not user_set and total_rows >= MULTIPROCESS_THRESHOLD and (os.cpu_count() or 1) > 1:
        direct = opts.view_as(DirectOptions)
        direct.direct_running_mode = "multi_processing"
        direct.direct_num_workers = os.cpu_count()


def one_local_worker(opts) -> bool:
    """Whether the local runner (FnApiRunner) runs the job in this process on one worker (its
    ``in_memory`` mode with one worker, the default below :data:`MULTIPROCESS_THRESHOLD` pairs):
    there, spreading the work items over workers (a Reshuffle) would only cost."""
    from apache_beam.options.pipeline_options import DirectOptions

    direct = opts.view_as(DirectOptions)
    workers = direct.direct_num_workers
    if workers == 0:  # (the FnApiRunner's "one per core")
        workers = os.cpu_count() or 1
    return direct.direct_running_mode == "in_memory" and (workers or 1) == 1


#: most dask tasks per stage beambleu asks for: work items beyond this share partitions
DASK_MAX_PARTITIONS = 4096

#: dask partitions per worker thread of the cluster: enough that a faster worker takes more, few
#: enough that dask's per-task cost (the scheduler, each worker's event loop, the shuffles of the
#: GroupByKeys, which grow with the partitions) stays small beside the work itself
DASK_PARTITIONS_PER_THREAD = 2

#: how long the scheduler may take to say how many worker threads it has (else: a partition per item)
DASK_THREADS_SECONDS = 5.0


def dask_threads(opts) -> Optional[int]:
    """The worker threads of the dask cluster at ``--dask_client_address`` (without one, the
    DaskRunner starts a local cluster of one thread per core); None when the scheduler does not
    answer in time or has no workers yet."""
    from apache_beam.runners.dask.dask_runner import DaskOptions

    address = getattr(opts.view_as(DaskOptions), "address", None)
    if not address:
        return os.cpu_count() or 1
    try:
        from distributed import Client

        with Client(address, timeout=DASK_THREADS_SECONDS, set_as_default=False) as client:
            workers = client.scheduler_info(n_workers=-1).get("workers", {})
    except Exception:  # an unreachable scheduler is the job's to report (wait_until_finish)
        return None
    return sum(w.get("nthreads", 0) for w in workers.values()) or None


def partition_dask_input(opts, beam_argv: List[str], n_items: int, threads: Optional[int] = None) -> None:
    """Dask partitions (so tasks) for the work items, unless the user chose: one per row group,
    at most :data:`DASK_PARTITIONS_PER_THREAD` per worker thread of the cluster (``threads``, or
    asked of the scheduler by :func:`dask_threads`).

    Beam's DaskRunner puts 128 created elements in a partition by default, and the reshuffle
    keeps that count: our few hundred row-group work items would all be read by one task on one
    worker while the others idle. One partition per row group spreads them, but each partition
    costs the cluster CPU of its own (its tasks in the scheduler and the worker's event loop, and
    the shuffles of the GroupByKeys after it): on 1M pairs (22 row groups) and one worker, 2
    partitions took the scheduler's CPU from 1.0-1.35 to 0.56-0.65 s and the job's from 10.6-12.7
    to 9.0-10.7 CPU-s (deploy/dask/README.md)."""
    if any(a.startswith(("--dask_npartitions", "--dask_partition_size")) for a in beam_argv):
        return
    from apache_beam.runners.dask.dask_runner import DaskOptions

    if threads is None:
        threads = dask_threads(opts)
    n = min(n_items, DASK_MAX_PARTITIONS)
    if threads:
        n = min(n, DASK_PARTITIONS_PER_THREAD * threads)
    opts.view_as(DaskOptions).npartitions = max(1, n)


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


def _check_given_engine(engine: str, flag: str, given: str) -> None:
    """A ``--flink_job_server_jar``, ``--spark_job_server_jar`` or ``--prism_location`` that is a
    local path must exist: Beam would say to build the job server with ``./gradlew`` (or fail
    later, for Prism). A URL is Beam's to download."""
    from urllib.parse import urlparse

    if os.path.exists(given) or urlparse(given).scheme not in ("", "file"):
        return
    if engine == "prism":
        where = f"beambleu keeps the one it fetches at {engines.prism_binary()}"
    else:
        where = f"beambleu keeps the one it fetches in {engines.job_server_jar(engine).parent}"
    raise PipelineInputError(f"--{flag}={given}: no such file; fetch {engines.ENGINES[engine]} with `python "
                             f"deploy/engines.py fetch {engine}` ({where}), or leave --{flag} out and beambleu "
                             "fetches it")


def _engine_name(opts) -> str:
    from apache_beam.options.pipeline_options import StandardOptions

    name = (opts.view_as(StandardOptions).runner or "").lower()
    return name[:-len("runner")] if name.endswith("runner") else name


#: the job server's ports Beam passes to each engine it starts (``JobServerOptions``)
_ENGINE_PORTS = {"flink": ("job_port", "artifact_port", "expansion_port"),
                 "spark": ("job_port", "artifact_port", "expansion_port"), "prism": ("job_port",)}


def port_in_use(port: int) -> Optional[str]:
    """Why ``port`` cannot be listened on here (None: it can), as a server would bind it."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("", port))
        except OSError as exc:
            return exc.strerror or type(exc).__name__
    return None


def check_engine_start(opts) -> None:
    """What Beam needs to start a Flink or Spark job server or Prism itself, checked in a second
    instead of Beam's ``Service failed to start up`` after 16 s: the user's jar or binary there
    (Beam would say to build it with ``./gradlew``), its ports (``--job_port``,
    ``--artifact_port``, ``--expansion_port``) free, its Java launcher there, and a Flink
    ``--flink_master HOST:PORT`` with TaskManager slots (:func:`check_flink_master`)."""
    from apache_beam.options import pipeline_options as po

    name = _engine_name(opts)
    if name not in _ENGINE_PORTS:
        return
    engine, options_class, flag, _ = ENGINE_RUNNERS[name]
    given = getattr(opts.view_as(getattr(po, options_class)), flag)
    if given:  # the user's own (else resolve_engine has set beambleu's, which exists)
        _check_given_engine(engine, flag, given)
    server = opts.view_as(po.JobServerOptions)
    what = "Prism" if name == "prism" else f"the {name.capitalize()} job server"
    for option in _ENGINE_PORTS[name]:
        port = getattr(server, option, 0) or 0
        reason = port_in_use(port) if port > 0 else None
        if reason:
            raise PipelineInputError(
                f"port {port} (--{option}) is in use ({reason}): {what}, which Beam starts, cannot listen there; "
                f"pass another --{option} or leave it out (a free port is picked), or, if a job server already "
                f"listens there, pass --job_endpoint=localhost:{port}")
    launcher = getattr(server, "job_server_java_launcher", None) or "java"
    if name in ("flink", "spark") and shutil.which(launcher) is None:
        raise PipelineInputError(f"{launcher} is not installed: {what} needs Java 11 or 17 (install a JDK, or "
                                 "pass --job_server_java_launcher=PATH)")
    if name == "flink":
        check_flink_master(opts, required=True)


def default_jvm_options(opts) -> None:
    """The Flink job server Beam starts gets beambleu's JVM options (:func:`engines.jvm_options`: a
    bounded heap, the serial collector) unless ``--job_server_jvm_properties`` gives some."""
    from apache_beam.options.pipeline_options import JobServerOptions

    name = _engine_name(opts)
    engine = ENGINE_RUNNERS.get(name, (None,))[0]
    server = opts.view_as(JobServerOptions)
    if engine in engines.JOB_SERVERS and not server.job_server_jvm_properties:
        server.job_server_jvm_properties = engines.jvm_options(engine)


#: how long a Flink cluster's REST API may take to answer beambleu's question about its slots
FLINK_REST_SECONDS = 5.0


def _flink_rest(master: str) -> Optional[str]:
    """``--flink_master`` as the REST API's base URL, or None for ``[local]``, ``[auto]``..."""
    master = (master or "").strip()
    if not master or master.startswith("["):
        return None
    return (master if "://" in master else f"http://{master}").rstrip("/")


def check_flink_master(opts, required: bool) -> None:
    """A Flink cluster (``--flink_master HOST:PORT``) with no TaskManager, or fewer task slots than
    ``--parallelism``: one line now, instead of a job that waits 300 s for slots and ends in a
    ``TimeoutException``. ``required``: the REST API must answer (Beam starts the job server on
    this machine, which must reach it too); with a ``--job_endpoint``, a REST API that does not
    answer from here is not checked (the job server may reach it where this machine cannot)."""
    import json
    import urllib.request

    from apache_beam.options.pipeline_options import FlinkRunnerOptions

    flink = opts.view_as(FlinkRunnerOptions)
    base = _flink_rest(flink.flink_master)
    if base is None:
        return
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never through a proxy
    try:
        with opener.open(f"{base}/overview", timeout=FLINK_REST_SECONDS) as r:
            overview = json.loads(r.read())
    except (OSError, ValueError) as exc:
        if not required:
            return
        reason = getattr(exc, "reason", None) or exc
        raise PipelineInputError(f"no Flink REST API answers at {base}/overview ({reason}); start the cluster "
                                 "(deploy/flink/flink.sh start-cluster) or correct --flink_master") from None
    managers, slots = overview.get("taskmanagers", 0), overview.get("slots-total", 0)
    if not managers or not slots:
        raise PipelineInputError(
            f"the Flink cluster at {base} has no TaskManager ({managers} TaskManagers, {slots} task slots): a job "
            "would wait 300 s for slots and fail; start a TaskManager (Flink's bin/taskmanager.sh start, or "
            "deploy/flink/flink.sh start-cluster) or run Flink inside the job server with --flink_master=[local]")
    if flink.parallelism and flink.parallelism > slots:
        raise PipelineInputError(
            f"--parallelism {flink.parallelism} needs {flink.parallelism} task slots and the Flink cluster at "
            f"{base} has {slots} ({managers} TaskManagers): a job would wait 300 s for slots and fail; pass "
            f"--parallelism {slots} or less, or start more TaskManagers")


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
        check_engine_start(opts)
        default_jvm_options(opts)
        return
    if endpoint == "embed":
        return
    if _engine_name(opts) == "flink":
        check_flink_master(opts, required=False)
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
        _explained_wait(result, opts)
        return
    source = result_source(result)
    progress.watch(source)
    try:
        _explained_wait(result, opts)
    except BaseException:
        progress.abort()
        raise
    progress.finish(source.final() if isinstance(source, JobMetrics) else None)


def _explained_wait(result, opts) -> None:
    try:
        _wait(result, opts)
    except ClusterError:
        raise
    except Exception as exc:
        message = explain_failure(exc, opts)
        if message is None:
            raise
        raise ClusterError(message) from exc


#: what Beam's runners say when the Python SDK worker running a bundle went away: Prism's job
#: service, and the gRPC status the Java runners (Flink, Spark) see on the worker's data channel
_SDK_WORKER_DIED = re.compile(r"SDK worker disconnected|CANCELLED: client cancelled|CANCELLED: Multiplexer hanging up")

#: the marker of beambleu's own one-line input errors (``beambleu.io.input_errors``): never re-worded
_INPUT_ERROR = re.compile(r"beambleu-input-error|\bPipelineInputError\b")


def explain_failure(exc: BaseException, opts) -> Optional[str]:
    """One line for a job that failed because its engine did, not its input: a Python SDK worker
    that died (Beam says ``SDK worker disconnected`` or ``CANCELLED: client cancelled``), with
    where its log is. None: the error is not one of these (it is raised as it is)."""
    text = _chain_text(exc)
    if _INPUT_ERROR.search(text):
        return None
    m = _SDK_WORKER_DIED.search(text)
    if not m:
        return None
    return (f"the Python SDK worker running the job died ({m.group(0)}): it was killed or crashed, often for "
            f"lack of memory (a smaller --batch-size or fewer workers per machine use less); {_worker_log(opts)}")


def _chain_text(exc: Optional[BaseException]) -> str:
    seen, parts = set(), []
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        parts.append(f"{type(exc).__name__}: {exc}")
        exc = exc.__cause__ or exc.__context__
    return "\n".join(parts)


def _worker_log(opts) -> str:
    """Where the SDK worker of this job logged, as far as the client knows."""
    from apache_beam.options.pipeline_options import PortableOptions

    portable = opts.view_as(PortableOptions)
    kind = (portable.environment_type or "").upper()
    config = portable.environment_config or ""
    if kind == "EXTERNAL":
        return (f"its log is the output of the SDK worker pool at {config} (deploy/engines.py start worker-pool "
                "writes it to STATE/worker-pool.log)")
    if kind == "LOOPBACK":
        return "it ran in this process: its log is Beam's log"
    if kind == "DOCKER":
        return "its log is its container's (docker logs), on the machine that ran it"
    return "its log is the runner's (the job server's or the task manager's log)"


def _wait(result, opts) -> None:
    futures, client = getattr(result, "futures", None), getattr(result, "client", None)
    if futures is None or client is None:
        result.wait_until_finish()
        return

    stall_timeout = opts.view_as(TimeoutOptions).dask_stall_timeout
    futures = list(futures) if isinstance(futures, (list, tuple)) else [futures]
    watch = StallWatch(client.scheduler.address, stall_timeout)
    since = time.time() - 5.0  # the nannies' memory events of this job (their clocks: this machine's, or close)
    poll, answer_within = min(1.0, stall_timeout / 10), min(5.0, max(1.0, stall_timeout / 4))
    while not all(f.done() for f in futures):
        asked = time.monotonic()
        stalled = watch.observe(_identity(client, answer_within), asked)
        if stalled:
            raise ClusterError(f"{stalled}; --dask_stall_timeout={stall_timeout:g} sets this limit")
        time.sleep(poll)
    for f in futures:
        if f.status == "error":
            try:
                f.result()  # raises the worker's exception, as Beam's wait does
            except Exception as exc:
                if type(exc).__name__ != "KilledWorker":
                    raise
                raise ClusterError(_killed_worker(exc, client, watch, since)) from exc
        elif f.status != "finished":  # cancelled or lost: the scheduler went away or dropped the job
            raise ClusterError(f"lost the dask scheduler at {watch.address} before the job finished "
                               f"(the job's result is {f.status})")


def _killed_worker(exc: BaseException, client, watch: "StallWatch", since: float) -> str:
    """One line for dask's ``KilledWorker`` (a task whose workers all died running it): when their
    nannies restarted them for exceeding their memory limit (the scheduler's
    ``worker-restart-memory`` events), say so and how to raise it."""
    task = getattr(exc, "task", None)
    tries = (getattr(exc, "allowed_failures", None) or 0) + 1
    try:
        events = client.get_events("worker-restart-memory")
    except Exception:  # a scheduler that went away: no events
        events = ()
    restarts = [msg for stamp, msg in events if stamp >= since and isinstance(msg, dict)]
    if not restarts:
        return (f"dask workers died while running a task of the job, {tries} times (KilledWorker, task {task!r}); "
                "their logs (the dask worker's or its nanny's output) say why, often memory: raise the workers' "
                "--memory-limit, or use a smaller --batch-size")
    limits = [w.get("memory_limit") for w in watch.workers.values() if w.get("memory_limit")]
    if not limits:
        state = _identity(client, 5.0) or {}
        limits = [w.get("memory_limit") for w in state.get("workers", {}).values() if w.get("memory_limit")]
    last = restarts[-1]
    rss = last.get("rss")
    use = (f" ({_size(rss)}" + (f" of {_size(max(limits))}" if limits else "") + ")") if rss else ""
    times = f", {len(restarts)} times," if len(restarts) > 1 else ""
    return (f"dask worker {last.get('worker', '?')} exceeded its memory limit{use} and was restarted by its "
            f"nanny{times} until dask gave the task up: raise the workers' memory limit (dask worker "
            "--memory-limit 8GB) or use a smaller --batch-size")


def _size(n: float) -> str:
    return f"{n / 1e9:.1f} GB" if n >= 1e9 else f"{n / 1e6:.0f} MB"


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

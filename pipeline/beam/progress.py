"""The one progress line of ``beambleu run``: pairs done of all, percent, pairs/s and ETA, drawn by
the driver while the job runs (a bar redrawn in place on a terminal, plain lines otherwise).

The numbers are the ``pairs`` counter (namespace ``beambleu``, counted by
:class:`~beambleu.beam.count.BatchToStats` per batch), read where each runner offers it:

* the local runner runs the whole job inside ``pipeline.run()``, and its result (so
  ``result.metrics()``) exists only once the job is over. :class:`FnApiRunner` is Beam's own
  runner that also tells the counter while it runs: the bundles done (from their final
  monitoring infos) plus those running, read from the in-process SDK worker (``in_memory``) or
  asked of the worker processes with the Fn API's ``ProcessBundleProgressRequest`` (what Beam's
  progress requester sends; ``multi_processing``, ``multi_threading``);
* a portable runner (Prism, Flink, Spark) and Dataflow: ``result.metrics()``, polled. Prism sends
  attempted values while the job runs; the Flink and Spark job servers only once it has ended,
  so there the line shows the time so far and says so;
* dask: the scheduler's count of the job's finished tasks (dask's own progress feed; Beam's
  DaskRunner reports no metrics).

:class:`Progress` is the line: a thread that polls the source (every second) and draws (a bar
every half second; a plain line every 5 s for the first minute, then every 30 s), and the last
line once the job is done: all pairs, 100%. :func:`show_progress` makes a runner's
``run_pipeline`` draw it from the start of the job (the local runner's run is the whole job);
:func:`result_source` is what :func:`beambleu.beam.runners.wait_until_finish` watches after.
"""

from __future__ import annotations

import collections
import threading
import time
from dataclasses import dataclass
from typing import Callable, Deque, Optional, Tuple

__all__ = ["BAR_EVERY", "COUNTER", "PLAIN_EVERY", "POLL_EVERY", "FnApiRunner", "JobMetrics", "DaskTasks", "Progress",
           "RATE_WINDOW", "Reading", "Rate", "counter_value", "describe", "duration", "result_source", "show_progress"]

#: the counter the line follows (namespace :data:`beambleu.beam.count.NAMESPACE`)
COUNTER = "pairs"
#: seconds between two draws of the bar on a terminal
BAR_EVERY = 0.5
#: seconds between two plain lines: during the first minute, then after it
PLAIN_EVERY = (5.0, 30.0)
#: seconds between two readings of the runner's counter
POLL_EVERY = 1.0
#: the pairs/s shown are those of the last this many seconds
RATE_WINDOW = 10.0


def _namespace() -> str:
    from .count import NAMESPACE

    return NAMESPACE


def _in_process_pairs() -> int:
    """What this process' workers have counted (:data:`beambleu.beam.count.IN_PROCESS_PAIRS`)."""
    from .count import IN_PROCESS_PAIRS

    return IN_PROCESS_PAIRS.value


@dataclass(frozen=True)
class Reading:
    """What a runner says of the job so far: the pairs counted (None: it does not say while the
    job runs), or where it counts tasks instead, ``tasks`` = (finished, all)."""

    pairs: Optional[int] = None
    tasks: Optional[Tuple[int, int]] = None


# --------------------------------------------------------------------------------------- the text

def duration(seconds: float) -> str:
    """``0:07``, ``12:03``, ``1:02:03``."""
    s = max(0, int(round(seconds)))
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def _bar(fraction: float, width: int) -> str:
    full = int(min(1.0, max(0.0, fraction)) * width)
    return "[" + "#" * full + "-" * (width - full) + "]"


def describe(done: Optional[int], total: Optional[int], elapsed: float, *, rate: Optional[float] = None,
             tasks: Optional[Tuple[int, int]] = None, final: bool = False, bar_width: int = 0,
             note: str = "", max_width: int = 0) -> str:
    """The progress line. ``done``: pairs so far (None: unknown while running); ``total``: the
    pairs of the input (None when unknown: then no percent, no ETA); ``rate``: pairs (or tasks)
    per second; ``tasks``: (finished, all) when the runner counts tasks instead of pairs;
    ``bar_width``: a bar of that many characters first, in a terminal's shorter form (and no
    bar without a total), 0 for a plain line; ``note``: said when ``done`` is None (why there is
    no count); ``max_width``: a terminal's width, which a bar's line keeps within (its bar
    narrower). A plain line starts ``beambleu: progress:``, a bar ``beambleu: [``."""
    def pct(fraction: float) -> str:
        return f"{100 if fraction >= 1 else min(99, int(fraction * 100))}%"

    bar = bool(bar_width)
    if final:
        when = f"done in {duration(elapsed)}" if elapsed >= 60 else f"done in {elapsed:.1f} s"
    else:
        when = f"{duration(elapsed)} elapsed"
    fraction: Optional[float] = None
    eta = None
    if done is None and tasks is not None and not tasks[1]:  # the scheduler has not counted them yet
        return f"beambleu: progress: starting the job, {when}" + (f" ({total:,} pairs in all)" if total else "")
    if done is None and tasks is not None:
        finished, every = tasks
        fraction = finished / every if every else 0.0
        count = f"{pct(fraction)} {finished:,}/{every:,} tasks" if bar else \
            f"{finished:,} of {every:,} tasks ({pct(fraction)})"
        count += f" for {total:,} pairs" if total else ""
        speed = ""
        if rate and not final and every > finished:
            eta = (every - finished) / rate
    elif done is None:
        whole = f" ({total:,} pairs in all)" if total else ""
        return f"beambleu: progress: running, {when}{whole}{'; ' + note if note else ''}"
    else:
        if total:
            fraction = done / total
            count = f"{pct(fraction)} {done:,}/{total:,} pairs" if bar else \
                f"{done:,} of {total:,} pairs ({pct(fraction)})"
        else:
            count = f"{done:,} pairs"
        speed = f", {rate:,.0f} pairs/s" if rate else ""
        if rate and total and not final and total > done:
            eta = (total - done) / rate
    if eta is not None:
        when = f"ETA {duration(eta)}" if bar else f"{when}, ETA {duration(eta)}"
    line = f"{count}{speed}, {when}"
    if bar and fraction is not None:
        if max_width:  # the whole line within the terminal's width (the bar gives way, down to 10)
            bar_width = max(10, min(bar_width, max_width - 1 - len(f"beambleu: [] {line}")))
        return f"beambleu: {_bar(fraction, bar_width)} {line}"
    return f"beambleu: progress: {line}"


class Rate:
    """Units per second over the last :data:`RATE_WINDOW` seconds (None before there are two
    readings a second apart, or while nothing moves)."""

    def __init__(self, window: float = RATE_WINDOW):
        self.window = window
        self.points: Deque[Tuple[float, int]] = collections.deque()

    def add(self, t: float, value: int) -> None:
        self.points.append((t, value))
        while len(self.points) > 2 and t - self.points[1][0] >= self.window:
            self.points.popleft()

    def value(self) -> Optional[float]:
        if len(self.points) < 2:
            return None
        (t0, v0), (t1, v1) = self.points[0], self.points[-1]
        if t1 - t0 < 1.0 or v1 <= v0:
            return None
        return (v1 - v0) / (t1 - t0)


# --------------------------------------------------------------------------------------- the line

class Progress:
    """The progress line of one job, on ``sink`` (a :class:`beambleu.commands.stderr_filter.Terminal`:
    ``isatty``, ``status``, ``line``, ``clear_status``, ``end_status``, ``width``).

    ``total``: the pairs of the input, or None when unknown; ``note``: what the line says where the
    runner does not count pairs while the job runs. :meth:`watch` gives the thread a source (a
    callable returning a :class:`Reading` or None), :meth:`hold` stops drawing until the next
    :meth:`watch`, :meth:`finish` draws the last line, :meth:`abort` erases the bar and draws
    nothing more."""

    def __init__(self, total: Optional[int], sink, *, note: str = "", clock: Callable[[], float] = time.monotonic,
                 tick: float = 0.1):
        self.total, self.sink, self.note, self.clock, self.tick = (total or None), sink, note, clock, tick
        self.tty = bool(getattr(sink, "isatty", False))
        self._source: Optional[Callable[[], Optional[Reading]]] = None
        self._reading = Reading()
        self._shown_pairs = 0  # what was drawn last: the line never goes back
        self._rate = Rate()
        self._held = False
        self._starting = False  # a runner still starting its job (a job server, staging): a bar only
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: Optional[threading.Thread] = None
        self.t0: Optional[float] = None
        self._next_poll = self._next_draw = 0.0

    # the caller's side

    def start(self) -> None:
        """Start the thread (again, after :meth:`hold`); the time counts from the first start."""
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return
            now = self.clock()
            if self.t0 is None:
                self.t0 = now
                self._next_draw = now if self.tty else now + PLAIN_EVERY[0]
            self._next_poll = now
            self._stop = threading.Event()
            self._thread = threading.Thread(target=self._run, args=(self._stop,), name="beambleu-progress",
                                            daemon=True)
            self._thread.start()

    def watch(self, source: Optional[Callable[[], Optional[Reading]]], starting: bool = False) -> None:
        """Follow ``source`` (None: nothing to poll, the line shows the time). ``starting``: the
        job is not running yet (a runner starting a job server, staging, submitting): a bar says
        so, and no plain line is written until the job is watched."""
        with self._lock:
            self._source = source
            self._held, self._starting = False, starting
            self._next_poll = self.clock()
        self.start()

    def hold(self) -> None:
        """Draw nothing until the next :meth:`watch` (the bar is erased, the thread ends)."""
        self._halt()
        with self._lock:
            self._source = None
            if self.tty:
                self.sink.clear_status()

    def finish(self, pairs: Optional[int] = None) -> None:
        """The last line: ``pairs`` done (default: all of them, when the total is known)."""
        self._halt()
        done = pairs if pairs is not None else self.total
        if done is None:
            done = self._reading.pairs
        elapsed = self.clock() - (self.t0 if self.t0 is not None else self.clock())
        rate = done / elapsed if done and elapsed > 0 else None
        text = describe(done, self.total, elapsed, rate=rate, final=True,
                        bar_width=self._bar_width() if self.tty else 0,
                        max_width=self.sink.width() if self.tty else 0)
        if self.tty:
            self.sink.status(text)
            self.sink.end_status()
        else:
            self.sink.line(text)

    def abort(self) -> None:
        self._halt()
        if self.tty:
            self.sink.clear_status()

    def _halt(self) -> None:
        with self._lock:
            self._held = True
            stop, thread = self._stop, self._thread
        stop.set()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=10)

    # the thread

    def _run(self, stop: threading.Event) -> None:
        while not stop.wait(self.tick):
            now = self.clock()
            with self._lock:
                source, held = self._source, self._held
            if source is not None and now >= self._next_poll:
                self._next_poll = now + POLL_EVERY
                try:
                    reading = source()
                except Exception:  # a runner that stopped answering: keep the last reading
                    reading = None
                if reading is not None:
                    self._update(reading, self.clock())
            if not held and now >= self._next_draw:
                self._draw(now)

    def _update(self, reading: Reading, now: float) -> None:
        if reading.pairs is not None:
            if self.total:
                reading = Reading(min(reading.pairs, self.total), reading.tasks)
            self._shown_pairs = max(self._shown_pairs, reading.pairs)
            self._rate.add(now, self._shown_pairs)
        elif reading.tasks is not None:
            self._rate.add(now, reading.tasks[0])
        self._reading = reading

    def current(self, now: float) -> str:
        """The line as it would be drawn now."""
        if self._starting:
            whole = f" ({self.total:,} pairs in all)" if self.total else ""
            return f"beambleu: progress: starting the job, {duration(now - (self.t0 or now))} elapsed{whole}"
        r = self._reading
        if r.pairs is not None or (r.tasks is None and not self.note):
            pairs, tasks = self._shown_pairs, None  # (0 until the runner's first count)
        else:
            pairs, tasks = None, r.tasks
        return describe(pairs, self.total, now - (self.t0 or now), rate=self._rate.value(), tasks=tasks,
                        note=self.note, bar_width=self._bar_width() if self.tty else 0,
                        max_width=self.sink.width() if self.tty else 0)

    def _bar_width(self) -> int:
        """30 characters, fewer on a narrow terminal (the line is about 65 without its bar)."""
        return max(10, min(30, self.sink.width() - 66))

    def _draw(self, now: float) -> None:
        text = self.current(now)
        with self._lock:
            if self._held or (self._starting and not self.tty):
                return
            if self.tty:
                self.sink.status(text)
                self._next_draw = now + BAR_EVERY
            else:
                self.sink.line(text)
                self._next_draw = now + (PLAIN_EVERY[0] if now - (self.t0 or now) < 60 else PLAIN_EVERY[1])


# --------------------------------------------------------------------------------------- the sources

def counter_value(infos, namespace: Optional[str] = None, name: str = COUNTER) -> int:
    """The sum of a user counter in a list of Fn API monitoring infos."""
    from apache_beam.metrics import monitoring_infos as mi

    namespace = namespace or _namespace()
    total = 0
    for info in infos:
        if info.urn == mi.USER_COUNTER_URN and info.labels.get("NAMESPACE") == namespace \
                and info.labels.get("NAME") == name:
            total += mi.extract_counter_value(info)
    return total


def _fn_api_runner_class():
    from apache_beam.runners.portability.fn_api_runner import fn_runner

    return fn_runner.FnApiRunner


class FnApiRunner(_fn_api_runner_class()):
    """Beam's local runner (same name, same behaviour), whose ``pairs`` counter can be read while
    ``run_pipeline`` runs, from another thread: :meth:`counted`."""

    #: seconds a worker process may take to answer a progress request
    ASK_TIMEOUT = 5.0

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._handlers: tuple = ()
        self._finished = 0
        self._count_lock = threading.Lock()
        self._namespace = _namespace()

    def _get_bundle_manager(self, bundle_context_manager):
        manager = super()._get_bundle_manager(bundle_context_manager)
        self._handlers = tuple(bundle_context_manager.worker_handlers)
        process = manager.process_bundle

        def process_bundle(*args, **kwargs):
            result = process(*args, **kwargs)
            if not kwargs.get("dry_run", args[4] if len(args) > 4 else False):  # (a repeat, for profiling)
                n = counter_value(result[0].process_bundle.monitoring_infos, self._namespace)
                with self._count_lock:
                    self._finished += n
            return result

        manager.process_bundle = process_bundle
        return manager

    def counted(self) -> int:
        """The pairs counted so far: by the bundles done, and so far by those running."""
        with self._count_lock:
            done = self._finished
        return done + sum(self._running(h) for h in self._handlers)

    def _running(self, handler) -> int:
        try:
            cache = getattr(handler, "bundle_processor_cache", None)
            if cache is not None:  # the SDK worker is in this process
                return sum(counter_value(processor.monitoring_infos(), self._namespace)
                           for _, processor in list(cache.active_bundle_processors.values()) if processor)
            from apache_beam.portability.api import beam_fn_api_pb2

            conn = handler.control_conn
            total = 0
            for instruction in [k for k in list(getattr(conn, "_futures_by_id", {})) if k.startswith("bundle_")]:
                request = beam_fn_api_pb2.InstructionRequest(
                    process_bundle_progress=beam_fn_api_pb2.ProcessBundleProgressRequest(instruction_id=instruction))
                response = conn.push(request).get(timeout=self.ASK_TIMEOUT)
                if response is not None and not response.error:
                    total += counter_value(response.process_bundle_progress.monitoring_infos, self._namespace)
            return total
        except Exception:  # a worker starting or gone, a bundle just finished: nothing to add now
            return 0

    def reading(self) -> Reading:
        return Reading(pairs=self.counted())


class JobMetrics:
    """A job's ``pairs`` counter from ``result.metrics()``: the larger of attempted and committed
    (Prism's attempted lags its committed), or None while the runner reports none."""

    def __init__(self, result):
        self.result = result
        self._base = _in_process_pairs()  # what this process' workers had counted before

    def _query(self) -> Optional[int]:
        from apache_beam.metrics.metric import MetricsFilter

        if hasattr(self.result, "_metrics"):  # a portable result keeps its first answer: ask again
            self.result._metrics = None
        counters = self.result.metrics().query(
            MetricsFilter().with_namespace(_namespace()).with_name(COUNTER))["counters"]
        if not counters:
            return None
        return sum(max(c.attempted or 0, c.committed or 0) for c in counters)

    def __call__(self) -> Optional[Reading]:
        pairs = self._query()
        if pairs is None and _in_process_pairs() > self._base:  # workers in this process (LOOPBACK)
            pairs = _in_process_pairs() - self._base
        return Reading(pairs=pairs)

    def final(self) -> Optional[int]:
        """The count once the job is over (and a fresh ``result.metrics()`` for whoever asks next)."""
        try:
            return self._query()
        except Exception:
            return None


class DaskTasks:
    """A dask job's tasks, finished of all, from the scheduler's progress feed for the job's
    futures (what ``distributed.progress`` shows)."""

    def __init__(self, result):
        from distributed.diagnostics.progressbar import ProgressBar

        tasks = self

        class _Feed(ProgressBar):
            def _draw_bar(self, remaining=0, all=0, **kwargs):  # noqa: A002 - dask's keyword
                tasks.tasks = (all - remaining, all)

        self.tasks: Optional[Tuple[int, int]] = None
        futures = result.futures if isinstance(result.futures, (list, tuple)) else [result.futures]
        self._feed = _Feed(futures, scheduler=result.client.scheduler.address, interval="500ms")
        result.client.loop.add_callback(self._feed.listen)

    def __call__(self) -> Optional[Reading]:
        return Reading(tasks=self.tasks or (0, 0))


def result_source(result) -> Optional[Callable[[], Optional[Reading]]]:
    """What to poll for a submitted job's progress (None: the runner has nothing to poll)."""
    if getattr(result, "futures", None) is not None and getattr(result, "client", None) is not None:
        try:
            return DaskTasks(result)
        except Exception:  # no progress feed: the line shows the time
            return None
    return JobMetrics(result) if hasattr(result, "metrics") else None


def show_progress(runner, progress: Progress):
    """``runner`` whose ``run_pipeline`` shows ``progress`` from its start: it watches the local
    runner's counters while it runs the job, the others' ``run_pipeline`` (starting a job
    server, staging, submitting) shows the time; on return the line is held until the caller
    watches the job (:func:`beambleu.beam.runners.wait_until_finish`), on an exception it is erased."""
    run_pipeline = runner.run_pipeline

    def run_with_progress(pipeline, options):
        if isinstance(runner, FnApiRunner):
            progress.watch(runner.reading)
        else:
            progress.watch(None, starting=True)
        try:
            result = run_pipeline(pipeline, options)
        except BaseException:
            progress.abort()
            raise
        progress.hold()
        return result

    runner.run_pipeline = run_with_progress
    return runner

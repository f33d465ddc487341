"""`beambleu run`'s one progress line (beambleu.beam.progress): its text, its thread, the local
runner's counter read while the job runs (in-process and from worker processes), the bar on a
terminal through the stderr filter, and the last line (all pairs, 100%). Expected lines are
written out by hand; the runner's mid-run count is made observable by a DoFn that waits for the
test to have seen it (no timing is asserted)."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("apache_beam")

import apache_beam as beam  # noqa: E402
from apache_beam.metrics import Metrics  # noqa: E402
from apache_beam.options.pipeline_options import PipelineOptions  # noqa: E402

from beambleu.beam import progress as pg  # noqa: E402
from beambleu.commands.stderr_filter import Terminal  # noqa: E402

from ...oracle import REPO  # noqa: E402
from ...pipeline_helpers import run_cli  # noqa: E402

SAMPLE = str(REPO / "examples" / "sample" / "shards" / "*.parquet")


# ------------------------------------------------------------------------------------------ the text

@pytest.mark.parametrize("seconds, text", [(0, "0:00"), (7.4, "0:07"), (59.6, "1:00"), (723, "12:03"),
                                           (3723, "1:02:03")])
def test_duration(seconds, text):
    assert pg.duration(seconds) == text


@pytest.mark.parametrize("kwargs, line", [
    (dict(done=260_000, total=400_000, elapsed=5.2, rate=50_761.3),
     "beambleu: progress: 260,000 of 400,000 pairs (65%), 50,761 pairs/s, 0:05 elapsed, ETA 0:03"),
    (dict(done=260_000, total=400_000, elapsed=5.2, rate=50_761.3, bar_width=10),
     "beambleu: [######----] 65% 260,000/400,000 pairs, 50,761 pairs/s, ETA 0:03"),
    (dict(done=400_000, total=400_000, elapsed=7.44, rate=53_000, final=True),
     "beambleu: progress: 400,000 of 400,000 pairs (100%), 53,000 pairs/s, done in 7.4 s"),
    (dict(done=400_000, total=400_000, elapsed=75, rate=5_000, final=True, bar_width=4),
     "beambleu: [####] 100% 400,000/400,000 pairs, 5,000 pairs/s, done in 1:15"),
    (dict(done=0, total=60, elapsed=1.0),
     "beambleu: progress: 0 of 60 pairs (0%), 0:01 elapsed"),
    (dict(done=59_999, total=60_000, elapsed=100, rate=600),  # never 100% before the end
     "beambleu: progress: 59,999 of 60,000 pairs (99%), 600 pairs/s, 1:40 elapsed, ETA 0:00"),
    (dict(done=1_234, total=None, elapsed=5.2, rate=500),  # text input: no total, no percent, no ETA
     "beambleu: progress: 1,234 pairs, 500 pairs/s, 0:05 elapsed"),
    (dict(done=1_234, total=None, elapsed=5.2, rate=500, bar_width=10),  # and no bar
     "beambleu: progress: 1,234 pairs, 500 pairs/s, 0:05 elapsed"),
    (dict(done=None, total=400_000, elapsed=12, note="none counted yet"),
     "beambleu: progress: running, 0:12 elapsed (400,000 pairs in all); none counted yet"),
    (dict(done=None, total=400_000, elapsed=12, tasks=(12, 40), rate=2),
     "beambleu: progress: 12 of 40 tasks (30%) for 400,000 pairs, 0:12 elapsed, ETA 0:14"),
    (dict(done=None, total=400_000, elapsed=12, tasks=(12, 40), rate=2, bar_width=10),
     "beambleu: [###-------] 30% 12/40 tasks for 400,000 pairs, ETA 0:14"),
    (dict(done=None, total=400_000, elapsed=3, tasks=(0, 0)),
     "beambleu: progress: starting the job, 0:03 elapsed (400,000 pairs in all)"),
])
def test_describe(kwargs, line):
    done, total, elapsed = kwargs.pop("done"), kwargs.pop("total"), kwargs.pop("elapsed")
    assert pg.describe(done, total, elapsed, **kwargs) == line


def test_rate_is_that_of_the_last_seconds():
    rate = pg.Rate(window=10)
    assert rate.value() is None
    rate.add(0.0, 0)
    rate.add(0.5, 100)
    assert rate.value() is None  # less than a second apart
    for t in range(1, 31):  # 100 per second for 20 s, then 1000 per second
        rate.add(float(t), 100 * min(t, 20) + 1000 * max(0, t - 20))
    assert rate.value() == pytest.approx(1000.0)
    rate.add(31.0, 100 * 20 + 1000 * 10)  # nothing moved in the last second: still the window's rate
    assert rate.value() == pytest.approx(900.0)


# ------------------------------------------------------------------------------------------ the line

class Sink:
    """A terminal (or not) that records what is drawn."""

    def __init__(self, tty: bool):
        self.isatty, self.calls, self.lock = tty, [], threading.Lock()

    def width(self):
        return 100

    def status(self, text):
        with self.lock:
            self.calls.append(("status", text))

    def line(self, text):
        with self.lock:
            self.calls.append(("line", text))

    def clear_status(self):
        with self.lock:
            self.calls.append(("clear", ""))

    def end_status(self):
        with self.lock:
            self.calls.append(("end", ""))

    def wait_for(self, kind, pattern, timeout=60.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                for k, text in self.calls:
                    if k == kind and re.search(pattern, text):
                        return text
            time.sleep(0.01)
        raise AssertionError(f"no {kind} matching {pattern!r} in {self.calls}")


@pytest.fixture
def fast(monkeypatch):
    monkeypatch.setattr(pg, "PLAIN_EVERY", (0.02, 0.02))
    monkeypatch.setattr(pg, "BAR_EVERY", 0.02)
    monkeypatch.setattr(pg, "POLL_EVERY", 0.01)


def test_plain_lines_follow_the_source_and_end_with_all_pairs(fast):
    sink, seen = Sink(tty=False), {"pairs": 0}
    line = pg.Progress(1000, sink, tick=0.005)
    line.watch(lambda: pg.Reading(pairs=seen["pairs"]))
    sink.wait_for("line", r"^beambleu: progress: 0 of 1,000 pairs \(0%\)")
    seen["pairs"] = 250
    sink.wait_for("line", r"^beambleu: progress: 250 of 1,000 pairs \(25%\)")
    line.finish()
    assert sink.calls[-1][0] == "line"
    assert re.fullmatch(r"beambleu: progress: 1,000 of 1,000 pairs \(100%\), [\d,]+ pairs/s, done in [\d.]+ s",
                        sink.calls[-1][1]), sink.calls[-1]
    assert all(kind == "line" for kind, _ in sink.calls)  # no bar, no \r, where stderr is no terminal
    n = len(sink.calls)
    time.sleep(0.1)
    assert len(sink.calls) == n  # nothing after the last line


def test_the_count_never_goes_back_nor_past_the_total(fast):
    sink, seen = Sink(tty=False), {"pairs": 700}
    line = pg.Progress(1000, sink, tick=0.005)
    line.watch(lambda: pg.Reading(pairs=seen["pairs"]))
    sink.wait_for("line", r"700 of 1,000")
    seen["pairs"] = 650  # a bundle just finished: neither running nor counted done, for a moment
    time.sleep(0.1)
    seen["pairs"] = 5000
    sink.wait_for("line", r"1,000 of 1,000")
    line.abort()
    shown = [int(m.group(1).replace(",", "")) for _, t in sink.calls for m in [re.search(r"([\d,]+) of", t)] if m]
    assert shown == sorted(shown) and max(shown) == 1000, shown


def test_a_bar_on_a_terminal_ends_as_a_line_of_its_own(fast):
    sink = Sink(tty=True)
    line = pg.Progress(60, sink, tick=0.005)
    line.watch(lambda: pg.Reading(pairs=30))
    sink.wait_for("status", r"^beambleu: \[#+-+\] 50% 30/60 pairs")
    line.finish()
    assert sink.calls[-2][0] == "status" and sink.calls[-1] == ("end", "")
    assert re.fullmatch(r"beambleu: \[#+\] 100% 60/60 pairs, [\d,]+ pairs/s, done in [\d.]+ s", sink.calls[-2][1])


def test_held_between_the_runner_and_the_wait_it_draws_nothing_and_leaves_no_thread(fast):
    """(A dry run, a --detach or a jar-writing run return between the two: nothing is left running.)"""
    sink = Sink(tty=True)
    line = pg.Progress(60, sink, tick=0.005)
    line.watch(lambda: pg.Reading(pairs=30))
    sink.wait_for("status", "30/60")
    line.hold()
    assert sink.calls[-1] == ("clear", "")
    n = len(sink.calls)
    time.sleep(0.1)
    assert len(sink.calls) == n
    assert not [t for t in threading.enumerate() if t.name == "beambleu-progress"]
    line.watch(lambda: pg.Reading(pairs=45))  # the wait takes over
    sink.wait_for("status", "45/60")
    line.finish()
    assert "100% 60/60" in sink.calls[-2][1]


def test_a_failed_job_erases_the_bar_and_says_nothing(fast):
    sink = Sink(tty=True)
    line = pg.Progress(60, sink, tick=0.005)
    line.watch(lambda: pg.Reading(pairs=30))
    sink.wait_for("status", "30/60")
    line.abort()
    assert sink.calls[-1] == ("clear", "")
    assert not any("100%" in t for _, t in sink.calls)


def test_a_starting_job_shows_a_bar_but_no_plain_line(fast):
    tty, plain = Sink(tty=True), Sink(tty=False)
    for sink in (tty, plain):
        line = pg.Progress(60, sink, tick=0.005)
        line.watch(None, starting=True)
        if sink is tty:
            sink.wait_for("status", r"^beambleu: progress: starting the job, 0:0\d elapsed \(60 pairs in all\)$")
        else:
            time.sleep(0.2)
        line.abort()
    assert not plain.calls


# ------------------------------------------------------------------------------------------ the terminal

def test_a_line_passed_by_the_filter_goes_above_the_bar():
    out = io.BytesIO()
    term = Terminal(out, isatty=True)
    term.status("beambleu: [##--] 50%")
    term.raw_line(b"beambleu: a worker is paused\n")
    term.status("beambleu: [###-] 75%")
    term.end_status()
    assert out.getvalue() == (b"\rbeambleu: [##--] 50%\x1b[K"
                              b"\r\x1b[K" b"beambleu: a worker is paused\n" b"\rbeambleu: [##--] 50%\x1b[K"
                              b"\rbeambleu: [###-] 75%\x1b[K" b"\n")


# ------------------------------------------------------------------------------------------ the local runner

#: the DoFn below waits here until the test has seen its first count
_GATES = {}


class _CountThenWait(beam.DoFn):
    """Counts 10 pairs per element; after the first, waits until the test opens the gate (an
    event in this process, or a file for worker processes)."""

    def __init__(self, gate: str):
        self.gate = gate

    def setup(self):
        self.pairs = Metrics.counter("beambleu", "pairs")

    def process(self, x):
        self.pairs.inc(10)
        if x == 0:
            deadline = time.monotonic() + 120
            while not (_GATES.get(self.gate) and _GATES[self.gate].is_set()) and not os.path.exists(self.gate):
                if time.monotonic() > deadline:
                    raise RuntimeError("the test never opened the gate")
                time.sleep(0.01)
        yield x


def _run_and_watch(tmp_path, argv):
    gate = str(tmp_path / "gate")
    _GATES[gate] = threading.Event()
    runner = pg.FnApiRunner()
    p = beam.Pipeline(runner=runner, options=PipelineOptions(argv))
    _ = p | beam.Create([0]) | beam.ParDo(_CountThenWait(gate)) | beam.combiners.Count.Globally()
    seen, failed = [], []

    def run():
        try:
            seen.append(("result", p.run()))
        except Exception as exc:  # pragma: no cover - shown by the assertion below
            failed.append(exc)

    job = threading.Thread(target=run, daemon=True)
    job.start()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and job.is_alive():
        n = runner.counted()
        if n:
            seen.append(("running", n))
            break
        time.sleep(0.02)
    _GATES[gate].set()
    Path(gate).touch()
    job.join(120)
    assert not failed, failed
    return seen, runner.counted()


def test_local_runner_counts_while_the_job_runs_in_process(tmp_path):
    seen, after = _run_and_watch(tmp_path, [])
    assert seen[0] == ("running", 10), seen  # the one bundle was still running when the test saw 10
    assert after == 10


def test_local_runner_counts_while_worker_processes_run(tmp_path):
    seen, after = _run_and_watch(tmp_path, ["--direct_running_mode=multi_processing", "--direct_num_workers=1"])
    assert seen[0] == ("running", 10), seen  # asked of the worker process over the Fn API
    assert after == 10


# ------------------------------------------------------------------------------------------ beambleu run

def _progress_lines(err: str):
    return [ln for ln in err.splitlines() if ln.startswith("beambleu: progress:") or ln.startswith("beambleu: [")]


def test_run_ends_with_all_pairs_done():
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        rc, _, err = run_cli("--input", SAMPLE, "--group-by", "system", "--output", Path(d) / "r.json")
    assert rc == 0, err
    lines = _progress_lines(err)
    assert lines, err
    assert re.fullmatch(r"beambleu: progress: 60 of 60 pairs \(100%\), [\d,]+ pairs/s, done in [\d.]+ s", lines[-1])
    assert all("has read" not in ln for ln in lines)  # one line for the job, no worker's own


def test_run_progress_off_says_nothing_of_it(tmp_path):
    rc, _, err = run_cli("--input", SAMPLE, "--output", tmp_path / "r.json", "--progress", "off")
    assert rc == 0, err
    assert not _progress_lines(err), err


def test_wide_input_counts_a_pair_per_candidate_column(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    wide = tmp_path / "w.parquet"
    pq.write_table(pa.table({"a": ["x y", "z"], "b": ["x", "z z"], "references": [["x y"], ["z"]]}), wide)
    rc, _, err = run_cli("--input", wide, "--candidate-columns", "a,b", "--output", tmp_path / "r.json")
    assert rc == 0, err
    assert _progress_lines(err)[-1].startswith("beambleu: progress: 4 of 4 pairs (100%)"), err


def test_the_bar_reaches_a_terminal_through_the_stderr_filter(tmp_path):
    """`beambleu run` with stderr on a pseudo-terminal: the bar is drawn in place, its last state
    (100%) is left as a line, and the lines after it are whole."""
    import pty

    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "beambleu.cli", "run", "--input", SAMPLE, "--group-by", "system",
                             "--output", str(tmp_path / "r.json")], stdout=subprocess.PIPE, stderr=slave,
                            stdin=subprocess.DEVNULL)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:  # EIO: the child closed its end
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(120)
    os.close(master)
    err = b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")  # the pty's newline
    assert proc.returncode == 0, err
    final = re.search(r"\rbeambleu: \[#+\] 100% 60/60 pairs, [\d,]+ pairs/s, done in [\d.]+ s\x1b\[K\n", err)
    assert final, repr(err)
    after = err[final.end():]
    assert after.startswith("beambleu: done in "), repr(err)
    assert "\r" not in after, repr(err)
    assert "progress: 60 of 60" not in err  # a terminal gets the bar, not plain lines


def test_a_job_server_without_live_counters_shows_the_pairs_of_in_process_workers():
    """Flink's and Spark's job servers report counters only at the end: the pairs the workers of this
    process (LOOPBACK) counted since the job was submitted stand in; none counted, none shown."""
    from beambleu.beam.count import IN_PROCESS_PAIRS
    from beambleu.beam.progress import JobMetrics

    class NoCounters:  # a portable result while the job runs
        def metrics(self):
            class Empty:
                def query(self, _filter):
                    return {"counters": []}
            return Empty()

    IN_PROCESS_PAIRS.add(7)  # an earlier job in this process
    watch = JobMetrics(NoCounters())
    assert watch().pairs is None
    IN_PROCESS_PAIRS.add(1000)
    IN_PROCESS_PAIRS.add(24)
    assert watch().pairs == 1024

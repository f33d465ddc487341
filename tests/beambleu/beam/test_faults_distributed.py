"""Distributed faults of `beambleu run`: a dask cluster that stalls or loses its scheduler, object
stores that do not answer, a corrupt Parquet page, a missing extra.

Each test runs beambleu in a child process, as a user would (Beam's log diverted), in an empty
working folder with its own TMPDIR (where Beam's log and temporary folders go), and states the exit
code, the one printed error line and the exact set of files left in both. Limits are short,
given through the options, so that the whole file takes well under two minutes.
"""

from __future__ import annotations

import contextlib
import glob
import importlib.util
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

import pytest

pytest.importorskip("apache_beam")

from ...engines import DaskCluster, env_with_this_python, free_port  # noqa: E402
from ...oracle import REPO  # noqa: E402
from ...pipeline_helpers import comparable, load  # noqa: E402

SAMPLE = REPO / "examples" / "sample" / "shards"
SHARDS = str(SAMPLE / "*.parquet")
S3_ENV = {"AWS_ACCESS_KEY_ID": "beambleu-test-key", "AWS_SECRET_ACCESS_KEY": "beambleu-test-secret",
          "AWS_DEFAULT_REGION": "us-east-1"}

needs_dask = pytest.mark.skipif(importlib.util.find_spec("distributed") is None,
                                reason="the dask extra is not installed")


def tree(root: Path) -> set:
    """Every file and directory below root, hidden ones too."""
    return {str(p.relative_to(root)) for p in root.rglob("*")}


class Folders:
    """An empty working folder and an empty TMPDIR for one beambleu process."""

    def __init__(self, root: Path):
        self.work, self.tmp = root / "work", root / "tmp"
        self.work.mkdir(parents=True)
        self.tmp.mkdir()

    def env(self, extra: Optional[dict] = None) -> dict:
        return {**env_with_this_python(), "TMPDIR": str(self.tmp), **(extra or {})}

    def popen(self, args, env: Optional[dict] = None, argv0=("-m", "beambleu.cli")) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, *argv0, *map(str, args)], cwd=self.work, env=self.env(env),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def run(self, args, env: Optional[dict] = None, timeout: float = 120, argv0=("-m", "beambleu.cli")):
        """(CompletedProcess, seconds) of `beambleu ARGS`."""
        start = time.monotonic()
        proc = self.popen(args, env, argv0)
        out, err = proc.communicate(timeout=timeout)
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), time.monotonic() - start


def error_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.startswith("beambleu: error:")]
    assert len(lines) == 1, err
    assert "Traceback" not in err, err
    return lines[0]


def job_failed(line: str, reason: str, folders: Folders) -> None:
    """`line` is the line of a job that failed for `reason`, not for bad input: it names Beam's log,
    which is kept, and is the only file left in TMPDIR."""
    m = re.fullmatch(r"beambleu: error: the job failed: (.*); Beam's log: (\S+) \(BEAMBLEU_DEBUG=1 shows the "
                     r"traceback\)", line)
    assert m, line
    assert m.group(1) == reason, line
    assert tree(folders.tmp) == {os.path.relpath(m.group(2), folders.tmp)}, line


# ---------------------------------------------------------------------------- dask -----------------

@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    pytest.importorskip("distributed")
    with DaskCluster(tmp_path_factory.mktemp("dask"), n_workers=1) as c:
        yield c


def dask_args(c: DaskCluster, stall: Optional[float] = None):
    return ["--runner", "dask", f"--dask_client_address={c.address}",
            *([f"--dask_stall_timeout={stall:g}"] if stall else [])]


@contextlib.contextmanager
def stopped(pids):
    """The processes SIGSTOPped for the duration."""
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)


@needs_dask
def test_dask_sentence_output_writes_what_the_local_runner_writes(cluster, tmp_path):
    """Beam's DaskRunner crashed on it ("too many values to unpack", exit 1): it mixed the
    outputs of a step with two; BatchToStats now has one output, split by Filter."""
    f = Folders(tmp_path)
    args = ["run", "--input", SHARDS, "--group-by", "system", "--output", "r.json", "--sentence-output", "sent"]
    proc, _ = f.run([*args, *dask_args(cluster)])
    assert proc.returncode == 0, proc.stderr
    local = Folders(tmp_path / "local")
    ok, _ = local.run(args)
    assert ok.returncode == 0, ok.stderr
    assert comparable(load(f.work / "r.json")) == comparable(load(local.work / "r.json"))
    import pyarrow.parquet as pq

    def rows(d):
        return sorted(map(str, pq.read_table(sorted(glob.glob(f"{d}/part-*.parquet"))).to_pylist()))

    assert rows(f.work / "sent") == rows(local.work / "sent")
    assert tree(f.work) == tree(local.work) and tree(f.tmp) == set()


@needs_dask
def test_stalled_dask_cluster_ends_within_the_stall_timeout(cluster, tmp_path):
    """Every worker SIGSTOPped: the job waited forever; now one line after --dask_stall_timeout."""
    f = Folders(tmp_path)
    with stopped(cluster.worker_pids().values()):
        proc, seconds = f.run(["run", "--input", SHARDS, "--output", "r.json", *dask_args(cluster, stall=5)],
                              timeout=90)
    assert proc.returncode == 1, proc.stderr
    job_failed(error_line(proc.stderr),
               f"the dask cluster at {cluster.address} made no progress for 5 s (1 of 1 workers not answering: "
               f"worker-0); --dask_stall_timeout=5 sets this limit", f)
    assert "done in" not in proc.stderr and proc.stdout == ""
    assert seconds < 5 + 25, seconds  # the limit, plus starting Python and Beam on a busy machine
    assert tree(f.work) == set()


@needs_dask
def test_killed_dask_scheduler_is_one_line_not_done_then_failure(tmp_path):
    """The scheduler SIGKILLed while the job waits for its (stopped) worker: the job was taken
    as finished, then failed for want of outputs; now the lost scheduler is named at once."""
    f = Folders(tmp_path)
    with DaskCluster(tmp_path / "dask", n_workers=1) as c:
        with stopped(c.worker_pids().values()):
            proc = f.popen(["run", "--input", SHARDS, "--output", "r.json", *dask_args(c)])
            with c.client() as client:  # closed before the kill: it would wait for the scheduler
                deadline = time.monotonic() + 60
                while not client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks)):
                    assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
                    time.sleep(0.1)
            killed = time.monotonic()
            os.killpg(c.scheduler().pid, signal.SIGKILL)
            out, err = proc.communicate(timeout=60)
            seconds = time.monotonic() - killed
    assert proc.returncode == 1, err
    job_failed(error_line(err), f"lost the dask scheduler at {c.address} before the job finished "
                                f"(the job's result is cancelled)", f)
    assert "done in" not in err and out == ""
    assert seconds < 20, seconds
    assert tree(f.work) == set()


@needs_dask
def test_dask_worker_paused_under_memory_pressure_is_announced_and_bounded(tmp_path):
    """A worker over its memory pause threshold starts no task: the job waited without a word;
    now the pause is announced, and the stall timeout ends the job."""
    f = Folders(tmp_path)
    with DaskCluster(tmp_path / "dask", n_workers=1,
                     worker_env={"DASK_DISTRIBUTED__WORKER__MEMORY__PAUSE": "0.00001"}) as c:
        proc, seconds = f.run(["run", "--input", SHARDS, "--output", "r.json", *dask_args(c, stall=5)], timeout=90)
    assert proc.returncode == 1, proc.stderr
    # the progress line (dask: tasks done of all) says that nothing moves; the note says why. (On a loaded
    # machine the line may not have learnt the job's tasks from the scheduler when the 5 s are up: then it
    # still says the job is starting, which is no progress either.)
    progress = [ln for ln in proc.stderr.splitlines() if ln.startswith("beambleu: progress:")]
    assert progress and all(re.match(r"beambleu: progress: (0 of \d+ tasks|starting the job)", ln)
                            for ln in progress), proc.stderr
    notes = [ln for ln in proc.stderr.splitlines() if not ln.startswith(("beambleu: error:", "beambleu: progress:"))]
    assert len(notes) == 1, proc.stderr
    assert re.fullmatch(r"beambleu: dask worker worker-0 is paused under memory pressure \(\d+\.\d GB of its "
                        r"\d+\.\d GB limit\): it starts no task until memory is freed; giving up after 5 s without "
                        r"progress", notes[0]), notes[0]
    job_failed(error_line(proc.stderr),
               f"the dask cluster at {c.address} made no progress for 5 s (1 of 1 workers paused under memory "
               f"pressure: worker-0); --dask_stall_timeout=5 sets this limit", f)
    assert seconds < 5 + 25, seconds
    assert tree(f.work) == set()


# ---------------------------------------------------------------------- object stores -------------

@contextlib.contextmanager
def silent_server():
    """A loopback port whose connections are accepted (by the kernel) and never answered."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(128)
        yield s.getsockname()[1]


@contextlib.contextmanager
def closed_port():
    """A loopback port where nothing listens."""
    yield free_port()


@pytest.mark.parametrize("where,endpoint", [("input", closed_port), ("output", silent_server),
                                            ("spm-model", closed_port)])
def test_unreachable_object_store_is_announced_and_bounded(tmp_path, where, endpoint):
    """S3 on a loopback port that refuses connections (an input, a SentencePiece model) or never
    answers (an output): each printed nothing for many minutes (the model: Beam's 120 s of
    retries); now the wait and the retries are announced and it ends after
    --object_store_timeout with one line naming the path and the endpoint."""
    pytest.importorskip("boto3")
    if where == "spm-model":
        pytest.importorskip("sentencepiece")
    f = Folders(tmp_path)
    path, args = {
        "input": ("s3://corpus/wmt/*.parquet", ["--input", "s3://corpus/wmt/*.parquet", "--output", "r.json"]),
        "output": ("s3://results/r.json", ["--input", SHARDS, "--output", "s3://results/r.json"]),
        "spm-model": ("s3://models/flores200.model", ["--input", SHARDS, "--output", "r.json", "-tok", "flores200",
                                                      "--spm-model", "s3://models/flores200.model"]),
    }[where]
    with endpoint() as port:
        url = f"http://127.0.0.1:{port}"
        proc, seconds = f.run(["run", *args, f"--s3_endpoint_url={url}", "--object_store_timeout=6"], env=S3_ENV)
    assert proc.returncode == 1, proc.stderr
    line = error_line(proc.stderr)
    assert re.fullmatch(re.escape(f"beambleu: error: {path}: no answer from {url} within 6 s") +
                        r"(; the last of \d+ retries was after: .*)? \(--object_store_timeout sets this limit\)",
                        line), line
    notes = [ln for ln in proc.stderr.splitlines() if not ln.startswith("beambleu: error:")]
    assert notes, proc.stderr
    for note in notes:
        assert re.fullmatch(re.escape(f"beambleu: {path}: {url}: ") +
                            r"(retry \d+ after: .+|no answer yet after \d+ s; giving up after 6 s)", note), note
    if where != "output":  # a refused connection is retried by Beam's client, each retry announced
        assert any(": retry 1 after: " in n and "Could not connect to the endpoint URL" in n for n in notes), notes
    assert seconds < 6 + 25, seconds
    assert tree(f.work) == set() and tree(f.tmp) == set()


def test_retry_notes_from_two_threads_are_whole_lines(monkeypatch):
    """The wait for an object store says things from two threads (the waiting one, and Beam's client
    retrying in its own): each note is one whole line, even on a stream that lets the other thread run
    between any two writes (print wrote a note and its newline apart, and CI saw two notes run into one
    line)."""
    import threading

    from beambleu.io.inputs import _RetryNotes

    class Yielding:
        def __init__(self):
            self.parts = []

        def write(self, text):
            self.parts.append(text)
            time.sleep(0)  # the other thread's turn
            return len(text)

        def flush(self):
            time.sleep(0)

    stream = Yielding()
    monkeypatch.setattr(sys, "stderr", stream)
    notes = _RetryNotes("beambleu: s3://b/x: http://127.0.0.1:1")

    def talk(who):
        for i in range(300):
            notes.say(f"{who} {i}")

    threads = [threading.Thread(target=talk, args=(who,)) for who in ("retry", "waiting")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lines = "".join(stream.parts).splitlines()
    assert len(lines) == 600
    assert all(re.fullmatch(r"beambleu: s3://b/x: http://127\.0\.0\.1:1: (retry|waiting) \d+", ln) for ln in lines)


@pytest.mark.parametrize("scheme,module,extra", [("s3", "boto3", "aws"), ("gs", "google.cloud.storage", "gcp")])
def test_object_store_without_its_extra_names_the_extra(tmp_path, scheme, module, extra):
    """Without boto3 Beam failed with "Missing boto3 requirement" (exit 1); the extra is named."""
    code = ("import sys\n"
            f"blocked = {module!r}\n"
            "class Missing:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name == blocked or name.startswith(blocked + '.'):\n"
            "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
            "sys.meta_path.insert(0, Missing())\n"
            "from beambleu.cli import main\n"
            "sys.exit(main(sys.argv[1:]))\n")
    f = Folders(tmp_path)
    path = f"{scheme}://corpus/*.parquet"
    proc, _ = f.run(["run", "--input", path, "--output", "r.json"], argv0=("-c", code))
    assert proc.returncode == 2, proc.stderr
    assert error_line(proc.stderr) == (f"beambleu: error: {path}: {scheme}:// paths need the {extra} extra: "
                                       f"pip install 'beambleu[{extra}]'")
    assert tree(f.work) == set() and tree(f.tmp) == set()


# ------------------------------------------------------------------------- Parquet pages ----------

def test_corrupt_page_with_a_checksum_is_one_line_naming_file_and_row_group(tmp_path):
    """A file written with page checksums, one byte of a data page changed: it was scored (the
    text silently changed); now the checksum is verified."""
    import pyarrow.parquet as pq

    table = pq.read_table(SAMPLE / "alpha.parquet")
    good, bad = tmp_path / "good.parquet", tmp_path / "bad.parquet"
    pq.write_table(table, good, row_group_size=10, compression="none", use_dictionary=False,
                   write_page_checksum=True)
    column = pq.ParquetFile(good).metadata.row_group(1).column(0)  # candidate, rows 10..19
    assert column.path_in_schema == "candidate" and column.dictionary_page_offset is None
    data = bytearray(good.read_bytes())
    data[column.data_page_offset + column.total_compressed_size - 3] ^= ord("a") ^ ord("b")  # in the last string
    bad.write_bytes(data)
    changed = pq.ParquetFile(bad, page_checksum_verification=False).read_row_group(1)
    assert changed.column("candidate").to_pylist() != table.slice(10, 10).column("candidate").to_pylist()

    f = Folders(tmp_path)
    proc, _ = f.run(["run", "--input", bad, "--output", "r.json"])
    assert proc.returncode == 1, proc.stderr
    assert re.fullmatch(re.escape(f"beambleu: error: {bad}: row group 1 unreadable (") + r".*checksum.*\)",
                        error_line(proc.stderr)), proc.stderr
    assert tree(f.work) == set() and tree(f.tmp) == set()
    ok, _ = f.run(["run", "--input", good, "--output", "r.json"])  # the same file intact is scored
    assert ok.returncode == 0, ok.stderr

"""Fault injection for `beambleu run`: outputs own their paths, all outputs or none, one line per error.

Each test states the exit code, the one printed line and the exact set of files left on disk.
"""

from __future__ import annotations

import contextlib
import io
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

pytest.importorskip("apache_beam")

from ...oracle import REPO, sacrebleu  # noqa: E402
from ...pipeline_helpers import load, run_cli  # noqa: E402

SAMPLE = REPO / "examples" / "sample"
SHARDS = str(SAMPLE / "shards" / "*.parquet")
MANIFEST = "_beambleu_manifest.json"


def tree(root: Path) -> dict:
    """Every file below root (hidden ones too) with its bytes: the exact state on disk."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def error_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.startswith("beambleu: error:")]
    assert len(lines) == 1, err
    assert "Traceback" not in err, err
    return lines[0]


@pytest.fixture
def user_files(tmp_path):
    """A working folder with things a user owns."""
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("do not delete\n")
    shutil.copytree(SAMPLE / "shards", tmp_path / "shards")
    return tmp_path


# ---------------------------------------------------------------- outputs refused before the job ---

@pytest.mark.parametrize("flags,message", [
    (["--output", "shards/alpha.parquet", "--overwrite"], "--output is the input"),
    (["--sentence-output", "shards", "--overwrite"], "--sentence-output contains the input"),
    (["--sentence-output", ".", "--overwrite"], "is the current directory or contains it"),
    (["--sentence-output", "..", "--overwrite"], "is the current directory or contains it"),
    (["--output", "mine", "--overwrite"], "--output is a directory"),
    (["--sentence-output", "mine", "--overwrite"], "non-empty directory that beambleu did not write"),
    (["--sentence-output", "mine/notes.txt", "--overwrite"], "exists and is not a directory"),
    (["--output", "r.parquet", "--groups-output", "r.parquet"], "overlap"),
    (["--output", "out/r.json", "--sentence-output", "out"], "overlap"),
    (["--groups-output", "g.txt"], "must end in .parquet or .csv"),
])
def test_unsafe_outputs_are_refused_and_nothing_changes(user_files, monkeypatch, flags, message):
    monkeypatch.chdir(user_files)
    before = tree(user_files)
    rc, out, err = run_cli("--input", "shards/*.parquet", *flags, "--progress", "off")
    assert rc == 2, err
    assert message in error_line(err)
    assert "the job failed" not in err and out == ""
    assert tree(user_files) == before


def test_existing_output_needs_overwrite_and_overwrite_replaces_a_file(tmp_path):
    (tmp_path / "r.json").write_text("old\n")
    rc, _, err = run_cli("--input", SHARDS, "--output", tmp_path / "r.json", "--progress", "off")
    assert rc == 2 and "--output exists (use --overwrite to replace it)" in error_line(err)
    assert (tmp_path / "r.json").read_text() == "old\n"
    rc, _, err = run_cli("--input", SHARDS, "--output", tmp_path / "r.json", "--overwrite", "--progress", "off")
    assert rc == 0, err
    assert load(tmp_path / "r.json")["inputs"]["pairs"] == 60
    assert sorted(os.listdir(tmp_path)) == ["r.json"]


def test_symlink_output_is_not_followed(tmp_path):
    (tmp_path / "target.txt").write_text("precious\n")
    (tmp_path / "r.json").symlink_to(tmp_path / "target.txt")
    rc, _, err = run_cli("--input", SHARDS, "--output", tmp_path / "r.json", "--overwrite", "--progress", "off")
    assert rc == 2 and "not a regular file" in error_line(err)
    assert (tmp_path / "target.txt").read_text() == "precious\n"


def test_sentence_output_manifest_and_no_stale_parts_on_overwrite(tmp_path):
    big = tmp_path / "big.parquet"
    small = tmp_path / "small.parquet"
    table = pq.read_table(SAMPLE / "shards" / "alpha.parquet")
    pq.write_table(table, big, row_group_size=5)  # 6 row groups -> 6 parts
    pq.write_table(table.slice(0, 4), small)  # 1 part
    out = tmp_path / "sent"
    rc, _, err = run_cli("--input", big, "--sentence-output", out, "--batch-size", "5", "--progress", "off")
    assert rc == 0, err
    manifest = load(out / MANIFEST)
    parts = sorted(p.name for p in out.iterdir() if p.name != MANIFEST)
    assert manifest["written_by"] == "beambleu" and manifest["parts"] == parts and len(parts) == 6
    assert sum(pq.read_metadata(out / p).num_rows for p in parts) == 30
    rc, _, err = run_cli("--input", small, "--sentence-output", out, "--progress", "off")
    assert rc == 2 and "exists (use --overwrite" in error_line(err)
    rc, _, err = run_cli("--input", small, "--sentence-output", out, "--overwrite", "--progress", "off")
    assert rc == 0, err
    parts = sorted(p.name for p in out.iterdir() if p.name != MANIFEST)
    assert len(parts) == 1 and load(out / MANIFEST)["parts"] == parts
    assert pq.read_metadata(out / parts[0]).num_rows == 4
    assert sorted(os.listdir(tmp_path)) == ["big.parquet", "sent", "small.parquet"]  # no staging left


def test_overwrite_refuses_a_beambleu_directory_holding_user_files(tmp_path):
    out = tmp_path / "sent"
    assert run_cli("--input", SHARDS, "--sentence-output", out, "--progress", "off")[0] == 0
    (out / "my-analysis.ipynb").write_text("{}")
    before = tree(tmp_path)
    rc, _, err = run_cli("--input", SHARDS, "--sentence-output", out, "--overwrite", "--progress", "off")
    assert rc == 2 and "holds files beambleu did not write (my-analysis.ipynb)" in error_line(err)
    assert tree(tmp_path) == before


# ---------------------------------------------------------------- all outputs or none ---

def test_failure_while_writing_the_group_table_leaves_nothing(tmp_path, monkeypatch):
    from beambleu.io import outputs

    def broken(self, table):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(outputs.TableWriter, "write", broken)
    rc, out, err = run_cli("--input", SHARDS, "--group-by", "system", "--output", tmp_path / "r.json",
                           "--groups-output", tmp_path / "g.parquet", "--sentence-output", tmp_path / "sent",
                           "--progress", "off")
    assert rc == 1 and error_line(err) == f"beambleu: error: no space left on device while writing the outputs in " \
                                          f"{tmp_path}; nothing was written"
    assert out == ""
    assert os.listdir(tmp_path) == []  # neither the outputs nor their staging paths


def test_stale_staging_of_a_killed_run_is_removed_by_the_next_run(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    (tmp_path / f".r.json.beambleu-tmp-{pid}-0123456789ab").write_text("")
    (tmp_path / f".sent.beambleu-tmp-{pid}-0123456789ab").mkdir()
    (tmp_path / f".sent.beambleu-tmp-{pid}-0123456789ab" / "part-x.parquet").write_text("")
    (tmp_path / f".other.beambleu-tmp-{os.getpid()}-0123456789ab").write_text("")  # a live process's: kept
    rc, _, err = run_cli("--input", SHARDS, "--output", tmp_path / "r.json", "--sentence-output", tmp_path / "sent",
                         "--progress", "off")
    assert rc == 0, err
    assert sorted(os.listdir(tmp_path)) == [f".other.beambleu-tmp-{os.getpid()}-0123456789ab", "r.json", "sent"]


def _started(pid):
    """Process ``pid``'s start time, read here from /proc/PID/stat (field 22) for the test's own use."""
    return int(Path(f"/proc/{pid}/stat").read_bytes().rpartition(b")")[2].split()[19])


def test_a_reused_pid_is_not_taken_for_the_dead_run(tmp_path):
    # A killed run's pid may belong to a new process by the time the next run looks (pids wrap): the
    # staging paths and the lock name the process's start time too, and only that process keeps them.
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        real = f"{alive.pid}@{_started(alive.pid)}"
        reused = f"{alive.pid}@{_started(alive.pid) - 1}"  # the same pid, started earlier: another process
        (tmp_path / f".r.json.beambleu-tmp-{reused}-0123456789ab").write_text("")
        (tmp_path / f".sent.beambleu-tmp-{reused}-0123456789ab").mkdir()
        (tmp_path / f".other.beambleu-tmp-{real}-0123456789ab").write_text("")  # the live process's: kept
        lock = tmp_path / ".r.json.beambleu-lock"
        lock.write_text(f"{reused}\n")
        rc, _, err = run_cli("--input", SHARDS, "--output", tmp_path / "r.json", "--sentence-output", tmp_path / "sent",
                             "--progress", "off")
        assert rc == 0, err
        assert sorted(os.listdir(tmp_path)) == [f".other.beambleu-tmp-{real}-0123456789ab", "r.json", "sent"]
        lock.write_text(f"{real}\n")  # the live process's own lock: refused
        rc, _, err = run_cli("--input", SHARDS, "--output", tmp_path / "r.json", "--overwrite", "--progress", "off")
        assert rc == 2 and f"(pid {alive.pid}; its lock is {lock})" in error_line(err)
    finally:
        alive.kill()
        alive.wait()


@pytest.fixture(scope="module")
def slow_input(tmp_path_factory):
    """Shards big enough that a job with two worker processes runs for a few seconds."""
    d = tmp_path_factory.mktemp("slow")
    rng = random.Random(7)
    words = [f"w{i}" for i in range(500)]
    n = 150_000
    cands = [" ".join(rng.choices(words, k=20)) for _ in range(2000)]
    refs = [" ".join(rng.choices(words, k=20)) for _ in range(2000)]
    for s in range(4):
        pq.write_table(pa.table({
            "candidate": [cands[i % 2000] for i in range(n // 4)],
            "references": [[refs[(i * 7) % 2000]] for i in range(n // 4)],
            "system": [f"s{i % 3}" for i in range(n // 4)],
        }), d / f"part-{s}.parquet", row_group_size=5000)
    return str(d / "*.parquet")


def _start_run(tmp_path, slow_input, *extra):
    cmd = [sys.executable, "-m", "beambleu.cli", "run", "--input", slow_input, "--group-by", "system",
           "--output", str(tmp_path / "out" / "r.json"), "--groups-output", str(tmp_path / "out" / "g.csv"),
           "--sentence-output", str(tmp_path / "out" / "sent"), "--progress", "on",
           "--direct_num_workers=2", "--direct_running_mode=multi_processing", *extra]
    (tmp_path / "out").mkdir(exist_ok=True)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    lines = []
    planned = threading.Event()

    def pump():
        for raw in proc.stderr:
            lines.append(raw.decode("utf-8", "replace"))
            if " row groups; planning took " in lines[-1]:
                planned.set()
        planned.set()

    t = threading.Thread(target=pump, daemon=True)
    t.start()
    assert planned.wait(60), "the job did not start"
    return proc, lines, t


def _descendants_alive(pid_list):
    return [p for p in pid_list if os.path.exists(f"/proc/{p}")]


@pytest.mark.parametrize("signum,code,delay", [
    (signal.SIGINT, 130, 0.0), (signal.SIGINT, 130, 2.0), (signal.SIGTERM, 143, 1.0),
])
def test_interrupt_exits_promptly_and_leaves_nothing(tmp_path, slow_input, signum, code, delay):
    proc, lines, pump = _start_run(tmp_path, slow_input)
    time.sleep(delay)
    children = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
    sent = time.monotonic()
    proc.send_signal(signum)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("beambleu run did not exit after the signal")
    pump.join(5)
    assert time.monotonic() - sent < 10
    if proc.returncode == 0:  # the job won the race: then everything is there
        assert sorted(os.listdir(tmp_path / "out")) == ["g.csv", "r.json", "sent"]
    else:
        assert proc.returncode == code, "".join(lines)
        said = [ln for ln in lines if "interrupted" in ln]
        assert said == [f"beambleu: interrupted by {signal.Signals(signum).name}; nothing was written\n"], lines
        assert os.listdir(tmp_path / "out") == []
        assert "Traceback" not in "".join(lines)
    time.sleep(0.5)
    assert _descendants_alive(children) == [] or all(
        "sdk_worker" not in Path(f"/proc/{p}/cmdline").read_text(errors="replace") for p in _descendants_alive(children))
    # a rerun works without --overwrite after an interruption, and with it
    rerun = ["--input", slow_input, "--group-by", "system", "--output", tmp_path / "out" / "r.json",
             "--progress", "off"]
    if proc.returncode != 0:
        rc, _, err = run_cli(*rerun)
        assert rc == 0, err
    rc, _, err = run_cli(*rerun, "--overwrite")
    assert rc == 0, err


@pytest.mark.parametrize("delay", [0.0, 1.0, 2.5, 4.0])
def test_sigkill_at_any_point_leaves_all_outputs_or_none_and_a_rerun_cleans_up(tmp_path, slow_input, delay):
    proc, lines, pump = _start_run(tmp_path, slow_input)
    time.sleep(delay)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=20)
    for child in subprocess.run(["pgrep", "-f", str(tmp_path)], capture_output=True, text=True).stdout.split():
        os.kill(int(child), signal.SIGKILL)  # what a killed driver's workers would get from the system
    visible = sorted(n for n in os.listdir(tmp_path / "out") if not n.startswith("."))
    assert visible in ([], ["g.csv", "r.json", "sent"]), visible
    if visible:
        assert load(tmp_path / "out" / "sent" / MANIFEST)["written_by"] == "beambleu"
    rc, _, err = run_cli("--input", slow_input, "--group-by", "system", "--output", tmp_path / "out" / "r.json",
                         "--groups-output", tmp_path / "out" / "g.csv", "--sentence-output",
                         tmp_path / "out" / "sent", "--progress", "off", *(["--overwrite"] if visible else []))
    assert rc == 0, err
    assert sorted(os.listdir(tmp_path / "out")) == ["g.csv", "r.json", "sent"]  # hidden leftovers removed


def test_disk_full_leaves_nothing(tmp_path):
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("needs root to mount a small tmpfs")
    mnt = tmp_path / "small"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8k", "tmpfs", str(mnt)]).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        rc, out, err = run_cli("--input", SHARDS, "--group-by", "system", "--output", mnt / "r.json",
                               "--sentence-output", mnt / "sent", "--groups-output", mnt / "g.parquet",
                               "--progress", "off")
        assert rc == 1, err
        assert error_line(err) == f"beambleu: error: no space left on device while writing the outputs in {mnt}; " \
                                  "nothing was written"
        assert out == "" and os.listdir(mnt) == []
        (mnt / "filler").write_bytes(b"")  # the file system is usable again: nothing was left behind
    finally:
        subprocess.run(["umount", str(mnt)])


class _FullDisk:
    """Every local file Beam's FileSystems writes shares ``budget`` bytes: the write that would
    pass it writes what fits, then raises OSError(ENOSPC), as a full disk does."""

    def __init__(self, monkeypatch, budget):
        import errno

        from apache_beam.io import localfilesystem

        self.budget, self.written = budget, 0
        disk = self

        class File(io.FileIO):
            def write(self, b):
                data = bytes(memoryview(b))
                room = len(data) if disk.budget is None else max(0, disk.budget - disk.written)
                if room < len(data):
                    super().write(data[:room])
                    disk.written += room
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                disk.written += len(data)
                return super().write(data)

        original = localfilesystem.LocalFileSystem._path_open

        def path_open(fs, path, mode, *args, **kwargs):
            if "w" not in mode:
                return original(fs, path, mode, *args, **kwargs)
            return File(path, "wb")

        monkeypatch.setattr(localfilesystem.LocalFileSystem, "_path_open", path_open)


def _full_disk_run(out):
    return run_cli("--input", SHARDS, "--group-by", "system", "--output", out / "r.json",
                   "--groups-output", out / "g.parquet", "--sentence-output", out / "sent", "--overwrite",
                   "--progress", "off")


@pytest.fixture(scope="module")
def bytes_of_a_run(tmp_path_factory):
    """How many bytes a run of :func:`_full_disk_run` writes through FileSystems."""
    out = tmp_path_factory.mktemp("measure")
    with pytest.MonkeyPatch.context() as mp:
        disk = _FullDisk(mp, None)
        rc, _, err = _full_disk_run(out)
    assert rc == 0, err
    return disk.written


@pytest.mark.parametrize("fraction", [0.0, 0.01, 0.3, 0.6, 0.9, 0.999])
@pytest.mark.parametrize("earlier", [False, True])
def test_disk_full_at_any_point_of_the_writing_leaves_the_disk_as_it_was(tmp_path, monkeypatch, bytes_of_a_run,
                                                                          fraction, earlier):
    """The disk fills up while the staging paths are made (fraction 0, 0.01), while the job writes
    per-pair and scored parts, or while the final step writes the outputs: one line, exit 1, and
    the folder holds exactly what it held (no staging path; an earlier run's outputs untouched)."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "mine.txt").write_text("do not delete\n")
    if earlier:
        rc, _, err = _full_disk_run(out)
        assert rc == 0, err
    before = tree(out)
    _FullDisk(monkeypatch, int(fraction * bytes_of_a_run))
    rc, stdout, err = _full_disk_run(out)
    assert rc == 1, err
    assert error_line(err) == f"beambleu: error: no space left on device while writing the outputs in {out}; " \
                              "nothing was written"
    assert stdout == ""
    assert tree(out) == before


@pytest.mark.parametrize("earlier", [False, True])
def test_disk_full_during_the_commit_renames_undoes_them(tmp_path, monkeypatch, earlier):
    """The last rename of the commit (the JSON document) fails: the outputs already renamed go back,
    an earlier run's outputs are restored, and nothing else is left."""
    import errno

    out = tmp_path / "out"
    out.mkdir()
    if earlier:
        rc, _, err = _full_disk_run(out)
        assert rc == 0, err
    before = tree(out)
    rename, replace = os.rename, os.replace

    def failing(real):
        def move(src, dst, *args, **kwargs):
            if str(dst) == str(out / "r.json") and ".beambleu-tmp-" in str(src):  # (not the undo's rename)
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return real(src, dst, *args, **kwargs)
        return move

    monkeypatch.setattr(os, "rename", failing(rename))
    monkeypatch.setattr(os, "replace", failing(replace))
    rc, stdout, err = _full_disk_run(out)
    assert rc == 1, err
    assert error_line(err) == f"beambleu: error: no space left on device while writing the outputs in {out}; " \
                              "nothing was written"
    assert stdout == ""
    assert tree(out) == before


#: `beambleu run` in a process that dies (os._exit, as SIGKILL would end it) at the DIE_AT-th rename
#: of the commit (os.rename / os.replace), or, with DIE_AT = renames + 1, at the first removal after
#: them; it writes how many renames the commit made to RENAMES_FILE when it does not die
_DIE_IN_COMMIT = """
import os, sys
from beambleu.io import outputs
die_at, seen = int(os.environ["DIE_AT"]), [0]
real_commit = outputs.commit
def commit(cfg):
    saved = {name: getattr(os, name) for name in ("rename", "replace", "unlink", "remove", "rmdir")}
    def step(name):
        def call(*args, **kwargs):
            if name in ("rename", "replace"):
                seen[0] += 1
                if seen[0] == die_at:
                    os._exit(137)
            elif seen[0] + 1 == die_at:
                os._exit(137)
            return saved[name](*args, **kwargs)
        return call
    for name in saved:
        setattr(os, name, step(name))
    try:
        return real_commit(cfg)
    finally:
        for name, fn in saved.items():
            setattr(os, name, fn)
        with open(os.environ["RENAMES_FILE"], "w") as fh:
            fh.write(str(seen[0]))
outputs.commit = commit
from beambleu.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _visible(root: Path) -> dict:
    return {k: v for k, v in tree(root).items() if not any(part.startswith(".") for part in Path(k).parts)}


@pytest.mark.parametrize("earlier", [False, True])
def test_death_between_any_two_commit_renames_is_completed_or_undone_by_the_next_run(tmp_path, earlier):
    """The process dies (os._exit in a patched rename: what SIGKILL does) before each rename of the
    commit in turn, and once after the last: until a run touches those outputs again, a journal
    beside each of them says the set is not committed (unless the folder still holds exactly what it
    held, or the whole new set); the next run completes or undoes that commit first, so the folder
    then holds the earlier outputs exactly (refused without --overwrite) or the whole new set, never a
    mix, no hidden file is left, and a rerun without --overwrite works where nothing was there before.
    (Today the per-pair directory could be committed and the JSON not, and the rerun was refused.)
    About 20 runs of `beambleu run`: some 80 s."""
    out = tmp_path / "out"
    new = ["run", "--input", SAMPLE / "shards" / "alpha.parquet", "--group-by", "system", "--output", out / "r.json",
           "--groups-output", out / "g.parquet", "--sentence-output", out / "sent", "--progress", "off"]
    renames = tmp_path / "renames"

    def setup():
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir()
        (out / "mine.txt").write_text("do not delete\n")
        if earlier:  # the earlier outputs: another input, so that they differ from the new ones
            assert _full_disk_run(out)[0] == 0

    def killed_run(die_at):
        env = {**os.environ, "DIE_AT": str(die_at), "RENAMES_FILE": str(renames)}
        return subprocess.run([sys.executable, "-c", _DIE_IN_COMMIT, *map(str, new), *(["--overwrite"] if earlier
                                                                                       else [])],
                              env=env, capture_output=True, text=True, cwd=tmp_path)

    setup()
    before = tree(out)
    proc = killed_run(0)
    assert proc.returncode == 0, proc.stderr
    after, n = tree(out), int(renames.read_text())
    assert after != before and n >= 3
    journals = [out / ".r.json.beambleu-commit", out / ".g.parquet.beambleu-commit", out / ".sent.beambleu-commit"]
    for die_at in range(1, n + 2):
        setup()
        proc = killed_run(die_at)
        assert proc.returncode == 137, (die_at, proc.stderr)
        if _visible(out) not in (_visible_of(before), _visible_of(after)):
            assert all(j.exists() for j in journals), (die_at, sorted(tree(out)))
        rc, _, err = run_cli(*new[1:])  # the next run on those outputs, without --overwrite
        if earlier:
            assert rc == 2 and "exists (use --overwrite to replace it)" in error_line(err)
            assert tree(out) in (before, after), (die_at, sorted(tree(out)))
        else:
            assert rc == 0 or rc == 2 and "exists (use --overwrite" in error_line(err), err
            assert tree(out) == after, (die_at, sorted(tree(out)))


def _visible_of(state: dict) -> dict:
    return {k: v for k, v in state.items() if not any(part.startswith(".") for part in Path(k).parts)}


# ---------------------------------------------------------------- two runs on the same outputs ---

def test_a_second_run_on_outputs_being_written_is_refused_and_the_first_completes(tmp_path, slow_input):
    """Two real processes on the same outputs: while the first runs, the second is refused before it
    does anything, one line naming the lock and the first run's pid (exit 2, as an output refused);
    the first then commits its outputs, and its locks are gone. (Today the second ran, and the
    later commit silently replaced what the first had written.)"""
    proc, lines, pump = _start_run(tmp_path, slow_input)
    try:
        rc, stdout, err = run_cli("--input", SHARDS, "--group-by", "system", "--output", tmp_path / "out" / "r.json",
                                  "--overwrite", "--progress", "off")
        still_running = proc.poll() is None
    finally:
        proc.wait(timeout=120)
        pump.join(5)
    assert still_running, "the first run ended before the second started: the test proves nothing"
    lock = tmp_path / "out" / ".r.json.beambleu-lock"
    assert (rc, stdout) == (2, ""), err
    assert error_line(err) == (f"beambleu: error: {tmp_path / 'out' / 'r.json'}: --output is being written by "
                               f"another beambleu run (pid {proc.pid}; its lock is {lock}); run again when it has "
                               "ended, or remove the lock if that process is not beambleu")
    assert proc.returncode == 0, "".join(lines)
    assert sorted(os.listdir(tmp_path / "out")) == ["g.csv", "r.json", "sent"]
    assert load(tmp_path / "out" / "r.json")["inputs"]["pairs"] == 150_000  # the first run's, not replaced


def test_a_lock_of_a_dead_process_is_taken_over_and_one_of_a_live_one_is_not(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    lock = tmp_path / ".r.json.beambleu-lock"
    lock.write_text(f"{int(dead.stdout)}\n")
    rc, _, err = run_cli("--input", SHARDS, "--output", tmp_path / "r.json", "--progress", "off")
    assert rc == 0, err
    assert sorted(os.listdir(tmp_path)) == ["r.json"]  # taken over, then released
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        lock.write_text(f"{alive.pid}\n")
        before = tree(tmp_path)
        rc, _, err = run_cli("--input", SHARDS, "--output", tmp_path / "r.json", "--overwrite", "--progress", "off")
        assert rc == 2 and f"(pid {alive.pid}; its lock is {lock})" in error_line(err)
        assert tree(tmp_path) == before
    finally:
        alive.kill()
        alive.wait()


# ---------------------------------------------------------------- CSV, stdout, usage ---

def test_groups_csv_round_trips_to_the_parquet_table(tmp_path):
    keys = ["plain", "", None, "com,ma", 'quo"te', "line\nbreak", "cr\rhere", "ünïcode ✓", "  spaced  ", "null"]
    rows = {"candidate": [], "references": [], "k": [], "n": []}
    for i, key in enumerate(keys):
        for j in range(2):
            rows["candidate"].append(f"the cat {i} sat {j}")
            rows["references"].append([f"the cat {i} sat on the mat"])
            rows["k"].append(key)
            rows["n"].append(None if i % 3 == 0 else i - 5)
    pq.write_table(pa.table(rows), tmp_path / "in.parquet")
    common = ["--input", tmp_path / "in.parquet", "--group-by", "k", "--group-by", "k,n", "--progress", "off"]
    assert run_cli(*common, "--groups-output", tmp_path / "g.parquet")[0] == 0
    rc, _, err = run_cli(*common, "--groups-output", tmp_path / "g.csv")
    assert rc == 0, err
    expected = pq.read_table(tmp_path / "g.parquet")
    got = pacsv.read_csv(tmp_path / "g.csv", convert_options=pacsv.ConvertOptions(
        column_types=expected.schema, strings_can_be_null=True, quoted_strings_can_be_null=False))
    assert got.equals(expected.select(got.column_names)) and got.column_names == expected.column_names
    keys_written = [k for k, g in zip(got.column("k").to_pylist(), got.column("group_by").to_pylist()) if g == "k"]
    assert sorted(keys_written, key=lambda v: (v is not None, v or "")) == \
        sorted(keys, key=lambda v: (v is not None, v or ""))


def test_run_prints_the_scores_as_sacrebleu_does(tmp_path):
    hyps = (SAMPLE / "sys.alpha.txt").read_text().splitlines() + (SAMPLE / "sys.beta.txt").read_text().splitlines()
    refs = [(SAMPLE / f"ref.{r}.txt").read_text().splitlines() * 2 for r in "AB"]
    metric = sacrebleu.BLEU()
    theirs = metric.corpus_score(hyps, refs)
    rc, out, err = run_cli("--input", SHARDS, "--group-by", "system", "--output", tmp_path / "r.json",
                           "--progress", "off")
    assert rc == 0, err
    lines = out.splitlines()
    sig = str(metric.get_signature())  # nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0
    head, _, rest = lines[0].partition(" = ")
    # with groups, the corpus line says that it pools them
    assert head.startswith("corpus (all 60 pairs, every system pooled): BLEU|" + sig.split("version:")[0]
                           + "version:beambleu-")
    assert rest == theirs.format(width=1).partition(" = ")[2]
    alpha = sacrebleu.corpus_bleu((SAMPLE / "sys.alpha.txt").read_text().splitlines(),
                                  [(SAMPLE / f"ref.{r}.txt").read_text().splitlines() for r in "AB"])
    assert lines[1] == "system=alpha: BLEU = " + alpha.format(width=1).partition(" = ")[2]
    assert len(lines) == 3 and lines[2].startswith("system=beta: BLEU = ")


def test_progress_line_does_not_read_as_skipped_data(tmp_path):
    rc, _, err = run_cli("--input", SHARDS, "--output", tmp_path / "r.json", "--progress", "on")
    assert rc == 0, err
    progress = [ln for ln in err.splitlines() if ln.startswith("beambleu: progress:")]
    assert progress and all(" pairs of " not in ln for ln in progress)
    # one overall line (not a worker's share): all 60 pairs of the two shards, done
    assert re.fullmatch(r"beambleu: progress: 60 of 60 pairs \(100%\), [\d,]+ pairs/s, done in [\d.]+ s",
                        progress[-1]), progress


@pytest.mark.parametrize("flags,message", [
    ([], "--input is required"),
    (["--input", SHARDS, "--detach"], "--detach: nothing would be written nor printed"),
    (["--input", SHARDS, "--output", "x.json", "--batch-size", "0"], "--batch-size must be at least 1"),
    (["--input", SHARDS, "--output", "x.json", "--no-such-flag"], "unknown option(s): --no-such-flag"),
])
def test_usage_errors_exit_2_with_one_line(tmp_path, monkeypatch, flags, message):
    monkeypatch.chdir(tmp_path)
    rc, out, err = run_cli(*flags)
    assert rc == 2 and message in error_line(err) and out == ""
    assert os.listdir(tmp_path) == []


def test_run_without_outputs_prints_the_summary_and_writes_nothing(tmp_path, monkeypatch):
    """Without --output, --groups-output or --sentence-output the job runs and prints its summary,
    the same lines as with an output; it writes nothing where it runs, and its scratch (a temporary
    folder of this machine) is removed."""
    import tempfile

    for d in ("cwd", "tmp"):
        (tmp_path / d).mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    rc, out, err = run_cli("--input", SHARDS, "--group-by", "system", "--progress", "off")
    assert rc == 0, err
    alpha = sacrebleu.corpus_bleu((SAMPLE / "sys.alpha.txt").read_text().splitlines(),
                                  [(SAMPLE / f"ref.{r}.txt").read_text().splitlines() for r in "AB"])
    assert out.splitlines()[1] == "system=alpha: BLEU = " + alpha.format(width=1).partition(" = ")[2]
    assert os.listdir(tmp_path / "cwd") == [] and not list((tmp_path / "tmp").glob("beambleu-run-*"))
    rc, with_output, err = run_cli("--input", SHARDS, "--group-by", "system", "--output", tmp_path / "r.json",
                                   "--progress", "off")
    assert rc == 0 and with_output == out, err


def test_large_grouping_sets_are_left_to_the_group_table(tmp_path):
    rc, out, err = run_cli("--input", SHARDS, "--group-by", "system", "--group-by", "line", "--json-groups-limit", "5",
                           "--output", tmp_path / "r.json", "--groups-output", tmp_path / "g.parquet",
                           "--progress", "off")
    assert rc == 0, err
    doc = load(tmp_path / "r.json")
    assert doc["grouping_sets"] == [
        {"group_by": ["system"], "groups": 2, "in_document": True},
        {"group_by": ["line"], "groups": 30, "in_document": False, "see": str(tmp_path / "g.parquet")}]
    assert [g["key"] for g in doc["groups"]] == [{"system": "alpha"}, {"system": "beta"}]
    table = pq.read_table(tmp_path / "g.parquet")
    assert table.column("group_by").to_pylist().count("line") == 30
    assert len(out.splitlines()) == 22  # corpus, 20 groups (2 systems, 18 lines), where the rest are
    assert out.splitlines()[-1] == f"... and 12 more groups in {tmp_path / 'g.parquet'}"
    # without a group table every group stays in the document
    rc, _, err = run_cli("--input", SHARDS, "--group-by", "line", "--json-groups-limit", "5",
                         "--output", tmp_path / "r2.json", "--progress", "off")
    assert rc == 0 and len(load(tmp_path / "r2.json")["groups"]) == 30


def _invalid_utf8_strings(values):
    """A string array holding the given bytes unvalidated (Parquet does not check UTF-8 either)."""
    import numpy as np

    data = b"".join(values)
    offsets = np.cumsum([0] + [len(v) for v in values]).astype(np.int32)
    return pa.Array.from_buffers(pa.string(), len(values), [None, pa.py_buffer(offsets.tobytes()),
                                                            pa.py_buffer(data)])


@pytest.mark.parametrize("flags,column", [
    (["--group-by", "dom"], "dom"),
    (["--confidence", "--confidence-n", "10", "--id-column", "seg"], "seg"),
])
def test_invalid_utf8_in_a_key_column_names_file_row_and_column(tmp_path, flags, column):
    bad = [b"news", b"web", b"caf\xe9", b"news"]  # row 2 is Latin-1, not UTF-8
    f = tmp_path / "in.parquet"
    pq.write_table(pa.table({"candidate": ["a b c"] * 4, "references": [["a b c"]] * 4,
                             "dom": _invalid_utf8_strings(bad if column == "dom" else [b"x"] * 4),
                             "seg": _invalid_utf8_strings(bad if column == "seg" else [b"1", b"2", b"3", b"4"])}), f)
    rc, out, err = run_cli("--input", f, *flags, "--output", tmp_path / "r.json", "--progress", "off")
    assert rc == 1, err
    assert error_line(err) == f"beambleu: error: {f}: row 2, column '{column}': invalid UTF-8"
    assert out == "" and sorted(os.listdir(tmp_path)) == ["in.parquet"]


@pytest.mark.parametrize("a,b,line", [
    # the wide layout's systems are scored together; the error is the first the columns taken in
    # order meet: sysA's bad text at row 2 before sysB's null at row 0, and the other way round
    ([b"x", b"y", b"caf\xe9", b"z"], [None, b"y", b"y", b"y"], "row 2, column 'sysA': invalid UTF-8"),
    ([b"x", None, b"y", b"z"], [b"caf\xe9", b"y", b"y", b"y"],
     "row 1, column 'sysA': candidate is null (--null-candidate=empty scores it as the empty string)"),
    ([b"x", b"y", b"y", b"z"], [b"y", b"y", b"caf\xe9", b"y"], "row 2, column 'sysB': invalid UTF-8"),
])
def test_wide_layout_error_names_the_first_bad_system_column(tmp_path, a, b, line):
    def strings(values):  # None: a null; bytes as they are, unvalidated
        arr = _invalid_utf8_strings([v or b"" for v in values])
        validity = pa.array([v is not None for v in values]).buffers()[1]
        return pa.Array.from_buffers(pa.string(), len(values), [validity, *arr.buffers()[1:]])

    f = tmp_path / "in.parquet"
    pq.write_table(pa.table({"sysA": strings(a), "sysB": strings(b), "ref": ["x y z"] * 4}), f)
    rc, out, err = run_cli("--input", f, "--candidate-columns", "sysA,sysB", "--reference-columns", "ref",
                           "--output", tmp_path / "r.json", "--progress", "off")
    assert rc == 1, err
    assert error_line(err) == f"beambleu: error: {f}: {line}"
    assert out == "" and sorted(os.listdir(tmp_path)) == ["in.parquet"]


def test_report_names_the_group_table_for_a_set_left_out_of_the_document(tmp_path):
    from beambleu.cli import main

    assert run_cli("--input", SHARDS, "--group-by", "system", "--group-by", "system,line", "--json-groups-limit",
                   "5", "--output", tmp_path / "r.json", "--groups-output", tmp_path / "g.csv",
                   "--progress", "off")[0] == 0
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = main(["report", str(tmp_path / "r.json"), "--group-by", "system,line"])
    assert rc == 1
    assert error_line(err.getvalue()) == (
        f"beambleu: error: {tmp_path / 'r.json'}: grouping set system,line has 60 groups, more than the document "
        f"lists: they are in the group table {tmp_path / 'g.csv'}")


def test_run_help_names_only_options_run_has():
    out = subprocess.run([sys.executable, "-m", "beambleu.cli", "run", "--help"], capture_output=True, text=True,
                         cwd=REPO, timeout=120).stdout
    assert "--sentence-level" not in out and "--sentence-output" in out
    assert "--dask_stall_timeout" in out and "--object_store_timeout" in out


#: `beambleu ARGS` in a Python where the apitools package cannot be imported, as where beambleu is
#: installed without its gcp extra (Beam then logs "apitools not found" when it is imported)
_WITHOUT_APITOOLS = """
import sys

class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "apitools":
            raise ImportError(f"No module named {name!r}")

sys.meta_path.insert(0, Block())
from beambleu.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("apitools", [True, False])
def test_stderr_carries_only_beambleus_lines(tmp_path, apitools):
    """Nothing Beam logs when it is imported (or later) reaches stderr: `run --help` prints nothing
    there, and a run on the bundled sample only its `beambleu:` lines."""
    head = [sys.executable, "-m", "beambleu.cli"] if apitools else [sys.executable, "-c", _WITHOUT_APITOOLS]
    proc = subprocess.run([*head, "run", "--help"], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0 and "--sentence-output" in proc.stdout
    assert proc.stderr == ""
    proc = subprocess.run([*head, "run", "--input", SHARDS, "--group-by", "system", "--output", tmp_path / "r.json"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert lines and all(ln.startswith("beambleu: ") for ln in lines), proc.stderr
    assert "WARNING" not in proc.stderr and "done in" in lines[-1]


@pytest.mark.parametrize("option", ["--dask_stall_timeout", "--object_store_timeout"])
@pytest.mark.parametrize("value", ["0", "-3", "nan", "inf", "soon"])
def test_timeouts_take_a_positive_number_of_seconds(tmp_path, option, value):
    proc = subprocess.run([sys.executable, "-m", "beambleu.cli", "run", "--input", SHARDS, "--output",
                           str(tmp_path / "r.json"), f"{option}={value}"], capture_output=True, text=True,
                          cwd=REPO, timeout=120)
    assert proc.returncode == 2 and proc.stdout == "" and "Traceback" not in proc.stderr
    assert proc.stderr.splitlines() == [f"beambleu: error: argument {option}: expected a positive number of "
                                        f"seconds, got '{value}'"]
    assert os.listdir(tmp_path) == []


def test_job_endpoint_that_does_not_answer_is_one_line_in_bounded_time(tmp_path):
    """--job_endpoint naming a port nothing listens on: Beam would wait --job_server_timeout (300 s)
    and end in a bare FutureTimeoutError; beambleu probes it first (10 s at most), says so in one
    line, exit 1, and writes nothing."""
    with socket.socket() as s:  # a port that was free a moment ago
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = tmp_path / "r.json"
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "beambleu.cli", "run", "--input", SHARDS, "--output", str(out),
                           "--runner", "PortableRunner", f"--job_endpoint=localhost:{port}"],
                          capture_output=True, text=True, timeout=120)
    assert time.monotonic() - t0 < 60
    assert proc.returncode == 1, proc.stderr
    line = error_line(proc.stderr)
    assert f"no job server answers at localhost:{port} (Connection refused, waited 10 s)" in line
    assert "Traceback" not in proc.stderr
    assert list(tmp_path.iterdir()) == []


_LATE_THREAD = """
import sys, threading, time
import beambleu.commands.run as run_command

def failing_run(args, extra):
    # what Beam's SubprocessServer leaves behind when a job server fails to start: gRPC's
    # connectivity poller raises on the closed channel after the job's exception is on its way
    def poller():
        if sys.argv[1] == "after":
            time.sleep(0.5)
        raise ValueError("Cannot monitor channel state: Channel closed!")
    thread = threading.Thread(target=poller, name="poller")
    thread.start()
    if sys.argv[1] == "during":
        thread.join()
    raise RuntimeError("Service failed to start up with error 1")

run_command.run = failing_run
from beambleu.cli import main
code = main(sys.argv[2:])
for t in threading.enumerate():
    if t is not threading.current_thread() and not t.daemon:
        t.join()
sys.exit(code)
"""


@pytest.mark.parametrize("when", ["during", "after"])
def test_a_background_threads_exception_goes_to_the_log_also_after_the_job(tmp_path, when):
    """A thread dying during the job or 0.5 s after its one error line was printed (the CI failure
    of the Spark job-server test): stderr keeps the one line, and the thread's traceback is in the
    log that line names."""
    proc = subprocess.run([sys.executable, "-c", _LATE_THREAD, when, "run", "--input", SHARDS,
                           "--output", str(tmp_path / "r.json")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    line = error_line(proc.stderr)
    assert proc.stderr == line + "\n"
    assert "the job failed: Service failed to start up with error 1; Beam's log: " in line
    log = Path(line.split("Beam's log: ")[1].split(" (BEAMBLEU_DEBUG")[0])
    try:
        text = log.read_text()
    finally:
        log.unlink()
    assert "Exception in thread poller:" in text and "ValueError: Cannot monitor channel state" in text
    assert list(tmp_path.iterdir()) == []

"""The whole Unicode flag table kept in beambleu's cache folder (``_unicode.flag_table``): a later
process reads it instead of running the ``regex`` module over every code point, and reads it only
when it was made by the same ``regex`` installation and is whole. Expected tables come from the
computation itself (``_compute_flag_table``, checked against ``regex`` and sacrebleu by
test_tokenizers.py) or from the ``regex`` module run here."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from bleu_core.tokenizers import _unicode

from ...oracle import REPO

# prints the table's CRC-32 and whether regex and numpy were imported to get it
_PROBE = """
import sys, zlib
from bleu_core.tokenizers import _unicode
table = _unicode.flag_table()
print(zlib.crc32(table), len(table), "regex" in sys.modules, "numpy" in sys.modules)
"""


@pytest.fixture(scope="module")
def computed():
    return _unicode._compute_flag_table()


def _probe(cache, *, pythonpath=()):
    env = {**os.environ, "BEAMBLEU_CACHE_DIR": str(cache),
           "PYTHONPATH": os.pathsep.join([*map(str, pythonpath), str(REPO), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    crc, size, regex, numpy = proc.stdout.split()
    return int(crc), int(size), regex == "True", numpy == "True"


def _cached_files(cache):
    return sorted((cache / "unicode").glob("flags-*.bin")) if (cache / "unicode").exists() else []


def test_a_later_process_reads_the_table_without_regex_or_numpy(tmp_path, computed):
    import zlib

    first = _probe(tmp_path)
    assert first == (zlib.crc32(computed), _unicode.UNI_SIZE, True, True)  # computed, then kept
    assert len(_cached_files(tmp_path)) == 1
    assert _probe(tmp_path) == (zlib.crc32(computed), _unicode.UNI_SIZE, False, False)


@pytest.mark.parametrize("damage", ["flipped byte", "truncated", "another key", "empty"])
def test_a_damaged_or_foreign_file_is_not_read(tmp_path, computed, monkeypatch, damage):
    monkeypatch.setenv("BEAMBLEU_CACHE_DIR", str(tmp_path))
    path, key = _unicode._cached_location()
    _unicode._write_cached(path, key, computed)
    assert _unicode._read_cached(path, key) == computed
    data = bytearray(open(path, "rb").read())
    if damage == "flipped byte":
        data[-1000] ^= 0x02  # a P flag
    elif damage == "truncated":
        del data[-1:]
    elif damage == "another key":
        data[: len(key)] = key.replace(b"|", b"/", 1)
    else:
        data = bytearray()
    with open(path, "wb") as fh:
        fh.write(data)
    assert _unicode._read_cached(path, key) is None
    # a process that finds it computes the table again and keeps it whole
    _unicode.flag_table.cache_clear()
    try:
        assert _unicode.flag_table() == computed
    finally:
        _unicode.flag_table.cache_clear()
    assert _unicode._read_cached(path, key) == computed


def test_the_key_names_the_regex_installation_that_import_finds(tmp_path, monkeypatch):
    import regex

    files = _unicode._regex_files()
    folder = os.path.dirname(os.path.abspath(regex.__file__))
    assert files.startswith(folder + "|")
    for name in os.listdir(folder):
        if name.startswith("_regex.") and os.path.isfile(os.path.join(folder, name)):  # its compiled tables
            st = os.stat(os.path.join(folder, name))
            assert f"{name}:{st.st_size}:{st.st_mtime_ns}" in files
    # a copy of the module first on sys.path is another installation: another key, another file; touching
    # one of its files is another again
    copy = tmp_path / "site"
    shutil.copytree(folder, copy / "regex", ignore=shutil.ignore_patterns("__pycache__"))
    cache = tmp_path / "cache"
    _probe(cache)
    _probe(cache, pythonpath=[copy])
    assert len(_cached_files(cache)) == 2
    core = copy / "regex" / "_regex_core.py"
    os.utime(core, ns=(core.stat().st_atime_ns, core.stat().st_mtime_ns + 10**9))
    _probe(cache, pythonpath=[copy])
    assert len(_cached_files(cache)) == 3


def test_no_cache_when_the_folder_is_set_empty(monkeypatch, tmp_path):
    monkeypatch.setenv("BEAMBLEU_CACHE_DIR", "")
    assert _unicode.cache_dir() is None and _unicode._cached_location() is None


def test_default_folder_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv("BEAMBLEU_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert _unicode.cache_dir() == str(tmp_path / "beambleu")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert _unicode.cache_dir() == str(tmp_path / "home" / ".cache" / "beambleu")


def test_a_folder_that_cannot_be_made_falls_back_to_the_inputs_own_table(monkeypatch, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("BEAMBLEU_CACHE_DIR", str(blocker / "cache"))
    assert not _unicode._can_keep(_unicode._cached_location())
    monkeypatch.setattr(_unicode, "flag_table", _NotAsked())
    table = _unicode.flag_table_for(["a\u00ab1"], lowercase=False)
    # by hand: '«' is \p{P}, '1' \p{N}; a character not given (e.g. '»') has no flag in this table
    assert table[ord("\u00ab")] == _unicode.F_P and table[ord("1")] == _unicode.F_N and table[ord("\u00bb")] == 0
    assert not blocker.is_dir()


class _NotAsked:
    def cache_info(self):
        return type("Info", (), {"currsize": 0})()

    def __call__(self):
        raise AssertionError("the whole table was asked for")


def test_a_small_input_reads_the_kept_table(monkeypatch, tmp_path, computed):
    monkeypatch.setenv("BEAMBLEU_CACHE_DIR", str(tmp_path))
    _unicode._write_cached(*_unicode._cached_location(), computed)
    _unicode.flag_table.cache_clear()
    try:
        assert _unicode.flag_table_for(["a\u00ab1"], lowercase=False) == computed
    finally:
        _unicode.flag_table.cache_clear()


def test_temporary_files_of_dead_writers_are_removed(tmp_path, computed, monkeypatch):
    """A writer killed between writing its temporary file and renaming it leaves the file; the next
    writer removes it, and leaves a live process's file and any other file alone."""
    monkeypatch.setenv("BEAMBLEU_CACHE_DIR", str(tmp_path))
    path, key = _unicode._cached_location()
    folder = tmp_path / "unicode"
    folder.mkdir(parents=True)
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(gone.stdout)  # exited and reaped: no process has this number now (barring reuse)
    base = os.path.basename(path)
    dead = folder / f"{base}.{dead_pid}.140000000000.tmp"
    dead_other_table = folder / f"flags-0000abcd.bin.{dead_pid}.7.tmp"
    live = folder / f"{base}.{os.getpid()}.1.tmp"
    others = [folder / "notes.txt", folder / f"{base}.x.1.tmp", folder / f"flags-1.bin.{dead_pid}.tmp"]
    for f in [dead, dead_other_table, live, *others]:
        f.write_bytes(b"partial")
    _unicode._write_cached(path, key, computed)
    assert _unicode._read_cached(path, key) == computed
    assert not dead.exists() and not dead_other_table.exists()
    assert live.exists() and all(f.exists() for f in others)

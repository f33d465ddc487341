"""Outputs own their paths: what a command may write, replace or delete, and how it commits.

Rules (checked before any work starts, each failure one line, exit 2):

* a file output (``--output``, ``--groups-output``, ``convert -o x.parquet``) is a regular file or
  absent; ``--overwrite`` replaces a regular file only, never a directory;
* a directory output (``--sentence-output``, ``--mtme-output``, ``convert -o DIR``) is absent, empty,
  or a directory beambleu wrote: it carries :data:`MANIFEST`, and holds nothing the manifest does
  not list (files in its subfolders by their relative paths); only then does ``--overwrite``
  replace it;
* no output is, contains or lies inside an input (every file the command reads: the data, a
  SentencePiece model, a test set's files), the current directory or another output.

Writing: every output is first written to a hidden staging path beside its target
(``.NAME.beambleu-tmp-XXXX``) and committed by renames once all are complete; a directory
appears by one rename, its manifest listing every part, so a reader can tell a complete
directory from a torn one. The renames of a set are one unit, through a journal beside each local
output (:func:`write_journals`, :func:`recover_commit`). Staging paths of dead processes are found
and removed by :func:`remove_stale_staging`.

Local paths use :mod:`os`; URLs (``gs://``, ``s3://``) go through Beam's ``FileSystems`` and
are only imported when used (``beambleu convert`` and ``score`` never import Beam).
"""

from __future__ import annotations

import json
import os
import posixpath
import shutil
import uuid
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence

from ..errors import UsageError

__all__ = ["JOURNAL_MARK", "LOCK_MARK", "MANIFEST", "OLD_MARK", "STAGING_MARK", "OutputBusy", "Target", "UnsafeOutput",
           "check_outputs", "commit_dir", "commit_file", "is_url", "join", "journal_path", "listing", "lock_path",
           "mark_committed", "old_path", "read_manifest", "recover_commit", "release_locks", "remove_journals",
           "remove_stale_staging", "remove_tree", "roll_back", "staging_path", "take_locks", "write_journals",
           "write_manifest"]

#: the file that marks a directory as beambleu's, listing its parts
MANIFEST = "_beambleu_manifest.json"
STAGING_MARK = ".beambleu-tmp-"
OLD_MARK = ".beambleu-old-"
#: the commit's journal beside each local output: ``.NAME.beambleu-commit`` (see :func:`write_journals`)
JOURNAL_MARK = ".beambleu-commit"
#: the lock a run holds beside each local output while it runs: ``.NAME.beambleu-lock``, its process (``PID@START``)
LOCK_MARK = ".beambleu-lock"


class UnsafeOutput(UsageError):
    """An output path beambleu refuses to write (bad usage: exit 2)."""


@dataclass(frozen=True)
class Target:
    flag: str  # "--output", "--sentence-output", "-o", ...
    path: str
    kind: str  # "file" or "dir"


def is_url(path: str) -> bool:
    return "://" in path


def _fs():
    from apache_beam.io.filesystems import FileSystems

    return FileSystems


def _real(path: str) -> str:
    return path if is_url(path) else os.path.realpath(os.path.abspath(os.path.expanduser(path)))


def _inside(child: str, parent: str) -> bool:
    """child == parent or child lies below parent (both real paths or URLs)."""
    sep = "/" if is_url(parent) else os.sep
    return child == parent or child.startswith(parent.rstrip(sep) + sep)


def read_manifest(directory: str) -> Optional[Dict]:
    """The manifest of a directory beambleu wrote, or None."""
    path = join(directory, MANIFEST)
    try:
        if is_url(directory):
            fs = _fs()
            if not fs.exists(path):
                return None
            with fs.open(path, compression_type="uncompressed") as fh:
                data = fh.read()
        else:
            with open(path, "rb") as fh:
                data = fh.read()
        doc = json.loads(data.decode("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("written_by") != "beambleu" or not isinstance(doc.get("parts"), list):
        return None
    return doc


def join(directory: str, name: str) -> str:
    return posixpath.join(directory, name) if is_url(directory) else os.path.join(directory, name)


def listing(directory: str) -> List[str]:
    """Names directly in a local directory, or object names below a URL prefix (relative)."""
    if not is_url(directory):
        return sorted(os.listdir(directory))
    prefix = directory.rstrip("/") + "/"
    found = _fs().match([prefix + "**"])[0].metadata_list
    return sorted(m.path[len(prefix):] for m in found)


def _check_one(t: Target, overwrite: bool) -> None:
    path = t.path
    if is_url(path):
        fs = _fs()
        if t.kind == "file":
            if fs.exists(path) and not overwrite:
                raise UnsafeOutput(f"{path}: {t.flag} exists (use --overwrite to replace it)")
            return
        names = listing(path)
        if names:
            _check_ours(t, names, overwrite)
        return
    if t.kind == "file":
        if os.path.isdir(path):
            raise UnsafeOutput(f"{path}: {t.flag} is a directory; it must name a file")
        if os.path.lexists(path):
            if not os.path.isfile(path) or os.path.islink(path):
                raise UnsafeOutput(f"{path}: {t.flag} exists and is not a regular file; not replaced")
            if not overwrite:
                raise UnsafeOutput(f"{path}: {t.flag} exists (use --overwrite to replace it)")
        parent = os.path.dirname(os.path.abspath(path))
        if os.path.exists(parent) and not os.path.isdir(parent):
            raise UnsafeOutput(f"{path}: {t.flag}: {parent} is not a directory")
        return
    if os.path.lexists(path):
        if os.path.islink(path) or not os.path.isdir(path):
            raise UnsafeOutput(f"{path}: {t.flag} exists and is not a directory; not replaced")
        names = os.listdir(path)
        if names:
            _check_ours(t, _tree(path), overwrite)


def _tree(directory: str) -> List[str]:
    """Every file under a local directory, by its path relative to it (``/``-separated, as a
    manifest lists them and as :func:`listing` gives an object store's); a subdirectory that is
    empty or a symbolic link is listed as a name of its own (so it is never beambleu's)."""
    out = []
    for root, dirs, files in os.walk(directory):
        rel = os.path.relpath(root, directory)
        prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
        out += [prefix + f for f in files]
        for d in list(dirs):
            full = os.path.join(root, d)
            try:
                alone = os.path.islink(full) or not os.listdir(full)
            except OSError:  # unreadable: not beambleu's
                alone = True
            if alone:
                out.append(prefix + d)
                dirs.remove(d)
    return sorted(out)


def _check_ours(t: Target, names: Sequence[str], overwrite: bool) -> None:
    manifest = read_manifest(t.path)
    if manifest is None:
        raise UnsafeOutput(f"{t.path}: {t.flag} is a non-empty directory that beambleu did not write "
                           f"(no {MANIFEST}); not replaced")
    extra = sorted(set(names) - set(manifest["parts"]) - {MANIFEST})
    if extra:
        raise UnsafeOutput(f"{t.path}: {t.flag} holds files beambleu did not write ({', '.join(extra[:3])}"
                           f"{', ...' if len(extra) > 3 else ''}); not replaced")
    if not overwrite:
        raise UnsafeOutput(f"{t.path}: {t.flag} exists (use --overwrite to replace it)")


def check_outputs(targets: Sequence[Target], inputs: Iterable, overwrite: bool) -> None:
    """Refuse, before anything runs, every output beambleu must not write (see the module doc).
    ``inputs`` are every file the command reads: paths, or ``(path, label)`` pairs whose label
    names the file in the message (``"the SentencePiece model {path} (-tok flores200)"``, where
    ``{path}`` is its real path); a plain path is ``the input {path}``."""
    cwd = os.path.realpath(os.getcwd())
    real_inputs, labels = [], {}
    for item in inputs:
        path, label = item if isinstance(item, tuple) else (item, "the input {path}")
        if path and path != "-":
            real = _real(path)
            real_inputs.append(real)
            labels.setdefault(real, label.format(path=real))
    seen: List[Target] = []
    for t in targets:
        real = _real(t.path)
        if not is_url(real):
            if _inside(cwd, real):
                raise UnsafeOutput(f"{t.path}: {t.flag} is the current directory or contains it; "
                                   "name a file or a new directory")
        for inp in real_inputs:
            if _inside(inp, real) or _inside(real, inp):
                what = "is" if inp == real else ("contains" if _inside(inp, real) else "lies inside")
                raise UnsafeOutput(f"{t.path}: {t.flag} {what} {labels[inp]}")
        for other in seen:
            other_real = _real(other.path)
            if _inside(real, other_real) or _inside(other_real, real):
                raise UnsafeOutput(f"{t.path}: {t.flag} and {other.flag} {other.path} overlap")
        _check_one(t, overwrite)
        seen.append(t)


def staging_path(target: str, mark: str = STAGING_MARK) -> str:
    """A fresh hidden path beside ``target`` (same directory, so renames stay on one file system),
    naming this process: ``.NAME.beambleu-tmp-PID@START-RANDOM`` (``@START`` is the process's start time,
    :func:`_me`, so that a later process given the same pid is not taken for it)."""
    if not is_url(target):
        target = os.path.abspath(target)
    sep = "/" if is_url(target) else os.sep
    head, _, name = target.rstrip(sep).rpartition(sep)
    return f"{head}{sep}.{name}{mark}{_me()}-{uuid.uuid4().hex[:12]}"


def remove_stale_staging(target: str) -> List[str]:
    """Remove what a killed run (SIGKILL, power loss) left beside a local ``target``: staging
    paths of beambleu processes that no longer exist. Returns the removed paths."""
    if is_url(target):
        return []
    head, name = os.path.split(os.path.abspath(target))
    try:
        names = os.listdir(head)
    except OSError:
        return []
    removed = []
    for entry in names:
        for mark in (STAGING_MARK, OLD_MARK):
            prefix = f".{name}{mark}"
            if entry.startswith(prefix):
                pid, start = _parse_me(entry[len(prefix):].split("-", 1)[0])
                if pid and not _alive(pid, start):
                    remove_tree(os.path.join(head, entry))
                    removed.append(os.path.join(head, entry))
    return removed


def _stat(pid: int) -> Optional[List[bytes]]:
    """The fields of ``/proc/PID/stat`` from the third (the state) on, or None (no such file)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rpartition(b")")[2].split()
    except OSError:
        return None


def _start_time(pid: int, fields: Optional[List[bytes]] = None) -> Optional[int]:
    """When process ``pid`` started (``/proc/PID/stat``'s 22nd field, clock ticks since boot), or
    None; ``fields``: that file's :func:`_stat`, when read already."""
    fields = fields or _stat(pid)
    try:
        return int(fields[19]) if fields else None
    except (IndexError, ValueError):
        return None


_my_id: Dict[int, str] = {}


def _me() -> str:
    """This process, as staging paths, locks and journals name it: ``PID@START`` (its start time:
    pids are reused, and a pid alone would take a later process for a dead run's), or ``PID`` where
    the start time cannot be read (no ``/proc``)."""
    pid = os.getpid()
    if pid not in _my_id:  # (per pid: a forked child is another process)
        start = _start_time(pid)
        _my_id[pid] = f"{pid}@{start}" if start is not None else str(pid)
    return _my_id[pid]


def _parse_me(text: str):
    """``(pid, start)`` from what :func:`_me` wrote (``start`` None when it wrote none); ``(0, None)``
    for anything else."""
    pid, _, start = text.partition("@")
    if not pid.isdigit() or (start and not start.isdigit()):
        return 0, None
    return int(pid), (int(start) if start else None)


def _alive(pid: int, start: Optional[int] = None) -> bool:
    """Process ``pid`` runs (and, with ``start``, is the one that started then: not a later process
    given the same pid)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    fields = _stat(pid)
    if fields is None:
        return True
    # a zombie (killed, not yet reaped: its parent died too) answers signal 0 but runs no more
    if fields[:1] in ([b"Z"], [b"X"]):
        return False
    if start is not None:
        now = _start_time(pid, fields)
        return now is None or now == start
    return True


def write_manifest(directory: str, parts: Sequence[str], meta: Optional[Dict] = None) -> None:
    """Write the manifest listing every part (names relative to ``directory``), last."""
    doc = {"written_by": "beambleu", **(meta or {}), "n_parts": len(parts), "parts": sorted(parts)}
    data = (json.dumps(doc, indent=1, ensure_ascii=False) + "\n").encode("utf-8")
    path = join(directory, MANIFEST)
    if is_url(directory):
        with _fs().create(path, compression_type="uncompressed") as fh:
            fh.write(data)
    else:
        with open(path, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())


def commit_file(staged: str, target: str) -> None:
    """Move a complete staged file onto its target (which check_outputs allowed to be replaced)."""
    if is_url(target):
        fs = _fs()
        if fs.exists(target):
            fs.delete([target])
        fs.rename([staged], [target])
        return
    os.replace(staged, target)


def commit_dir(staged: str, target: str) -> None:
    """Make a complete staged directory appear at ``target`` by one rename; an earlier beambleu
    directory there is moved aside first and removed after."""
    if is_url(target):  # object stores have no directories: copy parts, manifest last
        fs = _fs()
        names = listing(staged)
        old = listing(target)
        if old:
            fs.delete([join(target, MANIFEST)])  # a reader sees no complete directory from here on
            fs.delete([join(target, n) for n in old if n != MANIFEST])
        parts = [n for n in names if n != MANIFEST]
        if parts:
            fs.rename([join(staged, n) for n in parts], [join(target, n) for n in parts])
        fs.rename([join(staged, MANIFEST)], [join(target, MANIFEST)])
        remove_tree(staged)
        return
    old = None
    if os.path.lexists(target):
        old = staging_path(target, OLD_MARK)
        os.rename(target, old)
    os.rename(staged, target)
    if old:
        shutil.rmtree(old, ignore_errors=True)


def old_path(target: str) -> Optional[str]:
    """Where the commit moves what is at a local ``target`` aside (``.NAME.beambleu-old-*``, which
    :func:`remove_stale_staging` finds should the process die), or None when nothing is there."""
    return staging_path(target, OLD_MARK) if os.path.lexists(target) else None


class OutputBusy(UnsafeOutput):
    """An output another live beambleu run is writing (its lock is there): bad usage, exit 2."""


def lock_path(target: str) -> str:
    head, name = os.path.split(os.path.abspath(target))
    return os.path.join(head, f".{name}{LOCK_MARK}")


def _lock_owner(path: str) -> Optional[str]:
    """What the lock at ``path`` holds (:func:`_me` of its process), or None (no lock there)."""
    try:
        with open(path, encoding="ascii", errors="replace") as fh:
            return fh.read().strip()
    except FileNotFoundError:
        return None


def take_locks(targets: Sequence[Target]) -> List[str]:
    """Lock every local output for this process: ``.NAME.beambleu-lock`` beside it, holding its pid and start
    time (``PID@START``), made whole and linked into place (so it appears with them, and only if absent). A lock of a
    dead process is taken over; one of a live process is :class:`OutputBusy`, naming the lock and
    that pid (the locks taken so far are released). Returns the locks, for :func:`release_locks`."""
    taken: List[str] = []
    try:
        for t in targets:
            lock = None if is_url(t.path) else _take_lock(t)
            if lock:
                taken.append(lock)
    except BaseException:
        release_locks(taken)
        raise
    return taken


#: folders :func:`take_locks` made for its locks (the topmost of each), removed with them if still empty
_made_dirs: Dict[str, str] = {}


def _take_lock(t: Target) -> Optional[str]:
    path = lock_path(t.path)
    head = top = os.path.dirname(path)
    while not os.path.lexists(os.path.dirname(top)) and os.path.dirname(top) != top:
        top = os.path.dirname(top)
    tmp = staging_path(t.path)  # a dead process's is removed by remove_stale_staging
    try:
        if not os.path.lexists(head):
            os.makedirs(head)
            _made_dirs[path] = top
        with open(tmp, "x", encoding="ascii") as fh:
            fh.write(f"{_me()}\n")
    except OSError:  # no folder to lock in (its parent is a file, ...), a full disk: the run says why
        remove_tree(tmp)
        return None
    try:
        for _ in range(10):
            try:
                os.link(tmp, path)
                return path
            except FileExistsError:
                pass
            except OSError:  # (a full disk)
                return None
            owner = _lock_owner(path)
            if owner is None:
                continue  # released meanwhile
            pid, start = _parse_me(owner)
            if pid and _alive(pid, start) and owner != _me():
                raise OutputBusy(f"{t.path}: {t.flag} is being written by another beambleu run (pid {pid}; its lock "
                                 f"is {path}); run again when it has ended, or remove the lock if that process "
                                 "is not beambleu")
            stale = f"{path}-stale-{os.getpid()}"
            try:
                os.rename(path, stale)  # one taker wins; the others find the winner's lock
            except FileNotFoundError:
                continue
            if _lock_owner(stale) != owner:  # another taker's fresh lock: put it back, and look again
                try:
                    os.link(stale, path)
                except FileExistsError:
                    pass
            os.remove(stale)
        raise OutputBusy(f"{t.path}: {t.flag}: could not take its lock {path}")
    finally:
        os.remove(tmp)


def release_locks(locks: Sequence[str]) -> None:
    """Remove this process's locks (best effort, never raises)."""
    for path in locks:
        try:
            if _lock_owner(path) == _me():
                os.remove(path)
        except OSError:
            pass
        made = _made_dirs.pop(path, None)
        if made:  # the folders made for the lock, if the run left nothing in them
            head = os.path.dirname(path)
            try:
                while True:
                    os.rmdir(head)
                    if head == made:
                        break
                    head = os.path.dirname(head)
            except OSError:
                pass


def journal_path(target: str) -> str:
    """The commit journal beside a local ``target``: ``.NAME.beambleu-commit``."""
    head, name = os.path.split(os.path.abspath(target))
    return os.path.join(head, f".{name}{JOURNAL_MARK}")


def _write_synced(path: str, doc: Dict, exclusive: bool) -> None:
    with open(path, "x" if exclusive else "w", encoding="utf-8") as fh:
        json.dump(doc, fh)
        fh.flush()
        os.fsync(fh.fileno())


def write_journals(entries: Sequence[Dict]) -> List[str]:
    """Before a commit's renames: the journal, one copy beside each local target, each listing every
    rename of the set (``staged``, ``target``, ``old``: where an earlier output at the target is
    moved aside, or None) and the writing process (``pid``, and ``process``: ``PID@START``), in
    state ``renaming``. Until the copies are gone the set is not committed: :func:`recover_commit`
    undoes it (any copy ``renaming``) or finishes it (a copy ``committed``: :func:`mark_committed`).
    Returns the journals' paths."""
    paths = [journal_path(e["target"]) for e in entries]
    doc = {"written_by": "beambleu", "pid": os.getpid(), "process": _me(), "state": "renaming",
           "entries": list(entries), "journals": paths}
    for path in paths:
        _write_synced(path, doc, exclusive=True)
    return paths


def mark_committed(journals: Sequence[str]) -> None:
    """Every rename of the set is done: each journal copy says so (replaced whole, one at a time),
    so that a death from here on is finished, not undone: the earlier outputs may be removed."""
    doc = _read_journal(journals[0]) if journals else None
    for path in journals:
        doc = _read_journal(path) or doc
        tmp = path + "-new"
        _write_synced(tmp, {**doc, "state": "committed"}, exclusive=False)
        os.replace(tmp, path)


def remove_journals(journals: Sequence[str]) -> None:
    for path in journals:
        for p in (path + "-new", path):
            try:
                os.remove(p)
            except FileNotFoundError:
                pass


def _read_journal(path: str) -> Optional[Dict]:
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except (OSError, ValueError):
        return None  # torn while written, before any rename: it holds nothing to undo
    ok = isinstance(doc, dict) and doc.get("written_by") == "beambleu" and isinstance(doc.get("entries"), list)
    return doc if ok else None


def roll_back(entries: Sequence[Dict]) -> None:
    """Undo a commit's renames, last first (idempotent, whatever point it had reached): an output
    that reached its target goes back to its staging path, and the earlier output moved aside
    (``old``) back to its target. Best effort, never raises."""
    for e in reversed(list(entries)):
        staged, target, old = e["staged"], e["target"], e.get("old")
        try:
            if not os.path.lexists(staged) and os.path.lexists(target):  # the new output reached it
                os.rename(target, staged)
            if old and os.path.lexists(old) and not os.path.lexists(target):
                os.rename(old, target)
        except OSError:
            pass


def recover_commit(target: str) -> Optional[str]:
    """Finish or undo the commit a dead process left beside a local ``target`` (its journal): with
    a copy of the journal saying ``committed`` every output is in place, and the earlier outputs
    moved aside are removed; else the renames are undone (every earlier output back, the new ones
    back at their staging paths, removed). The journal copies go last. Returns what was done
    (``"finished"``, ``"undone"``) or None (no journal, or its process is alive)."""
    if is_url(target):
        return None
    path = journal_path(target)
    if not os.path.lexists(path):
        return None
    docs = [d for d in (_read_journal(path),) if d]
    pid, start = _parse_me(str(docs[0].get("process", docs[0].get("pid", "")))) if docs else (0, None)
    if pid and (pid, start) != _parse_me(_me()) and _alive(pid, start):
        return None  # being committed right now by that process
    journals = list(dict.fromkeys([path, *(j for d in docs for j in d.get("journals", []))]))
    docs = [d for d in (_read_journal(j) for j in journals) if d]
    entries = next((d["entries"] for d in docs), [])
    if any(d.get("state") == "committed" for d in docs):
        for e in entries:
            if e.get("old"):
                remove_tree(e["old"])
        done = "finished"
    else:
        roll_back(entries)
        for e in entries:
            remove_tree(e["staged"])
        done = "undone"
    remove_journals(journals)
    return done


def remove_tree(path: str) -> None:
    """Remove a staging file or directory (best effort, never raises)."""
    try:
        if is_url(path):
            fs = _fs()
            names = listing(path)
            if names:
                fs.delete([join(path, n) for n in names])
            if fs.exists(path):
                fs.delete([path])
        elif os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        elif os.path.lexists(path):
            os.remove(path)
    except Exception:  # noqa: BLE001 - cleanup must not hide the error being reported
        pass

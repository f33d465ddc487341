"""Which files an ``--input`` names, and the columns their folders give them.

An input is a file, a glob or a directory, on a local disk or in an object store (through Beam's
``FileSystems``: ``gs://``, ``s3://``). A directory stands for every file under it, recursively;
a glob's matches that are directories are read the same way. What is not data is skipped, as
Spark, Hive and pyarrow skip it: a file or folder whose name starts with ``.`` (hidden files,
``.crc`` checksums, beambleu's own staging paths) or ``_`` (``_SUCCESS``, ``_temporary/``,
``_committed_*``, beambleu's ``_beambleu_manifest.json``), unless the glob spells that name's first
character itself (``'data/_part*'``). A file named explicitly is never skipped.

Hive-style partitions: each folder ``col=value`` between the directory given (or a glob's root,
the folder above its first wildcard) and a file makes ``col`` a column of every row of that file,
a string (the value percent-decoded, as Hive and Spark write it; ``__HIVE_DEFAULT_PARTITION__`` is
null). Folders of another form are not columns.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple
from urllib.parse import unquote

from .input_errors import PipelineInputError

__all__ = ["HIVE_NULL", "InputFile", "absolute", "directories", "expand", "has_wildcard", "partitions_of", "skipped"]

#: the folder value Hive and Spark write for a null partition value
HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"

_WILDCARD = re.compile(r"[*?\[]")
_SKIPPED = "hidden, _SUCCESS, _* and beambleu manifest files are skipped"


@dataclass(frozen=True)
class InputFile:
    """One file of the input: its path, size in bytes, and the ``(column, value)`` pairs of the
    ``col=value`` folders above it (value None: Hive's null)."""

    path: str
    size: int = 0
    partitions: Tuple[Tuple[str, Optional[str]], ...] = ()


def absolute(path: str) -> str:
    """A local path made absolute (workers of a cluster do not share the driver's working
    directory); URLs such as gs://... or s3://... unchanged."""
    if "://" in path:
        return path
    return os.path.abspath(os.path.expanduser(path))


def has_wildcard(path: str) -> bool:
    return _WILDCARD.search(path) is not None


def skipped(parts: Sequence[str], pattern_parts: Sequence[str] = ()) -> bool:
    """Whether a file whose path below the input's root is ``parts`` (folders, then its name) is
    left out: a part that is empty (an object store's folder marker) or starts with ``.`` or
    ``_``, unless the glob's part at the same depth (``pattern_parts``, before any ``**``) starts
    with that same character."""
    literal = True
    for i, part in enumerate(parts):
        pattern = pattern_parts[i] if i < len(pattern_parts) else None
        literal = literal and pattern is not None and "**" not in pattern
        if not part:
            return True
        if part[0] in "._" and not (literal and pattern[:1] == part[0]):
            return True
    return False


def partitions_of(path: str, folders: Sequence[str]) -> Tuple[Tuple[str, Optional[str]], ...]:
    """The ``(column, value)`` pairs of the ``col=value`` folders among ``folders`` (in order,
    percent-decoded; Hive's default partition is None). A column twice, or a name or value that
    is not UTF-8, is bad input."""
    out: Dict[str, Optional[str]] = {}
    for folder in folders:
        key, eq, value = folder.partition("=")
        if not eq or not key:
            continue
        try:
            key, value = unquote(key, errors="strict"), unquote(value, errors="strict")
            key.encode("utf-8"), value.encode("utf-8")  # a local name that was not UTF-8 holds surrogate escapes
        except UnicodeError:
            raise PipelineInputError(f"{path}: partition folder {folder!r}: not UTF-8") from None
        if key in out:
            raise PipelineInputError(f"{path}: partition column {key!r} appears twice in its folders")
        out[key] = None if value == HIVE_NULL else value
    return tuple(out.items())


def _list(pattern: str) -> List[Tuple[str, int]]:
    """(path, size) of the files Beam's FileSystems match for ``pattern``, sorted."""
    from apache_beam.io.filesystems import FileSystems

    try:
        result = FileSystems.match([pattern])[0]
    except Exception as exc:  # BeamIOError and friends
        raise PipelineInputError(f"{pattern}: cannot list files: {exc}") from None
    return sorted((m.path, m.size_in_bytes) for m in result.metadata_list)


def _is_directory(path: str) -> bool:
    if "://" in path:
        return path.endswith("/")
    return os.path.isdir(path)


def _below(root: str, listed: List[Tuple[str, int]], pattern_parts: Sequence[str] = ()):
    """The files of ``listed`` under ``root`` that are not skipped, with their partitions; and how
    many were skipped."""
    prefix = root.rstrip("/") + "/"
    files, n_skipped = [], 0
    for path, size in listed:
        if not path.startswith(prefix):
            continue
        parts = path[len(prefix):].split("/")
        if skipped(parts, pattern_parts):
            n_skipped += 1
            continue
        files.append(InputFile(path, size, partitions_of(path, parts[:-1])))
    return files, n_skipped


def _directory(root: str, missing_ok: bool = False) -> List[InputFile]:
    """The data files under ``root``; none is bad input (``missing_ok``: unless nothing at all is there)."""
    listed = _list(root.rstrip("/") + "/**")
    files, n_skipped = _below(root, listed)
    if not files and (n_skipped or not missing_ok):
        shown = root.rstrip("/") or root
        if n_skipped:
            raise PipelineInputError(f"{shown}: no data files in this directory, only {n_skipped} skipped "
                                     f"({_SKIPPED})")
        raise PipelineInputError(f"{shown}: no files match")
    return files


def _glob(pattern: str) -> List[InputFile]:
    root = _WILDCARD.split(pattern, 1)[0].rpartition("/")[0]
    pattern_parts = pattern[len(root) + 1:].split("/")
    listed = dict(_list(pattern))
    listed.update(_list(pattern.rstrip("/") + "/**"))  # the files in the folders it matches
    files, n_skipped = _below(root, sorted(listed.items()), pattern_parts)
    if not files:
        more = f"; {n_skipped} skipped ({_SKIPPED})" if n_skipped else ""
        raise PipelineInputError(f"{pattern}: no files match{more}")
    return files


def _expand_one(pattern: str) -> List[InputFile]:
    if has_wildcard(pattern):
        return _glob(pattern)
    if _is_directory(pattern):
        return _directory(pattern)
    found = [(p, s) for p, s in _list(pattern) if p == pattern]
    if found:
        return [InputFile(pattern, found[0][1])]
    if "://" in pattern:  # an object store has no folders, only names: a prefix is one
        files = _directory(pattern + "/", missing_ok=True)
        if files:
            return files
    raise PipelineInputError(f"{pattern}: no files match")


def expand(inputs: Sequence[str]) -> List[InputFile]:
    """Every file the ``--input`` values name (each a file, a glob or a directory), in the order
    of the inputs, sorted within each, each once."""
    if not inputs:
        raise PipelineInputError("no --input given")
    files, seen = [], set()
    for given in inputs:
        for f in _expand_one(absolute(given)):
            if f.path not in seen:
                seen.add(f.path)
                files.append(f)
    return files


def directories(inputs: Sequence[str]) -> List[str]:
    """The ``--input`` values that name a directory (a local one, or an object store's path
    ending with ``/``), absolute: whatever is written under them later is input to a run."""
    out = []
    for given in inputs:
        path = absolute(given)
        if not has_wildcard(path) and _is_directory(path):
            out.append(path.rstrip("/") or path)
    return out

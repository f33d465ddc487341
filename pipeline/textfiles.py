"""Reading sacrebleu-style text files: one segment per line.

Exactly as sacrebleu's command line reads them: UTF-8, lines split on ``\\n`` only (a ``\\r``
stays in the line until ``rstrip()`` removes it), each line ``rstrip()``-ed, a final newline
not starting an extra segment, ``.gz`` decompressed transparently. Unlike sacrebleu, bad
UTF-8 is reported with the file, line and column instead of a traceback.
"""

from __future__ import annotations

import gzip
import io
import itertools
import sys
from typing import Iterator, List, Sequence, Tuple


class InputError(Exception):
    """Bad input, reported as one line: ``file: line N: what``."""

    def __init__(self, path, message, line=None, column=None):
        self.path, self.line, self.column = str(path), line, column
        where = self.path
        if line is not None:
            where += f": line {line}"
        if column is not None:
            where += f", column {column}"
        super().__init__(f"{where}: {message}")


_STDIN = None


def _open(path: str):
    global _STDIN
    if path == "-":  # standard input, read once and kept: it is read twice (count, then score)
        if _STDIN is None:
            _STDIN = sys.stdin.buffer.read()
        return io.BytesIO(_STDIN)
    try:
        if str(path).endswith(".gz"):
            fh = gzip.open(path, "rb")
            fh.peek(1)  # fail here, not mid-stream, if it is not gzip
            return fh
        return open(path, "rb")
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror or exc}") from None


def read_segments(path: str) -> Iterator[str]:
    """Yield the segments of a file, as sacrebleu reads them."""
    fh = _open(path)
    with fh:
        lineno = 0
        try:
            for lineno, raw in enumerate(fh, 1):
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    column = len(raw[: exc.start].decode("utf-8", "replace")) + 1
                    raise InputError(path, f"invalid UTF-8 (byte 0x{raw[exc.start]:02x})", lineno, column) from None
                yield line.rstrip()
        except (OSError, EOFError) as exc:
            raise InputError(path, f"cannot read after line {lineno}: {exc}") from None


def count_lines(path: str) -> int:
    """Number of segments (``\\n``-terminated lines, plus an unterminated last one)."""
    fh = _open(path)
    n = 0
    last = b"\n"
    try:
        with fh:
            while True:
                block = fh.read(1 << 20)
                if not block:
                    break
                n += block.count(b"\n")
                last = block[-1:]
    except (OSError, EOFError) as exc:
        raise InputError(path, f"cannot read: {exc}") from None
    return n + (last != b"\n")


def check_same_length(hyp_path: str, ref_paths: Sequence[str]) -> int:
    """Every file has the same number of segments (checked before anything is scored)."""
    n = count_lines(hyp_path)
    for ref in ref_paths:
        m = count_lines(ref)
        if m != n:
            raise InputError(ref, f"has {m} lines but the system output {hyp_path} has {n}")
    if n == 0:
        raise InputError(hyp_path, "is empty: no segments to score")
    return n


def iter_pairs(hyp_path: str, ref_paths: Sequence[str]) -> Iterator[Tuple[str, List[str]]]:
    """(candidate, [references]) per line, streaming all files in lockstep."""
    streams = [read_segments(p) for p in [hyp_path, *ref_paths]]
    for row in itertools.zip_longest(*streams):
        if any(x is None for x in row):  # a file changed since check_same_length
            raise InputError(hyp_path, "files have different numbers of lines")
        yield row[0], list(row[1:])

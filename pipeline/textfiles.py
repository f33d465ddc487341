"""Reading sacrebleu-style text files: one segment per line.

Exactly as sacrebleu's command line reads them: UTF-8 (a UTF-8 byte-order mark stays in the
first segment, as ``open(..., encoding="utf-8")`` keeps it), lines split on ``\\n`` only (a
``\\r`` stays in the line until ``rstrip()`` removes it), each line ``rstrip()``-ed, a final
newline not starting an extra segment, ``.gz`` decompressed transparently.

Every file is opened once and all are read in lockstep, a line at a time, so that FIFOs,
process substitution and ``-`` (standard input) work, and memory is bounded by the block of
lines handed on (:func:`iter_chunks`): lines longer than ``--max-line-bytes`` are refused, and
blocks are cut by lines and by bytes. Files of different lengths are found at the end of that
one pass (the longer files are counted to their end, without keeping anything).

Unlike sacrebleu, bad input is reported with the file, line and column instead of a
traceback: invalid UTF-8, a UTF-16 or UTF-32 byte-order mark, corrupt or truncated gzip.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import sys
import zlib
from typing import Iterator, List, Sequence, Tuple

from .argtypes import int_at_least

#: longest line read, in bytes without its newline (``--max-line-bytes``); a line is held whole
MAX_LINE_BYTES = 16 << 20
#: a block handed to the kernel holds at most this many lines, and about this many bytes (all files)
CHUNK_ROWS = 20_000
CHUNK_BYTES = 64 << 20

_BOMS = ((b"\xff\xfe\x00\x00", "UTF-32 LE"), (b"\x00\x00\xfe\xff", "UTF-32 BE"),
         (b"\xff\xfe", "UTF-16 LE"), (b"\xfe\xff", "UTF-16 BE"))
_BLOCK = 1 << 20


class InputError(Exception):
    """Bad input, reported as one line: ``file: line N, column M: what``."""

    def __init__(self, path, message, line=None, column=None):
        self.path, self.line, self.column = str(path), line, column
        where = self.path
        if line is not None:
            where += f": line {line}"
        if column is not None:
            where += f", column {column}"
        super().__init__(f"{where}: {message}")


def add_max_line_bytes(p: argparse.ArgumentParser) -> None:
    p.add_argument("--max-line-bytes", type=int_at_least(1), default=MAX_LINE_BYTES, metavar="N",
                   help="refuse lines longer than N bytes (default: %(default)s; a line is held in memory "
                        "whole; not a sacrebleu flag)")


class _Segments:
    """One open input file, read a line at a time."""

    def __init__(self, path: str, max_line_bytes: int, read: List[int]):
        self.path, self.max_line_bytes, self.n = path, max_line_bytes, 0
        self._read = read  # bytes read, shared by the files read in lockstep
        self._fh = self._open()

    def _open(self):
        if self.path == "-":
            return sys.stdin.buffer
        try:
            return gzip.open(self.path, "rb") if self.path.endswith(".gz") else open(self.path, "rb")
        except OSError as exc:
            raise InputError(self.path, f"cannot read: {exc.strerror or exc}") from None

    def _read_error(self, exc: BaseException) -> InputError:
        """An error while reading line ``n + 1`` (gzip's are found only there, not when opening)."""
        detail = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        if isinstance(exc, EOFError):
            what = f"truncated gzip data ({detail})"
        elif isinstance(exc, (zlib.error, gzip.BadGzipFile)):
            what = f"corrupt gzip data ({detail})"
        else:
            what = f"cannot read: {detail}"
        return InputError(self.path, what, self.n + 1)

    def __iter__(self) -> Iterator[str]:
        """The segments, ``rstrip()``-ed; ``self.n`` counts the lines read."""
        limit = self.max_line_bytes + 1  # a line of max_line_bytes plus its newline
        read = self._read
        try:
            for raw in iter(functools.partial(self._fh.readline, limit), b""):
                self.n += 1
                read[0] += len(raw)
                if len(raw) == limit and raw[-1:] != b"\n":
                    raise InputError(self.path, f"longer than {self.max_line_bytes} bytes; raise --max-line-bytes "
                                                "to read it", self.n)
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise self._decode_error(raw, exc) from None
                yield line.rstrip()
        except (OSError, EOFError, zlib.error) as exc:  # raised by readline (the consumer's never reach here)
            raise self._read_error(exc) from None

    def _decode_error(self, raw: bytes, exc: UnicodeDecodeError) -> InputError:
        if self.n == 1:
            for bom, name in _BOMS:
                if raw.startswith(bom):
                    return InputError(self.path, f"starts with a {name} byte-order mark; beambleu reads UTF-8",
                                      1, 1)
        column = len(raw[: exc.start].decode("utf-8", "replace")) + 1
        return InputError(self.path, f"invalid UTF-8 (byte 0x{raw[exc.start]:02x})", self.n, column)

    def count_rest(self) -> int:
        """Lines read so far plus the lines left, which are counted, not decoded."""
        n, last = self.n, b"\n"
        try:
            while True:
                block = self._fh.read(_BLOCK)
                if not block:
                    break
                n += block.count(b"\n")
                last = block[-1:]
        except (OSError, EOFError, zlib.error) as exc:
            raise self._read_error(exc) from None
        return n + (last != b"\n")

    def close(self) -> None:
        if self._fh is not sys.stdin.buffer:
            self._fh.close()


def iter_chunks(hyp_paths: Sequence[str], ref_paths: Sequence[str], max_line_bytes: int = MAX_LINE_BYTES,
                max_rows: int = CHUNK_ROWS, max_bytes: int = CHUNK_BYTES
                ) -> Iterator[Tuple[List[List[str]], List[List[str]]]]:
    """``([candidates of each system], [references of each row])`` blocks of consecutive lines,
    every file read once, all in lockstep. A block has at most ``max_rows`` lines and, but for
    its last line, less than ``max_bytes`` bytes of input.

    Raises :class:`InputError` at the end if the files have different numbers of lines or none:
    the caller must show nothing before this iterator is exhausted."""
    files: List[_Segments] = []
    read = [0]
    k = len(hyp_paths)
    try:
        for path in [*hyp_paths, *ref_paths]:
            files.append(_Segments(path, max_line_bytes, read))
        rows = zip(*files)
        exhausted = False
        while not exhausted:
            block: list = []
            limit = read[0] + max_bytes
            for row in rows:
                block.append(row)
                if len(block) == max_rows or read[0] >= limit:
                    break
            else:
                exhausted = True
            if block:
                columns = list(zip(*block))
                yield [list(c) for c in columns[:k]], list(map(list, zip(*columns[k:])))
        counts = [f.count_rest() for f in files]
    finally:
        for f in files:
            f.close()
    for hyp, n in zip(hyp_paths, counts[:k]):
        for ref, m in zip(ref_paths, counts[k:]):
            if m != n:
                raise InputError(ref, f"has {m} lines but the system output {hyp} has {n}")
    if counts[0] == 0:
        raise InputError(hyp_paths[0], "is empty: no segments to score")

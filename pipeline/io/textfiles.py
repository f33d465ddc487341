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
import codecs
import functools
import io
import sys
import zlib

from bleu_core.errors import InputError as CoreInputError
from bleu_core.records import record

from ..errors import int_at_least

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Iterator, List, Sequence, Tuple

__all__ = ["CHUNK_BYTES", "CHUNK_ROWS", "MAX_LINE_BYTES", "InputError", "Source", "add_max_line_bytes",
           "check_encoding", "iter_chunks"]

#: longest line read, in bytes without its newline (``--max-line-bytes``); a line is held whole
MAX_LINE_BYTES = 16 << 20
#: a block handed to the kernel holds at most this many lines, and about this many bytes (all files)
CHUNK_ROWS = 20_000
CHUNK_BYTES = 64 << 20

_BOMS = ((b"\xff\xfe\x00\x00", "UTF-32 LE"), (b"\x00\x00\xfe\xff", "UTF-32 BE"),
         (b"\xff\xfe", "UTF-16 LE"), (b"\xfe\xff", "UTF-16 BE"))
_BLOCK = 1 << 20
#: bytes read at a time by UTF-8 inputs' line reader (``_Segments._utf8_file_lines``)
_LINE_BLOCK = 1 << 16


class InputError(CoreInputError):
    """Bad input, reported as one line: ``file: line N, column M: what``.

    A :class:`bleu_core.errors.InputError` whose ``file`` is the path, ``row`` the 0-based line
    index (``line`` - 1), ``column`` the column number, ``reason`` the message.
    """

    def __init__(self, path, message, line=None, column=None):
        super().__init__(message, file=str(path), row=None if line is None else line - 1, column=column)

    @property
    def path(self) -> str:
        return self.file

    @property
    def line(self):
        """The 1-based line number (or None)."""
        return None if self.row is None else self.row + 1

    def describe(self) -> str:
        where = self.path
        if self.line is not None:
            where += f": line {self.line}"
        if self.column is not None:
            where += f", column {self.column}"
        return f"{where}: {self.reason}"


def add_max_line_bytes(p: argparse.ArgumentParser) -> None:
    p.add_argument("--max-line-bytes", type=int_at_least(1), default=MAX_LINE_BYTES, metavar="N",
                   help="refuse lines longer than N bytes (default: %(default)s; a line is held in memory "
                        "whole; not a sacrebleu flag)")


def _is_gzip(obj, name: str) -> bool:
    """``isinstance(obj, gzip.<name>)``, without importing gzip when no file was gzipped."""
    gz = sys.modules.get("gzip")
    return gz is not None and isinstance(obj, getattr(gz, name))


@record(frozen=True)
class Source:
    """Where one column (or several) of segments comes from.

    ``paths`` are read one after the other (sacrebleu concatenates the test sets of ``-t A,B``);
    ``fields`` > 1 splits each line into that many tab-separated fields (sacrebleu's ``-nr N``:
    ``rstrip()`` then ``split("\\t", N - 1)``, a line with fewer fields is an error); ``fields``
    = 0 takes as many fields as the first line has (systems on standard input, one per
    tab-separated column, each field ``rstrip()``-ed as sacrebleu does but for the first line's);
    ``universal_newlines`` ends lines at ``\\r`` too, as sacrebleu reads standard input; a path
    ``-`` is standard input unless ``dash_is_stdin`` is false (then it is the file ``./-``, as
    sacrebleu opens a reference or ``-i`` file named ``-``)."""

    paths: Tuple[str, ...]
    fields: int = 1
    encoding: str = "utf-8"
    universal_newlines: bool = False
    dash_is_stdin: bool = True

    @classmethod
    def of(cls, source) -> "Source":
        return source if isinstance(source, Source) else cls((source,))

    @property
    def name(self) -> str:
        return self.paths[0]


def check_encoding(name: str) -> str:
    """``name`` if Python has that codec (``-e``), else ValueError."""
    try:
        codecs.lookup(name)
    except LookupError:
        raise ValueError(f"unknown encoding {name!r}") from None
    return name


def _byte_lines(encoding: str) -> bool:
    """Whether lines of this encoding can be found by splitting bytes on b"\\n" (UTF-8, Latin-1,
    ...; not UTF-16/32)."""
    try:
        return "a\n".encode(encoding) == b"a\n" and codecs.lookup(encoding).name not in ("utf-7",)
    except (LookupError, UnicodeError):
        return False


def _decode_failure(raw: bytes) -> UnicodeDecodeError:
    """The error of decoding ``raw`` as UTF-8 (bytes known not to decode)."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc
    raise AssertionError("decodes")  # (bytes that do not decode do not decode with a newline after them)


class _Segments:
    """One input (a :class:`Source`), read a line at a time."""

    def __init__(self, source, max_line_bytes: int, read: List[int]):
        self.source = Source.of(source)
        self.max_line_bytes, self.n, self.width = max_line_bytes, 0, self.source.fields
        self._read = read  # bytes read, shared by the files read in lockstep
        self._binary = _byte_lines(self.source.encoding) and not self.source.universal_newlines
        # plain UTF-8 files and standard input of one field a line (not gzip: its errors name the line a read
        # fails at; not tab-separated fields, whose errors name the line being split)
        self._utf8 = self._binary and codecs.lookup(self.source.encoding).name == "utf-8"
        self._index, self._textio, self._done = 0, None, 0  # _done: lines of the paths read before
        self._pending = b""  # bytes the block reader (_utf8_file_lines) read after the last newline it found
        self.path = self.source.paths[0]
        self._fh = self._open()

    def _open(self):
        if self.path == "-" and self.source.dash_is_stdin:
            return sys.stdin.buffer
        try:
            if self.path.endswith(".gz"):
                import gzip  # (here: reading plain text need not import it)

                return gzip.open(self.path, "rb")
            return open(self.path, "rb")
        except OSError as exc:
            raise InputError(self.path, f"cannot read: {exc.strerror or exc}") from None

    def _read_error(self, exc: BaseException) -> InputError:
        """An error while reading line ``n + 1`` (gzip's are found only there, not when opening)."""
        detail = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        if isinstance(exc, EOFError):
            what = f"truncated gzip data ({detail})"
        elif isinstance(exc, zlib.error) or _is_gzip(exc, "BadGzipFile"):
            what = f"corrupt gzip data ({detail})"
        else:
            what = f"cannot read: {detail}"
        return InputError(self.path, what, self.n + 1)

    def _text(self):
        """The current file as text (encodings that are not read as bytes, and universal newlines),
        made once per file so that counting the rest goes on where reading stopped."""
        if self._textio is None:
            self._textio = io.TextIOWrapper(self._fh, encoding=self.source.encoding,
                                            newline=None if self.source.universal_newlines else "\n")
        return self._textio

    def _file_lines(self) -> Iterator[str]:
        """The decoded lines of the current file, newline included; ``self.n`` counts them."""
        limit = self.max_line_bytes + 1  # a line of max_line_bytes plus its newline
        read = self._read
        try:
            if self._binary:
                for raw in iter(functools.partial(self._fh.readline, limit), b""):
                    self.n += 1
                    read[0] += len(raw)
                    if len(raw) == limit and raw[-1:] != b"\n":
                        raise InputError(self.path, f"longer than {self.max_line_bytes} bytes; raise "
                                                    "--max-line-bytes to read it", self.n)
                    try:
                        yield raw.decode(self.source.encoding)
                    except UnicodeDecodeError as exc:
                        raise self._decode_error(raw, exc) from None
                return
            text = self._text()
            while True:
                try:
                    line = text.readline(limit)
                except UnicodeError as exc:  # UTF-16/32 without a byte-order mark raise the base class
                    reason = getattr(exc, "reason", None) or str(exc)
                    raise InputError(self.path, f"cannot be decoded as {self.source.encoding} ({reason})",
                                     self.n + 1) from None
                if not line:
                    return
                self.n += 1
                read[0] += len(line)
                if len(line) == limit and not line.endswith("\n"):
                    raise InputError(self.path, f"longer than {self.max_line_bytes} characters; raise "
                                                "--max-line-bytes to read it", self.n)
                yield line
        except (OSError, EOFError, zlib.error) as exc:  # raised by readline (the consumer's never reach here)
            raise self._read_error(exc) from None

    def _next_file(self) -> bool:
        """Go on to the source's next path (``-t A,B``: the test sets one after the other)."""
        if self._index + 1 == len(self.source.paths):
            return False
        self._done += self.n
        self.close()
        self._index += 1
        self.path, self.n = self.source.paths[self._index], 0
        self._fh = self._open()
        return True

    def _utf8_file_lines(self) -> Iterator[str]:
        """The current file's lines, ``rstrip()``-ed, for UTF-8 read as bytes: what
        :meth:`_file_lines` gives, read and decoded a block of lines at a time (a UTF-8 newline
        byte is never inside a character, so a block of whole lines decodes as its lines do). A
        block that does not decode is decoded line by line, which names the first bad one; a line
        longer than ``max_line_bytes`` is an error once the lines before it are given, and memory
        holds at most a block and one line."""
        limit = self.max_line_bytes + 1
        fh = self._fh
        read_some = getattr(fh, "read1", fh.read)  # (a pipe: what has arrived, not a whole block)
        # the bytes read past the last newline, as the pieces read (joined once a newline comes, so a
        # line of many blocks is copied once, not once a block)
        tail: List[bytes] = []
        tail_len = 0
        try:
            while True:
                piece = read_some(_LINE_BLOCK)
                if not piece:
                    break
                end = piece.rfind(b"\n") + 1
                if end:
                    block = b"".join([*tail, piece[:end - 1]]) if tail else piece[:end - 1]
                    rest = self._pending = piece[end:]  # read, not yet a line: count_rest counts it
                    tail, tail_len = ([rest] if rest else []), len(rest)
                    yield from self._utf8_block(block, limit)
                else:
                    self._pending = piece
                    tail.append(piece)
                    tail_len += len(piece)
                if tail_len >= limit:
                    self.n += 1
                    raise InputError(self.path, f"longer than {self.max_line_bytes} bytes; raise --max-line-bytes "
                                                "to read it", self.n)
        except (OSError, EOFError, zlib.error) as exc:  # raised by the reads (the consumer's never reach here)
            raise self._read_error(exc) from None
        self._pending = b""
        if tail:  # the last line, without its newline
            yield from self._utf8_block(b"".join(tail), limit, newline=False)

    def _utf8_block(self, block: bytes, limit: int, newline: bool = True):
        """The lines of ``block`` (whole lines, the last newline left off), counted and ``rstrip()``-ed."""
        self._read[0] += len(block) + newline
        try:
            lines = block.decode("utf-8").split("\n")
        except UnicodeDecodeError:
            lines = None
        if lines is None or (len(block) >= limit and any(len(raw) >= limit for raw in block.split(b"\n"))):
            return self._utf8_lines_one_by_one(block.split(b"\n"), limit, newline)
        self.n += len(lines)
        return [line.rstrip() for line in lines]

    def _utf8_lines_one_by_one(self, raws: List[bytes], limit: int, newline: bool) -> Iterator[str]:
        """:meth:`_utf8_block` of a block holding a line that is too long or does not decode: its
        lines one at a time, then the error naming that line when it is asked for (as the line
        reader gives them: files read in lockstep report the first bad row of any of them). A line
        that does not decode is decoded again with its newline (every line of the block has one but
        the last when ``newline`` is false), as the line reader decodes it: a character cut off by
        the newline is then an "invalid continuation byte", not an "unexpected end of data"."""
        first = self.n + 1
        self.n += len(raws)  # the block's lines are counted when it is taken (count_rest reads on after it)
        for i, raw in enumerate(raws):
            if len(raw) >= limit:
                self.n = first + i
                raise InputError(self.path, f"longer than {self.max_line_bytes} bytes; raise --max-line-bytes "
                                            "to read it", self.n)
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                self.n = first + i
                if newline or i + 1 < len(raws):
                    raw += b"\n"
                    exc = _decode_failure(raw)
                raise self._decode_error(raw, exc) from None
            yield line.rstrip()

    def _lines(self) -> Iterator[str]:
        """Every path's lines in turn, ``rstrip()``-ed."""
        while True:
            if self._utf8 and self.source.fields == 1 and not _is_gzip(self._fh, "GzipFile"):
                yield from self._utf8_file_lines()
            else:
                for line in self._file_lines():
                    yield line.rstrip()
            if not self._next_file():
                return

    def __iter__(self) -> Iterator[Tuple[str, ...]]:
        """Each line's fields (one unless the source splits lines on tabs)."""
        fields = self.source.fields
        if fields == 1:
            for line in self._lines():
                yield (line,)
            return
        lines = self._lines()
        if fields == 0:
            first = next(lines, None)
            if first is None:
                return
            row = tuple(first.split("\t"))
            self.width = len(row)
            yield row
            for line in lines:
                row = tuple(f.rstrip() for f in line.split("\t"))
                if len(row) != self.width:
                    raise InputError(self.path, f"has {len(row)} tab-separated fields where the first line has "
                                                f"{self.width} (one per system)", self.n)
                yield row
            return
        for line in lines:
            row = tuple(line.split("\t", fields - 1))
            if len(row) != fields:
                raise InputError(self.path, f"has {len(row)} tab-separated references, expected {fields} (-nr)",
                                 self.n)
            yield row

    def _decode_error(self, raw: bytes, exc: UnicodeDecodeError) -> InputError:
        if self.source.encoding.replace("-", "").replace("_", "").lower() != "utf8":
            return InputError(self.path, f"cannot be decoded as {self.source.encoding} ({exc.reason})", self.n,
                              len(raw[: exc.start].decode(self.source.encoding, "replace")) + 1)
        if self.n == 1:
            for bom, name in _BOMS:
                if raw.startswith(bom):
                    return InputError(self.path, f"starts with a {name} byte-order mark; beambleu reads UTF-8 "
                                                 "(-e names another encoding)", 1, 1)
        column = len(raw[: exc.start].decode("utf-8", "replace")) + 1
        return InputError(self.path, f"invalid UTF-8 (byte 0x{raw[exc.start]:02x})", self.n, column)

    def count_rest(self) -> int:
        """Lines read so far plus the lines left (of every path still to read), counted, not kept."""
        self.n = self._count_file()
        while self._next_file():
            self.n = self._count_file()
        return self._done + self.n

    def _count_file(self) -> int:
        # the block reader's lines are counted when read; bytes it read past the last newline are a line
        # begun (its newline, if any, is in what is left to read)
        n, last = self.n, self._pending[-1:] or b"\n"
        self._pending = b""
        try:
            if not self._binary:
                return n + sum(1 for _ in iter(self._text().readline, ""))
            while True:
                block = self._fh.read(_BLOCK)
                if not block:
                    break
                n += block.count(b"\n")
                last = block[-1:]
        except (OSError, EOFError, zlib.error, UnicodeError) as exc:
            raise self._read_error(exc) from None
        return n + (last != b"\n")

    def close(self) -> None:
        if self._textio is not None:
            self._textio.detach()
            self._textio = None
        if self._fh is not sys.stdin.buffer:
            self._fh.close()



def iter_chunks(hyp_sources: Sequence, ref_sources: Sequence, max_line_bytes: int = MAX_LINE_BYTES,
                max_rows: int = CHUNK_ROWS, max_bytes: int = CHUNK_BYTES
                ) -> Iterator[Tuple[List[List[str]], List[List[str]]]]:
    """``([candidates of each system], [references of each row])`` blocks of consecutive lines,
    every file read once, all in lockstep. Sources are paths or :class:`Source` objects (a source
    of several tab-separated fields gives several systems, or several references). A block has
    at most ``max_rows`` lines and, but for its last line, less than ``max_bytes`` bytes of input.

    Raises :class:`InputError` at the end if the files have different numbers of lines or none:
    the caller must show nothing before this iterator is exhausted."""
    files: List[_Segments] = []
    read = [0]
    hyp_sources = [Source.of(h) for h in hyp_sources]
    ref_sources = [Source.of(r) for r in ref_sources]
    k = len(hyp_sources)
    try:
        for source in [*hyp_sources, *ref_sources]:
            files.append(_Segments(source, max_line_bytes, read))
        # one field per line everywhere (no tab-separated systems or references): rows of strings
        plain = all(f.source.fields == 1 for f in files)
        rows = zip(*(f._lines() for f in files)) if plain else zip(*files)
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
            if not block:
                continue
            if plain:
                columns = list(zip(*block))
                hyps = [list(c) for c in columns[:k]]
                refs = [[r] for r in columns[k]] if len(files) == k + 1 else [list(r[k:]) for r in block]
            else:
                hyps = [list(c) for f in range(k) for c in zip(*(row[f] for row in block))]
                refs = [[r for f in row[k:] for r in f] for row in block]
            yield hyps, refs
        counts = [f.count_rest() for f in files]
    finally:
        for f in files:
            f.close()
    for hyp, n in zip(hyp_sources, counts[:k]):
        for ref, m in zip(ref_sources, counts[k:]):
            if m != n:
                raise InputError(ref.name, f"has {m} lines but the system output {hyp.name} has {n}")
    if counts[0] == 0:
        raise InputError(hyp_sources[0].name, "is empty: no segments to score")

"""Text inputs of ``beambleu run``: JSON Lines, CSV and TSV, read through pyarrow's readers, streamed.

Which reader reads a file: ``--input-format``, or by its name (``auto``): ``.jsonl``, ``.ndjson``
and ``.json`` are JSON Lines, ``.csv`` CSV, ``.tsv`` TSV, anything else Parquet; ``.gz``, ``.bz2``
and ``.zst`` after the name are decompressed on the fly (pyarrow's codecs).

The columns are those of Parquet input. JSON Lines: one object per line (blank lines skipped),
the candidate a string, the references an array of strings (null entries missing) or one string
(one reference); a group or id column is read with the type its values have in the first rows of
the file, integer or string. CSV (RFC 4180: ``"`` quotes, newlines inside quotes) and TSV (no
quoting: a quote is text) have a header line, and every value is a string (an integer-looking group
key stays text); a references column holds one reference; an empty reference field (or
``--reference-columns`` field) is a missing reference.

Planning (:func:`probe`) reads the first MiB or so of each file on the driver: the header (CSV,
TSV) or the keys and value types of the first rows (JSON Lines), which rows that block holds (the
count is exact when the file ends there, else an estimate from the bytes read), and every row of
it checked as a worker would. The workers read a whole file each (:func:`read_text`), in blocks:
JSON Lines in blocks of whole lines, each parsed by ``pyarrow.json.read_json`` with the planned
types; CSV and TSV through ``pyarrow.csv.open_csv``. Memory is bounded by the block and the batch.

Bad input is one line naming the file, the row (0-based among the data rows, as for Parquet) and
the column: pyarrow's readers say what is wrong but not where, so the failing block (JSON Lines)
or the file up to the bad row (CSV, TSV) is read again, row by row in Python, to find it, and
the message adds the 1-based line the row starts on. Invalid UTF-8 in a CSV or TSV value is found
in the Arrow batch (row and column, no line).
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import re
import sys
from dataclasses import dataclass
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np
import pyarrow as pa

from ..groups.accumulate import first_invalid_utf8
from .input_errors import PipelineInputError

__all__ = ["COMPRESSIONS", "EXTENSIONS", "FORMATS", "PROBE_BYTES", "TEXT_FORMATS", "JsonRows", "Probe", "TextRead",
           "compression_of", "format_of", "probe", "read_text", "text_read"]

FORMATS = ("parquet", "jsonl", "csv", "tsv")
TEXT_FORMATS = ("jsonl", "csv", "tsv")
#: name endings of --input-format auto (after a compression's)
EXTENSIONS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl", ".csv": "csv", ".tsv": "tsv"}
#: name endings of compressed text files -> pyarrow's codec
COMPRESSIONS = {".gz": "gzip", ".bz2": "bz2", ".zst": "zstd"}
#: how much of a text file planning reads (raw bytes; a JSON line is read to its end)
PROBE_BYTES = 1 << 20
#: the workers' read blocks
JSON_BLOCK_BYTES = 8 << 20
CSV_BLOCK_BYTES = 4 << 20

_BOM = b"\xef\xbb\xbf"
_BLANK_LINE = re.compile(rb"^[ \t\r]*\n", re.M)
_MAYBE_BLANK = re.compile(rb"\n[\n\r \t]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")  # a byte that is not UTF-8, decoded with surrogateescape


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1].lower()


def compression_of(path: str) -> Optional[str]:
    """pyarrow's codec for a compressed file's name (``.gz``, ``.bz2``, ``.zst``), else None."""
    name = _name(path)
    return next((codec for ext, codec in COMPRESSIONS.items() if name.endswith(ext)), None)


def format_of(path: str, requested: str = "auto") -> str:
    """The format a file is read as: ``requested``, or by its name when that is ``auto``."""
    if requested != "auto":
        return requested
    name = _name(path)
    for ext in COMPRESSIONS:
        if name.endswith(ext):
            name = name[:-len(ext)]
            break
    return next((fmt for ext, fmt in EXTENSIONS.items() if name.endswith(ext)), "parquet")


@dataclass(frozen=True)
class TextRead:
    """How a worker reads one text file: its format, its columns and the types they are read as
    (JSON Lines: the explicit schema the planned columns are parsed with; CSV and TSV: strings),
    its codec; ``one_reference``: a string column handed on as list<string> (one reference per
    row); ``missing_if_empty``: columns (the references of CSV and TSV) whose empty values are
    missing (null). A worker reads the columns the job needs among them (:meth:`only`)."""

    format: str
    schema: pa.Schema
    compression: Optional[str] = None
    one_reference: Optional[str] = None
    missing_if_empty: Tuple[str, ...] = ()

    def only(self, path: str, columns: Sequence[str]) -> "TextRead":
        """This read of ``columns`` alone; a column the file does not have is bad input."""
        for c in columns:
            if c not in self.schema.names:
                raise PipelineInputError(f"{path}: column {c!r} not found (columns: {', '.join(self.schema.names)})")
        return TextRead(self.format, pa.schema([self.schema.field(c) for c in columns]), self.compression,
                        self.one_reference if self.one_reference in columns else None,
                        tuple(c for c in self.missing_if_empty if c in columns))


@dataclass(frozen=True)
class Probe:
    """What planning learns of a text file: its columns with the types they are handed on as
    (JSON Lines: the keys of its first rows; a column that is null in all of them has type null),
    its rows (``exact``: counted to the end of the file; else estimated from the first block)."""

    schema: pa.Schema
    rows: int
    exact: bool


# ---------------------------------------------------------------------------------- opening files


class _Counted:
    """A file object that counts the bytes read from it (planning's estimate of the rows)."""

    def __init__(self, raw):
        self.raw, self.n, self.closed = raw, 0, False

    def read(self, n=-1):
        data = self.raw.read(n)
        self.n += len(data)
        return data

    def readable(self):
        return True

    def seekable(self):
        return False

    def close(self):
        self.closed = True


class _Readable(io.RawIOBase):
    """A pyarrow input stream as a Python raw stream (for ``io.TextIOWrapper``)."""

    def __init__(self, stream):
        super().__init__()
        self.stream = stream

    def readable(self):
        return True

    def readinto(self, b):
        data = self.stream.read(len(b))
        b[:len(data)] = data
        return len(data)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]


@contextlib.contextmanager
def _opened(path: str, compression: Optional[str]):
    """(a pyarrow input stream of the file's text, decompressed; the counter of its raw bytes)."""
    from apache_beam.io.filesystems import FileSystems

    try:
        raw = FileSystems.open(path, compression_type="uncompressed")
    except Exception as exc:  # BeamIOError, OSError, a store's client error
        raise PipelineInputError(f"{path}: cannot open ({_one_line(exc)})") from None
    try:
        counted = _Counted(raw)
        stream = pa.PythonFile(counted, mode="r")
        if compression:
            stream = pa.CompressedInputStream(stream, compression)
        yield stream, counted
    finally:
        raw.close()


# ------------------------------------------------------------------------------- where and what


def _where(path: str, row: int, line: Optional[int], column: Optional[str] = None) -> str:
    at = f"row {row}" + (f" (line {line})" if line is not None else "")
    return f"{path}: {at}" + (f", column {column!r}: " if column is not None else ": ")


def _kind(v) -> str:
    """A JSON value's kind, for messages."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, int):
        return "an integer"
    if isinstance(v, float):
        return "a number"
    if isinstance(v, str):
        return "a string"
    return "an array" if isinstance(v, list) else "an object"


def _arrow_type(v) -> pa.DataType:
    """The Arrow type of a (non-null) JSON value, as pyarrow's JSON reader would infer it."""
    if isinstance(v, bool):
        return pa.bool_()
    if isinstance(v, int):
        return pa.int64() if -2**63 <= v < 2**63 else pa.uint64() if 0 <= v < 2**64 else pa.float64()
    if isinstance(v, float):
        return pa.float64()
    if isinstance(v, str):
        return pa.string()
    if isinstance(v, list):
        items = [x for x in v if x is not None]
        return pa.list_(_arrow_type(items[0]) if items else pa.null())
    return pa.struct([(k, pa.null() if x is None else _arrow_type(x)) for k, x in v.items()])


def _fits(v, t: pa.DataType) -> bool:
    """Whether pyarrow's JSON reader reads value ``v`` as type ``t``."""
    if v is None:
        return True
    if pa.types.is_string(t):
        return isinstance(v, str)
    if pa.types.is_integer(t):
        if isinstance(v, bool) or not isinstance(v, int):
            return False
        return (-2**63 <= v < 2**63) if t == pa.int64() else (0 <= v < 2**64)
    if pa.types.is_list(t):
        return isinstance(v, list) and all(_fits(x, t.value_type) for x in v)
    if pa.types.is_null(t):
        return False
    return _arrow_type(v) == t


def _wanted(t: pa.DataType) -> str:
    if pa.types.is_string(t):
        return "a string"
    if pa.types.is_integer(t):
        return "an integer" + ("" if t == pa.int64() else f" ({t})")
    if pa.types.is_list(t) and pa.types.is_string(t.value_type):
        return "an array of strings (or null)"
    return str(t)


def _no_inf(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"number too big: {text}")
    return value


class JsonRows:
    """JSON Lines checked row by row in Python, as pyarrow's reader reads them with an explicit
    schema (``types``: column -> type; None: take the type of the first value met, which is what
    planning does): where a block fails, the first bad row and why; on the driver, the first rows
    of a file, their keys (``keys``, in order) and the types of the needed columns."""

    def __init__(self, path: str, types: Dict[str, Optional[pa.DataType]]):
        self.path, self.types, self.keys = path, dict(types), {}
        self.others: Dict[str, pa.DataType] = {}  # the type of the first value of each other key

    def check_block(self, block: bytes, first_line: int, first_row: int) -> int:
        """Check every line of ``block`` (whole lines, the first being line ``first_line`` of
        the file and row ``first_row``); the number of rows. The first bad one is raised."""
        row = first_row
        for i, raw in enumerate(block.split(b"\n")):
            if not raw.strip(b" \t\r"):
                continue
            line = first_line + i
            problem = self._problem(raw[3:] if line == 1 and raw.startswith(_BOM) else raw)
            if problem is not None:
                column, reason = problem
                raise PipelineInputError(_where(self.path, row, line, column) + reason)
            row += 1
        return row - first_row

    def _problem(self, raw: bytes) -> Optional[Tuple[Optional[str], str]]:
        bad_byte = None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            bad_byte = f"invalid UTF-8 (byte 0x{raw[exc.start]:02x})"
            text = raw.decode("utf-8", "surrogateescape")
        twice: List[str] = []

        def pairs(items):
            keys = [k for k, _ in items]
            twice[:] = [k for i, k in enumerate(keys) if k in keys[:i]]
            return dict(items)

        try:
            obj = json.loads(text, object_pairs_hook=pairs, parse_float=_no_inf, parse_constant=lambda c: None)
        except ValueError as exc:
            if bad_byte:
                return None, bad_byte
            if isinstance(exc, json.JSONDecodeError):
                return None, f"invalid JSON: {exc.msg} (character {exc.colno})"
            return None, f"invalid JSON: {exc}"
        if not isinstance(obj, dict):
            return None, f"not a JSON object but {_kind(obj)}"
        for key, v in obj.items():
            self.keys.setdefault(key, None)
            if v is not None and key not in self.types and key not in self.others:
                self.others[key] = _arrow_type(v)
        if bad_byte:
            return next((k for k, v in obj.items() if _ESCAPED_BYTE.search(k + json.dumps(v, ensure_ascii=False))),
                        None), bad_byte
        for key in twice:
            if key in self.types:
                return key, "appears twice in the object"
        for column, t in self.types.items():
            v = obj.get(column)
            if v is None:
                continue
            if t is None:
                self.types[column] = _arrow_type(v)
            elif not _fits(v, t):
                return column, f"expected {_wanted(t)}, found {_kind(v)}"
        for key, v in obj.items():
            if _SURROGATE.search(key + json.dumps(v, ensure_ascii=False)):
                return key, "a string holds a lone surrogate (a \\ud800-\\udfff escape), which is not text"
        return None


def _utf8(block: bytes) -> bool:
    """Whether ``block`` is valid UTF-8 (one Arrow validation, no copy)."""
    offsets = pa.py_buffer(np.array([0, len(block)], dtype=np.int64))
    arr = pa.Array.from_buffers(pa.large_string(), 1, [None, offsets, pa.py_buffer(block)])
    try:
        arr.validate(full=True)
        return True
    except pa.ArrowInvalid:
        return False


def _lines(block: bytes) -> int:
    return block.count(b"\n") + (0 if block.endswith(b"\n") else 1)


def _blank_lines(block: bytes) -> int:
    if block[:1] not in b" \t\r\n" and not _MAYBE_BLANK.search(block):
        return 0  # (the usual case, found fast)
    tail = block[block.rfind(b"\n") + 1:]
    return len(_BLANK_LINE.findall(block)) + (1 if tail and not tail.strip(b" \t\r") else 0)


# --------------------------------------------------------------------------------------- JSON Lines


def _line_blocks(stream, size: int) -> Iterator[bytes]:
    """The stream's bytes in blocks of about ``size`` that end at a newline (the last, at the end)."""
    rest = b""
    while True:
        data = stream.read(size)
        if not data:
            if rest:
                yield rest
            return
        buf = rest + data if rest else data
        cut = buf.rfind(b"\n")
        if cut < 0:  # a line longer than a block: read on
            rest = buf
            continue
        yield buf[:cut + 1]
        rest = buf[cut + 1:]


def _json_error(path: str, read: TextRead, block: bytes, line: int, row: int, what: str) -> PipelineInputError:
    JsonRows(path, {f.name: f.type for f in read.schema}).check_block(block, line, row)  # raises at the bad row
    return PipelineInputError(f"{path}: a row from row {row} (line {line}) on: {what}")


def _json_tables(path: str, stream, read: TextRead, block_bytes: int) -> Iterator[pa.Table]:
    import pyarrow.json as pj

    parse = pj.ParseOptions(explicit_schema=read.schema, unexpected_field_behavior="ignore")
    row, line = 0, 1
    for block in _line_blocks(stream, block_bytes):
        if line == 1 and block.startswith(_BOM):
            block = b" " * len(_BOM) + block[len(_BOM):]  # (pyarrow skips it; the lines keep their numbers)
        if not block.isspace():
            if not _utf8(block):
                raise _json_error(path, read, block, line, row, "invalid UTF-8")
            try:
                table = pj.read_json(pa.BufferReader(block), parse_options=parse,
                                     read_options=pj.ReadOptions(use_threads=False, block_size=len(block) + 1))
            except pa.ArrowInvalid as exc:
                raise _json_error(path, read, block, line, row, _one_line(exc)) from None
            if table.num_rows != _lines(block) - _blank_lines(block):
                raise _json_error(path, read, block, line, row, "a line holds more than one JSON value")
            if table.num_rows:
                yield table
            row += table.num_rows
        line += block.count(b"\n")


def _read_head(stream, n: int) -> Tuple[bytes, bytes, bool]:
    """The first ``n`` bytes or so, to the end of a line; what was read past it; and whether that
    is the whole file."""
    chunks, got = [], 0
    while got < n:
        data = stream.read(n - got)
        if not data:
            return b"".join(chunks), b"", True
        chunks.append(data)
        got += len(data)
    head = b"".join(chunks)
    while not head.endswith(b"\n"):
        data = stream.read(64 << 10)
        if not data:
            return head, b"", True
        cut = data.find(b"\n")
        if cut >= 0:
            return head + data[:cut + 1], data[cut + 1:], False
        head += data
    return head, b"", False


def _probe_json(path: str, size: int, wanted: Sequence[str]) -> Probe:
    with _opened(path, compression_of(path)) as (stream, counted):
        try:
            head, rest, eof = _read_head(stream, PROBE_BYTES)
            rows_ = JsonRows(path, {c: None for c in wanted})
            rows = rows_.check_block(head, 1, 0)
            more = rest.count(b"\n")  # a compressed file: its lines up to PROBE_BYTES of raw bytes (the estimate)
            while not eof and counted.n < PROBE_BYTES:
                data = stream.read(PROBE_BYTES)
                eof = not data
                more += data.count(b"\n")
        except OSError as exc:
            raise PipelineInputError(f"{path}: unreadable ({_one_line(exc)})") from None
        consumed = counted.n
    types = {**{k: pa.null() for k in rows_.keys}, **rows_.others,
             **{c: t for c, t in rows_.types.items() if t is not None}}
    schema = pa.schema([(k, types[k]) for k in rows_.keys])
    if eof and not more:
        return Probe(schema, rows, True)
    return Probe(schema, max(rows + more, round((rows + more) * size / max(consumed, 1))), False)


# ------------------------------------------------------------------------------------- CSV and TSV


def _csv_options(fmt: str, names: Optional[Sequence[str]], block_bytes: int, use_threads: bool):
    import pyarrow.csv as pcsv

    tsv = fmt == "tsv"
    parse = pcsv.ParseOptions(delimiter="\t" if tsv else ",", quote_char=False if tsv else '"', double_quote=not tsv,
                              newlines_in_values=not tsv, ignore_empty_lines=True)
    if names is None:
        convert = pcsv.ConvertOptions(check_utf8=False)
    else:
        convert = pcsv.ConvertOptions(column_types={n: pa.string() for n in names}, include_columns=list(names),
                                      strings_can_be_null=False, quoted_strings_can_be_null=False, check_utf8=False)
    return dict(read_options=pcsv.ReadOptions(block_size=block_bytes, use_threads=use_threads),
                parse_options=parse, convert_options=convert)


def _csv_error(path: str, fmt: str, compression: Optional[str], needed: Sequence[str], row0: int,
               what: str) -> PipelineInputError:
    """The first bad row of a CSV or TSV file (read again from its start, in Python): a row whose
    number of fields is not the header's, or a needed value that is not UTF-8. Found none: what
    pyarrow said, from row ``row0`` on."""
    dialect = dict(delimiter="\t", quoting=csv.QUOTE_NONE) if fmt == "tsv" else dict(delimiter=",", quotechar='"')
    limit = csv.field_size_limit()
    csv.field_size_limit(sys.maxsize)
    try:
        with _opened(path, compression) as (stream, _):
            text = io.TextIOWrapper(io.BufferedReader(_Readable(stream), 1 << 20), encoding="utf-8",
                                    errors="surrogateescape", newline="")
            reader = csv.reader(text, strict=False, **dialect)
            row, line = 0, 1
            try:
                header = next(reader, [])
                header[:1] = [h.lstrip("\ufeff") for h in header[:1]]
                index = [(c, header.index(c)) for c in needed if c in header]
                line = reader.line_num + 1
                for record in reader:
                    start, line = line, reader.line_num + 1
                    if not record:
                        continue
                    if len(record) != len(header):
                        return PipelineInputError(_where(path, row, start) +
                                                  f"{len(record)} fields, the header has {len(header)}")
                    for column, i in index:
                        if _ESCAPED_BYTE.search(record[i]):
                            return PipelineInputError(_where(path, row, start, column) + "invalid UTF-8")
                    row += 1
            except csv.Error as exc:
                return PipelineInputError(_where(path, row, line) + _one_line(exc))
            except OSError as exc:
                return PipelineInputError(f"{path}: unreadable after {row} rows ({_one_line(exc)})")
    finally:
        csv.field_size_limit(limit)
    return PipelineInputError(f"{path}: a row from row {row0} on: {what}")


def _csv_tables(path: str, stream, read: TextRead, block_bytes: int, use_threads: bool = True) -> Iterator[pa.Table]:
    import pyarrow.csv as pcsv

    names = read.schema.names
    try:
        reader = pcsv.open_csv(stream, **_csv_options(read.format, names, block_bytes, use_threads))
    except pa.ArrowInvalid as exc:
        raise _csv_error(path, read.format, read.compression, names, 0, _one_line(exc)) from None
    row = 0
    while True:
        try:
            batch = reader.read_next_batch()
        except StopIteration:
            return
        except pa.ArrowInvalid as exc:
            raise _csv_error(path, read.format, read.compression, names, row, _one_line(exc)) from None
        bad = [(b, c) for c in names for b in [first_invalid_utf8(batch.column(c))] if b is not None]
        if bad:
            b, c = min(bad, key=lambda x: x[0])  # the first row; in it, the first column
            raise PipelineInputError(_where(path, row + b, None, c) + "invalid UTF-8")
        if batch.num_rows:
            yield pa.Table.from_batches([batch])
        row += batch.num_rows


def _csv_names(path: str, fmt: str, stream) -> List[str]:
    import pyarrow.csv as pcsv

    try:
        reader = pcsv.open_csv(stream, **_csv_options(fmt, None, PROBE_BYTES, False))
    except pa.ArrowInvalid as exc:
        if "Empty CSV file" in str(exc):
            return []
        raise _csv_error(path, fmt, compression_of(path), [], 0, _one_line(exc)) from None
    return reader.schema.names


def _probe_csv(path: str, fmt: str, size: int, wanted: Sequence[str], one_reference: Optional[str],
               references: Sequence[str]) -> Probe:
    compression = compression_of(path)
    with _opened(path, compression) as (stream, _):
        try:
            names = _csv_names(path, fmt, stream)
        except OSError as exc:
            raise PipelineInputError(f"{path}: unreadable ({_one_line(exc)})") from None
    for c in wanted:
        if names.count(c) > 1:
            raise PipelineInputError(f"{path}: column {c!r} appears {names.count(c)} times in the header")
    schema = pa.schema([(n, pa.list_(pa.string()) if n == one_reference else pa.string()) for n in names])
    if not names or not set(wanted) <= set(names):
        return Probe(schema, 0, True)  # nothing to read, or check_schema names the missing column
    read = text_read(fmt, path, schema, one_reference, references).only(path, wanted)
    rows, eof = 0, True
    with _opened(path, compression) as (stream, counted):
        try:
            for table in _csv_tables(path, stream, read, PROBE_BYTES // 4, use_threads=False):
                rows += table.num_rows
                if counted.n >= PROBE_BYTES:
                    eof = False  # (or just about): the rest is estimated
                    break
        except OSError as exc:
            raise PipelineInputError(f"{path}: unreadable ({_one_line(exc)})") from None
        consumed = counted.n
    if eof:
        return Probe(schema, rows, True)
    return Probe(schema, max(rows, round(rows * size / max(consumed, 1))), False)


# ------------------------------------------------------------------------------------------ shared


def probe(path: str, fmt: str, size: int, wanted: Sequence[str], one_reference: Optional[str] = None,
          references: Sequence[str] = ()) -> Probe:
    """What planning learns of a text file from its first block (:class:`Probe`); every row of
    that block is checked as a worker would, so bad input there stops the job before it starts.
    ``wanted``: the columns the job reads from it; ``one_reference``: the references column (a
    list of strings; CSV and TSV hold one); ``references``: the columns of references."""
    if fmt == "jsonl":
        return _probe_json(path, size, wanted)
    return _probe_csv(path, fmt, size, wanted, one_reference, references)


def text_read(fmt: str, path: str, schema: pa.Schema, one_reference: Optional[str],
              references: Sequence[str]) -> TextRead:
    """How the workers read a text file whose columns, with the (planned) types they are handed on
    as, are ``schema``: the references column is read as a string where it holds one (CSV and TSV;
    JSON Lines whose first rows have a string there)."""
    fields, one = [], None
    for f in schema:
        t = f.type
        if f.name == one_reference and (fmt != "jsonl" or pa.types.is_string(t)):
            t, one = pa.string(), f.name
        elif fmt != "jsonl":
            t = pa.string()
        fields.append(pa.field(f.name, t))
    missing = tuple(c for c in references if c in schema.names) if fmt != "jsonl" else ()
    return TextRead(fmt, pa.schema(fields), compression_of(path), one, missing)


def _handed_on(table: pa.Table, read: TextRead) -> pa.Table:
    """A block's table as the next stage takes it: empty reference fields missing (CSV, TSV),
    the one-reference column as list<string>."""
    import pyarrow.compute as pc

    columns = []
    for f in read.schema:
        col = table.column(f.name).combine_chunks()
        if f.name in read.missing_if_empty:
            col = pc.if_else(pc.equal(col, ""), pa.scalar(None, f.type), col)
        if f.name == read.one_reference:
            col = pa.ListArray.from_arrays(pa.array(np.arange(len(col) + 1, dtype=np.int32)), col)
        columns.append(col)
    return pa.Table.from_arrays(columns, names=read.schema.names)


def _rebatched(tables: Iterator[pa.Table], batch_size: int) -> Iterator[Tuple[int, pa.RecordBatch]]:
    """(first row, batch) of ``batch_size`` rows (the last: the rest) from tables of any size."""
    pending: List[pa.Table] = []
    n, row = 0, 0
    for table in tables:
        pending.append(table)
        n += table.num_rows
        if n < batch_size:
            continue
        whole = pa.concat_tables(pending)
        offset = 0
        while whole.num_rows - offset >= batch_size:
            yield row, whole.slice(offset, batch_size).combine_chunks().to_batches()[0]
            offset += batch_size
            row += batch_size
        pending = [whole.slice(offset)] if offset < whole.num_rows else []
        n = whole.num_rows - offset
    if n:
        yield row, pa.concat_tables(pending).combine_chunks().to_batches()[0]


def read_text(path: str, read: TextRead, batch_size: int,
              columns: Optional[Sequence[str]] = None) -> Iterator[Tuple[int, pa.RecordBatch]]:
    """(first row in the file, RecordBatch) of a whole text file, streamed: ``columns`` (default:
    all of ``read.schema``) as the next stage takes them."""
    if columns is not None:
        read = read.only(path, columns)
    with _opened(path, read.compression) as (stream, _):
        if read.format == "jsonl":
            tables = _json_tables(path, stream, read, JSON_BLOCK_BYTES)
        else:
            tables = _csv_tables(path, stream, read, CSV_BLOCK_BYTES)
        done = 0
        try:
            for first_row, batch in _rebatched((_handed_on(t, read) for t in tables), batch_size):
                done = first_row + batch.num_rows
                yield first_row, batch
        except OSError as exc:  # a truncated or corrupt compressed file, a store that fails
            raise PipelineInputError(f"{path}: unreadable after {done} rows ({_one_line(exc)})") from None

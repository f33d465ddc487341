"""The input of ``beambleu run``: plan the work on the driver, read it on the workers.

An ``--input`` is a file, a glob or a directory (:mod:`beambleu.io.listing`: every data file under
it; hidden and ``_`` files skipped; ``col=value`` folders become string columns). Each file is
Parquet, JSON Lines, CSV or TSV (``--input-format``, else by its name; the text formats are read by
:mod:`beambleu.io.formats`).

Planning lists the inputs and reads every Parquet file's footer (metadata only) and the first block
of every text file, so the common input errors -- nothing matched, not Parquet, a missing column, a
wrong type, schemas that differ between shards, a bad row at the start of a text file -- stop the
job before it starts, naming the file and column. The work items are ``(file, row group)`` pairs
for Parquet and whole files for the text formats; a ``Reshuffle`` spreads them over workers (not
on the local runner's one in-process worker, where it would only cost), and a DoFn reads each
through Beam's ``FileSystems`` (local, ``gs://``, ``s3://``), in Arrow batches, only the needed
columns (Parquet: verifying the pages' CRC checksums when the file has them), the partition
columns added. It uses nothing runner-specific (``ReadFromParquetBatched`` is avoided
because it fails on Beam's DaskRunner).

Object stores (``s3://``, ``gs://``) are checked before anything else touches them: the extra
that serves the scheme must be installed, and the store must answer within
``--object_store_timeout`` seconds (Beam's clients retry an unreachable endpoint silently for many
minutes; here each retry is announced on stderr).
"""

from __future__ import annotations

import importlib
import logging
import os
import re
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import UsageError
from ..groups.accumulate import GROUP_KEY_TYPES, group_key_type_ok
from .formats import FORMATS, TextRead, format_of, probe, read_text, text_read
from .input_errors import ERROR_MARK, PipelineInputError
from .listing import absolute, directories, expand

__all__ = ["ERROR_MARK", "STORE_EXTRAS", "InputSpec", "PipelineInputError", "Plan", "WorkItem", "absolute",
           "check_model_store", "check_object_stores", "check_store_extras", "match", "plan", "read_batches",
           "read_footer", "s3_credentials_problem"]


def _is_string(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)


def _is_string_list(t: pa.DataType) -> bool:
    lists = (pa.types.is_list, pa.types.is_large_list, pa.types.is_list_view, pa.types.is_large_list_view)
    return any(is_list(t) for is_list in lists) and _is_string(t.value_type)  # views are read as lists


@dataclass(frozen=True)
class InputSpec:
    """Which columns hold what."""

    candidate_columns: Tuple[str, ...] = ("candidate",)
    references_column: Optional[str] = "references"
    reference_columns: Optional[Tuple[str, ...]] = None
    group_by: Tuple[Tuple[str, ...], ...] = ()
    id_column: Optional[str] = None
    wide: bool = False  # candidate_columns name systems (group system=<column>)
    #: the language pair of each row (``SRC-TRG``): ``-tok auto``'s target language, ``--mtme-output``'s folders
    langpair_column: Optional[str] = None
    #: columns whose values become file names (``--mtme-output``: the system): not null, no whitespace
    name_columns: Tuple[str, ...] = ()

    @property
    def group_columns(self) -> List[str]:
        cols = []
        for gs in self.group_by:
            for c in gs:
                if c not in cols and not (self.wide and c == "system"):
                    cols.append(c)
        return cols

    @property
    def columns(self) -> List[str]:
        cols = list(self.candidate_columns)
        cols += list(self.reference_columns) if self.reference_columns else [self.references_column]
        cols += self.group_columns
        if self.id_column:
            cols.append(self.id_column)
        if self.langpair_column:
            cols.append(self.langpair_column)
        cols += [c for c in self.name_columns if not (self.wide and c == "system")]
        return list(dict.fromkeys(cols))

    def check_schema(self, path: str, schema: pa.Schema) -> None:
        names = set(schema.names)
        for col in self.columns:
            if col not in names:
                raise PipelineInputError(f"{path}: column {col!r} not found (columns: {', '.join(schema.names)})")
            n = schema.names.count(col)
            if n > 1:  # (Arrow reads neither by name)
                raise PipelineInputError(f"{path}: column {col!r} appears {n} times in the file: beambleu cannot "
                                         "tell which one to read; rename the others")
        for col in self.candidate_columns:
            t = schema.field(col).type
            if not _is_string(t):
                raise PipelineInputError(f"{path}: column {col!r} must be string, found {t}")
        if self.reference_columns:
            for col in self.reference_columns:
                t = schema.field(col).type
                if not _is_string(t):
                    raise PipelineInputError(f"{path}: column {col!r} must be string, found {t}")
        else:
            t = schema.field(self.references_column).type
            if not _is_string_list(t):
                raise PipelineInputError(
                    f"{path}: column {self.references_column!r} must be list<string>, found {t} "
                    "(use --reference-columns for one string column per reference)")
        for col in self.group_columns:
            t = schema.field(col).type
            if not group_key_type_ok(t):
                raise PipelineInputError(f"{path}: group column {col!r} must be {GROUP_KEY_TYPES}, found {t}")
        if self.id_column:  # a segment's identity (the bootstrap's weights, a per-pair row): text or an integer
            t = schema.field(self.id_column).type
            if not group_key_type_ok(t):
                raise PipelineInputError(f"{path}: id column {self.id_column!r} must be {GROUP_KEY_TYPES}, found {t}")
        t = schema.field(self.langpair_column).type if self.langpair_column else None
        if t is not None and not (_is_string(t) or pa.types.is_dictionary(t) and _is_string(t.value_type)):
            raise PipelineInputError(f"{path}: language pair column {self.langpair_column!r} must be string "
                                     f"(SRC-TRG, e.g. en-de), found {t}")


@dataclass(frozen=True)
class WorkItem:
    """One piece of work: a Parquet file's row group, or a whole text file (``text``: how to read
    it; ``row_group`` 0)."""

    file_index: int
    path: str
    row_group: int
    first_row: int  # index in the file of the row group's first row
    num_rows: int  # Parquet: from the footer; a text file: as planning counted (rows_exact) or estimated them
    nbytes: int = 0  # Parquet: uncompressed size from the footer; a text file: its size; a proxy for the work's cost
    partitions: Tuple[Tuple[str, Optional[str]], ...] = ()  # the columns of its col=value folders
    text: Optional[TextRead] = None
    rows_exact: bool = True

    @property
    def format(self) -> str:
        return self.text.format if self.text is not None else "parquet"


@dataclass
class Plan:
    """The planned input: its files, the work items, the rows (``rows_exact``: counted; else the
    text files' rows are estimated from their first block) and its columns' types (``schema``: the
    needed columns, the same in every file, first; then the first file's other columns, partition
    columns included)."""

    files: List[str]
    items: List[WorkItem]
    total_rows: int
    schema: pa.Schema = field(repr=False)
    rows_exact: bool = True
    formats: Tuple[str, ...] = ("parquet",)
    partition_columns: Tuple[str, ...] = ()
    directories: Tuple[str, ...] = ()  # the inputs that are directories: no output may lie in one

    def summary(self) -> Dict:
        out = {"files": self.files, "n_files": len(self.files), "row_groups": len(self.items),
               "rows": self.total_rows if self.rows_exact else None, "formats": list(self.formats)}
        if not self.rows_exact:
            out["rows_estimate"] = self.total_rows
        if self.partition_columns:
            out["partition_columns"] = list(self.partition_columns)
        return out


# --- object stores: the extra that serves them; an answer within a bounded, announced wait ---------

#: scheme -> (module its Beam filesystem needs, the beambleu extra that installs it)
STORE_EXTRAS = {"s3": ("boto3", "aws"), "gs": ("google.cloud.storage", "gcp")}


def _scheme(path: str) -> Optional[str]:
    return path.split("://", 1)[0].lower() if "://" in path else None


def check_store_extras(paths: Sequence[str]) -> None:
    """Refuse (bad usage, one line) an s3:// or gs:// path whose extra is not installed, rather
    than fail inside Beam with "Missing boto3 requirement" or "No filesystem found"."""
    for path in paths:
        scheme = _scheme(path)
        if scheme in STORE_EXTRAS:
            module, extra = STORE_EXTRAS[scheme]
            try:
                importlib.import_module(module)
            except ImportError:
                raise UsageError(f"{path}: {scheme}:// paths need the {extra} extra: "
                                 f"pip install 'beambleu[{extra}]'") from None


def check_object_stores(paths: Sequence[str], opts, beam_flags: bool = True) -> None:
    """The store of each bucket named by an s3:// or gs:// path answers (a one-item listing of
    the first such path) within ``--object_store_timeout`` seconds, or a
    :class:`PipelineInputError` names the path and the endpoint. The wait is announced on
    stderr, every retry of Beam's and Google's clients too. An answer that is an error counts:
    planning and the output checks report it as they do.

    The listing runs in a daemon thread, abandoned (still retrying) when the time is up.
    ``beam_flags``: whether messages may name Beam's and beambleu's pipeline options (not for
    ``score``, which has none)."""
    from apache_beam.io.filesystems import FileSystems

    from .stores import TimeoutOptions  # Beam's options: io.inputs itself loads without Apache Beam

    timeout = opts.view_as(TimeoutOptions).object_store_timeout
    buckets = {}
    for p in paths:
        if _scheme(p) in STORE_EXTRAS:
            buckets.setdefault("/".join(p.split("/", 3)[:3]), p)  # scheme://bucket -> its first path
    for path in buckets.values():
        problem = s3_credentials_problem(path, opts if beam_flags else None) if _scheme(path) == "s3" else None
        if problem:  # Beam's client would retry "Unable to locate credentials" until the timeout
            raise PipelineInputError(problem)
        answered = threading.Event()
        probe = threading.Thread(target=_answer_or_error, args=(FileSystems.match, path, answered), daemon=True,
                                 name="beambleu-object-store")
        endpoint = _endpoint(path, opts)
        every = max(1.0, min(10.0, timeout / 4))
        start = time.monotonic()
        with _RetryNotes(f"beambleu: {path}: {endpoint}", propagate=beam_flags) as notes:
            probe.start()
            while not answered.wait(min(every, max(0.0, start + timeout - time.monotonic()))):
                waited = time.monotonic() - start
                if waited >= timeout:
                    last = f"; the last of {notes.retries} retries was after: {notes.last}" if notes.retries else ""
                    given = "--s3_endpoint_url" if beam_flags else "AWS_ENDPOINT_URL_S3"
                    hint = "" if _scheme(path) != "s3" or _s3_endpoint(opts) else \
                        f"; for a store other than AWS S3 give {given}=URL"
                    limit = "--object_store_timeout sets this limit" if beam_flags else ""
                    limit = f" ({limit}{hint})" if limit else (f" ({hint[2:]})" if hint else "")
                    raise PipelineInputError(f"{path}: no answer from {endpoint} within {timeout:g} s{last}{limit}")
                if time.monotonic() - notes.said >= every:
                    notes.say(f"no answer yet after {waited:.0f} s; giving up after {timeout:g} s")


def _s3_endpoint(opts) -> Optional[str]:
    """Where Beam's S3 client sends requests: ``--s3_endpoint_url``, else boto3's variables, else None (AWS)."""
    given = None
    if opts is not None:
        from apache_beam.options.pipeline_options import S3Options

        given = opts.view_as(S3Options).s3_endpoint_url
    return given or os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")


def s3_credentials_problem(path: str, opts=None) -> Optional[str]:
    """One line naming ``path`` and what is missing when Beam's S3 client would find no credentials
    (neither ``--s3_access_key_id``/``--s3_secret_access_key`` nor boto3's own search: the
    environment, ``AWS_PROFILE``, ``~/.aws``, the instance's role), else None. ``opts``: the
    pipeline options (``run``), or None (``score``: no Beam options, only the environment)."""
    if opts is not None:
        from apache_beam.options.pipeline_options import S3Options

        s3 = opts.view_as(S3Options)
        if s3.s3_access_key_id and s3.s3_secret_access_key:
            return None
    try:
        import boto3

        found = boto3.session.Session().get_credentials()
    except Exception as exc:  # noqa: BLE001 - a broken profile or config file, said in one line
        return f"{path}: cannot load S3 credentials: {_one_line(f'{type(exc).__name__}: {exc}')}"
    if found is not None:
        return None
    flags = ", or give --s3_access_key_id and --s3_secret_access_key" if opts is not None else ""
    where = _s3_endpoint(opts)
    if where:
        return (f"{path}: no S3 credentials for {where}: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "
                f"(or AWS_PROFILE){flags}")
    store = "--s3_endpoint_url=URL" if opts is not None else "AWS_ENDPOINT_URL_S3=URL"
    return (f"{path}: no S3 credentials and no endpoint (requests would go to AWS S3): set AWS_ACCESS_KEY_ID and "
            f"AWS_SECRET_ACCESS_KEY (or AWS_PROFILE){flags}, and {store} for a store other than AWS")


def check_model_store(path: str) -> None:
    """For a command without Beam's pipeline options (``score``): before a model at an ``s3://`` or
    ``gs://`` path is read through Beam's FileSystems, its extra is installed (else
    :class:`UsageError`), FileSystems has options (Beam's defaults: the S3 client then reads
    boto3's environment, ``AWS_ENDPOINT_URL_S3`` too) and an S3 store has credentials (else
    :class:`PipelineInputError`, one line naming the path and what is missing) and the store
    answers within :data:`beambleu.io.stores.OBJECT_STORE_TIMEOUT` seconds (as :func:`check_object_stores`;
    Beam's client alone retries an endpoint that does not answer for minutes). Anything else
    is left to the reading."""
    scheme = _scheme(path)
    if scheme not in STORE_EXTRAS:
        return
    check_store_extras([path])
    from apache_beam.io.filesystems import FileSystems
    from apache_beam.options.pipeline_options import PipelineOptions

    opts = getattr(FileSystems, "_pipeline_options", None)
    if opts is None:
        opts = PipelineOptions([])
        FileSystems.set_options(opts)
    check_object_stores([path], opts, beam_flags=False)


def _answer_or_error(match, path: str, answered: threading.Event) -> None:
    try:
        match([path], limits=[1])
    except Exception:  # noqa: BLE001 - an answer all the same
        pass
    answered.set()


def _endpoint(path: str, opts) -> str:
    """Where requests for ``path`` go, for messages."""
    if _scheme(path) == "s3":
        return _s3_endpoint(opts) or "the S3 endpoint of the AWS region"
    return os.environ.get("STORAGE_EMULATOR_HOST") or "https://storage.googleapis.com"


def _one_line(text: str) -> str:
    """``pkg.module.S3ClientError: ('message', None)`` -> ``S3ClientError: message``, on one line."""
    text = re.sub(r"^(?:\w+\.)+(\w+): ", r"\1: ", " ".join(text.split()))
    return re.sub(r"^(\w+: )\('(.*)', (?:None|\d+)\)$", r"\1\2", text)[:300]


class _RetryNotes(logging.Handler):
    """While active, each retry that Beam's or Google's client logs becomes a ``beambleu:`` line
    on stderr (the only lines that reach the terminal during ``beambleu run``)."""

    LOGGERS = ("apache_beam.utils.retry", "google.api_core.retry")

    def __init__(self, prefix: str, propagate: bool = True):
        super().__init__(logging.DEBUG)
        self.prefix = prefix
        self.propagate = propagate  # False: the retries reach no other handler (a command without a log filter)
        self._propagate: Dict[str, bool] = {}
        self.retries = 0
        self.last = ""
        self.said = time.monotonic()
        self._levels: Dict[str, int] = {}

    def __enter__(self):
        for name in self.LOGGERS:
            logger = logging.getLogger(name)
            self._levels[name] = logger.level
            self._propagate[name] = logger.propagate
            logger.setLevel(logging.DEBUG)  # Google's client says "Retrying due to ..." at debug level
            logger.propagate = logger.propagate and self.propagate
            logger.addHandler(self)
        return self

    def __exit__(self, *exc):
        with self.lock:  # a note being written (by the client's thread) ends before the caller goes on
            for name, level in self._levels.items():
                logging.getLogger(name).removeHandler(self)
                logging.getLogger(name).setLevel(level)
                logging.getLogger(name).propagate = self._propagate[name]
        return False

    def emit(self, record: logging.LogRecord) -> None:
        if record.name == "apache_beam.utils.retry" and len(record.args or ()) >= 3:
            error = str(record.args[2])  # (delay, function, exception text, traceback)
        elif record.getMessage().startswith("Retrying due to"):
            error = record.getMessage()[len("Retrying due to"):]
        else:
            return
        self.retries += 1
        self.last = _one_line(error)
        self.say(f"retry {self.retries} after: {self.last}")

    def say(self, what: str) -> None:
        # the waiting thread and the client's (whose emit holds this lock already) both say things: one
        # whole line at a time (print writes the text and its newline separately, and two notes ran into
        # one line)
        with self.lock:
            self.said = time.monotonic()
            sys.stderr.write(f"{self.prefix}: {what}\n")
            sys.stderr.flush()


def match(globs: Sequence[str]) -> List[str]:
    """The files the ``--input`` values name (files, globs, directories; see
    :func:`beambleu.io.listing.expand`)."""
    return [f.path for f in expand(globs)]


def read_footer(path: str) -> pq.FileMetaData:
    from apache_beam.io.filesystems import FileSystems

    try:
        with FileSystems.open(path, compression_type="uncompressed") as fh:
            return pq.ParquetFile(fh).metadata
    except (pa.ArrowInvalid, pa.ArrowIOError, OSError) as exc:
        raise PipelineInputError(f"{path}: not a readable Parquet file ({exc})") from None


def _loose(t: pa.DataType) -> pa.DataType:
    """``t`` with what does not matter here left out: the nullability and name of a list's item
    field (nulls are handled row by row, whatever a schema promises)."""
    for is_list, make in ((pa.types.is_list, pa.list_), (pa.types.is_large_list, pa.large_list),
                          (pa.types.is_list_view, pa.list_view), (pa.types.is_large_list_view, pa.large_list_view)):
        if is_list(t):
            return make(_loose(t.value_type))
    return t


def _comparable(schema: pa.Schema, columns: Sequence[str]) -> pa.Schema:
    """The needed columns (in the spec's order) with their types: what must be the same in every
    shard. Nullability and field metadata are not compared."""
    return pa.schema([pa.field(c, _loose(schema.field(c).type)) for c in columns if c in schema.names])


def _unknown(t: pa.DataType) -> bool:
    """A JSON Lines column whose first rows hold only nulls (or empty arrays): its type is not known yet."""
    return pa.types.is_null(t) or (pa.types.is_list(t) and pa.types.is_null(t.value_type))


def _known_types(looked, columns: Sequence[str]) -> Dict[str, pa.DataType]:
    """Each needed column's type in the first text file that knows it."""
    known: Dict[str, pa.DataType] = {}
    for fmt, schema, _ in looked:
        if fmt != "parquet":
            for c in columns:
                if c in schema.names and not _unknown(schema.field(c).type):
                    known.setdefault(c, schema.field(c).type)
    return known


def plan(globs: Sequence[str], spec: InputSpec, max_workers: int = 16, input_format: str = "auto") -> Plan:
    """List the inputs, read each Parquet file's footer and each text file's first block, check
    them against ``spec`` and each other, and make the work items. ``input_format``: ``auto`` (by
    each file's name) or one of :data:`beambleu.io.formats.FORMATS` for every file."""
    if input_format != "auto" and input_format not in FORMATS:
        raise UsageError(f"--input-format {input_format!r}: expected auto or one of {', '.join(FORMATS)}")
    found = expand(globs)
    columns = spec.columns
    references = list(spec.reference_columns) if spec.reference_columns else [spec.references_column]
    one_reference = None if spec.reference_columns else spec.references_column

    def look(f):
        fmt = format_of(f.path, input_format)
        if fmt == "parquet":
            meta = read_footer(f.path)
            try:
                return fmt, meta.schema.to_arrow_schema(), meta
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                raise PipelineInputError(f"{f.path}: unreadable schema ({exc})") from None
        partitioned = dict(f.partitions)
        probed = probe(f.path, fmt, f.size, [c for c in columns if c not in partitioned], one_reference, references)
        return fmt, probed.schema, probed

    with ThreadPoolExecutor(max_workers=max_workers) as pool:
        looked = list(pool.map(look, found))
    known = _known_types(looked, columns)

    def resolved(name: str, t: pa.DataType) -> pa.DataType:  # a JSON Lines column of nulls: as the other files have it
        if not _unknown(t):
            return t
        return known.get(name, pa.list_(pa.string()) if name == one_reference or pa.types.is_list(t) else pa.string())

    items, reference, first_schema, total, exact, formats, partition_columns = [], None, None, 0, True, {}, {}
    for i, (f, (fmt, schema, info)) in enumerate(zip(found, looked)):
        if fmt != "parquet":
            if info.exact and info.rows == 0 and not schema.names:
                continue  # an empty file: nothing to check, nothing to read
            schema = pa.schema([pa.field(c.name, resolved(c.name, c.type)) for c in schema])
        file_schema = schema  # (the types read)
        if fmt == "jsonl" and one_reference in schema.names and pa.types.is_string(schema.field(one_reference).type):
            i_ref = schema.get_field_index(one_reference)  # one reference per row: handed on as a list
            schema = schema.set(i_ref, pa.field(one_reference, pa.list_(pa.string())))
        for column, _ in f.partitions:
            if column in schema.names:
                raise PipelineInputError(f"{f.path}: column {column!r} is both in the file and a partition folder "
                                         f"of its path ({column}=...)")
            partition_columns.setdefault(column, None)
        schema = pa.schema(list(schema) + [pa.field(c, pa.string()) for c, _ in f.partitions])
        spec.check_schema(f.path, schema)
        cmp = _comparable(schema, columns)
        if reference is None:
            reference, first_schema = (f.path, cmp), schema
        elif not cmp.equals(reference[1]):
            # (the same columns, in the spec's order, in both: only types can differ)
            diff = [f"{a.name}: {a.type} vs {b.type}" for a, b in zip(cmp, reference[1]) if a.type != b.type]
            raise PipelineInputError(f"{f.path}: schema differs from {reference[0]} ({'; '.join(diff)})")
        formats[fmt] = None
        if fmt == "parquet":
            first = 0
            for rg in range(info.num_row_groups):
                rgm = info.row_group(rg)
                n = rgm.num_rows
                if n:
                    items.append(WorkItem(i, f.path, rg, first, n, rgm.total_byte_size, f.partitions))
                first += n
            total += info.num_rows
            continue
        if info.rows or not info.exact:
            items.append(WorkItem(i, f.path, 0, 0, info.rows, f.size, f.partitions,
                                  text_read(fmt, f.path, file_schema, one_reference, references), info.exact))
        total += info.rows
        exact = exact and info.exact
    if total == 0 and exact:
        raise PipelineInputError(f"{', '.join(globs)}: the input has no rows")
    # largest first: runners that deal work out round-robin (the local FnApiRunner does) then
    # give each worker a similar share of the bytes; the order never changes a result
    items.sort(key=lambda it: (-it.nbytes, it.file_index, it.row_group))
    # the needed columns' types (the same in every file), then the first file's other columns
    schema = pa.schema(list(reference[1]) + [c for c in first_schema if c.name not in reference[1].names])
    return Plan([f.path for f in found], items, total, schema, exact, tuple(sorted(formats)), tuple(partition_columns),
                tuple(directories(globs)))


def _parquet_batches(item: WorkItem, columns: Sequence[str], batch_size: int):
    from apache_beam.io.filesystems import FileSystems

    try:
        with FileSystems.open(item.path, compression_type="uncompressed") as fh:
            pf = pq.ParquetFile(fh, page_checksum_verification=True)  # pages written without one are not checked
            # one thread, as bleu_core.parquet.iter_batches: decoding the columns on Arrow's pool of
            # threads costs more CPU for the same batches (issue 34: 0.3-0.4 CPU-s of 10 at 1M pairs)
            table = pf.read_row_group(item.row_group, columns=list(columns), use_threads=False)
    except (pa.ArrowInvalid, pa.ArrowIOError, OSError) as exc:  # a failed checksum is an OSError
        raise PipelineInputError(f"{item.path}: row group {item.row_group} unreadable ({exc})") from None
    if table.num_rows != item.num_rows:
        raise PipelineInputError(
            f"{item.path}: row group {item.row_group} has {table.num_rows} rows, its footer says {item.num_rows}")
    for offset in range(0, table.num_rows, batch_size):
        piece = table.slice(offset, batch_size).combine_chunks()  # one chunk per column
        yield item.first_row + offset, piece.to_batches()[0]
    # (no release_unused() per row group: the allocator reuses the memory for the next one and
    # returns what stays unused itself; releasing it each time cost 0.2 CPU-s per 1M pairs in page
    # faults, for 4% less peak memory)


def _with_partitions(batch: pa.RecordBatch, columns: Sequence[str], partitions: Dict[str, Optional[str]]):
    """``batch`` with the partition columns among ``columns`` added (strings, one value), in ``columns``' order."""
    n = batch.num_rows
    arrays = [batch.column(c) if c not in partitions else pa.repeat(pa.scalar(partitions[c], pa.string()), n)
              for c in columns]
    return pa.RecordBatch.from_arrays(arrays, names=list(columns))


def read_batches(item: WorkItem, columns: Sequence[str], batch_size: int):
    """Yield (first_row_in_file, RecordBatch) for one work item (a Parquet row group, a text
    file): ``columns``, the partition columns among them added; a whole text file's memory is given
    back to the system after it."""
    partitions = {c: v for c, v in item.partitions if c in columns}
    if item.text is not None:
        batches = read_text(item.path, item.text, batch_size, [c for c in columns if c not in partitions])
    else:
        batches = _parquet_batches(item, [c for c in columns if c not in partitions], batch_size)
    for first_row, batch in batches:
        yield first_row, _with_partitions(batch, columns, partitions) if partitions else batch
    if item.text is not None:
        pa.default_memory_pool().release_unused()

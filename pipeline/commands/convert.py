"""``beambleu convert``: sacrebleu-style text files -> Parquet shards for ``beambleu run``.

Rows: ``candidate`` (string), ``references`` (list<string>), ``line`` (int64, 1-based line
number: a stable segment id), and one string column per ``--set key=value``. Files are read
exactly as ``beambleu score`` reads them, once each, streaming, all in lockstep.

Several system outputs (``-i a.txt b.txt``, as sacrebleu takes them) share the references: each
segment gets one row per system, next to each other (segment by segment, so that ``beambleu run``
finds the rows that share a reference list in one batch), and a ``system`` string column names
the system: the file's name without its directory, a ``.gz`` and its last extension
(``sys.alpha.txt`` -> ``sys.alpha``), or ``--system-names a,b`` (one per file, in order, each
once). ``--system-names`` with one system output adds the column too.

Instead of reference files, ``-t SET -l PAIR`` takes the references of a sacrebleu test set
(:mod:`beambleu.commands.testsets`; several sets, comma-separated, one after the other), and
``--origlang``/``--subset`` keep the lines sacrebleu keeps; ``line`` stays the line number in
the system output (and test set), so it still names the segment.

The output owns its path (:mod:`beambleu.io.ownership`): ``-o x.parquet`` is written to a staged
file beside it and renamed into place; ``-o DIR`` gets its ``part-NNNNN.parquet`` shards and a
manifest listing them in a staged directory that then replaces DIR by one rename, so an
earlier, larger conversion leaves no stale parts. ``--overwrite`` replaces only a regular file
or a directory beambleu wrote. On any error or interruption nothing is left behind.
"""

from __future__ import annotations

import os
import sys
from typing import Callable, Dict, Iterator, List, Optional, Tuple

from ..errors import UsageError, terminate_as_interrupt
from ..io.ownership import (Target, check_outputs, commit_dir, commit_file, remove_stale_staging, remove_tree,
                            staging_path, write_manifest)
from ..io.textfiles import InputError, add_max_line_bytes, iter_chunks
from . import testsets
from .testsets import add_testset_arguments

__all__ = ["build_parser", "parse_sets", "run", "system_names"]


def build_parser(p):
    p.add_argument("refs", nargs="*", metavar="REF",
                   help="reference file(s), one segment per line (.gz ok); or -t and -l instead")
    p.add_argument("--input", "-i", required=True, nargs="+", metavar="HYP",
                   help="system output file(s) (- for standard input); several share the references, and a system "
                        "column names each file's rows (its name without directory and extension, or --system-names)")
    p.add_argument("--system-names", default=None, metavar="A,B",
                   help="the system column's value for each system output, in order (default with several: each "
                        "file's name without directory and extension)")
    p.add_argument("--output", "-o", required=True, metavar="PATH",
                   help="a .parquet file, or a directory that gets part-NNNNN.parquet shards and beambleu's "
                        "manifest")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="a constant string column, e.g. --set system=alpha --set langpair=en-de (repeatable)")
    p.add_argument("--rows-per-shard", type=int, default=1_000_000, metavar="N",
                   help="rows per shard when --output is a directory (default: %(default)s)")
    p.add_argument("--row-group-size", type=int, default=50_000, metavar="N",
                   help="rows per Parquet row group (default: %(default)s)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace an earlier output of beambleu (a file, or a directory with its manifest)")
    add_max_line_bytes(p)
    add_testset_arguments(p, info=False)
    return p


def parse_sets(items: List[str], systems: bool = False) -> Dict[str, str]:
    """``--set KEY=VALUE`` items as columns; ``systems``: the rows get a ``system`` column already."""
    out: Dict[str, str] = {}
    reserved = {"candidate", "references", "line"}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"--set {item!r}: expected KEY=VALUE")
        if key == "system" and systems:
            raise UsageError(f"--set {item!r}: the system column names the system outputs (several -i, or "
                             "--system-names)")
        if key in reserved or key in out:
            raise UsageError(f"--set {item!r}: column {key!r} is {'reserved' if key in reserved else 'given twice'}")
        out[key] = value
    return out


def _stem(path: str) -> str:
    """``dir/sys.alpha.txt(.gz)`` -> ``sys.alpha``; standard input -> ``stdin``."""
    if path == "-":
        return "stdin"
    name = os.path.basename(path.rstrip("/"))
    if name.endswith(".gz"):
        name = name[:-3]
    stem, dot, _ = name.rpartition(".")
    return stem if dot and stem else name


def system_names(inputs: List[str], given: Optional[str]) -> Optional[List[str]]:
    """The ``system`` value of each system output (None: one output, no ``--system-names``: no
    column). Names must be as many as the outputs and different; bad usage otherwise."""
    if inputs.count("-") > 1:
        raise UsageError("-i: standard input (-) can be read once")
    if given is None:
        if len(inputs) == 1:
            return None
        names = [_stem(p) for p in inputs]
        for i, name in enumerate(names):
            if name in names[:i]:
                raise UsageError(f"-i: {inputs[names.index(name)]} and {inputs[i]} are both named {name!r} by their "
                                 "file names; name the systems with --system-names")
        return names
    names = [n.strip() for n in given.split(",")]
    if len(names) != len(inputs):
        raise UsageError(f"--system-names {given!r}: {len(names)} name{'s' if len(names) != 1 else ''} for "
                         f"{len(inputs)} system output{'s' if len(inputs) != 1 else ''} (-i)")
    for i, name in enumerate(names):
        if not name:
            raise UsageError(f"--system-names {given!r}: an empty name")
        if name in names[:i]:
            raise UsageError(f"--system-names {given!r}: {name!r} names two systems")
    return names


def run(args) -> int:
    import pyarrow as pa


    inputs = args.input if isinstance(args.input, list) else [args.input]
    names = system_names(inputs, args.system_names)
    sets = parse_sets(args.set, systems=names is not None)
    if args.rows_per_shard < 1 or args.row_group_size < 1:
        raise UsageError("--rows-per-shard and --row-group-size must be at least 1")
    testsets.check_testset_args(args)
    single = args.output.endswith(".parquet")
    check_outputs([Target("--output", args.output, "file" if single else "dir")],
                  [*inputs, *args.refs, *testsets.cache_dirs(args)], args.overwrite)
    schema = pa.schema([("candidate", pa.string()), ("references", pa.list_(pa.string())), ("line", pa.int64())]
                       + ([("system", pa.string())] if names else []) + [(k, pa.string()) for k in sets])
    lines_per_block = max(1, args.row_group_size // len(inputs))  # a block of rows is a row group
    shown = {"input": inputs[0] if len(inputs) == 1 else inputs, **({"systems": names} if names else {})}
    if args.test_set is None:
        blocks = _numbered(iter_chunks(inputs, args.refs, args.max_line_bytes, max_rows=lines_per_block))
        meta = {**shown, "references": args.refs}
    else:  # the test set's references (downloaded first if need be), read before anything is written
        ref_files = testsets.reference_files(args)
        references = testsets.read_references(ref_files)
        keep = testsets.keep_mask(args, len(references))
        if keep is not None and not keep.any():
            raise testsets.empty_subset_error(args)
        blocks = _testset_blocks(args, inputs, references, keep, lines_per_block)
        meta = {**shown, "references": [f for files in ref_files for f in files],
                **{k: v for k, v in (("test_set", args.test_set), ("langpair", args.langpair),
                                     ("origlang", args.origlang), ("subset", args.subset)) if v is not None}}
    target = os.path.abspath(args.output)
    created = _make_parents(target, args.output)
    remove_stale_staging(target)  # what a killed earlier conversion left
    staged = staging_path(target)
    try:
        with terminate_as_interrupt():
            _convert(args, blocks, staged, target, single, schema, sets, names, meta)
    except OSError as exc:  # reading errors are InputErrors already: this is writing (e.g. the disk is full)
        _undo(staged, created)
        raise InputError(args.output, f"cannot write: {exc.strerror or exc}") from None
    except BaseException:
        _undo(staged, created)
        raise
    return 0


def _numbered(blocks) -> Iterator[Tuple[List[List[str]], List[List[str]], List[int]]]:
    """``iter_chunks`` blocks with the 1-based line number of each row."""
    done = 0
    for systems, refs in blocks:
        yield systems, refs, list(range(done + 1, done + 1 + len(refs)))
        done += len(refs)


def _testset_blocks(args, inputs: List[str], references: List[List[str]], keep, lines_per_block: int
                    ) -> Iterator[Tuple[List[List[str]], List[List[str]], List[int]]]:
    """Blocks of the system outputs with the test set's references, the lines ``keep`` drops
    (``--origlang``/``--subset``) left out. The system outputs must have as many lines as the
    test set (checked at their end, as ``iter_chunks`` checks reference files; the other outputs
    are read as the first one's "references" for that check)."""
    n, done = len(references), 0
    for first, others in iter_chunks(inputs[:1], inputs[1:], args.max_line_bytes, max_rows=lines_per_block):
        hyps = [first[0]] + [[row[j] for row in others] for j in range(len(inputs) - 1)]
        rows = [i for i in range(done, min(done + len(hyps[0]), n)) if keep is None or keep[i]]
        if rows:
            yield [[h[i - done] for i in rows] for h in hyps], [references[i] for i in rows], [i + 1 for i in rows]
        done += len(hyps[0])
    if done != n:
        raise InputError(inputs[0], f"has {done} lines but test set {args.test_set} ({args.langpair}) has {n}")


def _convert(args, blocks, staged, target, single, schema, sets, names, meta) -> None:
    """Write the staged output, then commit it by one rename."""
    if single:
        _write(blocks, lambda i: staged, sys.maxsize, schema, sets, names)
        commit_file(staged, target)
    else:
        os.mkdir(staged)
        n, parts = _write(blocks, lambda i: os.path.join(staged, f"part-{i:05d}.parquet"), args.rows_per_shard,
                          schema, sets, names)
        write_manifest(staged, [os.path.basename(p) for p in parts],
                       {"command": "beambleu convert", "rows": n, "columns": schema.names, **meta})
        commit_dir(staged, target)


def _rows(systems: List[List[str]], refs: List[List[str]], lines: List[int], names: Optional[List[str]],
          sets: Dict[str, str]) -> Dict[str, list]:
    """A block's columns: with ``names``, each line's row of every system, one after the other."""
    if names is None:
        cols = {"candidate": systems[0], "references": refs, "line": lines}
    else:
        k = len(systems)
        cols = {"candidate": [h[i] for i in range(len(lines)) for h in systems],
                "references": [r for r in refs for _ in range(k)],
                "line": [n for n in lines for _ in range(k)],
                "system": names * len(lines)}
    n = len(cols["line"])
    return {**cols, **{k: [v] * n for k, v in sets.items()}}


def _write(blocks, part_path: Callable[[int], str], rows_per_part: int, schema, sets,
           names: Optional[List[str]] = None) -> Tuple[int, List[str]]:
    """Write the rows of ``blocks`` ((systems, references, line numbers) of each row) to parts of
    ``rows_per_part`` rows (one row group per block or part boundary); (rows written, part paths)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    written, in_part, parts, writer = 0, 0, [], None
    try:
        for systems, refs, lines in blocks:
            table = pa.table(_rows(systems, refs, lines, names, sets), schema=schema)
            i = 0
            while i < table.num_rows:
                if writer is None or in_part == rows_per_part:
                    if writer is not None:
                        writer.close()
                    parts.append(part_path(len(parts)))
                    writer, in_part = pq.ParquetWriter(parts[-1], schema), 0
                take = min(table.num_rows - i, rows_per_part - in_part)
                writer.write_table(table.slice(i, take))
                i, in_part, written = i + take, in_part + take, written + take
    finally:
        if writer is not None:
            writer.close()
    return written, parts


def _make_parents(target: str, shown: str) -> List[str]:
    """Create the missing directories above ``target``; the ones created, deepest first."""
    missing = []
    parent = os.path.dirname(target)
    while not os.path.lexists(parent):
        missing.append(parent)
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise UsageError(f"{shown}: --output: {parent} is not a directory")
    try:
        for d in reversed(missing):
            os.mkdir(d)
    except OSError as exc:
        _undo(None, missing)
        raise UsageError(f"{shown}: --output: cannot create {d}: {exc.strerror or exc}") from None
    return missing


def _undo(staged, created: List[str]) -> None:
    """Remove the staged output and the directories made for it (if still empty)."""
    if staged:
        remove_tree(staged)
    for d in created:
        try:
            os.rmdir(d)
        except OSError:
            pass

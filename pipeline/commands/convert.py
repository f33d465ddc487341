"""``beambleu convert``: sacrebleu-style text files -> Parquet shards for ``beambleu run``.

Rows: ``candidate`` (string), ``references`` (list<string>), ``line`` (int64, 1-based line
number: a stable segment id), and one string column per ``--set key=value``. Files are read
exactly as ``beambleu score`` reads them, once each, streaming.

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
from typing import Callable, Dict, Iterator, List, Tuple

from ..errors import UsageError, terminate_as_interrupt
from ..io.ownership import (Target, check_outputs, commit_dir, commit_file, remove_stale_staging, remove_tree,
                            staging_path, write_manifest)
from ..io.textfiles import InputError, add_max_line_bytes, iter_chunks
from . import testsets
from .testsets import add_testset_arguments

__all__ = ["build_parser", "parse_sets", "run"]


def build_parser(p):
    p.add_argument("refs", nargs="*", metavar="REF",
                   help="reference file(s), one segment per line (.gz ok); or -t and -l instead")
    p.add_argument("--input", "-i", required=True, metavar="HYP", help="system output file (- for standard input)")
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


def parse_sets(items: List[str]) -> Dict[str, str]:
    out: Dict[str, str] = {}
    reserved = {"candidate", "references", "line"}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"--set {item!r}: expected KEY=VALUE")
        if key in reserved or key in out:
            raise UsageError(f"--set {item!r}: column {key!r} is {'reserved' if key in reserved else 'given twice'}")
        out[key] = value
    return out


def run(args) -> int:
    import pyarrow as pa


    sets = parse_sets(args.set)
    if args.rows_per_shard < 1 or args.row_group_size < 1:
        raise UsageError("--rows-per-shard and --row-group-size must be at least 1")
    testsets.check_testset_args(args)
    single = args.output.endswith(".parquet")
    check_outputs([Target("--output", args.output, "file" if single else "dir")],
                  [args.input, *args.refs, *testsets.cache_dirs(args)], args.overwrite)
    schema = pa.schema([("candidate", pa.string()), ("references", pa.list_(pa.string())), ("line", pa.int64())]
                       + [(k, pa.string()) for k in sets])
    if args.test_set is None:
        blocks = _numbered(iter_chunks([args.input], args.refs, args.max_line_bytes, max_rows=args.row_group_size))
        meta = {"input": args.input, "references": args.refs}
    else:  # the test set's references (downloaded first if need be), read before anything is written
        ref_files = testsets.reference_files(args)
        references = testsets.read_references(ref_files)
        keep = testsets.keep_mask(args, len(references))
        if keep is not None and not keep.any():
            raise testsets.empty_subset_error(args)
        blocks = _testset_blocks(args, references, keep)
        meta = {"input": args.input, "references": [f for files in ref_files for f in files],
                **{k: v for k, v in (("test_set", args.test_set), ("langpair", args.langpair),
                                     ("origlang", args.origlang), ("subset", args.subset)) if v is not None}}
    target = os.path.abspath(args.output)
    created = _make_parents(target, args.output)
    remove_stale_staging(target)  # what a killed earlier conversion left
    staged = staging_path(target)
    try:
        with terminate_as_interrupt():
            _convert(args, blocks, staged, target, single, schema, sets, meta)
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


def _testset_blocks(args, references: List[List[str]], keep) -> Iterator[Tuple[List[List[str]], List[List[str]],
                                                                               List[int]]]:
    """Blocks of the system output with the test set's references, the lines ``keep`` drops
    (``--origlang``/``--subset``) left out. The system output must have as many lines as the
    test set (checked at its end, as ``iter_chunks`` checks reference files)."""
    n, done = len(references), 0
    for systems, _ in iter_chunks([args.input], [], args.max_line_bytes, max_rows=args.row_group_size):
        hyps = systems[0]
        rows = [i for i in range(done, min(done + len(hyps), n)) if keep is None or keep[i]]
        if rows:
            yield [[hyps[i - done] for i in rows]], [references[i] for i in rows], [i + 1 for i in rows]
        done += len(hyps)
    if done != n:
        raise InputError(args.input, f"has {done} lines but test set {args.test_set} ({args.langpair}) has {n}")


def _convert(args, blocks, staged, target, single, schema, sets, meta) -> None:
    """Write the staged output, then commit it by one rename."""
    if single:
        _write(blocks, lambda i: staged, sys.maxsize, schema, sets)
        commit_file(staged, target)
    else:
        os.mkdir(staged)
        n, parts = _write(blocks, lambda i: os.path.join(staged, f"part-{i:05d}.parquet"), args.rows_per_shard,
                          schema, sets)
        write_manifest(staged, [os.path.basename(p) for p in parts],
                       {"command": "beambleu convert", "rows": n, "columns": schema.names, **meta})
        commit_dir(staged, target)


def _write(blocks, part_path: Callable[[int], str], rows_per_part: int, schema, sets) -> Tuple[int, List[str]]:
    """Write the rows of ``blocks`` ((systems, references, line numbers) of each row) to parts of
    ``rows_per_part`` rows (one row group per block or part boundary); (rows written, part paths)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    written, in_part, parts, writer = 0, 0, [], None
    try:
        for systems, refs, lines in blocks:
            hyps, i = systems[0], 0
            while i < len(hyps):
                if writer is None or in_part == rows_per_part:
                    if writer is not None:
                        writer.close()
                    parts.append(part_path(len(parts)))
                    writer, in_part = pq.ParquetWriter(parts[-1], schema), 0
                take = min(len(hyps) - i, rows_per_part - in_part)
                cols = {
                    "candidate": hyps[i:i + take],
                    "references": refs[i:i + take],
                    "line": lines[i:i + take],
                    **{k: [v] * take for k, v in sets.items()},
                }
                writer.write_table(pa.table(cols, schema=schema))
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

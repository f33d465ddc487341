"""``beambleu convert``: sacrebleu-style text files -> Parquet shards for ``beambleu run``.

Rows: ``candidate`` (string), ``references`` (list<string>), ``line`` (int64, 1-based line
number: a stable segment id), and one string column per ``--set key=value``. Files are read
exactly as ``beambleu score`` reads them.
"""

from __future__ import annotations

import itertools
import os
import uuid

from .textfiles import InputError, check_same_length, iter_pairs


def build_parser(p):
    p.add_argument("refs", nargs="+", metavar="REF", help="reference file(s), one segment per line")
    p.add_argument("--input", "-i", required=True, metavar="HYP", help="system output file")
    p.add_argument("--output", "-o", required=True, metavar="PATH",
                   help="a .parquet file, or a directory that gets part-NNNNN.parquet shards")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="a constant string column, e.g. --set system=alpha --set langpair=en-de (repeatable)")
    p.add_argument("--rows-per-shard", type=int, default=1_000_000, metavar="N",
                   help="rows per shard when --output is a directory (default: %(default)s)")
    p.add_argument("--row-group-size", type=int, default=50_000, metavar="N",
                   help="rows per Parquet row group (default: %(default)s)")
    p.add_argument("--overwrite", action="store_true", help="replace existing output files")
    return p


def parse_sets(items):
    out = {}
    reserved = {"candidate", "references", "line"}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--set {item!r}: expected KEY=VALUE")
        if key in reserved or key in out:
            raise ValueError(f"--set {item!r}: column {key!r} is {'reserved' if key in reserved else 'given twice'}")
        out[key] = value
    return out


def run(args) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    sets = parse_sets(args.set)
    if args.rows_per_shard < 1 or args.row_group_size < 1:
        raise ValueError("--rows-per-shard and --row-group-size must be at least 1")
    n = check_same_length(args.input, args.refs)
    single = args.output.endswith(".parquet")
    n_shards = 1 if single else -(-n // args.rows_per_shard)
    targets = [args.output] if single else [os.path.join(args.output, f"part-{i:05d}.parquet") for i in range(n_shards)]
    for t in targets:
        if os.path.exists(t) and not args.overwrite:
            raise InputError(t, "exists (use --overwrite to replace it)")
    os.makedirs(os.path.dirname(os.path.abspath(targets[0])), exist_ok=True)
    schema = pa.schema([("candidate", pa.string()), ("references", pa.list_(pa.string())), ("line", pa.int64())]
                       + [(k, pa.string()) for k in sets])
    pairs = iter_pairs(args.input, args.refs)
    line = 0
    tmps = []
    try:
        for target in targets:
            per_shard = n if single else args.rows_per_shard
            tmp = f"{target}.tmp-{uuid.uuid4().hex[:8]}"
            tmps.append((tmp, target))
            with pq.ParquetWriter(tmp, schema) as writer:
                remaining = per_shard
                while remaining > 0:
                    chunk = list(itertools.islice(pairs, min(args.row_group_size, remaining)))
                    if not chunk:
                        break
                    cols = {
                        "candidate": [h for h, _ in chunk],
                        "references": [r for _, r in chunk],
                        "line": list(range(line + 1, line + 1 + len(chunk))),
                        **{k: [v] * len(chunk) for k, v in sets.items()},
                    }
                    writer.write_table(pa.table(cols, schema=schema))
                    line += len(chunk)
                    remaining -= len(chunk)
        for tmp, target in tmps:  # only now, when every shard is complete
            os.replace(tmp, target)
    finally:
        for tmp, _ in tmps:
            if os.path.exists(tmp):
                os.remove(tmp)
    return 0

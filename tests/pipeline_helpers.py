"""Helpers for pipeline tests: shards from the shared corpora, running `beambleu run` in-process."""

from __future__ import annotations

import contextlib
import io
import json
import random
from pathlib import Path
from typing import Dict, List, Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from .oracle import CORPORA, read_lines

# 13a test sets with all their systems: 2 references, 1 reference, 1 reference
FOLDERS = ["wmt22/de-en", "wmt21/xh-zu", "wmt22/en-liv"]


def corpus_rows(folders: Sequence[str] = FOLDERS, nrefs_max: int = 2) -> List[Dict]:
    rows = []
    for folder in folders:
        d = CORPORA / folder
        refs = sorted(d.glob("ref.*.txt"))[:nrefs_max]
        ref_lines = [read_lines(r) for r in refs]
        for sys_file in sorted(d.glob("sys.*.txt")):
            system = sys_file.name[len("sys."):-len(".txt")]
            for i, (hyp, *rs) in enumerate(zip(read_lines(sys_file), *ref_lines)):
                rows.append({"candidate": hyp, "references": rs, "system": system, "langpair": folder,
                             "line": i + 1})
    return rows


SCHEMA = pa.schema([("candidate", pa.string()), ("references", pa.list_(pa.string())), ("system", pa.string()),
                    ("langpair", pa.string()), ("line", pa.int64())])


def write_shards(rows: List[Dict], out: Path, n_shards: int, row_group_size: int, shuffle_seed=None,
                 schema: pa.Schema = SCHEMA) -> str:
    out.mkdir(parents=True, exist_ok=True)
    rows = list(rows)
    if shuffle_seed is not None:
        random.Random(shuffle_seed).shuffle(rows)
    per = -(-len(rows) // n_shards)
    for s in range(n_shards):
        chunk = rows[s * per:(s + 1) * per]
        table = pa.Table.from_pylist(chunk, schema=schema)
        pq.write_table(table, out / f"part-{s:03d}.parquet", row_group_size=row_group_size)
    return str(out / "*.parquet")


def run_cli(*args) -> tuple:
    """(exit code, stdout, stderr) of `beambleu run ...`, in this process."""
    from beambleu.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(["run", *map(str, args)])
        except SystemExit as exc:  # argparse
            rc = exc.code
    return rc, out.getvalue(), err.getvalue()


def load(path) -> Dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def bleu_of(obj: Dict) -> Dict:
    """BLEU's score object in a group's (or the corpus') JSON object: result documents of format 2
    list every metric's object under ``scores``, one metric too; BLEU's is the one whose ``metric`` is
    ``bleu``, and there is exactly one."""
    found = [s for s in obj["scores"] if s["metric"] == "bleu"]
    assert len(found) == 1, obj
    return found[0]


def comparable(doc: Dict) -> Dict:
    """The parts of a result that must not depend on sharding, order or runner (BLEU's)."""
    def strip(g):
        b = bleu_of(g)
        return {"n_pairs": g["n_pairs"],
                **{k: b[k] for k in ("score", "counts", "totals", "sys_len", "ref_len", "nrefs", "signature")}}
    return {"metrics": doc["metrics"], "corpus": strip(doc["corpus"]),
            "groups": [(g["group_by"], g["key"], strip(g)) for g in doc["groups"]]}

"""The same pairs in every layout ``beambleu run --input`` reads: one Parquet file, a Spark-style
directory (parts, ``_SUCCESS``, checksums, ``_temporary/``), a Hive-partitioned copy, JSON Lines,
CSV, TSV (plain and gzip); and what sacrebleu scores them (the expected values, computed here
from the rows, never by beambleu)."""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path
from typing import Dict, List, Optional

import pyarrow as pa
import pyarrow.parquet as pq

from ...oracle import REPO, read_lines

__all__ = ["SCHEMA", "pairs", "sacrebleu_bleu", "without_inputs", "write_csv", "write_hive", "write_jsonl",
           "write_parquet", "write_spark_dir"]

SAMPLE = REPO / "examples" / "sample"
SCHEMA = pa.schema([("candidate", pa.string()), ("references", pa.list_(pa.string())), ("system", pa.string()),
                    ("line", pa.int64())])


def pairs() -> List[Dict]:
    """examples/sample's two systems and two references, long layout, with what CSV must quote
    (commas, quotes), non-ASCII text, an empty candidate and a missing second reference."""
    refs_a, refs_b = read_lines(SAMPLE / "ref.A.txt"), read_lines(SAMPLE / "ref.B.txt")
    rows = []
    for system in ("alpha", "beta"):
        for i, hyp in enumerate(read_lines(SAMPLE / f"sys.{system}.txt")):
            rows.append({"candidate": hyp, "references": [refs_a[i], refs_b[i]], "system": system, "line": i + 1})
    rows[3]["candidate"] = 'He said "no, never", and left.'
    rows[4]["candidate"] = "Le café est fermé, dit-il."
    rows[5]["candidate"] = ""
    for r in rows:
        if r["line"] == 9:
            r["references"] = [r["references"][0], None]
    return rows


def sacrebleu_bleu(rows: List[Dict]) -> float:
    """sacrebleu's corpus BLEU of ``rows`` (default options; missing references as None)."""
    from sacrebleu.metrics import BLEU

    streams = [[r["references"][k] for r in rows] for k in range(2)]
    return BLEU().corpus_score([r["candidate"] for r in rows], streams).score


def write_parquet(rows: List[Dict], path: Path, row_group_size: int = 16, schema: pa.Schema = SCHEMA) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path, row_group_size=row_group_size)
    return path


def write_spark_dir(rows: List[Dict], root: Path) -> Path:
    """Two parts and what Spark (and Hadoop) leave beside them."""
    half = len(rows) // 2
    write_parquet(rows[:half], root / "part-00000-abc.snappy.parquet")
    write_parquet(rows[half:], root / "part-00001-abc.snappy.parquet")
    (root / "_SUCCESS").write_bytes(b"")
    (root / ".part-00000-abc.snappy.parquet.crc").write_bytes(b"\x00crc")
    (root / "_temporary" / "0").mkdir(parents=True)
    (root / "_temporary" / "0" / "part-00002.parquet").write_bytes(b"half-written")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "x.jsonl").write_text("not even JSON\n")
    return root


def write_hive(rows: List[Dict], root: Path, column: str = "system") -> Path:
    """``root/column=value/part-0.parquet``, the column left out of the files (as Hive, Spark and
    pyarrow write them); a ``_SUCCESS`` at the top."""
    schema = pa.schema([f for f in SCHEMA if f.name != column])
    for value in dict.fromkeys(r[column] for r in rows):
        part = [{k: v for k, v in r.items() if k != column} for r in rows if r[column] == value]
        write_parquet(part, root / f"{column}={value}" / "part-0.parquet", schema=schema)
    (root / "_SUCCESS").write_bytes(b"")
    return root


def write_jsonl(rows: List[Dict], path: Path, compress: bool = False) -> Path:
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(text) if compress else text)
    return path


def write_csv(rows: List[Dict], path: Path, delimiter: str = ",", compress: bool = False) -> Path:
    """Columns candidate, ref_a, ref_b (a missing reference: an empty field), system, line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        if delimiter == "\t":  # TSV: no quoting, a quote is text
            w = csv.writer(fh, delimiter="\t", quoting=csv.QUOTE_NONE, escapechar=None, quotechar=None,
                           lineterminator="\n")
        else:
            w = csv.writer(fh, lineterminator="\r\n")
        w.writerow(["candidate", "ref_a", "ref_b", "system", "line"])
        for r in rows:
            w.writerow([r["candidate"], r["references"][0], r["references"][1] or "", r["system"], r["line"]])
    if compress:
        data = path.read_bytes()
        path.unlink()
        path = path.with_name(path.name + ".gz")
        path.write_bytes(gzip.compress(data))
    return path


def without_inputs(doc: Dict, also: Optional[List[str]] = None) -> Dict:
    """A result document without what describes the input (its files, columns, formats)."""
    return {k: v for k, v in doc.items() if k not in ["inputs", *(also or [])]}

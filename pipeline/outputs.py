"""Writing results: one final step, atomic files, nothing partial.

Everything the job writes is produced by a single final transform that runs only after every
input row has been combined (so a failed job writes nothing): the JSON document, the optional
group table, and the move of per-pair parts from their temporary directory into place. Files
are written to a temporary name next to the destination and renamed (``os.replace`` locally;
on object stores, objects only appear once complete).
"""

from __future__ import annotations

import csv
import io
import json
import uuid
from dataclasses import dataclass
from typing import Dict, List, Optional

import pyarrow as pa

from bleu_core import Bleu

from .inputs import InputSpec


@dataclass(frozen=True)
class OutputConfig:
    output: Optional[str]
    groups_output: Optional[str] = None
    sentence_output: Optional[str] = None
    sentence_tmp: Optional[str] = None
    overwrite: bool = False


def exists(path: str) -> bool:
    from apache_beam.io.filesystems import FileSystems

    return FileSystems.exists(path)


def check_outputs(cfg: OutputConfig) -> None:
    """Refuse to start when an output exists (unless --overwrite)."""
    from .inputs import PipelineInputError

    for flag, path in (("--output", cfg.output), ("--groups-output", cfg.groups_output),
                       ("--sentence-output", cfg.sentence_output)):
        if path and exists(path) and not cfg.overwrite:
            raise PipelineInputError(f"{path}: {flag} exists (use --overwrite to replace it)")
    if cfg.groups_output and not cfg.groups_output.endswith((".parquet", ".csv")):
        raise PipelineInputError(f"{cfg.groups_output}: --groups-output must end in .parquet or .csv")


def _delete(paths: List[str]) -> None:
    from apache_beam.io.filesystems import FileSystems

    present = [p for p in paths if FileSystems.exists(p)]
    if present:
        FileSystems.delete(present)


def write_atomic(path: str, data: bytes, overwrite: bool) -> None:
    from apache_beam.io.filesystems import FileSystems

    tmp = f"{path}.beambleu-tmp-{uuid.uuid4().hex[:12]}"
    with FileSystems.create(tmp, compression_type="uncompressed") as fh:
        fh.write(data)
    if FileSystems.exists(path):
        if not overwrite:
            _delete([tmp])
            if _read(path) == data:  # written by an earlier attempt of this step (a retry after a worker died)
                return
            raise FileExistsError(f"{path} appeared while the job ran; not replaced (use --overwrite)")
        _delete([path])
    FileSystems.rename([tmp], [path])


def _read(path: str) -> bytes:
    from apache_beam.io.filesystems import FileSystems

    with FileSystems.open(path, compression_type="uncompressed") as fh:
        return fh.read()


def groups_table(groups: List[Dict], spec: InputSpec, order: int) -> pa.Table:
    key_cols = []
    for gs in spec.group_by:
        for c in gs:
            if c not in key_cols:
                key_cols.append(c)
    rows = {"group_by": [",".join(g["group_by"]) for g in groups]}
    for c in key_cols:
        rows[c] = [g["key"].get(c) for g in groups]
    for name in ("score", "bp", "ratio", "sys_len", "ref_len", "n_pairs", "nrefs", "signature"):
        rows[name] = [g[name] for g in groups]
    for name in ("confidence_mean", "confidence_low", "confidence_high", "confidence_half_width", "baseline",
                 "p_value", "difference"):
        if any(name in g for g in groups):
            rows[name] = [g.get(name) for g in groups]
    for n in range(order):
        rows[f"counts_{n + 1}"] = [g["counts"][n] for g in groups]
        rows[f"totals_{n + 1}"] = [g["totals"][n] for g in groups]
        rows[f"precision_{n + 1}"] = [g["precisions"][n] for g in groups]
    # key columns mix strings, ints and nulls across grouping sets: keep each column's own type
    arrays = {}
    for name, values in rows.items():
        try:
            arrays[name] = pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            arrays[name] = pa.array([None if v is None else str(v) for v in values], pa.string())
    return pa.table(arrays)


def table_bytes(table: pa.Table, path: str) -> bytes:
    if path.endswith(".csv"):
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(table.column_names)
        for row in zip(*(table.column(c).to_pylist() for c in table.column_names)):
            w.writerow(["" if v is None else v for v in row])
        return out.getvalue().encode("utf-8")
    import pyarrow.parquet as pq

    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return sink.getvalue().to_pybytes()


def move_sentence_parts(parts: List[str], cfg: OutputConfig) -> int:
    from apache_beam.io.filesystems import FileSystems

    dest = cfg.sentence_output
    parts = sorted(set(parts))
    targets = [FileSystems.join(dest, p.rsplit("/", 1)[-1]) for p in parts]
    if parts and not any(FileSystems.exists(p) for p in parts) and all(FileSystems.exists(t) for t in targets):
        return len(parts)  # moved by an earlier attempt of this step (a retry after a worker died)
    if FileSystems.exists(dest):
        if not cfg.overwrite:
            raise FileExistsError(f"{dest} appeared while the job ran; not replaced (use --overwrite)")
        FileSystems.delete([dest])
    FileSystems.mkdirs(dest)
    if parts:
        FileSystems.rename(parts, targets)
    _delete([cfg.sentence_tmp])
    return len(parts)


class Finalize:
    """The final step: called once with every combined element; writes all outputs."""

    def __init__(self, bleu: Bleu, spec: InputSpec, cfg: OutputConfig, inputs: Dict, sig=None):
        self.bleu, self.spec, self.cfg, self.inputs, self.sig = bleu, spec, cfg, inputs, sig

    def __call__(self, elements):
        from .transforms import scored

        stats = [e for e in elements if e[0][0] != "__part__"]
        parts = [e[0][1] for e in elements if e[0][0] == "__part__"]
        corpus, groups = scored(self.bleu, self.spec, stats, self.sig)
        if corpus is None:
            raise ValueError("no pairs were scored")
        document = {
            "signature": corpus["signature"],
            "corpus": corpus,
            "groups": groups,
            "inputs": {**self.inputs, "pairs": corpus["n_pairs"]},
        }
        if self.sig is not None and self.sig.n_boot:
            document["bootstrap"] = {"n": self.sig.n_boot, "seed": self.sig.seed, "method": "poisson",
                                     "paired": self.sig.paired, "baseline": self.sig.baseline,
                                     "system_column": "system" if self.spec.wide else self.sig.system_column}
        written = []
        if self.cfg.sentence_output:
            n = move_sentence_parts(parts, self.cfg)
            document["inputs"]["sentence_parts"] = n
            written.append(self.cfg.sentence_output)
        if self.cfg.groups_output:
            table = groups_table(groups, self.spec, self.bleu.max_ngram_order)
            write_atomic(self.cfg.groups_output, table_bytes(table, self.cfg.groups_output), self.cfg.overwrite)
            written.append(self.cfg.groups_output)
        if self.cfg.output:
            data = (json.dumps(document, indent=1, ensure_ascii=False) + "\n").encode("utf-8")
            write_atomic(self.cfg.output, data, self.cfg.overwrite)
            written.append(self.cfg.output)
        yield {"written": written, "corpus_score": corpus["score"], "pairs": corpus["n_pairs"]}

"""Writing results: one final step, staged outputs, committed all together or not at all.

Everything the job writes is produced by a single final transform that runs only after every
input row has been combined (so a failed job writes nothing). Each output is first written in
full to a hidden staging path beside its target, chosen on the driver (see
:mod:`pipeline.ownership`): per-pair parts go to a staging directory while the job runs, and the
final step adds its manifest, then writes the group table and the JSON document to theirs.
Only when every output is complete are they committed by renames, the per-pair directory first
and the JSON document last; on any failure the staging paths are removed.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from typing import Dict, List, Optional

import pyarrow as pa

from bleu_core import Bleu

from . import ownership
from .inputs import InputSpec


@dataclass(frozen=True)
class OutputConfig:
    """Targets and, for each, the staging path it is written to first (decided on the driver)."""

    output: Optional[str]
    groups_output: Optional[str] = None
    sentence_output: Optional[str] = None
    output_tmp: Optional[str] = None
    groups_tmp: Optional[str] = None
    sentence_tmp: Optional[str] = None
    #: the final step commits (nobody waits for the job, e.g. --detach); else the driver does,
    #: after the job succeeded, where it can hold off SIGINT/SIGTERM for the renames
    commit_in_job: bool = False
    #: with a group table, grouping sets of more groups stay out of the JSON document
    json_groups_limit: Optional[int] = None

    @classmethod
    def staged(cls, output=None, groups_output=None, sentence_output=None, commit_in_job=False,
               json_groups_limit=None) -> "OutputConfig":
        def tmp(path):
            return ownership.staging_path(path) if path else None

        return cls(output, groups_output, sentence_output, tmp(output), tmp(groups_output), tmp(sentence_output),
                   commit_in_job, json_groups_limit)

    def pairs(self):
        """(staged, target, kind) in commit order: the per-pair directory first, the JSON last."""
        return [(s, t, k) for s, t, k in ((self.sentence_tmp, self.sentence_output, "dir"),
                                          (self.groups_tmp, self.groups_output, "file"),
                                          (self.output_tmp, self.output, "file")) if t]

    def targets(self) -> List[ownership.Target]:
        return [ownership.Target(flag, path, kind) for flag, path, kind in (
            ("--output", self.output, "file"), ("--groups-output", self.groups_output, "file"),
            ("--sentence-output", self.sentence_output, "dir")) if path]

    def remove_staged(self) -> None:
        for staged, _, _ in self.pairs():
            ownership.remove_tree(staged)


def exists(path: str) -> bool:
    from apache_beam.io.filesystems import FileSystems

    return FileSystems.exists(path)


def check_groups_output(path: Optional[str]) -> None:
    from .errors import UsageError

    if path and not path.endswith((".parquet", ".csv")):
        raise UsageError(f"{path}: --groups-output must end in .parquet or .csv")


def _write(path: str, data: bytes) -> None:
    from apache_beam.io.filesystems import FileSystems

    with FileSystems.create(path, compression_type="uncompressed") as fh:
        fh.write(data)


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


def _csv_field(value) -> str:
    """One CSV field: strings always quoted (so "" is the empty string), null an empty unquoted
    field, numbers as Python writes them (floats round-trip exactly), booleans true/false."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return '"' + str(value).replace('"', '""') + '"'


def table_bytes(table: pa.Table, path: str) -> bytes:
    """The group table as Parquet, or as CSV that reads back to the same table with
    ``pyarrow.csv.read_csv(path, convert_options=ConvertOptions(column_types=<the Parquet
    schema>, strings_can_be_null=True, quoted_strings_can_be_null=False))``."""
    if path.endswith(".csv"):
        out = io.StringIO()
        out.write(",".join(c if c and not set(c) & set(',"\r\n') else _csv_field(c)
                           for c in table.column_names) + "\n")
        for batch in table.to_batches(max_chunksize=65536):
            columns = [col.to_pylist() for col in batch.columns]
            for row in zip(*columns):
                out.write(",".join(map(_csv_field, row)) + "\n")
        return out.getvalue().encode("utf-8")
    import pyarrow.parquet as pq

    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return sink.getvalue().to_pybytes()


def finish_sentence_dir(parts: List[str], cfg: OutputConfig, meta: Dict) -> int:
    """Complete the staged per-pair directory: only the parts the job reported, then the
    manifest listing them."""
    from apache_beam.io.filesystems import FileSystems

    names = sorted({p.rsplit("/", 1)[-1] for p in parts})
    present = ownership._listing(cfg.sentence_tmp) if FileSystems.exists(cfg.sentence_tmp) else []
    strays = [n for n in present if n not in names]  # e.g. left by a failed attempt of a bundle
    if strays:
        FileSystems.delete([ownership.join(cfg.sentence_tmp, n) for n in strays])
    ownership.write_manifest(cfg.sentence_tmp, names, {"kind": "sentence-output", **meta})
    return len(names)


def commit(cfg: OutputConfig) -> List[str]:
    """Rename every staged output onto its target, in order; a target whose staging path is
    gone was committed by an earlier attempt of this step (a retry after a worker died)."""
    from apache_beam.io.filesystems import FileSystems

    written = []
    for staged, target, kind in cfg.pairs():
        if not FileSystems.exists(staged):
            if FileSystems.exists(target):  # committed by an earlier attempt
                written.append(target)
                continue
            raise RuntimeError(f"{staged}: staged output disappeared before it was committed to {target}")
        if kind == "dir" and ownership.read_manifest(staged) is None or \
                kind == "file" and _unwritten(staged):
            raise RuntimeError(f"the job ended without writing {target}")  # e.g. a runner dropped the last step
        if kind == "dir":
            ownership.commit_dir(staged, target)
        else:
            ownership.commit_file(staged, target)
        written.append(target)
    return written


def grouping_sets(groups: List[Dict], spec: InputSpec, cfg: OutputConfig) -> List[Dict]:
    """Per grouping set: how many groups, and whether the JSON document lists them (all of them
    are in the group table; with a table, a set of more than ``json_groups_limit`` groups is left
    to it)."""
    counts: Dict[tuple, int] = {}
    for g in groups:
        counts[tuple(g["group_by"])] = counts.get(tuple(g["group_by"]), 0) + 1
    limit = cfg.json_groups_limit if cfg.groups_output else None
    out = []
    for gs in spec.group_by:
        n = counts.get(tuple(gs), 0)
        entry = {"group_by": list(gs), "groups": n, "in_document": limit is None or n <= limit}
        if not entry["in_document"]:
            entry["see"] = cfg.groups_output
        out.append(entry)
    return out


#: what a staged file holds until the final step writes it (object stores cannot store an
#: empty object through Beam's multipart upload, so the placeholder has content)
PLACEHOLDER = b"beambleu: staged output, not written yet\n"


def _unwritten(path: str) -> bool:
    from apache_beam.io.filesystems import FileSystems

    size = FileSystems.match([path])[0].metadata_list[0].size_in_bytes
    return size == len(PLACEHOLDER) and _read(path) == PLACEHOLDER


def prepare_staging(cfg: OutputConfig) -> None:
    """On the driver, before the job: create every staging path (a placeholder file, or the
    per-pair directory). The final step writes only outputs whose staging path is there, so a retry of
    that step after a worker died never rewrites an output an earlier attempt committed."""
    from apache_beam.io.filesystems import FileSystems

    for staged, _, kind in cfg.pairs():
        if kind == "dir":
            FileSystems.mkdirs(staged)
        else:
            _write(staged, PLACEHOLDER)


class Finalize:
    """The final step: called once with every combined element; stages then commits all outputs."""

    def __init__(self, bleu: Bleu, spec: InputSpec, cfg: OutputConfig, inputs: Dict, sig=None):
        self.bleu, self.spec, self.cfg, self.inputs, self.sig = bleu, spec, cfg, inputs, sig

    def __call__(self, elements):
        from .transforms import scored

        cfg = self.cfg
        try:
            stats = [e for e in elements if e[0][0] != "__part__"]
            parts = [e[0][1] for e in elements if e[0][0] == "__part__"]
            corpus, groups = scored(self.bleu, self.spec, stats, self.sig)
            if corpus is None:
                raise ValueError("no pairs were scored")
            document = {
                "signature": corpus["signature"],
                "corpus": corpus,
                "groups": groups,
                "grouping_sets": grouping_sets(groups, self.spec, cfg),
                "inputs": {**self.inputs, "pairs": corpus["n_pairs"]},
            }
            left = {tuple(gs["group_by"]) for gs in document["grouping_sets"] if not gs["in_document"]}
            if left:
                document["groups"] = [g for g in groups if tuple(g["group_by"]) not in left]
            if self.sig is not None and self.sig.n_boot:
                document["bootstrap"] = {"n": self.sig.n_boot, "seed": self.sig.seed, "method": "poisson",
                                         "paired": self.sig.paired, "baseline": self.sig.baseline,
                                         "system_column": "system" if self.spec.wide else self.sig.system_column}
            if cfg.sentence_output:
                document["inputs"]["sentence_parts"] = len({p.rsplit("/", 1)[-1] for p in parts})
                if exists(cfg.sentence_tmp):
                    finish_sentence_dir(parts, cfg, {"pairs": corpus["n_pairs"], "corpus": corpus})
            if cfg.groups_output and exists(cfg.groups_tmp):
                table = groups_table(groups, self.spec, self.bleu.max_ngram_order)
                _write(cfg.groups_tmp, table_bytes(table, cfg.groups_output))
            if cfg.output and exists(cfg.output_tmp):
                _write(cfg.output_tmp, (json.dumps(document, indent=1, ensure_ascii=False) + "\n").encode("utf-8"))
            if cfg.commit_in_job:
                commit(cfg)
        except BaseException:
            _reset_staged(cfg)
            raise
        yield {"corpus_score": corpus["score"], "pairs": corpus["n_pairs"]}


def _reset_staged(cfg: OutputConfig) -> None:
    """After a failure of the final step: put the placeholders back (freeing the space; a retry
    writes them anew, and the driver removes them when the job fails)."""
    for staged, _, kind in cfg.pairs():
        if kind == "file":
            try:
                if exists(staged):
                    _write(staged, PLACEHOLDER)
            except Exception:  # noqa: BLE001 - the original error is the one to report
                pass


#: groups printed on stdout when the job ends (all of them are in the outputs)
SUMMARY_GROUPS = 20


def _read(path: str) -> bytes:
    from apache_beam.io.filesystems import FileSystems

    with FileSystems.open(path, compression_type="uncompressed") as fh:
        return fh.read()


def _score_line(head: str, d: Dict) -> str:
    ci = f" ({d['confidence']})" if d.get("confidence") else ""
    sig = f" (p = {d['p_value']:.4f}){'*' if d.get('significant') else ''}" if d.get("p_value") is not None else ""
    return f"{head} = {d['score']:.1f}{ci} {d['verbose_score']}{sig}"


def summary_lines(cfg: OutputConfig) -> List[str]:
    """What ``beambleu run`` prints on stdout when the job has ended, read back from what it
    wrote: the corpus score in sacrebleu's text form, then the first groups."""
    if cfg.output:
        doc = json.loads(_read(cfg.output).decode("utf-8"))
        corpus, groups = doc["corpus"], doc["groups"]
    elif cfg.sentence_output:
        corpus, groups = ownership.read_manifest(cfg.sentence_output)["corpus"], []
    else:
        corpus, groups = None, []
    lines = [_score_line(f"{corpus['name']}|{corpus['signature']}", corpus)] if corpus else []
    for g in groups[:SUMMARY_GROUPS]:
        key = ",".join(f"{c}={'null' if g['key'][c] is None else g['key'][c]}" for c in g["group_by"])
        lines.append(_score_line(f"{key}: {g['name']}", g))
    more = len(groups) - SUMMARY_GROUPS
    where = cfg.output if cfg.output else cfg.groups_output
    if more > 0:
        lines.append(f"... and {more:,} more groups in {where}")
    elif not cfg.output and cfg.groups_output:
        lines.append(f"group scores: {cfg.groups_output}")
    for gs in doc.get("grouping_sets", []) if cfg.output else []:
        if not gs["in_document"]:
            lines.append(f"{','.join(gs['group_by'])}: {gs['groups']:,} groups in {gs['see']}")
    return lines

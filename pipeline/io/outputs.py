"""Writing results: one final step, staged outputs, committed all together or not at all.

Everything the job writes is produced by a single final transform that runs only after every
input row has been combined (so a failed job writes nothing). Each output is first written in
full to a hidden staging path beside its target, chosen on the driver (see
:mod:`beambleu.io.ownership`): per-pair parts go to a staging directory while the job runs, and
each (grouping set, shard) of scored groups to a sorted Parquet part; the final step, which
receives only the corpus accumulator and the parts' paths, adds the per-pair manifest and
streams the group table and the JSON document from a k-way merge of the parts (memory: a batch
per part, whatever the number of groups). Only when every output is complete are they committed
by renames, the per-pair directory first and the JSON document last (by the driver after the
job; by the job itself with ``--detach``); on any failure the staging paths are removed.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Dict, List, Optional

import pyarrow as pa

from ..errors import UsageError
from ..groups import grouptable
from ..groups.document import FORMAT_VERSION, JSON_COLUMN, score_parts
from ..groups.grouptable import key_table
from . import mtme, ownership
from .inputs import InputSpec, PipelineInputError

__all__ = ["PLACEHOLDER", "SUMMARY_GROUPS", "Finalize", "OutputConfig", "TableWriter", "check_baseline",
           "check_groups_output", "check_segments", "commit", "create_part", "exists", "finish_sentence_dir",
           "grouping_sets", "merged_parts", "prepare_staging", "read_summary"]


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
    #: scored groups, one Parquet part per (grouping set, shard), read by the final step
    parts_tmp: Optional[str] = None
    #: what the driver prints when the job has ended (never committed)
    summary_tmp: Optional[str] = None
    #: the --keep expressions the per-pair output was filtered by (their texts, for the record)
    keep: tuple = ()
    #: mt-metrics-eval's score files (--mtme-output, a directory) and where they are staged
    mtme_output: Optional[str] = None
    mtme_tmp: Optional[str] = None
    #: their reference name (--mtme-ref) and the (language pair, system) key columns of their scores
    mtme_ref: str = "refA"
    mtme_columns: tuple = ()

    @classmethod
    def staged(cls, output=None, groups_output=None, sentence_output=None, commit_in_job=False,
               json_groups_limit=None, anchor=None, keep=(), mtme_output=None, mtme_ref="refA",
               mtme_columns=()) -> "OutputConfig":
        """Each target's staging path, and the scratch (scored parts, summary) beside the first
        target, or beside ``anchor`` (a path of a scratch folder) when there is none."""
        def tmp(path):
            return ownership.staging_path(path) if path else None

        anchor = output or groups_output or sentence_output or mtme_output or anchor
        return cls(output, groups_output, sentence_output, tmp(output), tmp(groups_output), tmp(sentence_output),
                   commit_in_job, json_groups_limit, tmp(anchor), tmp(anchor), tuple(keep), mtme_output,
                   tmp(mtme_output), mtme_ref, tuple(mtme_columns))

    def pairs(self):
        """(staged, target, kind) in commit order: the directories first, the JSON last."""
        return [(s, t, k) for s, t, k in ((self.sentence_tmp, self.sentence_output, "dir"),
                                          (self.mtme_tmp, self.mtme_output, "dir"),
                                          (self.groups_tmp, self.groups_output, "file"),
                                          (self.output_tmp, self.output, "file")) if t]

    def targets(self) -> List[ownership.Target]:
        return [ownership.Target(flag, path, kind) for flag, path, kind in (
            ("--output", self.output, "file"), ("--groups-output", self.groups_output, "file"),
            ("--sentence-output", self.sentence_output, "dir"), ("--mtme-output", self.mtme_output, "dir"))
            if path]

    def remove_staged(self) -> None:
        for staged, _, _ in self.pairs():
            ownership.remove_tree(staged)
        for path in (self.parts_tmp, self.summary_tmp):
            if path:
                ownership.remove_tree(path)


def exists(path: str) -> bool:
    from apache_beam.io.filesystems import FileSystems

    return FileSystems.exists(path)


def check_groups_output(path: Optional[str]) -> None:
    if path and not path.endswith((".parquet", ".csv")):
        raise UsageError(f"{path}: --groups-output must end in .parquet or .csv")


def _write(path: str, data: bytes) -> None:
    from apache_beam.io.filesystems import FileSystems

    with FileSystems.create(path, compression_type="uncompressed") as fh:
        fh.write(data)


def create_part(path: str):
    """A part's file inside a staging directory the driver made (:func:`prepare_staging`), opened
    for writing (a retried bundle writes the same file again). A local directory that is gone is
    not made again, as Beam's ``FileSystems.create`` would: an SDK worker that outlives its killed
    driver must not bring back a staging directory that the next run removed (FileNotFoundError
    naming the directory). Object stores have no directories: there, Beam's ``FileSystems``."""
    if ownership.is_url(path):
        from apache_beam.io.filesystems import FileSystems

        return FileSystems.create(path)
    try:
        return open(path, "wb")
    except FileNotFoundError:
        raise FileNotFoundError(f"{os.path.dirname(path)}: the staging directory is gone (its run ended, or a "
                                "later run removed what it left); the part was not written") from None


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


def _csv_line(values) -> str:
    return ",".join(map(_csv_field, values)) + "\n"


class TableWriter:
    """The group table, streamed chunk by chunk: Parquet, or CSV that reads back to the same table
    with ``pyarrow.csv.read_csv(path, convert_options=ConvertOptions(column_types=<the Parquet
    schema>, strings_can_be_null=True, quoted_strings_can_be_null=False))``."""

    def __init__(self, path: str, staged: str, schema: pa.Schema):
        from apache_beam.io.filesystems import FileSystems

        self.fh = FileSystems.create(staged, compression_type="uncompressed")
        if path.endswith(".csv"):
            self.writer = None
            self.fh.write(",".join(c if c and not set(c) & set(',"\r\n') else _csv_field(c)
                                   for c in schema.names).encode("utf-8") + b"\n")
        else:
            import pyarrow.parquet as pq

            self.writer = pq.ParquetWriter(self.fh, schema)

    def write(self, table: pa.Table) -> None:
        if self.writer is not None:
            self.writer.write_table(table)
            return
        columns = [col.to_pylist() for col in table.columns]
        self.fh.write("".join(_csv_line(row) for row in zip(*columns)).encode("utf-8"))

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.fh.close()


class _PartReader:
    """One sorted part, read a batch at a time: its buffered rows and their keys (normalised)."""

    def __init__(self, path: str, key_names: List[str], batch_rows: int = 4096):
        import pyarrow.parquet as pq
        from apache_beam.io.filesystems import FileSystems

        self.fh = FileSystems.open(path, compression_type="uncompressed")
        part = pq.ParquetFile(self.fh)
        self.unread = part.metadata.num_rows  # rows not yet in the buffer
        self._batches = part.iter_batches(batch_size=batch_rows)
        self.key_names = key_names
        self.rows: Optional[pa.Table] = None
        self.keys: Optional[pa.Table] = None

    def fill(self) -> bool:
        """A non-empty buffer if rows are left (False when the part is done)."""
        while self.rows is None or self.rows.num_rows == 0:
            batch = next(self._batches, None)
            if batch is None:
                self.unread = 0
                self.fh.close()
                return False
            self.unread -= batch.num_rows
            self.rows = pa.Table.from_batches([batch])
            self.keys = key_table(self.rows.select(self.key_names))
        return True

    def take(self, n: int) -> pa.Table:
        piece = self.rows.slice(0, n)
        self.rows, self.keys = self.rows.slice(n), self.keys.slice(n)
        return piece


def merged_parts(paths: List[str], key_names: List[str], chunk_rows: int = 8192, batch_rows: int = 4096):
    """The rows of sorted parts in global canonical key order, as tables of ``chunk_rows`` rows
    (the last one fewer); memory: about one batch (``batch_rows``) per part and one chunk. Each
    round considers, from every part, its buffered rows up to the smallest last buffered key of the
    parts not yet read to the end (no row still unread can come before those), sorts them with
    :func:`beambleu.groups.grouptable.canonical_order` and takes the first ones that fit in the chunk:
    the group table's key order is the one the group tables were merged in, by construction (there
    is no second order). Rows of equal keys in several parts (none in a run: a key has one shard)
    come in part order."""
    import numpy as np


    readers = [_PartReader(p, key_names, batch_rows) for p in paths]
    ready: List[pa.Table] = []
    n_ready = 0
    while True:
        live = [r for r in readers if r.fill()]
        if not live:
            break
        want = chunk_rows - n_ready
        keys = grouptable.unify_keys([r.keys for r in live])
        open_ = [k for r, k in zip(live, keys) if r.unread]
        if open_:
            lasts = pa.concat_tables([k.slice(k.num_rows - 1) for k in open_])
            bound = lasts.slice(int(grouptable.canonical_order(lasts)[0]), 1)
            counts = [grouptable.count_not_above(k, bound) for k in keys]
        else:
            counts = [k.num_rows for k in keys]
        counts = np.minimum(counts, want)  # a part gives at most the rest of the chunk
        order = grouptable.canonical_order(pa.concat_tables([k.slice(0, c) for k, c in zip(keys, counts)]))[:want]
        # the first rows in order are a prefix of each part's rows (each part is sorted)
        part = np.repeat(np.arange(len(live)), counts)[order]
        used = np.bincount(part, minlength=len(live))
        at_counts, at_used = np.cumsum(counts) - counts, np.cumsum(used) - used
        rows = pa.concat_tables([r.take(int(u)) for r, u in zip(live, used)])
        ready.append(rows.take(pa.array(at_used[part] + order - at_counts[part])))
        n_ready += len(order)
        if n_ready == chunk_rows:
            yield pa.concat_tables(ready).combine_chunks()
            ready, n_ready = [], 0
    if n_ready:
        yield pa.concat_tables(ready).combine_chunks()


def finish_sentence_dir(parts: List[str], cfg: OutputConfig, meta: Dict) -> int:
    """Complete the staged per-pair directory: only the parts the job reported, then the
    manifest listing them."""
    from apache_beam.io.filesystems import FileSystems

    names = sorted({p.rsplit("/", 1)[-1] for p in parts})
    present = ownership.listing(cfg.sentence_tmp) if FileSystems.exists(cfg.sentence_tmp) else []
    strays = [n for n in present if n not in names]  # e.g. left by a failed attempt of a bundle
    if strays:
        FileSystems.delete([ownership.join(cfg.sentence_tmp, n) for n in strays])
    ownership.write_manifest(cfg.sentence_tmp, names, {"kind": "sentence-output", **meta})
    return len(names)


def commit(cfg: OutputConfig) -> List[str]:
    """Rename every staged output onto its target, in order; a target whose staging path is
    gone was committed by an earlier attempt of this step (a retry after a worker died).

    Local outputs are committed as one unit, all or none, even if the process dies: a journal is
    written beside each of them first (:func:`beambleu.io.ownership.write_journals`), each earlier
    output at a target is moved aside, then replaced by its staged output; when every rename is
    done the journals say so (:func:`~beambleu.io.ownership.mark_committed`), the earlier outputs are
    removed, and the journals last. If a rename fails (a full disk), the renames made are undone
    (each output back at its staging path, the earlier ones back in place) and the error is raised;
    if the process dies, the next run on any of these outputs finishes or undoes the commit from a
    journal (:func:`~beambleu.io.ownership.recover_commit`). (Outputs in object stores are copied,
    with no undo.)"""
    from apache_beam.io.filesystems import FileSystems

    written, todo = [], []
    for staged, target, kind in cfg.pairs():
        if not FileSystems.exists(staged):
            if FileSystems.exists(target):  # committed by an earlier attempt
                written.append(target)
                continue
            raise RuntimeError(f"{staged}: staged output disappeared before it was committed to {target}")
        if kind == "dir" and ownership.read_manifest(staged) is None or \
                kind == "file" and _unwritten(staged):
            raise RuntimeError(f"the job ended without writing {target}")  # e.g. a runner dropped the last step
        todo.append((staged, target, kind))
    entries = [{"staged": staged, "target": target, "old": ownership.old_path(target)}
               for staged, target, _ in todo if not ownership.is_url(target)]
    journals = ownership.write_journals(entries) if entries else []
    local = iter(entries)
    try:
        for staged, target, kind in todo:
            if ownership.is_url(target):
                (ownership.commit_dir if kind == "dir" else ownership.commit_file)(staged, target)
            else:
                e = next(local)
                if e["old"]:
                    os.rename(target, e["old"])
                os.rename(staged, target)
            written.append(target)
        if journals:
            ownership.mark_committed(journals)
    except BaseException:
        ownership.roll_back(entries)
        ownership.remove_journals(journals)
        raise
    for e in entries:
        if e["old"]:
            ownership.remove_tree(e["old"])
    ownership.remove_journals(journals)
    if cfg.parts_tmp:
        ownership.remove_tree(cfg.parts_tmp)
    return written


def grouping_sets(counts: Dict[int, int], spec: InputSpec, cfg: OutputConfig) -> List[Dict]:
    """Per grouping set: how many groups, and whether the JSON document lists them (all of them
    are in the group table; with a table, a set of more than ``json_groups_limit`` groups is left
    to it)."""
    limit = cfg.json_groups_limit if cfg.groups_output else None
    out = []
    for g, gs in enumerate(spec.group_by):
        n = counts.get(g, 0)
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
    if cfg.parts_tmp:
        FileSystems.mkdirs(cfg.parts_tmp)


class Finalize:
    """The final step: called once with the corpus' JSON object (scored by ``ScoreShards``), the
    list of scored group parts and the per-pair parts; streams the group table and the JSON
    document from the parts in canonical key order (memory: a batch per part, not the number of
    groups), stages all outputs, and commits them when the job commits itself (``--detach``).
    It writes what was scored; it scores nothing."""

    def __init__(self, spec: InputSpec, cfg: OutputConfig, inputs: Dict, sig=None, schema=None, metrics=None):
        self.spec, self.cfg, self.inputs, self.sig, self.schema = spec, cfg, inputs, sig, schema
        self.metrics = metrics  # (--mtme-output's segment files: each metric's per-pair score column)

    def __call__(self, elements):
        cfg = self.cfg
        try:
            corpus, parts, sentence, systems, segments = None, {}, [], None, []
            kept = dropped = 0
            for e in elements:
                if e[0] == "corpus":
                    corpus = e[1]
                elif e[0] == "part":
                    parts.setdefault(e[1], []).append((e[2], e[3]))
                elif e[0] == "systems":
                    systems = (systems or set()) | set(e[2])
                elif e[0] in ("segments", "repeated"):
                    segments.append(e)
                else:  # ("sentence", path, pairs kept, pairs dropped)
                    sentence.append(e[1])
                    kept, dropped = kept + e[2], dropped + e[3]
            if corpus is None:
                raise ValueError("no pairs were scored")
            if systems is not None:
                check_baseline(self.sig, systems)
                check_segments(self.sig, self.spec, segments)
            counts = {g: sum(n for _, n in ps) for g, ps in parts.items()}
            sets = grouping_sets(counts, self.spec, cfg)
            head = {"format_version": FORMAT_VERSION,
                    "metrics": [{k: part[k] for k in ("metric", "name", "signature")} for part in score_parts(corpus)],
                    "corpus": corpus,
                    "grouping_sets": sets,
                    "inputs": {**self.inputs, "pairs": corpus["n_pairs"]}}
            if self.sig is not None and self.sig.n_boot:
                method = "poisson" if self.sig.intervals else "approximate-randomization"
                head["bootstrap"] = {"n": self.sig.n_boot, "seed": self.sig.seed, "method": method,
                                     "paired": self.sig.paired, "baseline": self.sig.baseline,
                                     "system_column": "system" if self.spec.wide else self.sig.system_column}
            filtered = None
            if cfg.sentence_output:
                head["inputs"]["sentence_parts"] = len({p.rsplit("/", 1)[-1] for p in sentence})
                if cfg.keep:
                    filtered = {"keep": list(cfg.keep), "kept": kept, "dropped": dropped}
                    head["sentence_output"] = filtered
                if exists(cfg.sentence_tmp):
                    finish_sentence_dir(sentence, cfg, {"pairs": corpus["n_pairs"], "corpus": corpus,
                                                        **({"filter": filtered} if filtered else {})})
            table = TableWriter(cfg.groups_output, cfg.groups_tmp, self.schema) \
                if cfg.groups_output and exists(cfg.groups_tmp) else None
            doc = _JsonWriter(cfg.output_tmp, head) if cfg.output and exists(cfg.output_tmp) else None
            shown = []  # the first groups, for the driver's summary
            mtme_set = mtme.grouping_set(self.spec.group_by, cfg.mtme_columns) if cfg.mtme_output else None
            system_scores = {}  # --mtme-output: (language pair, system) -> [(metric name, score)]
            for g, gs in enumerate(self.spec.group_by):
                paths = [p for p, _ in sorted(parts.get(g, []))]
                for chunk in merged_parts(paths, list(gs)):
                    if table is not None:
                        table.write(chunk.drop_columns([JSON_COLUMN]))
                    if g == mtme_set:
                        mtme.add_system_scores(system_scores, chunk.column(JSON_COLUMN).to_pylist(), cfg.mtme_columns)
                    if (doc is not None and sets[g]["in_document"]) or len(shown) < SUMMARY_GROUPS:
                        texts = chunk.column(JSON_COLUMN).to_pylist()
                        if doc is not None and sets[g]["in_document"]:
                            doc.groups(texts)
                        shown += [json.loads(t) for t in texts[:SUMMARY_GROUPS - len(shown)]]
            if table is not None:
                table.close()
            if doc is not None:
                doc.close()
            if cfg.mtme_output and exists(cfg.mtme_tmp):
                mtme.write_directory(cfg.mtme_tmp, system_scores, cfg.mtme_ref, cfg.mtme_columns, self.spec,
                                     self.metrics, sentence if cfg.sentence_output else None)
            if cfg.commit_in_job:  # nobody waits to print a summary
                commit(cfg)
            else:
                _write(cfg.summary_tmp, json.dumps({"corpus": corpus, "groups": shown, "grouping_sets": sets,
                                                    "sentence_output": filtered},
                                                   ensure_ascii=False).encode("utf-8"))
        except BaseException:
            _reset_staged(cfg)
            raise
        yield {"corpus_score": score_parts(corpus)[0]["score"], "pairs": corpus["n_pairs"]}


class _JsonWriter:
    """The JSON document with its ``groups`` last, streamed: one group object per line."""

    def __init__(self, path: str, head: Dict):
        from apache_beam.io.filesystems import FileSystems

        self.fh = FileSystems.create(path, compression_type="uncompressed")
        text = json.dumps(head, indent=1, ensure_ascii=False)
        self.fh.write((text[:-2] + ',\n "groups": [').encode("utf-8"))
        self.first = True

    def groups(self, texts: List[str]) -> None:
        if texts:
            sep = "\n  " if self.first else ",\n  "
            self.fh.write((sep + ",\n  ".join(texts)).encode("utf-8"))
            self.first = False

    def close(self) -> None:
        self.fh.write(b"\n ]\n}\n" if not self.first else b"]\n}\n")
        self.fh.close()


def check_baseline(sig, systems) -> None:
    """The paired tests' baseline is one of the systems the pass found (long format: they are
    known only then), else a :class:`PipelineInputError` naming it and them."""
    if sig.baseline in systems:
        return
    shown = sorted(systems, key=lambda v: (v is None, v))
    more = f", ... ({len(shown)} in all)" if len(shown) > 20 else ""
    raise PipelineInputError(f"--baseline {sig.baseline!r}: no such system in --system-column {sig.system_column!r} "
                             f"(the systems: {', '.join(map(repr, shown[:20]))}{more})")


def _order(value):
    """A sort key for key values and ids that may be null."""
    return tuple((v is None, v) for v in value)


def check_segments(sig, spec: InputSpec, reports) -> None:
    """The paired tests are paired (long format): in each tested group (a grouping set with the
    system column, the same other key values) every system has the baseline's segments (by
    ``--id-column``), each once, and no other; else a :class:`PipelineInputError` naming the
    system and the segment (the first by grouping set, other key values, id and system).
    ``reports``: what :class:`beambleu.beam.pairing.CheckSegments` found. A group whose baseline has
    no pairs is not tested, so not checked."""
    flag = "--paired-bs" if sig.intervals else "--paired-ar"

    def where(g, others):
        names = [c for c in spec.group_by[g] if c != sig.system_column]
        return f" in {', '.join(f'{c}={v!r}' for c, v in zip(names, others))}" if names else ""

    tail = f" (--id-column {spec.id_column!r})"
    repeated = [r[1:] for r in reports if r[0] == "repeated"]
    if repeated:
        g, others, seg, system, n = min(repeated, key=lambda r: (r[0], _order(r[1]), _order([r[2], r[3]])))
        times = "twice" if n == 2 else f"{n} times"
        raise PipelineInputError(f"{flag}: system {system!r} has segment {seg!r} {times}{where(g, others)}{tail}")
    groups: Dict = {}
    for _, g, others, systems, seg in (r for r in reports if r[0] == "segments"):
        groups.setdefault((g, others), []).append((systems, seg))
    problems = []
    for (g, others), entries in groups.items():
        everyone = set().union(*(set(s) for s, _ in entries))
        if sig.baseline not in everyone:
            continue
        for systems, seg in entries:
            if sig.baseline in systems:
                problems += [(g, others, seg, s, "lacks") for s in everyone - set(systems)]
            else:
                problems += [(g, others, seg, s, "extra") for s in systems]
    if problems:
        g, others, seg, system, kind = min(problems, key=lambda r: (r[0], _order(r[1]), _order([r[2], r[3]])))
        if kind == "lacks":
            what = f"lacks segment {seg!r} of the baseline {sig.baseline!r}"
        else:
            what = f"has segment {seg!r}, which the baseline {sig.baseline!r} lacks"
        raise PipelineInputError(f"{flag}: system {system!r} {what}{where(g, others)}{tail}")


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


def read_summary(cfg: OutputConfig) -> Dict:
    """The summary the final step left beside the outputs (the corpus, the first groups, the
    grouping sets), for the driver to print; the file is removed."""
    try:
        return json.loads(_read(cfg.summary_tmp).decode("utf-8"))
    finally:
        ownership.remove_tree(cfg.summary_tmp)

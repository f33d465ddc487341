"""The Beam skin: DoFns and the composite transforms.

``ComputeMetrics`` (``ComputeBleu`` is its earlier name) is usable from other pipelines: given
one metric or several (:class:`bleu_core.protocol.MetricSet`), it takes a PCollection of Arrow record batches
(or ``(source, first_row, RecordBatch)`` triples, which let errors name file and row) and
returns ``((grouping_set_index, shard), GroupTable)`` pairs combined by one
:class:`~beambleu.grouptable.GroupTableCombineFn`; grouping set ``-1``, shard 0 (``CORPUS_KEY``)
is the whole corpus, one row. Each batch yields a few compact tables (one per grouping set and
shard), not one element per group, so the number of groups costs memory only in the combined
tables themselves. ``ScoreShards`` scores a combined table into a result part.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Dict, Iterator, List, Optional, Sequence

import apache_beam as beam
import numpy as np
import pyarrow as pa
from apache_beam.metrics import Metrics

from bleu_core import BatchInputError
from bleu_core.kernels.arrow import nrefs_per_row
from bleu_core.protocol import MetricSet, batch_stats_shared

from . import accumulate as acc_ops
from . import grouptable, results
from .results import Significance, as_metric_set, bleu_dict, group_doc  # noqa: F401  (part of this module's API)
from .inputs import InputSpec, PipelineInputError, WorkItem, read_batches

#: the corpus: grouping set -1, one shard
CORPUS_KEY = (-1, 0)
NAMESPACE = "beambleu"
#: shards per grouping set: combined tables and result parts are per (grouping set, shard), so the
#: work and the memory of the last steps spread over workers, whatever the number of groups
N_SHARDS = 16


def corpus_table(acc: np.ndarray) -> grouptable.GroupTable:
    """The corpus accumulator as a one-row group table (key column ``__corpus__``, null)."""
    return grouptable.GroupTable(pa.table({"__corpus__": pa.nulls(1)}), acc.reshape(1, -1))


@dataclass(frozen=True)
class StatsConfig:
    metrics: MetricSet
    spec: InputSpec
    null_candidate: str = "error"
    sentence_dir: Optional[str] = None  # temporary directory for per-pair parts
    n_boot: int = 0  # bootstrap replicates (or randomization trials) per accumulator (0: none)
    seed: int = 12345
    system_column: str = "system"  # left out of the shard hash: a system and its baseline share a shard
    randomization: bool = False  # the replicates are the approximate randomization test's swapped totals
    resources: Optional[dict] = None  # the driver's MetricSet.resources(): every worker must load the same files


def _as_triple(element):
    if isinstance(element, tuple) and len(element) == 3:
        return element
    if isinstance(element, pa.Table):
        element = element.combine_chunks().to_batches()[0] if element.num_rows else None
    return ("<batch>", 0, element)


class BatchToStats(beam.DoFn):
    """One Arrow batch -> pre-summed accumulators per group (and per-pair parts if asked)."""

    SENTENCE_PARTS = "sentence_parts"

    def __init__(self, config: StatsConfig):
        self.config = config

    def setup(self):
        self._load_metrics()
        self.pairs = Metrics.counter(NAMESPACE, "pairs")
        self.counters = [None if m.counter is None else Metrics.counter(NAMESPACE, m.counter[0])
                         for m in self.config.metrics]
        self.batches = Metrics.counter(NAMESPACE, "batches")
        self.rejected = Metrics.counter(NAMESPACE, "rows_rejected")
        self.null_as_empty = Metrics.counter(NAMESPACE, "null_candidates_as_empty")

    def _load_metrics(self) -> None:
        """Load each metric (a SentencePiece model, from the path the driver fixed) and check that
        the worker's files are the driver's: once in setup, and again before each batch (a local
        model file that changes is loaded again), since a model replaced while the job runs would
        otherwise mix two tokenizations under one signature."""
        try:
            self.config.metrics.load()
            found = self.config.metrics.resources()
        except RuntimeError as exc:  # (ModelError is one)
            raise PipelineInputError(f"on a worker: {exc}") from None
        expected = self.config.resources
        if expected is None:
            return
        for name, want in expected.items():
            got = found.get(name)
            if got is None or got["sha256"] != want["sha256"]:
                raise PipelineInputError(
                    f"on a worker, {want['path']} has SHA-256 {got['sha256'] if got else 'none'}, not the "
                    f"{want['sha256']} the driver read: the file changed while the job ran")

    def _references(self, batch: pa.RecordBatch) -> pa.Array:
        spec = self.config.spec
        if spec.reference_columns:
            return acc_ops.refs_from_columns([batch.column(c) for c in spec.reference_columns])
        return batch.column(spec.references_column)

    def _fail(self, source, first_row, exc: BatchInputError, column):
        self.rejected.inc()
        spec = self.config.spec
        if exc.column == "references":
            if exc.ref_index is not None and spec.reference_columns:
                column = spec.reference_columns[exc.ref_index]
            elif exc.ref_index is not None:
                column = f"{spec.references_column}[{exc.ref_index}]"
            else:
                column = spec.references_column or ",".join(spec.reference_columns)
        located = exc.located(file=source, row_offset=first_row)
        raise PipelineInputError(f"{located.file}: row {located.row}, column {column!r}: {located.reason}")

    def process(self, element):
        source, first_row, batch = _as_triple(element)
        if batch is None or batch.num_rows == 0:
            return
        cfg, spec, metrics = self.config, self.config.spec, self.config.metrics
        if cfg.resources:
            self._load_metrics()
        refs = self._references(batch)
        nrefs = nrefs_per_row(refs)  # a row without any reference is reported by the kernel
        need_rows = bool(spec.group_by) or cfg.sentence_dir is not None or cfg.n_boot > 0
        group_cols = {c: batch.column(c) for c in spec.group_columns}
        for c, col in group_cols.items():
            bad = acc_ops.first_invalid_utf8(col) if not pa.types.is_integer(col.type) else None
            if bad is not None:
                self.rejected.inc()
                raise PipelineInputError(f"{source}: row {first_row + bad}, column {c!r}: invalid UTF-8")
        # the keys' one representation from here to the group table: normalised Arrow columns,
        # made once per batch (see beambleu.grouptable)
        group_cols = {c: grouptable.key_column(col) for c, col in group_cols.items()}
        row_keys = self._row_keys(source, first_row, batch) if cfg.n_boot else None
        # each grouping set's rows -> group index (groups in canonical key order): the same for
        # every candidate column
        sets = []
        for g, gs in enumerate(spec.group_by):
            real = [c for c in gs if not (spec.wide and c == "system")]
            if real:
                inverse, first = grouptable.group_ids([group_cols[c] for c in real])
            else:
                inverse, first = np.zeros(batch.num_rows, dtype=np.int64), np.zeros(1, dtype=np.int64)
            sets.append((g, gs, inverse, first))
        for cand_col, stats in self._statistics(source, first_row, batch, refs, need_rows):
            self.pairs.inc(batch.num_rows)
            self.batches.inc()
            if not need_rows:
                self._count(stats)
                yield CORPUS_KEY, corpus_table(acc_ops.from_totals(stats, nrefs, name=metrics.stat_name))
                continue
            self._count(stats.sum(axis=0))
            boot = self._bootstrap(stats, row_keys, sets) if cfg.n_boot else None
            yield CORPUS_KEY, corpus_table(acc_ops.from_rows(stats, nrefs, None if boot is None else boot[0],
                                                             name=metrics.stat_name))
            offset = 1
            for g, gs, inverse, first in sets:
                part = None if boot is None else boot[offset:offset + len(first)]
                offset += len(first)
                keys = [pa.repeat(pa.scalar(cand_col, pa.large_string()), batch.num_rows)
                        if spec.wide and c == "system" else group_cols[c] for c in gs]
                table = grouptable.GroupTable.from_rows(keys, stats, nrefs, part, (inverse, first), names=list(gs))
                system = self.config.system_column
                shards = grouptable.shard_of(table.keys, N_SHARDS, exclude=system if system in gs else None)
                for shard, piece in grouptable.split_by_shard(table, shards).items():
                    yield (g, int(shard)), piece
            if cfg.sentence_dir is not None:  # one output, told apart by its key (see ComputeBleu.expand)
                yield self.SENTENCE_PARTS, self._write_part(source, first_row, batch, cand_col, stats)

    def _statistics(self, source, first_row, batch, refs, need_rows):
        """[(candidate column, its statistics)] of the batch: every candidate column (the wide
        layout's systems) at once, so that a metric's kernel prepares each row's references once
        for all of them (``MetricSet.batch_stats_many``); one column (the long layout), its rows
        that repeat a reference list as systems of one row (``batch_stats_shared``). The error is
        the one the columns taken one by one meet first: a null candidate (under
        --null-candidate=error) or a bad row."""
        cfg, metrics = self.config, self.config.metrics
        columns, null_error = [], None
        for cand_col in self.config.spec.candidate_columns:
            cands = batch.column(cand_col)
            if cands.null_count:
                if cfg.null_candidate == "error":
                    bad = acc_ops.first_true(~np.asarray(cands.is_valid()))
                    null_error = (f"{source}: row {first_row + bad}, column {cand_col!r}: "
                                  "candidate is null (--null-candidate=empty scores it as the empty string)")
                    break  # the columns before it are scored first: one of them may fail before
                self.null_as_empty.inc(cands.null_count)
                cands = cands.fill_null("")
            columns.append((cand_col, cands))
        try:
            if len(columns) == 1:  # a long table: rows that repeat a segment's references share them
                stats = [batch_stats_shared(metrics, columns[0][1], refs, per_row=need_rows)]
            else:
                stats = metrics.batch_stats_many([c for _, c in columns], refs, per_row=need_rows)
        except BatchInputError:
            for cand_col, cands in columns:  # which column: the first that fails on its own
                try:
                    metrics.batch_stats(cands, refs, per_row=need_rows)
                except BatchInputError as exc:
                    self._fail(source, first_row, exc, cand_col)
            raise
        if null_error is not None:
            self.rejected.inc()
            raise PipelineInputError(null_error)
        return [(cand_col, rows) for (cand_col, _), rows in zip(columns, stats)]

    def _count(self, totals: np.ndarray) -> None:
        """Each metric's counter (BLEU: candidate_tokens), from a batch's totals."""
        for counter, (metric, cols) in zip(self.counters, zip(self.config.metrics, self.config.metrics.slices)):
            if counter is not None:
                counter.inc(int(totals[cols][metric.counter[1]]))

    def _row_keys(self, source, first_row, batch) -> np.ndarray:
        """Each row's identity for the bootstrap weights: the --id-column value, else file and row."""
        from bleu_core.resampling import counter as bootstrap

        spec = self.config.spec
        if not spec.id_column:
            return bootstrap.row_keys_from_position(source, first_row, batch.num_rows)
        ids = batch.column(spec.id_column)
        if ids.null_count:
            bad = acc_ops.first_true(~np.asarray(ids.is_valid()))
            self.rejected.inc()
            raise PipelineInputError(f"{source}: row {first_row + bad}, column {spec.id_column!r}: the id is null "
                                     "(--confidence/--paired-bs weight each pair by its id)")
        if pa.types.is_integer(ids.type):
            return bootstrap.row_keys_from_ids(np.asarray(ids))
        bad = acc_ops.first_invalid_utf8(ids)
        if bad is not None:
            self.rejected.inc()
            raise PipelineInputError(f"{source}: row {first_row + bad}, column {spec.id_column!r}: invalid UTF-8")
        return bootstrap.row_keys_from_ids(ids.to_pylist())

    def _bootstrap(self, stats, row_keys, sets) -> np.ndarray:
        """Replicate totals for the corpus (index 0) and every group of every set, in order."""
        from bleu_core.resampling import counter as bootstrap

        cfg = self.config
        group_sets = [np.zeros(len(stats), dtype=np.int64)]
        offset = 1
        for _, _, inverse, first in sets:
            group_sets.append(inverse + offset)
            offset += len(first)
        draw = bootstrap.swap_totals if cfg.randomization else bootstrap.bootstrap_totals
        return draw(stats, row_keys, cfg.n_boot, cfg.seed, group_sets, offset)

    def _write_part(self, source, first_row, batch, cand_col, stats):
        """Per-pair rows of this batch as one Parquet part; the name is a function of the input,
        so a retried bundle rewrites the same file."""
        from apache_beam.io.filesystems import FileSystems
        import hashlib
        import pyarrow.parquet as pq

        metrics, spec = self.config.metrics, self.config.spec
        cols = {}
        if spec.id_column:
            cols[spec.id_column] = batch.column(spec.id_column)
        cols["file"] = pa.array([source] * batch.num_rows, pa.string())
        cols["row"] = pa.array(np.arange(first_row, first_row + batch.num_rows, dtype=np.int64))
        if spec.wide:
            cols["system"] = pa.array([cand_col] * batch.num_rows, pa.string())
        for c in spec.group_columns:
            cols[c] = batch.column(c)
        for metric, part in zip(metrics, metrics.split(stats)):
            cols.update(metric.pair_columns(part))
        name = hashlib.sha1(f"{source}\0{first_row}\0{cand_col}".encode()).hexdigest()[:20]
        path = FileSystems.join(self.config.sentence_dir, f"part-{name}.parquet")
        with FileSystems.create(path) as fh:
            pq.write_table(pa.table(cols), fh)
        return path


class ReadRowGroups(beam.DoFn):
    """(file, row group) work item -> (source, first_row, RecordBatch) for each batch."""

    def __init__(self, columns: Sequence[str], batch_size: int, total_rows: int = 0, progress: bool = False):
        self.columns, self.batch_size, self.total_rows, self.progress = list(columns), batch_size, total_rows, progress

    def setup(self):
        self.row_groups = Metrics.counter(NAMESPACE, "row_groups")
        self._start = time.monotonic()
        self._last = 0.0
        self._rows = 0
        self._groups = 0

    def process(self, item: WorkItem):
        for first_row, batch in read_batches(item, self.columns, self.batch_size):
            yield item.path, first_row, batch
        self.row_groups.inc()
        self._rows += item.num_rows
        self._groups += 1
        if self.progress:
            now = time.monotonic()
            if now - self._last >= 5.0:
                self._last = now
                rate = self._rows / max(now - self._start, 1e-9)
                whole = f"; the input has {self.total_rows:,} pairs in all" if self.total_rows else ""
                print(f"beambleu: progress: this worker has read {self._rows:,} pairs "
                      f"({self._groups} row group{'s' if self._groups != 1 else ''}, {rate:,.0f} pairs/s){whole}",
                      file=sys.stderr, flush=True)


class ComputeMetrics(beam.PTransform):
    """Arrow batches -> ((grouping set, shard), GroupTable), combined per key by one
    :class:`~beambleu.grouptable.GroupTableCombineFn`: the corpus is ``CORPUS_KEY`` (one row, see
    :func:`corpus_table`), and each grouping set's groups are spread over ``N_SHARDS`` shards by a
    stable hash of their key. ``grouptable.iter_rows`` gives a table's (key, accumulator) pairs.

    With ``sentence_dir`` set the result is a dict of two PCollections:
    ``{"stats": ..., "sentence_parts": ...}``.
    """

    def __init__(self, metrics, spec: Optional[InputSpec] = None, null_candidate: str = "error",
                 sentence_dir: Optional[str] = None, n_boot: int = 0, seed: int = 12345,
                 system_column: str = "system", randomization: bool = False):
        super().__init__()
        spec = spec or InputSpec()
        metrics = as_metric_set(metrics)
        self.config = StatsConfig(metrics, spec, null_candidate, sentence_dir, n_boot, seed,
                                  "system" if spec.wide else system_column, randomization, metrics.resources())

    def expand(self, batches):
        fn = BatchToStats(self.config)
        combine = grouptable.GroupTableCombineFn()
        if self.config.sentence_dir is None:
            partial = batches | "BatchToStats" >> beam.ParDo(fn)
            return partial | "Combine" >> beam.CombinePerKey(combine)
        # one output split by Filter rather than a tagged output: Beam's DaskRunner hands every
        # consumer of a multi-output step all of its outputs
        outs = batches | "BatchToStats" >> beam.ParDo(fn)
        stats = outs | "Stats" >> beam.Filter(_is_not_part) | "Combine" >> beam.CombinePerKey(combine)
        parts = outs | "Parts" >> beam.Filter(_is_part) | "PartPaths" >> beam.Map(_second)
        return {"stats": stats, "sentence_parts": parts}


#: the name of :class:`ComputeMetrics` in beambleu's first releases (BLEU only)
ComputeBleu = ComputeMetrics


def _is_part(element) -> bool:
    return element[0] == BatchToStats.SENTENCE_PARTS


def _is_not_part(element) -> bool:
    return element[0] != BatchToStats.SENTENCE_PARTS


def _second(element):
    return element[1]


def score_groups(metrics, group_by: Sequence[str], table: grouptable.GroupTable,
                 sig: Optional[Significance] = None, system_column: str = "system",
                 chunk_rows: int = 4096) -> Iterator[List[Dict]]:
    """The JSON objects of one combined table's groups, in its (canonical) key order, a chunk at a
    time (memory: a chunk, plus the baseline's groups' results when testing), with the paired test
    against the baseline's group of the same other key values when asked. A shard holds, for every
    group of a set including the system column, the baseline's group with the same other key
    values (the shard hash leaves the system column out), so the test is done here, shard by shard."""
    from bleu_core import scoring

    metrics = as_metric_set(metrics)
    testing = sig is not None and sig.paired and system_column in group_by
    pos = list(group_by).index(system_column) if testing else None
    baselines = {}  # other key values -> the baseline's group's results
    if testing:
        for key, acc in grouptable.iter_rows(table):
            if key[pos] == sig.baseline:
                baselines[key[:pos] + key[pos + 1:]] = results.score_acc(metrics, acc, sig)
    docs = []
    for key, acc in grouptable.iter_rows(table, chunk_rows):
        base = baselines.get(key[:pos] + key[pos + 1:]) if testing else None
        is_baseline = testing and key[pos] == sig.baseline
        scored = base if is_baseline else results.score_acc(metrics, acc, sig)  # the baseline is scored once
        paired = None
        if base is not None and not is_baseline:
            paired = [scoring.paired_test(r, b) for r, b in zip(scored, base)]
        d = {"group_by": list(group_by), "key": dict(zip(group_by, key)),
             **results.group_doc(metrics, acc, sig, scored, paired)}
        if testing:
            d["baseline"] = sig.baseline
            if paired is None:
                for part in results.score_parts(d):
                    part["p_value"] = None
                if key[pos] != sig.baseline:
                    d["paired_note"] = "the baseline has no pairs in this group"
        docs.append(d)
        if len(docs) == chunk_rows:
            yield docs
            docs = []
    if docs:
        yield docs


class ScoreShards(beam.DoFn):
    """((grouping set, shard), combined table) -> ``("corpus", JSON object)`` for the corpus, or
    ``("part", grouping set, path, n_groups)`` after writing the shard's scored groups (the group
    table's rows and each group's JSON object, in canonical key order) as one Parquet part."""

    def __init__(self, metrics, spec: InputSpec, sig: Significance, layout: results.TableLayout, parts_dir: str):
        self.metrics, self.spec, self.sig, self.layout, self.parts_dir = (as_metric_set(metrics), spec, sig, layout,
                                                                           parts_dir)

    def process(self, element):
        from apache_beam.io.filesystems import FileSystems
        import pyarrow.parquet as pq

        (g, shard), table = element
        if g == -1:
            yield "corpus", results.group_doc(self.metrics, table.accs[0], self.sig)
            return
        system = "system" if self.spec.wide else self.sig.system_column
        if self.sig.paired and not self.spec.wide and g == _first_set_with(self.spec.group_by, system):
            # the systems there are (every row is in each set with the system column: one set tells)
            yield "systems", g, sorted(set(table.keys.column(system).to_pylist()), key=_none_last)
        path = FileSystems.join(self.parts_dir, f"set-{g:04d}-shard-{shard:04d}.parquet")
        n = 0
        with FileSystems.create(path) as fh:  # a retried bundle writes the same file again
            writer = None
            for docs in score_groups(self.metrics, self.spec.group_by[g], table, self.sig, system):
                # score_groups gives the table's groups in its order: this chunk's keys are the next rows
                rows = slice(n, n + len(docs))
                part = results.part_table(docs, self.layout, table.accs[rows], table.keys.slice(n, len(docs)))
                writer = writer or pq.ParquetWriter(fh, part.schema)
                writer.write_table(part)
                n += len(docs)
            if writer is not None:  # a combined table has at least one group
                writer.close()
        yield "part", g, path, n


def _first_set_with(group_by, column: str) -> Optional[int]:
    return next((g for g, gs in enumerate(group_by) if column in gs), None)


def _none_last(value):
    return (value is None, value)


class SegmentIds(beam.DoFn):
    """A batch -> ``((grouping set, other key values, segment id), system)`` per row and grouping
    set with the system column (long format): what :class:`CheckSegments` needs to tell whether
    every system of a tested group has the baseline's segments, each once."""

    def __init__(self, spec: InputSpec, system_column: str):
        self.spec, self.system_column = spec, system_column
        self.sets = [(g, [c for c in gs if c != system_column]) for g, gs in enumerate(spec.group_by)
                     if system_column in gs]

    def process(self, element):
        _, _, batch = _as_triple(element)
        if batch is None or batch.num_rows == 0:
            return
        ids = batch.column(self.spec.id_column).to_pylist()  # nulls were refused by BatchToStats
        systems = batch.column(self.system_column).to_pylist()
        for g, others in self.sets:
            cols = [batch.column(c).to_pylist() for c in others]
            for i, (seg, system) in enumerate(zip(ids, systems)):
                yield (g, tuple(col[i] for col in cols), seg), system


class _CountSystems(beam.CombineFn):
    """Systems -> {system: how many rows} (one segment id of one group: as many entries as systems)."""

    def create_accumulator(self):
        return {}

    def add_input(self, acc, system):
        acc[system] = acc.get(system, 0) + 1
        return acc

    def merge_accumulators(self, accs):
        out = {}
        for acc in accs:
            for system, n in acc.items():
                out[system] = out.get(system, 0) + n
        return out

    def extract_output(self, acc):
        return acc


def _segment_sets(element):
    """((g, others, id), {system: n}) -> the systems having the segment, as a key for the smallest
    id of each such set, and every system having it more than once."""
    (g, others, seg), counts = element
    systems = tuple(sorted(counts, key=_none_last))
    yield ("systems", g, others, systems), seg
    for system, n in counts.items():
        if n > 1:
            yield ("repeated", g, others, seg, system, n), seg


def _segment_report(element):
    (kind, *rest), seg = element
    if kind == "systems":
        g, others, systems = rest
        return "segments", g, others, systems, seg
    return ("repeated", *rest)


class CheckSegments(beam.PTransform):
    """Batches -> what the final step needs to check that the paired tests are paired (long format):
    ``("segments", g, others, systems, smallest id)`` for each distinct set of systems having a
    segment of a group (one per group when every system has every segment), and ``("repeated", g,
    others, id, system, n)`` for a segment a system has n > 1 times. A shuffle of one element per
    row and tested grouping set; combined per segment, then per set of systems."""

    def __init__(self, spec: InputSpec, system_column: str):
        super().__init__()
        self.spec, self.system_column = spec, system_column

    def expand(self, batches):
        return (batches
                | "SegmentIds" >> beam.ParDo(SegmentIds(self.spec, self.system_column))
                | "CountSystems" >> beam.CombinePerKey(_CountSystems())
                | "SegmentSets" >> beam.FlatMap(_segment_sets)
                | "SmallestId" >> beam.CombinePerKey(_smallest)
                | "SegmentReport" >> beam.Map(_segment_report))


def _smallest(values):
    return min(values)


class ReadPairs(beam.PTransform):
    """A planned input -> (source, first_row, RecordBatch)."""

    def __init__(self, items: List[WorkItem], columns: Sequence[str], batch_size: int, total_rows: int = 0,
                 progress: bool = False):
        super().__init__()
        self.items, self.columns, self.batch_size = items, columns, batch_size
        self.total_rows, self.progress = total_rows, progress

    def expand(self, pbegin):
        return (pbegin
                | "WorkItems" >> beam.Create(self.items, reshuffle=False)
                | "Spread" >> beam.Reshuffle()
                | "ReadRowGroups" >> beam.ParDo(ReadRowGroups(self.columns, self.batch_size, self.total_rows,
                                                              self.progress)))

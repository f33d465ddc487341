"""The Beam skin: CombineFn, DoFns and the composite transforms.

``ComputeBleu`` is usable from other pipelines: it takes a PCollection of Arrow record batches
(or ``(source, first_row, RecordBatch)`` triples, which let errors name file and row) and
returns ``((grouping_set_index, key_tuple), accumulator)`` pairs; grouping set ``-1`` with key
``()`` is the whole corpus. ``scored(...)`` turns those into BLEU dictionaries.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import apache_beam as beam
import numpy as np
import pyarrow as pa
from apache_beam.metrics import Metrics

from bleu_core import BatchInputError, Bleu
from bleu_core.batch import nrefs_per_row

from . import accumulate as acc_ops
from .inputs import InputSpec, PipelineInputError, WorkItem, read_batches

CORPUS_KEY = (-1, ())
NAMESPACE = "beambleu"


class BleuStatsCombineFn(beam.CombineFn):
    """Sums BLEU accumulators (see :mod:`pipeline.accumulate`): commutative, associative, exact."""

    def __init__(self, max_ngram_order: int = 4, n_boot: int = 0):
        self.order = max_ngram_order
        self.n_boot = n_boot

    def create_accumulator(self):
        return acc_ops.zero(self.order, self.n_boot)

    def add_input(self, accumulator, element):
        return acc_ops.merge_into(accumulator, element)

    def add_inputs(self, accumulator, elements):
        for element in elements:
            acc_ops.merge_into(accumulator, element)
        return accumulator

    def merge_accumulators(self, accumulators):
        accumulators = iter(accumulators)
        first = next(accumulators, None)
        if first is None:
            return self.create_accumulator()
        for other in accumulators:  # only the first is mutated
            acc_ops.merge_into(first, other)
        return first

    def compact(self, accumulator):
        return accumulator

    def extract_output(self, accumulator):
        return accumulator


@dataclass(frozen=True)
class StatsConfig:
    bleu: Bleu
    spec: InputSpec
    null_candidate: str = "error"
    sentence_dir: Optional[str] = None  # temporary directory for per-pair parts
    n_boot: int = 0  # bootstrap replicates per accumulator (0: none)
    seed: int = 12345


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
        self.pairs = Metrics.counter(NAMESPACE, "pairs")
        self.tokens = Metrics.counter(NAMESPACE, "candidate_tokens")
        self.batches = Metrics.counter(NAMESPACE, "batches")
        self.rejected = Metrics.counter(NAMESPACE, "rows_rejected")
        self.null_as_empty = Metrics.counter(NAMESPACE, "null_candidates_as_empty")

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
        raise PipelineInputError(f"{source}: row {first_row + exc.row}, column {column!r}: {exc.reason}")

    def process(self, element):
        source, first_row, batch = _as_triple(element)
        if batch is None or batch.num_rows == 0:
            return
        cfg, spec, bleu = self.config, self.config.spec, self.config.bleu
        refs = self._references(batch)
        nrefs = nrefs_per_row(refs)  # a row without any reference is reported by the kernel
        need_rows = bool(spec.group_by) or cfg.sentence_dir is not None or cfg.n_boot > 0
        group_cols = {c: batch.column(c) for c in spec.group_columns}
        row_keys = self._row_keys(source, first_row, batch) if cfg.n_boot else None
        # each grouping set's keys and row -> key index: the same for every candidate column
        sets = []
        for g, gs in enumerate(spec.group_by):
            real = [c for c in gs if not (spec.wide and c == "system")]
            if real:
                try:
                    keys, inverse = acc_ops.group_rows([group_cols[c] for c in real])
                except acc_ops.KeyDecodeError as exc:
                    self.rejected.inc()
                    raise PipelineInputError(f"{source}: row {first_row + exc.row}, column {real[exc.column]!r}: "
                                             "invalid UTF-8") from None
            else:
                keys, inverse = [()], np.zeros(batch.num_rows, dtype=np.int64)
            sets.append((g, gs, keys, inverse))
        for cand_col in spec.candidate_columns:
            cands = batch.column(cand_col)
            if cands.null_count:
                if cfg.null_candidate == "error":
                    bad = acc_ops.first_true(~np.asarray(cands.is_valid()))
                    self.rejected.inc()
                    raise PipelineInputError(f"{source}: row {first_row + bad}, column {cand_col!r}: "
                                             "candidate is null (--null-candidate=empty scores it as the empty string)")
                self.null_as_empty.inc(cands.null_count)
                cands = cands.fill_null("")
            try:
                stats = bleu.batch_stats(cands, refs, per_row=need_rows)
            except BatchInputError as exc:
                self._fail(source, first_row, exc, cand_col)
            self.pairs.inc(batch.num_rows)
            self.batches.inc()
            if need_rows:
                self.tokens.inc(int(stats[:, 0].sum()))
                boot = self._bootstrap(stats, row_keys, sets) if cfg.n_boot else None
                yield CORPUS_KEY, acc_ops.from_rows(stats, nrefs, None if boot is None else boot[0])
                offset = 1
                for g, gs, keys, inverse in sets:
                    part = None if boot is None else boot[offset:offset + len(keys)]
                    offset += len(keys)
                    accs = acc_ops.accumulate_groups(stats, nrefs, inverse, len(keys), part)
                    for key, acc in zip(keys, accs):
                        values = iter(key)
                        full = tuple(cand_col if (spec.wide and c == "system") else next(values) for c in gs)
                        yield (g, full), acc
                if cfg.sentence_dir is not None:
                    yield beam.pvalue.TaggedOutput(
                        self.SENTENCE_PARTS, self._write_part(source, first_row, batch, cand_col, stats))
            else:
                self.tokens.inc(int(stats[0]))
                yield CORPUS_KEY, acc_ops.from_totals(stats, nrefs)

    def _row_keys(self, source, first_row, batch) -> np.ndarray:
        """Each row's identity for the bootstrap weights: the --id-column value, else file and row."""
        from bleu_core import bootstrap

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
        from bleu_core import bootstrap

        cfg = self.config
        group_sets = [np.zeros(len(stats), dtype=np.int64)]
        offset = 1
        for _, _, keys, inverse in sets:
            group_sets.append(inverse + offset)
            offset += len(keys)
        return bootstrap.bootstrap_totals(stats, row_keys, cfg.n_boot, cfg.seed, group_sets, offset)

    def _write_part(self, source, first_row, batch, cand_col, stats):
        """Per-pair rows of this batch as one Parquet part; the name is a function of the input,
        so a retried bundle rewrites the same file."""
        from apache_beam.io.filesystems import FileSystems
        import hashlib
        import pyarrow.parquet as pq

        from bleu_core.score import compute_bleu

        bleu, spec = self.config.bleu, self.config.spec
        order = bleu.max_ngram_order
        cols = {}
        if spec.id_column:
            cols[spec.id_column] = batch.column(spec.id_column)
        cols["file"] = pa.array([source] * batch.num_rows, pa.string())
        cols["row"] = pa.array(np.arange(first_row, first_row + batch.num_rows, dtype=np.int64))
        if spec.wide:
            cols["system"] = pa.array([cand_col] * batch.num_rows, pa.string())
        for c in spec.group_columns:
            cols[c] = batch.column(c)
        cols["c"] = pa.array(stats[:, 0])
        cols["r"] = pa.array(stats[:, 1])
        for n in range(order):
            cols[f"matches_{n + 1}"] = pa.array(stats[:, 2 + n])
        for n in range(order):
            cols[f"totals_{n + 1}"] = pa.array(stats[:, 2 + order + n])
        scores = [compute_bleu(row, max_ngram_order=order, smooth_method=bleu.smooth_method,
                               smooth_value=bleu.smooth_value, effective_order=True, weights=bleu.weights).score
                  for row in stats.tolist()]
        cols["bleu"] = pa.array(scores, pa.float64())
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


class ComputeBleu(beam.PTransform):
    """Arrow batches -> ((grouping set, key), accumulator), combined per key.

    With ``sentence_dir`` set the result is a dict of two PCollections:
    ``{"stats": ..., "sentence_parts": ...}``.
    """

    def __init__(self, bleu: Bleu, spec: Optional[InputSpec] = None, null_candidate: str = "error",
                 sentence_dir: Optional[str] = None, n_boot: int = 0, seed: int = 12345):
        super().__init__()
        self.config = StatsConfig(bleu, spec or InputSpec(), null_candidate, sentence_dir, n_boot, seed)

    def expand(self, batches):
        fn = BatchToStats(self.config)
        combine = BleuStatsCombineFn(self.config.bleu.max_ngram_order, self.config.n_boot)
        if self.config.sentence_dir is None:
            partial = batches | "BatchToStats" >> beam.ParDo(fn)
            return partial | "Combine" >> beam.CombinePerKey(combine)
        outs = batches | "BatchToStats" >> beam.ParDo(fn).with_outputs(BatchToStats.SENTENCE_PARTS, main="stats")
        stats = outs.stats | "Combine" >> beam.CombinePerKey(combine)
        return {"stats": stats, "sentence_parts": outs[BatchToStats.SENTENCE_PARTS]}


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


@dataclass(frozen=True)
class Significance:
    """What ``scored`` adds from the bootstrap replicates (all off by default)."""

    n_boot: int = 0
    seed: int = 12345
    paired: bool = False
    baseline: Optional[str] = None
    system_column: str = "system"


def bleu_dict(bleu: Bleu, acc: np.ndarray, sig: Optional[Significance] = None) -> Dict:
    from .significance import interval

    order = bleu.max_ngram_order
    n_boot = sig.n_boot if sig else 0
    score = bleu.score(acc_ops.stats_of(acc, order), acc_ops.nrefs_of(acc), n_bootstrap=n_boot or None,
                       seed=sig.seed if n_boot else None)
    d = score.to_dict()
    if n_boot:
        boot = acc_ops.boot_of(acc, order)
        if boot.shape[0] != n_boot:
            raise ValueError(f"accumulator holds {boot.shape[0]} bootstrap replicates, expected {n_boot}")
        d.update(interval(bleu, boot))
    d["n_pairs"] = acc_ops.n_pairs(acc)
    return d


def _sort_key(value):
    return (value is not None, type(value).__name__, value if value is not None else 0)


def scored(bleu: Bleu, spec: InputSpec, elements, sig: Optional[Significance] = None) -> Tuple[Dict, List[Dict]]:
    """(corpus BLEU dict, group BLEU dicts in a stable order) from combined accumulators; with
    ``sig.paired``, every group whose grouping set includes the system column is tested
    against the baseline's group with the same other key values."""
    from .significance import paired, strip_replicates

    corpus = None
    groups = []
    keys_docs = []  # ((grouping set, key tuple), its dict): for finding each group's baseline
    for (g, key), acc in elements:
        if g == -1:
            corpus = bleu_dict(bleu, acc, sig)
        else:
            cols = spec.group_by[g]
            d = {"group_by": list(cols), "key": dict(zip(cols, key)), **bleu_dict(bleu, acc, sig)}
            groups.append((g, tuple(_sort_key(v) for v in key), d))
            keys_docs.append(((g, tuple(key)), d))
    groups.sort(key=lambda t: (t[0], t[1]))
    docs = [d for _, _, d in groups]
    if sig is not None and sig.paired:
        system = "system" if spec.wide else sig.system_column
        index = {(g, key): d for (g, key), d in keys_docs}
        for (g, key), d in keys_docs:
            cols = spec.group_by[g]
            if system not in cols:
                continue
            base = index.get((g, tuple(sig.baseline if c == system else v for c, v in zip(cols, key))))
            d["baseline"] = sig.baseline
            if d["key"][system] == sig.baseline:
                d["p_value"] = None
            elif base is None:
                d["p_value"] = None
                d["paired_note"] = "the baseline has no pairs in this group"
            else:
                d.update(paired(d, base))
    strip_replicates(docs + ([corpus] if corpus else []))
    return corpus, docs

"""The count stage: Arrow batches -> pre-summed accumulators per (grouping set, shard), and the
per-pair parts of ``--sentence-output`` (:class:`BatchToStats`). Grouping set ``-1``, shard 0
(``CORPUS_KEY``) is the whole corpus, one row."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Optional, Tuple

import apache_beam as beam
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from apache_beam.metrics import Metrics

from bleu_core.errors import BatchInputError
from bleu_core.kernels.arrow import nrefs_per_row
from bleu_core.protocol import MetricSet, batch_stats_shared
from bleu_core.resampling import counter as bootstrap
from bleu_core.sums import checked_add

from ..groups import accumulate as acc_ops, grouptable
from ..io.inputs import InputSpec, PipelineInputError
from ..io.keep import Keep, keep_mask
from ..io.outputs import create_part
from .autotok import AUTO_TOKENIZERS, AutoBleu, tokenizer_codes

__all__ = ["CORPUS_KEY", "IN_PROCESS_PAIRS", "NAMESPACE", "N_SHARDS", "BatchToStats", "InProcessPairs", "StatsConfig",
           "as_triple", "corpus_table"]

#: the corpus: grouping set -1, one shard
CORPUS_KEY = (-1, 0)
NAMESPACE = "beambleu"
#: shards per grouping set: combined tables and result parts are per (grouping set, shard), so the
#: work and the memory of the last steps spread over workers, whatever the number of groups
N_SHARDS = 16


class InProcessPairs:
    """Pairs counted by the workers running in this process (a portable runner's LOOPBACK
    environment, which ``--runner FlinkRunner``/``SparkRunner`` alone use): the driver's progress
    line reads it where the job server reports counters only when the job ends. A retried bundle
    counts twice: it is a progress figure, never a result."""

    def __init__(self):
        self._lock = threading.Lock()
        self.value = 0

    def add(self, n: int) -> None:
        with self._lock:
            self.value += n


#: this process' :class:`InProcessPairs`
IN_PROCESS_PAIRS = InProcessPairs()


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
    carry: Tuple[str, ...] = ()  # input columns the per-pair parts carry through (--carry-columns, --carry-all)
    keep: Tuple[Keep, ...] = ()  # the per-pair parts hold only the pairs for which all hold (--keep)


def as_triple(element):
    """A batch, a table or a (source, first_row, batch) triple -> the triple (``<batch>`` and row 0 when unknown)."""
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

    def _fail(self, source, first_row, exc: BatchInputError, column, rows=None):
        self.rejected.inc()
        spec = self.config.spec
        if exc.column == "references":
            if exc.ref_index is not None and spec.reference_columns:
                column = spec.reference_columns[exc.ref_index]
            elif exc.ref_index is not None:
                column = f"{spec.references_column}[{exc.ref_index}]"
            else:
                column = spec.references_column or ",".join(spec.reference_columns)
        if rows is not None:  # the batch is a part of the input's batch (-tok auto): the row there
            exc = BatchInputError(int(rows[exc.row]), exc.column, exc.reason, exc.ref_index)
        located = exc.located(file=source, row_offset=first_row)
        error = PipelineInputError(f"{located.file}: row {located.row}, column {column!r}: {located.reason}")
        error.row = exc.row
        raise error

    def process(self, element):
        source, first_row, batch = as_triple(element)
        if batch is None or batch.num_rows == 0:
            return
        cfg, spec, metrics = self.config, self.config.spec, self.config.metrics
        if cfg.resources:
            self._load_metrics()
        refs = self._references(batch)
        nrefs = nrefs_per_row(refs)  # a row without any reference is reported by the kernel
        need_rows = bool(spec.group_by) or cfg.sentence_dir is not None or cfg.n_boot > 0
        self._check_ids(source, first_row, batch)
        codes = self._checked_names(source, first_row, batch)
        group_cols = {c: batch.column(c) for c in spec.group_columns}
        for c, col in group_cols.items():
            bad = acc_ops.first_invalid_utf8(col) if not pa.types.is_integer(col.type) else None
            if bad is not None:
                self.rejected.inc()
                raise PipelineInputError(f"{source}: row {first_row + bad}, column {c!r}: invalid UTF-8")
        # the keys' one representation from here to the group table: normalised Arrow columns,
        # made once per batch (see beambleu.groups.grouptable)
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
        for cand_col, stats in self._statistics(source, first_row, batch, refs, need_rows, codes):
            self.pairs.inc(batch.num_rows)
            IN_PROCESS_PAIRS.add(batch.num_rows)
            self.batches.inc()
            if not need_rows:
                self._count(stats)
                yield CORPUS_KEY, corpus_table(acc_ops.from_totals(stats, nrefs, name=metrics.stat_name))
                continue
            boot = self._bootstrap(stats, row_keys, sets) if cfg.n_boot else None
            corpus_boot = None if boot is None else boot[0]
            offset, corpus = 1, None
            for g, gs, inverse, first in sets:
                part = None if boot is None else boot[offset:offset + len(first)]
                offset += len(first)
                keys = [pa.repeat(pa.scalar(cand_col, pa.large_string()), batch.num_rows)
                        if spec.wide and c == "system" else group_cols[c] for c in gs]
                try:
                    table = grouptable.GroupTable.from_rows(keys, stats, nrefs, part, (inverse, first),
                                                            names=list(gs))
                except OverflowError:  # a group past int64, and so the batch: the batch's error names the statistic
                    acc_ops.from_rows(stats, nrefs, name=metrics.stat_name)
                    raise
                if corpus is None:  # the batch's sums, from its first grouping set's groups (a few rows)
                    corpus = acc_ops.from_groups(table.accs, stats.shape[1], corpus_boot, name=metrics.stat_name)
                system = self.config.system_column
                shards = grouptable.shard_of(table.keys, N_SHARDS, exclude=system if system in gs else None)
                for shard, piece in grouptable.split_by_shard(table, shards).items():
                    yield (g, int(shard)), piece
            if corpus is None:
                corpus = acc_ops.from_rows(stats, nrefs, corpus_boot, name=metrics.stat_name)
            self._count(acc_ops.stats_of(corpus, stats.shape[1]))
            yield CORPUS_KEY, corpus_table(corpus)
            if cfg.sentence_dir is not None:  # one output, told apart by its key (see ComputeBleu.expand)
                yield self.SENTENCE_PARTS, self._write_part(source, first_row, batch, cand_col, stats)

    def _checked_names(self, source, first_row, batch) -> Optional[np.ndarray]:
        """Check the language pair column (``SRC-TRG``, not null) and the columns whose values
        become file names (not null, no whitespace): bad input names the first bad row. Returns
        each row's index in :data:`AUTO_TOKENIZERS` when the metrics have ``-tok auto``."""
        spec, codes = self.config.spec, None
        if spec.langpair_column:
            col = batch.column(spec.langpair_column)
            bad = acc_ops.first_invalid_utf8(col)
            if bad is not None:
                self.rejected.inc()
                raise PipelineInputError(f"{source}: row {first_row + bad}, column {spec.langpair_column!r}: "
                                         "invalid UTF-8")
            codes, problem = tokenizer_codes(col)
            if problem is not None:
                self.rejected.inc()
                raise PipelineInputError(f"{source}: row {first_row + problem[0]}, column "
                                         f"{spec.langpair_column!r}: {problem[1]}")
        for c in spec.name_columns:
            if spec.wide and c == "system":
                continue  # the candidate columns' names, checked on the driver
            col = batch.column(c)
            bad = acc_ops.first_true(~np.asarray(col.is_valid())) if col.null_count else None
            why = "null (a system needs a name)"
            if bad is None and not pa.types.is_integer(col.type):
                bad = acc_ops.first_invalid_utf8(col)
                why = "invalid UTF-8"
                if bad is None:
                    names = col.dictionary if pa.types.is_dictionary(col.type) else col
                    names = names.cast(pa.large_string())
                    empty_or_space = pc.or_(pc.equal(pc.utf8_length(names), 0),
                                            pc.match_substring_regex(names, r"\s"))
                    mask = np.asarray(empty_or_space.fill_null(False))
                    if pa.types.is_dictionary(col.type):
                        mask = mask[np.asarray(col.indices.fill_null(0), dtype=np.int64)]
                    bad = acc_ops.first_true(mask)
                    why = "a system name for --mtme-output cannot be empty or hold whitespace"
            if bad is not None:
                self.rejected.inc()
                raise PipelineInputError(f"{source}: row {first_row + bad}, column {c!r}: {why}")
        if codes is None or self._auto_index() is None:
            return None
        return codes

    def _auto_index(self) -> Optional[int]:
        return next((i for i, m in enumerate(self.config.metrics) if isinstance(m, AutoBleu)), None)

    def _auto_metrics(self, code: int, source, first_row, rows: np.ndarray, batch) -> MetricSet:
        """The metric set that counts the rows of tokenizer ``AUTO_TOKENIZERS[code]`` (loaded once
        per worker; a MeCab tokenizer that cannot be loaded is bad input naming the first row that
        needs it)."""
        cache = self.__dict__.setdefault("_auto_sets", {})
        if code not in cache:
            i = self._auto_index()
            metrics = list(self.config.metrics)
            metrics[i] = metrics[i].for_tokenizer(AUTO_TOKENIZERS[code])
            try:
                metrics[i].load()
            except RuntimeError as exc:
                self.rejected.inc()
                column = self.config.spec.langpair_column
                value = batch.column(column)[int(rows[0])].as_py()
                raise PipelineInputError(f"{source}: row {first_row + int(rows[0])}, column {column!r}: {value} "
                                         f"needs -tok {AUTO_TOKENIZERS[code]} (-tok auto), which cannot be "
                                         f"loaded: {exc}") from None
            cache[code] = MetricSet(metrics)
        return cache[code]

    def _statistics(self, source, first_row, batch, refs, need_rows, codes=None):
        """:meth:`_statistics_of` with the run's metrics; with ``-tok auto`` (``codes``: each row's
        tokenizer), of each tokenizer's rows with its metrics, put back in row order (or summed).
        The error is the first row's of the errors the parts meet."""
        if codes is None:
            return self._statistics_of(self.config.metrics, source, first_row, batch, refs, need_rows)
        present = np.unique(codes)
        if len(present) == 1:
            metrics = self._auto_metrics(int(present[0]), source, first_row, np.arange(1), batch)
            return self._statistics_of(metrics, source, first_row, batch, refs, need_rows)
        columns, errors = {}, []
        for code in present:
            rows = np.flatnonzero(codes == code)
            metrics = self._auto_metrics(int(code), source, first_row, rows, batch)
            take = pa.array(rows)
            try:
                part = self._statistics_of(metrics, source, first_row, batch.take(take), refs.take(take), need_rows,
                                           rows)
            except PipelineInputError as exc:
                errors.append(exc)
                continue
            for cand_col, stats in part:
                if need_rows:
                    full = columns.setdefault(cand_col, np.zeros((batch.num_rows, metrics.width), dtype=np.int64))
                    full[rows] = stats
                elif cand_col in columns:
                    checked_add(columns[cand_col], stats, out=columns[cand_col], what="the statistics of a batch",
                                name=metrics.stat_name)
                else:
                    columns[cand_col] = np.array(stats, dtype=np.int64)
        if errors:
            raise min(errors, key=lambda e: getattr(e, "row", 0))
        out = list(columns.items())
        return out

    def _statistics_of(self, metrics, source, first_row, batch, refs, need_rows, rows=None):
        """[(candidate column, its statistics)] of the batch: every candidate column (the wide
        layout's systems) at once, so that a metric's kernel prepares each row's references once
        for all of them (``MetricSet.batch_stats_many``); one column (the long layout), its rows
        that repeat a reference list as systems of one row (``batch_stats_shared``). The error is
        the one the columns taken one by one meet first: a null candidate (under
        --null-candidate=error) or a bad row. ``rows``: the batch's rows in the input's batch, when
        it is a part of one (errors name the input's row; the error carries it as ``row``)."""
        cfg = self.config
        columns, null_error = [], None
        for cand_col in self.config.spec.candidate_columns:
            cands = batch.column(cand_col)
            if cands.null_count:
                if cfg.null_candidate == "error":
                    bad = acc_ops.first_true(~np.asarray(cands.is_valid()))
                    bad = bad if rows is None else int(rows[bad])
                    null_error = (f"{source}: row {first_row + bad}, column {cand_col!r}: "
                                  "candidate is null (--null-candidate=empty scores it as the empty string)", bad)
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
                    self._fail(source, first_row, exc, cand_col, rows)
            raise
        if null_error is not None:
            self.rejected.inc()
            exc = PipelineInputError(null_error[0])
            exc.row = null_error[1]
            raise exc
        return [(cand_col, rows) for (cand_col, _), rows in zip(columns, stats)]

    def _count(self, totals: np.ndarray) -> None:
        """Each metric's counter (BLEU: candidate_tokens), from a batch's totals."""
        for counter, (metric, cols) in zip(self.counters, zip(self.config.metrics, self.config.metrics.slices)):
            if counter is not None:
                counter.inc(int(totals[cols][metric.counter[1]]))

    def _row_keys(self, source, first_row, batch) -> np.ndarray:
        """Each row's identity for the bootstrap weights: the --id-column value, else file and row."""
        spec = self.config.spec
        if not spec.id_column:
            return bootstrap.row_keys_from_position(source, first_row, batch.num_rows)
        ids = batch.column(spec.id_column)  # (checked by _check_ids)
        if pa.types.is_integer(ids.type):
            return bootstrap.row_keys_from_ids(np.asarray(ids))
        return bootstrap.row_keys_from_ids(ids.to_pylist())

    def _check_ids(self, source, first_row, batch) -> None:
        """With ``--id-column``, every row's id is there (not null) and, as text, valid UTF-8: the id
        is the segment's identity wherever it is used (the bootstrap's and the randomization test's
        weights, the pairing of the paired tests, the per-pair rows of ``--sentence-output`` and
        the order of ``--mtme-output``'s segments), so a row without one is bad input naming the
        file, row and column, whatever the run writes."""
        spec = self.config.spec
        if not spec.id_column:
            return
        ids = batch.column(spec.id_column)
        if ids.null_count:
            bad = acc_ops.first_true(~np.asarray(ids.is_valid()))
            self.rejected.inc()
            raise PipelineInputError(f"{source}: row {first_row + bad}, column {spec.id_column!r}: the id is null "
                                     "(--id-column names each pair's segment: every row needs one)")
        bad = None if pa.types.is_integer(ids.type) else acc_ops.first_invalid_utf8(ids)
        if bad is not None:
            self.rejected.inc()
            raise PipelineInputError(f"{source}: row {first_row + bad}, column {spec.id_column!r}: invalid UTF-8")

    def _bootstrap(self, stats, row_keys, sets) -> np.ndarray:
        """Replicate totals for the corpus (index 0) and every group of every set, in order.

        Every row is in one group of each grouping set, so the corpus's replicate totals are the
        sum of those of one set's groups (the set with the fewest groups in the batch): the kernel
        adds each row's weighted statistics once per grouping set instead of once more for the
        corpus, and a few groups' totals are added after. The integers are the same (exact sums
        of the same non-negative terms); when that sum could overflow int64, or the kernel's does,
        the batch is drawn again with the corpus as a set of its own, whose error is the one
        raised."""
        cfg = self.config
        corpus = np.zeros(len(stats), dtype=np.int64)
        draw = bootstrap.swap_totals if cfg.randomization else bootstrap.bootstrap_totals
        group_sets, spans, offset = [], [], 1
        for _, _, inverse, first in sets:
            group_sets.append(inverse + offset)
            spans.append((offset, len(first)))
            offset += len(first)
        if not sets:
            return draw(stats, row_keys, cfg.n_boot, cfg.seed, [corpus], offset)
        try:
            out = draw(stats, row_keys, cfg.n_boot, cfg.seed, group_sets, offset)
        except OverflowError:
            out = None
        if out is not None:
            start, n = min(spans, key=lambda span: span[1])
            block = out[start:start + n].reshape(n, -1)
            if int(block.view(np.uint64).max()) * n <= acc_ops.INT64_MAX:  # (as bleu_core.sums.column_sums)
                out[0] = block.sum(axis=0).reshape(out.shape[1:])
                return out
        return draw(stats, row_keys, cfg.n_boot, cfg.seed, [corpus] + group_sets, offset)

    def _write_part(self, source, first_row, batch, cand_col, stats):
        """Per-pair rows of this batch as one Parquet part (the rows ``--keep`` keeps, with the
        carried columns), and how many pairs it kept and dropped; the name is a function of the
        input, so a retried bundle rewrites the same file."""
        import hashlib

        import pyarrow.parquet as pq
        from apache_beam.io.filesystems import FileSystems

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
        for c in self.config.carry:
            if c not in cols:
                cols[c] = batch.column(c)
        for metric, part in zip(metrics, metrics.split(stats)):
            cols.update(metric.pair_columns(part))
        table = pa.table(cols)
        mask = keep_mask(table, self.config.keep)
        if mask is not None:
            table = table.filter(pa.array(mask))
        name = hashlib.sha1(f"{source}\0{first_row}\0{cand_col}".encode()).hexdigest()[:20]
        path = FileSystems.join(self.config.sentence_dir, f"part-{name}.parquet")
        with create_part(path) as fh:
            pq.write_table(table, fh)
        return path, table.num_rows, batch.num_rows - table.num_rows

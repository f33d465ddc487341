"""The combine stage: ``ComputeMetrics``, the count and one commutative CombineFn
(:class:`~beambleu.beam.combine.GroupTableCombineFn`) per (grouping set, shard): usable from other
pipelines. Given one metric or several (:class:`bleu_core.protocol.MetricSet`), it takes a
PCollection of Arrow record batches (or ``(source, first_row, RecordBatch)`` triples, which let
errors name file and row) and returns ``((grouping_set_index, shard), GroupTable)`` pairs. Each batch
yields a few compact tables (one per grouping set and shard), not one element per group, so the
number of groups costs memory only in the combined tables themselves."""

from __future__ import annotations

from typing import List, Optional, Sequence

import apache_beam as beam
from apache_beam.metrics import Metrics

from ..groups.grouptable import GroupTable, merge, restore
from ..groups.results import as_metric_set
from ..io.inputs import InputSpec, WorkItem, read_batches
from ..io.keep import Keep
from .count import NAMESPACE, BatchToStats, StatsConfig

__all__ = ["ComputeBleu", "ComputeMetrics", "GroupTableAccumulator", "GroupTableCombineFn", "ReadAndCount",
           "ReadComputeMetrics"]

class GroupTableAccumulator:
    """A compacted table and the tables added since (at most a byte budget of them).

    An accumulator that arrives encoded (a runner shuffles and buffers them) stays in its compact
    encoded form (narrow integers, Arrow IPC keys: about a third of the decoded size) until the
    CombineFn uses it: a runner that holds many accumulators in memory (the local runner's
    grouping buffer does) holds them encoded."""

    __slots__ = ("compacted", "pending", "pending_bytes", "packed")

    def __init__(self):
        self.compacted: Optional[GroupTable] = None
        self.pending: List[GroupTable] = []
        self.pending_bytes = 0
        self.packed = None  # (compacted payload or None, [pending payloads]) until unpacked

    def __reduce__(self):
        if self.packed is not None:
            return _restore_accumulator, self.packed
        return _restore_accumulator, (None if self.compacted is None else self.compacted.__reduce__()[1],
                                      [t.__reduce__()[1] for t in self.pending])

    def unpack(self) -> "GroupTableAccumulator":
        if self.packed is not None:
            compacted, pending = self.packed
            self.packed = None
            self.compacted = None if compacted is None else restore(*compacted)
            self.pending = [restore(*p) for p in pending]
            self.pending_bytes = sum(t.nbytes for t in self.pending)
        return self


def _restore_accumulator(compacted, pending) -> GroupTableAccumulator:
    acc = GroupTableAccumulator()
    acc.packed = (compacted, list(pending))
    return acc


class GroupTableCombineFn(beam.CombineFn):
    """Sums :class:`GroupTable` blocks of one grouping set (per key, e.g. a (grouping set, shard)
    number): commutative, associative, exact. Added blocks wait, then are merged into the compacted
    table in one step once they exceed ``pending_ratio`` of its bytes and at least
    ``min_pending_bytes``: an accumulator holds at most ``1 + pending_ratio`` times its result (plus
    the floor), and each row is copied O(1 / pending_ratio) times. The output is the merged table
    (``None`` for no input)."""

    def __init__(self, min_pending_bytes: int = 4 << 20, pending_ratio: float = 0.25):
        self.min_pending_bytes, self.pending_ratio = min_pending_bytes, pending_ratio

    def create_accumulator(self) -> GroupTableAccumulator:
        return GroupTableAccumulator()

    def _add(self, acc: GroupTableAccumulator, table: Optional[GroupTable]) -> None:
        if table is None or not len(table):
            return
        acc.unpack()
        acc.pending.append(table)
        acc.pending_bytes += table.nbytes
        compacted = acc.compacted.nbytes if acc.compacted is not None else 0
        if acc.pending_bytes > max(self.min_pending_bytes, self.pending_ratio * compacted):
            self.compact(acc)

    def add_input(self, accumulator, element):
        self._add(accumulator, element)
        return accumulator

    def add_inputs(self, accumulator, elements):
        for element in elements:
            self._add(accumulator, element)
        return accumulator

    def merge_accumulators(self, accumulators):
        accumulators = iter(accumulators)
        first = next(accumulators, None)
        if first is None:
            return self.create_accumulator()
        first.unpack()
        for other in accumulators:  # only the first is mutated; one other is decoded at a time
            other.unpack()
            self._add(first, other.compacted)
            for table in other.pending:
                self._add(first, table)
        return first

    def compact(self, accumulator):
        accumulator.unpack()
        if accumulator.pending:
            tables = ([accumulator.compacted] if accumulator.compacted is not None else []) + accumulator.pending
            accumulator.pending, accumulator.pending_bytes = [], 0
            accumulator.compacted = merge(tables)
        return accumulator

    def extract_output(self, accumulator) -> Optional[GroupTable]:
        return self.compact(accumulator).compacted

    def display_data(self):
        return {"min_pending_bytes": self.min_pending_bytes, "pending_ratio": self.pending_ratio}


class ComputeMetrics(beam.PTransform):
    """Arrow batches -> ((grouping set, shard), GroupTable), combined per key by one
    :class:`~beambleu.groups.grouptable.GroupTableCombineFn`: the corpus is ``CORPUS_KEY`` (one row, see
    :func:`corpus_table`), and each grouping set's groups are spread over ``N_SHARDS`` shards by a
    stable hash of their key. ``grouptable.iter_rows`` gives a table's (key, accumulator) pairs.

    With ``sentence_dir`` set the result is a dict of two PCollections:
    ``{"stats": ..., "sentence_parts": ...}``, the latter ``(path, pairs kept, pairs dropped)`` per
    part written, each part carrying the input columns ``carry`` and the pairs for which every
    ``keep`` condition holds (:mod:`beambleu.io.keep`).
    """

    def __init__(self, metrics, spec: Optional[InputSpec] = None, null_candidate: str = "error",
                 sentence_dir: Optional[str] = None, n_boot: int = 0, seed: int = 12345,
                 system_column: str = "system", randomization: bool = False, carry: Sequence[str] = (),
                 keep: Sequence[Keep] = ()):
        super().__init__()
        spec = spec or InputSpec()
        metrics = as_metric_set(metrics)
        self.config = StatsConfig(metrics, spec, null_candidate, sentence_dir, n_boot, seed,
                                  "system" if spec.wide else system_column, randomization, metrics.resources(),
                                  tuple(carry), tuple(keep))

    def _count(self, batches):
        return batches | "BatchToStats" >> beam.ParDo(BatchToStats(self.config))

    def expand(self, batches):
        combine = GroupTableCombineFn()
        if self.config.sentence_dir is None:
            return self._count(batches) | "Combine" >> beam.CombinePerKey(combine)
        # one output split by Filter rather than a tagged output: Beam's DaskRunner hands every
        # consumer of a multi-output step all of its outputs
        outs = self._count(batches)
        stats = outs | "Stats" >> beam.Filter(_is_not_part) | "Combine" >> beam.CombinePerKey(combine)
        parts = outs | "Parts" >> beam.Filter(_is_part) | "PartPaths" >> beam.Map(_second)
        return {"stats": stats, "sentence_parts": parts}


class ReadAndCount(BatchToStats):
    """A planned work item (a Parquet row group, a whole text file) -> what :class:`BatchToStats`
    yields for each of its batches, read and counted in one step, the accumulators of the item's
    batches summed per (grouping set, shard) before they leave it (the per-pair parts of
    ``--sentence-output`` leave as each batch is written).

    The batches never leave the step, so no runner holds or moves them between a read step and a
    count step: Beam's DaskRunner builds each partition's whole output as a list (every batch of
    the partition at once), and a portable runner's stages exchange elements through the data
    plane. Every error is :class:`BatchToStats`' (file, row, column), raised on the same batch;
    the counters are its own and :class:`~.read.ReadRowGroups`' (``row_groups``)."""

    def __init__(self, config: StatsConfig, columns: Sequence[str], batch_size: int):
        super().__init__(config)
        self.columns, self.batch_size = list(columns), batch_size

    def setup(self):
        super().setup()
        self.row_groups = Metrics.counter(NAMESPACE, "row_groups")
        self.combine = GroupTableCombineFn()

    def process(self, item: WorkItem):
        accumulators = {}
        for first_row, batch in read_batches(item, self.columns, self.batch_size):
            for key, value in super().process((item.path, first_row, batch)):
                if key == self.SENTENCE_PARTS:
                    yield key, value
                    continue
                acc = accumulators.get(key)
                if acc is None:
                    acc = accumulators[key] = self.combine.create_accumulator()
                self.combine.add_input(acc, value)
        self.row_groups.inc()
        for key, acc in accumulators.items():
            yield key, self.combine.extract_output(acc)


class ReadComputeMetrics(ComputeMetrics):
    """:class:`ComputeMetrics` of planned work items (:func:`beambleu.io.inputs.plan`), each read and
    counted in one step (:class:`ReadAndCount`): the same output as ``ReadPairs | ComputeMetrics``
    for the same items. ``columns`` and ``batch_size`` are :class:`~.read.ReadPairs`'."""

    def __init__(self, columns: Sequence[str], batch_size: int, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.columns, self.batch_size = list(columns), batch_size

    def _count(self, items):
        return items | "ReadAndCount" >> beam.ParDo(ReadAndCount(self.config, self.columns, self.batch_size))


#: the name of :class:`ComputeMetrics` in beambleu's first releases (BLEU only)
ComputeBleu = ComputeMetrics


def _is_part(element) -> bool:
    return element[0] == BatchToStats.SENTENCE_PARTS


def _is_not_part(element) -> bool:
    return element[0] != BatchToStats.SENTENCE_PARTS


def _second(element):
    return element[1]

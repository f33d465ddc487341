"""The read stage: planned work items (a Parquet row group, a whole text file) -> ``(source,
first_row, RecordBatch)`` (:class:`ReadPairs`, its DoFn :class:`ReadRowGroups`). Progress is Beam's
counters (``row_groups`` here: work items read; ``pairs`` in the count stage), which the driver
reads; the workers print nothing."""

from __future__ import annotations

from typing import List, Sequence

import apache_beam as beam
from apache_beam.metrics import Metrics

from ..io.inputs import WorkItem, read_batches
from .coders import BatchTriple
from .count import NAMESPACE

__all__ = ["ReadPairs", "ReadRowGroups", "spread_items"]


class ReadRowGroups(beam.DoFn):
    """Work item -> (source, first_row, RecordBatch) for each batch. ``total_rows`` and
    ``progress`` are kept for callers and not used (the workers print no progress)."""

    def __init__(self, columns: Sequence[str], batch_size: int, total_rows: int = 0, progress: bool = False):
        self.columns, self.batch_size, self.total_rows, self.progress = list(columns), batch_size, total_rows, progress

    def setup(self):
        self.row_groups = Metrics.counter(NAMESPACE, "row_groups")

    def process(self, item: WorkItem):
        for first_row, batch in read_batches(item, self.columns, self.batch_size):
            yield item.path, first_row, batch
        self.row_groups.inc()


def spread_items(pbegin, items: List[WorkItem], spread: bool = True):
    """PBegin -> the planned work items, reshuffled so that the runner spreads them over its workers
    (``spread``; False for a runner with one worker, in this process, where the shuffle would only
    cost: a GroupByKey and four more steps to build and run, 6% of a 1,000-pair run's instructions)."""
    items = pbegin | "WorkItems" >> beam.Create(items, reshuffle=False)
    return items | "Spread" >> beam.Reshuffle() if spread else items


class ReadPairs(beam.PTransform):
    """A planned input -> (source, first_row, RecordBatch), coded by :class:`~.coders.BatchTripleCoder`
    (sized by its Arrow buffers, not pickled for Beam's byte counters). ``spread``: see
    :func:`spread_items`."""

    def __init__(self, items: List[WorkItem], columns: Sequence[str], batch_size: int, total_rows: int = 0,
                 progress: bool = False, spread: bool = True):
        super().__init__()
        self.items, self.columns, self.batch_size = items, columns, batch_size
        self.total_rows, self.progress, self.spread = total_rows, progress, spread

    def expand(self, pbegin):
        return (spread_items(pbegin, self.items, self.spread)
                | "ReadRowGroups" >> beam.ParDo(ReadRowGroups(self.columns, self.batch_size, self.total_rows,
                                                              self.progress)).with_output_types(BatchTriple))

"""The read stage: planned work items (file, row group) -> ``(source, first_row, RecordBatch)``
(:class:`ReadPairs`, its DoFn :class:`ReadRowGroups`)."""

from __future__ import annotations

import sys
import time
from typing import List, Sequence

import apache_beam as beam
from apache_beam.metrics import Metrics

from ..io.inputs import WorkItem, read_batches
from .count import NAMESPACE

__all__ = ["ReadPairs", "ReadRowGroups"]

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

"""What the paired tests need in long format: that every system of a tested group has the
baseline's segments, each once (:class:`CheckSegments`)."""

from __future__ import annotations

import apache_beam as beam

from ..io.inputs import InputSpec
from .count import as_triple

__all__ = ["CheckSegments", "SegmentIds", "none_last"]

def none_last(value):
    """The sort key that puts None after every system name (systems are listed in this order)."""
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
        _, _, batch = as_triple(element)
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
    systems = tuple(sorted(counts, key=none_last))
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

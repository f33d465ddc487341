"""The score stage on the workers: each combined (grouping set, shard) table scored into a sorted
Parquet part of the group table and the groups' JSON objects (:class:`ScoreShards`), the corpus
into its JSON object."""

from __future__ import annotations

from typing import Dict, Iterator, List, Optional, Sequence, Tuple

import apache_beam as beam

from bleu_core import scoring

from ..groups import grouptable, results
from ..groups.results import Significance, as_metric_set
from ..io.inputs import InputSpec
from ..io.outputs import create_part
from .pairing import none_last

__all__ = ["ScoreShards", "score_groups", "scored_groups"]

def score_groups(metrics, group_by: Sequence[str], table: grouptable.GroupTable,
                 sig: Optional[Significance] = None, system_column: str = "system",
                 chunk_rows: int = 4096) -> Iterator[List[Dict]]:
    """The JSON objects of one combined table's groups (see :func:`scored_groups`), a chunk at a time."""
    for chunk in scored_groups(metrics, group_by, table, sig, system_column, chunk_rows):
        yield [d for d, _ in chunk]


def scored_groups(metrics, group_by: Sequence[str], table: grouptable.GroupTable,
                  sig: Optional[Significance] = None, system_column: str = "system",
                  chunk_rows: int = 4096) -> Iterator[List[Tuple[Dict, object]]]:
    """The JSON objects of one combined table's groups with their accumulators, in its (canonical)
    key order, a chunk at a time (memory: a chunk, plus the baseline's groups' results when
    testing), with the paired test against the baseline's group of the same other key values when asked. A shard holds, for every
    group of a set including the system column, the baseline's group with the same other key
    values (the shard hash leaves the system column out), so the test is done here, shard by shard."""
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
        docs.append((d, acc))
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
        import pyarrow.parquet as pq
        from apache_beam.io.filesystems import FileSystems

        (g, shard), table = element
        if g == -1:
            yield "corpus", {"group_by": [], "key": {}, **results.group_doc(self.metrics, table.accs[0], self.sig)}
            return
        system = "system" if self.spec.wide else self.sig.system_column
        if self.sig.paired and not self.spec.wide and g == _first_set_with(self.spec.group_by, system):
            # the systems there are (every row is in each set with the system column: one set tells)
            yield "systems", g, sorted(set(table.keys.column(system).to_pylist()), key=none_last)
        path = FileSystems.join(self.parts_dir, f"set-{g:04d}-shard-{shard:04d}.parquet")
        n = 0
        with create_part(path) as fh:  # a retried bundle writes the same file again
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

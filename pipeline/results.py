"""Scores of combined accumulators, as the outputs show them (Beam-free, never naming a metric).

``group_doc`` makes the JSON object of one accumulator: with one metric, that metric's object
(sacrebleu's fields, the statistics, the interval when bootstrapped) plus ``n_pairs``; with
several, ``{"n_pairs", "scores": [one object per metric]}`` (sacrebleu's ``-f json`` prints a list
for several metrics too). ``TableLayout`` turns such objects into rows of the group table (each
metric's :meth:`~bleu_core.protocol.Metric.table_columns`). ``score_groups`` scores one combined
:class:`~beambleu.grouptable.GroupTable` (one grouping set, one shard) into the rows of the group
table, each with its JSON object, in the table's canonical key order. A shard holds, for every
group of a set including the system column, the baseline's group with the same other key values
(the shard hash leaves the system column out), so the paired test is done here, shard by shard.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import partial
from typing import Dict, Iterator, List, Optional, Sequence

import numpy as np
import pyarrow as pa

from bleu_core.protocol import Metric, MetricSet

from . import accumulate as acc_ops
from . import grouptable

#: the JSON object of a group, in a part (a string column)
JSON_COLUMN = "__json__"

#: significance fields of a metric that become columns of the group table (after its signature)
TABLE_CONFIDENCE = ("confidence_mean", "confidence_low", "confidence_high", "confidence_half_width")
TABLE_PAIRED = (("baseline", pa.string()), ("p_value", pa.float64()), ("difference", pa.float64()))
#: columns every metric shares (the same pairs)
SHARED = ("n_pairs", "nrefs")


def as_metric_set(metrics) -> MetricSet:
    """A :class:`MetricSet` from a metric, a sequence of metrics or a MetricSet."""
    if isinstance(metrics, MetricSet):
        return metrics
    if isinstance(metrics, Metric):
        return MetricSet([metrics])
    return MetricSet(metrics)


#: Significance.method: Poisson bootstrap replicates (intervals, --paired-bs) or the approximate
#: randomization test's swapped totals (--paired-ar)
BOOTSTRAP, RANDOMIZATION = "bootstrap", "randomization"


@dataclass(frozen=True)
class Significance:
    """What the scores get from the replicates each accumulator holds (all off by default):
    ``n_boot`` bootstrap replicates, or with ``method=RANDOMIZATION`` ``n_boot`` trials of the
    approximate randomization test (each trial's totals of the swapped rows)."""

    n_boot: int = 0
    seed: int = 12345
    paired: bool = False
    baseline: Optional[str] = None
    system_column: str = "system"
    method: str = BOOTSTRAP
    seed_label: Optional[str] = None  # the signature's seed: value (SACREBLEU_SEED=none: "none")

    @property
    def intervals(self) -> bool:
        return bool(self.n_boot) and self.method == BOOTSTRAP


def metric_dicts(metrics: MetricSet, acc: np.ndarray, sig: Optional[Significance] = None) -> List[Dict]:
    """One object per metric of an accumulator: sacrebleu's JSON fields and the statistics; with
    the bootstrap, the interval and (until stripped) the replicate scores under ``_replicates``."""
    from .significance import interval

    k = metrics.width
    n_boot = sig.n_boot if sig else 0
    totals, nrefs = acc_ops.stats_of(acc, k), acc_ops.nrefs_of(acc)
    boot = acc_ops.boot_of(acc, k) if n_boot else None
    if boot is not None and boot.shape[0] != n_boot:
        raise ValueError(f"accumulator holds {boot.shape[0]} bootstrap replicates, expected {n_boot}")
    out = []
    seed = None if not n_boot else (sig.seed_label or sig.seed)
    for metric, cols in zip(metrics, metrics.slices):
        score = metric.score(totals[cols])
        if nrefs is not None:  # (an empty accumulator has no signature)
            signature = metric.signature(nrefs, n_bootstrap=n_boot if n_boot and sig.intervals else None, seed=seed)
            if n_boot and not sig.intervals:
                signature.update("ar", n_boot)
            score.signature = signature.format()
        d = score.to_dict()
        if n_boot and sig.intervals:
            d.update(interval(metric, boot[:, cols]))
        elif n_boot:  # the randomization test's inputs, for pairing (not written)
            d["_swapped"] = (metric, totals[cols], boot[:, cols])
        out.append(d)
    return out


def group_doc(metrics, acc: np.ndarray, sig: Optional[Significance] = None) -> Dict:
    """The JSON object of one accumulator (see the module doc)."""
    metrics = as_metric_set(metrics)
    parts = metric_dicts(metrics, acc, sig)
    if len(parts) == 1:
        return {**parts[0], "n_pairs": acc_ops.n_pairs(acc)}
    return {"n_pairs": acc_ops.n_pairs(acc), "scores": parts}


#: the name beambleu's earlier releases gave :func:`group_doc` (one metric: BLEU)
bleu_dict = group_doc


def score_parts(doc: Dict) -> List[Dict]:
    """The per-metric objects of a group's (or the corpus') JSON object."""
    return doc["scores"] if "scores" in doc else [doc]


def _key(name, d):
    return d["key"].get(name)


def _group_by(d):
    return ",".join(d["group_by"])


def _field(i, field, d):
    part = score_parts(d)[i]
    if callable(field):
        return field(part)
    if isinstance(field, tuple):
        key, n = field
        return part[key][n]
    return part.get(field)


def _shared(name, d):
    return d["n_pairs"] if name == "n_pairs" else score_parts(d)[0].get(name)


def _group_field(name, d):
    return d.get(name)


class TableLayout:
    """The group table's columns and how each is read from a group's JSON object: ``group_by``,
    every key column (null where a grouping set does not have it), then each metric's
    :meth:`~bleu_core.protocol.Metric.table_columns` (named with its ``column_prefix``), its
    significance columns right after its ``signature`` when bootstrapped; ``n_pairs`` and
    ``nrefs`` once, where the first metric lists them (else right after the keys)."""

    def __init__(self, key_types: Dict[str, pa.DataType], metrics, sig: Optional[Significance] = None):
        metrics = as_metric_set(metrics)
        cols = [("group_by", pa.string(), _group_by)]
        cols += [(c, t, partial(_key, c)) for c, t in key_types.items()]
        shared = [("n_pairs", pa.int64(), partial(_shared, "n_pairs")),
                  ("nrefs", pa.string(), partial(_shared, "nrefs"))]
        if not any(name in SHARED for name, _, _ in metrics[0].table_columns()):
            cols += shared
        for i, metric in enumerate(metrics):
            prefix = metric.column_prefix
            for name, typ, field in metric.table_columns():
                if name in SHARED:
                    if i == 0:
                        cols += [c for c in shared if c[0] == name]
                    continue
                cols.append((prefix + name, typ, partial(_field, i, field)))
                if name != "signature" or sig is None:
                    continue
                if sig.intervals:
                    cols += [(prefix + c, pa.float64(), partial(_field, i, c)) for c in TABLE_CONFIDENCE]
                if sig.paired:
                    cols.append((prefix + "baseline", pa.string(), partial(_group_field, "baseline")))
                    cols += [(prefix + c, t, partial(_field, i, c)) for c, t in TABLE_PAIRED[1:]]
        names = [c[0] for c in cols]
        clash = sorted({n for n in names if names.count(n) > 1})
        if clash:
            raise ValueError(f"group table column {clash[0]!r} is both a group key and a score field; rename the "
                             "key column")
        self.columns = cols
        self.schema = pa.schema([pa.field(name, typ) for name, typ, _ in cols])

    def row(self, d: Dict) -> Dict:
        """The group table's row of a group's JSON object."""
        return {name: get(d) for name, _, get in self.columns}


def score_groups(metrics, group_by: Sequence[str], table: grouptable.GroupTable,
                 sig: Optional[Significance] = None, system_column: str = "system",
                 chunk_rows: int = 4096) -> Iterator[List[Dict]]:
    """The JSON objects of one combined table's groups, in its (canonical) key order, a chunk at a
    time (memory: a chunk, plus the baseline's groups when testing), with the paired test against
    the baseline's group of the same other key values when asked."""
    from .significance import paired, strip_replicates

    metrics = as_metric_set(metrics)
    testing = sig is not None and sig.paired and system_column in group_by
    pos = list(group_by).index(system_column) if testing else None
    baselines = {}  # other key values -> the baseline's group, with its replicate scores
    if testing:
        for key, acc in grouptable.iter_rows(table):
            if key[pos] == sig.baseline:
                baselines[key[:pos] + key[pos + 1:]] = metric_dicts(metrics, acc, sig)
    docs = []
    for key, acc in grouptable.iter_rows(table, chunk_rows):
        d = {"group_by": list(group_by), "key": dict(zip(group_by, key)), **group_doc(metrics, acc, sig)}
        if testing:
            base = baselines.get(key[:pos] + key[pos + 1:])
            d["baseline"] = sig.baseline
            if base is not None and key[pos] != sig.baseline:
                for part, base_part in zip(score_parts(d), base):
                    part.update(paired(part, base_part))
            else:
                for part in score_parts(d):
                    part["p_value"] = None
                if key[pos] != sig.baseline:
                    d["paired_note"] = "the baseline has no pairs in this group"
        strip_replicates(score_parts(d))
        docs.append(d)
        if len(docs) == chunk_rows:
            yield docs
            docs = []
    if docs:
        yield docs


def part_table(docs: List[Dict], layout: TableLayout) -> pa.Table:
    """A part: the group table's rows of ``docs`` plus each one's JSON object."""
    rows = [layout.row(d) for d in docs]
    table = pa.Table.from_pylist(rows, schema=layout.schema)
    return table.append_column(JSON_COLUMN, pa.array([json.dumps(d, ensure_ascii=False) for d in docs],
                                                     pa.large_string()))

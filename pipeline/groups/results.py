"""The JSON objects and group-table rows of scored accumulators (Beam-free, never naming a metric).

The scores themselves come from the score stage (:mod:`bleu_core.scoring`); this module only
shapes its results as ``beambleu run`` writes them. ``group_doc`` makes the JSON object of one
accumulator, whatever the number of metrics: ``{"n_pairs", "scores": [one object per metric]}``,
each object the metric's id, sacrebleu's fields (counts typed), the statistics, the interval when
bootstrapped and the paired test's fields when tested. ``TableLayout`` and ``part_table`` make the group table's columns (each
metric's :meth:`~bleu_core.protocol.Metric.table_columns`): statistics and ``n_pairs`` straight
from the accumulators, keys from the groups' Arrow keys, scores from the scored objects.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import partial
from typing import Dict, List, NamedTuple, Optional, Sequence, Union

import numpy as np
import pyarrow as pa

from bleu_core import scoring
from bleu_core.protocol import Metric, MetricSet, Stat

from . import accumulate as acc_ops
from .document import JSON_COLUMN, score_parts  # noqa: F401  (part of this module's API)

__all__ = ["BOOTSTRAP", "COUNT_FIELDS", "N_PAIRS", "RANDOMIZATION", "SHARED", "TABLE_CONFIDENCE", "TABLE_PAIRED",
           "Significance", "TableLayout", "Totals", "as_metric_set", "bleu_dict", "group_doc", "part_table", "result_dict", "score_acc",
           "small_group_note", "typed_fields"]


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
BOOTSTRAP, RANDOMIZATION = scoring.BOOTSTRAP, scoring.RANDOMIZATION


@dataclass(frozen=True)
class Significance:
    """What the scores get from the replicates each accumulator holds (all off by default):
    ``n_boot`` bootstrap replicates, or with ``method=RANDOMIZATION`` ``n_boot`` trials of the
    approximate randomization test (each trial's totals of the swapped rows)."""

    n_boot: int = 0
    seed: int = 12345
    paired: bool = False
    baseline: Optional[Union[str, int]] = None  # a value of the system column (an int for an integer column)
    system_column: str = "system"
    method: str = BOOTSTRAP
    seed_label: Optional[str] = None  # the signature's seed: value (SACREBLEU_SEED=none: "none")

    @property
    def intervals(self) -> bool:
        return bool(self.n_boot) and self.method == BOOTSTRAP

    @property
    def resampling(self) -> scoring.Resampling:
        """The score stage's view of these options."""
        return scoring.Resampling(self.method if self.n_boot else None, self.n_boot, self.seed, self.seed_label)


def score_acc(metrics: MetricSet, acc: np.ndarray, sig: Optional[Significance] = None) -> List[scoring.MetricResult]:
    """The score stage's results of one accumulator, one per metric."""
    k = metrics.width
    resampling = sig.resampling if sig is not None else None
    replicates = acc_ops.boot_of(acc, k) if resampling is not None and resampling.drawn else None
    return scoring.score_all(metrics, acc_ops.stats_of(acc, k), acc_ops.nrefs_of(acc), replicates, resampling)


#: the signature fields that hold a count (sacrebleu writes them as text): an integer in the result
#: document; ``nrefs`` is null when the pairs' reference counts vary (the signature's ``nrefs:var``)
COUNT_FIELDS = ("nrefs", "nc", "nw", "bs", "seed")
_DIGITS = re.compile(r"[0-9]+")


def typed_fields(d: Dict) -> Dict:
    """sacrebleu's JSON object with the signature's counts (:data:`COUNT_FIELDS`) as integers
    (``nrefs`` null for ``var``); every other field (``tok``, ``case``, a plugin's) as it is."""
    out = dict(d)
    for k in COUNT_FIELDS:
        v = out.get(k)
        if isinstance(v, str) and _DIGITS.fullmatch(v):
            out[k] = int(v)
        elif k == "nrefs" and v == "var":
            out[k] = None
    return out


def result_dict(result: scoring.MetricResult, paired: Optional[scoring.Paired] = None,
                metric: Optional[Metric] = None) -> Dict:
    """One metric's JSON object: its ``metric`` id, sacrebleu's fields (counts typed, see
    :func:`typed_fields`) and the statistics, the interval when bootstrapped, and the paired
    test's fields when given."""
    d = typed_fields(result.score.to_dict())
    if metric is not None:
        d = {"metric": metric.id, **d}
    ci = result.interval
    if ci is not None:
        d.update(confidence_mean=ci.mean, confidence_low=ci.low, confidence_high=ci.high,
                 confidence_half_width=ci.half_width, confidence=ci.text(1))
    empty = 0 if result.empty is None else int(result.empty.sum())
    if empty:  # a group too small for its interval: say so (see bleu_core.scoring.empty_replicates)
        d.update(confidence_empty_resamples=empty, confidence_note=small_group_note(empty, len(result.empty)))
    if paired is not None:
        d.update(p_value=paired.p_value, significant=paired.significant, difference=paired.difference)
    return d


def small_group_note(empty: int, n: int) -> str:
    """What the JSON and the summary say of a group too small for its interval."""
    if empty == n:
        return f"too small for an interval: all {n} resamples drew none of its pairs"
    return (f"too small for its interval: {empty} of {n} resamples drew none of its pairs and are left out "
            f"(the interval is of the other {n - empty})")


def group_doc(metrics, acc: np.ndarray, sig: Optional[Significance] = None,
              scored: Optional[List[scoring.MetricResult]] = None,
              paired: Optional[Sequence[Optional[scoring.Paired]]] = None) -> Dict:
    """The JSON object of one accumulator (see the module doc), from its results when the caller
    has them already (``scored``), with each metric's paired test (``paired``)."""
    metrics = as_metric_set(metrics)
    scored = score_acc(metrics, acc, sig) if scored is None else scored
    parts = [result_dict(r, None if paired is None else paired[i], metrics[i]) for i, r in enumerate(scored)]
    return {"n_pairs": acc_ops.n_pairs(acc), "scores": parts}


#: the name beambleu's earlier releases gave :func:`group_doc` (one metric: BLEU)
bleu_dict = group_doc


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


def _empty(part):
    """The group table's ``confidence_empty_resamples``: 0 when the JSON leaves it out."""
    return part.get("confidence_empty_resamples", 0)


def _shared(name, d):
    return score_parts(d)[0].get(name)


def _group_field(name, d):
    return d.get(name)


def _baseline_text(d):
    """The group table's ``baseline`` (a string column, the baseline of an integer system column too)."""
    value = d.get("baseline")
    return None if value is None else str(value)


class Totals(NamedTuple):
    """A group-table column taken from the groups' accumulators: their column ``index``."""

    index: int


#: ``n_pairs``, the third entry from the end of an accumulator (see :mod:`beambleu.groups.accumulate`)
N_PAIRS = Totals(-3)


class TableLayout:
    """The group table's columns and where each comes from: ``group_by``, every key column (null
    where a grouping set does not have it; from the groups' Arrow keys), then each metric's
    :meth:`~bleu_core.protocol.Metric.table_columns` (named with its ``column_prefix``; a
    :class:`~bleu_core.protocol.Stat` is taken straight from the accumulators' totals, the rest
    from the scored group's JSON object), its significance columns right after its ``signature``
    when bootstrapped; ``n_pairs`` (from the accumulators) and ``nrefs`` (an integer, null when the
    reference counts vary) once, right after the keys: the same columns whatever the metrics."""

    def __init__(self, key_types: Dict[str, pa.DataType], metrics, sig: Optional[Significance] = None):
        metrics = as_metric_set(metrics)
        cols = [("group_by", pa.string(), _group_by)]
        cols += [(c, t, partial(_key, c)) for c, t in key_types.items()]
        shared = [("n_pairs", pa.int64(), N_PAIRS), ("nrefs", pa.int64(), partial(_shared, "nrefs"))]
        cols += shared
        offset = 0  # where the metric's statistics start in an accumulator
        for i, metric in enumerate(metrics):
            prefix = metric.column_prefix
            for name, typ, field in metric.table_columns():
                if name in SHARED:
                    continue
                get = Totals(offset + field.index) if isinstance(field, Stat) else partial(_field, i, field)
                cols.append((prefix + name, typ, get))
                if name != "signature" or sig is None:
                    continue
                if sig.intervals:
                    cols += [(prefix + c, pa.float64(), partial(_field, i, c)) for c in TABLE_CONFIDENCE]
                    cols.append((prefix + "confidence_empty_resamples", pa.int64(), partial(_field, i, _empty)))
                if sig.paired:
                    cols.append((prefix + "baseline", pa.string(), _baseline_text))
                    cols += [(prefix + c, t, partial(_field, i, c)) for c, t in TABLE_PAIRED[1:]]
            offset += metric.width
        names = [c[0] for c in cols]
        clash = sorted({n for n in names if names.count(n) > 1})
        if clash:
            raise ValueError(f"group table column {clash[0]!r} is both a group key and a score field; rename the "
                             "key column")
        self.columns = cols
        self.key_types = dict(key_types)
        self.schema = pa.schema([pa.field(name, typ) for name, typ, _ in cols])


def part_table(docs: List[Dict], layout: TableLayout, accs: np.ndarray, keys: Optional[pa.Table] = None) -> pa.Table:
    """A part: the group table's rows of ``docs`` (the scored groups' JSON objects) plus each
    one's JSON object. ``accs`` are the groups' accumulators (``int64[len(docs), width]``, a slice
    of the scored group table's), from which the statistics columns and ``n_pairs`` are taken
    as they are. With ``keys`` (the groups' key columns, one row per doc: a slice of the scored
    group table's Arrow keys) the key columns are cast from them to the table's types (a key
    column the grouping set has not is null), not rebuilt from the JSON objects' Python values."""
    n = len(docs)
    if accs.shape[0] != n:
        raise ValueError(f"{accs.shape[0]} accumulators for {n} groups")
    arrays = []
    for name, typ, get in layout.columns:
        if isinstance(get, Totals):
            arrays.append(pa.array(accs[:, get.index], typ))
        elif keys is not None and name in layout.key_types:
            arrays.append(keys.column(name).combine_chunks().cast(typ) if name in keys.column_names
                          else pa.nulls(n, typ))
        else:
            arrays.append(pa.array([get(d) for d in docs], typ))
    table = pa.Table.from_arrays(arrays, schema=layout.schema)
    return table.append_column(JSON_COLUMN, pa.array([json.dumps(d, ensure_ascii=False) for d in docs],
                                                     pa.large_string()))

"""Scores of combined accumulators, as the outputs show them (Beam-free).

``bleu_dict`` makes one BLEU object of the JSON document (sacrebleu's fields, the statistics, the
interval when bootstrapped); ``score_groups`` scores one combined :class:`~pipeline.grouptable.GroupTable`
(one grouping set, one shard) into the rows of the group table, each with its JSON object, in the
table's canonical key order. A shard holds, for every group of a set including the system column,
the baseline's group with the same other key values (the shard hash leaves the system column out),
so the paired test is done here, shard by shard.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Dict, Iterator, List, Optional, Sequence

import numpy as np
import pyarrow as pa

from bleu_core import Bleu

from . import accumulate as acc_ops
from . import grouptable

#: the JSON object of a group, in a part (a string column)
JSON_COLUMN = "__json__"

#: fields of a group's BLEU object that become columns of the group table, in this order
TABLE_FIELDS = ("score", "bp", "ratio", "sys_len", "ref_len", "n_pairs", "nrefs", "signature")
TABLE_SIGNIFICANCE = ("confidence_mean", "confidence_low", "confidence_high", "confidence_half_width",
                      "baseline", "p_value", "difference")


@dataclass(frozen=True)
class Significance:
    """What the scores get from the bootstrap replicates (all off by default)."""

    n_boot: int = 0
    seed: int = 12345
    paired: bool = False
    baseline: Optional[str] = None
    system_column: str = "system"


def bleu_dict(bleu: Bleu, acc: np.ndarray, sig: Optional[Significance] = None) -> Dict:
    """One BLEU object: sacrebleu's JSON fields, the statistics and ``n_pairs``; with the
    bootstrap, the interval and (until stripped) the replicate scores under ``_replicates``."""
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


def table_schema(key_types: Dict[str, pa.DataType], order: int, sig: Optional[Significance]) -> pa.Schema:
    """The group table's columns: ``group_by``, every key column (null where a grouping set does
    not have it), the score fields, the significance fields when bootstrapped, then per order
    ``counts_n``, ``totals_n``, ``precision_n``."""
    fields = [pa.field("group_by", pa.string())]
    fields += [pa.field(c, t) for c, t in key_types.items()]
    fields += [pa.field("score", pa.float64()), pa.field("bp", pa.float64()), pa.field("ratio", pa.float64()),
               pa.field("sys_len", pa.int64()), pa.field("ref_len", pa.int64()), pa.field("n_pairs", pa.int64()),
               pa.field("nrefs", pa.string()), pa.field("signature", pa.string())]
    if sig is not None and sig.n_boot:
        fields += [pa.field(c, pa.float64()) for c in TABLE_SIGNIFICANCE[:4]]
    if sig is not None and sig.paired:
        fields += [pa.field("baseline", pa.string()), pa.field("p_value", pa.float64()),
                   pa.field("difference", pa.float64())]
    for n in range(1, order + 1):
        fields += [pa.field(f"counts_{n}", pa.int64()), pa.field(f"totals_{n}", pa.int64()),
                   pa.field(f"precision_{n}", pa.float64())]
    return pa.schema(fields)


def table_row(d: Dict, schema: pa.Schema) -> Dict:
    """The group table's row of a group's JSON object (keys from ``d["key"]``)."""
    row = {"group_by": ",".join(d["group_by"])}
    for f in schema:
        name = f.name
        if name == "group_by":
            continue
        if name in d["key"]:
            row[name] = d["key"][name]
        elif name.startswith(("counts_", "totals_", "precision_")) and name.rsplit("_", 1)[1].isdigit():
            field, n = name.rsplit("_", 1)
            row[name] = d["precisions" if field == "precision" else field][int(n) - 1]
        else:
            row[name] = d.get(name)
    return row


def score_groups(bleu: Bleu, group_by: Sequence[str], table: grouptable.GroupTable,
                 sig: Optional[Significance] = None, system_column: str = "system",
                 chunk_rows: int = 4096) -> Iterator[List[Dict]]:
    """The JSON objects of one combined table's groups, in its (canonical) key order, a chunk at a
    time (memory: a chunk, plus the baseline's groups when testing), with the paired test against
    the baseline's group of the same other key values when asked."""
    from .significance import paired

    testing = sig is not None and sig.paired and system_column in group_by
    pos = list(group_by).index(system_column) if testing else None
    baselines = {}  # other key values -> the baseline's group, with its replicate scores
    if testing:
        for key, acc in grouptable.iter_rows(table):
            if key[pos] == sig.baseline:
                baselines[key[:pos] + key[pos + 1:]] = bleu_dict(bleu, acc, sig)
    docs = []
    for key, acc in grouptable.iter_rows(table, chunk_rows):
        d = {"group_by": list(group_by), "key": dict(zip(group_by, key)), **bleu_dict(bleu, acc, sig)}
        if testing:
            base = baselines.get(key[:pos] + key[pos + 1:])
            d["baseline"] = sig.baseline
            if key[pos] == sig.baseline:
                d["p_value"] = None
            elif base is None:
                d["p_value"] = None
                d["paired_note"] = "the baseline has no pairs in this group"
            else:
                d.update(paired(d, base))
        d.pop("_replicates", None)
        docs.append(d)
        if len(docs) == chunk_rows:
            yield docs
            docs = []
    if docs:
        yield docs


def part_table(docs: List[Dict], schema: pa.Schema) -> pa.Table:
    """A part: the group table's rows of ``docs`` plus each one's JSON object."""
    rows = [table_row(d, schema) for d in docs]
    table = pa.Table.from_pylist(rows, schema=schema)
    return table.append_column(JSON_COLUMN, pa.array([json.dumps(d, ensure_ascii=False) for d in docs],
                                                     pa.large_string()))

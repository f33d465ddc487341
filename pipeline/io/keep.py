"""``run --keep EXPR``: which pairs ``--sentence-output`` writes (the corpus and the groups are
scored on every pair all the same). An expression is ``COLUMN OP NUMBER``: a per-pair column of
the metrics (a statistic, ``bleu_counts_1``, or a score, ``chrf_score``; a metric's id alone
names its score: ``chrf>=40``), one of ``< <= > >= == !=``, and a number. Several must all hold.
A pair whose column is null (none is, today) does not pass."""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass
from typing import Dict, Iterable, Optional, Sequence

import numpy as np
import pyarrow as pa

__all__ = ["Keep", "keep_mask", "parse_keep"]

_OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq,
        "!=": operator.ne}
_EXPR = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(<=|>=|==|!=|<|>)\s*"
                   r"([-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)\s*$")


@dataclass(frozen=True)
class Keep:
    """One condition: ``column`` (a per-pair column), ``op`` (its text), ``value``."""

    column: str
    op: str
    value: float
    text: str

    def holds(self, values: np.ndarray) -> np.ndarray:
        return _OPS[self.op](values, self.value)


def parse_keep(text: str, columns: Sequence[str], aliases: Dict[str, str]) -> Keep:
    """A :class:`Keep` of ``text`` over ``columns`` (the per-pair output's metric columns);
    ``aliases`` maps a metric id to its score column. ValueError (the message for one line) when
    the expression is malformed or names no such column."""
    m = _EXPR.match(text)
    if not m:
        raise ValueError(f"--keep {text!r}: expected COLUMN OP NUMBER, e.g. 'chrf>=40' or 'bleu_sys_len<=100' "
                         "(OP one of < <= > >= == !=)")
    name, op, number = m.groups()
    column = aliases.get(name, name)
    if column not in columns:
        shown = sorted(aliases) + [c for c in columns]
        raise ValueError(f"--keep {text!r}: no per-pair column {name!r} (one of: {', '.join(shown)})")
    return Keep(column, op, float(number), text.strip())


def keep_mask(table: pa.Table, conditions: Iterable[Keep]) -> Optional[np.ndarray]:
    """The rows of ``table`` for which every condition holds (None: no condition)."""
    mask = None
    for cond in conditions:
        col = table.column(cond.column)
        values = np.asarray(col.to_numpy(zero_copy_only=False), dtype=np.float64)
        ok = cond.holds(values)
        if col.null_count:
            ok &= np.asarray(col.is_valid())
        mask = ok if mask is None else mask & ok
    return mask

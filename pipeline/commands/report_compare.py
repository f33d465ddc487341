"""``beambleu report NEW.json --compare OLD.json`` and the gates a CI job sets on a result.

The comparison prints, per metric and per group (the corpus, then the groups of the shown
grouping set, in key order), the old score, the new and their difference (new - old).

A gate checks every such score of the metric it names (the corpus and each group):

* ``--fail-below METRIC=X``: fails where the score is below X (``score < X``);
* ``--fail-above METRIC=X``: fails where the score is above X (``score > X``): the gate for a
  metric where lower is better, TER;
* ``--fail-drop METRIC=D`` (with ``--compare``): fails where the score got worse than the old
  document's same group by more than D: lower for BLEU, chrF..., higher for TER.

A missing score (a group without pairs) fails ``--fail-below``/``--fail-above``. Each failure is
one line on stderr (``beambleu: fail: ...``) and the command exits with :data:`GATE_FAILED`
after printing the report; a metric that the result does not score is bad usage (exit 2).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from ..errors import UsageError
from .report_text import canonical, fmt, key_text, lower_is_better, metric_name, render

__all__ = ["GATE_FAILED", "Gate", "check_gates", "compare_lines", "gate_arg", "is_metric", "scored"]

#: the exit code of a report whose gates failed
GATE_FAILED = 3


def is_metric(name: str, wanted: str) -> bool:
    """A metric's name (``chrF2++``) matches ``wanted``: the name or its id (``chrf``), in any case."""
    return wanted.casefold() in (name.casefold(), name.casefold().rstrip("+0123456789"))


@dataclass(frozen=True)
class Gate:
    kind: str  # "below", "above" or "drop"
    metric: str
    value: float

    @property
    def flag(self) -> str:
        return f"--fail-{self.kind} {self.metric}={self.value:g}"


def gate_arg(kind: str):
    """The argparse type of ``--fail-<kind> METRIC=VALUE``."""
    def parse(text: str) -> Gate:
        metric, sep, value = text.partition("=")
        try:
            number = float(value)
        except ValueError:
            number = float("nan")
        if not sep or not metric.strip() or number != number or number in (float("inf"), float("-inf")):
            raise argparse.ArgumentTypeError(f"expected METRIC=NUMBER (e.g. BLEU=30), not {text!r}")
        if kind == "drop" and number < 0:
            raise argparse.ArgumentTypeError(f"the drop must be >= 0, not {value}")
        return Gate(kind, metric.strip(), number)
    parse.__name__ = f"--fail-{kind}"
    return parse


def _label(g: Dict, cols: List[str]) -> str:
    return ", ".join(f"{c}={key_text(g['key'][c])}" for c in cols)


def scored(doc: Dict, cols: List[str]) -> List[Tuple[Tuple, str, Dict]]:
    """(sort key, label, score object) of the corpus and of each group of the grouping set ``cols``."""
    out = []
    if doc.get("corpus") is not None:
        out.append(((0,), "corpus", doc["corpus"]))
    groups = [g for g in doc["groups"] if cols and g["group_by"] == cols]
    for g in sorted(groups, key=lambda g: tuple(canonical(g["key"][c]) for c in cols)):
        out.append(((1, tuple(canonical(g["key"][c]) for c in cols)), _label(g, cols), g))
    return out


def _views_of(views: List[Dict], wanted: str, flag: str) -> List[Dict]:
    found = [v for v in views if is_metric(metric_name(v), wanted)]
    if not found:
        raise UsageError(f"{flag}: this result scores {', '.join(metric_name(v) for v in views)}")
    return found


def _num(v) -> str:
    return "null" if v is None else f"{v:.6g}"


def check_gates(gates: List[Gate], views: List[Dict], old: Optional[List[Dict]], cols: List[str]) -> List[str]:
    """The failures of ``gates`` (one line each, without the ``beambleu: `` prefix)."""
    failures = []
    for gate in gates:
        for view in _views_of(views, gate.metric, gate.flag):
            name = metric_name(view)
            if gate.kind == "drop":
                if old is None:
                    raise UsageError(f"{gate.flag} needs --compare OLD.json")
                before = {label: d for _, label, d in scored(_old_view(old, name) or {"groups": []}, cols)}
            for _, label, d in scored(view, cols):
                score = d.get("score")
                if gate.kind in ("below", "above"):
                    if score is None:
                        failures.append(f"{name} has no score ({gate.flag}): {label}")
                    elif (score < gate.value) if gate.kind == "below" else (score > gate.value):
                        sign = "<" if gate.kind == "below" else ">"
                        failures.append(f"{name} {_num(score)} {sign} {gate.value:g} ({gate.flag}): {label}")
                    continue
                prev = before.get(label)
                if prev is None or prev.get("score") is None or score is None:
                    continue
                worse = (score - prev["score"]) if lower_is_better(name) else (prev["score"] - score)
                if worse > gate.value:
                    failures.append(f"{name} {_num(prev['score'])} -> {_num(score)}, {worse:.6g} worse, more than "
                                    f"{gate.value:g} ({gate.flag}): {label}")
    return failures


def _old_view(old: List[Dict], name: str) -> Optional[Dict]:
    return next((v for v in old if metric_name(v) == name), None)


def compare_lines(views: List[Dict], old: List[Dict], cols: List[str], width: int, new_path: str,
                  old_path: str) -> List[str]:
    """Per metric, a table: group, old, new, difference (new - old)."""
    out: List[str] = []
    for view in views:
        name = metric_name(view)
        if out:
            out.append("")
        prev = _old_view(old, name)
        if prev is None:
            out.append(f"{name}: not in {old_path} (it scores {', '.join(metric_name(v) for v in old)})")
            continue
        new_rows = {label: (k, d) for k, label, d in scored(view, cols)}
        old_rows = {label: (k, d) for k, label, d in scored(prev, cols)}
        labels = sorted(set(new_rows) | set(old_rows), key=lambda lb: (new_rows.get(lb) or old_rows[lb])[0])
        rows = []
        for lb in labels:
            a = (old_rows.get(lb) or (None, {}))[1].get("score")
            b = (new_rows.get(lb) or (None, {}))[1].get("score")
            diff = "-" if a is None or b is None else f"{b - a:+.{width}f}"
            rows.append([lb, fmt(a, width), fmt(b, width), diff])
        better = "lower" if lower_is_better(name) else "higher"
        out.append(f"{name}: {old_path} (old) -> {new_path} (new); {better} is better")
        out.append(render(["group" if cols else "", "old", "new", "new - old"], rows))
    return out

"""``beambleu report result.json``: the result of ``beambleu run`` (or the JSON of ``beambleu
score``, one system or ``--paired-bs`` systems) as a table people read, and optionally a plot
(``--plot out.png|svg``, with the ``plot`` extra).

The table has one row per system and one column per value of the other key columns of a
grouping set (e.g. ``system,langpair``): each cell is the score, with its 95% interval when the
run had ``--confidence``/``--paired-bs``, and ``*`` when the paired test found the system
significantly different from the baseline (p < 0.05); the baseline is marked ``(b)``. Without a
system column in the grouping set, one row per group. Does not import Apache Beam.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Dict, List, Optional, Tuple

from bleu_core.scoring import ALPHA
from bleu_core.signature import parse_signature

from ..errors import UsageError, int_at_least
from ..groups.document import score_parts
from ..io.ownership import Target, check_outputs, commit_file, remove_tree, staging_path
from ..io.textfiles import InputError

__all__ = ["build_parser", "cell", "check_plot", "check_result", "choose_set", "from_paired_score", "load",
           "metric_name", "metric_views", "plot", "render", "run", "table"]


def build_parser(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p.add_argument("result", metavar="RESULT.json",
                   help="the --output of `beambleu run`, or the JSON `beambleu score` printed")
    p.add_argument("--group-by", metavar="COL[,COL...]", default=None,
                   help="which grouping set to show (default: the first with the system column and another, "
                        "else the first)")
    p.add_argument("--system-column", default=None, metavar="COL",
                   help="the column naming systems (default: the run's, else 'system')")
    p.add_argument("--width", "-w", type=int_at_least(0), default=1, help="decimals (default: %(default)s)")
    p.add_argument("--plot", metavar="FILE", default=None,
                   help="also draw the scores with their intervals to FILE (.png, .svg or .pdf; needs "
                        "pip install 'beambleu[plot]')")
    p.add_argument("--metric", default=None, metavar="NAME",
                   help="show (and plot) only this metric: its name in the result (BLEU, chrF2, chrF2++) or its id "
                        "(bleu, chrf) (default: every metric, the first one plotted)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing --plot file")
    return p


def load(path: str) -> List[Dict]:
    """The result in ``path``, checked (:func:`check_result`), as one ``beambleu run`` document
    per metric (:func:`metric_views`)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = len(data[data.rfind(b"\n", 0, exc.start) + 1: exc.start].decode("utf-8", "replace")) + 1
        raise InputError(path, f"invalid UTF-8 (byte 0x{data[exc.start]:02x})", line, column) from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(path, f"not JSON: {exc.msg}", exc.lineno, exc.colno) from None
    except RecursionError:
        raise InputError(path, "not a result: JSON nested too deeply") from None
    if isinstance(doc, list) and doc and all(isinstance(d, dict) and "system" not in d for d in doc):
        return [_from_score(d, path, f"entry {i}") for i, d in enumerate(doc)]  # `score -m bleu chrf` JSON
    if isinstance(doc, list):
        return from_paired_score(doc, path)
    if isinstance(doc, dict) and "score" in doc and "groups" not in doc:  # `beambleu score` JSON
        return [_from_score(doc, path, "")]
    if not isinstance(doc, dict) or "corpus" not in doc or "groups" not in doc:
        raise InputError(path, "not a `beambleu run` or `beambleu score` result (no 'corpus' and 'groups')")
    check_result(doc, path)
    return metric_views(doc)


def _interval_of_sacrebleu_fields(d):
    """A score object as sacrebleu's JSON gives it (``confidence_mean``/``confidence_var`` of one
    system, or the paired tests' ``mean``/``ci``): the interval shown is mean ± half-width, as
    sacrebleu's own table shows it (``beambleu score --with-stats`` and ``beambleu run`` give the
    percentile bounds themselves)."""
    if not isinstance(d, dict) or "confidence_low" in d:
        return d
    for mean, half in (("confidence_mean", "confidence_var"), ("mean", "ci")):
        if _number(d.get(mean)) and _number(d.get(half)) and d.get(mean) is not None and d.get(half) is not None:
            return {**d, "confidence_low": d[mean] - d[half], "confidence_high": d[mean] + d[half]}
    return d


def _from_score(d, path: str, where: str) -> Dict:
    d = _interval_of_sacrebleu_fields(d)
    _check_score(d, path, where)
    return {"signature": d.get("signature", ""), "corpus": d, "groups": [],
            "bootstrap": {"n": d.get("bs"), "seed": d.get("seed")}}


def metric_views(doc: Dict) -> List[Dict]:
    """A ``beambleu run`` document of several metrics (``scores`` lists in the corpus and each
    group) as one single-metric document per metric; a single-metric document as itself."""
    corpus = doc["corpus"]
    first = corpus if corpus is not None else (doc["groups"][0] if doc["groups"] else {})
    if "scores" not in first:
        return [doc]
    views = []
    for i, part in enumerate(first["scores"]):
        groups = [{k: v for k, v in g.items() if k != "scores"} | score_parts(g)[i] for g in doc["groups"]]
        views.append({**doc, "signature": part.get("signature", ""), "groups": groups,
                      "corpus": None if corpus is None else {**score_parts(corpus)[i],
                                                             "n_pairs": corpus.get("n_pairs")}})
    return views


def _number(v) -> bool:
    return v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))


def _scalar(v) -> bool:
    return v is None or isinstance(v, (str, int, float, bool))


def _check_score(d, path: str, where: str) -> None:
    """A score object (the corpus, a group, a system) has what the table and the plot read."""
    if not isinstance(d, dict):
        raise InputError(path, f"{where} is not an object")
    if "scores" in d:  # several metrics
        n_pairs = {k: v for k, v in d.items() if k == "n_pairs"}
        if not isinstance(d["scores"], list) or not d["scores"]:
            raise InputError(path, f"{where}: 'scores' is not a list of score objects")
        for i, part in enumerate(d["scores"]):
            _check_score({**part, **n_pairs} if isinstance(part, dict) else part, path, f"{where}: scores[{i}]")
        return
    if "score" not in d:
        raise InputError(path, f"{where} has no 'score'")
    at = f"{where}: " if where else ""
    for k in ("score", "confidence_low", "confidence_high", "p_value"):
        if k in d and not _number(d[k]):
            raise InputError(path, f"{at}'{k}' is not a number ({json.dumps(d[k])[:40]})")
    if not isinstance(d.get("signature", ""), str):
        raise InputError(path, f"{at}'signature' is not a string")
    if ("confidence_low" in d) != ("confidence_high" in d):
        raise InputError(path, f"{at}only one of 'confidence_low' and 'confidence_high' is given")
    if "n_pairs" in d and (not isinstance(d["n_pairs"], int) or isinstance(d["n_pairs"], bool)):
        raise InputError(path, f"{at}'n_pairs' is not an integer ({json.dumps(d['n_pairs'])[:40]})")


def check_result(doc: Dict, path: str) -> None:
    """A ``beambleu run`` document has the shape and types the report reads (unknown keys are
    ignored); else an :class:`InputError` naming the file and the first thing wrong."""
    signature = doc.get("signature", "")
    if not (isinstance(signature, str) or (isinstance(signature, list) and all(isinstance(x, str) for x in signature))):
        raise InputError(path, "'signature' is not a string")
    if doc["corpus"] is not None:
        _check_score(doc["corpus"], path, "corpus")
    first = doc["corpus"] if doc["corpus"] is not None else (doc["groups"][0] if doc["groups"] else None)
    n_metrics = len(score_parts(first)) if isinstance(first, dict) else None
    boot = doc.get("bootstrap")
    if boot is not None:
        if not isinstance(boot, dict):
            raise InputError(path, "'bootstrap' is not an object")
        for k in ("baseline", "system_column"):
            if not _scalar(boot.get(k)):
                raise InputError(path, f"bootstrap: '{k}' is not a string")
    if not isinstance(doc["groups"], list):
        raise InputError(path, "'groups' is not a list")
    for i, g in enumerate(doc["groups"]):
        where = f"groups[{i}]"
        _check_score(g, path, where)
        if n_metrics is not None and len(score_parts(g)) != n_metrics:
            raise InputError(path, f"{where}: scores {len(score_parts(g))} metrics, the corpus (or groups[0]) "
                                   f"{n_metrics}")
        cols = g.get("group_by")
        if not isinstance(cols, list) or not cols or not all(isinstance(c, str) for c in cols):
            raise InputError(path, f"{where}: 'group_by' is not a list of column names")
        key = g.get("key")
        if not isinstance(key, dict):
            raise InputError(path, f"{where}: 'key' is not an object")
        for c in cols:
            if c not in key:
                raise InputError(path, f"{where}: 'key' has no value for the column {c!r}")
            if not _scalar(key[c]):
                raise InputError(path, f"{where}: 'key' value of {c!r} is not a string, number or null")


def from_paired_score(rows, path: str) -> List[Dict]:
    """`beambleu score -i BASE SYS... --paired-bs` JSON as results with one group per system,
    one per metric (each entry: ``system`` and one object per metric, under the metric's name)."""
    if not rows:
        raise InputError(path, "an empty list: not a `beambleu score --paired-bs` result")
    names = None
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or "system" not in row or len(row) < 2:
            raise InputError(path, f"entry {i} is not a system's result (no 'system' and score objects)")
        if not isinstance(row["system"], str):
            raise InputError(path, f"entry {i}: 'system' is not a string")
        mine = [k for k in row if k != "system"]
        if names is not None and mine != names:
            raise InputError(path, f"entry {i}: scores {', '.join(mine)}, entry 0 {', '.join(names)}")
        names = mine
        for name in mine:
            _check_score(row[name], path, f"entry {i}: {name!r}")
    views = []
    for name in names:
        cells = [row[name] for row in rows]
        # sacrebleu's Result objects: the randomization test gives p-values and no mean
        randomization = all(c.get("mean", 0) is None for c in cells) and any(c.get("p_value") for c in cells)
        groups, baseline, signature = [], None, ""
        for row in rows:
            system = row["system"]
            if system.startswith("Baseline: "):
                system = system[len("Baseline: "):]
                baseline = system
            b = _interval_of_sacrebleu_fields(row[name])
            signature = b.get("signature", signature)
            groups.append({"group_by": ["system"], "key": {"system": system}, **b})
        sig = parse_signature(signature)
        views.append({"signature": signature, "corpus": None, "groups": groups, "name": name,
                      "bootstrap": {"n": sig.get("bs") or sig.get("ar"), "seed": sig.get("seed"), "baseline": baseline,
                                    "system_column": "system",
                                    "method": "approximate-randomization" if randomization else "poisson"}})
    return views


def _test_name(boot: Dict) -> str:
    """The paired test a result was made with (``bootstrap.method``)."""
    return "approximate randomization" if boot.get("method") == "approximate-randomization" else "paired bootstrap"


def _is_metric(name: str, wanted: str) -> bool:
    """``--metric`` matches a metric's name (``chrF2++``) or its id (``chrf``), in any case."""
    return wanted.casefold() in (name.casefold(), name.casefold().rstrip("+0123456789"))


def metric_name(doc: Dict) -> str:
    """The name of the metric a single-metric document scores (``BLEU``, ``chrF2``, ...)."""
    if doc.get("name"):
        return doc["name"]
    for d in [doc["corpus"]] + doc["groups"]:
        if isinstance(d, dict) and isinstance(d.get("name"), str):
            return d["name"]
    return "score"


def choose_set(doc: Dict, wanted: Optional[str], system: str, path: str) -> List[str]:
    sets = list(dict.fromkeys(tuple(g["group_by"]) for g in doc["groups"]))
    if wanted:
        cols = tuple(c.strip() for c in wanted.split(","))
        if cols not in sets:
            left = [gs for gs in doc.get("grouping_sets") or [] if isinstance(gs, dict)
                    and tuple(gs.get("group_by") or ()) == cols and not gs.get("in_document", True)]
            if left:
                raise InputError(path, f"grouping set {','.join(cols)} has {left[0].get('groups')} groups, more than "
                                       f"the document lists: they are in the group table {left[0].get('see')}")
            shown = "; ".join(",".join(s) for s in sets) or "none"
            raise InputError(path, f"no grouping set {','.join(cols)} in this result (it has: {shown})")
        return list(cols)
    for s in sets:
        if system in s and len(s) > 1:
            return list(s)
    return list(sets[0]) if sets else []


def _fmt(v, width: int) -> str:
    return "-" if v is None else f"{v:.{width}f}"


def cell(g: Dict, width: int, baseline: Optional[str], system: str) -> str:
    text = _fmt(g["score"], width)
    if "confidence_low" in g:
        text += f" [{_fmt(g['confidence_low'], width)}, {_fmt(g['confidence_high'], width)}]"
    if g.get("confidence_empty_resamples"):
        text += " ~"
    if baseline is not None and g["key"].get(system) == baseline:
        text += " (b)"
    elif g.get("p_value") is not None and g["p_value"] < ALPHA:
        text += " *"
    return text


def _key_text(v) -> str:
    return "null" if v is None else str(v)


def table(doc: Dict, cols: List[str], system: str, width: int) -> Tuple[List[str], List[List[str]]]:
    """(header, rows) of the grouping set ``cols``."""
    boot = doc.get("bootstrap") or {}
    baseline = boot.get("baseline")
    groups = [g for g in doc["groups"] if g["group_by"] == cols]
    if system in cols:
        others = [c for c in cols if c != system]
        col_keys = list(dict.fromkeys(tuple(g["key"][c] for c in others) for g in groups))
        systems = list(dict.fromkeys(g["key"][system] for g in groups))
        if baseline in systems:
            systems.remove(baseline)
            systems.insert(0, baseline)
        by = {(g["key"][system], tuple(g["key"][c] for c in others)): g for g in groups}
        header = [system] + ([" ".join(_key_text(v) for v in k) for k in col_keys] if others else [metric_name(doc)])
        rows = []
        for s in systems:
            rows.append([_key_text(s)] + [cell(by[(s, k)], width, baseline, system) if (s, k) in by else "-"
                                          for k in col_keys])
        return header, rows
    header = [",".join(cols), metric_name(doc)]
    return header, [[" ".join(_key_text(g["key"][c]) for c in cols), cell(g, width, None, system)] for g in groups]


def render(header: List[str], rows: List[List[str]]) -> str:
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    line = lambda r: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))  # noqa: E731
    return "\n".join([line(header), "  ".join("-" * w for w in widths)] + [line(r) for r in rows])


def check_plot(args) -> str:
    """Before anything is read or printed: matplotlib is there, ``--plot`` names a format it
    writes and a path beambleu may write (:mod:`beambleu.io.ownership`). Returns the format."""
    try:
        import matplotlib
        from matplotlib.backend_bases import FigureCanvasBase
    except ImportError as exc:
        raise UsageError(f"--plot needs matplotlib: pip install 'beambleu[plot]' ({exc})") from None
    check_outputs([Target("--plot", args.plot, "file")], [args.result], args.overwrite)
    fmt = os.path.splitext(args.plot)[1][1:].lower()
    formats = FigureCanvasBase.get_supported_filetypes()
    if fmt not in formats:
        raise UsageError(f"{args.plot}: --plot: the file name must end in .png, .svg, .pdf or another format "
                         f"matplotlib {matplotlib.__version__} writes ({', '.join(sorted(formats))})")
    return fmt


def _value(v) -> float:
    return float("nan") if v is None else v


def plot(doc: Dict, cols: List[str], system: str, path: str, fmt: str) -> None:
    """Draw the grouping set ``cols`` to ``path``: staged beside it, renamed into place when complete."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    boot = doc.get("bootstrap") or {}
    baseline = boot.get("baseline")
    groups = [g for g in doc["groups"] if g["group_by"] == cols]
    others = [c for c in cols if c != system]
    if system in cols:
        series = list(dict.fromkeys(g["key"][system] for g in groups))
        xs = list(dict.fromkeys(tuple(g["key"][c] for c in others) for g in groups)) or [()]
    else:
        series = [None]
        xs = list(dict.fromkeys(tuple(g["key"][c] for c in cols) for g in groups))
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(xs) * max(1, len(series)) ** 0.5 + 2), 4.2))
    step = 0.8 / max(1, len(series))
    for j, s in enumerate(series):
        pts = []
        for i, x in enumerate(xs):
            for g in groups:
                if (s is None and tuple(g["key"][c] for c in cols) == x) or (
                        s is not None and g["key"][system] == s and tuple(g["key"][c] for c in others) == x):
                    pts.append((i, g))
        pos = [i - 0.4 + step * (j + 0.5) for i, _ in pts]
        ys = [_value(g["score"]) for _, g in pts]
        if pts and "confidence_low" in pts[0][1]:
            err = [[y - _value(g["confidence_low"]) for y, (_, g) in zip(ys, pts)],
                   [_value(g["confidence_high"]) - y for y, (_, g) in zip(ys, pts)]]
        else:
            err = None
        label = None if s is None else (f"{s} (baseline)" if s == baseline else str(s))
        ax.errorbar(pos, ys, yerr=err, fmt="o", capsize=4, label=label)
        for (_, g), x, y in zip(pts, pos, ys):
            if g.get("p_value") is not None and g["p_value"] < ALPHA:
                ax.annotate("*", (x, y), textcoords="offset points", xytext=(6, 4), fontsize=12)
    ax.set_xticks(range(len(xs)))
    ax.set_xticklabels([" ".join(_key_text(v) for v in x) or "all" for x in xs], rotation=30 if len(xs) > 6 else 0,
                       ha="right" if len(xs) > 6 else "center")
    name = metric_name(doc)
    ax.set_ylabel(name)
    ax.set_xlabel(", ".join(others if system in cols else cols) or "")
    title = f"{name} per group"
    if "confidence_low" in (groups[0] if groups else {}):
        title += f", 95% bootstrap intervals (B = {boot.get('n', '?')})"
    if baseline is not None:
        title += f"\n* p < {ALPHA} against the baseline {baseline} ({_test_name(boot)})"
    ax.set_title(title, fontsize=9)
    ax.set_xlim(-0.6, len(xs) - 0.4)
    ax.grid(axis="y", alpha=0.3)
    if series != [None]:
        ax.legend(fontsize=8, loc="best")
    fig.text(0.01, 0.01, doc.get("signature", ""), fontsize=6, alpha=0.7)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    target = os.path.abspath(path)
    staged = staging_path(target)
    try:
        fig.savefig(staged, format=fmt)
        commit_file(staged, target)
    except OSError as exc:
        remove_tree(staged)
        raise InputError(path, f"cannot write the plot: {exc.strerror or exc}") from None
    except BaseException:
        remove_tree(staged)
        raise
    finally:
        plt.close(fig)


def run(args) -> int:
    fmt = check_plot(args) if args.plot else None
    views = load(args.result)
    names = [metric_name(v) for v in views]
    shown = [v for v in views if args.metric is None or _is_metric(metric_name(v), args.metric)]
    if not shown:
        raise UsageError(f"--metric {args.metric}: this result scores {', '.join(names)}")
    first = shown[0]
    boot = first.get("bootstrap") or {}
    system = args.system_column or boot.get("system_column") or "system"
    cols = choose_set(first, args.group_by, system, args.result)
    if args.plot and not cols:
        raise InputError(args.result, "--plot needs groups (or several systems): this result has one score")
    w = args.width
    out = []
    for doc in shown:
        if out:
            out.append("")
        out += _section(doc, cols, system, w, len(shown) > 1)
    if args.plot:  # first: a failure prints no table
        plot(first, cols, system, args.plot, fmt)
    print("\n".join(out))
    if args.plot:
        print(f"beambleu: wrote {args.plot}", file=sys.stderr)
    return 0


def _spm_model(doc: Dict) -> Optional[Dict]:
    """The SentencePiece model a BLEU result was computed with (``run``: under ``inputs``;
    ``score --with-stats``: in the score), or None; the signature alone cannot name the file."""
    sig = doc.get("signature")
    if not isinstance(sig, str) or "|tok:" not in sig:
        return None
    model = (doc.get("inputs") or {}).get("spm_model") or (doc.get("corpus") or {}).get("spm_model")
    return model if isinstance(model, dict) else None


def _section(doc: Dict, cols: List[str], system: str, w: int, named: bool) -> List[str]:
    """The report of one metric: the corpus score, the signature, the table, its notes."""
    boot = doc.get("bootstrap") or {}
    c = doc["corpus"]
    name = metric_name(doc)
    out = []
    if c is not None:
        pairs = f" on {c['n_pairs']:,} pairs" if c.get("n_pairs") is not None else ""
        out.append(f"corpus: {name} {_fmt(c['score'], w)}"
                   + (f" [{_fmt(c['confidence_low'], w)}, {_fmt(c['confidence_high'], w)}]" if "confidence_low" in c
                      else "") + (" ~" if c.get("confidence_empty_resamples") else "") + pairs)
    if doc.get("signature"):  # (sacrebleu's paired JSON has none)
        out.append(f"{name + ' ' if named else ''}signature: {doc['signature']}")
    model = _spm_model(doc)
    if model is not None:
        out.append(f"SentencePiece model: {model.get('path', '?')} (SHA-256 {model.get('sha256', '?')})")
    if cols:
        header, rows = table(doc, cols, system, w)
        out += ([""] if out else []) + [render(header, rows)]
        notes = []
        if any("confidence_low" in g for g in doc["groups"]):
            if boot.get("n") is None:  # sacrebleu's JSON fields: mean and half-width only
                notes.append("[low, high]: bootstrap mean -/+ the 95% half-width (as the JSON of `score` gives them)")
            else:
                notes.append(f"[low, high]: 95% bootstrap interval ({boot['n']} resamples, "
                             f"seed {boot.get('seed', '?')})")
        if any(g.get("confidence_empty_resamples") for g in [*doc["groups"], c or {}]):
            notes.append("~: too small for its interval: the resamples that drew none of its pairs are left out "
                         "(its confidence_note in the JSON says how many)")
        if boot.get("baseline") is not None:
            notes.append(f"(b): baseline {boot['baseline']}; *: p < {ALPHA} in the {_test_name(boot)} test against it")
        if notes:
            out += [""] + notes
    return out


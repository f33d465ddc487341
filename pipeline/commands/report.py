"""``beambleu report result.json``: the result of ``beambleu run`` (or any JSON ``beambleu score``
prints: one system, several metrics, several systems with or without ``--paired-bs``/``--paired-ar``)
as tables people read (``--format text``) or a paper inputs (``--format latex``), optionally a
plot (``--plot out.png|pdf|svg``, with the ``plot`` extra), a comparison with an older result
(``--compare OLD.json``) and gates for CI (``--fail-below``, ``--fail-above``, ``--fail-drop``: exit 3).

The table has one row per system and one column per value of the other key columns of a
grouping set (e.g. ``system,langpair``): each cell is the score, with its 95% interval when the
run had ``--confidence``/``--paired-bs``, ``*`` when the paired test found the system
significantly different from the baseline (p < 0.05) and ``?`` in a group whose baseline has no
pairs (not tested); the baseline is marked ``(b)``. Without a system column in the grouping set,
one row per group. Orders and layout: :mod:`beambleu.commands.report_text`; the plot:
:mod:`beambleu.commands.report_plot`; comparison and gates: :mod:`beambleu.commands.report_compare`.
Does not import Apache Beam.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from typing import Dict, List, Optional, Tuple

from bleu_core.signature import parse_signature

from ..errors import UsageError, int_at_least
from ..groups.document import score_parts
from ..io.ownership import Target, check_outputs
from ..io.textfiles import InputError
from . import report_compare, report_plot, report_text
from .report_text import build_grid, fmt as _fmt, metric_name, wrap

__all__ = ["DEFAULT_LINE_WIDTH", "build_parser", "check_plot", "check_result", "choose_set", "from_paired_score",
           "line_width", "load", "metric_name", "metric_views", "run"]

#: the width of the text report when stdout is not a terminal (and no --line-width)
DEFAULT_LINE_WIDTH = 100


def _figsize(text: str) -> Tuple[float, float]:
    try:
        w, h = (float(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected WIDTH,HEIGHT in inches (e.g. 8,5), not {text!r}") from None
    if not (0 < w <= 200 and 0 < h <= 200):
        raise argparse.ArgumentTypeError(f"WIDTH and HEIGHT must be above 0 and at most 200 inches, not {text!r}")
    return w, h


def build_parser(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p.add_argument("result", metavar="RESULT.json",
                   help="the --output of `beambleu run`, or the JSON `beambleu score` printed")
    p.add_argument("--group-by", metavar="COL[,COL...]", default=None,
                   help="which grouping set to show (default: the first with the system column and another, "
                        "else the first)")
    p.add_argument("--system-column", default=None, metavar="COL",
                   help="the column naming systems (default: the run's, else 'system')")
    p.add_argument("--width", "-w", type=int_at_least(0), default=1, help="decimals (default: %(default)s)")
    p.add_argument("--metric", default=None, metavar="NAME",
                   help="show (and plot) only this metric: its name in the result (BLEU, chrF2, chrF2++) or its id "
                        "(bleu, chrf) (default: every metric, the first one plotted)")
    t = p.add_argument_group("tables")
    t.add_argument("--format", "-f", choices=("text", "latex"), default="text",
                   help="text tables, or a LaTeX booktabs table per metric to \\input in a paper (significance as "
                        "a dagger, explained in the caption) (default: %(default)s)")
    t.add_argument("--sort", choices=report_text.SORTS, default="score",
                   help="order of the systems after the baseline: by score, best first (the system's score in the "
                        "result's `system` grouping set, else its mean over the groups; lower is better for TER), "
                        "or by name; groups are always in key order (default: %(default)s)")
    t.add_argument("--line-width", type=int_at_least(40), default=None, metavar="COLS",
                   help="split a table into several and wrap the notes so that no line is longer; the signature "
                        "stays whole, to be copied (default: the terminal's width, "
                        f"{DEFAULT_LINE_WIDTH} when stdout is not a terminal)")
    g = p.add_argument_group("plot")
    g.add_argument("--plot", metavar="FILE", default=None,
                   help="also draw the scores with their intervals to FILE, one panel per group; the format by the "
                        "extension: .png, .pdf or .svg (needs pip install 'beambleu[plot]')")
    g.add_argument("--dpi", type=int_at_least(10), default=150, help="resolution of the plot (default: %(default)s)")
    g.add_argument("--figsize", type=_figsize, default=None, metavar="W,H",
                   help="size of the plot in inches (default: from the number of systems and groups)")
    g.add_argument("--overwrite", action="store_true", help="replace an existing --plot file")
    c = p.add_argument_group("comparison and gates (exit 3 when a gate fails, one line per failing score)")
    c.add_argument("--compare", metavar="OLD.json", default=None,
                   help="also print, per metric and group, OLD.json's score, this result's and the difference")
    for kind, text in (("below", "fail when a score (the corpus or a group of the shown grouping set) is below "
                                 "NUMBER (repeatable)"),
                       ("above", "fail when a score is above NUMBER: the gate for TER, where lower is better "
                                 "(repeatable)"),
                       ("drop", "with --compare: fail when a score is worse than OLD.json's by more than NUMBER "
                                "(lower; higher for TER) (repeatable)")):
        c.add_argument(f"--fail-{kind}", type=report_compare.gate_arg(kind), action="append", default=[],
                       metavar="METRIC=NUMBER", help=text)
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
    """`beambleu score -i SYS... -f json` JSON (sacrebleu's multi-system JSON: each entry
    ``system`` and, under each metric's name, the score as printed, a string; with
    ``--paired-bs``/``--paired-ar``, an object: ``score``, ``p_value``, ``mean``, ``ci``) as results
    with one group per system, one per metric."""
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
            if isinstance(row[name], str):  # several systems without a paired test: the score as printed
                try:
                    row[name] = {"score": float(row[name])}
                except ValueError:
                    raise InputError(path, f"entry {i}: {name!r} is neither a score object nor a number "
                                           f"({json.dumps(row[name])[:40]})") from None
            _check_score(row[name], path, f"entry {i}: {name!r}")
    views = []
    for name in names:
        cells = [row[name] for row in rows]
        # sacrebleu's Result objects: the randomization test gives p-values and no mean
        randomization = all(c.get("mean", 0) is None for c in cells) and any(c.get("p_value") for c in cells)
        groups, baseline, signature = [], None, ""
        for row in rows:
            system = row["system"]
            if system.startswith("Baseline: ") or system == "Baseline":  # (no -i: "Baseline", "System 1", ...)
                system = system[len("Baseline: "):] or system
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
    left = [gs for gs in doc.get("grouping_sets") or [] if isinstance(gs, dict) and not gs.get("in_document", True)]
    if not sets and left:  # a corpus alone would read as a result without groups
        where = list(dict.fromkeys(str(gs.get("see")) for gs in left))
        named = "; ".join(f"{','.join(gs.get('group_by') or ())} ({gs.get('groups')} groups)" for gs in left)
        raise InputError(path, f"the document lists none of its groups (run's --json-groups-limit left them to the "
                               f"group table): grouping set{'s' * (len(left) > 1)} {named} "
                               f"{'are' if len(left) > 1 else 'is'} in the group table {' and '.join(where)}")
    for s in sets:
        if system in s and len(s) > 1:
            return list(s)
    return list(sets[0]) if sets else []


def line_width(args) -> int:
    """``--line-width``, else the terminal's width, else :data:`DEFAULT_LINE_WIDTH`."""
    if args.line_width:
        return args.line_width
    if sys.stdout.isatty():
        return max(40, shutil.get_terminal_size((DEFAULT_LINE_WIDTH, 24)).columns)
    return DEFAULT_LINE_WIDTH


def check_plot(args) -> str:
    """Before anything is read or printed: matplotlib is there, ``--plot`` names a path beambleu
    may write (:mod:`beambleu.io.ownership`) in a format report writes (PNG, PDF, SVG, by the
    extension) and ``--figsize`` x ``--dpi`` is a size it draws. Returns the format."""
    try:
        import matplotlib
    except ImportError as exc:
        raise UsageError(f"--plot needs matplotlib: pip install 'beambleu[plot]' ({exc})") from None
    del matplotlib  # (imported again when drawing)
    check_outputs([Target("--plot", args.plot, "file")], [args.result], args.overwrite)
    fmt = os.path.splitext(args.plot)[1][1:].lower()
    if fmt not in report_plot.FORMATS:
        raise UsageError(f"{args.plot}: --plot: the file name must end in .png, .pdf or .svg"
                         + (f" (not .{os.path.splitext(args.plot)[1][1:]})" if fmt else ""))
    if args.figsize and max(args.figsize) * args.dpi >= 2 ** 15:
        raise UsageError(f"--figsize {args.figsize[0]:g},{args.figsize[1]:g} at --dpi {args.dpi} is more than "
                         f"{2 ** 15 - 1} pixels a side")
    return fmt


def _pick(views: List[Dict], args) -> List[Dict]:
    names = [metric_name(v) for v in views]
    shown = [v for v in views if args.metric is None or report_compare.is_metric(metric_name(v), args.metric)]
    if not shown:
        raise UsageError(f"--metric {args.metric}: this result scores {', '.join(names)}")
    return shown


def run(args) -> int:
    gates = args.fail_below + args.fail_above + args.fail_drop
    if args.fail_drop and not args.compare:
        raise UsageError(f"{args.fail_drop[0].flag} needs --compare OLD.json")
    fmt = check_plot(args) if args.plot else None
    if args.plot and args.compare and os.path.abspath(args.plot) == os.path.abspath(args.compare):
        raise UsageError(f"{args.plot}: --plot is the input {args.compare}")
    views = load(args.result)
    old = load(args.compare) if args.compare else None
    shown = _pick(views, args)
    first = shown[0]
    boot = first.get("bootstrap") or {}
    system = args.system_column or boot.get("system_column") or "system"
    cols = choose_set(first, args.group_by, system, args.result)
    if args.plot and not cols:
        raise InputError(args.result, "--plot needs groups (or several systems): this result has one score")
    failures = report_compare.check_gates(gates, views, old, cols)  # before printing: a bad gate is exit 2
    limit = line_width(args)
    w = args.width
    out: List[str] = []
    if args.format == "latex":
        out = _latex(shown, cols, system, args, limit)
    else:
        for doc in shown:
            if out:
                out.append("")
            out += _section(doc, cols, system, w, len(shown) > 1, args.sort, limit)
    if old is not None:
        lines = report_compare.compare_lines(shown, old, cols, w, args.result, args.compare)
        lines = [x for line in lines for x in line.split("\n")]
        out += [""] + (["% " + x for x in lines] if args.format == "latex" else lines)
    if args.plot:  # first: a failure prints no table
        report_plot.plot(build_grid(first, cols, system, args.sort), first, args.plot, fmt, args.dpi, args.figsize)
    print("\n".join(out))
    if args.plot:
        print(f"beambleu: wrote {args.plot}", file=sys.stderr)
    for line in failures:
        print(f"beambleu: fail: {line}", file=sys.stderr)
    if failures:
        return report_compare.GATE_FAILED
    if gates:
        print(f"beambleu: {len(gates)} gate{'s' * (len(gates) > 1)} passed", file=sys.stderr)
    return 0


def _latex(shown: List[Dict], cols: List[str], system: str, args, limit: int) -> List[str]:
    """Every metric's LaTeX table; without groups, one table of the corpus scores."""
    w = args.width
    if not cols:
        out = ["% beambleu report", "% needs \\usepackage{booktabs}", r"\begin{tabular}{lr}", r"\toprule",
               r"metric & score \\", r"\midrule"]
        for doc in shown:
            c = doc["corpus"] or {}
            text = _fmt(c.get("score"), w)
            if "confidence_low" in c:
                text += f" {{\\scriptsize [{_fmt(c['confidence_low'], w)}, {_fmt(c['confidence_high'], w)}]}}"
            out.append(f"{report_text.escape_latex(metric_name(doc))} & {text} \\\\")
        out += [r"\bottomrule", r"\end{tabular}"]
        out += [f"% {metric_name(doc)} signature: {doc['signature']}" for doc in shown if doc.get("signature")]
        return out
    out = []
    for doc in shown:
        if out:
            out.append("")
        sig = doc.get("signature") if isinstance(doc.get("signature"), str) else ""
        out += report_text.latex_table(build_grid(doc, cols, system, args.sort), doc, w, limit, sig)
    return out

def _spm_model(doc: Dict) -> Optional[Dict]:
    """The SentencePiece model a BLEU result was computed with (``run``: under ``inputs``;
    ``score --with-stats``: in the score), or None; the signature alone cannot name the file."""
    sig = doc.get("signature")
    if not isinstance(sig, str) or "|tok:" not in sig:
        return None
    model = (doc.get("inputs") or {}).get("spm_model") or (doc.get("corpus") or {}).get("spm_model")
    return model if isinstance(model, dict) else None


def _section(doc: Dict, cols: List[str], system: str, w: int, named: bool, sort: str = "score",
             limit: int = DEFAULT_LINE_WIDTH) -> List[str]:
    """The report of one metric: the corpus score, the signature, the tables, their notes; the
    tables split and the notes wrapped to ``limit`` characters (the signature and the SentencePiece
    model's line stay whole, to be copied)."""
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
    notes: List[str] = []
    if cols:
        grid = build_grid(doc, cols, system, sort)
        out += ([""] if out else []) + report_text.text_tables(grid, w, limit)
        notes = report_text.notes(grid, doc)
    elif c is not None and c.get("confidence_empty_resamples"):
        notes = [report_text.EMPTY_NOTE]
    if notes:
        out += [""] + notes
    whole = len(out) - (len(notes) + 1 if notes else 0)  # the signature and model lines stay whole: to be copied
    return out[:whole] + [piece for line in out[whole:] for piece in wrap(line, limit)]

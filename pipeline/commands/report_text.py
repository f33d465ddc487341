"""The tables of ``beambleu report``: one metric of a result as a grid (rows x columns of cells,
both in a stable order, :func:`build_grid`), printed as text tables that fit a line width
(:func:`text_tables`, split into several tables rather than wider lines) or as a LaTeX booktabs
table (:func:`latex_table`). The plot (:mod:`beambleu.commands.report_plot`) draws the same grid.

Order: the columns (the values of the grouping set's other key columns) in the canonical key
order of ``beambleu run`` (nulls first, numbers by value, strings by their UTF-8 bytes); the rows
(systems) with the baseline first, then by score, best first (``--sort score``: each system's
score in the document's ``system`` grouping set when it has one, else the mean of its cells;
lower is better for TER), ties and systems without a score by name; or by name (``--sort name``,
the baseline still first). Without a system column, one row per group, in key order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Tuple

from bleu_core.scoring import ALPHA

__all__ = ["EMPTY_NOTE", "Grid", "NOT_TESTED_MARK", "SORTS", "build_grid", "canonical", "cell", "chunk_columns",
           "escape_latex", "fmt", "key_text", "latex_table", "lower_is_better", "metric_name", "notes", "render", "test_name",
           "text_tables", "wrap"]

#: how ``--sort`` orders the systems
SORTS = ("score", "name")
#: what ``~`` means
EMPTY_NOTE = "~: too small for its interval: resamples that drew none of its pairs left out (see confidence_note)"
#: the mark of a score in a group whose baseline has no pairs (the paired test could not run)
NOT_TESTED_MARK = "?"


def lower_is_better(name: str) -> bool:
    """TER (an error rate) is better when lower; BLEU, chrF and the rest when higher."""
    return name.casefold().startswith("ter")


def metric_name(doc: Dict) -> str:
    """The name of the metric a single-metric document scores (``BLEU``, ``chrF2``, ...)."""
    if doc.get("name"):
        return doc["name"]
    for d in [doc["corpus"]] + doc["groups"]:
        if isinstance(d, dict) and isinstance(d.get("name"), str):
            return d["name"]
    return "score"


def test_name(boot: Dict) -> str:
    """The paired test a result was made with (``bootstrap.method``)."""
    return "approximate randomization" if boot.get("method") == "approximate-randomization" else "paired bootstrap"


def canonical(v) -> Tuple:
    """A key value's place in ``beambleu run``'s canonical order: null first, then numbers by
    value, then strings by their UTF-8 bytes."""
    if v is None:
        return (0,)
    if isinstance(v, (bool, int, float)):
        return (1, v)
    return (2, str(v).encode("utf-8", "surrogatepass"))


def key_text(v) -> str:
    return "null" if v is None else str(v)


def fmt(v, width: int) -> str:
    return "-" if v is None else f"{v:.{width}f}"


def cell(g: Dict, width: int, baseline, system: str, untested: bool = False) -> str:
    """One cell: the score, its interval, ``~`` (too small for its interval), ``(b)`` the
    baseline, ``*`` significant, ``?`` not tested (the group's baseline has no pairs)."""
    text = fmt(g["score"], width)
    if "confidence_low" in g:
        text += f" [{fmt(g['confidence_low'], width)}, {fmt(g['confidence_high'], width)}]"
    if g.get("confidence_empty_resamples"):
        text += " ~"
    if baseline is not None and g["key"].get(system) == baseline:
        text += " (b)"
    elif g.get("p_value") is not None and g["p_value"] < ALPHA:
        text += " *"
    elif untested:
        text += " " + NOT_TESTED_MARK
    return text


@dataclass
class Grid:
    """One metric of one grouping set: ``rows`` (systems, or group keys without a system
    column) x ``cols`` (tuples of the other key columns' values; ``[()]`` when there are none),
    ``cells[(row, col)]`` the group's score object."""

    name: str
    row_title: str
    col_titles: List[str]
    rows: List = field(default_factory=list)
    cols: List[Tuple] = field(default_factory=list)
    cells: Dict = field(default_factory=dict)
    baseline: object = None
    by_system: bool = False
    untested: List[Tuple] = field(default_factory=list)  # columns whose baseline has no pairs
    boot: Dict = field(default_factory=dict)

    def col_label(self, col: Tuple) -> str:
        return " ".join(key_text(v) for v in col) if col else self.name

    def row_label(self, row) -> str:
        return " ".join(key_text(v) for v in row) if not self.by_system else key_text(row)

    def is_baseline(self, row) -> bool:
        return self.by_system and self.baseline is not None and row == self.baseline

    def significant(self, row, col) -> bool:
        g = self.cells.get((row, col))
        return g is not None and not self.is_baseline(row) and g.get("p_value") is not None and g["p_value"] < ALPHA

    @property
    def intervals(self) -> bool:
        return any("confidence_low" in g for g in self.cells.values())


def _row_scores(doc: Dict, grid: Grid, system: str) -> Dict:
    """Each system's score for ``--sort score``: the ``system`` grouping set's, else the mean of
    its cells (None without any)."""
    own = {g["key"][system]: g["score"] for g in doc["groups"] if g["group_by"] == [system]}
    out = {}
    for r in grid.rows:
        if r in own:
            out[r] = own[r]
            continue
        vals = [grid.cells[(r, c)]["score"] for c in grid.cols if (r, c) in grid.cells
                and grid.cells[(r, c)]["score"] is not None]
        out[r] = sum(vals) / len(vals) if vals else None
    return out


def build_grid(doc: Dict, cols: List[str], system: str, sort: str = "score") -> Grid:
    """The grid of the grouping set ``cols`` of a single-metric document."""
    boot = doc.get("bootstrap") or {}
    groups = [g for g in doc["groups"] if g["group_by"] == cols]
    name = metric_name(doc)
    if system not in cols:
        grid = Grid(name, ",".join(cols), [name], boot=boot)
        for g in groups:
            row = tuple(g["key"][c] for c in cols)
            grid.cells[(row, ())] = g
        grid.rows = sorted({r for r, _ in grid.cells}, key=lambda r: tuple(canonical(v) for v in r))
        grid.cols = [()]
        return grid
    others = [c for c in cols if c != system]
    grid = Grid(name, system, others or [name], by_system=True, baseline=boot.get("baseline"), boot=boot)
    for g in groups:
        grid.cells[(g["key"][system], tuple(g["key"][c] for c in others))] = g
    grid.cols = sorted({c for _, c in grid.cells}, key=lambda c: tuple(canonical(v) for v in c))
    rows = sorted({r for r, _ in grid.cells}, key=canonical)
    grid.rows = rows
    if sort == "score":
        scores = _row_scores(doc, grid, system)
        sign = 1 if lower_is_better(name) else -1
        rows.sort(key=lambda r: (scores[r] is None, 0 if scores[r] is None else sign * scores[r]))
    if grid.baseline is not None and grid.baseline in rows:
        rows.remove(grid.baseline)
        rows.insert(0, grid.baseline)
    grid.rows = rows
    if grid.baseline is not None:
        grid.untested = [c for c in grid.cols if (grid.baseline, c) not in grid.cells]
    return grid


def _table(grid: Grid, width: int) -> Tuple[List[str], List[List[str]]]:
    header = [grid.row_title] + [grid.col_label(c) for c in grid.cols]
    untested = set(grid.untested)
    rows = []
    for r in grid.rows:
        row = [grid.row_label(r)]
        for c in grid.cols:
            g = grid.cells.get((r, c))
            row.append("-" if g is None else cell(g, width, grid.baseline if grid.by_system else None,
                                                   grid.row_title, c in untested))
        rows.append(row)
    return header, rows


def render(header: List[str], rows: List[List[str]]) -> str:
    """A text table: the first column left-aligned, the others right-aligned, two spaces apart."""
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    line = lambda r: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))  # noqa: E731
    return "\n".join([line(header).rstrip(), "  ".join("-" * w for w in widths)] + [line(r).rstrip() for r in rows])


def chunk_columns(header: List[str], rows: List[List[str]], limit: int) -> List[List[int]]:
    """The data columns (1..) in groups whose table, with the first column repeated, fits in
    ``limit`` characters (a column wider than that on its own gets a table of its own)."""
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    chunks: List[List[int]] = []
    cur: List[int] = []
    used = widths[0]
    for i in range(1, len(header)):
        if cur and used + 2 + widths[i] > limit:
            chunks.append(cur)
            cur, used = [], widths[0]
        cur.append(i)
        used += 2 + widths[i]
    if cur:
        chunks.append(cur)
    return chunks


def text_tables(grid: Grid, width: int, limit: int) -> List[str]:
    """The grid as one text table, or several (the row labels repeated) where one would be
    wider than ``limit`` characters; blank lines between them."""
    header, rows = _table(grid, width)
    out: List[str] = []
    for chunk in chunk_columns(header, rows, limit):
        pick = [0] + chunk
        if out:
            out.append("")
        out.append(render([header[i] for i in pick], [[r[i] for i in pick] for r in rows]))
    return out


def notes(grid: Grid, doc: Dict, latex: bool = False) -> List[str]:
    """What the marks of the table mean (text, or LaTeX for the caption)."""
    boot = grid.boot
    out = []
    if grid.intervals:
        if boot.get("n") is None:  # sacrebleu's JSON fields: mean and half-width only
            out.append("[low, high]: bootstrap mean -/+ the 95% half-width (as the JSON of `score` gives them)")
        else:
            out.append(f"[low, high]: 95% bootstrap interval ({boot['n']} resamples, seed {boot.get('seed', '?')})")
    c = doc.get("corpus") or {}
    if any(g.get("confidence_empty_resamples") for g in [*grid.cells.values(), c]):
        out.append(EMPTY_NOTE)
    if grid.by_system and grid.baseline is not None:
        if latex:
            out.append(f"$\\dagger$: p < {ALPHA} in the {test_name(boot)} test against the baseline "
                       f"{key_text(grid.baseline)}")
        else:
            out.append(f"(b): baseline {key_text(grid.baseline)}; *: p < {ALPHA} in the {test_name(boot)} test "
                       f"against it")
        if grid.untested:
            where = "; ".join(grid.col_label(c) for c in grid.untested)
            mark = "$\\ddagger$" if latex else NOT_TESTED_MARK
            out.append(f"{mark}: not tested: the baseline has no pairs in {where}")
    return out


def wrap(text: str, limit: int) -> List[str]:
    """A line as lines of at most ``limit`` characters, broken after spaces or ``|`` (a
    signature), continuation lines indented by two spaces; a piece longer than a line stays whole."""
    if len(text) <= limit:
        return [text]
    pieces = [p for p in re.split(r"(?<=[ |])", text) if p]
    lines, cur = [], ""
    for p in pieces:
        if cur.strip() and len(cur + p.rstrip()) > limit:
            lines.append(cur.rstrip())
            cur = "  " + p.lstrip()
        else:
            cur += p
    if cur.strip():
        lines.append(cur.rstrip())
    return lines


_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
          "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def escape_latex(text: str) -> str:
    """``text`` as LaTeX prints it literally."""
    return "".join(_LATEX.get(ch, ch) for ch in text)


def _latex_cell(grid: Grid, row, col, width: int) -> str:
    g = grid.cells.get((row, col))
    if g is None:
        return "--"
    text = fmt(g["score"], width)
    if "confidence_low" in g:
        text += f" {{\\scriptsize [{fmt(g['confidence_low'], width)}, {fmt(g['confidence_high'], width)}]}}"
    if g.get("confidence_empty_resamples"):
        text += r"\textasciitilde{}"
    if grid.significant(row, col):
        text += r"$^\dagger$"
    elif grid.by_system and grid.baseline is not None and not grid.is_baseline(row) and col in grid.untested:
        text += r"$^\ddagger$"
    return text


def latex_table(grid: Grid, doc: Dict, width: int, limit: int, signature: str) -> List[str]:
    """The grid as a booktabs ``table`` a paper can ``\\input`` (needs ``\\usepackage{booktabs}``):
    split into several ``tabular``s as the text table is split at ``limit`` characters; the
    marks explained in the caption, the signature in a comment."""
    header, rows = _table(grid, width)
    out = [f"% beambleu report: {grid.name}" + (f"; signature {signature}" if signature else ""),
           "% needs \\usepackage{booktabs}", r"\begin{table}[t]", r"\centering", r"\small"]
    for n, chunk in enumerate(chunk_columns(header, rows, limit)):
        if n:
            out.append(r"\medskip")
        out += [r"\begin{tabular}{l" + "r" * len(chunk) + "}", r"\toprule",
                " & ".join(escape_latex(header[i]) for i in [0] + chunk) + r" \\", r"\midrule"]
        for r in grid.rows:
            label = escape_latex(grid.row_label(r)) + (" (baseline)" if grid.is_baseline(r) else "")
            out.append(" & ".join([label] + [_latex_cell(grid, r, grid.cols[i - 1], width) for i in chunk]) + r" \\")
        out += [r"\bottomrule", r"\end{tabular}"]
    caption = f"{escape_latex(grid.name)} per " + (escape_latex(", ".join(grid.col_titles)) if grid.by_system
                                                    else escape_latex(grid.row_title))
    explained = [escape_latex(x).replace(r"\$\textbackslash{}dagger\$", r"$\dagger$").replace(
        r"\$\textbackslash{}ddagger\$", r"$\ddagger$") for x in notes(grid, doc, latex=True)]
    explained = [x.replace(f"p < {ALPHA}", f"$p < {ALPHA}$") for x in explained]
    out.append(r"\caption{" + ". ".join([caption] + explained) + ".}")
    out.append(r"\end{table}")
    return out


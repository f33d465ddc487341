"""``beambleu report --plot``: a grid (:class:`~beambleu.commands.report_text.Grid`) drawn as a
grid of panels, one per group (the values of the grouping set's other key columns; up to
:data:`MAX_COLUMNS` panels a row, wrapping), each a forest plot: one row per system in the
table's order (the baseline first, then by score), the score with its 95% interval, ``*`` when
the paired test found it significantly different from the baseline; a panel whose baseline has
no pairs says so in its title. Systems are told apart by name (the first column of panels), by
marker shape x colour (:func:`style`: distinct for :data:`DISTINCT_STYLES` systems) and by the
legend, outside the panels. PNG, PDF or SVG by the file's extension (:data:`FORMATS`).

Needs matplotlib (the ``plot`` extra); imported only when drawing.
"""

from __future__ import annotations

import math
import os
from typing import Dict, Optional, Tuple

from bleu_core.scoring import ALPHA

from ..io.ownership import commit_file, remove_tree, staging_path
from ..io.textfiles import InputError
from .report_text import Grid, test_name

__all__ = ["DISTINCT_STYLES", "FORMATS", "MARKERS", "MAX_COLUMNS", "default_figsize", "draw", "plot", "style"]

#: the --plot formats, by the file's extension
FORMATS = ("png", "pdf", "svg")
#: marker shapes (12) crossed with the 10 colours of matplotlib's tab10
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "p", "h", "*")
_N_COLOURS = 10
#: systems with pairwise distinct styles: (marker, colour) pairs are distinct for the first
#: lcm(12, 10) = 60, then the same pairs hollow for the next 60
DISTINCT_STYLES = 120
#: panels per row at most
MAX_COLUMNS = 4


def style(i: int) -> Tuple[str, int, bool]:
    """The ``i``-th system's (marker, tab10 colour index, filled)."""
    return MARKERS[i % len(MARKERS)], i % _N_COLOURS, (i // 60) % 2 == 0


def _legend_columns(n: int) -> int:
    return max(1, math.ceil(n / 45))


def default_figsize(grid: Grid) -> Tuple[float, float]:
    """Inches: 3.2 wide per panel and room for the legend; 0.5 + 0.16 per system high per row
    of panels, and at least the legend's height."""
    n_panels = max(1, len(grid.cols))
    ncols = min(MAX_COLUMNS, n_panels)
    nrows = math.ceil(n_panels / ncols)
    n = max(1, len(grid.rows))
    label = max([len(grid.row_label(r)) for r in grid.rows] or [4])
    legend_cols = _legend_columns(n) if grid.by_system and n > 1 else 0
    width = 0.8 + 0.065 * label + 3.2 * ncols + legend_cols * (0.5 + 0.06 * (label + 11))
    height = 1.3 + nrows * (0.7 + 0.16 * n)
    if legend_cols:
        height = max(height, 1.3 + 0.2 * math.ceil(n / legend_cols))
    return round(width, 2), round(height, 2)


def _title(grid: Grid, doc: Dict) -> str:
    boot = grid.boot
    what = ", ".join(grid.col_titles) if grid.by_system and grid.cols != [()] else (
        "system" if grid.by_system else grid.row_title)
    title = f"{grid.name} per {what}"
    if grid.intervals:
        title += ", 95% bootstrap intervals" + (f" (B = {boot['n']})" if boot.get("n") else "")
    if grid.by_system and grid.baseline is not None:
        title += f"\n* p < {ALPHA} against the baseline {grid.row_label(grid.baseline)} ({test_name(boot)})"
    return title


def draw(grid: Grid, doc: Dict, figsize: Optional[Tuple[float, float]] = None, dpi: float = 150.0):
    """The figure (matplotlib's, constrained layout) of ``grid``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    colours = matplotlib.colormaps["tab10"].colors
    cols = grid.cols or [()]
    ncols = min(MAX_COLUMNS, len(cols))
    nrows = math.ceil(len(cols) / ncols)
    rows = grid.rows
    untested = set(grid.untested)
    styles = {r: style(i) if grid.by_system else ("o", 0, True) for i, r in enumerate(rows)}
    legend = None
    if grid.by_system and len(rows) > 1:
        handles = [Line2D([], [], linestyle="none", marker=styles[r][0], color=colours[styles[r][1]],
                          mfc=colours[styles[r][1]] if styles[r][2] else "none", ms=5) for r in rows]
        labels = [grid.row_label(r) + (" (baseline)" if grid.is_baseline(r) else "") for r in rows]
        legend = dict(handles=handles, labels=labels, ncols=_legend_columns(len(rows)), fontsize=7,
                      title=grid.row_title, title_fontsize=8, frameon=False)
    size = figsize or default_figsize(grid)
    fig = plt.figure(figsize=size, dpi=dpi, layout="constrained")
    main = fig
    if legend is not None:  # the legend in a subfigure of its own, as wide as it is, right of the panels
        probe = plt.figure(dpi=dpi)
        try:
            probe.canvas.draw()
            box = probe.legend(**legend).get_window_extent(probe.canvas.get_renderer())
            width = box.width / dpi + 0.15
        finally:
            plt.close(probe)
        width = min(width, 0.6 * size[0])
        main, side = fig.subfigures(1, 2, width_ratios=[size[0] - width, width], wspace=0)
        side.legend(loc="upper left", bbox_to_anchor=(0.0, 0.99), borderaxespad=0, **legend)
    axes = main.subplots(nrows, ncols, sharex=True, sharey=True, squeeze=False)
    for k, col in enumerate(cols):
        ax = axes[k // ncols][k % ncols]
        for j, r in enumerate(rows):
            g = grid.cells.get((r, col))
            if g is None or g["score"] is None:
                continue
            marker, c, filled = styles[r]
            y = g["score"]
            err = None
            if g.get("confidence_low") is not None and g.get("confidence_high") is not None:
                err = [[y - g["confidence_low"]], [g["confidence_high"] - y]]
            ax.errorbar([y], [j], xerr=err, fmt=marker, color=colours[c], mfc=colours[c] if filled else "none",
                        ms=5, capsize=2, elinewidth=1)
            if grid.significant(r, col):
                right = g.get("confidence_high") if g.get("confidence_high") is not None else y
                ax.annotate("*", (right, j), textcoords="offset points", xytext=(3, -4), fontsize=9)
        if col in untested and grid.by_system:
            ax.set_title(f"{grid.col_label(col)}\nnot tested: the baseline has no pairs", fontsize=8,
                         color="firebrick")
        elif col:
            ax.set_title(grid.col_label(col), fontsize=9)
        ax.grid(axis="x", alpha=0.3)
        ax.tick_params(labelsize=7)
    first = axes[0][0]
    first.set_yticks(range(len(rows)))
    first.set_yticklabels([grid.row_label(r) + (" (b)" if grid.is_baseline(r) else "") for r in rows])
    first.set_ylim(len(rows) - 0.5, -0.5)  # the first row at the top
    for k in range(len(cols), nrows * ncols):  # empty slots of the last row
        ax = axes[k // ncols][k % ncols]
        ax.set_visible(False)
        above = axes[k // ncols - 1][k % ncols]
        above.xaxis.set_tick_params(labelbottom=True)
        above.set_xlabel(grid.name, fontsize=8)
    for ax in axes[-1]:
        ax.set_xlabel(grid.name, fontsize=8)
    main.suptitle(_title(grid, doc), fontsize=9)
    signature = doc.get("signature", "")
    if isinstance(signature, str) and signature:
        main.supxlabel(signature, fontsize=6, alpha=0.7)
    return fig


def plot(grid: Grid, doc: Dict, path: str, fmt: str, dpi: float = 150.0,
         figsize: Optional[Tuple[float, float]] = None) -> None:
    """Draw ``grid`` to ``path``: staged beside it, renamed into place when complete."""
    import matplotlib.pyplot as plt

    fig = draw(grid, doc, figsize, dpi)
    target = os.path.abspath(path)
    staged = staging_path(target)
    try:
        fig.savefig(staged, format=fmt, dpi=dpi, metadata={"Software": "beambleu report"} if fmt == "png" else None)
        commit_file(staged, target)
    except OSError as exc:
        remove_tree(staged)
        raise InputError(path, f"cannot write the plot: {exc.strerror or exc}") from None
    except BaseException:
        remove_tree(staged)
        raise
    finally:
        plt.close(fig)

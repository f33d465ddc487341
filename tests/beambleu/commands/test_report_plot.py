"""`beambleu report --plot`: what is drawn (distinct styles for 40 systems, the legend inside the
figure and off the panels, one panel per group in key order, the systems in the table's order),
its size (figsize x dpi) and its formats (PNG, PDF, SVG by the extension; others refused)."""

from __future__ import annotations

import struct

import pytest

from .test_report_text import BASELINE, PAIRS, cli, fixture_rows, make_big, run_doc, sacre

matplotlib = pytest.importorskip("matplotlib")


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """23 systems x 13 language pairs (test_report_text's)."""
    return make_big(tmp_path_factory.mktemp("big"))


@pytest.fixture(scope="module")
def forty(tmp_path_factory):
    """40 systems, one language pair, paired bootstrap against sys-00."""
    d = tmp_path_factory.mktemp("forty")
    rows = fixture_rows(40, ["de-en"])
    run_doc(rows, d / "forty.json", "--group-by", "system", "--paired-bs", "--paired-bs-n", "100", "--baseline",
            BASELINE, "--id-column", "line")
    return d / "forty.json", rows


def figure_of(path, group_by, metric=None):
    from beambleu.commands import report, report_plot, report_text

    views = report.load(str(path))
    doc = views[0] if metric is None else next(v for v in views if report_text.metric_name(v) == metric)
    grid = report_text.build_grid(doc, group_by, "system")
    return grid, report_plot.draw(grid, doc)


def drawn_styles(fig):
    """Per panel, the (marker, colour, face colour) of each point drawn, in drawing order."""
    out = []
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        out.append([(c.lines[0].get_marker(), tuple(matplotlib.colors.to_rgba(c.lines[0].get_color())),
                     tuple(matplotlib.colors.to_rgba(c.lines[0].get_markerfacecolor()))) for c in ax.containers])
    return out


def legend_of(fig):
    legends = [leg for sub in fig.subfigs for leg in sub.legends]
    assert len(legends) == 1
    return legends[0]


def inside(inner, outer, tol=1.0):
    return (inner.x0 >= outer.x0 - tol and inner.y0 >= outer.y0 - tol and inner.x1 <= outer.x1 + tol
            and inner.y1 <= outer.y1 + tol)


def test_every_style_differs_up_to_120_systems():
    from beambleu.commands.report_plot import DISTINCT_STYLES, style

    assert DISTINCT_STYLES >= 40
    assert len({style(i) for i in range(DISTINCT_STYLES)}) == DISTINCT_STYLES


def test_forty_systems_are_told_apart_and_the_legend_fits(forty):
    path, rows = forty
    grid, fig = figure_of(path, ["system"])
    try:
        (points,) = drawn_styles(fig)
        assert len(points) == 40 and len(set(points)) == 40  # no two systems share (marker, colour, fill)
        fig.canvas.draw()
        leg = legend_of(fig)
        box = leg.get_window_extent()
        assert inside(box, fig.bbox)  # not cut off
        for ax in fig.axes:  # and off the data
            assert not box.overlaps(ax.get_window_extent())
        labels = [t.get_text() for t in leg.get_texts()]
        systems = sorted({r["system"] for r in rows} - {BASELINE})
        theirs = {s: sacre("BLEU", [r for r in rows if r["system"] == s]) for s in systems}
        order = sorted(systems, key=lambda s: -theirs[s])  # by sacrebleu's score, best first
        assert labels == [f"{BASELINE} (baseline)"] + order
        ticks = [t.get_text() for t in fig.axes[0].get_yticklabels()]
        assert ticks == [f"{BASELINE} (b)"] + order
        handles = [(h.get_marker(), tuple(matplotlib.colors.to_rgba(h.get_color()))) for h in leg.legend_handles]
        assert handles == [p[:2] for p in points]  # the legend's style is the point's
    finally:
        matplotlib.pyplot.close(fig)


def test_23_systems_by_13_pairs_is_a_grid_of_panels(big):
    path, rows = big
    grid, fig = figure_of(path, ["system", "langpair"], "BLEU")
    try:
        visible = [ax for ax in fig.axes if ax.get_visible()]
        assert len(visible) == 14  # null (the baseline's km-en rows) + 13 pairs
        titles = [ax.get_title().split("\n")[0] for ax in visible]
        assert titles == ["null"] + sorted(PAIRS)
        km = visible[titles.index("km-en")]
        assert km.get_title() == "km-en\nnot tested: the baseline has no pairs"
        assert "not tested" not in visible[titles.index("de-en")].get_title()
        positions = {tuple(round(v, 3) for v in ax.get_position().bounds[:2]) for ax in visible}
        assert len({x for x, _ in positions}) == 4 and len({y for _, y in positions}) == 4  # 4 columns, wrapped
        for points in drawn_styles(fig)[1:]:
            assert len(set(points)) == len(points) >= 22
        fig.canvas.draw()
        box = legend_of(fig).get_window_extent()
        assert inside(box, fig.bbox)
        assert not any(box.overlaps(ax.get_window_extent()) for ax in visible)
        assert len(legend_of(fig).get_texts()) == 23
    finally:
        matplotlib.pyplot.close(fig)


def png_size(data: bytes):
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


@pytest.mark.parametrize("figsize,dpi", [("6,4", "80"), ("7.5,3", "200")])
def test_png_is_figsize_times_dpi(forty, tmp_path, figsize, dpi):
    out = tmp_path / "p.png"
    proc = cli("report", forty[0], "--plot", out, "--figsize", figsize, "--dpi", dpi)
    assert proc.returncode == 0 and proc.stderr == f"beambleu: wrote {out}\n", proc.stderr
    w, h = (float(x) for x in figsize.split(","))
    assert png_size(out.read_bytes()) == (round(w * int(dpi)), round(h * int(dpi)))


def test_pdf_and_svg_by_the_extension(big, tmp_path):
    for name, magic in (("p.pdf", b"%PDF-"), ("p.SVG", b"<?xml")):
        out = tmp_path / name
        proc = cli("report", big[0], "--metric", "ter", "--plot", out)
        assert proc.returncode == 0, proc.stderr
        data = out.read_bytes()
        assert data.startswith(magic)
        if name.endswith("SVG"):
            assert b"<svg" in data[:2000] and b"km-en" in data
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.SVG", "p.pdf"]


@pytest.mark.parametrize("name", ["p.jpg", "p.eps", "p"])
def test_other_formats_are_refused(forty, tmp_path, name):
    out = tmp_path / name
    proc = cli("report", forty[0], "--plot", out)
    ext = out.suffix
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == (f"beambleu: error: {out}: --plot: the file name must end in .png, .pdf or .svg"
                           + (f" (not {ext})" if ext else "") + "\n")
    assert list(tmp_path.iterdir()) == []


def test_groups_without_a_system_column(tmp_path):
    rows = fixture_rows(2, ["fr-en", "de-en", "cs-en"])
    run_doc(rows, tmp_path / "g.json", "--group-by", "langpair", "--confidence", "--confidence-n", "50")
    grid, fig = figure_of(tmp_path / "g.json", ["langpair"])
    try:
        assert not fig.subfigs  # one series: no legend
        assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["cs-en", "de-en", "fr-en"]
        (points,) = drawn_styles(fig)
        assert len(points) == 3
        xs = [c.lines[0].get_xdata()[0] for c in fig.axes[0].containers]
        assert xs[1] == pytest.approx(sacre("BLEU", [r for r in rows if r["langpair"] == "de-en"]))
    finally:
        matplotlib.pyplot.close(fig)
    out = tmp_path / "g.png"
    proc = cli("report", tmp_path / "g.json", "--plot", out, "--dpi", "60")
    assert proc.returncode == 0, proc.stderr
    assert png_size(out.read_bytes())[0] > 100


def test_figsize_and_dpi_are_checked(forty, tmp_path):
    for args, line in ((["--figsize", "6"], "beambleu report: error: argument --figsize: expected WIDTH,HEIGHT in "
                                             "inches (e.g. 8,5), not '6' (--help shows the usage)"),
                       (["--figsize", "0,4"], "beambleu report: error: argument --figsize: WIDTH and HEIGHT must be "
                                              "above 0 and at most 200 inches, not '0,4' (--help shows the usage)"),
                       (["--figsize", "100,10", "--dpi", "400"], "beambleu: error: --figsize 100,10 at --dpi 400 is "
                                                                 "more than 32767 pixels a side")):
        proc = cli("report", forty[0], "--plot", tmp_path / "p.png", *args)
        assert proc.returncode == 2 and proc.stderr.strip() == line, proc.stderr
    assert list(tmp_path.iterdir()) == []

"""`beambleu report`: the text and LaTeX tables (order, width, marks), every JSON shape `beambleu
score` and `beambleu run` write, the comparison of two results and the gates (exit 3).

Documents are made by really running `beambleu run` / `beambleu score` on the bundled sample or
on small fixtures written here; every score checked is sacrebleu 2.6.0's, computed in the test."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import sacrebleu

from ...oracle import REPO
from ...pipeline_helpers import run_cli

SAMPLE = REPO / "examples" / "sample"
PAIRS = ["cs-en", "de-en", "en-cs", "en-de", "en-fr", "en-ja", "en-ru", "en-zh", "fr-en", "ja-en", "km-en", "ru-en",
         "zh-en"]
BASELINE = "sys-00"
#: a system name with every character LaTeX treats specially but the backslash
ODD = "A&B_%#$~^{x}"
GATE_FAILED = 3


def cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "beambleu", *map(str, args)], capture_output=True, text=True,
                          cwd=REPO, timeout=600, env=env)


def sample_refs():
    refs = {}
    for row in pq.read_table(sorted(SAMPLE.glob("shards/*.parquet"))).to_pylist():
        refs.setdefault(row["line"], row["references"])
    return refs


def fixture_rows(n_systems: int, pairs, n_lines: int = 4):
    """Rows of ``n_systems`` systems x ``pairs`` language pairs (``n_lines`` segments each), the
    candidates the first reference with words dropped at a rate that differs per system and pair.
    The baseline's rows of km-en carry a null langpair: the baseline has no pairs in km-en."""
    refs = sample_refs()
    lines = sorted(refs)[:n_lines]
    rows = []
    for s in range(n_systems):
        name = ODD if s == 5 else f"sys-{s:02d}"
        for p, lp in enumerate(pairs):
            for ln in lines:
                rng = random.Random(f"{s}-{lp}-{ln}")
                drop = (s * 7 + p * 3) % 10 / 25
                cand = " ".join(w for w in refs[ln][0].split() if rng.random() > drop)
                rows.append({"candidate": cand, "references": refs[ln], "line": ln * 100 + p, "system": name,
                             "langpair": None if (s == 0 and lp == "km-en") else lp})
    return rows


def write(rows, path):
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def run_doc(rows, out, *flags):
    shard = write(rows, out.with_suffix(".parquet"))
    rc, _, err = run_cli("--input", shard, "--output", out, "--progress", "off", *flags)
    assert rc == 0, err
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """23 systems x 13 language pairs, BLEU, chrF and TER, paired bootstrap against sys-00."""
    return make_big(tmp_path_factory.mktemp("big"))


def make_big(d):
    rows = fixture_rows(23, PAIRS)
    run_doc(rows, d / "big.json", "--group-by", "system,langpair", "--group-by", "system", "-m", "bleu", "chrf",
            "ter", "--paired-bs", "--paired-bs-n", "100", "--baseline", BASELINE, "--id-column", "line")
    return d / "big.json", rows


def sacre(metric, rows):
    hyps = [r["candidate"] for r in rows]
    refs = [list(x) for x in zip(*[r["references"] for r in rows])]
    return {"BLEU": sacrebleu.metrics.BLEU, "chrF2": sacrebleu.metrics.CHRF, "TER": sacrebleu.metrics.TER}[metric]() \
        .corpus_score(hyps, refs).score


def tables(stdout: str):
    """The text tables of a report: [(header cells, [(row label, line)])]."""
    lines = stdout.splitlines()
    out = []
    for i, line in enumerate(lines):
        if i + 1 < len(lines) and set(lines[i + 1]) <= {"-", " "} and lines[i + 1].startswith("---"):
            rows = []
            for row in lines[i + 2:]:
                if not row.strip():
                    break
                rows.append((row.split("  ")[0].strip(), row))
            out.append((line.split(), rows))
    return out


# ------------------------------------------------------------------------------ layout and order

def test_a_23_by_13_report_fits_100_columns_in_sorted_order(big):
    path, rows = big
    proc = cli("report", path, "--metric", "bleu")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert max(map(len, lines)) <= 100  # stdout is a pipe: 100 columns
    ts = tables(proc.stdout)
    assert len(ts) > 1  # split, the system column repeated
    columns = [c for header, _ in ts for c in header[1:]]
    assert columns == ["null"] + sorted(PAIRS)  # null first, then by their bytes; each once
    # systems: the baseline first, then by their BLEU over every pair (sacrebleu's), best first
    systems = sorted({r["system"] for r in rows})
    theirs = {s: sacre("BLEU", [r for r in rows if r["system"] == s]) for s in systems}
    expected = [BASELINE] + sorted((s for s in systems if s != BASELINE), key=lambda s: -theirs[s])
    for _, table_rows in ts:
        assert [label for label, _ in table_rows] == expected
    # every cell is sacrebleu's score of the group
    assert "cs-en" in ts[0][0]
    by_label = dict(ts[0][1])
    for s in (BASELINE, "sys-07", ODD):
        group = [r for r in rows if r["system"] == s and r["langpair"] == "cs-en"]
        assert f"{sacre('BLEU', group):.1f} [" in by_label[s].split("  ", 1)[1]
    # km-en: the baseline has no pairs there; the others' cells are marked and the note says why
    km = next((header, trs) for header, trs in ts if "km-en" in header)
    k = km[0].index("km-en")
    for label, line in km[1][1:]:
        cell = [c for c in line.split("  ") if c.strip()][k]
        assert cell.endswith(" ?"), line
    assert "?: not tested: the baseline has no pairs in km-en" in lines
    assert f"(b): baseline {BASELINE}; *: p < 0.05 in the paired bootstrap test against it" in lines


def test_line_width_and_sort_by_name(big):
    path, rows = big
    proc = cli("report", path, "--metric", "ter", "--line-width", "60", "--sort", "name")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    signature = json.loads(path.read_text())["corpus"]["scores"][2]["signature"]
    assert lines[1] == f"signature: {signature}"  # whole, to be copied
    assert max(map(len, lines[:1] + lines[2:])) <= 60  # the tables split, the notes wrapped
    ts = tables(proc.stdout)
    names = sorted({r["system"] for r in rows} - {BASELINE}, key=lambda s: s.encode())
    assert [label for label, _ in ts[0][1]] == [BASELINE] + names
    assert [c for header, _ in ts for c in header[1:]] == ["null"] + sorted(PAIRS)


def test_ter_sorts_lower_first(big):
    path, rows = big
    proc = cli("report", path, "--metric", "TER", "--group-by", "system")
    assert proc.returncode == 0, proc.stderr
    (header, trs), = tables(proc.stdout)
    systems = sorted({r["system"] for r in rows} - {BASELINE})
    theirs = {s: sacre("TER", [r for r in rows if r["system"] == s]) for s in systems}
    assert [label for label, _ in trs] == [BASELINE] + sorted(systems, key=lambda s: theirs[s])
    assert header == ["system", "TER"]


def test_latex_table(big, tmp_path):
    path, rows = big
    proc = cli("report", path, "--metric", "chrf", "--format", "latex")
    assert proc.returncode == 0, proc.stderr
    tex = proc.stdout
    assert tex.count(r"\begin{table}") == 1 and tex.count(r"\end{table}") == 1
    assert tex.count(r"\toprule") == tex.count(r"\bottomrule") == tex.count(r"\begin{tabular}") >= 2
    assert r"A\&B\_\%\#\$\textasciitilde{}\textasciicircum{}\{x\}" in tex and ODD not in tex
    assert r"sys-00 (baseline)" in tex
    assert r"$\dagger$: $p < 0.05$ in the paired bootstrap test against the baseline sys-00" in tex
    assert r"$\ddagger$: not tested: the baseline has no pairs in km-en" in tex
    doc = json.loads(path.read_text())
    significant = sum(1 for g in doc["groups"] if g["group_by"] == ["system", "langpair"]
                      and g["key"]["system"] != BASELINE and (g["scores"][1].get("p_value") or 1) < 0.05)
    assert significant > 0 and tex.count(r"$^\dagger$") == significant  # (the caption's is not superscript)
    group = [r for r in rows if r["system"] == "sys-03" and r["langpair"] == "de-en"]
    line = next(ln for ln in tex.splitlines() if ln.startswith("sys-03 &"))
    assert f" & {sacre('chrF2', group):.1f} {{\\scriptsize [" in line
    # it compiles, where a LaTeX is installed
    import shutil
    if shutil.which("pdflatex"):
        (tmp_path / "t.tex").write_text("\\documentclass{article}\\usepackage{booktabs}\\begin{document}\n"
                                        + tex + "\n\\end{document}\n")
        done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "t.tex"], cwd=tmp_path, capture_output=True)
        assert done.returncode == 0, done.stdout[-2000:]


# ------------------------------------------------------------------------- what `score` writes

REFS = [SAMPLE / "ref.A.txt", SAMPLE / "ref.B.txt"]
SYSTEMS = [SAMPLE / "sys.alpha.txt", SAMPLE / "sys.beta.txt"]


def lines_of(p):
    return p.read_text(encoding="utf-8").splitlines()


def theirs(metric, system):
    refs = [lines_of(r) for r in REFS]
    cls = {"BLEU": sacrebleu.metrics.BLEU, "chrF2": sacrebleu.metrics.CHRF, "TER": sacrebleu.metrics.TER}[metric]
    return cls().corpus_score(lines_of(system), refs).score


SHAPES = {
    "one system": ["-i", SYSTEMS[0]],
    "one system, -ci": ["-i", SYSTEMS[0], "--confidence", "--confidence-n", "50"],
    "one system, --with-stats": ["-i", SYSTEMS[0], "--with-stats", "-m", "bleu", "chrf"],
    "one system, several metrics": ["-i", SYSTEMS[0], "-m", "bleu", "chrf", "ter"],
    "several systems": ["-i", *SYSTEMS, "-m", "bleu", "chrf", "ter"],
    "several systems, one metric": ["-i", *SYSTEMS],
    "--paired-bs": ["-i", *SYSTEMS, "-m", "bleu", "ter", "--paired-bs", "--paired-bs-n", "50"],
    "--paired-ar": ["-i", *SYSTEMS, "-m", "chrf", "--paired-ar", "--paired-ar-n", "50"],
    "--paired-bs, counter draws": ["-i", *SYSTEMS, "--paired-bs", "--paired-bs-n", "50", "--resampling", "counter"],
}


@pytest.mark.parametrize("shape", SHAPES)
def test_every_json_of_score_is_read(tmp_path, shape):
    args = SHAPES[shape]
    made = cli("score", *REFS, *args, "-f", "json")
    assert made.returncode == 0, made.stderr
    result = tmp_path / "s.json"
    result.write_text(made.stdout)
    proc = cli("report", result)
    assert proc.returncode == 0, proc.stderr
    assert max(map(len, proc.stdout.splitlines())) <= 100
    metrics = [m for m in ("BLEU", "chrF2", "TER") if f'"{m}"' in made.stdout]
    systems = [a for a in args if a in SYSTEMS]
    if len(systems) == 1:
        for m in metrics:
            assert f"corpus: {m} {theirs(m, systems[0]):.1f}" in proc.stdout
        return
    ts = tables(proc.stdout)
    assert [h[1] for h, _ in ts] == metrics  # one table per metric
    for (header, trs), m in zip(ts, metrics):
        for label, line in trs:
            system = next(s for s in SYSTEMS if str(s) == label)
            assert line.split()[1] == f"{theirs(m, system):.1f}", line
        if "--paired" in shape:  # the first system is the baseline and comes first
            assert trs[0][0] == str(SYSTEMS[0]) and trs[0][1].endswith("(b)")
        else:  # sorted by score: TER lower first, the others higher first
            order = sorted(SYSTEMS, key=lambda s: theirs(m, s) * (1 if m == "TER" else -1))
            assert [label for label, _ in trs] == [str(s) for s in order]
    # and gated: sacrebleu's beta BLEU (or chrF2) is below this threshold, alpha's above
    m = metrics[0]
    score = theirs(m, SYSTEMS[1])
    if "paired" not in shape:  # sacrebleu's JSON of several systems holds the score as printed: rounded
        score = float(f"{score:.1f}")
    proc = cli("report", result, "--fail-below", f"{m}={theirs(m, SYSTEMS[1]) + 0.01}")
    assert proc.returncode == GATE_FAILED, proc.stderr
    assert proc.stderr.splitlines() == [
        f"beambleu: fail: {m} {score:.6g} < {theirs(m, SYSTEMS[1]) + 0.01:g} "
        f"(--fail-below {m}={theirs(m, SYSTEMS[1]) + 0.01:g}): system={SYSTEMS[1]}"]


def test_a_score_json_with_a_bad_value_is_one_line(tmp_path):
    bad = tmp_path / "b.json"
    bad.write_text(json.dumps([{"system": "a", "BLEU": "12.5"}, {"system": "b", "BLEU": "n/a"}]))
    proc = cli("report", bad)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr == f"beambleu: error: {bad}: entry 1: 'BLEU' is neither a score object nor a number (\"n/a\")\n"


def test_the_run_document_of_the_sample(tmp_path):
    rows = pq.read_table(sorted(SAMPLE.glob("shards/*.parquet"))).to_pylist()
    run_doc(rows, tmp_path / "r.json", "--group-by", "system", "-m", "bleu", "chrf")
    proc = cli("report", tmp_path / "r.json")
    assert proc.returncode == 0, proc.stderr
    for m in ("BLEU", "chrF2"):
        assert f"corpus: {m} {sacre(m, rows):.1f} on 60 pairs" in proc.stdout
    ts = tables(proc.stdout)
    for (header, trs), m in zip(ts, ("BLEU", "chrF2")):
        for label, line in trs:
            assert line.split()[1] == f"{sacre(m, [r for r in rows if r['system'] == label]):.1f}"


# ------------------------------------------------------------------------ comparison and gates

@pytest.fixture(scope="module")
def old_new(tmp_path_factory):
    """Two runs of 3 systems x 2 pairs: in the new one, sys-01's de-en candidates are the references."""
    d = tmp_path_factory.mktemp("cmp")
    old = fixture_rows(3, ["de-en", "fr-en"])
    new = [dict(r, candidate=r["references"][0]) if (r["system"] == "sys-01" and r["langpair"] == "de-en") else r
           for r in old]
    flags = ("--group-by", "system,langpair", "-m", "bleu", "ter")
    run_doc(old, d / "old.json", *flags)
    run_doc(new, d / "new.json", *flags)
    return d / "old.json", d / "new.json", old, new


def _group(rows, system, lp):
    return [r for r in rows if r["system"] == system and r["langpair"] == lp]


def test_compare_prints_both_scores_and_the_difference(old_new):
    old_path, new_path, old, new = old_new
    proc = cli("report", new_path, "--compare", old_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    for m in ("BLEU", "TER"):
        better = "lower" if m == "TER" else "higher"
        assert f"{m}: {old_path} (old) -> {new_path} (new); {better} is better" in lines
        a, b = sacre(m, old), sacre(m, new)
        section = lines[lines.index(f"{m}: {old_path} (old) -> {new_path} (new); {better} is better"):]
        corpus = next(ln for ln in section if ln.startswith("corpus "))
        assert corpus.split() == ["corpus", f"{a:.1f}", f"{b:.1f}", f"{b - a:+.1f}"]
        row = next(ln for ln in section if ln.startswith("system=sys-01, langpair=de-en"))
        a, b = sacre(m, _group(old, "sys-01", "de-en")), sacre(m, _group(new, "sys-01", "de-en"))
        assert row.split()[-3:] == [f"{a:.1f}", f"{b:.1f}", f"{b - a:+.1f}"] and a != b
        row = next(ln for ln in section if ln.startswith("system=sys-02, langpair=fr-en"))
        assert row.split()[-1] == "+0.0"


def test_gates(old_new):
    old_path, new_path, old, new = old_new
    bleu = {(s, lp): sacre("BLEU", _group(new, s, lp)) for s in ("sys-00", "sys-01", "sys-02")
            for lp in ("de-en", "fr-en")}
    threshold = sorted(bleu.values())[2] + 1e-9  # the two lowest groups fail
    proc = cli("report", new_path, "--fail-below", f"BLEU={threshold!r}")
    assert proc.returncode == GATE_FAILED and proc.stdout.startswith("corpus: BLEU")
    failing = [k for k in sorted(bleu) if bleu[k] < threshold]
    assert [ln.split(": ")[-1] for ln in proc.stderr.splitlines()] == [
        f"system={s}, langpair={lp}" for s, lp in failing]
    assert all(ln.startswith("beambleu: fail: BLEU ") for ln in proc.stderr.splitlines())
    passed = cli("report", new_path, "--fail-below", f"BLEU={min(bleu.values()) - 0.01}")
    assert passed.returncode == 0 and passed.stderr == "beambleu: 1 gate passed\n"
    # TER: --fail-above; lower is better
    ter = max(sacre("TER", _group(new, s, lp)) for s, lp in bleu)
    assert cli("report", new_path, "--fail-above", f"TER={ter + 0.01}").returncode == 0
    proc = cli("report", new_path, "--fail-above", f"TER={ter - 0.01}")
    assert proc.returncode == GATE_FAILED and len(proc.stderr.splitlines()) == 1
    # --fail-drop against the old result: the new one only got better (BLEU up, TER down) ...
    assert cli("report", new_path, "--compare", old_path, "--fail-drop", "BLEU=0", "--fail-drop",
               "TER=0").returncode == 0
    # ... so the old one, compared with the new, dropped in that one group, by sacrebleu's difference
    a, b = sacre("BLEU", _group(new, "sys-01", "de-en")), sacre("BLEU", _group(old, "sys-01", "de-en"))
    corpus_drop = sacre("BLEU", new) - sacre("BLEU", old)
    proc = cli("report", old_path, "--compare", new_path, "--fail-drop", f"BLEU={corpus_drop + 0.01}")
    assert proc.returncode == GATE_FAILED, proc.stderr
    assert proc.stderr.splitlines() == [f"beambleu: fail: BLEU {a:.6g} -> {b:.6g}, {a - b:.6g} worse, more than "
                                        f"{corpus_drop + 0.01:g} (--fail-drop BLEU={corpus_drop + 0.01:g}): "
                                        f"system=sys-01, langpair=de-en"]
    proc = cli("report", old_path, "--compare", new_path, "--fail-drop", "TER=0")
    assert proc.returncode == GATE_FAILED and proc.stderr.splitlines()[0].endswith("): corpus")


@pytest.mark.parametrize("args,line", [
    (["--fail-below", "BLEU"], "beambleu report: error: argument --fail-below: expected METRIC=NUMBER (e.g. BLEU=30), "
                               "not 'BLEU' (--help shows the usage)"),
    (["--fail-below", "BLEU=x"], "beambleu report: error: argument --fail-below: expected METRIC=NUMBER (e.g. "
                                 "BLEU=30), not 'BLEU=x' (--help shows the usage)"),
    (["--fail-drop", "BLEU=-1"], "beambleu report: error: argument --fail-drop: the drop must be >= 0, not -1 "
                                 "(--help shows the usage)"),
    (["--fail-below", "chrF2=3"], "beambleu: error: --fail-below chrF2=3: this result scores BLEU, TER"),
    (["--fail-drop", "BLEU=1"], "beambleu: error: --fail-drop BLEU=1 needs --compare OLD.json"),
    (["--format", "html"], "beambleu report: error: argument --format/-f: invalid choice: 'html' (choose from "
                           "'text', 'latex') (--help shows the usage)"),
    (["--line-width", "10"], None),
])
def test_bad_usage_is_one_line_exit_2(old_new, args, line):
    proc = cli("report", old_new[1], *args)
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr
    assert len(proc.stderr.splitlines()) == 1 and "Traceback" not in proc.stderr
    if line is not None:
        assert proc.stderr.strip() == line


def test_compare_with_a_missing_file_names_it(old_new, tmp_path):
    missing = tmp_path / "nope.json"
    proc = cli("report", old_new[1], "--compare", missing)
    assert proc.returncode == 1
    assert proc.stderr == f"beambleu: error: {missing}: cannot read: No such file or directory\n"


def test_help_names_the_new_options():
    out = " ".join(cli("report", "--help").stdout.split())
    for flag in ("--format", "--sort", "--line-width", "--dpi", "--figsize", "--compare", "--fail-below",
                 "--fail-above", "--fail-drop", ".png, .pdf or .svg"):
        assert flag in out, flag

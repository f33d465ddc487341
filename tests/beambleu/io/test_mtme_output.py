"""``beambleu run --mtme-output DIR``: google-research/mt-metrics-eval's metric score files
(``DIR/<langpair>/<METRIC>-<ref>.{sys,seg}.score``, lines ``system<TAB>score``), read back by that
repository's own reader (``mt_metrics_eval/data.py``, taken from the fetched mirror at test time;
skipped when there is none) and written out by hand here; an output like the others (staged,
committed with them, refused over a folder beambleu did not write). Expected scores: sacrebleu 2.6.0."""

from __future__ import annotations

import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

pytest.importorskip("apache_beam")

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from sacrebleu.metrics import BLEU, CHRF  # noqa: E402

from ...pipeline_helpers import run_cli  # noqa: E402

MIRROR = Path(os.environ.get("MTME_MIRROR", "/work/.mirror/google-research+mt-metrics-eval/repo"))

#: (langpair, segment id, reference, {system: candidate}); segments of a pair in id order
SEGMENTS = [
    ("en-de", 1, "The cat sat on a mat.", {"sysA": "The cat sat on the mat.", "sysB": "A cat is on the mat."}),
    ("en-de", 2, "It is raining today.", {"sysA": "It rains today.", "sysB": "Today it is raining."}),
    ("en-de", 3, "We went home early.", {"sysA": "We went home early.", "sysB": "We were going home."}),
    ("de-en", 1, "The house is small.", {"sysA": "The house is little.", "sysB": "The small house."}),
    ("de-en", 2, "She reads a book.", {"sysA": "She reads a book.", "sysB": "She is reading books."}),
]
SYSTEMS = ("sysA", "sysB")


def _table(path: Path, shuffle: bool = True) -> Path:
    rows = [{"langpair": lp, "seg": seg, "system": s, "candidate": cands[s], "references": [ref]}
            for lp, seg, ref, cands in SEGMENTS for s in SYSTEMS]
    if shuffle:  # input order is not document order: the files follow --id-column
        rows = rows[1::2] + rows[::2][::-1]
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def _expected():
    """{langpair: {file name: text}} by sacrebleu: each system's corpus score, each pair's sentence score."""
    out = {}
    for lp in dict.fromkeys(s[0] for s in SEGMENTS):
        segs = [s for s in SEGMENTS if s[0] == lp]
        refs = [[s[2] for s in segs]]
        files = out.setdefault(lp, {})
        for name, metric, sentence in (("BLEU", BLEU(), BLEU(effective_order=True)), ("chrF2", CHRF(), CHRF())):
            files[f"{name}-refA.sys.score"] = "".join(
                f"{s}\t{metric.corpus_score([x[3][s] for x in segs], refs).score!r}\n" for s in SYSTEMS)
            files[f"{name}-refA.seg.score"] = "".join(
                f"{s}\t{sentence.sentence_score(x[3][s], [x[2]]).score!r}\n" for s in SYSTEMS for x in segs)
    return out


def _run(tmp_path, *extra):
    out = tmp_path / "mtme"
    rc, stdout, err = run_cli("--input", _table(tmp_path / "in.parquet"), "-m", "bleu", "chrf", "--mtme-output", out,
                              "--id-column", "seg", "--progress", "off", *extra)
    return rc, out, err


def test_the_files_hold_sacrebleus_scores_in_mt_metrics_evals_layout(tmp_path):
    rc, out, err = _run(tmp_path, "--sentence-output", tmp_path / "pairs")
    assert rc == 0, err
    expected = _expected()
    found = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert found == sorted(["_beambleu_manifest.json"] + [f"{lp}/{name}" for lp, files in expected.items()
                                                          for name in files])
    for lp, files in expected.items():
        for name, text in files.items():
            assert (out / lp / name).read_text(encoding="utf-8") == text, (lp, name)
    # e.g. written out by hand, the first line of en-de's system file: system, a tab, the score
    first = (out / "en-de" / "BLEU-refA.sys.score").read_text().splitlines()[0]
    assert first.split("\t") == ["sysA", repr(BLEU().corpus_score(
        ["The cat sat on the mat.", "It rains today.", "We went home early."],
        [["The cat sat on a mat.", "It is raining today.", "We went home early."]]).score)]


def test_without_sentence_output_only_system_files(tmp_path):
    rc, out, err = _run(tmp_path, "--mtme-ref", "refB.refC")
    assert rc == 0, err
    names = sorted(p.name for p in (out / "de-en").iterdir())
    assert names == ["BLEU-refB.refC.sys.score", "chrF2-refB.refC.sys.score"]


def _reader(tmp_path):
    """mt-metrics-eval's ``data`` module from the fetched mirror (its other modules, which need scipy
    and dacite, stubbed: the score-file reader does not use them)."""
    if not (MIRROR / "HEAD").exists() and not (MIRROR / ".git").exists():
        pytest.skip(f"no mirror of google-research/mt-metrics-eval at {MIRROR}")
    pkg = tmp_path / "mtme_src" / "mt_metrics_eval"
    pkg.mkdir(parents=True)
    source = subprocess.run(["git", "-C", str(MIRROR), "show", "HEAD:mt_metrics_eval/data.py"], capture_output=True,
                            text=True, timeout=60)
    if source.returncode != 0:
        pytest.skip(f"mt_metrics_eval/data.py not readable in {MIRROR}: {source.stderr.strip()}")
    (pkg / "data.py").write_text(source.stdout, encoding="utf-8")

    class _Stub(types.ModuleType):
        def __getattr__(self, name):
            if name.startswith("__"):
                raise AttributeError(name)
            return type(name, (), {"__init__": lambda self, *a, **k: None})

    saved = {k: sys.modules.get(k) for k in ("mt_metrics_eval", "mt_metrics_eval.data", "mt_metrics_eval.meta_info",
                                             "mt_metrics_eval.ratings", "mt_metrics_eval.stats")}
    package = types.ModuleType("mt_metrics_eval")
    package.__path__ = [str(pkg)]
    sys.modules["mt_metrics_eval"] = package
    for name in ("meta_info", "ratings", "stats"):
        stub = _Stub(f"mt_metrics_eval.{name}")
        sys.modules[stub.__name__] = stub
        setattr(package, name, stub)
    try:
        import importlib

        return importlib.import_module("mt_metrics_eval.data")
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v


def _evalset(data, n_segments):
    """An EvalSet as mt-metrics-eval builds it for a language pair (only what adding metrics reads):
    systems sysA and sysB, reference refA, ``n_segments`` segments."""
    es = object.__new__(data.EvalSet)
    es._src = [f"segment {i}" for i in range(n_segments)]
    es._all_refs = {"refA": list(es._src)}
    es._sys_outputs = {s: list(es._src) for s in SYSTEMS}
    es._domains, es._docs, es._scores = {}, {}, {}
    es._metric_names, es._metric_basenames = set(), set()
    return es


def test_mt_metrics_evals_own_reader_reads_sacrebleus_scores(tmp_path):
    data = _reader(tmp_path)
    rc, out, err = _run(tmp_path, "--sentence-output", tmp_path / "pairs")
    assert rc == 0, err
    for lp in ("en-de", "de-en"):
        segs = [s for s in SEGMENTS if s[0] == lp]
        es = _evalset(data, len(segs))
        basenames = es.AddMetricsFromDir(str(out / lp))  # strict: every system, the right lengths, no None
        assert sorted(set(basenames)) == ["BLEU", "chrF2"]
        assert es.metric_names == {"BLEU-refA", "chrF2-refA"}
        refs = [[s[2] for s in segs]]
        for s in SYSTEMS:
            hyps = [x[3][s] for x in segs]
            assert es.Scores("sys", "BLEU-refA")[s] == [BLEU().corpus_score(hyps, refs).score]
            assert es.Scores("sys", "chrF2-refA")[s] == [CHRF().corpus_score(hyps, refs).score]
            assert es.Scores("seg", "BLEU-refA")[s] == [BLEU(effective_order=True).sentence_score(h, [x[2]]).score
                                                        for h, x in zip(hyps, segs)]
        # and its plain reader, file by file
        assert dict(data.ReadScoreFile(str(out / lp / "chrF2-refA.seg.score"))) == {
            s: [CHRF().sentence_score(x[3][s], [x[2]]).score for x in segs] for s in SYSTEMS}


def test_systems_with_different_segments_are_bad_input(tmp_path):
    path = tmp_path / "in.parquet"
    table = pq.read_table(_table(path)).to_pylist()
    table = [r for r in table if not (r["system"] == "sysB" and r["seg"] == 2 and r["langpair"] == "de-en")]
    pq.write_table(pa.Table.from_pylist(table), path)
    out = tmp_path / "mtme"
    rc, _, err = run_cli("--input", path, "--mtme-output", out, "--sentence-output", tmp_path / "pairs",
                         "--id-column", "seg", "--progress", "off")
    assert rc == 1
    assert "--mtme-output: in language pair 'de-en', system 'sysB' has 1 segments, 'sysA' has 2" in err, err
    assert not out.exists() and not (tmp_path / "pairs").exists()  # all outputs or none


@pytest.mark.parametrize("column, value, reason", [
    ("system", None, "null (a system needs a name)"),
    ("system", "sys A", "a system name for --mtme-output cannot be empty or hold whitespace"),
    ("langpair", "ende", "'ende' is not a language pair SRC-TRG (e.g. en-de)"),
    ("langpair", "en-de/x", "'en-de/x': a language pair cannot hold whitespace, '/', '\\\\' or NUL"),
])
def test_a_bad_name_is_one_line_naming_file_row_and_column(tmp_path, column, value, reason):
    path = tmp_path / "in.parquet"
    data = pq.read_table(_table(path, shuffle=False)).to_pydict()
    data[column][3] = value
    pq.write_table(pa.table(data), path)
    out = tmp_path / "mtme"
    rc, _, err = run_cli("--input", path, "--mtme-output", out, "--progress", "off")
    assert rc == 1
    assert [line for line in err.splitlines() if "error" in line] == [
        f"beambleu: error: {path}: row 3, column {column!r}: {reason}"], err
    assert not out.exists()


@pytest.mark.parametrize("ref", ["ref-A", "", "refA..refB", "src.refA"])
def test_a_bad_reference_name_is_bad_usage(tmp_path, ref):
    rc, _, err = run_cli("--input", _table(tmp_path / "in.parquet"), "--mtme-output", tmp_path / "m",
                         "--mtme-ref", ref, "--progress", "off")
    assert rc == 2 and "--mtme-ref" in err and "Traceback" not in err


def test_keep_would_leave_segments_out(tmp_path):
    rc, _, err = _run(tmp_path, "--sentence-output", tmp_path / "pairs", "--keep", "bleu>10")
    assert rc == 2 and "--keep with --mtme-output" in err


def test_the_folder_is_an_output_beambleu_owns(tmp_path):
    rc, out, err = _run(tmp_path)
    assert rc == 0, err
    rc, _, err = _run(tmp_path)
    assert rc == 2 and "--mtme-output exists (use --overwrite to replace it)" in err
    (out / "de-en" / "notes.txt").write_text("mine")  # a file beambleu did not write, in a pair's folder
    rc, _, err = _run(tmp_path, "--overwrite")
    assert rc == 2 and "holds files beambleu did not write (de-en/notes.txt)" in err
    assert (out / "de-en" / "notes.txt").read_text() == "mine"
    (out / "de-en" / "notes.txt").unlink()
    rc, _, err = _run(tmp_path, "--overwrite", "--mtme-ref", "refB")
    assert rc == 0, err
    assert sorted(p.name for p in (out / "en-de").iterdir()) == ["BLEU-refB.sys.score", "chrF2-refB.sys.score"]
    other = tmp_path / "theirs"
    other.mkdir()
    (other / "x.score").write_text("sysA 1\n")
    rc, _, err = run_cli("--input", tmp_path / "in.parquet", "--mtme-output", other, "--progress", "off", "--overwrite")
    assert rc == 2 and "did not write" in err


def test_wide_input_names_systems_by_their_columns(tmp_path):
    rows = [{"langpair": lp, "sysA": c["sysA"], "sysB": c["sysB"], "references": [ref]} for lp, _, ref, c in SEGMENTS]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "wide.parquet")
    out = tmp_path / "mtme"
    rc, _, err = run_cli("--input", tmp_path / "wide.parquet", "--candidate-columns", "sysA,sysB", "--mtme-output",
                         out, "--sentence-output", tmp_path / "pairs", "--progress", "off")
    assert rc == 0, err
    expected = _expected()
    for lp in ("en-de", "de-en"):
        assert (out / lp / "BLEU-refA.sys.score").read_text() == expected[lp]["BLEU-refA.sys.score"]
        assert (out / lp / "BLEU-refA.seg.score").read_text() == expected[lp]["BLEU-refA.seg.score"]

"""beambleu as a component of a user's pipeline: ``beambleu.Score`` on dicts, ``beam.Row`` s and Arrow
batches, its typed results (a Beam schema), ``WriteResults``' document, ``examples/beam_pipeline.py``
and ``examples/beam_yaml/score.yaml``: the same scores as ``beambleu run`` (and, for one system, as
sacrebleu itself), on the sample and on a real WMT system table; bad input fails with the row and
column named."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

beam = pytest.importorskip("apache_beam")

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from sacrebleu.metrics import BLEU, CHRF  # noqa: E402

from ...oracle import CORPORA  # noqa: E402
from ...pipeline_helpers import corpus_rows, load, run_cli, write_shards  # noqa: E402

REPO = Path(__file__).resolve().parents[3]
SAMPLE = str(REPO / "examples/sample/shards/*.parquet")
LOCAL = ["--runner", "FnApiRunner"]
needs_corpora = pytest.mark.skipif(not (CORPORA / "wmt22/de-en").is_dir(), reason="shared corpora not present")


def _run_doc(tmp_path, inputs, *flags) -> dict:
    out = tmp_path / "run.json"
    rc, _, err = run_cli("--input", inputs, "--output", out, "--progress", "off", *flags)
    assert rc == 0, err
    return load(out)


def _scored(doc: dict) -> dict:
    """corpus and groups: the parts two pipelines must agree on, whatever else they record."""
    return {"metrics": doc["metrics"], "corpus": doc["corpus"], "groups": doc["groups"]}


def _score(pcoll_source, tmp_path, **kwargs):
    """Run Score on the local runner over what ``pcoll_source(p)`` makes; the results and the document."""
    import beambleu

    out, lines = tmp_path / "component.json", tmp_path / "results"
    with beam.Pipeline(runner="FnApiRunner") as p:
        results = pcoll_source(p) | beambleu.Score(**kwargs)
        _ = results | beambleu.WriteResults(str(out))
        _ = (results | beam.Map(lambda r: json.dumps({**r._asdict(), "statistics": dict(r.statistics)}))
             | beam.io.WriteToText(str(lines)))
    got = [json.loads(x) for f in sorted(tmp_path.glob("results*")) for x in f.read_text().splitlines()]
    return got, load(out)


def test_score_on_dicts_equals_run_and_sacrebleu(tmp_path):
    rows = pq.read_table(sorted(Path(SAMPLE).parent.glob("*.parquet"))).to_pylist()
    got, doc = _score(lambda p: p | beam.Create(rows), tmp_path, metrics=["bleu", "chrf"], group_by=["system"])
    assert _scored(doc) == _scored(_run_doc(tmp_path, SAMPLE, "--group-by", "system", "-m", "bleu", "chrf"))
    # one result per (grouping set, key, metric): the corpus and two systems, two metrics
    assert sorted((tuple(r["key"]), r["metric"]) for r in got) == [
        ((), "BLEU"), ((), "chrF2"), (("alpha",), "BLEU"), (("alpha",), "chrF2"),
        (("beta",), "BLEU"), (("beta",), "chrF2")]
    for system in ("alpha", "beta"):
        sel = [r for r in rows if r["system"] == system]
        hyps, refs = [r["candidate"] for r in sel], [list(x) for x in zip(*[r["references"] for r in sel])]
        want_bleu, want_chrf = BLEU().corpus_score(hyps, refs), CHRF().corpus_score(hyps, refs)
        bleu = next(r for r in got if r["key"] == [system] and r["metric"] == "BLEU")
        chrf = next(r for r in got if r["key"] == [system] and r["metric"] == "chrF2")
        assert bleu["score"] == want_bleu.score and chrf["score"] == want_chrf.score
        assert [bleu["statistics"][f"counts_{n}"] for n in range(1, 5)] == want_bleu.counts
        assert (bleu["statistics"]["sys_len"], bleu["statistics"]["ref_len"]) == (want_bleu.sys_len,
                                                                                  want_bleu.ref_len)
        assert bleu["n_pairs"] == len(sel) and bleu["nrefs"] == 2 and bleu["group_by"] == ["system"]
        assert bleu["signature"].startswith("nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp")


def test_score_on_beam_rows_and_on_arrow_batches(tmp_path):
    table = pq.read_table(sorted(Path(SAMPLE).parent.glob("*.parquet")))
    want = _scored(_run_doc(tmp_path, SAMPLE, "--group-by", "system"))
    as_rows = [beam.Row(candidate=r["candidate"], references=r["references"], system=r["system"])
               for r in table.to_pylist()]
    _, doc = _score(lambda p: p | beam.Create(as_rows), tmp_path, group_by="system")
    assert _scored(doc) == want
    batches = table.to_batches(max_chunksize=7)
    _, doc = _score(lambda p: p | beam.Create(batches), tmp_path, group_by=["system"])
    assert _scored(doc) == want


def test_results_have_a_beam_schema():
    import beambleu
    from apache_beam.coders import RowCoder
    from apache_beam.typehints.schemas import named_fields_from_element_type

    with beam.Pipeline(runner="FnApiRunner") as p:
        results = p | beam.Create([{"candidate": "a b", "references": ["a b"]}]) | beambleu.Score()
        assert results.element_type is beambleu.ScoreResult
    assert isinstance(beam.coders.registry.get_coder(beambleu.ScoreResult), RowCoder)
    fields = dict(named_fields_from_element_type(beambleu.ScoreResult))
    assert {"group_by", "key", "metric", "score", "signature", "n_pairs", "statistics", "confidence_low",
            "p_value"} <= set(fields)


def test_confidence_and_paired_test_equal_run(tmp_path):
    rows = pq.read_table(sorted(Path(SAMPLE).parent.glob("*.parquet"))).to_pylist()
    for i, r in enumerate(rows):
        r["seg"] = i % 30  # both systems translate the same 30 segments
    path = tmp_path / "pairs.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    run = _run_doc(tmp_path, path, "--group-by", "system", "--paired-bs", "--baseline", "alpha",
                   "--id-column", "seg", "--paired-bs-n", "200")
    got, doc = _score(lambda p: p | beam.Create(rows), tmp_path, group_by=["system"], paired_bs=True,
                      baseline="alpha", id_column="seg", paired_n=200)
    assert _scored(doc) == _scored(run)
    beta = next(r for r in got if r["key"] == ["beta"])
    assert beta["baseline"] == "alpha" and 0 <= beta["p_value"] <= 1 and beta["confidence_low"] is not None


def test_a_null_candidate_fails_naming_row_and_column():
    import beambleu

    rows = [{"candidate": "a b c", "references": ["a b c"]}, {"candidate": None, "references": ["x"]}]
    # elements of a PCollection have no row number: the row counts from 0 within its bundle of rows
    with pytest.raises(Exception, match=r"<rows>: row [01], column 'candidate': candidate is null"):
        with beam.Pipeline(runner="FnApiRunner") as p:
            _ = p | beam.Create(rows) | beambleu.Score()


def test_read_pairs_names_the_file_of_a_bad_row(tmp_path):
    import beambleu

    path = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"candidate": ["ok", None], "references": [["ok"], ["x"]]}), path)
    with pytest.raises(Exception, match=rf"{path}: row 1, column 'candidate': candidate is null"):  # from 0
        with beam.Pipeline(runner="FnApiRunner") as p:
            _ = p | beambleu.ReadPairs(str(path)) | beambleu.Score()


def test_bad_parameters_fail_when_the_transform_is_made():
    import beambleu

    with pytest.raises(ValueError, match="baseline"):
        beambleu.Score(paired_bs=True, id_column="seg", group_by="system")
    with pytest.raises(ValueError, match="unknown option"):
        beambleu.Score(metric_options={"bleu": {"tokenise": "intl"}})
    with pytest.raises(LookupError):
        beambleu.Score(metrics=["blue"])


def test_example_pipeline_equals_run(tmp_path):
    out = tmp_path / "example.json"
    proc = subprocess.run([sys.executable, "examples/beam_pipeline.py", "--input", SAMPLE, "--output", out, *LOCAL],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert _scored(load(out)) == _scored(_run_doc(tmp_path, SAMPLE, "--group-by", "system", "-m", "bleu", "chrf"))
    assert "alpha\tBLEU\t77.13" in proc.stdout


@needs_corpora
def test_example_pipeline_equals_run_on_a_wmt_system_table(tmp_path):
    inputs = write_shards(corpus_rows(["wmt22/de-en"]), tmp_path / "shards", n_shards=3, row_group_size=2000)
    out = tmp_path / "example.json"
    proc = subprocess.run([sys.executable, "examples/beam_pipeline.py", "--input", inputs, "--output", out, *LOCAL],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert _scored(load(out)) == _scored(_run_doc(tmp_path, inputs, "--group-by", "system", "-m", "bleu", "chrf"))


def test_beam_yaml_pipeline_equals_run(tmp_path):
    # Beam YAML needs the yaml extra, which the test command installs: no skip
    (tmp_path / "examples").symlink_to(REPO / "examples")
    proc = subprocess.run([sys.executable, "-m", "apache_beam.yaml.main", "--yaml_pipeline_file",
                           "examples/beam_yaml/score.yaml", *LOCAL], cwd=tmp_path, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [json.loads(x) for f in sorted(tmp_path.glob("score-results.json*")) for x in f.read_text().splitlines()]
    run = _run_doc(tmp_path, SAMPLE, "--group-by", "system", "-m", "bleu", "chrf")
    want = {((), p["name"]): p["score"] for p in run["corpus"]["scores"]}
    want |= {(tuple(g["key"].values()), p["name"]): p["score"] for g in run["groups"] for p in g["scores"]}
    got = {(tuple(r["key"]), r["metric"]): json.loads(r["fields"])["score"] for r in lines}
    assert got == want and len(lines) == 6

"""One output layout whatever the number of metrics: the result document validates against the JSON
Schema the package ships (``beambleu.groups.document.SCHEMA``), BLEU sits at the same JSON paths and
group-table columns with one metric and with three, a statistic has one name in the group table and
in the per-pair output, and counts are typed (``nrefs`` an integer)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("apache_beam")
jsonschema = pytest.importorskip("jsonschema")

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from sacrebleu.metrics import BLEU  # noqa: E402

from ...pipeline_helpers import load, run_cli  # noqa: E402

ROWS = [  # two systems, two references; hand-made
    {"candidate": "the cat is on mat", "references": ["the cat is on the mat", "there is a cat on the mat"],
     "system": "a", "seg": 1},
    {"candidate": "red red red blue", "references": ["the red car is blue", "a red car"], "system": "a", "seg": 2},
    {"candidate": "the cat sat on the mat", "references": ["the cat is on the mat", "there is a cat on the mat"],
     "system": "b", "seg": 1},
    {"candidate": "a red car", "references": ["the red car is blue", "a red car"], "system": "b", "seg": 2},
]


@pytest.fixture(scope="module")
def schema():
    from beambleu.groups.document import SCHEMA

    with open(SCHEMA, encoding="utf-8") as fh:
        s = json.load(fh)
    jsonschema.Draft202012Validator.check_schema(s)
    return s


@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    path = tmp_path_factory.mktemp("pairs") / "pairs.parquet"
    pq.write_table(pa.Table.from_pylist(ROWS), path)
    return path


def _run(tmp_path, pairs, *flags):
    out, table, sent = tmp_path / "r.json", tmp_path / "g.parquet", tmp_path / "pairs"
    rc, _, err = run_cli("--input", pairs, "--group-by", "system", "--output", out, "--groups-output", table,
                         "--sentence-output", sent, "--progress", "off", *flags)
    assert rc == 0, err
    return load(out), pq.read_table(table), pq.read_table(sent)


@pytest.mark.parametrize("flags", [(), ("-m", "bleu", "chrf", "ter"), ("-m", "chrf", "--confidence", "--confidence-n",
                                                                       "20"),
                                   ("--paired-ar", "--paired-ar-n", "20", "--baseline", "a", "--id-column", "seg")])
def test_documents_validate_against_the_shipped_schema(tmp_path, pairs, schema, flags):
    doc, _, _ = _run(tmp_path, pairs, *flags)
    jsonschema.validate(doc, schema)
    assert doc["format_version"] == 2


def test_one_metric_and_three_share_paths_and_columns(tmp_path, pairs):
    one, one_table, one_pairs = _run(tmp_path / "1", pairs)
    three, three_table, three_pairs = _run(tmp_path / "3", pairs, "-m", "bleu", "chrf", "ter")
    hyps = [r["candidate"] for r in ROWS if r["system"] == "a"]
    refs = [list(x) for x in zip(*[r["references"] for r in ROWS if r["system"] == "a"])]
    want = BLEU().corpus_score(hyps, refs)
    for doc in (one, three):
        group_a = next(g for g in doc["groups"] if g["key"] == {"system": "a"})
        bleu = group_a["scores"][0]
        assert (bleu["metric"], bleu["name"], bleu["score"]) == ("bleu", "BLEU", want.score)
        assert bleu["counts"] == want.counts and bleu["nrefs"] == 2 and group_a["n_pairs"] == 2
        assert doc["metrics"][0]["metric"] == "bleu" and doc["corpus"]["group_by"] == []
    assert [p["metric"] for p in three["corpus"]["scores"]] == ["bleu", "chrf", "ter"]
    # the one-metric table's columns are the three-metric table's first ones, same names and types
    assert three_table.schema.names[:len(one_table.schema.names)] == one_table.schema.names
    assert one_table.schema.field("nrefs").type == pa.int64()
    assert one_table.schema.names[:4] == ["group_by", "system", "n_pairs", "nrefs"]
    row = one_table.filter(pa.compute.equal(one_table["system"], "a")).to_pylist()[0]
    assert (row["bleu_score"], row["bleu_counts_1"], row["bleu_sys_len"]) == (want.score, want.counts[0],
                                                                             want.sys_len)
    assert one_pairs.schema.names == three_pairs.schema.names[:len(one_pairs.schema.names)]


def test_a_statistic_has_one_name_in_both_outputs(tmp_path, pairs):
    _, table, per_pair = _run(tmp_path, pairs, "-m", "bleu", "chrf", "ter")
    stats = [n for n in per_pair.schema.names if n not in ("file", "row", "system") and not n.endswith("_score")]
    assert stats and set(stats) <= set(table.schema.names)
    for name in stats:  # the group's total is the sum of its pairs'
        for system in ("a", "b"):
            pairs_of = per_pair.filter(pa.compute.equal(per_pair["system"], system))[name].to_pylist()
            group = table.filter(pa.compute.equal(table["system"], system))[name].to_pylist()
            assert group == [sum(pairs_of)], (name, system)
    assert {"bleu_score", "chrf_score", "ter_score"} <= set(per_pair.schema.names)
    # the sentence BLEU of "the cat is on mat" (effective order, as sacrebleu's sentence_bleu): 1-gram 5/5 ...
    first = per_pair.filter(pa.compute.equal(per_pair["row"], 0)).to_pylist()[0]
    assert first["bleu_counts_1"] == 5 and first["bleu_totals_1"] == 5 and first["bleu_sys_len"] == 5


def test_the_schema_refuses_the_first_layout(schema):
    old = {"signature": "nrefs:1|...", "corpus": {"name": "BLEU", "score": 1.0, "nrefs": "1", "n_pairs": 1},
           "grouping_sets": [], "groups": []}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(old, schema)

"""Score and filter a corpus at scale: ``--sentence-output`` carries input columns through
(``--carry-columns``, ``--carry-all``) and ``--keep`` writes only the pairs that pass (all conditions;
any metric's score or statistic), counting those kept and dropped; the corpus and group scores stay
those of every pair. Expected values: sacrebleu's sentence scores of each pair."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("apache_beam")

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from sacrebleu.metrics import BLEU, CHRF  # noqa: E402

from ...pipeline_helpers import load, run_cli  # noqa: E402
from ..beam.test_component import SAMPLE  # noqa: E402


@pytest.fixture(scope="module")
def rows():
    from pathlib import Path

    return pq.read_table(sorted(Path(SAMPLE).parent.glob("*.parquet"))).to_pylist()


def _sacre(rows):
    """Each pair's sacrebleu sentence chrF and its candidate's 13a token count."""
    chrf, bleu = CHRF(), BLEU(effective_order=True)
    return [(chrf.sentence_score(r["candidate"], r["references"]).score,
             bleu.sentence_score(r["candidate"], r["references"]).sys_len) for r in rows]


def test_keep_writes_the_pairs_that_pass_with_their_columns(tmp_path, rows):
    out, sent = tmp_path / "r.json", tmp_path / "pairs"
    rc, stdout, err = run_cli("--input", SAMPLE, "--group-by", "system", "-m", "bleu", "chrf", "--output", out,
                              "--sentence-output", sent, "--carry-columns", "candidate,references",
                              "--keep", "chrf>=60", "--keep", "bleu_sys_len > 5", "--progress", "off")
    assert rc == 0, err
    want = [(r["candidate"], r["references"]) for r, (c, n) in zip(rows, _sacre(rows)) if c >= 60 and n > 5]
    assert 0 < len(want) < len(rows)  # the filter bites both ways on the sample
    table = pq.read_table(sent)
    got = sorted(zip(table["candidate"].to_pylist(), table["references"].to_pylist()))
    assert got == sorted(want)
    assert table.schema.field("references").type == pa.list_(pa.string())
    assert min(table["chrf_score"].to_pylist()) >= 60
    line = f"--keep chrf>=60 and bleu_sys_len > 5: {len(want)} pairs kept, {len(rows) - len(want)} dropped in {sent}"
    assert line in stdout.splitlines()
    doc = load(out)
    assert doc["sentence_output"] == {"keep": ["chrf>=60", "bleu_sys_len > 5"], "kept": len(want),
                                      "dropped": len(rows) - len(want)}
    assert doc["corpus"]["n_pairs"] == len(rows)  # scores are of every pair
    manifest = json.loads((sent / "_beambleu_manifest.json").read_text())
    assert manifest["filter"]["kept"] == len(want)


def test_carry_all_carries_every_input_column(tmp_path, rows):
    sent = tmp_path / "pairs"
    rc, _, err = run_cli("--input", SAMPLE, "--sentence-output", sent, "--carry-all", "--progress", "off")
    assert rc == 0, err
    table = pq.read_table(sent).sort_by([("file", "ascending"), ("row", "ascending")])
    assert {"candidate", "references", "system"} <= set(table.schema.names)
    assert table["candidate"].to_pylist() == [r["candidate"] for r in rows]  # alpha's file, then beta's
    assert table["system"].to_pylist() == [r["system"] for r in rows]


@pytest.mark.parametrize("flags, message", [
    (["--keep", "chrf>=60"], "beambleu: error: --keep is for --sentence-output (the per-pair output)"),
    (["--sentence-output", "{tmp}/p", "--keep", "chr>=60"], "beambleu: error: --keep 'chr>=60': no per-pair column"),
    (["--sentence-output", "{tmp}/p", "--keep", "bleu=>3"], "beambleu: error: --keep 'bleu=>3': expected COLUMN OP "
                                                            "NUMBER"),
    (["--sentence-output", "{tmp}/p", "--carry-all", "--carry-columns", "system"],
     "beambleu: error: give either --carry-columns or --carry-all, not both"),
])
def test_bad_filter_usage_is_one_line_exit_2(tmp_path, flags, message):
    flags = [f.format(tmp=tmp_path) for f in flags]
    rc, stdout, err = run_cli("--input", SAMPLE, "--progress", "off", *flags)
    assert rc == 2 and stdout == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith(message), err
    assert not (tmp_path / "p").exists()


def test_a_carried_column_that_is_not_there_is_bad_input(tmp_path):
    rc, stdout, err = run_cli("--input", SAMPLE, "--sentence-output", tmp_path / "p", "--carry-columns", "nope",
                              "--progress", "off")
    assert rc == 1 and stdout == "" and not (tmp_path / "p").exists()
    assert err.strip().splitlines()[-1].startswith("beambleu: error: ") and "column 'nope' not found" in err
    assert "alpha.parquet" in err

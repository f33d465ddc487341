"""`beambleu run --input` takes directories (every data file under them; hidden, `_SUCCESS`, `_*`
and beambleu's manifest skipped) and Hive-style partitions (`col=value/` folders are string columns
of their files' rows), on a local disk and in S3: the same result document as the Parquet
original; the mistakes each is open to are one line, exit 1, nothing written."""

from __future__ import annotations

import json
import os

import pyarrow.parquet as pq
import pytest

pytest.importorskip("apache_beam")

from beambleu.groups.document import score_parts  # noqa: E402
from beambleu.io.listing import partitions_of, skipped  # noqa: E402

from ...pipeline_helpers import load, run_cli  # noqa: E402
from .copies import (SAMPLE, pairs, sacrebleu_bleu, without_inputs, write_hive, write_jsonl,  # noqa: E402
                     write_parquet, write_spark_dir)
from .test_inputs_formats import run_bad, run_ok  # noqa: E402


@pytest.fixture(scope="module")
def original(tmp_path_factory):
    d = tmp_path_factory.mktemp("original")
    rows = pairs()
    doc = run_ok(d, "--input", write_parquet(rows, d / "pairs.parquet"))
    got = {g["key"]["system"]: score_parts(g)[0]["score"] for g in doc["groups"]}
    assert got == {s: sacrebleu_bleu([r for r in rows if r["system"] == s]) for s in ("alpha", "beta")}
    return rows, doc


def test_skip_rules():
    assert not skipped(["part-0.parquet"]) and not skipped(["system=a", "x.jsonl"])
    for parts in (["_SUCCESS"], ["_beambleu_manifest.json"], [".part-0.parquet.crc"], ["_temporary", "0", "p.parquet"],
                  [".hidden", "p.parquet"], ["sub", ""]):
        assert skipped(parts), parts
    assert not skipped(["_part-0.parquet"], ["_part*"])  # the glob spells it
    assert skipped(["_part-0.parquet"], ["*"]) and skipped(["a", "_x"], ["**"])
    assert partitions_of("f", ["year=2024", "notes", "sys%3Dtem=a%2Fb", "k=__HIVE_DEFAULT_PARTITION__"]) == \
        (("year", "2024"), ("sys=tem", "a/b"), ("k", None))


@pytest.mark.parametrize("how", ["directory", "directory/", "glob of the directory"])
def test_a_spark_directory(original, tmp_path, how):
    rows, doc = original
    root = write_spark_dir(rows, tmp_path / "pairs")
    given = {"directory": str(root), "directory/": f"{root}/", "glob of the directory": f"{root}/*"}[how]
    got = run_ok(tmp_path, "--input", given)
    assert without_inputs(got) == without_inputs(doc)
    assert got["inputs"]["files"] == [str(root / "part-00000-abc.snappy.parquet"),
                                      str(root / "part-00001-abc.snappy.parquet")]


def test_convert_output_directory_and_its_glob(original, tmp_path):
    """`beambleu convert`'s directory (parts and `_beambleu_manifest.json`), as a directory and as
    'dir/*': the scores of the sample's systems as sacrebleu's."""
    from beambleu.cli import main

    out = tmp_path / "conv"
    assert main(["convert", str(SAMPLE / "ref.A.txt"), str(SAMPLE / "ref.B.txt"), "-i", str(SAMPLE / "sys.alpha.txt"),
                 str(SAMPLE / "sys.beta.txt"), "--system-names", "alpha,beta", "-o", str(out),
                 "--rows-per-shard", "25"]) == 0
    assert "_beambleu_manifest.json" in os.listdir(out)
    docs = [run_ok(tmp_path, "--input", given, name=f"r{i}.json") for i, given in enumerate([out, f"{out}/*"])]
    assert without_inputs(docs[0]) == without_inputs(docs[1]) and docs[0]["inputs"]["n_files"] == 3
    from ...oracle import read_lines

    refs = [read_lines(SAMPLE / "ref.A.txt"), read_lines(SAMPLE / "ref.B.txt")]
    from sacrebleu.metrics import BLEU

    for g in docs[0]["groups"]:
        hyps = read_lines(SAMPLE / f"sys.{g['key']['system']}.txt")
        assert score_parts(g)[0]["score"] == BLEU().corpus_score(hyps, refs).score


def test_hive_partitions_are_string_columns(original, tmp_path):
    rows, doc = original
    root = write_hive(rows, tmp_path / "hive")
    for i, given in enumerate((root, f"{root}/system=*/*.parquet")):
        got = run_ok(tmp_path, "--input", given, name=f"r{i}.json")
        assert without_inputs(got) == without_inputs(doc)
        assert got["inputs"]["partition_columns"] == ["system"]
    assert "system" not in pq.read_schema(root / "system=alpha" / "part-0.parquet").names
    # a glob whose root is below the partition folders: no partition column
    assert run_bad(tmp_path, "--input", f"{root}/system=alpha/*", "--group-by", "system") == \
        f"{root}/system=alpha/part-0.parquet: column 'system' not found (columns: candidate, references, line)"


def test_hive_partitions_of_text_files_nulls_and_escapes(tmp_path):
    """A JSON Lines dataset partitioned by two columns (one of them the id of the bootstrap);
    Hive's null folder; a percent-escaped value. Grouped by the partition columns."""
    rows = [r for r in pairs() if r["line"] <= 6]
    for i, r in enumerate(rows):
        folder = ("lp=en%2Fde" if i % 2 else "lp=__HIVE_DEFAULT_PARTITION__") + f"/seg={r['line']}"
        write_jsonl([{k: r[k] for k in ("candidate", "references", "system")}],
                    tmp_path / "d" / folder / f"p-{r['system']}.jsonl")
    rc, _, err = run_cli("--input", tmp_path / "d", "--group-by", "lp", "--group-by", "system,seg", "--output",
                         tmp_path / "r.json", "--progress", "off", "--id-column", "seg", "--sentence-output",
                         tmp_path / "sent")
    assert rc == 0, err
    doc = load(tmp_path / "r.json")
    lp = {g["key"]["lp"]: (g["n_pairs"], score_parts(g)[0]["score"]) for g in doc["groups"] if g["group_by"] == ["lp"]}
    assert lp == {None: (6, sacrebleu_bleu(rows[0::2])), "en/de": (6, sacrebleu_bleu(rows[1::2]))}
    keys = [(g["key"]["system"], g["key"]["seg"]) for g in doc["groups"] if g["group_by"] == ["system", "seg"]]
    assert keys == [(s, str(n)) for s in ("alpha", "beta") for n in range(1, 7)]  # strings: "1", "2", ...
    sent = [pq.read_table(p) for p in (tmp_path / "sent").glob("*.parquet")]
    assert sorted(v for t in sent for v in t.column("seg").to_pylist()) == sorted([str(n) for n in range(1, 7)] * 2)


def test_directory_mistakes(tmp_path):
    rows = pairs()[:4]
    both = write_parquet(rows, tmp_path / "both" / "system=alpha" / "p.parquet")  # the file has `system` too
    assert run_bad(tmp_path, "--input", tmp_path / "both") == \
        f"{both}: column 'system' is both in the file and a partition folder of its path (system=...)"
    twice = write_parquet(rows, tmp_path / "twice" / "k=1" / "k=2" / "p.parquet")
    assert run_bad(tmp_path, "--input", tmp_path / "twice") == \
        f"{twice}: partition column 'k' appears twice in its folders"
    empty = tmp_path / "empty"
    (empty / "_temporary").mkdir(parents=True)
    (empty / "_SUCCESS").write_bytes(b"")
    (empty / "_temporary" / "p.parquet").write_bytes(b"")
    assert run_bad(tmp_path, "--input", empty) == \
        f"{empty}: no data files in this directory, only 2 skipped (hidden, _SUCCESS, _* and beambleu manifest files " \
        "are skipped)"
    (tmp_path / "nothing").mkdir()
    assert run_bad(tmp_path, "--input", tmp_path / "nothing") == f"{tmp_path / 'nothing'}: no files match"
    assert run_bad(tmp_path, "--input", f"{empty}/*") == \
        f"{empty}/*: no files match; 2 skipped (hidden, _SUCCESS, _* and beambleu manifest files are skipped)"
    mixed = tmp_path / "mixed"
    write_parquet(rows, mixed / "a.parquet")
    (mixed / "notes.txt").write_text("not pairs")  # not skipped: read as Parquet (its name says nothing else)
    assert run_bad(tmp_path, "--input", mixed).startswith(f"{mixed / 'notes.txt'}: not a readable Parquet file")


def test_s3_directory_partitions_and_text(original, tmp_path):
    """An S3 prefix given as a directory (with and without its slash): Hive partitions, `_SUCCESS`
    and JSON Lines files, through Beam's S3 filesystem (moto in server mode)."""
    pytest.importorskip("boto3")
    pytest.importorskip("moto")
    from ...engines import beambleu_subprocess, moto_s3

    rows, doc = original
    local = write_hive(rows, tmp_path / "hive")
    write_jsonl([{k: r[k] for k in ("candidate", "references", "line")} for r in rows if r["system"] == "beta"],
                local / "system=beta" / "more.jsonl")
    (local / "system=beta" / "part-0.parquet").unlink()  # beta's rows as JSON Lines instead
    with moto_s3(tmp_path / "moto") as s3:
        import boto3

        env = {k: v for k, v in s3.items() if k != "endpoint"}
        client = boto3.client("s3", endpoint_url=s3["endpoint"], region_name=env["AWS_DEFAULT_REGION"],
                              aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
                              aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"])
        client.create_bucket(Bucket="corpus")
        for path in sorted(local.rglob("*")):
            if path.is_file():
                client.upload_file(str(path), "corpus", f"pairs/{path.relative_to(local)}")
        client.put_object(Bucket="corpus", Key="pairs-old/x.parquet", Body=b"not under pairs/")
        docs = []
        for i, given in enumerate(["s3://corpus/pairs", "s3://corpus/pairs/"]):
            out = tmp_path / f"r{i}.json"
            proc = beambleu_subprocess(["run", "--input", given, "--group-by", "system", "--output", out,
                                        "--progress", "off", f"--s3_endpoint_url={s3['endpoint']}"],
                                       env=env, timeout=300)
            assert proc.returncode == 0, proc.stderr
            docs.append(json.loads(out.read_text()))
    for got in docs:
        assert without_inputs(got) == without_inputs(doc)
        assert got["inputs"]["files"] == ["s3://corpus/pairs/system=alpha/part-0.parquet",
                                          "s3://corpus/pairs/system=beta/more.jsonl"]

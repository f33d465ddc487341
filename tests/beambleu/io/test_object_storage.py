"""Shards read from, and results written to, object storage: S3 (moto in server mode) and GCS
(gcp-storage-emulator), both on loopback, through Beam's own filesystems. Results equal the
local run on the same shards; credentials come only from the environment and never appear in
what beambleu prints or writes."""

from __future__ import annotations

import glob as globlib
import io
import json
import os

import pytest

pytest.importorskip("apache_beam")

from ...engines import beambleu_subprocess, gcs_emulator, moto_s3  # noqa: E402
from ...oracle import CORPORA  # noqa: E402
from ...pipeline_helpers import bleu_of, comparable, corpus_rows, load, run_cli, write_shards  # noqa: E402

GROUPS = ["--group-by", "system,langpair"]


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    if not (CORPORA / "MANIFEST.tsv").exists():
        pytest.skip("shared corpora not present")
    d = tmp_path_factory.mktemp("os-shards")
    write_shards(corpus_rows(), d, n_shards=3, row_group_size=4000, shuffle_seed=5)
    return sorted(globlib.glob(str(d / "*.parquet")))


@pytest.fixture(scope="module")
def local_result(shards, tmp_path_factory):
    out = tmp_path_factory.mktemp("os-local") / "result.json"
    rc, _, err = run_cli("--input", os.path.join(os.path.dirname(shards[0]), "*.parquet"), *GROUPS,
                         "--output", out, "--progress", "off")
    assert rc == 0, err
    return load(out)


def _no_secret_in(secret: str, *texts: str) -> None:
    for text in texts:
        assert secret not in text


def _s3_env_and_client(s3):
    """(the environment beambleu gets: credentials and region, no endpoint; a boto3 client of the store)."""
    import boto3

    env = {k: v for k, v in s3.items() if k != "endpoint"}
    client = boto3.client("s3", endpoint_url=s3["endpoint"], region_name=env["AWS_DEFAULT_REGION"],
                          aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
                          aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"])
    return env, client


def test_s3_read_and_write(shards, local_result, tmp_path):
    pytest.importorskip("boto3")
    pytest.importorskip("moto")

    with moto_s3(tmp_path / "moto") as s3:
        env, client = _s3_env_and_client(s3)
        client.create_bucket(Bucket="corpus")
        client.create_bucket(Bucket="results")
        for path in shards:
            client.upload_file(path, "corpus", f"wmt/{os.path.basename(path)}")
        proc = beambleu_subprocess(
            ["run", "--input", "s3://corpus/wmt/*.parquet", *GROUPS, "--output", "s3://results/run1/result.json",
             "--groups-output", "s3://results/run1/groups.parquet", f"--s3_endpoint_url={s3['endpoint']}"],
            env=env, timeout=600)
        assert proc.returncode == 0, proc.stderr
        doc = json.loads(client.get_object(Bucket="results", Key="run1/result.json")["Body"].read())
        keys = sorted(o["Key"] for o in client.list_objects_v2(Bucket="results")["Contents"])
        assert keys == ["run1/groups.parquet", "run1/result.json"]  # no temporary objects left
        import pyarrow.parquet as pq

        table = pq.read_table(io.BytesIO(client.get_object(Bucket="results", Key="run1/groups.parquet")["Body"].read()))
        assert table.num_rows == len(local_result["groups"])

        # an existing output is refused before the job starts
        again = beambleu_subprocess(["run", "--input", "s3://corpus/wmt/*.parquet", "--output",
                                     "s3://results/run1/result.json", f"--s3_endpoint_url={s3['endpoint']}"],
                                    env=env, timeout=300)
        assert again.returncode == 2 and "s3://results/run1/result.json: --output exists" in again.stderr
        # a missing object is named
        missing = beambleu_subprocess(["run", "--input", "s3://corpus/nothing/*.parquet", "--output",
                                       "s3://results/x.json", f"--s3_endpoint_url={s3['endpoint']}"],
                                      env=env, timeout=300)
        assert missing.returncode == 1 and "s3://corpus/nothing/*.parquet: no files match" in missing.stderr
    assert comparable(doc) == comparable(local_result)
    assert doc["inputs"]["files"] == [f"s3://corpus/wmt/{os.path.basename(p)}" for p in shards]
    _no_secret_in(env["AWS_SECRET_ACCESS_KEY"], proc.stderr, proc.stdout, json.dumps(doc), again.stderr)


def test_gcs_read_and_write(shards, local_result, tmp_path):
    pytest.importorskip("google.cloud.storage")
    pytest.importorskip("gcp_storage_emulator")
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import storage

    with gcs_emulator(tmp_path / "gcs") as gcs:
        os.environ["STORAGE_EMULATOR_HOST"] = gcs["STORAGE_EMULATOR_HOST"]
        try:
            client = storage.Client(project=gcs["GOOGLE_CLOUD_PROJECT"], credentials=AnonymousCredentials())
            bucket = client.create_bucket("corpus")
            for path in shards:
                bucket.blob(f"wmt/{os.path.basename(path)}").upload_from_filename(path)
            client.create_bucket("results")
            # --no_auth: no credential lookup (the emulator takes anonymous requests)
            proc = beambleu_subprocess(
                ["run", "--input", "gs://corpus/wmt/*.parquet", *GROUPS, "--output", "gs://results/r/result.json",
                 "--groups-output", "gs://results/r/groups.csv", "--no_auth"],
                env=gcs, timeout=600)
            assert proc.returncode == 0, proc.stderr
            doc = json.loads(client.bucket("results").blob("r/result.json").download_as_bytes())
            names = sorted(b.name for b in client.list_blobs("results"))
            groups_csv = client.bucket("results").blob("r/groups.csv").download_as_text()
        finally:
            del os.environ["STORAGE_EMULATOR_HOST"]
    assert names == ["r/groups.csv", "r/result.json"]
    assert comparable(doc) == comparable(local_result)
    assert groups_csv.count("\n") == 1 + len(local_result["groups"])
    assert doc["inputs"]["files"] == [f"gs://corpus/wmt/{os.path.basename(p)}" for p in shards]


def test_s3_spm_model(spm_dir, tmp_path):
    """`--spm-model s3://...`: the model is read through Beam's S3 filesystem (on the driver and in
    every worker's setup), recorded with its SHA-256, and the scores equal sacrebleu's spBLEU with
    the same file; a missing object is one line naming it."""
    pytest.importorskip("boto3")
    pytest.importorskip("moto")
    pytest.importorskip("sentencepiece")
    import hashlib

    import sacrebleu.tokenizers.tokenizer_spm as sacre_spm

    from ...oracle import sacre_corpus

    rows = [{"candidate": c, "references": [r], "system": s, "langpair": "de-en", "line": i}
            for i, (c, r, s) in enumerate([("Das ist ein kleiner Test.", "Das ist ein Test.", "a"),
                                           ("Zürich liegt am See ☃", "Zürich liegt am Zürichsee", "a"),
                                           ("Hello there, world", "Hello world", "b"),
                                           ("日本語の文 and text", "日本語の文", "b")])]
    shards = write_shards(rows, tmp_path / "shards", n_shards=1, row_group_size=10)
    model = spm_dir / "models" / "flores200sacrebleuspm"
    with moto_s3(tmp_path / "moto") as s3:
        env, client = _s3_env_and_client(s3)
        client.create_bucket(Bucket="models")
        client.upload_file(str(model), "models", "spm/flores200.model")
        out = tmp_path / "result.json"
        env["SACREBLEU"] = str(tmp_path / "empty-home")  # nothing at sacrebleu's place
        proc = beambleu_subprocess(["run", "--input", shards, "--group-by", "system", "-tok", "flores200",
                                    "--spm-model", "s3://models/spm/flores200.model", "--output", out,
                                    f"--s3_endpoint_url={s3['endpoint']}"], env=env, timeout=600)
        assert proc.returncode == 0, proc.stderr
        missing = beambleu_subprocess(["run", "--input", shards, "-tok", "flores200", "--spm-model",
                                       "s3://models/spm/nothing.model", "--output", tmp_path / "m.json",
                                       f"--s3_endpoint_url={s3['endpoint']}"], env=env, timeout=600)
    assert missing.returncode == 1 and not (tmp_path / "m.json").exists()
    assert len(missing.stderr.strip().splitlines()) == 1
    assert missing.stderr.startswith("beambleu: error: cannot read the SentencePiece model "
                                     "s3://models/spm/nothing.model")
    doc = load(out)
    assert doc["inputs"]["spm_model"] == {"tokenizer": "flores200", "path": "s3://models/spm/flores200.model",
                                          "sha256": hashlib.sha256(model.read_bytes()).hexdigest()}
    old = sacre_spm.SACREBLEU_DIR
    sacre_spm.SACREBLEU_DIR = str(spm_dir)
    try:
        for g in doc["groups"]:
            sel = [r for r in rows if r["system"] == g["key"]["system"]]
            theirs = sacre_corpus([r["candidate"] for r in sel], [r["references"] for r in sel],
                                  tokenize="flores200")[0]
            assert (bleu_of(g)["score"], bleu_of(g)["counts"]) == (theirs.score, list(theirs.counts))
    finally:
        sacre_spm.SACREBLEU_DIR = old
    _no_secret_in(env["AWS_SECRET_ACCESS_KEY"], proc.stderr, missing.stderr, json.dumps(doc))

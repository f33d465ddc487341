"""`beambleu run` with the SentencePiece tokenizers (spBLEU): every group equals sacrebleu 2.6.0's
spBLEU with the same model file; the model is fixed on the driver and recorded (path, SHA-256);
each worker loads it once in setup and checks it is the driver's file; a missing model is one line."""

from __future__ import annotations

import hashlib
import shutil

import pyarrow as pa
import pytest

pytest.importorskip("apache_beam")
pytest.importorskip("sentencepiece")

from ...oracle import CORPORA, sacre_corpus  # noqa: E402
from ...pipeline_helpers import bleu_of, corpus_rows, load, run_cli, write_shards  # noqa: E402
from ...spm_models import TOKENIZER_FILES  # noqa: E402

needs_corpora = pytest.mark.skipif(not (CORPORA / "MANIFEST.tsv").exists(), reason="shared corpora not present")
#: scripts the small test models partly do not know (unknown pieces), and two references
FOLDERS = ("wmt22/de-en", "wmt21/xh-zu", "wmt22/en-zh", "wmt21/bn-hi")


def rows_of(folders=FOLDERS, lines=150):
    return [r for r in corpus_rows(folders) if r["line"] <= lines]


@pytest.fixture(scope="module")
def rows():
    if not (CORPORA / "MANIFEST.tsv").exists():
        pytest.skip("shared corpora not present")
    return rows_of()


@pytest.fixture(scope="module")
def shards(rows, tmp_path_factory):
    return write_shards(rows, tmp_path_factory.mktemp("spm-shards"), n_shards=3, row_group_size=700, shuffle_seed=2)


def sacrebleu_groups(rows, keys, **opts):
    """sacrebleu's BLEU of each group of ``rows`` by ``keys``: {key tuple: score object}."""
    groups = {}
    for r in rows:
        groups.setdefault(tuple(r[k] for k in keys), []).append(r)
    return {k: sacre_corpus([r["candidate"] for r in sel], [r["references"] for r in sel], **opts)[0]
            for k, sel in groups.items()}


@needs_corpora
@pytest.mark.parametrize("name, extra, opts", [
    ("flores101", [], {}),
    ("flores200", ["--lowercase"], {"lowercase": True}),
    ("spBLEU-1K", ["--smooth-method", "floor"], {"smooth_method": "floor"}),
    ("spm", [], {}),
])
def test_groups_equal_sacrebleu(spm_home, rows, shards, tmp_path, name, extra, opts):
    out = tmp_path / "result.json"
    rc, _, err = run_cli("--input", shards, "--group-by", "system,langpair", "-tok", name, *extra,
                         "--output", out, "--progress", "off")
    assert rc == 0, err
    doc = load(out)
    expected = sacrebleu_groups(rows, ("system", "langpair"), tokenize=name, **opts)
    assert len(doc["groups"]) == len(expected)
    for g in doc["groups"]:
        theirs = expected[(g["key"]["system"], g["key"]["langpair"])]
        b = bleu_of(g)
        assert b["score"] == theirs.score
        assert (b["sys_len"], b["ref_len"], b["counts"]) == (theirs.sys_len, theirs.ref_len, list(theirs.counts))
    corpus = sacre_corpus([r["candidate"] for r in rows], [r["references"] for r in rows], tokenize=name, **opts)[0]
    assert bleu_of(doc["corpus"])["score"] == corpus.score
    tok = "flores101" if name == "spm" else name
    assert "|tok:" + tok + "|" in doc["metrics"][0]["signature"] and bleu_of(doc["corpus"])["tok"] == tok
    model = spm_home / "models" / TOKENIZER_FILES[name]
    assert doc["inputs"]["spm_model"] == {"tokenizer": name, "path": str(model),
                                          "sha256": hashlib.sha256(model.read_bytes()).hexdigest()}


@needs_corpora
def test_explicit_model_relative_path_is_recorded_absolute_and_reported(spm_dir, rows, shards, tmp_path,
                                                                        monkeypatch):
    """--spm-model with a relative path: the driver fixes the absolute path (workers may start
    elsewhere); the JSON and `beambleu report` name it with its SHA-256."""
    from beambleu.cli import main

    # flores200's name, spBLEU-1K's file: the file given wins over sacrebleu's place
    (tmp_path / "m").mkdir()
    shutil.copy(spm_dir / "models" / TOKENIZER_FILES["spBLEU-1K"], tmp_path / "m" / "other.model")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SACREBLEU", str(tmp_path / "empty-home"))  # sacrebleu's place has nothing
    rc, _, err = run_cli("--input", shards, "-tok", "flores200", "--spm-model", "m/other.model", "--output",
                         "result.json", "--progress", "off")
    assert rc == 0, err
    doc = load(tmp_path / "result.json")
    path = tmp_path / "m" / "other.model"
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    assert doc["inputs"]["spm_model"] == {"tokenizer": "flores200", "path": str(path), "sha256": sha}
    monkeypatch.setenv("SACREBLEU", str(spm_dir))
    import sacrebleu.tokenizers.tokenizer_spm as sacre_spm

    monkeypatch.setattr(sacre_spm, "SACREBLEU_DIR", str(spm_dir))
    theirs = sacre_corpus([r["candidate"] for r in rows], [r["references"] for r in rows], tokenize="spBLEU-1K")[0]
    assert bleu_of(doc["corpus"])["score"] == theirs.score
    assert "tok:flores200" in doc["metrics"][0]["signature"]
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["report", "result.json"]) == 0
    assert f"SentencePiece model: {path} (SHA-256 {sha})" in buf.getvalue().splitlines()


def test_missing_model_offline_is_one_line_and_no_output(tmp_path, monkeypatch):
    shards = write_shards([{"candidate": "a b", "references": ["a b"], "system": "s", "langpair": "x-y", "line": 1}],
                          tmp_path / "shards", n_shards=1, row_group_size=10)
    home = tmp_path / "home"
    monkeypatch.setenv("SACREBLEU", str(home))
    for var in ("https_proxy", "http_proxy", "HTTPS_PROXY", "HTTP_PROXY"):
        monkeypatch.setenv(var, "http://127.0.0.1:9")  # a closed port: offline, at once
    out = tmp_path / "result.json"
    rc, stdout, err = run_cli("--input", shards, "-tok", "flores200", "--output", out, "--progress", "off")
    assert rc == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    expected = home / "models" / "flores200sacrebleuspm"
    assert lines[0].startswith("beambleu: error: cannot download the SentencePiece model "
                               "https://tinyurl.com/flores200sacrebleuspm")
    assert f"copy the model file to {expected}" in lines[0]
    assert stdout == "" and not out.exists()
    assert not (home / "models").exists() or list((home / "models").iterdir()) == []

    rc, _, err = run_cli("--input", shards, "-tok", "flores200", "--spm-model", str(tmp_path / "nope.model"),
                         "--output", out, "--progress", "off")
    assert rc == 1 and err.strip().splitlines() == [
        f"beambleu: error: cannot read the SentencePiece model {tmp_path / 'nope.model'}: No such file or directory"]
    assert not out.exists()


def test_spm_model_with_another_tokenizer_is_usage_error(tmp_path):
    rc, _, err = run_cli("--input", str(tmp_path / "x.parquet"), "-tok", "13a", "--spm-model", "m.model",
                         "--output", tmp_path / "o.json")
    assert rc == 2
    assert err.strip().splitlines() == ["beambleu: error: a SentencePiece model is only used by the tokenizers "
                                        "flores101, flores200, spBLEU-1K, spm, not '13a'"]


def test_worker_refuses_a_model_that_is_not_the_drivers(spm_home, tmp_path):
    """Each worker loads the model in setup and compares its SHA-256 with the driver's: a file
    replaced while the job runs is one input error, not a silent mix of two tokenizations."""
    from bleu_core import Bleu
    from beambleu.io.inputs import PipelineInputError
    from beambleu.transforms import BatchToStats, ComputeMetrics

    model = tmp_path / "model"
    shutil.copy(spm_home / "models" / TOKENIZER_FILES["flores101"], model)
    metric = Bleu(tokenize="flores101", spm_model=str(model))
    config = ComputeMetrics([metric]).config
    assert config.resources["spm_model"]["sha256"] == hashlib.sha256(model.read_bytes()).hexdigest()
    running = BatchToStats(config)
    running.setup()  # the same file: fine
    batch = pa.record_batch({"candidate": pa.array(["a b c"]), "references": pa.array([["a b c"]])})
    assert len(list(running.process(("part.parquet", 0, batch)))) == 1

    shutil.copy(spm_home / "models" / TOKENIZER_FILES["flores200"], model)  # replaced on disk
    with pytest.raises(PipelineInputError) as exc:
        BatchToStats(config).setup()
    assert f"{model} has SHA-256 " in exc.value.message and "the file changed while the job ran" in exc.value.message
    # a worker already running sees it before its next batch
    with pytest.raises(PipelineInputError) as exc:
        list(running.process(("part.parquet", 0, batch)))
    assert "the file changed while the job ran" in exc.value.message


def _tree(root):
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("flags,message", [
    (["--output", "m/own.model"], "--output is the SentencePiece model {model} (-tok flores200)"),
    (["--output", "m/own.model", "--overwrite"], "--output is the SentencePiece model {model} (-tok flores200)"),
    (["--groups-output", "m/own.csv", "--spm-model", "m/own.csv", "--overwrite"],
     "--groups-output is the SentencePiece model {tmp}/m/own.csv (-tok flores200)"),
    (["--sentence-output", "m", "--overwrite"], "--sentence-output contains the SentencePiece model {model} "
                                                "(-tok flores200)"),
    (["--output", "m/own.model/r.json", "--overwrite"], "--output lies inside the SentencePiece model {model} "
                                                        "(-tok flores200)"),
])
def test_an_output_that_is_the_spm_model_is_refused_and_nothing_changes(spm_dir, tmp_path, monkeypatch, flags,
                                                                         message):
    """--spm-model's file is an input: an output that is it, contains it or lies inside it is bad
    usage (exit 2, one line), with or without --overwrite, and no file changes."""
    from ...oracle import REPO

    (tmp_path / "m").mkdir()
    for name in ("own.model", "own.csv"):
        shutil.copy(spm_dir / "models" / TOKENIZER_FILES["flores200"], tmp_path / "m" / name)
    monkeypatch.chdir(tmp_path)
    before = _tree(tmp_path)
    model = "m/own.model" if "--spm-model" not in flags else None
    rc, out, err = run_cli("--input", REPO / "examples" / "sample" / "shards" / "*.parquet", "-tok", "flores200",
                           *(["--spm-model", model] if model else []), *flags, "--progress", "off")
    assert rc == 2, err
    lines = [ln for ln in err.splitlines() if ln.startswith("beambleu: error:")]
    path = flags[flags.index("--spm-model") + 1] if "--spm-model" in flags else "m/own.model"
    want = message.format(model=tmp_path / "m" / "own.model", tmp=tmp_path)
    assert lines == [f"beambleu: error: {tmp_path / flags[1]}: {want}"], err
    assert "Traceback" not in err and out == "" and path
    assert _tree(tmp_path) == before


@pytest.mark.parametrize("flags,what", [
    (["--output", "{models}/flores200sacrebleuspm", "--overwrite"], "is"),
    (["--sentence-output", "{models}", "--overwrite"], "contains"),
])
def test_an_output_that_is_the_cached_spm_model_is_refused_and_nothing_changes(spm_dir, tmp_path, monkeypatch,
                                                                                flags, what):
    """The model found in sacrebleu's folder ($SACREBLEU/models) is an input too."""
    from ...oracle import REPO

    home = tmp_path / "home"
    shutil.copytree(spm_dir, home)
    monkeypatch.setenv("SACREBLEU", str(home))
    before = _tree(tmp_path)
    models = home / "models"
    flags = [f.format(models=models) for f in flags]
    rc, out, err = run_cli("--input", REPO / "examples" / "sample" / "shards" / "*.parquet", "-tok", "flores200",
                           *flags, "--progress", "off")
    assert rc == 2, err
    lines = [ln for ln in err.splitlines() if ln.startswith("beambleu: error:")]
    assert lines == [f"beambleu: error: {flags[1]}: {flags[0]} {what} the SentencePiece model "
                     f"{models / 'flores200sacrebleuspm'} (-tok flores200)"], err
    assert _tree(tmp_path) == before

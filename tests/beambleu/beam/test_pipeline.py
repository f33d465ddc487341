"""The Beam pipeline: results equal sacrebleu / corpus_bleu on the same rows, on every runner here."""

import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

pytest.importorskip("apache_beam")

from bleu_core import corpus_bleu, sentence_bleu  # noqa: E402

from ...oracle import CORPORA, sacre_corpus  # noqa: E402
from ...pipeline_helpers import bleu_of, comparable, corpus_rows, load, run_cli, write_shards  # noqa: E402

needs_corpora = pytest.mark.skipif(not (CORPORA / "MANIFEST.tsv").exists(), reason="shared corpora not present")


@pytest.fixture(scope="module")
def rows():
    if not (CORPORA / "MANIFEST.tsv").exists():
        pytest.skip("shared corpora not present")
    return corpus_rows()


@pytest.fixture(scope="module")
def baseline(rows, tmp_path_factory):
    d = tmp_path_factory.mktemp("baseline")
    glob = write_shards(rows, d / "shards", n_shards=3, row_group_size=5000)
    out = d / "result.json"
    rc, _, err = run_cli("--input", glob, "--group-by", "system,langpair", "--group-by", "langpair",
                         "--output", out, "--groups-output", d / "groups.parquet", "--progress", "off")
    assert rc == 0, err
    return load(out), d


@needs_corpora
def test_groups_equal_sacrebleu_per_system(rows, baseline):
    doc, _ = baseline
    by_key = {(g["key"]["system"], g["key"]["langpair"]): g for g in doc["groups"] if g["group_by"] == ["system", "langpair"]}
    systems = sorted({(r["system"], r["langpair"]) for r in rows})
    assert sorted(by_key) == systems
    for key in systems:
        sel = [r for r in rows if (r["system"], r["langpair"]) == key]
        theirs, _ = sacre_corpus([r["candidate"] for r in sel], [r["references"] for r in sel])
        g = by_key[key]
        assert bleu_of(g)["score"] == theirs.score, key
        assert (bleu_of(g)["sys_len"], bleu_of(g)["ref_len"]) == (theirs.sys_len, theirs.ref_len)
        assert g["n_pairs"] == len(sel)


@needs_corpora
def test_corpus_and_langpair_groups_equal_corpus_bleu(rows, baseline):
    doc, _ = baseline
    ours = corpus_bleu([r["candidate"] for r in rows], [r["references"] for r in rows])
    corpus = bleu_of(doc["corpus"])
    assert doc["format_version"] == 2 and doc["corpus"]["group_by"] == [] and doc["corpus"]["key"] == {}
    assert doc["metrics"] == [{"metric": "bleu", "name": "BLEU", "signature": corpus["signature"]}]
    assert corpus["score"] == ours.score
    assert corpus["counts"] == ours.counts and corpus["totals"] == ours.totals
    # 2 references for de-en, 1 for the others: the signature says nrefs:var, the typed field null
    assert corpus["nrefs"] is None and corpus["signature"].startswith("nrefs:var|")
    assert doc["inputs"]["pairs"] == len(rows) and doc["inputs"]["n_files"] == 3
    for g in (g for g in doc["groups"] if g["group_by"] == ["langpair"]):
        sel = [r for r in rows if r["langpair"] == g["key"]["langpair"]]
        assert bleu_of(g)["score"] == corpus_bleu([r["candidate"] for r in sel], [r["references"] for r in sel]).score
        assert bleu_of(g)["nrefs"] == (2 if g["key"]["langpair"] == "wmt22/de-en" else 1)


@needs_corpora
def test_groups_output_table(baseline):
    doc, d = baseline
    table = pq.read_table(d / "groups.parquet").to_pylist()
    assert len(table) == len(doc["groups"])
    for row, g in zip(table, doc["groups"]):
        assert row["bleu_score"] == bleu_of(g)["score"] and row["bleu_counts_1"] == bleu_of(g)["counts"][0]
        assert row["group_by"] == ",".join(g["group_by"])
        assert (row["n_pairs"], row["nrefs"]) == (g["n_pairs"], bleu_of(g)["nrefs"])


@needs_corpora
@pytest.mark.parametrize("n_shards,row_group_size,seed", [(1, 100_000, None), (7, 1000, 1), (50, 333, 2)])
def test_same_totals_for_any_sharding_and_order(rows, baseline, tmp_path, n_shards, row_group_size, seed):
    glob = write_shards(rows, tmp_path / "s", n_shards, row_group_size, shuffle_seed=seed)
    rc, _, err = run_cli("--input", glob, "--group-by", "system,langpair", "--group-by", "langpair",
                         "--output", tmp_path / "r.json", "--batch-size", "777", "--progress", "off")
    assert rc == 0, err
    assert comparable(load(tmp_path / "r.json")) == comparable(baseline[0])


@needs_corpora
@pytest.mark.slow
def test_multi_processing_runner_same_result(rows, baseline, tmp_path):
    glob = write_shards(rows, tmp_path / "s", 7, 2000, shuffle_seed=3)
    rc, _, err = run_cli("--input", glob, "--group-by", "system,langpair", "--group-by", "langpair",
                         "--output", tmp_path / "r.json", "--direct_num_workers=2",
                         "--direct_running_mode=multi_processing", "--progress", "off")
    assert rc == 0, err
    assert comparable(load(tmp_path / "r.json")) == comparable(baseline[0])


def _small(tmp_path, rows=None, **kw):
    rows = rows or [{"candidate": "the cat is on mat", "references": ["the cat is on the mat"], "system": "a",
                     "langpair": "x", "line": 1},
                    {"candidate": "red red red blue", "references": ["red blue green white", None],
                     "system": "b", "langpair": "x", "line": 2}]
    return write_shards(rows, tmp_path / "in", 1, 10, **kw)


def test_sample_corpus_like_the_readme(tmp_path):
    from ...oracle import REPO
    from beambleu.cli import main

    shards = tmp_path / "shards"
    sample = REPO / "examples" / "sample"
    for system in ("alpha", "beta"):
        assert main(["convert", str(sample / "ref.A.txt"), str(sample / "ref.B.txt"), "-i",
                     str(sample / f"sys.{system}.txt"), "--set", f"system={system}", "-o",
                     str(shards / f"{system}.parquet")]) == 0
    rc, _, err = run_cli("--input", shards / "*.parquet", "--group-by", "system", "--output", tmp_path / "r.json")
    assert rc == 0, err
    assert "counters:" in err and "pairs=60" in err and "rows_rejected=0" in err  # progress, metrics
    doc = load(tmp_path / "r.json")
    from ...oracle import read_lines
    refs = [list(r) for r in zip(read_lines(sample / "ref.A.txt"), read_lines(sample / "ref.B.txt"))]
    for g in doc["groups"]:
        hyps = read_lines(sample / f"sys.{g['key']['system']}.txt")
        assert bleu_of(g)["score"] == sacre_corpus(hyps, refs)[0].score


def test_sentence_output(tmp_path):
    glob = _small(tmp_path)
    rc, _, err = run_cli("--input", glob, "--output", tmp_path / "r.json", "--sentence-output", tmp_path / "sent",
                         "--id-column", "line", "--progress", "off")
    assert rc == 0, err
    parts = sorted((tmp_path / "sent").glob("*.parquet"))
    t = pa.concat_tables([pq.read_table(p) for p in parts]).sort_by("row").to_pylist()
    assert [r["line"] for r in t] == [1, 2] and [r["row"] for r in t] == [0, 1]
    assert t[0]["bleu_score"] == sentence_bleu("the cat is on mat", ["the cat is on the mat"]).score
    assert t[1]["bleu_score"] == sentence_bleu("red red red blue", ["red blue green white"]).score
    assert (t[1]["bleu_sys_len"], t[1]["bleu_ref_len"], t[1]["bleu_counts_1"], t[1]["bleu_totals_1"]) == (4, 4, 2, 4)
    assert not list(tmp_path.glob("sent.beambleu-tmp-*"))


def test_group_keys_ints_and_nulls(tmp_path):
    schema = pa.schema([("candidate", pa.string()), ("references", pa.list_(pa.string())), ("doc", pa.int32()),
                        ("domain", pa.string())])
    rows = [{"candidate": "a b c", "references": ["a b c"], "doc": 1, "domain": None},
            {"candidate": "a b", "references": ["a c"], "doc": 2, "domain": "news"},
            {"candidate": "x", "references": ["x"], "doc": None, "domain": "news"}]
    glob = write_shards(rows, tmp_path / "in", 1, 10, schema=schema)
    rc, _, err = run_cli("--input", glob, "--group-by", "doc", "--group-by", "domain", "--output", tmp_path / "r.json",
                         "--groups-output", tmp_path / "g.csv")
    assert rc == 0, err
    doc = load(tmp_path / "r.json")
    keys = [(g["group_by"], g["key"], g["n_pairs"]) for g in doc["groups"]]
    assert keys == [(["doc"], {"doc": None}, 1), (["doc"], {"doc": 1}, 1), (["doc"], {"doc": 2}, 1),
                    (["domain"], {"domain": None}, 1), (["domain"], {"domain": "news"}, 2)]
    news = doc["groups"][-1]
    assert bleu_of(news)["score"] == corpus_bleu(["a b", "x"], [["a c"], ["x"]]).score
    csv_lines = (tmp_path / "g.csv").read_text().splitlines()
    assert csv_lines[0].startswith("group_by,doc,domain,n_pairs,nrefs,bleu_score,bleu_bp,") and len(csv_lines) == 6


def test_wide_format_and_reference_columns(tmp_path):
    schema = pa.schema([("sysA", pa.string()), ("sysB", pa.string()), ("refX", pa.string()), ("refY", pa.string())])
    rows = [{"sysA": "the cat is on mat", "sysB": "a cat", "refX": "the cat is on the mat", "refY": None},
            {"sysA": "hello world", "sysB": "hello there world", "refX": "hello world .", "refY": "hi world"}]
    glob = write_shards(rows, tmp_path / "in", 1, 10, schema=schema)
    rc, _, err = run_cli("--input", glob, "--candidate-columns", "sysA,sysB", "--reference-columns", "refX,refY",
                         "--output", tmp_path / "r.json", "--progress", "off")
    assert rc == 0, err
    doc = load(tmp_path / "r.json")
    refs = [["the cat is on the mat", None], ["hello world .", "hi world"]]
    got = {g["key"]["system"]: bleu_of(g)["score"] for g in doc["groups"]}
    assert got == {"sysA": corpus_bleu([r["sysA"] for r in rows], refs).score,
                   "sysB": corpus_bleu([r["sysB"] for r in rows], refs).score}
    assert bleu_of(doc["groups"][0])["nrefs"] is None  # the signature's nrefs:var
    assert bleu_of(doc["groups"][0])["signature"].startswith("nrefs:var|")


def test_null_candidate_empty_option(tmp_path):
    rows = [{"candidate": None, "references": ["a b"], "system": "s", "langpair": "x", "line": 1},
            {"candidate": "a b", "references": ["a b"], "system": "s", "langpair": "x", "line": 2}]
    glob = _small(tmp_path, rows)
    rc, _, err = run_cli("--input", glob, "--output", tmp_path / "r.json", "--null-candidate", "empty")
    assert rc == 0, err
    assert bleu_of(load(tmp_path / "r.json")["corpus"])["score"] == corpus_bleu(["", "a b"], [["a b"], ["a b"]]).score
    assert "null_candidates_as_empty=1" in err


def _list_views(lists, large: bool) -> pa.Array:
    """A list_view<string> (or large_list_view) array of ``lists`` whose views point into the
    child array backwards (the last row's strings first), as a list_view may: not a list's layout."""
    values, offsets, sizes = [], [0] * len(lists), [len(x) for x in lists]
    for i in reversed(range(len(lists))):
        offsets[i] = len(values)
        values += lists[i]
    width = pa.int64() if large else pa.int32()
    cls = pa.LargeListViewArray if large else pa.ListViewArray
    return cls.from_arrays(pa.array(offsets, width), pa.array(sizes, width), pa.array(values, pa.string()))


@pytest.mark.parametrize("kind", ["list_view", "large_list_view", "large_list"])
def test_references_as_list_view_or_large_list_score_as_list(tmp_path, kind):
    """Arrow's other list layouts of the references column: the same scores as list<string> (and
    as sacrebleu on the same rows), and the same JSON but for nothing."""
    cands = ["the cat is on mat", "red red red blue", "hello there world", "a b c d"]
    refs = [["the cat is on the mat", "a cat is on the mat"], ["red blue green white", None], ["hello world"],
            ["a b c", "a b c d e"]]
    if kind == "large_list":
        column = pa.array(refs, pa.large_list(pa.string()))
    else:
        column = _list_views(refs, large=kind == "large_list_view")
        assert column.to_pylist() == refs
    pq.write_table(pa.table({"candidate": cands, "references": column, "system": ["a", "b", "a", "b"]}),
                   tmp_path / "views.parquet")
    assert kind in str(pq.read_schema(tmp_path / "views.parquet").field("references").type)
    pq.write_table(pa.table({"candidate": cands, "references": pa.array(refs, pa.list_(pa.string())),
                             "system": ["a", "b", "a", "b"]}), tmp_path / "lists.parquet")
    docs = {}
    for name in ("views", "lists"):
        rc, _, err = run_cli("--input", tmp_path / f"{name}.parquet", "--group-by", "system", "--metrics", "bleu,chrf",
                             "--output", tmp_path / f"{name}.json", "--progress", "off")
        assert rc == 0, err
        docs[name] = load(tmp_path / f"{name}.json")
    from sacrebleu.metrics.chrf import CHRF

    from ...oracle import to_streams

    views, lists = docs["views"], docs["lists"]
    bleu, chrf = views["corpus"]["scores"]
    assert bleu["score"] == sacre_corpus(cands, refs)[0].score
    assert chrf["score"] == CHRF().corpus_score(cands, to_streams(refs)).score
    for system in ("a", "b"):
        g = next(g for g in views["groups"] if g["key"] == {"system": system})
        sel = [i for i in range(4) if "abab"[i] == system]
        assert g["scores"][0]["score"] == sacre_corpus([cands[i] for i in sel], [refs[i] for i in sel])[0].score
    del views["inputs"], lists["inputs"]  # (they name the files)
    assert views == lists


# --------------------------------------------------------------------------------- bad input


def _bad(tmp_path, *args):
    out = tmp_path / "out.json"
    rc, stdout, err = run_cli(*args, "--output", out, "--progress", "off")
    lines = [line for line in err.splitlines() if line.startswith("beambleu: error:")]
    assert rc != 0
    assert not out.exists()
    assert not list(tmp_path.glob("out.json*")), "no temporary or partial output either"
    assert len(lines) == 1, err
    return rc, lines[0][len("beambleu: error: "):]


def test_glob_matches_nothing(tmp_path):
    rc, msg = _bad(tmp_path, "--input", tmp_path / "none-*.parquet")
    assert rc == 1 and msg == f"{tmp_path}/none-*.parquet: no files match"


def test_not_parquet_and_truncated(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.parquet").write_text("candidate,references\n")
    rc, msg = _bad(tmp_path, "--input", tmp_path / "in" / "*.parquet")
    assert rc == 1 and msg.startswith(f"{tmp_path}/in/a.parquet: not a readable Parquet file")
    glob = _small(tmp_path / "t")
    f = next((tmp_path / "t" / "in").glob("*.parquet"))
    data = f.read_bytes()
    f.write_bytes(data[: len(data) // 2] + data[-600:])  # footer kept, pages cut
    rc, msg = _bad(tmp_path, "--input", glob)
    assert rc == 1 and msg.startswith(str(f)) and ("unreadable" in msg or "not a readable" in msg)


def test_missing_column_and_wrong_type(tmp_path):
    glob = _small(tmp_path)
    rc, msg = _bad(tmp_path, "--input", glob, "--group-by", "domain")
    assert rc == 1 and "column 'domain' not found" in msg and msg.startswith(str(tmp_path / "in"))
    rc, msg = _bad(tmp_path, "--input", glob, "--references-column", "system")
    assert rc == 1 and "column 'system' must be list<string>, found string" in msg
    rc, msg = _bad(tmp_path, "--input", glob, "--candidate-column", "line")
    assert rc == 1 and "column 'line' must be string, found int64" in msg
    rc, msg = _bad(tmp_path, "--input", glob, "--group-by", "references")
    assert rc == 1 and "group column 'references' must be" in msg


def test_schemas_differ_across_shards(tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    pq.write_table(pa.table({"candidate": ["a"], "references": [["a"]], "system": ["s"]}), d / "a.parquet")
    pq.write_table(pa.table({"candidate": ["a"], "references": [["a"]], "system": [3]}), d / "b.parquet")
    rc, msg = _bad(tmp_path, "--input", d / "*.parquet", "--group-by", "system")
    assert rc == 1 and msg == f"{d}/b.parquet: schema differs from {d}/a.parquet (system: int64 vs string)"


def test_shards_that_differ_only_in_nullability_are_one_input(tmp_path):
    """Nullability (of a column, or of a list's items) and the name of a list's item field are not
    schema differences: nulls are handled row by row. A real difference is named, with the rest."""
    d = tmp_path / "in"
    d.mkdir()
    strict = pa.schema([pa.field("candidate", pa.string(), nullable=False),
                        pa.field("references", pa.list_(pa.field("item", pa.string(), nullable=False)), nullable=False),
                        pa.field("system", pa.string(), nullable=False)])
    pq.write_table(pa.table({"candidate": ["the cat is on mat"], "references": [["the cat is on the mat"]],
                             "system": ["s"]}, schema=strict), d / "a.parquet")
    pq.write_table(pa.table({"candidate": ["red red red blue", "a b c d"], "references": [["red blue green white"],
                                                                                          ["a b c", None]],
                             "system": ["s", "t"]}), d / "b.parquet")
    assert not pq.read_schema(d / "a.parquet").field("candidate").nullable
    rc, _, err = run_cli("--input", d / "*.parquet", "--group-by", "system", "--output", tmp_path / "r.json",
                         "--progress", "off")
    assert rc == 0, err
    cands = ["the cat is on mat", "red red red blue", "a b c d"]
    refs = [["the cat is on the mat"], ["red blue green white"], ["a b c", None]]
    assert bleu_of(load(tmp_path / "r.json")["corpus"])["score"] == sacre_corpus(cands, refs)[0].score
    # a type that differs is named, and only it (nullability is not listed as a difference)
    (tmp_path / "r.json").unlink()
    pq.write_table(pa.table({"candidate": ["x"], "references": [["x"]], "system": [7]}), d / "c.parquet")
    rc, msg = _bad(tmp_path, "--input", d / "*.parquet", "--group-by", "system")
    assert rc == 1 and msg == f"{d}/c.parquet: schema differs from {d}/a.parquet (system: int64 vs string)"


@pytest.mark.parametrize("id_type,values", [(pa.float64(), [1.0, 2.0]), (pa.float32(), [1.5, 2.5]),
                                             (pa.bool_(), [True, False]), (pa.list_(pa.string()), [["a"], ["b"]])])
@pytest.mark.parametrize("flags", [[], ["--confidence"], ["--sentence-output", "sent"]])
def test_id_column_of_another_type_than_string_or_integer_is_refused(tmp_path, monkeypatch, id_type, values, flags):
    """--id-column names the segment (the weights of the bootstrap, a per-pair row): a float,
    bool or list column is refused before the job, naming the file, the column and its type."""
    monkeypatch.chdir(tmp_path)
    schema = pa.schema([("candidate", pa.string()), ("references", pa.list_(pa.string())), ("seg", id_type)])
    glob = write_shards([{"candidate": "a b", "references": ["a b"], "seg": values[0]},
                         {"candidate": "c d", "references": ["c"], "seg": values[1]}], tmp_path / "in", 1, 10,
                        schema=schema)
    rc, msg = _bad(tmp_path, "--input", glob, "--id-column", "seg", *flags)
    f = tmp_path / "in" / "part-000.parquet"
    assert rc == 1 and msg == (f"{f}: id column 'seg' must be string, large_string, an integer type or "
                               f"dictionary<string>, found {pq.read_schema(f).field('seg').type}")
    assert sorted(os.listdir(tmp_path)) == ["in"]


def test_null_candidate_is_an_error(tmp_path):
    rows = [{"candidate": "a", "references": ["a"], "system": "s", "langpair": "x", "line": 1},
            {"candidate": None, "references": ["a"], "system": "s", "langpair": "x", "line": 2}]
    glob = _small(tmp_path, rows)
    rc, msg = _bad(tmp_path, "--input", glob)
    f = next((tmp_path / "in").glob("*.parquet"))
    assert rc == 1 and msg.startswith(f"{f}: row 1, column 'candidate': candidate is null")


@pytest.mark.parametrize("refs", [[None, None], []])
def test_row_without_references(tmp_path, refs):
    rows = [{"candidate": "a", "references": ["a"], "system": "s", "langpair": "x", "line": 1}] * 3 + \
           [{"candidate": "b", "references": refs, "system": "s", "langpair": "x", "line": 4}]
    glob = _small(tmp_path, rows)
    rc, msg = _bad(tmp_path, "--input", glob)
    f = next((tmp_path / "in").glob("*.parquet"))
    assert rc == 1 and msg == f"{f}: row 3, column 'references': no reference (all references are missing)"


def test_unknown_tokenizer_smoothing_and_option(tmp_path):
    glob = _small(tmp_path)
    rc, _, err = run_cli("--input", glob, "--output", tmp_path / "o.json", "-tok", "13b")
    assert rc == 2 and "invalid choice: '13b'" in err and not (tmp_path / "o.json").exists()
    rc, _, err = run_cli("--input", glob, "--output", tmp_path / "o.json", "-s", "linear")
    assert rc == 2 and "invalid choice: 'linear'" in err
    rc, msg = _bad(tmp_path, "--input", glob, "--no-such-flag")
    assert rc == 2 and msg.startswith("unknown option(s): --no-such-flag")


def test_output_exists(tmp_path):
    glob = _small(tmp_path)
    out = tmp_path / "r.json"
    out.write_text("old")
    rc, _, err = run_cli("--input", glob, "--output", out)
    assert rc == 2 and err.strip() == f"beambleu: error: {out}: --output exists (use --overwrite to replace it)"
    assert out.read_text() == "old"
    rc, _, err = run_cli("--input", glob, "--output", out, "--overwrite")
    assert rc == 0 and json.loads(out.read_text())["corpus"]["n_pairs"] == 2


def test_bundled_shards_match_the_sample_text():
    from ...oracle import REPO, read_lines

    sample = REPO / "examples" / "sample"
    refs = [list(r) for r in zip(read_lines(sample / "ref.A.txt"), read_lines(sample / "ref.B.txt"))]
    for system in ("alpha", "beta"):
        t = pq.read_table(sample / "shards" / f"{system}.parquet").to_pydict()
        assert t["candidate"] == read_lines(sample / f"sys.{system}.txt")
        assert t["references"] == refs and set(t["system"]) == {system}


def test_commit_is_safe_to_retry_and_never_commits_an_unwritten_output(tmp_path):
    """A runner re-runs the final step when its worker dies after committing (with --detach the
    job commits itself): outputs whose staging paths are gone were committed and stay as they
    are; an output the job never wrote (an empty staging file, a directory without manifest) is
    never committed."""
    from beambleu.io import ownership
    from beambleu.io.outputs import OutputConfig, commit, prepare_staging

    cfg = OutputConfig.staged(str(tmp_path / "r.json"), None, str(tmp_path / "sent"), commit_in_job=True)
    prepare_staging(cfg)
    with pytest.raises(RuntimeError, match="the job ended without writing"):
        commit(cfg)
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == []
    (Path(cfg.sentence_tmp) / "part-a.parquet").write_bytes(b"a")
    ownership.write_manifest(cfg.sentence_tmp, ["part-a.parquet"])
    Path(cfg.output_tmp).write_bytes(b'{"a": 1}\n')
    assert commit(cfg) == [cfg.sentence_output, cfg.output]
    assert commit(cfg) == [cfg.sentence_output, cfg.output]  # the retry: nothing moved twice
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "sent"]
    assert (tmp_path / "r.json").read_bytes() == b'{"a": 1}\n'
    assert sorted(p.name for p in (tmp_path / "sent").iterdir()) == [ownership.MANIFEST, "part-a.parquet"]


# ------------------------------------------------------------------------- several metrics


@pytest.fixture(scope="module")
def two_metrics(rows, tmp_path_factory):
    """One run computing BLEU and chrF++ in the same pass, per system and language pair."""
    d = tmp_path_factory.mktemp("two-metrics")
    glob = write_shards(rows, d / "shards", n_shards=3, row_group_size=5000, shuffle_seed=11)
    out = d / "result.json"
    rc, stdout, err = run_cli("--input", glob, "--metrics", "chrf,bleu", "--chrf-word-order", "2",
                              "--group-by", "system,langpair", "--output", out, "--groups-output",
                              d / "groups.parquet", "--progress", "off")
    assert rc == 0, err
    return load(out), pq.read_table(d / "groups.parquet"), stdout


@needs_corpora
def test_bleu_and_chrf_in_one_pass_equal_sacrebleu_per_group(rows, two_metrics, baseline):
    from sacrebleu.metrics.chrf import CHRF

    from ...oracle import to_streams

    doc, table, stdout = two_metrics
    # sacrebleu's order: BLEU, then chrF; the corpus and every group list both, with their signatures
    assert [(d["metric"], d["name"]) for d in doc["corpus"]["scores"]] == [("bleu", "BLEU"), ("chrf", "chrF2++")]
    assert doc["metrics"] == [{k: d[k] for k in ("metric", "name", "signature")} for d in doc["corpus"]["scores"]]
    assert doc["corpus"]["n_pairs"] == len(rows)
    assert (doc["corpus"]["scores"][1]["nc"], doc["corpus"]["scores"][1]["nw"]) == (6, 2)  # counts typed
    # sacrebleu's chrF++ statistics of every segment, extracted once per language pair (a segment's
    # statistics are its own: CHRF.corpus_score sums them and scores the sums, as _aggregate_and_compute
    # does), then the corpus's and each group's scores from them: half of what sacrebleu took when it
    # scored the corpus and then every group
    theirs = CHRF(word_order=2)
    seg = {}
    for langpair in sorted({r["langpair"] for r in rows}):
        idx = [i for i, r in enumerate(rows) if r["langpair"] == langpair]
        stats = theirs._extract_corpus_statistics([rows[i]["candidate"] for i in idx],
                                                  to_streams([rows[i]["references"] for i in idx]))
        seg.update(zip(idx, stats))
    assert doc["corpus"]["scores"][1]["score"] == theirs._aggregate_and_compute([seg[i] for i in range(len(rows))]).score
    by_key = {(g["key"]["system"], g["key"]["langpair"]): g for g in doc["groups"]}
    assert len(by_key) == len({(r["system"], r["langpair"]) for r in rows})
    for key, g in by_key.items():
        idx = [i for i, r in enumerate(rows) if (r["system"], r["langpair"]) == key]
        sel = [rows[i] for i in idx]
        c, rf = [r["candidate"] for r in sel], [r["references"] for r in sel]
        bleu, chrf = g["scores"]
        assert bleu["score"] == sacre_corpus(c, rf)[0].score, key
        assert chrf["score"] == theirs._aggregate_and_compute([seg[i] for i in idx]).score, key
        assert chrf["signature"].startswith(f"nrefs:{len(sel[0]['references'])}|case:mixed|eff:yes|nc:6|nw:2|space:no")
        assert g["n_pairs"] == len(sel)
    # the group table: the keys, n_pairs and nrefs, then every metric's columns prefixed with its id,
    # one row per group
    cols = table.column_names
    assert cols[:8] == ["group_by", "system", "langpair", "n_pairs", "nrefs", "bleu_score", "bleu_bp", "bleu_ratio"]
    assert {"chrf_score", "chrf_signature", "chrf_char1_hyp", "chrf_word2_match"} <= set(cols)
    rows_t = {(r["system"], r["langpair"]): r for r in table.to_pylist()}
    assert {k: (r["bleu_score"], r["chrf_score"]) for k, r in rows_t.items()} == {
        k: (g["scores"][0]["score"], g["scores"][1]["score"]) for k, g in by_key.items()}
    # one layout whatever the metrics: BLEU's JSON paths and group-table columns are those of the
    # BLEU-only run on the same rows (the baseline), and so are their values
    one_doc, d = baseline
    one = {(g["key"]["system"], g["key"]["langpair"]): g for g in one_doc["groups"]
           if g["group_by"] == ["system", "langpair"]}
    assert sorted(one) == sorted(by_key)
    for key, g in by_key.items():
        assert g["scores"][0] == one[key]["scores"][0] and g["n_pairs"] == one[key]["n_pairs"], key
    one_table = pq.read_table(d / "groups.parquet")
    bleu_cols = [c for c in one_table.column_names if c not in ("group_by", "system", "langpair")]
    assert bleu_cols[:2] == ["n_pairs", "nrefs"] and all(c.startswith("bleu_") for c in bleu_cols[2:])
    assert cols[3:3 + len(bleu_cols)] == bleu_cols
    assert all(table.schema.field(c).type == one_table.schema.field(c).type for c in bleu_cols)
    one_rows = {(r["system"], r["langpair"]): r for r in one_table.to_pylist() if r["group_by"] == "system,langpair"}
    assert {k: [r[c] for c in bleu_cols] for k, r in rows_t.items()} == {
        k: [r[c] for c in bleu_cols] for k, r in one_rows.items()}
    # stdout: each metric's corpus line in sacrebleu's text form (saying it pools the groups), then each group's
    lines = stdout.splitlines()
    pooled = f"corpus (all {len(rows):,} pairs, every system/langpair pooled): "
    assert lines[0].startswith(pooled + "BLEU|nrefs:var|") and lines[1].startswith(pooled + "chrF2++|nrefs:var|")


def test_several_metrics_with_bootstrap_and_sentence_output(tmp_path):
    """--confidence gives every metric its interval from the same replicates; per-pair output has
    each metric's statistics and sentence score."""
    from sacrebleu.metrics.chrf import CHRF

    sample = Path(__file__).resolve().parents[3] / "examples" / "sample" / "shards" / "*.parquet"
    out, pairs = tmp_path / "r.json", tmp_path / "pairs"
    rc, _, err = run_cli("--input", sample, "--metrics", "bleu,chrf", "--group-by", "system", "--confidence",
                         "--confidence-n", "200", "--output", out, "--sentence-output", pairs, "--progress", "off")
    assert rc == 0, err
    doc = load(out)
    for part in doc["corpus"]["scores"]:
        assert part["confidence_low"] <= part["score"] <= part["confidence_high"]
        assert "|bs:200|seed:12345|" in part["signature"] and (part["bs"], part["seed"]) == (200, 12345)
    table = pq.read_table(pairs).sort_by([("file", "ascending"), ("row", "ascending")])
    assert {"bleu_sys_len", "bleu_ref_len", "bleu_counts_1", "bleu_totals_4", "bleu_score", "chrf_score",
            "chrf_char1_hyp", "chrf_char6_match"} <= set(table.column_names)
    src = pq.read_table(sorted((Path(__file__).resolve().parents[3] / "examples" / "sample" / "shards")
                               .glob("*.parquet"))[0])
    first = table.slice(0, 1).to_pylist()[0]
    hyp, refs = src.column("candidate")[0].as_py(), src.column("references")[0].as_py()
    assert first["chrf_score"] == CHRF().sentence_score(hyp, refs).score
    assert first["bleu_score"] == sentence_bleu(hyp, refs).score


def test_chrf_alone_and_a_column_named_like_a_statistic(tmp_path):
    """--metrics chrf alone: no BLEU anywhere (no candidate_tokens counter, chrF's name in the report);
    an input column with a per-pair output column's name is bad usage before anything is written."""
    import pyarrow.compute as pc

    sample = Path(__file__).resolve().parents[3] / "examples" / "sample" / "shards" / "*.parquet"
    out = tmp_path / "r.json"
    rc, stdout, err = run_cli("--input", sample, "--metrics", "chrf", "--group-by", "system", "--output", out)
    assert rc == 0, err
    assert stdout.startswith("corpus (all 60 pairs, every system pooled): chrF2|nrefs:2|") and "BLEU" not in stdout
    assert "counters: batches=2, pairs=60, row_groups=2, rows_rejected=0" in err
    doc = load(out)
    assert [(p["metric"], p["name"]) for p in doc["corpus"]["scores"]] == [("chrf", "chrF2")]
    assert [m["metric"] for m in doc["metrics"]] == ["chrf"]
    table = pq.read_table(sorted(Path(sample.parent).glob("*.parquet"))[0])
    clash = tmp_path / "in" / "clash.parquet"
    clash.parent.mkdir()
    pq.write_table(table.append_column("chrf_score", pc.cast(table.column("system"), pa.string())), clash)
    rc, stdout, err = run_cli("--input", clash, "--metrics", "chrf", "--id-column", "chrf_score", "--output",
                              tmp_path / "c.json", "--sentence-output", tmp_path / "pairs")
    assert rc == 2 and stdout == "", err
    assert err.strip().splitlines()[-1] == ("beambleu: error: --sentence-output: column 'chrf_score' of the input has "
                                            "the name of a per-pair statistic or score of chrF2; rename it")
    # a group column of that name would be a column of the group table too: that is said first
    rc, stdout, err = run_cli("--input", clash, "--metrics", "chrf", "--group-by", "chrf_score", "--output",
                              tmp_path / "c.json", "--sentence-output", tmp_path / "pairs")
    assert rc == 2 and stdout == "", err
    assert err.strip().splitlines()[-1] == ("beambleu: error: group table column 'chrf_score' is both a group key and "
                                            "a score field; rename the key column")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "r.json"]


def test_report_shows_every_metric(tmp_path):
    import subprocess
    import sys

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "beambleu", *map(str, args)], capture_output=True, text=True)

    sample = Path(__file__).resolve().parents[3] / "examples" / "sample"
    out = tmp_path / "r.json"
    rc, _, err = run_cli("--input", sample / "shards" / "*.parquet", "--metrics", "bleu,chrf", "--group-by", "system",
                         "--output", out, "--progress", "off")
    assert rc == 0, err
    both = cli("report", out)
    assert both.returncode == 0, both.stderr
    assert "corpus: BLEU 52.2 on 60 pairs" in both.stdout and "corpus: chrF2 72.2 on 60 pairs" in both.stdout
    only = cli("report", out, "--metric", "chrf")  # the id works as well as the name
    assert only.returncode == 0 and "BLEU" not in only.stdout and "alpha    87.3" in only.stdout, only.stdout
    bad = cli("report", out, "--metric", "ter")
    assert bad.returncode == 2 and bad.stderr.strip() == "beambleu: error: --metric ter: this result scores BLEU, chrF2"
    # groups without a corpus entry (as a paired `score` gives) in the several-metric shape
    doc = load(out)
    doc["corpus"] = None
    (tmp_path / "nocorpus.json").write_text(json.dumps(doc))
    proc = cli("report", tmp_path / "nocorpus.json")
    assert proc.returncode == 0 and "system  chrF2" in proc.stdout, proc.stderr
    # `beambleu score -m bleu chrf --paired-bs -f json`
    paired = cli("score", sample / "ref.A.txt", sample / "ref.B.txt", "-i", sample / "sys.alpha.txt",
                 sample / "sys.beta.txt", "-m", "bleu", "chrf", "--paired-bs", "--paired-bs-n", "100")
    assert paired.returncode == 0, paired.stderr
    (tmp_path / "paired.json").write_text(paired.stdout)
    proc = cli("report", tmp_path / "paired.json")
    assert proc.returncode == 0, proc.stderr
    assert sum(line.endswith("] (b)") for line in proc.stdout.splitlines()) == 2  # the baseline, in each table
    assert "signature:" not in proc.stdout  # sacrebleu's paired JSON has none
    assert "[low, high]: bootstrap mean -/+ the 95% half-width" in proc.stdout


@pytest.mark.parametrize("test,n", [("--paired-bs", "200"), ("--paired-ar", "500")])
def test_paired_test_of_every_metric_in_one_pass_equals_score(tmp_path, test, n):
    """--paired-bs (or --paired-ar) per group for BLEU and chrF in the run's single pass gives, with
    --id-column line, the same intervals and p-values as `beambleu score --resampling counter` on the
    text files (same row identities, same weights or swaps)."""
    import subprocess
    import sys

    sample = Path(__file__).resolve().parents[3] / "examples" / "sample"
    out = tmp_path / "r.json"
    rc, _, err = run_cli("--input", sample / "shards" / "*.parquet", "--metrics", "bleu,chrf", "--group-by", "system",
                         test, f"{test}-n", n, "--baseline", "alpha", "--id-column", "line",
                         "--output", out, "--progress", "off", "--resampling", "counter")
    assert rc == 0, err
    doc = load(out)
    groups = {g["key"]["system"]: g for g in doc["groups"]}
    proc = subprocess.run([sys.executable, "-m", "beambleu", "score", sample / "ref.A.txt", sample / "ref.B.txt",
                           "-i", sample / "sys.alpha.txt", sample / "sys.beta.txt", "-m", "bleu", "chrf",
                           test, f"{test}-n", n, "--resampling", "counter"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    base, system = json.loads(proc.stdout)
    for i, name in enumerate(["BLEU", "chrF2"]):
        run_base, run_sys = groups["alpha"]["scores"][i], groups["beta"]["scores"][i]
        assert run_base["p_value"] is None and 0 < run_sys["p_value"] < 0.05, name
        assert run_base["score"] == base[name]["score"] and run_sys["score"] == system[name]["score"], name
        assert run_sys["p_value"] == system[name]["p_value"], name
        if test == "--paired-bs":
            for key, theirs in (("confidence_mean", "mean"), ("confidence_half_width", "ci")):
                assert run_base[key] == base[name][theirs] and run_sys[key] == system[name][theirs], (name, key)
        else:  # sacrebleu's AR gives no interval, and its signature says ar:N
            assert base[name]["mean"] is None and "confidence_low" not in run_sys
            assert f"|ar:{n}|seed:12345|" in run_sys["signature"] and "|bs:" not in run_sys["signature"]
    if test == "--paired-ar":
        assert doc["bootstrap"]["method"] == "approximate-randomization" and doc["bootstrap"]["n"] == int(n)


@needs_corpora
def test_ter_with_bleu_and_chrf_per_group_equals_sacrebleu(tmp_path):
    """--metrics bleu,chrf,ter in one pass over shuffled shards: every group's TER is sacrebleu's, with 1, 2
    and 3 references (with 3, run divides by the exact sum of average lengths, which sacrebleu's float sum
    approaches within rounding, and its JSON says so), and the group table has TER's columns from the totals."""
    from sacrebleu.metrics.ter import TER

    from ...oracle import to_streams

    rows = [dict(r, langpair=r["langpair"] + ":2") for r in corpus_rows(["wmt22/en-liv", "wmt22/de-en"])[::13]]
    rows += [dict(r, references=r["references"][:1], langpair=r["langpair"] + ":1") for r in rows[::2]]
    rows += [dict(r, langpair=r["langpair"] + ":3") for r in corpus_rows(["wmt21/en-de"], nrefs_max=3)[::19]]
    glob = write_shards(rows, tmp_path / "shards", n_shards=3, row_group_size=500, shuffle_seed=5)
    rc, _, err = run_cli("--input", glob, "--metrics", "bleu,chrf,ter", "--group-by", "system,langpair",
                         "--output", tmp_path / "r.json", "--groups-output", tmp_path / "g.parquet", "--progress", "off")
    assert rc == 0, err
    doc, table = load(tmp_path / "r.json"), pq.read_table(tmp_path / "g.parquet").to_pylist()
    assert {len(r["references"]) for r in rows} == {1, 2, 3}
    groups = {(g["key"]["system"], g["key"]["langpair"]): g for g in doc["groups"]}
    assert len(groups) == len({(r["system"], r["langpair"]) for r in rows})
    by_row = {(r["system"], r["langpair"]): r for r in table}
    for key, g in groups.items():
        sel = [r for r in rows if (r["system"], r["langpair"]) == key]
        theirs = TER().corpus_score([r["candidate"] for r in sel], to_streams([r["references"] for r in sel]))
        ter = g["scores"][2]
        assert ter["name"] == "TER" and ter["ref_length_sum"] == "exact" and ter["num_edits"] == theirs.num_edits
        if key[1].endswith(":3"):
            assert abs(ter["score"] - theirs.score) <= 1e-12 * theirs.score, key
        else:
            assert ter["score"] == theirs.score and ter["ref_length"] == theirs.ref_length, key
        t = by_row[key]
        assert t["ter_score"] == ter["score"] and t["ter_edits"] == theirs.num_edits
        assert t["ter_edits"] == t["ter_insertions"] + t["ter_deletions"] + t["ter_substitutions"] + t["ter_shifts"]


def test_long_table_rows_share_their_references(tmp_path, monkeypatch):
    """A long table whose batches repeat each segment's references (every system's row of a segment
    carries them): the rows are scored with each distinct list prepared once (batch_stats_shared; the
    batches here are ones it shares, checked), and every system's BLEU and chrF are sacrebleu's,
    segment-major and system-major alike."""
    from sacrebleu.metrics.chrf import CHRF

    from beambleu.beam import count
    from bleu_core.kernels.arrow import reference_groups, to_arrow

    from ...oracle import to_streams

    segments = [("The cat sat on the mat.", ["A cat sat on the mat.", "The cat was on the mat."]),
                ("It costs 3.5 dollars, not 1,000.", ["It is 3.5 dollars, not 1,000.", None]),
                ("Der Hund bellt -- laut!", ["The dog barks loudly!", "The dog is barking loud."]),
                ("", ["Nothing here.", "Empty."])]
    systems = {"a": lambda s: s, "b": lambda s: s.lower(), "c": lambda s: " ".join(reversed(s.split()))}
    shared = []
    real = count.batch_stats_shared

    def spy(metric, candidates, references, per_row=True):
        shared.append(reference_groups(*to_arrow(candidates, references)) is not None)
        return real(metric, candidates, references, per_row=per_row)

    monkeypatch.setattr(count, "batch_stats_shared", spy)
    for order in ("segment", "system"):
        rows = [{"candidate": f(hyp), "references": refs, "system": name, "langpair": "x-y", "line": i + 1}
                for i, (hyp, refs) in enumerate(segments * 3) for name, f in systems.items()]
        if order == "system":
            rows.sort(key=lambda r: r["system"])
        glob = write_shards(rows, tmp_path / order, n_shards=1, row_group_size=len(rows))
        shared.clear()
        rc, _, err = run_cli("--input", glob, "--metrics", "bleu,chrf", "--group-by", "system",
                             "--output", tmp_path / f"{order}.json", "--progress", "off")
        assert rc == 0, err
        assert shared == [True], order
        groups = {g["key"]["system"]: g["scores"] for g in load(tmp_path / f"{order}.json")["groups"]}
        for name in systems:
            sel = [r for r in rows if r["system"] == name]
            c, rf = [r["candidate"] for r in sel], [r["references"] for r in sel]
            assert groups[name][0]["score"] == sacre_corpus(c, rf)[0].score, (order, name)
            assert groups[name][1]["score"] == CHRF().corpus_score(c, to_streams(rf)).score, (order, name)

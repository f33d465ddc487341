"""`beambleu run` on JSON Lines, CSV and TSV (plain and gzip): the same result document as the
Parquet original, sacrebleu's scores, the rows numbered as for Parquet; bad input in each format is
one line naming file, row (0-based among the data rows, as for Parquet; the text formats add the
1-based line) and column, exit 1, nothing written."""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

pytest.importorskip("apache_beam")

from beambleu.groups.document import score_parts  # noqa: E402

from ...pipeline_helpers import load, run_cli  # noqa: E402
from .copies import pairs, sacrebleu_bleu, without_inputs, write_csv, write_jsonl, write_parquet  # noqa: E402

CSV_REFS = ["--reference-columns", "ref_a,ref_b"]


def run_ok(tmp_path, *args, name="r.json"):
    out = tmp_path / name
    rc, _, err = run_cli(*args, "--group-by", "system", "--output", out, "--progress", "off")
    assert rc == 0, err
    return load(out)


def run_bad(tmp_path, *args):
    """The one error line of a run that must fail with exit 1, having written nothing."""
    out = tmp_path / "out" / "r.json"
    out.parent.mkdir(exist_ok=True)
    rc, stdout, err = run_cli(*args, "--output", out, "--progress", "off")
    lines = [line for line in err.splitlines() if line.startswith("beambleu:")]
    assert rc == 1, err
    assert len(lines) == 1 and "Traceback" not in err, err
    assert os.listdir(out.parent) == [], "nothing written, not even a staging file"
    return lines[0][len("beambleu: error: "):]


@pytest.fixture(scope="module")
def original(tmp_path_factory):
    d = tmp_path_factory.mktemp("original")
    rows = pairs()
    return rows, run_ok(d, "--input", write_parquet(rows, d / "pairs.parquet")), d


def test_the_original_scores_as_sacrebleu(original):
    rows, doc, _ = original
    assert score_parts(doc["corpus"])[0]["score"] == sacrebleu_bleu(rows)
    got = {g["key"]["system"]: score_parts(g)[0]["score"] for g in doc["groups"]}
    assert got == {s: sacrebleu_bleu([r for r in rows if r["system"] == s]) for s in ("alpha", "beta")}
    assert doc["inputs"]["formats"] == ["parquet"] and doc["inputs"]["rows"] == 60


@pytest.mark.parametrize("layout", ["jsonl", "ndjson.gz", "json-as-flag", "csv", "csv.gz", "tsv"])
def test_text_copies_give_the_original_document(original, tmp_path, layout):
    rows, doc, _ = original
    extra = []
    if layout == "jsonl":
        path = write_jsonl(rows, tmp_path / "pairs.jsonl")
    elif layout == "ndjson.gz":
        path = write_jsonl(rows, tmp_path / "pairs.ndjson.gz", compress=True)
    elif layout == "json-as-flag":  # a name that says nothing: --input-format
        path = write_jsonl(rows, tmp_path / "pairs.txt")
        extra = ["--input-format", "jsonl"]
    elif layout == "tsv":
        path = write_csv(rows, tmp_path / "pairs.tsv", delimiter="\t")
        extra = CSV_REFS
    else:
        path = write_csv(rows, tmp_path / "pairs.csv", compress=layout.endswith(".gz"))
        extra = CSV_REFS
    got = run_ok(tmp_path, "--input", path, *extra)
    assert without_inputs(got) == without_inputs(doc)
    fmt = "csv" if layout.startswith("csv") else "tsv" if layout == "tsv" else "jsonl"
    assert got["inputs"]["formats"] == [fmt] and got["inputs"]["files"] == [str(path)]
    assert got["inputs"]["rows"] == 60  # a small file: read to its end while planning, counted


def test_csv_with_one_references_column_and_quoted_newlines(tmp_path):
    """CSV: a `references` column holds one reference (empty: missing); quoted values may span
    lines; an empty candidate is the empty string, not null."""
    path = tmp_path / "p.csv"
    path.write_text('candidate,references\n"a b\nc d",a b c d\n,x y\n"the, cat","the, cat"\n', encoding="utf-8")
    rc, _, err = run_cli("--input", path, "--output", tmp_path / "r.json", "--progress", "off")
    assert rc == 0, err
    doc = load(tmp_path / "r.json")
    from sacrebleu.metrics import BLEU

    want = BLEU().corpus_score(["a b\nc d", "", "the, cat"], [["a b c d", "x y", "the, cat"]]).score
    assert score_parts(doc["corpus"])[0]["score"] == want and doc["corpus"]["n_pairs"] == 3


def test_jsonl_typed_group_keys_and_one_reference_strings(tmp_path):
    """JSON Lines: an integer group column is grouped as integers (as in Parquet), blank lines are
    no rows; a file whose `references` are strings holds one reference per row."""
    path = tmp_path / "p.jsonl"
    path.write_text('{"candidate": "a b c", "references": ["a b c"], "doc": 2}\n\n'
                    '{"candidate": "a b", "references": ["a c", null], "doc": 10, "extra": {"x": [1]}}\n'
                    '   \n{"candidate": "x", "references": ["x"], "doc": 2}\n', encoding="utf-8")
    rc, _, err = run_cli("--input", path, "--group-by", "doc", "--output", tmp_path / "r.json", "--progress", "off",
                         "--sentence-output", tmp_path / "sent", "--id-column", "doc")
    assert rc == 0, err
    doc = load(tmp_path / "r.json")
    assert [(g["key"]["doc"], g["n_pairs"]) for g in doc["groups"]] == [(2, 2), (10, 1)]  # integers, in order
    from sacrebleu.metrics import BLEU

    assert score_parts(doc["groups"][0])[0]["score"] == BLEU().corpus_score(["a b c", "x"], [["a b c", "x"]]).score
    sent = pa.concat_tables([pq.read_table(p) for p in sorted((tmp_path / "sent").glob("*.parquet"))]).sort_by("row")
    assert sent.column("row").to_pylist() == [0, 1, 2]  # the data rows, blank lines not counted
    assert sent.column("doc").to_pylist() == [2, 10, 2]
    one = tmp_path / "one.jsonl"
    one.write_text('{"candidate": "a b c", "references": "a b c"}\n{"candidate": "a b", "references": "a c"}\n'
                   '{"candidate": "x", "references": null}\n', encoding="utf-8")
    assert run_bad(tmp_path, "--input", one) == \
        f"{one}: row 2, column 'references': no reference (all references are missing)"
    one.write_text('{"candidate": "a b c", "references": "a b c"}\n{"candidate": "a b", "references": "a c"}\n')
    rc, _, err = run_cli("--input", one, "--output", tmp_path / "one.json", "--progress", "off")
    assert rc == 0, err
    assert score_parts(load(tmp_path / "one.json")["corpus"])[0]["score"] == \
        BLEU().corpus_score(["a b c", "a b"], [["a b c", "a c"]]).score


def test_rows_of_a_large_file_are_estimated_while_planning(tmp_path):
    """A text file longer than planning reads: `rows` is null in the document, `rows_estimate`
    near the truth; the pairs scored are all of them."""
    rows = [{"candidate": f"segment {i} of the corpus", "references": [f"segment {i} of a corpus"], "system": "s"}
            for i in range(30_000)]
    path = write_jsonl(rows, tmp_path / "big.jsonl")
    assert path.stat().st_size > 1.5 * (1 << 20)
    doc = run_ok(tmp_path, "--input", path)
    assert doc["inputs"]["rows"] is None and 0.9 * 30_000 < doc["inputs"]["rows_estimate"] < 1.1 * 30_000
    assert doc["corpus"]["n_pairs"] == 30_000


def test_a_directory_of_mixed_formats(original, tmp_path):
    rows, doc, _ = original
    write_parquet(rows[:20], tmp_path / "in" / "a.parquet")
    write_jsonl(rows[20:45], tmp_path / "in" / "b.jsonl")
    write_jsonl(rows[45:], tmp_path / "in" / "c.jsonl.gz", compress=True)
    (tmp_path / "in" / "empty.jsonl").write_bytes(b"")  # an empty shard (Spark writes them): no rows, no columns
    got = run_ok(tmp_path, "--input", tmp_path / "in")
    assert without_inputs(got) == without_inputs(doc)
    assert got["inputs"]["formats"] == ["jsonl", "parquet"] and got["inputs"]["n_files"] == 4


# ------------------------------------------------------------------------------------------ bad input


def _jsonl(tmp_path, lines, name="bad.jsonl"):
    path = tmp_path / name
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


GOOD = b'{"candidate": "a b", "references": ["a b"], "system": "s"}'


@pytest.mark.parametrize("bad,where", [
    (b'{"candidate": "a b", "references": ["a b"]', "row 1 (line 3): invalid JSON: Expecting ',' delimiter "
                                                    "(character 43)"),
    (b'{"candidate": 7, "references": ["a b"]}', "row 1 (line 3), column 'candidate': expected a string, found "
                                                 "an integer"),
    (b'{"candidate": "a", "references": "a", "references": ["b"]}', "row 1 (line 3), column 'references': "
                                                                     "appears twice in the object"),
    (b'{"candidate": "a", "references": [["a"]]}', "row 1 (line 3), column 'references': expected an array of "
                                                   "strings (or null), found an array"),
    (b'{"candidate": "caf\xc3 au lait", "references": ["a"]}', "row 1 (line 3), column 'candidate': invalid UTF-8 "
                                                              "(byte 0xc3)"),
    (b'{"candidate": "a", "references": ["\\ud800"]}', "row 1 (line 3), column 'references': a string holds a lone "
                                                      "surrogate (a \\ud800-\\udfff escape), which is not text"),
    (b'["a", ["a"]]', "row 1 (line 3): not a JSON object but an array"),
    (b'{"candidate": "a", "references": ["a"]} {"candidate": "b"}', "row 1 (line 3): invalid JSON: Extra data "
                                                                    "(character 41)"),
])
@pytest.mark.parametrize("where_in_file", ["start", "past the planned block"])
def test_bad_jsonl_row(tmp_path, bad, where, where_in_file):
    """The same line at the start (found while planning) or past the first MiB (found by a worker)."""
    head = [GOOD, b""]  # a blank line: the rows and the lines part ways
    if where_in_file == "start":
        path = _jsonl(tmp_path, head + [bad, GOOD])
    else:
        n = 20_000  # about 1.2 MB of good rows first
        path = _jsonl(tmp_path, head + [GOOD] * n + [bad, GOOD])
        row, line = 1 + n, 3 + n
        where = where.replace("row 1 (line 3)", f"row {row} (line {line})")
    assert run_bad(tmp_path, "--input", path) == f"{path}: {where}"


def test_jsonl_nulls_and_types_found_while_planning(tmp_path):
    path = _jsonl(tmp_path, [GOOD, b'{"candidate": null, "references": ["a"], "system": "s"}'])
    assert run_bad(tmp_path, "--input", path) == \
        f"{path}: row 1, column 'candidate': candidate is null (--null-candidate=empty scores it as the empty string)"
    path = _jsonl(tmp_path, [GOOD, b'{"candidate": "b", "system": "s"}'], "noref.jsonl")
    assert run_bad(tmp_path, "--input", path) == f"{path}: row 1, column 'references': the reference list is null"
    path = _jsonl(tmp_path, [GOOD, b'{"candidate": "b", "references": [null], "system": "s"}'], "nullref.jsonl")
    assert run_bad(tmp_path, "--input", path) == \
        f"{path}: row 1, column 'references': no reference (all references are missing)"
    path = _jsonl(tmp_path, [b'{"candidate": "b", "references": ["b"], "system": 1.5}'], "float.jsonl")
    assert run_bad(tmp_path, "--input", path, "--group-by", "system") == \
        f"{path}: group column 'system' must be string, large_string, an integer type or dictionary<string>, " \
        "found double"
    path = _jsonl(tmp_path, [b'{"candidate": "b", "references": ["b"]}'], "nosystem.jsonl")
    assert run_bad(tmp_path, "--input", path, "--group-by", "system") == \
        f"{path}: column 'system' not found (columns: candidate, references)"


def test_jsonl_group_key_type_is_the_first_rows(tmp_path):
    """An integer group column that turns to text past the planned block: the row that does."""
    lines = [b'{"candidate": "a", "references": ["a"], "doc": %d}' % i for i in range(20_000)]
    path = _jsonl(tmp_path, lines + [b'{"candidate": "a", "references": ["a"], "doc": "x"}'])
    assert run_bad(tmp_path, "--input", path, "--group-by", "doc") == \
        f"{path}: row 20000 (line 20001), column 'doc': expected an integer, found a string"


def _csv(tmp_path, lines, name="bad.csv"):
    path = tmp_path / name
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


@pytest.mark.parametrize("where_in_file", ["start", "past the planned block"])
def test_bad_csv_rows(tmp_path, where_in_file):
    good = [b"a b,a b,s"] * (0 if where_in_file == "start" else 40_000)
    header = [b"candidate,references,system", b'"two\nlines",x,s']  # row 0 spans lines 2-3
    skip = len(good)
    path = _csv(tmp_path, header + good + [b"a b,a b"])
    assert run_bad(tmp_path, "--input", path) == f"{path}: row {1 + skip} (line {4 + skip}): 2 fields, the header has 3"
    path = _csv(tmp_path, header + good + [b"a b,a b,s", b"a \xff,a b,s"], "utf8.csv")
    assert run_bad(tmp_path, "--input", path) == f"{path}: row {2 + skip}, column 'candidate': invalid UTF-8"
    path = _csv(tmp_path, header + good + [b"a b,,s"], "noref.csv")
    assert run_bad(tmp_path, "--input", path) == \
        f"{path}: row {1 + skip}, column 'references': no reference (all references are missing)"


def test_bad_tsv_and_csv_header(tmp_path):
    path = tmp_path / "bad.tsv"
    path.write_bytes(b'candidate\tref\n"quoted\ttext"\tref\n')  # no quoting in TSV: three fields
    assert run_bad(tmp_path, "--input", path, "--reference-columns", "ref") == \
        f"{path}: row 0 (line 2): 3 fields, the header has 2"
    path = _csv(tmp_path, [b"candidate,ref,ref", b"a,b,c"], "twice.csv")
    assert run_bad(tmp_path, "--input", path, "--reference-columns", "ref") == \
        f"{path}: column 'ref' appears 2 times in the header"
    path = _csv(tmp_path, [b"candidate,refs", b"a,b"], "missing.csv")
    assert run_bad(tmp_path, "--input", path) == f"{path}: column 'references' not found (columns: candidate, refs)"


def test_truncated_gzip(tmp_path):
    """Found by a worker (a file of more compressed bytes than planning reads: its first block) or
    while planning (a shorter one)."""
    import random

    rng = random.Random(7)  # text that compresses poorly: some 1.5 MB of gzip
    rows = [{"candidate": " ".join(f"{rng.getrandbits(32):08x}" for _ in range(12)), "references": ["a b"]}
            for _ in range(25_000)]
    path = write_jsonl(rows, tmp_path / "big.jsonl.gz", compress=True)
    data = path.read_bytes()
    assert len(data) > 1.3 * (1 << 20)
    path.write_bytes(data[:len(data) * 9 // 10])
    assert run_bad(tmp_path, "--input", path) == f"{path}: unreadable after 0 rows (Truncated compressed stream)"
    write_csv(pairs() * 1000, tmp_path / "big.csv", compress=True)
    path = tmp_path / "big.csv.gz"
    data = path.read_bytes()
    path.write_bytes(data[:len(data) - 100])
    assert run_bad(tmp_path, "--input", path, *CSV_REFS) == f"{path}: unreadable (Truncated compressed stream)"

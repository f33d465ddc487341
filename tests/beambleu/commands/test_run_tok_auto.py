"""``beambleu run -tok auto``: each row's BLEU tokenizer from the target language of its language pair
(``--langpair-column``), as sacrebleu's ``-l`` chooses it, in one pass. Grouped by the language pair,
each group is sacrebleu's ``-l SRC-TRG`` score and signature; a group of several tokenizers (the
corpus) says ``tok:mixed(...)``. Expected values: sacrebleu 2.6.0 (its command line on the shared
corpora, its Python API on the small tables written here)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("apache_beam")

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from sacrebleu.metrics import BLEU, CHRF  # noqa: E402

from ...oracle import has_mecab, read_lines  # noqa: E402
from ...pipeline_helpers import bleu_of, load, run_cli  # noqa: E402

LINES = 300
PAIRS = ("en-de", "en-zh", "en-ja")
SYSTEM = "JDExploreAcademy"  # a system of all three pairs of WMT22

needs_ja = pytest.mark.skipif(not has_mecab("ja-mecab"), reason="the ja extra (MeCab) is not installed")


def _group(doc, **key):
    found = [g for g in doc["groups"] if g["key"] == key]
    assert len(found) == 1, (key, [g["key"] for g in doc["groups"]])
    return found[0]


def _score(g, metric):
    return next(s for s in g["scores"] if s["metric"] == metric)


def _fields(signature: str) -> dict:
    return dict(part.split(":", 1) for part in signature.split("|"))


# -- the shared corpora: one run against sacrebleu's command line per language pair -------------

@needs_ja
def test_wmt22_three_pairs_in_one_pass_equal_sacrebleu_cli_with_l(tmp_path, corpora):
    rows, files = [], {}
    for lp in PAIRS:
        folder = corpora / "wmt22" / lp
        hyps = read_lines(folder / f"sys.{SYSTEM}.txt")[:LINES]
        refs = read_lines(folder / "ref.A.txt")[:LINES]
        rows += [{"candidate": h, "references": [r], "langpair": lp} for h, r in zip(hyps, refs)]
        (tmp_path / f"{lp}.hyp").write_text("".join(h + "\n" for h in hyps), encoding="utf-8")
        (tmp_path / f"{lp}.ref").write_text("".join(r + "\n" for r in refs), encoding="utf-8")
        files[lp] = (tmp_path / f"{lp}.hyp", tmp_path / f"{lp}.ref")
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "in.parquet", row_group_size=400)  # batches mix pairs
    out = tmp_path / "r.json"
    rc, _, err = run_cli("--input", tmp_path / "in.parquet", "-tok", "auto", "--group-by", "langpair",
                         "--output", out, "--progress", "off", "--batch-size", "250")
    assert rc == 0, err
    doc = load(out)
    expected_tok = {"en-de": "13a", "en-zh": "zh", "en-ja": "ja-mecab-0.996-IPA"}
    sums = None
    for lp in PAIRS:
        hyp, ref = files[lp]
        proc = subprocess.run([sys.executable, "-m", "sacrebleu", str(ref), "-i", str(hyp), "-l", lp, "-m", "bleu",
                               "-w", "10", "--format", "json"], capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        want = json.loads(proc.stdout)
        got = bleu_of(_group(doc, langpair=lp))
        assert round(got["score"], 10) == want["score"], lp
        ours, theirs = _fields(got["signature"]), _fields(want["signature"])
        assert ours["tok"] == theirs["tok"] == expected_tok[lp]
        assert {k: v for k, v in ours.items() if k != "version"} == {k: v for k, v in theirs.items() if k != "version"}
        # the corpus is the sum of each pair's statistics, by sacrebleu's own extraction
        sacre = BLEU(trg_lang=lp.split("-")[1]).corpus_score(read_lines(hyp), [read_lines(ref)])
        stats = [sacre.sys_len, sacre.ref_len, *sacre.counts, *sacre.totals]
        sums = stats if sums is None else [a + b for a, b in zip(sums, stats)]
    corpus = bleu_of(doc["corpus"])
    assert _fields(corpus["signature"])["tok"] == "mixed(13a+zh+ja-mecab-0.996-IPA)"
    want = BLEU.compute_bleu(correct=sums[2:6], total=sums[6:10], sys_len=sums[0], ref_len=sums[1],
                             smooth_method="exp")
    assert corpus["score"] == want.score
    assert [corpus["sys_len"], corpus["ref_len"], *corpus["counts"], *corpus["totals"]] == sums


# -- a small table written here: runs without the corpora --------------------------------------

ROWS = [  # (langpair, system A's candidate, system B's candidate, reference)
    ("en-de", "The cat sat on the mat.", "A cat is on the mat.", "The cat sat on a mat."),
    ("en-zh", "我喜欢我的猫。", "我爱我的猫。", "我很爱我的猫。"),
    ("en-ja", "私は猫が好きです。", "猫が好き。", "私は猫が大好きです。"),
    ("en-de", "It rains today.", "Today it is raining.", "It is raining today."),
    ("de-zh", "今天下雨了。", "今天在下雨。", "今天正在下雨。"),
    ("en-ja", "今日は雨です。", "雨が降っています。", "今日は雨が降っています。"),
    ("fr-ko", "오늘은 비가 온다.", "비가 온다.", "오늘은 비가 내린다."),
]

#: sacrebleu's -l rule, written out: the target language's tokenizer
TOKENIZER = {"de": "13a", "zh": "zh", "ja": "ja-mecab", "ko": "ko-mecab"}


def _table(path, rows=ROWS, wide=False):
    if wide:
        data = {"langpair": [r[0] for r in rows], "A": [r[1] for r in rows], "B": [r[2] for r in rows],
                "references": [[r[3]] for r in rows]}
    else:
        data = {"langpair": [r[0] for r in rows for _ in (0, 1)], "system": ["A", "B"] * len(rows),
                "candidate": [c for r in rows for c in (r[1], r[2])],
                "references": [[r[3]] for r in rows for _ in (0, 1)]}
    pq.write_table(pa.table(data), path)
    return path


def _usable_rows():
    return [r for r in ROWS if has_mecab(TOKENIZER[r[0].split("-")[1]])]


def _sacre(rows, lp, column):
    """sacrebleu's BLEU as ``-l lp`` makes it (its signature's tok) and chrF of one system's rows of ``lp``."""
    hyps = [r[column] for r in rows if r[0] == lp]
    refs = [[r[3] for r in rows if r[0] == lp]]
    bleu = BLEU(trg_lang=lp.split("-")[1])
    score = bleu.corpus_score(hyps, refs)
    return score, _fields(bleu.get_signature().format())["tok"], CHRF().corpus_score(hyps, refs)


@pytest.mark.parametrize("wide", [False, True])
def test_each_language_pair_and_system_is_sacrebleus_l_score(tmp_path, wide):
    rows = _usable_rows()
    table = _table(tmp_path / "in.parquet", rows, wide)
    out, pairs = tmp_path / "r.json", tmp_path / "pairs"
    layout = ["--candidate-columns", "A,B"] if wide else []
    rc, _, err = run_cli("--input", table, *layout, "-tok", "auto", "-m", "bleu", "chrf", "--group-by",
                         "langpair,system" if not wide else "langpair", "--output", out,
                         "--sentence-output", pairs, "--progress", "off", "--batch-size", "3")
    assert rc == 0, err
    assert "-tok auto chooses BLEU's tokenizer only; chrF2 is computed as without it" in err
    doc = load(out)
    for lp in dict.fromkeys(r[0] for r in rows):
        for system, column in (("A", 1), ("B", 2)):
            bleu, tok, chrf = _sacre(rows, lp, column)
            g = _group(doc, langpair=lp, system=system)
            assert _score(g, "bleu")["score"] == bleu.score, (lp, system)
            assert _fields(_score(g, "bleu")["signature"])["tok"] == tok
            assert tok.startswith(TOKENIZER[lp.split("-")[1]])  # the rule, written out
            assert _score(g, "chrf")["score"] == chrf.score  # chrF has no tokenizer to choose
    # per pair: sacrebleu's sentence BLEU with the row's tokenizer
    table = pq.read_table(pairs).to_pylist()
    for r in table:
        row = rows[r["row"] // (1 if wide else 2)]
        cand = row[1] if r["system"] == "A" else row[2]
        want = BLEU(trg_lang=row[0].split("-")[1], effective_order=True).sentence_score(cand, [row[3]]).score
        assert r["bleu_score"] == want
    assert "bleu_pairs_tok_13a" not in table[0]  # the tokenizer counts stay inside the statistics


def test_a_group_of_several_tokenizers_says_so(tmp_path):
    rows = [r for r in ROWS if r[0] in ("en-de", "en-zh")]
    rc, _, err = run_cli("--input", _table(tmp_path / "in.parquet", rows), "-tok", "auto", "--group-by", "system",
                         "--output", tmp_path / "r.json", "--progress", "off")
    assert rc == 0, err
    doc = load(tmp_path / "r.json")
    for g in [doc["corpus"], *doc["groups"]]:
        assert _fields(bleu_of(g)["signature"])["tok"] == "mixed(13a+zh)"
        assert bleu_of(g)["tok"] == "mixed(13a+zh)"  # the JSON's signature fields too
    assert doc["metrics"][0]["signature"] == bleu_of(doc["corpus"])["signature"]


def test_without_auto_nothing_changes(tmp_path):
    table = _table(tmp_path / "in.parquet", [r for r in ROWS if r[0] in ("en-de", "en-zh")])
    rc, _, err = run_cli("--input", table, "--group-by", "langpair", "--output", tmp_path / "r.json",
                         "--progress", "off")
    assert rc == 0, err
    g = _group(load(tmp_path / "r.json"), langpair="en-zh")
    hyps = [r[c] for r in ROWS if r[0] == "en-zh" for c in (1, 2)]
    refs = [[r[3] for r in ROWS if r[0] == "en-zh" for _ in (1, 2)]]
    assert bleu_of(g)["score"] == BLEU().corpus_score(hyps, refs).score  # 13a, as sacrebleu without -l
    assert _fields(bleu_of(g)["signature"])["tok"] == "13a"


@pytest.mark.parametrize("value, reason", [
    (None, "the language pair is null"),
    ("enzh", "'enzh' is not a language pair SRC-TRG (e.g. en-de)"),
])
def test_a_bad_language_pair_is_one_line_naming_file_row_and_column(tmp_path, value, reason):
    rows = [r for r in ROWS if r[0] in ("en-de", "en-zh")]
    path = tmp_path / "in.parquet"
    data = pq.read_table(_table(path, rows)).to_pydict()
    data["langpair"][5] = value
    pq.write_table(pa.table(data), path)
    out = tmp_path / "r.json"
    rc, stdout, err = run_cli("--input", path, "-tok", "auto", "--output", out, "--progress", "off")
    assert rc == 1
    lines = [line for line in err.splitlines() if line.startswith("beambleu: error")]
    assert lines == [f"beambleu: error: {path}: row 5, column 'langpair': {reason}"], err
    assert "Traceback" not in err and not out.exists()


def test_a_bad_row_in_one_tokenizers_part_names_its_row_in_the_input(tmp_path):
    rows = [r for r in ROWS if r[0] in ("en-de", "en-zh")]
    path = tmp_path / "in.parquet"
    data = pq.read_table(_table(path, rows)).to_pydict()
    # rows 0, 1, 4, 5 are en-de's (13a), rows 2, 3 en-zh's (zh): the batch is counted in two parts, and
    # the error is the first row's of the whole batch, named by its row in the input
    data["references"][3] = [None]
    data["references"][5] = [None]
    pq.write_table(pa.table(data), path)
    rc, _, err = run_cli("--input", path, "-tok", "auto", "--group-by", "langpair", "--output", tmp_path / "r.json",
                         "--progress", "off")
    assert rc == 1
    assert f"{path}: row 3, column 'references': " in err, err
    assert "no reference" in err


def test_the_language_pair_column_must_be_there_and_text(tmp_path):
    path = _table(tmp_path / "in.parquet", ROWS[:2])
    rc, _, err = run_cli("--input", path, "-tok", "auto", "--langpair-column", "lp", "--output", tmp_path / "r.json",
                         "--progress", "off")
    assert rc == 1 and f"{path}: column 'lp' not found" in err
    data = pq.read_table(path).to_pydict()
    data["lp"] = [1] * len(data["candidate"])
    pq.write_table(pa.table(data), path)
    rc, _, err = run_cli("--input", path, "-tok", "auto", "--langpair-column", "lp", "--output", tmp_path / "r.json",
                         "--progress", "off")
    assert rc == 1 and "language pair column 'lp' must be string" in err


def test_auto_and_a_sentencepiece_model_is_bad_usage(tmp_path):
    rc, _, err = run_cli("--input", _table(tmp_path / "in.parquet", ROWS[:2]), "-tok", "auto", "--spm-model",
                         tmp_path / "m.model", "--progress", "off")
    assert rc == 2 and "-tok auto chooses among 13a, zh, ja-mecab, ko-mecab" in err


@pytest.mark.parametrize("langpair", ["en-zh", "en-ja", "en-ko", "de-en", "zh-en", "en-zh-TW", "en-", "x-ja-y"])
def test_the_rule_is_sacrebleus_l(langpair):
    from beambleu.beam.autotok import AUTO_TOKENIZERS, langpair_problem, target_tokenizer, tokenizer_codes

    trg = langpair.split("-")[1]  # sacrebleu's CLI: args.bleu_trg_lang = args.langpair.split('-')[1]
    if not has_mecab(TOKENIZER.get(trg, "13a")):
        pytest.skip("MeCab extra missing")
    assert langpair_problem(langpair) is None
    bleu = BLEU(trg_lang=trg)
    bleu.corpus_score(["a"], [["a"]])  # (sacrebleu's signature needs a score first)
    theirs = _fields(bleu.get_signature().format())["tok"]
    assert theirs.startswith(target_tokenizer(langpair))
    codes, problem = tokenizer_codes(pa.array([langpair, "en-de", langpair]))
    assert problem is None and [AUTO_TOKENIZERS[c] for c in codes] == [target_tokenizer(langpair), "13a",
                                                                       target_tokenizer(langpair)]

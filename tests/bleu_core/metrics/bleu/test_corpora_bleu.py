"""Real WMT/FLORES/Kyoto data from ../shared/corpora (skipped cleanly when absent).

Expected values come from sacrebleu 2.6.0: the corpus's own table of values computed with it
(``sacrebleu-2.6.0-computed.tsv``), sacrebleu run live in this test, and the published tables
(``published-bleu.tsv``) to their printed precision.
"""

import csv
from functools import lru_cache

import pytest

from bleu_core import Bleu, corpus_bleu

from ....oracle import CORPORA, has_mecab, read_lines, sacre_corpus

pytestmark = pytest.mark.corpora


def _rows(name):
    path = CORPORA / name
    if not path.exists():
        return []
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))


COMPUTED = _rows("sacrebleu-2.6.0-computed.tsv")
PUBLISHED = _rows("published-bleu.tsv")


@lru_cache(maxsize=None)
def load(folder, system, refs):
    d = CORPORA / folder
    hyps = read_lines(d / f"sys.{system}.txt")
    streams = [read_lines(d / f"ref.{r}.txt") for r in refs.split("+")]
    assert all(len(s) == len(hyps) for s in streams)
    return hyps, [list(r) for r in zip(*streams)]


def _skip_unavailable(tokenize):
    if tokenize in ("ja-mecab", "ko-mecab") and not has_mecab(tokenize):
        pytest.skip(f"{tokenize} needs the extra: pip install 'beambleu[{tokenize[:2]}]'")


def _id(row):
    return f"{row['dir']}:{row['system']}:{row['refs']}:{row['tokenize']}"


@pytest.mark.skipif(not COMPUTED, reason="shared corpora not present")
@pytest.mark.parametrize("row", COMPUTED, ids=_id)
def test_every_system_equals_sacrebleu_table(row):
    _skip_unavailable(row["tokenize"])
    hyps, refs = load(row["dir"], row["system"], row["refs"])
    s = corpus_bleu(hyps, refs, tokenize=row["tokenize"])
    assert s.score == float(row["bleu"])  # the table keeps repr(float): exact round trip
    assert s.counts == [int(x) for x in row["counts_1to4"].split()]
    assert s.totals == [int(x) for x in row["totals_1to4"].split()]
    assert (s.sys_len, s.ref_len) == (int(row["sys_len"]), int(row["ref_len"]))
    assert s.signature.rsplit("|version:", 1)[0] == row["signature"].rsplit("|version:", 1)[0]


def _published_precision(value: str) -> float:
    return 0.0 if "." not in value else 10.0 ** -len(value.split(".")[1])


@pytest.mark.skipif(not PUBLISHED, reason="shared corpora not present")
@pytest.mark.parametrize("row", [r for r in PUBLISHED if not r["match"].startswith("DIFF")], ids=lambda r: f"{r['dir']}:{r['system']}:{r['published_metric']}")
def test_published_scores(row):
    _skip_unavailable(row["tokenize"])
    hyps, refs = load(row["dir"], row["system"], row["refs_used"])
    s = corpus_bleu(hyps, refs, tokenize=row["tokenize"])
    assert s.score == float(row["sacrebleu_2.6.0"])
    if row["match"] == "exact":
        assert s.score == float(row["published_value"])
    else:  # printed with 2 decimals; sacrebleu's own test.sh tolerance
        assert abs(s.score - float(row["published_value"])) <= 0.01 + 1e-9


@pytest.mark.skipif(not PUBLISHED, reason="shared corpora not present")
def test_known_published_diffs_are_reproduced_as_sacrebleu_does():
    """The two ru-sah Lan-Bridge rows where the published value differs: we equal sacrebleu."""
    diffs = [r for r in PUBLISHED if r["match"].startswith("DIFF")]
    assert diffs
    for row in diffs:
        hyps, refs = load(row["dir"], row["system"], row["refs_used"])
        assert corpus_bleu(hyps, refs, tokenize=row["tokenize"]).score == float(row["sacrebleu_2.6.0"])


LIVE = [
    # (folder, system, refs, tokenizer, options): sacrebleu run here on the same files
    ("wmt22/uk-en", "PROMT", "A", "13a", {}),  # BOM on line 1
    ("wmt24/en-es", "Occiglot", "A", "13a", {"lowercase": True}),  # mid-line U+FEFF, empty lines
    ("flores101-devtest/en-ko", "hyp", "A", "13a", {}),  # \r\n line endings
    ("wmt24/en-hi", "ONLINE-empty", "A", "13a", {}),  # 997 empty lines
    ("wmt22/ru-sah", "Lan-Bridge", "A", "intl", {}),  # degenerate repetitive output
    ("wmt24/en-is", "Phi-3-Medium", "A", "13a", {"smooth_method": "floor"}),  # 3342-char lines
    ("wmt24/en-de", "CUNI-NL", "A+B", "intl", {"lowercase": True}),  # TABs inside segments
    ("wmt22/en-zh", "Online-W", "A+B", "zh", {}),
    ("wmt23/en-he", "GPT4-5shot", "A+B", "intl", {"max_ngram_order": 6}),
    ("wmt22/en-ja", "Online-W", "A", "char", {"effective_order": True}),
    ("wmt21/en-de", "UF", "A+C+D", "13a", {"smooth_method": "add-k"}),
    ("wmt22/en-ja", "NT5", "A", "ja-mecab", {}),
]


@pytest.mark.parametrize("folder,system,refs,tokenize,opts", LIVE, ids=lambda v: str(v))
def test_live_sacrebleu_with_options(corpora, folder, system, refs, tokenize, opts):
    _skip_unavailable(tokenize)
    if not (corpora / folder / f"sys.{system}.txt").exists():
        pytest.skip(f"{folder}/sys.{system}.txt not in this copy of the corpora")
    hyps, refs_ = load(folder, system, refs)
    theirs, seg = sacre_corpus(hyps, refs_, tokenize=tokenize, **opts)
    metric = Bleu(tokenize=tokenize, **opts)
    rows = metric.batch_stats(hyps, refs_)
    assert rows.tolist() == [list(map(int, r)) for r in seg]
    assert metric.scalar_stats(hyps, refs_).tolist() == rows.tolist()
    assert corpus_bleu(hyps, refs_, tokenize=tokenize, **opts).score == theirs.score

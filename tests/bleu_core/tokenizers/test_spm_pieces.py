"""spBLEU with pieces that are not tokens as they are: a model whose pieces hold characters
``str.split()`` splits at (identity normalisation keeps U+001C, U+2028, U+00A0, U+3000 inside
words) and characters it does not know. beambleu counts piece ids, and splits only such lines as
text; sacrebleu 2.6.0 joins the pieces with spaces and splits: the statistics must be the same."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

spm = pytest.importorskip("sentencepiece")

from sacrebleu.metrics.bleu import BLEU  # noqa: E402

from bleu_core import Bleu  # noqa: E402

ODD = ["\x1c", "\u2028", "\u00a0", "\u3000", "\x85", "\t"]
WORDS = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta"]


def _line(rng):
    words = []
    for _ in range(rng.randint(1, 8)):
        w = rng.choice(WORDS)
        if rng.random() < 0.5:
            w = w[:2] + rng.choice(ODD) + w[2:]
        words.append(w)
    return " ".join(words)


@pytest.fixture(scope="module")
def odd_home(tmp_path_factory):
    """A sacrebleu home whose flores101 model has whitespace inside pieces."""
    home = tmp_path_factory.mktemp("odd-spm-home")
    (home / "models").mkdir()
    rng = random.Random(1)
    text = home / "train.txt"
    text.write_text("\n".join(_line(rng) for _ in range(3000)) + "\n", encoding="utf-8")
    prefix = home / "odd"
    spm.SentencePieceTrainer.train(input=str(text), model_prefix=str(prefix), vocab_size=120, model_type="bpe",
                                   character_coverage=1.0, normalization_rule_name="identity", num_threads=1,
                                   minloglevel=2, hard_vocab_limit=False)
    model = home / "models" / "sacrebleu_tokenizer_spm.model"
    (home / "odd.model").rename(model)
    sp = spm.SentencePieceProcessor(model_file=str(model))
    pieces = [sp.IdToPiece(i) for i in range(sp.GetPieceSize())]
    # the point of this model: some pieces are cut by str.split()
    assert any(len(p.split()) != 1 or p.split()[0] != p for p in pieces if p), pieces
    return home


@pytest.fixture
def odd_env(odd_home, monkeypatch):
    import sacrebleu.tokenizers.tokenizer_spm as sacre_spm

    monkeypatch.setenv("SACREBLEU", str(odd_home))
    monkeypatch.setattr(sacre_spm, "SACREBLEU_DIR", str(odd_home))
    return odd_home


def _check(cands, refs, lowercase=False):
    metric = Bleu(tokenize="flores101", lowercase=lowercase)
    theirs = BLEU(tokenize="flores101", lowercase=lowercase)
    width = max(len(r) for r in refs)
    streams = [[r[k] if k < len(r) else None for r in refs] for k in range(width)]
    expected = np.array(theirs._extract_corpus_statistics(cands, streams), dtype=np.int64)
    np.testing.assert_array_equal(metric.batch_stats(cands, refs), expected)
    np.testing.assert_array_equal(metric.scalar_stats(cands, refs), expected)
    assert metric.corpus_score(cands, refs).score == theirs.corpus_score(cands, streams).score


def test_whitespace_inside_pieces_and_unknown_characters(odd_env):
    rng = random.Random(7)
    cands = [_line(rng) for _ in range(200)] + ["al\x1cpha ☃ beta", "", " \u3000 ", "ga\u2028mma ☃☃ zeta"]
    refs = [[_line(rng), _line(rng)] for _ in range(200)] + [["al\x1cpha ☃ be\x1cta"], ["x"], ["\u3000"],
                                                             ["ga\u2028mma ☃ ☃", None]]
    _check(cands, refs)
    _check(cands, refs, lowercase=True)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.lists(st.tuples(st.text(alphabet=st.sampled_from(list("alphbetgmdz ") + ODD + ["☃", "Ä"]),
                                       max_size=30),
                               st.lists(st.text(alphabet=st.sampled_from(list("alphbetgmdz ") + ODD + ["☃"]),
                                                max_size=30), min_size=1, max_size=2)),
                     min_size=1, max_size=6),
       lowercase=st.booleans())
def test_property_odd_pieces(odd_env, data, lowercase):
    _check([c for c, _ in data], [r for _, r in data], lowercase)

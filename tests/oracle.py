"""Shared test helpers: the sacrebleu 2.6.0 oracle and the shared corpora."""

from __future__ import annotations

import contextlib
import os
from functools import lru_cache
from pathlib import Path

import pytest

sacrebleu = pytest.importorskip("sacrebleu")
assert sacrebleu.__version__ == "2.6.0", "the oracle must be sacrebleu 2.6.0 (pip install '.[test]')"
from sacrebleu.metrics.bleu import BLEU  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
CORPORA = Path(os.environ.get("BEAMBLEU_CORPORA", REPO.parent / "shared" / "corpora"))


def has_mecab(name: str) -> bool:
    try:
        from bleu_core.tokenizers import get_tokenizer

        get_tokenizer(name)
        return True
    except RuntimeError:
        return False


@lru_cache(maxsize=None)
def sacre_metric(tokenize="13a", lowercase=False, smooth_method="exp", smooth_value=None,
                 max_ngram_order=4, effective_order=False) -> BLEU:
    return BLEU(tokenize=tokenize, lowercase=lowercase, smooth_method=smooth_method,
                smooth_value=smooth_value, max_ngram_order=max_ngram_order,
                effective_order=effective_order)


def to_streams(references):
    """Per-candidate reference lists -> sacrebleu's reference streams (padded with None)."""
    width = max(len(r) for r in references)
    return [[r[k] if k < len(r) else None for r in references] for k in range(width)]


def sacre_corpus(candidates, references, **opts):
    """(score object, per-segment statistics) from sacrebleu 2.6.0."""
    metric = sacre_metric(**opts)
    streams = to_streams(references)
    seg = metric._extract_corpus_statistics(candidates, streams)
    return metric.corpus_score(candidates, streams), seg


@pytest.fixture(scope="session")
def corpora() -> Path:
    if not (CORPORA / "MANIFEST.tsv").exists():
        pytest.skip(f"shared corpora not found at {CORPORA}")
    return CORPORA


def read_lines(path: Path):
    """Lines as sacrebleu's CLI reads them: UTF-8, split on \\n only, rstrip()."""
    with open(path, encoding="utf-8", newline="\n") as fh:
        return [line.rstrip() for line in fh]


@contextlib.contextmanager
def seed_env(value):
    """``SACREBLEU_SEED=value`` in this process for the block (sacrebleu and bleu_core.compat read it)."""
    old = os.environ.get("SACREBLEU_SEED")
    os.environ["SACREBLEU_SEED"] = str(value)
    try:
        yield
    finally:
        if old is None:
            del os.environ["SACREBLEU_SEED"]
        else:
            os.environ["SACREBLEU_SEED"] = old


@pytest.fixture(scope="session")
def spm_dir(tmp_path_factory) -> Path:
    """A sacrebleu home (``$SACREBLEU``) whose ``models/`` holds the tiny models of
    :mod:`tests.spm_models` under sacrebleu's file names (skips without sentencepiece)."""
    pytest.importorskip("sentencepiece")
    from .spm_models import train_models, training_text

    home = tmp_path_factory.mktemp("sacrebleu-home")
    train_models(home / "models", training_text(CORPORA, REPO))
    return home


@pytest.fixture
def spm_home(spm_dir, monkeypatch) -> Path:
    """``$SACREBLEU`` set to :func:`spm_dir` for beambleu and for sacrebleu in this process
    (sacrebleu reads the variable once, at import: its module constant is patched too)."""
    import sacrebleu.tokenizers.tokenizer_spm as sacre_spm

    monkeypatch.setenv("SACREBLEU", str(spm_dir))
    monkeypatch.setattr(sacre_spm, "SACREBLEU_DIR", str(spm_dir))
    return spm_dir

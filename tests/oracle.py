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


def corpus_systems():
    """(folder, system, reference names) of every system output in the shared corpora (none when absent)."""
    out = []
    if not (CORPORA / "MANIFEST.tsv").exists():
        return out
    for folder in sorted(p for p in CORPORA.glob("*/*") if p.is_dir()):
        refs = sorted(p.name[len("ref."):-len(".txt")] for p in folder.glob("ref.*.txt"))
        for sys_path in sorted(folder.glob("sys.*.txt")):
            out.append((str(folder.relative_to(CORPORA)), sys_path.name[len("sys."):-len(".txt")], tuple(refs)))
    return out


def load_system(folder, system, refs):
    """(hypotheses, reference streams) of one system of the corpora."""
    d = CORPORA / folder
    hyps = read_lines(d / f"sys.{system}.txt")
    streams = [read_lines(d / f"ref.{r}.txt") for r in refs]
    assert all(len(s) == len(hyps) for s in streams)
    return hyps, streams


def ragged_references(n):
    """WMT21 en-de (system happypoet), first n lines, with reference streams A, C, D: None and ""
    placeholders give 1 to 3 references per line (with 3, sacrebleu's float sums depend on their
    order); some hypotheses are empty. Skips when the corpora are absent."""
    folder = CORPORA / "wmt21" / "en-de"
    if not (folder / "ref.D.txt").exists():
        pytest.skip(f"shared corpora not found at {CORPORA}")
    hyps = read_lines(folder / "sys.happypoet.txt")[:n]
    a, c, d = (read_lines(folder / f"ref.{k}.txt")[:n] for k in "ACD")
    a = ["" if i % 23 == 6 else x for i, x in enumerate(a)]
    c = [None if i % 4 == 2 else "" if i % 10 == 7 else x for i, x in enumerate(c)]
    d = [None if i % 3 == 1 else x for i, x in enumerate(d)]
    hyps = ["" if i % 29 == 11 else x for i, x in enumerate(hyps)]
    return hyps, [a, c, d]

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

"""bleu_core.compat's modules under sacrebleu 2.6.0's names: every module of sacrebleu's package has
its counterpart, with sacrebleu's public names; the tokenizer classes give sacrebleu's tokens;
``corpus_ter``/``sentence_ter`` take sacrebleu's parameters; the test-set registry is sacrebleu's own,
imported only when used, and without sacrebleu one line says which extra to install. Expected values
come from sacrebleu, run here."""

from __future__ import annotations

import importlib
import inspect
import itertools
import os
import pkgutil
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bleu_core import compat
from bleu_core.version import __version__

pytest.importorskip("sacrebleu")
import sacrebleu  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]

#: sacrebleu's modules compat has no counterpart of, and why
NOT_MIRRORED = {
    "sacrebleu.sacrebleu": "its command line (beambleu score is the command line)",
    "sacrebleu.__main__": "its command line",
    "sacrebleu.dataset.__main__": "a maintainer's script of the registry",
    "sacrebleu.metrics.lib_ter": "TER's internals (bleu_core.metrics.ter computes TER)",
}
DATASET_SUBMODULES = ("base", "fake_sgml", "iwslt_xml", "plain_text", "tsv", "wmt_xml")


def _sacrebleu_modules():
    return sorted(m.name for m in pkgutil.walk_packages(sacrebleu.__path__, "sacrebleu."))


@pytest.mark.parametrize("name", _sacrebleu_modules())
def test_every_sacrebleu_module_has_its_counterpart(name):
    if name in NOT_MIRRORED:
        pytest.skip(NOT_MIRRORED[name])
    ours_name = "bleu_core.compat" + name[len("sacrebleu"):]
    if name.startswith("sacrebleu.dataset."):  # sacrebleu's own, through the registry
        assert name.rpartition(".")[2] in DATASET_SUBMODULES
        assert getattr(compat.dataset, name.rpartition(".")[2]) is importlib.import_module(name)
        return
    ours, theirs = importlib.import_module(ours_name), importlib.import_module(name)
    public = {k for k, v in vars(theirs).items()
              if not k.startswith("_") and (inspect.isclass(v) or inspect.isfunction(v))
              and getattr(v, "__module__", "") == name}  # defined there, not imported
    if name == "sacrebleu.utils":  # its printing helpers belong to its command line
        public &= {"smart_open", "get_source_file", "get_reference_files", "get_available_testsets",
                   "get_available_testsets_for_langpair", "get_langpairs_for_testset", "download_test_set"}
    if name == "sacrebleu.metrics.bleu":
        public -= {"BLEUSignature"}  # the signature classes are compat's one Signature
    if name in ("sacrebleu.metrics.chrf", "sacrebleu.metrics.ter"):
        public -= {"CHRFSignature", "TERSignature"}
    missing = sorted(k for k in public if not hasattr(ours, k))
    assert not missing


def test_package_names_as_sacrebleus():
    for name in sacrebleu.__all__:
        assert hasattr(compat, name), name
    assert compat.__version__ == __version__ == compat.version.__version__
    assert compat.metrics.base.Signature is compat.Signature and compat.metrics.base.Score is compat.Score
    assert compat.significance.PairedTest is compat.PairedTest and compat.compat.sentence_ter is compat.sentence_ter


# ------------------------------------------------------------------ tokenizers

def _lines(n=300, seed=7):
    rng = random.Random(seed)
    alphabet = list("abcXYZ019 .,;:!?\"'()-&<>/\\$%#@\t\n") + ["&quot;", "&amp;", "&lt;", "'s ", "\u3001", "\uff0c",
                                                                 "中", "文", "ア", "ひ", "한", "é", "\u00a0", "3.5",
                                                                 "1,000", "e.g.", "<skipped>", "-\n", "\u2028"]
    return ["", " ", "Hello, World's end."] + ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 25)))
                                               for _ in range(n)]


@pytest.mark.parametrize("normalized, no_punct, asian_support, case_sensitive",
                         list(itertools.product([False, True], repeat=4)))
def test_tercom_tokenizer_as_sacrebleus(normalized, no_punct, asian_support, case_sensitive):
    from sacrebleu.tokenizers.tokenizer_ter import TercomTokenizer as Theirs

    from bleu_core.compat.tokenizers.tokenizer_ter import TercomTokenizer as Ours
    kwargs = dict(normalized=normalized, no_punct=no_punct, asian_support=asian_support,
                  case_sensitive=case_sensitive)
    ours, theirs = Ours(**kwargs), Theirs(**kwargs)
    assert ours.signature() == theirs.signature() == "tercom"
    for line in _lines():
        assert ours(line) == theirs(line), line


@pytest.mark.parametrize("module, cls", [
    ("tokenizer_13a", "Tokenizer13a"), ("tokenizer_intl", "TokenizerV14International"), ("tokenizer_zh", "TokenizerZh"),
    ("tokenizer_char", "TokenizerChar"), ("tokenizer_none", "NoneTokenizer"), ("tokenizer_re", "TokenizerRegexp"),
])
def test_tokenizer_classes_as_sacrebleus(module, cls):
    ours = getattr(importlib.import_module(f"bleu_core.compat.tokenizers.{module}"), cls)()
    theirs = getattr(importlib.import_module(f"sacrebleu.tokenizers.{module}"), cls)()
    assert isinstance(ours, compat.tokenizers.BaseTokenizer)
    assert ours.signature() == theirs.signature()
    for line in _lines(seed=11):
        assert ours(line) == theirs(line), line


def test_spm_tokenizer_classes_and_models_table():
    from sacrebleu.tokenizers import tokenizer_spm as theirs

    from bleu_core.compat.tokenizers import tokenizer_spm as ours
    assert ours.SPM_MODELS == theirs.SPM_MODELS
    assert inspect.signature(ours.TokenizerSPM).parameters["key"].default == "spm"
    for name in ("Flores101Tokenizer", "Flores200Tokenizer", "spBLEU1KTokenizer"):
        assert issubclass(getattr(ours, name), ours.TokenizerSPM)


def test_helpers_as_sacrebleus():
    from sacrebleu.metrics import helpers as theirs

    from bleu_core.compat.metrics import helpers as ours
    for line in _lines(60, seed=3):
        for n in (1, 2, 3):
            assert ours.extract_word_ngrams(line.split(), n) == theirs.extract_word_ngrams(line.split(), n)
            for ws in (False, True):
                assert ours.extract_char_ngrams(line, n, ws) == theirs.extract_char_ngrams(line, n, ws)
        assert ours.extract_all_word_ngrams(line, 1, 4) == theirs.extract_all_word_ngrams(line, 1, 4)
        assert ours.extract_all_char_ngrams(line, 6, True) == theirs.extract_all_char_ngrams(line, 6, True)


# ------------------------------------------------------------------ TER functions

@pytest.mark.parametrize("name", ["corpus_ter", "sentence_ter"])
def test_ter_functions_take_sacrebleus_parameters(name):
    ours, theirs = inspect.signature(getattr(compat, name)), inspect.signature(getattr(sacrebleu, name))
    assert [(p.name, p.default, p.kind) for p in ours.parameters.values()] == \
        [(p.name, p.default, p.kind) for p in theirs.parameters.values()]


@pytest.mark.parametrize("options", [{}, {"normalized": True}, {"no_punct": True, "case_sensitive": True},
                                     {"normalized": True, "asian_support": True}])
def test_ter_functions_as_sacrebleus(options):
    hyps = ["The dog bit the man.", "It wasn't surprising!", "中文 的 句子。", "a b c d e f"]
    refs = [["The dog had bit the man.", "It was not unexpected.", "中文句子。", "f e d c b a"],
            ["the dog bit the man", "No surprise there.", "句子", ""]]
    ours, theirs = compat.corpus_ter(hyps, refs, **options), sacrebleu.corpus_ter(hyps, refs, **options)
    assert (ours.score, ours.num_edits, ours.ref_length) == (theirs.score, theirs.num_edits, theirs.ref_length)
    for i, hyp in enumerate(hyps):
        one, two = compat.sentence_ter(hyp, [r[i] for r in refs], **options), \
            sacrebleu.sentence_ter(hyp, [r[i] for r in refs], **options)
        assert (one.score, one.num_edits, one.ref_length) == (two.score, two.num_edits, two.ref_length)


# ------------------------------------------------------------------ the test-set registry

def _python(code: str, **env) -> subprocess.CompletedProcess:
    full = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full, capture_output=True, text=True,
                          timeout=120)


def test_registry_is_sacrebleus_own():
    from sacrebleu.dataset import DATASETS
    from sacrebleu.utils import get_available_testsets, get_langpairs_for_testset

    assert compat.DATASETS is DATASETS and compat.dataset.DATASETS is DATASETS
    assert compat.get_available_testsets() == get_available_testsets()
    assert compat.get_langpairs_for_testset("wmt22") == get_langpairs_for_testset("wmt22")
    assert compat.utils.get_available_testsets_for_langpair("de-en") == \
        sacrebleu.utils.get_available_testsets_for_langpair("de-en")
    assert compat.get_source_file is sacrebleu.utils.get_source_file
    assert compat.get_reference_files is sacrebleu.utils.get_reference_files
    assert compat.SACREBLEU_DIR == sacrebleu.utils.SACREBLEU_DIR


def test_smart_open_reads_as_sacrebleus(tmp_path):
    import gzip
    text = "a\r\nb\rc\nd"
    (tmp_path / "x.txt").write_bytes(text.encode())
    with gzip.open(tmp_path / "x.txt.gz", "wb") as f:
        f.write(text.encode())
    for name in ("x.txt", "x.txt.gz"):
        path = str(tmp_path / name)
        with compat.smart_open(path) as ours, sacrebleu.smart_open(path) as theirs:
            assert list(ours) == list(theirs) == ["a\r\n", "b\rc\n", "d"]


def test_importing_compat_does_not_import_sacrebleu():
    out = _python("""
        import sys, bleu_core.compat as c
        c.BLEU, c.corpus_ter, c.metrics, c.tokenizers.tokenizer_ter, c.utils, c.dataset, c.smart_open
        print('sacrebleu' in sys.modules, any(m.startswith('_bleu_core_compat_sacrebleu') for m in sys.modules))
    """)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False"]


def test_without_sacrebleu_the_registry_says_what_to_install():
    out = _python("""
        import sys
        sys.modules['sacrebleu'] = None  # as if not installed
        import importlib.metadata as md
        md.distribution = lambda name: (_ for _ in ()).throw(md.PackageNotFoundError(name))
        import bleu_core.compat as c
        for get in (lambda: c.DATASETS, lambda: c.get_source_file, lambda: c.utils.get_available_testsets,
                    lambda: c.dataset.DATASETS):
            try:
                get()
            except ImportError as exc:
                print(str(exc))
        print(round(c.corpus_bleu(['a b c d'], [['a b c d']]).score, 6))
    """)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == 5 and lines[-1] == "100.0"
    for line in lines[:4]:
        assert line.endswith("needs sacrebleu installed: pip install 'beambleu[testsets]'"), line


def test_aliasing_sacrebleu_to_compat_keeps_sacrebleus_registry():
    out = _python("""
        import sys, bleu_core.compat as c
        sys.modules['sacrebleu'] = c
        import sacrebleu
        print(sacrebleu.BLEU is c.BLEU, type(c.DATASETS['wmt22']).__module__, len(c.get_available_testsets()) > 50)
    """)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "_bleu_core_compat_sacrebleu.dataset.wmt_xml", "True"]

"""sacrebleu 2.6.0's Python API on beambleu's kernels: a script changes only its import.

``import sacrebleu`` becomes ``import bleu_core.compat as sacrebleu``; its modules have
sacrebleu's names: ``from sacrebleu.metrics import BLEU, CHRF, TER`` becomes ``from
bleu_core.compat.metrics import ...``, and so do ``significance`` (``PairedTest``, ``Result``),
``compat`` (``corpus_bleu``, ``sentence_ter``, ...), ``tokenizers`` (``tokenizer_13a.Tokenizer13a``,
``tokenizer_ter.TercomTokenizer``, ...), ``metrics.base`` (``Score``, ``Signature``), ``metrics.helpers``,
``utils`` and ``dataset``; every public name is also here, as in sacrebleu's package. Scores, counts and formatted lines are sacrebleu's, bit for bit; the
signatures say ``version:beambleu-<version>``; confidence intervals and paired tests draw
sacrebleu's numpy resamples (:mod:`bleu_core.resampling.sacrebleu`), so their numbers are sacrebleu's
too, bit for bit, or, with ``bleu_core.compat.RESAMPLING = "counter"`` (the signatures of the
functions stay sacrebleu's), beambleu's counter-based Poisson bootstrap and coin flips
(:mod:`bleu_core.resampling.counter`), the draws of ``beambleu run``.

The test sets (``DATASETS``, ``get_source_file``, ``get_reference_files``, ``get_available_testsets``,
``get_langpairs_for_testset``, ``download_test_set``) are sacrebleu's own registry: they need sacrebleu
installed (``pip install 'beambleu[testsets]'``; without it, using one raises an ImportError saying
so), which is imported only when one is first used. ``__version__`` is beambleu's.

The two layouts of references (``None``: a missing reference, ``""``: a real empty one)::

    bleu_core.corpus_bleu(hyps, refs)         refs[i] = the references of hyps[i]
        corpus_bleu(["h1", "h2"], [["A1", "B1"], ["A2", None]])
    bleu_core.compat.corpus_bleu(hyps, refs)  refs[k] = reference stream k, one line per hypothesis
        corpus_bleu(["h1", "h2"], [["A1", "A2"], ["B1", None]])

Deliberate differences from sacrebleu, all on inputs sacrebleu mishandles or options it lacks:
hypotheses and reference streams of different lengths raise ValueError (sacrebleu truncates
silently to the shortest); so does a segment without any reference; options are checked when
the metric is made (ValueError/TypeError where sacrebleu asserts or fails later); a SentencePiece
model (``flores101``, ``flores200``, ``spBLEU-1K``, ``spm``) that cannot be downloaded is one
ModelError naming its URL and where to put it; with the counter draws, resample counts are
capped as in :func:`bleu_core.resampling.counter.check_replicates` and the p-value counts ties as at least
as extreme (see :func:`bleu_core.resampling.counter.paired_p_value`).
"""

from __future__ import annotations

from importlib import import_module

from ..resampling.sacrebleu import SACREBLEU as _SACREBLEU
from ..version import __version__

#: how ``corpus_score(n_bootstrap=B)`` and :class:`PairedTest` draw, read when they are called:
#: ``"sacrebleu"``, its numpy draws and numbers, or ``"counter"``, beambleu's counter-based draws
RESAMPLING = _SACREBLEU
#: marks this package (and any alias of it named ``sacrebleu``) as beambleu's, not sacrebleu's
_BLEU_CORE_COMPAT = True

__all__ = ["BLEU", "CHRF", "TER", "BLEUScore", "CHRFScore", "TERScore", "Score", "Signature", "PairedTest", "Result",
           "MAX_NGRAM_ORDER", "corpus_bleu", "raw_corpus_bleu", "sentence_bleu", "corpus_chrf", "sentence_chrf",
           "corpus_ter", "sentence_ter", "compat_class", "extract_word_ngrams", "extract_char_ngrams", "smart_open",
           "RESAMPLING", "__version__"]

# Names are imported on first use (PEP 562), as bleu_core's own are (bleu_core/__init__.py says why a
# package should not import its children itself). The test-set names need sacrebleu: they are left
# out of __all__, so that ``from bleu_core.compat import *`` works without it.
_EXPORTS = {
    "BLEU": ".metrics", "CHRF": ".metrics", "TER": ".metrics", "BLEUScore": ".metrics", "CHRFScore": ".metrics",
    "TERScore": ".metrics", "METRICS": ".metrics", "compat_class": ".metrics",
    "Score": ".metrics.base", "Signature": ".metrics.base", "Metric": ".metrics.base", "_Metric": ".metrics.base",
    "_Option": ".metrics.base",
    "MAX_NGRAM_ORDER": ".metrics.bleu",
    "extract_word_ngrams": ".metrics.helpers", "extract_char_ngrams": ".metrics.helpers",
    "PairedTest": ".significance", "Result": ".significance",
    "corpus_bleu": ".compat", "raw_corpus_bleu": ".compat", "sentence_bleu": ".compat", "corpus_chrf": ".compat",
    "sentence_chrf": ".compat", "corpus_ter": ".compat", "sentence_ter": ".compat",
    "smart_open": ".utils", "SACREBLEU_DIR": ".utils", "download_test_set": ".utils", "get_source_file": ".utils",
    "get_reference_files": ".utils", "get_available_testsets": ".utils", "get_langpairs_for_testset": ".utils",
    "DATASETS": ".dataset",
}
#: the modules, under sacrebleu's names
_SUBMODULES = ("metrics", "significance", "compat", "tokenizers", "utils", "dataset", "version")
#: read anew on each use (never cached here)
_LIVE = {"SACREBLEU_DIR", "DATASETS", "download_test_set", "get_source_file", "get_reference_files",
         "get_available_testsets", "get_langpairs_for_testset"}


def __getattr__(name: str):
    if name in _SUBMODULES:
        return import_module(f".{name}", __name__)
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(_EXPORTS[name], __name__), name)
    if name not in _LIVE:
        globals()[name] = value
    return value


def __dir__():
    return sorted({*globals(), *_EXPORTS, *_SUBMODULES})

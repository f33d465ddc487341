"""Hugging Face ``evaluate`` modules whose numbers are sacrebleu's, computed by bleu_core.

Each of ``sacrebleu.py``, ``chrf.py`` and ``ter.py`` beside this file is a module script that
``evaluate.load`` takes by its path, offline (it is a local file; it needs no download)::

    import evaluate
    from bleu_core.integrations.hf_evaluate import module_path

    bleu = evaluate.load(module_path("sacrebleu"))      # was: evaluate.load("sacrebleu")
    bleu.compute(predictions=preds, references=refs)     # the same keys, the same numbers

The inputs (``predictions``: strings; ``references``: a list of references per prediction, or one
string per prediction; the same number of references for every prediction), the options (their
names and defaults) and the keys of the result are those of evaluate's own ``sacrebleu``,
``chrf`` and ``ter`` modules, which call sacrebleu; here the statistics come from bleu_core's
kernels (:func:`bleu_core.items.item_stats`) and the score from their sums
(:func:`bleu_core.items.corpus_score`), equal to sacrebleu 2.6.0's.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import List, Optional

import datasets
import evaluate
import numpy as np

from ...items import corpus_score, item_stats
from ...metrics.bleu import Bleu
from ...metrics.chrf import Chrf
from ...metrics.ter import Ter as TerMetric

__all__ = ["MODULES", "ChrF", "Sacrebleu", "Ter", "module_path"]

logger = logging.getLogger(__name__)

#: the module scripts of this folder, by name
MODULES = ("sacrebleu", "chrf", "ter")

_FEATURES = [
    datasets.Features({
        "predictions": datasets.Value("string", id="sequence"),
        "references": datasets.Sequence(datasets.Value("string", id="sequence"), id="references"),
    }),
    datasets.Features({
        "predictions": datasets.Value("string", id="sequence"),
        "references": datasets.Value("string", id="sequence"),
    }),
]

_INPUTS = """
Args:
    predictions (`list` of `str`): the translations to score.
    references (`list` of `list` of `str`, or `list` of `str`): the references of each
        prediction (references[i] belongs to predictions[i]); every prediction has the same number
        of references; a plain string is one reference.
"""


def module_path(name: str) -> str:
    """The path of the module script ``name`` (``"sacrebleu"``, ``"chrf"``, ``"ter"``) for
    ``evaluate.load``."""
    if name not in MODULES:
        raise ValueError(f"no module {name!r}: choose one of {', '.join(MODULES)}")
    return str(Path(__file__).resolve().with_name(f"{name}.py"))


def _per_prediction(references, metric: str) -> List[List[Optional[str]]]:
    """``references`` as one list per prediction, each of the same length (ValueError otherwise,
    as evaluate's modules check it)."""
    if len(references) and isinstance(references[0], str):
        references = [[ref] for ref in references]
    references = [list(refs) for refs in references]
    if references:
        k = len(references[0])
        for i, refs in enumerate(references):
            if len(refs) != k:
                raise ValueError(f"{metric} needs the same number of references for each prediction: prediction 0 "
                                 f"has {k}, prediction {i} has {len(refs)}")
    return references


def _plain(x):
    """A numpy scalar as the Python number sacrebleu's results hold."""
    return x.item() if isinstance(x, np.generic) else x


def _info(cls, description: str, citation: str, homepage: str, outputs: str) -> evaluate.MetricInfo:
    return evaluate.MetricInfo(
        description=description,
        citation=citation,
        homepage=homepage,
        inputs_description=_INPUTS + outputs,
        features=_FEATURES,
        codebase_urls=["https://github.com/mjpost/sacreBLEU"],
    )


class Sacrebleu(evaluate.Metric):
    """Corpus BLEU as sacrebleu's ``corpus_bleu`` computes it (evaluate's ``sacrebleu`` module)."""

    def _info(self):
        return _info(self, "Corpus BLEU (Papineni et al., 2002) as sacrebleu 2.6.0 computes it, by bleu_core.",
                     "Post, M. (2018). A Call for Clarity in Reporting BLEU Scores. WMT 2018.",
                     "https://github.com/mjpost/sacreBLEU",
                     "Options: smooth_method ('exp'), smooth_value (None), force (False), lowercase (False), "
                     "tokenize (None: '13a'), use_effective_order (False).\n"
                     "Returns: score, counts, totals, precisions, bp, sys_len, ref_len.\n")

    def _compute(self, predictions, references, smooth_method="exp", smooth_value=None, force=False,
                 lowercase=False, tokenize=None, use_effective_order=False):
        references = _per_prediction(references, "sacrebleu")
        metric = Bleu(tokenize=tokenize or "13a", lowercase=lowercase, smooth_method=smooth_method,
                      smooth_value=smooth_value, effective_order=use_effective_order)
        if not force:
            tokenized = sum(p.endswith(" .") for p in predictions)
            if tokenized >= 100:
                logger.warning("%d predictions end in a tokenized period (' .'): BLEU expects detokenized text "
                               "(force=True silences this)", tokenized)
        out = corpus_score(metric, item_stats(metric, predictions, references))
        return {"score": out.score, "counts": [_plain(c) for c in out.counts],
                "totals": [_plain(t) for t in out.totals], "precisions": [_plain(p) for p in out.precisions],
                "bp": _plain(out.bp), "sys_len": _plain(out.sys_len), "ref_len": _plain(out.ref_len)}


class ChrF(evaluate.Metric):
    """chrF and chrF++ as sacrebleu's ``CHRF`` computes them (evaluate's ``chrf`` module)."""

    def _info(self):
        return _info(self, "chrF (Popović, 2015) and chrF++ (Popović, 2017) as sacrebleu 2.6.0 computes them, "
                           "by bleu_core.",
                     "Popović, M. (2015). chrF: character n-gram F-score for automatic MT evaluation. WMT 2015.",
                     "https://github.com/mjpost/sacreBLEU#chrf--chrf",
                     "Options: char_order (6), word_order (0; 2 for chrF++), beta (2), lowercase (False), "
                     "whitespace (False), eps_smoothing (False).\n"
                     "Returns: score, char_order, word_order, beta.\n")

    def _compute(self, predictions, references, char_order: int = 6, word_order: int = 0, beta: int = 2,
                 lowercase: bool = False, whitespace: bool = False, eps_smoothing: bool = False):
        references = _per_prediction(references, "chrF")
        metric = Chrf(char_order=char_order, word_order=word_order, beta=beta, lowercase=lowercase,
                      whitespace=whitespace, eps_smoothing=eps_smoothing)
        out = corpus_score(metric, item_stats(metric, predictions, references))
        return {"score": out.score, "char_order": out.char_order, "word_order": out.word_order, "beta": out.beta}


class Ter(evaluate.Metric):
    """Translation Edit Rate as sacrebleu's ``TER`` computes it (evaluate's ``ter`` module)."""

    def _info(self):
        return _info(self, "Translation Edit Rate (Snover et al., 2006) as sacrebleu 2.6.0 computes it, by bleu_core.",
                     "Snover, M. et al. (2006). A Study of Translation Edit Rate with Targeted Human Annotation. "
                     "AMTA 2006.",
                     "http://www.cs.umd.edu/~snover/tercom/",
                     "Options: normalized (False), ignore_punct (False), support_zh_ja_chars (False), "
                     "case_sensitive (False).\n"
                     "Returns: score, num_edits, ref_length.\n")

    def _compute(self, predictions, references, normalized: bool = False, ignore_punct: bool = False,
                 support_zh_ja_chars: bool = False, case_sensitive: bool = False):
        references = _per_prediction(references, "TER")
        metric = TerMetric(normalized=normalized, no_punct=ignore_punct, asian_support=support_zh_ja_chars,
                     case_sensitive=case_sensitive)
        out = corpus_score(metric, item_stats(metric, predictions, references))
        return {"score": out.score, "num_edits": out.num_edits, "ref_length": out.ref_length}

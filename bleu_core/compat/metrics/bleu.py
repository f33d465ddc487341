"""sacrebleu's ``sacrebleu.metrics.bleu``: :class:`BLEU` and :class:`BLEUScore` on bleu_core's kernel."""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence

from ...metrics.bleu import Bleu
from ...metrics.bleu.score import SMOOTH_DEFAULTS, compute_bleu
from ...tokenizers import DEFAULT_TOKENIZER, LANGUAGE_TOKENIZERS, TOKENIZERS as _TOKENIZER_NAMES
from .base import Score, _Metric, _warning

__all__ = ["BLEU", "BLEUScore", "MAX_NGRAM_ORDER"]

#: sacrebleu's default highest n-gram order of BLEU
MAX_NGRAM_ORDER = 4


class BLEUScore(Score):
    """sacrebleu's BLEU score: ``score``, ``counts``, ``totals``, ``precisions`` (percent),
    ``bp``, ``sys_len``, ``ref_len``, ``ratio``, ``prec_str``, and the verbose part of the line."""

    def __init__(self, score: float, counts: List, totals: List, precisions: List[float], bp: float, sys_len: int,
                 ref_len: int):
        super().__init__("BLEU", score)
        self.bp = bp
        self.counts = counts
        self.totals = totals
        self.sys_len = sys_len
        self.ref_len = ref_len
        self.precisions = precisions
        self.prec_str = "/".join(f"{p:.1f}" for p in self.precisions)
        self.ratio = self.sys_len / self.ref_len if self.ref_len else 0
        self._verbose = (f"{self.prec_str} (BP = {self.bp:.3f} ratio = {self.ratio:.3f} hyp_len = {self.sys_len:d} "
                         f"ref_len = {self.ref_len:d})")


def _bleu_score(core, smooth_method: str, smooth_value) -> BLEUScore:
    """A compat score of a :class:`bleu_core.metrics.bleu.score.BleuScore`. sacrebleu's add-k smoothing adds k
    to its matches and totals of orders 2..N in place and reports those (when anything matched);
    bleu_core reports the real integers, so k is added back here for identical ``counts``/``totals``."""
    counts, totals = list(core.counts), list(core.totals)
    if smooth_method == "add-k" and any(counts):
        k = SMOOTH_DEFAULTS["add-k"] if smooth_value is None else smooth_value
        counts[1:] = [c + k for c in counts[1:]]
        totals[1:] = [t + k for t in totals[1:]]
    return BLEUScore(core.score, counts, totals, list(core.precisions), core.bp, core.sys_len, core.ref_len)


class BLEU(_Metric, metric=Bleu):
    """sacrebleu's ``BLEU``: same arguments, defaults, attributes and results.

    ``tokenize=None`` picks the tokenizer from ``trg_lang`` (``zh``, ``ja-mecab``, ``ko-mecab``,
    else ``13a``); ``references`` (streams) are kept for calls that pass ``references=None``.
    """

    SMOOTH_DEFAULTS: Dict[str, Optional[float]] = dict(SMOOTH_DEFAULTS)
    TOKENIZERS = _TOKENIZER_NAMES
    TOKENIZER_DEFAULT = DEFAULT_TOKENIZER
    _TOKENIZER_MAP = LANGUAGE_TOKENIZERS

    def __init__(self, lowercase: bool = False, force: bool = False, tokenize: Optional[str] = None,
                 smooth_method: str = "exp", smooth_value: Optional[float] = None,
                 max_ngram_order: int = MAX_NGRAM_ORDER, effective_order: bool = False, trg_lang: str = "",
                 references: Optional[Sequence[Sequence[Optional[str]]]] = None):
        super().__init__()
        self._force = force
        self.trg_lang = trg_lang
        if tokenize is None:
            tokenize = self._TOKENIZER_MAP.get(trg_lang, self.TOKENIZER_DEFAULT)
        else:
            for lang, best in self._TOKENIZER_MAP.items():
                if trg_lang == lang and tokenize != best:
                    _warning("Consider using the %r tokenizer for target language %r.", best, lang)
        if tokenize == "spm":
            _warning("Tokenizer 'spm' has been changed to 'flores101', and may be removed in the future.")
        self._metric = Bleu(tokenize=tokenize, lowercase=lowercase, smooth_method=smooth_method,
                            smooth_value=smooth_value, max_ngram_order=max_ngram_order,
                            effective_order=effective_order)
        self._metric.load()  # as sacrebleu, fail here when a MeCab tokenizer or a SentencePiece model is missing
        if references is not None:
            self._ref_cache = self._cache_references(references)

    @property
    def tokenizer(self):
        """The tokenizer object (callable on a string, with ``signature()``)."""
        return self._metric.tokenizer

    @property
    def tokenizer_signature(self) -> str:
        return self._metric.tokenizer.signature()

    @staticmethod
    def compute_bleu(correct: Sequence[int], total: Sequence[int], sys_len: int, ref_len: int,
                     smooth_method: str = "none", smooth_value=None, effective_order: bool = False,
                     max_ngram_order: int = MAX_NGRAM_ORDER) -> BLEUScore:
        """BLEU of summed statistics, with sacrebleu's arguments and defaults (note: smoothing
        ``none`` here). Statistics are non-negative integers (the input lists are not modified)."""
        core = compute_bleu([sys_len, ref_len, *correct, *total], max_ngram_order=max_ngram_order,
                            smooth_method=smooth_method, smooth_value=smooth_value, effective_order=effective_order)
        return _bleu_score(core, smooth_method, smooth_value)

    _scores_totals = _reads_row_lists = True

    def _compute_score_from_stats(self, stats) -> BLEUScore:
        import numpy as np

        return self._score_totals(np.asarray(stats, dtype=np.int64))

    def _score_totals(self, totals) -> BLEUScore:
        m = self._metric  # (Bleu.score reads an int64 array or Python ints as the same Python ints)
        return _bleu_score(m.score(totals), m.smooth_method, m.smooth_value)

    def sentence_score(self, hypothesis: str, references: Sequence[Optional[str]]) -> BLEUScore:
        if not self.effective_order:
            _warning("It is recommended to enable `effective_order` for sentence-level BLEU.")
        return super().sentence_score(hypothesis, references)


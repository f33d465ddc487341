"""sacrebleu's ``sacrebleu.compat``: the functions of its older API (``corpus_bleu``,
``sentence_bleu``, ``corpus_chrf``, ``corpus_ter``, ...), each making the metric and scoring once."""

from __future__ import annotations

from typing import Optional, Sequence

from .metrics.bleu import BLEU, BLEUScore
from .metrics.chrf import CHRF, CHRFScore
from .metrics.ter import TER, TERScore

__all__ = ["corpus_bleu", "raw_corpus_bleu", "sentence_bleu", "corpus_chrf", "sentence_chrf", "corpus_ter",
           "sentence_ter"]



def corpus_bleu(hypotheses: Sequence[str], references: Sequence[Sequence[Optional[str]]], smooth_method="exp",
                smooth_value=None, force=False, lowercase=False, tokenize=BLEU.TOKENIZER_DEFAULT,
                use_effective_order=False) -> BLEUScore:
    """sacrebleu's ``corpus_bleu``: BLEU of a corpus against reference streams."""
    metric = BLEU(lowercase=lowercase, force=force, tokenize=tokenize, smooth_method=smooth_method,
                  smooth_value=smooth_value, effective_order=use_effective_order)
    return metric.corpus_score(hypotheses, references)


def raw_corpus_bleu(hypotheses: Sequence[str], references: Sequence[Sequence[Optional[str]]],
                    smooth_value: Optional[float] = BLEU.SMOOTH_DEFAULTS["floor"]) -> BLEUScore:
    """sacrebleu's ``raw_corpus_bleu``: no tokenization, floor smoothing, effective order."""
    return corpus_bleu(hypotheses, references, smooth_method="floor", smooth_value=smooth_value, force=True,
                       tokenize="none", use_effective_order=True)


def sentence_bleu(hypothesis: str, references: Sequence[Optional[str]], smooth_method: str = "exp",
                  smooth_value: Optional[float] = None, lowercase: bool = False, tokenize=BLEU.TOKENIZER_DEFAULT,
                  use_effective_order: bool = True) -> BLEUScore:
    """sacrebleu's ``sentence_bleu``: BLEU of one hypothesis (effective order on by default)."""
    metric = BLEU(lowercase=lowercase, tokenize=tokenize, force=False, smooth_method=smooth_method,
                  smooth_value=smooth_value, effective_order=use_effective_order)
    return metric.sentence_score(hypothesis, references)


def corpus_chrf(hypotheses: Sequence[str], references: Sequence[Sequence[Optional[str]]],
                char_order: int = CHRF.CHAR_ORDER, word_order: int = CHRF.WORD_ORDER, beta: int = CHRF.BETA,
                remove_whitespace: bool = True, eps_smoothing: bool = False) -> CHRFScore:
    """sacrebleu's ``corpus_chrf`` (note ``remove_whitespace``, the opposite of ``whitespace``)."""
    metric = CHRF(char_order=char_order, word_order=word_order, beta=beta, whitespace=not remove_whitespace,
                  eps_smoothing=eps_smoothing)
    return metric.corpus_score(hypotheses, references)


def sentence_chrf(hypothesis: str, references: Sequence[Optional[str]], char_order: int = CHRF.CHAR_ORDER,
                  word_order: int = CHRF.WORD_ORDER, beta: int = CHRF.BETA, remove_whitespace: bool = True,
                  eps_smoothing: bool = False) -> CHRFScore:
    """sacrebleu's ``sentence_chrf``."""
    metric = CHRF(char_order=char_order, word_order=word_order, beta=beta, whitespace=not remove_whitespace,
                  eps_smoothing=eps_smoothing)
    return metric.sentence_score(hypothesis, references)



def corpus_ter(hypotheses: Sequence[str], references: Sequence[Sequence[Optional[str]]], normalized: bool = False,
               no_punct: bool = False, asian_support: bool = False, case_sensitive: bool = False) -> TERScore:
    """sacrebleu's ``corpus_ter``: TER of a corpus against reference streams."""
    metric = TER(normalized=normalized, no_punct=no_punct, asian_support=asian_support,
                 case_sensitive=case_sensitive)
    return metric.corpus_score(hypotheses, references)


def sentence_ter(hypothesis: str, references: Sequence[Optional[str]], normalized: bool = False,
                 no_punct: bool = False, asian_support: bool = False, case_sensitive: bool = False) -> TERScore:
    """sacrebleu's ``sentence_ter``: TER of one hypothesis against its references."""
    metric = TER(normalized=normalized, no_punct=no_punct, asian_support=asian_support,
                 case_sensitive=case_sensitive)
    return metric.sentence_score(hypothesis, references)

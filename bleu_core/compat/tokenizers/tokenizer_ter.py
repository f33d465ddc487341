"""sacrebleu's ``tokenizer_ter``: the Tercom tokenizer TER compares words with, bleu_core's own
(:func:`bleu_core.metrics.ter.reference.tercom_words`)."""

from functools import lru_cache

from ...metrics.ter.reference import tercom_words
from ...tokenizers.base import Tokenizer

__all__ = ["TercomTokenizer"]


class TercomTokenizer(Tokenizer):
    """sacrebleu's ``TercomTokenizer``: ``normalized`` (Tercom's general and Western rules, and
    with ``asian_support`` CJK characters split off), ``no_punct`` (punctuation removed; CJK and
    full-width punctuation too with ``asian_support``), ``case_sensitive`` (else lowercased);
    a call returns the words joined by single spaces."""

    name = "tercom"

    def __init__(self, normalized: bool = False, no_punct: bool = False, asian_support: bool = False,
                 case_sensitive: bool = False):
        self._normalized = normalized
        self._no_punct = no_punct
        self._asian_support = asian_support
        self._case_sensitive = case_sensitive

    def __call__(self, sent: str) -> str:
        return _tokenize(sent, self._case_sensitive, self._normalized, self._no_punct, self._asian_support)

    def __repr__(self) -> str:
        return (f"TercomTokenizer(normalized={self._normalized}, no_punct={self._no_punct}, "
                f"asian_support={self._asian_support}, case_sensitive={self._case_sensitive})")


@lru_cache(maxsize=2**16)
def _tokenize(sent: str, case_sensitive: bool, normalized: bool, no_punct: bool, asian_support: bool) -> str:
    # trailing whitespace never survives the final split, so tercom_words' rstrip changes nothing
    return " ".join(tercom_words(sent, case_sensitive, normalized, no_punct, asian_support)) if sent else ""

"""Named tokenizers, identical to sacrebleu 2.6.0's.

>>> from bleu_core.tokenizers import get_tokenizer
>>> get_tokenizer("13a")("Hello, world!")
'Hello , world !'
"""

from __future__ import annotations

from functools import lru_cache
from importlib import import_module

from .base import Tokenizer

_REGISTRY = {
    "none": ("tokenizer_none", "NoneTokenizer"),
    "13a": ("tokenizer_13a", "Tokenizer13a"),
    "intl": ("tokenizer_intl", "TokenizerIntl"),
    "zh": ("tokenizer_zh", "TokenizerZh"),
    "char": ("tokenizer_char", "TokenizerChar"),
    "ja-mecab": ("tokenizer_mecab", "TokenizerJaMecab"),
    "ko-mecab": ("tokenizer_mecab", "TokenizerKoMecab"),
}

#: every tokenizer name, in sacrebleu's spelling
TOKENIZERS = tuple(_REGISTRY)
DEFAULT_TOKENIZER = "13a"
#: sacrebleu's BLEU tokenizer for a target language when none is asked for (else DEFAULT_TOKENIZER)
LANGUAGE_TOKENIZERS = {"zh": "zh", "ja": "ja-mecab", "ko": "ko-mecab"}


def default_tokenizer(trg_lang) -> str:
    """The tokenizer sacrebleu's BLEU uses for ``trg_lang`` when ``tokenize`` is not given."""
    return LANGUAGE_TOKENIZERS.get(trg_lang or "", DEFAULT_TOKENIZER)


def check_tokenizer_name(name) -> str:
    if not isinstance(name, str):
        raise TypeError(f"tokenize must be a str naming a tokenizer, got {type(name).__name__}")
    if name not in _REGISTRY:
        raise ValueError(f"tokenize: unknown tokenizer {name!r}; choose one of {', '.join(TOKENIZERS)}")
    return name


@lru_cache(maxsize=None)
def get_tokenizer(name: str) -> Tokenizer:
    """The tokenizer called ``name`` (one instance per process; they hold no state)."""
    module, cls = _REGISTRY[check_tokenizer_name(name)]
    return getattr(import_module(f".{module}", __name__), cls)()


__all__ = ["TOKENIZERS", "DEFAULT_TOKENIZER", "Tokenizer", "get_tokenizer", "check_tokenizer_name"]

"""Named tokenizers, identical to sacrebleu 2.6.0's.

>>> from bleu_core.tokenizers import get_tokenizer
>>> get_tokenizer("13a")("Hello, world!")
'Hello , world !'
"""

from __future__ import annotations

import os
from functools import lru_cache
from importlib import import_module

from .base import Tokenizer
from .tokenizer_spm import SPM_MODELS  # (sentencepiece itself is imported when a model is loaded)
from .tokenizer_spm import TokenizerSPM, require_sentencepiece, resolve_model

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Optional

_REGISTRY = {
    "none": ("tokenizer_none", "NoneTokenizer"),
    "13a": ("tokenizer_13a", "Tokenizer13a"),
    "intl": ("tokenizer_intl", "TokenizerIntl"),
    "zh": ("tokenizer_zh", "TokenizerZh"),
    "char": ("tokenizer_char", "TokenizerChar"),
    "ja-mecab": ("tokenizer_mecab", "TokenizerJaMecab"),
    "ko-mecab": ("tokenizer_mecab", "TokenizerKoMecab"),
}
#: the SentencePiece tokenizers (spBLEU; extra ``spm``), which read a model file
SPM_TOKENIZERS = tuple(SPM_MODELS)

#: every tokenizer name, in sacrebleu's spelling
TOKENIZERS = (*_REGISTRY, *SPM_TOKENIZERS)
DEFAULT_TOKENIZER = "13a"
#: the one table of sacrebleu's BLEU tokenizers by target language: (language code, the language's
#: name in sacrebleu's warning about another tokenizer, the tokenizer used when none is asked for)
TARGET_LANGUAGES = (("zh", "Chinese", "zh"), ("ja", "Japanese", "ja-mecab"), ("ko", "Korean", "ko-mecab"))
#: sacrebleu's BLEU tokenizer for a target language when none is asked for (else DEFAULT_TOKENIZER)
LANGUAGE_TOKENIZERS = {lang: tok for lang, _, tok in TARGET_LANGUAGES}


def default_tokenizer(trg_lang) -> str:
    """The tokenizer sacrebleu's BLEU uses for ``trg_lang`` when ``tokenize`` is not given."""
    return LANGUAGE_TOKENIZERS.get(trg_lang or "", DEFAULT_TOKENIZER)


def check_tokenizer_name(name) -> str:
    if not isinstance(name, str):
        raise TypeError(f"tokenize must be a str naming a tokenizer, got {type(name).__name__}")
    if name not in TOKENIZERS:
        raise ValueError(f"tokenize: unknown tokenizer {name!r}; choose one of {', '.join(TOKENIZERS)}")
    return name


def check_spm_model(name, spm_model):
    """``spm_model`` (a model path or URL, or None for sacrebleu's) is only for SentencePiece tokenizers."""
    if spm_model is None:
        return None
    if not isinstance(spm_model, str) or not spm_model:
        raise TypeError(f"spm_model must be a non-empty str naming a model file, got {spm_model!r}")
    if name not in SPM_TOKENIZERS:
        raise ValueError(f"a SentencePiece model is only used by the tokenizers {', '.join(SPM_TOKENIZERS)}, "
                         f"not {name!r}")
    return spm_model


def get_tokenizer(name: str, spm_model: Optional[str] = None) -> Tokenizer:
    """The tokenizer called ``name``, one instance per process. The SentencePiece ones load
    ``spm_model`` (default: sacrebleu's model file, downloaded there when missing), once per
    process for each model file (a local file is loaded again when it changes)."""
    check_tokenizer_name(name)
    check_spm_model(name, spm_model)
    if name not in SPM_TOKENIZERS:
        return _plain(name)

    require_sentencepiece(name)
    path = resolve_model(name, spm_model)
    try:
        st = os.stat(path)
        version = (st.st_mtime_ns, st.st_size, st.st_ino)
    except OSError:  # a URL (or a file gone: loading says so)
        version = None
    return _spm(name, path, version)


@lru_cache(maxsize=None)
def _plain(name: str) -> Tokenizer:
    module, cls = _REGISTRY[name]
    return getattr(import_module(f".{module}", __name__), cls)()


@lru_cache(maxsize=8)
def _spm(name: str, path: str, version) -> Tokenizer:
    return TokenizerSPM(name, path)


__all__ = ["TOKENIZERS", "SPM_TOKENIZERS", "DEFAULT_TOKENIZER", "Tokenizer", "get_tokenizer", "check_tokenizer_name"]

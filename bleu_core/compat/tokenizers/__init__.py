"""sacrebleu's ``sacrebleu.tokenizers``: its tokenizer classes, under its module and class names
(``tokenizer_13a.Tokenizer13a``, ``tokenizer_ter.TercomTokenizer``, ...), which are bleu_core's own
tokenizers (:mod:`bleu_core.tokenizers`, :mod:`bleu_core.metrics.ter`)."""

from importlib import import_module

from .tokenizer_base import BaseTokenizer

__all__ = ["BaseTokenizer"]

#: sacrebleu's tokenizer modules, imported when first used
MODULES = ("tokenizer_base", "tokenizer_13a", "tokenizer_intl", "tokenizer_zh", "tokenizer_char", "tokenizer_none",
           "tokenizer_re", "tokenizer_ja_mecab", "tokenizer_ko_mecab", "tokenizer_spm", "tokenizer_ter")


def __getattr__(name: str):
    if name in MODULES:
        return import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

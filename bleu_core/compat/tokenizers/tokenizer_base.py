"""sacrebleu's ``BaseTokenizer``: bleu_core's tokenizer interface (a callable with ``signature()``)."""

from ...tokenizers.base import Tokenizer as BaseTokenizer

__all__ = ["BaseTokenizer"]

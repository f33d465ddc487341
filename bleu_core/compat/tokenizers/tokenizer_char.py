"""sacrebleu's ``tokenizer_char``: one token per character, ``char``."""

from ...tokenizers.tokenizer_char import TokenizerChar

__all__ = ["TokenizerChar"]

"""sacrebleu's ``tokenizer_none``: no tokenization, ``none``."""

from ...tokenizers.tokenizer_none import NoneTokenizer

__all__ = ["NoneTokenizer"]

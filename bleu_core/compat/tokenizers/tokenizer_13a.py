"""sacrebleu's ``tokenizer_13a``: the mteval-v13a tokenizer, ``13a``."""

from ...tokenizers.tokenizer_13a import Tokenizer13a

__all__ = ["Tokenizer13a"]

"""sacrebleu's ``tokenizer_zh``: the Chinese tokenizer, ``zh``."""

from ...tokenizers.tokenizer_zh import TokenizerZh

__all__ = ["TokenizerZh"]

"""sacrebleu's ``tokenizer_intl``: the international tokenizer, ``intl``."""

from ...tokenizers.tokenizer_intl import TokenizerIntl as TokenizerV14International

__all__ = ["TokenizerV14International"]

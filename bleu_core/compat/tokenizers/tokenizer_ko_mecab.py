"""sacrebleu's ``tokenizer_ko_mecab``: Korean words by MeCab, ``ko-mecab`` (extra ``ko``)."""

from ...tokenizers.tokenizer_mecab import TokenizerKoMecab

__all__ = ["TokenizerKoMecab"]

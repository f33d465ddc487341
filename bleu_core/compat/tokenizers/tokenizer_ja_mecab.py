"""sacrebleu's ``tokenizer_ja_mecab``: Japanese words by MeCab, ``ja-mecab`` (extra ``ja``)."""

from ...tokenizers.tokenizer_mecab import TokenizerJaMecab

__all__ = ["TokenizerJaMecab"]

"""sacrebleu's ``tokenizer_re``: the regular-expression pass that ``13a`` and ``zh`` end with."""

from ...tokenizers.base import Tokenizer
from ...tokenizers.tokenizer_13a import regexp_post_tokenize

__all__ = ["TokenizerRegexp"]


class TokenizerRegexp(Tokenizer):
    """Punctuation split off, periods and commas away from digits, a dash after a digit; one
    space between tokens (sacrebleu's ``TokenizerRegexp``, signature ``re``)."""

    name = "re"

    def __call__(self, line: str) -> str:
        return regexp_post_tokenize(line)

"""``intl``: mteval-v14 international tokenization (sacrebleu's ``TokenizerV14International``).

The Unicode classes ``\\p{N}``, ``\\p{P}`` and ``\\p{S}`` are those of the installed ``regex``
module, the library sacrebleu uses; the kernel's flag table is computed from it. The module is
imported when a line is tokenized here (the kernel's path reads the flag table instead).
"""

from functools import lru_cache

from ._unicode import flag_table, flag_table_for
from .base import Tokenizer

__all__ = ["TokenizerIntl"]


@lru_cache(maxsize=None)
def _regexps():
    import regex

    return (
        # Separate out punctuations preceeded by a non-digit
        (regex.compile(r"(\P{N})(\p{P})"), r"\1 \2 "),
        # Separate out punctuations followed by a non-digit
        (regex.compile(r"(\p{P})(\P{N})"), r" \1 \2"),
        # Separate out symbols
        (regex.compile(r"(\p{S})"), r" \1 "),
    )


class TokenizerIntl(Tokenizer):
    name = "intl"
    kernel_id = 2

    def flags(self):
        return flag_table()

    def flags_for(self, strings, lowercase: bool):
        """The flag table for a call on ``strings`` (:func:`flag_table_for`)."""
        return flag_table_for(strings, lowercase)

    def __call__(self, line: str) -> str:
        for regexp, repl in _regexps():
            line = regexp.sub(repl, line)
        return " ".join(line.split())

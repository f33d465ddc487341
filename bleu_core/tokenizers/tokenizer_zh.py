"""``zh``: Chinese characters become tokens, the rest goes through 13a's regexps.

Mirrors sacrebleu 2.6.0's ``TokenizerZh``. Its range table is kept verbatim, including the
bounds that are two-character strings (``'\\u20000'`` is U+2000 followed by ``'0'``; see
sacrebleu issue #298). ``start <= char <= end`` on those strings is what sacrebleu evaluates,
so it is what we evaluate too: :func:`chinese_ranges` turns each comparison into the exact set
of code points it accepts.
"""

from __future__ import annotations

from ._unicode import UCODE_RANGES, chinese_ranges, flag_table, flag_table_for, is_chinese_char  # noqa: F401  (zh's definition)
from .base import Tokenizer
from .tokenizer_13a import regexp_post_tokenize

__all__ = ["UCODE_RANGES", "TokenizerZh", "chinese_ranges", "is_chinese_char"]

class TokenizerZh(Tokenizer):
    name = "zh"
    kernel_id = 3

    def flags(self):
        return flag_table()

    def flags_for(self, strings, lowercase: bool):
        """The flag table for a call on ``strings`` (:func:`flag_table_for`)."""
        return flag_table_for(strings, lowercase)

    def __call__(self, line: str) -> str:
        line = line.strip()
        line_in_chars = ""
        for char in line:
            if is_chinese_char(char):
                line_in_chars += " "
                line_in_chars += char
                line_in_chars += " "
            else:
                line_in_chars += char
        return regexp_post_tokenize(line_in_chars)

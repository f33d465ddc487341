"""``zh``: Chinese characters become tokens, the rest goes through 13a's regexps.

Mirrors sacrebleu 2.6.0's ``TokenizerZh``. Its range table is kept verbatim, including the
bounds that are two-character strings (``'\\u20000'`` is U+2000 followed by ``'0'``; see
sacrebleu issue #298). ``start <= char <= end`` on those strings is what sacrebleu evaluates,
so it is what we evaluate too: :func:`chinese_ranges` turns each comparison into the exact set
of code points it accepts.
"""

from __future__ import annotations

from functools import lru_cache
from typing import List, Tuple

from .base import Tokenizer
from .tokenizer_13a import regexp_post_tokenize
from ._unicode import flag_table

UCODE_RANGES = [
    ("\u3400", "\u4db5"),  # CJK Unified Ideographs Extension A, release 3.0
    ("\u4e00", "\u9fa5"),  # CJK Unified Ideographs, release 1.1
    ("\u9fa6", "\u9fbb"),  # CJK Unified Ideographs, release 4.1
    ("\uf900", "\ufa2d"),  # CJK Compatibility Ideographs, release 1.1
    ("\ufa30", "\ufa6a"),  # CJK Compatibility Ideographs, release 3.2
    ("\ufa70", "\ufad9"),  # CJK Compatibility Ideographs, release 4.1
    ("\u20000", "\u2a6d6"),  # two-character strings in sacrebleu, kept as they are
    ("\u2f800", "\u2fa1d"),  # two-character strings in sacrebleu, kept as they are
    ("\uff00", "\uffef"),  # Full width ASCII, punctuation, half width kana, Korean alphabet
    ("\u2e80", "\u2eff"),  # CJK Radicals Supplement
    ("\u3000", "\u303f"),  # CJK punctuation mark
    ("\u31c0", "\u31ef"),  # CJK stroke
    ("\u2f00", "\u2fdf"),  # Kangxi Radicals
    ("\u2ff0", "\u2fff"),  # Chinese character structure
    ("\u3100", "\u312f"),  # Phonetic symbols
    ("\u31a0", "\u31bf"),  # Phonetic symbols (Taiwanese and Hakka expansion)
    ("\ufe10", "\ufe1f"),
    ("\ufe30", "\ufe4f"),
    ("\u2600", "\u26ff"),
    ("\u2700", "\u27bf"),
    ("\u3200", "\u32ff"),
    ("\u3300", "\u33ff"),
]


def is_chinese_char(uchar: str) -> bool:
    """sacrebleu's ``TokenizerZh._is_chinese_char``, verbatim."""
    for start, end in UCODE_RANGES:
        if start <= uchar <= end:
            return True
    return False


def _first_cp(pred) -> int:
    """Smallest code point c (0..0x110000) with pred(chr(c)) true, for a monotone pred."""
    lo, hi = 0, 0x110000
    while lo < hi:
        mid = (lo + hi) // 2
        if pred(chr(mid)):
            hi = mid
        else:
            lo = mid + 1
    return lo


@lru_cache(maxsize=None)
def chinese_ranges() -> List[Tuple[int, int]]:
    """Inclusive code point ranges accepted by :func:`is_chinese_char`.

    For one character ``c``, ``start <= c`` and ``c <= end`` are monotone in ``ord(c)``, so
    each range is found by bisection on the comparison itself: exact, whatever the strings.
    """
    out = []
    for start, end in UCODE_RANGES:
        lo = _first_cp(lambda c, s=start: s <= c)
        hi = _first_cp(lambda c, e=end: not (c <= e)) - 1
        if lo <= hi:
            out.append((lo, hi))
    return out


class TokenizerZh(Tokenizer):
    name = "zh"
    kernel_id = 3

    def flags(self):
        return flag_table()

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

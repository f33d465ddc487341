"""The Unicode flag table the batch kernel reads: one byte per code point.

Bits (see ``_bleu.c``): 1 = ``\\p{N}``, 2 = ``\\p{P}``, 4 = ``\\p{S}`` as the installed
``regex`` module classifies them (sacrebleu's ``intl`` uses that module), 8 = Chinese character
as sacrebleu's ``zh`` range comparisons decide. Computed once per process from those sources,
never from a copy of their data, so the kernel agrees with them whatever their versions.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

UNI_SIZE = 0x110000
F_N, F_P, F_S, F_ZH = 1, 2, 4, 8


def _all_chars():
    cps = np.arange(UNI_SIZE, dtype="<u4")
    cps = cps[(cps < 0xD800) | (cps > 0xDFFF)]  # surrogates cannot occur in UTF-8 text
    return cps.tobytes().decode("utf-32-le")


def _members(pattern, text) -> np.ndarray:
    kept = pattern.sub("", text)
    return np.frombuffer(kept.encode("utf-32-le"), dtype="<u4")


@lru_cache(maxsize=None)
def flag_table() -> bytes:
    import regex

    from .tokenizer_zh import chinese_ranges

    text = _all_chars()
    flags = np.zeros(UNI_SIZE, dtype=np.uint8)
    for bit, pattern in ((F_N, r"\P{N}"), (F_P, r"\P{P}"), (F_S, r"\P{S}")):
        # remove everything outside the class: what is left is the class
        flags[_members(regex.compile(pattern), text)] |= bit
    for lo, hi in chinese_ranges():
        flags[lo : hi + 1] |= F_ZH
    return flags.tobytes()

"""sacrebleu's ``sacrebleu.metrics.helpers``: word and character n-gram counts of one line."""

from __future__ import annotations

from collections import Counter
from typing import List, Tuple

__all__ = ["extract_all_word_ngrams", "extract_word_ngrams", "extract_char_ngrams", "extract_all_char_ngrams"]


def extract_all_word_ngrams(line: str, min_order: int, max_order: int) -> Tuple[Counter, int]:
    """(the counts of the word n-grams of ``line``, as tuples of words, of every order from
    ``min_order`` to ``max_order``; the number of words)."""
    words = line.split()
    counts = Counter(tuple(words[i:i + n]) for n in range(min_order, max_order + 1)
                     for i in range(len(words) - n + 1))
    return counts, len(words)


def extract_word_ngrams(tokens: List[str], n: int) -> Counter:
    """The counts of the ``n``-grams of ``tokens``, each the words joined by a space."""
    return Counter(" ".join(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def _chars(line: str, include_whitespace: bool) -> str:
    return line if include_whitespace else "".join(line.split())


def extract_char_ngrams(line: str, n: int, include_whitespace: bool = False) -> Counter:
    """The counts of the character ``n``-grams of ``line`` (whitespace removed first, unless
    ``include_whitespace``)."""
    chars = _chars(line, include_whitespace)
    return Counter(chars[i:i + n] for i in range(len(chars) - n + 1))


def extract_all_char_ngrams(line: str, max_order: int, include_whitespace: bool = False) -> List[Counter]:
    """:func:`extract_char_ngrams` of each order 1 .. ``max_order``."""
    chars = _chars(line, include_whitespace)
    return [Counter(chars[i:i + n] for i in range(len(chars) - n + 1)) for n in range(1, max_order + 1)]

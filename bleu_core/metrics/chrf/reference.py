"""chrF's readable one-pair path: character and word n-grams counted with ``Counter``, as
sacrebleu 2.6.0 counts them (the kernel, ``_chrf.c``, gives the same statistics)."""

from __future__ import annotations

import string
from collections import Counter
from collections.abc import Sequence

__all__ = ["PUNCTUATION", "char_ngrams", "order_stats", "split_words", "word_ngrams"]

#: the marks chrF++ splits off a word (``string.punctuation``, as in sacrebleu)
PUNCTUATION = frozenset(string.punctuation)


def char_ngrams(text: str, n: int) -> Counter:
    """The character n-grams of ``text`` (runs of ``n`` code points), counted."""
    return Counter(text[i : i + n] for i in range(len(text) - n + 1))


def split_words(text: str) -> list[str]:
    """chrF++'s words: whitespace-separated tokens, with a punctuation mark at the end of a
    token (or, failing that, at its start) made a word of its own. Only one mark is split off:
    ``"(hi)"`` gives ``"(hi"`` and ``")"``, as in sacrebleu."""
    words = []
    for token in text.split():
        if len(token) > 1 and token[-1] in PUNCTUATION:
            words += [token[:-1], token[-1]]
        elif len(token) > 1 and token[0] in PUNCTUATION:
            words += [token[0], token[1:]]
        else:
            words.append(token)
    return words


def word_ngrams(words: Sequence[str], n: int) -> Counter:
    """The word n-grams of ``words`` (tuples of ``n`` consecutive words), counted."""
    return Counter(tuple(words[i : i + n]) for i in range(len(words) - n + 1))


def order_stats(hyp: Counter, ref: Counter) -> list[int]:
    """``[hyp, ref, match]`` for one order: n-gram totals and the size of the multiset
    intersection. A reference without n-grams of this order leaves nothing to match, and the
    candidate's n-grams are then not counted either."""
    match = sum(min(count, ref[gram]) for gram, count in hyp.items())
    return [sum(hyp.values()) if ref else 0, sum(ref.values()), match]

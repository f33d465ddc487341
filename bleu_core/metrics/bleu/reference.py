"""BLEU's sufficient statistics: the vector, and the scalar reference path that reads like the paper.

The vector has sacrebleu's layout, ``[c, r, matches_1..N, totals_1..N]``:

* ``c``: candidate length in tokens;
* ``r``: the length of the reference closest to ``c`` (ties go to the shorter reference);
* ``matches_n``: candidate n-grams matched, each n-gram's count clipped to the largest number of
  times it occurs in any single reference (Papineni et al., 2002, "modified precision");
* ``totals_n``: candidate n-grams, ``max(0, c - n + 1)``.

Vectors of different pairs add; the score is a function of the sum only.
"""

from __future__ import annotations

from collections import Counter

from ...sums import checked_add
from .score import BleuScore, check_stats, compute_bleu, stat_names

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Iterable, List, Optional, Sequence, Tuple

    import numpy as np

__all__ = ["BleuStats", "closest_ref_len", "ngrams", "pair_stats", "preprocess", "scalar_stats"]


class BleuStats:
    """A BLEU statistics vector (int64, sacrebleu's layout) that adds.

    The constructor validates its input (:func:`bleu_core.metrics.bleu.score.check_stats`: integers in
    0 .. 2**63 - 1, ``matches_n <= totals_n``, 2 + 2N values); ``+`` and :meth:`sum` raise
    OverflowError rather than wrap.

    >>> a = BleuStats([5, 6, 5, 3, 2, 1, 5, 4, 3, 2])
    >>> (a + BleuStats.zero(4)).vector.tolist() == a.vector.tolist()
    True
    """

    __slots__ = ("vector",)

    def __init__(self, vector):
        import numpy as np

        self.vector = np.array(check_stats(vector), dtype=np.int64)

    @classmethod
    def zero(cls, max_ngram_order: int = 4) -> "BleuStats":
        import numpy as np

        return cls(np.zeros(2 + 2 * max_ngram_order, dtype=np.int64))

    @classmethod
    def sum(cls, items: Iterable["BleuStats"], max_ngram_order: Optional[int] = None) -> "BleuStats":
        """Sum of statistics (rows of a matrix, or BleuStats), each validated."""
        total = None
        for item in items:
            item = cls(item.vector if isinstance(item, BleuStats) else item)
            total = item if total is None else total + item
        if total is None:
            if max_ngram_order is None:
                raise ValueError("the sum of no statistics needs max_ngram_order")
            return cls.zero(max_ngram_order)
        return total

    @property
    def max_ngram_order(self) -> int:
        return (self.vector.size - 2) // 2

    @property
    def sys_len(self) -> int:
        return int(self.vector[0])

    @property
    def ref_len(self) -> int:
        return int(self.vector[1])

    @property
    def counts(self) -> List[int]:
        return [int(x) for x in self.vector[2 : 2 + self.max_ngram_order]]

    @property
    def totals(self) -> List[int]:
        return [int(x) for x in self.vector[2 + self.max_ngram_order :]]

    def __add__(self, other: "BleuStats") -> "BleuStats":
        if not isinstance(other, BleuStats):
            return NotImplemented
        if other.vector.size != self.vector.size:
            raise ValueError("cannot add statistics of different max n-gram orders")
        names = stat_names(self.max_ngram_order)
        return BleuStats(checked_add(self.vector, other.vector, what="the sum of BLEU statistics",
                                     name=names.__getitem__))

    def __radd__(self, other):
        if other == 0:  # so that sum([...]) works
            return self
        return NotImplemented

    def __eq__(self, other) -> bool:
        import numpy as np

        return isinstance(other, BleuStats) and np.array_equal(self.vector, other.vector)

    def __repr__(self) -> str:
        return f"BleuStats({self.vector.tolist()})"

    def tolist(self) -> List[int]:
        return [int(x) for x in self.vector]

    def score(self, **options) -> BleuScore:
        """Brevity penalty and geometric mean, applied once, on these totals. ``options`` are
        :func:`~bleu_core.metrics.bleu.score.compute_bleu`'s keywords (``smooth_method``, ``smooth_value``,
        ``effective_order``, ``weights``, ``signature``); the order is these statistics'."""
        return compute_bleu(self.vector, max_ngram_order=self.max_ngram_order, **options)


# ----------------------------------------------------------------------------- scalar path


def ngrams(tokens: Sequence[str], max_order: int) -> Counter:
    """All n-grams of orders 1..max_order, counted."""
    return Counter(tuple(tokens[i : i + n]) for n in range(1, max_order + 1) for i in range(len(tokens) - n + 1))


def closest_ref_len(hyp_len: int, ref_lens: Sequence[int]) -> int:
    """The reference length closest to ``hyp_len``; on a tie, the shorter one."""
    return min(ref_lens, key=lambda r: (abs(hyp_len - r), r))


def pair_stats(hyp_tokens: Sequence[str], refs_tokens: Sequence[Sequence[str]], max_order: int) -> List[int]:
    """Statistics of one candidate against its references (already tokenized)."""
    if not refs_tokens:
        raise ValueError("a candidate needs at least one reference")
    hyp_ngrams = ngrams(hyp_tokens, max_order)
    # the clip of an n-gram is its largest count in any single reference
    max_ref = Counter()
    for ref in refs_tokens:
        for gram, count in ngrams(ref, max_order).items():
            if count > max_ref[gram]:
                max_ref[gram] = count
    matches = [0] * max_order
    totals = [0] * max_order
    for gram, count in hyp_ngrams.items():
        totals[len(gram) - 1] += count
        matches[len(gram) - 1] += min(count, max_ref[gram])
    c = len(hyp_tokens)
    r = closest_ref_len(c, [len(ref) for ref in refs_tokens])
    return [c, r] + matches + totals


def preprocess(line: str, tokenizer, lowercase: bool) -> List[str]:
    """sacrebleu's ``_preprocess_segment`` then ``str.split()``."""
    if lowercase:
        line = line.lower()
    return tokenizer(line.rstrip()).split()


def scalar_stats(
    candidates: Sequence[str],
    references: Sequence[Sequence[Optional[str]]],
    *,
    tokenizer,
    lowercase: bool,
    max_order: int,
) -> Tuple[np.ndarray, set]:
    """One row per pair, one pair at a time (the reference path).

    Returns the ``int64[n, 2+2N]`` matrix and the set of reference counts seen.
    """
    rows = []
    nrefs = set()
    for i, (hyp, refs) in enumerate(zip(candidates, references)):
        present = [r for r in refs if r is not None]
        if not present:
            raise ValueError(f"references[{i}]: no reference (all references are missing)")
        nrefs.add(len(present))
        rows.append(
            pair_stats(
                preprocess(hyp, tokenizer, lowercase),
                [preprocess(r, tokenizer, lowercase) for r in present],
                max_order,
            )
        )
    import numpy as np

    matrix = np.array(rows, dtype=np.int64).reshape(len(rows), 2 + 2 * max_order)
    return matrix, nrefs

"""The public API: ``Bleu`` (a configured metric), ``corpus_bleu`` and ``sentence_bleu``."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence, Tuple

import numpy as np
import pyarrow as pa

from .batch import batch_stats
from .score import BleuScore, Signature, check_order, check_smoothing, check_weights, stat_names
from .stats import BleuStats, checked_add, column_sums, scalar_stats
from .tokenizers import check_tokenizer_name, get_tokenizer

#: pairs converted to Arrow and scored per kernel call by ``corpus_bleu``; bounds memory
CHUNK = 20_000


def chunked(pairs, size: int = CHUNK):
    """``(candidates, references)`` lists of up to ``size`` pairs at a time from (candidate, refs) pairs."""
    pairs = iter(pairs)
    while True:
        chunk = list(itertools.islice(pairs, size))
        if not chunk:
            return
        yield [h for h, _ in chunk], [r for _, r in chunk]


@dataclass(frozen=True)
class Bleu:
    """BLEU with its options fixed: extracts statistics, scores them, names the signature.

    Options and defaults are sacrebleu's ``BLEU``'s; ``weights`` (per-order weights of the
    geometric mean, uniform when ``None``) is our addition.
    """

    tokenize: str = "13a"
    lowercase: bool = False
    smooth_method: str = "exp"
    smooth_value: Optional[float] = None
    max_ngram_order: int = 4
    effective_order: bool = False
    weights: Optional[Tuple[float, ...]] = None

    def __post_init__(self):
        check_tokenizer_name(self.tokenize)
        if not isinstance(self.lowercase, bool):
            raise TypeError(f"lowercase must be a bool, got {type(self.lowercase).__name__}")
        if not isinstance(self.effective_order, bool):
            raise TypeError(f"effective_order must be a bool, got {type(self.effective_order).__name__}")
        check_smoothing(self.smooth_method, self.smooth_value)
        check_order(self.max_ngram_order)
        object.__setattr__(self, "weights", check_weights(self.weights, self.max_ngram_order))

    @property
    def tokenizer(self):
        return get_tokenizer(self.tokenize)

    # -- statistics ------------------------------------------------------------------------

    def batch_stats(self, candidates, references, per_row: bool = True, _stop_after: int = 3) -> np.ndarray:
        """Statistics of one batch with the vectorised kernel (see :func:`bleu_core.batch.batch_stats`)."""
        return batch_stats(
            candidates,
            references,
            tokenize=self.tokenize,
            lowercase=self.lowercase,
            max_ngram_order=self.max_ngram_order,
            per_row=per_row,
            _stop_after=_stop_after,
        )

    def scalar_stats(self, candidates, references) -> np.ndarray:
        """Statistics with the readable one-pair-at-a-time reference path."""
        return scalar_stats(
            candidates, references, tokenizer=self.tokenizer, lowercase=self.lowercase, max_order=self.max_ngram_order
        )[0]

    def corpus_stats(self, candidates: Iterable[str], references: Iterable[Sequence[Optional[str]]]):
        """Summed statistics and the set of reference counts, streaming in chunks."""
        total = np.zeros(2 + 2 * self.max_ngram_order, dtype=np.int64)
        nrefs = set()
        offset = 0
        for hyps, refs in chunked(_checked_pairs(candidates, references)):
            for r in refs:
                nrefs.add(sum(x is not None for x in r))
            try:
                arrays = (pa.array(hyps, type=pa.large_string()), pa.array(refs, type=pa.large_list(pa.large_string())))
            except (pa.ArrowException, UnicodeError):
                arrays = None  # e.g. lone surrogates, which have no UTF-8 form: use the scalar path
            try:
                if arrays is None:
                    part = column_sums(self.scalar_stats(hyps, refs))
                else:
                    part = self.batch_stats(*arrays, per_row=False)
            except ValueError as exc:
                row = getattr(exc, "row", None)
                if row is not None:
                    raise ValueError(f"references[{offset + row}]: {exc.reason}" if exc.column == "references"
                                     else f"candidates[{offset + row}]: {exc.reason}") from None
                raise
            checked_add(total, part, out=total, what="the corpus statistics",
                        name=stat_names(self.max_ngram_order).__getitem__)
            offset += len(hyps)
        if offset == 0:
            raise ValueError("candidates: no segments to score")
        return BleuStats(total), nrefs

    # -- scores ----------------------------------------------------------------------------

    def signature(self, nrefs, n_bootstrap=None, seed=None) -> Signature:
        if isinstance(nrefs, (set, frozenset)):
            nrefs = next(iter(nrefs)) if len(nrefs) == 1 else "var"
        return Signature(
            nrefs=nrefs,
            tokenizer_signature=self.tokenizer.signature(),
            lowercase=self.lowercase,
            effective_order=self.effective_order,
            smooth_method=self.smooth_method,
            smooth_value=self.smooth_value,
            max_ngram_order=self.max_ngram_order,
            weights=self.weights,
            n_bootstrap=n_bootstrap,
            seed=seed,
        )

    def score(self, stats, nrefs=None, n_bootstrap=None, seed=None) -> BleuScore:
        """Score a statistics vector (BleuStats, or a sequence validated as ``BleuStats`` does);
        ``nrefs`` fills the signature (with ``bs:``/``seed:`` when ``n_bootstrap`` is given)."""
        if not isinstance(stats, BleuStats):
            stats = BleuStats(stats)
        if stats.max_ngram_order != self.max_ngram_order:
            raise ValueError(
                f"stats are for max_ngram_order={stats.max_ngram_order}, the metric uses {self.max_ngram_order}"
            )
        sig = None if nrefs is None else self.signature(nrefs, n_bootstrap, seed).format()
        return stats.score(self.smooth_method, self.smooth_value, self.effective_order, self.weights, sig)

    def corpus_score(self, candidates, references) -> BleuScore:
        stats, nrefs = self.corpus_stats(candidates, references)
        return self.score(stats, nrefs)


def _checked_pairs(candidates, references):
    if isinstance(candidates, str):
        raise TypeError("candidates must be a sequence of strings, not a single string")
    if isinstance(references, str):
        raise TypeError("references must be a sequence of reference lists, not a single string")
    sentinel = object()
    for i, (hyp, refs) in enumerate(itertools.zip_longest(candidates, references, fillvalue=sentinel)):
        if hyp is sentinel or refs is sentinel:
            raise ValueError(
                "candidates and references have different lengths "
                f"({'more references' if hyp is sentinel else 'more candidates'} after item {i})"
            )
        if not isinstance(hyp, str):
            if hyp is None:
                raise ValueError(f"candidates[{i}] is None")
            raise TypeError(f"candidates[{i}] must be a str, got {type(hyp).__name__}")
        if isinstance(refs, str) or not isinstance(refs, Sequence):
            raise TypeError(f"references[{i}] must be a list of reference strings (one list per candidate)")
        for j, r in enumerate(refs):
            if r is not None and not isinstance(r, str):
                raise TypeError(f"references[{i}][{j}] must be a str or None, got {type(r).__name__}")
        if all(r is None for r in refs):
            raise ValueError(f"references[{i}]: no reference (all references are missing)")
        yield hyp, refs


def corpus_bleu(
    candidates: Iterable[str],
    references: Iterable[Sequence[Optional[str]]],
    *,
    tokenize: str = "13a",
    lowercase: bool = False,
    smooth_method: str = "exp",
    smooth_value: Optional[float] = None,
    max_ngram_order: int = 4,
    effective_order: bool = False,
    weights: Optional[Sequence[float]] = None,
) -> BleuScore:
    """Corpus BLEU, equal to sacrebleu 2.6.0's ``BLEU(...).corpus_score``.

    ``references[i]`` is the list of references of ``candidates[i]``; ``None`` marks a missing
    reference, ``""`` is a real empty one. Statistics are summed over the corpus, and the
    brevity penalty and geometric mean are applied once, to the sums.
    """
    metric = Bleu(tokenize, lowercase, smooth_method, smooth_value, max_ngram_order, effective_order,
                  None if weights is None else tuple(weights))
    return metric.corpus_score(candidates, references)


def sentence_bleu(
    candidate: str,
    references: Sequence[Optional[str]],
    *,
    tokenize: str = "13a",
    lowercase: bool = False,
    smooth_method: str = "exp",
    smooth_value: Optional[float] = None,
    max_ngram_order: int = 4,
    effective_order: bool = True,
    weights: Optional[Sequence[float]] = None,
) -> BleuScore:
    """BLEU of one candidate against its references.

    Like ``sacrebleu.sentence_bleu``, effective order is on by default; with the same options
    the result equals sacrebleu's ``BLEU(...).sentence_score``.
    """
    if not isinstance(candidate, str):
        raise TypeError(f"candidate must be a str, got {type(candidate).__name__}")
    if isinstance(references, str) or not isinstance(references, Sequence):
        raise TypeError("references must be a list of reference strings")
    return corpus_bleu(
        [candidate],
        [references],
        tokenize=tokenize,
        lowercase=lowercase,
        smooth_method=smooth_method,
        smooth_value=smooth_value,
        max_ngram_order=max_ngram_order,
        effective_order=effective_order,
        weights=weights,
    )

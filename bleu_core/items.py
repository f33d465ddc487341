"""Per-item statistics for evaluation harnesses: count once, score any set of items later.

A harness scores items one at a time (an example, a batch), keeps what it needs per item, and
aggregates at the end. For a corpus metric that must not be an average of sentence scores:
beambleu's statistics are what to keep (see ``docs/ARCHITECTURE.md``, "a corpus metric is a
sum")::

    stats = item_stats("bleu", candidates, references)   # int64[n_items, width], the C kernels
    corpus_score("bleu", stats).score                    # sacrebleu's corpus BLEU of the items
    bootstrap("bleu", stats, 1000, seed=0).std()         # the bootstrap's standard error

``references[i]`` is the list of references of ``candidates[i]`` (``None`` marks a missing one),
the layout that cannot be transposed by mistake: sacrebleu's layout (one list per reference
stream) is refused when it is recognisable (see :func:`item_stats`).

``metric`` is a metric id of :mod:`bleu_core.registry` (``"bleu"``, ``"chrf"``, ``"ter"``, a
plugin's) with its constructor's options as keywords (``item_stats("bleu", c, r, tokenize="zh")``,
``corpus_score("chrf", stats, word_order=2)``), or a :class:`~bleu_core.protocol.Metric` object
(``Bleu(tokenize="zh")``), then without options. Options that change the statistics (the
tokenizer, the case, chrF's orders) must be the same in :func:`item_stats` and in the scoring
calls; the score's own options (smoothing, effective order) may differ between them.

:func:`bootstrap` resamples the items with replacement (each replicate: n items drawn from the n,
a multinomial count per item) and scores each replicate's totals as sacrebleu's
``corpus_score`` scores those items: 100,000 replicates of 10,000 items are about 10**9 draws,
made and summed in numpy blocks, never one Python object per item or per draw
(``python -m benchmarks.items``). :func:`resample_counts` gives the counts it draws for a seed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import Decimal, localcontext
from typing import Optional, Union

import numpy as np

from . import registry
from .compat import BLEUScore, CHRFScore, Score, TERScore
from .metrics.bleu import Bleu
from .metrics.bleu.score import SMOOTH_DEFAULTS
from .metrics.chrf import Chrf
from .metrics.ter import Ter
from .protocol import Metric, checked_chunks
from .resampling.sacrebleu import exact_scores
from .sums import column_sums

__all__ = ["BLOCK_CELLS", "bootstrap", "corpus_score", "item_stats", "metric_of", "resample_counts"]

#: resamples x items drawn per block of :func:`bootstrap` (their counts stay in the CPU caches)
BLOCK_CELLS = 1 << 18
#: largest count the Poisson stage draws for one item (P(Poisson(1) > 20) < 2**-61)
_MAX_POISSON = 20
#: the Poisson stage's rate is 1 - _DEFICIT / sqrt(n): see :class:`_Draws`
_DEFICIT = 2.0
_STRADDLE = 255
#: items per matrix product in :func:`bootstrap`
_SLICE = 512
#: the element kinds of the kernel's count matrices (``_resample.poisson_level1``)
_KINDS = {np.float32: 0, np.float64: 1, np.int64: 2}

MetricLike = Union[str, Metric]


# ------------------------------------------------------------------------------ the metric


def metric_of(metric: MetricLike, **options) -> Metric:
    """The :class:`~bleu_core.protocol.Metric` that ``metric`` names: an id of the registry made
    with ``options`` (its constructor's keywords), or a metric object given without options.
    ValueError (one line) for an unknown id; the constructor's TypeError/ValueError for a bad option."""
    if isinstance(metric, Metric):
        if options:
            raise TypeError(f"options ({', '.join(sorted(options))}) are given with a metric object; "
                            "give them to its constructor, or pass the metric's id")
        return metric
    if not isinstance(metric, str):
        raise TypeError(f"metric must be a metric id (str) or a bleu_core Metric, got {type(metric).__name__}")
    try:
        cls = registry.get(metric)
    except registry.UnknownMetric as exc:
        raise ValueError(str(exc).strip("\"'")) from None
    return cls(**options)


# ------------------------------------------------------------------------------ statistics


def item_stats(metric: MetricLike, candidates: Sequence[str], references: Sequence[Sequence[Optional[str]]],
               **options) -> np.ndarray:
    """``int64[n_items, width]``: the statistics of each candidate against its own references
    (``references[i]``: a list of strings, ``None`` for a missing reference), computed by the
    metric's batch path (the C kernels of the built-ins), row i for item i.

    One-line errors: ValueError when ``references`` is not one list per candidate (a different
    length, which is what sacrebleu's reference streams usually have) or an item has no
    reference; TypeError when ``references`` holds strings instead of lists (one reference per
    candidate is written ``[[r] for r in refs]``) or an item is not text."""
    m = metric_of(metric, **options)
    candidates, references = _check_layout(candidates, references)
    m.load()
    parts, offset = [], 0
    for hyps, refs in checked_chunks(candidates, references):
        rows = m.chunk_stats(hyps, refs, offset, per_row=True)
        parts.append(np.asarray(rows, dtype=np.int64).reshape(len(hyps), m.width))
        offset += len(hyps)
    if not parts:
        return np.zeros((0, m.width), dtype=np.int64)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _check_layout(candidates, references):
    """The two lists, if they look like one list of references per candidate (one-line errors)."""
    if isinstance(candidates, str) or not isinstance(candidates, (Sequence, np.ndarray)):
        raise TypeError("candidates must be a list of strings")
    if isinstance(references, str) or not isinstance(references, (Sequence, np.ndarray)):
        raise TypeError("references must be a list with one list of references per candidate")
    if len(references) != len(candidates):
        raise ValueError(f"{len(candidates)} candidates but {len(references)} reference lists: references[i] must be "
                         "the list of references of candidates[i] (sacrebleu's reference streams are the transpose)")
    for i, refs in enumerate(references):
        if isinstance(refs, str):
            raise TypeError(f"references[{i}] is a string, not a list of references "
                            "(one reference per candidate: [[r] for r in references])")
    return candidates, references


def _stats(m: Metric, stats, two_d: bool = False) -> np.ndarray:
    """``stats`` as an int64 matrix of ``m``'s width (a 1-D totals vector is one row unless ``two_d``)."""
    arr = np.asarray(stats)
    # integral floats (a harness that stored the rows as floats) are taken as they are
    if arr.dtype.kind not in "iu" and not (arr.dtype.kind == "f" and np.isfinite(arr).all()
                                           and np.array_equal(arr, np.trunc(arr))):
        raise TypeError(f"stats must hold integers (item_stats' int64 rows), got {arr.dtype}")
    if arr.dtype.kind == "f" and arr.size and np.abs(arr).max() >= 2.0**63:
        raise OverflowError("stats holds values beyond int64")
    if arr.ndim == 1 and not two_d:
        arr = arr.reshape(1, -1)
    if arr.ndim != 2:
        raise ValueError(f"stats must be a matrix int64[n_items, width] (item_stats' result), got shape {arr.shape}")
    if arr.shape[1] != m.width:
        raise ValueError(f"stats has {arr.shape[1]} columns but {m.name}'s statistics have {m.width}: "
                         "were they made by item_stats with this metric and its options?")
    if arr.shape[0] == 0:
        raise ValueError("stats has no items to score")
    if arr.dtype.kind == "u" and arr.size and arr.max() > np.iinfo(np.int64).max:
        raise OverflowError("stats holds values beyond int64")
    arr = arr.astype(np.int64, copy=False)
    if (arr < 0).any():
        row = int(np.flatnonzero((arr < 0).any(axis=1))[0])
        raise ValueError(f"stats[{row}] holds a negative statistic (not one of item_stats' rows)")
    return arr


# ------------------------------------------------------------------------------ scores


def corpus_score(metric: MetricLike, stats, **options) -> Score:
    """The corpus score of the items whose statistics are the rows of ``stats`` (item_stats'
    matrix, or already summed: a 1-D totals vector), as a sacrebleu-like score object of
    :mod:`bleu_core.compat`: ``.score``, sacrebleu's attributes (BLEU: ``counts``, ``totals``,
    ``precisions``, ``bp``, ``sys_len``, ``ref_len``; chrF: ``char_order``, ``word_order``,
    ``beta``; TER: ``num_edits``, ``ref_length``), and ``str()``/``format()`` as sacrebleu's.
    The columns are summed exactly (OverflowError past int64) and scored once. TER's reference
    length is sacrebleu's float sum of the items' average lengths in row order when rows are given."""
    m = metric_of(metric, **options)
    rows = _stats(m, stats)
    totals = m.check_stats(column_sums(rows, what=f"the corpus statistics of {m.name}", name=m.stat_name))
    if isinstance(m, Ter):
        ref_length = Ter.ordered_ref_length(rows) if np.asarray(stats).ndim == 2 else None
        core = m.score(totals, ref_length=ref_length)
        return TERScore(core.score, core.num_edits, core.ref_length)
    core = m.score(totals)
    if isinstance(m, Bleu):
        counts, tots = list(core.counts), list(core.totals)
        if m.smooth_method == "add-k" and any(counts):  # sacrebleu reports its add-k counts as it smoothed them
            k = SMOOTH_DEFAULTS["add-k"] if m.smooth_value is None else m.smooth_value
            counts[1:] = [c + k for c in counts[1:]]
            tots[1:] = [t + k for t in tots[1:]]
        return BLEUScore(core.score, counts, tots, list(core.precisions), core.bp, core.sys_len, core.ref_len)
    if isinstance(m, Chrf):
        return CHRFScore(core.score, m.char_order, m.word_order, m.beta)
    return Score(core.name, core.score)


# ------------------------------------------------------------------------------ the bootstrap


def _poisson_thresholds(lam: float) -> np.ndarray:
    """T[k] = floor(P(X <= k) * 2**64) for X ~ Poisson(lam), k < _MAX_POISSON, in 60-digit
    decimal arithmetic (the same integers on every platform); a 64-bit uniform U gives the count
    ``#{k: T[k] <= U}``."""
    with localcontext() as ctx:
        ctx.prec = 60
        rate = Decimal(lam)
        e = (-rate).exp()
        term, cdf, out = Decimal(1), Decimal(0), []
        for k in range(_MAX_POISSON):
            if k:
                term = term * rate / k
            cdf += term
            out.append(min(int(cdf * e * (1 << 64)), (1 << 64) - 1))
    return np.array(out, dtype=np.uint64)


def _level_table(thresholds: np.ndarray, bits: int) -> np.ndarray:
    """uint8[2**bits]: the count of every uniform whose top ``bits`` bits are the index, or 255
    where a threshold falls inside that range (more bits decide)."""
    keys = np.arange(1 << bits, dtype=np.uint64)
    low = keys << np.uint64(64 - bits)
    high = low | np.uint64((1 << (64 - bits)) - 1)
    a = np.searchsorted(thresholds, low, side="right")
    b = np.searchsorted(thresholds, high, side="right")
    return np.where(a == b, a, _STRADDLE).astype(np.uint8)


class _Draws:
    """The resamples of n items, block by block, from one numpy generator.

    A replicate's counts are multinomial(n; 1/n each), drawn in two exact stages. First every
    item gets an independent Poisson(lam) count (lam = 1 - 2/sqrt(n)): given their total t, such
    counts are multinomial(t; 1/n each), whatever the distribution of t. A replicate with t > n
    is drawn again (about 2% of them); otherwise n - t more items are drawn uniformly, which
    makes the counts multinomial(n) (t draws, then n - t more, all independent and uniform).
    The Poisson counts are the exact inverse CDF of a 64-bit uniform, whose bits are read only as
    far as needed: its first byte decides the count for about 98% of the items (one table
    lookup, written as the block's matrix element by ``_resample.poisson_level1``), the second
    byte for all but about 1 in 8,000 of the rest, the remaining bits (a 64-bit comparison) for
    those."""

    def __init__(self, n_items: int, rng: np.random.Generator):
        from .resampling import _resample  # the compiled kernel: a missing build fails this call only

        self.kernel = _resample
        self.n = n_items
        self.rng = rng
        self.bits = rng.bit_generator
        self.lam = max(0.0, 1.0 - _DEFICIT / math.sqrt(n_items))
        self.thresholds = _poisson_thresholds(self.lam)
        self.level1 = _level_table(self.thresholds, 8)
        self.level2 = _level_table(self.thresholds, 16)
        self.rows = max(1, BLOCK_CELLS // n_items)
        self.pos = np.empty(self.rows * n_items, dtype=np.int64)  # the straddle cells of a block

    def _bytes(self, k: int) -> np.ndarray:
        return self.bits.random_raw((k + 7) // 8).view(np.uint8)[:k]

    def poisson(self, out: np.ndarray) -> None:
        """Draws the Poisson counts of ``out`` (a C-contiguous float32, float64 or int64 matrix of
        rows x n items, the whole of a block), in place: the first bytes of all its cells, the
        second bytes of the cells the first left undecided (255 in level1), in order, then the
        rest of the 64 bits of the cells the second left undecided. The byte work is the
        kernel's (``poisson_level1``, ``poisson_level2``)."""
        if self.lam == 0.0:
            out[...] = 0
            return
        kind = _KINDS[out.dtype.type]
        flat = out.reshape(-1)
        raw = self._bytes(flat.size)
        count = self.kernel.poisson_level1(raw, self.level1, flat, kind, self.pos)
        if not count:
            return
        second = self._bytes(count)
        late = np.empty(count, dtype=np.int64)
        n_late = self.kernel.poisson_level2(raw, self.pos, count, second, self.level2, flat, kind, late)
        if n_late:
            j = late[:n_late]
            p = self.pos[j]
            key = (raw[p].astype(np.uint64) << np.uint64(8)) | second[j]
            u = (key << np.uint64(48)) | (self.bits.random_raw(n_late) >> np.uint64(16))
            flat[p] = np.searchsorted(self.thresholds, u, side="right")

    def extra(self, deficits: np.ndarray) -> np.ndarray:
        """The items drawn to fill each row's deficit, row after row."""
        return self.rng.integers(0, self.n, size=int(deficits.sum()), dtype=np.int64)

    def blocks(self, n_resamples: int, dtype, consume):
        """Run ``consume(counts, r) -> (row totals t, payload)`` on each block (``counts``: the
        block's r x n counts as ``dtype``, one matrix reused by every block), then ``payload``
        (with the accepted rows, every row's deficit, and the extra items, row after row) is
        yielded; stops once ``n_resamples`` rows are accepted. Every block has the same number of
        rows (the last one's surplus is dropped), so the first b resamples are the same whatever
        the number asked for."""
        done = 0
        r = self.rows
        counts = np.empty((r, self.n), dtype=dtype)
        while done < n_resamples:
            self.poisson(counts)
            t, payload = consume(counts, r)
            ok = t <= self.n
            deficits = np.where(ok, self.n - t, 0).astype(np.int64)
            extra = self.extra(deficits)
            take = min(int(ok.sum()), n_resamples - done)
            yield payload, ok, deficits, extra, take
            done += take


def _generator(seed) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
        raise TypeError(f"seed must be an int, None or a numpy Generator, got {type(seed).__name__}")
    if seed is not None and seed < 0:
        raise ValueError(f"seed must be non-negative, got {seed}")
    return np.random.default_rng(seed)


def _check_count(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be at least 1, got {value}")
    return int(value)


def resample_counts(n_items: int, n_resamples: int = 1000, seed=None) -> np.ndarray:
    """``int64[n_resamples, n_items]``: how many times each item is drawn in each resample (each
    row sums to ``n_items``), the draws :func:`bootstrap` makes for the same ``n_items`` and seed
    (``np.repeat(np.arange(n_items), counts[b])`` lists replicate b's items; the first b
    resamples are the same whatever the number asked for).
    Memory is ``n_resamples * n_items`` int64: for inspecting and testing, not for a large bootstrap."""
    n = _check_count("n_items", n_items)
    draws = _Draws(n, _generator(seed))
    out = np.empty((_check_count("n_resamples", n_resamples), n), dtype=np.int64)
    done = 0

    def consume(c, r):
        return c.sum(axis=1), c

    for c, ok, deficits, extra, take in draws.blocks(len(out), np.int64, consume):
        rows = np.repeat(np.arange(len(c)), deficits)
        np.add.at(c, (rows, extra), 1)
        out[done:done + take] = c[ok][:take]
        done += take
    return out


def bootstrap(metric: MetricLike, stats, n_resamples: int = 1000, seed=None, **options) -> np.ndarray:
    """``float64[n_resamples]``: the corpus scores of ``n_resamples`` resamples of the items (n
    items drawn with replacement from the n rows of ``stats``, item_stats' matrix): each is the
    score of the replicate's exact totals, which is sacrebleu's ``corpus_score`` of those items
    (TER with items of 3, 5, 6 or 7 references: the exactly rounded sum of average lengths, where
    sacrebleu's float sum depends on the items' order, within 1e-13 points). ``seed``: an int
    (the same draws on every run: :func:`resample_counts`), ``None`` (fresh entropy) or a numpy
    ``Generator``. Their standard deviation is the bootstrap's standard error, and
    ``np.percentile(scores, [2.5, 97.5])`` a 95% percentile interval."""
    m = metric_of(metric, **options)
    rows = _stats(m, stats, two_d=True)
    m.check_stats(column_sums(rows, what=f"the corpus statistics of {m.name}", name=m.stat_name))
    n_resamples = _check_count("n_resamples", n_resamples)
    n = len(rows)
    draws = _Draws(n, _generator(seed))
    # [stats | 1]: the last column counts the items drawn. Sums of non-negative integers below
    # 2**24 (2**53) are exact in float32 (float64), in any order of addition.
    bound = 2 * n * max(1, int(rows.max()))
    if bound < 2**24:
        dtype = np.float32
    elif bound < 2**53:
        dtype = np.float64
    elif bound < 2**62:
        dtype = np.int64
    else:
        raise OverflowError(f"the statistics of {n} items are too large to resample exactly in int64")
    ext = np.concatenate([rows, np.ones((n, 1), dtype=np.int64)], axis=1).astype(dtype)
    # the products run as a stack of small matrix products over slices of _SLICE items (and one
    # for the rest): one BLAS call each, small enough for OpenBLAS to keep to one thread (its
    # threads, on a loaded machine, made one large product 10 to 30 times slower)
    k = min(n, _SLICE)
    slices = n // k
    main = slices * k
    stacked = ext[:main].reshape(slices, k, ext.shape[1])
    rest = ext[main:]
    totals = np.empty((n_resamples, m.width), dtype=np.int64)
    done = 0

    def consume(c, r):
        sums = np.matmul(c[:, :main].reshape(r, slices, k).transpose(1, 0, 2), stacked).sum(axis=0)
        if len(rest):
            sums += c[:, main:] @ rest
        return sums[:, -1].astype(np.int64), sums

    kind = _KINDS[dtype]
    for sums, ok, deficits, extra, take in draws.blocks(n_resamples, dtype, consume):
        if len(extra):  # sums[b] += ext[the extra items of row b], in the kernel
            draws.kernel.add_rows(sums, ext, ext.shape[1], extra, deficits, kind)
        totals[done:done + take] = sums[ok][:take, :-1].astype(np.int64)
        done += take
    return exact_scores(m, totals)

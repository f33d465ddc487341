"""The score stage: accumulated totals in, typed results out (Beam-free; it never names a metric).

Every surface that shows a score goes through here: ``beambleu score`` (one system, its table of
systems, the paired tests), ``beambleu run`` (the corpus and every group, scored on the workers),
:mod:`bleu_core.compat` (sacrebleu's Python API) and ``beambleu report``. They differ only in how
they print the results (:mod:`bleu_core.formats`), never in how the results are computed.

In: a :class:`~bleu_core.protocol.MetricSet`, a totals vector (the metrics' statistics side by
side), the set of reference counts, and, when asked (:class:`Resampling`), a block of replicate
totals: B bootstrap replicates (intervals, the paired bootstrap test) or T trials of the
approximate randomization test (the totals of each trial's swapped rows). Out: one
:class:`MetricResult` per metric (its score object, signature object, interval, and what the
paired test needs), and :func:`paired_test` compares two of them with one implementation of both
tests. :func:`add` is the one checked sum of statistics blocks.

Floating point appears here only through each metric's own ``score``: totals are exact integers
until then (:mod:`bleu_core.sums`). The one exception is what a metric adds in corpus order
beside its totals to be sacrebleu's to the bit (:class:`InOrder`: TER's float sum of average
reference lengths), which the surfaces that read the pairs in order (``beambleu score``, the compat
API) pass to :func:`score_metric`; ``beambleu run`` sums across shards, has no order, and scores
the exact totals.

Replicate and trial totals are exact integers, so each metric scores them with its own ``score``
arithmetic, many rows at once (:func:`bleu_core.resampling.sacrebleu.exact_scores`, equal to
``metric.score(row).score`` row for row). numpy is imported by the functions that resample: a
plain score (totals as a list of Python ints, :class:`InOrder` fed rows of ints) needs none.
"""

from __future__ import annotations


from .protocol import Metric, MetricSet, Score
from .records import record
from .resampling import counter as bs
from .resampling.sacrebleu import COUNTER, METHODS, exact_scores
from .signature import SignatureFields
from .sums import checked_add

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (start-up)
if TYPE_CHECKING:  # numpy is imported by what resamples: `beambleu score`'s plain path loads none
    from typing import List, Optional, Sequence

    import numpy as np

__all__ = ["ALPHA", "BOOTSTRAP", "RANDOMIZATION", "InOrder", "Interval", "MetricResult", "Paired", "Resampling",
           "add", "empty_replicates", "paired_test", "replicate_block", "score_all", "score_metric", "signature"]

#: what the replicate block of an accumulator holds (Resampling.method)
BOOTSTRAP, RANDOMIZATION = "bootstrap", "randomization"
#: p-values below this are marked significant (sacrebleu's threshold)
ALPHA = 0.05


@record(frozen=True)
class Resampling:
    """What is drawn besides the totals: nothing (``method=None``), ``n`` Poisson bootstrap
    replicates, or ``n`` approximate randomization trials; ``seed`` draws them and ``seed_label``
    is the signature's ``seed:`` (``SACREBLEU_SEED=none`` draws a seed but shows ``none``).
    ``draws``: beambleu's counter-based draws (``counter``: Poisson weights and coins per row
    identity, what the accumulators of this module hold) or sacrebleu's numpy draws
    (``sacrebleu``, :mod:`bleu_core.resampling.sacrebleu`, which needs every segment's statistics in
    order: :func:`score_metric` then leaves the interval and pairing to the caller)."""

    method: Optional[str] = None
    n: int = 0
    seed: int = bs.DEFAULT_SEED
    seed_label: Optional[str] = None
    draws: str = COUNTER

    def __post_init__(self):
        if self.method not in (None, BOOTSTRAP, RANDOMIZATION):
            raise ValueError(f"unknown resampling method {self.method!r}")
        if self.draws not in METHODS:
            raise ValueError(f"unknown draws {self.draws!r}: choose one of {', '.join(METHODS)}")

    @property
    def counter(self) -> bool:
        """Counter-based draws that the accumulators hold as replicate blocks."""
        return self.draws == COUNTER and self.drawn > 0

    @property
    def drawn(self) -> int:
        """Replicates or trials an accumulator holds (0 without resampling)."""
        return self.n if self.method else 0

    @property
    def intervals(self) -> bool:
        """Bootstrap replicates: every score gets its interval."""
        return self.method == BOOTSTRAP and self.n > 0

    @property
    def label(self):
        """The signature's ``seed:`` value."""
        return self.seed if self.seed_label is None else self.seed_label


@record(frozen=True)
class Interval:
    """sacrebleu's bootstrap estimate: the replicates' mean, the 95% percentile interval
    (``low``, ``high``) and its half-width (sacrebleu's ``ci``, ``confidence_var`` in its JSON)."""

    mean: float
    low: float
    high: float
    half_width: float
    #: replicates left out because they drew none of the group's pairs (see :func:`empty_replicates`)
    empty: int = 0

    @classmethod
    def of(cls, scores: Sequence[float], empty: int = 0) -> "Interval":
        ci = bs.percentile_interval(scores)
        return cls(ci["mean"], ci["low"], ci["high"], ci["half_width"], empty)

    def text(self, width: int) -> str:
        """``μ = mean ± half-width`` with ``width`` decimals."""
        return f"μ = {self.mean:.{width}f} ± {self.half_width:.{width}f}"


@record(frozen=True)
class Paired:
    """A system's paired test against the baseline: the p-value and the score difference."""

    p_value: float
    difference: float

    @property
    def significant(self) -> bool:
        return self.p_value < ALPHA


@record
class MetricResult:
    """One metric's result for one accumulator: its score (with the signature's text set),
    the signature object (None for an empty accumulator, which has no reference count), the
    interval when bootstrapped, and for pairing the replicate scores (bootstrap) or the
    randomization trials' swapped totals, beside the exact totals."""

    metric: Metric
    score: Score
    signature: Optional[SignatureFields]
    totals: np.ndarray
    interval: Optional[Interval] = None
    replicate_scores: Optional[List[float]] = None
    swapped: Optional[np.ndarray] = None
    #: bool[B]: the bootstrap replicates that drew none of the pairs (left out of the interval)
    empty: Optional[np.ndarray] = None


def signature(metric: Metric, nrefs, resampling: Optional[Resampling] = None) -> SignatureFields:
    """The signature of a score: the metric's fields, and with resampling sacrebleu's ``seed``
    plus ``bs:B`` (bootstrap) or ``ar:T`` (randomization)."""
    if resampling is None or not resampling.method:
        return metric.signature(nrefs)
    if resampling.method == BOOTSTRAP:
        return metric.signature(nrefs, n_bootstrap=resampling.n, seed=resampling.label)
    sig = metric.signature(nrefs, seed=resampling.label)
    sig.update("ar", resampling.n)
    return sig


class InOrder:
    """What the metrics of a :class:`MetricSet` add in corpus order beside their totals, for the
    surfaces that read a system's pairs in order (``beambleu score``: each system, each
    ``--detail`` subset). sacrebleu sums some statistics as floats, segment by segment (TER's
    average reference length of a segment with k references is ``S / k``, not an integer for k = 3,
    5, 6, 7, 9, ...); such a sum depends on the order of its additions, so it cannot ride in the
    integer totals (which add in any order). A metric takes part by having
    ``ordered_sum(rows, state)`` (``state`` None at the start; its statistics rows in corpus order;
    returns the new state) and ``score(totals, ordered=state)``; the others are left alone
    (``self[i]`` is None, as for a metric whose pairs were never added)."""

    def __init__(self, metrics: MetricSet):
        self.metrics = metrics
        self.states: List[object] = [None] * len(metrics)

    def add(self, rows) -> None:
        """Add the statistics ``rows`` (``int64[n, metrics.width]``, or a list of rows of Python ints,
        in corpus order) after those already added."""
        if isinstance(rows, list):
            if not rows:
                return
            for i, (metric, cols) in enumerate(zip(self.metrics, self.metrics.slices)):
                fold = getattr(metric, "ordered_sum", None)
                if fold is not None:
                    self.states[i] = fold([row[cols] for row in rows], self.states[i])
            return
        import numpy as np

        rows = np.asarray(rows, dtype=np.int64)
        if not len(rows):
            return
        for i, (metric, cols) in enumerate(zip(self.metrics, self.metrics.slices)):
            fold = getattr(metric, "ordered_sum", None)
            if fold is not None:
                self.states[i] = fold(rows[:, cols], self.states[i])

    def __getitem__(self, i: int):
        return self.states[i]


def score_metric(metric: Metric, totals, nrefs=None, replicates: Optional[np.ndarray] = None,
                 resampling: Optional[Resampling] = None, ordered=None) -> MetricResult:
    """One metric's :class:`MetricResult` of its totals (an int64 array, or a list of Python ints
    when nothing is resampled: ``score``'s numpy-free path) and its columns of a replicate block;
    ``ordered``: what the metric added in corpus order beside them (``InOrder(...)[i]``; None: the
    totals alone). The replicates are scored many at once (:func:`exact_scores`)."""
    counter = resampling is not None and resampling.counter
    if counter or not isinstance(totals, list):
        import numpy as np

        totals = np.asarray(totals, dtype=np.int64)
    sig = None if nrefs is None else signature(metric, nrefs, resampling)
    score = (metric.score(totals) if ordered is None else metric.score(totals, ordered=ordered)).sign(sig)
    result = MetricResult(metric, score, sig, totals)
    if counter:
        if replicates is None or replicates.shape[0] != resampling.n:
            held = 0 if replicates is None else replicates.shape[0]
            raise ValueError(f"the accumulator holds {held} replicates, expected {resampling.n}")
        if resampling.intervals:
            scores = exact_scores(metric, replicates)
            result.replicate_scores = scores.tolist()
            result.empty = empty_replicates(totals, replicates)
            kept = scores[~result.empty].tolist()
            result.interval = Interval.of(kept, int(result.empty.sum())) if kept else None
        else:
            result.swapped = np.asarray(replicates, dtype=np.int64)
    return result


def score_all(metrics: MetricSet, totals: np.ndarray, nrefs=None, replicates: Optional[np.ndarray] = None,
              resampling: Optional[Resampling] = None) -> List[MetricResult]:
    """Every metric's :class:`MetricResult` of one accumulator's totals (``width`` of the set)
    and its replicate block (``int64[n, width]``), in the set's order."""
    return [score_metric(metric, totals[cols], nrefs, None if replicates is None else replicates[:, cols],
                         resampling)
            for metric, cols in zip(metrics, metrics.slices)]


def replicate_block(rows: np.ndarray, row_keys: np.ndarray, resampling: Resampling) -> Optional[np.ndarray]:
    """``int64[n, width]``: what ``resampling`` draws from per-pair statistics ``rows`` (the
    bootstrap's replicate totals, or the randomization trials' swapped totals), rows identified by
    ``row_keys``; None without resampling. Blocks of different rows add (:func:`add`)."""
    if not resampling.counter:
        return None
    draw = bs.bootstrap_totals if resampling.method == BOOTSTRAP else bs.swap_totals
    return draw(rows, row_keys, resampling.n, resampling.seed)[0]


def empty_replicates(totals: np.ndarray, replicates: np.ndarray) -> np.ndarray:
    """bool[B]: the bootstrap replicates that drew none of the pairs: all their totals are zero
    where the group's are not. sacrebleu resamples n of the n lines, never an empty corpus; the
    Poisson bootstrap draws each pair's count independently, so a replicate of a group of n pairs is
    empty with probability e**-n (a third of them for one pair). Scored, such a replicate is the
    empty corpus (BLEU 0), which no resample of sacrebleu's is: they are left out of the interval
    and of the paired bootstrap test, and counted (``Interval.empty``). (A replicate that drew only
    pairs without statistics, if the group has some, looks the same and is left out too: it scores
    as the empty corpus.)"""
    import numpy as np

    replicates = np.asarray(replicates, dtype=np.int64)
    if not np.any(totals):
        return np.zeros(len(replicates), dtype=bool)
    return ~replicates.any(axis=1)


def paired_test(system: MetricResult, baseline: MetricResult) -> Paired:
    """``system`` against ``baseline`` (the same metric, resampled alike): the paired bootstrap
    test when both hold replicate scores, the approximate randomization test when both hold
    swapped trial totals (:mod:`bleu_core.resampling.counter` has the arithmetic of each: the trials'
    pseudo-systems, :func:`~bleu_core.resampling.counter.randomization_trials`, are scored many at
    once, each equal to ``metric.score(row).score``, as :func:`~bleu_core.resampling.counter.randomization_test`
    scores them one by one)."""
    import numpy as np

    if system.swapped is not None and baseline.swapped is not None:
        metric = system.metric
        a, b = bs.randomization_trials(baseline.totals, baseline.swapped, system.totals, system.swapped)
        observed = abs(metric.score(baseline.totals).score - metric.score(system.totals).score)
        p = bs.randomization_p_value(np.abs(exact_scores(metric, a) - exact_scores(metric, b)), observed)
    elif system.replicate_scores is not None and baseline.replicate_scores is not None:
        keep = np.ones(len(system.replicate_scores), dtype=bool)
        for r in (system, baseline):  # replicates empty for either system are left out (empty_replicates)
            if r.empty is not None:
                keep &= ~r.empty
        if not keep.any():  # (B tiny, n tiny) every replicate is the empty corpus for both: all tie
            keep[:] = True
        p = bs.paired_p_value(np.asarray(system.replicate_scores)[keep], np.asarray(baseline.replicate_scores)[keep],
                              system.score.score, baseline.score.score)
    else:
        raise ValueError("a paired test needs both systems resampled (bootstrap replicates or randomization trials)")
    return Paired(p, system.score.score - baseline.score.score)


def add(total: Optional[np.ndarray], part: np.ndarray, what: str = "the sum of statistics", name=None) -> np.ndarray:
    """``total + part`` of statistics (or replicate) blocks, exact: OverflowError instead of a
    wrapped value. ``total`` None starts the sum (a copy of ``part``)."""
    import numpy as np

    part = np.asarray(part, dtype=np.int64)
    if total is None:
        return part.copy()
    kwargs = {} if name is None else {"name": name}
    return checked_add(total, part, out=total, what=what, **kwargs)

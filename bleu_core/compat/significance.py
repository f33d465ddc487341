"""sacrebleu's ``sacrebleu.significance``: :class:`PairedTest` and :class:`Result`."""

from __future__ import annotations

import types
from collections.abc import Mapping, Sequence
from typing import Dict, List, Optional, Tuple

import numpy as np

from .. import scoring
from ..resampling import counter as bootstrap, sacrebleu as nr
from ..sums import column_sums
from .metrics.base import Signature, _line_keys, _Metric, _resampling, _seed_from_env

__all__ = ["PairedTest", "Result", "estimate_ci"]


def estimate_ci(scores) -> Tuple[float, float]:
    """sacrebleu's ``estimate_ci``: (the mean of ``scores``, half the width of their 95% percentile
    interval)."""
    return nr.numpy_interval(scores)



class Result:
    """One system's result of a paired test: ``score``, ``p_value`` (``None`` for the
    baseline), and the bootstrap ``mean`` and ``ci`` (95% half-width) when estimated."""

    def __init__(self, score: float, p_value: Optional[float] = None, mean: Optional[float] = None,
                 ci: Optional[float] = None):
        self.score = score
        self.p_value = p_value
        self.mean = mean
        self.ci = ci

    def __repr__(self) -> str:
        return ",".join(f"{k}={str(v)}" for k, v in self.__dict__.items())  # str: numpy float32 prints short


class PairedTest:
    """sacrebleu's paired significance test of systems against the first one (the baseline).

    ``named_systems``: ``[(name, hypotheses), ...]``; ``metrics``: ``{name: BLEU or CHRF}``;
    ``references``: streams, or ``None`` for each metric's cached references. ``test_type``:
    ``"ar"`` (approximate randomization, default 10000 trials) or ``"bs"`` (paired bootstrap,
    default 1000 resamples), ``n_samples`` = 0 for the default. ``n_ar_confidence``: resamples of
    the ar test's confidence intervals (-1: none, 0: 1000). ``n_jobs`` is accepted for
    compatibility; systems are compared one after the other. Calling the test returns
    ``(signatures, scores)``: per metric name its signature, and ``scores["System"]`` (the
    names) with per metric name a :class:`Result` per system.

    :data:`RESAMPLING` (read when the test is made): ``"sacrebleu"`` (default) draws sacrebleu's
    numpy resamples and gives its numbers, bit for bit (seed from SACREBLEU_SEED; ``none``, and
    0 for the systems' tests, draw fresh entropy, as in sacrebleu); ``"counter"`` draws beambleu's
    Poisson bootstrap weights and swap coins per (seed, 1-based segment line, replicate)
    (``none``: one fresh seed for the whole test), ties counted in the p-values, the numbers of
    ``beambleu score --resampling counter``.
    """

    _DEFAULT_SAMPLES = {"ar": 10000, "bs": 1000}

    def __init__(self, named_systems: List[Tuple[str, Sequence[str]]], metrics: Mapping[str, _Metric],
                 references: Optional[Sequence[Sequence[Optional[str]]]], test_type: str = "ar", n_samples: int = 0,
                 n_ar_confidence: int = -1, n_jobs: int = 1):
        self.resampling = resampling = _resampling()
        if test_type not in self._DEFAULT_SAMPLES:
            raise ValueError(f"Unknown test type {test_type!r}: choose 'ar' or 'bs'")
        if len(named_systems) < 1:
            raise ValueError("named_systems is empty: give the baseline and the systems to compare with it")
        for name, metric in metrics.items():
            if not isinstance(metric, _Metric):
                raise TypeError(f"metrics[{name!r}] must be a bleu_core.compat BLEU or CHRF, "
                                f"got {type(metric).__name__}")
        self.test_type = test_type
        label, self._draw_seed = _seed_from_env(paired=True)
        self._seed = None if label == "none" else self._draw_seed
        self.n_jobs = n_jobs
        self.references = references
        self.named_systems = named_systems
        self.n_ar_confidence = n_ar_confidence if n_ar_confidence != 0 else self._DEFAULT_SAMPLES["bs"]
        self.n_samples = n_samples if n_samples > 0 else self._DEFAULT_SAMPLES[test_type]
        self.n_systems = len(named_systems) - 1
        self._signatures: Dict[str, Signature] = {}
        self._baseline_info: Dict[str, tuple] = {}
        self.metrics: Dict[str, _Metric] = {}

        bl_name, bl_hyps = named_systems[0]
        method = scoring.BOOTSTRAP if test_type == "bs" else scoring.RANDOMIZATION
        self._test = scoring.Resampling(method, self.n_samples, self._draw_seed)
        # the ar test's intervals come from a bootstrap of their own (the bs test's replicates give its own)
        self._confidence = None
        if test_type == "ar" and self.n_ar_confidence > 0:
            self._confidence = scoring.Resampling(scoring.BOOTSTRAP, self.n_ar_confidence, self._draw_seed)
        for metric in metrics.values():
            width = metric._metric.width
            if resampling == nr.COUNTER:
                bootstrap.check_replicates(self.n_samples, width, self._DEFAULT_SAMPLES[test_type])
                if self._confidence is not None:
                    bootstrap.check_replicates(self._confidence.n, width)
            metric._check_corpus_score_args(bl_hyps, references)
            rows = metric._extract_corpus_statistics(bl_hyps, references)
            if resampling == nr.SACREBLEU:
                test, interval = self._sacrebleu_baseline(metric, rows), None
            else:
                test, interval = self._resampled(metric, rows)
            name = test.score.name
            if resampling == nr.SACREBLEU:
                result = Result(test.score.score, mean=test.mean, ci=test.ci)
            else:
                result = Result(test.score.score, mean=_mean(interval), ci=_half(interval))
            self._baseline_info[name] = (len(rows), test, result)
            self.metrics[name] = metric
            sig = metric.get_signature()
            sig.update("seed", str(self._seed).lower())
            sig.update(test_type, self.n_samples)
            if self.n_ar_confidence > 0:
                sig.update("bs", self.n_ar_confidence)
            self._signatures[name] = sig

    def _sacrebleu_baseline(self, metric: _Metric, rows: np.ndarray) -> types.SimpleNamespace:
        """The baseline under sacrebleu's draws: its score, its segment statistics as sacrebleu
        holds them, and the interval (``mean``, ``ci``; None without one) of its own bootstrap
        (seeded as sacrebleu's intervals are, with the test's resamples or the ar test's)."""
        core = metric._metric
        segments = nr.segment_statistics(core, rows)
        score = scoring.score_metric(core, column_sums(rows))
        mean = half = None
        n = self.n_samples if self.test_type == "bs" else self.n_ar_confidence
        if n > 0:
            scores = nr.bootstrap_scores([core], [segments], n, nr.bootstrap_seed(self._seed, self._draw_seed))
            mean, half = nr.numpy_interval(np.array(scores[0]))
        return types.SimpleNamespace(score=score.score, segments=segments, mean=mean, ci=half)

    def _sacrebleu_compare(self, hyps: Sequence[str]) -> Dict[str, Result]:
        """Each metric's result for one system against the baseline, drawn as sacrebleu draws:
        one generator per system (the same seed for every system), shared by the metrics."""
        names = list(self.metrics)
        cores, base, own, points = [], [], [], []
        for name in names:
            metric = self.metrics[name]
            n_base, baseline, _ = self._baseline_info[name]
            metric._check_corpus_score_args(hyps, self.references)
            rows = metric._extract_corpus_statistics(hyps, self.references)
            if len(rows) != n_base:
                raise ValueError(f"{name}: the system has {len(rows)} segments, the baseline {n_base}")
            cores.append(metric._metric)
            base.append(baseline.segments)
            own.append(nr.segment_statistics(metric._metric, rows))
            points.append((baseline.score.score, scoring.score_metric(metric._metric, column_sums(rows)).score.score))
        n_confidence = self.n_ar_confidence if self.test_type == "ar" else 0
        _, (per,) = nr.paired_samples(cores, base, [own], self.test_type, self.n_samples,
                                      nr.paired_seed(self._seed, self._draw_seed), n_confidence)
        results = {}
        for name, (sample, scores), (bl, sy) in zip(names, per, points):
            mean, half = (None, None) if scores is None else nr.numpy_interval(scores)
            results[name] = Result(sy, nr.p_value(sample, abs(bl - sy)), mean, half)
        return results

    def _resampled(self, metric: _Metric, rows: np.ndarray):
        """(the score stage's result under the test's draws, the interval to show or None) of one
        system's per-segment statistics; segments are keyed by their 1-based line number."""
        core, keys = metric._metric, _line_keys(len(rows))
        totals = column_sums(rows)
        test = scoring.score_metric(core, totals, None, scoring.replicate_block(rows, keys, self._test), self._test)
        if self._confidence is None:
            return test, test.interval
        conf = scoring.score_metric(core, totals, None, scoring.replicate_block(rows, keys, self._confidence),
                                    self._confidence)
        return test, conf.interval

    def _compare(self, hyps: Sequence[str]) -> Dict[str, Result]:
        """Each metric's result for one system against the baseline."""
        results = {}
        for name, metric in self.metrics.items():
            n_base, base, _ = self._baseline_info[name]
            metric._check_corpus_score_args(hyps, self.references)
            rows = metric._extract_corpus_statistics(hyps, self.references)
            if len(rows) != n_base:
                raise ValueError(f"{name}: the system has {len(rows)} segments, the baseline {n_base}")
            test, interval = self._resampled(metric, rows)
            p = scoring.paired_test(test, base).p_value
            results[name] = Result(test.score.score, p, _mean(interval), _half(interval))
        return results

    def __call__(self) -> Tuple[Dict[str, Signature], Dict[str, List]]:
        """Run the test: ``(signatures, scores)`` as sacrebleu returns them."""
        scores: Dict[str, List] = {"System": [name for name, _ in self.named_systems]}
        for name, (_, _, result) in self._baseline_info.items():
            scores[name] = [result]
        compare = self._sacrebleu_compare if self.resampling == nr.SACREBLEU else self._compare
        for _, hyps in self.named_systems[1:]:
            for name, result in compare(hyps).items():
                scores[name].append(result)
        return self._signatures, scores


def _mean(interval: Optional[scoring.Interval]) -> Optional[float]:
    return None if interval is None else interval.mean


def _half(interval: Optional[scoring.Interval]) -> Optional[float]:
    return None if interval is None else interval.half_width


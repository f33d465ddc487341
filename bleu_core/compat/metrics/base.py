"""sacrebleu's ``sacrebleu.metrics.base``: :class:`Score`, :class:`Signature` and :class:`Metric`,
the base of the sacrebleu-style metric classes on bleu_core's kernels."""

from __future__ import annotations

import itertools
import operator
from abc import ABC, abstractmethod
from collections.abc import Sequence
from importlib import import_module
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from ... import formats, scoring
from ...kernels.buffers import RowLists, all_utf8
from ...records import replace
from ...resampling import counter as bootstrap, sacrebleu as nr
from ...signature import SignatureFields
from ...sums import column_sums

if TYPE_CHECKING:  # numpy is imported where statistics become arrays: a plain corpus_score of BLEU or CHRF needs none
    import numpy as np

__all__ = ["Score", "Signature", "Metric"]


def _warning(message: str, *args) -> None:
    """A warning on the ``bleu_core.compat`` logger (logging is imported when there is one to log)."""
    import logging

    logging.getLogger("bleu_core.compat").warning(message, *args)


# ------------------------------------------------------------------------------ scores

class Score:
    """sacrebleu's score base: ``name``, ``score``, and after a bootstrap ``_mean`` and ``_ci``
    (the 95% interval's half-width; both -1.0 until then)."""

    def __init__(self, name: str, score: float):
        self.name = name
        self.score = score
        self._mean = -1.0
        self._ci = -1.0
        self._verbose = ""

    @property
    def _interval(self) -> scoring.Interval:
        """The bootstrap estimate (shown, as by sacrebleu, when its mean is positive: -1 until estimated)."""
        return scoring.Interval(self._mean, 0.0, 0.0, self._ci)

    def format(self, width: int = 2, score_only: bool = False, signature: str = "", is_json: bool = False) -> str:
        """sacrebleu's text line ``NAME|signature = score (μ = mean ± ci) verbose``, the score
        alone (``score_only``), or its JSON object (``is_json``, which needs a signature)."""
        if score_only:
            return formats.score_text(self.score, width, self._interval)
        if is_json:
            if not signature:
                raise ValueError("format(is_json=True) needs the signature string (its fields become JSON keys)")
            return formats.sacrebleu_json(self.name, self.score, signature, width, self._interval, self._verbose)
        return formats.score_line(self.name, self.score, width, signature, self._interval, self._verbose)

    def estimate_ci(self, scores: Sequence) -> None:
        """Set ``_mean`` and ``_ci`` from resampled scores (objects with ``.score``), as
        sacrebleu does: the mean, and half the width of the 95% percentile interval."""
        ci = scoring.Interval.of([s.score for s in scores])
        self._ci = ci.half_width
        self._mean = ci.mean

    def __repr__(self) -> str:
        return self.format()


# ------------------------------------------------------------------------------ signatures


class Signature(SignatureFields):
    """sacrebleu's signature object: ``info`` (ordered fields, ``None`` ones left out),
    :meth:`format` (``short=True`` abbreviates the keys), :meth:`update`. The metric's fields and
    the version come from bleu_core's own signatures (``version:beambleu-<version>``; BLEU adds
    ``order:N`` when ``max_ngram_order`` is not 4, which sacrebleu's signature omits)."""

    #: sacrebleu's abbreviations of its global fields (test set, language pair, subset, origlang),
    #: and BLEU's and chrF's for a signature made without ``abbr``
    ABBR = {**SignatureFields.ABBR, "test": "t", "lang": "l", "subset": "S", "origlang": "o", "case": "c", "eff": "e",
            "smooth": "s", "space": "s"}

    def __init__(self, info: Dict, abbr: Optional[Dict[str, str]] = None):
        """``abbr``: the metric's own abbreviations (its signature class's ``ABBR``), which take
        precedence over the global ones, as sacrebleu's metric signatures update theirs (TER's
        ``tok`` is ``t``, BLEU's stays ``tok``)."""
        self.info = dict(info)
        if abbr is not None:
            self.ABBR = {**type(self).ABBR, **abbr}

    def __repr__(self) -> str:
        return self.format()


# ------------------------------------------------------------------------------ metrics


class _Option:
    """An option of the wrapped bleu_core metric, read and set as a plain attribute, as on
    sacrebleu's metrics; setting it rebuilds (and so re-checks) the wrapped metric. A compat
    class gets one per keyword option its metric declares (:attr:`bleu_core.registry.Option.compat`)."""

    def __init__(self, name: str):
        self.name = name

    def __get__(self, obj, owner=None):
        return self if obj is None else getattr(obj._metric, self.name)

    def __set__(self, obj, value):
        obj._metric = replace(obj._metric, **{self.name: value})


def _seed_from_env(paired: bool = False) -> Tuple[str, int]:
    """(the signature's seed, the generator's seed) from SACREBLEU_SEED (bootstrap.seed_from_env)."""
    return bootstrap.seed_from_env(paired)


def _resampling() -> str:
    """:data:`bleu_core.compat.RESAMPLING`, read when called, checked."""
    RESAMPLING = import_module("bleu_core.compat").RESAMPLING
    if RESAMPLING not in nr.METHODS:
        raise ValueError(f"bleu_core.compat.RESAMPLING = {RESAMPLING!r}: choose one of "
                         f"{', '.join(map(repr, nr.METHODS))}")
    return RESAMPLING


def _line_keys(n: int) -> np.ndarray:
    """Row identities of segments 0..n-1: their 1-based line numbers, as ``beambleu score`` uses,
    so the same segment of two systems (and of a ``beambleu score`` run) gets the same draws."""
    import numpy as np

    return bootstrap.row_keys_from_ids(np.arange(1, n + 1, dtype=np.int64))


class _Metric(ABC):
    """What BLEU and CHRF share: sacrebleu's argument checks, reference streams and their cache,
    statistics per segment (an ``int64[n, width]`` matrix, from the bleu_core kernel), scores,
    bootstrap intervals and the signature."""

    _metric = None  # the wrapped bleu_core metric (Bleu or Chrf), set by the subclass
    _metric_class = None  # its class, the ``metric=`` of the subclass
    #: whether :meth:`_score_totals` scores summed statistics without numpy, so that a corpus score
    #: without resampling has the kernel sum them (:meth:`_corpus_totals`) rather than make a row per segment
    _scores_totals = False
    #: whether the wrapped metric's batch paths read a :class:`~bleu_core.kernels.buffers.RowLists` (the
    #: built-ins' kernels do), which :meth:`_cache_references` then makes instead of a list per segment
    _reads_row_lists = False

    def __init_subclass__(cls, metric=None, **kwargs):
        """``class BLEU(_Metric, metric=Bleu)``: the options ``Bleu`` declares become attributes."""
        super().__init_subclass__(**kwargs)
        if metric is not None:
            cls._metric_class = metric
            for opt in metric.options:
                if opt.keyword and opt.compat and opt.name not in cls.__dict__:
                    setattr(cls, opt.name, _Option(opt.name))

    def __init__(self):
        self._ref_cache = None
        self._force = True
        self.n_bootstrap = None
        self.seed = None

    # -- argument checks (sacrebleu's messages first, then what it leaves unchecked) -----------------

    def _fail(self, message: str, error=TypeError):
        raise error(f"{type(self).__name__}: {message}")

    def _check_sentence_score_args(self, hyp, refs) -> None:
        if not isinstance(hyp, str):
            self._fail("The argument `hyp` should be a string.")
        if isinstance(refs, str) or not isinstance(refs, Sequence):
            self._fail("The argument `refs` should be a sequence of strings.")
        if len(refs) == 0:
            self._fail("The argument `refs` is empty: there is no reference to score against.", ValueError)
        if not isinstance(refs[0], str) and refs[0] is not None:
            self._fail("Each element of `refs` should be a string.")

    def _check_corpus_score_args(self, hyps, refs) -> None:
        if not isinstance(hyps, Sequence):
            self._fail("`hyps` should be a sequence of strings.")
        if len(hyps) == 0:
            self._fail("`hyps` is empty: there are no segments to score.", ValueError)
        if not isinstance(hyps[0], str):
            self._fail("Each element of `hyps` should be a string.")
        if set(map(type, hyps)) != {str}:  # (one pass at C speed; the lines one by one only when it fails)
            if any(line is None for line in hyps):
                self._fail("Undefined line in hypotheses stream!")
            for i, line in enumerate(hyps):
                if not isinstance(line, str):
                    self._fail(f"hypothesis {i} is a {type(line).__name__}, not a string.")
        if refs is not None:
            if not isinstance(refs, Sequence):
                self._fail("`refs` should be a sequence of sequence of strings.")
            if len(refs) == 0:
                self._fail("`refs` is empty: give at least one reference stream (or None for the cached ones).",
                           ValueError)
            if isinstance(refs[0], str) or not isinstance(refs[0], Sequence):
                self._fail("Each element of `refs` should be a sequence of strings.")
            if len(refs[0]) and not isinstance(refs[0][0], str) and refs[0][0] is not None:
                self._fail("`refs` should be a sequence of sequence of strings.")

    # -- references ----------------------------------------------------------------------------------

    def _cache_references(self, references) -> Sequence[List[str]]:
        """Reference streams to per-segment lists of references (``None`` entries dropped; a
        :class:`~bleu_core.kernels.buffers.RowLists` when there is none); sets ``num_refs`` as
        sacrebleu does (the count, or -1 when segments differ)."""
        streams = []
        for k, stream in enumerate(references):
            if isinstance(stream, str) or not isinstance(stream, Sequence):
                self._fail(f"reference stream {k} should be a sequence of strings.")
            streams.append(stream)
        lengths = sorted({len(s) for s in streams})
        if len(lengths) > 1:
            self._fail(f"reference streams have different lengths ({', '.join(map(str, lengths))} lines); "
                       "mark a missing reference with None", ValueError)
        if streams and all(set(map(type, s)) == {str} for s in streams):  # no None, nothing else: at C speed
            self.num_refs = len(streams)
            return RowLists.of_streams(streams) if self._reads_row_lists else list(map(list, zip(*streams)))
        segments, counts = [], set()
        for i, refs in enumerate(zip(*streams)):
            lines = [x for x in refs if x is not None]
            for x in lines:
                if not isinstance(x, str):
                    self._fail(f"reference of segment {i} is a {type(x).__name__}, not a string or None.")
            if not lines:
                self._fail(f"segment {i} has no reference (None in every reference stream)", ValueError)
            counts.add(len(lines))
            segments.append(lines)
        self.num_refs = next(iter(counts)) if len(counts) == 1 else -1
        return segments

    def _extract_corpus_statistics(self, hypotheses, references) -> np.ndarray:
        """``int64[n, width]``: each segment's statistics against its references (``references``
        as streams, or the cached ones when falsy), computed by the bleu_core kernel."""
        if references:
            refs = self._cache_references(references)
        elif self._ref_cache:
            refs = self._ref_cache
        else:
            raise RuntimeError("No references provided and the cache is empty.")
        hyps = list(hypotheses)
        if len(hyps) != len(refs):
            self._fail(f"{len(hyps)} hypotheses but {len(refs)} reference lines", ValueError)
        if not self._force:
            self._warn_tokenized(sum(map(operator.methodcaller("endswith", " ."), hyps)))
        try:  # the lists go to the kernel as they are (bleu_core.kernels.buffers), checked only if that fails
            return self._metric.batch_stats(hyps, refs, per_row=True)
        except Exception:
            if all_utf8(hyps, refs):
                raise
        return self._metric.scalar_stats(hyps, refs)  # lone surrogates have no UTF-8 form: the scalar path takes them

    @staticmethod
    def _warn_tokenized(tokenized: int) -> None:
        """The warning about hypotheses that look tokenized, ``tokenized`` of them ending in ``" ."``."""
        if tokenized >= 100:
            _warning("That's %d lines that end in a tokenized period ('.'): it looks like you forgot to "
                     "detokenize your test data, which may hurt your score. If your data is detokenized, "
                     "or you don't care, suppress this message with `force=True`.", tokenized)

    def _corpus_totals(self, hypotheses, references) -> Optional[List[int]]:
        """The column sums of :meth:`_extract_corpus_statistics`'s rows as Python ints, summed by the
        kernel (no row per segment, no numpy), for lists of ``str`` (the hypotheses, and each reference
        stream, without ``None``) that the kernel reads as they are. None for any other input, and for
        any that fails: the full path (:meth:`_check_corpus_score_args`, then
        :meth:`_extract_corpus_statistics`) then raises its error in its order, or scores what the
        kernel cannot read (text with lone surrogates). Nothing is checked item by item here: the
        conversion of the lists into the kernel's buffers is the check. What the full path sets
        (``num_refs``, the warning about tokenized text) is set only when this succeeds."""
        if type(hypotheses) not in (list, tuple) or not hypotheses or type(hypotheses[0]) is not str:
            return None
        hyps = hypotheses if type(hypotheses) is list else list(hypotheses)
        if references is None:  # the constructor's references (checked there)
            refs, num_refs = self._ref_cache, None
            if type(refs) is not RowLists:
                return None
        else:
            if (type(references) not in (list, tuple) or not references
                    or any(type(stream) not in (list, tuple) or len(stream) != len(hyps) for stream in references)):
                return None
            refs, num_refs = RowLists.of_streams(references), len(references)
        if len(refs) != len(hyps):
            return None
        totals = self._metric.plain_totals(hyps, refs)
        if totals is None:
            return None
        if num_refs is not None:
            self.num_refs = num_refs
        if not self._force:  # (every hypothesis is a str: the conversion said so)
            self._warn_tokenized(sum(map(str.endswith, hyps, itertools.repeat(" ."))))
        return totals

    # -- scores --------------------------------------------------------------------------------------

    def _score_totals(self, totals: List[int]) -> Score:
        """:meth:`_compute_score_from_stats` of summed statistics given as Python ints (what
        :meth:`_corpus_totals` gives); a subclass with :attr:`_scores_totals` scores them without numpy."""
        return self._compute_score_from_stats(totals)

    @abstractmethod
    def _compute_score_from_stats(self, stats) -> Score:
        """The score of summed statistics (a vector of the metric's width)."""

    def _aggregate_and_compute(self, stats: np.ndarray) -> Score:
        """The score of per-segment statistics: summed, then scored once."""
        import numpy as np

        rows = np.asarray(stats, dtype=np.int64).reshape(-1, self._metric.width)
        return self._compute_score_from_stats(column_sums(rows))

    def sentence_score(self, hypothesis: str, references: Sequence[Optional[str]]) -> Score:
        """The score of one hypothesis against its references (a list of strings, ``None`` for
        a missing one)."""
        self._check_sentence_score_args(hypothesis, references)
        stats = self._extract_corpus_statistics([hypothesis], [[ref] for ref in references])
        return self._aggregate_and_compute(stats)

    def corpus_score(self, hypotheses: Sequence[str], references: Optional[Sequence[Sequence[Optional[str]]]],
                     n_bootstrap: int = 1) -> Score:
        """The corpus score of ``hypotheses`` against reference streams (``None``: the references
        given when the metric was made). ``n_bootstrap`` > 1 adds the bootstrap mean and 95%
        interval (``_mean``, ``_ci``) and puts ``bs`` and ``seed`` (SACREBLEU_SEED) in the
        signature from then on, as sacrebleu does, drawn as :data:`RESAMPLING` says."""
        resampling = _resampling()
        if self._scores_totals:
            try:
                plain = not n_bootstrap > 1
            except Exception:  # (the full path raises it where it does)
                plain = False
            totals = self._corpus_totals(hypotheses, references) if plain else None
            if totals is not None:
                return self._score_totals(totals)
        self._check_corpus_score_args(hypotheses, references)
        stats = self._extract_corpus_statistics(hypotheses, references)
        score = self._aggregate_and_compute(stats)
        if n_bootstrap > 1:
            if resampling == nr.COUNTER:
                bootstrap.check_replicates(n_bootstrap, self._metric.width)
            self.seed, seed = _seed_from_env()
            self.n_bootstrap = n_bootstrap
            if resampling == nr.SACREBLEU:
                segments = nr.segment_statistics(self._metric, stats)
                seeded = nr.bootstrap_seed(self.seed, seed)
                ci = scoring.Interval.of(nr.bootstrap_scores([self._metric], [segments], n_bootstrap, seeded)[0])
            else:
                draws = scoring.Resampling(scoring.BOOTSTRAP, n_bootstrap, seed)
                block = scoring.replicate_block(stats, _line_keys(len(stats)), draws)
                ci = scoring.score_metric(self._metric, column_sums(stats), None, block, draws).interval
            score._mean, score._ci = ci.mean, ci.half_width
        return score

    def get_signature(self) -> Signature:
        """The signature of the last evaluation (the reference count is known only then)."""
        if not hasattr(self, "num_refs"):
            raise ValueError("Number of references unknown, please evaluate the metric first.")
        core_signature = self._metric.signature(1)
        core = core_signature.info
        info = {"nrefs": "var" if self.num_refs == -1 else self.num_refs, "bs": self.n_bootstrap, "ar": None,
                "seed": self.seed, "test": getattr(self, "test_set", None), "lang": getattr(self, "langpair", None),
                "origlang": getattr(self, "origlang", None), "subset": getattr(self, "subset", None)}
        info.update((k, v) for k, v in core.items() if k not in ("nrefs", "bs", "seed", "version"))
        info["version"] = core["version"]
        return Signature(info, core_signature.ABBR)



#: sacrebleu's name of the base class
Metric = _Metric

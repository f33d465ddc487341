"""sacrebleu 2.6.0's Python API on beambleu's kernels: a script changes only its import.

``import sacrebleu`` becomes ``import bleu_core.compat as sacrebleu``; ``from sacrebleu.metrics
import BLEU, CHRF`` and ``from sacrebleu.significance import PairedTest, Result`` become imports
from ``bleu_core.compat``. Scores, counts and formatted lines are sacrebleu's, bit for bit; the
signatures say ``version:beambleu-<version>``; confidence intervals and paired tests draw
sacrebleu's numpy resamples (:mod:`bleu_core.resampling.sacrebleu`), so their numbers are sacrebleu's
too, bit for bit, or, with ``bleu_core.compat.RESAMPLING = "counter"`` (the signatures of the
functions stay sacrebleu's), beambleu's counter-based Poisson bootstrap and coin flips
(:mod:`bleu_core.resampling.counter`), the draws of ``beambleu run``.

The two layouts of references (``None``: a missing reference, ``""``: a real empty one)::

    bleu_core.corpus_bleu(hyps, refs)         refs[i] = the references of hyps[i]
        corpus_bleu(["h1", "h2"], [["A1", "B1"], ["A2", None]])
    bleu_core.compat.corpus_bleu(hyps, refs)  refs[k] = reference stream k, one line per hypothesis
        corpus_bleu(["h1", "h2"], [["A1", "A2"], ["B1", None]])

Deliberate differences from sacrebleu, all on inputs sacrebleu mishandles or options it lacks:
hypotheses and reference streams of different lengths raise ValueError (sacrebleu truncates
silently to the shortest); so does a segment without any reference; options are checked when
the metric is made (ValueError/TypeError where sacrebleu asserts or fails later); a SentencePiece
model (``flores101``, ``flores200``, ``spBLEU-1K``, ``spm``) that cannot be downloaded is one
ModelError naming its URL and where to put it; with the counter draws, resample counts are
capped as in :func:`bleu_core.resampling.counter.check_replicates` and the p-value counts ties as at least
as extreme (see :func:`bleu_core.resampling.counter.paired_p_value`).
"""

from __future__ import annotations

import functools
import inspect
import logging
import types
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Dict, List, Optional, Tuple

import numpy as np
import pyarrow as pa

from . import formats, registry, scoring
from .kernels.arrow import to_arrow
from .metrics.bleu import Bleu
from .metrics.bleu.score import SMOOTH_DEFAULTS, compute_bleu
from .metrics.chrf import Chrf
from .metrics.ter import Ter
from .resampling import counter as bootstrap, sacrebleu as nr
from .signature import SignatureFields
from .sums import column_sums
from .tokenizers import DEFAULT_TOKENIZER, LANGUAGE_TOKENIZERS, TOKENIZERS as _TOKENIZER_NAMES

logger = logging.getLogger(__name__)

#: sacrebleu's default highest n-gram order of BLEU
MAX_NGRAM_ORDER = 4
#: how ``corpus_score(n_bootstrap=B)`` and :class:`PairedTest` draw, read when they are called:
#: ``"sacrebleu"``, its numpy draws and numbers, or ``"counter"``, beambleu's counter-based draws
RESAMPLING = nr.SACREBLEU

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


class BLEUScore(Score):
    """sacrebleu's BLEU score: ``score``, ``counts``, ``totals``, ``precisions`` (percent),
    ``bp``, ``sys_len``, ``ref_len``, ``ratio``, ``prec_str``, and the verbose part of the line."""

    def __init__(self, score: float, counts: List, totals: List, precisions: List[float], bp: float, sys_len: int,
                 ref_len: int):
        super().__init__("BLEU", score)
        self.bp = bp
        self.counts = counts
        self.totals = totals
        self.sys_len = sys_len
        self.ref_len = ref_len
        self.precisions = precisions
        self.prec_str = "/".join(f"{p:.1f}" for p in self.precisions)
        self.ratio = self.sys_len / self.ref_len if self.ref_len else 0
        self._verbose = (f"{self.prec_str} (BP = {self.bp:.3f} ratio = {self.ratio:.3f} hyp_len = {self.sys_len:d} "
                         f"ref_len = {self.ref_len:d})")


class CHRFScore(Score):
    """sacrebleu's chrF score: ``score``, ``char_order``, ``word_order``, ``beta``; the name is
    ``chrF<beta>`` with one ``+`` per word order."""

    def __init__(self, score: float, char_order: int, word_order: int, beta: int):
        self.beta = beta
        self.char_order = char_order
        self.word_order = word_order
        super().__init__(f"chrF{beta}" + "+" * word_order, score)


class TERScore(Score):
    """sacrebleu's TER score: ``score``, ``num_edits`` (an int) and ``ref_length`` (the summed
    average reference lengths, a float)."""

    def __init__(self, score: float, num_edits, ref_length: float):
        super().__init__("TER", score)
        self.num_edits = int(num_edits)
        self.ref_length = ref_length


def _bleu_score(core, smooth_method: str, smooth_value) -> BLEUScore:
    """A compat score of a :class:`bleu_core.metrics.bleu.score.BleuScore`. sacrebleu's add-k smoothing adds k
    to its matches and totals of orders 2..N in place and reports those (when anything matched);
    bleu_core reports the real integers, so k is added back here for identical ``counts``/``totals``."""
    counts, totals = list(core.counts), list(core.totals)
    if smooth_method == "add-k" and any(counts):
        k = SMOOTH_DEFAULTS["add-k"] if smooth_value is None else smooth_value
        counts[1:] = [c + k for c in counts[1:]]
        totals[1:] = [t + k for t in totals[1:]]
    return BLEUScore(core.score, counts, totals, list(core.precisions), core.bp, core.sys_len, core.ref_len)


# ------------------------------------------------------------------------------ signatures


class Signature(SignatureFields):
    """sacrebleu's signature object: ``info`` (ordered fields, ``None`` ones left out),
    :meth:`format` (``short=True`` abbreviates the keys), :meth:`update`. The metric's fields and
    the version come from bleu_core's own signatures (``version:beambleu-<version>``; BLEU adds
    ``order:N`` when ``max_ngram_order`` is not 4, which sacrebleu's signature omits)."""

    ABBR = {**SignatureFields.ABBR, "test": "t", "lang": "l", "subset": "S", "origlang": "o", "case": "c", "eff": "e",
            "smooth": "s", "space": "s"}

    def __init__(self, info: Dict):
        self.info = dict(info)

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
    """:data:`RESAMPLING`, checked."""
    if RESAMPLING not in nr.METHODS:
        raise ValueError(f"bleu_core.compat.RESAMPLING = {RESAMPLING!r}: choose one of "
                         f"{', '.join(map(repr, nr.METHODS))}")
    return RESAMPLING


def _line_keys(n: int) -> np.ndarray:
    """Row identities of segments 0..n-1: their 1-based line numbers, as ``beambleu score`` uses,
    so the same segment of two systems (and of a ``beambleu score`` run) gets the same draws."""
    return bootstrap.row_keys_from_ids(np.arange(1, n + 1, dtype=np.int64))


class _Metric(ABC):
    """What BLEU and CHRF share: sacrebleu's argument checks, reference streams and their cache,
    statistics per segment (an ``int64[n, width]`` matrix, from the bleu_core kernel), scores,
    bootstrap intervals and the signature."""

    _metric = None  # the wrapped bleu_core metric (Bleu or Chrf), set by the subclass

    def __init_subclass__(cls, metric=None, **kwargs):
        """``class BLEU(_Metric, metric=Bleu)``: the options ``Bleu`` declares become attributes."""
        super().__init_subclass__(**kwargs)
        if metric is not None:
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

    def _cache_references(self, references) -> List[List[str]]:
        """Reference streams to per-segment lists of references (``None`` entries dropped);
        sets ``num_refs`` as sacrebleu does (the count, or -1 when segments differ)."""
        streams = []
        for k, stream in enumerate(references):
            if isinstance(stream, str) or not isinstance(stream, Sequence):
                self._fail(f"reference stream {k} should be a sequence of strings.")
            streams.append(stream)
        lengths = sorted({len(s) for s in streams})
        if len(lengths) > 1:
            self._fail(f"reference streams have different lengths ({', '.join(map(str, lengths))} lines); "
                       "mark a missing reference with None", ValueError)
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
            tokenized = sum(hyp.endswith(" .") for hyp in hyps)
            if tokenized >= 100:
                logger.warning("That's %d lines that end in a tokenized period ('.'): it looks like you forgot to "
                               "detokenize your test data, which may hurt your score. If your data is detokenized, "
                               "or you don't care, suppress this message with `force=True`.", tokenized)
        try:
            arrays = to_arrow(hyps, refs)
        except (pa.ArrowException, UnicodeError):  # lone surrogates have no UTF-8 form: the scalar path takes them
            return self._metric.scalar_stats(hyps, refs)
        return self._metric.batch_stats(*arrays, per_row=True)

    # -- scores --------------------------------------------------------------------------------------

    @abstractmethod
    def _compute_score_from_stats(self, stats) -> Score:
        """The score of summed statistics (a vector of the metric's width)."""

    def _aggregate_and_compute(self, stats: np.ndarray) -> Score:
        """The score of per-segment statistics: summed, then scored once."""
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
        core = self._metric.signature(1).info
        info = {"nrefs": "var" if self.num_refs == -1 else self.num_refs, "bs": self.n_bootstrap, "ar": None,
                "seed": self.seed, "test": getattr(self, "test_set", None), "lang": getattr(self, "langpair", None),
                "origlang": getattr(self, "origlang", None), "subset": getattr(self, "subset", None)}
        info.update((k, v) for k, v in core.items() if k not in ("nrefs", "bs", "seed", "version"))
        info["version"] = core["version"]
        return Signature(info)


class BLEU(_Metric, metric=Bleu):
    """sacrebleu's ``BLEU``: same arguments, defaults, attributes and results.

    ``tokenize=None`` picks the tokenizer from ``trg_lang`` (``zh``, ``ja-mecab``, ``ko-mecab``,
    else ``13a``); ``references`` (streams) are kept for calls that pass ``references=None``.
    """

    SMOOTH_DEFAULTS: Dict[str, Optional[float]] = dict(SMOOTH_DEFAULTS)
    TOKENIZERS = _TOKENIZER_NAMES
    TOKENIZER_DEFAULT = DEFAULT_TOKENIZER
    _TOKENIZER_MAP = LANGUAGE_TOKENIZERS

    def __init__(self, lowercase: bool = False, force: bool = False, tokenize: Optional[str] = None,
                 smooth_method: str = "exp", smooth_value: Optional[float] = None,
                 max_ngram_order: int = MAX_NGRAM_ORDER, effective_order: bool = False, trg_lang: str = "",
                 references: Optional[Sequence[Sequence[Optional[str]]]] = None):
        super().__init__()
        self._force = force
        self.trg_lang = trg_lang
        if tokenize is None:
            tokenize = self._TOKENIZER_MAP.get(trg_lang, self.TOKENIZER_DEFAULT)
        else:
            for lang, best in self._TOKENIZER_MAP.items():
                if trg_lang == lang and tokenize != best:
                    logger.warning("Consider using the %r tokenizer for target language %r.", best, lang)
        if tokenize == "spm":
            logger.warning("Tokenizer 'spm' has been changed to 'flores101', and may be removed in the future.")
        self._metric = Bleu(tokenize=tokenize, lowercase=lowercase, smooth_method=smooth_method,
                            smooth_value=smooth_value, max_ngram_order=max_ngram_order,
                            effective_order=effective_order)
        self._metric.load()  # as sacrebleu, fail here when a MeCab tokenizer or a SentencePiece model is missing
        if references is not None:
            self._ref_cache = self._cache_references(references)

    @property
    def tokenizer(self):
        """The tokenizer object (callable on a string, with ``signature()``)."""
        return self._metric.tokenizer

    @property
    def tokenizer_signature(self) -> str:
        return self._metric.tokenizer.signature()

    @staticmethod
    def compute_bleu(correct: Sequence[int], total: Sequence[int], sys_len: int, ref_len: int,
                     smooth_method: str = "none", smooth_value=None, effective_order: bool = False,
                     max_ngram_order: int = MAX_NGRAM_ORDER) -> BLEUScore:
        """BLEU of summed statistics, with sacrebleu's arguments and defaults (note: smoothing
        ``none`` here). Statistics are non-negative integers (the input lists are not modified)."""
        core = compute_bleu([sys_len, ref_len, *correct, *total], max_ngram_order=max_ngram_order,
                            smooth_method=smooth_method, smooth_value=smooth_value, effective_order=effective_order)
        return _bleu_score(core, smooth_method, smooth_value)

    def _compute_score_from_stats(self, stats) -> BLEUScore:
        m = self._metric
        return _bleu_score(m.score(np.asarray(stats, dtype=np.int64)), m.smooth_method, m.smooth_value)

    def sentence_score(self, hypothesis: str, references: Sequence[Optional[str]]) -> BLEUScore:
        if not self.effective_order:
            logger.warning("It is recommended to enable `effective_order` for sentence-level BLEU.")
        return super().sentence_score(hypothesis, references)


class CHRF(_Metric, metric=Chrf):
    """sacrebleu's ``CHRF`` (chrF, and chrF++ with ``word_order=2``): same arguments, defaults,
    attributes and results; ``references`` (streams) are kept for calls that pass
    ``references=None``."""

    CHAR_ORDER = 6
    WORD_ORDER = 0
    BETA = 2
    _PUNCTS = set('!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~')

    def __init__(self, char_order: int = CHAR_ORDER, word_order: int = WORD_ORDER, beta: int = BETA,
                 lowercase: bool = False, whitespace: bool = False, eps_smoothing: bool = False,
                 references: Optional[Sequence[Sequence[Optional[str]]]] = None):
        super().__init__()
        self._metric = Chrf(char_order=char_order, word_order=word_order, beta=beta, lowercase=lowercase,
                            whitespace=whitespace, eps_smoothing=eps_smoothing)
        if references is not None:
            self._ref_cache = self._cache_references(references)

    @property
    def order(self) -> int:
        """Character plus word orders."""
        return self._metric.orders

    def _compute_score_from_stats(self, stats) -> CHRFScore:
        m = self._metric
        return CHRFScore(m.score(np.asarray(stats, dtype=np.int64)).score, m.char_order, m.word_order, m.beta)


class TER(_Metric, metric=Ter):
    """sacrebleu's ``TER``: same arguments, defaults, attributes and results; ``references``
    (streams) are kept for calls that pass ``references=None``. Scores of per-segment statistics
    add the segments' average reference lengths as floats in segment order, as sacrebleu does,
    so they are sacrebleu's for any number of references."""

    def __init__(self, normalized: bool = False, no_punct: bool = False, asian_support: bool = False,
                 case_sensitive: bool = False, references: Optional[Sequence[Sequence[Optional[str]]]] = None):
        super().__init__()
        self._metric = Ter(normalized=normalized, no_punct=no_punct, asian_support=asian_support,
                           case_sensitive=case_sensitive)
        if references is not None:
            self._ref_cache = self._cache_references(references)

    def _aggregate_and_compute(self, stats: np.ndarray) -> TERScore:
        rows = np.asarray(stats, dtype=np.int64).reshape(-1, self._metric.width)
        return self._score(column_sums(rows), Ter.ordered_ref_length(rows))

    def _compute_score_from_stats(self, stats) -> TERScore:
        return self._score(np.asarray(stats, dtype=np.int64), None)

    def _score(self, totals: np.ndarray, ref_length: Optional[float]) -> TERScore:
        core = self._metric.score(totals, ref_length=ref_length)
        return TERScore(core.score, core.num_edits, core.ref_length)


@functools.lru_cache(maxsize=None)
def compat_class(metric) -> type:
    """The sacrebleu-style class of a registered metric (its class, or its id): :class:`BLEU`
    and :class:`CHRF` for the built-ins; for another metric, a class named after its id
    (``LENRATIO``) whose keyword arguments are the metric's declared keyword options (default:
    the metric's own) and ``references`` (streams kept for calls that pass ``references=None``).
    Its options are attributes as on ``BLEU``; ``corpus_score``, ``sentence_score``,
    ``get_signature`` and :class:`PairedTest` work as they do for ``BLEU``; scores are
    :class:`Score` objects (name and score)."""
    if isinstance(metric, str):
        metric = registry.get(metric)
    if metric is Bleu:
        return BLEU
    if metric is Chrf:
        return CHRF
    if metric is Ter:
        return TER
    names = [opt.name for opt in metric.options if opt.keyword]
    defaults = inspect.signature(metric).parameters
    params = [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=defaults[n].default) for n in names]
    params.append(inspect.Parameter("references", inspect.Parameter.KEYWORD_ONLY, default=None))

    def __init__(self, references=None, **options):
        unknown = sorted(set(options) - set(names))
        if unknown:
            raise TypeError(f"{type(self).__name__}() got an unexpected keyword argument {unknown[0]!r}")
        _Metric.__init__(self)
        self._metric = metric(**options)
        self._metric.load()
        if references is not None:
            self._ref_cache = self._cache_references(references)

    __init__.__signature__ = inspect.Signature([inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY),
                                                *params])

    def _compute_score_from_stats(self, stats) -> Score:
        core = self._metric.score(np.asarray(stats, dtype=np.int64))
        return Score(core.name, core.score)

    name = metric.id.upper()
    namespace = {"__init__": __init__, "_compute_score_from_stats": _compute_score_from_stats,
                 "__module__": __name__, "__qualname__": name,
                 "__doc__": f"sacrebleu-style class of the metric {metric.id!r} "
                            f"({metric.__module__}.{metric.__name__})."}
    return types.new_class(name, (_Metric,), {"metric": metric}, lambda ns: ns.update(namespace))


# ------------------------------------------------------------------------------ paired tests


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


# ------------------------------------------------------------------------------ functions


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[Sequence[Optional[str]]], smooth_method="exp",
                smooth_value=None, force=False, lowercase=False, tokenize=BLEU.TOKENIZER_DEFAULT,
                use_effective_order=False) -> BLEUScore:
    """sacrebleu's ``corpus_bleu``: BLEU of a corpus against reference streams."""
    metric = BLEU(lowercase=lowercase, force=force, tokenize=tokenize, smooth_method=smooth_method,
                  smooth_value=smooth_value, effective_order=use_effective_order)
    return metric.corpus_score(hypotheses, references)


def raw_corpus_bleu(hypotheses: Sequence[str], references: Sequence[Sequence[Optional[str]]],
                    smooth_value: Optional[float] = BLEU.SMOOTH_DEFAULTS["floor"]) -> BLEUScore:
    """sacrebleu's ``raw_corpus_bleu``: no tokenization, floor smoothing, effective order."""
    return corpus_bleu(hypotheses, references, smooth_method="floor", smooth_value=smooth_value, force=True,
                       tokenize="none", use_effective_order=True)


def sentence_bleu(hypothesis: str, references: Sequence[Optional[str]], smooth_method: str = "exp",
                  smooth_value: Optional[float] = None, lowercase: bool = False, tokenize=BLEU.TOKENIZER_DEFAULT,
                  use_effective_order: bool = True) -> BLEUScore:
    """sacrebleu's ``sentence_bleu``: BLEU of one hypothesis (effective order on by default)."""
    metric = BLEU(lowercase=lowercase, tokenize=tokenize, force=False, smooth_method=smooth_method,
                  smooth_value=smooth_value, effective_order=use_effective_order)
    return metric.sentence_score(hypothesis, references)


def corpus_chrf(hypotheses: Sequence[str], references: Sequence[Sequence[Optional[str]]],
                char_order: int = CHRF.CHAR_ORDER, word_order: int = CHRF.WORD_ORDER, beta: int = CHRF.BETA,
                remove_whitespace: bool = True, eps_smoothing: bool = False) -> CHRFScore:
    """sacrebleu's ``corpus_chrf`` (note ``remove_whitespace``, the opposite of ``whitespace``)."""
    metric = CHRF(char_order=char_order, word_order=word_order, beta=beta, whitespace=not remove_whitespace,
                  eps_smoothing=eps_smoothing)
    return metric.corpus_score(hypotheses, references)


def sentence_chrf(hypothesis: str, references: Sequence[Optional[str]], char_order: int = CHRF.CHAR_ORDER,
                  word_order: int = CHRF.WORD_ORDER, beta: int = CHRF.BETA, remove_whitespace: bool = True,
                  eps_smoothing: bool = False) -> CHRFScore:
    """sacrebleu's ``sentence_chrf``."""
    metric = CHRF(char_order=char_order, word_order=word_order, beta=beta, whitespace=not remove_whitespace,
                  eps_smoothing=eps_smoothing)
    return metric.sentence_score(hypothesis, references)


__all__ = ["BLEU", "CHRF", "TER", "BLEUScore", "CHRFScore", "TERScore", "Score", "Signature", "PairedTest", "Result",
           "MAX_NGRAM_ORDER", "corpus_bleu", "raw_corpus_bleu", "sentence_bleu", "corpus_chrf", "sentence_chrf",
           "compat_class"]

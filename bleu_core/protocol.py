"""The metric protocol: what every corpus metric of beambleu is, whatever it measures.

A corpus metric here is a sum. A metric object, made from its options (validated once, in its
constructor), maps each candidate and its references to a vector of ``width`` non-negative int64
statistics; vectors of different pairs add; the score is a pure function of the sum. The
pipeline, the accumulators, the bootstrap, the paired tests, the outputs and the report only
ever use what :class:`Metric` declares, so adding a metric is one module (a subclass and its
score type) plus its kernel part: see :mod:`bleu_core.metrics.bleu` (BLEU) and :mod:`bleu_core.metrics.chrf`
(chrF, chrF++).

A subclass provides:

* ``id`` (the ``--metrics`` / ``-m`` name: ``bleu``, ``chrf``), ``name`` (sacrebleu's score
  name: ``BLEU``, ``chrF2``, ``chrF2++``), ``width`` and :meth:`stat_names` (the meaning of each
  column);
* :meth:`batch_stats` (the compiled kernel, over Arrow arrays or Python lists) and
  :meth:`scalar_stats` (the readable reference path, one pair at a time), which agree exactly;
* :meth:`check_stats` (is a vector a possible sum of this metric's statistics?) and
  :meth:`score` (a :class:`Score` of a totals vector: the same function for a sentence, a group
  and the corpus), :meth:`signature`, and :meth:`sentence_metric` (the variant that scores one
  pair: BLEU turns effective order on there, as ``sacrebleu -sl`` does);
* :meth:`table_columns`: the fields of a score that become columns of the group table;
* :attr:`options` (see :mod:`bleu_core.registry`), the options declared once, from which the
  command-line flags, the compat class and the Dataflow template parameters are made.

Shared here: input checking and the streamed corpus sum (:meth:`Metric.corpus_stats`,
:meth:`Metric.corpus_score`) and :class:`MetricSet`, several metrics side by side as one wider
vector (what the pipeline counts and combines in one pass).
"""

from __future__ import annotations

import contextlib
import itertools
import operator
import re
from collections import namedtuple
from collections.abc import Sequence

from . import formats
from .errors import BatchInputError
from .kernels.buffers import all_utf8, as_lists, is_arrow, python_rows, shared
from .records import record
from .signature import SignatureFields  # noqa: F401  (part of the protocol)
from .sums import checked_add, column_sums

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Callable, Iterable, List, Optional, Tuple

    import numpy as np
    import pyarrow as pa

# numpy is imported where statistics become arrays: `beambleu score`'s plain path holds them as Python ints
# (MetricSet.batch_stats_lists), which keeps numpy off its start-up

# pyarrow (bleu_core.kernels.arrow) is imported where Arrow arrays are met: Python lists of text reach the
# kernels as buffers made without it (bleu_core.kernels.buffers), which keeps it off `beambleu score`'s start-up

__all__ = ["CHUNK", "CommandLine", "Metric", "MetricSet", "Option", "SacrebleuArithmetic", "Score", "Stat",
           "batch_stats_shared", "checked_chunks", "checked_pairs", "chunked", "nrefs_label", "reference_batch_stats",
           "reference_counts"]

#: pairs turned into kernel buffers and counted per kernel call by ``corpus_stats``; bounds memory
CHUNK = 20_000


@record(frozen=True)
class Option:
    """One option of a metric, declared once.

    ``name`` is the constructor keyword (``keyword=False``: an option of the command line that
    the metric itself does not take, as BLEU's ``--force``, which only silences a warning);
    ``type`` converts the command-line text (``bool``: an on/off switch, off by default);
    ``default`` is the command line's default (``None`` may mean "chosen from the context", see
    :meth:`~bleu_core.protocol.Metric.from_options`); ``flag`` and ``short`` are sacrebleu's long
    flag and short form (``--smooth-method``, ``-s``); ``help`` may use ``%(default)s``, and
    ``run_help`` replaces it for ``beambleu run`` when the two differ; ``choices`` and
    ``metavar`` are argparse's. ``run=False``: a flag of ``beambleu score`` only. ``compat=False``:
    not an attribute of the ``bleu_core.compat`` class (sacrebleu's class keeps no such
    attribute). ``label``, ``template_help`` and ``template_regex`` describe the Dataflow
    template parameter (by default: the flag's words, the help text, and a pattern from the type
    or the choices: non-negative for ``int`` and ``float``)."""

    name: str
    type: Callable = str
    default: object = None
    flag: str = ""
    short: Optional[str] = None
    help: str = ""
    choices: Optional[Sequence] = None
    metavar: Optional[str] = None
    run: bool = True
    keyword: bool = True
    compat: bool = True
    run_help: Optional[str] = None
    label: Optional[str] = None
    template_help: Optional[str] = None
    template_regex: Optional[str] = None

    @property
    def dest(self) -> str:
        """The attribute of the parsed command line (``--chrf-char-order``: ``chrf_char_order``)."""
        return self.flag[2:].replace("-", "_")

    @property
    def switch(self) -> bool:
        """An on/off flag (``store_true``)."""
        return self.type is bool

    def help_for(self, run: bool) -> str:
        """The help text of ``beambleu run`` (``run``) or ``beambleu score``."""
        return self.run_help if run and self.run_help is not None else self.help

    def template_parameter(self) -> dict:
        """This option as a Dataflow Flex Template parameter (``TemplateMetadata.parameters``)."""
        label = self.label or self.flag[2:].replace("-", " ").capitalize()
        text = self.template_help or (self.help % {"default": self.default})
        regex = self.template_regex
        if regex is None:
            if self.switch:
                regex = "^(true|false)$"
            elif self.choices:
                regex = "^(" + "|".join(c if re.fullmatch(r"[\w-]+", c) else re.escape(c)
                                        for c in map(str, self.choices)) + ")$"
            elif self.type is int:
                regex = "^[0-9]+$"
            elif self.type is float:
                regex = "^[0-9]+(\\.[0-9]+)?$"
        param = {"name": self.dest, "label": label, "helpText": text, "isOptional": True, "paramType": "TEXT"}
        if regex is not None:
            param["regexes"] = [regex]
        return param


class CommandLine:
    """What the command line says besides a metric's own options, for
    :meth:`~bleu_core.protocol.Metric.from_options`: ``target_language`` (``-l``'s, ``None``
    without it) and ``sentence_level`` (``beambleu score -sl``: one score per line)."""

    def __init__(self, target_language: Optional[str] = None, sentence_level: bool = False):
        self._target_language = target_language
        self.sentence_level = sentence_level

    @property
    def target_language(self) -> Optional[str]:
        return self._target_language



class Stat(namedtuple("Stat", ["index"])):
    """A group-table column that is one of the metric's statistics (``index``, an int, in its
    vector): the group table takes it straight from the group's totals."""

    __slots__ = ()


class Score:
    """What every metric's score offers (:class:`bleu_core.metrics.bleu.score.BleuScore`,
    :class:`bleu_core.metrics.chrf.ChrfScore`): ``name``, ``score`` (float, full precision),
    ``signature`` (a string, or ``None``), ``verbose_score`` (the text after the score in
    sacrebleu's line; empty for most metrics) and :meth:`stat_fields`; the text line and the JSON
    object are made from those by :mod:`bleu_core.formats`, the same for every metric."""

    name: str
    score: float
    signature: Optional[str]
    #: the signature object the score stage signed the score with (its fields are what the JSON
    #: shows; a signature given as text is read back with :func:`bleu_core.signature.parse_signature`)
    signature_object = None
    verbose_score = ""

    def stat_fields(self) -> dict:
        """The metric's own JSON fields after sacrebleu's (its statistics)."""
        return {}

    def sign(self, signature) -> "Score":
        """Set the signature (an object; its text is what ``signature`` shows); returns the score."""
        self.signature, self.signature_object = (None, None) if signature is None else (signature.format(), signature)
        return self

    def _signature(self):
        obj = self.signature_object
        return obj if obj is not None and obj.format() == self.signature else self.signature

    def format(self, width: int = 2, score_only: bool = False, signature: Optional[str] = None) -> str:
        """sacrebleu's text line (``NAME|signature = score verbose``), or the score alone."""
        sig = self._signature() if signature is None else signature
        return formats.score_line(self.name, self.score, width, sig, verbose=self.verbose_score,
                                  score_only=score_only)

    def to_dict(self) -> dict:
        """sacrebleu's JSON object for this score (``name``, ``score``, ``signature``, ...,
        the signature's fields), plus the metric's own fields (its statistics)."""
        return formats.fields(self.name, self.score, self._signature(), self.verbose_score, self.stat_fields())

    def __str__(self) -> str:
        return self.format()


class SacrebleuArithmetic:
    """How sacrebleu's resampling (:mod:`bleu_core.resampling.sacrebleu`) holds and scores one
    metric's statistics: its per-segment statistics as sacrebleu holds them, and the score of a
    bootstrap replicate's float32 sums or of a randomization trial's exact sums with the arithmetic
    and numpy scalar types sacrebleu's ``_compute_score_from_stats`` sees. A metric sacrebleu has
    overrides it (``bleu_core/metrics/<id>/resampling.py``, vectorised over many sums at once); this
    default resamples a metric on its own statistics, a replicate's float32 sums rounded to integers
    before its :meth:`Metric.score`."""

    def __init__(self, metric: "Metric"):
        self.metric = metric

    def segment_statistics(self, rows) -> np.ndarray:
        """sacrebleu's per-segment statistics of ``int64[n, width]`` rows (here: the rows)."""
        import numpy as np

        return np.asarray(rows, dtype=np.int64)

    def replicate_score(self, sums: np.ndarray):
        """The score of one bootstrap replicate's float32 sums."""
        import numpy as np

        return self.metric.score(np.rint(sums).astype(np.int64)).score

    def trial_score(self, sums: np.ndarray):
        """The score of one randomization trial's pseudo-system (exact sums)."""
        return self.metric.score(sums).score

    def replicate_scores(self, sums: np.ndarray) -> list:
        """:meth:`replicate_score` of every row of ``float32[n, width]`` sums."""
        return [self.replicate_score(row) for row in sums]

    def trial_scores(self, sums: np.ndarray) -> list:
        """:meth:`trial_score` of every row of exact sums."""
        return [self.trial_score(row) for row in sums]

    @staticmethod
    def fill(out: list, off: np.ndarray, one, sums: np.ndarray) -> list:
        """``out`` (vectorised scores) with the rows that ``off`` marks scored by ``one(row)``."""
        import numpy as np

        for i in np.flatnonzero(off).tolist():
            out[i] = one(sums[i])
        return out


class Metric:
    """Base class of a configured metric (see the module documentation)."""

    #: whether the metric's batch paths write their statistics with
    #: :func:`bleu_core.kernels.buffers.new_out`, so that within
    #: :func:`~bleu_core.kernels.buffers.python_rows` they return ``memoryview`` buffers (read as Python
    #: ints by :meth:`MetricSet.batch_stats_lists`, without numpy); another metric's arrays are
    #: converted the same way
    plain_buffers: bool = False

    #: the metric's name on the command line (``--metrics``, ``-m``)
    id: str = ""
    #: prefix of its group-table and per-pair columns: ``<id>_`` (``bleu_score``, ``chrf_char1_hyp``,
    #: ``ter_edits``) unless a subclass sets another
    @property
    def column_prefix(self) -> str:
        return f"{self.id}_"

    #: a pipeline counter this metric's statistics give: (counter name, statistic column), or None
    counter: Optional[Tuple[str, int]] = None
    #: the options, declared once (:class:`bleu_core.registry.Option`): the command-line flags, the
    #: compat class's keywords and the Dataflow template parameters are made from them
    options: tuple = ()
    #: the title of the options' argument group in ``--help`` (``<id> options`` when empty)
    option_group: str = ""

    @classmethod
    def from_options(cls, options: dict, context) -> "Metric":
        """The metric of command-line options: ``options`` maps each keyword option's name to
        its parsed value; ``context`` is a :class:`bleu_core.registry.CommandLine` (what else
        the command line says), for a metric whose options depend on it (BLEU's tokenizer
        follows ``-l``'s target language). The constructor refuses bad values."""
        return cls(**options)

    # -- what a subclass provides -----------------------------------------------------------

    @property
    def name(self) -> str:
        raise NotImplementedError

    @property
    def width(self) -> int:
        raise NotImplementedError

    def stat_names(self) -> List[str]:
        """A name for each column of the statistics vector."""
        raise NotImplementedError

    def batch_stats(self, candidates, references, per_row: bool = True) -> np.ndarray:
        """``int64[n, width]`` (or its column sums when ``per_row`` is false) with the kernel.
        ``references[i]`` is a list of references where ``None`` (null) is a missing one;
        a null candidate, a row without any reference or invalid UTF-8 raise
        :class:`bleu_core.errors.BatchInputError` naming the row."""
        raise NotImplementedError

    def batch_stats_many(self, systems, references, per_row: bool = True) -> List[np.ndarray]:
        """:meth:`batch_stats` of each candidate list in ``systems`` (several systems' outputs
        for the same ``references``), in order, with the same errors (the first system's first).
        This default converts the references once and calls :meth:`batch_stats` per system; a
        metric whose kernel can prepare each row's references once for all systems overrides it."""
        systems = list(systems)
        if not any(map(is_arrow, [*systems, references])):  # lists: each system's batch_stats reads them as they are
            systems, references = as_lists(systems, references)
            return [self.batch_stats(candidates, references, per_row=per_row) for candidates in systems]
        from .kernels.arrow import to_arrow

        out, refs = [], references
        for candidates in systems:
            candidates, refs = to_arrow(candidates, refs)
            out.append(self.batch_stats(candidates, refs, per_row=per_row))
        return out

    def scalar_stats(self, candidates, references) -> np.ndarray:
        """``int64[n, width]`` with the reference path (pure Python, one pair at a time)."""
        raise NotImplementedError

    def check_stats(self, vector) -> np.ndarray:
        """``vector`` as int64 if it can be a sum of this metric's statistics, else ValueError
        (TypeError for non-integers)."""
        raise NotImplementedError

    def signature(self, nrefs, n_bootstrap: Optional[int] = None, seed: Optional[int] = None):
        """sacrebleu's signature object for these options (``nrefs``: a count, ``"var"``, or a
        set of counts); ``bs:``/``seed:`` appear when ``n_bootstrap`` is given."""
        raise NotImplementedError

    def score(self, stats, nrefs=None, n_bootstrap: Optional[int] = None, seed: Optional[int] = None) -> Score:
        """The score of a totals vector (checked with :meth:`check_stats`); ``nrefs`` fills
        the signature."""
        raise NotImplementedError

    def load(self) -> None:
        """Make what the metric needs before any input is read (a tokenizer and its dictionary):
        RuntimeError if it cannot (a missing extra)."""

    def named_files(self) -> List[str]:
        """The files (paths or URLs) the options name that :meth:`load` reads, e.g. BLEU's
        ``spm_model`` (``run`` checks that their object stores answer before loading)."""
        return []

    def loaded(self) -> "Metric":
        """:meth:`load`, then the metric to hand to workers: with a file it found by itself fixed
        in its options, so that every worker reads the one the driver found (BLEU: the
        SentencePiece model from sacrebleu's cache); by default the same metric."""
        self.load()
        return self

    def resources(self) -> dict:
        """The files the loaded metric reads besides its input, for the record (a result's
        ``inputs``) and for checking that every worker reads the same ones: name -> dict with at
        least ``path`` and ``sha256``. Loads the metric if needed."""
        return {}

    def sentence_metric(self) -> "Metric":
        """The metric that scores one pair on its own (per-pair output, ``-sl``)."""
        return self

    def table_columns(self) -> List[Tuple[str, pa.DataType, object]]:
        """Columns of the group table: (name, Arrow type, field), where field is a
        :class:`Stat` (the column is a statistic, taken from the totals), or says where the value
        is in the score's :meth:`Score.to_dict`: a key, a (key, index) pair for an entry of a
        list, or a callable of the dict. Names get :attr:`column_prefix`. The
        significance columns go right after ``signature``; ``n_pairs`` and ``nrefs``, shared by
        every metric, are the table's own columns, after the group keys (a metric need not list them)."""
        raise NotImplementedError

    def pair_column_names(self) -> List[str]:
        """Names of the per-pair output's columns: each statistic under its group-table name
        (the :meth:`table_columns` entry whose field is that :class:`Stat`; else its
        :meth:`stat_names` name), then the sentence score as ``score``, all with
        :attr:`column_prefix`: a statistic has one name in both outputs."""
        names = list(self.stat_names())
        for name, _, field in self.table_columns():
            if isinstance(field, Stat):
                names[field.index] = name
        return [self.column_prefix + name for name in names] + [self.column_prefix + "score"]

    def pair_columns(self, rows: np.ndarray) -> dict:
        """Columns of the per-pair output for these statistics rows (``int64[n, width]``)."""
        import pyarrow as pa

        names = self.pair_column_names()
        cols = {name: pa.array(rows[:, i]) for i, name in enumerate(names[:-1])}
        one = self.sentence_metric()
        cols[names[-1]] = pa.array([one.score(row).score for row in rows], pa.float64())
        return cols

    # -- shared ------------------------------------------------------------------------------

    def stat_name(self, i: int) -> str:
        return self.stat_names()[i]

    def chunk_stats(self, hyps: List[str], refs: List[Sequence[Optional[str]]], offset: int, per_row: bool):
        """The statistics of one chunk of checked lists (the rows, or their sum): the batch path
        (lists go to the kernels as they are), the scalar path for text without a UTF-8 form (lone
        surrogates: looked for only when the batch path fails); a row's error names its place in the
        whole input: ``candidates[offset + row]`` or ``references[...]``."""
        try:
            try:
                return self.batch_stats(hyps, refs, per_row=per_row)
            except Exception:
                if all_utf8(hyps, refs):
                    raise
            rows = self.scalar_stats(hyps, refs)
            return rows if per_row else column_sums(rows)
        except ValueError as exc:
            row = getattr(exc, "row", None)
            if row is None:
                raise
            where = "references" if exc.column == "references" else "candidates"
            raise ValueError(f"{where}[{offset + row}]: {exc.reason}") from None

    def corpus_stats(self, candidates: Iterable[str], references: Iterable[Sequence[Optional[str]]]):
        """Summed statistics and the set of reference counts, streaming ``CHUNK`` pairs at a time."""
        import numpy as np

        total = np.zeros(self.width, dtype=np.int64)
        nrefs = set()
        offset = 0
        for hyps, refs in checked_chunks(candidates, references):
            nrefs.update(reference_counts(refs))
            part = self.chunk_stats(hyps, refs, offset, per_row=False)
            checked_add(total, part, out=total, what=f"the corpus statistics of {self.name}", name=self.stat_name)
            offset += len(hyps)
        if offset == 0:
            raise ValueError("candidates: no segments to score")
        return total, nrefs

    def corpus_score(self, candidates, references) -> Score:
        """The score of a whole corpus: statistics summed, then scored once."""
        plain = self._plain_corpus_totals(candidates, references)
        stats, nrefs = plain if plain is not None else self.corpus_stats(candidates, references)
        return self.score(stats, nrefs)

    def _plain_corpus_totals(self, candidates, references):
        """:meth:`corpus_stats` as Python ints, for lists (or tuples) of ``str`` and reference lists of
        ``str`` that the kernels read as they are (:attr:`plain_buffers`), ``CHUNK`` pairs at a time, the
        kernel summing each chunk: no row per pair, no check pair by pair in Python, no numpy. None for
        any other input and for any that fails (a None, a row without references, a value that is not a
        str, text without a UTF-8 form, a sum past int64): :meth:`corpus_stats` then scores it or raises
        its error, as it always did."""
        if (not self.plain_buffers or type(candidates) not in (list, tuple) or type(references) not in (list, tuple)
                or not candidates or len(candidates) != len(references)):
            return None
        from .sums import checked_add_ints

        total, nrefs = [0] * self.width, set()
        for i in range(0, len(candidates), CHUNK):
            hyps, refs = list(candidates[i:i + CHUNK]), list(references[i:i + CHUNK])
            part = self.plain_totals(hyps, refs)
            if part is None:
                return None
            try:
                checked_add_ints(total, part)
            except OverflowError:
                return None
            nrefs.update(map(len, refs))
        return total, nrefs

    def plain_totals(self, candidates, references) -> Optional[List[int]]:
        """The column sums of :meth:`batch_stats` as Python ints, summed by the kernels (no row per pair,
        no numpy), for lists the kernels read as they are: ``candidates`` of ``str``, ``references`` one
        list of ``str`` per candidate (or a :class:`~bleu_core.kernels.buffers.RowLists`), no None. None
        for any other input, for any that fails, and for a metric without :attr:`plain_buffers`: the
        caller's checked path then scores it or raises its error."""
        if not self.plain_buffers:
            return None
        from .kernels.buffers import list_buffers, python_rows, shared

        try:
            with shared(), python_rows():
                bufs = list_buffers(candidates, references)  # None: a value not a str, or without UTF-8 form
                if bufs is None or bufs.candidates[2] is not None or bufs.references[2] is not None:
                    return None  # (validity bytes: a None somewhere, which the checked path judges)
                return self.batch_stats(candidates, references, per_row=False).tolist()
        except Exception:
            return None

    def sentence_score(self, candidate: str, references: Sequence[Optional[str]]) -> Score:
        """The score of one candidate against its references (with :meth:`sentence_metric`)."""
        if not isinstance(candidate, str):
            raise TypeError(f"candidate must be a str, got {type(candidate).__name__}")
        if isinstance(references, str) or not isinstance(references, Sequence):
            raise TypeError("references must be a list of reference strings")
        return self.sentence_metric().corpus_score([candidate], [references])

    def sacrebleu_arithmetic(self) -> SacrebleuArithmetic:
        """How sacrebleu's resampling holds and scores this metric's statistics (see
        :class:`SacrebleuArithmetic`; this default resamples the metric's own statistics)."""
        return SacrebleuArithmetic(self)


def nrefs_label(nrefs):
    """The signature's ``nrefs``: a count, or ``"var"`` for several counts (a set)."""
    if isinstance(nrefs, (set, frozenset)):
        return next(iter(nrefs)) if len(nrefs) == 1 else "var"
    return nrefs


def chunked(pairs, size: int = CHUNK):
    """``(candidates, references)`` lists of up to ``size`` pairs at a time from (candidate, refs) pairs."""
    pairs = iter(pairs)
    while True:
        chunk = list(itertools.islice(pairs, size))
        if not chunk:
            return
        yield [h for h, _ in chunk], [r for _, r in chunk]


def reference_counts(refs) -> map:
    """The number of references (not None) of each list in ``refs``."""
    return map(operator.sub, map(len, refs), map(operator.countOf, refs, itertools.repeat(None)))


def _plain_lists(candidates, references) -> bool:
    """Whether ``candidates`` and ``references`` are lists (or tuples) that :func:`checked_pairs` would
    pass as they are: as many candidates, each a str, as reference lists, each a list or tuple of str or
    None with at least one str. Checked in a few passes at C speed, never pair by pair in Python."""
    return (type(candidates) in (list, tuple) and type(references) in (list, tuple)
            and len(candidates) == len(references) and set(map(type, candidates)) <= {str}
            and set(map(type, references)) <= {list, tuple}
            and set(map(type, itertools.chain.from_iterable(references))) <= {str, type(None)}
            and all(reference_counts(references)))


def checked_chunks(candidates, references, size: int = CHUNK):
    """``(candidates, references)`` lists of up to ``size`` checked pairs at a time: slices of the
    lists themselves when they pass as they are (:func:`_plain_lists`), else :func:`checked_pairs`'
    pairs (TypeError/ValueError naming the first bad item)."""
    if _plain_lists(candidates, references):
        for i in range(0, len(candidates), size):
            yield list(candidates[i:i + size]), list(references[i:i + size])
        return
    yield from chunked(checked_pairs(candidates, references), size)


def checked_pairs(candidates, references):
    """(candidate, references) pairs, each checked: TypeError/ValueError naming the item."""
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


def reference_batch_stats(metric, candidates, references, per_row: bool = True, *, utf8_first: bool = False,
                          max_refs: Optional[int] = None) -> np.ndarray:
    """``metric.batch_stats(candidates, references, per_row)`` computed with the metric's reference
    path, :meth:`Metric.scalar_stats`: what the built-in metrics' batch paths do with
    ``BEAMBLEU_KERNELS=python`` (:mod:`bleu_core.kernels`). The same inputs (Python lists, Arrow
    arrays, chunked arrays), the same numbers, and the kernel's errors: the input is normalised as
    the kernel's is (:func:`~bleu_core.kernels.arrow.to_arrow`, so the same TypeError/ValueError for
    a bad argument), then each row is checked in the kernel's order, raising
    :class:`~bleu_core.errors.BatchInputError` naming the row: a null reference list, a null
    candidate, a candidate that is not UTF-8, then each present reference (past ``max_refs`` of
    them, or not UTF-8), then a row without any reference. ``utf8_first``: the text of the whole
    batch is checked for UTF-8 before anything else, as the batch paths that decode text in Python
    do (BLEU's MeCab and SentencePiece tokenizers, TER's ``normalized``). ``per_row=False``: the
    checked column sums (OverflowError past int64)."""
    import numpy as np
    import pyarrow as pa

    from .kernels.arrow import check_utf8, invalid_utf8_mask, list_parts, string_buffers, to_arrow

    cand, refs = to_arrow(candidates, references)
    child, list_offsets = list_parts(refs)  # a null reference list: BatchInputError
    string_buffers(cand, "candidates")  # what the kernel refuses before it reads a row: not strings,
    string_buffers(child, "references")  # malformed offsets
    n = len(cand)
    if n and (list_offsets[0] != 0 or list_offsets[-1] != len(child) or (np.diff(list_offsets) < 0).any()):
        raise ValueError("references: malformed Arrow list array (offsets outside the child array or decreasing)")
    if utf8_first:
        check_utf8(cand, child, list_offsets)

    invalid = object()  # a value that is not UTF-8

    def texts(array: pa.Array) -> list:
        if pa.types.is_string_view(array.type) or pa.types.is_null(array.type):
            array = array.cast(pa.large_string())
        bad = invalid_utf8_mask(array)
        if bad is None:
            return array.to_pylist()
        raw = array.cast(pa.large_binary()).to_pylist()
        return [invalid if is_bad else (None if b is None else b.decode("utf-8")) for b, is_bad in zip(raw, bad)]

    hyps, flat = texts(cand), texts(child)
    ref_lists = []
    for row in range(n):
        hyp = hyps[row]
        if hyp is None:
            raise BatchInputError(row, "candidate", "candidate is null")
        if hyp is invalid:
            raise BatchInputError(row, "candidate", "invalid UTF-8")
        row_refs = flat[list_offsets[row]:list_offsets[row + 1]]
        present = 0
        for j, ref in enumerate(row_refs):
            if ref is None:  # a missing reference
                continue
            present += 1
            if max_refs is not None and present > max_refs:
                raise BatchInputError(row, "references", f"more than {max_refs} references ({metric.name}'s "
                                                         f"statistics hold at most {max_refs} per pair)", j)
            if ref is invalid:
                raise BatchInputError(row, "references", "invalid UTF-8", j)
        if not present:
            raise BatchInputError(row, "references", "no reference (all references are missing)")
        ref_lists.append(row_refs)
    rows = np.asarray(metric.scalar_stats(hyps, ref_lists), dtype=np.int64).reshape(n, metric.width)
    if per_row:
        return rows
    return column_sums(rows, what=f"the statistics of {metric.name}", name=metric.stat_name)


def batch_stats_shared(metric, candidates, references, per_row: bool = True) -> np.ndarray:
    """``metric.batch_stats(candidates, references, per_row)`` (a :class:`Metric` or a
    :class:`MetricSet`) for a batch whose rows repeat reference lists, as a long table's rows do
    (every system's row of a segment carries that segment's references): the rows with the same
    list are scored as several systems of one row (:meth:`Metric.batch_stats_many`), so that a
    kernel that can prepares each distinct list once. The same numbers, and the same error for a
    bad batch (then :meth:`batch_stats` is run to find it); a batch that repeats few lists takes
    the plain path (:func:`bleu_core.kernels.arrow.reference_groups`)."""
    import numpy as np
    import pyarrow as pa

    from .kernels.arrow import reference_groups, to_arrow

    candidates, references = to_arrow(candidates, references)
    plan = reference_groups(candidates, references)
    if plan is None:
        return metric.batch_stats(candidates, references, per_row=per_row)
    firsts, slots = plan
    n = len(candidates)
    padded = pa.concat_arrays([candidates, pa.array([""], type=candidates.type)])  # row n: a slot's padding
    try:
        parts = metric.batch_stats_many([padded.take(pa.array(slot)) for slot in slots],
                                        references.take(pa.array(firsts)), per_row=True)
    except Exception:
        metric.batch_stats(candidates, references, per_row=per_row)  # raises the first bad row's error
        raise
    rows = np.empty((n, metric.width), dtype=np.int64)
    for slot, part in zip(slots, parts):
        real = slot < n
        rows[slot[real]] = part[real]
    return rows if per_row else column_sums(rows)


def _once(candidates, references):
    """``candidates`` and ``references`` in a form every metric of a set can read, converted once:
    Arrow arrays (:func:`~bleu_core.kernels.arrow.to_arrow`) when either is one, else lists (read
    by the kernels without pyarrow, :mod:`bleu_core.kernels.buffers`)."""
    if is_arrow(candidates) or is_arrow(references):
        from .kernels.arrow import to_arrow

        return to_arrow(candidates, references)
    (candidates,), references = as_lists([candidates], references)
    return candidates, references


class MetricSet:
    """Several metrics computed in one pass: their statistics side by side in one
    ``int64[n, width]`` matrix (metric ``i`` owns columns ``slices[i]``). This is what the
    pipeline counts, combines and bootstraps; scoring takes each metric's slice of the totals."""

    def __init__(self, metrics: Sequence[Metric]):
        metrics = tuple(metrics)
        if not metrics:
            raise ValueError("at least one metric is needed")
        ids = [m.id for m in metrics]
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:
            raise ValueError(f"metric {dup[0]!r} is asked for twice")
        self.metrics = metrics
        bounds = list(itertools.accumulate((m.width for m in metrics), initial=0))
        self.slices = tuple(slice(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:]))
        self.width = int(bounds[-1])

    def __iter__(self):
        return iter(self.metrics)

    def __len__(self) -> int:
        return len(self.metrics)

    def __getitem__(self, i: int) -> Metric:
        return self.metrics[i]

    def __eq__(self, other) -> bool:
        return isinstance(other, MetricSet) and self.metrics == other.metrics

    def __hash__(self) -> int:
        return hash(self.metrics)

    def __repr__(self) -> str:
        return f"MetricSet({list(self.metrics)!r})"

    def load(self) -> None:
        """Load every metric (see :meth:`Metric.load`)."""
        for m in self.metrics:
            m.load()

    def resources(self) -> dict:
        """Every metric's :meth:`Metric.resources`, in one dict."""
        out = {}
        for m in self.metrics:
            out.update(m.resources())
        return out

    @property
    def names(self) -> List[str]:
        return [m.name for m in self.metrics]

    def stat_names(self) -> List[str]:
        """Column names of the combined vector: ``<metric name>.<statistic>``."""
        return [f"{m.name}.{s}" for m in self.metrics for s in m.stat_names()]

    def stat_name(self, i: int) -> str:
        return self.stat_names()[i % self.width]

    def split(self, vector: np.ndarray) -> List[np.ndarray]:
        """Each metric's part of a combined vector (or of the last axis of a matrix)."""
        return [vector[..., s] for s in self.slices]

    def batch_stats(self, candidates, references, per_row: bool = True) -> np.ndarray:
        """Every metric's statistics of one batch, side by side."""
        if len(self.metrics) == 1:
            return self.metrics[0].batch_stats(candidates, references, per_row=per_row)
        import numpy as np

        candidates, references = _once(candidates, references)  # convert once for all metrics
        parts = [m.batch_stats(candidates, references, per_row=per_row) for m in self.metrics]
        return np.concatenate(parts, axis=-1)

    def batch_stats_many(self, systems, references, per_row: bool = True) -> List[np.ndarray]:
        """:meth:`batch_stats` of each system's candidates for the same references (each metric's
        :meth:`Metric.batch_stats_many`, so a row's references are prepared once for all systems
        where the metric's kernel can), side by side per system."""
        parts = self._parts(systems, references, per_row)
        if len(self.metrics) == 1 or not parts:
            return parts[0] if parts else []
        import numpy as np

        return [np.concatenate(per_metric, axis=-1) for per_metric in zip(*parts)]

    def batch_stats_lists(self, systems, references, per_row: bool = True) -> list:
        """:meth:`batch_stats_many` as Python ints, made without numpy where the metrics' kernels
        write into plain buffers (:attr:`Metric.plain_buffers`: the built-in metrics'): each system's
        rows (a list of ``width`` ints per row) or, without ``per_row``, its column sums (a list of
        ``width`` ints). The same numbers and errors."""
        parts = self._parts(systems, references, per_row, lists=True)
        parts = [[stats.tolist() for stats in per_system] for per_system in parts]
        if len(parts) == 1:
            return parts[0]
        chain = itertools.chain.from_iterable
        if not per_row:
            return [list(chain(sums)) for sums in zip(*parts)]
        return [[list(chain(row)) for row in zip(*rows)] for rows in zip(*parts)]

    def _parts(self, systems, references, per_row: bool, lists: bool = False) -> list:
        """Per metric, :meth:`Metric.batch_stats_many` of every system (``[]`` without systems),
        with the error :meth:`batch_stats` meets first, system by system; ``lists``: the metrics
        whose kernels write into plain buffers do (:func:`~bleu_core.kernels.buffers.python_rows`)."""
        systems = list(systems)
        if not systems:
            return []
        try:
            first, references = _once(systems[0], references)
            with shared():  # lists: each one's buffers made once for all the metrics
                parts = []
                for m in self.metrics:
                    with python_rows() if lists and m.plain_buffers else contextlib.nullcontext():
                        parts.append(m.batch_stats_many([first, *systems[1:]], references, per_row=per_row))
                return parts
        except Exception:
            # a bad row: raise the error batch_stats meets first, system by system (metric by metric)
            for candidates in systems:
                self.batch_stats(candidates, references, per_row=per_row)
            raise

    def scalar_stats(self, candidates, references) -> np.ndarray:
        import numpy as np

        return np.concatenate([m.scalar_stats(candidates, references) for m in self.metrics], axis=-1)

    def check_stats(self, vector) -> np.ndarray:
        import numpy as np

        vector = np.asarray(vector)
        if vector.shape != (self.width,):
            raise ValueError(f"expected {self.width} statistics ({', '.join(self.names)}), got shape {vector.shape}")
        return np.concatenate([m.check_stats(part) for m, part in zip(self.metrics, self.split(vector))])

"""TER, the Translation Edit Rate (Snover et al. 2006), exactly as sacrebleu 2.6.0 computes it.

TER counts the edits that turn a candidate into a reference: insertions, deletions and
substitutions of words, and shifts of contiguous blocks of words (each a single edit), divided by
the reference length. Finding the fewest edits with shifts is hard, so sacrebleu (after Tercom)
searches greedily, and its exact choices define the metric:

* **Words.** The Tercom tokenizer (:func:`tercom_words`): lowercase unless ``case_sensitive``;
  with ``normalized``, Tercom's general and Western rules (XML entities, punctuation split off,
  possessives, periods and commas away from digits), and with ``asian_support`` also CJK
  characters and CJK / full-width punctuation made words of their own; with ``no_punct``,
  ``.,?:;!"()`` removed (and CJK / full-width punctuation with ``asian_support``); then the
  ``str.split()`` words. References are tokenized twice, as sacrebleu does
  (:meth:`Ter.reference_words`; it matters only with ``normalized``).
* **Edit distance** (:class:`BandedDistance`): Levenshtein over words, computed only in a band
  of 25 cells either side of the "diagonal" ``floor(i * len(ref) / len(hyp))`` (wider when the
  reference is over 50 times longer), the last row in full; cells outside the band are
  infinite. Ties go to the diagonal step (match or substitution), then deletion of a candidate
  word, then insertion of a reference word, and the alignment is traced back from the last cell.
* **Shifts** (:func:`shift_search`): repeatedly, every block of up to 10 words of the candidate
  that equals a block of the reference starting at most 50 positions away, that is not already
  correct on both sides and whose aligned position is outside it, is tried at each position the
  alignment gives (before the candidate word aligned to each reference word of the block, or at
  the start); the shift with the greatest gain in edit distance wins (then the longest block,
  the earliest block, the earliest target). It is applied if the gain is positive, and the
  search goes on, unless 1,000 candidate shifts have been tried for the pair (counted over all
  rounds and checked after each block, before a gain is used: the round that reaches 1,000
  applies nothing).

Per pair, the edits are those of the reference with the fewest (the first on a tie, an empty
reference costing one deletion per candidate word) and the reference length is the average number
of words of the references. The corpus score is ``100 * sum(edits) / sum(average lengths)``: 100
when all references are empty but some candidate is not, 0 when all are empty.

**The statistics** of a pair are 69 integers: ``edits`` and its parts ``insertions``,
``deletions``, ``substitutions``, ``shifts`` (of the chosen reference, read from its final
alignment; they add up to ``edits``), then ``ref_len_1`` .. ``ref_len_64``: the total length of
the pair's references in the column of its reference count k (the others 0), so that a sum of rows
holds, for each k, the total reference length ``S_k`` of the pairs with k references, and the sum
of average lengths is exactly ``sum(S_k / k)``. sacrebleu takes any number of references; a vector
that adds can hold this exact sum only for a bounded count, so pairs with more than
:data:`MAX_REFS` (64) references are refused, by every path (the kernel, the reference path, the
compat API, ``beambleu score`` and ``run``), with one line.

**Exactness.** sacrebleu adds the per-pair averages as floats in corpus order. With a power of two
of references (1, 2, 4, ..., 64) every average is a multiple of 1/64 and that float sum is exact
(below 2**47), so the exact sum is sacrebleu's, bit for bit, however the pairs were sharded. With
other counts (3, 5, 6, 7, 9, ...) sacrebleu's sum depends on its addition order and can differ
from the exact one in the last bits, enough to print another last digit when the score is near a
half (``56.25`` exactly, sacrebleu's ``56.25000000000001``). What reads the pairs in order adds
sacrebleu's float averages in order beside the integers (:meth:`Ter.ordered_sum`, which
:class:`bleu_core.scoring.InOrder` calls for ``beambleu score``; :meth:`Ter.corpus_score`; the
compat API) and scores with that float (``score(totals, ordered=...)``), bit-identical to
sacrebleu; :meth:`Ter.score` of summed totals alone (``beambleu run``, any sharding) gives the
correctly rounded exact value. The score object says which (``ref_length_sum``).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

from ...kernels import use_reference
from ...protocol import (CHUNK, Metric, Option, Stat, checked_chunks, checked_pairs, reference_batch_stats,
                         reference_counts)
from ...records import record
from ...sums import check_int64, checked_add, column_sums, statistics_values

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (start-up)
if TYPE_CHECKING:  # numpy, pyarrow, the resampling arithmetic, the reference path and the score object are
    # imported by the functions that need them (`beambleu score` without TER imports none of them)
    import numpy as np
    import pyarrow as pa

    from .resampling import TerArithmetic
    from .score import TerScore, TerSignature

__all__ = ["Ter", "corpus_ter", "sentence_ter"]

# ----------------------------------------------------------------------------- the metric


@record(frozen=True)
class Ter(Metric):
    """TER with its options fixed (sacrebleu's ``TER`` options and defaults): ``case_sensitive``
    (else text is lowercased), ``normalized`` (Tercom's normalisation), ``no_punct`` (remove
    punctuation), ``asian_support`` (CJK rules; only with ``normalized`` or ``no_punct``)."""

    normalized: bool = False
    no_punct: bool = False
    asian_support: bool = False
    case_sensitive: bool = False

    id = "ter"
    plain_buffers = True  # its kernels write into bleu_core.kernels.buffers.new_out
    option_group = "TER options (as in sacrebleu; the defaults replicate Tercom's)"
    options = (
        Option("case_sensitive", bool, False, "--ter-case-sensitive", help="case-sensitive TER (default: lowercased)",
               label="TER case sensitive", template_help="true: case-sensitive TER (default: lowercased)."),
        Option("asian_support", bool, False, "--ter-asian-support",
               help="special treatment of Asian characters (with --ter-normalized or --ter-no-punct)",
               label="TER Asian support",
               template_help="true: TER treats Asian characters specially (with normalized or no punct)."),
        Option("no_punct", bool, False, "--ter-no-punct", help="remove punctuation before TER",
               label="TER no punct", template_help="true: remove punctuation before TER."),
        Option("normalized", bool, False, "--ter-normalized", help="Tercom's basic normalization and tokenization",
               label="TER normalized", template_help="true: Tercom's basic normalization and tokenization."),
    )
    counter = None

    def __post_init__(self):
        for option in ("normalized", "no_punct", "asian_support", "case_sensitive"):
            value = getattr(self, option)
            if not isinstance(value, bool):
                raise TypeError(f"{option} must be a bool, got {type(value).__name__}")

    @property
    def name(self) -> str:
        return "TER"

    @property
    def width(self) -> int:
        from .reference import STATS_WIDTH

        return STATS_WIDTH

    def stat_names(self) -> list[str]:
        from .reference import STAT_NAMES

        return list(STAT_NAMES)

    def words(self, text: str) -> list[str]:
        """The words of a candidate (:func:`tercom_words` with these options)."""
        from .reference import tercom_words

        return tercom_words(text, self.case_sensitive, self.normalized, self.no_punct, self.asian_support)

    def reference_words(self, text: str) -> list[str]:
        """The words of a reference: sacrebleu tokenizes references twice (once when it reads them,
        again when it splits them into words), which changes the words only with ``normalized``
        (its rules are not idempotent: ``cat's\ta`` gives ``cat's a``, then ``cat 's a``)."""
        return self.words(" ".join(self.words(text)))

    # -- statistics: the reference path ----------------------------------------------------------

    def pair_stats(self, hyp: str, refs: Sequence[str | None]) -> list[int]:
        """The statistics of one pair (see the module documentation)."""
        from .reference import EDIT_NAMES, MAX_REFS, shift_search

        refs = [r for r in refs if r is not None]
        if not refs:
            raise ValueError("references: no reference (all references are missing)")
        if len(refs) > MAX_REFS:
            raise ValueError(f"references: more than {MAX_REFS} references (TER's statistics hold at most "
                             f"{MAX_REFS} per pair)")
        words, best, ref_len = self.words(hyp), None, 0
        for ref in refs:
            ref_words = self.reference_words(ref)
            edits = shift_search(words, ref_words)
            ref_len += len(ref_words)
            if best is None or edits.total < best.total:
                best = edits
        row = [best.total, *best] + [0] * MAX_REFS
        row[len(EDIT_NAMES) + len(refs) - 1] = ref_len
        return row

    def scalar_stats(self, candidates, references) -> np.ndarray:
        """``int64[n, width]``, one pair at a time; inputs are checked as ``corpus_stats``
        checks them (errors name the row)."""
        import numpy as np

        rows = []
        for i, (hyp, refs) in enumerate(checked_pairs(candidates, references)):
            try:
                rows.append(self.pair_stats(hyp, refs))
            except ValueError as exc:
                raise ValueError(f"references[{i}]: {str(exc).removeprefix('references: ')}") from None
        return np.array(rows, dtype=np.int64).reshape(len(rows), self.width)

    # -- statistics: the kernel ------------------------------------------------------------------

    def batch_stats(self, candidates, references, per_row: bool = True) -> np.ndarray:
        """``int64[n, width]`` (or its column sums) with the compiled kernel, or with
        :meth:`scalar_stats` under ``BEAMBLEU_KERNELS=python`` (:mod:`bleu_core.kernels`)."""
        if use_reference():  # with normalized, the kernel path checks the batch's UTF-8 first
            from .reference import MAX_REFS

            return reference_batch_stats(self, candidates, references, per_row, utf8_first=self.normalized,
                                         max_refs=MAX_REFS)
        from .kernel import ter_batch_stats  # (the compiled kernel: loaded when first used)

        return ter_batch_stats(candidates, references, case_sensitive=self.case_sensitive,
                               normalized=self.normalized, no_punct=self.no_punct,
                               asian_support=self.asian_support, per_row=per_row)

    def corpus_totals(self, candidates, references):
        """``(totals, reference counts, ref_length)``, streaming: ``ref_length`` is sacrebleu's
        float sum of the pairs' average reference lengths, added in corpus order (it equals the
        exact sum the totals hold when every pair has a power of two of references)."""
        import numpy as np

        total = np.zeros(self.width, dtype=np.int64)
        nrefs, ref_length, offset = set(), 0.0, 0
        for hyps, refs in checked_chunks(candidates, references, CHUNK):
            nrefs.update(reference_counts(refs))
            rows = self.chunk_stats(hyps, refs, offset, per_row=True)
            ref_length = self.ordered_ref_length(rows, ref_length)
            checked_add(total, column_sums(rows), out=total, what=f"the corpus statistics of {self.name}",
                        name=self.stat_name)
            offset += len(hyps)
        if offset == 0:
            raise ValueError("candidates: no segments to score")
        return total, nrefs, ref_length

    def corpus_stats(self, candidates, references):
        """Summed statistics and the set of reference counts (see :meth:`corpus_totals`)."""
        total, nrefs, _ = self.corpus_totals(candidates, references)
        return total, nrefs

    def corpus_score(self, candidates, references) -> TerScore:
        """The score of a whole corpus read in order, with sacrebleu's float sum of reference
        lengths (bit-identical to sacrebleu for any reference counts)."""
        total, nrefs, ref_length = self.corpus_totals(candidates, references)
        return self.score(total, nrefs, ref_length=ref_length)

    # -- scores ----------------------------------------------------------------------------------

    def check_stats(self, vector) -> np.ndarray:
        """``vector`` as int64 if it can be a sum of TER statistics: ``width`` integers in
        0 .. 2**63 - 1 whose edits are the sum of insertions, deletions, substitutions and shifts."""
        import numpy as np

        return np.array(self._checked_values(vector), dtype=np.int64)

    def _checked_values(self, vector) -> list[int]:
        """:meth:`check_stats` as Python ints."""
        from .reference import EDIT_NAMES, STAT_NAMES

        values = statistics_values(vector, "TER")
        if len(values) != self.width:
            raise ValueError(f"TER statistics have {self.width} values ({', '.join(STAT_NAMES)}), got {len(values)}")
        check_int64(values, STAT_NAMES, "TER")
        if values[0] != sum(values[1:len(EDIT_NAMES)]):
            raise ValueError(f"edits = {values[0]} is not insertions + deletions + substitutions + shifts = "
                             f"{sum(values[1:len(EDIT_NAMES)])}: not TER statistics")
        return values

    def ordered_sum(self, rows, state: float | None = None) -> float:
        """What TER adds in corpus order beside its totals (the hook of
        :class:`bleu_core.scoring.InOrder`): ``state`` (None at the start) plus the average
        reference lengths of the statistics ``rows``, as sacrebleu adds them; ``score(totals,
        ordered=state)`` divides by it. ``rows``: an ``int64[n, width]`` array, or rows of Python ints."""
        if hasattr(rows, "reshape"):
            rows = rows.reshape(-1, self.width)
        return self.ordered_ref_length(rows, 0.0 if state is None else state)

    @staticmethod
    def ordered_ref_length(rows, start: float = 0.0) -> float:
        """sacrebleu's float sum of the average reference lengths of per-pair statistics rows
        (``int64[n, width]``, or rows of Python ints), added in row order to ``start`` (each row's
        length sits in the column of its reference count)."""
        from .reference import EDIT_NAMES

        first = len(EDIT_NAMES)
        for row in (rows.tolist() if hasattr(rows, "tolist") else rows):
            lengths = row[first:]
            # the reference count is the first column with words; a row with none averages 0 anyway
            k = next((k for k, length in enumerate(lengths, start=1) if length), 1)
            start += sum(lengths) / k
        return start

    @staticmethod
    def ref_length(values: Sequence[int]) -> float:
        """The sum of average reference lengths that checked statistics hold, ``sum(S_k / k)``,
        correctly rounded."""
        from fractions import Fraction  # (off the start-up of a command that scores no TER)

        from .reference import EDIT_NAMES

        exact = sum(Fraction(s, k) for k, s in enumerate(values[len(EDIT_NAMES):], start=1))
        return float(exact)

    def signature(self, nrefs, n_bootstrap: int | None = None, seed: int | None = None) -> TerSignature:
        from .score import TerSignature

        return TerSignature(self, nrefs, n_bootstrap, seed)

    def score(self, stats, nrefs=None, n_bootstrap: int | None = None, seed: int | None = None, *,
              ref_length: float | None = None, ordered: float | None = None) -> TerScore:
        """The score of a totals vector; ``nrefs`` fills the signature (with ``bs:``/``seed:``
        when ``n_bootstrap`` is given). ``ref_length`` replaces the exact sum of average reference
        lengths by sacrebleu's float sum of them in corpus order (see :meth:`corpus_totals`); it
        must be that sum, within float rounding. ``ordered`` is the same, under the name every
        metric's ordered sum has (:class:`bleu_core.scoring.InOrder`, :meth:`ordered_sum`)."""
        if ordered is not None:
            if ref_length is not None and ref_length != ordered:
                raise ValueError("give ref_length or ordered, not two different values")
            ref_length = ordered
        values = self._checked_values(stats)
        exact = self.ref_length(values)
        how = "exact" if ref_length is None else "corpus order"
        if ref_length is None:
            ref_length = exact
        elif not (isinstance(ref_length, float) and abs(ref_length - exact) <= 2**-30 * exact):
            raise ValueError(f"ref_length = {ref_length!r} is not the statistics' reference length {exact!r}")
        from .score import TerScore, ter_rate

        sig = None if nrefs is None else self.signature(nrefs, n_bootstrap, seed)
        return TerScore(ter_rate(values[0], ref_length), values, ref_length, ref_length_sum=how).sign(sig)

    def sacrebleu_arithmetic(self) -> TerArithmetic:
        """How sacrebleu's resampling holds and scores these statistics (``resampling.py``)."""
        from .resampling import TerArithmetic

        return TerArithmetic(self)

    def table_columns(self) -> list[tuple[str, pa.DataType, object]]:
        """``score``, ``signature``, ``ref_length`` (the sum of average reference lengths), then
        the statistics under their :meth:`stat_names`, as in the per-pair output, taken from the
        totals (getters pickle)."""
        import pyarrow as pa  # the group table's types: `beambleu run` only

        from .reference import STAT_NAMES

        columns = [("score", pa.float64(), operator.itemgetter("score")),
                   ("signature", pa.string(), operator.methodcaller("get", "signature")),
                   ("ref_length", pa.float64(), operator.itemgetter("ref_length"))]
        return columns + [(name, pa.int64(), Stat(i)) for i, name in enumerate(STAT_NAMES)]


# ----------------------------------------------------------------------------- functions


def corpus_ter(candidates, references, *, normalized: bool = False, no_punct: bool = False,
               asian_support: bool = False, case_sensitive: bool = False) -> TerScore:
    """Corpus TER, equal to sacrebleu 2.6.0's ``TER(...).corpus_score``. ``references[i]`` is
    the list of references of ``candidates[i]`` (``None``: a missing one)."""
    return Ter(normalized, no_punct, asian_support, case_sensitive).corpus_score(candidates, references)


def sentence_ter(candidate: str, references: Sequence[str | None], *, normalized: bool = False,
                 no_punct: bool = False, asian_support: bool = False, case_sensitive: bool = False) -> TerScore:
    """TER of one candidate against its references, equal to sacrebleu's ``TER(...).sentence_score``."""
    return Ter(normalized, no_punct, asian_support, case_sensitive).sentence_score(candidate, references)

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

**The statistics** of a pair are 13 integers: ``edits`` and its parts ``insertions``,
``deletions``, ``substitutions``, ``shifts`` (of the chosen reference, read from its final
alignment; they add up to ``edits``), then ``ref_len_1`` .. ``ref_len_8``: the total length of
the pair's references in the column of its reference count k (the others 0), so that a sum of rows
holds, for each k, the total reference length ``S_k`` of the pairs with k references, and the sum
of average lengths is exactly ``sum(S_k / k)``. Pairs with more than :data:`MAX_REFS` references
are refused.

**Exactness.** :meth:`Ter.score` takes the correctly rounded float of that exact sum. sacrebleu
adds the per-pair averages as floats in corpus order; with 1, 2, 4 or 8 references every average
is a multiple of 1/8 and the float sum is exact (below 2**50), so the score is sacrebleu's, bit
for bit, however the pairs were sharded. With other counts (3, 5, 6, 7) sacrebleu's sum depends
on its addition order and can differ from the exact one in the last bits: :meth:`Ter.corpus_score`
(which reads the pairs in order) also adds sacrebleu's float averages in order beside the integers
and scores with that float, bit-identical to sacrebleu; :meth:`Ter.score` of summed totals gives
the correctly rounded exact value.
"""

from __future__ import annotations

import functools
import math
import operator
import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import NamedTuple

import numpy as np
import pyarrow as pa

from .protocol import CHUNK, Metric, Score, Stat, checked_pairs, chunked, nrefs_label
from .registry import Option
from .signature import SignatureFields
from .sums import check_int64, checked_add, column_sums, statistics_values

#: Tercom's limits, as sacrebleu sets them
BEAM_WIDTH = 25
MAX_SHIFT_SIZE = 10
MAX_SHIFT_DIST = 50
#: candidate shifts tried per pair before the search stops (sacrebleu's own limit)
MAX_SHIFT_CANDIDATES = 1000
#: the most references a pair may have: the statistics keep one reference-length column per count
MAX_REFS = 8
#: the cost of a band cell that was never computed (sacrebleu's ``int(1e16)``)
INF = 10**16

EDIT_NAMES = ("edits", "insertions", "deletions", "substitutions", "shifts")
STAT_NAMES = EDIT_NAMES + tuple(f"ref_len_{k}" for k in range(1, MAX_REFS + 1))
#: columns of the statistics vector
STATS_WIDTH = len(STAT_NAMES)

# ----------------------------------------------------------------------------- the tokenizer

#: the characters Tercom's Western rules pad with spaces: ASCII punctuation except ``'``, ``,``,
#: ``-`` and ``.`` (handled by their own rules), and the space itself
_WESTERN_PUNCT = str.maketrans({c: f" {c} " for c in " !\"#$%&()*+/:;<=>?@[\\]^_`{|}~"})
_POINT_AFTER_NON_DIGIT = re.compile(r"([^0-9])([\.,])")
_POINT_BEFORE_NON_DIGIT = re.compile(r"([\.,])([^0-9])")
_DASH_AFTER_DIGIT = re.compile(r"([0-9])(-)")

#: CJK punctuation and full-width punctuation (sacrebleu's two sets)
ASIAN_PUNCT = "\u3001\u3002" + "".join(map(chr, range(0x3008, 0x3012))) + "".join(map(chr, range(0x3014, 0x3020))) \
    + "".join(map(chr, range(0xFF61, 0xFF66))) + "\u30fb"
FULL_WIDTH_PUNCT = "\uff0e\uff0c\uff1f\uff1a\uff1b\uff01\uff02\uff08\uff09"


def _ranges(*bounds: tuple[int, int]) -> str:
    return "".join(chr(c) for lo, hi in bounds for c in range(lo, hi + 1))


#: the characters the Asian rules make words of their own: CJK ideographs (and extension A),
#: strokes, radicals, compatibility characters, forms and ideographs, U+3200..U+3F22 (sacrebleu's
#: range for "enclosed CJK letters and months"), and both punctuation sets
@functools.lru_cache(maxsize=None)
def _asian_split() -> dict:
    """The translation table (about 30,000 entries, 20 ms to build: built on first use)."""
    return str.maketrans({c: f" {c} " for c in _ranges(
        (0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x31C0, 0x31EF), (0x2E80, 0x2EFF), (0x3300, 0x33FF), (0xF900, 0xFAFF),
        (0xFE30, 0xFE4F), (0x3200, 0x3F22)) + ASIAN_PUNCT + FULL_WIDTH_PUNCT})


_PUNCT = str.maketrans("", "", ".,?:;!\"()")
_ASIAN_PUNCT = str.maketrans("", "", ASIAN_PUNCT + FULL_WIDTH_PUNCT)


def normalize_western(text: str) -> str:
    """Tercom's general and Western normalisation (``normalized``), as sacrebleu applies it.

    Its possessive rule at the end of the text never fires (the text is padded with spaces
    first), nor do its three kana rules (anchored at the start, which is a space): they are
    left out."""
    text = text.replace("\n-", "").replace("\n", " ")
    for entity, char in (("&quot;", '"'), ("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">")):
        text = text.replace(entity, char)
    text = f" {text} ".translate(_WESTERN_PUNCT)
    text = text.replace("'s ", " 's ")
    text = _POINT_AFTER_NON_DIGIT.sub(r"\1 \2 ", text)
    text = _POINT_BEFORE_NON_DIGIT.sub(r" \1 \2", text)
    return _DASH_AFTER_DIGIT.sub(r"\1 \2 ", text)


def tercom_words(text: str, case_sensitive: bool = False, normalized: bool = False, no_punct: bool = False,
                 asian_support: bool = False) -> list[str]:
    """The words TER compares: sacrebleu's ``TercomTokenizer`` of ``text.rstrip()``, split."""
    text = text.rstrip()
    if not case_sensitive:
        text = text.lower()
    if normalized:
        text = normalize_western(text)
        if asian_support:
            text = text.translate(_asian_split())
    if no_punct:
        text = text.translate(_PUNCT)
        if asian_support:
            text = text.translate(_ASIAN_PUNCT)
    return text.split()


# ----------------------------------------------------------------------------- the edit distance

#: edit operations of an alignment, from the candidate's side: a match, a substitution, a
#: candidate word deleted, a reference word inserted
MATCH, SUB, DEL, INS = " ", "s", "d", "i"


class BandedDistance:
    """sacrebleu's banded word edit distance between candidates of one length and a reference.

    Row ``i`` of the matrix holds the costs of turning the first ``i`` candidate words into each
    prefix of the reference; only columns :meth:`band` (i) are computed, the others are
    :data:`INF`. Every candidate a shift search tries has the same length, so the band is fixed."""

    def __init__(self, ref: Sequence, n_hyp: int):
        self.ref, self.n_ref, self.n_hyp = ref, len(ref), n_hyp
        self.ratio = self.n_ref / n_hyp if n_hyp else 1
        self.width = math.ceil(self.ratio / 2 + BEAM_WIDTH) if BEAM_WIDTH < self.ratio / 2 else BEAM_WIDTH
        #: row 0: the reference words inserted one by one
        self.first_row = [(j, INS) for j in range(self.n_ref + 1)]

    def band(self, i: int) -> range:
        """The columns computed in row ``i`` (> 0): all of them in the last row."""
        diagonal = math.floor(i * self.ratio)
        hi = self.n_ref + 1 if i == self.n_hyp else min(self.n_ref + 1, diagonal + self.width)
        return range(max(0, diagonal - self.width), hi)

    def rows(self, hyp: Sequence, reuse: list | None = None, start: int = 0) -> list:
        """Rows 0..len(hyp) of ``(cost, operation)`` cells for ``hyp``; rows 0..start are taken
        from ``reuse`` (the rows of a candidate with the same first ``start`` words)."""
        rows = reuse[: start + 1] if reuse is not None else [self.first_row]
        for i in range(len(rows), len(hyp) + 1):
            prev, row = rows[i - 1], [(INF, "x")] * (self.n_ref + 1)
            for j in self.band(i):
                if j == 0:
                    row[0] = (prev[0][0] + 1, DEL)
                    continue
                same = hyp[i - 1] == self.ref[j - 1]
                best = (INF, "x")
                for cost, op in ((prev[j - 1][0] + (0 if same else 1), MATCH if same else SUB),
                                 (prev[j][0] + 1, DEL), (row[j - 1][0] + 1, INS)):
                    if cost < best[0]:
                        best = (cost, op)
                row[j] = best
            rows.append(row)
        return rows

    @staticmethod
    def trace(rows: list) -> str:
        """The operations of the alignment, first to last, traced back from the last cell."""
        ops, i, j = [], len(rows) - 1, len(rows[0]) - 1
        while i > 0 or j > 0:
            op = rows[i][j][1]
            ops.append(op)
            if op == INS:
                j -= 1
            elif op == DEL:
                i -= 1
            elif op in (MATCH, SUB):
                i, j = i - 1, j - 1
            else:
                raise AssertionError("the alignment left the band")  # never: consecutive bands overlap
        return "".join(reversed(ops))


class Alignment(NamedTuple):
    """What the shift search reads off an alignment: for each reference word the candidate position
    it is aligned to (that of the last candidate word consumed, -1 before any), and whether each
    candidate word and each reference word is in error (not matched)."""

    ref_to_hyp: list[int]
    hyp_err: list[int]
    ref_err: list[int]


def alignment(trace: str) -> Alignment:
    """The :class:`Alignment` of a trace."""
    ref_to_hyp, hyp_err, ref_err, h = [], [], [], -1
    for op in trace:
        if op != INS:
            h += 1
            hyp_err.append(int(op != MATCH))
        if op != DEL:
            ref_to_hyp.append(h)
            ref_err.append(int(op != MATCH))
    return Alignment(ref_to_hyp, hyp_err, ref_err)


# ----------------------------------------------------------------------------- the shift search


def shifted(words: Sequence, start: int, length: int, target: int) -> list:
    """``words`` with the block ``words[start:start + length]`` moved before position ``target``
    of the original (sacrebleu's ``_perform_shift``: a target inside or right after the block moves
    it ``target - start`` places to the right, capped at the end)."""
    words = list(words)
    block, rest = words[start:start + length], words[:start] + words[start + length:]
    at = target - length if target > start + length else min(target, len(rest))
    return rest[:at] + block + rest[at:]


def matching_blocks(hyp: Sequence, ref: Sequence):
    """(hyp start, ref start, length) of the candidate's blocks of 1..10 words equal to a block
    of the reference that starts at most 50 positions away, in sacrebleu's order."""
    for h in range(len(hyp)):
        for r in range(max(0, h - MAX_SHIFT_DIST), min(len(ref), h + MAX_SHIFT_DIST + 1)):
            length = 0
            while length < MAX_SHIFT_SIZE and h + length < len(hyp) and r + length < len(ref) \
                    and hyp[h + length] == ref[r + length]:
                length += 1
                yield h, r, length


def best_shift(hyp: list, ref: Sequence, ed: BandedDistance, rows: list, checked: int):
    """One round of the search: ``(gain, shifted candidate or None, candidates tried so far)``.

    ``rows`` are the distance rows of ``hyp``; a shifted candidate shares them up to the first
    position the shift changes, so only the rows after it are computed (as sacrebleu's cache does)."""
    cost = rows[-1][-1][0]
    align = alignment(BandedDistance.trace(rows))
    best_key, best_words = None, None
    for h, r, length in matching_blocks(hyp, ref):
        if not any(align.hyp_err[h:h + length]) or not any(align.ref_err[r:r + length]):
            continue  # already right on one side
        if h <= align.ref_to_hyp[r] < h + length:
            continue  # the block's place in the reference is inside the block
        last_target = -1
        for k in range(r - 1, r + length):
            target = 0 if k == -1 else align.ref_to_hyp[k] + 1
            if target == last_target:
                continue
            last_target = target
            words = shifted(hyp, h, length, target)
            new_cost = ed.rows(words, rows, min(h, target))[-1][-1][0]
            checked += 1
            key = (cost - new_cost, length, -h, -target)
            if best_key is None or key > best_key:
                best_key, best_words = key, words
        if checked >= MAX_SHIFT_CANDIDATES:
            break
    return (0, None, checked) if best_key is None else (best_key[0], best_words, checked)


class Edits(NamedTuple):
    """The edits turning a candidate into one reference."""

    insertions: int
    deletions: int
    substitutions: int
    shifts: int

    @property
    def total(self) -> int:
        return self.insertions + self.deletions + self.substitutions + self.shifts


def shift_search(hyp: Sequence, ref: Sequence) -> Edits:
    """The edits TER counts between two word sequences: greedy shifts, then the alignment of the
    shifted candidate (see the module documentation)."""
    if not ref:
        return Edits(0, len(hyp), 0, 0)
    ed = BandedDistance(ref, len(hyp))
    hyp, shifts, checked = list(hyp), 0, 0
    rows = ed.rows(hyp)
    while True:
        gain, words, checked = best_shift(hyp, ref, ed, rows, checked)
        if checked >= MAX_SHIFT_CANDIDATES or gain <= 0:
            break
        hyp, shifts = words, shifts + 1
        rows = ed.rows(hyp)
    trace = BandedDistance.trace(rows)
    return Edits(trace.count(INS), trace.count(DEL), trace.count(SUB), shifts)


# ----------------------------------------------------------------------------- the metric


@dataclass(frozen=True)
class Ter(Metric):
    """TER with its options fixed (sacrebleu's ``TER`` options and defaults): ``case_sensitive``
    (else text is lowercased), ``normalized`` (Tercom's normalisation), ``no_punct`` (remove
    punctuation), ``asian_support`` (CJK rules; only with ``normalized`` or ``no_punct``)."""

    normalized: bool = False
    no_punct: bool = False
    asian_support: bool = False
    case_sensitive: bool = False

    id = "ter"
    column_prefix = "ter_"
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
        return STATS_WIDTH

    def stat_names(self) -> list[str]:
        return list(STAT_NAMES)

    def words(self, text: str) -> list[str]:
        """The words of a candidate (:func:`tercom_words` with these options)."""
        return tercom_words(text, self.case_sensitive, self.normalized, self.no_punct, self.asian_support)

    def reference_words(self, text: str) -> list[str]:
        """The words of a reference: sacrebleu tokenizes references twice (once when it reads them,
        again when it splits them into words), which changes the words only with ``normalized``
        (its rules are not idempotent: ``cat's\ta`` gives ``cat's a``, then ``cat 's a``)."""
        return self.words(" ".join(self.words(text)))

    # -- statistics: the reference path ----------------------------------------------------------

    def pair_stats(self, hyp: str, refs: Sequence[str | None]) -> list[int]:
        """The statistics of one pair (see the module documentation)."""
        refs = [r for r in refs if r is not None]
        if not refs:
            raise ValueError("references: no reference (all references are missing)")
        if len(refs) > MAX_REFS:
            raise ValueError(f"references: {len(refs)} references; TER's statistics hold at most {MAX_REFS}")
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
        rows = []
        for i, (hyp, refs) in enumerate(checked_pairs(candidates, references)):
            try:
                rows.append(self.pair_stats(hyp, refs))
            except ValueError as exc:
                raise ValueError(f"references[{i}]: {str(exc).removeprefix('references: ')}") from None
        return np.array(rows, dtype=np.int64).reshape(len(rows), self.width)

    # -- statistics: the kernel ------------------------------------------------------------------

    def batch_stats(self, candidates, references, per_row: bool = True) -> np.ndarray:
        """``int64[n, width]`` (or its column sums) with the compiled kernel."""
        from .ter_batch import ter_batch_stats

        return ter_batch_stats(candidates, references, case_sensitive=self.case_sensitive,
                               normalized=self.normalized, no_punct=self.no_punct,
                               asian_support=self.asian_support, per_row=per_row)

    def corpus_totals(self, candidates, references):
        """``(totals, reference counts, ref_length)``, streaming: ``ref_length`` is sacrebleu's
        float sum of the pairs' average reference lengths, added in corpus order (it equals the
        exact sum the totals hold when every pair has 1, 2, 4 or 8 references)."""
        total = np.zeros(self.width, dtype=np.int64)
        nrefs, ref_length, offset = set(), 0.0, 0
        for hyps, refs in chunked(checked_pairs(candidates, references), CHUNK):
            counts = [sum(x is not None for x in r) for r in refs]
            nrefs.update(counts)
            try:
                arrays = (pa.array(hyps, type=pa.large_string()), pa.array(refs, type=pa.large_list(pa.large_string())))
            except (pa.ArrowException, UnicodeError):
                arrays = None  # e.g. lone surrogates, which have no UTF-8 form: use the scalar path
            try:
                rows = self.scalar_stats(hyps, refs) if arrays is None else self.batch_stats(*arrays, per_row=True)
            except ValueError as exc:
                row = getattr(exc, "row", None)
                if row is None:
                    raise
                raise ValueError(f"references[{offset + row}]: {exc.reason}" if exc.column == "references"
                                 else f"candidates[{offset + row}]: {exc.reason}") from None
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

    def corpus_score(self, candidates, references) -> "TerScore":
        """The score of a whole corpus read in order, with sacrebleu's float sum of reference
        lengths (bit-identical to sacrebleu for any reference counts)."""
        total, nrefs, ref_length = self.corpus_totals(candidates, references)
        return self.score(total, nrefs, ref_length=ref_length)

    # -- scores ----------------------------------------------------------------------------------

    def check_stats(self, vector) -> np.ndarray:
        """``vector`` as int64 if it can be a sum of TER statistics: ``width`` integers in
        0 .. 2**63 - 1 whose edits are the sum of insertions, deletions, substitutions and shifts."""
        values = statistics_values(vector, "TER")
        if len(values) != self.width:
            raise ValueError(f"TER statistics have {self.width} values ({', '.join(STAT_NAMES)}), got {len(values)}")
        check_int64(values, STAT_NAMES, "TER")
        if values[0] != sum(values[1:len(EDIT_NAMES)]):
            raise ValueError(f"edits = {values[0]} is not insertions + deletions + substitutions + shifts = "
                             f"{sum(values[1:len(EDIT_NAMES)])}: not TER statistics")
        return np.array(values, dtype=np.int64)

    @staticmethod
    def ordered_ref_length(rows: np.ndarray, start: float = 0.0) -> float:
        """sacrebleu's float sum of the average reference lengths of per-pair statistics rows,
        added in row order to ``start`` (each row's length sits in the column of its reference count)."""
        ref_cols = rows[:, len(EDIT_NAMES):]
        counts = np.argmax(ref_cols != 0, axis=1) + 1  # a row with no reference words: its average is 0 anyway
        for length, k in zip(ref_cols.sum(axis=1).tolist(), counts.tolist()):
            start += length / k
        return start

    @staticmethod
    def ref_length(values: Sequence[int]) -> float:
        """The sum of average reference lengths that checked statistics hold, ``sum(S_k / k)``,
        correctly rounded."""
        exact = sum(Fraction(s, k) for k, s in enumerate(values[len(EDIT_NAMES):], start=1))
        return float(exact)

    def signature(self, nrefs, n_bootstrap: int | None = None, seed: int | None = None) -> "TerSignature":
        return TerSignature(self, nrefs, n_bootstrap, seed)

    def score(self, stats, nrefs=None, n_bootstrap: int | None = None, seed: int | None = None, *,
              ref_length: float | None = None) -> "TerScore":
        """The score of a totals vector; ``nrefs`` fills the signature (with ``bs:``/``seed:``
        when ``n_bootstrap`` is given). ``ref_length`` replaces the exact sum of average reference
        lengths by sacrebleu's float sum of them in corpus order (see :meth:`corpus_totals`); it
        must be that sum, within float rounding."""
        values = self.check_stats(stats).tolist()
        exact = self.ref_length(values)
        how = "exact" if ref_length is None else "corpus order"
        if ref_length is None:
            ref_length = exact
        elif not (isinstance(ref_length, float) and abs(ref_length - exact) <= 2**-30 * exact):
            raise ValueError(f"ref_length = {ref_length!r} is not the statistics' reference length {exact!r}")
        edits = values[0]
        if ref_length > 0:
            rate = edits / ref_length
        else:
            rate = 1.0 if edits > 0 else 0.0
        sig = None if nrefs is None else self.signature(nrefs, n_bootstrap, seed)
        return TerScore(100 * rate, values, ref_length, ref_length_sum=how).sign(sig)

    def table_columns(self) -> list[tuple[str, pa.DataType, object]]:
        """``score``, ``signature``, ``ref_length`` (the sum of average reference lengths), then
        the statistics under their :meth:`stat_names`, as in the per-pair output, taken from the
        totals (getters pickle)."""
        columns = [("score", pa.float64(), operator.itemgetter("score")),
                   ("signature", pa.string(), operator.methodcaller("get", "signature")),
                   ("ref_length", pa.float64(), operator.itemgetter("ref_length"))]
        return columns + [(name, pa.int64(), Stat(i)) for i, name in enumerate(STAT_NAMES)]


class TerSignature(SignatureFields):
    """sacrebleu's TER signature, field for field, with our version:
    ``nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:beambleu-0.1.0`` (``bs``/``seed``
    after ``nrefs`` when bootstrapping)."""

    def __init__(self, metric: Ter, nrefs, n_bootstrap: int | None = None, seed: int | None = None):
        super().__init__(nrefs_label(nrefs), n_bootstrap, seed, case="mixed" if metric.case_sensitive else "lc",
                         tok="tercom", norm=metric.normalized, punct=not metric.no_punct, asian=metric.asian_support)

    ABBR = {**SignatureFields.ABBR, "case": "c", "tok": "t", "norm": "nr", "punct": "pn", "asian": "as"}


@dataclass
class TerScore(Score):
    """A TER score (0-100, lower is better), the statistics it came from and ``ref_length``, the
    sum of average reference lengths it divided by (sacrebleu's ``TERScore`` fields:
    ``num_edits`` and ``ref_length``)."""

    score: float
    stats: list[int]
    ref_length: float
    signature: str | None = None
    #: how ``ref_length`` was summed: ``"exact"`` (the correctly rounded exact sum of the average
    #: lengths, from the totals: ``beambleu run``, any sharding) or ``"corpus order"`` (sacrebleu's
    #: float additions in corpus order: ``beambleu score``, the compat API). The two are equal when
    #: every pair has 1, 2, 4 or 8 references, and may differ in the last bits otherwise.
    ref_length_sum: str = "exact"

    name = "TER"

    @property
    def num_edits(self) -> int:
        return self.stats[0]

    def stat_fields(self) -> dict:
        edits = dict(zip(EDIT_NAMES, self.stats))
        return dict(num_edits=self.num_edits, ref_length=self.ref_length, ref_length_sum=self.ref_length_sum, **edits,
                    ref_lengths=list(self.stats[len(EDIT_NAMES):]))


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

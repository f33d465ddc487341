"""TER's readable one-pair path, as sacrebleu 2.6.0 computes it: the Tercom words, the banded
edit distance and the greedy shift search (the kernel, ``_ter.c``, follows the same steps); and the
layout of TER's statistics. :mod:`bleu_core.metrics.ter` describes the definition in full."""

from __future__ import annotations

import functools
import math
import re
from collections import namedtuple
from collections.abc import Sequence

__all__ = ["BEAM_WIDTH", "MAX_SHIFT_SIZE", "MAX_SHIFT_DIST", "MAX_SHIFT_CANDIDATES", "MAX_REFS", "INF",
           "EDIT_NAMES", "STAT_NAMES", "STATS_WIDTH", "ASIAN_PUNCT", "FULL_WIDTH_PUNCT", "normalize_western",
           "tercom_words", "MATCH", "SUB", "DEL", "INS", "BandedDistance", "Alignment", "alignment", "shifted",
           "matching_blocks", "best_shift", "Edits", "shift_search"]

#: Tercom's limits, as sacrebleu sets them
BEAM_WIDTH = 25
MAX_SHIFT_SIZE = 10
MAX_SHIFT_DIST = 50
#: candidate shifts tried per pair before the search stops (sacrebleu's own limit)
MAX_SHIFT_CANDIDATES = 1000
#: the most references a pair may have: the statistics keep one reference-length column per count
#: (``ref_len_1`` .. ``ref_len_64``), which keeps their sum exact under any sharding; beambleu's
#: bound, not sacrebleu's (which has none), far above the references of any real test set (50 in
#: PASCAL-50S, 10 in ASSET); a pair with more is refused with one line
MAX_REFS = 64
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


class Alignment(namedtuple("Alignment", ["ref_to_hyp", "hyp_err", "ref_err"])):
    """What the shift search reads off an alignment, lists of ints: for each reference word the
    candidate position it is aligned to (``ref_to_hyp``: that of the last candidate word consumed,
    -1 before any), and whether each candidate word and each reference word is in error (not
    matched: ``hyp_err``, ``ref_err``)."""

    __slots__ = ()


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


class Edits(namedtuple("Edits", ["insertions", "deletions", "substitutions", "shifts"])):
    """The edits (ints) turning a candidate into one reference."""

    __slots__ = ()

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

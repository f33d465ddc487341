"""chrF (Popović 2015) and chrF++ (Popović 2017), exactly as sacrebleu 2.6.0 computes them.

chrF is an F-score over character n-grams (orders 1..``char_order``); chrF++ adds word n-grams
(orders 1..``word_order``). Per pair and per order the statistics are three counts:

* ``hyp``: the candidate's n-grams of that order, or 0 when the reference has none of that
  order (sacrebleu does not count candidate n-grams that an n-gram-less reference cannot match);
* ``ref``: the reference's n-grams of that order;
* ``match``: the n-grams in common, each counted ``min(count in candidate, count in reference)``.

With several references a pair takes the statistics of the one reference whose own sentence
F-score is highest (the first one on a tie). Rows add; a score (sentence, group or corpus) is
:meth:`Chrf.f_score` of summed statistics: precision and recall averaged over the orders, then
combined as F-beta, where recall weighs ``beta`` times as much as precision.

Before counting, text is lowercased with ``str.lower`` when ``lowercase`` is set. Character
n-grams run over code points, with all whitespace removed (``''.join(s.split())``) unless
``whitespace`` is set. Words are the ``str.split()`` tokens, one punctuation mark split off the
end, or else off the start, of each token longer than one character (sacrebleu's rule, after
Popović's ``chrF++.py``).
"""

from __future__ import annotations

import math
import operator
from collections import Counter
from collections.abc import Sequence

from ...kernels import use_reference
from ...protocol import Metric, Option, Stat, checked_pairs, reference_batch_stats
from ...records import record, values
from ...sums import check_int64, statistics_values

# .kernel (the compiled kernel), .reference and .score are imported where they are used: a command
# line that does not score chrF (`beambleu score` with BLEU) builds chrF's options without them

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (start-up)
if TYPE_CHECKING:  # numpy, pyarrow and the resampling arithmetic are imported by the functions that need them
    from typing import List

    import numpy as np
    import pyarrow as pa

    from .resampling import ChrfArithmetic
    from .score import ChrfScore, ChrfSignature

__all__ = ["MAX_ORDER", "Chrf", "corpus_chrf", "sentence_chrf"]


# ----------------------------------------------------------------------------- the metric


#: highest character or word order accepted (BLEU's limit too): the statistics have 3 columns per order
MAX_ORDER = 64


@record(frozen=True)
class Chrf(Metric):
    """chrF / chrF++ with its options fixed (sacrebleu's ``CHRF`` options and defaults).

    ``char_order``/``word_order``: highest character / word n-gram order (``word_order=2`` is
    chrF++); ``beta``: recall is ``beta`` times as important as precision; ``lowercase``;
    ``whitespace``: keep whitespace in character n-grams; ``eps_smoothing``: average per-order
    F-scores with an epsilon for empty orders (chrF++.py, NLTK, Moses) instead of sacrebleu's
    default effective-order averaging of precision and recall.
    """

    char_order: int = 6
    word_order: int = 0
    beta: int = 2
    lowercase: bool = False
    whitespace: bool = False
    eps_smoothing: bool = False

    id = "chrf"
    plain_buffers = True  # its kernels write into bleu_core.kernels.buffers.new_out
    option_group = "chrF options (as in sacrebleu; chrF++ is --chrf-word-order 2)"
    options = (
        Option("char_order", int, 6, "--chrf-char-order", "-cc", metavar="N",
               help="character n-gram order (default: %(default)s)",
               label="chrF character order", template_help="chrF: character n-gram order (default: 6)."),
        Option("word_order", int, 0, "--chrf-word-order", "-cw", metavar="N",
               help="word n-gram order (default: %(default)s; 2 is chrF++)",
               label="chrF word order", template_help="chrF: word n-gram order (default: 0; 2 is chrF++)."),
        Option("beta", int, 2, "--chrf-beta", metavar="BETA",
               help="weight of recall against precision (default: %(default)s)",
               label="chrF beta", template_help="chrF: weight of recall against precision (default: 2)."),
        Option("whitespace", bool, False, "--chrf-whitespace", help="keep whitespace in character n-grams",
               label="chrF whitespace", template_help="true: keep whitespace in chrF's character n-grams."),
        Option("lowercase", bool, False, "--chrf-lowercase", help="case-insensitive chrF",
               label="chrF lowercase", template_help="true: case-insensitive chrF."),
        Option("eps_smoothing", bool, False, "--chrf-eps-smoothing",
               help="eps smoothing of chrF++.py, NLTK and Moses instead of sacrebleu's effective order",
               label="chrF eps smoothing",
               template_help="true: eps smoothing (chrF++.py, NLTK, Moses) instead of effective order."),
    )

    def __post_init__(self):
        for option in ("char_order", "word_order", "beta"):
            value = getattr(self, option)
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{option} must be an int, got {type(value).__name__}")
            if value < 0:
                raise ValueError(f"{option} must be >= 0, got {value}")
        for option in ("char_order", "word_order"):
            if getattr(self, option) > MAX_ORDER:
                raise ValueError(f"{option} must be at most {MAX_ORDER} (as BLEU's max_ngram_order), "
                                 f"got {getattr(self, option)}")
        try:
            finite = math.isfinite(float(self.beta**2))
        except OverflowError:
            finite = False
        if not finite:
            raise ValueError(f"beta is too large: beta**2 must be a finite float, got beta = {self.beta}")
        if self.char_order + self.word_order < 1:
            raise ValueError("char_order + word_order must be at least 1, got 0 (no n-grams to count)")
        for option in ("lowercase", "whitespace", "eps_smoothing"):
            value = getattr(self, option)
            if not isinstance(value, bool):
                raise TypeError(f"{option} must be a bool, got {type(value).__name__}")

    @property
    def name(self) -> str:
        """sacrebleu's score name: ``chrF2``, and one ``+`` per word order (``chrF2++``)."""
        from .score import chrf_name

        return chrf_name(self.beta, self.word_order)

    @property
    def orders(self) -> int:
        """How many n-gram orders are counted (character and word)."""
        return self.char_order + self.word_order

    @property
    def width(self) -> int:
        return 3 * self.orders

    def stat_names(self) -> list[str]:
        """``char1_hyp, char1_ref, char1_match, ..., word1_hyp, ...``."""
        kinds = [f"char{n}" for n in range(1, self.char_order + 1)]
        kinds += [f"word{n}" for n in range(1, self.word_order + 1)]
        return [f"{k}_{s}" for k in kinds for s in ("hyp", "ref", "match")]

    # -- statistics: the reference path --------------------------------------------------------

    def ngram_counts(self, text: str) -> list[Counter]:
        """The counted n-grams of one text: character orders 1..char_order, then word orders
        1..word_order."""
        from .reference import char_ngrams, split_words, word_ngrams

        if self.lowercase:
            text = text.lower()
        chars = text if self.whitespace else "".join(text.split())
        counts = [char_ngrams(chars, n) for n in range(1, self.char_order + 1)]
        if self.word_order:
            words = split_words(text)
            counts += [word_ngrams(words, n) for n in range(1, self.word_order + 1)]
        return counts

    def pair_stats(self, candidate: str, references: Sequence[str | None]) -> list[int]:
        """Statistics of one candidate: those against the reference with the best F-score
        (``None`` references are missing; the first reference wins a tie)."""
        from .reference import order_stats

        hyp = self.ngram_counts(candidate)
        best, best_f = None, -1.0
        for ref in references:
            if ref is None:
                continue
            stats = [x for h, r in zip(hyp, self.ngram_counts(ref)) for x in order_stats(h, r)]
            f = self.f_score(stats)
            if f > best_f:
                best, best_f = stats, f
        if best is None:
            raise ValueError("references: no reference (all references are missing)")
        return best

    def scalar_stats(self, candidates, references) -> np.ndarray:
        """``int64[n, width]``, one pair at a time; inputs are checked as ``corpus_stats``
        checks them (errors name the row)."""
        import numpy as np

        rows = [self.pair_stats(hyp, refs) for hyp, refs in checked_pairs(candidates, references)]
        return np.array(rows, dtype=np.int64).reshape(len(rows), self.width)

    # -- statistics: the kernel ------------------------------------------------------------------

    def batch_stats(self, candidates, references, per_row: bool = True) -> np.ndarray:
        """``int64[n, width]`` (or its column sums) with the compiled kernel, or with
        :meth:`scalar_stats` under ``BEAMBLEU_KERNELS=python`` (:mod:`bleu_core.kernels`)."""
        if use_reference():
            return reference_batch_stats(self, candidates, references, per_row)
        from .kernel import chrf_batch_stats

        return chrf_batch_stats(candidates, references, per_row=per_row, **values(self))

    def batch_stats_many(self, systems, references, per_row: bool = True) -> List[np.ndarray]:
        """Each system's :meth:`batch_stats`, the references prepared once per row for all of
        them (see :func:`bleu_core.metrics.chrf.kernel.chrf_batch_stats_many`); under
        ``BEAMBLEU_KERNELS=python``, :meth:`batch_stats` system by system."""
        if use_reference():
            return super().batch_stats_many(systems, references, per_row=per_row)
        from .kernel import chrf_batch_stats_many

        return chrf_batch_stats_many(systems, references, per_row=per_row, **values(self))

    # -- scores ----------------------------------------------------------------------------------

    def check_stats(self, vector) -> np.ndarray:
        """``vector`` as int64 if it can be a sum of this metric's statistics: ``width``
        integers in 0 .. 2**63 - 1 with ``match <= hyp`` and ``match <= ref`` in every order."""
        import numpy as np

        return np.array(self._checked_values(vector), dtype=np.int64)

    def _checked_values(self, vector) -> List[int]:
        """:meth:`check_stats` as Python ints."""
        values = statistics_values(vector, self.name)
        if len(values) != self.width:
            raise ValueError(
                f"{self.name} statistics have 3 * (char_order + word_order) = {self.width} values, got {len(values)}"
            )
        names = self.stat_names()
        check_int64(values, names, self.name)
        for i in range(0, len(values), 3):
            hyp, ref, match = values[i : i + 3]
            if match > hyp or match > ref:
                raise ValueError(
                    f"{names[i + 2]} = {match} exceeds {names[i]} = {hyp} or {names[i + 1]} = {ref}: "
                    f"not {self.name} statistics"
                )
        return values

    def f_score(self, stats) -> float:
        """The score (0-100) of a statistics vector, with sacrebleu's arithmetic (operation for
        operation, on Python ints and floats), so that scores are bit-identical.

        Per order, precision is ``match / hyp`` and recall ``match / ref`` (``EPS`` when
        undefined). With ``eps_smoothing`` the score is the mean of the per-order F-beta
        scores. Otherwise precision and recall are each averaged over the orders where both
        texts have n-grams (the effective order), and F-beta is taken of the two averages."""
        from .score import f_score

        return f_score(self._checked_values(stats), self.beta, self.eps_smoothing)

    def signature(self, nrefs, n_bootstrap: int | None = None, seed: int | None = None) -> ChrfSignature:
        from .score import ChrfSignature

        return ChrfSignature(self, nrefs, n_bootstrap, seed)

    def score(self, stats, nrefs=None, n_bootstrap: int | None = None, seed: int | None = None) -> ChrfScore:
        """The score of a totals vector; ``nrefs`` fills the signature (with ``bs:``/``seed:``
        when ``n_bootstrap`` is given)."""
        from .score import ChrfScore, f_score

        values = self._checked_values(stats)
        sig = None if nrefs is None else self.signature(nrefs, n_bootstrap, seed)
        score = f_score(values, self.beta, self.eps_smoothing)
        return ChrfScore(score, values, self.char_order, self.word_order, self.beta).sign(sig)

    def sacrebleu_arithmetic(self) -> ChrfArithmetic:
        """How sacrebleu's resampling holds and scores these statistics (``resampling.py``)."""
        from .resampling import ChrfArithmetic

        return ChrfArithmetic(self)

    def table_columns(self) -> list[tuple[str, pa.DataType, object]]:
        """``score``, ``signature``, then the statistics under their :meth:`stat_names`
        (``char1_hyp``, ``char1_ref``, ``char1_match``, ..., ``word1_hyp``, ...), as in the
        per-pair output, taken from the totals (getters are picklable)."""
        import pyarrow as pa  # the group table's types: `beambleu run` only

        columns = [("score", pa.float64(), operator.itemgetter("score")),
                   ("signature", pa.string(), operator.methodcaller("get", "signature"))]
        return columns + [(name, pa.int64(), Stat(i)) for i, name in enumerate(self.stat_names())]


# ----------------------------------------------------------------------------- functions


def corpus_chrf(candidates, references, **options) -> ChrfScore:
    """Corpus chrF (chrF++ with ``word_order=2``), equal to sacrebleu 2.6.0's
    ``CHRF(...).corpus_score``; ``options`` are :class:`Chrf`'s (``char_order=6``,
    ``word_order=0``, ``beta=2``, ``lowercase``, ``whitespace``, ``eps_smoothing``, by keyword).
    ``references[i]`` is the list of references of ``candidates[i]`` (``None``: a missing one);
    statistics are summed over the corpus and scored once."""
    return Chrf(**options).corpus_score(candidates, references)


def sentence_chrf(candidate: str, references: Sequence[str | None], **options) -> ChrfScore:
    """chrF of one candidate against its references, equal to sacrebleu's
    ``CHRF(...).sentence_score``; ``options`` as for :func:`corpus_chrf`."""
    return Chrf(**options).sentence_score(candidate, references)

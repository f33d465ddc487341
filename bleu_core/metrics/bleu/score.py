"""From a totals vector to a BLEU score: the only place floating point appears.

``compute_bleu`` performs sacrebleu 2.6.0's ``BLEU.compute_bleu`` arithmetic operation by
operation (same order, same Python float operations, same ``sum``), so scores are bit-identical.
It differs in one documented way: it never mutates its input. sacrebleu's add-k smoothing adds k
to its ``correct``/``total`` lists in place and then reports those modified lists as the counts;
here ``counts``/``totals`` are always the real integer statistics and the smoothed values only
enter the precisions.
"""

from __future__ import annotations

import math
import operator

from ...protocol import Score
from ...records import field, record
from ...signature import SignatureFields
from ...sums import INT64_MAX

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Sequence

__all__ = ["SMOOTH_DEFAULTS", "SMOOTH_METHODS", "BleuScore", "BleuSignature", "bleu_of_checked", "check_order",
           "check_smoothing", "check_stats", "check_weights", "compute_bleu", "my_log", "stat_names"]

SMOOTH_DEFAULTS: Dict[str, Optional[float]] = {
    # defaults from Chen & Cherry (2014), as in sacrebleu
    "none": None,
    "floor": 0.1,
    "add-k": 1,
    "exp": None,
}
SMOOTH_METHODS = tuple(SMOOTH_DEFAULTS)


def my_log(num: float) -> float:
    """sacrebleu's floored logarithm: log(0) is -9999999999."""
    if num == 0.0:
        return -9999999999
    return math.log(num)


def check_smoothing(smooth_method, smooth_value):
    if not isinstance(smooth_method, str):
        raise TypeError(f"smooth_method must be a str, got {type(smooth_method).__name__}")
    if smooth_method not in SMOOTH_DEFAULTS:
        raise ValueError(
            f"smooth_method: unknown smoothing {smooth_method!r}; choose one of {', '.join(SMOOTH_METHODS)}"
        )
    if smooth_value is not None:
        if isinstance(smooth_value, bool) or not isinstance(smooth_value, (int, float)):
            raise TypeError(f"smooth_value must be a number or None, got {type(smooth_value).__name__}")
        if not math.isfinite(smooth_value) or smooth_value < 0:
            raise ValueError(f"smooth_value must be a finite number >= 0, got {smooth_value!r}")


def check_order(max_ngram_order):
    if isinstance(max_ngram_order, bool) or not isinstance(max_ngram_order, int):
        raise TypeError(f"max_ngram_order must be an int, got {type(max_ngram_order).__name__}")
    if not 1 <= max_ngram_order <= 64:
        raise ValueError(f"max_ngram_order must be between 1 and 64, got {max_ngram_order}")


def check_weights(weights, max_ngram_order):
    if weights is None:
        return None
    try:
        w = [float(x) for x in weights]
    except (TypeError, ValueError):
        raise TypeError("weights must be a sequence of numbers or None") from None
    if len(w) != max_ngram_order:
        raise ValueError(f"weights must have max_ngram_order={max_ngram_order} values, got {len(w)}")
    if any(not math.isfinite(x) or x < 0 for x in w) or not math.isclose(sum(w), 1.0, rel_tol=0, abs_tol=1e-9):
        raise ValueError(f"weights must be non-negative and sum to 1, got {w}")
    return tuple(w)


def stat_names(max_ngram_order: int) -> List[str]:
    """Names of the statistics vector's entries: ``c, r, matches_1..N, totals_1..N``."""
    orders = range(1, max_ngram_order + 1)
    return ["c", "r"] + [f"matches_{n}" for n in orders] + [f"totals_{n}" for n in orders]


def check_stats(stats, max_ngram_order: Optional[int] = None) -> List[int]:
    """The one validation of a statistics vector ``[c, r, matches_1..N, totals_1..N]``, used by
    :func:`compute_bleu`, ``BleuStats`` and ``Bleu.score``: 2 + 2N integers with N >= 1 (N =
    ``max_ngram_order`` when given), each in 0 .. 2**63 - 1 (they are summed in int64), and
    ``matches_n <= totals_n``. Returns the values as Python ints; raises TypeError or ValueError."""
    if getattr(stats, "ndim", 1) != 1:
        raise ValueError(f"a BLEU statistics vector is one-dimensional, got shape {stats.shape}")
    values = []
    for x in stats.tolist() if hasattr(stats, "tolist") else stats:
        try:
            values.append(operator.index(x))
        except TypeError:
            raise TypeError(f"BLEU statistics are integers, got {type(x).__name__} {x!r}") from None
    size = len(values)
    if max_ngram_order is not None and size != 2 + 2 * max_ngram_order:
        raise ValueError(
            f"stats must have 2 + 2 * max_ngram_order = {2 + 2 * max_ngram_order} values, got {size}"
        )
    if size < 4 or size % 2:
        raise ValueError(f"a BLEU statistics vector has 2 + 2N values (N >= 1), got {size}")
    order = (size - 2) // 2
    if min(values) < 0 or max(values) > INT64_MAX:
        i = next(i for i, x in enumerate(values) if not 0 <= x <= INT64_MAX)
        raise ValueError(f"BLEU statistics are between 0 and 2**63 - 1, got {stat_names(order)[i]} = {values[i]}")
    for n in range(order):
        if values[2 + n] > values[2 + order + n]:
            raise ValueError(
                f"matches_{n + 1} = {values[2 + n]} exceeds totals_{n + 1} = {values[2 + order + n]}: "
                "not BLEU statistics"
            )
    return values


@record
class BleuScore(Score):
    """A BLEU score and the statistics it came from.

    ``counts``/``totals`` are the clipped n-gram matches and the candidate n-gram totals per
    order (real integers, never smoothed), ``precisions`` are in percent (smoothed as the method
    says), ``score`` is 0-100.
    """

    score: float
    counts: List[int]
    totals: List[int]
    precisions: List[float]
    bp: float
    sys_len: int
    ref_len: int
    signature: Optional[str] = None
    name: str = field(default="BLEU", repr=False)

    @property
    def ratio(self) -> float:
        return self.sys_len / self.ref_len if self.ref_len else 0

    @property
    def prec_str(self) -> str:
        return "/".join(f"{p:.1f}" for p in self.precisions)

    @property
    def verbose_score(self) -> str:
        """sacrebleu's verbose part: ``p1/p2/p3/p4 (BP = ... ref_len = ...)``."""
        return (
            f"{self.prec_str} (BP = {self.bp:.3f} ratio = {self.ratio:.3f} "
            f"hyp_len = {self.sys_len:d} ref_len = {self.ref_len:d})"
        )

    def stat_fields(self) -> dict:
        return dict(counts=list(self.counts), totals=list(self.totals), precisions=list(self.precisions), bp=self.bp,
                    ratio=self.ratio, sys_len=self.sys_len, ref_len=self.ref_len)


def compute_bleu(
    stats: Sequence[int],
    *,
    max_ngram_order: int,
    smooth_method: str = "exp",
    smooth_value: Optional[float] = None,
    effective_order: bool = False,
    weights: Optional[Sequence[float]] = None,
    signature: Optional[str] = None,
) -> BleuScore:
    """BLEU from a statistics vector ``[c, r, matches_1..N, totals_1..N]`` (validated by
    :func:`check_stats`).

    With ``weights=None`` this is sacrebleu's uniform geometric mean, computed exactly as
    sacrebleu computes it. With weights ``w_n`` (non-negative, summing to 1) the mean is
    ``exp(sum(w_n * log p_n))``; under ``effective_order`` the weights of the orders used are
    renormalised to sum to 1.
    """
    check_order(max_ngram_order)
    check_smoothing(smooth_method, smooth_value)
    weights = check_weights(weights, max_ngram_order)
    stats = check_stats(stats, max_ngram_order)
    return bleu_of_checked(stats, max_ngram_order, smooth_method, smooth_value, effective_order, weights, signature)


def bleu_of_checked(stats: List[int], max_ngram_order: int, smooth_method: str, smooth_value: Optional[float],
                    effective_order: bool, weights: Optional[Sequence[float]], signature: Optional[str]) -> BleuScore:
    """:func:`compute_bleu` of statistics and options validated already (by :func:`check_stats`
    and the checks of ``Bleu``'s constructor): what a metric calls for every replicate."""
    sys_len, ref_len = stats[0], stats[1]
    correct = stats[2 : 2 + max_ngram_order]
    total = stats[2 + max_ngram_order :]

    if smooth_value is None:
        smooth_value = SMOOTH_DEFAULTS[smooth_method]

    bp = 1.0
    if sys_len < ref_len:
        bp = math.exp(1 - ref_len / sys_len) if sys_len > 0 else 0.0

    precisions = [0.0] * max_ngram_order

    def result(score):
        return BleuScore(score, correct, total, precisions, bp, sys_len, ref_len, signature)

    # early stop if there are no matches (sacrebleu #141)
    if not any(correct):
        return result(0.0)

    smooth_mteval = 1.0
    eff_order = max_ngram_order
    for n in range(1, len(precisions) + 1):
        c, t = correct[n - 1], total[n - 1]
        if smooth_method == "add-k" and n > 1:
            c += smooth_value
            t += smooth_value
        if t == 0:
            break
        if effective_order:
            eff_order = n
        if c == 0:
            if smooth_method == "exp":
                smooth_mteval *= 2
                precisions[n - 1] = 100.0 / (smooth_mteval * t)
            elif smooth_method == "floor":
                precisions[n - 1] = 100.0 * smooth_value / t
        else:
            precisions[n - 1] = 100.0 * c / t

    if weights is None:
        score = bp * math.exp(sum([my_log(p) for p in precisions[:eff_order]]) / eff_order)
    else:
        used = weights[:eff_order]
        norm = sum(used)
        if norm == 0:
            raise ValueError("weights: the orders in use all have weight 0")
        score = bp * math.exp(sum(w / norm * my_log(p) for w, p in zip(used, precisions) if w))
    return result(score)


class BleuSignature(SignatureFields):
    """sacrebleu's BLEU signature: same fields, same order, our version.

    ``nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:beambleu-0.1.0``; bootstrap fields
    (``bs``, ``seed``) sit where sacrebleu puts them. Options sacrebleu lacks are added only when
    they differ from sacrebleu's fixed behaviour: ``order:N`` when N != 4, ``weights:...`` when
    given, so a default signature matches sacrebleu's field for field.
    """

    def __init__(
        self,
        *,
        nrefs,
        tokenizer_signature: str,
        lowercase: bool = False,
        effective_order: bool = False,
        smooth_method: str = "exp",
        smooth_value: Optional[float] = None,
        max_ngram_order: int = 4,
        weights: Optional[Sequence[float]] = None,
        n_bootstrap: Optional[int] = None,
        seed=None,
    ):
        smooth = smooth_method
        default = SMOOTH_DEFAULTS[smooth_method]
        if default is not None:
            value = default if smooth_value is None else smooth_value
            smooth += f"[{value:.2f}]"
        super().__init__(nrefs, n_bootstrap, seed, case="lc" if lowercase else "mixed",
                         eff="yes" if effective_order else "no", tok=tokenizer_signature, smooth=smooth,
                         order=None if max_ngram_order == 4 else max_ngram_order,
                         weights=None if weights is None else ",".join(f"{w:g}" for w in weights))

    ABBR = {**SignatureFields.ABBR, "case": "c", "eff": "e", "smooth": "s"}

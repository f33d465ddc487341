"""Bootstrap confidence intervals and paired significance, shared by ``beambleu score`` and
``beambleu run`` (the arithmetic is in :mod:`bleu_core.bootstrap`; this is options and fields).

Flags follow sacrebleu's: ``--confidence`` / ``--confidence-n``, ``--paired-bs`` /
``--paired-bs-n``; the seed is ``--seed`` (sacrebleu reads ``SACREBLEU_SEED``; both default to
12345). The JSON carries ``confidence_mean``, ``confidence_low``, ``confidence_high`` and
``confidence_half_width`` (what sacrebleu calls ``confidence_var`` is this half-width), plus
sacrebleu's ``confidence`` string ``μ = mean ± half-width``.
"""

from __future__ import annotations

from typing import Dict, Sequence

import numpy as np

from bleu_core import bootstrap as bs

from .argtypes import int_at_least
from .errors import UsageError

#: p-values below this are marked significant in reports
ALPHA = 0.05

#: argparse type of --confidence-n and --paired-bs-n; the upper limit, which depends on the
#: metric, is checked by :func:`n_boot`
RESAMPLES = int_at_least(2, "resamples")


def add_significance_arguments(p, run: bool = False) -> None:
    g = p.add_argument_group("confidence and significance (as in sacrebleu, by Poisson bootstrap)")
    g.add_argument("--confidence", action="store_true",
                   help="95%% bootstrap confidence interval of every score")
    g.add_argument("--confidence-n", type=RESAMPLES, default=bs.DEFAULT_N, metavar="B",
                   help="resamples for --confidence (default: %(default)s)")
    g.add_argument("--paired-bs", action="store_true",
                   help="paired bootstrap test of every system against the baseline (Koehn 2004, sacrebleu's "
                        "p-value); implies intervals")
    g.add_argument("--paired-bs-n", type=RESAMPLES, default=bs.DEFAULT_N, metavar="B",
                   help="resamples for --paired-bs, and for its intervals (default: %(default)s)")
    g.add_argument("--seed", type=int, default=bs.DEFAULT_SEED,
                   help="seed of the resampling weights (default: %(default)s, as sacrebleu's)")
    if run:
        g.add_argument("--baseline", default=None, metavar="SYSTEM",
                       help="--paired-bs: the baseline system (a value of --system-column, or one of "
                            "--candidate-columns)")
        g.add_argument("--system-column", default="system", metavar="COL",
                       help="--paired-bs in long format: the column naming the system (default: %(default)s)")


def n_boot(args, width: int) -> int:
    """Replicates to draw: 0 when no interval or test was asked for. Checked before any work
    against :func:`bleu_core.bootstrap.check_replicates` (every group holds all B replicate
    totals of the metrics' ``width`` statistics): a :class:`UsageError` naming the flag."""
    if getattr(args, "paired_bs", False):
        flag, n = "--paired-bs-n", args.paired_bs_n
    elif getattr(args, "confidence", False):
        flag, n = "--confidence-n", args.confidence_n
    else:
        return 0
    try:
        return bs.check_replicates(n, width)
    except (ValueError, TypeError) as exc:
        raise UsageError(f"{flag}: {exc}") from None


def interval(metric, boot: np.ndarray, width: int = 1) -> Dict:
    """Confidence fields of one score from its replicate totals; also returns the replicate
    scores (under ``_replicates``, for pairing; not written)."""
    scores = bs.replicate_scores(metric, boot)
    ci = bs.percentile_interval(scores)
    return {
        "confidence_mean": ci["mean"],
        "confidence_low": ci["low"],
        "confidence_high": ci["high"],
        "confidence_half_width": ci["half_width"],
        "confidence": f"μ = {ci['mean']:.{width}f} ± {ci['half_width']:.{width}f}",
        "_replicates": scores,
    }


def paired(system: Dict, baseline: Dict) -> Dict:
    """The paired test's fields for ``system`` against ``baseline`` (both with ``_replicates``)."""
    p = bs.paired_p_value(system["_replicates"], baseline["_replicates"], system["score"], baseline["score"])
    return {"p_value": p, "significant": p < ALPHA, "difference": system["score"] - baseline["score"]}


def strip_replicates(docs: Sequence[Dict]) -> None:
    for d in docs:
        d.pop("_replicates", None)


def row_keys_for_lines(n: int, first: int = 0) -> np.ndarray:
    """Row identities of text-file lines ``first .. first + n - 1`` (0-based): their 1-based line
    numbers, as ``beambleu convert`` writes them in its ``line`` column. The same line of two
    system outputs gets the same weights (that is what pairs the test), and ``beambleu run
    --id-column line`` on converted shards draws exactly the weights ``beambleu score`` draws."""
    return bs.row_keys_from_ids(np.arange(first + 1, first + n + 1, dtype=np.int64))


def replicates_of_rows(rows: np.ndarray, keys: np.ndarray, n: int, seed: int) -> np.ndarray:
    """int64[n, width]: replicate totals of a block of per-pair statistics."""
    return bs.bootstrap_totals(rows, keys, n, seed)[0]

"""The options of bootstrap confidence intervals and paired significance, shared by ``beambleu
score`` and ``beambleu run`` (the arithmetic is in :mod:`bleu_core.resampling.counter`, the counter-based
draws, and :mod:`bleu_core.resampling.sacrebleu`, sacrebleu's draws, which only ``score`` offers
(``--resampling``); the results come from the score stage, :mod:`bleu_core.scoring`; this is
flags, their checks and row identities).

Flags follow sacrebleu's: ``--confidence`` / ``--confidence-n``, ``--paired-bs`` /
``--paired-bs-n``; the seed is ``--seed`` (sacrebleu reads ``SACREBLEU_SEED``; both default to
12345). The JSON carries ``confidence_mean``, ``confidence_low``, ``confidence_high`` and
``confidence_half_width`` (what sacrebleu calls ``confidence_var`` is this half-width), plus
sacrebleu's ``confidence`` string ``μ = mean ± half-width``.
"""

from __future__ import annotations

import numpy as np

from bleu_core import scoring
from bleu_core.resampling import counter as bs, sacrebleu as nr

from ..errors import UsageError, int_at_least

__all__ = ["DEFAULT_TRIALS", "PAIRED_N", "RESAMPLES", "add_significance_arguments", "n_boot", "n_trials",
           "replicates_of_rows", "resampling", "resolve_seed", "row_keys_for_lines"]

#: argparse type of --confidence-n and --paired-bs-n; the upper limit, which depends on the
#: metric, is checked by :func:`n_boot`
RESAMPLES = int_at_least(2, "resamples")
#: --paired-bs-n and --paired-ar-n: 0 means the default, as in sacrebleu's PairedTest
PAIRED_N = int_at_least(0, "resamples")
#: sacrebleu's default number of approximate randomization trials
DEFAULT_TRIALS = 10_000


def add_significance_arguments(p, run: bool = False) -> None:
    """sacrebleu's flags (with its short forms for ``score``), and ``--seed``."""
    g = p.add_argument_group("confidence and significance (as in sacrebleu)")
    short = (lambda *names: names[:1]) if run else (lambda *names: names)  # noqa: E731 - run: --long only
    g.add_argument(*short("--confidence", "-ci"), action="store_true",
                   help="95%% bootstrap confidence interval of every score")
    g.add_argument(*short("--confidence-n", "-cin"), type=RESAMPLES, default=bs.DEFAULT_N, metavar="B",
                   help="resamples for --confidence (default: %(default)s)")
    pair = g if run else g.add_mutually_exclusive_group()  # (Beam's option parser misses a group's options)
    pair.add_argument(*short("--paired-bs", "-pbs"), action="store_true",
                      help="paired bootstrap test of every system against the baseline (Koehn 2004, sacrebleu's "
                           "p-value); implies intervals")
    g.add_argument(*short("--paired-bs-n", "-pbsn"), type=PAIRED_N, default=bs.DEFAULT_N, metavar="B",
                   help=f"resamples for --paired-bs, and for its intervals (default: %(default)s; 0 means {bs.DEFAULT_N}, as "
                        "in sacrebleu)")
    pair.add_argument(*short("--paired-ar", "-par"), action="store_true",
                      help="paired approximate randomization test of every system against the baseline "
                           "(sacrebleu's test and p-value)")
    g.add_argument(*short("--paired-ar-n", "-parn"), type=PAIRED_N, default=DEFAULT_TRIALS, metavar="T",
                   help=f"trials of --paired-ar (default: %(default)s; 0 means {DEFAULT_TRIALS}, as in sacrebleu)")
    if run:
        g.add_argument("--resampling", choices=(nr.COUNTER,), default=nr.COUNTER, metavar="counter",
                       help="how resamples are drawn; run has one method, counter (the default, so this flag can be "
                            "left out): beambleu's counter-based Poisson bootstrap and coins, keyed on the seed, the "
                            "row's identity and the replicate, the same on every runner and sharding, ties counted "
                            "in the p-values (sacrebleu's draws need every segment of a system in one process, in "
                            "order); the same numbers as beambleu score --resampling counter on the same lines with "
                            "--id-column line")
    else:
        g.add_argument("--resampling", choices=nr.METHODS, default=nr.SACREBLEU,
                       help="how resamples are drawn (default: %(default)s): sacrebleu, numpy's default_rng(seed) "
                            "draws, float32 sums and strict p-value counts of sacrebleu 2.6.0, so intervals and "
                            "p-values are sacrebleu's byte for byte; counter, beambleu's counter-based Poisson "
                            "bootstrap and coins (ties counted in the p-values), the numbers beambleu run gives")
    if not run:
        g.add_argument("--paired-jobs", "-j", type=int_at_least(0), default=1, metavar="N",
                       help="accepted for sacrebleu's command line; beambleu scores every system in one pass")
    g.add_argument("--seed", type=int, default=None,
                   help="seed of the resampling, 0 .. 2**64-1 (default: $SACREBLEU_SEED, else 12345, as in "
                        "sacrebleu; SACREBLEU_SEED=none draws one" +
                        ("" if run else "; with sacrebleu's draws a seed of 0 draws a fresh one for each system of "
                                        "the paired tests, as sacrebleu does") + ")")
    if run:
        g.add_argument("--baseline", default=None, metavar="SYSTEM",
                       help="--paired-bs/--paired-ar: the baseline system (a value of --system-column, an integer "
                            "for an integer column, or one of --candidate-columns)")
        g.add_argument("--system-column", default="system", metavar="COL",
                       help="paired tests in long format: the column naming the system (default: %(default)s)")


def resolve_seed(args) -> None:
    """Set ``args.seed`` (an int) and ``args.seed_label`` (the signature's ``seed:`` value):
    ``--seed``, else ``$SACREBLEU_SEED`` (sacrebleu's variable, shown as sacrebleu shows it: as
    given for intervals, ``SACREBLEU_SEED=0042`` is ``seed:0042``, as the integer for the paired
    tests, ``seed:42``; ``none`` draws a seed, shown as ``none``), else 12345. A seed outside
    0 .. 2**64 - 1 (which the generator would not tell apart) is bad usage."""
    if args.seed is not None:
        try:
            bs.check_seed(args.seed)
        except ValueError as exc:
            raise UsageError(f"--seed {args.seed}: {exc}") from None
        args.seed_label = str(args.seed)
        return
    try:
        paired = bool(getattr(args, "paired_bs", False) or getattr(args, "paired_ar", False))
        args.seed_label, args.seed = bs.seed_from_env(paired=paired)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def n_boot(args, width: int) -> int:
    """Bootstrap replicates to draw: 0 when no interval or bootstrap test was asked for. Checked
    before any work against :func:`bleu_core.resampling.counter.check_replicates` (every group holds all B
    replicate totals of the metrics' ``width`` statistics): a :class:`UsageError` naming the flag."""
    if getattr(args, "paired_bs", False):
        flag, n = "--paired-bs-n", args.paired_bs_n or bs.DEFAULT_N
    elif getattr(args, "confidence", False) and not getattr(args, "paired_ar", False):
        flag, n = "--confidence-n", args.confidence_n
    else:
        return 0
    return _checked(flag, n, width, bs.DEFAULT_N, args)


def resampling(args, width: int):
    """The score stage's :class:`~bleu_core.scoring.Resampling` the options ask for (checked as
    :func:`n_boot` and :func:`n_trials` check them), or None when nothing is drawn;
    :func:`resolve_seed` has set the seed."""
    draws = getattr(args, "resampling", nr.COUNTER)
    n = n_boot(args, width)
    if n:
        return scoring.Resampling(scoring.BOOTSTRAP, n, args.seed, args.seed_label, draws)
    n = n_trials(args, width)
    if n:
        return scoring.Resampling(scoring.RANDOMIZATION, n, args.seed, args.seed_label, draws)
    return None


def n_trials(args, width: int) -> int:
    """Approximate randomization trials to run: 0 without ``--paired-ar`` (checked like
    :func:`n_boot`: every system and group holds each trial's swapped totals)."""
    if not getattr(args, "paired_ar", False):
        return 0
    return _checked("--paired-ar-n", args.paired_ar_n or DEFAULT_TRIALS, width, DEFAULT_TRIALS, args)


def _checked(flag: str, n: int, width: int, default: int, args=None) -> int:
    if getattr(args, "resampling", nr.COUNTER) != nr.COUNTER:
        return n  # sacrebleu's draws keep B scores per metric, not B x width totals per accumulator
    try:
        return bs.check_replicates(n, width, default)
    except (ValueError, TypeError) as exc:
        raise UsageError(f"{flag}: {exc}") from None


def row_keys_for_lines(n: int, first: int = 0) -> np.ndarray:
    """Row identities of text-file lines ``first .. first + n - 1`` (0-based): their 1-based line
    numbers, as ``beambleu convert`` writes them in its ``line`` column. The same line of two
    system outputs gets the same weights (that is what pairs the test), and ``beambleu run
    --id-column line`` on converted shards draws exactly the weights ``beambleu score`` draws."""
    return bs.row_keys_from_ids(np.arange(first + 1, first + n + 1, dtype=np.int64))


def replicates_of_rows(rows: np.ndarray, keys: np.ndarray, n: int, seed: int) -> np.ndarray:
    """int64[n, width]: replicate totals of a block of per-pair statistics."""
    return bs.bootstrap_totals(rows, keys, n, seed)[0]

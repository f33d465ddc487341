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

from bleu_core import scoring
from bleu_core.resampling import seeds

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (start-up)
if TYPE_CHECKING:
    import numpy as np

# parsing and checking the options is numpy-free (bleu_core.resampling.seeds); the draws import numpy and
# bleu_core.resampling.counter when a job asks for them

from ..errors import UsageError, int_at_least

__all__ = ["DEFAULT_TRIALS", "MAX_DRAWS", "MAX_DRAW_WORK", "PAIRED_N", "RESAMPLES", "add_significance_arguments",
           "check_draw_work", "n_boot", "n_trials", "replicates_of_rows", "resampling", "resolve_seed",
           "row_keys_for_lines"]

#: argparse type of --confidence-n and --paired-bs-n; the upper limit, which depends on the
#: metric, is checked by :func:`n_boot`
RESAMPLES = int_at_least(2, "resamples")
#: --paired-bs-n and --paired-ar-n: 0 means the default, as in sacrebleu's PairedTest
PAIRED_N = int_at_least(0, "resamples")
#: sacrebleu's default number of approximate randomization trials
DEFAULT_TRIALS = 10_000
#: the most resamples (or trials) sacrebleu's draws (``score``'s default ``--resampling``) take,
#: checked before any input is read: each is drawn over every segment and its score kept for every
#: system and metric (measured: 10^6 paired bootstrap resamples of two systems on 1,984 segments take
#: a minute and 260 MB; sacrebleu itself would take hours)
MAX_DRAWS = 1_000_000
#: the most segment draws (resamples x segments x systems) sacrebleu's draws take, checked once the
#: input is read (:func:`check_draw_work`): 10^10 is a few minutes of drawing
MAX_DRAW_WORK = 10 ** 10


def add_significance_arguments(p, run: bool = False) -> None:
    """sacrebleu's flags (with its short forms for ``score``), and ``--seed``."""
    g = p.add_argument_group("confidence and significance (as in sacrebleu)")
    short = (lambda *names: names[:1]) if run else (lambda *names: names)  # noqa: E731 - run: --long only
    g.add_argument(*short("--confidence", "-ci"), action="store_true",
                   help="95%% bootstrap confidence interval of every score")
    counter_cap = "8 MB of totals per group: 100000 for BLEU alone"
    cap = (f"at most {counter_cap}" if run else
           f"at most {MAX_DRAWS:,} and resamples x segments x systems at most {MAX_DRAW_WORK:.0e}; with "
           f"--resampling counter at most {counter_cap}").replace("e+", "e")
    g.add_argument(*short("--confidence-n", "-cin"), type=RESAMPLES, default=seeds.DEFAULT_N, metavar="B",
                   help=f"resamples for --confidence (default: %(default)s; {cap})")
    pair = g if run else g.add_mutually_exclusive_group()  # (Beam's option parser misses a group's options)
    pair.add_argument(*short("--paired-bs", "-pbs"), action="store_true",
                      help="paired bootstrap test of every system against the baseline (Koehn 2004, sacrebleu's "
                           "p-value); implies intervals")
    g.add_argument(*short("--paired-bs-n", "-pbsn"), type=PAIRED_N, default=seeds.DEFAULT_N, metavar="B",
                   help=f"resamples for --paired-bs, and for its intervals (default: %(default)s; 0 means "
                        f"{seeds.DEFAULT_N}, as in sacrebleu; {cap})")
    pair.add_argument(*short("--paired-ar", "-par"), action="store_true",
                      help="paired approximate randomization test of every system against the baseline "
                           "(sacrebleu's test and p-value)")
    g.add_argument(*short("--paired-ar-n", "-parn"), type=PAIRED_N, default=DEFAULT_TRIALS, metavar="T",
                   help=f"trials of --paired-ar (default: %(default)s; 0 means {DEFAULT_TRIALS}, as in sacrebleu; "
                        f"{cap})")
    if run:
        g.add_argument("--resampling", choices=(seeds.COUNTER,), default=seeds.COUNTER, metavar="counter",
                       help="how resamples are drawn; run has one method, counter (the default, so this flag can be "
                            "left out): beambleu's counter-based Poisson bootstrap and coins, keyed on the seed, the "
                            "row's identity and the replicate, the same on every runner and sharding, ties counted "
                            "in the p-values (sacrebleu's draws need every segment of a system in one process, in "
                            "order); the same numbers as beambleu score --resampling counter on the same lines with "
                            "--id-column line")
    else:
        g.add_argument("--resampling", choices=seeds.METHODS, default=seeds.SACREBLEU,
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
            seeds.check_seed(args.seed)
        except ValueError as exc:
            raise UsageError(f"--seed {args.seed}: {exc}") from None
        args.seed_label = str(args.seed)
        return
    try:
        paired = bool(getattr(args, "paired_bs", False) or getattr(args, "paired_ar", False))
        args.seed_label, args.seed = seeds.seed_from_env(paired=paired)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def n_boot(args, width: int) -> int:
    """Bootstrap replicates to draw: 0 when no interval or bootstrap test was asked for. Checked
    before any work against :func:`bleu_core.resampling.counter.check_replicates` (every group holds all B
    replicate totals of the metrics' ``width`` statistics): a :class:`UsageError` naming the flag."""
    if getattr(args, "paired_bs", False):
        flag, n = "--paired-bs-n", args.paired_bs_n or seeds.DEFAULT_N
    elif getattr(args, "confidence", False) and not getattr(args, "paired_ar", False):
        flag, n = "--confidence-n", args.confidence_n
    else:
        return 0
    return _checked(flag, n, width, seeds.DEFAULT_N, args)


def resampling(args, width: int):
    """The score stage's :class:`~bleu_core.scoring.Resampling` the options ask for (checked as
    :func:`n_boot` and :func:`n_trials` check them), or None when nothing is drawn;
    :func:`resolve_seed` has set the seed."""
    draws = getattr(args, "resampling", seeds.COUNTER)
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
    if getattr(args, "resampling", seeds.COUNTER) != seeds.COUNTER:
        # sacrebleu's draws keep B scores per metric, not B x width totals per accumulator; each is
        # drawn over every segment
        if n > MAX_DRAWS:
            kept = (f" and its scores are kept: this many would take hours and at least {_gigabytes(n)} of memory "
                    "per system and metric" if _WHAT[flag] == "resample" else ": this many would take hours")
            raise UsageError(f"{flag} {n}: above the limit of {MAX_DRAWS:,} (every {_WHAT[flag]} is drawn over "
                             f"every segment{kept}); use {MAX_DRAWS:,} or fewer (sacrebleu's default is {default:,})")
        return n
    try:
        return seeds.check_replicates(n, width, default)
    except (ValueError, TypeError) as exc:
        raise UsageError(f"{flag}: {exc}") from None


#: what one of each flag's draws is called in messages
_WHAT = {"--confidence-n": "resample", "--paired-bs-n": "resample", "--paired-ar-n": "trial"}


def _gigabytes(n: int) -> str:
    return f"{n * 8 / 1e9:.1f} GB" if n * 8 >= 1e8 else f"{n * 8 / 1e6:.0f} MB"


def check_draw_work(resampling_, n_segments: int, n_systems: int) -> None:
    """Once the input is read, before anything is drawn: sacrebleu's draws of ``resampling_``
    (a :class:`~bleu_core.scoring.Resampling`, or None) over ``n_segments`` segments of
    ``n_systems`` systems are at most :data:`MAX_DRAW_WORK` segment draws, else a
    :class:`UsageError` saying how many resamples would fit. Counter draws are checked by
    :func:`n_boot` and :func:`n_trials` alone."""
    if resampling_ is None or resampling_.draws == seeds.COUNTER:
        return
    work = resampling_.n * max(1, n_segments) * max(1, n_systems)
    if work <= MAX_DRAW_WORK:
        return
    test = resampling_.method == scoring.RANDOMIZATION
    flag = "--paired-ar-n" if test else ("--paired-bs-n" if n_systems > 1 else "--confidence-n")
    fits = max(1, MAX_DRAW_WORK // (max(1, n_segments) * max(1, n_systems)))
    raise UsageError(f"{flag} {resampling_.n}: {resampling_.n:,} {_WHAT[flag]}s x {n_segments:,} segments x "
                     f"{n_systems} system{'s' * (n_systems != 1)} is above the limit of {MAX_DRAW_WORK:.0e} segment "
                     f"draws (minutes of drawing; this would take hours); use {fits:,} or fewer"
                     .replace("e+", "e"))


def row_keys_for_lines(n: int, first: int = 0) -> np.ndarray:
    """Row identities of text-file lines ``first .. first + n - 1`` (0-based): their 1-based line
    numbers, as ``beambleu convert`` writes them in its ``line`` column. The same line of two
    system outputs gets the same weights (that is what pairs the test), and ``beambleu run
    --id-column line`` on converted shards draws exactly the weights ``beambleu score`` draws."""
    import numpy as np

    from bleu_core.resampling import counter as bs

    return bs.row_keys_from_ids(np.arange(first + 1, first + n + 1, dtype=np.int64))


def replicates_of_rows(rows: np.ndarray, keys: np.ndarray, n: int, seed: int) -> np.ndarray:
    """int64[n, width]: replicate totals of a block of per-pair statistics."""
    from bleu_core.resampling import counter as bs

    return bs.bootstrap_totals(rows, keys, n, seed)[0]

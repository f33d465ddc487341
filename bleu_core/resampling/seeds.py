"""What the command lines need to know about resampling before anything is drawn, without numpy: the
draw methods, sacrebleu's defaults, and the checks of a seed and of a replicate count.

:mod:`bleu_core.resampling.counter` re-exports all of it (it is the arithmetic's home); this module
exists so that parsing ``beambleu score``'s options never imports numpy: a plain scoring job does
not draw anything.
"""

from __future__ import annotations

import sys

__all__ = ["COUNTER", "DEFAULT_N", "DEFAULT_SEED", "MAX_REPLICATE_BYTES", "MAX_SEED", "METHODS", "SACREBLEU",
           "check_replicates", "check_seed", "max_replicates", "seed_from_env"]

#: the two ways ``beambleu score`` and ``bleu_core.compat`` draw resamples: sacrebleu's numpy draws
#: (:mod:`bleu_core.resampling.sacrebleu`) and beambleu's counter-based ones (:mod:`bleu_core.resampling.counter`)
SACREBLEU, COUNTER = "sacrebleu", "counter"
METHODS = (SACREBLEU, COUNTER)
#: sacrebleu's default number of resamples and seed (SACREBLEU_SEED)
DEFAULT_N = 1000
DEFAULT_SEED = 12345
#: most memory the replicate totals of one accumulator (the corpus, or one group) may take:
#: B x width int64 values, so at most 100 000 replicates of BLEU-4's 10 statistics
MAX_REPLICATE_BYTES = 8_000_000
#: the largest seed: the generator keys on 64 bits (see :func:`bleu_core.resampling.counter.seed_key`)
MAX_SEED = (1 << 64) - 1


def _is_int(value) -> bool:
    """An int or a numpy integer (without importing numpy: when it is not imported, nothing is
    one), not a bool."""
    if isinstance(value, bool):
        return False
    np = sys.modules.get("numpy")
    return isinstance(value, int) or (np is not None and isinstance(value, np.integer))


def check_seed(seed: int) -> int:
    """``seed`` if the generator tells it apart from every other seed (0 .. 2**64 - 1), else
    ValueError: seeds 2**64 apart would draw the same numbers under different signatures."""
    if not _is_int(seed):
        raise TypeError(f"the seed must be an int, got {type(seed).__name__}")
    if not 0 <= seed <= MAX_SEED:
        raise ValueError("outside 0 .. 2**64 - 1, the seeds the generator tells apart "
                         "(seeds 2**64 apart would draw the same numbers)")
    return int(seed)


def seed_from_env(paired: bool = False):
    """(the signature's ``seed:`` value, the generator's seed) from ``SACREBLEU_SEED``, as sacrebleu
    2.6.0 reads it (significance.py): 12345 when unset, ``none`` (any case) for a fresh random
    seed, shown as ``none``; else ``int()`` of the text, shown as the text given, lowercased
    (``0042`` stays ``0042``), or, in a paired test's signature (``paired``), as the integer (``42``).
    ValueError for text that is not an integer, and for a seed :func:`check_seed` refuses."""
    import os

    text = os.environ.get("SACREBLEU_SEED", str(DEFAULT_SEED))
    if text.lower() == "none":
        import secrets  # (only here: it imports random, hashlib and more)

        return "none", secrets.randbits(63)
    try:
        seed = int(text)
    except ValueError:
        raise ValueError(f"SACREBLEU_SEED={text!r} is not an integer or 'none'") from None
    try:
        check_seed(seed)
    except ValueError as exc:
        raise ValueError(f"SACREBLEU_SEED={text!r}: {exc}") from None
    return (str(seed) if paired else text.lower()), seed


def max_replicates(width: int = 10) -> int:
    """The largest replicate count whose totals (B x ``width`` int64) fit MAX_REPLICATE_BYTES."""
    return MAX_REPLICATE_BYTES // (8 * width)


def check_replicates(n_boot: int, width: int = 10, default: int = DEFAULT_N) -> int:
    """``n_boot`` if it is a replicate count to accept, else ValueError saying what to change (or
    TypeError). Checked before any work: every corpus and group accumulator holds all B replicate
    totals (``width`` int64 each; width = 2 + 2N for BLEU), so B is capped by
    :data:`MAX_REPLICATE_BYTES` per accumulator. ``default``: sacrebleu's default count for what is
    drawn (1000 bootstrap resamples; 10000 approximate randomization trials), named in the message."""
    if not _is_int(n_boot):
        raise TypeError(f"the number of resamples must be an int, got {type(n_boot).__name__}")
    cap = max_replicates(width)
    if n_boot < 1:
        raise ValueError(f"the number of resamples must be at least 1, got {n_boot}")
    if n_boot > cap:
        raise ValueError(
            f"{n_boot} resamples is above the limit of {cap} (the corpus and every group keep each resample's "
            f"{width} int64 totals, at most {MAX_REPLICATE_BYTES // 10**6} MB each); use {cap} or fewer "
            f"(sacrebleu's default is {default})"
        )
    return int(n_boot)

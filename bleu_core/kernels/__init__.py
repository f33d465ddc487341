"""What every kernel binding shares: the Arrow marshalling (:mod:`bleu_core.kernels.arrow`), the
C headers (``_buffers.h``: Arrow buffers; ``_text.h``: UTF-8 and whitespace; ``_cps.h``: decoded
code points), and the switch between the compiled kernels and the readable reference paths.

The switch is the environment variable ``BEAMBLEU_KERNELS``, read once, when a metric is first
imported (``from bleu_core import Bleu``, ``bleu_core.registry``, ...): ``c`` (the default; unset or
empty is the same) computes every built-in metric's ``batch_stats`` and ``batch_stats_many`` with
its compiled kernel; ``python`` computes them with
the metric's reference path (its ``scalar_stats``, one pair at a time, see
:func:`bleu_core.protocol.reference_batch_stats`): the same numbers and the same errors, slowly.
The test suite runs on either, as RapidFuzz runs its tests on both its implementations. Any other
value is a ValueError at import.
"""

from __future__ import annotations

import os

__all__ = ["KERNELS", "KERNEL_CHOICES", "use_reference"]

#: the values ``BEAMBLEU_KERNELS`` may take (the first is the default)
KERNEL_CHOICES = ("c", "python")


def _read_switch(value) -> str:
    """The value of ``BEAMBLEU_KERNELS`` (None: unset), checked."""
    if value is None or value == "":
        return KERNEL_CHOICES[0]
    if value not in KERNEL_CHOICES:
        raise ValueError(f"BEAMBLEU_KERNELS={value!r} is not a choice: use 'c' (the compiled kernels, the default) "
                         f"or 'python' (every metric's readable reference path)")
    return value


#: which kernels the metrics' batch paths use: ``"c"`` (compiled) or ``"python"`` (reference paths)
KERNELS = _read_switch(os.environ.get("BEAMBLEU_KERNELS"))


def use_reference() -> bool:
    """Whether the built-in metrics' ``batch_stats`` / ``batch_stats_many`` run their reference
    path (``BEAMBLEU_KERNELS=python``) instead of the compiled kernels."""
    return KERNELS == "python"

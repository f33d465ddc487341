"""argparse value types shared by the commands (each refuses a bad value with argparse's one line)."""

from __future__ import annotations

import argparse
from typing import Callable


def int_at_least(minimum: int, what: str = "") -> Callable[[str], int]:
    """An integer type refusing values below ``minimum``: "must be at least M, got N", or with
    ``what`` ("resamples"), "needs at least M resamples, got N"."""

    def parse(value: str) -> int:
        n = int(value)
        if n < minimum:
            raise argparse.ArgumentTypeError(f"needs at least {minimum} {what}, got {n}" if what
                                             else f"must be at least {minimum}, got {n}")
        return n

    parse.__name__ = "int"  # argparse names the type in "invalid int value: 'x'"
    return parse


def positive_seconds(value: str) -> float:
    """A duration: a finite number of seconds above 0."""
    try:
        seconds = float(value)
    except ValueError:
        seconds = float("nan")
    if not 0 < seconds < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {value!r}")
    return seconds

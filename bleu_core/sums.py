"""Exact integer sums of statistics, shared by every metric: int64 until a score is computed, and
an OverflowError rather than a wrapped value (the one checked sum of beambleu)."""

from __future__ import annotations

import operator

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Callable, List, Optional, Sequence

    import numpy as np

__all__ = ["INT64_MAX", "check_int64", "checked_add", "checked_add_ints", "column_sums", "column_sums_ints",
           "statistics_values"]

#: statistics are summed in int64: every value, and every sum, stays at most this
INT64_MAX = 2**63 - 1


def _overflow(what: str, index: int, name: Callable[[int], str]) -> OverflowError:
    return OverflowError(f"{what} overflows int64: {name(index)} would exceed 2**63 - 1 = {INT64_MAX}")


def checked_add(a: np.ndarray, b: np.ndarray, out: Optional[np.ndarray] = None, *,
                what: str = "the sum of statistics",
                name: Callable[[int], str] = "entry {}".format) -> np.ndarray:
    """``a + b`` of int64 arrays whose entries are all in 0 .. 2**63 - 1 (into ``out`` when
    given), raising OverflowError (naming ``name(index)``) instead of wrapping.

    Why the check is exact: each true sum is in 0 .. 2**64 - 2, and int64 addition wraps exactly
    when it is >= 2**63, to ``sum - 2**64``, which is in -2**63 .. -2. So a negative entry in the
    result is the sign, and the only sign, of an overflow. On error ``out`` is restored (int64
    subtraction undoes the wrapped addition exactly)."""
    import numpy as np

    total = np.add(a, b, out=out)
    if total.size and total.min() < 0:
        index = int(np.flatnonzero(total < 0)[0])
        if out is not None:
            np.subtract(out, b, out=out)
        raise _overflow(what, index, name)
    return total


def column_sums(rows: np.ndarray, starts: Optional[np.ndarray] = None, *,
                what: str = "the sum of statistics",
                name: Callable[[int], str] = "column {}".format) -> np.ndarray:
    """Exact int64 column sums of a non-negative int64 matrix: of all rows, or, given ``starts``
    (as ``np.add.reduceat``), of each run ``rows[starts[j]:starts[j + 1]]``. Raises
    OverflowError instead of wrapping, ValueError for a negative entry.

    Why the fast path is exact: viewed as uint64, every entry is at most m = the largest entry
    (a negative one would be >= 2**63 and fail the test below); a run has at most L rows, so every
    partial sum is in 0 .. L * m, and when L * m <= 2**63 - 1 int64 arithmetic cannot wrap.
    Otherwise (never with real text) the sums are redone in Python integers and checked."""
    import numpy as np

    rows = np.asarray(rows, dtype=np.int64)
    if len(rows) == 0:
        return np.zeros(rows.shape[1:] if starts is None else (len(starts),) + rows.shape[1:], dtype=np.int64)
    longest = len(rows) if starts is None else int(np.diff(np.r_[starts, len(rows)]).max())
    if int(rows.view(np.uint64).max()) * longest <= INT64_MAX:
        return rows.sum(axis=0) if starts is None else np.add.reduceat(rows, starts, axis=0)
    exact = rows.astype(object)
    if (exact < 0).any():
        raise ValueError(f"{what}: statistics are non-negative, got {rows.min()}")
    exact = exact.sum(axis=0) if starts is None else np.add.reduceat(exact, starts, axis=0)
    too_big = np.flatnonzero((exact > INT64_MAX).reshape(-1))
    if len(too_big):
        raise _overflow(what, int(too_big[0]) % rows.shape[1], name)
    return exact.astype(np.int64)


def checked_add_ints(total: List[int], part: Sequence[int], *, what: str = "the sum of statistics",
                     name: Callable[[int], str] = "entry {}".format) -> List[int]:
    """:func:`checked_add` of statistics held as Python ints (each in 0 .. 2**63 - 1): ``total``
    becomes ``total + part``, or OverflowError (the same message, naming the first entry past
    int64) and ``total`` is left as it was."""
    sums = list(map(operator.add, total, part))
    for index, value in enumerate(sums):
        if value > INT64_MAX:
            raise _overflow(what, index, name)
    total[:] = sums
    return total


def column_sums_ints(rows: Sequence[Sequence[int]], width: int, *, what: str = "the sum of statistics",
                     name: Callable[[int], str] = "column {}".format) -> List[int]:
    """:func:`column_sums` of rows of Python ints (each ``width`` non-negative ints below 2**63):
    ``width`` exact sums, OverflowError (the same message) for a sum past int64."""
    sums = list(map(sum, zip(*rows))) if rows else [0] * width
    for index, value in enumerate(sums):
        if value > INT64_MAX:
            raise _overflow(what, index, name)
    return sums


def statistics_values(vector, metric: str) -> List[int]:
    """The values of a statistics vector of the metric named ``metric`` as Python ints: a
    one-dimensional sequence of integers (bools refused), else ValueError or TypeError."""
    if getattr(vector, "ndim", 1) != 1:
        raise ValueError(f"{metric} statistics are a one-dimensional vector, got shape {vector.shape}")
    try:
        items = vector.tolist() if hasattr(vector, "tolist") else list(vector)
    except TypeError:
        raise TypeError(f"{metric} statistics are a sequence of integers, got {type(vector).__name__}") from None
    values = []
    for x in items:
        try:
            if isinstance(x, bool):
                raise TypeError
            values.append(operator.index(x))
        except TypeError:
            raise TypeError(f"{metric} statistics are integers, got {type(x).__name__} {x!r}") from None
    return values


def check_int64(values: Sequence[int], names: Sequence[str], metric: str) -> None:
    """ValueError naming the first value outside 0 .. 2**63 - 1 (statistics are summed in int64)."""
    for name, x in zip(names, values):
        if not 0 <= x <= INT64_MAX:
            raise ValueError(f"{metric} statistics are between 0 and 2**63 - 1, got {name} = {x}")

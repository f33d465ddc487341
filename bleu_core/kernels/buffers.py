"""The buffers a compiled kernel reads, made from Python lists without pyarrow, and what every
binding shares that needs no Arrow: the missing-kernel message and a kernel's bad-row error.

A kernel reads a batch's text as Arrow lays it out (UTF-8 data, int64 offsets, one validity byte
per value or none) through the buffer protocol; it never needs a pyarrow object. When the
candidates and references are Python lists of ``str`` (``beambleu score``'s lines, the
compat API's), :func:`list_buffers` makes those buffers with the standard library alone, so
that a plain scoring job imports neither pyarrow (tens of ms of start-up, and pandas with it where
``pa.array`` is given a Python list) nor numpy. Arrow arrays, or lists holding anything else, take
the Arrow path (:mod:`bleu_core.kernels.arrow`), which says what is wrong with them.

A kernel writes its statistics into a zeroed int64 buffer ``out`` (:func:`new_out`): a numpy array,
or, within :func:`python_rows`, a ``memoryview`` of a ``bytearray`` (the kernels ask only for a
writable C-contiguous buffer of the right size), which :meth:`bleu_core.protocol.MetricSet.batch_stats_lists`
turns into Python ints without importing numpy.
"""

from __future__ import annotations

import array
import contextlib
import itertools
import sys
import threading
from collections import namedtuple
from collections.abc import Sequence

from ..errors import BatchInputError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Callable, List, Optional

    import numpy as np

__all__ = ["ListBuffers", "RowLists", "all_utf8", "as_lists", "candidate_buffers", "is_arrow", "list_buffers",
           "new_out", "python_rows", "raise_row_error", "require_compiled", "shared", "stats_many_lists",
           "utf8_buffers"]


def require_compiled(module, error: Optional[BaseException], what: str = "kernel") -> None:
    """ImportError saying what to do when a compiled kernel (``module``, None when its import
    failed with ``error``) is missing: a source folder needs an editable build, an installed
    package a reinstall. ``what`` names it in the message (``kernel``, ``chrF kernel``)."""
    if module is None:  # pragma: no cover
        from pathlib import Path  # (here: imported only to say what is missing)

        here = Path(__file__).resolve().parent.parent  # the package folder, bleu_core/
        if (here.parent / "setup.py").is_file():  # a source checkout, not an installed package
            raise ImportError(
                f"bleu_core was imported from the source folder {here}, which has no compiled {what}: run "
                f"Python from another directory, or build the kernels there with `pip install -e .` in {here.parent}")
        raise ImportError(
            f"bleu_core's compiled {what} is not available ({error}); reinstall beambleu "
            "so that its C extensions are built"
        )


def raise_row_error(exc: ValueError) -> None:
    """A kernel's bad-row ValueError ``(row, ref_index, reason)`` as :class:`BatchInputError`
    (ref_index < 0: the candidate, or a row without references); any other error unchanged."""
    if len(exc.args) == 3 and isinstance(exc.args[0], int):
        row, ref_index, reason = exc.args
        if ref_index < 0:
            column = "references" if reason.startswith("no reference") else "candidate"
            raise BatchInputError(row, column, reason) from None
        raise BatchInputError(row, "references", reason, ref_index) from None
    raise exc


def is_arrow(value) -> bool:
    """Whether ``value`` is a pyarrow Array or ChunkedArray (without importing pyarrow: when it
    is not imported, nothing is one)."""
    pa = sys.modules.get("pyarrow")
    return pa is not None and isinstance(value, (pa.Array, pa.ChunkedArray))


def all_utf8(candidates, references) -> bool:
    """Whether every text of a checked chunk (``candidates``: str; ``references``: lists of str
    or None) has a UTF-8 form (no lone surrogate): what decides, once a batch path has failed,
    between its error and the scalar path (which takes such text, as sacrebleu does)."""
    try:
        for s in candidates:
            s.encode()
        for refs in references:
            for s in refs:
                if s is not None:
                    s.encode()
    except UnicodeEncodeError:
        return False
    return True


def utf8_buffers(texts: list):
    """(UTF-8 data, int64 offsets, validity bytes or None) of a list of ``str`` or None (a null
    value), laid out as an Arrow large_string array's; None when a value is neither or does not
    encode (a lone surrogate). The offsets are an ``array.array('q')``."""
    try:  # (str.isascii is O(1): it stops at the first value that is not ASCII, or not a str)
        ascii = all(map(str.isascii, texts))
    except TypeError:
        return _utf8_buffers_checked(texts)
    if ascii:  # ASCII text is encoded in one pass, its lengths are its bytes'
        return "".join(texts).encode("ascii"), _running_sums(map(str.__len__, texts)), None
    try:  # else each value encoded at C speed (one join of mixed-width strings would cost more)
        encoded = list(map(str.encode, texts))
    except (UnicodeEncodeError, TypeError):
        return _utf8_buffers_checked(texts)
    return b"".join(encoded), _offsets(encoded), None


def _running_sums(lengths) -> array.array:
    """int64 ``array('q')`` of the running sums of ``lengths`` (non-negative ints), from 0. Built as
    ``'Q'`` and copied: an unsigned array converts Python ints without the argument parser that
    ``'q'`` goes through (a third of the cost), and the bytes of non-negative values are the same."""
    return _signed(array.array("Q", itertools.accumulate(lengths, initial=0)))


def _signed(values: array.array) -> array.array:
    """The ``array('q')`` of an ``array('Q')`` of values below 2**63 (the same bytes)."""
    out = array.array("q")
    out.frombytes(memoryview(values).cast("B"))
    return out


def _offsets(parts) -> array.array:
    """int64 offsets of ``parts`` laid end to end (their lengths' running sums, from 0)."""
    return _running_sums(map(len, parts))


def _utf8_buffers_checked(texts: list):
    """:func:`utf8_buffers` value by value: None values, and None for a value that cannot be one."""
    encoded, valid = [], None
    for i, s in enumerate(texts):
        if type(s) is str:
            try:
                encoded.append(s.encode())
            except UnicodeEncodeError:
                return None
        elif s is None:
            if valid is None:
                valid = bytearray(b"\x01") * len(texts)
            valid[i] = 0
            encoded.append(b"")
        else:
            return None
    return b"".join(encoded), _offsets(encoded), valid


class ListBuffers(namedtuple("ListBuffers", ["candidates", "references", "list_offsets"])):
    """A batch of Python lists as a kernel reads it: the candidates' and the flat references'
    (data, offsets, validity) tuples, and ``list_offsets``, the int64 offsets (an ``array.array``)
    of each row's references in them."""

    __slots__ = ()

    @property
    def n(self) -> int:
        return len(self.list_offsets) - 1


class RowLists(Sequence):
    """Rows of ``width`` values each, held as one flat list (row after row): a sequence of lists
    (``rows[i]`` is a new list) that :func:`list_buffers` reads without a list object per row,
    which would cost more than encoding the text. What the compat API makes of reference streams
    (:meth:`of_streams`); the flat list must not change while it is read."""

    __slots__ = ("flat", "width")

    def __init__(self, flat: list, width: int):
        if width < 1:
            raise ValueError("a row holds at least one value")
        self.flat, self.width = flat, width

    @classmethod
    def of_streams(cls, streams: Sequence) -> "RowLists":
        """Row i holds item i of each stream, in stream order (one or more streams of one length)."""
        if len(streams) == 1:
            return cls(list(streams[0]), 1)
        return cls(list(itertools.chain.from_iterable(zip(*streams))), len(streams))

    def __len__(self) -> int:
        return len(self.flat) // self.width

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        i = range(len(self))[i]  # (an int, possibly negative; IndexError past the end)
        return self.flat[i * self.width:(i + 1) * self.width]

    def __iter__(self):
        values = iter(self.flat)
        return map(list, zip(*[values] * self.width))

    def offsets(self) -> array.array:
        """The int64 offsets of each row's values in :attr:`flat`."""
        return _signed(array.array("Q", range(0, len(self.flat) + 1, self.width)))


_local = threading.local()


@contextlib.contextmanager
def python_rows():
    """Within it (in this thread), :func:`new_out` makes ``memoryview`` buffers instead of numpy
    arrays: :meth:`bleu_core.protocol.MetricSet.batch_stats_lists` reads them as Python ints, so that
    a plain scoring job never imports numpy."""
    before = getattr(_local, "rows", False)
    _local.rows = True
    try:
        yield
    finally:
        _local.rows = before


def new_out(n: int, width: int, per_row: bool):
    """A kernel's zeroed int64 ``out``: ``[n, width]`` (``per_row``) or ``[width]``; a numpy array,
    or within :func:`python_rows` a ``memoryview`` (format ``q``; flat when it has no rows)."""
    if not getattr(_local, "rows", False):
        import numpy as np

        return np.zeros((n, width) if per_row else width, dtype=np.int64)
    view = memoryview(bytearray(8 * width * (n if per_row else 1)))
    return view.cast("q", (n, width)) if per_row and n else view.cast("q")


@contextlib.contextmanager
def shared():
    """Within it (in this thread), the buffers of a list are made once however many kernels read it:
    :meth:`bleu_core.protocol.MetricSet.batch_stats_many` gives every metric the same lists. The lists
    are held until it ends (so their ids stay theirs) and must not change meanwhile."""
    if getattr(_local, "memo", None) is not None:
        yield
        return
    _local.memo = {}
    try:
        yield
    finally:
        _local.memo = None


def _memoized(key: tuple, keep, make):
    """``make()``, or what it gave for ``key`` (ids of the objects ``keep``) within :func:`shared`."""
    memo = getattr(_local, "memo", None)
    if memo is None:
        return make()
    hit = memo.get(key)
    if hit is None:
        hit = memo[key] = (keep, make())
    return hit[1]


def candidate_buffers(candidates, n: Optional[int] = None):
    """:func:`utf8_buffers` of a sequence of candidates (None when a value is not a str or None);
    TypeError for a single string, ValueError when there are not ``n`` of them (as
    :func:`bleu_core.kernels.arrow.to_arrow`)."""
    if isinstance(candidates, str):
        raise TypeError("candidates must be a sequence of strings, not a single string")
    if type(candidates) is list:
        cand = _memoized(("c", id(candidates)), candidates, lambda: utf8_buffers(candidates))
    else:
        cand = utf8_buffers(list(candidates))
    if cand is not None and n is not None and len(cand[1]) != n + 1:
        raise ValueError(f"{len(cand[1]) - 1} candidates but {n} reference lists")
    return cand


def list_buffers(candidates, references) -> Optional[ListBuffers]:
    """The kernels' buffers of ``candidates`` (a sequence of str) and ``references`` (one
    sequence of str or None per candidate), or None when either is an Arrow array or holds a
    value the Arrow path must judge (not a str or None: it raises the error). Raises what
    :func:`bleu_core.kernels.arrow.to_arrow` raises for a single string, a reference list that is
    not a sequence and different lengths."""
    if is_arrow(candidates) or is_arrow(references):
        return None
    cand = candidate_buffers(candidates)
    if cand is None:
        return None
    if type(references) is RowLists:  # the flat list as it is, each row's offsets a multiple of its width
        refs = references
        made = _memoized(("r", id(refs)), refs, lambda: _row_list_buffers(refs))
    else:
        refs = references if type(references) is list else list(references)
        made = _memoized(("r", id(refs)), refs, lambda: _reference_buffers(refs))
    if made is None:
        return None
    if len(cand[1]) != len(refs) + 1:
        raise ValueError(f"{len(cand[1]) - 1} candidates but {len(refs)} reference lists")
    return ListBuffers(cand, *made)


def _row_list_buffers(refs: RowLists):
    """:func:`_reference_buffers` of a :class:`RowLists`."""
    child = utf8_buffers(refs.flat)
    return None if child is None else (child, refs.offsets())


def _reference_buffers(refs: list):
    """(the flat references' buffers, the int64 offsets of each row's references in them), or None
    (see :func:`list_buffers`)."""
    if set(map(type, refs)) <= {list, tuple}:  # the usual lists: flattened at C speed
        flat = list(itertools.chain.from_iterable(refs))
    else:
        flat = []
        for i, r in enumerate(refs):
            if isinstance(r, str) or not isinstance(r, Sequence):
                raise TypeError(f"references[{i}] must be a sequence of reference strings (one list per candidate)")
            if type(r) not in (list, tuple):
                return None
            flat.extend(r)
    child = utf8_buffers(flat)
    return None if child is None else (child, _offsets(refs))


def as_lists(systems, references):
    """``systems`` (each a sequence of candidates) and ``references`` as lists where they are
    neither Arrow arrays nor strings, so that they can be read more than once (a bad row's
    systems are scored again one by one)."""
    def once(x):
        return x if is_arrow(x) or isinstance(x, (str, list, RowLists)) else list(x)

    return [once(c) for c in systems], once(references)


def stats_many_lists(kernel, options: tuple, systems: list, references: list, width: int, per_row: bool,
                     one_by_one: Callable) -> Optional[List["np.ndarray"]]:
    """:func:`bleu_core.kernels.arrow.stats_many` for systems and references that are Python lists
    (:func:`as_lists`), through :func:`list_buffers`: each system's ``int64[n, width]`` (or its
    sums), or None when they must take the Arrow path. On a bad row, ``one_by_one(candidates,
    references)`` (the metric's batch_stats) is run system by system, so that the error raised is
    the first one it meets."""
    try:
        bufs = list_buffers(systems[0], references)
        if bufs is None:
            return None
        cands = [bufs.candidates] + [candidate_buffers(c, bufs.n) for c in systems[1:]]
        if any(c is None or is_arrow(s) for c, s in zip(cands, systems)):
            return None
        outs = [new_out(bufs.n, width, per_row) for _ in cands]
        kernel([(*c, o) for c, o in zip(cands, outs)], *bufs.references, bufs.list_offsets, *options, int(per_row))
    except (ValueError, TypeError, OverflowError):
        for c in systems:
            one_by_one(c, references)
        raise
    return outs

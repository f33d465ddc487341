"""Bad input, for every metric and every surface: one base class that says where and why.

:class:`InputError` carries the file (when known), the row, the column and the reason, and its
text is one line. The batch paths do not know the file, nor where their batch starts in it:
they raise :class:`BatchInputError` with the row in the batch, and whoever knows more adds it
with :meth:`InputError.located`. The command line's own input errors (``beambleu.io.textfiles``'
``InputError``, ``beambleu.io.inputs``' ``PipelineInputError``) are subclasses with their own text.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Optional, Union


__all__ = ["BatchInputError", "InputError"]


class InputError(ValueError):
    """Bad input: ``file`` (or None), ``row`` (0-based, or None), ``column`` (a column name
    such as ``"candidate"`` or ``"references"``, a character position in a text line, or
    None), ``ref_index`` (the position in a row's reference list, or None) and ``reason``.

    Its text is :meth:`describe`'s: ``file: row R, column[ref_index]: reason``, with the parts
    that are not known left out.
    """

    def __init__(self, reason: str, *, file: Optional[str] = None, row: Optional[int] = None,
                 column: Union[str, int, None] = None, ref_index: Optional[int] = None):
        self.file, self.row, self.column, self.reason, self.ref_index = file, row, column, reason, ref_index
        super().__init__(self.describe())

    def describe(self) -> str:
        """The one-line text of the error, from its fields."""
        where = []
        if self.file is not None:
            where.append(str(self.file))
        at = []
        if self.row is not None:
            at.append(f"row {self.row}")
        if self.column is not None:
            at.append(f"{self.column}" if self.ref_index is None else f"{self.column}[{self.ref_index}]")
        if at:
            where.append(", ".join(at))
        return ": ".join(where + [self.reason])

    def located(self, file: Optional[str] = None, row_offset: int = 0) -> "InputError":
        """A copy (same class, same fields) with ``file`` set (when given) and ``row_offset``
        added to the row (when there is one): the error of a batch placed in its file. Its text
        is :meth:`describe`'s of the new fields; this error is left as it is."""
        new = type(self).__new__(type(self))
        new.__dict__.update(self.__dict__)
        if file is not None:
            new.file = file
        if row_offset and new.row is not None:
            new.row = new.row + row_offset
        new.args = (new.describe(),)
        return new


class BatchInputError(InputError):
    """A row the statistics cannot be computed for.

    ``row`` is the index in the batch, ``column`` is ``"candidate"`` or ``"references"``,
    ``ref_index`` the position in that row's reference list (or ``None``).
    """

    def __init__(self, row: int, column: str, reason: str, ref_index: Optional[int] = None):
        super().__init__(reason, row=row, column=column, ref_index=ref_index)

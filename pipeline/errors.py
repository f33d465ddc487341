"""Exceptions the command line turns into one printed line.

* :class:`UsageError`: the command line asks for something beambleu will not do (exit 2);
* :class:`OutputError`: the outputs could not be written, e.g. on a full disk (exit 1);
* bad input is a :class:`bleu_core.errors.InputError`: ``textfiles.InputError`` /
  ``inputs.PipelineInputError`` / ``bleu_core.errors.BatchInputError`` (exit 1).

And how bad usage is said: :class:`Parser` (argparse, one line and exit 2, no abbreviations) and
the argparse value types the commands share (each refuses a bad value with argparse's one line).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import threading

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Callable

__all__ = ["OutputError", "Parser", "Terminated", "Undecided", "UsageError", "deciding_alone", "int_at_least",
           "is_deciding_alone", "positive_seconds", "terminate_as_interrupt"]


class UsageError(ValueError):
    """Bad usage, found after argparse: one line on stderr, exit code 2."""


class OutputError(RuntimeError):
    """The outputs could not be written (a full disk); nothing was: one line on stderr, exit 1."""


class Terminated(KeyboardInterrupt):
    """SIGTERM, handled as Ctrl-C is (clean up, then exit 143 instead of 130)."""

    exit_code = 143


@contextlib.contextmanager
def terminate_as_interrupt():
    """While in force (main thread only), SIGTERM raises :class:`Terminated`, so that the
    cleanup that runs for Ctrl-C runs for it too."""
    import signal  # (here: ``score``, which installs no handler, need not import it)

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise Terminated()

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _columns() -> int:
    """The terminal's width as :func:`shutil.get_terminal_size` gives it (``COLUMNS`` first), without
    importing shutil."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class Undecided(Exception):
    """Raised by a :class:`Parser` where it would print (an error, ``--help``) while
    :func:`deciding_alone` is in force: this parser cannot decide the command line alone."""


#: set while a parser tries a command line that a fuller parser decides if it cannot (:func:`deciding_alone`)
_alone = False


@contextlib.contextmanager
def deciding_alone():
    """While in force, a :class:`Parser` raises :class:`Undecided` instead of printing an error or
    its help (and exiting): ``beambleu score`` first parses its command line with the built-in
    metrics' options alone, without reading the installed distributions' entry points, and lets
    the parser with the plugins decide whatever that one cannot."""
    global _alone
    _alone = True
    try:
        yield
    finally:
        _alone = False


def is_deciding_alone() -> bool:
    """Whether :func:`deciding_alone` is in force."""
    return _alone


class Parser(argparse.ArgumentParser):
    """``argparse`` without abbreviations: ``allow_abbrev=False`` (``--lower`` is not
    ``--lowercase``) and, which that flag does not do in Python 3.11, no prefix matching of
    single-dash options either (``-l`` is not ``-lc``, ``-t`` not ``-tok``: sacrebleu's
    ``-l en-de`` must not mean lowercased BLEU). A one-letter option still takes an attached
    value (``-sexp``) and one-letter flags still combine (``-bq``). Subparsers are of this class
    too."""

    def __init__(self, *args, **kwargs):
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def _get_formatter(self):
        # argparse's formatter imports shutil (and with it bz2 and lzma) for the terminal's width on
        # every parser and argument (it validates metavars with one): `score`'s start-up. The same
        # width, found as shutil.get_terminal_size finds it: $COLUMNS, else the terminal's, else 80
        return self.formatter_class(prog=self.prog, width=_columns() - 2)

    def error(self, message):
        """Bad usage is one line (the house rule; argparse would print the usage block first) and
        exit code 2; ``--help`` shows the usage."""
        if _alone:
            raise Undecided(message)
        self.exit(2, f"{self.prog}: error: {message} (--help shows the usage)\n")

    def print_help(self, file=None):
        if _alone:  # the help lists every metric's options, the plugins' too
            raise Undecided("--help")
        super().print_help(file)

    def _get_option_tuples(self, option_string):
        found = super()._get_option_tuples(option_string)
        if option_string[1:2] in self.prefix_chars:  # --long: allow_abbrev=False already matched nothing
            return found
        return [t for t in found if t[1] == option_string[:2]]  # -x with an attached value only


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

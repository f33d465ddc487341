"""Exceptions the command line turns into one printed line.

* :class:`UsageError`: the command line asks for something beambleu will not do (exit 2);
* :class:`OutputError`: the outputs could not be written, e.g. on a full disk (exit 1);
* bad input is a :class:`bleu_core.errors.InputError`: ``textfiles.InputError`` /
  ``inputs.PipelineInputError`` / ``bleu_core.errors.BatchInputError`` (exit 1).
"""

import contextlib
import signal
import threading


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

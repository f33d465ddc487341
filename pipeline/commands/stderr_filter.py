"""Keep Beam's log chatter (and its worker processes') off the terminal during ``beambleu run``.

File descriptor 2 is pointed at a pipe for the duration of the job, so subprocess workers,
which inherit it, are covered too. Lines starting with ``beambleu:`` (progress, counters,
errors) go to the real stderr; everything else goes to a log file, which is kept and named
when something unexpected fails.

Once the run is over, Beam's own loggers are quieted (what they say at exit, such as stopping a
job server Beam started, would land on the terminal after the result); the next run gives them
their level back.

The progress bar is not a line: it is redrawn in place (``\r``) on the user's terminal, so it does
not go through the pipe (whose reader passes whole lines) but to the real stderr directly, through
:func:`terminal`. The :class:`Terminal` keeps the bar below everything else: a line the filter
passes, or :func:`emergency_exit`'s, first clears the bar, then the bar is drawn again under it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import tempfile
import threading
import traceback
from typing import Optional

__all__ = ["StderrFilter", "Terminal", "emergency_exit", "quiet_logging", "terminal"]


class _DropAll(logging.Filter):
    def filter(self, record):
        return False


@contextlib.contextmanager
def quiet_logging():
    """Nothing logged in the block reaches stderr, and the logging set-up is left as it was: for
    importing Apache Beam, whose modules log at import time (without the gcp extra, "apitools not
    found, and bigquery client libraries are not available..." on the root logger). The root
    logger gets a NullHandler for the block, so that a module-level ``logging.warning`` does not
    call ``logging.basicConfig`` (which would leave a stderr handler behind), and a filter dropping
    what is logged on it; records of other loggers propagate to the NullHandler only (or to the
    handlers a program set up itself)."""
    root = logging.getLogger()
    handler, drop = logging.NullHandler(), _DropAll()
    root.addHandler(handler)
    root.addFilter(drop)
    try:
        yield
    finally:
        root.removeFilter(drop)
        root.removeHandler(handler)


#: the filter in force, for :func:`emergency_exit` and :func:`terminal`
_active = None

#: erase from the cursor to the end of the line
_ERASE = "\x1b[K"


class Terminal:
    """The user's stderr as a bar and lines: :meth:`status` (re)draws one line in place (a
    terminal only), :meth:`line` writes a line above it, :meth:`end_status` leaves the bar as it
    is and moves below it, :meth:`clear_status` erases it. Thread-safe; ``stream`` is a text
    stream or a binary one (the filter's copy of the real stderr)."""

    def __init__(self, stream, isatty: bool):
        self.stream, self.isatty = stream, isatty
        self._binary = not hasattr(stream, "encoding")
        self._lock = threading.RLock()
        self._status = ""

    def _write(self, text) -> None:
        if isinstance(text, bytes) != self._binary:
            text = text.encode("utf-8", "replace") if self._binary else text.decode("utf-8", "replace")
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed stream (the filter is gone): nothing to show it on
            pass

    def width(self) -> int:
        """The terminal's width in columns (80 when it cannot be told, or says 0)."""
        try:
            return os.get_terminal_size(self.stream.fileno()).columns or 80
        except (OSError, ValueError, AttributeError):
            return 80

    def status(self, text: str) -> None:
        """Draw ``text`` in place of the bar (cut to the terminal's width, so that it never wraps)."""
        text = text[:max(10, self.width() - 1)]
        with self._lock:
            self._status = text
            self._write("\r" + text + _ERASE)

    def clear_status(self) -> None:
        with self._lock:
            if self._status:
                self._status = ""
                self._write("\r" + _ERASE)

    def end_status(self) -> None:
        """Keep the bar as drawn, as a line of its own."""
        with self._lock:
            if self._status:
                self._status = ""
                self._write("\n")

    def line(self, text: str) -> None:
        """One line (``text`` without its newline), above the bar."""
        self.raw_line(text + "\n")

    def raw_line(self, text) -> None:
        """``text`` (str or bytes) as it is, newline included, above the bar."""
        with self._lock:
            status = self._status
            if status:
                self._write("\r" + _ERASE)
            self._write(text)
            if status:
                self._write("\r" + status + _ERASE)


def terminal() -> Terminal:
    """Where beambleu's progress goes: the real stderr behind the filter in force (when
    ``sys.stderr`` is still the process's file descriptor 2), else ``sys.stderr`` itself (e.g.
    ``--verbose``, or a caller that redirected it)."""
    filt = _active
    try:
        is_fd2 = sys.stderr.fileno() == 2
    except (AttributeError, OSError, ValueError):
        is_fd2 = False
    if filt is not None and filt.enabled and getattr(filt, "terminal", None) is not None and is_fd2:
        return filt.terminal
    try:
        tty = sys.stderr.isatty()
    except (AttributeError, OSError, ValueError):
        tty = False
    return Terminal(sys.stderr, tty)


def emergency_exit(code: int, message: str) -> None:
    """Print one line on the real stderr, remove the log file, and end the process now
    (``os._exit``: no unwinding through a runner that would wait for its workers)."""
    filt = _active
    fd = filt._saved if filt is not None and filt.enabled and getattr(filt, "_saved", None) is not None else 2
    term = getattr(filt, "terminal", None) if filt is not None else None
    prefix = "\r" + _ERASE if term is not None and term._status else ""  # the bar, if one is drawn, goes
    try:
        os.write(fd, (prefix + message + "\n").encode("utf-8", "replace"))
    except OSError:
        pass
    if filt is not None:
        filt.discard_log()
    os._exit(code)


#: the level of Beam's logger before a run quieted it (given back when the next run starts)
_BEAM_LEVEL: dict = {}


def _beam_logger() -> logging.Logger:
    return logging.getLogger("apache_beam")


#: the line :meth:`StderrFilter.__exit__` writes last into the pipe, where the pump stops reading
_END = b"\0beambleu: end of the run's standard error\n"


class StderrFilter:
    def __init__(self, enabled: bool = True):
        self.enabled = enabled
        self.log_path = None
        self.terminal: Optional[Terminal] = None

    def __enter__(self):
        global _active
        _active = self
        if not self.enabled:
            return self
        _beam_logger().setLevel(_BEAM_LEVEL.pop("level", _beam_logger().level))  # (quieted by the last run)
        sys.stderr.flush()
        self._saved = os.dup(2)
        fd, self.log_path = tempfile.mkstemp(prefix="beambleu-", suffix=".log")
        self._log = os.fdopen(fd, "wb")
        r, w = os.pipe()
        os.dup2(w, 2)
        os.close(w)
        self._reader = os.fdopen(r, "rb")
        # opened here, not in the thread: __exit__ may close _saved before the thread runs
        self._out = os.fdopen(os.dup(self._saved), "wb", buffering=0)
        self.terminal = Terminal(self._out, os.isatty(self._saved))
        self._thread = threading.Thread(target=self._pump, daemon=True)
        self._thread.start()
        threading.excepthook = self._thread_died
        return self

    def _thread_died(self, args) -> None:
        """A background thread's uncaught exception goes to the log, also once the job is over: by
        then the terminal's stderr is back, and a traceback there would follow the job's one line.
        (gRPC's connectivity poller raises "Cannot monitor channel state: Channel closed!" up to
        0.2 s after Beam closes a channel, e.g. when a job server fails to start.) When the log was
        already removed, the job ended as it says and the traceback is dropped."""
        if args.exc_type is SystemExit:
            return
        name = args.thread.name if args.thread is not None else "?"
        text = f"Exception in thread {name}:\n" + "".join(
            traceback.format_exception(args.exc_type, args.exc_value, args.exc_traceback))
        if _active is self:  # fd 2 is the pipe to the log
            sys.stderr.write(text)
            sys.stderr.flush()
            return
        if self.log_path and os.path.exists(self.log_path):
            try:
                with open(self.log_path, "a", encoding="utf-8", errors="replace") as log:
                    log.write(text)
            except OSError:
                pass

    def _pump(self):
        term = self.terminal
        for line in self._reader:
            if line == _END:
                break
            if line.startswith(b"beambleu:"):
                term.raw_line(line)
            else:
                self._log.write(line)
        term.end_status()  # (a bar left drawn by a run that ended without its last line)
        self._out.close()

    def __exit__(self, exc_type, exc, tb):
        global _active
        _active = None
        if not self.enabled:
            return False
        sys.stderr.flush()
        # the end of what this process wrote: a process started during the run may hold the pipe's
        # write end open after it (multiprocessing's resource tracker, which a local dask cluster
        # starts, lives until this process exits), so the pipe's end of file cannot be waited for
        try:
            os.write(2, _END)
        except OSError:  # pragma: no cover - fd 2 is our pipe, whose reader is alive
            pass
        os.dup2(self._saved, 2)  # closes the pipe's last write end held by us
        saved, self._saved = self._saved, None
        os.close(saved)
        self._thread.join(timeout=10)
        if not self._thread.is_alive():  # (else still reading: closing its file would wait for its lock)
            self._reader.close()
            self._log.close()
        # what Beam logs after the run (at exit: stopping the job server it started, "Really
        # destroying service ...") has no log to go to any more, and is not for the terminal
        beam = _beam_logger()
        _BEAM_LEVEL.setdefault("level", beam.level)
        beam.setLevel(logging.CRITICAL)
        return False

    def keep_log(self) -> str:
        return self.log_path or ""

    def discard_log(self) -> None:
        if self.log_path and os.path.exists(self.log_path):
            os.remove(self.log_path)

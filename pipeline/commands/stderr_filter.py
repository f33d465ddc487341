"""Keep Beam's log chatter (and its worker processes') off the terminal during ``beambleu run``.

File descriptor 2 is pointed at a pipe for the duration of the job, so subprocess workers,
which inherit it, are covered too. Lines starting with ``beambleu:`` (progress, counters,
errors) go to the real stderr; everything else goes to a log file, which is kept and named
when something unexpected fails.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import tempfile
import threading
import traceback

__all__ = ["StderrFilter", "emergency_exit", "quiet_logging"]


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


#: the filter in force, for :func:`emergency_exit`
_active = None


def emergency_exit(code: int, message: str) -> None:
    """Print one line on the real stderr, remove the log file, and end the process now
    (``os._exit``: no unwinding through a runner that would wait for its workers)."""
    filt = _active
    fd = filt._saved if filt is not None and filt.enabled and getattr(filt, "_saved", None) is not None else 2
    try:
        os.write(fd, (message + "\n").encode("utf-8", "replace"))
    except OSError:
        pass
    if filt is not None:
        filt.discard_log()
    os._exit(code)


class StderrFilter:
    def __init__(self, enabled: bool = True):
        self.enabled = enabled
        self.log_path = None

    def __enter__(self):
        global _active
        _active = self
        if not self.enabled:
            return self
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
        out = self._out
        for line in self._reader:
            if line.startswith(b"beambleu:"):
                out.write(line)
            else:
                self._log.write(line)
        out.close()

    def __exit__(self, exc_type, exc, tb):
        global _active
        _active = None
        if not self.enabled:
            return False
        sys.stderr.flush()
        os.dup2(self._saved, 2)  # closes the pipe's last write end held by us
        saved, self._saved = self._saved, None
        os.close(saved)
        self._thread.join(timeout=10)
        self._reader.close()
        self._log.close()
        return False

    def keep_log(self) -> str:
        return self.log_path or ""

    def discard_log(self) -> None:
        if self.log_path and os.path.exists(self.log_path):
            os.remove(self.log_path)

"""Beam's import-time chatter, dropped for whoever uses beambleu as a library.

Without the ``gcp`` extra, importing ``apache_beam`` logs ``apitools not found, and bigquery client
libraries are not available despite the import not raising an ImportError.`` on the root logger
(``apache_beam/io/gcp/internal/clients/bigquery/__init__.py``), so every program that imports
``beambleu.transforms`` (or ``beambleu.Score``) would print it. :func:`drop_import_chatter`, called
when the package :mod:`beambleu.beam` is imported (before any of its modules imports Beam), puts a
filter on the root logger that drops that one record, and nothing else: the
program's own logging, and Beam's other messages, are left as they are. The command line keeps all
of Beam's import-time logging off the terminal by itself
(:func:`beambleu.commands.stderr_filter.quiet_logging`).
"""

from __future__ import annotations

import logging

__all__ = ["BeamImportChatter", "CHATTER", "drop_import_chatter"]

#: how the dropped messages start (on the root logger)
CHATTER = ("apitools not found, and bigquery client libraries are not available",)


class BeamImportChatter(logging.Filter):
    """Drops the root logger's records whose message starts with one of :data:`CHATTER`."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name != "root" or not isinstance(record.msg, str):
            return True
        return not record.msg.startswith(CHATTER)


def drop_import_chatter() -> None:
    """Put a :class:`BeamImportChatter` on the root logger (once)."""
    root = logging.getLogger()
    if not any(isinstance(f, BeamImportChatter) for f in root.filters):
        root.addFilter(BeamImportChatter())

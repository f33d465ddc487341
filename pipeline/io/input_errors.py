"""Bad input of ``beambleu run``, found while planning or while the pipeline runs:
:class:`PipelineInputError`, whose text carries :data:`ERROR_MARK` so that the command line finds
the one-line message inside whatever a runner wraps a worker's exception in. The planning and
reading modules (``inputs``, ``listing``, ``formats``) raise it; ``beambleu.io.inputs`` exports it
too (its home before the text formats came)."""

from __future__ import annotations

import re

from bleu_core.errors import InputError

__all__ = ["ERROR_MARK", "PipelineInputError"]

ERROR_MARK = "beambleu-input-error: "


class PipelineInputError(InputError):
    """Bad input found while planning or while the pipeline runs.

    Its text starts with a marker, so that the command line can find the one-line message
    inside whatever a runner wraps a worker's exception in. A :class:`bleu_core.errors.InputError`
    whose ``reason`` is that message (``message``, which names the file, row and column itself);
    its other fields are None.
    """

    def __init__(self, message: str):
        # runners re-raise a worker's exception as type(exc)(text + context): keep one marker,
        # and drop the context Beam appends (" [while running 'Step']")
        while message.startswith(ERROR_MARK):
            message = message[len(ERROR_MARK):]
        message = re.sub(r" \[while running '[^']*'\]$", "", message)
        self.message = message
        super().__init__(message)

    def describe(self) -> str:
        return ERROR_MARK + self.reason

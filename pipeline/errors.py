"""Exceptions the command line turns into one printed line.

* :class:`UsageError`: the command line asks for something beambleu will not do (exit 2);
* bad input is ``textfiles.InputError`` / ``inputs.PipelineInputError`` (exit 1).
"""


class UsageError(ValueError):
    """Bad usage, found after argparse: one line on stderr, exit code 2."""

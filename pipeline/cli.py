"""The ``beambleu`` command line.

``beambleu score`` works on text files and never imports Apache Beam; ``beambleu run`` is the
Beam pipeline over Parquet shards; ``beambleu convert`` makes such shards from text files.

Every error is one line on stderr and an exit code (see :data:`EPILOG`): the command line is
parsed completely before anything runs (for ``run`` also before Beam's log is diverted, so
that argparse's message is seen), and an unexpected exception is shown as one line too,
unless ``BEAMBLEU_DEBUG`` is set.
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import sys
from importlib import import_module

from .errors import OutputError, Parser, Undecided, UsageError, deciding_alone

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (start-up)
if TYPE_CHECKING:
    from typing import List, Optional, Tuple

# Everything that imports bleu_core (and so numpy) is imported inside the functions below: `score`
# sets OPENBLAS_NUM_THREADS first (_one_blas_thread), which works only before numpy is imported.

__all__ = ["COMMANDS", "EPILOG", "main", "make_parser"]

EPILOG = ("Exit codes: 0 done; 1 bad input (one line naming the file, line or row, and column) or an "
          "unexpected error; 2 bad usage (options, output paths, a missing extra); 130 interrupted (SIGINT); "
          "143 terminated (SIGTERM); 3 a --fail-* gate of report failed. Nothing is written unless everything is. An unexpected error is shown as one "
          "line: set BEAMBLEU_DEBUG=1 to see its traceback.")


#: the commands, in the order of ``beambleu --help``, and their one-line help
COMMANDS = {
    "score": "sacrebleu's command line: score system outputs against references or a test set",
    "run": "score Parquet shards with the Apache Beam pipeline, per group too",
    "report": "show a result of `beambleu run` or `score` as tables (text or LaTeX), plotted, compared, gated",
    "convert": "turn sacrebleu-style text files into Parquet shards for `beambleu run`",
}


def make_parser(with_run: bool = True, only: Optional[str] = None) -> argparse.ArgumentParser:
    """The ``beambleu`` parser. ``with_run``: build ``run``'s options (imports Apache Beam);
    ``only``: build the options of that command alone, the others being their names and help
    lines (what ``beambleu --help`` shows), so that ``beambleu score`` imports neither the
    ``report`` nor the ``convert`` command (nor what they import)."""
    from bleu_core.version import __version__

    parser = Parser(
        prog="beambleu",
        description="Corpus BLEU, chrF, chrF++ and TER exactly as sacrebleu 2.6.0 computes them, from two text files "
                    "to billions of pairs.",
        epilog=EPILOG,
    )
    parser.add_argument("--version", "-V", action="version", version=f"beambleu {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, help_line in COMMANDS.items():
        if (only is not None and name != only) or (name == "run" and not with_run):
            sub.add_parser(name, help=help_line, add_help=False)
            continue
        _BUILDERS[name](sub, help_line)
    return parser


def _build_score(sub, help_line: str) -> None:
    from .commands import score as score_command

    score_parser = sub.add_parser(
        "score", help=help_line,
        description="sacrebleu 2.6.0's command line, computed by beambleu: score one or several system outputs "
                    "against reference files (or a sacrebleu test set, -t/-l), with sacrebleu's flags and outputs; "
                    "--long options may be abbreviated as in sacrebleu.",
        epilog=EPILOG)
    score_parser.__class__ = score_command.ScoreParser  # sacrebleu's abbreviations (the other commands take none)
    score_command.build_parser(score_parser)


def _build_run(sub, help_line: str) -> None:
    from .commands.stderr_filter import quiet_logging

    with quiet_logging():  # what Beam logs when it is imported is not beambleu's to show
        import_module("apache_beam")
    from .commands import run as run_command  # imports Apache Beam: only `run` loads it

    run_command.build_parser(sub.add_parser(
        "run", help=help_line,
        description="Score Parquet shards of candidate/reference pairs with Apache Beam, for the corpus and "
                    "per group, in one pass."))


def _build_report(sub, help_line: str) -> None:
    from .commands import report as report_command

    report_command.build_parser(sub.add_parser(
        "report", help=help_line,
        description="Show a result of `beambleu run` or the JSON of `beambleu score` as tables (text or LaTeX): "
                    "systems x groups, scores with their 95% intervals and significance marks; --plot draws them, "
                    "--compare and --fail-* compare and gate.", epilog=EPILOG))


def _build_convert(sub, help_line: str) -> None:
    from .commands import convert as convert_command

    convert_command.build_parser(sub.add_parser(
        "convert", help=help_line,
        description="Turn a system output and its reference files into Parquet shards for `beambleu run`.",
        epilog=EPILOG))


_BUILDERS = {"score": _build_score, "run": _build_run, "report": _build_report, "convert": _build_convert}


def _import_lean_beam(argv: List[str]) -> None:
    """Apache Beam for the `beambleu run` process, without the client libraries its job does not use
    (:mod:`beambleu.beam.lean`); imported before ``_build_run`` asks for it, and as quietly."""
    from .beam.lean import import_beam
    from .commands.stderr_filter import quiet_logging

    with quiet_logging():
        import_beam(argv)


def _one_blas_thread(argv: List[str]) -> None:
    """``score``'s matrix products (the paired tests' sums) are small, and ``run``'s work is integer
    work that never calls BLAS: OpenBLAS's extra threads only spin beside them (after numpy's
    import alone, 0.1-0.2 CPU-s on two cores; ``score``'s products: the same wall time, up to half
    again the CPU time). Unless the user set it, ``score`` and ``run`` (and the local workers it
    starts, which inherit it) ask for one thread; this works only before numpy is first imported,
    which the ``beambleu`` command has not done yet when it gets here."""
    if argv[:1] == ["score"] or _is_run(argv):
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def _is_run(argv: List[str]) -> bool:
    return "run" in argv[:1] or (len(argv) > 1 and argv[0].startswith("-") and "run" in argv)


def main(argv: Optional[List[str]] = None) -> int:
    command = argv is None  # the `beambleu` command's own process (not main([...]) called by a program)
    argv = sys.argv[1:] if argv is None else list(argv)
    _one_blas_thread(argv)
    # `run` needs Apache Beam for its options; the other commands must not import it
    is_run = _is_run(argv)
    # `run`'s imports (Beam's above all) make some 130,000 objects that live as long as the process:
    # the cyclic garbage collector is off while they are made, and they go to its permanent
    # generation afterwards, so that no collection walks them again (7% of a small run's instructions;
    # the few cycles the imports leave as garbage, argparse's among them, stay: a bounded cost, once)
    own_run = is_run and command  # the `beambleu run` command's own process
    if own_run:
        gc.disable()
    parsed = _parse_score_alone(argv) if argv[:1] == ["score"] else None
    try:
        if own_run:
            _import_lean_beam(argv)
        # `beambleu COMMAND ...` builds that command's options only (`beambleu --help`: every command's line)
        parser = None if parsed else make_parser(with_run=is_run,
                                                 only=argv[0] if argv[:1] and argv[0] in COMMANDS else None)
    except ImportError as exc:
        if not is_run:
            raise
        print(f"beambleu: error: `beambleu run` needs Apache Beam: pip install 'beambleu[beam]' ({exc})",
              file=sys.stderr)
        return 2
    finally:
        if own_run:
            gc.freeze()
            gc.enable()
    args, extra = parsed or parser.parse_known_args(argv)  # argparse's errors: exit 2, on the real stderr
    # what `run` does not know goes to Beam, whose pipeline options are all --long ones
    unknown = extra if args.command != "run" else [x for x in extra if re.match(r"-[^-\d]", x)]
    if unknown:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    if args.command != "run":
        return _execute(args, extra, None)[0]
    from .commands.stderr_filter import StderrFilter  # `run` only (it imports logging, threads, tempfile)

    filt = StderrFilter(enabled=not args.verbose)
    with filt:
        rc, unexpected = _execute(args, extra, filt)
    if not unexpected:  # else the message names the log
        filt.discard_log()
    return rc


def _parse_score_alone(argv: List[str]):
    """``beambleu score``'s command line parsed with the built-in metrics' options alone, so that
    scoring with them reads no installed distribution's entry points (``importlib.metadata`` and
    every ``entry_points.txt`` on ``sys.path``: a few ms of start-up, more with many packages
    installed): (args, []), or None where the plugins could change the answer. That is every
    usage error (an unknown metric or flag may be a plugin's), ``--help`` (it lists the plugins'
    options) and a --long option that is not a built-in one exactly, unless it abbreviates one of
    sacrebleu's and has no hyphen after its ``--`` (``--tok``, ``--metric``: a plugin's flags are
    ``--<id>-NAME``, so one could be the option itself or make the abbreviation ambiguous); there
    the parser with the plugins decides, and says what it always said, the warnings of the plugins
    it leaves out included."""
    from .commands.metric_options import builtins_only  # (imports bleu_core: after _one_blas_thread)

    with builtins_only():
        parser = make_parser(with_run=False, only="score")
    try:
        with deciding_alone():
            args, extra = parser.parse_known_args(argv)
    except Undecided:
        return None
    return None if extra else (args, extra)


def _dispatch(args, extra) -> int:
    # each command's module only: `score` loads neither `report`'s nor `convert`'s (nor Apache Beam)
    if args.command == "run":
        return import_module(".commands.run", __package__).run(args, extra)
    return import_module(f".commands.{args.command}", __package__).run(args)


def _execute(args, extra, filt) -> Tuple[int, bool]:
    """Run the command: (exit code, whether it failed unexpectedly). Every exception it raises
    becomes one line on stderr; for ``run``, an unexpected failure names Beam's log."""

    from bleu_core.errors import BatchInputError
    from bleu_core.tokenizers.tokenizer_spm import ModelError

    from .io.textfiles import InputError

    input_errors: tuple = (InputError, BatchInputError, ModelError, OutputError)
    if args.command == "run":
        from .io.inputs import PipelineInputError  # pyarrow.parquet and the group keys: not loaded by `score`

        input_errors += (PipelineInputError,)
    try:
        return _dispatch(args, extra), False
    except UsageError as exc:  # (an UnsafeOutput, an output that may not be replaced, is one too)
        _say(str(exc))
        return 2, False
    except input_errors as exc:
        _say(getattr(exc, "message", str(exc)))
        return 1, False
    except KeyboardInterrupt as exc:  # SIGINT, or SIGTERM where a command turns it into Terminated
        return getattr(exc, "exit_code", 130), False
    except BrokenPipeError:  # pragma: no cover - e.g. `| head`
        return 0, False
    except Exception as exc:  # noqa: BLE001 - a bug or the environment: one line, and how to see more
        if os.environ.get("BEAMBLEU_DEBUG"):
            raise
        lines = [ln.strip() for ln in str(exc).strip().splitlines() if ln.strip()]
        if args.command == "run":
            first = lines[0] if lines else type(exc).__name__
            if first.endswith(":") and len(lines) > 1:  # "Pipeline has validations errors:" and its list
                first = " ".join(lines[:4])
            where = f"; Beam's log: {filt.keep_log()}" if filt is not None and filt.enabled else ""
            _say(f"the job failed: {first}{where} (BEAMBLEU_DEBUG=1 shows the traceback)")
        else:
            what = f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__
            _say(f"unexpected error: {what} (BEAMBLEU_DEBUG=1 shows the traceback)")
        return 1, True


def _say(message: str) -> None:
    print(f"beambleu: error: {message}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())

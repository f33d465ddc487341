"""The ``beambleu`` command line.

``beambleu score`` works on text files and never imports Apache Beam; ``beambleu run`` is the
Beam pipeline over Parquet shards; ``beambleu convert`` makes such shards from text files.
"""

from __future__ import annotations

import argparse
import sys


def _version() -> str:
    from bleu_core import __version__

    return __version__


def make_parser(with_run: bool = True) -> argparse.ArgumentParser:
    from . import convert_command, score_command

    parser = argparse.ArgumentParser(
        prog="beambleu",
        description="Corpus BLEU exactly as sacrebleu 2.6.0 computes it, from two text files to billions of pairs.",
    )
    parser.add_argument("--version", "-V", action="version", version=f"beambleu {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    score_command.build_parser(sub.add_parser(
        "score", help="score a system output file against reference files (like `sacrebleu REF -i HYP -m bleu`)",
        description="Score a system output against one or more references, like `sacrebleu REF... -i HYP -m bleu`."))
    if with_run:
        from . import run_command

        run_command.build_parser(sub.add_parser(
            "run", help="score Parquet shards with the Apache Beam pipeline, per group too",
            description="Score Parquet shards of candidate/reference pairs with Apache Beam, for the corpus and "
                        "per group, in one pass."))
    else:
        sub.add_parser("run", help="score Parquet shards with the Apache Beam pipeline, per group too",
                       add_help=False)
    from . import report_command

    report_command.build_parser(sub.add_parser(
        "report", help="show a `beambleu run` result as a table (systems x groups), optionally plotted",
        description="Show the result JSON of `beambleu run` as a table: systems x groups, scores with their 95% "
                    "intervals and significance marks; --plot draws them."))
    convert_command.build_parser(sub.add_parser(
        "convert", help="turn sacrebleu-style text files into Parquet shards for `beambleu run`",
        description="Turn a system output and its reference files into Parquet shards for `beambleu run`."))
    return parser


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    # `run` needs Apache Beam for its options; the other commands must not import it
    is_run = "run" in argv[:1] or (len(argv) > 1 and argv[0].startswith("-") and "run" in argv)
    if is_run:
        from .stderr_filter import StderrFilter

        filt = StderrFilter(enabled="--verbose" not in argv)
        with filt:
            rc = _main(argv, True, filt)
        if rc in (0, 1, 2):
            filt.discard_log()
        return rc
    return _main(argv, False, None)


def _main(argv, is_run, filt) -> int:
    from bleu_core.batch import BatchInputError

    from .textfiles import InputError

    try:
        parser = make_parser(with_run=is_run)
    except ImportError as exc:
        if not is_run:
            raise
        print(f"beambleu: error: `beambleu run` needs Apache Beam: pip install 'beambleu[beam]' ({exc})",
              file=sys.stderr)
        return 2
    args, extra = parser.parse_known_args(argv)
    if extra and args.command != "run":
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        if args.command == "score":
            from . import score_command

            return score_command.run(args)
        if args.command == "convert":
            from . import convert_command

            return convert_command.run(args)
        if args.command == "report":
            from . import report_command

            return report_command.run(args)
        if args.command == "run":
            return _run(args, extra, filt)
        parser.error(f"unknown command {args.command!r}")  # pragma: no cover
    except (InputError, BatchInputError) as exc:
        print(f"beambleu: error: {exc}", file=sys.stderr)
        return 1
    except (ValueError, TypeError, RuntimeError, FileExistsError) as exc:
        print(f"beambleu: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # pragma: no cover
        return 130
    except BrokenPipeError:  # pragma: no cover - e.g. `| head`
        return 0


def _run(args, extra, filt) -> int:
    from . import run_command
    from .inputs import PipelineInputError

    from .errors import UsageError

    try:
        return run_command.run(args, extra)
    except UsageError as exc:  # checked before the job: bad usage, one line
        print(f"beambleu: error: {exc}", file=sys.stderr)
        return 2
    except PipelineInputError as exc:
        print(f"beambleu: error: {exc.message}", file=sys.stderr)
        return 1
    except Exception as exc:  # unexpected: keep Beam's log and say where it is
        lines = [ln.strip() for ln in str(exc).strip().splitlines() if ln.strip()] or [type(exc).__name__]
        first = lines[0]
        if first.endswith(":") and len(lines) > 1:  # "Pipeline has validations errors:" and its list
            first = " ".join(lines[:4])
        where = f" (Beam's log: {filt.keep_log()})" if filt is not None and filt.enabled else ""
        print(f"beambleu: error: the job failed: {first}{where}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())

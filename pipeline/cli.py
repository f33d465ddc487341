"""The ``beambleu`` command line.

``beambleu score`` works on text files and never imports Apache Beam.
"""

from __future__ import annotations

import argparse
import sys


def _version() -> str:
    from bleu_core import __version__

    return __version__


def make_parser() -> argparse.ArgumentParser:
    from . import score_command

    parser = argparse.ArgumentParser(
        prog="beambleu",
        description="Corpus BLEU exactly as sacrebleu 2.6.0 computes it, from two text files to billions of pairs.",
    )
    parser.add_argument("--version", "-V", action="version", version=f"beambleu {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    score_command.build_parser(
        sub.add_parser(
            "score",
            help="score a system output file against reference files (like `sacrebleu REF -i HYP -m bleu`)",
            description="Score a system output against one or more references, like `sacrebleu REF... -i HYP -m bleu`.",
        )
    )
    return parser


def main(argv=None) -> int:
    from bleu_core.batch import BatchInputError

    from .textfiles import InputError

    parser = make_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "score":
            from . import score_command

            return score_command.run(args)
        parser.error(f"unknown command {args.command!r}")  # pragma: no cover
    except (InputError, BatchInputError) as exc:
        print(f"beambleu: error: {exc}", file=sys.stderr)
        return 1
    except (ValueError, TypeError, RuntimeError) as exc:
        print(f"beambleu: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # pragma: no cover
        return 130
    except BrokenPipeError:  # pragma: no cover - e.g. `| head`
        return 0


if __name__ == "__main__":
    sys.exit(main())

"""``beambleu score REF [REF ...] -i HYP``: a drop-in for ``sacrebleu REF... -i HYP -m bleu``.

Imports ``bleu_core`` only (never Apache Beam), streams the files in chunks, and prints
nothing until every line has been scored, so an error never leaves partial output.
"""

from __future__ import annotations

import argparse
import json
import sys

from .textfiles import InputError, check_same_length, iter_pairs


def add_bleu_arguments(p: argparse.ArgumentParser) -> None:
    """The BLEU options, with sacrebleu's flag names and defaults (shared by score and run)."""
    from bleu_core.score import SMOOTH_DEFAULTS
    from bleu_core.tokenizers import TOKENIZERS

    g = p.add_argument_group("BLEU options (as in sacrebleu)")
    g.add_argument("--tokenize", "-tok", choices=TOKENIZERS, default="13a",
                   help="tokenization method (default: %(default)s); ja-mecab/ko-mecab need the ja/ko extras")
    g.add_argument("--lowercase", "-lc", action="store_true", help="case-insensitive BLEU")
    g.add_argument("--smooth-method", "-s", choices=list(SMOOTH_DEFAULTS), default="exp",
                   help="smoothing: exp (default), floor, add-k or none")
    g.add_argument("--smooth-value", "-sv", type=float, default=None,
                   help=f"value for floor (default {SMOOTH_DEFAULTS['floor']}) and add-k (default {SMOOTH_DEFAULTS['add-k']})")
    g.add_argument("--force", action="store_true",
                   help="do not warn about input that looks tokenized (100+ lines ending in ' .')")
    g.add_argument("--max-ngram-order", type=int, default=4, metavar="N",
                   help="highest n-gram order (default: %(default)s; not a sacrebleu flag)")
    g.add_argument("--effective-order", action="store_true",
                   help="leave out orders with no n-grams from the mean (on with --sentence-level)")


def add_report_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("report options (as in sacrebleu)")
    g.add_argument("--score-only", "-b", action="store_true", help="print only the score")
    g.add_argument("--width", "-w", type=int, default=1, help="decimals in text output (default: %(default)s)")
    g.add_argument("--format", "-f", choices=["json", "text"], default="json",
                   help="output format (default: %(default)s); JSON 'score' keeps full precision")
    g.add_argument("--quiet", "-q", action="store_true", help="no warnings on stderr")


def build_parser(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p.add_argument("refs", nargs="+", metavar="REF", help="reference file(s), one segment per line (.gz ok)")
    p.add_argument("--input", "-i", default="-", metavar="HYP",
                   help="system output file (default: standard input)")
    p.add_argument("--sentence-level", "-sl", action="store_true",
                   help="one score per line, with effective order (printed as text, like sacrebleu)")
    add_bleu_arguments(p)
    add_report_arguments(p)
    return p


def metric_from_args(args):
    from bleu_core import Bleu

    return Bleu(
        tokenize=args.tokenize,
        lowercase=args.lowercase,
        smooth_method=args.smooth_method,
        smooth_value=args.smooth_value,
        max_ngram_order=args.max_ngram_order,
        effective_order=args.effective_order or getattr(args, "sentence_level", False),
    )


def score_json(score) -> str:
    """sacrebleu's JSON layout (indent 1, keys in its order) plus our statistics fields."""
    return json.dumps(score.to_dict(), indent=1, ensure_ascii=False)


def warn_tokenized(hyp_iter_count: int, args) -> None:
    if hyp_iter_count >= 100 and not args.force and not args.quiet:
        print("beambleu: warning: 100+ lines end in a tokenized period (' .'); is the input detokenized? "
              "(--force silences this)", file=sys.stderr)


def run(args) -> int:
    from bleu_core import BatchInputError
    from bleu_core.metric import chunked

    metric = metric_from_args(args)
    metric.tokenizer  # fail early (e.g. a MeCab extra missing)
    check_same_length(args.input, args.refs)
    nrefs = len(args.refs)
    tokenized_endings = 0
    total = None
    lines = []
    done = 0
    for hyps, refs in chunked(iter_pairs(args.input, args.refs)):
        tokenized_endings += sum(h.endswith(" .") for h in hyps)
        try:
            rows = metric.batch_stats(hyps, refs, per_row=args.sentence_level)
        except BatchInputError as exc:  # pragma: no cover - text files cannot hold nulls
            raise InputError(args.input, exc.reason, done + exc.row + 1) from None
        if args.sentence_level:
            for row in rows:
                s = metric.score(row, nrefs)
                lines.append(s.format(args.width, args.score_only))
        else:
            total = rows if total is None else total + rows
        done += len(hyps)
    warn_tokenized(tokenized_endings, args)
    if args.sentence_level:
        sys.stdout.write("\n".join(lines) + "\n")
        return 0
    score = metric.score(total, nrefs)
    if args.score_only:
        print(f"{score.score:.{args.width}f}")
    elif args.format == "json":
        print(score_json(score))
    else:
        print(score.format(args.width))
    return 0

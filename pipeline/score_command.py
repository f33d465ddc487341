"""``beambleu score REF [REF ...] -i HYP``: a drop-in for ``sacrebleu REF... -i HYP -m bleu``.

Imports ``bleu_core`` only (never Apache Beam), streams the files in chunks, and prints
nothing until every line has been scored, so an error never leaves partial output.
"""

from __future__ import annotations

import argparse
import json
import sys

from .argtypes import int_at_least
from .errors import UsageError
from .textfiles import InputError, add_max_line_bytes, iter_chunks


def add_bleu_arguments(p: argparse.ArgumentParser, run: bool = False) -> None:
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
                   help="leave out orders with no n-grams from the mean" + (
                       " (per-pair scores of --sentence-output always use it)" if run else
                       " (on with --sentence-level)"))


def add_report_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("report options (as in sacrebleu)")
    g.add_argument("--score-only", "-b", action="store_true", help="print only the score")
    g.add_argument("--width", "-w", type=int_at_least(0), default=1, help="decimals in text output (default: %(default)s)")
    g.add_argument("--format", "-f", choices=["json", "text"], default="json",
                   help="output format (default: %(default)s); JSON 'score' keeps full precision")
    g.add_argument("--quiet", "-q", action="store_true", help="no warnings on stderr")


def build_parser(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p.add_argument("refs", nargs="+", metavar="REF", help="reference file(s), one segment per line (.gz ok)")
    p.add_argument("--input", "-i", nargs="+", default=["-"], metavar="HYP",
                   help="system output file (default: standard input); with --paired-bs several, the first "
                        "being the baseline")
    p.add_argument("--sentence-level", "-sl", action="store_true",
                   help="one score per line, with effective order (printed as text, like sacrebleu)")
    add_bleu_arguments(p)
    from .significance import add_significance_arguments

    add_significance_arguments(p)
    add_report_arguments(p)
    add_max_line_bytes(p)
    return p


def metric_from_args(args):
    """The metric the BLEU options ask for; an option value it refuses is a :class:`UsageError`."""
    from bleu_core import Bleu

    try:
        return Bleu(
            tokenize=args.tokenize,
            lowercase=args.lowercase,
            smooth_method=args.smooth_method,
            smooth_value=args.smooth_value,
            max_ngram_order=args.max_ngram_order,
            effective_order=args.effective_order or getattr(args, "sentence_level", False),
        )
    except (ValueError, TypeError) as exc:
        raise UsageError(str(exc)) from None


def checked_metric(args):
    """:func:`metric_from_args`, with its tokenizer made: a missing extra (MeCab) or a wrong
    dictionary fails here, before any input is read (a :class:`UsageError`)."""
    metric = metric_from_args(args)
    try:
        metric.tokenizer
    except RuntimeError as exc:
        raise UsageError(str(exc)) from None
    return metric


def warn_tokenized(hyp_iter_count: int, args) -> None:
    if hyp_iter_count >= 100 and not args.force and not args.quiet:
        print("beambleu: warning: 100+ lines end in a tokenized period (' .'); is the input detokenized? "
              "(--force silences this)", file=sys.stderr)


def _check_args(args) -> None:
    if len(args.input) > 1 and not args.paired_bs:
        raise UsageError("several -i files need --paired-bs (the first is the baseline)")
    if args.paired_bs and len(args.input) < 2:
        raise UsageError("--paired-bs needs a baseline and at least one more system (-i BASE SYS...)")
    if args.sentence_level and (args.confidence or args.paired_bs):
        raise UsageError("--sentence-level does not combine with --confidence or --paired-bs")
    if args.input.count("-") + args.refs.count("-") > 1:
        raise UsageError("standard input (-) can be read once only")


class _System:
    """What is added up for one system output: total statistics, replicate totals (or None),
    sentence lines, the number of lines ending in a tokenized period."""

    def __init__(self, path: str):
        self.path, self.total, self.boot, self.lines, self.tokenized = path, None, None, [], 0

    def add(self, metric, hyps, refs, first: int, args, n_boot: int) -> None:
        import numpy as np

        from bleu_core import BatchInputError

        from .significance import replicates_of_rows, row_keys_for_lines

        self.tokenized += sum(h.endswith(" .") for h in hyps)
        try:
            rows = metric.batch_stats(hyps, refs, per_row=args.sentence_level or n_boot > 0)
        except BatchInputError as exc:  # pragma: no cover - text files cannot hold nulls
            raise InputError(self.path, exc.reason, first + exc.row + 1) from None
        if args.sentence_level:
            nrefs = len(args.refs)
            self.lines.extend(metric.score(row, nrefs).format(args.width, args.score_only) for row in rows)
            return
        if n_boot:
            b = replicates_of_rows(rows, row_keys_for_lines(len(hyps), first), n_boot, args.seed)
            self.boot = b if self.boot is None else self.boot + b
            rows = np.asarray(rows).sum(axis=0)
        self.total = rows if self.total is None else self.total + rows


def run(args) -> int:
    from .significance import interval, n_boot as boot_count, paired, strip_replicates

    _check_args(args)
    metric = checked_metric(args)
    nrefs = len(args.refs)
    n_boot = boot_count(args)
    systems = [_System(hyp) for hyp in args.input]
    done = 0
    for hyps, refs in iter_chunks(args.input, args.refs, args.max_line_bytes):
        for system, candidates in zip(systems, hyps):
            system.add(metric, candidates, refs, done, args, n_boot)
        done += len(refs)
    warn_tokenized(max(s.tokenized for s in systems), args)
    if args.sentence_level:
        sys.stdout.write("\n".join(systems[0].lines) + "\n")
        return 0
    docs = []
    for s in systems:
        score = metric.score(s.total, nrefs, n_bootstrap=n_boot or None, seed=args.seed if n_boot else None)
        d = score.to_dict()
        if n_boot:
            ci = interval(metric, s.boot, args.width)
            d = _with_confidence(d, ci)
        docs.append((s.path, score, d))
    if args.paired_bs:
        base = docs[0][2]
        base["p_value"] = None
        for _, _, d in docs[1:]:
            d.update(paired(d, base))
    strip_replicates([d for _, _, d in docs])
    if args.paired_bs:
        _print_paired(docs, args)
        return 0
    _, score, d = docs[0]
    if args.score_only:
        print(f"{score.score:.{args.width}f}")
    elif args.format == "json":
        print(json.dumps(d, indent=1, ensure_ascii=False))
    else:
        text = score.format(args.width)
        if n_boot:
            head, _, rest = text.partition(f" = {score.score:.{args.width}f} ")
            text = f"{head} = {score.score:.{args.width}f} ({d['confidence']}) {rest}"
        print(text)
    return 0


def _with_confidence(d, ci):
    """sacrebleu's key order: name, score, signature, the confidence fields, then the rest."""
    out = {}
    for k, v in d.items():
        out[k] = v
        if k == "signature":
            out.update(ci)
    if "confidence" not in out:
        out.update(ci)
    return out


def _print_paired(docs, args) -> None:
    if args.format == "json":
        rows = []
        for i, (hyp, _, d) in enumerate(docs):
            keys = ("score", "p_value", "significant", "difference", "confidence_mean", "confidence_low",
                    "confidence_high", "confidence_half_width", "confidence", "signature")
            rows.append({"system": f"Baseline: {hyp}" if i == 0 else hyp, "BLEU": {k: d[k] for k in keys if k in d}})
        print(json.dumps(rows, indent=4, ensure_ascii=False))
        return
    w = args.width
    names = [f"Baseline: {hyp}" if i == 0 else hyp for i, (hyp, _, _) in enumerate(docs)]
    cells = []
    for i, (_, score, d) in enumerate(docs):
        cell = f"{score.score:.{w}f} ({d['confidence_mean']:.{w}f} ± {d['confidence_half_width']:.{w}f})"
        if i:
            cell += f" (p = {d['p_value']:.4f}){'*' if d['significant'] else ''}"
        cells.append(cell)
    width = max(len(n) for n in names + ["System"])
    print(f"{'System':<{width}}  BLEU (μ ± 95% CI half-width)")
    for n, c in zip(names, cells):
        print(f"{n:<{width}}  {c}")
    print(f"\nSignature: {docs[0][2]['signature']}")
    print(f"* p < 0.05: significantly different from the baseline (paired bootstrap, {args.paired_bs_n} resamples)")

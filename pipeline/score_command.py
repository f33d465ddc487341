"""``beambleu score REF [REF ...] -i HYP``: a drop-in for ``sacrebleu REF... -i HYP -m bleu chrf``.

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
    from .metric_options import add_metric_arguments

    add_metric_arguments(p)
    from .significance import add_significance_arguments

    add_significance_arguments(p)
    add_report_arguments(p)
    add_max_line_bytes(p)
    return p


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
    if args.sentence_level and len(set(args.metrics)) > 1:
        raise UsageError("--sentence-level scores one metric at a time (as in sacrebleu)")
    if args.input.count("-") + args.refs.count("-") > 1:
        raise UsageError("standard input (-) can be read once only")


class _System:
    """What is added up for one system output: total statistics, replicate totals (or None),
    sentence lines, the number of lines ending in a tokenized period."""

    def __init__(self, path: str):
        self.path, self.total, self.boot, self.lines, self.tokenized = path, None, None, [], 0

    def add(self, metrics, hyps, refs, first: int, args, n_boot: int) -> None:
        import numpy as np

        from bleu_core import BatchInputError

        from .significance import replicates_of_rows, row_keys_for_lines

        self.tokenized += sum(h.endswith(" .") for h in hyps)
        try:
            rows = metrics.batch_stats(hyps, refs, per_row=args.sentence_level or n_boot > 0)
        except BatchInputError as exc:  # pragma: no cover - text files cannot hold nulls
            raise InputError(self.path, exc.reason, first + exc.row + 1) from None
        if args.sentence_level:
            one = metrics[0].sentence_metric()
            nrefs = len(args.refs)
            self.lines.extend(one.score(row, nrefs).format(args.width, args.score_only) for row in rows)
            return
        if n_boot:
            b = replicates_of_rows(rows, row_keys_for_lines(len(hyps), first), n_boot, args.seed)
            self.boot = b if self.boot is None else self.boot + b
            rows = np.asarray(rows).sum(axis=0)
        self.total = rows if self.total is None else self.total + rows


def run(args) -> int:
    from .metric_options import metrics_from_args
    from .significance import n_boot as boot_count

    _check_args(args)
    metrics = metrics_from_args(args)
    nrefs = len(args.refs)
    n_boot = boot_count(args, metrics.width)
    systems = [_System(hyp) for hyp in args.input]
    done = 0
    for hyps, refs in iter_chunks(args.input, args.refs, args.max_line_bytes):
        for system, candidates in zip(systems, hyps):
            system.add(metrics, candidates, refs, done, args, n_boot)
        done += len(refs)
    warn_tokenized(max(s.tokenized for s in systems), args)
    if args.sentence_level:
        sys.stdout.write("\n".join(systems[0].lines) + "\n")
        return 0
    results = [_score_system(metrics, s, nrefs, n_boot, args) for s in systems]
    if args.paired_bs:
        from .significance import paired, strip_replicates

        for i in range(len(metrics)):
            base = results[0][i][1]
            base["p_value"] = None
            for r in results[1:]:
                r[i][1].update(paired(r[i][1], base))
        for r in results:
            strip_replicates([d for _, d in r])
        _print_paired(args.input, metrics, results, args)
        return 0
    _print_single(results[0], args)
    return 0


def _score_system(metrics, system: _System, nrefs: int, n_boot: int, args):
    """(score, JSON object) of each metric for one system, in ``metrics`` order."""
    from .significance import interval

    out = []
    for metric, cols in zip(metrics, metrics.slices):
        score = metric.score(system.total[cols], nrefs, n_bootstrap=n_boot or None,
                             seed=args.seed if n_boot else None)
        d = score.to_dict()
        if n_boot:
            d = _with_confidence(d, interval(metric, system.boot[:, cols], args.width))
        out.append((score, d))
    return out


def _text_line(score, d, args) -> str:
    text = score.format(args.width)
    if "confidence" in d:
        head, _, rest = text.partition(f" = {score.score:.{args.width}f}")
        text = f"{head} = {score.score:.{args.width}f} ({d['confidence']}){rest}"
    return text


def _print_single(results, args) -> None:
    """One system's scores as sacrebleu prints them: JSON (a list for several metrics), the
    scores alone (``-b``), or text lines aligned on their ``=``."""
    from .significance import strip_replicates

    strip_replicates([d for _, d in results])
    if args.score_only:  # sacrebleu's -b keeps the interval: "77.1 (μ = 77.0 ± 6.8)"
        lines = [f"{score.score:.{args.width}f}" + (f" ({d['confidence']})" if "confidence" in d else "")
                 for score, d in results]
        if args.format == "json" and len(lines) > 1:
            print("[\n" + ",\n".join(lines) + "\n]")
        else:
            print("\n".join(lines))
    elif args.format == "json":
        texts = [json.dumps(d, indent=1, ensure_ascii=False) for _, d in results]
        print(texts[0] if len(texts) == 1 else "[\n" + ",\n".join(texts) + "\n]")
    else:
        lines = [_text_line(score, d, args) for score, d in results]
        w = max(line.index("=") - 1 for line in lines)
        print("\n".join(f"{line[:line.index('=') - 1]:>{w}}{line[line.index('=') - 1:]}" for line in lines))


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


def _print_paired(paths, metrics, results, args) -> None:
    """The paired test's table: one row per system, one column per metric (JSON: one object per
    system, one entry per metric)."""
    names = [f"Baseline: {hyp}" if i == 0 else hyp for i, hyp in enumerate(paths)]
    if args.format == "json":
        keys = ("score", "p_value", "significant", "difference", "confidence_mean", "confidence_low",
                "confidence_high", "confidence_half_width", "confidence", "signature")
        rows = [{"system": name, **{score.name: {k: d[k] for k in keys if k in d} for score, d in r}}
                for name, r in zip(names, results)]
        print(json.dumps(rows, indent=4, ensure_ascii=False))
        return
    w = args.width
    table = []
    for i, r in enumerate(results):
        cells = []
        for score, d in r:
            cell = f"{score.score:.{w}f} ({d['confidence_mean']:.{w}f} ± {d['confidence_half_width']:.{w}f})"
            if i:
                cell += f" (p = {d['p_value']:.4f}){'*' if d['significant'] else ''}"
            cells.append(cell)
        table.append(cells)
    heads = [f"{score.name} (μ ± 95% CI half-width)" for score, _ in results[0]]
    width = max(len(n) for n in names + ["System"])
    cols = [max(len(c) for c in [h] + [row[j] for row in table]) for j, h in enumerate(heads)]
    fmt = lambda first, cells: "  ".join([f"{first:<{width}}"] + [f"{c:<{cols[j]}}" for j, c in enumerate(cells)])  # noqa: E731
    print(fmt("System", heads).rstrip())
    for n, cells in zip(names, table):
        print(fmt(n, cells).rstrip())
    print()
    for score, d in results[0]:
        print(f"{score.name} signature: {d['signature']}" if len(results[0]) > 1 else f"Signature: {d['signature']}")
    print(f"* p < 0.05: significantly different from the baseline (paired bootstrap, {args.paired_bs_n} resamples)")

"""``beambleu score``: sacrebleu's command line, computed by beambleu.

``beambleu score REF... -i HYP...`` takes the arguments of ``sacrebleu`` 2.6.0 and prints what it
prints (the version field aside): one system's scores as JSON, text or ``-b``; several systems as
sacrebleu's table (text, JSON or LaTeX); the paired bootstrap and approximate randomization tests;
``--sentence-level``; systems and references from files (``.gz`` too, in any ``-e`` encoding), from
tab-separated columns (``-nr N``) or from standard input (one system per tab-separated column);
sacrebleu's test sets (``-t``/``-l``, through its own registry).

Imports ``bleu_core`` only (never Apache Beam), streams the files in chunks (every system in the same
pass), and prints nothing until every line has been scored, so an error never leaves partial output.
Resampled numbers (intervals, p-values) are sacrebleu's by default (``--resampling sacrebleu``:
its numpy draws, float32 sums and strict p-value counts, :mod:`bleu_core.resampling.sacrebleu`, which
keeps every segment's statistics but never B x N draws); ``--resampling counter`` draws beambleu's
counter-based resamples instead, those of ``beambleu run``.
"""

from __future__ import annotations

import argparse
import functools
import json
import operator
import os
import re
import sys

from bleu_core import formats, scoring
from bleu_core.resampling.seeds import SACREBLEU
from bleu_core.sums import checked_add_ints, column_sums, column_sums_ints
from bleu_core.version import __version__

from ..errors import Parser, Undecided, UsageError, int_at_least, is_deciding_alone
from ..io.textfiles import Source, add_max_line_bytes, check_encoding, iter_chunks
from . import testsets
from .metric_options import add_metric_arguments, builtins_only, metrics_from_args
from .significance import (add_significance_arguments, check_draw_work, resampling, resolve_seed,
                           row_keys_for_lines)
from .testsets import detail_color

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Dict, List, Optional

    import numpy as np

# numpy (and sacrebleu's draws, bleu_core.resampling.sacrebleu) is imported by the jobs that resample or
# select lines (--confidence, the paired tests, --origlang/--subset, --detail): a plain job holds its
# statistics as Python ints (MetricSet.batch_stats_lists), which keeps numpy off its start-up

__all__ = ["FORMATS", "SACREBLEU_LONG_OPTIONS", "SPOOL_BYTES", "ScoreParser", "add_report_arguments", "build_parser",
           "builtin_flags", "run", "warn_tokenized"]

FORMATS = ("json", "text", "latex")
#: ANSI colours as sacrebleu (colorama) writes them
_COLORS = {"red": "\x1b[31m", "green": "\x1b[32m", "yellow": "\x1b[33m", "cyan": "\x1b[36m"}
_RESET = "\x1b[0m"
#: --sentence-level lines are kept in memory up to this size, then in a temporary file
SPOOL_BYTES = 8 << 20


def _encoding(value: str) -> str:
    try:
        return check_encoding(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_report_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("report options (as in sacrebleu)")
    g.add_argument("--quiet", "-q", action="store_true", help="no messages on stderr")
    g.add_argument("--short", "-sh", action="store_true", help="abbreviated signatures (text output)")
    g.add_argument("--score-only", "-b", action="store_true", help="print only the score")
    g.add_argument("--width", "-w", type=int_at_least(0), default=1, help="decimals (default: %(default)s)")
    g.add_argument("--no-color", "-nc", action="store_true",
                   help="no terminal colours (they are used only when stdout is a terminal and NO_COLOR is unset)")
    g.add_argument("--format", "-f", choices=FORMATS, default="json",
                   help="output format (default: %(default)s; $SACREBLEU_FORMAT overrides it); latex is for several "
                        "systems")
    g.add_argument("--with-stats", action="store_true",
                   help="JSON of one system: add score_exact (the unrounded score), the metric's statistics and, "
                        "with --confidence, the unrounded interval (confidence_mean_exact, confidence_low, "
                        "confidence_high, confidence_half_width); with a SentencePiece tokenizer, spm_model (its "
                        "tokenizer, path and SHA-256) (not a sacrebleu flag)")


def build_parser(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p.add_argument("refs", nargs="*", default=[], metavar="REF",
                   help="reference file(s), one segment per line (.gz ok), before -i")
    p.add_argument("--input", "-i", nargs="*", default=None, metavar="HYP",
                   help="system output file(s); several: a table of systems, the first being the baseline of "
                        "--paired-bs/--paired-ar (default: standard input, one system per tab-separated column)")
    p.add_argument("--num-refs", "-nr", type=int_at_least(1), default=1, metavar="N",
                   help="one reference file holding N tab-separated references per line (default: %(default)s)")
    p.add_argument("--encoding", "-e", type=_encoding, default="utf-8",
                   help="encoding of the input files (default: %(default)s)")
    p.add_argument("--sentence-level", "-sl", action="store_true",
                   help="one score per line (BLEU with effective order), as sacrebleu prints them")
    testsets.add_testset_arguments(p)
    add_metric_arguments(p, run=False, taken=builtin_flags)
    add_significance_arguments(p)
    add_report_arguments(p)
    add_max_line_bytes(p)
    p.add_argument("--version", "-V", action="version", version=f"beambleu {__version__}")
    return p


@functools.lru_cache(maxsize=None)
def builtin_flags() -> frozenset:
    """Every option string of ``beambleu score`` with the built-in metrics only (no plugin may take one)."""
    with builtins_only():
        return frozenset(build_parser(Parser(add_help=True))._option_string_actions)


def warn_tokenized(hyp_iter_count: int, args) -> None:
    if hyp_iter_count >= 100 and not args.force and not args.quiet:
        print("beambleu: warning: 100+ lines end in a tokenized period (' .'); is the input detokenized? "
              "(--force silences this)", file=sys.stderr)


def _info(args, message: str) -> None:
    if not args.quiet:
        print(f"beambleu: {message}", file=sys.stderr)


class _Color:
    def __init__(self, on: bool):
        self.on = on

    def __call__(self, text: str, color: str) -> str:
        return f"{_COLORS[color]}{text}{_RESET}" if self.on else text


def _colors(args) -> _Color:
    """sacrebleu's colours: on unless ``-nc`` or ``$NO_COLOR``, and (colorama strips them
    otherwise) only when standard output is a terminal."""
    return _Color(detail_color(args.no_color))


# ----------------------------------------------------------------------------- the command line

#: sacrebleu 2.6.0's long options, in the order of its parser (which orders its "could match" lists)
SACREBLEU_LONG_OPTIONS = (
    "--help", "--citation", "--cite", "--list", "--test-set", "--language-pair", "--origlang", "--subset",
    "--download", "--echo", "--input", "--num-refs", "--encoding", "--metrics", "--sentence-level",
    "--smooth-method", "--smooth-value", "--tokenize", "--lowercase", "--force", "--chrf-char-order",
    "--chrf-word-order", "--chrf-beta", "--chrf-whitespace", "--chrf-lowercase", "--chrf-eps-smoothing",
    "--ter-case-sensitive", "--ter-asian-support", "--ter-no-punct", "--ter-normalized", "--confidence",
    "--confidence-n", "--paired-ar", "--paired-bs", "--paired-ar-n", "--paired-bs-n", "--paired-jobs", "--quiet",
    "--short", "--score-only", "--width", "--detail", "--no-color", "--format", "--version",
)


class ScoreParser(Parser):
    """``beambleu score``'s parser: a ``--long`` option may be abbreviated as in sacrebleu's command
    line (argparse's prefix matching: ``--tok intl``, ``--metric chrf``, ``--form=text``), and an
    abbreviation means what it means to sacrebleu although beambleu has more options (``--w`` is
    sacrebleu's ``--width``, not also ``--with-stats``): the prefix is matched against sacrebleu's
    options first, then, when none of them has it, against all of beambleu's (its own flags and the
    plugins'). A prefix of several options is refused as sacrebleu refuses it, with its list of
    candidates. Single-dash options are never abbreviated (:class:`~beambleu.errors.Parser`).
    Parsed with the built-in metrics' options alone (``cli._parse_score_alone``), a --long option
    that is not one of them exactly is left to the parser with the plugins
    (:class:`~beambleu.errors.Undecided`) unless it abbreviates sacrebleu's options and has no
    hyphen after its ``--`` (a plugin's flags are ``--<id>-NAME``)."""

    def _get_option_tuples(self, option_string):
        if not option_string.startswith("--"):
            return super()._get_option_tuples(option_string)
        prefix, eq, value = option_string.partition("=")
        explicit = value if eq else None
        known = self._option_string_actions
        ours = [s for s in known if s.startswith("--") and s.startswith(prefix)]
        theirs = [s for s in SACREBLEU_LONG_OPTIONS if s in known and s.startswith(prefix)]
        if is_deciding_alone() and (not theirs or "-" in prefix[2:]):
            # a plugin's flag could be one more candidate (matched against beambleu's own options), or the
            # option itself: a plugin's flags are --<id>-NAME, which may begin a flag of sacrebleu's
            # (--smooth-v, a plugin `smooth`'s, is also a prefix of --smooth-value)
            raise Undecided(f"{prefix} may be a plugin's flag, or a prefix of one")
        return [(known[s], s, explicit) for s in (theirs or ours)]



def _check_args(args) -> None:
    if args.sentence_level and len(set(args.metrics)) > 1:
        raise UsageError("--sentence-level scores one metric at a time (as in sacrebleu)")
    testsets.check_testset_args(args)
    if args.num_refs > 1 and len(args.refs) > 1:
        raise UsageError("-nr/--num-refs reads N tab-separated references from one reference file; give only one")
    if not args.refs and not args.test_set:
        raise UsageError("no references: give reference files before -i, or a test set (-t) and a language pair "
                         "(-l)")
    if args.input is not None and not args.input:
        raise UsageError("-i/--input needs at least one file")


def _system_sources(args):
    """(sources, names) of the systems in -i (a baseline repeated under -i is read once, as in
    sacrebleu), or standard input's columns (names known after its first line)."""
    if args.input is None:
        return [Source(("-",), 0, args.encoding, universal_newlines=True)], None
    names: List[str] = []
    paired = args.paired_bs or args.paired_ar
    for path in args.input:
        if path in names:
            if paired and path == names[0]:
                _info(args, f"ignoring {path!r}: it is also the baseline")
                continue
            raise UsageError(f"{path!r} is given twice in -i")
        names.append(path)
    # a file named `-` is the file ./-, as sacrebleu opens it (standard input is read only without -i)
    return [Source((p,), 1, args.encoding, dash_is_stdin=False) for p in names], names


def _reference_sources(args):
    if args.test_set:
        per_set = testsets.reference_files(args)
        n = max(len(files) for files in per_set)
        return [Source(tuple(files[r] for files in per_set if r < len(files)), 1, args.encoding, dash_is_stdin=False)
                for r in range(n)]
    if args.num_refs > 1:
        return [Source((args.refs[0],), args.num_refs, args.encoding, dash_is_stdin=False)]
    return [Source((r,), 1, args.encoding, dash_is_stdin=False) for r in args.refs]


# ----------------------------------------------------------------------------- adding up


class _System:
    """What is added up for one system: total statistics, the replicate block (bootstrap
    replicates or the randomization test's swapped totals), the --detail subsets' totals, sentence
    lines, and the number of lines ending in a tokenized period. Every sum is checked. A plain run
    (:attr:`_Run.plain`) holds its statistics as Python ints, the others as numpy arrays."""

    def __init__(self, run: "_Run", n_subsets: int):
        width = run.metrics.width
        self.ordered = scoring.InOrder(run.metrics)  # sacrebleu's float sums in line order (TER's reference lengths)
        self.subset_ordered = [scoring.InOrder(run.metrics) for _ in range(n_subsets)]
        self.replicates = None
        self.rows: List[np.ndarray] = []  # sacrebleu's draws: every segment's statistics, in order
        self.n_subset = [0] * n_subsets
        self.lines = None  # --sentence-level: the lines, spooled to a temporary file past a few MB
        self.n, self.tokenized = 0, 0
        if run.plain:
            self.total = [0] * width
            return
        import numpy as np

        self.total = np.zeros(width, dtype=np.int64)
        self.subsets = np.zeros((n_subsets, width), dtype=np.int64)

    def add_plain(self, run: "_Run", hyps: List[str], stats: list) -> None:
        """Add the lines ``hyps`` and their statistics (:meth:`MetricSet.batch_stats_lists`: rows of
        ints when :attr:`_Run.per_row`, else their column sums) in a plain run."""
        self.tokenized += sum(map(operator.methodcaller("endswith", " ."), hyps))
        self.n += len(hyps)
        if run.args.sentence_level:
            self._sentence_lines(run, stats)
            return
        if run.per_row:
            if run.ordered:
                self.ordered.add(stats)
            stats = column_sums_ints(stats, run.metrics.width)
        checked_add_ints(self.total, stats, what="the statistics of a system", name=run.metrics.stat_name)

    def _sentence_lines(self, run: "_Run", rows) -> None:
        """--sentence-level: each row's line, as sacrebleu prints it."""
        one = run.metrics[0].sentence_metric()
        sig = one.signature(run.nrefs).format(run.args.short)
        if self.lines is None:
            import tempfile

            self.lines = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES, mode="w+", encoding="utf-8",
                                                       newline="\n")
        self.lines.writelines(one.score(row).format(run.args.width, run.args.score_only, sig) + "\n"
                              for row in rows)

    def add(self, run: "_Run", hyps, rows: np.ndarray, first: int) -> None:
        """Add the lines ``hyps`` (from line ``first`` on) and their statistics ``rows``."""

        keep = None if run.mask is None else _window(run.mask, first, len(hyps))
        for i, (_, m) in enumerate(run.subsets):
            sel = _window(m, first, len(hyps))
            scoring.add(self.subsets[i], column_sums(rows[sel]), "the statistics of a subset",
                        run.metrics.stat_name)
            self.n_subset[i] += int(sel.sum())
            self.subset_ordered[i].add(rows[sel])
        if keep is not None:
            rows = rows[keep]
            hyps = [h for h, k in zip(hyps, keep) if k]
        self.tokenized += sum(map(operator.methodcaller("endswith", " ."), hyps))
        self.n += len(rows)
        if run.args.sentence_level:
            self._sentence_lines(run, rows)
            return
        self.ordered.add(rows)
        if run.sacrebleu_draws:
            self.rows.append(rows)
        elif run.resampling is not None:
            keys = row_keys_for_lines(len(keep) if keep is not None else len(rows), first)
            if keep is not None:
                keys = keys[keep]
            block = scoring.replicate_block(rows, keys, run.resampling)
            self.replicates = scoring.add(self.replicates, block, "the replicate totals of a system")
        scoring.add(self.total, column_sums(rows), "the statistics of a system", run.metrics.stat_name)


def _window(mask: np.ndarray, first: int, n: int) -> np.ndarray:
    """``mask[first:first + n]``, False past its end (lines beyond the test set)."""
    import numpy as np

    out = np.zeros(n, dtype=bool)
    part = mask[first:first + n]
    out[:len(part)] = part
    return out


def _test_set_lines(ref_sources) -> int:
    """Lines of the test sets' (cached, local) first reference files, one after the other."""
    n = 0
    for path in ref_sources[0].paths:
        with open(path, "rb") as f:
            n += sum(1 for _ in f)
    return n


class _Run:
    def __init__(self, args, metrics, mask, subsets):
        self.args, self.metrics, self.mask, self.subsets = args, metrics, mask, subsets
        self.resampling = resampling(args, metrics.width)  # None: nothing drawn
        self.nrefs = 1
        #: nothing drawn, every line kept, no subsets: the statistics are Python ints (no numpy)
        self.plain = self.resampling is None and mask is None and not subsets
        #: a metric adds something in line order beside its totals (TER's reference lengths)
        self.ordered = any(hasattr(m, "ordered_sum") for m in metrics)
        #: a plain run needs each line's statistics (else the kernels' column sums do)
        self.per_row = bool(args.sentence_level or self.ordered)

    @property
    def sacrebleu_draws(self) -> bool:
        return self.resampling is not None and self.resampling.draws == SACREBLEU

    def segment_statistics(self, system: "_System", order) -> List[np.ndarray]:
        """sacrebleu's per-segment statistics of one system, for the metrics at ``order``."""
        import numpy as np

        from bleu_core.resampling.sacrebleu import segment_statistics

        rows = np.concatenate(system.rows) if system.rows else np.zeros((0, self.metrics.width), dtype=np.int64)
        return [segment_statistics(self.metrics[i], rows[:, self.metrics.slices[i]]) for i in order]

    def results(self, system: "_System", order=None):
        """The score stage's results of one system, for every metric (in ``order`` when given)."""
        order = range(len(self.metrics)) if order is None else order
        return [scoring.score_metric(self.metrics[i], system.total[self.metrics.slices[i]], self.nrefs,
                                     None if system.replicates is None else
                                     system.replicates[:, self.metrics.slices[i]], self.resampling,
                                     ordered=system.ordered[i])
                for i in order]


def run(args) -> int:
    env_format = os.environ.get("SACREBLEU_FORMAT", "").lower()
    if env_format in FORMATS:
        args.format = env_format
    done = testsets.info_command(args)
    if done is not None:
        return done
    _check_args(args)
    resolve_seed(args)
    if args.sentence_level:
        args.effective_order = True
    if getattr(args, "spm_model", None):
        from ..io.inputs import check_model_store  # here: keeps pyarrow and Beam off score's start-up
        check_model_store(args.spm_model)
    metrics = metrics_from_args(args)
    if not args.quiet:
        trg = testsets.trg_lang(args)
        for warning in testsets.tokenizer_warnings(args.tokenize, trg, args.test_set, "bleu" in args.metrics):
            print(f"beambleu: warning: {warning}", file=sys.stderr)
    hyp_sources, names = _system_sources(args)
    if names is not None:
        _check_systems(args, len(names))  # else (standard input) once its first line is read
    ref_sources = _reference_sources(args)
    mask = testsets.keep_mask(args, _test_set_lines(ref_sources)) if args.origlang or args.subset else None
    subsets = testsets.detail_subsets(args) if args.detail else []
    state = _Run(args, metrics, mask, subsets)
    systems: List[_System] = []
    first = 0
    for hyps, refs in iter_chunks(hyp_sources, ref_sources, args.max_line_bytes):
        if not systems:
            systems = [_System(state, len(subsets)) for _ in hyps]
            if names is None:
                _check_systems(args, len(systems))
            state.nrefs = len(refs[0])
        # every system's statistics at once: a metric's kernel may prepare the references once
        if state.plain:
            for system, candidates, stats in zip(systems, hyps,
                                                 metrics.batch_stats_lists(hyps, refs, per_row=state.per_row)):
                system.add_plain(state, candidates, stats)
        else:
            for system, candidates, rows in zip(systems, hyps, metrics.batch_stats_many(hyps, refs, per_row=True)):
                system.add(state, candidates, rows, first)
        first += len(refs)
    if names is None:
        names = [f"System {i + 1}" for i in range(len(systems))]
    if systems[0].n == 0:
        raise testsets.empty_subset_error(args)
    check_draw_work(state.resampling, systems[0].n, len(systems))
    warn_tokenized(max(s.tokenized for s in systems), args)
    if args.sentence_level:
        lines = systems[0].lines
        lines.seek(0)
        import shutil

        shutil.copyfileobj(lines, sys.stdout)
        lines.close()
        return _done(args)
    if args.detail and args.format == "json":
        args.format = "text"  # as sacrebleu: the subsets' lines follow the scores
    if len(systems) == 1:
        _print_single(state, systems[0])
        if args.detail:
            _print_detail(state, systems[0])
        return _done(args)
    _info(args, f"found {len(systems)} systems")
    _print_table(state, names, systems)
    return _done(args)


def _done(args) -> int:
    """Exit code 0; with colours on, the reset colorama writes when sacrebleu exits."""
    if _colors(args).on:
        sys.stdout.write(_RESET)
    return 0


def _check_systems(args, n: int) -> None:
    paired = args.paired_bs or args.paired_ar
    if args.sentence_level and n > 1:
        raise UsageError("--sentence-level scores one system at a time (as in sacrebleu)")
    if args.sentence_level and (args.confidence or paired):
        raise UsageError("--sentence-level does not combine with --confidence or the paired tests")
    if paired and n == 1:
        raise UsageError("the paired tests need a baseline and at least one more system (-i BASE SYS...)")
    if n > 1 and args.confidence:  # as sacrebleu, with or without a paired test
        raise UsageError("--confidence is for one system; for several use --paired-bs or --paired-ar")
    if n > 1 and args.with_stats:
        raise UsageError("--with-stats adds to the JSON of one system; several systems print sacrebleu's table")


# ----------------------------------------------------------------------------- one system


def _with_stats(result, resources: Optional[Dict]) -> Dict:
    """``--with-stats``: ``score_exact``, the unrounded interval, the metric's statistics and the
    files it read (``resources``: the SentencePiece model's path and SHA-256)."""
    extra = {"score_exact": result.score.score}
    ci = result.interval
    if ci is not None:
        extra.update(confidence_mean_exact=float(ci.mean), confidence_low=float(ci.low),
                     confidence_high=float(ci.high), confidence_half_width=float(ci.half_width))
    extra.update((k, v) for k, v in result.score.to_dict().items() if k != "score")
    extra.update(resources or {})
    return extra


def _print_single(run: _Run, system: _System) -> None:
    """One system's scores as sacrebleu prints them: JSON (a list for several metrics), the
    scores alone (``-b``), or text lines aligned on their ``=``."""
    args, color = run.args, _colors(run.args)
    w = args.width
    out = []
    results = run.results(system)
    if run.sacrebleu_draws:
        _sacrebleu_intervals(run, system, results)
    for r in results:
        name, value, verbose = r.score.name, r.score.score, r.score.verbose_score
        if args.format == "json" and not args.score_only:
            extra = _with_stats(r, r.metric.resources()) if args.with_stats else None
            out.append(formats.sacrebleu_json(name, value, r.signature, w, r.interval, verbose, extra))
        else:
            out.append(formats.score_line(name, value, w, r.signature, r.interval, verbose, args.score_only,
                                          args.short))
    if args.format == "json":
        print(out[0] if len(out) == 1 else "[\n" + ",\n".join(out) + "\n]")
        return
    if "μ" in out[0]:
        out = [re.sub(r"(\(μ = [0-9\.]+ ± [0-9\.]+\))", lambda m: color(m.group(), "cyan"), line) for line in out]
    if len(out) == 1:
        print(out[0])
        return
    lens = []
    for line in out:
        if "=" in line:
            lens.append(line.index("=") - 1)
        else:
            print(line)
    if lens:
        width = max(lens)
        for n, line in zip(lens, out):
            print(f"{line[:n]:>{width}}{line[n:]}")


def _sacrebleu_intervals(run: _Run, system: _System, results) -> None:
    """Set every result's interval from sacrebleu's bootstrap draws (one system, ``-ci``)."""
    from bleu_core.resampling import sacrebleu as nr

    rs = run.resampling
    order = range(len(run.metrics))
    scores = nr.bootstrap_scores([run.metrics[i] for i in order], run.segment_statistics(system, order), rs.n,
                                 nr.bootstrap_seed(rs.label, rs.seed))
    for r, replicates in zip(results, scores):
        r.replicate_scores = replicates
        r.interval = scoring.Interval.of(replicates)


def _sacrebleu_paired(run: _Run, systems: List[_System], order: List[int], points: List[List[float]]):
    """Per metric (in ``order``), each system's (p-value, mean, half-width) of sacrebleu's paired
    test against the first system, with its draws; ``points[s][m]``: the point scores."""
    import numpy as np

    from bleu_core.resampling import sacrebleu as nr

    rs = run.resampling
    metrics = [run.metrics[i] for i in order]
    base = run.segment_statistics(systems[0], order)
    cells: List[list] = [[(None, None, None)] for _ in metrics]
    others = [run.segment_statistics(system, order) for system in systems[1:]]
    test = "bs" if rs.method == scoring.BOOTSTRAP else "ar"
    seed, interval_seed = nr.paired_seed(rs.label, rs.seed), nr.bootstrap_seed(rs.label, rs.seed)
    shared, samples = nr.paired_samples(metrics, base, others, test, rs.n, seed)
    if test == "bs":  # the baseline's interval, from its own bootstrap: the test's replicates under the same seed
        if shared is None or seed != interval_seed:
            shared = nr.bootstrap_scores(metrics, base, rs.n, interval_seed)
        for m, scores in enumerate(shared):
            cells[m][0] = (None, *nr.numpy_interval(np.array(scores)))
    for k, per in enumerate(samples, start=1):
        for m, (sample, own) in enumerate(per):
            p = nr.p_value(sample, abs(points[0][m] - points[k][m]))
            cells[m].append((p, *(nr.numpy_interval(own) if own is not None and test == "bs" else (None, None))))
    return cells


def _cli_order(run: "_Run") -> List[int]:
    """The metrics' indices in the order of their first ``-m`` mention (the run holds them sorted)."""
    ids = [m.lower() for m in run.args.metrics]
    return sorted(range(len(run.metrics)), key=lambda i: ids.index(run.metrics[i].id))


def _print_detail(run: _Run, system: _System) -> None:
    """``--detail``: the scores of the test set's subsets (origlang and domain), as sacrebleu."""
    rows = []
    for (label, _), totals, n, ordered in zip(run.subsets, system.subsets, system.n_subset, system.subset_ordered):
        if n:
            for i in _cli_order(run):  # sacrebleu scores the subsets in -m order
                score = scoring.score_metric(run.metrics[i], totals[run.metrics.slices[i]], ordered=ordered[i]).score
                rows.append((label, n, score.name, score.score))
    for line in testsets.format_detail(rows, run.args.width, _colors(run.args).on):
        print(line)


# ----------------------------------------------------------------------------- several systems


class _Result:
    """One cell of the paired tests' table, with sacrebleu's ``Result`` fields (its JSON)."""

    def __init__(self, score: float, p_value=None, mean=None, ci=None):
        self.score, self.p_value, self.mean, self.ci = score, p_value, mean, ci


def _table_columns(run: _Run, systems: List[_System]):
    """{score name: cells} for every metric, and {score name: signature}: plain scores, or the
    paired test's results (the score stage's, against the first system)."""
    args = run.args
    columns: Dict[str, list] = {}
    sigs: Dict[str, str] = {}
    paired = args.paired_bs or args.paired_ar
    order = _cli_order(run) if paired else None  # sacrebleu's paired tests keep the -m order; the rest is sorted
    per_system = [run.results(s, order) for s in systems]
    sacre = None
    if paired and run.sacrebleu_draws:
        sacre = _sacrebleu_paired(run, systems, order, [[r.score.score for r in rs] for rs in per_system])
    for m, results in enumerate(zip(*per_system)):  # one metric's results, system by system
        name = results[0].score.name
        sigs[name] = results[0].signature.format(args.short)
        if not paired:
            columns[name] = [f"{r.score.score:.{args.width}f}" for r in results]
            continue
        if sacre is not None:
            columns[name] = [_Result(r.score.score, *cell) for r, cell in zip(results, sacre[m])]
            continue
        base = results[0]
        cells = []
        for i, r in enumerate(results):
            p = None if i == 0 else scoring.paired_test(r, base).p_value
            ci = r.interval
            mean, half = (None, None) if ci is None else (ci.mean, ci.half_width)
            cells.append(_Result(r.score.score, p, mean, half))
        columns[name] = cells
    return columns, sigs


def _print_table(run: _Run, names: List[str], systems: List[_System]) -> None:
    """sacrebleu's multi-system output: a table (text: tabulate's fancy_grid; latex: booktabs) or
    a JSON list, the paired test's explanation, and the signatures."""
    args = run.args
    paired = args.paired_bs or args.paired_ar
    if paired:
        names = (["Baseline"] + [f"System {i + 1}" for i in range(len(names) - 1)] if args.input is None
                 else [f"Baseline: {names[0]}"] + names[1:])
    columns, sigs = _table_columns(run, systems)
    if args.format == "json":
        rows = []
        for i, name in enumerate(names):
            row = {"system": name}
            for metric, cells in columns.items():
                row[metric] = cells[i] if isinstance(cells[i], str) else dict(cells[i].__dict__)
            rows.append(row)
        print(json.dumps(rows, indent=4, default=_json_number))
        return
    _print_grid(args, names, columns, sigs)


def _json_number(value):
    """A numpy float32 mean or half-width (sacrebleu's chrF and TER replicates are float32, which
    sacrebleu's own JSON writer refuses) as the float of the same value."""
    import numpy as np

    if isinstance(value, np.floating):
        return float(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def _print_grid(args, names, columns, sigs) -> None:
    from tabulate import tabulate

    color = _colors(args)
    w = args.width
    fmt = "fancy_grid" if args.format == "text" else "latex_booktabs"
    sep = "\n" if fmt == "fancy_grid" else " "
    table: Dict[str, list] = {"System": list(names)}
    for metric, cells in columns.items():
        texts, boot = [], False
        for cell in cells:
            if isinstance(cell, str):
                texts.append(cell)
                continue
            text = f"{cell.score:.{w}f}"
            if cell.mean is not None:
                boot = True
                text += f" ({cell.mean:.{w}f} ± {cell.ci:.{w}f})"
            if cell.p_value is not None:
                p = f"(p = {cell.p_value:.4f})"
                text += sep + (color(p, "red") if cell.p_value > 0.05 else p + "*")
            texts.append(text)
        table[metric + (" (μ ± 95% CI)" if boot else "")] = texts
    colored: Dict[str, list] = {}
    baseline, baseline_name = False, ""
    for key, vals in table.items():  # as sacrebleu: only a "Baseline: NAME" row (not stdin's) is coloured
        if vals[0].startswith("Baseline:") or baseline:
            if vals[0].startswith("Baseline:"):
                baseline_name = vals[0]
            baseline = True
            vals[0] = color(vals[0], "yellow")
        colored[color(key, "cyan")] = vals
    print(tabulate(colored, headers="keys", tablefmt=fmt, colalign=("right",), stralign="center",
                   numalign="center", floatfmt=f".{w}f"))
    print()
    if args.paired_bs or args.paired_ar:
        _print_explanation(args, color, baseline_name)
    print("-----------------")
    print("Metric signatures")
    print("-----------------")
    for name, sig in sigs.items():
        print(f" - {name:<10} {sig}")


def _print_explanation(args, color, baseline_name: str) -> None:
    """What sacrebleu prints under the paired tests' table, word for word."""
    kind = "bootstrap resampling" if args.paired_bs else "approximate randomization"
    n = args.paired_bs_n if args.paired_bs else args.paired_ar_n  # as given (0 too), as sacrebleu prints it
    unit = "resampling trials" if args.paired_bs else "trials"
    msg = f"Paired {kind} test with {n} {unit}"
    bline, null = color("baseline", "yellow"), color("Null hypothesis", "green")
    print("-" * len(msg) + "\n" + msg + "\n" + "-" * len(msg))
    print(f" - Each system is pairwise compared to {color(baseline_name, 'yellow')}.")
    if args.paired_bs:
        print("   Actual system score / bootstrap estimated true mean / 95% CI are provided for each metric.")
    else:
        print("   Actual system score is provided for each metric.")
    print()
    print(f" - {null}: the system and the {bline} translations are essentially")
    print(f"   generated by the same underlying process. For a given system and the {bline},")
    print("   the p-value is roughly the probability of the absolute score difference (delta)")
    print(f"   or higher occurring due to chance, under the assumption that the {null.lower()} is correct.")
    print()
    print(f" - Assuming a significance threshold of 0.05, the {null.lower()} can be rejected")
    print("   for p-values < 0.05 (marked with \"*\"). This means that the delta is unlikely to be attributed")
    print(f"   to chance, hence the system is significantly \"different\" than the {bline}.")
    print(f"   Otherwise, the p-values are {color('highlighted in red', 'red')}.")
    print()
    print(f" - NOTE: Significance does not tell whether a system is \"better\" than the {bline} but rather")
    print("   emphasizes the \"difference\" of the systems in terms of the replicability of the delta.")
    print()

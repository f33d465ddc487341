"""``beambleu run``: score Parquet shards with the Beam pipeline, globally and per group.

Our options are defined by :class:`beambleu.commands.run_options.BeamBleuOptions`; every other flag must be a
Beam pipeline option (``--runner``, ``--direct_num_workers``, ...), and an unknown flag is an
error rather than silently dropped. Without ``--runner`` the local FnApiRunner is used (not
``DirectRunner``, which first tries to download the Prism binary), with one worker process per
core once the input is large enough to pay for their start-up.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import re
import shutil
import sys
import tempfile
import time
from typing import Dict, List, Optional

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions, PortableOptions

from bleu_core import formats
from bleu_core.protocol import MetricSet
from bleu_core.scoring import Interval, Paired

from ..beam.job import ScoreJob
from ..beam.runners import (DASK_NAMES, beam_option_parser, check_job_endpoint, close_result as _close,
                            import_dask_runner, one_local_worker, partition_dask_input, pipeline_options,
                            scale_local_runner, wait_until_finish, wants_dask, with_progress)
from ..errors import OutputError, UsageError
from ..groups import results
from ..groups.document import score_parts
from ..groups.grouptable import key_type
from ..beam.autotok import AUTO, AUTO_TOKENIZERS, AutoBleu
from ..groups.results import BOOTSTRAP, RANDOMIZATION, Significance
from ..io import mtme, ownership
from ..io.inputs import (ERROR_MARK, InputSpec, PipelineInputError, absolute, check_object_stores, check_store_extras,
                         plan)
from ..io.keep import parse_keep
from ..io.outputs import OutputConfig, check_groups_output, commit, prepare_staging, read_summary
from ..io.ownership import release_locks
from .metric_options import metrics_from_args
from .run_options import BeamBleuOptions
from .significance import n_boot, n_trials, resolve_seed
from .stderr_filter import emergency_exit, terminal

__all__ = ["auto_metrics", "build_parser", "carried_columns", "check_args", "check_pair_columns", "disk_full",
           "extract_input_error", "input_spec", "keep_conditions", "key_types", "mtme_columns", "read_files", "run",
           "significance_config", "summary_lines", "typed_baseline"]


def build_parser(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    BeamBleuOptions._add_argparse_args(p)
    g = p.add_argument_group("Beam pipeline options")
    g.add_argument("--runner", default=None,
                   help="Beam runner: the local FnApiRunner by default; dask (Beam's DaskRunner, with "
                        "--dask_client_address=tcp://HOST:8786), PortableRunner, FlinkRunner, SparkRunner, "
                        "DataflowRunner")
    p.epilog = ("Any other Beam pipeline option is passed to Beam, e.g. --direct_num_workers=2 "
                "--direct_running_mode=multi_processing, --dask_client_address=tcp://HOST:8786, "
                "--job_endpoint/--environment_type/--environment_config for portable runners, "
                "--s3_endpoint_url for S3-compatible storage, or --project/--region/--temp_location for Dataflow. "
                "beambleu adds two such options: --dask_stall_timeout=SECONDS (default 120: a dask cluster that makes "
                "no progress that long ends the run) and --object_store_timeout=SECONDS (default 60: how long the "
                "driver waits for the s3:// or gs:// store of an input, an output or --spm-model before the job). "
                "On a cluster, inputs, outputs and --spm-model must be paths every worker can reach (gs://, s3://, "
                "a shared file system). See deploy/ for Dask, Flink, Spark and Dataflow.")
    return p


def check_args(args) -> None:
    if not args.input:
        raise UsageError("--input is required")
    mtme_output = getattr(args, "mtme_output", None)
    if not args.output and not args.groups_output and not args.sentence_output and not mtme_output:
        if args.detach:
            raise UsageError("--detach: nothing would be written nor printed: give --output (and/or "
                             "--groups-output, --sentence-output)")
        if (args.runner or "").lower() in ("dataflowrunner", "dataflow"):
            raise UsageError("--runner DataflowRunner: its workers cannot reach this machine's scratch folder: give "
                             "--output (and/or --groups-output, --sentence-output)")
    if args.reference_columns and args.references_column != "references":
        raise UsageError("give either --references-column or --reference-columns, not both")
    if args.candidate_columns and args.candidate_column != "candidate":
        raise UsageError("give either --candidate-column or --candidate-columns, not both")
    twice = [c for i, c in enumerate(args.candidate_columns or ()) if c in args.candidate_columns[:i]]
    if twice:  # each names a system: the same column twice would be one system counted twice
        raise UsageError(f"--candidate-columns {','.join(args.candidate_columns)}: column {twice[0]!r} is named "
                         "twice (each candidate column is a system)")
    if args.batch_size < 1:
        raise UsageError("--batch-size must be at least 1")
    if args.json_groups_limit < 0:
        raise UsageError("--json-groups-limit must be at least 0")
    if args.paired_bs and args.paired_ar:
        raise UsageError("--paired-bs and --paired-ar: one paired test per run (as in sacrebleu)")
    if args.paired_ar and args.confidence:
        raise UsageError("--paired-ar gives p-values, not intervals: run --confidence or --paired-bs separately")
    if args.paired_bs or args.paired_ar:
        test = "--paired-bs" if args.paired_bs else "--paired-ar"
        if not args.baseline:
            raise UsageError(f"{test} needs --baseline SYSTEM")
        if args.candidate_columns:
            if args.baseline not in args.candidate_columns:
                raise UsageError(f"--baseline {args.baseline}: not one of --candidate-columns "
                                         f"{','.join(args.candidate_columns)}")
        else:
            if not args.id_column:
                raise UsageError(f"{test} in long format needs --id-column: the segment id that is "
                                 "the same for every system, so that their resampling weights are paired")
            if not any(args.system_column in g for g in (args.group_by or [])):
                raise UsageError(f"{test} needs a --group-by that includes --system-column {args.system_column}")
    elif args.baseline:
        raise UsageError("--baseline is for --paired-bs and --paired-ar")
    for flag, given in (("--carry-columns", args.carry_columns), ("--carry-all", args.carry_all),
                        ("--keep", args.keep)):
        if given and not args.sentence_output:
            raise UsageError(f"{flag} is for --sentence-output (the per-pair output)")
    if args.carry_columns and args.carry_all:
        raise UsageError("give either --carry-columns or --carry-all, not both")
    if mtme_output:
        problem = mtme.ref_problem(args.mtme_ref)
        if problem:
            raise UsageError(problem)
        if args.keep and args.sentence_output:
            raise UsageError("--keep with --mtme-output: its .seg.score files need every pair of --sentence-output")
        for c in args.candidate_columns or ():
            if not c or any(ch.isspace() for ch in c):
                raise UsageError(f"--candidate-columns {c!r}: an mt-metrics-eval system name (--mtme-output) cannot "
                                 "be empty or hold whitespace")
    if getattr(args, "tokenize", None) == AUTO and getattr(args, "spm_model", None):
        raise UsageError(f"--spm-model is for the SentencePiece tokenizers; -tok auto chooses among "
                         f"{', '.join(AUTO_TOKENIZERS)}")


def key_types(spec: InputSpec, schema) -> dict:
    """The group table's key columns and their Arrow types, from the input schema: strings (and
    dictionaries of strings) as string, uint64 as uint64, other integers as int64."""
    import pyarrow as pa


    types = {}
    for gs in spec.group_by:
        for c in gs:
            if c in types:
                continue
            if spec.wide and c == "system":
                types[c] = pa.string()
                continue
            t = key_type(schema.field(c).type)  # the group tables' type of the column
            types[c] = pa.string() if t == pa.large_string() else t
    return types


def check_pair_columns(spec: InputSpec, metrics, carry=()) -> None:
    """The per-pair output's columns are the row identity, the group columns, the carried columns
    and each metric's: an input column named like a metric's (``bleu_score``, ``chrf_char1_hyp``,
    ...) or like ``file``/``row`` (when carried) is bad usage, not a column silently replaced."""
    ours = {"file", "row"} | ({"system"} if spec.wide else set())
    theirs = ({spec.id_column} if spec.id_column else set()) | set(spec.group_columns)
    names = [n for m in metrics for n in m.pair_column_names()]
    clash = sorted((ours | theirs | set(carry)) & set(names))
    if clash:
        raise UsageError(f"--sentence-output: column {clash[0]!r} of the input has the name of a per-pair statistic "
                         f"or score of {', '.join(m.name for m in metrics)}; rename it")
    clash = sorted(set(carry) & (ours - theirs))
    if clash:
        raise UsageError(f"--sentence-output: the carried input column {clash[0]!r} has the name of a column "
                         "beambleu writes there; rename it")


def carried_columns(args, spec: InputSpec, schema, where: str) -> tuple:
    """The input columns ``--carry-columns`` (each must be in the input: else bad input naming
    ``where``, a file) or ``--carry-all`` (every column but those the per-pair output has
    anyway; with wide input, the systems' candidate columns too, since each pair is one of them)."""
    if args.carry_all:
        skip = {"file", "row"} | ({"system"} if spec.wide else set())
        return tuple(c for c in schema.names if c not in skip)
    for c in args.carry_columns or ():
        if c not in schema.names:
            raise PipelineInputError(f"{where}: column {c!r} not found (--carry-columns; columns: "
                                     f"{', '.join(schema.names)})")
    return tuple(dict.fromkeys(args.carry_columns or ()))


def keep_conditions(args, metrics) -> tuple:
    """``--keep`` as :class:`beambleu.io.keep.Keep` conditions over the metrics' per-pair columns
    (a metric id alone names its sentence score): bad usage when one is malformed or names
    another column."""
    columns = [n for m in metrics for n in m.pair_column_names()]
    aliases = {m.id: m.column_prefix + "score" for m in metrics}
    try:
        return tuple(parse_keep(text, columns, aliases) for text in args.keep or ())
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def significance_config(args, width: int):
    resolve_seed(args)
    if args.paired_ar:
        return Significance(n_boot=n_trials(args, width), seed=args.seed, paired=True, baseline=args.baseline,
                            system_column=args.system_column, method=RANDOMIZATION, seed_label=args.seed_label)
    return Significance(n_boot=n_boot(args, width), seed=args.seed, paired=args.paired_bs, baseline=args.baseline,
                        system_column=args.system_column, method=BOOTSTRAP, seed_label=args.seed_label)


def typed_baseline(sig, schema):
    """``sig`` with its ``--baseline`` as a value of the system column: an int when the column
    holds integers (the text ``1`` is never equal to the integer 1), or bad usage when it is not
    an integer."""
    import dataclasses

    import pyarrow as pa

    t = schema.field(sig.system_column).type
    if pa.types.is_dictionary(t) or not pa.types.is_integer(t):
        return sig
    try:
        value = int(sig.baseline)
    except ValueError:
        raise UsageError(f"--baseline {sig.baseline!r}: --system-column {sig.system_column!r} holds integers ({t}): "
                         "name one of them") from None
    return dataclasses.replace(sig, baseline=value)


def mtme_columns(args) -> tuple:
    """The (language pair, system) columns of ``--mtme-output``'s scores (wide input: ``system``)."""
    return (getattr(args, "langpair_column", "langpair"),
            "system" if args.candidate_columns else getattr(args, "system_column", "system"))


def input_spec(args) -> InputSpec:
    wide = bool(args.candidate_columns)
    group_by = [tuple(g) for g in (args.group_by or [])]
    mtme_output = getattr(args, "mtme_output", None)
    auto = getattr(args, "tokenize", None) == AUTO and "bleu" in (getattr(args, "metrics", None) or ["bleu"])
    langpair = getattr(args, "langpair_column", "langpair") if auto or mtme_output else None
    if mtme_output:  # the (language pair, system) groups are the .sys.score files' scores
        lp, system = mtme_columns(args)
        if wide:
            group_by.append((lp,))
        elif not any(set(g) == {lp, system} and len(g) == 2 for g in group_by):
            group_by.append((lp, system))
    if wide:
        group_by = [("system",)] + [g if "system" in g else ("system",) + g for g in group_by]
        group_by = list(dict.fromkeys(group_by))
    for gs in group_by:
        if len(set(gs)) != len(gs):
            raise UsageError(f"--group-by {','.join(gs)}: a column appears twice")
    return InputSpec(
        candidate_columns=tuple(args.candidate_columns or [args.candidate_column]),
        references_column=None if args.reference_columns else args.references_column,
        reference_columns=tuple(args.reference_columns) if args.reference_columns else None,
        group_by=tuple(group_by),
        id_column=args.id_column,
        wide=wide,
        langpair_column=langpair,
        name_columns=(mtme_columns(args)[1],) if mtme_output else (),
    )


def auto_metrics(args, make):
    """The metric set ``make()`` gives, with ``-tok auto``: BLEU made with its other options and
    then given a tokenizer per pair (:class:`beambleu.beam.autotok.AutoBleu`); one line says
    that chrF and TER are not affected (as with sacrebleu's ``-l``)."""
    if getattr(args, "tokenize", None) != AUTO:
        return make()
    args.tokenize = None
    try:
        metrics = make()
    finally:
        args.tokenize = AUTO
    others = [m.name for m in metrics if m.id != "bleu"]
    if len(others) == len(metrics):
        print("beambleu: -tok auto chooses BLEU's tokenizer, and BLEU is not computed: it has no effect",
              file=sys.stderr, flush=True)
        return metrics
    if others:
        verb = "is" if len(others) == 1 else "are"
        print(f"beambleu: -tok auto chooses BLEU's tokenizer only; {' and '.join(others)} {verb} computed as "
              "without it (as with sacrebleu's -l)", file=sys.stderr, flush=True)
    return MetricSet([AutoBleu(m) if m.id == "bleu" else m for m in metrics])


#: what the files of a metric's resources() are called in messages
_RESOURCE_NAMES = {"spm_model": "the SentencePiece model"}


def read_files(metrics) -> List[tuple]:
    """The files the metrics read besides the input (a SentencePiece model, given or found in
    sacrebleu's folder), as ``(path, label)`` for :func:`beambleu.io.ownership.check_outputs`: no
    output may be one of them."""
    out = []
    for name, res in metrics.resources().items():
        tok = f" (-tok {res['tokenizer']})" if res.get("tokenizer") else ""
        out.append((res["path"], f"{_RESOURCE_NAMES.get(name, 'the ' + name.replace('_', ' '))} {{path}}{tok}"))
    return out


def extract_input_error(exc: BaseException) -> Optional[str]:
    """Our one-line message, wherever a runner buried it."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, PipelineInputError):
            return exc.message
        m = re.search(re.escape(ERROR_MARK) + r"([^\n]*)", str(exc))
        if m:
            return PipelineInputError(m.group(1)).message
        exc = exc.__cause__ or exc.__context__
    return None


#: OSError numbers of a full disk or an exhausted quota, and their texts (a runner passes a
#: worker's exception on as text)
_FULL = tuple(n for n in (errno.ENOSPC, getattr(errno, "EDQUOT", None)) if n is not None)
_FULL_TEXT = re.compile("|".join(re.escape(f"[Errno {n}] {os.strerror(n)}") for n in _FULL))


def disk_full(exc: BaseException) -> bool:
    """Whether ``exc``, or an exception it was raised from, is a full disk (ENOSPC, EDQUOT), or
    its text says so."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno in _FULL or _FULL_TEXT.search(str(exc)):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def _parent(path: str) -> str:
    sep = "/" if "://" in path else os.sep
    return path.rstrip(sep).rpartition(sep)[0] or sep


def run(args, beam_argv: List[str]) -> int:
    check_args(args)
    mtme_output = getattr(args, "mtme_output", None)
    paths = [*args.input, *(p for p in (args.output, args.groups_output, args.sentence_output, mtme_output) if p)]
    check_store_extras([*paths, *([args.spm_model] if args.spm_model else [])])
    check_groups_output(args.groups_output)
    if wants_dask(args.runner, beam_argv):
        import_dask_runner()
    try:  # a bad value of a Beam option is bad usage, said here: Beam's own parser would exit
        unknown = beam_option_parser().parse_known_args(beam_argv)[1]  # behind the log filter, silently
    except argparse.ArgumentError as exc:
        raise UsageError(str(exc)) from None
    if unknown:
        raise UsageError(f"unknown option(s): {' '.join(unknown)} (see beambleu run --help)")
    opts, runner_obj = pipeline_options(beam_argv, args.runner)
    from apache_beam.io.filesystems import FileSystems
    from apache_beam.options.pipeline_options import TestOptions

    FileSystems.set_options(opts)  # e.g. --s3_endpoint_url, for checking outputs, planning and the model
    # a missing MeCab extra or SentencePiece model fails here, before the job; the store of a
    # gs:// or s3:// model must answer within --object_store_timeout before the model is read
    metrics = auto_metrics(args, lambda: metrics_from_args(args, before_load=lambda models: check_object_stores(
        models, opts)))
    sig = significance_config(args, metrics.width)
    spec = input_spec(args)
    dry_run = opts.view_as(TestOptions).dry_run
    if dry_run and (args.runner or "").lower() not in ("dataflowrunner", "dataflow"):
        raise UsageError("--dry_run is only supported with --runner DataflowRunner")
    check_object_stores(args.input if dry_run else paths, opts)  # a dry run never touches its outputs
    keep = keep_conditions(args, metrics)  # --keep: bad usage before anything is made
    # without any output the job only prints its result: its scratch (the scored parts, the summary)
    # goes to a temporary folder of this machine, which the workers of a local or same-machine runner reach
    scratch = None if any((args.output, args.groups_output, args.sentence_output, mtme_output)) else \
        tempfile.mkdtemp(prefix="beambleu-run-")
    out_cfg = OutputConfig.staged(*(absolute(p) if p else None
                                    for p in (args.output, args.groups_output, args.sentence_output)),
                                  commit_in_job=args.detach, json_groups_limit=args.json_groups_limit,
                                  anchor=scratch and os.path.join(scratch, "result"),
                                  keep=[k.text for k in keep],
                                  mtme_output=absolute(mtme_output) if mtme_output else None,
                                  mtme_ref=getattr(args, "mtme_ref", "refA"),
                                  mtme_columns=mtme_columns(args) if mtme_output else ())
    try:
        if not dry_run:
            check_job_endpoint(opts)
        # no other run may write these outputs while this one runs (a dry run never touches them)
        locks = [] if dry_run else ownership.take_locks(out_cfg.targets())
        guard = _SignalGuard(out_cfg, locks=locks, scratch=scratch)
        try:
            with guard:
                return _run_job(args, beam_argv, spec, metrics, sig, opts, runner_obj, out_cfg, dry_run, guard,
                                keep)
        finally:
            ownership.release_locks(locks)
    finally:
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)


def _run_job(args, beam_argv, spec, metrics, sig, opts, runner_obj, out_cfg, dry_run, guard, keep=()) -> int:
    t0 = time.monotonic()
    the_plan = plan(args.input, spec, input_format=getattr(args, "input_format", "auto"))
    if sig.paired and not spec.wide:
        sig = typed_baseline(sig, the_plan.schema)
    if not dry_run:  # a dry run builds the job but never touches its outputs
        for t in out_cfg.targets():  # what a run that died left: its commit finished or undone, its staging
            ownership.recover_commit(t.path)
            ownership.remove_stale_staging(t.path)
        ownership.check_outputs(out_cfg.targets(), [*the_plan.files, *the_plan.directories, *read_files(metrics)],
                                args.overwrite)
    local = runner_obj is not None and type(runner_obj).__name__ == "FnApiRunner"
    if local:
        scale_local_runner(opts, beam_argv, the_plan.total_rows)
    elif (args.runner or "").lower() in DASK_NAMES:
        partition_dask_input(opts, beam_argv, len(the_plan.items))
    progress = args.progress == "on" or (args.progress == "auto" and local)
    inputs = {**the_plan.summary(), "columns": spec.columns, **metrics.resources()}
    if progress:
        n_files = len(the_plan.files)
        print(f"beambleu: {the_plan.total_rows:,} pairs in {n_files} file{'s' if n_files != 1 else ''}, "
              f"{len(the_plan.items)} row groups; planning took {time.monotonic() - t0:.1f} s",
              file=sys.stderr, flush=True)
    watch = None  # the one progress line of the job (beambleu.beam.progress); a pair is a row and a candidate column
    if args.progress == "on" or (args.progress == "auto" and not args.detach):
        pairs = the_plan.total_rows * len(spec.candidate_columns) if the_plan.total_rows else None
        runner_obj, watch = with_progress(runner_obj, opts, pairs, terminal())
    try:
        layout = results.TableLayout(key_types(spec, the_plan.schema), metrics, sig)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    carry = ()
    if out_cfg.sentence_tmp:
        carry = carried_columns(args, spec, the_plan.schema, the_plan.files[0])
        check_pair_columns(spec, metrics, carry)
    p = beam.Pipeline(runner=runner_obj, options=_OneViewEach.of(opts) if local else opts)
    _ = p | "ScoreJob" >> ScoreJob(the_plan, spec, metrics, sig, layout, out_cfg, inputs, batch_size=args.batch_size,
                                   null_candidate=args.null_candidate, progress=progress, carry=carry,
                                   keep=keep, spread=not (local and one_local_worker(opts)))
    t1 = time.monotonic()
    result = None
    guard.pipeline = p
    try:
        if not dry_run:
            guard.staged = True  # (before: making the staging paths can fail half-way, e.g. on a full disk)
            prepare_staging(out_cfg)
        result = p.run()
        if dry_run:
            print("beambleu: --dry_run: the pipeline was built and validated by the runner, not run",
                  file=sys.stderr, flush=True)
            return 0
        jar = getattr(opts.view_as(PortableOptions), "output_executable_path", None)
        if jar:
            out_cfg.remove_staged()
            print(f"beambleu: the job was written to {jar}, not run; submit that jar to the cluster "
                  f"(see deploy/spark/README.md)", file=sys.stderr, flush=True)
            return 0
        if args.detach:
            job = getattr(result, "job_id", None)
            job = job() if callable(job) else job
            print(f"beambleu: job submitted{f' as {job}' if job else ''}; not waiting (--detach), "
                  f"outputs are written when it finishes", file=sys.stderr, flush=True)
            return 0
        wait_until_finish(result, opts, watch)
        with guard.deferred():  # SIGINT/SIGTERM wait for the renames: all outputs or none
            commit(out_cfg)
            guard.staged = False
    except Exception as exc:
        if guard.staged:
            out_cfg.remove_staged()
        message = extract_input_error(exc)
        if message:
            raise PipelineInputError(message) from None
        if disk_full(exc):
            where = ", ".join(dict.fromkeys(_parent(t.path) for t in out_cfg.targets()))
            raise OutputError(f"no space left on device while writing the outputs in {where}; "
                              "nothing was written") from None
        raise
    finally:
        if not args.detach:
            _close(result)
    _report(result, the_plan.total_rows, time.monotonic() - t1, metrics)
    for line in summary_lines(read_summary(out_cfg), out_cfg):
        print(line, flush=True)
    return 0


class _OneViewEach(PipelineOptions):
    """The local runner's pipeline options, whose view of each options class is made once. Beam
    asks the pipeline's options for a view (``view_as``) a few hundred times while it builds and
    runs a job, and each new view parses every flag again (about 0.08 CPU-s of the command's fixed
    cost); a view holds no value of its own (its values are the options' shared ``_all_options``,
    which a view's changes go to), so one view per class is the same as a new one each time. Only
    for the local runner, whose options never leave this process as Python objects (its worker
    processes get them as Beam's protobuf)."""

    def view_as(self, cls):
        views = self.__dict__.setdefault("_views", {})  # (not __setattr__: that one is for options)
        view = views.get(cls)
        if view is None:
            view = views[cls] = super().view_as(cls)
        return view

    @classmethod
    def of(cls, opts: PipelineOptions) -> "_OneViewEach":
        """``opts`` itself: the same flags and the same values (shared: a change through either is
        seen by both)."""
        new = cls.__new__(cls)
        new.__dict__.update({k: v for k, v in opts.__dict__.items() if k != "_views"})
        return new


class _SignalGuard:
    """SIGINT and SIGTERM while the job runs: remove the staged outputs, stop the runner's
    worker processes, and exit at once (130, 143) with one line. Beam's local runner, left to
    unwind a KeyboardInterrupt, waits forever for its worker processes; so the exit is immediate
    (``os._exit``) once beambleu's own cleanup is done. Inside :meth:`deferred` (the commit) a
    signal waits until the renames are done, so that a run leaves every output or none."""

    def __init__(self, cfg, pipeline=None, locks=(), scratch=None):
        self.cfg, self.pipeline, self.locks, self.scratch = cfg, pipeline, locks, scratch
        self.staged = False
        self._defer = False
        self._pending = None
        self._previous = {}

    def __enter__(self):
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc):
        import signal

        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        return False

    @contextlib.contextmanager
    def deferred(self):
        self._defer = True
        try:
            yield
        finally:
            self._defer = False
            if self._pending is not None:
                self._stop(self._pending, committed=True)

    def _handle(self, signum, frame):
        if self._defer:
            self._pending = signum
            return
        self._stop(signum, committed=False)

    def _stop(self, signum, committed: bool) -> None:
        import signal



        if self.staged and not committed:
            self.cfg.remove_staged()
        release_locks(self.locks)
        _kill_child_processes()
        tempdir = getattr(self.pipeline, "local_tempdir", None)  # Beam's own, removed when run() returns
        for folder in (tempdir, self.scratch):  # and a run without outputs' scratch: the exit skips its finally
            if folder:
                shutil.rmtree(folder, ignore_errors=True)
        name = signal.Signals(signum).name
        what = "the outputs were complete and are in place" if committed else "nothing was written"
        emergency_exit(128 + signum, f"beambleu: interrupted by {name}; {what}")


def _kill_child_processes() -> None:
    """SIGKILL every descendant of this process (the local runner's SDK worker processes)."""
    import signal

    children = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as fh:
                    ppid = int(fh.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    todo, found = [os.getpid()], []
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    for pid in found:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _report(result, total_rows: int, seconds: float, metrics) -> None:
    try:
        from apache_beam.metrics.metric import MetricsFilter

        counters = result.metrics().query(MetricsFilter().with_namespace("beambleu"))["counters"]
        names = ["pairs", "batches", "row_groups", "rows_rejected"] + [m.counter[0] for m in metrics if m.counter]
        values = {name: 0 for name in names}
        for c in counters:
            values[c.key.metric.name] = values.get(c.key.metric.name, 0) + (c.committed or c.attempted or 0)
        shown = ", ".join(f"{k}={v:,}" for k, v in sorted(values.items()))
    except Exception:  # runners without metrics support
        shown = "(metrics not available on this runner)"
    print(f"beambleu: done in {seconds:.1f} s ({total_rows / max(seconds, 1e-9):,.0f} pairs/s); counters: {shown}",
          file=sys.stderr, flush=True)


def _score_line(head: str, d: Dict) -> str:
    """One score of the summary in sacrebleu's text form (the interval and p-value as run's JSON has them)."""
    ci = Interval(d["confidence_mean"], d["confidence_low"], d["confidence_high"], d["confidence_half_width"]) \
        if d.get("confidence") else None
    paired = Paired(d["p_value"], d["difference"]) if d.get("p_value") is not None else None
    line = formats.score_line(head, d["score"], 1, interval=ci, verbose=d.get("verbose_score", ""), paired=paired)
    return f"{line} [{d['confidence_note']}]" if d.get("confidence_note") else line


def summary_lines(summary: Dict, cfg) -> List[str]:
    """What ``beambleu run`` prints on stdout when the job has ended: the corpus score in
    sacrebleu's text form (saying that it pools the groups, when there are), then the first groups,
    and where the rest are."""
    corpus, groups = summary["corpus"], summary["groups"]
    columns = list(dict.fromkeys(c for gs in summary["grouping_sets"] for c in gs["group_by"]))
    pooled = f"corpus (all {corpus['n_pairs']:,} pairs, every {'/'.join(columns)} pooled): " if columns else ""
    lines = [_score_line(f"{pooled}{d['name']}|{d['signature']}", d) for d in score_parts(corpus)]
    for g in groups:
        key = ",".join(f"{c}={'null' if g['key'][c] is None else g['key'][c]}" for c in g["group_by"])
        lines += [_score_line(f"{key}: {d['name']}", d) for d in score_parts(g)]
    filtered = summary.get("sentence_output")
    if filtered:
        lines.append(f"--keep {' and '.join(filtered['keep'])}: {filtered['kept']:,} pairs kept, "
                     f"{filtered['dropped']:,} dropped in {cfg.sentence_output}")
    total = sum(gs["groups"] for gs in summary["grouping_sets"])
    if total > len(groups):  # the group table has every group; without it, the JSON document has
        where = cfg.groups_output or cfg.output or "no output (give --output or --groups-output)"
        lines.append(f"... and {total - len(groups):,} more groups in {where}")
    return lines

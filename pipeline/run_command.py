"""``beambleu run``: score Parquet shards with the Beam pipeline, globally and per group.

Our options are defined by :class:`pipeline.options.BeamBleuOptions`; every other flag must be a
Beam pipeline option (``--runner``, ``--direct_num_workers``, ...), and an unknown flag is an
error rather than silently dropped. Without ``--runner`` the local FnApiRunner is used (not
``DirectRunner``, which first tries to download the Prism binary), with one worker process per
core once the input is large enough to pay for their start-up.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
import uuid
from typing import List, Optional

from .inputs import ERROR_MARK, InputSpec, PipelineInputError
from .runners import (DASK_NAMES, beam_option_parser, close_result as _close, import_dask_runner,
                      partition_dask_input, pipeline_options, scale_local_runner, wants_dask)


def build_parser(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    from .options import BeamBleuOptions

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
                "On a cluster, inputs and outputs must be paths every worker can reach (gs://, s3://, a shared "
                "file system). See deploy/ for Dask, Flink, Spark and Dataflow.")
    return p


def check_args(args) -> None:
    if not args.input:
        raise PipelineInputError("--input is required")
    if not args.output and not args.groups_output and not args.sentence_output:
        raise PipelineInputError("nothing to write: give --output (and/or --groups-output, --sentence-output)")
    if args.reference_columns and args.references_column != "references":
        raise PipelineInputError("give either --references-column or --reference-columns, not both")
    if args.candidate_columns and args.candidate_column != "candidate":
        raise PipelineInputError("give either --candidate-column or --candidate-columns, not both")
    if args.batch_size < 1:
        raise PipelineInputError("--batch-size must be at least 1")
    if args.paired_bs:
        if not args.baseline:
            raise PipelineInputError("--paired-bs needs --baseline SYSTEM")
        if args.candidate_columns:
            if args.baseline not in args.candidate_columns:
                raise PipelineInputError(f"--baseline {args.baseline}: not one of --candidate-columns "
                                         f"{','.join(args.candidate_columns)}")
        else:
            if not args.id_column:
                raise PipelineInputError("--paired-bs in long format needs --id-column: the segment id that is "
                                         "the same for every system, so that their resampling weights are paired")
            if not any(args.system_column in g for g in (args.group_by or [])):
                raise PipelineInputError(f"--paired-bs needs a --group-by that includes --system-column "
                                         f"{args.system_column}")
    elif args.baseline:
        raise PipelineInputError("--baseline is for --paired-bs")


def significance_config(args):
    from .significance import n_boot
    from .transforms import Significance

    return Significance(n_boot=n_boot(args), seed=args.seed, paired=args.paired_bs, baseline=args.baseline,
                        system_column=args.system_column)


def input_spec(args) -> InputSpec:
    wide = bool(args.candidate_columns)
    group_by = [tuple(g) for g in (args.group_by or [])]
    if wide:
        group_by = [("system",)] + [g if "system" in g else ("system",) + g for g in group_by]
        group_by = list(dict.fromkeys(group_by))
    for gs in group_by:
        if len(set(gs)) != len(gs):
            raise PipelineInputError(f"--group-by {','.join(gs)}: a column appears twice")
    return InputSpec(
        candidate_columns=tuple(args.candidate_columns or [args.candidate_column]),
        references_column=None if args.reference_columns else args.references_column,
        reference_columns=tuple(args.reference_columns) if args.reference_columns else None,
        group_by=tuple(group_by),
        id_column=args.id_column,
        wide=wide,
    )


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


def run(args, beam_argv: List[str]) -> int:
    import apache_beam as beam

    from bleu_core import Bleu

    from .inputs import plan
    from .outputs import Finalize, OutputConfig, check_outputs
    from .score_command import metric_from_args
    from .transforms import ComputeBleu, ReadPairs

    check_args(args)
    if wants_dask(args.runner, beam_argv):
        import_dask_runner()
    unknown = beam_option_parser().parse_known_args(beam_argv)[1]
    if unknown:
        raise PipelineInputError(f"unknown option(s): {' '.join(unknown)} (see beambleu run --help)")
    bleu: Bleu = metric_from_args(args)
    sig = significance_config(args)
    bleu.tokenizer  # a missing MeCab extra fails here, before the job
    spec = input_spec(args)
    opts, runner_obj = pipeline_options(beam_argv, args.runner)
    from apache_beam.io.filesystems import FileSystems
    from apache_beam.options.pipeline_options import PortableOptions, TestOptions

    FileSystems.set_options(opts)  # e.g. --s3_endpoint_url, for checking outputs and planning on the driver
    dry_run = opts.view_as(TestOptions).dry_run
    if dry_run and (args.runner or "").lower() not in ("dataflowrunner", "dataflow"):
        raise PipelineInputError("--dry_run is only supported with --runner DataflowRunner")
    from .inputs import absolute

    for name in ("output", "groups_output", "sentence_output"):
        if getattr(args, name):
            setattr(args, name, absolute(getattr(args, name)))
    sentence_tmp = None
    if args.sentence_output:
        sentence_tmp = args.sentence_output.rstrip("/") + f".beambleu-tmp-{uuid.uuid4().hex[:12]}"
    out_cfg = OutputConfig(args.output, args.groups_output, args.sentence_output, sentence_tmp, args.overwrite)
    if not dry_run:  # a dry run builds the job but never touches its outputs
        check_outputs(out_cfg)
    t0 = time.monotonic()
    the_plan = plan(args.input, spec)
    local = runner_obj is not None and type(runner_obj).__name__ == "FnApiRunner"
    if local:
        scale_local_runner(opts, beam_argv, the_plan.total_rows)
    elif (args.runner or "").lower() in DASK_NAMES:
        partition_dask_input(opts, beam_argv, len(the_plan.items))
    progress = args.progress == "on" or (args.progress == "auto" and local)
    inputs = {**the_plan.summary(), "columns": spec.columns}
    if progress:
        print(f"beambleu: {the_plan.total_rows:,} pairs in {len(the_plan.files)} files, "
              f"{len(the_plan.items)} row groups; planning took {time.monotonic() - t0:.1f} s",
              file=sys.stderr, flush=True)
    if sentence_tmp and not dry_run:
        FileSystems.mkdirs(sentence_tmp)
    p = beam.Pipeline(runner=runner_obj, options=opts)
    batches = p | "ReadPairs" >> ReadPairs(the_plan.items, spec.columns, args.batch_size, the_plan.total_rows,
                                           progress)
    computed = batches | "ComputeBleu" >> ComputeBleu(bleu, spec, args.null_candidate, sentence_tmp,
                                                      sig.n_boot, sig.seed)
    if sentence_tmp:
        parts = computed["sentence_parts"] | "PartKeys" >> beam.Map(lambda path: (("__part__", path), None))
        everything = (computed["stats"], parts) | "Flatten" >> beam.Flatten()
    else:
        everything = computed
    _ = (everything
         | "Gather" >> beam.CombineGlobally(beam.combiners.ToListCombineFn()).without_defaults()
         | "Write" >> beam.FlatMap(Finalize(bleu, spec, out_cfg, inputs, sig)))
    t1 = time.monotonic()
    result = None
    try:
        result = p.run()
        if dry_run:
            print("beambleu: --dry_run: the pipeline was built and validated by the runner, not run",
                  file=sys.stderr, flush=True)
            return 0
        jar = getattr(opts.view_as(PortableOptions), "output_executable_path", None)
        if jar:
            print(f"beambleu: the job was written to {jar}, not run; submit that jar to the cluster "
                  f"(see deploy/spark/README.md)", file=sys.stderr, flush=True)
            return 0
        if args.detach:
            job = getattr(result, "job_id", None)
            job = job() if callable(job) else job
            print(f"beambleu: job submitted{f' as {job}' if job else ''}; not waiting (--detach), "
                  f"outputs are written when it finishes", file=sys.stderr, flush=True)
            return 0
        result.wait_until_finish()
    except Exception as exc:
        message = extract_input_error(exc)
        _cleanup(sentence_tmp)
        if message:
            raise PipelineInputError(message) from None
        raise
    finally:
        if not args.detach:
            _close(result)
    _report(result, the_plan.total_rows, time.monotonic() - t1)
    missing = [path for path in (args.output, args.groups_output, args.sentence_output) if path]
    from .outputs import exists

    missing = [m for m in missing if not exists(m)]
    if missing:  # e.g. a runner that dropped the final step: never report success without the files
        raise RuntimeError(f"the job finished but did not write {', '.join(missing)}")
    return 0


def _cleanup(tmp: Optional[str]) -> None:
    if not tmp:
        return
    try:
        from apache_beam.io.filesystems import FileSystems

        if FileSystems.exists(tmp):
            FileSystems.delete([tmp])
    except Exception:  # pragma: no cover - best effort
        pass


def _report(result, total_rows: int, seconds: float) -> None:
    try:
        from apache_beam.metrics.metric import MetricsFilter

        counters = result.metrics().query(MetricsFilter().with_namespace("beambleu"))["counters"]
        values = {name: 0 for name in ("pairs", "candidate_tokens", "batches", "row_groups", "rows_rejected")}
        for c in counters:
            values[c.key.metric.name] = values.get(c.key.metric.name, 0) + (c.committed or c.attempted or 0)
        shown = ", ".join(f"{k}={v:,}" for k, v in sorted(values.items()))
    except Exception:  # runners without metrics support
        shown = "(metrics not available on this runner)"
    print(f"beambleu: done in {seconds:.1f} s ({total_rows / max(seconds, 1e-9):,.0f} pairs/s); counters: {shown}",
          file=sys.stderr, flush=True)

"""Runner-specific set-up: which Beam runner runs the job, and how it is tuned.

Everything that knows about a particular engine (the local FnApiRunner's worker processes,
Beam's DaskRunner and its partitions, closing a runner's client) lives here, so that
``run_command`` only plans, builds the pipeline and reports.
"""

from __future__ import annotations

import argparse
import os
from typing import List, Optional

from .inputs import PipelineInputError

#: below this many pairs one in-process worker is faster than starting worker processes
MULTIPROCESS_THRESHOLD = 2_000_000


#: ``--runner`` names served by Beam's DaskRunner (which Beam cannot find by a short name itself)
DASK_NAMES = ("dask", "daskrunner")


def wants_dask(runner: Optional[str], beam_argv: List[str]) -> bool:
    return (runner or "").lower() in DASK_NAMES or any(a.startswith("--dask_") for a in beam_argv)


def import_dask_runner():
    """Beam's DaskRunner module (it defines the ``--dask_*`` options), or a clear error."""
    try:
        import dask.distributed  # noqa: F401
        from apache_beam.runners.dask import dask_runner
    except ImportError as exc:
        raise PipelineInputError(f"--runner dask needs the dask extra: pip install 'beambleu[dask]' ({exc})") from None
    return dask_runner


def beam_option_parser() -> argparse.ArgumentParser:
    """Every option Beam knows (all PipelineOptions subclasses imported so far)."""
    from apache_beam.options.pipeline_options import PipelineOptions

    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    seen = set()

    def visit(cls):
        for sub in cls.__subclasses__():
            if sub not in seen:
                seen.add(sub)
                try:
                    sub._add_argparse_args(parser)
                except argparse.ArgumentError:
                    pass  # the same option defined by two classes
                visit(sub)

    visit(PipelineOptions)
    return parser


def pipeline_options(beam_argv: List[str], runner: Optional[str]):
    """(PipelineOptions, runner object or None when Beam resolves ``--runner`` by name)."""
    from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions

    opts = PipelineOptions(beam_argv)
    runner_obj = None
    name = (runner or "").lower() or None
    if name is None or name in ("fnapirunner", "fnapi"):
        from apache_beam.runners.portability.fn_api_runner import FnApiRunner

        runner_obj = FnApiRunner()
    elif name in DASK_NAMES:
        runner_obj = import_dask_runner().DaskRunner()
    else:
        opts.view_as(StandardOptions).runner = runner
    return opts, runner_obj


def scale_local_runner(opts, beam_argv: List[str], total_rows: int) -> None:
    """One worker process per core for large inputs on the local runner, unless the user chose."""
    from apache_beam.options.pipeline_options import DirectOptions

    user_set = any(a.startswith(("--direct_num_workers", "--direct_running_mode")) for a in beam_argv)
    if not user_set and total_rows >= MULTIPROCESS_THRESHOLD and (os.cpu_count() or 1) > 1:
        direct = opts.view_as(DirectOptions)
        direct.direct_running_mode = "multi_processing"
        direct.direct_num_workers = os.cpu_count()


#: most dask tasks per stage beambleu asks for: work items beyond this share partitions
DASK_MAX_PARTITIONS = 4096


def partition_dask_input(opts, beam_argv: List[str], n_items: int) -> None:
    """One dask partition (so one task) per row group, unless the user chose.

    Beam's DaskRunner puts 128 created elements in a partition by default, and the reshuffle
    keeps that count: our few hundred row-group work items would all be read by one task on one
    worker while the others idle."""
    if any(a.startswith(("--dask_npartitions", "--dask_partition_size")) for a in beam_argv):
        return
    from apache_beam.runners.dask.dask_runner import DaskOptions

    opts.view_as(DaskOptions).npartitions = max(1, min(n_items, DASK_MAX_PARTITIONS))


def close_result(result) -> None:
    """Disconnect a runner's client (the DaskRunner leaves its dask Client open)."""
    client = getattr(result, "client", None)
    if client is not None and hasattr(client, "close"):
        try:
            client.close()
        except Exception:  # pragma: no cover - best effort
            pass



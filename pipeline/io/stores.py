"""How long ``beambleu run`` waits for what it does not control (a cluster that makes no progress, an
object store that does not answer) before it gives up with one line: :class:`TimeoutOptions`, Beam
pipeline options beside Beam's own ``--dask_*`` and ``--s3_*``. Apache Beam is imported by the
caller (``run``), never by ``score``."""

from __future__ import annotations

from apache_beam.options.pipeline_options import PipelineOptions

from ..errors import positive_seconds

__all__ = ["DASK_STALL_TIMEOUT", "OBJECT_STORE_TIMEOUT", "TimeoutOptions"]

#: defaults of --dask_stall_timeout and --object_store_timeout, in seconds
DASK_STALL_TIMEOUT = 120.0
OBJECT_STORE_TIMEOUT = 60.0


class TimeoutOptions(PipelineOptions):
    """How long ``beambleu run`` waits for a cluster or an object store that makes no progress
    before it gives up with one line: Beam-style options, beside Beam's own ``--dask_*`` and
    ``--s3_*``."""

    @classmethod
    def _add_argparse_args(cls, parser):
        parser.add_argument("--dask_stall_timeout", type=positive_seconds, default=DASK_STALL_TIMEOUT,
                            metavar="SECONDS",
                            help="--runner dask: give up when no worker makes progress for this long (workers "
                                 "stopped, gone or paused under memory pressure) or the scheduler does not answer "
                                 "(default: %(default)g)")
        parser.add_argument("--object_store_timeout", type=positive_seconds, default=OBJECT_STORE_TIMEOUT,
                            metavar="SECONDS",
                            help="give up on an s3:// or gs:// path whose store does not answer within this long "
                                 "before the job starts; retries are announced (default: %(default)g)")

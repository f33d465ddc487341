"""The whole job of ``beambleu run`` as one composite transform, :class:`ScoreJob`: read the planned
row groups, count and combine every metric per (grouping set, shard), score the shards, check that
the paired tests are paired, and write every output to its staging path (the caller commits them,
all or none). ``beambleu run`` builds its pipeline as ``pipeline | ScoreJob(...)``; a user's own
pipeline can apply it the same way."""

from __future__ import annotations

from typing import Dict, Optional, Sequence

import apache_beam as beam

from ..groups.results import Significance, TableLayout
from ..io.inputs import InputSpec, Plan
from ..io.keep import Keep
from ..io.outputs import Finalize, OutputConfig
from .combine import ComputeMetrics, ReadComputeMetrics
from .pairing import CheckSegments
from .read import ReadPairs, spread_items
from .score import ScoreShards

__all__ = ["ScoreJob"]


def _sentence_part(part):
    path, kept, dropped = part
    return "sentence", path, kept, dropped


class ScoreJob(beam.PTransform):
    """PBegin -> the written outputs' summary (one element). ``plan``: the planned input
    (:func:`beambleu.io.inputs.plan`); ``metrics``: a :class:`~bleu_core.protocol.MetricSet`;
    ``sig``: the intervals and paired tests asked for; ``layout``: the group table's columns;
    ``out_cfg``: where each output is staged; ``inputs``: what the result document says of the input;
    ``carry``: input columns the per-pair output carries; ``keep``: its filter (``--keep``);
    ``spread``: reshuffle the work items over the runner's workers (False only for a runner with one
    worker, in this process: :func:`~.read.spread_items`)."""

    def __init__(self, plan: Plan, spec: InputSpec, metrics, sig: Significance, layout: TableLayout,
                 out_cfg: OutputConfig, inputs: Dict, *, batch_size: int, null_candidate: str = "error",
                 progress: bool = False, carry: Sequence[str] = (), keep: Sequence[Keep] = (),
                 spread: bool = True, label: Optional[str] = None):
        super().__init__(label)
        self.plan, self.spec, self.metrics, self.sig, self.layout = plan, spec, metrics, sig, layout
        self.out_cfg, self.inputs = out_cfg, inputs
        self.batch_size, self.null_candidate, self.progress = batch_size, null_candidate, progress
        self.carry, self.keep, self.spread = tuple(carry), tuple(keep), spread

    def expand(self, pbegin):
        spec, sig, out_cfg = self.spec, self.sig, self.out_cfg
        columns = list(dict.fromkeys([*spec.columns, *self.carry]))
        args = (self.metrics, spec, self.null_candidate, out_cfg.sentence_tmp, sig.n_boot, sig.seed,
                sig.system_column, not sig.intervals, self.carry, self.keep)
        check_segments = sig.paired and not spec.wide
        if check_segments:  # the batches have a second consumer
            batches = pbegin | "ReadPairs" >> ReadPairs(self.plan.items, columns, self.batch_size,
                                                        self.plan.total_rows, self.progress, self.spread)
            computed = batches | "ComputeMetrics" >> ComputeMetrics(*args)
        else:  # read and count in one step: no runner holds or moves the batches (ReadAndCount)
            computed = (spread_items(pbegin, self.plan.items, self.spread)
                        | "ComputeMetrics" >> ReadComputeMetrics(columns, self.batch_size, *args))
        stats = computed["stats"] if out_cfg.sentence_tmp else computed
        scored = stats | "ScoreShards" >> beam.ParDo(ScoreShards(self.metrics, spec, sig, self.layout,
                                                                 out_cfg.parts_tmp))
        branches = [scored]
        if out_cfg.sentence_tmp:
            branches.append(computed["sentence_parts"] | "PartPaths" >> beam.Map(_sentence_part))
        if check_segments:  # are the tests paired: every system on the baseline's segments, once
            branches.append(batches | "CheckSegments" >> CheckSegments(spec, sig.system_column))
        if len(branches) > 1:
            scored = tuple(branches) | "Flatten" >> beam.Flatten()
        return (scored  # the corpus accumulator and the paths of the parts: small, whatever the number of groups
                | "Gather" >> beam.CombineGlobally(beam.combiners.ToListCombineFn()).without_defaults()
                | "Write" >> beam.FlatMap(Finalize(spec, out_cfg, self.inputs, sig, self.layout.schema,
                                                  self.metrics)))

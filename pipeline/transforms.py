"""The Beam transforms of every stage, under the name beambleu's first releases had
(``beambleu.transforms.ComputeMetrics``). Each stage's transforms live in its room of
:mod:`beambleu.beam` (read, count, combine, score, pairing); this module only re-exports them."""

from .beam.combine import ComputeBleu, ComputeMetrics, GroupTableAccumulator, GroupTableCombineFn
from .beam.count import CORPUS_KEY, N_SHARDS, NAMESPACE, BatchToStats, StatsConfig, corpus_table
from .beam.job import ScoreJob
from .beam.pairing import CheckSegments, SegmentIds
from .beam.read import ReadPairs, ReadRowGroups
from .beam.score import ScoreShards, score_groups
from .groups.results import Significance, as_metric_set, bleu_dict, group_doc

__all__ = ["CORPUS_KEY", "N_SHARDS", "NAMESPACE", "BatchToStats", "CheckSegments", "ComputeBleu", "ComputeMetrics",
           "GroupTableAccumulator", "GroupTableCombineFn", "ReadPairs", "ReadRowGroups", "ScoreJob", "ScoreShards",
           "SegmentIds", "Significance", "StatsConfig", "as_metric_set", "bleu_dict", "corpus_table", "group_doc",
           "score_groups"]

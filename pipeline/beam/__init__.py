"""The Beam stages, one module each, in data-path order: ``read`` (planned row groups to Arrow
batches), ``count`` (batches to accumulators), ``combine`` (one commutative CombineFn, and
``ComputeMetrics``: count and combine), ``score`` (combined shards to scored parts), ``pairing``
(are the paired tests paired); ``job`` (``ScoreJob``: the whole job of ``beambleu run`` as one
composite) and ``runners`` (engine set-up and waiting); ``lean`` imports Beam for the ``run``
command's own process, without the client libraries its job does not use. Importing the package
drops Beam's import-time "apitools not found" warning (:mod:`.quiet`), before any of them imports
Beam."""

from .quiet import drop_import_chatter

__all__: list = []

drop_import_chatter()

"""The read stage's element coder: what Beam's byte counters cost.

Every runner samples the size of the elements a step outputs (Beam's "sampled byte size"
counters): with no coder of its own, an element is sized by encoding it, and the read stage's
``(source, first_row, RecordBatch)`` triples are pickled whole for that (16,384 pairs: about 6 MB
and 12 ms each, most of the pipeline's cost at the stage boundaries, though the element then goes
to the count stage in the same process without being encoded). :class:`BatchTripleCoder` encodes
as Beam's pickling coder does (where a runner really moves the batch, nothing changes) and sizes
a triple by its Arrow buffers instead."""

from __future__ import annotations

import pickle

import apache_beam as beam
import pyarrow as pa

__all__ = ["BatchTriple", "BatchTripleCoder"]


class BatchTriple:
    """The read stage's element type, a type hint only: the elements are plain
    ``(source, first_row, RecordBatch)`` tuples."""


class BatchTripleCoder(beam.coders.Coder):
    """Pickles a ``(source, first_row, RecordBatch)`` triple (as ``beam.coders.PickleCoder``);
    :meth:`estimate_size` reads the batch's buffer sizes instead of encoding it."""

    def encode(self, value) -> bytes:
        return pickle.dumps(value, pickle.HIGHEST_PROTOCOL)

    def decode(self, encoded: bytes):
        return pickle.loads(encoded)

    def is_deterministic(self) -> bool:
        return False

    def estimate_size(self, value) -> int:
        if isinstance(value, tuple) and len(value) == 3 and isinstance(value[2], pa.RecordBatch):
            source, _, batch = value
            return len(str(source)) + 16 + batch.nbytes
        return len(self.encode(value))

    def to_type_hint(self):
        return BatchTriple

    def __eq__(self, other) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self))


beam.coders.registry.register_coder(BatchTriple, BatchTripleCoder)

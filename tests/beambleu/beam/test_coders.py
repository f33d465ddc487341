"""The read stage's element coder: encodes as Beam's pickling coder does, sizes by Arrow buffers,
and is the coder of ReadPairs' output."""

from __future__ import annotations

import pickle

import pytest

beam = pytest.importorskip("apache_beam")
pa = pytest.importorskip("pyarrow")

from beambleu.beam.coders import BatchTriple, BatchTripleCoder  # noqa: E402
from beambleu.beam.read import ReadPairs  # noqa: E402


def triple(n=1000):
    batch = pa.record_batch({"candidate": [f"candidate {i}" for i in range(n)],
                             "references": [[f"reference {i}", None] for i in range(n)]})
    return "some/file.parquet", 4096, batch


def test_round_trip_and_size():
    coder = BatchTripleCoder()
    value = triple()
    back = coder.decode(coder.encode(value))
    assert back[:2] == value[:2] and back[2].equals(value[2])
    assert coder.encode(value) == pickle.dumps(value, pickle.HIGHEST_PROTOCOL)
    # the estimate: the batch's buffers and a little for the source and the row, not an encoding
    size = coder.estimate_size(value)
    assert value[2].nbytes < size < value[2].nbytes + 100
    # anything else is sized by its encoding
    assert coder.estimate_size(("x", 1)) == len(coder.encode(("x", 1)))
    assert coder.get_impl().estimate_size(value) == size


def test_registered_and_used_by_read_pairs():
    assert isinstance(beam.coders.registry.get_coder(BatchTriple), BatchTripleCoder)
    assert BatchTripleCoder() == BatchTripleCoder() and hash(BatchTripleCoder()) == hash(BatchTripleCoder())
    with beam.Pipeline() as p:
        out = p | ReadPairs([], ["candidate", "references"], 100)
        assert out.element_type is BatchTriple
        assert isinstance(beam.coders.registry.get_coder(out.element_type), BatchTripleCoder)

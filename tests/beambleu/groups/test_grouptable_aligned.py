"""grouptable.merge of tables holding the same keys (the accumulators of the same groups, as
--confidence's wide blocks often are): one pass over whole columns, against a hand sum."""

import numpy as np
import pyarrow as pa
import pytest

from beambleu.groups import grouptable as gt


def test_same_keys_add_row_for_row_and_leave_the_inputs_alone():
    keys = pa.table({"system": pa.array(["a", "b", "c"], pa.large_string())})
    # [statistics..., n_pairs, nrefs_min, nrefs_max]: all add but the last two (min, max)
    a = np.array([[1, 2, 3, 4, 1, 2], [5, 0, 7, 1, 2, 2], [0, 0, 0, 1, 1, 1]], dtype=np.int64)
    b = np.array([[10, 20, 30, 2, 2, 3], [0, 0, 1, 1, 1, 1], [2**62, 1, 0, 1, 4, 4]], dtype=np.int64)
    left, right = gt.GroupTable(keys, a.copy()), gt.GroupTable(keys, b.copy())
    merged = gt.merge([left, right])
    assert merged.keys.equals(keys)
    assert merged.accs.tolist() == [[11, 22, 33, 6, 1, 3], [5, 0, 8, 2, 1, 2], [2**62, 1, 0, 2, 1, 4]]
    assert left.accs.tolist() == a.tolist() and right.accs.tolist() == b.tolist()
    assert gt.merge([right, left]).accs.tolist() == merged.accs.tolist()


def test_same_keys_overflow_is_refused_with_the_usual_message():
    keys = pa.table({"k": ["x", "y"]})
    a = gt.GroupTable(keys, np.array([[1, 1, 1, 1], [2**62, 1, 1, 1]], dtype=np.int64))
    with pytest.raises(OverflowError, match="a group's statistics overflow 64-bit integers"):
        gt.merge([a, a])

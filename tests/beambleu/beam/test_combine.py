"""The pipeline's CombineFn on real statistics: any partition, any order, the corpus score; ComputeBleu in a
user's pipeline."""

import random
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest

beam = pytest.importorskip("apache_beam")

from bleu_core import Bleu, corpus_bleu  # noqa: E402
from beambleu.groups import accumulate as acc_ops  # noqa: E402
from beambleu.beam.combine import GroupTableCombineFn  # noqa: E402
from beambleu.transforms import CORPUS_KEY, ComputeBleu, bleu_dict, corpus_table  # noqa: E402

from ...oracle import REPO  # noqa: E402
from ...strategies import corpus  # noqa: E402
from hypothesis import given, settings, strategies as st  # noqa: E402


def _combine_partitioned(fn, elements, rng):
    """Split into random partitions, accumulate each in random order, merge in random order."""
    elements = list(elements)
    rng.shuffle(elements)
    cuts = sorted(rng.sample(range(len(elements) + 1), k=min(3, len(elements) + 1)))
    parts = [elements[a:b] for a, b in zip([0] + cuts, cuts + [len(elements)])]
    accs = []
    for part in parts:
        a = fn.create_accumulator()
        if rng.random() < 0.5:
            a = fn.add_inputs(a, part)
        else:
            for e in part:
                a = fn.add_input(a, e)
        accs.append(fn.compact(a))
    rng.shuffle(accs)
    while len(accs) > 1:  # a random merge tree
        i = rng.randrange(len(accs) - 1)
        accs[i:i + 2] = [fn.merge_accumulators([accs[i], accs[i + 1]])]
    return fn.extract_output(accs[0] if accs else fn.create_accumulator())


@settings(max_examples=100, deadline=None)
@given(data=corpus(max_pairs=10), seed=st.integers(0, 2**32 - 1))
def test_any_partition_any_order_same_result(data, seed):
    cands, refs = data
    bleu = Bleu()
    rows = bleu.batch_stats(cands, refs)
    nrefs = np.array([sum(r is not None for r in rr) for rr in refs])
    elements = [corpus_table(acc_ops.from_rows(rows[i:i + 1], nrefs[i:i + 1])) for i in range(len(rows))]
    fn = GroupTableCombineFn()
    reference = _combine_partitioned(fn, elements, random.Random(0))
    for k in range(3):
        got = _combine_partitioned(fn, elements, random.Random(seed + k))
        np.testing.assert_array_equal(got.accs, reference.accs)
    doc = bleu_dict(bleu, reference.accs[0])
    assert doc["n_pairs"] == len(cands) and [s["metric"] for s in doc["scores"]] == ["bleu"]
    assert doc["scores"][0]["score"] == corpus_bleu(cands, refs).score


def test_compute_bleu_in_a_user_pipeline():
    from apache_beam.runners.portability.fn_api_runner import FnApiRunner
    from apache_beam.testing.util import assert_that, equal_to

    batches = [pa.record_batch({"candidate": ["the cat is on mat"], "references": [["the cat is on the mat"]]}),
               pa.record_batch({"candidate": ["red red red blue", "cat"],
                                "references": [["red blue green white"], ["cat"]]})]
    expected = corpus_bleu(["the cat is on mat", "red red red blue", "cat"],
                           [["the cat is on the mat"], ["red blue green white"], ["cat"]]).score
    bleu = Bleu()
    with beam.Pipeline(runner=FnApiRunner()) as p:
        scores = (p | beam.Create(batches) | ComputeBleu(bleu)
                  | beam.Map(lambda kv: (kv[0], bleu_dict(bleu, kv[1].accs[0])["scores"][0]["score"])))
        assert_that(scores, equal_to([(CORPUS_KEY, expected)]))


def test_cli_error_is_one_line_on_stderr(tmp_path):
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"candidate": ["a", None], "references": [["a"], ["b"]]}), tmp_path / "x.parquet")
    out = subprocess.run([sys.executable, "-m", "beambleu.cli", "run", "--input", str(tmp_path / "*.parquet"),
                          "--output", str(tmp_path / "r.json")], capture_output=True, text=True, cwd=REPO)
    lines = [line for line in out.stderr.splitlines() if not line.startswith("beambleu: ") or "error" in line]
    assert out.returncode == 1 and out.stdout == ""
    assert lines == [f"beambleu: error: {tmp_path}/x.parquet: row 1, column 'candidate': candidate is null "
                     "(--null-candidate=empty scores it as the empty string)"]
    assert not (tmp_path / "r.json").exists()

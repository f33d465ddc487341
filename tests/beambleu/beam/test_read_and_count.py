"""``beambleu run`` reads and counts in one step (``ReadAndCount``) unless the paired tests' check
needs the batches themselves, spreads the work items over workers only where there are several,
and a Prism job gets ``PRISM_EXPERIMENTS``. The fused step's numbers
are sacrebleu's (run in the test) whatever the batches per work item, and its errors still name
file, row and column."""

from __future__ import annotations

import json
import os

import pytest

pytest.importorskip("apache_beam")

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
import sacrebleu  # noqa: E402

from beambleu.beam.runners import PRISM_EXPERIMENTS, pipeline_options  # noqa: E402

from ...pipeline_helpers import run_cli  # noqa: E402

CANDS = ["the cat sat on the mat", "a dog , barking .", "", "hello world !", "one two three four five",
         "it is raining", "same same", "x y z"]
REFS = ["the cat sat on a mat", "the dog barked .", "nothing here", "hello , world", "one two three five four",
        "it rains", "same", "x y z"]


def _corpus(tmp_path, row_group_size=3):
    systems = {"alpha": CANDS, "beta": [c.upper() for c in CANDS]}
    rows = [{"candidate": c, "references": [r], "system": s, "line": i}
            for s, cands in systems.items() for i, (c, r) in enumerate(zip(cands, REFS))]
    path = tmp_path / "pairs.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=row_group_size)
    return path, systems


def test_fused_counts_are_sacrebleus_with_several_batches_per_item(tmp_path):
    """Row groups of 3 rows read in batches of 2: each work item's accumulators are summed from
    two batches before they leave the step; corpus and per-system BLEU and chrF are sacrebleu's."""
    path, systems = _corpus(tmp_path)
    out = tmp_path / "r.json"
    rc, _, err = run_cli("--input", str(path), "--output", str(out), "--metrics", "bleu,chrf",
                         "--group-by", "system", "--batch-size", "2", "--progress", "off")
    assert rc == 0, err
    doc = json.loads(out.read_text())
    all_cands = [c for cands in systems.values() for c in cands]
    want = {"BLEU": sacrebleu.corpus_bleu(all_cands, [REFS * 2]).score,
            "chrF2": sacrebleu.corpus_chrf(all_cands, [REFS * 2]).score}
    assert {s["name"]: s["score"] for s in doc["corpus"]["scores"]} == pytest.approx(want, abs=0, rel=0)
    groups = doc["groups"]
    assert len(groups) == 2
    for g in groups:
        cands = systems[g["key"]["system"]]
        got = {s["name"]: s["score"] for s in g["scores"]}
        assert got == {"BLEU": sacrebleu.corpus_bleu(cands, [REFS]).score,
                       "chrF2": sacrebleu.corpus_chrf(cands, [REFS]).score}


def test_fused_error_names_file_row_and_column(tmp_path):
    """A null candidate in the second batch of the third row group: the row counted in the file."""
    path, _ = _corpus(tmp_path)
    table = pq.read_table(path)
    cands = table.column("candidate").to_pylist()
    cands[7] = None
    pq.write_table(table.set_column(0, "candidate", pa.array(cands, pa.string())), path, row_group_size=3)
    rc, _, err = run_cli("--input", str(path), "--output", str(tmp_path / "r.json"), "--batch-size", "2",
                         "--progress", "off")
    assert rc == 1
    assert f"{path}: row 7, column 'candidate': candidate is null" in err, err


def _labels(tmp_path, *flags):
    """The step labels of ``run``'s pipeline (a dry run builds it without running it)."""
    import apache_beam as beam

    seen = []
    real_apply = beam.Pipeline.apply

    def apply(self, transform, pvalueish=None, label=None):
        seen.append(label or transform.label)
        return real_apply(self, transform, pvalueish, label)

    path, _ = _corpus(tmp_path)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(beam.Pipeline, "apply", apply)
        rc, _, err = run_cli("--input", str(path), "--output", str(tmp_path / "r.json"), "--progress", "off",
                             "--overwrite", "--group-by", "system", "--id-column", "line", *flags)
    assert rc == 0, err
    return seen


def test_read_and_count_is_one_step_unless_the_paired_check_needs_the_batches(tmp_path):
    fused = _labels(tmp_path)
    assert "ReadAndCount" in fused and "ReadRowGroups" not in fused and "BatchToStats" not in fused
    paired = _labels(tmp_path, "--paired-bs", "--paired-bs-n", "10", "--baseline", "alpha")
    assert "ReadRowGroups" in paired and "BatchToStats" in paired and "ReadAndCount" not in paired


@pytest.mark.parametrize("flags, spread", [
    ((), False),  # the local runner's default below 2M pairs: one worker, in this process
    (("--direct_running_mode=multi_processing", "--direct_num_workers=2"), True),
    (("--direct_running_mode=multi_threading", "--direct_num_workers=2"), True),
    (("--direct_num_workers=2",), True),
    (("--direct_num_workers=0",), (os.cpu_count() or 1) > 1),  # the runner's "one per core"
    (("--paired-bs", "--paired-bs-n", "10", "--baseline", "alpha"), False),
])
def test_work_items_are_spread_over_workers_only_where_there_are_several(tmp_path, flags, spread):
    labels = _labels(tmp_path, *flags)
    assert "WorkItems" in labels
    assert ("Spread" in labels) is spread


@pytest.mark.parametrize("runner", ["PrismRunner", "prism"])
def test_prism_job_gets_its_experiments(runner):
    from apache_beam.options.pipeline_options import DebugOptions

    opts, _ = pipeline_options(["--experiments=mine"], runner)
    assert opts.view_as(DebugOptions).experiments == ["mine", *PRISM_EXPERIMENTS]
    assert PRISM_EXPERIMENTS == ("prism_disable_sdf_split",)


@pytest.mark.parametrize("runner", ["FlinkRunner", "SparkRunner", "dask", None])
def test_other_runners_get_no_prism_experiment(runner):
    from apache_beam.options.pipeline_options import DebugOptions

    opts, _ = pipeline_options([], runner)
    assert not set(opts.view_as(DebugOptions).experiments or ()) & set(PRISM_EXPERIMENTS)


@pytest.mark.parametrize("systems", [
    ["a", "b", "b"],  # one group past int64
    ["a", "b", "c"],  # groups that fit, not their sum
    ["a", "a", "a"],
])
def test_a_batch_past_int64_is_the_batch_s_error(systems):
    """Statistics whose sum passes 2**63 - 1 (none real text can give: here a metric's statistics are replaced)
    raise the batch's OverflowError naming the statistic, whether one group or only the batch overflows; never a
    wrapped sum."""
    import numpy as np

    from bleu_core import Bleu
    from beambleu.io.inputs import InputSpec
    from beambleu.transforms import BatchToStats, ComputeMetrics

    class Huge(BatchToStats):
        def _statistics(self, source, first_row, batch, refs, need_rows, codes=None):
            return [("candidate", np.full((batch.num_rows, 10), 2**62, np.int64))]

    counter = Huge(ComputeMetrics([Bleu()], InputSpec(group_by=(("system",),))).config)
    counter.setup()
    batch = pa.record_batch({"candidate": pa.array(["a"] * 3), "references": pa.array([["a"]] * 3),
                             "system": pa.array(systems)})
    with pytest.raises(OverflowError, match="the statistics of a batch overflows int64: BLEU.c would exceed"):
        list(counter.process(("part.parquet", 0, batch)))

"""Parts (per-pair rows, scored group shards) are written by workers into staging directories the driver
made; a local directory that is gone is never made again. A killed driver's SDK workers can outlive it by
a bundle: had they re-created its staging directory after the next run removed it, a hidden
``.NAME.beambleu-tmp-*`` folder would be left beside the outputs (seen in a `.ci/run` of
test_sigkill_at_any_point...[4.0])."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from beambleu.io.outputs import create_part


def test_a_part_is_written_into_its_directory(tmp_path):
    staged = tmp_path / ".sent.beambleu-tmp-1-0123456789ab"
    staged.mkdir()
    for rows in ([1, 2, 3], [4]):  # a retried bundle writes the same file again
        with create_part(str(staged / "part-x.parquet")) as fh:
            pq.write_table(pa.table({"a": rows}), fh)
    assert pq.read_table(staged / "part-x.parquet").column("a").to_pylist() == [4]


def test_a_directory_that_is_gone_is_not_made_again(tmp_path):
    staged = tmp_path / ".sent.beambleu-tmp-1-0123456789ab"
    with pytest.raises(FileNotFoundError) as info:
        create_part(str(staged / "part-x.parquet"))
    assert str(info.value) == (f"{staged}: the staging directory is gone (its run ended, or a later run removed "
                               "what it left); the part was not written")
    assert list(tmp_path.iterdir()) == []


def test_the_writers_use_it():
    # the two places workers write parts: BatchToStats' per-pair parts and ScoreShards' scored shards
    import inspect

    from beambleu.beam import count, score

    assert "create_part(path)" in inspect.getsource(count.BatchToStats._write_part)
    assert "create_part(path)" in inspect.getsource(score.ScoreShards.process)
    assert "FileSystems.create" not in inspect.getsource(count.BatchToStats._write_part)
    assert "FileSystems.create" not in inspect.getsource(score.ScoreShards.process)

"""`beambleu run` on a real dask cluster started here on loopback (scheduler plus two worker
processes); Prism, Flink and Spark have their own modules (tests/beambleu/beam/test_engine_*.py). Every result
is compared with the local runner's on the same shards; the final output file itself is checked
(the DaskRunner evaluates only the last sink and does not report metrics)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
import time

import pytest

pytest.importorskip("apache_beam")

from ...engines import DaskCluster, beambleu_subprocess  # noqa: E402
from ...oracle import CORPORA  # noqa: E402
from ...pipeline_helpers import bleu_of, comparable, corpus_rows, load, run_cli, write_shards  # noqa: E402

needs_corpora = pytest.mark.skipif(not (CORPORA / "MANIFEST.tsv").exists(), reason="shared corpora not present")
GROUPS = ["--group-by", "system,langpair", "--group-by", "langpair"]


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    if not (CORPORA / "MANIFEST.tsv").exists():
        pytest.skip("shared corpora not present")
    d = tmp_path_factory.mktemp("engine-shards")
    return write_shards(corpus_rows(), d, n_shards=5, row_group_size=2000, shuffle_seed=3)


@pytest.fixture(scope="module")
def local_result(shards, tmp_path_factory):
    out = tmp_path_factory.mktemp("local") / "result.json"
    rc, _, err = run_cli("--input", shards, *GROUPS, "--output", out, "--progress", "off")
    assert rc == 0, err
    return load(out)


@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory):
    pytest.importorskip("distributed")
    with DaskCluster(tmp_path_factory.mktemp("dask"), n_workers=2) as cluster:
        yield cluster


def dask_args(cluster):
    return ["--runner", "dask", f"--dask_client_address={cluster.address}"]


@needs_corpora
def test_dask_cluster_equals_local_runner(shards, local_result, dask_cluster, tmp_path):
    out = tmp_path / "dask.json"
    groups = tmp_path / "groups.csv"
    from distributed import get_task_stream

    with dask_cluster.client() as client:
        with get_task_stream(client) as stream:
            proc = beambleu_subprocess(["run", "--input", shards, *GROUPS, "--output", out, "--groups-output",
                                        groups, *dask_args(dask_cluster)], timeout=300)
        tasks = stream.data
    assert proc.returncode == 0, proc.stderr + dask_cluster.logs()
    assert comparable(load(out)) == comparable(local_result)
    assert groups.read_text().count("\n") == 1 + len(local_result["groups"])
    # one partition per row group, so both worker processes read some (not one task doing all)
    assert len({t["worker"] for t in tasks}) == 2, tasks
    assert "metrics not available" in proc.stderr  # the DaskRunner reports none; we say so


@needs_corpora
def test_dask_relative_paths_resolve_on_the_driver(shards, local_result, dask_cluster, tmp_path):
    """Workers do not share the driver's working directory: local paths are made absolute."""
    cwd = os.path.dirname(shards)
    proc = beambleu_subprocess(["run", "--input", os.path.basename(shards), *GROUPS, "--output", "rel.json",
                                *dask_args(dask_cluster)], cwd=cwd, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert comparable(load(os.path.join(cwd, "rel.json"))) == comparable(local_result)
    os.remove(os.path.join(cwd, "rel.json"))


@needs_corpora
def test_dask_bad_row_fails_with_one_line_and_no_output(dask_cluster, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"candidate": ["fine", None, "x"], "references": [["fine"], ["fine"], ["x"]]})
    pq.write_table(table, tmp_path / "bad.parquet")
    out = tmp_path / "out.json"
    proc = beambleu_subprocess(["run", "--input", tmp_path / "bad.parquet", "--output", out,
                                *dask_args(dask_cluster)], timeout=300)
    assert proc.returncode == 1, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("beambleu: error")]
    assert len(lines) == 1, proc.stderr
    assert "bad.parquet: row 1, column 'candidate': candidate is null" in lines[0], proc.stderr
    assert not out.exists()


@pytest.mark.slow
@needs_corpora
def test_dask_worker_killed_mid_run_gives_identical_result(dask_cluster, tmp_path):
    rows = corpus_rows()
    big = [dict(r, line=r["line"] + 100_000 * k) for k in range(6) for r in rows]  # 138k pairs
    glob = write_shards(big, tmp_path / "big", n_shards=4, row_group_size=4000)
    local_out = tmp_path / "local.json"
    rc, _, err = run_cli("--input", glob, *GROUPS, "--output", local_out, "--progress", "off")
    assert rc == 0, err

    out = tmp_path / "dask.json"
    killed = {}

    def kill_a_busy_worker():
        with dask_cluster.client() as client:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and not killed:
                busy = [w for w, tasks in client.processing().items() if tasks]
                if busy:
                    pids = client.run(os.getpid, workers=[busy[0]])
                    if pids:
                        pid = pids[busy[0]]
                        os.kill(pid, signal.SIGKILL)
                        killed[busy[0]] = pid
                        return
                time.sleep(0.05)

    killer = threading.Thread(target=kill_a_busy_worker)
    killer.start()
    proc = beambleu_subprocess(["run", "--input", glob, *GROUPS, "--output", out, *dask_args(dask_cluster)],
                               timeout=600)
    killer.join()
    assert killed, "no worker was busy: the run ended before one could be killed"
    assert proc.returncode == 0, proc.stderr + dask_cluster.logs()
    assert comparable(load(out)) == comparable(load(local_out))
    assert load(out)["corpus"]["n_pairs"] == len(big)
    # the nanny restarted the killed worker, under a new pid
    with dask_cluster.client() as client:
        client.wait_for_workers(2, timeout=60)
    assert set(dask_cluster.worker_pids().values()).isdisjoint(killed.values())


def test_dask_runner_without_dask_extra_is_a_clear_error(tmp_path, monkeypatch):
    """`--runner dask` in an environment without dask: one line naming the extra, exit 1."""
    code = ("import sys, builtins\n"
            "real = builtins.__import__\n"
            "def fake(name, *a, **k):\n"
            "    if name.split('.')[0] in ('dask', 'distributed'):\n"
            "        raise ImportError('No module named ' + repr(name))\n"
            "    return real(name, *a, **k)\n"
            "builtins.__import__ = fake\n"
            "from beambleu.cli import main\n"
            "sys.exit(main(sys.argv[1:]))\n")
    proc = subprocess.run([sys.executable, "-c", code, "run", "--input", "examples/sample/shards/*.parquet",
                           "--output", str(tmp_path / "o.json"), "--runner", "dask"],
                          capture_output=True, text=True, timeout=120,
                          cwd=str(Path(__file__).resolve().parents[3]))
    assert proc.returncode == 1, proc.stderr
    assert "pip install 'beambleu[dask]'" in proc.stderr
    assert not (tmp_path / "o.json").exists()


@needs_corpora
def test_dask_bootstrap_intervals_equal_the_local_runner(shards, dask_cluster, tmp_path):
    """The replicate weights depend on the row identity (here file and row), not on the runner."""
    args = ["--input", shards, "--group-by", "system,langpair", "--confidence", "--confidence-n", "100"]
    rc, _, err = run_cli(*args, "--output", tmp_path / "local.json", "--progress", "off")
    assert rc == 0, err
    proc = beambleu_subprocess(["run", *args, "--output", tmp_path / "dask.json", *dask_args(dask_cluster)],
                               timeout=300)
    assert proc.returncode == 0, proc.stderr

    def view(doc):
        keys = ("score", "confidence_low", "confidence_high", "confidence_mean", "signature")
        return [bleu_of(doc["corpus"])[k] for k in keys] + [(g["key"], [bleu_of(g)[k] for k in keys])
                                                            for g in doc["groups"]]

    local, dask = load(tmp_path / "local.json"), load(tmp_path / "dask.json")
    assert view(local) == view(dask)
    corpus = bleu_of(local["corpus"])
    assert corpus["confidence_low"] < corpus["score"] < corpus["confidence_high"]


@needs_corpora
@pytest.mark.parametrize("metrics,step,row_group", [("bleu,chrf", 3, 600), ("bleu,ter", 9, 300)])
def test_dask_cluster_metrics_equal_sacrebleu_per_group(dask_cluster, tmp_path, metrics, step, row_group):
    """Two metrics in one pass on the dask cluster, per system and language pair: BLEU with chrF (every
    3rd row: sacrebleu's oracle per group is the cost) and with TER (every 9th: sacrebleu's TER is
    slow). Every group's scores equal sacrebleu's BLEU, CHRF and TER, and TER's edits add up from
    their parts."""
    from sacrebleu.metrics.chrf import CHRF
    from sacrebleu.metrics.ter import TER

    from ...oracle import sacre_corpus, to_streams

    rows = corpus_rows(folders=("wmt22/en-de", "wmt21/en-ha"))[::step]
    shards = write_shards(rows, tmp_path / "shards", n_shards=4, row_group_size=row_group, shuffle_seed=5)
    out = tmp_path / "dask.json"
    proc = beambleu_subprocess(["run", "--input", shards, "--metrics", metrics, "--group-by", "system,langpair",
                                "--output", out, *dask_args(dask_cluster)], timeout=300)
    assert proc.returncode == 0, proc.stderr + dask_cluster.logs()
    doc = load(out)
    assert len(doc["groups"]) == len({(r["system"], r["langpair"]) for r in rows})
    for g in doc["groups"]:
        sel = [r for r in rows if (r["system"], r["langpair"]) == (g["key"]["system"], g["key"]["langpair"])]
        c, rf = [r["candidate"] for r in sel], [r["references"] for r in sel]
        bleu, other = g["scores"]
        assert (bleu["metric"], other["metric"]) == tuple(metrics.split(","))
        assert bleu["name"] == "BLEU" and bleu["score"] == sacre_corpus(c, rf)[0].score
        if metrics == "bleu,chrf":
            assert other["name"] == "chrF2" and other["score"] == CHRF().corpus_score(c, to_streams(rf)).score
        else:
            theirs = TER().corpus_score(c, to_streams(rf))
            assert other["name"] == "TER" and other["score"] == theirs.score
            assert other["num_edits"] == theirs.num_edits
            assert other["edits"] == other["insertions"] + other["deletions"] + other["substitutions"] + other["shifts"]


@needs_corpora
def test_dask_spbleu_model_named_only_by_the_drivers_path(dask_cluster, spm_dir, tmp_path):
    """`-tok flores200` on the dask cluster: the driver finds the model at sacrebleu's place under
    its own $SACREBLEU, which the workers do not have; they load the file from the path the driver
    fixed, once each in setup, and every group equals sacrebleu's spBLEU with that file."""
    pytest.importorskip("sentencepiece")
    import hashlib

    import sacrebleu.tokenizers.tokenizer_spm as sacre_spm

    from ...oracle import sacre_corpus

    with dask_cluster.client() as client:
        worker_env = client.run(lambda: os.environ.get("SACREBLEU"))
    assert set(worker_env.values()) == {None}, worker_env  # the workers cannot find it themselves
    rows = [r for r in corpus_rows(folders=("wmt22/en-zh", "wmt21/xh-zu")) if r["line"] <= 300]
    shards = write_shards(rows, tmp_path / "shards", n_shards=4, row_group_size=800, shuffle_seed=7)
    out = tmp_path / "dask.json"
    proc = beambleu_subprocess(["run", "--input", shards, "-tok", "flores200", "--group-by", "system,langpair",
                                "--output", out, *dask_args(dask_cluster)], env={"SACREBLEU": str(spm_dir)},
                               timeout=300)
    assert proc.returncode == 0, proc.stderr + dask_cluster.logs()
    doc = load(out)
    model = spm_dir / "models" / "flores200sacrebleuspm"
    assert doc["inputs"]["spm_model"]["path"] == str(model)
    assert doc["inputs"]["spm_model"]["sha256"] == hashlib.sha256(model.read_bytes()).hexdigest()
    old = sacre_spm.SACREBLEU_DIR
    sacre_spm.SACREBLEU_DIR = str(spm_dir)
    try:
        assert len(doc["groups"]) == len({(r["system"], r["langpair"]) for r in rows})
        for g in doc["groups"]:
            sel = [r for r in rows if (r["system"], r["langpair"]) == (g["key"]["system"], g["key"]["langpair"])]
            theirs = sacre_corpus([r["candidate"] for r in sel], [r["references"] for r in sel],
                                  tokenize="flores200")[0]
            assert (bleu_of(g)["score"], bleu_of(g)["counts"]) == (theirs.score, list(theirs.counts))
    finally:
        sacre_spm.SACREBLEU_DIR = old


@pytest.mark.parametrize("n_items,threads,expected", [
    (22, 1, 2),  # one worker thread: 2 partitions, not one per row group (22 tasks to schedule, shuffle)
    (22, 2, 4),  # two: 4
    (3, 2, 3),  # fewer row groups than that: one each
    (1, 8, 1),
    (10_000, 4096, 4096),  # never more than DASK_MAX_PARTITIONS
    (22, None, 22),  # a scheduler that did not say: one per row group
])
def test_dask_partitions_follow_the_clusters_threads(n_items, threads, expected, monkeypatch):
    pytest.importorskip("distributed")
    from apache_beam.options.pipeline_options import PipelineOptions
    from apache_beam.runners.dask.dask_runner import DaskOptions

    from beambleu.beam import runners
    from beambleu.beam.runners import partition_dask_input

    monkeypatch.setattr(runners, "DASK_THREADS_SECONDS", 2.0)  # None: asked of a scheduler that is not there
    opts = PipelineOptions(["--dask_client_address=tcp://127.0.0.1:1"])
    partition_dask_input(opts, [], n_items, threads=threads)
    assert opts.view_as(DaskOptions).npartitions == expected


def test_dask_partitions_the_user_chose_are_kept():
    pytest.importorskip("distributed")
    from apache_beam.options.pipeline_options import PipelineOptions
    from apache_beam.runners.dask.dask_runner import DaskOptions

    from beambleu.beam.runners import partition_dask_input

    argv = ["--dask_npartitions=7"]
    opts = PipelineOptions(argv)
    partition_dask_input(opts, argv, 22, threads=1)
    assert opts.view_as(DaskOptions).npartitions == 7


def test_dask_threads_are_the_clusters(dask_cluster, monkeypatch):
    """Two single-threaded workers (tests.engines.DaskCluster): 2 threads; no scheduler there: None."""
    from apache_beam.options.pipeline_options import PipelineOptions

    from beambleu.beam import runners

    assert runners.dask_threads(PipelineOptions([f"--dask_client_address={dask_cluster.address}"])) == 2
    monkeypatch.setattr(runners, "DASK_THREADS_SECONDS", 2.0)
    assert runners.dask_threads(PipelineOptions(["--dask_client_address=tcp://127.0.0.1:1"])) is None

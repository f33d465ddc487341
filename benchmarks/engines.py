"""The same corpus on the local runner, a real dask cluster with 1 and 2 workers, Prism, Flink and Spark.

    python -m benchmarks.engines [--size 1000000] [--rounds 2] [--engines local,dask,prism,flink,spark]

For one Parquet corpus (see ``benchmarks.corpus``; 13a, 1 reference) it runs ``beambleu run``
as a fresh process, each configuration ``--rounds`` times, and reports medians:

* local FnApiRunner in-process, and with 2 worker processes (``multi_processing``);
* ``--runner dask`` against a dask scheduler with 1, then 2, single-threaded worker processes on
  127.0.0.1 (started by ``tests.engines.DaskCluster``, as in the tests).

Wall time is the whole command (interpreter start, planning, job, final write). Fixed start-up
is the same command on a 1,000-pair file; steady throughput is pairs / (full - fixed). For dask,
the CPU seconds each worker process spent during the run are read from the workers themselves,
which shows how evenly dask spread the row groups. Each new cluster first runs the small file once,
unmeasured, so that the workers' one-time imports are not counted. The machine's core count limits what two
workers can gain: the scheduler and the client process share the same cores.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .corpus import build, sized_parser

REPO = Path(__file__).resolve().parents[1]


def run(path, out, extra):
    cmd = [sys.executable, "-m", "beambleu.cli", "run", "--input", str(path), "--output", str(out), "--overwrite",
           "--progress", "off", *extra]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{proc.stderr[-3000:]}")
    return wall, json.loads(Path(out).read_text())["corpus"]["scores"][0]["score"]  # BLEU, the one metric


def worker_cpu(cluster):
    import resource

    def cpu():
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime

    with cluster.client() as client:
        return client.run(cpu)


ENGINES = ("local", "dask", "prism", "flink", "spark")

# engine -> (job service of deploy/engines.py, its --master, runner, extra pipeline options)
PORTABLE = {
    "prism": ("prism", None, "PrismRunner", []),
    "flink": ("flink-job-server", "[local]", "FlinkRunner", ["--parallelism=2"]),
    "spark": ("spark-job-server", "local[2]", "SparkRunner", []),
}


def main(argv=None):
    ap = sized_parser("python -m benchmarks.engines", __doc__)
    ap.add_argument("--engines", default=",".join(ENGINES),
                    help=f"comma-separated, from {', '.join(ENGINES)} (default: all)")
    a = ap.parse_args(argv)
    chosen = [e.strip() for e in a.engines.split(",") if e.strip()]
    if not chosen or set(chosen) - set(ENGINES):
        ap.error(f"--engines: choose from {', '.join(ENGINES)}")
    sys.path.insert(0, str(REPO))
    from tests.engines import DaskCluster, deploy_engines

    big, source = build(a.size, 1, a.workdir, a.corpora)
    tiny, _ = build(1000, 1, a.workdir, a.corpora)
    out = Path(tempfile.mkdtemp()) / "r.json"
    walls, scores, cpu_split = {}, {}, {}

    def measure(name, extra, cluster=None):
        if cluster:  # the workers' first task imports Beam and beambleu: not part of any round
            run(tiny, out, extra)
        for r in range(a.rounds):
            for label, path in (("tiny", tiny), ("full", big)):
                before = worker_cpu(cluster) if cluster else None
                wall, score = run(path, out, extra)
                walls.setdefault((name, label), []).append(wall)
                if label == "full":
                    scores.setdefault(name, set()).add(score)
                    if cluster:
                        after = worker_cpu(cluster)
                        cpu_split.setdefault(name, []).append(
                            sorted((after[w] - before.get(w, 0.0) for w in after), reverse=True))
                print(f"  round {r + 1} {name} {label}: {wall:.2f} s", file=sys.stderr, flush=True)

    measure("local, in-process", [])
    if "local" in chosen:
        measure("local, 2 worker processes", ["--direct_running_mode=multi_processing", "--direct_num_workers=2"])
    for n in (1, 2) if "dask" in chosen else ():
        with DaskCluster(Path(tempfile.mkdtemp(prefix="beambleu-dask-")), n_workers=n) as cluster:
            measure(f"dask, {n} worker{'s' if n > 1 else ''}",
                    ["--runner", "dask", f"--dask_client_address={cluster.address}"], cluster)
    eng = deploy_engines()
    for name in (e for e in chosen if e in PORTABLE):
        service, master, runner, extra = PORTABLE[name]
        state = Path(tempfile.mkdtemp(prefix=f"beambleu-{name}-"))
        t0 = time.perf_counter()
        job = eng.start(service, state, master=master, timeout=300)
        pool = eng.start("worker-pool", state)
        print(f"  {name}: job service up in {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
        try:
            options = ["--runner", runner, f"--job_endpoint=localhost:{job['port']}", "--environment_type=EXTERNAL",
                       f"--environment_config=localhost:{pool['port']}", *extra]
            run(tiny, out, options)  # the pool's first workers import Beam and beambleu: not counted
            measure(f"{name} ({runner})", options)
        finally:
            eng.stop("worker-pool", state)
            eng.stop(service, state)

    med = {k: statistics.median(v) for k, v in walls.items()}
    names = list(dict.fromkeys(k[0] for k in walls))
    n = a.size
    print(f"corpus: {source}, {n:,} pairs (13a, 1 reference), {os.cpu_count()} cores; medians of {a.rounds} rounds")
    print(f"{'':<28} {'wall':>8} {'fixed':>7} {'steady':>8} {'pairs/s (wall)':>15} {'pairs/s (steady)':>17} "
          f"{'vs local':>9}")
    base = med[(names[0], "full")]
    steady = {}
    for name in names:
        w, f = med[(name, "full")], med[(name, "tiny")]
        steady[name] = w - f
        print(f"{name:<28} {w:>7.2f}s {f:>6.2f}s {w - f:>7.2f}s {n / w:>15,.0f} {n / (w - f):>17,.0f} "
              f"{base / w:>8.2f}x")
    if "dask, 1 worker" in steady and "dask, 2 workers" in steady:
        print(f"dask 2 workers vs 1, steady state: {steady['dask, 1 worker'] / steady['dask, 2 workers']:.2f}x")
    for name, splits in cpu_split.items():
        shown = "; ".join("/".join(f"{c:.1f}" for c in s) for s in splits)
        print(f"{name}: CPU seconds per worker process, per round: {shown}")
    same = len({s for v in scores.values() for s in v}) == 1
    print(f"scores identical across every configuration: {same} ({next(iter(scores[names[0]]))!r})")


if __name__ == "__main__":
    main()

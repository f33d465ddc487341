"""The Beam pipeline's cost over bleu_core alone, and its scaling with local worker processes.

    python -m benchmarks.pipeline [--size 1000000] [--rounds 2]
    python -m benchmarks.pipeline --grouped [--sizes 250000,1000000] [--confidence-size 250000] [--rounds 2]
    python -m benchmarks.pipeline --grouped --instructions [--sizes 1000000] [--confidence-size 250000]

For the same Parquet corpus (see ``benchmarks.corpus``) it measures, each in a fresh process:

* ``bleu_core``: ``bleu_core.parquet.parquet_stats`` on the file (the library alone);
* ``beambleu run`` on the local FnApiRunner in-process, and with 1 and 2 worker processes
  (``--direct_running_mode=multi_processing``).

Fixed start-up (interpreter, Beam import, pipeline construction, worker start) is measured by
running the same command on a 1,000-pair file; steady state is the full run minus that. CPU
time includes worker processes (they are waited for, so their time is in RUSAGE_CHILDREN).

``--grouped`` measures the pipeline's own cost (issue 34), on a corpus with a ``system`` column
(``benchmarks.corpus.build(..., systems=True)``), each command in a fresh process, the
configurations interleaved in every round, medians of the child processes' CPU-seconds:

* at each of ``--sizes``: ``beambleu run --group-by system -m bleu chrf`` (in-process) against the
  bare grouped kernel (``grouped_cmd``: the same batches through ``protocol.batch_stats_shared``,
  summed per system with numpy, each group and the corpus scored once: bleu_core alone, no Beam);
  goal <= 1.1x;
* at ``--confidence-size``: the same ``run`` with ``--confidence`` (B = 1000) against it without;
  goal <= 1.5x (``--confidence-size 0``: not measured).

Every command of the benchmark (both modes) runs with one OpenBLAS thread
(``OPENBLAS_NUM_THREADS=1``, as ``beambleu run`` sets for itself unless the user chose), the
library's and the kernel's too: the ratios are the pipeline's own cost.

Both ratios are of whole commands (start-up included), and of the steady state (minus the same
command on 1,000 pairs). The corpus scores (BLEU, chrF) must agree between the kernel and run.
The ``paired`` column is the median of each round's own ratio of the two whole commands, which run
in the same round, a few commands apart at most: this shared machine's speed drifts by 10-20% over
minutes, which moves both commands of a round together but not the medians of separate rounds.

``--grouped --instructions`` counts, instead of CPU-seconds, the instructions of the same run and
kernel commands (at 1,000 pairs and each of ``--sizes``), and of the run with and without
``--confidence`` at ``--confidence-size`` (0: not measured), under valgrind's callgrind: a count that
does not depend on the machine's load, where this shared machine's CPU-seconds vary by 20% from one
run to the next. It takes about 40 times as long (some 5 minutes per command at 1M pairs, two at a
time), counts one process (sizes below the local runner's 2M-pair threshold for worker processes)
and needs ``valgrind`` (``apt-get install valgrind``).
"""

from __future__ import annotations

import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .corpus import build, sized_parser

REPO = Path(__file__).resolve().parents[1]


#: the environment of every command: one OpenBLAS thread for the library and the kernel too, as ``beambleu
#: run`` asks for itself (numpy's import alone makes the extra threads spin for 0.1-0.2 CPU-s), so
#: that the ratio is the pipeline's own cost
ONE_BLAS_THREAD = {**os.environ, "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS", "1")}


def timed(cmd, env=None):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{out.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, out.stdout


def core_cmd(path):
    code = ("import sys; from bleu_core import Bleu; from bleu_core.parquet import parquet_stats; "
            f"s = parquet_stats({str(path)!r}); print(Bleu().score(s).score)")
    return [sys.executable, "-c", code]


def run_cmd(path, out, extra):
    return [sys.executable, "-m", "beambleu.cli", "run", "--input", str(path), "--output", str(out),
            "--overwrite", "--progress", "off", *extra]


def grouped_cmd(path):
    """The bare grouped kernel: BLEU and chrF of every system and of the corpus, bleu_core alone."""
    code = f"""
import numpy as np, pyarrow.compute as pc
from bleu_core import Bleu, Chrf
from bleu_core.parquet import iter_batches
from bleu_core.protocol import MetricSet, batch_stats_shared
metrics = MetricSet([Bleu(), Chrf()])
totals = {{}}
for batch in iter_batches({str(path)!r}, ["candidate", "references", "system"]):
    stats = batch_stats_shared(metrics, batch.column("candidate"), batch.column("references"), per_row=True)
    codes = pc.dictionary_encode(batch.column("system"))
    ids = np.asarray(codes.indices)
    order = np.argsort(ids, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(ids[order]) != 0])
    for name, row in zip(codes.dictionary.take(ids[order][starts]).to_pylist(),
                         np.add.reduceat(stats[order], starts, axis=0)):
        totals[name] = totals[name] + row if name in totals else row
corpus = sum(totals.values())
scores = {{name: [m.score(part).score for m, part in zip(metrics, metrics.split(t))] for name, t in totals.items()}}
print(*[m.score(part).score for m, part in zip(metrics, metrics.split(corpus))])
"""
    return [sys.executable, "-c", code]


def grouped_run_cmd(path, out, extra=()):
    return run_cmd(path, out, ["--group-by", "system", "-m", "bleu", "chrf", *extra])


def run_scores(out):
    return [s["score"] for s in json.loads(out.read_text())["corpus"]["scores"]]


def instructions(cmd):
    """(instructions the command ran, its stdout): ``valgrind --tool=callgrind``'s count over every
    thread of the one process, which does not depend on the machine's load. Worker processes are
    not followed: :func:`grouped` keeps ``--instructions`` to sizes the local runner runs in-process."""
    res = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *cmd],
                         capture_output=True, text=True, cwd=REPO, env={**ONE_BLAS_THREAD, "PYTHONHASHSEED": "0"})
    if res.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{res.stderr[-3000:]}")
    found = re.search(r"Collected : (\d+)", res.stderr)
    if found is None:
        raise SystemExit(f"no instruction count from valgrind for {' '.join(cmd)}")
    return int(found.group(1)), res.stdout


def grouped_instructions(sizes, paths, confidence_size=None):
    """``--grouped --instructions``: the run and the bare grouped kernel at 1,000 pairs and at each
    size, and, with ``confidence_size``, the run with and without ``--confidence`` there, counted by
    callgrind (two at a time: counts do not depend on the load)."""
    from concurrent.futures import ThreadPoolExecutor

    work = Path(tempfile.mkdtemp())
    jobs = []  # (name, size, command, output file or None)
    for n in [1000, *sizes]:
        jobs.append(("kernel", n, grouped_cmd(paths[n][0]), None))
        out = work / f"run-{n}.json"
        jobs.append(("run", n, grouped_run_cmd(paths[n][0], out), out))
    if confidence_size is not None:
        for n in (1000, confidence_size):
            out = work / f"run-confidence-{n}.json"
            jobs.append(("run --confidence", n, grouped_run_cmd(paths[n][0], out, ["--confidence"]), out))
            if n not in (1000, *sizes):
                out = work / f"run-{n}.json"
                jobs.append(("run", n, grouped_run_cmd(paths[n][0], out), out))
    with ThreadPoolExecutor(2) as pool:
        done = list(pool.map(lambda job: instructions(job[2]), jobs))
    count, scores = {}, {}
    for (name, n, _, out), (ir, stdout) in zip(jobs, done):
        count[(name, n)] = ir
        scores[(name, n)] = [float(x) for x in stdout.split()] if name == "kernel" else run_scores(out)
        print(f"  {name} {n:,}: {ir / 1e9:.2f}G instructions", file=sys.stderr)
    same = all(scores[("run", n)] == scores[("kernel", n)] for n in [1000, *sizes])
    if confidence_size is not None:
        same = same and all(scores[("run --confidence", n)] == scores[("run", n)] for n in (1000, confidence_size))
    print(f"corpus: {paths[sizes[0]][1]} pairs with a system column, 1 reference, 13a; instructions of the whole "
          "command (valgrind --tool=callgrind, every thread), PYTHONHASHSEED=0")
    print(f"{'measurement':<46} {'pairs':>9} {'run':>8} {'kernel':>8} {'whole':>7} {'steady':>7}  goal")
    for n in sizes:
        whole = count[("run", n)] / count[("kernel", n)]
        steady = (count[("run", n)] - count[("run", 1000)]) / (count[("kernel", n)] - count[("kernel", 1000)])
        print(f"{'run --group-by system -m bleu chrf / kernel':<46} {n:>9,} {count[('run', n)] / 1e9:>7.2f}G "
              f"{count[('kernel', n)] / 1e9:>7.2f}G {whole:>6.3f}x {steady:>6.3f}x  <= 1.1x")
    if confidence_size is not None:
        n = confidence_size
        whole = count[("run --confidence", n)] / count[("run", n)]
        steady = ((count[("run --confidence", n)] - count[("run --confidence", 1000)])
                  / (count[("run", n)] - count[("run", 1000)]))
        print(f"{'run ... --confidence / run ...':<46} {n:>9,} {count[('run --confidence', n)] / 1e9:>7.2f}G "
              f"{count[('run', n)] / 1e9:>7.2f}G {whole:>6.3f}x {steady:>6.3f}x  <= 1.5x")
    print(f"fixed start-up (1,000 pairs): kernel {count[('kernel', 1000)] / 1e9:.2f}G, run "
          f"{count[('run', 1000)] / 1e9:.2f}G instructions")
    print(f"corpus BLEU and chrF identical between the kernel and every run, per size: {same}")


def grouped(a):
    """``--grouped``: run against the bare grouped kernel, and --confidence against without it."""
    sizes = [int(x) for x in a.sizes.split(",")]
    if a.instructions:
        from beambleu.beam.runners import MULTIPROCESS_THRESHOLD

        confidence = a.confidence_size if a.confidence_size else None
        if any(n >= MULTIPROCESS_THRESHOLD or n <= 1000 for n in [*sizes, *([confidence] if confidence else [])]):
            raise SystemExit(f"--instructions: sizes above 1,000 and below {MULTIPROCESS_THRESHOLD:,} pairs (from "
                             "there the local runner starts worker processes, whose instructions callgrind would "
                             "not count here)")
        paths = {n: build(n, 1, a.workdir, a.corpora, systems=True)
                 for n in sorted({1000, *sizes, *([confidence] if confidence else [])})}
        return grouped_instructions(sizes, paths, confidence)
    confidence = [1000, a.confidence_size] if a.confidence_size else []
    paths = {n: build(n, 1, a.workdir, a.corpora, systems=True) for n in sorted({1000, *confidence, *sizes})}
    source = paths[sizes[0]][1]
    out = Path(tempfile.mkdtemp()) / "r.json"
    configs = []  # (name, size, command)
    for n in [1000, *sizes]:
        configs.append(("kernel", n, grouped_cmd(paths[n][0])))
        configs.append(("run", n, grouped_run_cmd(paths[n][0], out)))
    for n in confidence:
        configs.append(("run --confidence", n, grouped_run_cmd(paths[n][0], out, ["--confidence"])))
        if n not in sizes and n != 1000:
            configs.append(("run", n, grouped_run_cmd(paths[n][0], out)))
    cpu, scores = {}, {}
    for r in range(a.rounds):
        for name, n, cmd in configs:
            wall, c, stdout = timed(cmd, ONE_BLAS_THREAD)
            cpu.setdefault((name, n), []).append(c)
            got = [float(x) for x in stdout.split()] if name == "kernel" else run_scores(out)
            scores.setdefault(n, set()).add(tuple(got))
            print(f"  round {r + 1} {name} {n:,}: {wall:.2f} s wall, {c:.2f} CPU-s", file=sys.stderr)
    med = {k: statistics.median(v) for k, v in cpu.items()}

    def ratio(top, bottom, n):
        whole = med[(top, n)] / med[(bottom, n)]
        steady = (med[(top, n)] - med[(top, 1000)]) / (med[(bottom, n)] - med[(bottom, 1000)])
        paired = statistics.median(t / b for t, b in zip(cpu[(top, n)], cpu[(bottom, n)]))
        return whole, steady, paired

    print(f"corpus: {source} pairs with a system column, 1 reference, 13a; medians of {a.rounds} rounds, "
          "child-process CPU-seconds")
    print(f"{'measurement':<46} {'pairs':>9} {'CPU-s':>7} {'vs':>7} {'whole':>7} {'steady':>7} {'paired':>7}  goal")
    for n in sizes:
        whole, steady, paired = ratio("run", "kernel", n)
        print(f"{'run --group-by system -m bleu chrf / kernel':<46} {n:>9,} {med[('run', n)]:>7.2f} "
              f"{med[('kernel', n)]:>7.2f} {whole:>6.2f}x {steady:>6.2f}x {paired:>6.2f}x  <= 1.1x")
    if confidence:
        n = a.confidence_size
        whole, steady, paired = ratio("run --confidence", "run", n)
        print(f"{'run ... --confidence / run ...':<46} {n:>9,} {med[('run --confidence', n)]:>7.2f} "
              f"{med[('run', n)]:>7.2f} {whole:>6.2f}x {steady:>6.2f}x {paired:>6.2f}x  <= 1.5x")
    print(f"fixed start-up (1,000 pairs): kernel {med[('kernel', 1000)]:.2f} CPU-s, run {med[('run', 1000)]:.2f}"
          + (f", run --confidence {med[('run --confidence', 1000)]:.2f}" if confidence else ""))
    same = all(len(v) == 1 for v in scores.values())
    print(f"corpus BLEU and chrF identical between the kernel and every run, per size: {same} "
          f"({ {n: sorted(v)[0] for n, v in scores.items()} })")


MODES = {
    "in-process": [],
    "1 worker process": ["--direct_running_mode=multi_processing", "--direct_num_workers=1"],
    "2 worker processes": ["--direct_running_mode=multi_processing", "--direct_num_workers=2"],
}


def main(argv=None):
    ap = sized_parser("python -m benchmarks.pipeline", __doc__)
    ap.add_argument("--grouped", action="store_true", help="the pipeline's own cost: grouped run vs the bare grouped "
                    "kernel, and --confidence vs without it (see above)")
    ap.add_argument("--sizes", default="250000,1000000", help="--grouped: the corpus sizes of run vs kernel")
    ap.add_argument("--confidence-size", type=int, default=250_000,
                    help="--grouped: the corpus size of --confidence (0 leaves it out)")
    ap.add_argument("--instructions", action="store_true",
                    help="--grouped: count instructions under valgrind's callgrind instead of timing (sizes from "
                         "1,001 to 1,999,999 pairs; about 40 times slower)")
    a = ap.parse_args(argv)
    if a.grouped:
        return grouped(a)
    big, source = build(a.size, 1, a.workdir, a.corpora)
    tiny, _ = build(1000, 1, a.workdir, a.corpora)
    out = Path(tempfile.mkdtemp()) / "r.json"
    results = {}
    for r in range(a.rounds):
        for name, cmd in [("bleu_core", lambda p: core_cmd(p))] + [
                (m, lambda p, e=e: run_cmd(p, out, e)) for m, e in MODES.items()]:
            for label, path in (("tiny", tiny), ("full", big)):
                wall, cpu, stdout = timed(cmd(path), ONE_BLAS_THREAD)
                results.setdefault((name, label), []).append((wall, cpu))
                print(f"  round {r + 1} {name} {label}: {wall:.2f} s wall, {cpu:.2f} CPU-s", file=sys.stderr)
            if name != "bleu_core":
                score = json.loads(out.read_text())["corpus"]["scores"][0]["score"]  # BLEU, the one metric
                results.setdefault(("score", name), []).append(score)
            else:
                results.setdefault(("score", name), []).append(float(stdout.strip()))
    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
           for k, v in results.items() if k[0] != "score"}
    n = a.size
    print(f"corpus: {source}, {n:,} pairs (13a, 1 reference); medians of {a.rounds} rounds")
    print(f"{'':<22} {'fixed wall':>10} {'fixed CPU':>10} {'steady wall':>12} {'steady CPU':>11} "
          f"{'pairs/s (wall)':>15} {'CPU vs bleu_core':>17}")
    core_steady_cpu = med[("bleu_core", "full")][1] - med[("bleu_core", "tiny")][1]
    steady_wall = {}
    for name in ["bleu_core", *MODES]:
        fw, fc = med[(name, "tiny")]
        w, c = med[(name, "full")]
        sw, sc = w - fw, c - fc
        steady_wall[name] = sw
        print(f"{name:<22} {fw:>9.2f}s {fc:>9.2f}s {sw:>11.2f}s {sc:>10.2f}s {n / sw:>15,.0f} "
              f"{sc / core_steady_cpu:>16.2f}x")
    print(f"pipeline CPU over bleu_core (in-process, steady state): "
          f"{(med[('in-process', 'full')][1] - med[('in-process', 'tiny')][1]) / core_steady_cpu:.2f}x "
          "(target <= 1.25x)")
    print(f"2 workers vs 1 worker, steady-state throughput: "
          f"{steady_wall['1 worker process'] / steady_wall['2 worker processes']:.2f}x (target >= 1.6x)")
    scores = {k[1]: v for k, v in results.items() if k[0] == "score"}
    same = len({s for v in scores.values() for s in v}) == 1
    print(f"scores identical across bleu_core and every mode: {same} ({scores['bleu_core'][0]!r})")


if __name__ == "__main__":
    main()

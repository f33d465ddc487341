"""The Beam pipeline's cost over bleu_core alone, and its scaling with local worker processes.

    python -m benchmarks.pipeline [--size 1000000] [--rounds 2]

For the same Parquet corpus (see ``benchmarks.corpus``) it measures, each in a fresh process:

* ``bleu_core``: ``bleu_core.parquet.parquet_stats`` on the file (the library alone);
* ``beambleu run`` on the local FnApiRunner in-process, and with 1 and 2 worker processes
  (``--direct_running_mode=multi_processing``).

Fixed start-up (interpreter, Beam import, pipeline construction, worker start) is measured by
running the same command on a 1,000-pair file; steady state is the full run minus that. CPU
time includes worker processes (they are waited for, so their time is in RUSAGE_CHILDREN).
"""

from __future__ import annotations

import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .corpus import build, sized_parser

REPO = Path(__file__).resolve().parents[1]


def timed(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
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


MODES = {
    "in-process": [],
    "1 worker process": ["--direct_running_mode=multi_processing", "--direct_num_workers=1"],
    "2 worker processes": ["--direct_running_mode=multi_processing", "--direct_num_workers=2"],
}


def main(argv=None):
    ap = sized_parser("python -m benchmarks.pipeline", __doc__)
    a = ap.parse_args(argv)
    big, source = build(a.size, 1, a.workdir, a.corpora)
    tiny, _ = build(1000, 1, a.workdir, a.corpora)
    out = Path(tempfile.mkdtemp()) / "r.json"
    results = {}
    for r in range(a.rounds):
        for name, cmd in [("bleu_core", lambda p: core_cmd(p))] + [
                (m, lambda p, e=e: run_cmd(p, out, e)) for m, e in MODES.items()]:
            for label, path in (("tiny", tiny), ("full", big)):
                wall, cpu, stdout = timed(cmd(path))
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

"""The same corpus on the local runner, a real dask cluster with 1 and 2 workers, Prism, Flink and Spark.

    python -m benchmarks.engines [--size 1000000] [--rounds 2] [--engines local,dask,prism,flink,spark]
                                 [--variant ENGINE:LABEL=OPTIONS ...]

For one Parquet corpus (see ``benchmarks.corpus``; 13a, 1 reference) it runs ``beambleu run``
as a fresh process, each configuration ``--rounds`` times, and reports medians:

* local FnApiRunner in-process (the baseline, always run), and with 2 worker processes
  (``multi_processing``);
* ``--runner dask`` against a dask scheduler with 1, then 2, single-threaded worker processes on
  127.0.0.1 (started by ``tests.engines.DaskCluster``, as in the tests, and configured as
  ``deploy/dask/start-local-cluster.sh`` configures its workers);
* Prism, Flink (embedded in its job server, ``--parallelism=2``) and Spark (``local[2]``), each
  against its job service from ``deploy/engines.py`` (as ``deploy/*/*.sh`` start it) with an
  external SDK worker pool;
* ``--variant``: the same engine with more pipeline options, on the same services, to try a
  setting against the engine's own configuration in the same run.

Every service is started first; then the rounds go through every configuration in turn, so that
the machine's load (other processes on a shared machine) changes alike for all of them. Each
configuration first runs the small file once, unmeasured, so that the workers' one-time imports
are not counted; a dask cluster also runs the full file once, since the small file (one row group,
one task) reaches one worker only, and a worker's first task (its imports of Beam, beambleu and
the kernels: about 1.5 CPU-seconds and 50k page faults) would otherwise land in the first measured
run of every other worker.

Wall time is the whole command (interpreter start, planning, job, final write). Fixed start-up
is the same command on a 1,000-pair file; steady throughput is pairs / (full - fixed).

CPU and memory are those of every process of the configuration: the ``beambleu run`` process and
its children, and the engine's own services (dask's scheduler and workers with their nannies;
Prism's binary, the Flink or Spark job server's JVM and the SDK worker pool with the workers it
starts). CPU seconds are read from ``/proc`` (user + system, with the children each process has
waited for) before and after each run; *steady pairs per CPU-second* is pairs / (CPU of the full
run - CPU of the 1,000-pair run): the work a configuration costs, which the machine's load
stretches much less than wall time. Memory is the peak, over the full run, of the summed PSS (and
RSS) of all those processes, sampled every 0.2 s. Each row is set against the local in-process
runner of the same run, beside the goals of issue 34 (every engine at least 0.9x local's steady
pairs per CPU-second; Flink's processes at most 1.5 GB). A per-process split of the steady CPU
(full - tiny, by process) shows where each engine's CPU goes, with the system CPU seconds and minor
page faults in it (memory first touched: a process that holds more of the input at once, as a
DaskRunner partition does, faults more pages in); an SDK worker's CPU is counted in its worker
pool's once the pool has reaped it. For dask, the CPU seconds each worker process spent
during the run are read from the workers themselves, which shows how evenly dask spread the row
groups. The machine's core count limits what two workers can gain: the scheduler and the client
process share the same cores.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from .corpus import build, sized_parser

REPO = Path(__file__).resolve().parents[1]


TICK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")

#: issue 34's goals: steady pairs per CPU-second vs local, and (Flink) the memory of all its processes
CPU_GOAL = 0.9
MEMORY_GOAL = {"flink": 1.5e9}


def _stat(pid):
    """(name, parent pid, CPU seconds with waited-for children, RSS bytes, system CPU seconds and
    minor page faults with waited-for children) of one process, or None."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    name = text[text.index("(") + 1:text.rindex(")")]
    f = text.rsplit(")", 1)[1].split()
    return (name, int(f[1]), sum(int(x) for x in f[11:15]) / TICK, int(f[21]) * PAGE,
            (int(f[12]) + int(f[14])) / TICK, int(f[7]) + int(f[8]))


def _tree(roots):
    """{pid: (name, ppid, cpu, rss)} of ``roots`` and all their descendants."""
    stats = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            st = _stat(int(d))
            if st:
                stats[int(d)] = st
    kids = {}
    for pid, st in stats.items():
        kids.setdefault(st[1], []).append(pid)
    out, todo = {}, [r for r in roots if r in stats]
    while todo:
        pid = todo.pop()
        if pid not in out:
            out[pid] = stats[pid]
            todo += kids.get(pid, [])
    return out


def _pss(pid):
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _label(name, pid):
    """A process's name for the CPU split: the Python module or Java main class it runs."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return name
    text = " ".join(a.decode(errors="replace") for a in argv)
    for key, label in (("beambleu.cli", "beambleu run"), ("sdk_worker", "SDK worker"),
                       ("worker_pool_main", "worker pool"), ("dask_scheduler", "dask scheduler"),
                       ("dask_worker", "dask worker"), ("FlinkJobServerDriver", "Flink job server"),
                       ("flink-job-server", "Flink job server"), ("spark-job-server", "Spark job server"),
                       ("multiprocessing", "python (multiprocessing)")):
        if key in text:
            return label
    return name


class Watch:
    """CPU seconds and peak memory of a set of process trees (the services' roots fixed, the
    command's pid added while it runs)."""

    def __init__(self, roots=()):
        self.roots = list(roots)

    def usage(self, extra=()):
        """{label: [CPU seconds, of which system, minor page faults]} over the trees now."""
        split = {}
        for pid, (name, _, cpu, _, system, faults) in _tree([*self.roots, *extra]).items():
            total = split.setdefault(_label(name, pid), [0.0, 0.0, 0])
            total[0] += cpu
            total[1] += system
            total[2] += faults
        return split

    def run(self, cmd):
        """Run ``cmd`` (a list): (wall seconds, CPU split {label: seconds}, {label: (system CPU
        seconds, minor page faults)}, peak PSS, peak RSS, proc)."""
        before = self.usage()
        child0, faults0 = os.times(), resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
        peak = [0, 0]
        done = threading.Event()

        def sample():
            while not done.is_set():
                tree = _tree([*self.roots, proc.pid])
                peak[0] = max(peak[0], sum(_pss(p) for p in tree))
                peak[1] = max(peak[1], sum(st[3] for st in tree.values()))
                done.wait(0.2)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        out, err = proc.communicate()
        wall = time.perf_counter() - t0
        done.set()
        sampler.join()
        child1, faults1 = os.times(), resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt
        after = self.usage()
        zero = [0.0, 0.0, 0]
        delta = {k: [a - b for a, b in zip(after.get(k, zero), before.get(k, zero))] for k in set(after) | set(before)}
        # the command and the children it waited for (its own rusage, counted once it has ended)
        own = delta.setdefault("beambleu run", [0.0, 0.0, 0])
        own[0] += (child1.children_user - child0.children_user) + (child1.children_system - child0.children_system)
        own[1] += child1.children_system - child0.children_system
        own[2] += faults1 - faults0
        split = {k: v[0] for k, v in delta.items()}
        system = {k: (v[1], v[2]) for k, v in delta.items()}
        return wall, split, system, peak[0], peak[1], subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def run(path, out, extra, watch=None):
    """(wall, score, CPU split, system CPU and page faults split, peak PSS, peak RSS) of one ``beambleu run``."""
    cmd = [sys.executable, "-m", "beambleu.cli", "run", "--input", str(path), "--output", str(out), "--overwrite",
           "--progress", "off", *extra]
    wall, split, system, pss, rss, proc = (watch or Watch()).run(cmd)
    if proc.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{proc.stderr[-3000:]}")
    score = json.loads(Path(out).read_text())["corpus"]["scores"][0]["score"]  # BLEU, the one metric
    return wall, score, split, system, pss, rss


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
    ap.add_argument("--variant", action="append", default=[], metavar="ENGINE:LABEL=OPTIONS",
                    help="one more configuration of ENGINE (dask, prism, flink, spark) with more pipeline options, "
                         "measured beside it on the same services, e.g. prism:nosplit='--experiments=x' "
                         "(repeatable)")
    a = ap.parse_args(argv)
    chosen = [e.strip() for e in a.engines.split(",") if e.strip()]
    if not chosen or set(chosen) - set(ENGINES):
        ap.error(f"--engines: choose from {', '.join(ENGINES)}")
    variants = {}  # engine -> [(label, more options)], the engine's own configuration first
    for item in a.variant:
        head, _, opts = item.partition("=")
        engine, _, label = head.partition(":")
        if engine.strip() not in ENGINES[1:] or not label.strip():
            ap.error(f"--variant {item!r}: expected ENGINE:LABEL=OPTIONS with ENGINE one of {', '.join(ENGINES[1:])}")
        variants.setdefault(engine.strip(), []).append((f" [{label.strip()}]", opts.split()))
    sys.path.insert(0, str(REPO))
    from tests.engines import DaskCluster, deploy_engines

    big, source = build(a.size, 1, a.workdir, a.corpora)
    tiny, _ = build(1000, 1, a.workdir, a.corpora)
    out = Path(tempfile.mkdtemp()) / "r.json"
    walls, cpus, splits, systems, peaks, scores, cpu_split = {}, {}, {}, {}, {}, {}, {}

    configs = []  # (name, options, watch, dask cluster or None)

    def measure(r, name, extra, watch, cluster=None):
        for label, path in (("tiny", tiny), ("full", big)):
            before = worker_cpu(cluster) if cluster else None
            wall, score, split, system, pss, rss = run(path, out, extra, watch)
            walls.setdefault((name, label), []).append(wall)
            cpus.setdefault((name, label), []).append(sum(split.values()))
            splits.setdefault((name, label), []).append(split)
            systems.setdefault((name, label), []).append(system)
            if label == "full":
                peaks.setdefault(name, []).append((pss, rss))
                scores.setdefault(name, set()).add(score)
                if cluster:
                    after = worker_cpu(cluster)
                    cpu_split.setdefault(name, []).append(
                        sorted((after[w] - before.get(w, 0.0) for w in after), reverse=True))
            print(f"  round {r + 1} {name} {label}: {wall:.2f} s, {sum(split.values()):.2f} CPU-s, "
                  f"peak PSS {pss / 1e9:.2f} GB", file=sys.stderr, flush=True)

    with contextlib.ExitStack() as stack:
        configs.append(("local, in-process", [], Watch(), None))
        if "local" in chosen:
            configs.append(("local, 2 worker processes",
                            ["--direct_running_mode=multi_processing", "--direct_num_workers=2"], Watch(), None))
        for n in (1, 2) if "dask" in chosen else ():
            cluster = stack.enter_context(DaskCluster(Path(tempfile.mkdtemp(prefix="beambleu-dask-")), n_workers=n))
            for label, more in [("", []), *variants.get("dask", [])]:
                configs.append((f"dask, {n} worker{'s' if n > 1 else ''}{label}",
                                ["--runner", "dask", f"--dask_client_address={cluster.address}", *more],
                                Watch([p.pid for p in cluster.procs]), cluster))
        eng = deploy_engines()
        for name in (e for e in chosen if e in PORTABLE):
            service, master, runner, extra = PORTABLE[name]
            state = Path(tempfile.mkdtemp(prefix=f"beambleu-{name}-"))
            t0 = time.perf_counter()
            job = eng.start(service, state, master=master, timeout=300)
            stack.callback(eng.stop, service, state)
            pool = eng.start("worker-pool", state)
            stack.callback(eng.stop, "worker-pool", state)
            print(f"  {name}: job service up in {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
            options = ["--runner", runner, f"--job_endpoint=localhost:{job['port']}", "--environment_type=EXTERNAL",
                       f"--environment_config=localhost:{pool['port']}", *extra]
            for label, more in [("", []), *variants.get(name, [])]:
                configs.append((f"{name} ({runner}){label}", [*options, *more], Watch([job["pid"], pool["pid"]]),
                                None))
        for name, extra, watch, cluster in configs[1:]:
            # a cluster's or pool's first workers import Beam and beambleu: not part of any round
            run(tiny, out, extra, watch)
            if cluster:  # the tiny file is one task, on one worker: the full one reaches them all
                run(big, out, extra, watch)
        for r in range(a.rounds):  # rounds interleaved: the machine's load changes alike for all
            for name, extra, watch, cluster in configs:
                measure(r, name, extra, watch, cluster)

    med = {k: statistics.median(v) for k, v in walls.items()}
    cpu = {k: statistics.median(v) for k, v in cpus.items()}
    names = list(dict.fromkeys(k[0] for k in walls))
    n = a.size
    print(f"corpus: {source}, {n:,} pairs (13a, 1 reference), {os.cpu_count()} cores; medians of {a.rounds} rounds")
    width = max(28, *(len(x) for x in names))
    print(f"{'':<{width}} {'wall':>8} {'fixed':>7} {'steady':>8} {'pairs/s (steady)':>17} {'vs local':>9}"
          f" {'CPU-s':>7} {'fixed':>7} {'pairs/CPU-s (steady)':>21} {'vs local':>9} {'goal':>6}"
          f" {'peak PSS':>9} {'peak RSS':>9} {'goal':>8}")
    base = n / (cpu[(names[0], "full")] - cpu[(names[0], "tiny")])
    base_wall = med[(names[0], "full")] - med[(names[0], "tiny")]
    steady = {}
    for name in names:
        w, f = med[(name, "full")], med[(name, "tiny")]
        c, cf = cpu[(name, "full")], cpu[(name, "tiny")]
        steady[name] = w - f
        per_cpu = n / (c - cf)
        pss = statistics.median(p for p, _ in peaks[name])
        rss = statistics.median(r for _, r in peaks[name])
        engine = name.split()[0].rstrip(",")
        goal_mem = f"<={MEMORY_GOAL[engine] / 1e9:.1f} GB" if engine in MEMORY_GOAL else ""
        print(f"{name:<{width}} {w:>7.2f}s {f:>6.2f}s {w - f:>7.2f}s {n / (w - f):>17,.0f} {base_wall / (w - f):>8.2f}x"
              f" {c:>7.2f} {cf:>7.2f} {per_cpu:>21,.0f} {per_cpu / base:>8.2f}x {'>=' + str(CPU_GOAL):>6}"
              f" {pss / 1e9:>7.2f}GB {rss / 1e9:>7.2f}GB {goal_mem:>8}")
    print("steady CPU seconds by process (median over rounds of full - tiny; in brackets the system CPU "
          "seconds and minor page faults among them):")
    for name in names:
        labels = set().union(*splits[(name, "full")], *splits[(name, "tiny")])
        parts = []
        for lab in sorted(labels):
            d = statistics.median(fs.get(lab, 0.0) - ts.get(lab, 0.0)
                                  for fs, ts in zip(splits[(name, "full")], splits[(name, "tiny")]))
            pairs = list(zip(systems[(name, "full")], systems[(name, "tiny")]))
            sys_s = statistics.median(fs.get(lab, (0.0, 0))[0] - ts.get(lab, (0.0, 0))[0] for fs, ts in pairs)
            faults = statistics.median(fs.get(lab, (0.0, 0))[1] - ts.get(lab, (0.0, 0))[1] for fs, ts in pairs)
            if abs(d) >= 0.05:
                parts.append(f"{lab} {d:.2f} [{sys_s:.2f} s, {faults / 1e3:,.0f}k faults]")
        print(f"  {name}: {'; '.join(parts)}")
    if "dask, 1 worker" in steady and "dask, 2 workers" in steady:
        print(f"dask 2 workers vs 1, steady state: {steady['dask, 1 worker'] / steady['dask, 2 workers']:.2f}x")
    for name, per_worker in cpu_split.items():
        shown = "; ".join("/".join(f"{c:.1f}" for c in s) for s in per_worker)
        print(f"{name}: CPU seconds per worker process, per round: {shown}")
    same = len({s for v in scores.values() for s in v}) == 1
    print(f"scores identical across every configuration: {same} ({next(iter(scores[names[0]]))!r})")


if __name__ == "__main__":
    main()

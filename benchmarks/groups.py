"""Peak memory of ``beambleu run`` with many distinct groups (``--group-by`` a unique document id).

    python -m benchmarks.groups [--groups 10000,1000000,5000000] [--memory-limit-gb 8]
    python -m benchmarks.groups --quick            # 10k and 100k groups, under a minute

For each number of groups G it writes (or reuses) synthetic Parquet shards of ``2 * G`` pairs
whose column ``doc`` has exactly G distinct values (``d000000042``, or int64 with ``--int-ids``),
the two pairs of a document far apart (row i belongs to document ``i mod G``), so that partial
sums meet only in the combine. Candidates and references are short (3 to 8 words, drawn from
1,000 fixed sentences), so the run is dominated by grouping, not tokenizing. Then it runs

    beambleu run --input SHARDS --group-by doc --output out.json --groups-output groups.parquet

in a fresh process and reports the peak RSS of the whole process tree (the sum over the main
process and any worker processes, sampled every 0.1 s with psutil), the peak of the largest single
process (its exact ``ru_maxrss`` from ``wait4``), wall and CPU time (the tree's, from ``wait4``),
and the sizes of the JSON document and the group table written.

The machine is protected by a watchdog: when the sampled tree RSS exceeds ``--memory-limit-gb``
the whole tree is killed and the run is reported as "exceeded N GB" (an address-space limit such
as ``prlimit --as`` is unreliable with Python's arenas and Beam's threads). The run's temporary
files (its TMPDIR, Beam's log, staged outputs) live in a scratch folder removed afterwards.

Target (issue 10): under 2 GB at 5M groups, growing at most linearly in the group table written.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Tuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .corpus import add_workdir_argument
from .pipeline import REPO, run_cmd

PAIRS_PER_GROUP = 2
SHARD_ROWS = 1_000_000
ROW_GROUP = 100_000
N_SENTENCES = 1_000
SAMPLE_S = 0.1
MB = 1024 * 1024


def sentences(seed: int = 0):
    """N_SENTENCES short candidates (3-8 words of a 300-word vocabulary) and a reference for each
    that keeps about two thirds of its words."""
    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    vocab = ["".join(rng.choice(letters, rng.integers(2, 9))) for _ in range(300)]
    cands, refs = [], []
    for _ in range(N_SENTENCES):
        words = rng.choice(len(vocab), rng.integers(3, 9))
        other = rng.choice(len(vocab), len(words))
        keep = rng.random(len(words)) < 0.67
        cands.append(" ".join(vocab[w] for w in words) + ".")
        refs.append(" ".join(vocab[w if k else o] for w, k, o in zip(words, keep, other)) + ".")
    return pa.array(cands), pa.array(refs)


def build_groups(groups: int, workdir: Path, int_ids: bool) -> Path:
    """Write (or reuse) the shards ``groups-<G>[-int]/part-NNNNN.parquet``; returns the folder.

    Row i is document ``i mod G`` and uses sentence ``(i * 7919) mod N_SENTENCES``; the folder is
    written under a temporary name and renamed when complete."""
    folder = workdir / f"groups-{groups}{'-int' if int_ids else ''}"
    if folder.exists():
        return folder
    tmp = Path(tempfile.mkdtemp(prefix=folder.name + ".", dir=workdir))
    cands, refs = sentences()
    schema = pa.schema([("doc", pa.int64() if int_ids else pa.string()), ("candidate", pa.string()),
                        ("references", pa.list_(pa.string()))])
    rows = PAIRS_PER_GROUP * groups
    try:
        for shard, start in enumerate(range(0, rows, SHARD_ROWS)):
            with pq.ParquetWriter(tmp / f"part-{shard:05d}.parquet", schema) as writer:
                for lo in range(start, min(start + SHARD_ROWS, rows), ROW_GROUP):
                    i = np.arange(lo, min(lo + ROW_GROUP, rows, start + SHARD_ROWS), dtype=np.int64)
                    doc = pa.array(i % groups)
                    if not int_ids:
                        doc = pc.binary_join_element_wise("d", pc.utf8_lpad(doc.cast(pa.string()), 9, "0"), "")
                    pick = pa.array((i * 7919) % N_SENTENCES)
                    ref_lists = pa.ListArray.from_arrays(pa.array(np.arange(len(i) + 1, dtype=np.int32)),
                                                         refs.take(pick))
                    writer.write_table(pa.table([doc, cands.take(pick), ref_lists], schema=schema))
        os.replace(tmp, folder)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # gone already when the rename succeeded
    return folder


@dataclass
class Measured:
    """One capped run: peaks in bytes, times in seconds; ``exceeded`` when the watchdog killed it."""

    returncode: int
    tree_peak: int
    largest_peak: int
    pss_peak: int  # the tree's summed PSS: shared pages counted once, split between the processes
    wall_s: float
    cpu_s: float
    exceeded: bool

    @property
    def peak(self) -> int:
        """The larger of the sampled tree sum and the largest process's exact peak (sampling can miss a spike)."""
        return max(self.tree_peak, self.largest_peak)


def run_capped(cmd: List[str], cap: int, env: dict) -> Measured:
    """Run ``cmd`` (its stderr shown, stdout discarded), sampling the RSS summed over its process tree;
    kill the tree once it exceeds ``cap`` bytes (and again at every sample, should a worker start late), or
    when this process is interrupted."""
    try:
        import psutil
    except ImportError:
        raise SystemExit("benchmarks.groups needs psutil: pip install psutil (the dask extra brings it)") from None
    t0 = time.perf_counter()
    child = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL)
    root = psutil.Process(child.pid)
    tree_peak, pss_peak, exceeded, procs = 0, 0, False, [root]

    def kill_tree():
        for p in reversed(procs):  # workers first, then the main process
            try:
                p.kill()
            except psutil.Error:
                pass

    try:
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            procs = [root]
            try:
                procs += root.children(recursive=True)
            except psutil.Error:
                pass
            rss = pss = 0
            for p in procs:
                try:
                    rss += p.memory_info().rss
                    pss += getattr(p.memory_full_info(), "pss", 0)
                except psutil.Error:
                    pass
            tree_peak = max(tree_peak, rss)
            pss_peak = max(pss_peak, pss)
            exceeded = exceeded or rss > cap
            if exceeded:
                kill_tree()
            time.sleep(SAMPLE_S)
    except BaseException:
        kill_tree()
        child.wait()
        raise
    wall = time.perf_counter() - t0
    child.returncode = os.waitstatus_to_exitcode(status)  # reaped by wait4, not by Popen
    return Measured(child.returncode, tree_peak, usage.ru_maxrss * 1024, pss_peak, wall,
                    usage.ru_utime + usage.ru_stime, exceeded)


@dataclass
class Written:
    """What a run wrote: the JSON's size; the group table's file size, size as Arrow data and rows."""

    json_bytes: int
    table_bytes: int
    table_arrow_bytes: int
    table_rows: int


def written(out: Path, table: Path) -> Written:
    """Sizes of the outputs; the table (a file or a folder of parts) is read batch by batch to size it."""
    parts = [table] if table.is_file() else sorted(table.rglob("*.parquet"))
    arrow_bytes = rows = 0
    for part in parts:
        for batch in pq.ParquetFile(part).iter_batches(batch_size=ROW_GROUP):
            arrow_bytes += batch.nbytes
            rows += batch.num_rows
    return Written(out.stat().st_size, sum(p.stat().st_size for p in parts), arrow_bytes, rows)


def measure(groups: int, shards: Path, workdir: Path, cap: int) -> Tuple[Measured, Optional[Written]]:
    """One ``beambleu run`` over ``shards`` in a scratch folder (outputs, TMPDIR), removed afterwards."""
    scratch = Path(tempfile.mkdtemp(prefix="groups-run.", dir=workdir))
    try:
        out, table = scratch / "out.json", scratch / "groups.parquet"
        cmd = run_cmd(shards / "*.parquet", out, ["--group-by", "doc", "--groups-output", str(table)])
        tmp = scratch / "tmp"
        tmp.mkdir()
        run = run_capped(cmd, cap, {**os.environ, "TMPDIR": str(tmp)})
        if run.exceeded:
            return run, None
        if run.returncode != 0:
            raise SystemExit(f"beambleu run failed with exit code {run.returncode} at {groups:,} groups "
                             "(its stderr is above)")
        return run, written(out, table)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def mb(n: float) -> str:
    return f"{n / MB:,.1f} MB"


def report(rows: List[Tuple[int, Measured, Optional[Written]]], cap_gb: float) -> None:
    base_groups, base, _ = rows[0]
    print(f"{PAIRS_PER_GROUP} pairs per group, 1 short reference, one fresh process tree per run.\n"
          f"peak RSS: the larger of the tree's summed RSS (sampled every {SAMPLE_S} s) and the largest process's "
          "exact ru_maxrss\n(shown as 'largest'); CPU: the tree's (from wait4); runs whose tree exceeded "
          f"{cap_gb:g} GB were killed (wall: until then).\n"
          "table: the group table's file size and its size as Arrow data (read back batch by batch); "
          "RSS/table = peak RSS / table Arrow.\n"
          "tree PSS: the tree's summed proportional set size (shared pages counted once), the memory the run "
          "takes from the machine; the target is checked on it.")
    print(f"{'groups':>10} {'pairs':>11} {'peak RSS':>10} {'largest':>10} {'tree PSS':>10} {'wall':>8} {'CPU':>8} {'JSON':>11} "
          f"{'table file':>11} {'table Arrow':>11} {'table rows':>11} {'RSS/table':>9} {f'vs {base_groups:,}':>9}")
    for groups, m, w in rows:
        peak = f">{cap_gb:g} GB" if m.exceeded else f"{m.peak / MB:,.0f} MB"
        vs_base = "-" if m.exceeded or base.exceeded else f"{m.peak / base.peak:.2f}x"
        cpu = "-" if m.exceeded else f"{m.cpu_s:.1f}s"  # killed workers are not reaped by their parent
        line = (f"{groups:>10,} {PAIRS_PER_GROUP * groups:>11,} {peak:>10} {m.largest_peak / MB:>7,.0f} MB "
                f"{m.pss_peak / MB:>7,.0f} MB "
                f"{m.wall_s:>7.1f}s {cpu:>8} ")
        if w is None:
            line += f"{'-':>11} {'-':>11} {'-':>11} {'-':>11} {'-':>9} {vs_base:>9}  exceeded {cap_gb:g} GB (killed)"
        else:
            line += (f"{mb(w.json_bytes):>11} {mb(w.table_bytes):>11} {mb(w.table_arrow_bytes):>11} "
                     f"{w.table_rows:>11,} {m.peak / w.table_arrow_bytes:>8.1f}x {vs_base:>9}")
        print(line)
    at_5m = [m for groups, m, _ in rows if groups == 5_000_000]
    if not at_5m:
        verdict = "not measured (5M groups not run)"
    else:
        m = at_5m[0]
        verdict = (f"{'met' if not m.exceeded and m.pss_peak < 2 * 1024 * MB else 'not met'} (tree PSS "
                   f"{m.pss_peak / MB:,.0f} MB; summed RSS {m.tree_peak / MB:,.0f} MB)")
    print(f"target: < 2 GB at 5M: {verdict}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.groups", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter, allow_abbrev=False)
    ap.add_argument("--groups", default="10000,1000000,5000000",
                    help="comma-separated numbers of distinct groups (default: %(default)s)")
    ap.add_argument("--memory-limit-gb", type=float, default=8.0,
                    help="kill a run whose process tree exceeds this RSS (default: %(default)s)")
    ap.add_argument("--int-ids", action="store_true", help="an int64 doc column instead of strings")
    ap.add_argument("--quick", action="store_true", help="10k and 100k groups only, to check the benchmark works")
    add_workdir_argument(ap)
    a = ap.parse_args(argv)
    try:
        sizes = sorted({int(g) for g in ("10000,100000" if a.quick else a.groups).split(",")})
    except ValueError:
        ap.error(f"--groups: expected comma-separated integers, got {a.groups!r}")
    if sizes[0] < 1 or a.memory_limit_gb <= 0:
        ap.error("--groups and --memory-limit-gb must be positive")
    cap = int(a.memory_limit_gb * 1024 * MB)
    a.workdir.mkdir(parents=True, exist_ok=True)
    rows = []
    for g in sizes:
        t0 = time.perf_counter()
        shards = build_groups(g, a.workdir, a.int_ids)
        print(f"  {g:,} groups: data in {shards} ({time.perf_counter() - t0:.1f} s)", file=sys.stderr, flush=True)
        m, w = measure(g, shards, a.workdir, cap)
        rows.append((g, m, w))
        print(f"  {g:,} groups: peak {m.peak / MB:,.0f} MB, {m.wall_s:.1f} s"
              + (" (exceeded the cap, killed)" if m.exceeded else ""), file=sys.stderr, flush=True)
    report(rows, a.memory_limit_gb)
    print(f"benchmark process itself: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB peak RSS")


if __name__ == "__main__":
    main()

"""Memory and time of bootstrap confidence intervals: beambleu's Poisson bootstrap in the
pipeline's single pass against sacrebleu's ``--confidence`` (which materialises every resample).

    python -m benchmarks.bootstrap [--sizes 20000,1000000] [--sacrebleu-sizes 20000,50000] [--n 1000]

Each measurement runs in a process of its own and reports its peak RSS (``ru_maxrss``):

* beambleu: ``beambleu run --confidence --confidence-n N`` in-process (the local runner), on the
  benchmark corpus (see ``benchmarks.corpus``; 13a, 1 reference) with a ``bucket`` column of 20
  values added and ``--group-by bucket``, so 21 accumulators of N replicate vectors each;
* sacrebleu 2.6.0: ``BLEU().corpus_score(..., n_bootstrap=N)`` on the same pairs loaded as lists;
  "extra" is its peak minus the RSS after loading.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from .corpus import add_corpus_arguments, build

REPO = Path(__file__).resolve().parents[1]


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def with_buckets(path: Path) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = path.with_name(path.stem + "-buckets.parquet")
    if out.exists():
        return out
    tmp = out.with_suffix(".tmp")
    pf = pq.ParquetFile(path)
    with pq.ParquetWriter(tmp, pf.schema_arrow.append(pa.field("bucket", pa.string()))) as w:
        start = 0
        for i in range(pf.num_row_groups):
            t = pf.read_row_group(i)
            buckets = pa.array([f"b{(start + j) % 20:02d}" for j in range(t.num_rows)])
            w.write_table(t.append_column("bucket", buckets))
            start += t.num_rows
    os.replace(tmp, out)
    return out


def one_beambleu(path: str, n: int) -> dict:
    from beambleu.cli import main

    out = Path(path).with_name(f"bootstrap-result-{os.getpid()}.json")
    c0, w0 = time.process_time(), time.perf_counter()
    rc = main(["run", "--input", path, "--group-by", "bucket", "--confidence", "--confidence-n", str(n),
               "--output", str(out), "--overwrite", "--progress", "off"])
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    if rc != 0:
        raise SystemExit(f"beambleu run failed with {rc}")
    doc = json.loads(out.read_text())
    out.unlink()
    c = doc["corpus"]["scores"][0]  # BLEU, the one metric
    return {"cpu_s": cpu, "wall_s": wall, "peak_rss_mb": rss_mb(), "score": c["score"],
            "interval": [c["confidence_low"], c["confidence_high"]], "groups": len(doc["groups"])}


def one_sacrebleu(path: str, n: int) -> dict:
    import pyarrow.parquet as pq
    from sacrebleu.metrics import BLEU

    t = pq.read_table(path, columns=["candidate", "references"])
    hyps = t.column("candidate").to_pylist()
    refs = [[r[0] for r in t.column("references").to_pylist()]]
    del t
    before = rss_mb()
    c0, w0 = time.process_time(), time.perf_counter()
    score = BLEU().corpus_score(hyps, refs, n_bootstrap=n)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    peak = rss_mb()
    return {"cpu_s": cpu, "wall_s": wall, "peak_rss_mb": peak, "extra_mb": peak - before, "score": score.score,
            "mean": score._mean, "half_width": score._ci}


def measure(impl: str, path: Path, n: int) -> dict:
    proc = subprocess.run([sys.executable, "-m", "benchmarks.bootstrap", "--one", impl, str(path), str(n)],
                          capture_output=True, text=True, cwd=REPO)
    if proc.returncode != 0:
        raise SystemExit(f"{impl} on {path} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks.bootstrap", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="20000,1000000")
    ap.add_argument("--sacrebleu-sizes", default="20000,50000")
    ap.add_argument("--n", type=int, default=1000)
    add_corpus_arguments(ap)
    ap.add_argument("--one", nargs=3, metavar=("IMPL", "PATH", "N"), help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.one:
        impl, path, n = a.one
        print(json.dumps((one_beambleu if impl == "beambleu" else one_sacrebleu)(path, int(n))))
        return
    rows = []
    for size in sorted({int(s) for s in a.sizes.split(",")} | {int(s) for s in a.sacrebleu_sizes.split(",")}):
        path, source = build(size, 1, a.workdir, a.corpora)
        if str(size) in a.sizes.split(","):
            r = measure("beambleu", with_buckets(path), a.n)
            rows.append(("beambleu", size, r))
            print(f"  beambleu {size:,}: {r}", file=sys.stderr, flush=True)
        if str(size) in a.sacrebleu_sizes.split(","):
            r = measure("sacrebleu", path, a.n)
            rows.append(("sacrebleu", size, r))
            print(f"  sacrebleu {size:,}: {r}", file=sys.stderr, flush=True)
    print(f"corpus: {source} (13a, 1 reference); B = {a.n} resamples; one process per measurement")
    print(f"{'':<10} {'pairs':>10} {'peak RSS':>10} {'extra':>9} {'CPU':>8} {'wall':>8}  interval / mean ± half-width")
    for impl, size, r in rows:
        extra = f"{r['extra_mb']:.0f} MB" if "extra_mb" in r else ""
        what = (f"[{r['interval'][0]:.2f}, {r['interval'][1]:.2f}] ({r['groups']} groups)" if impl == "beambleu"
                else f"{r['mean']:.2f} ± {r['half_width']:.2f}")
        print(f"{impl:<10} {size:>10,} {r['peak_rss_mb']:>7.0f} MB {extra:>9} {r['cpu_s']:>7.1f}s {r['wall_s']:>7.1f}s  "
              f"{what}")
    big = [r for impl, s, r in rows if impl == "beambleu" and s >= 1_000_000]
    if big:
        ok = all(r["peak_rss_mb"] < 1024 for r in big)
        print(f"beambleu peak RSS at 1M+ pairs under 1 GB: {ok}")


if __name__ == "__main__":
    main()

"""Speed and memory of bleu_core's batch path, side by side with sacrebleu (and bleuscore).

    python -m benchmarks.core                      # the full suite (about two hours on 2 cores)
    python -m benchmarks.core --quick              # 100k pairs, 13a, chrF, chrF++, 1 reference, 2 rounds
    python -m benchmarks.core --tokenizers chrf,chrf++ --refs 1   # chrF and chrF++ at 100k and 1M

Every measurement runs in a fresh process (``benchmarks._worker``), implementations
alternate within each round, and the table reports medians over rounds: pairs per
CPU-second, the ratio to sacrebleu measured in the same run, peak RSS, the score and whether
it equals sacrebleu's. Targets (from the speed issue) are printed next to the ratios; they
are checked here, never by timed tests.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

from .corpus import add_corpus_arguments, build

TARGETS = {
    # (tokenize, nrefs, size) -> minimum speed-up over sacrebleu
    ("13a", 1, 100_000): 15.0,
    ("13a", 1, 1_000_000): 20.0,
    ("13a", 2, 100_000): 15.0,
    ("13a", 2, 1_000_000): 15.0,
    ("intl", 1, 100_000): 8.0,
    ("zh", 1, 100_000): 8.0,
    ("char", 1, 100_000): 8.0,
    # chrF and chrF++ (issue 11): 30x sacrebleu's CHRF at 100k and 1M pairs
    ("chrf", 1, 100_000): 30.0,
    ("chrf", 1, 1_000_000): 30.0,
    ("chrf++", 1, 100_000): 30.0,
    ("chrf++", 1, 1_000_000): 30.0,
}
#: "tokenizers" that are metrics of their own: measured at every size, against sacrebleu's CHRF
METRICS = ("chrf", "chrf++")


def worker(impl, path, tokenize, batch_size):
    env = dict(os.environ)
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks._worker", impl, str(path), tokenize, "--batch-size", str(batch_size)],
        capture_output=True, text=True, env=env, cwd=Path(__file__).resolve().parents[1],
    )
    if out.returncode != 0:
        raise SystemExit(f"{impl} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def have(module):
    try:
        __import__(module)
        return True
    except ImportError:
        return False


def machine():
    cpu = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores ({cpu}), Python {platform.python_version()}"


def startup():
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import bleu_core"], check=True)
    imp = time.perf_counter() - t0
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    base = time.perf_counter() - t0
    code = ("import time; from bleu_core.tokenizers._unicode import flag_table; t=time.perf_counter(); flag_table();"
            "print(time.perf_counter()-t)")
    table = float(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout)
    return imp - base, table


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks.core", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100000,1000000", help="corpus sizes in pairs (default: %(default)s)")
    ap.add_argument("--refs", default="1,2", help="references per pair (default: %(default)s)")
    ap.add_argument("--tokenizers", default="13a,intl,zh,char,chrf,chrf++",
                    help="BLEU tokenizers (all but 13a run at the smallest size, 1 reference) and the metrics chrf, "
                         "chrf++ (every size and reference count) (default: %(default)s)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds per configuration (default: %(default)s)")
    ap.add_argument("--large-rounds", type=int, default=1,
                    help="rounds for sizes >= 1M, where sacrebleu needs minutes and ~10 GB (default: %(default)s)")
    ap.add_argument("--batch-size", type=int, default=16384, help="rows per Arrow batch (default: %(default)s)")
    add_corpus_arguments(ap)
    ap.add_argument("--synthetic", action="store_true", help="use the synthetic corpus even if corpora exist")
    ap.add_argument("--no-sacrebleu-above", type=int, default=None,
                    help="skip sacrebleu for sizes above this (ratios then missing)")
    ap.add_argument("--quick", action="store_true", help="100k pairs, 13a, chrF, chrF++, 1 reference, 2 rounds")
    a = ap.parse_args(argv)
    if a.quick:
        a.sizes, a.refs, a.tokenizers, a.rounds = "100000", "1", "13a,chrf,chrf++", 2
    sizes = sorted(int(s) for s in a.sizes.split(","))
    refs = [int(r) for r in a.refs.split(",")]
    toks = a.tokenizers.split(",")
    corpora = None if a.synthetic else a.corpora

    print(f"machine: {machine()}")
    imp, table = startup()
    print(f"start-up: import bleu_core {imp:.3f} s (over a bare interpreter); "
          f"intl/zh Unicode table, built once per process: {table:.3f} s")

    configs = [(t, n, s) for t in toks if t == "13a" or t in METRICS for n in refs for s in sizes]
    configs += [(t, 1, sizes[0]) for t in toks if t != "13a" and t not in METRICS]
    rows = []
    for tok, nrefs, size in configs:
        path, source = build(size, nrefs, a.workdir, corpora)
        impls = ["beambleu", "sacrebleu"]
        if tok == "13a" and nrefs == 1 and have("bleuscore"):
            impls.append("bleuscore")
        if tok == "13a" and nrefs == 1 and size == sizes[0]:
            impls += ["beambleu-sentence", "beambleu-normalise", "beambleu-tokenize"]
        if a.no_sacrebleu_above is not None and size > a.no_sacrebleu_above:
            impls.remove("sacrebleu")
        rounds = a.large_rounds if size >= 1_000_000 else a.rounds
        results = {i: [] for i in impls}
        for r in range(rounds):
            order = impls if r % 2 == 0 else impls[::-1]  # alternate
            for impl in order:
                res = worker(impl, path, tok, a.batch_size)
                results[impl].append(res)
                print(f"  [{source} {tok} {nrefs}ref {size:,}] round {r + 1}/{rounds} {impl}: "
                      f"{res['cpu_s']:.2f} CPU-s, {res['peak_rss_mb']:.0f} MB", file=sys.stderr)
        rows.append((tok, nrefs, size, source, results))

    print()
    print(f"{'config':<26} {'implementation':<20} {'pairs/CPU-s':>12} {'vs sacrebleu':>13} {'target':>7} "
          f"{'peak RSS':>9}  score")
    for tok, nrefs, size, source, results in rows:
        med = {i: statistics.median(x["cpu_s"] for x in v) for i, v in results.items()}
        sacre = results.get("sacrebleu")
        sacre_score = sacre[0]["score"] if sacre else None
        cfg = f"{source} {tok} {nrefs}ref {size:,}"
        for impl in ("beambleu", "beambleu-sentence", "sacrebleu", "bleuscore"):
            if impl not in results:
                continue
            rate = size / med[impl]
            ratio = f"{med['sacrebleu'] / med[impl]:.1f}x" if sacre else "-"
            target = TARGETS.get((tok, nrefs, size)) if impl == "beambleu" else None
            tgt = f">={target:g}x" if target else ""
            score = results[impl][0]["score"]
            same = ""
            if sacre_score is not None and impl != "sacrebleu" and score is not None:
                same = " (== sacrebleu)" if score == sacre_score else f" (sacrebleu: {sacre_score!r})"
            rss = max(x["peak_rss_mb"] for x in results[impl])
            print(f"{cfg:<26} {impl:<20} {rate:>12,.0f} {ratio:>13} {tgt:>7} {rss:>7.0f}MB  {score!r}{same}")
        if "bleuscore" in results:
            print(f"{'':<26} beambleu vs bleuscore: {med['bleuscore'] / med['beambleu']:.1f}x (target >= 2.5x)")
        if "beambleu-sentence" in results:
            print(f"{'':<26} sentence-level / corpus statistics cost: "
                  f"{med['beambleu-sentence'] / med['beambleu']:.2f}x (target <= 1.3x)")
        if "beambleu-tokenize" in results:
            full = med["beambleu"]
            read = statistics.median(x["read_s"] for x in results["beambleu"])
            norm = med["beambleu-normalise"] - read
            tokz = med["beambleu-tokenize"] - med["beambleu-normalise"]
            count = full - med["beambleu-tokenize"]
            print(f"{'':<26} beambleu stages (CPU-s): read {read:.2f}, normalise {norm:.2f}, tokenize+split "
                  f"{tokz:.2f}, count+clip+combine {count:.2f}; total {full:.2f}")
    # memory: flat in corpus size
    bb = {(t, n, s): max(x["peak_rss_mb"] for x in res["beambleu"]) for t, n, s, _, res in rows}
    for t in ["13a", *METRICS]:
        for nrefs in refs:
            small, large = bb.get((t, nrefs, sizes[0])), bb.get((t, nrefs, sizes[-1]))
            if small and large and sizes[-1] > sizes[0]:
                print(f"memory, {t} {nrefs}ref: peak RSS {large:.0f} MB at {sizes[-1]:,} pairs vs {small:.0f} MB at "
                      f"{sizes[0]:,}: {large / small:.2f}x (target <= 1.5x and < 1 GB)")


if __name__ == "__main__":
    main()

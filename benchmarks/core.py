"""Speed and memory of bleu_core's batch path, side by side with sacrebleu (and bleuscore).

    python -m benchmarks.core                      # the full suite (about two hours on 2 cores)
    python -m benchmarks.core --quick              # 100k pairs, 13a, chrF, chrF++, 1 reference, 2 rounds
    python -m benchmarks.core --tokenizers chrf,chrf++ --refs 1   # chrF and chrF++ at 100k and 1M
    python -m benchmarks.core --tokenizers flores200 --sizes 100000 --refs 1   # spBLEU alone
    python -m benchmarks.core --tokenizers ter --sizes 100000 --refs 1 --rounds 1   # TER alone (~10 minutes; sacrebleu only at the smallest size)

Every measurement runs in a fresh process (``benchmarks._worker``), implementations
alternate within each round, and the table reports medians over rounds: pairs per
CPU-second, the ratio to sacrebleu measured in the same run, peak RSS, the score and whether
it equals sacrebleu's. Targets (from the speed issue) are printed next to the ratios; they
are checked here, never by timed tests.

spBLEU (the SentencePiece tokenizers flores101, flores200, spBLEU-1K, spm; the default suite has
flores200 when the sentencepiece package is importable): 1 reference; at the smallest size against
sacrebleu's spBLEU with the same model file, with the cost split into read, SentencePiece encode
and count+combine (and sacrebleu's tokenizer alone vs its total); at larger sizes beambleu alone,
for its speed and peak RSS. The model is the file given with --spm-model, else sacrebleu's real
model at its place ($SACREBLEU/models, default ~/.sacrebleu), else a stand-in trained once into
--workdir from the corpora's reference lines (benchmarks/spm.py); which one, its size, SHA-256,
vocabulary and type are printed. Ratios with a stand-in depend on its vocabulary.
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
from .spm import SPM_NAMES, choose, sacrebleu_home

TARGETS = {
    # (tokenize, nrefs, size) -> minimum speed-up over sacrebleu
    # 13a, 1 reference: 40x sacrebleu at 100k and 1M real pairs (issue 23; 15x and 20x before)
    ("13a", 1, 100_000): 40.0,
    ("13a", 1, 1_000_000): 40.0,
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
    # TER (issue 21): 100x sacrebleu's TER at 100k real pairs (measured at the smallest size only: sacrebleu's
    # TER runs a few hundred pairs per CPU-second)
    ("ter", 1, 100_000): 100.0,
    # spBLEU: 10x sacrebleu's spBLEU with the same model at 100k pairs
    **{(name, 1, 100_000): 10.0 for name in SPM_NAMES},
}
#: "tokenizers" that are metrics of their own: measured at every size, against sacrebleu's CHRF
METRICS = ("chrf", "chrf++")


def worker(impl, path, tokenize, batch_size, spm_model=None, sacrebleu_dir=None):
    """One measurement in a fresh process; ``spm_model`` (beambleu's model file) and
    ``sacrebleu_dir`` (the $SACREBLEU sacrebleu reads its model from) only for spBLEU."""
    env = dict(os.environ)
    # numpy's OpenBLAS threads spin for about 60 ms of CPU after numpy is imported, on the other core:
    # measured from just after the imports, that spin landed in some rounds and not others (0.26 vs 0.37
    # CPU-s for the same 100k pairs). Neither side calls BLAS; both run with one thread, as `beambleu
    # score` does.
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    if sacrebleu_dir is not None:
        env["SACREBLEU"] = str(sacrebleu_dir)
    cmd = [sys.executable, "-m", "benchmarks._worker", impl, str(path), tokenize, "--batch-size", str(batch_size)]
    if spm_model is not None:
        cmd += ["--spm-model", str(spm_model)]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=Path(__file__).resolve().parents[1])
    if out.returncode != 0:
        raise SystemExit(f"{impl} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def have(module):
    return import_error(module) is None


def import_error(module):
    """Why ``module`` cannot be imported (one line), or None when it can."""
    try:
        __import__(module)
        return None
    except ImportError as exc:
        return f"{type(exc).__name__}: {exc}"


def machine():
    cpu = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores ({cpu}), "
            f"Python {platform.python_version()}")


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
    ap.add_argument("--tokenizers", default="13a,intl,zh,char,flores200,chrf,chrf++,ter",
                    help="BLEU tokenizers (all but 13a run at the smallest size, 1 reference; the SentencePiece ones "
                         f"{', '.join(SPM_NAMES)} also beambleu alone at larger sizes, and are skipped when "
                         "sentencepiece is not importable), the metrics chrf, chrf++ (every size and reference "
                         "count) and ter (1 reference; sacrebleu at the smallest size only) (default: %(default)s)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds per configuration (default: %(default)s)")
    ap.add_argument("--large-rounds", type=int, default=1,
                    help="rounds for sizes >= 1M, where sacrebleu needs minutes and ~10 GB (default: %(default)s)")
    ap.add_argument("--batch-size", type=int, default=16384, help="rows per Arrow batch (default: %(default)s)")
    add_corpus_arguments(ap)
    ap.add_argument("--synthetic", action="store_true", help="use the synthetic corpus even if corpora exist")
    ap.add_argument("--spm-model", type=Path, default=None, metavar="PATH",
                    help="SentencePiece model file for the spBLEU tokenizers, read by both implementations (default: "
                         "sacrebleu's real model at $SACREBLEU/models if present, else a stand-in trained once into "
                         "--workdir)")
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
    spm_toks = [t for t in toks if t in SPM_NAMES]
    spm_missing = import_error("sentencepiece") if spm_toks else None

    print(f"machine: {machine()}")
    imp, table = startup()
    print(f"start-up: import bleu_core {imp:.3f} s (over a bare interpreter); "
          f"intl/zh Unicode table, built once per process: {table:.3f} s")
    if spm_missing:
        print(f"spBLEU ({', '.join(spm_toks)}) skipped: the sentencepiece package is not importable "
              f"({spm_missing}); pip install 'beambleu[spm]'")
        toks = [t for t in toks if t not in SPM_NAMES]
        spm_toks = []

    configs = [(t, n, s) for t in toks if t == "13a" or t in METRICS for n in refs for s in sizes]
    configs += [(t, 1, sizes[0]) for t in toks if t not in ("13a", "ter") and t not in METRICS and t not in SPM_NAMES]
    configs += [("ter", 1, s) for s in sizes if "ter" in toks]
    configs += [(t, 1, s) for t in spm_toks for s in sizes]
    models, homes = {}, {}
    for t in spm_toks:
        source = build(sizes[0], 1, a.workdir, corpora)[1]
        models[t] = choose(t, a.spm_model, a.workdir, source, corpora)
        homes[t] = sacrebleu_home(t, models[t], a.workdir)
        print(f"spBLEU model, {t}: {models[t].describe()}")
    rows = []
    for tok, nrefs, size in configs:
        path, source = build(size, nrefs, a.workdir, corpora)
        impls = ["beambleu", "sacrebleu"]
        if tok in models:  # sacrebleu and the cost split at the smallest size, beambleu alone above it
            impls = ["beambleu", "sacrebleu", "beambleu-encode", "sacrebleu-tokenize"] if size == sizes[0] \
                else ["beambleu"]
        if tok == "ter" and size > sizes[0]:  # sacrebleu's TER at 1M would take hours: beambleu's memory alone
            impls = ["beambleu"]
        if tok == "13a" and nrefs == 1 and have("bleuscore"):
            impls.append("bleuscore")
        if tok == "13a" and nrefs == 1 and size == sizes[0]:
            impls += ["beambleu-sentence", "beambleu-normalise", "beambleu-tokenize"]
        if a.no_sacrebleu_above is not None and size > a.no_sacrebleu_above:
            impls = [i for i in impls if not i.startswith("sacrebleu")]
        rounds = a.large_rounds if size >= 1_000_000 else a.rounds
        results = {i: [] for i in impls}
        for r in range(rounds):
            order = impls if r % 2 == 0 else impls[::-1]  # alternate
            for impl in order:
                if tok in models:
                    sacre = impl.startswith("sacrebleu")
                    res = worker(impl, path, tok, a.batch_size, spm_model=None if sacre else models[tok].path,
                                 sacrebleu_dir=homes[tok] if sacre else None)
                    if res["model_sha256"] != models[tok].sha256:
                        raise SystemExit(f"{impl} read a SentencePiece model with SHA-256 {res['model_sha256']}, "
                                         f"not {models[tok].path} ({models[tok].sha256})")
                else:
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
        if "beambleu-encode" in results:
            full = med["beambleu"]
            read = statistics.median(x["read_s"] for x in results["beambleu"])
            encode = med["beambleu-encode"] - read
            spm = statistics.median(x["spm_s"] for x in results["beambleu-encode"])
            print(f"{'':<26} spBLEU stages (CPU-s): read {read:.2f}, encode {encode:.2f}, count+combine "
                  f"{full - med['beambleu-encode']:.2f}; total {full:.2f}")
            print(f"{'':<26} encode {encode:.2f} = SentencePiece's own calls {spm:.2f} + distinct lines, "
                  f"Arrow arrays of ids, lines with unknown pieces (Python/Arrow) {encode - spm:.2f}")
        if "sacrebleu-tokenize" in results:
            tokz, total = med["sacrebleu-tokenize"], med["sacrebleu"]
            print(f"{'':<26} sacrebleu stages (CPU-s): tokenize (rstrip + SentencePiece, its line cache) {tokz:.2f}, "
                  f"n-grams+rest {total - tokz:.2f}; total {total:.2f}")
        if tok in models and size == sizes[0]:
            load = {i: statistics.median(x["load_s"] for x in results[i]) for i in ("beambleu", "sacrebleu")
                    if i in results}
            print(f"{'':<26} model: {models[tok].describe()}")
            print(f"{'':<26} model load, not timed above (CPU-s): "
                  + ", ".join(f"{i} {s:.3f}" for i, s in load.items()))
    # memory: flat in corpus size
    bb = {(t, n, s): max(x["peak_rss_mb"] for x in res["beambleu"]) for t, n, s, _, res in rows}
    for t in ["13a", *METRICS]:
        for nrefs in refs:
            small, large = bb.get((t, nrefs, sizes[0])), bb.get((t, nrefs, sizes[-1]))
            if small and large and sizes[-1] > sizes[0]:
                print(f"memory, {t} {nrefs}ref: peak RSS {large:.0f} MB at {sizes[-1]:,} pairs vs {small:.0f} MB at "
                      f"{sizes[0]:,}: {large / small:.2f}x (target <= 1.5x and < 1 GB)")
    for t in spm_toks:
        small, large = bb[(t, 1, sizes[0])], bb[(t, 1, sizes[-1])]
        if sizes[-1] > sizes[0]:
            print(f"memory, {t} 1ref: peak RSS {large:.0f} MB at {sizes[-1]:,} pairs vs {small:.0f} MB at "
                  f"{sizes[0]:,}: {large / small:.2f}x (target <= 1.5x and < 1 GB)")
        else:
            print(f"memory, {t} 1ref: peak RSS {small:.0f} MB at {sizes[0]:,} pairs (one size: run --sizes "
                  f"{sizes[0]},1000000 for the ratio)")


if __name__ == "__main__":
    main()

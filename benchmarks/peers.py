"""Trust by comparison: the same real WMT corpora scored by sacrebleu, beambleu and the peers on PyPI.

    python -m benchmarks.peers                 # 3 corpora x 1,000 pairs, BLEU/chrF/chrF++/TER, 1 round
    python -m benchmarks.peers --quick         # 200 pairs each (a few minutes, most of it torchmetrics)
    python -m benchmarks.peers --lines 0 --rounds 3        # every line of each system, medians of 3
    python -m benchmarks.peers --corpus wmt22/cs-en:Online-B:B+C --impls sacrebleu,beambleu,nltk
    python -m benchmarks.peers --no-torch      # skip torch and what needs it (a 5.4 GB venv)

A corpus is FOLDER:SYSTEM[:REFS[:TOKENIZE]] under the shared corpora (--corpora): REFS is
``A+C+D`` or ``all`` (default), TOKENIZE is BLEU's tokenizer (default ``zh`` for a zh target, else
``13a``). The defaults are one single-reference set (wmt22 en-de), one with three references
(wmt21 en-de) and one with a Chinese target (wmt22 en-zh, ``-tok zh``), cut to --lines pairs.

sacrebleu 2.6.0 is the reference. beambleu (``bleu_core.compat``) and sacrebleu run in this
interpreter's environment (the project's venv); the peers run in their own venv, made once and
then reused (--peers-venv, default ~/.cache/beambleu/peers-venv) from PyPI with pinned versions:
torchmetrics (SacreBLEUScore, BLEUScore, CHRFScore, TranslationEditRate), torcheval and
pytorch-ignite (BLEU), NLTK (corpus_bleu), bleuscore (Rust BLEU), sacrebleu-mojo (BLEU and chrF),
pyter3 (TER), and sacrebleu 2.6.0 again, so that each peer's speed is compared with sacrebleu on
the same interpreter. The peers venv needs Python >= 3.12 (sacrebleu-mojo's floor; --peers-python).
torch comes from PyPI as its Linux wheel, which is a CUDA build: it installs with its CUDA
libraries (about 5 GB) and runs on the CPU here; --no-torch leaves it out.

Every implementation runs in a fresh process per corpus (``benchmarks/_peers_worker.py``), with
OPENBLAS/OMP/MKL at one thread and torch.set_num_threads(1). Per metric it reports the corpus score,
the CPU seconds of the scoring call alone (time.process_time; the input is already in memory in the
shape the API takes, e.g. token lists, and an untimed first call on one pair has already run),
and separately the interpreter's start-up, the import and that first call. A peer that fails to
install, import or score is one line in the tables, not a crash.

Tables: agreement with sacrebleu per corpus ("exact": == ; "2dp": equal when printed with 2
decimals, as papers print BLEU, the difference shown; "DIFF": not even that), then pairs per
CPU-second with the ratio to sacrebleu run on the same interpreter in the same run, then start-up.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from .core import machine
from .corpus import DEFAULT_CORPORA

WORKER = Path(__file__).resolve().parent / "_peers_worker.py"
METRICS = ("bleu", "chrf", "chrf++", "ter")
DEFAULT_CORPUS = ("wmt22/en-de:Online-B:A", "wmt21/en-de:VolcTrans-GLAT:A+C+D", "wmt22/en-zh:Online-B:A")

#: pip requirement, or group of requirements installed together, per peer; checked against
#: PyPI (project URLs) when added: see docs/COMPARISON.md
TORCH = "torch==2.15.0"
PEER_PACKAGES = {
    "sacrebleu": ["sacrebleu==2.6.0"],
    "nltk": ["nltk==3.10.4"],
    "bleuscore": ["bleuscore==0.2.0"],
    "sacrebleu-mojo": ["sacrebleu-mojo==0.2.4"],
    "pyter3": ["pyter3==0.3"],
    "torch": [TORCH],
    "torchmetrics": [TORCH, "torchmetrics==1.9.0"],
    "torcheval": [TORCH, "torcheval==0.0.7"],
    "ignite": [TORCH, "pytorch-ignite==0.5.5"],
}
#: implementation -> (where it runs, the package groups it needs)
IMPLS = {
    "sacrebleu": ("main", []),
    "beambleu": ("main", []),
    "sacrebleu@peers": ("peers", ["sacrebleu"]),
    "torchmetrics": ("peers", ["torchmetrics", "sacrebleu"]),
    "torchmetrics-BLEUScore": ("peers", ["torchmetrics", "sacrebleu"]),
    "torcheval": ("peers", ["torcheval", "sacrebleu"]),
    "ignite": ("peers", ["ignite", "sacrebleu"]),
    "nltk": ("peers", ["nltk", "sacrebleu"]),
    "bleuscore": ("peers", ["bleuscore"]),
    "sacrebleu-mojo": ("peers", ["sacrebleu-mojo"]),
    "pyter3": ("peers", ["pyter3"]),
}
#: the metrics each peer scores (beambleu and sacrebleu: all)
IMPL_METRICS = {"torchmetrics-BLEUScore": {"bleu"}, "torcheval": {"bleu"}, "ignite": {"bleu"}, "nltk": {"bleu"},
                "bleuscore": {"bleu"}, "sacrebleu-mojo": {"bleu", "chrf", "chrf++"}, "pyter3": {"ter"}}
TORCH_IMPLS = {"torchmetrics", "torchmetrics-BLEUScore", "torcheval", "ignite"}
THREAD_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


# ---------------------------------------------------------------- the peers' venv

def _python_version(exe: str):
    try:
        out = subprocess.run([exe, "-c", "import sys; print(sys.version_info[0], sys.version_info[1])"],
                             capture_output=True, text=True, timeout=60).stdout.split()
        return int(out[0]), int(out[1])
    except (OSError, ValueError, IndexError, subprocess.SubprocessError):
        return None


def find_peers_python(given: str | None) -> str | None:
    """A Python >= 3.12 for the peers' venv: --peers-python, this one, python3.13/3.12, pyenv's."""
    cands = [given] if given else [sys.executable, "python3.13", "python3.12"]
    if not given:
        pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
        cands += [str(p / "bin" / "python3") for p in sorted(pyenv.glob("3.1[2-9]*"), reverse=True)]
    for c in cands:
        exe = shutil.which(c) or (c if Path(c).exists() else None)
        if exe and (_python_version(exe) or (0, 0)) >= (3, 12):
            return exe
    return None


def ensure_peers_venv(venv: Path, python: str | None, groups: list, log) -> dict:
    """Make (once) and fill the peers' venv; returns {group: None if installed else why not}."""
    status = {}
    vpy = venv / "bin" / "python"
    if not vpy.exists():
        exe = find_peers_python(python)
        if exe is None:
            return {g: "no Python >= 3.12 found for the peers' venv (--peers-python)" for g in groups}
        log(f"making the peers' venv {venv} with {exe}")
        venv.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["nice", "-n", "10", exe, "-m", "venv", str(venv)], check=True)
        subprocess.run(["nice", "-n", "10", str(vpy), "-m", "pip", "install", "-q", "--upgrade", "pip"], check=False)
    stamp = venv / "beambleu-peers.json"
    done = json.loads(stamp.read_text()) if stamp.exists() else {}
    for g in groups:
        reqs = PEER_PACKAGES[g]
        key = " ".join(reqs)
        if done.get(g) == key:
            status[g] = None
            continue
        log(f"installing {key} into {venv}")
        t0 = time.perf_counter()
        r = subprocess.run(["nice", "-n", "10", str(vpy), "-m", "pip", "install", "-q", *reqs],
                           capture_output=True, text=True)
        if r.returncode == 0:
            done[g] = key
            status[g] = None
            log(f"  installed in {time.perf_counter() - t0:.0f} s")
        else:
            err = [ln for ln in (r.stderr or r.stdout).splitlines() if ln.strip()]
            status[g] = f"pip install {key} failed: {err[-1] if err else r.returncode}"[:200]
            log("  " + status[g])
    stamp.write_text(json.dumps(done, indent=1))
    return status


# ---------------------------------------------------------------- corpora

def _lines(path: Path):
    with open(path, encoding="utf-8", newline="\n") as fh:
        return [line.rstrip("\n") for line in fh]


def load_corpus(corpora: Path, spec: str, lines: int) -> dict:
    parts = spec.split(":")
    if len(parts) < 2:
        raise SystemExit(f"--corpus {spec!r}: expected FOLDER:SYSTEM[:REFS[:TOKENIZE]]")
    folder, system = corpora / parts[0], parts[1]
    refs = parts[2] if len(parts) > 2 and parts[2] else "all"
    letters = ([p.name[4:-4] for p in sorted(folder.glob("ref.*.txt"))] if refs == "all" else refs.split("+"))
    target = parts[0].rstrip("/").split("-")[-1]
    tokenize = parts[3] if len(parts) > 3 else ("zh" if target == "zh" else "13a")
    hyps = _lines(folder / f"sys.{system}.txt")
    streams = [_lines(folder / f"ref.{x}.txt") for x in letters]
    if lines:
        hyps, streams = hyps[:lines], [s[:lines] for s in streams]
    name = f"{parts[0]} {system} ({'+'.join(letters)}, {tokenize})"
    return {"name": name, "short": f"{parts[0]} {len(letters)}ref", "hyps": hyps, "refs": streams,
            "tokenize": tokenize, "pairs": len(hyps)}


# ---------------------------------------------------------------- running

def run_worker(python: str, impl: str, path: str, metrics) -> dict:
    worker_impl = impl.split("@")[0]
    env = dict(os.environ, **THREAD_ENV)
    env.pop("PYTHONPATH", None)
    if impl in ("beambleu", "sacrebleu"):
        env["PYTHONPATH"] = str(WORKER.parents[1])  # bleu_core from this checkout
    t0 = time.perf_counter()
    r = subprocess.run([python, str(WORKER), worker_impl, path, ",".join(metrics)], capture_output=True, text=True,
                       env=env)
    wall = time.perf_counter() - t0
    try:
        out = json.loads(r.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        err = [ln for ln in r.stderr.splitlines() if ln.strip()]
        out = {"error": f"worker exited {r.returncode}: {err[-1] if err else 'no output'}"[:200], "metrics": {}}
    out["process_wall_s"] = wall
    return out


def agreement(score, ref) -> str:
    if score == ref:
        return "exact"
    d = score - ref
    if f"{score:.2f}" == f"{ref:.2f}":
        return f"2dp {d:+.1e}"
    return f"DIFF {d:+.4f}"


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks.peers", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA, help="the shared corpora")
    ap.add_argument("--corpus", action="append", help="FOLDER:SYSTEM[:REFS[:TOKENIZE]] (repeat; default: "
                    + ", ".join(DEFAULT_CORPUS) + ")")
    ap.add_argument("--lines", type=int, default=1000, help="first N pairs of each corpus, 0 = all (default: %(default)s)")
    ap.add_argument("--rounds", type=int, default=1, help="runs of each implementation; medians (default: %(default)s)")
    ap.add_argument("--metrics", default=",".join(METRICS), help="default: %(default)s")
    ap.add_argument("--impls", default=",".join(IMPLS), help="default: %(default)s")
    ap.add_argument("--quick", action="store_true", help="200 pairs per corpus")
    ap.add_argument("--no-torch", action="store_true", help="leave out torch and the peers that need it")
    ap.add_argument("--peers-venv", type=Path, default=Path(os.environ.get(
        "BEAMBLEU_PEERS_VENV", Path.home() / ".cache" / "beambleu" / "peers-venv")))
    ap.add_argument("--peers-python", help="Python >= 3.12 to make the peers' venv with")
    ap.add_argument("--json", type=Path, help="also write every worker's output here")
    a = ap.parse_args(argv)
    lines = 200 if a.quick else a.lines
    metrics = [m for m in a.metrics.split(",") if m]
    impls = [i for i in a.impls.split(",") if i]
    for i in impls:
        if i not in IMPLS:
            raise SystemExit(f"unknown implementation {i!r}; known: {', '.join(IMPLS)}")
    if "sacrebleu" not in impls:
        impls.insert(0, "sacrebleu")
    if a.no_torch:
        impls = [i for i in impls if i not in TORCH_IMPLS]
    impls = [i for i in impls if set(metrics) & IMPL_METRICS.get(i, set(METRICS))]
    if any(IMPLS[i][0] == "peers" for i in impls) and "sacrebleu@peers" not in impls:
        impls.append("sacrebleu@peers")

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    print(f"python -m benchmarks.peers {' '.join(argv if argv is not None else sys.argv[1:])}".rstrip())
    print(f"date: {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; machine: {machine()}")

    # the peers' venv
    groups = sorted({g for i in impls for g in IMPLS[i][1]}, key=list(PEER_PACKAGES).index)
    status = ensure_peers_venv(a.peers_venv, a.peers_python, groups, log) if groups else {}
    peers_py = str(a.peers_venv / "bin" / "python")
    unavailable = {}
    for i in impls:
        why = [status[g] for g in IMPLS[i][1] if status.get(g)]
        if why:
            unavailable[i] = why[0]

    corpora = [load_corpus(a.corpora, s, lines) for s in (a.corpus or DEFAULT_CORPUS)]
    results = {}  # (corpus index, impl) -> list of worker outputs
    with tempfile.TemporaryDirectory(prefix="beambleu-peers-") as tmp:
        for ci, c in enumerate(corpora):
            path = os.path.join(tmp, f"corpus{ci}.json")
            with open(path, "w", encoding="utf-8") as fh:
                json.dump({"hyps": c["hyps"], "refs": c["refs"], "tokenize": c["tokenize"]}, fh)
            for r in range(a.rounds):
                for impl in impls:
                    if impl in unavailable:
                        continue
                    py = sys.executable if IMPLS[impl][0] == "main" else peers_py
                    out = run_worker(py, impl, path, metrics)
                    results.setdefault((ci, impl), []).append(out)
                    done = ", ".join(f"{m} {v['cpu_s']:.2f}s" if "cpu_s" in v else f"{m} n/a"
                                     for m, v in out.get("metrics", {}).items())
                    log(f"  [{c['short']}, round {r + 1}/{a.rounds}] {impl}: {out.get('error') or done}")

    if a.json:
        a.json.write_text(json.dumps({f"{ci}|{impl}": v for (ci, impl), v in results.items()}, indent=1))

    def med(ci, impl, metric, field):
        vals = [o["metrics"][metric][field] for o in results.get((ci, impl), [])
                if field in o.get("metrics", {}).get(metric, {})]
        return statistics.median(vals) if vals else None

    def why_not(ci, impl, metric):
        if impl in unavailable:
            return unavailable[impl]
        outs = results.get((ci, impl), [])
        if outs and outs[0].get("error"):
            return outs[0]["error"]
        if outs and "error" in outs[0].get("metrics", {}).get(metric, {}):
            return outs[0]["metrics"][metric]["error"]
        return None

    # versions
    print()
    print("implementations (versions as imported):")
    for impl in impls:
        outs = results.get((0, impl), [])
        where = "project venv" if IMPLS[impl][0] == "main" else "peers venv"
        if impl in unavailable:
            print(f"  {impl:<24} NOT AVAILABLE: {unavailable[impl]}")
        elif outs and outs[0].get("error"):
            print(f"  {impl:<24} FAILED: {outs[0]['error']}")
        elif outs:
            v = ", ".join(f"{k} {val}" for k, val in outs[0].get("versions", {}).items() if k != "backend")
            print(f"  {impl:<24} {v} (Python {outs[0].get('python')}, {where})")
    for c in corpora:
        print(f"corpus: {c['name']}, {c['pairs']:,} pairs")

    def rows_for(metric):
        return [i for i in impls if i != "sacrebleu" and metric in IMPL_METRICS.get(i, METRICS)]

    # agreement
    w = 22
    print()
    print("AGREEMENT with sacrebleu 2.6.0 on the same interpreter (beambleu: the project's venv; peers: the peers' "
          "venv;\nsacrebleu@peers: sacrebleu on the peers' Python against sacrebleu on the project's). exact = the same "
          "float;\n2dp = the same when printed with 2 decimals (difference shown); DIFF = not even that")
    head = f"{'metric':<7} {'implementation':<24}" + "".join(f" {c['short']:>{w}}" for c in corpora)
    print(head)
    print("-" * len(head))
    for metric in metrics:
        print(f"{metric:<7} {'sacrebleu (score)':<24}" + "".join(
            f" {med(ci, 'sacrebleu', metric, 'score') or float('nan'):>{w}.6f}" for ci in range(len(corpora))))
        for impl in rows_for(metric):
            cells = []
            for ci in range(len(corpora)):
                base_impl = "sacrebleu@peers" if IMPLS[impl][0] == "peers" and impl != "sacrebleu@peers" else "sacrebleu"
                ref, s = med(ci, base_impl, metric, "score"), med(ci, impl, metric, "score")
                if s is None or ref is None:
                    why = why_not(ci, impl, metric) or "n/a"
                    cells.append("n/a: " + why.split(": ", 1)[-1][:w - 5] if impl not in unavailable else "not installed")
                else:
                    cells.append(agreement(s, ref))
            print(f"{'':<7} {impl:<24}" + "".join(f" {x:>{w}}" for x in cells))
    for impl in impls:
        if impl in unavailable or any(o.get("error") for o in results.get((0, impl), [])):
            print(f"  {impl}: {why_not(0, impl, metrics[0])}")

    # speed
    print()
    print("SPEED: pairs per CPU-second of the scoring call (ratio to sacrebleu on the same interpreter, same run)")
    print(head)
    print("-" * len(head))
    for metric in metrics:
        for impl in ["sacrebleu"] + rows_for(metric):
            cells = []
            for ci, c in enumerate(corpora):
                cpu = med(ci, impl, metric, "cpu_s")
                base_impl = "sacrebleu@peers" if IMPLS[impl][0] == "peers" else "sacrebleu"
                base = med(ci, base_impl, metric, "cpu_s")
                if cpu is None:
                    cells.append("n/a")
                    continue
                rate = c["pairs"] / cpu if cpu > 0 else float("inf")
                ratio = f" ({base / cpu:.2f}x)" if base and cpu > 0 and impl != base_impl else ""
                cells.append(f"{rate:,.0f}{ratio}")
            print(f"{metric if impl == 'sacrebleu' else '':<7} {impl:<24}" + "".join(f" {x:>{w}}" for x in cells))

    # start-up
    print()
    print("START-UP (CPU-s, medians over corpora and rounds): interpreter | import | first call on one pair, "
          "per metric")
    for impl in impls:
        outs = [o for (ci, i), os_ in results.items() if i == impl for o in os_ if not o.get("error")]
        if not outs:
            continue
        st = statistics.median(o["startup_cpu_s"] for o in outs)
        imp = statistics.median(o["import_cpu_s"] for o in outs)
        firsts = []
        for metric in metrics:
            v = [o["metrics"][metric]["first_call_cpu_s"] for o in outs if "first_call_cpu_s" in o["metrics"].get(metric, {})]
            if v:
                firsts.append(f"{metric} {statistics.median(v):.3f}")
        print(f"  {impl:<24} {st:.3f} | {imp:.3f} | {', '.join(firsts)}")


if __name__ == "__main__":
    main()

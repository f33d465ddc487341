"""The Python-list API against sacrebleu's: ``BLEU().corpus_score``, ``CHRF()``, ``CHRF(word_order=2)`` and
``TER()`` of ``bleu_core.compat`` (sacrebleu's classes, computed by beambleu) and of ``bleu_core`` itself
(``Metric.corpus_score`` on per-pair reference lists), with sacrebleu's same API, in the same run.

    python -m benchmarks.api                                  # 100k pairs, BLEU, chrF, chrF++; 3 rounds
    python -m benchmarks.api --sizes 100000,1000000 --metrics bleu,chrf --rounds 2
    python -m benchmarks.api --sizes 2000 --metrics ter        # TER (sacrebleu's is slow: keep it small)

Every measurement is a fresh process (``python -m benchmarks.api --child ...``), so the first call counts
with its imports: the child reads the two text files into lists (not counted, the same for every side),
then its CPU time (user + system, ``time.process_time``) runs from before the API's import to the
score. The sides alternate within each round; the table shows each side's median, sacrebleu's over
beambleu's (higher is faster), and whether the scores are equal to the last digit sacrebleu prints
(``format()``'s text, version masked). The files are the first N pairs of the benchmark corpus (real WMT
text from ../shared/corpora through :func:`benchmarks.startup.write_files`, else the synthetic corpus).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

# (the benchmark's own helpers import numpy and pyarrow: the parent imports them in main(), so that a child
# starts with neither loaded and its first call pays for what it imports)

METRICS = ("bleu", "chrf", "chrf++", "ter")
#: the sides measured: (name, how the child scores)
SIDES = ("sacrebleu", "compat", "bleu_core")
#: the goal of issue 34 (sacrebleu's CPU over beambleu's, first call included)
TARGET = 40.0


def _score(side: str, metric: str, hyps: list, refs: list) -> str:
    """Score the lists with one side's API (imports included); returns the score's text."""
    if side in ("sacrebleu", "compat"):
        if side == "sacrebleu":
            from sacrebleu.metrics import BLEU, CHRF, TER
        else:
            from bleu_core.compat import BLEU, CHRF, TER
        make = {"bleu": BLEU, "chrf": CHRF, "chrf++": lambda: CHRF(word_order=2), "ter": TER}[metric]
        m = make()
        return m.corpus_score(hyps, [refs]).format(signature=m.get_signature().format())
    from bleu_core import Bleu, Chrf, Ter

    m = {"bleu": Bleu, "chrf": Chrf, "chrf++": lambda: Chrf(word_order=2), "ter": Ter}[metric]()
    pairs = [[r] for r in refs]
    return m.corpus_score(hyps, pairs).format()


def child(side: str, metric: str, hyp: str, ref: str) -> None:
    def lines(path):
        with open(path, encoding="utf-8", newline="\n") as f:
            return [line.rstrip("\n") for line in f]

    hyps, refs = lines(hyp), lines(ref)
    t0 = time.process_time()
    text = _score(side, metric, hyps, refs)
    cpu = time.process_time() - t0
    print(json.dumps({"cpu_s": cpu, "score": text}))


def run_child(side: str, metric: str, hyp: Path, ref: Path, env) -> dict:
    cmd = [sys.executable, "-m", "benchmarks.api", "--child", side, metric, str(hyp), str(ref)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=Path(__file__).resolve().parents[1])
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _masked(text: str) -> str:
    """A score's text without its signature's version, and with sacrebleu's field names for beambleu's own
    (``bleu_core``'s score line is beambleu's: only the number is compared there)."""
    return re.sub(r"(version|v):[^|\s]+", r"\1:V", text)


def _number(text: str) -> str:
    return text.split(" = ", 1)[1].split()[0] if " = " in text else text


def main(argv=None) -> None:
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["--child"]:
        return child(*argv[1:5])
    from .core import machine
    from .corpus import DEFAULT_CORPORA, add_workdir_argument
    from .startup import write_files

    ap = argparse.ArgumentParser(prog="python -m benchmarks.api", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100000", help="pairs, comma-separated (default: %(default)s)")
    ap.add_argument("--metrics", default="bleu,chrf,chrf++", help=f"of {', '.join(METRICS)} (default: %(default)s)")
    ap.add_argument("--sides", default=",".join(SIDES), help="of %(default)s: sacrebleu, bleu_core.compat's "
                    "classes, bleu_core's own Metric.corpus_score")
    ap.add_argument("--rounds", type=int, default=3, help="runs of each side (default: %(default)s; median)")
    ap.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA, help="the shared corpora")
    add_workdir_argument(ap)
    a = ap.parse_args(argv)
    metrics = [m for m in a.metrics.split(",") if m]
    sides = [s for s in a.sides.split(",") if s]
    bad = [m for m in metrics if m not in METRICS] + [s for s in sides if s not in SIDES]
    if bad or "sacrebleu" not in sides:
        ap.error(f"unknown metric or side {bad[0]!r}" if bad else "sacrebleu is the reference: keep it in --sides")
    # bytecode caches written, as an installed package has them (see benchmarks.startup)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.setdefault("OPENBLAS_NUM_THREADS", "1")  # numpy's BLAS threads spin after its import (see benchmarks.core)
    print(f"# list API: {machine()}; median of {a.rounds} rounds, CPU seconds of the child from the API's import "
          f"to the score (first call included); ratio = sacrebleu / side (target >= {TARGET:.0f}x)")
    others = [s for s in sides if s != "sacrebleu"]
    print(f"{'pairs':>9} {'source':>9} {'metric':>7} {'sacrebleu':>9} " +
          " ".join(f"{s:>9} {'ratio':>7}" for s in others) + "  same score")
    for size in (int(s) for s in a.sizes.split(",")):
        ref, hyp, source = write_files(size, a.workdir, a.corpora)
        for metric in metrics:
            cpu = {s: [] for s in sides}
            scores = {}
            for r in range(a.rounds):
                for side in (sides if r % 2 == 0 else sides[::-1]):  # alternate which goes first
                    out = run_child(side, metric, hyp, ref, env)
                    cpu[side].append(out["cpu_s"])
                    scores[side] = out["score"]
            med = {s: statistics.median(v) for s, v in cpu.items()}
            same = all((_masked(scores[s]) == _masked(scores["sacrebleu"])) if s == "compat" else
                       _number(scores[s]) == _number(scores["sacrebleu"]) for s in others)
            print(f"{size:>9,} {source:>9} {metric:>7} {med['sacrebleu']:>9.3f} " +
                  " ".join(f"{med[s]:>9.3f} {med['sacrebleu'] / med[s]:>6.1f}x" for s in others) +
                  f"  {'yes' if same else 'NO: ' + repr({s: scores[s] for s in sides})}")


if __name__ == "__main__":
    main()

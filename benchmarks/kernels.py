"""The text kernels near the bytes: instructions per input byte and MB/s of BLEU's 13a and intl
kernels and of chrF's, on real WMT text.

    python -m benchmarks.kernels                          # 13a, intl, chrf: 20,000 pairs, 3 rounds
    python -m benchmarks.kernels --kernels 13a --pairs 50000 --rounds 5
    python -m benchmarks.kernels --no-callgrind           # MB/s only
    python -m benchmarks.kernels --kernels 13a,intl --bleu-so /tmp/old/_bleu.cpython-311-x86_64-linux-gnu.so
                                                          # another build of BLEU's kernel beside this one

The pairs are benchmarks.corpus's real ones (every system output of the corpora's test sets with
its first reference), --pairs of them picked evenly over the whole corpus so that each language has
its share (the synthetic corpus when the corpora are absent), held as
Python lists and turned once into the buffers the kernels read (bleu_core.kernels.buffers), so
that only the kernel call (``_bleu.stats`` / ``_chrf.stats``, sums only) is measured. Bytes are the
UTF-8 bytes of the candidates and references the call reads.

* instructions/byte: the kernel call alone under ``valgrind --tool=callgrind`` (collection toggled
  on inside the extension's ``k_stats``), which does not depend on the machine's load; skipped
  when valgrind is absent.
* MB/s: CPU seconds of the same call in a fresh process, the median of ``--rounds`` calls (noisy
  on a loaded machine; the instruction counts are the load-independent figure).

The issue's goal for 13a (issue 34): at most 35 instructions per input byte.
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
from itertools import islice
from pathlib import Path

from .corpus import DEFAULT_CORPORA, real_pairs, synthetic_pairs

__all__ = ["main"]

KERNELS = ("13a", "intl", "chrf")
#: instructions per input byte the issue asks for (at most)
TARGETS = {"13a": 35.0}


def pairs(n: int, corpora) -> tuple:
    """n (candidate, [reference]) pairs of the benchmark corpus spread evenly over all of it (pair
    i * total // n of benchmarks.corpus's real pairs, which is every test set's languages in their
    share of the corpus; the first n synthetic pairs when the corpora are absent), as two lists."""
    real = corpora is not None and (Path(corpora) / "MANIFEST.tsv").exists()
    if not real:
        cands, refs = zip(*islice(synthetic_pairs(1), n))
        return list(cands), list(refs), "synthetic"
    every = list(real_pairs(Path(corpora), 1))
    picked = [every[i * len(every) // n] for i in range(n)]
    return [c for c, _ in picked], [r for _, r in picked], "wmt"


def bleu_module(so=None):
    """BLEU's compiled kernel: the package's, or the extension file ``so`` (another build of it)."""
    if so is None:
        from bleu_core.metrics.bleu import _bleu

        return _bleu
    import importlib.util

    spec = importlib.util.spec_from_file_location("_bleu", so)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def kernel_call(kernel: str, cands, refs, so=None):
    """(a function calling the kernel once over the batch, the bytes it reads); ``so``: BLEU's
    kernel from that extension file."""
    import numpy as np

    from bleu_core.kernels.buffers import list_buffers

    bufs = list_buffers(cands, refs)
    nbytes = len(bufs.candidates[0]) + len(bufs.references[0])
    if kernel == "chrf":
        from bleu_core.metrics.chrf import _chrf

        out = np.zeros(3 * 6, dtype=np.int64)

        def call():
            out[:] = 0
            _chrf.stats(*bufs.candidates, *bufs.references, bufs.list_offsets, 6, 0, 4.0, 5.0, False, False, False,
                        out, False)
            return out
    else:
        from bleu_core.tokenizers import get_tokenizer

        _bleu = bleu_module(so)
        tok = get_tokenizer(kernel)
        flags = tok.flags()
        out = np.zeros(10, dtype=np.int64)

        def call():
            out[:] = 0
            _bleu.stats(*bufs.candidates, *bufs.references, bufs.list_offsets, tok.kernel_id, 0, 4, flags, out, 0)
            return out
    return call, nbytes


def child(kernel: str, n: int, rounds: int, corpora, so=None) -> None:
    """One measurement in this process: JSON with the bytes, the CPU seconds of each call, the sums."""
    cands, refs, source = pairs(n, corpora)
    call, nbytes = kernel_call(kernel, cands, refs, so)
    cpu = []
    for _ in range(rounds):
        c0 = time.process_time()
        out = call()
        cpu.append(time.process_time() - c0)
    print(json.dumps({"bytes": nbytes, "cpu": cpu, "source": source, "stats": out.tolist()}))


def run_child(kernel, n, rounds, corpora, prefix=(), so=None):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    cmd = [*prefix, sys.executable, "-m", "benchmarks.kernels", "--child", kernel, "--pairs", str(n), "--rounds",
           str(rounds), "--corpora", str(corpora)]
    if so is not None:
        cmd += ["--bleu-so", str(so)]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=Path(__file__).resolve().parents[1])
    if out.returncode != 0:
        raise SystemExit(f"{kernel} failed:\n{out.stderr[-4000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def callgrind(kernel, n, corpora, so=None):
    """(instructions of one kernel call under callgrind, bytes it read)."""
    with tempfile.TemporaryDirectory() as tmp:
        outfile = Path(tmp) / "callgrind.out"
        res = run_child(kernel, n, 1, corpora, prefix=("valgrind", "--tool=callgrind", "--collect-atstart=no",
                                                      "--toggle-collect=k_stats", f"--callgrind-out-file={outfile}"),
                        so=so)
        ir = None
        for line in outfile.read_text().splitlines():
            if line.startswith(("summary:", "totals:")):
                ir = int(line.split()[1])
        return ir, res["bytes"]


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks.kernels", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernels", default=",".join(KERNELS), help="of 13a, intl, chrf (default: %(default)s)")
    ap.add_argument("--pairs", type=int, default=20_000, help="pairs per measurement (default: %(default)s)")
    ap.add_argument("--callgrind-pairs", type=int, default=5_000,
                    help="pairs under callgrind (default: %(default)s)")
    ap.add_argument("--rounds", type=int, default=3, help="timed calls per kernel (default: %(default)s)")
    ap.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA, help="the shared corpora")
    ap.add_argument("--no-callgrind", action="store_true", help="MB/s only")
    ap.add_argument("--bleu-so", type=Path,
                    help="also measure BLEU's kernel built into this extension file (e.g. an older commit's), "
                         "for the same pairs in the same run")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        child(a.child, a.pairs, a.rounds, a.corpora, a.bleu_so)
        return
    kernels = [k.strip() for k in a.kernels.split(",") if k.strip()]
    for k in kernels:
        if k not in KERNELS:
            ap.error(f"unknown kernel {k!r} (one of {', '.join(KERNELS)})")
    use_cg = not a.no_callgrind and shutil.which("valgrind") is not None
    print(f"{'kernel':<6} {'pairs':>8} {'MB':>7} {'MB/s':>8} {'instr/byte':>11}  target")
    for k in kernels:
        builds = [(k, None)] + ([(f"{k}*", a.bleu_so)] if a.bleu_so and k != "chrf" else [])
        for label, so in builds:
            res = run_child(k, a.pairs, a.rounds, a.corpora, so=so)
            mb = res["bytes"] / 1e6
            rate = mb / statistics.median(res["cpu"])
            ipb = "n/a"
            if use_cg:
                ir, nbytes = callgrind(k, a.callgrind_pairs, a.corpora, so=so)
                ipb = f"{ir / nbytes:.1f}" if ir else "n/a"
            target = f"<= {TARGETS[k]:g}" if k in TARGETS else ""
            print(f"{label:<6} {a.pairs:>8} {mb:>7.2f} {rate:>8.1f} {ipb:>11}  {target}  ({res['source']})", flush=True)
    if a.bleu_so:
        print(f"*: BLEU's kernel from {a.bleu_so}")


if __name__ == "__main__":
    main()

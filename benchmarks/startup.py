"""Start-up: the CPU time of a whole ``beambleu score`` command against ``sacrebleu``'s, on small files.

    python -m benchmarks.startup                        # 10, 100, 2,000 and 100,000 lines, best of 7
    python -m benchmarks.startup --sizes 10 --rounds 15
    python -m benchmarks.startup --python /tmp/lean/bin/python   # another environment (a lean venv)
    python -m benchmarks.startup --sizes 2000 --args="-tok intl"  # the same options given to both commands
    python -m benchmarks.startup --files REF HYP --args="-tok intl"  # these two files instead of the corpus's lines

Each command is a fresh process (``python -m beambleu score REF -i HYP`` and ``python -m sacrebleu
REF -i HYP``, 1 reference, BLEU, JSON), its CPU time (user + system) read from the rusage of
the children; the two alternate within each round, and each side's figure is its best round
(the machine is shared: the best is the least disturbed). The files are the first N lines of the
benchmark corpus (benchmarks/corpus.py: real WMT system outputs and their first reference, from
../shared/corpora, else the synthetic corpus), written once into --workdir. The outputs must be
the same bytes (the signature's version aside), which is checked.

Then the imports of the smallest size (``-X importtime``): which of pandas, pyarrow and numpy
each program loads, and beambleu's most expensive top-level imports. ``--instructions`` adds the
instructions each command executes at each size (``valgrind --tool=callgrind``, one run each, hash
seed fixed): a figure the machine's load does not change.

The children run without ``PYTHONDONTWRITEBYTECODE``: they write the bytecode caches of what they
import, as an installed package has them (with it set, a module edited since its cache was written
is compiled again by every run, which is not what a user's command costs).
"""

from __future__ import annotations

import argparse
import itertools
import os
import platform
import re
import resource
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from .corpus import DEFAULT_CORPORA, add_workdir_argument, real_pairs, synthetic_pairs

SIZES = (10, 100, 2_000, 100_000)
HEAVY = ("pandas", "pyarrow", "numpy", "importlib.metadata", "apache_beam")


def write_files(size: int, workdir: Path, corpora: Path):
    """(ref, hyp) text files of ``size`` lines (the corpus's pairs in order, repeated as needed)."""
    source = "wmt" if corpora is not None and (corpora / "MANIFEST.tsv").exists() else "synthetic"
    ref, hyp = (workdir / f"startup-{source}-{size}.{name}.txt" for name in ("ref", "hyp"))
    if not (ref.exists() and hyp.exists()):
        workdir.mkdir(parents=True, exist_ok=True)
        pairs = itertools.islice(itertools.chain.from_iterable(
            real_pairs(corpora, 1) if source == "wmt" else synthetic_pairs(1) for _ in itertools.count()), size)
        hyps, refs = zip(*((h, rs[0]) for h, rs in pairs))
        for path, lines in ((ref, refs), (hyp, hyps)):
            tmp = path.with_suffix(".tmp")
            tmp.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
            os.replace(tmp, path)
    return ref, hyp, source


def commands(python: str, ref: Path, hyp: Path, extra=()):
    return {"beambleu": [python, "-m", "beambleu", "score", str(ref), "-i", str(hyp), *extra],
            "sacrebleu": [python, "-m", "sacrebleu", str(ref), "-i", str(hyp), *extra]}


def child_cpu(cmd, env) -> tuple:
    """(CPU seconds of the child, its standard output)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(cmd, capture_output=True, env=env, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.decode(errors='replace').strip()}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), proc.stdout


def instructions(cmd, env) -> int:
    """Instructions ``cmd`` executes (callgrind's ``I refs``), with the hash seed fixed."""
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *cmd], capture_output=True,
                          env={**env, "PYTHONHASHSEED": "0"}, check=False)
    m = re.search(rb"I\s+refs:\s+([\d,]+)", proc.stderr)
    if proc.returncode or not m:
        raise SystemExit(f"valgrind {' '.join(cmd)} failed: {proc.stderr.decode(errors='replace')[-500:]}")
    return int(m.group(1).replace(b",", b""))


def same_output(ours: bytes, theirs: bytes) -> bool:
    """The same bytes once each signature's version field is masked."""
    def mask(out: bytes) -> bytes:
        out = re.sub(rb"(\|(?:version|v):)[^|\"\s]+", rb"\1V", out)
        return re.sub(rb'("version": ")[^"]+"', rb'\1V"', out)

    return mask(ours) == mask(theirs)


def importtime(cmd, env, runs: int = 3) -> list:
    """``-X importtime`` of ``cmd``: (depth, module, self us, cumulative us) in the order printed, of the
    run (of ``runs``) whose imports took least."""
    best = None
    for _ in range(runs):
        proc = subprocess.run([cmd[0], "-X", "importtime", *cmd[1:]], capture_output=True, env=env, check=False)
        rows = []
        for line in proc.stderr.decode(errors="replace").splitlines():
            m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
            if m:
                rows.append((len(m.group(3)) // 2, m.group(4), int(m.group(1)), int(m.group(2))))
        if best is None or _total(rows) < _total(best):
            best = rows
    return best


def _lines(path: Path) -> int:
    with open(path, "rb") as f:
        return sum(block.count(b"\n") for block in iter(lambda: f.read(1 << 20), b""))


def _total(rows) -> int:
    return sum(c for d, _, _, c in rows if d == 0)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.startup", description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)), help="lines per file, comma-separated")
    ap.add_argument("--rounds", type=int, default=7, help="runs of each command per size (best of)")
    ap.add_argument("--python", default=sys.executable,
                    help="the interpreter whose environment runs both commands (default: this one)")
    ap.add_argument("--top", type=int, default=12, help="beambleu's top-level imports shown (default: %(default)s)")
    ap.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA, help="the shared corpora")
    ap.add_argument("--instructions", action="store_true",
                    help="also count each command's instructions under valgrind (load-independent; slow at 100k lines)")
    ap.add_argument("--args", default="", help="more of sacrebleu's options, given to both commands (e.g. "
                    "--args=\"-tok intl\"; default: none, BLEU with 13a)")
    ap.add_argument("--files", nargs=2, type=Path, metavar=("REF", "HYP"),
                    help="score this reference and system output (one size: their lines) instead of --sizes")
    add_workdir_argument(ap)
    a = ap.parse_args(argv)
    extra = shlex.split(a.args)
    sizes = [int(s) for s in a.sizes.split(",")] if a.files is None else [_lines(a.files[1])]
    # PYTHONDONTWRITEBYTECODE off: the children write the bytecode caches of what they import (an installed package
    # has them; a module edited since its cache was written would otherwise be compiled anew by every run)
    env = {k: v for k, v in os.environ.items() if k not in ("SACREBLEU_FORMAT", "NO_COLOR", "PYTHONDONTWRITEBYTECODE")}
    if a.instructions and shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind")
    version = subprocess.run([a.python, "-c", "import sacrebleu, sys; print(sacrebleu.__version__, sys.version.split()[0])"],
                             capture_output=True, text=True, env=env).stdout.split()
    print(f"# start-up: {platform.machine()}, {os.cpu_count()} CPUs, Python {version[1] if len(version) > 1 else '?'}, "
          f"sacrebleu {version[0] if version else '?'}; {a.python}; best of {a.rounds} rounds, CPU seconds "
          "(user + system) of the whole command" + (f"; options: {' '.join(extra)}" if extra else ""))
    print(f"{'lines':>8} {'source':>9} {'beambleu':>9} {'sacrebleu':>9} {'speed-up':>8}  same output"
          + ("  instructions: beambleu, sacrebleu, ratio" if a.instructions else ""))
    smallest = None
    for size in sizes:
        ref, hyp, source = write_files(size, a.workdir, a.corpora) if a.files is None else (*a.files, "given")
        smallest = smallest or (ref, hyp)
        cmds = commands(a.python, ref, hyp, extra)
        best = {name: float("inf") for name in cmds}
        outs = {}
        for r in range(a.rounds):
            order = list(cmds) if r % 2 == 0 else list(reversed(cmds))  # alternate which goes first
            for name in order:
                cpu, outs[name] = child_cpu(cmds[name], env)
                best[name] = min(best[name], cpu)
        same = same_output(outs["beambleu"], outs["sacrebleu"])
        counts = ""
        if a.instructions:
            ours, theirs = (instructions(cmds[name], env) for name in ("beambleu", "sacrebleu"))
            counts = f"         {ours / 1e6:,.0f}M, {theirs / 1e6:,.0f}M, {theirs / ours:.2f}x"
        print(f"{size:>8,} {source:>9} {best['beambleu']:>9.3f} {best['sacrebleu']:>9.3f} "
              f"{best['sacrebleu'] / best['beambleu']:>7.2f}x  {'yes' if same else 'NO'}{counts}")
    ref, hyp = smallest
    print(f"\n# imports of {sizes[0]} lines (-X importtime, the least of 3 runs; heavy: loaded or not)")
    probe = "import importlib.util as u, sys; print(*[h for h in sys.argv[1:] if u.find_spec(h) is None])"
    absent = set(subprocess.run([a.python, "-c", probe, *HEAVY], capture_output=True, text=True, env=env).stdout.split())
    for name, cmd in commands(a.python, ref, hyp, extra).items():
        rows = importtime(cmd, env)
        loaded = {m for _, m, _, _ in rows}
        total = _total(rows)
        heavy = ", ".join(f"{h} {'not installed' if h in absent else 'yes' if h in loaded else 'no'}" for h in HEAVY)
        print(f"{name:>9}: {len(rows)} modules, {total / 1e3:.0f} ms of imports; {heavy}")
        if name == "beambleu":
            ours = rows
    rows = ours
    print(f"\n# beambleu's top {a.top} imports by cumulative time (any depth)")
    shown = []
    for depth, name, own, cum in sorted(rows, key=lambda r: -r[3]):
        if any(name.startswith(s + ".") or name == s for s in shown):
            continue
        shown.append(name)
        print(f"{cum / 1e3:>8.1f} ms  {own / 1e3:>6.1f} ms self  {name}")
        if len(shown) == a.top:
            break


if __name__ == "__main__":
    main()

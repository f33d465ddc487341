"""Many systems and significance tests: ``beambleu score`` against ``sacrebleu``, whole commands.

    python -m benchmarks.significance                     # wmt22 de-en: 9 systems, 2 references
    python -m benchmarks.significance --tests table,ar    # only some of the three commands
    python -m benchmarks.significance --folder wmt21/en-de --rounds 3

For each test (``table``: the multi-system table; ``ar``: ``--paired-ar``, 10,000 trials; ``bs``:
``--paired-bs``, 1,000 replicates) both tools run as child processes with the same arguments,
``REF... -i SYS... -m bleu chrf [--paired-ar|--paired-bs] -f text`` (the first system in sorted
order is the baseline), in turn in each of ``--rounds`` rounds (a change in the machine's load
falls on both), and each side's time is the best of its CPU times (user + system of the child,
start-up and imports included; the children may write bytecode caches, as installed tools do, so
a first round pays for compiling and the best round does not). The two outputs must be equal byte
for byte, the version in the signatures aside; a difference stops the benchmark. Needs
../shared/corpora (or ``--corpora``/``BEAMBLEU_CORPORA``).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from .corpus import DEFAULT_CORPORA

TESTS = {"table": [], "ar": ["--paired-ar"], "bs": ["--paired-bs"]}
_VERSION = re.compile(rb"version:[^|\s]*")
# both tools as installed for use: with their bytecode cached (the first round writes it)
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def run_cpu(cmd, cwd) -> tuple[float, bytes]:
    """(user + system CPU seconds, stdout) of one child process, reaped with wait4 so that its
    own usage is read."""
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=_ENV)
    chunks = []
    while True:
        data = proc.stdout.read(1 << 16)
        if not data:
            break
        chunks.append(data)
    proc.stdout.close()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"benchmarks.significance: {Path(cmd[0]).name} exited {proc.returncode}")
    return usage.ru_utime + usage.ru_stime, b"".join(chunks)


def interleaved(cmds, cwd, rounds: int) -> list[tuple[float, bytes]]:
    """(best CPU seconds, stdout) of each command, run one after another in each of ``rounds``
    rounds, so that a change in the machine's load falls on every command alike."""
    times, outs = [[] for _ in cmds], [b""] * len(cmds)
    for _ in range(rounds):
        for i, cmd in enumerate(cmds):
            t, outs[i] = run_cpu(cmd, cwd)
            times[i].append(t)
    return [(min(t), out) for t, out in zip(times, outs)]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpora", default=os.environ.get("BEAMBLEU_CORPORA", str(DEFAULT_CORPORA)))
    ap.add_argument("--folder", default="wmt22/de-en", help="a corpora folder with ref.*.txt and sys.*.txt")
    ap.add_argument("--tests", default="table,ar,bs", help="comma-separated: table, ar, bs")
    ap.add_argument("--rounds", type=int, default=2, help="runs of each command; the best CPU time counts")
    args = ap.parse_args(argv)
    tests = [t for t in args.tests.split(",") if t]
    unknown = [t for t in tests if t not in TESTS]
    if unknown:
        ap.error(f"unknown test {unknown[0]!r}: choose from {', '.join(TESTS)}")
    folder = Path(args.corpora) / args.folder
    refs = sorted(p.name for p in folder.glob("ref.*.txt"))
    systems = sorted(p.name for p in folder.glob("sys.*.txt"))
    if not refs or len(systems) < 2:
        raise SystemExit(f"benchmarks.significance: {folder} has no references or fewer than 2 systems")
    tools = {"sacrebleu": shutil.which("sacrebleu"), "beambleu": shutil.which("beambleu")}
    if not all(tools.values()):
        raise SystemExit("benchmarks.significance: needs the sacrebleu and beambleu commands on PATH")
    with open(folder / refs[0], "rb") as f:
        lines = sum(1 for _ in f)
    print(f"{args.folder}: {len(systems)} systems, {len(refs)} references, {lines} lines; "
          f"CPU seconds, best of {args.rounds}")
    print(f"{'test':<8}{'sacrebleu':>12}{'beambleu':>12}{'ratio':>10}")
    for test in tests:
        argv_ = [*refs, "-i", *systems, "-m", "bleu", "chrf", *TESTS[test], "-f", "text"]
        cmds = [[tools["sacrebleu"], *argv_], [tools["beambleu"], "score", *argv_]]
        (theirs, t_out), (ours, o_out) = interleaved(cmds, folder, args.rounds)
        if _VERSION.sub(b"", t_out) != _VERSION.sub(b"", o_out):
            raise SystemExit(f"benchmarks.significance: {test}: the outputs differ")
        print(f"{test:<8}{theirs:>12.2f}{ours:>12.2f}{theirs / ours:>9.1f}x")
    sys.stdout.flush()


if __name__ == "__main__":
    main()

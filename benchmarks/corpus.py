"""The benchmark corpus: real WMT text from ../shared/corpora, or a documented synthetic one.

Real: every system output of every test set (folder by folder, system by system) paired with
its reference(s) -- the first reference for 1-reference corpora, the first two for 2-reference
corpora (test sets with at least two) -- repeated in that order until the size is reached.
The unique pairs number several hundred thousand, more than the 2**16 entries of sacrebleu's
tokenizer caches, so repetition does not turn into cache hits for sacrebleu; references do
repeat across the systems of a test set, as they do in any real multi-system evaluation.

Synthetic (when the corpora are absent): Zipf-distributed words from a 30,000-word
vocabulary of random lowercase strings, sentence lengths 5-40, a little punctuation and
digits; references share about 60% of the candidate's words. Seeded, so reproducible.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator, List, Optional, Tuple

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

DEFAULT_CORPORA = Path(os.environ.get("BEAMBLEU_CORPORA", Path(__file__).resolve().parents[1].parent / "shared" / "corpora"))
ROW_GROUP = 50_000


def _lines(path: Path) -> List[str]:
    with open(path, encoding="utf-8", newline="\n") as fh:
        return [line.rstrip() for line in fh]


def real_system_pairs(corpora: Path, nrefs: int) -> Iterator[Tuple[str, str, List[str]]]:
    """(system, candidate, references) in real_pairs' order; system is ``<test set>/<system>``."""
    for folder in sorted(p.parent for p in corpora.glob("*/*/src.txt")):
        refs = sorted(folder.glob("ref.*.txt"))
        if len(refs) < nrefs:
            continue
        ref_lines = [_lines(r) for r in refs[:nrefs]]
        for sys_file in sorted(folder.glob("sys.*.txt")):
            system = f"{folder.parent.name}-{folder.name}/{sys_file.name[4:-4]}"
            for hyp, *rs in zip(_lines(sys_file), *ref_lines):
                yield system, hyp, rs


def real_pairs(corpora: Path, nrefs: int) -> Iterator[Tuple[str, List[str]]]:
    for _, hyp, rs in real_system_pairs(corpora, nrefs):
        yield hyp, rs


def synthetic_pairs(nrefs: int, seed: int = 0) -> Iterator[Tuple[str, List[str]]]:
    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    vocab = ["".join(rng.choice(letters, rng.integers(1, 10))) for _ in range(30_000)]
    vocab[:6] = [",", ".", "the", "of", "1,000", "3.5"]
    ranks = np.arange(1, len(vocab) + 1)
    p = 1.0 / ranks
    p /= p.sum()
    while True:
        n = int(rng.integers(5, 41))
        words = rng.choice(len(vocab), n, p=p)
        hyp = " ".join(vocab[w] for w in words)
        refs = []
        for _ in range(nrefs):
            keep = rng.random(n) < 0.6
            other = rng.choice(len(vocab), n, p=p)
            refs.append(" ".join(vocab[w if k else o] for w, k, o in zip(words, keep, other)))
        yield hyp + ".", refs


SYNTHETIC_SYSTEMS = 20


def _system_pairs(source: str, corpora: Optional[Path], nrefs: int) -> Iterator[Tuple[str, str, List[str]]]:
    if source == "wmt":
        return real_system_pairs(corpora, nrefs)
    # synthetic: SYNTHETIC_SYSTEMS systems, each a run of consecutive pairs, as a system's file is
    return ((f"sys{i // 1000 % SYNTHETIC_SYSTEMS:02d}", hyp, rs) for i, (hyp, rs) in enumerate(synthetic_pairs(nrefs)))


def build(size: int, nrefs: int, workdir: Path, corpora: Optional[Path] = DEFAULT_CORPORA,
          systems: bool = False) -> Tuple[Path, str]:
    """Write (or reuse) ``bench-<source>-<size>-<nrefs>ref.parquet``; returns (path, source).

    ``systems``: a third column, ``system`` (the pair's test set and system, as ``--group-by system``
    reads it), in ``bench-<source>-<size>-<nrefs>ref-systems.parquet``.
    """
    source = "wmt" if corpora is not None and (corpora / "MANIFEST.tsv").exists() else "synthetic"
    path = workdir / f"bench-{source}-{size}-{nrefs}ref{'-systems' if systems else ''}.parquet"
    if path.exists():
        return path, source
    workdir.mkdir(parents=True, exist_ok=True)
    fields = [("candidate", pa.string()), ("references", pa.list_(pa.string()))]
    schema = pa.schema(fields + [("system", pa.string())] if systems else fields)

    def table(rows):
        columns = {"candidate": [r[1] for r in rows], "references": [r[2] for r in rows]}
        if systems:
            columns["system"] = [r[0] for r in rows]
        return pa.table(columns, schema=schema)

    tmp = path.with_suffix(".tmp")
    with pq.ParquetWriter(tmp, schema) as writer:
        written = 0
        while written < size:
            rows = []
            for row in _system_pairs(source, corpora, nrefs):
                rows.append(row)
                if len(rows) == ROW_GROUP or written + len(rows) == size:
                    writer.write_table(table(rows))
                    written += len(rows)
                    rows = []
                    if written == size:
                        break
            if rows:
                writer.write_table(table(rows))
                written += len(rows)
    os.replace(tmp, path)
    return path, source


def add_workdir_argument(ap) -> None:
    """--workdir, shared by every benchmark."""
    ap.add_argument("--workdir", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "beambleu-bench",
                    help="where benchmark corpora are written and reused")


def add_corpus_arguments(ap) -> None:
    """--workdir and --corpora, shared by every benchmark over the corpus."""
    add_workdir_argument(ap)
    ap.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA,
                    help="the shared corpora (a synthetic corpus is used when absent)")


def sized_parser(prog: str, doc: str, size: int = 1_000_000, rounds: int = 2):
    """The argument parser of a benchmark over one corpus size, repeated ``--rounds`` times."""
    import argparse

    ap = argparse.ArgumentParser(prog=prog, description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=size, help="pairs in the corpus (default: %(default)s)")
    ap.add_argument("--rounds", type=int, default=rounds, help="runs of each configuration (default: %(default)s)")
    add_corpus_arguments(ap)
    return ap

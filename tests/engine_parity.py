"""What every real engine must reproduce: the local runner's outputs, byte for byte.

A *case* is an input and a set of flags (BLEU + chrF per system, with --confidence and
--sentence-output, or with --paired-ar). `local_outputs(case)` runs it once per test session on
the local runner; `assert_engine_matches_local(case, engine_options, ...)` runs the same command
with an engine's pipeline options in a child process and compares:

* the result JSON, byte for byte (it has no timing or runner field);
* the group table (CSV), byte for byte;
* the per-pair Parquet of --sentence-output: the same rows (in row-identity order) and the same
  manifest of part files.

The tests of each engine (tests/beambleu/beam/test_engine_*.py) start the engine once and call this.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pyarrow as pa
import pyarrow.parquet as pq

from .engines import beambleu_subprocess
from .oracle import CORPORA
from .pipeline_helpers import corpus_rows, run_cli, write_shards

SAMPLE = Path(__file__).resolve().parents[1] / "examples" / "sample" / "shards" / "*.parquet"
# the real case: WMT22 de-en, every system, 2 references, its first REAL_LINES segments
REAL_FOLDER = "wmt22/de-en"
REAL_LINES = 300
REAL_BASELINE = "Online-A"  # one of its systems

COMMON = ["--metrics", "bleu,chrf", "--group-by", "system", "--id-column", "line"]
# the SDK-worker kill tests: TER beside (its edit distances cost ten times BLEU and chrF together), so that
# a worker stays busy for seconds past its imports however fast the other kernels get, and is killed mid-job
BUSY = ["--metrics", "bleu,chrf,ter", "--group-by", "system", "--id-column", "line"]


@dataclass(frozen=True)
class Case:
    name: str
    data: str  # "sample" or "real"
    flags: Tuple[str, ...]
    sentences: bool = False


CASES = {
    "sample-confidence": Case("sample-confidence", "sample", ("--confidence", "--confidence-n", "200"), True),
    "sample-paired-ar": Case("sample-paired-ar", "sample", ("--paired-ar", "--paired-ar-n", "500",
                                                            "--baseline", "alpha")),
    "real-confidence": Case("real-confidence", "real", ("--confidence", "--confidence-n", "200"), True),
    "real-paired-ar": Case("real-paired-ar", "real", ("--paired-ar", "--paired-ar-n", "500")),
}


def real_available() -> bool:
    return (CORPORA / "MANIFEST.tsv").exists()


@dataclass
class Inputs:
    """The shards of each data set, written once per session."""
    root: Path
    globs: Dict[str, str] = field(default_factory=dict)
    local: Dict[str, "Outputs"] = field(default_factory=dict)

    def glob(self, data: str) -> str:
        if data == "sample":
            return str(SAMPLE)
        if data not in self.globs:
            rows = [r for r in corpus_rows([REAL_FOLDER]) if r["line"] <= REAL_LINES]
            self.globs[data] = write_shards(rows, self.root / data, n_shards=4, row_group_size=250,
                                            shuffle_seed=11)
        return self.globs[data]

    def argv(self, case: Case, out_dir: Path) -> List[str]:
        argv = ["--input", self.glob(case.data), *COMMON, *case.flags,
                "--output", out_dir / "result.json", "--groups-output", out_dir / "groups.csv",
                "--progress", "off"]
        if case.data == "real" and "--paired-ar" in case.flags:
            argv += ["--baseline", REAL_BASELINE]
        if case.sentences:
            argv += ["--sentence-output", out_dir / "pairs"]
        return [str(a) for a in argv]

    def local_outputs(self, case: Case) -> "Outputs":
        if case.name not in self.local:
            out_dir = self.root / "local" / case.name
            out_dir.mkdir(parents=True)
            rc, _, err = run_cli(*self.argv(case, out_dir))
            assert rc == 0, err
            self.local[case.name] = Outputs.read(out_dir, case)
        return self.local[case.name]


@dataclass
class Outputs:
    result: bytes
    groups: bytes
    pairs: Optional[pa.Table]
    manifest: Optional[Dict]

    @classmethod
    def read(cls, out_dir: Path, case: Case) -> "Outputs":
        pairs = manifest = None
        if case.sentences:
            d = out_dir / "pairs"
            manifest = json.loads((d / "_beambleu_manifest.json").read_text())
            table = pa.concat_tables(pq.read_table(p) for p in sorted(d.glob("*.parquet")))
            pairs = table.sort_by([("file", "ascending"), ("row", "ascending")])
        return cls((out_dir / "result.json").read_bytes(), (out_dir / "groups.csv").read_bytes(), pairs, manifest)


def assert_engine_matches_local(inputs: Inputs, case: Case, engine_options: List[str], out_dir: Path,
                                timeout: float = 600, logs=lambda: "") -> subprocess.CompletedProcess:
    """Run `case` with `engine_options` in a child process; its outputs must be the local runner's."""
    expected = inputs.local_outputs(case)
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    try:
        proc = beambleu_subprocess(["run", *inputs.argv(case, out_dir), *engine_options], timeout=timeout)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"{case.name}: the job did not finish in {timeout:.0f} s\n{logs()}") from None
    assert proc.returncode == 0, f"{case.name}: exit {proc.returncode}\n{proc.stderr}\n{logs()}"
    got = Outputs.read(out_dir, case)
    assert got.result == expected.result, case.name
    assert got.groups == expected.groups, case.name
    if case.sentences:
        assert got.manifest == expected.manifest, case.name
        assert got.pairs.equals(expected.pairs), case.name
    return proc

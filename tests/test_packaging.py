"""The sdist carries what it takes to build, test and deploy beambleu; sdist and wheel carry the license."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path
from typing import List

import pytest

REPO = Path(__file__).resolve().parents[1]
NAME = "beambleu-0.1.0"
# folders the tests, benchmarks and deploy checks read besides the packages
FOLDERS = ("tests", "examples", "benchmarks", "deploy", ".ci")
FILES = ("LICENSE", "README.md", "pyproject.toml", "setup.py", "MANIFEST.in")
# today's kernels' sources; the sdist must carry every C file and header under bleu_core/ (each C file is one
# extension module every wheel carries), these and any added later
KERNEL_SOURCES = ("bleu_core/metrics/bleu/_bleu.c", "bleu_core/metrics/chrf/_chrf.c", "bleu_core/metrics/ter/_ter.c",
                  "bleu_core/resampling/_resample.c", "bleu_core/tokenizers/_spm_ids.c",
                  "bleu_core/kernels/_buffers.h", "bleu_core/kernels/_text.h", "bleu_core/kernels/_cps.h",
                  "bleu_core/kernels/_status.h")
# build products and local state that must never be shipped
FORBIDDEN = (".so", ".pyc", "__pycache__", ".venv", ".git", ".pytest_cache", ".hypothesis")
# sha256 of the Apache License 2.0 as published at https://www.apache.org/licenses/LICENSE-2.0.txt
APACHE_2_SHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"


def project_files() -> List[str]:
    """The project's files, relative to the checkout: git's tracked files, or (in a copy without git, such as
    an unpacked sdist or .ci/run's copy) every file but build products and local state."""
    if (REPO / ".git").exists():
        out = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
        return [name for name in out.decode().split("\0") if name and (REPO / name).is_file()]
    files = []
    for folder, dirs, names in os.walk(REPO):
        dirs[:] = sorted(d for d in dirs if d not in FORBIDDEN and not d.endswith(".egg-info"))
        files += [os.path.relpath(os.path.join(folder, n), REPO) for n in sorted(names) if not n.endswith(FORBIDDEN)]
    return files


def kernel_sources() -> List[str]:
    """The C sources and headers of the kernels in the checkout."""
    return sorted(f for f in project_files() if f.startswith("bleu_core/") and f.endswith((".c", ".h")))


def kernels() -> List[str]:
    """The compiled modules every wheel carries (module paths), one per C source."""
    return [f[:-2] for f in kernel_sources() if f.endswith(".c")]


def test_the_kernels_are_found_in_the_tree():
    # at least today's kernels (a new one is found without a line here)
    assert set(KERNEL_SOURCES) <= set(kernel_sources())


def test_license_is_the_apache_2_text():
    assert hashlib.sha256((REPO / "LICENSE").read_bytes()).hexdigest() == APACHE_2_SHA256


@pytest.mark.slow
def test_sdist_has_tests_examples_and_deploy_and_both_dists_carry_the_license(tmp_path):
    # a copy of the project (a build in the checkout would reuse its egg-info's stale file list), with what a
    # working tree also holds: the kernel built in place, bytecode caches
    src, dist = tmp_path / "src", tmp_path / "dist"
    for name in set(project_files()) | {f for f in FILES if (REPO / f).is_file()}:
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, src / name)
    for kernel in kernels():
        (src / f"{kernel}.cpython-311-x86_64-linux-gnu.so").write_bytes(b"")
    for folder in ("tests", "benchmarks"):
        (src / folder / "__pycache__").mkdir()
        (src / folder / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"")
    # `python -m build` makes the sdist, then the wheel from the unpacked sdist
    proc = subprocess.run([sys.executable, "-m", "build", "--outdir", str(dist), str(src)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]

    with tarfile.open(dist / f"{NAME}.tar.gz") as sdist:
        members = {m.name.removeprefix(f"{NAME}/") for m in sdist.getmembers() if m.isfile()}
        pkg_info = sdist.extractfile(f"{NAME}/PKG-INFO").read().decode()
    wanted = set(FILES) | set(kernel_sources()) | {f for f in project_files() if f.split("/", 1)[0] in FOLDERS}
    assert {"tests/oracle.py", "tests/conftest.py", "examples/sample/shards/alpha.parquet", ".ci/run",
            "deploy/validate.py", "benchmarks/core.py"} <= wanted
    assert sorted(wanted - members) == []
    # the documents the README links to ship with it
    documents = {"CONTRIBUTING.md"} | {f for f in project_files() if f.startswith("docs/")}
    assert "docs/ARCHITECTURE.md" in documents and sorted(documents - members) == []
    shipped_junk = [m for m in members if m.endswith(FORBIDDEN) or set(m.split("/")) & set(FORBIDDEN)]
    assert shipped_junk == []
    assert "License-Expression: Apache-2.0" in pkg_info and "License-File: LICENSE" in pkg_info

    (wheel_path,) = dist.glob(f"{NAME}-*.whl")
    with zipfile.ZipFile(wheel_path) as wheel:
        names = set(wheel.namelist())
        assert wheel.read(f"{NAME}.dist-info/licenses/LICENSE") == (REPO / "LICENSE").read_bytes()
        assert "License-File: LICENSE" in wheel.read(f"{NAME}.dist-info/METADATA").decode()
    for kernel in kernels():
        assert any(n.startswith(f"{kernel}.") and n.endswith(".so") for n in names), kernel
    # the pipeline/ folder is installed as the package `beambleu`: no generic top-level `pipeline` module
    assert "beambleu/cli.py" in names and "beambleu/__main__.py" in names
    # every package folder, with its modules (a folder left out of [tool.setuptools] packages installs
    # from a checkout in editable mode, and is missing from the wheel), and the result's JSON Schema
    for root, target in (("pipeline", "beambleu"), ("bleu_core", "bleu_core")):
        for init in (REPO / root).rglob("__init__.py"):
            for module in init.parent.glob("*.py"):
                assert f"{target}/{module.relative_to(REPO / root).as_posix()}" in names, module
    assert "beambleu/groups/result.schema.json" in names
    assert {n.split("/")[0] for n in names if not n.startswith(f"{NAME}.dist-info")} == {"bleu_core", "beambleu"}
    assert not [n for n in names if n.startswith(("tests/", "examples/")) or n.endswith(".c")]

"""sacrebleu 2.6.0's own test suite, run against bleu_core.compat.

The suite is not in this repository: its sdist is fetched from PyPI at test time (``pip download``,
cached under ~/.cache/beambleu/sacrebleu-suite/; the test is skipped when PyPI cannot be reached),
and its ``test/`` folder and ``pytest.ini`` are extracted into a temporary folder. It runs twice in a
subprocess, each writing JUnit XML: once against the installed sacrebleu, once with a generated
package named ``sacrebleu``, first on PYTHONPATH, that makes the name ``sacrebleu`` and each of its
modules (``sacrebleu.metrics``, ``sacrebleu.tokenizers.tokenizer_ter``, ...) bleu_core.compat's
(``sys.modules`` aliases). Every test that passes against sacrebleu must pass against compat.

Both runs get the same environment: a private ``$SACREBLEU`` folder (the suite deletes and
downloads test sets there; the user's cache is never touched) and HTTP(S) proxies at a closed local
port, so that the suite's downloads of test sets (gigabytes, online) fail at once, for sacrebleu as
for compat; those tests are then failures of both runs and are not compared.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tarfile
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytest.importorskip("sacrebleu")

VERSION = "2.6.0"
CACHE = Path(os.path.expanduser("~")) / ".cache" / "beambleu" / "sacrebleu-suite"
ROOT = Path(__file__).resolve().parents[3]

SHIM = '''\
"""A stand-in for sacrebleu made by beambleu's tests: the name sacrebleu and its modules are bleu_core.compat's."""
import importlib
import pkgutil
import sys

import bleu_core.compat as _compat

for _info in pkgutil.walk_packages(_compat.__path__, "bleu_core.compat."):
    if not _info.name.rpartition(".")[2].startswith("_"):
        importlib.import_module(_info.name)
for _key, _module in list(sys.modules.items()):
    if _key.startswith("bleu_core.compat.") and not _key.rpartition(".")[2].startswith("_"):
        sys.modules["sacrebleu" + _key[len("bleu_core.compat"):]] = _module
sys.modules["sacrebleu"] = _compat
'''


def _sdist() -> Path:
    """sacrebleu's sdist, from the cache or downloaded from PyPI (skip when PyPI is unreachable)."""
    found = sorted(CACHE.glob(f"sacrebleu-{VERSION}.tar.gz"))
    if found:
        return found[0]
    CACHE.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
           f"sacrebleu=={VERSION}", "-d", str(CACHE)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        pytest.skip("PyPI did not answer within 300 s: sacrebleu's sdist cannot be fetched")
    found = sorted(CACHE.glob(f"sacrebleu-{VERSION}.tar.gz"))
    if proc.returncode != 0 or not found:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        pytest.skip(f"sacrebleu {VERSION}'s sdist cannot be fetched from PyPI ({last})")
    return found[0]


def _extract(sdist: Path, dest: Path) -> Path:
    """The suite (``test/`` and ``pytest.ini``) alone in ``dest``: not sacrebleu's sources, which the
    run from that folder would otherwise import instead of the package under test."""
    top = f"sacrebleu-{VERSION}/"
    with tarfile.open(sdist) as tar:
        members = [m for m in tar.getmembers()
                   if m.name.startswith(top + "test/") or m.name == top + "pytest.ini"]
        for m in members:
            m.name = m.name[len(top):]
        tar.extractall(dest, members=members, filter="data")
    assert (dest / "pytest.ini").is_file() and (dest / "test").is_dir()
    return dest


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the block ends: connections are refused


def _run(suite: Path, label: str, pythonpath: list[str], home: Path) -> dict[str, str]:
    """Each test's outcome (``passed``, ``failed``, ``skipped``) by its id."""
    xml = suite.parent / f"{label}.xml"
    proxy = f"http://127.0.0.1:{_closed_port()}"
    env = {k: v for k, v in os.environ.items() if k.lower() not in ("no_proxy", "pythonpath")}
    env.update(PYTHONPATH=os.pathsep.join(pythonpath), SACREBLEU=str(home), http_proxy=proxy, https_proxy=proxy,
               HTTP_PROXY=proxy, HTTPS_PROXY=proxy, PYTHONDONTWRITEBYTECODE="1")
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-o", "addopts=",
           f"--junitxml={xml}", "test"]
    proc = subprocess.run(cmd, cwd=suite, env=env, capture_output=True, text=True, timeout=1800)
    assert xml.is_file(), f"{label}: pytest wrote no report (exit {proc.returncode}): {proc.stdout[-2000:]}"
    outcomes = {}
    for case in ET.parse(xml).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        kinds = {child.tag for child in case}
        outcomes[name] = ("failed" if kinds & {"failure", "error"} else "skipped" if "skipped" in kinds
                          else "passed")
    return outcomes


@pytest.mark.slow
def test_sacrebleus_own_suite_passes_against_compat(tmp_path):
    suite = _extract(_sdist(), tmp_path / "suite")
    shim = tmp_path / "shim"
    (shim / "sacrebleu").mkdir(parents=True)
    (shim / "sacrebleu" / "__init__.py").write_text(SHIM)

    theirs = _run(suite, "sacrebleu", [], tmp_path / "home-sacrebleu")
    ours = _run(suite, "compat", [str(shim), str(ROOT)], tmp_path / "home-compat")

    passing = sorted(name for name, outcome in theirs.items() if outcome == "passed")
    assert len(passing) >= 100, f"only {len(passing)} of sacrebleu's tests pass against sacrebleu: {theirs}"
    # the metric tests all pass against sacrebleu, offline too
    for module in ("test_bleu", "test_chrf", "test_ter", "test_tokenizer_ter", "test_sentence_bleu",
                   "test_significance"):
        assert any(name.startswith(f"test.{module}::") for name in passing), module
    regressions = {name: ours.get(name, "missing") for name in passing if ours.get(name) != "passed"}
    assert not regressions, textwrap.shorten(f"pass against sacrebleu, not against compat: {regressions}", 4000)


def test_the_shim_really_is_compat(tmp_path):
    """The stand-in gives compat's objects under sacrebleu's names (so the suite's run tests compat),
    and the test-set registry behind them is still sacrebleu's own."""
    shim = tmp_path / "shim"
    (shim / "sacrebleu").mkdir(parents=True)
    (shim / "sacrebleu" / "__init__.py").write_text(SHIM)
    code = textwrap.dedent("""
        import sacrebleu, bleu_core.compat
        from sacrebleu.tokenizers.tokenizer_ter import TercomTokenizer
        from sacrebleu.metrics import BLEU
        from sacrebleu.dataset import DATASETS
        print(sacrebleu is bleu_core.compat, BLEU.__module__, TercomTokenizer.__module__,
              type(DATASETS["wmt22"]).__module__)
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(shim), str(ROOT)])}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "bleu_core.compat.metrics.bleu", "bleu_core.compat.tokenizers.tokenizer_ter",
                           "_bleu_core_compat_sacrebleu.dataset.wmt_xml"]

"""Beam's Prism runner, built here from the Go module at the installed apache-beam's version
(`python deploy/engines.py fetch prism`), started once for this module (`start prism`) with an
external SDK worker pool, and also started by Beam itself (`--runner PrismRunner --prism_location`).
Every output is the local runner's, byte for byte (tests/engine_parity.py)."""

from __future__ import annotations

import pytest

pytest.importorskip("apache_beam")

from .engine_parity import CASES, assert_engine_matches_local, real_available  # noqa: E402
from .engines import beambleu_subprocess, engine_service, fetch_or_skip  # noqa: E402


@pytest.fixture(scope="module")
def prism(tmp_path_factory):
    binary = fetch_or_skip("prism")
    state = tmp_path_factory.mktemp("prism")
    with engine_service("prism", state) as job, engine_service("worker-pool", state) as pool:
        yield {"binary": binary, "job": job, "pool": pool, "state": state}


def prism_options(prism):
    return ["--runner", "PrismRunner", f"--job_endpoint=localhost:{prism['job']['port']}",
            "--environment_type=EXTERNAL", f"--environment_config=localhost:{prism['pool']['port']}"]


def logs(prism):
    return lambda: "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}"
                             for p in sorted(prism["state"].glob("*.log")))


@pytest.mark.parametrize("name", list(CASES))
def test_prism_equals_local_runner(engine_inputs, prism, name, tmp_path):
    case = CASES[name]
    if case.data == "real" and not real_available():
        pytest.skip("shared corpora not present")
    assert_engine_matches_local(engine_inputs, case, prism_options(prism), tmp_path / "out", logs=logs(prism))


def test_prism_runner_started_by_beam(engine_inputs, prism, tmp_path):
    """The user's command: Beam starts the Prism binary itself and runs the workers in process."""
    assert_engine_matches_local(engine_inputs, CASES["sample-confidence"],
                                ["--runner", "PrismRunner", f"--prism_location={prism['binary']}",
                                 "--environment_type=LOOPBACK"], tmp_path / "out")


def test_prism_binary_that_cannot_start_is_one_line(engine_inputs, tmp_path):
    """A --prism_location that is not a program: one line, exit 1, no output, in bounded time."""
    bad = tmp_path / "prism"
    bad.write_text("not a program\n")
    out = tmp_path / "r.json"
    proc = beambleu_subprocess(["run", "--input", engine_inputs.glob("sample"), "--output", out,
                                "--runner", "PrismRunner", f"--prism_location={bad}"], timeout=120)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("beambleu: error: "), proc.stderr
    assert "Traceback" not in proc.stderr
    assert not out.exists()

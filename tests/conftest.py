import os
import shutil
import tempfile

import pytest

from .oracle import corpora, spm_dir, spm_home  # noqa: F401  (fixtures)


def _kernels() -> str:
    """``BEAMBLEU_KERNELS`` as bleu_core read it (a bad value: pytest's usage error, one line)."""
    try:
        from bleu_core.kernels import KERNELS
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    return KERNELS


def pytest_configure(config):
    _kernels()
    # beambleu's cache folder (the Unicode flag table: bleu_core/tokenizers/_unicode.py) is the session's own,
    # shared by xdist's workers and the commands tests run (they inherit it), removed at the end
    if "BEAMBLEU_CACHE_DIR" not in os.environ:
        config._beambleu_cache = tempfile.mkdtemp(prefix="beambleu-test-cache-")
        os.environ["BEAMBLEU_CACHE_DIR"] = config._beambleu_cache


def pytest_unconfigure(config):
    cache = getattr(config, "_beambleu_cache", None)
    if cache is not None:
        shutil.rmtree(cache, ignore_errors=True)
        os.environ.pop("BEAMBLEU_CACHE_DIR", None)


def pytest_report_header(config):
    """Which kernels the metrics' batch paths ran on, in every log: ``BEAMBLEU_KERNELS=python`` runs
    the suite on the reference paths (bleu_core.kernels)."""
    if _kernels() == "python":
        return ["beambleu kernels: python (BEAMBLEU_KERNELS=python: every metric's batch_stats runs its "
                "reference path, scalar_stats)"]
    return ["beambleu kernels: c (compiled)"]


@pytest.fixture(scope="session")
def engine_inputs(tmp_path_factory):
    """The inputs and local-runner outputs every engine's tests compare with (tests/engine_parity.py),
    made once per session."""
    from .engine_parity import Inputs

    return Inputs(tmp_path_factory.mktemp("engine-parity"))


# `pytest -n auto --dist loadgroup` (the README's test command) sends each xdist group to one worker.
# Every file is its own group, so its module fixtures start once, as with --dist loadfile; the files
# that start Flink, Spark or Prism share one group, so that no two of those engines (JVMs of several
# GiB, each timing its own health checks) start side by side on a 2-core machine, and the
# session-scoped `engine_inputs` are made once.
ENGINE_FILES = frozenset({"test_engine_flink.py", "test_engine_spark.py", "test_engine_prism.py", "test_engine_errors.py"})


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the marks
def pytest_collection_modifyitems(config, items):
    for item in items:
        name = item.path.name
        item.add_marker(pytest.mark.xdist_group("engines" if name in ENGINE_FILES else name))

import pytest

from .oracle import corpora, spm_dir, spm_home  # noqa: F401  (fixtures)


@pytest.fixture(scope="session")
def engine_inputs(tmp_path_factory):
    """The inputs and local-runner outputs every engine's tests compare with (tests/engine_parity.py),
    made once per session."""
    from .engine_parity import Inputs

    return Inputs(tmp_path_factory.mktemp("engine-parity"))

"""The README's test command runs `pytest -n auto --dist loadgroup`; tests/conftest.py gives each
file its own xdist group and the engine files one group together. xdist applies a group by
suffixing the nodeid with ``@<group>``; when that stops working (pytest 9.2 with xdist 3.8), the
tests are dealt out one by one, module fixtures start on both workers and two JVM engines start
side by side. This notices it."""

import pytest


def test_a_file_is_one_xdist_group(request):
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("not run with -n N --dist loadgroup")
    assert request.node.nodeid.endswith("@test_xdist_groups.py"), request.node.nodeid


def test_the_engine_files_share_one_group(request):
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("not run with -n N --dist loadgroup")
    engine_items = [i for i in request.session.items if i.path.name.startswith("test_engine_")]
    assert engine_items and {i.nodeid.rpartition("@")[2] for i in engine_items} == {"engines"}

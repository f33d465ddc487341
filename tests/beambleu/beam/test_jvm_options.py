"""The Flink job server's JVM is bounded (issue 34: Flink's processes within 1.5 GB): the options
deploy/engines.py starts it with and those beambleu gives the job server Beam starts itself. The
jobs themselves run with them in test_engine_flink.py (embedded and started by Beam); the memory
they take is measured by ``python -m benchmarks.engines``, not here."""

from __future__ import annotations

import pytest

pytest.importorskip("apache_beam")

from apache_beam.options.pipeline_options import JobServerOptions, PipelineOptions  # noqa: E402

from beambleu.beam import runners  # noqa: E402

from ...engines import deploy_engines  # noqa: E402

#: what docs and deploy/README.md say the Flink job server's JVM gets: a 1 GiB heap, the serial collector
FLINK_JVM = ["-Xmx1g", "-XX:+UseSerialGC"]


def _properties(argv):
    opts = PipelineOptions(argv)
    runners.default_jvm_options(opts)
    return opts.view_as(JobServerOptions).job_server_jvm_properties


def test_flink_job_server_started_by_beam_gets_a_bounded_heap():
    assert _properties(["--runner", "FlinkRunner"]) == FLINK_JVM


def test_the_users_jvm_properties_are_kept():
    assert _properties(["--runner", "FlinkRunner", "--job_server_jvm_properties=-Xmx4g"]) == ["-Xmx4g"]


@pytest.mark.parametrize("runner", ["SparkRunner", "PrismRunner", "DirectRunner"])
def test_other_runners_are_left_alone(runner):
    assert _properties(["--runner", runner]) == []


def test_deploy_engines_starts_the_flink_job_server_with_them(monkeypatch, tmp_path):
    eng = deploy_engines()
    jar = tmp_path / "job-server.jar"
    monkeypatch.setattr(eng, "fetch_job_server", lambda name: jar)
    argv = eng.service_argv("flink-job-server", 8099, "[local]")
    assert argv[:argv.index("-jar")] == ["java", *FLINK_JVM]
    assert argv[argv.index("-jar") + 1] == str(jar)
    spark = eng.service_argv("spark-job-server", 8098, "local[2]")
    assert not [a for a in spark if a.startswith("-Xmx")]

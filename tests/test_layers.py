"""The house's layers: `lint-imports` holds every import of bleu_core and beambleu (module-level and
inside functions) to the contracts of pyproject.toml's [tool.importlinter], and no import circle is
left, counting every import."""

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"bleu_core": ROOT / "bleu_core", "beambleu": ROOT / "pipeline"}


def test_lint_imports_keeps_every_contract():
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")
    if exe is None:
        pytest.fail("lint-imports is not installed (the test extra installs import-linter)")
    proc = subprocess.run([exe, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "BROKEN" not in proc.stdout and " KEPT" in proc.stdout


def _modules():
    found = {}
    for name, folder in PACKAGES.items():
        for path in [*folder.rglob("*.py"), *folder.rglob("*.c")]:  # a C file is its extension module
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join([name, *parts])] = path
    return found


def _imports(module: str, path: Path, known) -> set:
    """Every module of ours that ``module`` imports, wherever the import statement is."""
    if path.suffix == ".c":
        return set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(parts + ([node.module] if node.module else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != module:
                out.add(target)
    return out


def test_no_import_circle_counting_every_import():
    known = _modules()
    graph = {m: _imports(m, p, known) for m, p in known.items()}
    state, stack = {}, []

    def visit(m):  # depth-first; a module met again while on the stack closes a circle
        state[m] = "open"
        stack.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == "open":
                pytest.fail("import circle: " + " -> ".join(stack[stack.index(n):] + [n]))
            if n not in state:
                visit(n)
        stack.pop()
        state[m] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m)


def test_the_circle_finder_finds_a_circle(tmp_path, monkeypatch):
    """The check above can fail: two modules importing each other (one inside a function) are a circle."""
    pkg = tmp_path / "bleu_core"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from . import b\n")
    (pkg / "b.py").write_text("def f():\n    from .a import x\n")
    monkeypatch.setitem(PACKAGES, "bleu_core", pkg)
    monkeypatch.setitem(PACKAGES, "beambleu", tmp_path / "none")
    with pytest.raises(pytest.fail.Exception, match=r"import circle: bleu_core\.a -> bleu_core\.b -> bleu_core\.a"):
        test_no_import_circle_counting_every_import()

"""The README and the documents it links to (CONTRIBUTING.md, docs/*.md) run as written: their Python
snippets, every command of their ```sh blocks, and the library's docstring examples; their links lead to files
and headings that exist.

The commands of a document run one by one, in its order, each in its own shell, in a copy of the project folder
(the project's files plus the compiled kernel; one copy per document), with this environment's ``bin`` first on
``PATH`` so that ``beambleu`` and ``python3`` are the installed ones: that is the project folder of a user who
has run the README's first commands. How a ```sh block is read:

- a line ending in ``\\`` continues on the next one; ``# ...`` after a command is a comment;
- comment lines right after a command are what it prints on stdout (``# `` + the line, ``#`` alone for an
  empty line); other comment lines are comments;
- a ```text block after an ``<!-- ...-output -->`` marker that follows the ```sh block is what the block's
  last command prints;
- ``...`` in shown output stands for any text (doctest's ELLIPSIS).
"""

from __future__ import annotations

import doctest
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional

import pytest

import bleu_core
import bleu_core.metrics.bleu.reference
import bleu_core.tokenizers

from .test_packaging import REPO, project_files

# the documents whose snippets and commands are run: the README first, then what it links to
DOCUMENTS = ["README.md", "CONTRIBUTING.md"] + sorted(f"docs/{p.name}" for p in (REPO / "docs").glob("*.md"))
TEXTS = {name: (REPO / name).read_text(encoding="utf-8") for name in DOCUMENTS}
README = TEXTS["README.md"]

# Commands (of any of the DOCUMENTS) that cannot run here, with the reason. Lines with `pip install` are skipped
# too (the tests run in the environment those lines make), so the documents give them a line of their own.
SKIP = {
    "python3 -m venv .venv && . .venv/bin/activate":
        "makes and enters the environment this test runs in",
    'python3 -m venv .venv && . .venv/bin/activate && pip install -e ".[test,beam,dask,aws,gcp,plot,ja,ko,spm,yaml]" && pytest -n auto --dist loadgroup':
        "the test suite itself (.ci/run runs it in a fresh environment)",
    "beambleu score ref.txt -i hyp.txt -tok flores200":
        "needs the flores200 model, which this offline machine cannot download (tests/beambleu/commands/test_cli_spm.py runs score "
        "with each SentencePiece tokenizer against sacrebleu's CLI on models trained offline)",
    "beambleu run --input 'shards/*.parquet' --group-by system -tok flores200 --output spbleu.json":
        "needs the flores200 model and shards of one's own (tests/beambleu/beam/test_pipeline_spm.py and tests/beambleu/beam/test_engines.py "
        "run spBLEU on the local runner and on a dask cluster against sacrebleu)",
    "deploy/dask/start-local-cluster.sh 2 8786 &":
        "starts a dask cluster on the fixed port 8786 of a shared machine (tests/beambleu/beam/test_engines.py runs the "
        "sample on a dask cluster on a free port)",
    "beambleu run --input 'examples/sample/shards/*.parquet' --group-by system --output result.json "
    "--overwrite --runner dask --dask_client_address tcp://127.0.0.1:8786":
        "needs the dask cluster of the command before",
    "beambleu score -t wmt22 -l de-en -i output.detok.en -m bleu chrf -f text":
        "downloads wmt22 and needs a system output of it (tests/beambleu/commands/test_cli_testsets.py runs "
        "beambleu score -t against sacrebleu -t on a cache made from ../shared/corpora)",
    "beambleu convert -t wmt22 -l de-en -i output.detok.en -o shards/wmt22-de-en.parquet":
        "downloads wmt22 and needs a system output of it (tests/beambleu/commands/test_convert.py converts -t on a cache made "
        "from ../shared/corpora)",
    "beambleu run --input 's3://bucket/pairs/*.parquet' --output s3://bucket/results/bleu.json "
    "--s3_endpoint_url http://127.0.0.1:9000":
        "needs an S3 server with that bucket on 127.0.0.1:9000 (tests/beambleu/io/test_object_storage.py runs the "
        "same on moto's server)",
}


@dataclass
class Command:
    line: str  # continuations joined, trailing comment removed
    shown: Optional[List[str]] = None  # the output the README shows, line by line
    skip: Optional[str] = None  # why it is not run here


def strip_comment(line: str) -> str:
    """``line`` without a shell comment (``#`` starting a word outside quotes)."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line


def readme_commands(text: str) -> List[Command]:
    commands: List[Command] = []
    for block in re.finditer(r"```sh\n(.*?)```(?:\s*<!-- [\w-]*output -->\n```text\n(.*?)```)?", text, re.S):
        lines, last = block.group(1).splitlines(), None
        while lines:
            line = lines.pop(0)
            if line.startswith("#"):
                if last is not None and (line == "#" or line.startswith("# ")):
                    last.shown = (last.shown or []) + [line[2:]]
                continue
            if not line.strip():
                last = None
                continue
            while line.endswith("\\"):
                line = line[:-1].rstrip() + " " + lines.pop(0).strip()
            last = Command(strip_comment(line.strip()))
            last.skip = SKIP.get(last.line) or ("installs into the environment this test runs in"
                                                if "pip install " in last.line else None)
            commands.append(last)
        if block.group(2) is not None:
            assert last is not None and last.shown is None, "an output block after a block without a command"
            last.shown = block.group(2).splitlines()
    return commands


COMMANDS = readme_commands(README)
# every document's commands, README's included (the same Command objects as COMMANDS)
DOC_COMMANDS = {name: COMMANDS if name == "README.md" else readme_commands(TEXTS[name]) for name in DOCUMENTS}


def python_blocks(text: str) -> List[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


@pytest.mark.parametrize("document", [d for d in DOCUMENTS if d == "README.md" or python_blocks(TEXTS[d])])
def test_readme_examples(document):
    blocks = python_blocks(TEXTS[document])
    assert blocks
    globs, runner, parser = {}, doctest.DocTestRunner(optionflags=doctest.ELLIPSIS), doctest.DocTestParser()
    for i, block in enumerate(blocks):  # one namespace per document: later blocks use earlier names
        test = parser.get_doctest(block, globs, f"{document} block {i}", document, 0)  # copies globs
        runner.run(test, clear_globs=False)
        globs = test.globs
    result = runner.summarize(verbose=False)
    assert result.failed == 0 and result.attempted >= (8 if document == "README.md" else 1)


def test_docstring_examples():
    for module in (bleu_core, bleu_core.metrics.bleu.reference, bleu_core.tokenizers):
        result = doctest.testmod(module)
        assert result.failed == 0


def test_the_skip_list_names_readme_commands_only():
    """Every SKIP entry is a command of one of the documents (a stale entry would hide nothing, or a command
    that was changed)."""
    assert sorted(set(SKIP) - {c.line for commands in DOC_COMMANDS.values() for c in commands}) == []


def _slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it (lowercase, punctuation but - and _ removed, spaces to -)."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(text: str) -> set:
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    return {_slug(h) for h in re.findall(r"^#{1,6} (.+)$", text, flags=re.M)}


@pytest.mark.parametrize("document", DOCUMENTS)
def test_links_lead_to_files_and_headings_that_exist(document):
    """Relative links (``[text](path)``, ``[text](path#heading)``, ``[text](#heading)``) of a document: the file
    is in the project, and the heading is one of its headings."""
    text = re.sub(r"```.*?```", "", TEXTS[document], flags=re.S)
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    assert links
    files, broken = set(project_files()), []
    for link in links:
        if re.match(r"[a-z]+:", link):
            continue
        path, _, anchor = link.partition("#")
        target = os.path.normpath(os.path.join(os.path.dirname(document), path)) if path else document
        if path and not (target in files or any(f.startswith(target.rstrip("/") + "/") for f in files)):
            broken.append(f"{link}: no file {target}")
        elif anchor and (not target.endswith(".md") or anchor not in _anchors((REPO / target).read_text("utf-8"))):
            broken.append(f"{link}: no heading #{anchor} in {target}")
    assert broken == []


def _run_commands(commands: List[Command], folder: Path) -> Dict[int, subprocess.CompletedProcess]:
    """Every command that is not skipped, run in order in ``folder``, a fresh copy of the project folder."""
    for name in project_files():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, folder / name)
    for kernel in (REPO / "bleu_core").rglob("_*.so"):
        shutil.copy2(kernel, folder / kernel.relative_to(REPO))
    env = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    runs = {}
    for i, command in enumerate(commands):
        if command.skip is None:
            try:
                runs[i] = subprocess.run(["bash", "-c", command.line], cwd=folder, env=env, capture_output=True,
                                         encoding="utf-8", timeout=600)
            except subprocess.TimeoutExpired as exc:
                runs[i] = subprocess.CompletedProcess(exc.cmd, -1, "", f"timed out after {exc.timeout} s")
    return runs


@pytest.fixture(scope="module")
def document_runs(tmp_path_factory):
    """A document's commands run (once per document, in its own copy of the project folder): ``runs(document)``
    is ``{index of the command: its completed process}``."""
    done: Dict[str, Dict[int, subprocess.CompletedProcess]] = {}
    folders: Dict[str, Path] = {}

    def runs(document: str) -> Dict[int, subprocess.CompletedProcess]:
        if document not in done:
            folders[document] = tmp_path_factory.mktemp("project")
            done[document] = _run_commands(DOC_COMMANDS[document], folders[document])
        return done[document]

    runs.folders = folders  # the copy each document's commands ran in
    return runs


@pytest.mark.slow
@pytest.mark.parametrize("document,i", [
    pytest.param(d, i, id=c.line[:80] if d == "README.md" else f"{d}: {c.line[:80]}",
                 marks=[pytest.mark.skip(reason=c.skip)] * bool(c.skip))
    for d in DOCUMENTS for i, c in enumerate(DOC_COMMANDS[d])])
def test_readme_command(document, i, document_runs):
    command, proc = DOC_COMMANDS[document][i], document_runs(document)[i]
    assert proc.returncode == 0, f"{command.line}\nexit code {proc.returncode}\n{proc.stderr[-3000:]}"
    if command.shown is not None:
        want = "".join(line + "\n" for line in command.shown)
        checker = doctest.OutputChecker()
        assert checker.check_output(want, proc.stdout, doctest.ELLIPSIS), checker.output_difference(
            doctest.Example(command.line, want), proc.stdout, doctest.ELLIPSIS)


@pytest.mark.slow
@pytest.mark.parametrize("document", DOCUMENTS)
def test_what_a_document_writes_is_ignored_by_git(document, document_runs):
    """The files a document's commands leave in the project folder (results, shards, plots) would
    otherwise show up in `git status` of a user who tried them."""
    if not shutil.which("git"):
        pytest.skip("needs git")
    document_runs(document)
    folder = document_runs.folders[document]
    shipped = set(project_files())
    written = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and not p.is_symlink()
                     and str(p.relative_to(folder)) not in shipped)
    if not written:
        return
    # the copy carries the project's .gitignore; a repository of its own lets git read it (.ci/run's copy
    # of the project is not a checkout)
    subprocess.run(["git", "init", "-q", str(folder)], check=True, capture_output=True)
    ignored = subprocess.run(["git", "-C", str(folder), "check-ignore", "--no-index", "--stdin"],
                             input="\n".join(written) + "\n", capture_output=True, text=True).stdout.split()
    unignored = sorted(set(written) - set(ignored))
    assert unignored == [], f"not in .gitignore: {unignored}"


def test_python_in_a_source_folder_without_the_kernel_is_told_what_to_do(tmp_path):
    """After a non-editable install, Python started in the project folder imports the source `bleu_core/`,
    which has no compiled kernel: the error says so and what to do (a reinstall would not help)."""
    for name in project_files():
        if name == "setup.py" or name.startswith("bleu_core/"):
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, tmp_path / name)
    # without the editable install's finder, as after `pip install .`: only the folder provides bleu_core.metrics.bleu._bleu
    code = ("import sys; sys.meta_path[:] = [f for f in sys.meta_path if not "
            "getattr(f, '__module__', '').startswith('__editable__')]; "
            "from bleu_core import corpus_bleu; corpus_bleu(['a'], [['a']])")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    message = proc.stderr.strip().splitlines()[-1]
    assert f"source folder {tmp_path / 'bleu_core'}" in message and "pip install -e ." in message, message

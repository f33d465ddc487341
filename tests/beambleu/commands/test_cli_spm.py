"""spBLEU on the command line: `beambleu score -tok flores101|flores200|spBLEU-1K|spm` against the `sacrebleu`
2.6.0 command line, and beambleu's own `--spm-model` option and model errors.

The models are the tiny ones of tests/spm_models.py (fixture `spm_dir`), installed under sacrebleu's file names in
a temporary sacrebleu home that both programs read through `$SACREBLEU`, so everything runs offline. Parity cases
use real files of the shared corpora (skipped when absent), cut to their first lines to keep sacrebleu's runs short:
German-English with two references, Bengali-Hindi with three systems and English-Korean, whose scripts the small
models partly do not know (unknown pieces, byte-fallback pieces). Standard output must be the same byte for byte
after the normalisation of tests/cli_parity.py (the version field only; the cases that resample are compared unmasked).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple, Optional

import pytest

from ...cli_parity import BEAMBLEU_VERSION, SACREBLEU_VERSION, comparable, first_difference, run_both
from ...spm_models import MODEL_FILES, TOKENIZER_FILES

pytestmark = pytest.mark.slow

DEEN_REFS = ("wmt22/de-en/ref.A.txt", "wmt22/de-en/ref.B.txt")
DEEN_SYS = tuple(f"wmt22/de-en/sys.{name}.txt" for name in ("Online-A", "Online-B", "JDExploreAcademy"))
BNHI_REF = ("wmt21/bn-hi/ref.A.txt",)
BNHI_SYS = tuple(f"wmt21/bn-hi/sys.{name}.txt" for name in ("UEdin", "Online-G", "TRANSSION"))
ENKO_REF = ("flores101-devtest/en-ko/ref.A.txt",)
ENKO_SYS = ("flores101-devtest/en-ko/sys.hyp.txt",)
LINES = 300  # lines of each file the parity cases use

SPM_WARNING = "Tokenizer 'spm' has been changed to 'flores101', and may be removed in the future."
OFFLINE = {name: "http://127.0.0.1:9" for name in ("https_proxy", "http_proxy", "HTTPS_PROXY", "HTTP_PROXY")}


class Case(NamedTuple):
    """Reference files, system files and the other arguments; with `stdin`, the systems are not given with -i
    but sent on standard input, one per tab-separated column."""
    refs: tuple
    systems: tuple
    args: tuple
    stdin: bool = False


def _cut(corpora: Path, tmp: Path, rel: str) -> str:
    """The first LINES lines of corpus file `rel`, written to tmp/<its base name>; the base name (the programs run
    in tmp, and multi-system tables show the names as given). Skips when the file is absent."""
    src = corpora / rel
    if not src.is_file():
        pytest.skip(f"{rel} not in the shared corpora")
    lines = src.read_bytes().split(b"\n")[:LINES]
    (tmp / src.name).write_bytes(b"".join(line + b"\n" for line in lines))
    return src.name


def _run_case(case: Case, corpora: Path, tmp: Path, home: Path):
    """Both programs on `case`, in tmp, with `home` as sacrebleu's home."""
    refs = [_cut(corpora, tmp, r) for r in case.refs]
    systems = [_cut(corpora, tmp, s) for s in case.systems]
    if case.stdin:
        columns = zip(*((tmp / s).read_bytes().split(b"\n")[:-1] for s in systems))
        data = b"".join(b"\t".join(fields) + b"\n" for fields in columns)
        return run_both([*refs, *case.args], stdin=data, env={"SACREBLEU": str(home)}, cwd=tmp)
    return run_both([*refs, "-i", *systems, *case.args], env={"SACREBLEU": str(home)}, cwd=tmp)


def _assert_same_stdout(ours, theirs, resampled: bool = False) -> str:
    """Both exit 0 with the same normalised standard output; that output."""
    assert theirs.returncode == 0, f"sacrebleu failed, the case is wrong: {theirs.stderr.decode()[-600:]}"
    assert ours.returncode == 0, f"beambleu exit {ours.returncode}: {ours.stderr.decode(errors='replace')[-600:]}"
    mine = comparable(ours.stdout, BEAMBLEU_VERSION, resampled)
    reference = comparable(theirs.stdout, SACREBLEU_VERSION, resampled)
    same = mine == reference  # not inside `assert`: pytest's diff of long outputs is slow and unreadable
    assert same, first_difference(mine, reference)
    return mine


SAME = {
    # German-English, two references
    "flores101-deen-2refs-json": Case(DEEN_REFS, DEEN_SYS[:1], ("-tok", "flores101")),
    "flores200-deen-2refs-bleu-chrf-text": Case(DEEN_REFS, DEEN_SYS[:1], ("-tok", "flores200", "-m", "bleu", "chrf",
                                                                          "-f", "text")),
    "spBLEU-1K-deen-2refs-lc-text": Case(DEEN_REFS, DEEN_SYS[:1], ("-tok", "spBLEU-1K", "-lc", "-f", "text")),
    "flores101-deen-multi-text-sh-w3": Case(DEEN_REFS, DEEN_SYS, ("-tok", "flores101", "-f", "text", "-sh", "-w",
                                                                  "3")),
    "flores200-deen-2refs-sl": Case(DEEN_REFS, DEEN_SYS[:1], ("-tok", "flores200", "-sl")),
    "spBLEU-1K-deen-multi-latex": Case(DEEN_REFS, DEEN_SYS, ("-tok", "spBLEU-1K", "-f", "latex")),
    # Bengali-Hindi, three systems
    "flores101-bnhi-multi-bleu-chrf-json": Case(BNHI_REF, BNHI_SYS, ("-tok", "flores101", "-m", "bleu", "chrf")),
    "flores200-bnhi-multi-text": Case(BNHI_REF, BNHI_SYS, ("-tok", "flores200", "-f", "text")),
    "spBLEU-1K-bnhi-lc-json": Case(BNHI_REF, BNHI_SYS[:1], ("-tok", "spBLEU-1K", "-lc")),
    "spBLEU-1K-bnhi-sl-b": Case(BNHI_REF, BNHI_SYS[:1], ("-tok", "spBLEU-1K", "-sl", "-b")),
    "flores200-bnhi-b-bleu-chrf-json": Case(BNHI_REF, BNHI_SYS[:1], ("-tok", "flores200", "-b", "-m", "bleu",
                                                                      "chrf")),
    # English-Korean: every line has pieces the small models do not know
    "flores101-enko-sl": Case(ENKO_REF, ENKO_SYS, ("-tok", "flores101", "-sl")),
    "flores200-enko-lc-w0-text": Case(ENKO_REF, ENKO_SYS, ("-tok", "flores200", "-lc", "-w", "0", "-f", "text")),
    "spBLEU-1K-enko-bleu-chrf-sh-json": Case(ENKO_REF, ENKO_SYS, ("-tok", "spBLEU-1K", "-m", "bleu", "chrf",
                                                                  "-sh")),
    "flores101-enko-b-text": Case(ENKO_REF, ENKO_SYS, ("-tok", "flores101", "-b", "-f", "text")),
    # systems on standard input, one per tab-separated column
    "flores200-stdin-bnhi-three-systems-text": Case(BNHI_REF, BNHI_SYS, ("-tok", "flores200", "-f", "text"),
                                                    stdin=True),
    "flores200-stdin-enko-one-system-json": Case(ENKO_REF, ENKO_SYS, ("-tok", "flores200", "-m", "bleu", "chrf"),
                                                 stdin=True),
}

RESAMPLED = {
    "flores101-bnhi-paired-bs-bleu-chrf-text": Case(BNHI_REF, BNHI_SYS, ("-tok", "flores101", "-pbs", "-pbsn", "200",
                                                                         "-m", "bleu", "chrf", "-f", "text")),
    # bleu only: sacrebleu 2.6.0 itself fails on chrF with --paired-bs -f json
    "spBLEU-1K-deen-paired-bs-json": Case(DEEN_REFS, DEEN_SYS, ("-tok", "spBLEU-1K", "-pbs", "-pbsn", "200")),
    "flores200-deen-paired-ar-json": Case(DEEN_REFS, DEEN_SYS, ("-tok", "flores200", "-par", "-parn", "300", "-f",
                                                                "json")),
    "spBLEU-1K-bnhi-paired-ar-bleu-chrf-text": Case(BNHI_REF, BNHI_SYS[:2], ("-tok", "spBLEU-1K", "-par", "-parn",
                                                                             "300", "-m", "bleu", "chrf", "-f",
                                                                             "text")),
    "flores200-enko-ci-text": Case(ENKO_REF, ENKO_SYS, ("-tok", "flores200", "-ci", "-cin", "200", "-f", "text")),
}


@pytest.mark.corpora
@pytest.mark.parametrize("case", SAME.values(), ids=SAME.keys())
def test_stdout_equals_sacrebleu(case, corpora, spm_dir, tmp_path):
    ours, theirs = _run_case(case, corpora, tmp_path, spm_dir)
    _assert_same_stdout(ours, theirs)
    assert SPM_WARNING not in ours.stderr.decode(errors="replace")  # only -tok spm is deprecated


@pytest.mark.corpora
@pytest.mark.parametrize("case", RESAMPLED.values(), ids=RESAMPLED.keys())
def test_resampled_stdout_equals_sacrebleu(case, corpora, spm_dir, tmp_path):
    """Intervals and p-values too, unmasked: score draws sacrebleu's resamples by default."""
    ours, theirs = _run_case(case, corpora, tmp_path, spm_dir)
    _assert_same_stdout(ours, theirs, resampled=False)


@pytest.mark.corpora
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_spm_is_flores101_with_sacrebleus_warning(fmt, corpora, spm_dir, tmp_path):
    """`-tok spm` is the old name of flores101: the same output and signature, and sacrebleu's warning on stderr."""
    ours, theirs = _run_case(Case(BNHI_REF, BNHI_SYS[:1], ("-tok", "spm", "-f", fmt)), corpora, tmp_path, spm_dir)
    out = _assert_same_stdout(ours, theirs)
    assert "tok:flores101" in out and "tok:spm" not in out
    assert SPM_WARNING in theirs.stderr.decode()
    lines = ours.stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].endswith(SPM_WARNING), lines


# ---------------------------------------------------------------- beambleu only


def beambleu(*args, env: Optional[dict] = None, cwd=None, drop=()):
    """`beambleu score ARGS` with os.environ updated by `env` (and without the variables in `drop`)."""
    full_env = {k: v for k, v in os.environ.items() if k not in drop}
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "beambleu", "score", *args], capture_output=True, env=full_env,
                          cwd=cwd, timeout=600)


def _offline(home: Path) -> dict:
    """The environment of a sacrebleu home `home` with every download refused (a proxy nobody listens on)."""
    return {"SACREBLEU": str(home), **OFFLINE}


NO_PROXY = ("no_proxy", "NO_PROXY")


def _one_error_line(proc, code: int) -> str:
    """The only line of stderr, after checking the exit code, the empty stdout and the line's prefix."""
    err = proc.stderr.decode(errors="replace")
    assert proc.returncode == code, f"exit {proc.returncode}: {err[-600:]}"
    assert proc.stdout == b"", proc.stdout[:300]
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("beambleu: error: "), lines[:5]
    assert "Traceback" not in err
    return lines[0]


@pytest.fixture
def bnhi(corpora, tmp_path):
    """(reference, system): the first lines of wmt21 bn-hi, in tmp_path."""
    return _cut(corpora, tmp_path, BNHI_REF[0]), _cut(corpora, tmp_path, BNHI_SYS[0])


@pytest.mark.corpora
def test_spm_model_option_scores_as_sacrebleu_with_that_file_installed(bnhi, spm_dir, tmp_path):
    """--spm-model FILE with -tok flores200 scores as sacrebleu does when its home holds FILE under flores200's
    name; a relative path works, and sacrebleu's home is then neither read nor written (nothing downloaded)."""
    ref, hyp = bnhi
    other = spm_dir / "models" / MODEL_FILES["spBLEU-1K"]  # not flores200's model
    (tmp_path / "home" / "models").mkdir(parents=True)
    shutil.copyfile(other, tmp_path / "home" / "models" / MODEL_FILES["flores200"])
    (tmp_path / "mine").mkdir()
    shutil.copyfile(other, tmp_path / "mine" / "my.model")
    args = [ref, "-i", hyp, "-tok", "flores200", "-m", "bleu", "chrf", "-f", "text"]

    ours, theirs = run_both([*args, "--spm-model", str(other)], env={"SACREBLEU": str(spm_dir)}, cwd=tmp_path)
    assert theirs.returncode == 2 and b"unrecognized arguments: --spm-model" in theirs.stderr  # beambleu's own
    installed = subprocess.run([sys.executable, "-m", "sacrebleu", *args], capture_output=True, cwd=tmp_path,
                               env={**os.environ, "SACREBLEU": str(tmp_path / "home")}, timeout=600)
    out = _assert_same_stdout(ours, installed)
    assert "tok:flores200" in out

    empty = tmp_path / "empty-home"
    empty.mkdir()
    relative = beambleu(*args, "--spm-model", "mine/my.model", env=_offline(empty), cwd=tmp_path, drop=NO_PROXY)
    assert relative.returncode == 0 and relative.stdout == ours.stdout, relative.stderr.decode()[-600:]
    assert list(empty.iterdir()) == []

    default = beambleu(*args, env={"SACREBLEU": str(spm_dir)}, cwd=tmp_path)  # flores200's own model: other scores
    assert default.returncode == 0 and default.stdout != ours.stdout


@pytest.mark.parametrize("tok", [["-tok", "13a"], [], ["-tok", "char"]])
def test_spm_model_without_a_sentencepiece_tokenizer_is_a_usage_error(tok, spm_dir, tmp_path):
    """--spm-model is only for the SentencePiece tokenizers (13a is the default): exit 2 before reading input."""
    model = str(spm_dir / "models" / MODEL_FILES["flores200"])
    proc = beambleu(str(tmp_path / "no-ref.txt"), "-i", str(tmp_path / "no-hyp.txt"), *tok, "--spm-model", model)
    line = _one_error_line(proc, 2)
    assert "SentencePiece" in line and f"'{tok[1] if tok else '13a'}'" in line, line


def test_empty_spm_model_is_a_usage_error(tmp_path):
    """--spm-model '' names no file (it would otherwise become the working directory): exit 2, one line."""
    proc = beambleu(str(tmp_path / "no-ref.txt"), "-i", str(tmp_path / "no-hyp.txt"), "-tok", "flores200",
                    "--spm-model", "")
    assert "spm_model must be a non-empty str" in _one_error_line(proc, 2)


@pytest.mark.corpora
def test_with_stats_records_the_model_and_report_shows_it(bnhi, spm_dir, tmp_path):
    """score --with-stats adds spm_model (tokenizer, absolute path, SHA-256 of the file) to sacrebleu's JSON, for
    an explicit --spm-model and for sacrebleu's model file; `beambleu report` of that JSON names the model."""
    ref, hyp = bnhi
    explicit = spm_dir / "models" / MODEL_FILES["flores101"]
    (tmp_path / "m").mkdir()
    shutil.copyfile(explicit, tmp_path / "m" / "x.model")
    for tok, extra, path in (("spBLEU-1K", ["--spm-model", "m/x.model"], tmp_path / "m" / "x.model"),
                             ("flores200", [], spm_dir / "models" / MODEL_FILES["flores200"])):
        proc = beambleu(ref, "-i", hyp, "-tok", tok, *extra, "--with-stats", env={"SACREBLEU": str(spm_dir)},
                        cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr.decode()[-600:]
        doc = json.loads(proc.stdout)
        sha = hashlib.sha256(path.read_bytes()).hexdigest()
        assert doc["spm_model"] == {"tokenizer": tok, "path": str(path), "sha256": sha}
        assert f"|tok:{tok}|" in doc["signature"]
        result = tmp_path / f"score-{tok}.json"
        result.write_bytes(proc.stdout)
        report = subprocess.run([sys.executable, "-m", "beambleu", "report", str(result)], capture_output=True,
                                text=True, timeout=600)
        assert report.returncode == 0, report.stderr[-600:]
        assert f"SentencePiece model: {path} (SHA-256 {sha})" in report.stdout.splitlines(), report.stdout


@pytest.mark.corpora
@pytest.mark.parametrize("tok", sorted(TOKENIZER_FILES))
def test_missing_model_offline_is_one_error_line(tok, bnhi, tmp_path):
    """No model in sacrebleu's home and no network: exit 1, one line naming sacrebleu's URL and the path where the
    model is expected, nothing on stdout and no partial file left behind."""
    from sacrebleu.tokenizers.tokenizer_spm import SPM_MODELS

    ref, hyp = bnhi
    home = tmp_path / "home"
    home.mkdir()
    proc = beambleu(ref, "-i", hyp, "-tok", tok, env=_offline(home), cwd=tmp_path, drop=NO_PROXY)
    line = _one_error_line(proc, 1)
    expected = home / "models" / TOKENIZER_FILES[tok]
    assert SPM_MODELS[tok]["url"] in line and str(expected) in line, line
    assert tok != "flores200" or "https://tinyurl.com/flores200sacrebleuspm" in line
    assert not (home / "models").exists() or list((home / "models").iterdir()) == []


@pytest.mark.corpora
def test_missing_spm_model_file_is_one_error_line(bnhi, tmp_path):
    """--spm-model naming no file: exit 1, one line naming it; sacrebleu's home is not used (nothing downloaded)."""
    ref, hyp = bnhi
    home = tmp_path / "home"
    home.mkdir()
    proc = beambleu(ref, "-i", hyp, "-tok", "flores200", "--spm-model", "/nonexistent/model", env=_offline(home),
                    cwd=tmp_path, drop=NO_PROXY)
    assert "/nonexistent/model" in _one_error_line(proc, 1)
    assert list(home.iterdir()) == []


@pytest.mark.corpora
@pytest.mark.parametrize("explicit", [False, True])
def test_corrupt_model_is_one_error_line(explicit, bnhi, tmp_path):
    """Garbage bytes where the model should be (sacrebleu's place, or --spm-model): exit 1, one line naming it."""
    ref, hyp = bnhi
    model = tmp_path / "home" / "models" / MODEL_FILES["flores200"]
    model.parent.mkdir(parents=True)
    garbage = bytes(range(256)) * 40
    model.write_bytes(garbage)
    extra = ["--spm-model", str(model)] if explicit else []
    proc = beambleu(ref, "-i", hyp, "-tok", "flores200", *extra, env=_offline(tmp_path / "home"), cwd=tmp_path,
                    drop=NO_PROXY)
    assert str(model) in _one_error_line(proc, 1)
    assert model.read_bytes() == garbage


def _without_sentencepiece(tmp: Path) -> dict:
    """PYTHONPATH with a first folder whose sentencepiece.py raises ImportError, as if the package were absent."""
    hide = tmp / "hide-sentencepiece"
    hide.mkdir()
    (hide / "sentencepiece.py").write_text('raise ImportError("No module named \'sentencepiece\'")\n')
    return {"PYTHONPATH": os.pathsep.join(p for p in (str(hide), os.environ.get("PYTHONPATH")) if p)}


@pytest.mark.corpora
def test_without_sentencepiece_says_which_extra_to_install(bnhi, spm_dir, tmp_path):
    """Without the sentencepiece package (the model being there): exit 2, one line saying to install the extra."""
    ref, hyp = bnhi
    env = {"SACREBLEU": str(spm_dir), **_without_sentencepiece(tmp_path)}
    ours, theirs = run_both([ref, "-i", hyp, "-tok", "flores200"], env=env, cwd=tmp_path)
    assert theirs.returncode != 0 and b"pip install sentencepiece" in theirs.stderr  # the package is hidden
    assert "pip install 'beambleu[spm]'" in _one_error_line(ours, 2)


@pytest.mark.corpora
def test_without_sentencepiece_nor_model_says_which_extra_to_install_before_downloading(bnhi, tmp_path):
    """Without sentencepiece, the missing package is reported (as sacrebleu does) before any model download."""
    ref, hyp = bnhi
    home = tmp_path / "home"
    home.mkdir()
    proc = beambleu(ref, "-i", hyp, "-tok", "flores200", env={**_offline(home), **_without_sentencepiece(tmp_path)},
                    cwd=tmp_path, drop=NO_PROXY)
    assert "pip install 'beambleu[spm]'" in _one_error_line(proc, 2)


def test_help_names_the_spm_tokenizers_and_the_model_option():
    proc = beambleu("--help")
    assert proc.returncode == 0
    out = proc.stdout.decode()
    choices = out.split("--tokenize {", 1)[1].split("}", 1)[0].split(",")
    assert {"flores101", "flores200", "spBLEU-1K", "spm"} <= set(choices), choices
    assert "--spm-model PATH" in out and "old name of" in out

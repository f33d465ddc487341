"""``beambleu score -t SET -l PAIR ...`` against ``sacrebleu -t SET -l PAIR ...`` on one sacrebleu
cache made from the shared corpora (tests/sacrebleu_cache.py; nothing is downloaded: both run
with urlopen disabled): the same stdout bytes (the version field aside) and exit code 0, for
scoring, subsets, --detail and the informational options."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ...oracle import CORPORA, REPO
from ...sacrebleu_cache import NO_NETWORK, build_cache, env_for, sacrebleu_argv_code

pytestmark = [pytest.mark.corpora, pytest.mark.slow]

DE_EN = CORPORA / "wmt22" / "de-en"
EN_DE17 = CORPORA / "wmt17" / "en-de"


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    if not (DE_EN / "ref.A.txt").exists() or not (EN_DE17 / "ref.A.txt").exists():
        pytest.skip("shared corpora not present")
    return build_cache(tmp_path_factory.mktemp("sacrebleu-cache"), CORPORA)


def _run(cache, code):
    env = dict(env_for(cache), PYTHONHASHSEED="0")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, env=env, cwd=REPO, timeout=600)
    return proc.returncode, proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8", "replace")


def both(cache, *argv):
    argv = [str(a) for a in argv]
    theirs = _run(cache, sacrebleu_argv_code(argv))
    code = f"import sys\nfrom beambleu.cli import main\nsys.exit(main(['score', *{argv!r}]))\n"
    ours = _run(cache, NO_NETWORK + code)
    return ours, theirs


def _unversioned(text: str) -> str:
    for v in ("beambleu-0.1.0", "2.6.0"):
        text = text.replace(f"version:{v}", "version:V").replace(f"v:{v}", "v:V").replace(f'"version": "{v}"',
                                                                                            '"version": "V"')
    return text


@pytest.mark.parametrize("argv", [
    ["-t", "wmt22", "-l", "de-en", "-i", DE_EN / "sys.Online-B.txt"],
    ["-t", "wmt22", "-l", "de-en", "-i", DE_EN / "sys.Online-B.txt", "-m", "bleu", "chrf", "-f", "text"],
    ["-t", "wmt22", "-l", "de-en", "-i", DE_EN / "sys.Online-B.txt", DE_EN / "sys.Online-A.txt", "-f", "text"],
    ["-t", "wmt22", "-l", "de-en", "-i", DE_EN / "sys.Online-B.txt", "--origlang", "de", "-f", "text"],
    ["-t", "wmt22", "-l", "de-en", "-i", DE_EN / "sys.Online-B.txt", "--origlang", "non-de", "-b"],
    ["-t", "wmt22", "-l", "de-en", "-i", DE_EN / "sys.Online-B.txt", "--subset", "news|speech", "-m", "chrf"],
    ["-t", "wmt22", "-l", "de-en", "-i", DE_EN / "sys.Online-B.txt", "-d", "-m", "chrf", "bleu"],
    ["-t", "wmt17", "-l", "en-de", "-i", EN_DE17 / "sys.uedin-nmt.4722.txt", "-f", "text", "-sh"],
    ["-t", "wmt17", "-l", "en-de", "-i", EN_DE17 / "sys.uedin-nmt.4722.txt", "--origlang", "en", "-d"],
    ["-t", "wmt22", "-l", "de-en", "--echo", "src", "ref"],
    ["-t", "wmt22", "-l", "de-en", "--echo", "ref", "--origlang", "de"],
    ["--list", "-t", "wmt22", "-l", "de-en"],
    ["-t", "wmt22", "-l", "de-en", "-i", DE_EN / "sys.Online-B.txt", "-sl", "-b"],
])
def test_score_with_a_test_set_prints_what_sacrebleu_prints(cache, argv):
    ours, theirs = both(cache, *argv)
    if "--origlang" in argv and "-d" in argv:  # sacrebleu reads --origlang en as 'e', 'n' there and fails
        assert theirs[0] != 0 and "Traceback" in theirs[2]
        assert ours[0] == 2 and ours[1] == "" and len(ours[2].strip().splitlines()) == 1, ours
        return
    assert theirs[0] == 0, theirs[2]
    assert ours[0] == 0, ours[2]
    assert _unversioned(ours[1]) == _unversioned(theirs[1])


def test_concatenated_test_sets_and_the_matching_system_output(cache, tmp_path):
    """-t wmt22,wmt22 concatenates the references (sacrebleu's rule); the system output then has both halves."""
    hyp = tmp_path / "twice.txt"
    hyp.write_bytes((DE_EN / "sys.Online-B.txt").read_bytes() * 2)
    ours, theirs = both(cache, "-t", "wmt22,wmt22", "-l", "de-en", "-i", hyp, "-f", "text", "-m", "bleu", "chrf")
    assert theirs[0] == 0 and ours[0] == 0, (theirs[2], ours[2])
    assert _unversioned(ours[1]) == _unversioned(theirs[1])


@pytest.mark.parametrize("argv,exit_code", [
    (["-t", "wmt22", "-i", DE_EN / "sys.Online-B.txt"], 2),  # no -l
    (["-t", "wmt22", "-l", "xx-yy", "-i", DE_EN / "sys.Online-B.txt"], 2),
    (["-t", "nosuchset", "-l", "de-en", "-i", DE_EN / "sys.Online-B.txt"], 2),
    (["-t", "wmt22", "-l", "de-en", "-i", EN_DE17 / "sys.uedin-nmt.4722.txt"], 1),  # other line count
    (["-t", "wmt22", "-l", "de-en", "-i", DE_EN / "sys.Online-B.txt", "--origlang", "zz"], 2),  # nothing left
])
def test_test_set_errors_are_one_line(cache, argv, exit_code):
    ours, theirs = both(cache, *argv)
    assert theirs[0] != 0
    assert ours[0] == exit_code and ours[1] == "" and len(ours[2].strip().splitlines()) == 1, ours
    assert "Traceback" not in ours[2]


def test_a_missing_cached_file_is_named_offline(cache, tmp_path):
    """A test set whose files are not in the cache, with no network: one line naming the path needed."""
    ours, _ = both(cache, "-t", "wmt21", "-l", "de-en", "-i", DE_EN / "sys.Online-B.txt")
    assert ours[0] == 1 and ours[1] == "", ours
    line = ours[2].strip()
    assert len(line.splitlines()) == 1 and str(cache) in line and "wmt21" in line, line

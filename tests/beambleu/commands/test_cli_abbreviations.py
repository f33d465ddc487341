"""`beambleu score` takes the abbreviations of `--long` options that sacrebleu 2.6.0's command line takes
(argparse's prefix matching), with sacrebleu's meaning although beambleu has more options, and refuses the
ambiguous ones as sacrebleu does (exit 2, "ambiguous option: --X could match A, B"). Every expectation comes
from sacrebleu, run here: its own parser in process (every prefix of every long option), and its command line
in a subprocess (standard output byte for byte, the signatures' version aside, and exit codes). `beambleu run`
still takes no abbreviation (unknown options of `run` go to Beam)."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ...cli_parity import BEAMBLEU_VERSION, SACREBLEU_VERSION, normalise_version, run_both

pytest.importorskip("sacrebleu")

ROOT = Path(__file__).resolve().parents[3]
PLUGIN = ROOT / "examples" / "metric_plugin"


class _Captured(Exception):
    pass


@pytest.fixture(scope="module")
def sacrebleu_parser():
    """sacrebleu's own parser, as its command line builds it. Importing sacrebleu's command-line module
    sets SIGPIPE to its default action (it does so for its own process); the handler is put back, or a
    later test writing to a subprocess that has exited would kill pytest itself (a serial run, exit 141)."""
    previous = signal.getsignal(signal.SIGPIPE)
    try:
        import sacrebleu.sacrebleu as cli
    finally:
        signal.signal(signal.SIGPIPE, previous)

    def grab(self, *args, **kwargs):
        raise _Captured(self)

    mp = pytest.MonkeyPatch()
    mp.setattr(argparse.ArgumentParser, "parse_args", grab)
    try:
        with pytest.raises(_Captured) as got:
            cli.parse_args()
    finally:
        mp.undo()
    return got.value.args[0]


@pytest.fixture(scope="module")
def score_parser():
    from beambleu.cli import make_parser

    parser = make_parser(with_run=False)
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return sub.choices["score"]


def _long_options(parser) -> list[str]:
    return [s for s in parser._option_string_actions if s.startswith("--")]


def _resolve(parser, arg: str, capsys):
    """(the option string ``arg`` stands for, or None when unknown; or the message of its refusal)."""
    try:
        found = parser._parse_optional(arg)
    except SystemExit as exc:
        assert exc.code == 2
        err = capsys.readouterr().err.strip().splitlines()[-1]
        return "refused", err.split(": error: ", 1)[1].removesuffix(" (--help shows the usage)")
    return "option", found[0] is not None and found[1]


def test_the_list_of_sacrebleus_options_is_its_parsers(sacrebleu_parser):
    from beambleu.commands.score import SACREBLEU_LONG_OPTIONS

    assert list(SACREBLEU_LONG_OPTIONS) == _long_options(sacrebleu_parser)


def test_every_prefix_of_every_sacrebleu_option_means_what_it_means_to_sacrebleu(sacrebleu_parser, score_parser,
                                                                                 capsys):
    prefixes = sorted({s[:n] for s in _long_options(sacrebleu_parser) for n in range(3, len(s) + 1)})
    assert len(prefixes) > 300
    checked = {"option": 0, "refused": 0}
    for prefix in prefixes:
        for arg in (prefix, prefix + "=1"):
            theirs, ours = _resolve(sacrebleu_parser, arg, capsys), _resolve(score_parser, arg, capsys)
            assert ours == theirs, arg
            checked[theirs[0]] += 1
    assert checked["option"] > 300 and checked["refused"] > 20  # both kinds are compared


def test_beambleus_own_options_may_be_abbreviated_where_sacrebleu_has_no_such_prefix(score_parser, capsys):
    assert _resolve(score_parser, "--with", capsys) == ("option", "--with-stats")
    assert _resolve(score_parser, "--res", capsys) == ("option", "--resampling")
    assert _resolve(score_parser, "--max", capsys) == (
        "refused", "ambiguous option: --max could match --max-ngram-order, --max-line-bytes")
    # sacrebleu's meaning first: --w is its --width (beambleu also has --with-stats), --se its --sentence-level
    assert _resolve(score_parser, "--w", capsys) == ("option", "--width")
    assert _resolve(score_parser, "--se", capsys) == ("option", "--sentence-level")


def test_single_dash_options_are_not_abbreviated(score_parser, capsys):
    # sacrebleu reads -pb as a prefix of -pbs and -pbsn; beambleu, as an unknown option
    assert _resolve(score_parser, "-pb", capsys) == ("option", False)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("abbrev")
    hyps = ["The cat sat on the mat .", "A dog barked at the moon", "Nothing to see here", "Hello, world!"]
    refs = ["The cat is on the mat.", "The dog barked at the moon.", "Nothing to see here.", "Hello world!"]
    refs2 = ["A cat sat on the mat.", "A dog barked at night.", "There is nothing here.", "Hi, world!"]
    for name, lines in (("hyp", hyps), ("ref", refs), ("ref2", refs2), ("hyp2", list(reversed(hyps)))):
        (d / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return d


CASES = [
    ["--tok", "intl"], ["--metric", "chrf"], ["--num", "1"], ["--form", "text"], ["--form=text", "--w", "3"],
    ["--metrics", "bleu", "chrf", "ter", "--chrf-word", "2", "--ter-norm", "--ter-case", "--form", "text"],
    ["--smooth-m", "floor", "--smooth-v", "0.2", "--lower", "--force"], ["--sentence", "--score-o"],
    ["--conf", "--confidence-", "50", "--sh", "--form", "text"], ["--chrf-b", "3", "--chrf-wh", "-m", "chrf"],
    ["--chrf-eps", "--chrf-lower", "-m", "chrf"],
    ["--enc", "utf-8", "--no-c", "--quiet", "--form", "text"],
    # ambiguous: refused by both
    ["--s"], ["--chrf-w", "2"], ["--p"], ["--paired-b"], ["--ter-n"], ["--c"],
    # not a prefix of any option: refused by both
    ["--chrf-ws"],
]


@pytest.mark.parametrize("args", CASES, ids=[" ".join(c) for c in CASES])
def test_command_line_prints_sacrebleus_bytes(files, args):
    ours, theirs = run_both(["ref", "-i", "hyp", *args], cwd=files, env={"SACREBLEU_SEED": "12345"})
    assert ours.returncode == theirs.returncode, (ours.stderr, theirs.stderr)
    assert normalise_version(ours.stdout.decode(), BEAMBLEU_VERSION) == \
        normalise_version(theirs.stdout.decode(), SACREBLEU_VERSION)
    if theirs.returncode:
        assert ours.returncode == 2 and len(ours.stderr.decode().splitlines()) == 1
        their_message = theirs.stderr.decode().strip().splitlines()[-1].split(": error: ", 1)[1]
        # (an unknown option is the top-level parser's: "beambleu: error: ...")
        assert ours.stderr.decode().strip() in (f"beambleu score: error: {their_message} (--help shows the usage)",
                                                f"beambleu: error: {their_message} (--help shows the usage)")


def test_paired_test_with_abbreviations_prints_sacrebleus_bytes(files):
    args = ["ref", "ref2", "-i", "hyp", "hyp2", "--paired-bs", "--paired-bs-", "100", "--form", "text"]
    abbreviated = ["ref", "ref2", "--in", "hyp", "hyp2", "--paired-bs", "--paired-bs-", "100", "--form", "text"]
    ours, theirs = run_both(abbreviated, cwd=files, env={"SACREBLEU_SEED": "12345"})
    assert ours.returncode == theirs.returncode == 0, (ours.stderr, theirs.stderr)
    assert normalise_version(ours.stdout.decode(), BEAMBLEU_VERSION) == \
        normalise_version(theirs.stdout.decode(), SACREBLEU_VERSION)
    assert b"p = " in theirs.stdout and args != abbreviated


def _beambleu(*args, cwd, path=None):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SACREBLEU_FORMAT")}
    if path:
        env["PYTHONPATH"] = path
    return subprocess.run([sys.executable, "-m", "beambleu", *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=300)


def test_plugin_flags_take_abbreviations_too(files, tmp_path):
    # the example plugin, importable from its source folder, announced by a dist-info of its own
    info = tmp_path / "beambleu_lenratio-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: beambleu-lenratio\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[beambleu.metrics]\nlenratio = beambleu_lenratio:LenRatio\n")
    path = os.pathsep.join([str(tmp_path), str(PLUGIN)])
    full = _beambleu("score", "ref", "-i", "hyp", "-m", "lenratio", "--lenratio-shortest", "-b", cwd=files, path=path)
    short = _beambleu("score", "ref", "-i", "hyp", "--metr", "lenratio", "--lenratio-s", "-b", cwd=files, path=path)
    plain = _beambleu("score", "ref", "-i", "hyp", "-m", "lenratio", "-b", cwd=files, path=path)
    assert full.returncode == short.returncode == plain.returncode == 0, (full.stderr, short.stderr)
    assert short.stdout == full.stdout and full.stdout.strip()
    assert "warning" not in full.stderr


def test_run_takes_no_abbreviation(files):
    pytest.importorskip("apache_beam")
    proc = _beambleu("run", "--inpu", "x", "--outp", "y", cwd=files)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "--inpu" in proc.stderr and "Traceback" not in proc.stderr

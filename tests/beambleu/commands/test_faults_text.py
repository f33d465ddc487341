"""Fault injection for the command line and the commands that do not run Beam (`score`,
`report`; `convert` has tests/beambleu/commands/test_convert.py): abbreviated flags, hidden usage errors, FIFOs
and process substitution, byte-order marks, corrupt gzip, huge lines, huge bootstrap sizes,
malformed results, plot paths and unexpected exceptions. Each fault is checked for its exit
code, its one line on stderr, an empty stdout and the files left on disk."""

import argparse
import gzip
import os
import re
import shutil
import subprocess
import sys
import threading

import pytest

from ...oracle import REPO, read_lines, sacre_metric
from .test_cli_score import sacrebleu_cli

SAMPLE = REPO / "examples" / "sample"
REF, REF_B = SAMPLE / "ref.A.txt", SAMPLE / "ref.B.txt"
HYP, HYP_B = SAMPLE / "sys.alpha.txt", SAMPLE / "sys.beta.txt"
SHARDS = SAMPLE / "shards" / "*.parquet"
NO_MATPLOTLIB = ("import builtins, sys\nreal = builtins.__import__\n"
                 "def fake(name, *a, **k):\n    if name.startswith('matplotlib'):\n"
                 "        raise ImportError('no matplotlib')\n    return real(name, *a, **k)\n"
                 "builtins.__import__ = fake\nfrom beambleu.cli import main\nsys.exit(main(sys.argv[1:]))\n")


def cli(*args, stdin=None, timeout=300, env=None, code=None):
    """`beambleu ARGS` (or `python -c CODE ARGS`) in a subprocess."""
    head = ["-c", code] if code else ["-m", "beambleu.cli"]
    return subprocess.run([sys.executable, *head, *map(str, args)], capture_output=True, text=True, input=stdin,
                          timeout=timeout, cwd=REPO, env={**os.environ, **(env or {})})


def one_line(proc, rc: int) -> str:
    """The single line of stderr of a failed command, after checking the rest."""
    assert proc.returncode == rc, (proc.returncode, proc.stderr)
    assert proc.stdout == "" and "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


def usage_line(proc) -> str:
    """argparse's error: one line, exit 2, nothing on stdout (returned without its --help hint)."""
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert proc.stdout == "" and "Traceback" not in proc.stderr
    assert len(proc.stderr.splitlines()) == 1, proc.stderr
    return proc.stderr.rstrip("\n").removesuffix(" (--help shows the usage)")


def listing(d):
    return sorted(str(p.relative_to(d)) for p in d.rglob("*"))


def sacre_score(hyp, *refs) -> float:
    return sacre_metric().corpus_score(read_lines(hyp), [read_lines(r) for r in refs]).score


# ------------------------------------------------------------------------------ abbreviations

@pytest.mark.parametrize("args,line", [
    (["-l"], "beambleu score: error: argument --language-pair/-l: expected one argument"),  # not -lc
    # sacrebleu's own words for an ambiguous prefix (its argparse: "... could match --smooth-method, --smooth-value")
    (["--smooth", "floor"], "beambleu score: error: ambiguous option: --smooth could match --smooth-method, "
                            "--smooth-value"),
])
def test_score_refuses_short_flags_and_ambiguous_prefixes(args, line):
    assert usage_line(cli("score", REF, "-i", HYP, "-b", *args)) == line


def test_score_takes_an_unambiguous_prefix_as_sacrebleu_does():
    # --lower is --lowercase for sacrebleu's argparse: the score of -lc, computed by sacrebleu here
    proc = cli("score", REF, "-i", HYP, "-b", "--lower")
    assert proc.returncode == 0, proc.stderr
    want = sacre_metric(lowercase=True).corpus_score(read_lines(HYP), [read_lines(REF)]).score
    assert proc.stdout == f"{want:.1f}\n"


def test_abbreviations_in_every_command(tmp_path):
    result = tmp_path / "s.json"
    result.write_text('{"name": "BLEU", "score": 12.5, "signature": "s"}')
    out = tmp_path / "o.parquet"
    assert usage_line(cli("convert", REF, "-i", HYP, "-o", out, "--over")) == \
        "beambleu: error: unrecognized arguments: --over"
    assert usage_line(cli("report", result, "--wid", "3")) == "beambleu: error: unrecognized arguments: --wid 3"
    for flags in (["-l"], ["-t", "x"]):  # `run` passes unknown flags to Beam, whose options are all --long
        proc = cli("run", "--input", SHARDS, "--output", tmp_path / "r.json", "--progress", "off", *flags)
        assert usage_line(proc) == f"beambleu: error: unrecognized arguments: {flags[0]}"
    # still understood: a one-letter option with its value attached, combined one-letter flags
    assert cli("score", REF, "-i", HYP, "-sexp", "-bq").stdout == sacrebleu_cli(REF, "-i", HYP, "-b")
    # -sh is sacrebleu's --short, not -s with the value h
    assert cli("score", REF, "-i", HYP, "-sh", "-f", "text").stdout.startswith("BLEU|#:1|c:mixed|e:no|tok:13a|s:exp|")
    assert listing(tmp_path) == ["s.json"]


def test_every_parser_disallows_abbreviations():
    from beambleu.cli import make_parser

    def walk(p):
        yield p
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                for sub in a.choices.values():
                    yield from walk(sub)

    parsers = list(walk(make_parser(with_run=True)))
    assert len(parsers) == 5 and all(not p.allow_abbrev for p in parsers)


# ------------------------------------------------------------------- usage errors are shown

@pytest.mark.parametrize("args,line", [
    (["--confidence", "--confidence-n", "0"],
     "beambleu run: error: argument --confidence-n/--confidence_n: needs at least 2 resamples, got 0"),
    (["--group-by", ""],
     "beambleu run: error: argument --group-by/--group_by: expected comma-separated column names, got ''"),
    (["-tok", "13b"], ("beambleu run: error: argument --tokenize/-tok: invalid choice: '13b' (choose from 'none', "
                       "'13a', 'intl', 'zh', 'char', 'ja-mecab', 'ko-mecab', 'flores101', 'flores200', 'spBLEU-1K', "
                       "'spm', 'auto')")),
])
def test_run_usage_errors_reach_the_terminal(tmp_path, args, line):
    """Beam's log filter hides fd 2 while `run` works: argparse's message must come before it."""
    proc = cli("run", "--input", SHARDS, "--output", tmp_path / "r.json", *args)
    assert usage_line(proc) == line
    assert listing(tmp_path) == []


def test_run_without_input_is_a_usage_error(tmp_path):
    proc = cli("run", "--output", tmp_path / "r.json")
    assert one_line(proc, 2) == "beambleu: error: --input is required"
    assert listing(tmp_path) == []


@pytest.mark.parametrize("args,line", [
    (["-i", HYP, HYP_B, "--confidence"],
     "beambleu: error: --confidence is for one system; for several use --paired-bs or --paired-ar"),
    (["-i", HYP, "--paired-bs"],
     "beambleu: error: the paired tests need a baseline and at least one more system (-i BASE SYS...)"),
    (["-i", HYP, "--confidence", "-sl"],
     "beambleu: error: --sentence-level does not combine with --confidence or the paired tests"),
    (["-t", "wmt14"],  # sacrebleu's test set, not -tok
     "beambleu: error: I need exactly one of (a) a predefined test set (-t) or (b) a list of references"),
    (["-i", HYP, HYP_B, "-sl"], "beambleu: error: --sentence-level scores one system at a time (as in sacrebleu)"),
    (["-i", HYP, HYP, "--confidence"], f"beambleu: error: '{HYP}' is given twice in -i"),
])
def test_score_usage_errors_exit_2(args, line):
    assert one_line(cli("score", REF, *args, stdin=""), 2) == line


def test_score_option_values_are_checked():
    for args, line in ((["-w", "-1"], "argument --width/-w: must be at least 0, got -1"),
                       (["--confidence-n", "-5"], "argument --confidence-n/-cin: needs at least 2 resamples, got -5"),
                       (["--paired-bs-n", "-1"], "argument --paired-bs-n/-pbsn: needs at least 0 resamples, got -1"),
                       (["-e", "klingon"], "argument --encoding/-e: unknown encoding 'klingon'")):
        assert usage_line(cli("score", REF, "-i", HYP, HYP_B, *args)) == f"beambleu score: error: {line}"


def _too_many(flag: str, n: int, cap: int) -> str:
    """The one line of a bootstrap size above the limit: what was given, the maximum, what to change."""
    return rf"beambleu: error: {flag}: {n} resamples is above the limit of {cap} \(.+\); use {cap} or fewer.*"


TOO_MANY = [
    (["--confidence", "--confidence-n", "100001"], "--confidence-n", 100001, 100000),
    (["--confidence", "--confidence-n", "10000000"], "--confidence-n", 10 ** 7, 100000),
    (["--paired-bs", "--paired-bs-n", str(10 ** 9)], "--paired-bs-n", 10 ** 9, 100000),
    (["--paired-bs", "--paired-bs-n", "60000", "--max-ngram-order", "8"], "--paired-bs-n", 60000, 55555),
]


def test_score_bootstrap_size_is_checked_up_front():
    """With the counter draws every system holds B replicate totals: B is limited, before anything is
    read (no MemoryError, no crash), and the limit itself runs. sacrebleu's draws (the default) keep B
    scores per metric, not B totals: no limit there, as in sacrebleu."""
    for args, flag, n, cap in TOO_MANY:
        hyps = [HYP, HYP_B] if "--paired-bs" in args else [HYP]
        proc = cli("score", REF, "-i", *hyps, *args, "--resampling", "counter")
        assert re.fullmatch(_too_many(flag, n, cap), one_line(proc, 2))
    proc = cli("score", REF, "-i", HYP, "--confidence", "--confidence-n", "100001", "-b")
    assert proc.returncode == 0 and proc.stdout.startswith(f"{sacre_score(HYP, REF):.1f} (μ = "), proc.stderr
    proc = cli("score", REF, "-i", HYP, "--confidence", "--confidence-n", "100000", "-b", "--resampling", "counter")
    # -b keeps the interval, as sacrebleu's -b --confidence does
    assert proc.returncode == 0 and proc.stdout.startswith(f"{sacre_score(HYP, REF):.1f} (μ = "), proc.stderr


@pytest.mark.parametrize("args,flag,n,cap", TOO_MANY)
def test_run_bootstrap_size_is_checked_up_front(tmp_path, args, flag, n, cap):
    paired = ["--group-by", "system", "--baseline", "alpha", "--id-column", "line"] if "--paired-bs" in args else []
    proc = cli("run", "--input", SHARDS, "--output", tmp_path / "r.json", *args, *paired)
    assert re.fullmatch(_too_many(flag, n, cap), one_line(proc, 2))
    assert listing(tmp_path) == []


# ------------------------------------------------------------ FIFOs, process substitution, stdin

def test_process_substitution_is_read_once():
    script = f"{sys.executable} -m beambleu.cli score <(cat {REF}) <(cat {REF_B}) -i <(cat {HYP}) -b"
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == sacrebleu_cli(REF, REF_B, "-i", HYP, "-b")
    script = f"{sys.executable} -m beambleu.cli score {REF} -i <(head -n 12 {HYP})"
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert re.fullmatch(rf"beambleu: error: {re.escape(str(REF))}: has 30 lines but the system output "
                        r"/dev/fd/\d+ has 12", one_line(proc, 1))


def _feed(fifo, data: bytes):
    def write():
        with open(fifo, "wb") as fh:
            fh.write(data)

    t = threading.Thread(target=write, daemon=True)
    t.start()
    return t


def test_fifo_input_and_reference(tmp_path):
    hyp, ref = tmp_path / "hyp", tmp_path / "ref"
    os.mkfifo(hyp)
    os.mkfifo(ref)
    writers = [_feed(hyp, HYP.read_bytes()), _feed(ref, REF.read_bytes())]
    proc = cli("score", ref, "-i", hyp, "-f", "text", timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.replace("beambleu-0.1.0", "V") == \
        sacrebleu_cli(REF, "-i", HYP, "-f", "text").replace("2.6.0", "V")
    for w in writers:
        w.join(5)
    assert listing(tmp_path) == ["hyp", "ref"]


# ------------------------------------------------------------------------ byte-order marks, gzip

@pytest.mark.parametrize("encoding,bom,name", [
    ("utf-16-le", b"\xff\xfe", "UTF-16 LE"), ("utf-16-be", b"\xfe\xff", "UTF-16 BE"),
    ("utf-32-le", b"\xff\xfe\x00\x00", "UTF-32 LE"), ("utf-32-be", b"\x00\x00\xfe\xff", "UTF-32 BE"),
])
def test_utf16_and_utf32_byte_order_marks_are_named(tmp_path, encoding, bom, name):
    f = tmp_path / "wide.txt"
    f.write_bytes(bom + REF.read_text(encoding="utf-8").encode(encoding))
    for args in ([f, "-i", HYP], [REF, f, "-i", HYP], [REF, "-i", f]):
        assert one_line(cli("score", *args), 1) == \
            f"beambleu: error: {f}: line 1, column 1: starts with a {name} byte-order mark; beambleu reads UTF-8 " \
            "(-e names another encoding)"


def _gzip(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def test_corrupt_gzip_is_one_line(tmp_path):
    data = HYP.read_bytes()
    n = data.count(b"\n")
    bad_crc = bytearray(_gzip(data))
    bad_crc[-8] ^= 0xFF  # the CRC-32 in the trailer: every line decompresses, then the check fails
    (tmp_path / "crc.txt.gz").write_bytes(bad_crc)
    line = one_line(cli("score", REF, "-i", tmp_path / "crc.txt.gz"), 1)
    assert re.fullmatch(rf"beambleu: error: {re.escape(str(tmp_path / 'crc.txt.gz'))}: line {n + 1}: corrupt gzip "
                        r"data \(CRC check failed 0x[0-9a-f]+ != 0x[0-9a-f]+\)", line), line
    garbled = bytearray(_gzip(data))
    for k in range(10, 40):  # the start of the deflate stream
        garbled[k] ^= 0x5A
    (tmp_path / "garbled.txt.gz").write_bytes(garbled)
    line = one_line(cli("score", tmp_path / "garbled.txt.gz", "-i", HYP), 1)
    assert re.fullmatch(rf"beambleu: error: {re.escape(str(tmp_path / 'garbled.txt.gz'))}: line 1: corrupt gzip "
                        r"data \(.+\)", line), line
    (tmp_path / "cut.txt.gz").write_bytes(_gzip(data)[:-12])
    line = one_line(cli("score", REF, "-i", tmp_path / "cut.txt.gz"), 1)
    assert re.fullmatch(rf"beambleu: error: {re.escape(str(tmp_path / 'cut.txt.gz'))}: line \d+: truncated gzip "
                        r"data \(Compressed file ended before the end-of-stream marker was reached\)", line), line
    (tmp_path / "plain.txt.gz").write_bytes(data)
    assert one_line(cli("score", REF, "-i", tmp_path / "plain.txt.gz"), 1) == \
        f"beambleu: error: {tmp_path / 'plain.txt.gz'}: line 1: corrupt gzip data (Not a gzipped file (b'Th'))"


# ------------------------------------------------------------------------------ long lines

def test_line_length_limit(tmp_path):
    limit = 100
    ok, long = tmp_path / "ok.txt", tmp_path / "long.txt"
    ok.write_bytes(b"a b\n" + b"x" * limit + b"\n" + b"y" * limit)  # exactly the limit, with and without \n
    long.write_bytes(b"a b\n" + b"x" * (limit + 1) + b"\nc\n")
    proc = cli("score", ok, "-i", ok, "-b", "--max-line-bytes", limit)
    assert proc.returncode == 0 and proc.stdout == sacrebleu_cli(ok, "-i", ok, "-b"), proc.stderr
    assert one_line(cli("score", ok, "-i", long, "--max-line-bytes", limit), 1) == \
        f"beambleu: error: {long}: line 2: longer than {limit} bytes; raise --max-line-bytes to read it"
    out = tmp_path / "o.parquet"
    assert one_line(cli("convert", ok, "-i", long, "-o", out, "--max-line-bytes", limit), 1) == \
        f"beambleu: error: {long}: line 2: longer than {limit} bytes; raise --max-line-bytes to read it"
    assert listing(tmp_path) == ["long.txt", "ok.txt"]
    assert "--max-line-bytes N" in cli("score", "--help").stdout


# ------------------------------------------------------------------------------ report

@pytest.fixture(scope="module")
def paired_result(tmp_path_factory):
    proc = cli("score", REF, "-i", HYP, HYP_B, "--paired-bs", "--paired-bs-n", "100")
    assert proc.returncode == 0, proc.stderr
    path = tmp_path_factory.mktemp("result") / "paired.json"
    path.write_text(proc.stdout)
    return path


MALFORMED = [
    (b"[" * 100_000 + b"]" * 100_000, "not a result: JSON nested too deeply"),
    (b"[]", "an empty list: not a `beambleu score --paired-bs` result"),
    (b'[{"system": 1, "BLEU": {"score": 1}}]', "entry 0: 'system' is not a string"),
    (b'[{"system": "a", "BLEU": 5}]', "entry 0: 'BLEU' is not an object"),
    (b'{"score": "x"}', "'score' is not a number (\"x\")"),
    (b'{"score": true}', "'score' is not a number (true)"),
    (b'{"signature": 5, "corpus": null, "groups": []}', "'signature' is not a string"),
    (b'{"corpus": {"score": 1, "confidence_low": 0.5}, "groups": []}',
     "corpus: only one of 'confidence_low' and 'confidence_high' is given"),
    (b'{"corpus": {"score": 1, "n_pairs": "many"}, "groups": []}', "corpus: 'n_pairs' is not an integer (\"many\")"),
    (b'{"corpus": {"n_pairs": 3}, "groups": []}', "corpus has no 'score'"),
    (b'{"corpus": null, "groups": {}}', "'groups' is not a list"),
    (b'{"corpus": null, "groups": [1]}', "groups[0] is not an object"),
    (b'{"corpus": null, "groups": [], "bootstrap": []}', "'bootstrap' is not an object"),
    (b'{"corpus": null, "groups": [{"group_by": ["system"], "key": {"system": "a"}}]}', "groups[0] has no 'score'"),
    (b'{"corpus": null, "groups": [{"group_by": "system", "key": {}, "score": 1}]}',
     "groups[0]: 'group_by' is not a list of column names"),
    (b'{"corpus": null, "groups": [{"group_by": ["system"], "key": [], "score": 1}]}',
     "groups[0]: 'key' is not an object"),
    (b'{"corpus": null, "groups": [{"group_by": ["system"], "key": {}, "score": 1}]}',
     "groups[0]: 'key' has no value for the column 'system'"),
    (b'{"corpus": null, "groups": [{"group_by": ["system"], "key": {"system": [1]}, "score": 1}]}',
     "groups[0]: 'key' value of 'system' is not a string, number or null"),
    (b'{"corpus": null, "groups": [{"group_by": ["s"], "key": {"s": "a"}, "score": 1, "p_value": "low"}]}',
     "groups[0]: 'p_value' is not a number (\"low\")"),
]


@pytest.mark.parametrize("content,message", MALFORMED, ids=[m for _, m in MALFORMED])
def test_report_on_a_malformed_result(tmp_path, content, message):
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    assert one_line(cli("report", bad), 1) == f"beambleu: error: {bad}: {message}"
    assert listing(tmp_path) == ["bad.json"]


def test_report_on_an_unreadable_result(tmp_path):
    bad = tmp_path / "bad.json"
    for content, message in ((b"not json", "line 1, column 1: not JSON: Expecting value"),
                             (b'{"a": "\xff"}', "line 1, column 8: invalid UTF-8 (byte 0xff)"),
                             (b"[1, 2]", "entry 0 is not a system's result (no 'system' and score objects)"),
                             (b'"text"', "not a `beambleu run` or `beambleu score` result (no 'corpus' and 'groups')")):
        bad.write_bytes(content)
        assert one_line(cli("report", bad), 1) == f"beambleu: error: {bad}: {message}"
    os.remove(bad)
    assert one_line(cli("report", tmp_path), 1) == f"beambleu: error: {tmp_path}: cannot read: Is a directory"
    missing = tmp_path / "nope.json"
    assert one_line(cli("report", missing, "--plot", tmp_path / "p.png"), 1) == \
        f"beambleu: error: {missing}: cannot read: No such file or directory"
    assert listing(tmp_path) == []


def test_report_plot_without_matplotlib_names_the_extra(tmp_path, paired_result):
    proc = cli("report", paired_result, "--plot", tmp_path / "p.png", code=NO_MATPLOTLIB)
    assert one_line(proc, 2) == "beambleu: error: --plot needs matplotlib: pip install 'beambleu[plot]' (no matplotlib)"
    assert listing(tmp_path) == []


def test_report_plot_owns_its_path(tmp_path, paired_result):
    pytest.importorskip("matplotlib")
    (tmp_path / "dir.png").mkdir()
    proc = cli("report", paired_result, "--plot", tmp_path / "dir.png")
    assert one_line(proc, 2) == f"beambleu: error: {tmp_path / 'dir.png'}: --plot is a directory; it must name a file"
    result = tmp_path / "r.json"
    shutil.copy(paired_result, result)
    proc = cli("report", result, "--plot", result, "--overwrite")
    assert one_line(proc, 2) == f"beambleu: error: {result}: --plot is the input {result}"
    assert result.read_bytes() == paired_result.read_bytes()
    plot = tmp_path / "p.png"
    plot.write_bytes(b"mine")
    assert one_line(cli("report", result, "--plot", plot), 2) == \
        f"beambleu: error: {plot}: --plot exists (use --overwrite to replace it)"
    assert plot.read_bytes() == b"mine"
    assert one_line(cli("report", result, "--plot", tmp_path / "p.jpgx"), 2) == \
        f"beambleu: error: {tmp_path / 'p.jpgx'}: --plot: the file name must end in .png, .pdf or .svg (not .jpgx)"
    missing = tmp_path / "missing" / "p.png"
    assert one_line(cli("report", result, "--plot", missing), 1) == \
        f"beambleu: error: {missing}: cannot write the plot: No such file or directory"
    assert listing(tmp_path) == ["dir.png", "p.png", "r.json"]
    proc = cli("report", result, "--plot", plot, "--overwrite")
    assert proc.returncode == 0 and proc.stderr == f"beambleu: wrote {plot}\n", proc.stderr
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert listing(tmp_path) == ["dir.png", "p.png", "r.json"]  # nothing staged is left


# --------------------------------------------------------------------------- unexpected errors

def test_an_unexpected_error_is_one_line_with_a_hint():
    code = ("import sys\nfrom beambleu import cli\nfrom beambleu.commands import score as score_command\n"
            "def boom(args):\n    raise {}\n"
            "score_command.run = boom\nsys.exit(cli.main(sys.argv[1:]))\n")
    for exc, shown in (("KeyError('x')", "KeyError: 'x'"), ("ValueError('internal')", "ValueError: internal"),
                       ("MemoryError()", "MemoryError")):
        proc = cli("score", REF, "-i", HYP, code=code.format(exc))
        assert one_line(proc, 1) == f"beambleu: error: unexpected error: {shown} (BEAMBLEU_DEBUG=1 shows the traceback)"
    proc = cli("score", REF, "-i", HYP, code=code.format("KeyError('x')"), env={"BEAMBLEU_DEBUG": "1"})
    assert proc.returncode == 1 and "Traceback" in proc.stderr and proc.stderr.rstrip().endswith("KeyError: 'x'")
    assert "BEAMBLEU_DEBUG=1" in cli("--help").stdout

"""`beambleu score` against the `sacrebleu` command line on the same files."""

import gzip
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ...oracle import REPO

SAMPLE = REPO / "examples" / "sample"
REFS = [str(SAMPLE / "ref.A.txt"), str(SAMPLE / "ref.B.txt")]
HYP = str(SAMPLE / "sys.alpha.txt")


def beambleu(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "beambleu.cli", "score", *args], capture_output=True, text=True,
                          input=stdin, cwd=REPO)


def sacrebleu_cli(*args):
    out = subprocess.run([sys.executable, "-m", "sacrebleu", *args, "-m", "bleu"], capture_output=True, text=True,
                         cwd=REPO)
    assert out.returncode == 0, out.stderr
    return out.stdout


def unversioned(text):
    return text.replace("version:beambleu-0.1.0", "V").replace("version:2.6.0", "V")


@pytest.mark.parametrize("flags", [[], ["-tok", "intl", "-lc"], ["-s", "floor", "-sv", "0.3"], ["-s", "add-k"],
                                   ["-s", "none", "-w", "4"], ["-tok", "char"]])
def test_text_output_equals_sacrebleu(flags):
    ours = beambleu(*REFS, "-i", HYP, "-f", "text", *flags)
    assert ours.returncode == 0, ours.stderr
    assert unversioned(ours.stdout) == unversioned(sacrebleu_cli(*REFS, "-i", HYP, "-f", "text", *flags))


def test_json_is_sacrebleus_and_with_stats_adds_the_exact_score_and_statistics():
    for width in ("1", "3"):
        plain = beambleu(*REFS, "-i", HYP, "-w", width).stdout
        assert unversioned(plain).replace('"beambleu-0.1.0"', '"2.6.0"') == \
            unversioned(sacrebleu_cli(*REFS, "-i", HYP, "-w", width))
    ours = json.loads(beambleu(*REFS, "-i", HYP, "--with-stats").stdout)
    theirs = json.loads(sacrebleu_cli(*REFS, "-i", HYP, "-w", "17"))
    assert list(ours)[:11] == ["name", "score", "signature", "verbose_score", "nrefs", "case", "eff", "tok",
                               "smooth", "version", "score_exact"]
    assert ours["score"] == 77.1  # sacrebleu's rounding (-w 1)
    assert round(ours["score_exact"], 17) == theirs["score"]
    # hand count on examples/sample: 313 of the 335 candidate unigrams match (bleu_core's tests check the kernel)
    assert ours["counts"][0] == 313 and ours["totals"][0] == 335 and ours["sys_len"] == 335
    assert {"counts", "totals", "precisions", "bp", "ratio", "sys_len", "ref_len"} <= set(ours)


def test_score_only_sentence_level_and_stdin():
    assert beambleu(*REFS, "-i", HYP, "-b").stdout == sacrebleu_cli(*REFS, "-i", HYP, "-b")
    assert unversioned(beambleu(*REFS, "-i", HYP, "-sl").stdout) == unversioned(sacrebleu_cli(*REFS, "-i", HYP, "-sl"))
    piped = beambleu(*REFS, "-b", stdin=open(HYP, encoding="utf-8").read())
    assert piped.stdout == sacrebleu_cli(*REFS, "-i", HYP, "-b")


def test_gzip_and_crlf(tmp_path):
    gz = tmp_path / "hyp.txt.gz"
    with gzip.open(gz, "wb") as fh:
        fh.write(open(HYP, "rb").read().replace(b"\n", b"\r\n"))
    assert beambleu(*REFS, "-i", str(gz), "-b").stdout == sacrebleu_cli(*REFS, "-i", HYP, "-b")


def test_line_count_mismatch(tmp_path):
    short = tmp_path / "short.txt"
    short.write_text("one line\n", encoding="utf-8")
    out = beambleu(REFS[0], "-i", str(short))
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.strip() == f"beambleu: error: {REFS[0]}: has 30 lines but the system output {short} has 1"
    assert "Traceback" not in out.stderr


def test_bad_utf8_names_file_line_and_column(tmp_path):
    bad = tmp_path / "bad.txt"
    lines = open(HYP, "rb").read().split(b"\n")
    lines[6] = b"caf\xc3 au lait"
    bad.write_bytes(b"\n".join(lines))
    out = beambleu(*REFS, "-i", str(bad))
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.strip() == f"beambleu: error: {bad}: line 7, column 4: invalid UTF-8 (byte 0xc3)"


def test_missing_file_and_bad_flags(tmp_path):
    out = beambleu(str(tmp_path / "nope.txt"), "-i", HYP)
    assert out.returncode == 1 and "nope.txt: cannot read: No such file or directory" in out.stderr
    out = beambleu(*REFS, "-i", HYP, "-tok", "13b")
    assert out.returncode == 2 and "invalid choice: '13b'" in out.stderr
    out = beambleu(*REFS, "-i", HYP, "--max-ngram-order", "0")
    assert out.returncode == 2 and out.stderr.strip() == \
        "beambleu: error: max_ngram_order must be between 1 and 64, got 0"


def test_score_does_not_import_beam():
    code = ("import sys, io, contextlib; from beambleu.cli import main\n"
            f"with contextlib.redirect_stdout(io.StringIO()): rc = main(['score', {REFS[0]!r}, '-i', {HYP!r}])\n"
            "assert rc == 0; print('apache_beam' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert out.stdout.strip() == "False", out.stderr


def test_help_lists_sacrebleu_flags():
    out = beambleu("--help").stdout
    for flag in ("-tok", "--lowercase", "-s", "-sv", "--force", "-b", "-w", "-f", "-sl", "--max-ngram-order",
                 "--effective-order"):
        assert flag in out


def test_utf8_byte_order_mark_stays_in_the_first_segment_as_in_sacrebleu(tmp_path):
    """sacrebleu opens files with encoding="utf-8", which keeps a UTF-8 BOM: U+FEFF starts the first
    segment (and its first token), so it counts against the score. beambleu does the same."""
    hyp, ref = tmp_path / "hyp.txt", tmp_path / "ref.txt"
    hyp.write_bytes(b"\xef\xbb\xbf" + Path(HYP).read_bytes())
    ref.write_bytes(b"\xef\xbb\xbf" + Path(REFS[0]).read_bytes())
    for refs, h in (([REFS[0]], str(hyp)), ([str(ref)], HYP), ([str(ref), REFS[1]], str(hyp))):
        for flags in (["-f", "text"], ["-sl"]):
            ours = beambleu(*refs, "-i", h, *flags)
            assert ours.returncode == 0, ours.stderr
            assert unversioned(ours.stdout) == unversioned(sacrebleu_cli(*refs, "-i", h, *flags))
    assert sacrebleu_cli(REFS[0], "-i", str(hyp), "-b") != sacrebleu_cli(REFS[0], "-i", HYP, "-b")  # it counts


def test_chrf_usage_errors_are_one_line_exit_2():
    """Option values the metric refuses stop before any input is read: one line, exit 2."""
    for args, message in ((["-cc", "65"], "char_order must be at most 64"),
                          (["-cw", "99999999999999999999"], "word_order must be at most 64"),
                          (["--chrf-beta", str(10**200)], "beta is too large"),
                          (["-cc", "0", "-cw", "0"], "char_order + word_order must be at least 1")):
        proc = beambleu(REFS[0], "-i", HYP, "-m", "chrf", *args)
        assert proc.returncode == 2 and proc.stdout == "", proc.stderr
        assert proc.stderr.strip().count("\n") == 0 and message in proc.stderr, proc.stderr


def test_score_only_keeps_the_interval_as_sacrebleu():
    proc = beambleu(REFS[0], "-i", HYP, "-m", "bleu", "chrf", "-b", "--confidence", "--confidence-n", "50", "-f",
                    "text")
    lines = proc.stdout.splitlines()
    assert proc.returncode == 0 and len(lines) == 2, proc.stderr
    assert all(re.fullmatch(r"\d+\.\d \(μ = \d+\.\d ± \d+\.\d\)", line) for line in lines), lines


@pytest.mark.parametrize("args", [["-m", "bleu", "chrf", "-f", "text"], ["-m", "chrf", "bleu", "-b"],
                                  ["-m", "bleu", "chrf", "-b", "-f", "text"],
                                  ["-m", "chrf", "-cw", "2", "-w", "3", "-f", "text"],
                                  ["-m", "chrf", "bleu", "-cc", "4", "--chrf-beta", "1", "--chrf-lowercase", "-lc",
                                   "-f", "text"]])
def test_several_metrics_print_what_sacrebleu_prints(args):
    """Metrics in sacrebleu's order, text lines aligned on '=', a JSON list of scores for -b: byte for byte
    (JSON objects keep the score at full precision, so they are compared where sacrebleu's are plain text)."""
    ours = beambleu(*REFS, "-i", HYP, *args)
    theirs = subprocess.run([sys.executable, "-m", "sacrebleu", *REFS, "-i", HYP, *args], capture_output=True,
                            text=True, cwd=REPO)
    assert ours.returncode == 0 == theirs.returncode, ours.stderr + theirs.stderr
    assert ours.stdout == theirs.stdout.replace("version:2.6.0", "version:beambleu-0.1.0")


def _masked(text):
    """The resampled numbers (mean and half-width) masked: beambleu draws them with its own generator."""
    return re.sub(r"μ = [0-9.]+ ± [0-9.]+", "μ = M ± H", unversioned(text))


@pytest.mark.parametrize("seed", ["7", "none"])
def test_sacrebleu_seed_environment_variable(seed):
    """SACREBLEU_SEED sets the seed (and the signature's seed: field) as in sacrebleu; 'none' draws one."""
    env = dict(os.environ, SACREBLEU_SEED=seed)
    args = [*REFS, "-i", HYP, "-ci", "-cin", "200", "-f", "text"]
    ours = subprocess.run([sys.executable, "-m", "beambleu.cli", "score", *args], capture_output=True, text=True,
                          env=env, timeout=300)
    theirs = subprocess.run([sys.executable, "-m", "sacrebleu", *args], capture_output=True, text=True, env=env,
                            timeout=300)
    assert ours.returncode == 0 and theirs.returncode == 0, (ours.stderr, theirs.stderr)
    assert f"|seed:{seed}|" in ours.stdout
    assert _masked(ours.stdout) == _masked(theirs.stdout)
    if seed == "7":  # a fixed seed: the same interval every time, another than the default seed's
        again = subprocess.run([sys.executable, "-m", "beambleu.cli", "score", *args], capture_output=True,
                               text=True, env=env, timeout=300)
        default = beambleu(*args)
        assert again.stdout == ours.stdout and default.stdout != ours.stdout


def _on_a_terminal(cmd, env):
    """stdout of ``cmd`` written to a pseudo-terminal (the way sacrebleu's colours are decided)."""
    import pty

    leader, follower = pty.openpty()
    proc = subprocess.Popen(cmd, stdout=follower, stderr=subprocess.DEVNULL, env=env, cwd=REPO)
    os.close(follower)
    out = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal is gone once the process has exited
            break
        if not chunk:
            break
        out += chunk
    proc.wait(timeout=300)
    os.close(leader)
    return proc.returncode, out.decode("utf-8").replace("\r\n", "\n")


@pytest.mark.parametrize("extra", [["-f", "text"], ["-pbs", "-pbsn", "50", "-f", "text", "-q"], ["-nc", "-f", "text"]])
def test_colours_on_a_terminal_are_sacrebleus(extra):
    """On a terminal sacrebleu colours the table (and colorama resets at exit); -nc or NO_COLOR turn it off."""
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "SACREBLEU_FORMAT")}
    args = [REFS[0], "-i", HYP, str(SAMPLE / "sys.beta.txt"), *extra]
    rc_ours, ours = _on_a_terminal([sys.executable, "-m", "beambleu.cli", "score", *args], env)
    rc_theirs, theirs = _on_a_terminal([sys.executable, "-m", "sacrebleu", *args], env)
    assert rc_ours == rc_theirs == 0
    assert ("\x1b[36m" in ours) == ("-nc" not in extra)
    assert _masked_p(ours) == _masked_p(theirs)


def _masked_p(text):
    text = re.sub(r"\(p = [0-9.]+\)\*?", "(p = P)", re.sub(r"\([0-9.]+ ± [0-9.]+\)", "(M ± H)", text))
    return re.sub(r"│[^│\n]*\(M ± H\)[^│\n]*│", "│CELL│", unversioned(text))


def _signature_lines(text):
    return [ln.strip() for ln in unversioned(text).splitlines() if "seed:" in ln]


@pytest.mark.parametrize("seed", ["0042", "+42", "4_2"])
def test_seed_is_shown_as_sacrebleu_shows_it_and_draws_as_its_integer(seed):
    """sacrebleu 2.6.0 (significance.py) seeds numpy with int(SACREBLEU_SEED); its --confidence
    signature shows the variable as given (lowercased: ``seed:0042``), its paired tests' signatures
    show the integer (``seed:42``). beambleu shows the same, and draws what seed 42 draws."""
    args = [*REFS, "-i", HYP, "-ci", "-cin", "200", "-f", "text"]
    paired = [REFS[0], "-i", HYP, str(SAMPLE / "sys.beta.txt"), "-pbs", "-pbsn", "100", "-f", "text"]
    runs = {}
    for value in (seed, "42"):
        env = dict(os.environ, SACREBLEU_SEED=value)
        for name, a in (("ci", args), ("pbs", paired)):
            for tool in ("beambleu.cli", "sacrebleu"):
                cmd = [sys.executable, "-m", tool, *(["score"] if tool == "beambleu.cli" else []), *a]
                proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300, cwd=REPO)
                assert proc.returncode == 0, proc.stderr
                runs[value, name, tool] = proc.stdout
    ours, theirs = runs[seed, "ci", "beambleu.cli"], runs[seed, "ci", "sacrebleu"]
    assert f"|seed:{seed}|" in theirs and f"|seed:{seed}|" in ours
    assert _masked(ours) == _masked(theirs)
    assert ours.replace(f"seed:{seed}", "seed:42") == runs["42", "ci", "beambleu.cli"]  # seed 42's numbers
    ours, theirs = runs[seed, "pbs", "beambleu.cli"], runs[seed, "pbs", "sacrebleu"]
    assert _signature_lines(ours) == _signature_lines(theirs) and "seed:42" in _signature_lines(ours)[0]
    assert ours == runs["42", "pbs", "beambleu.cli"]


@pytest.mark.parametrize("how", ["--seed", "SACREBLEU_SEED"])
@pytest.mark.parametrize("value", [2**64, 2**64 + 12345, -1])
def test_seeds_outside_the_64_bits_the_generator_keys_on_are_refused(how, value):
    """The generator keys on a 64-bit seed: 12345 and 12345 + 2**64 would draw the same numbers
    under two signatures, so a seed outside 0 .. 2**64 - 1 is bad usage (sacrebleu's numpy refuses
    negative seeds too); 2**64 - 1 is a seed."""
    env = dict(os.environ)
    args = [*REFS, "-i", HYP, "-ci", "-cin", "50", "-f", "text"]
    if how == "--seed":
        args += ["--seed", str(value)]
    else:
        env["SACREBLEU_SEED"] = str(value)
    proc = subprocess.run([sys.executable, "-m", "beambleu.cli", "score", *args], capture_output=True, text=True,
                          env=env, timeout=300, cwd=REPO)
    assert proc.returncode == 2 and proc.stdout == ""
    what = f"--seed {value}" if how == "--seed" else f"SACREBLEU_SEED='{value}'"
    assert proc.stderr == (f"beambleu: error: {what}: outside 0 .. 2**64 - 1, the seeds the generator tells apart "
                           "(seeds 2**64 apart would draw the same numbers)\n")
    top = subprocess.run([sys.executable, "-m", "beambleu.cli", "score", *REFS, "-i", HYP, "-ci", "-cin", "50",
                          "-f", "text", "--seed", str(2**64 - 1)], capture_output=True, text=True, timeout=300,
                         cwd=REPO)
    assert top.returncode == 0 and f"|seed:{2**64 - 1}|" in top.stdout, top.stderr


@pytest.mark.parametrize("flags,cap_default", [(["-par", "-parn", "100001"], 10000),
                                                (["-pbs", "-pbsn", "100001"], 1000),
                                                (["-ci", "-cin", "100001"], 1000)])
def test_resample_cap_message_names_sacrebleus_default_of_that_flag(flags, cap_default):
    """sacrebleu 2.6.0's defaults: 10000 approximate randomization trials, 1000 bootstrap resamples (the
    cap is the counter draws' accumulators')."""
    from sacrebleu.significance import PairedTest

    assert PairedTest._DEFAULT_SAMPLES == {"ar": 10000, "bs": 1000}
    hyps = ["-i", HYP] + ([str(SAMPLE / "sys.beta.txt")] if flags[0] != "-ci" else [])
    proc = beambleu(REFS[0], *hyps, *flags, "-f", "text", "--resampling", "counter")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and f"(sacrebleu's default is {cap_default})" in proc.stderr, proc.stderr

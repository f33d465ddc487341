"""Acceptance test of `beambleu score` as a drop-in for the `sacrebleu` 2.6.0 command line.

Every case runs `python -m beambleu score ARGS` and `python -m sacrebleu ARGS` on real files of the shared corpora
(skipped when absent) and requires the same exit code (0) and the same standard output byte for byte, after
normalising the signatures' version field only (tests/cli_parity.py). The cases that resample (confidence
intervals, paired tests) are compared the same way, unmasked: beambleu draws sacrebleu's resamples by default. Run
again with `--resampling counter` (beambleu's own draws), their resampled numbers are masked, and nothing else.
Error cases compare only whether the exit code is zero, and require beambleu to explain itself in one
line on standard error.
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import NamedTuple

import pytest

from ...cli_parity import (BEAMBLEU_VERSION, SACREBLEU_VERSION, comparable, first_difference, mask_resampled,
    normalise_version, run_both, unpad_metric_columns)

pytestmark = pytest.mark.slow

LIV = "wmt22/en-liv/"  # 420 lines, 1 reference
LIV_REF = LIV + "ref.A.txt"
S0, S1, S2 = (f"{LIV}sys.{name}.txt" for name in ("TartuNLP", "NiuTrans", "Liv4ever"))
DEEN_REFS = ("wmt22/de-en/ref.A.txt", "wmt22/de-en/ref.B.txt")  # 1984 lines, 2 references
DEEN_SYS = "wmt22/de-en/sys.Online-A.txt"
ENDE_REFS = tuple(f"wmt21/en-de/ref.{x}.txt" for x in "ACD")  # 1002 lines, 3 references
ENDE_SYS = "wmt21/en-de/sys.ICL.txt"
ENDE_LATIN1_SYS = "wmt21/en-de/sys.happypoet.txt"  # every line encodable in Latin-1
ENZH_REF, ENZH_SYS = "wmt22/en-zh/ref.A.txt", "wmt22/en-zh/sys.Online-A.txt"
HAEN_REF, HAEN_SYS = "wmt21/ha-en/ref.A.txt", "wmt21/ha-en/sys.MS-EgDC.txt"  # both files encodable in Latin-1
CORPUS_PREFIXES = ("wmt21/", "wmt22/")


class Run(NamedTuple):
    """One command line: arguments (shared by both programs), bytes on standard input, extra environment."""
    args: list
    stdin: bytes | None = None
    env: dict | None = None


class Context:
    """What a case needs to build its command line: the corpora (the programs' working directory) and a
    temporary folder for derived files."""

    def __init__(self, corpora: Path, tmp: Path):
        self.corpora, self.tmp = corpora, tmp

    def path(self, rel: str) -> str:
        """`rel` as given (the programs run in the corpora folder), skipping the case if the file is absent."""
        if not (self.corpora / rel).is_file():
            pytest.skip(f"{rel} not in the shared corpora")
        return rel

    def lines(self, rel: str) -> list[bytes]:
        """The file's lines as bytes, without their line ends (every corpus file ends with a newline)."""
        return (self.corpora / self.path(rel)).read_bytes().split(b"\n")[:-1]

    def write(self, name: str, lines: list[bytes], *, gz: bool = False, eol: bytes = b"\n") -> str:
        """Write `lines` to tmp/name (gzipped if `gz`) and return its absolute path."""
        target = self.tmp / name
        data = b"".join(line + eol for line in lines)
        target.write_bytes(gzip.compress(data) if gz else data)
        return str(target)


def plain(*args: str, env: dict | None = None):
    """A case made of arguments only; corpus paths are checked for presence."""
    return lambda ctx: Run([ctx.path(a) if a.startswith(CORPUS_PREFIXES) else a for a in args], env=env)


def head(lines: int, *args: str):
    """A case on the first ``lines`` lines of each corpus file it names (for options whose sacrebleu
    side takes minutes on a whole set)."""
    def build(ctx):
        return Run([ctx.write(f"head{i}-{Path(a).name}", ctx.lines(a)[:lines]) if a.startswith(CORPUS_PREFIXES)
                    else a for i, a in enumerate(args)])
    return build


def tab_joined(*files: str):
    """A function of the context giving the lines of `files` joined by tabs, as `paste` does."""
    return lambda ctx: [b"\t".join(fields) for fields in zip(*(ctx.lines(f) for f in files))]


# ---------------------------------------------------------------- cases whose output must be identical

def _nr2(*extra):
    """The two de-en references in one tab-separated file, read with -nr 2."""
    def build(ctx):
        refs = ctx.write("refs.tsv", tab_joined(*DEEN_REFS)(ctx))
        return Run([refs, "-nr", "2", "-i", ctx.path(DEEN_SYS), *extra])
    return build


def _gz(ctx):
    """The 2-reference de-en case with every file gzipped."""
    refs = [ctx.write(f"ref{i}.txt.gz", ctx.lines(r), gz=True) for i, r in enumerate(DEEN_REFS)]
    return Run([*refs, "-i", ctx.write("sys.txt.gz", ctx.lines(DEEN_SYS), gz=True), "-f", "text"])


def _crlf(ctx):
    """A system file with CRLF line ends (sacrebleu reads on \\n and strips the \\r with rstrip)."""
    return Run([ctx.path(LIV_REF), "-i", ctx.write("sys.crlf.txt", ctx.lines(S0), eol=b"\r\n"), "-f", "text"])


def _latin1_german(*extra):
    """Lines of wmt21 en-de whose reference and system are both Latin-1 encodable, written in Latin-1."""
    def build(ctx):
        pairs = []
        for ref, hyp in zip(ctx.lines(ENDE_REFS[0]), ctx.lines(ENDE_LATIN1_SYS)):
            try:
                pairs.append((ref.decode("utf-8").encode("latin-1"), hyp.decode("utf-8").encode("latin-1")))
            except UnicodeEncodeError:
                continue
        assert len(pairs) > 500 and any(max(h) > 127 for _, h in pairs)
        ref = ctx.write("ref.latin1.txt", [r for r, _ in pairs])
        hyp = ctx.write("sys.latin1.txt", [h for _, h in pairs])
        return Run([ref, "-i", hyp, "-e", "latin-1", *extra])
    return build


def _latin1_hausa(ctx):
    """A whole ha-en reference and system (both Latin-1 encodable) written in Latin-1."""
    to_latin1 = [[line.decode("utf-8").encode("latin-1") for line in ctx.lines(f)] for f in (HAEN_REF, HAEN_SYS)]
    return Run([ctx.write("ref.txt", to_latin1[0]), "-i", ctx.write("sys.txt", to_latin1[1]), "--encoding",
                "latin-1", "-m", "bleu", "chrf", "-f", "text"])


def _stdin(systems, *extra):
    """The en-liv `systems` on standard input, tab-separated on each line (sacrebleu names them System 1, ...)."""
    def build(ctx):
        lines = tab_joined(*systems)(ctx)
        return Run([ctx.path(LIV_REF), *extra], stdin=b"".join(line + b"\n" for line in lines))
    return build


def _stdin_latin1(ctx):
    """The Latin-1 German system on standard input (sacrebleu decodes stdin with --encoding too); the
    reference is the Latin-1 copy of the matching reference lines."""
    run = _latin1_german()(ctx)
    ref, hyp = run.args[0], run.args[2]
    return Run([ref, "-e", "latin-1", "-f", "text"], stdin=Path(hyp).read_bytes())


SAME = {
    # number of references, metrics and their order
    "1ref": plain(LIV_REF, "-i", S0),
    "1ref-text": plain(LIV_REF, "-i", S0, "-f", "text"),
    "2refs": plain(*DEEN_REFS, "-i", DEEN_SYS),
    "2refs-chrf-text": plain(*DEEN_REFS, "-i", DEEN_SYS, "-m", "chrf", "-f", "text"),
    "3refs": plain(*ENDE_REFS, "-i", ENDE_SYS),
    "3refs-bleu-chrf-text": plain(*ENDE_REFS, "-i", ENDE_SYS, "-m", "bleu", "chrf", "-f", "text"),
    "m-bleu": plain(LIV_REF, "-i", S0, "-m", "bleu", "-f", "text"),
    "m-chrf": plain(LIV_REF, "-i", S0, "-m", "chrf"),
    "m-bleu-chrf": plain(LIV_REF, "-i", S0, "-m", "bleu", "chrf"),
    "m-chrf-bleu": plain(LIV_REF, "-i", S0, "-m", "chrf", "bleu"),
    "m-chrf-bleu-text": plain(LIV_REF, "-i", S0, "-m", "chrf", "bleu", "-f", "text"),
    # metric options
    "cw2": plain(LIV_REF, "-i", S0, "-m", "chrf", "-cw", "2"),
    "cw2-text": plain(LIV_REF, "-i", S0, "-m", "bleu", "chrf", "-cw", "2", "-f", "text"),
    "cw2-bleu-only": plain(LIV_REF, "-i", S0, "-cw", "2", "-f", "text"),
    "lc": plain(LIV_REF, "-i", S0, "-lc"),
    "lc-bleu-chrf-text": plain(LIV_REF, "-i", S0, "-lc", "-m", "bleu", "chrf", "-f", "text"),
    "tok-intl": plain(LIV_REF, "-i", S0, "-tok", "intl"),
    "tok-char": plain(LIV_REF, "-i", S0, "-tok", "char", "-f", "text"),
    "tok-none": plain(LIV_REF, "-i", S0, "-tok", "none"),
    "tok-zh": plain(ENZH_REF, "-i", ENZH_SYS, "-tok", "zh"),
    "tok-zh-text": plain(ENZH_REF, "-i", ENZH_SYS, "--tokenize", "zh", "-f", "text"),
    "smooth-floor": plain(LIV_REF, "-i", S0, "-s", "floor", "-sv", "0.2"),
    "smooth-floor-text": plain(LIV_REF, "-i", S0, "-s", "floor", "-sv", "0.2", "-f", "text"),
    "smooth-add-k": plain(LIV_REF, "-i", S0, "-s", "add-k"),
    "smooth-add-k-sv2-text": plain(LIV_REF, "-i", S0, "--smooth-method", "add-k", "--smooth-value", "2", "-f",
                                   "text"),
    "smooth-none": plain(LIV_REF, "-i", S0, "-s", "none", "-f", "text"),
    "smooth-exp-sv-ignored": plain(LIV_REF, "-i", S0, "-sv", "0.5"),
    "chrf-whitespace": plain(LIV_REF, "-i", S0, "-m", "chrf", "--chrf-whitespace"),
    "chrf-lowercase": plain(LIV_REF, "-i", S0, "-m", "chrf", "--chrf-lowercase", "-f", "text"),
    "chrf-eps-smoothing": plain(LIV_REF, "-i", S0, "-m", "chrf", "--chrf-eps-smoothing"),
    "chrf-cc4": plain(LIV_REF, "-i", S0, "-m", "chrf", "-cc", "4"),
    "chrf-beta1-text": plain(LIV_REF, "-i", S0, "-m", "chrf", "--chrf-beta", "1", "-f", "text"),
    "chrf-beta1-cw2-sh": plain(LIV_REF, "-i", S0, "-m", "chrf", "--chrf-beta", "1", "-cw", "2", "-sh", "-f", "text"),
    # output formats
    "b": plain(LIV_REF, "-i", S0, "-b"),
    "b-bleu-chrf": plain(LIV_REF, "-i", S0, "-b", "-m", "bleu", "chrf"),
    "b-bleu-chrf-text": plain(LIV_REF, "-i", S0, "--score-only", "-m", "bleu", "chrf", "-f", "text"),
    "w3": plain(LIV_REF, "-i", S0, "-w", "3", "-m", "bleu", "chrf"),
    "w3-text": plain(LIV_REF, "-i", S0, "--width", "3", "-m", "bleu", "chrf", "-f", "text"),
    "w0-text": plain(LIV_REF, "-i", S0, "-w", "0", "-f", "text"),
    "w0-json": plain(LIV_REF, "-i", S0, "-w", "0"),
    "sh-text": plain(LIV_REF, "-i", S0, "-sh", "-m", "bleu", "chrf", "-f", "text"),
    "sh-json": plain(LIV_REF, "-i", S0, "-f", "json", "-sh", "-m", "bleu", "chrf"),
    "sh-default-format": plain(LIV_REF, "-i", S0, "--short"),
    "latex-single-system": plain(LIV_REF, "-i", S0, "-f", "latex", "-m", "bleu", "chrf"),
    "env-format-text": plain(LIV_REF, "-i", S0, "-m", "bleu", "chrf", env={"SACREBLEU_FORMAT": "text"}),
    "env-format-beats-f": plain(LIV_REF, "-i", S0, "-f", "json", env={"SACREBLEU_FORMAT": "text"}),
    "env-format-uppercase": plain(LIV_REF, "-i", S0, env={"SACREBLEU_FORMAT": "TEXT"}),
    "env-format-invalid-ignored": plain(LIV_REF, "-i", S0, "-f", "text", env={"SACREBLEU_FORMAT": "yaml"}),
    "no-color-env": plain(LIV_REF, "-i", S0, "-f", "text", env={"NO_COLOR": "1"}),
    # input forms
    "nr2-tab-joined": _nr2(),
    "nr2-tab-joined-text": _nr2("-f", "text", "-m", "bleu", "-sh"),
    "gz": _gz,
    "crlf": _crlf,
    "latin1-german": _latin1_german("-f", "text"),
    "latin1-german-json": _latin1_german("-m", "bleu", "chrf"),
    "latin1-hausa": _latin1_hausa,
    "stdin-one-system": _stdin([S0]),
    "stdin-one-system-text": _stdin([S0], "-m", "bleu", "chrf", "-f", "text"),
    "stdin-latin1": _stdin_latin1,
    "stdin-three-systems-text": _stdin([S0, S1, S2], "-f", "text"),
    "stdin-three-systems-json": _stdin([S0, S1, S2], "-m", "bleu", "chrf"),
    # several systems: sacrebleu's table. Standard output is a pipe here, so colorama strips sacrebleu's colour
    # codes and the output is the same with and without -nc / NO_COLOR
    "multi-default": plain(LIV_REF, "-i", S0, S1, S2),
    "multi-json": plain(LIV_REF, "-i", S0, S1, S2, "-f", "json", "-m", "bleu", "chrf"),
    "multi-text": plain(LIV_REF, "-i", S0, S1, S2, "-f", "text"),
    "multi-text-nc": plain(LIV_REF, "-i", S0, S1, S2, "-f", "text", "-nc"),
    "multi-text-bleu-chrf": plain(LIV_REF, "-i", S0, S1, S2, "-f", "text", "-m", "bleu", "chrf"),
    "multi-text-bleu-chrf-nc": plain(LIV_REF, "-i", S0, S1, S2, "-f", "text", "-m", "bleu", "chrf", "--no-color"),
    "multi-text-sh-w2-b": plain(LIV_REF, "-i", S0, S1, S2, "-f", "text", "-sh", "-w", "2", "-b"),
    "multi-latex": plain(LIV_REF, "-i", S0, S1, S2, "-f", "latex"),
    "multi-latex-bleu-chrf-nc": plain(LIV_REF, "-i", S0, S1, S2, "-f", "latex", "-m", "bleu", "chrf", "-nc"),
    "multi-env-format-text": plain(LIV_REF, "-i", S0, S1, env={"SACREBLEU_FORMAT": "text"}),
    # sentence level
    "sl-bleu": plain(LIV_REF, "-i", S0, "-sl"),
    "sl-bleu-b": plain(LIV_REF, "-i", S0, "-sl", "-b"),
    "sl-bleu-sh-w2": plain(LIV_REF, "-i", S0, "--sentence-level", "-sh", "-w", "2"),
    "sl-bleu-2refs-b": plain(*DEEN_REFS, "-i", DEEN_SYS, "-sl", "-b"),
    "sl-chrf": plain(LIV_REF, "-i", S0, "-sl", "-m", "chrf"),
    "sl-chrf-b": plain(LIV_REF, "-i", S0, "-sl", "-m", "chrf", "-b"),
    # TER: a metric of the registry like the others, with sacrebleu's flags
    "ter": plain(LIV_REF, "-i", S0, "-m", "ter"),
    "ter-text": plain(LIV_REF, "-i", S0, "-m", "ter", "-f", "text"),
    "bleu-chrf-ter": plain(LIV_REF, "-i", S0, "-m", "bleu", "chrf", "ter"),
    "ter-chrf-bleu-sh-text": plain(LIV_REF, "-i", S0, "-m", "ter", "chrf", "bleu", "-sh", "-f", "text"),
    "2refs-ter-text": plain(*DEEN_REFS, "-i", DEEN_SYS, "-m", "ter", "-f", "text"),
    # three references: sacrebleu adds float averages in order; score reads in order too
    "3refs-ter": plain(*ENDE_REFS, "-i", ENDE_SYS, "-m", "ter"),
    "ter-case-sensitive-text": plain(LIV_REF, "-i", S0, "-m", "ter", "--ter-case-sensitive", "-f", "text"),
    "ter-normalized": plain(LIV_REF, "-i", S0, "-m", "ter", "--ter-normalized"),
    "ter-no-punct-sh-text": plain(LIV_REF, "-i", S0, "-m", "ter", "--ter-no-punct", "-sh", "-f", "text"),
    # (sacrebleu's side of this one takes nearly 2 minutes on the whole set: its first 600 lines)
    "ter-zh-asian-normalized": head(600, ENZH_REF, "-i", ENZH_SYS, "-m", "ter", "--ter-asian-support",
                                    "--ter-normalized", "-f", "text"),
    "ter-zh-asian-no-punct-cs": plain(ENZH_REF, "-i", ENZH_SYS, "-m", "ter", "--ter-asian-support", "--ter-no-punct",
                                      "--ter-case-sensitive"),
    "ter-zh-asian-alone": plain(ENZH_REF, "-i", ENZH_SYS, "-m", "ter", "--ter-asian-support", "-f", "text"),
    "b-ter-w3": plain(LIV_REF, "-i", S0, "-m", "ter", "-b", "-w", "3"),
    "multi-text-bleu-ter": plain(LIV_REF, "-i", S0, S1, S2, "-f", "text", "-m", "bleu", "ter"),
    "multi-json-ter": plain(LIV_REF, "-i", S0, S1, S2, "-m", "ter"),
    "multi-latex-ter-chrf": plain(LIV_REF, "-i", S0, S1, S2, "-f", "latex", "-m", "ter", "chrf"),
    "sl-ter": plain(LIV_REF, "-i", S0, "-sl", "-m", "ter"),
    "sl-ter-b-text": plain(LIV_REF, "-i", S0, "-sl", "-m", "ter", "-b", "-f", "text"),
}

# ---------------------------------------------------------------- cases that resample (identical by default)


def _copy_of_baseline(*extra):
    """The baseline, and a byte-for-byte copy of it under another name: sacrebleu's strict count gives the copy
    p = 1 / (N + 1), "significant", which beambleu reproduces by default."""
    def build(ctx):
        copy = ctx.write("copy-of-baseline.txt", ctx.lines(S0))
        return Run([ctx.path(LIV_REF), "-i", ctx.path(S0), copy, ctx.path(S1), *extra])
    return build


RESAMPLED = {
    "ci-text": plain(LIV_REF, "-i", S0, "-ci", "-m", "bleu", "chrf", "-f", "text"),
    "ci-cin200-json": plain(LIV_REF, "-i", S0, "-ci", "-cin", "200", "-f", "json", "-m", "bleu", "chrf"),
    "ci-cin200-default": plain(LIV_REF, "-i", S0, "--confidence", "--confidence-n", "200"),
    "ci-cin200-b": plain(LIV_REF, "-i", S0, "-ci", "-cin", "200", "-b"),
    "ci-cin200-sh-w3-text": plain(LIV_REF, "-i", S0, "-ci", "-cin", "200", "-sh", "-w", "3", "-f", "text"),
    "paired-bs-text": plain(LIV_REF, "-i", S0, S1, S2, "--paired-bs", "-m", "bleu", "chrf", "-f", "text"),
    "paired-bs-pbsn200-text": plain(LIV_REF, "-i", S0, S1, S2, "-pbs", "-pbsn", "200", "-f", "text"),
    # bleu only: sacrebleu 2.6.0 itself fails (float32 not JSON serializable) on chrF with --paired-bs -f json
    "paired-bs-pbsn200-json": plain(LIV_REF, "-i", S0, S1, S2, "--paired-bs", "--paired-bs-n", "200", "-f", "json"),
    "paired-bs-j2-text": plain(LIV_REF, "-i", S0, S1, S2, "--paired-bs", "-pbsn", "200", "-j", "2", "-f", "text"),
    "paired-bs-baseline-repeated": plain(LIV_REF, "-i", S0, S1, S0, S2, "--paired-bs", "-pbsn", "200", "-f", "text"),
    "paired-bs-sh-w2-text": plain(LIV_REF, "-i", S0, S1, "--paired-bs", "-pbsn", "200", "-sh", "-w", "2", "-f",
                                  "text"),
    "paired-ar-text": plain(LIV_REF, "-i", S0, S1, "--paired-ar", "-parn", "500", "-m", "bleu", "chrf", "-f", "text"),
    "paired-ar-json": plain(LIV_REF, "-i", S0, S1, "-par", "--paired-ar-n", "500", "-m", "bleu", "chrf", "-f",
                            "json"),
    "paired-ar-latex": plain(LIV_REF, "-i", S0, S1, S2, "--paired-ar", "-parn", "500", "-f", "latex"),
    "paired-ar-j2-text": plain(LIV_REF, "-i", S0, S1, S2, "--paired-ar", "-parn", "500", "--paired-jobs", "2",
                               "-f", "text"),
    "paired-ar-stdin-text": _stdin([S0, S1, S2], "--paired-ar", "-parn", "500", "-f", "text"),
    # the paired tests keep the -m order (the other outputs sort the metrics)
    "paired-ar-m-chrf-bleu-text": plain(LIV_REF, "-i", S0, S1, "-par", "-parn", "300", "-m", "chrf", "bleu", "-f",
                                        "text"),
    "paired-ar-m-chrf-bleu-json": plain(LIV_REF, "-i", S0, S1, "-par", "-parn", "300", "-m", "chrf", "bleu", "-f",
                                        "json"),
    "paired-bs-n0-text": plain(LIV_REF, "-i", S0, S1, "-pbs", "-pbsn", "0", "-f", "text"),
    "ci-ter-text": plain(LIV_REF, "-i", S0, "-ci", "-cin", "200", "-m", "ter", "-f", "text"),
    "paired-bs-ter-bleu-text": plain(LIV_REF, "-i", S0, S1, "-pbs", "-pbsn", "200", "-m", "ter", "bleu", "-f", "text"),
    "paired-ar-ter-json": plain(LIV_REF, "-i", S0, S1, "-par", "-parn", "300", "-m", "ter", "-f", "json"),
    # sacrebleu's seeds: as given for the intervals (seed:0042), as an integer in the paired tests
    "ci-seed0042-json": plain(LIV_REF, "-i", S0, "-ci", "-cin", "300", "-m", "bleu", "chrf", "ter", "-f", "json",
                              env={"SACREBLEU_SEED": "0042"}),
    "paired-bs-seed7-latex": plain(LIV_REF, "-i", S0, S1, "-pbs", "-pbsn", "300", "-m", "chrf", "bleu", "-f", "latex",
                                   env={"SACREBLEU_SEED": "7"}),
    "paired-ar-seed0042-text": plain(LIV_REF, "-i", S0, S1, "-par", "-parn", "300", "-f", "text",
                                     env={"SACREBLEU_SEED": "0042"}),
    "paired-bs-copy-of-baseline-text": _copy_of_baseline("-pbs", "-pbsn", "300", "-m", "bleu", "ter", "-f", "text"),
    "paired-ar-copy-of-baseline-json": _copy_of_baseline("-par", "-parn", "500", "-f", "json"),
    "ci-chrf++-w3-text": plain(LIV_REF, "-i", S0, "-ci", "-cin", "300", "-m", "chrf", "--chrf-word-order", "2",
                               "-w", "3", "-f", "text"),
    # two references: TER's average reference lengths are fractions, held as float32 (bootstrap) or float64 (ar)
    "ci-2refs-ter-chrf-text": plain(*DEEN_REFS, "-i", DEEN_SYS, "-ci", "-cin", "200", "-m", "ter", "chrf", "-f",
                                    "text"),
    "paired-ar-2refs-ter-bleu-text": head(600, *DEEN_REFS, "-i", DEEN_SYS, "wmt22/de-en/sys.Online-B.txt", "-par",
                                          "-parn", "300", "-m", "ter", "bleu", "-f", "text"),
    # the default size of the randomization test (10,000 trials)
    "paired-ar-default-text": plain(LIV_REF, "-i", S0, S1, "--paired-ar", "-f", "text"),
}

#: the cases run again with beambleu's own draws (`--resampling counter`), their resampled numbers masked; each
#: has a number the counter draws change (an interval, a p-value above the smallest, or a tie: the copy's p = 1)
COUNTER = {name: RESAMPLED[name] for name in ("ci-text", "ci-cin200-json", "paired-bs-pbsn200-text",
                                              "paired-bs-pbsn200-json", "paired-ar-latex", "paired-ar-stdin-text",
                                              "paired-ar-copy-of-baseline-json", "paired-bs-ter-bleu-text")}

# ---------------------------------------------------------------- errors


def _nr2_one_field(ctx):
    """-nr 2 with line 5 holding one reference only (sacrebleu exits 17)."""
    lines = tab_joined(*DEEN_REFS)(ctx)
    lines[4] = lines[4].split(b"\t")[0]
    return Run([ctx.write("refs.tsv", lines), "-nr", "2", "-i", ctx.path(DEEN_SYS)])


def _stdin_ragged(ctx):
    """Two systems on standard input, but line 11 has one field (sacrebleu exits 17)."""
    lines = tab_joined(S0, S1)(ctx)
    lines[10] = lines[10].split(b"\t")[0]
    return Run([ctx.path(LIV_REF)], stdin=b"".join(line + b"\n" for line in lines))


def _latin1_without_encoding(ctx):
    """Latin-1 files read as UTF-8 (sacrebleu fails with UnicodeDecodeError)."""
    run = _latin1_german()(ctx)
    return Run([arg for arg in run.args if arg not in ("-e", "latin-1")])


ERRORS = {
    "paired-bs-one-system": plain(LIV_REF, "-i", S0, "--paired-bs"),
    "paired-ar-one-system": plain(LIV_REF, "-i", S0, "--paired-ar"),
    "nr2-line-with-one-field": _nr2_one_field,
    "nr2-with-two-ref-files": plain(*DEEN_REFS, "-nr", "2", "-i", DEEN_SYS),
    "sl-two-metrics": plain(LIV_REF, "-i", S0, "-sl", "-m", "bleu", "chrf"),
    "sl-two-systems": plain(LIV_REF, "-i", S0, S1, "-sl"),
    "sl-with-ci": plain(LIV_REF, "-i", S0, "-sl", "-ci"),
    "ci-two-systems": plain(LIV_REF, "-i", S0, S1, "-ci"),
    "ci-two-systems-paired": plain(LIV_REF, "-i", S0, S1, "-ci", "-pbs"),
    "utf16-without-bom": plain(LIV_REF, "-i", S0, "-e", "utf-16"),
    "same-system-twice": plain(LIV_REF, "-i", S0, S1, S0),
    "line-count-mismatch": plain(LIV_REF, "-i", DEEN_SYS),
    "no-references": plain("-i", S0),
    "stdin-ragged-fields": _stdin_ragged,
    "latin1-read-as-utf8": _latin1_without_encoding,
    "missing-system-file": lambda ctx: Run([ctx.path(LIV_REF), "-i", str(ctx.tmp / "no-such-system.txt")]),
}


def _run(build, corpora: Path, tmp_path: Path, ours_only=()):
    run = build(Context(corpora, tmp_path))
    return run_both(run.args, stdin=run.stdin, env=run.env, cwd=corpora, ours_only=ours_only)


def _assert_same_output(ours, theirs, resampled: bool):
    assert theirs.returncode == 0, f"sacrebleu failed, the case is wrong: {theirs.stderr.decode()[-600:]}"
    assert ours.returncode == 0, f"beambleu exit {ours.returncode}: {ours.stderr.decode(errors='replace')[-600:]}"
    mine = comparable(ours.stdout, BEAMBLEU_VERSION, resampled)
    reference = comparable(theirs.stdout, SACREBLEU_VERSION, resampled)
    same = mine == reference  # not compared inside `assert`: pytest's diff of long outputs is slow and unreadable
    assert same, first_difference(mine, reference)


@pytest.mark.corpora
@pytest.mark.parametrize("build", SAME.values(), ids=SAME.keys())
def test_stdout_equals_sacrebleu(build, corpora, tmp_path):
    ours, theirs = _run(build, corpora, tmp_path)
    _assert_same_output(ours, theirs, resampled=False)


@pytest.mark.corpora
@pytest.mark.parametrize("build", RESAMPLED.values(), ids=RESAMPLED.keys())
def test_resampled_stdout_equals_sacrebleu(build, corpora, tmp_path):
    ours, theirs = _run(build, corpora, tmp_path)
    _assert_same_output(ours, theirs, resampled=False)


@pytest.mark.corpora
@pytest.mark.parametrize("name", COUNTER.keys())
def test_counter_resampling_stdout_equals_sacrebleu_but_resampled_numbers(name, corpora, tmp_path):
    ours, theirs = _run(COUNTER[name], corpora, tmp_path, ours_only=("--resampling", "counter"))
    _assert_same_output(ours, theirs, resampled=True)
    if name in ("paired-ar-latex", "paired-ar-stdin-text"):
        # an approximate randomization p-value is (c + 1) / (T + 1) for a count c of trials: the two generators
        # give the same count now and then, and these two cases' systems get the same p-values from both (NiuTrans
        # 1/501, the least there is; Liv4ever 318/501), so nothing in their output tells the draws apart
        return
    unmasked = comparable(ours.stdout, BEAMBLEU_VERSION, False)
    assert unmasked != comparable(theirs.stdout, SACREBLEU_VERSION, False), "counter draws gave sacrebleu's numbers"


@pytest.mark.corpora
@pytest.mark.parametrize("build", ERRORS.values(), ids=ERRORS.keys())
def test_error_exits_nonzero_with_one_line(build, corpora, tmp_path):
    ours, theirs = _run(build, corpora, tmp_path)
    assert theirs.returncode != 0, "sacrebleu accepted the case: it is not an error case"
    assert ours.returncode != 0, f"beambleu exit 0, stdout: {ours.stdout.decode(errors='replace')[:300]!r}"
    lines = ours.stderr.decode(errors="replace").splitlines()
    assert len(lines) == 1 and lines[0].strip(), f"beambleu stderr is not one line: {lines[:5]!r}"


@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_version_flag(flag):
    ours, theirs = run_both([flag])
    assert theirs.returncode == 0 and len(theirs.stdout.decode().splitlines()) == 1
    assert ours.returncode == 0, ours.stderr.decode(errors="replace")[-300:]
    assert len(ours.stdout.decode().splitlines()) == 1, ours.stdout


# ---------------------------------------------------------------- the normalisers themselves

PAIRED_TABLE = """\
╒════════════════════════════╤═════════════════════╕
│                     System │  BLEU (μ ± 95% CI)  │
╞════════════════════════════╪═════════════════════╡
│ Baseline: sys.TartuNLP.txt │  15.0 (15.0 ± 1.7)  │
├────────────────────────────┼─────────────────────┤
│           sys.NiuTrans.txt │  12.3 (12.3 ± 1.7)  │
│                            │    (p = 0.0010)*    │
╘════════════════════════════╧═════════════════════╛
 - BLEU       nrefs:1|bs:1000|seed:12345|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0"""

# the same table as another generator could draw it: other means, half-widths and p-values, a wider column
PAIRED_TABLE_OTHER_DRAWS = """\
╒════════════════════════════╤══════════════════════╕
│                     System │  BLEU (μ ± 95% CI)   │
╞════════════════════════════╪══════════════════════╡
│ Baseline: sys.TartuNLP.txt │  15.0 (14.9 ± 10.7)  │
├────────────────────────────┼──────────────────────┤
│           sys.NiuTrans.txt │  12.3 (12.4 ± 1.6)   │
│                            │     (p = 0.0612)     │
╘════════════════════════════╧══════════════════════╛
 - BLEU       nrefs:1|bs:1000|seed:12345|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0"""


def test_mask_resampled_masks_only_resampled_numbers():
    line = ("BLEU|nrefs:1|bs:200|seed:12345|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0 = 14.986 "
            "(μ = 14.976 ± 1.622) 45.9/19.9/10.1/5.8 (BP = 0.986 ratio = 0.986 hyp_len = 9119 ref_len = 9251)")
    assert mask_resampled(line) == line.replace("(μ = 14.976 ± 1.622)", "(μ = <MEAN> ± <CI>)")
    json_text = ('{\n "score": 15.0,\n "confidence_mean": 15.0,\n "confidence_var": 1.6,\n'
                 ' "confidence": "μ = 15.0 ± 1.6",\n "p_value": null,\n "mean": 1.2e-05,\n "ci": 0.5,\n'
                 ' "bp": 0.986\n}')
    assert mask_resampled(json_text) == ('{\n "score": 15.0,\n "confidence_mean": <R>,\n "confidence_var": <R>,\n'
                                         ' "confidence": "μ = <MEAN> ± <CI>",\n "p_value": null,\n "mean": <R>,\n'
                                         ' "ci": <R>,\n "bp": 0.986\n}')
    assert mask_resampled("(p = 0.0010)* and (p = 0.2318)") == "(p = <P>) and (p = <P>)"


def test_paired_table_normalisation_keeps_scores_layout_and_system_column():
    def norm(text):
        return unpad_metric_columns(mask_resampled(text))

    assert norm(PAIRED_TABLE) == norm(PAIRED_TABLE_OTHER_DRAWS)
    assert norm(PAIRED_TABLE).splitlines()[3] == "│ Baseline: sys.TartuNLP.txt │15.0 (<MEAN> ± <CI>)│"
    assert norm(PAIRED_TABLE).splitlines()[0] == "╒════════════════════════════╤═╕"
    for changed in (PAIRED_TABLE.replace("15.0 (15.0", "15.1 (15.0"),  # a point score
                    PAIRED_TABLE.replace("│           sys.Niu", "│          sys.Niu"),  # the System column
                    PAIRED_TABLE.replace("eff:no", "eff:yes"),  # the signature
                    PAIRED_TABLE.replace("├────", "╞════"),  # a rule
                    PAIRED_TABLE.replace("(μ ± 95% CI)", "(μ ± 90% CI)")):  # a header
        assert norm(changed) != norm(PAIRED_TABLE)


def test_version_normalisation_is_per_program():
    assert normalise_version("a|version:2.6.0 = 1", "2.6.0") == "a|version:<VERSION> = 1"
    assert normalise_version('x|v:2.6.0",\n "version": "2.6.0"', "2.6.0") == 'x|v:<VERSION>",\n "version": "<VERSION>"'
    assert normalise_version("a|version:2.6.0", BEAMBLEU_VERSION) == "a|version:2.6.0"
    assert normalise_version("a|version:2.6.01", "2.6.0") == "a|version:2.6.01"
    assert normalise_version(f"a|v:{BEAMBLEU_VERSION}", BEAMBLEU_VERSION) == "a|v:<VERSION>"

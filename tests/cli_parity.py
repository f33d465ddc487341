"""Helpers for tests/beambleu/commands/test_cli_sacrebleu.py: run `beambleu score ARGS` and `sacrebleu ARGS` side by side and
normalise their standard output so that only what must legitimately differ is hidden.

Two things may differ between the programs and nothing else:

- the version field of every signature (`version:2.6.0`, short form `v:2.6.0`, and JSON's `"version": "2.6.0"`)
  names the program that printed it (`beambleu-<version>` for beambleu);
- with `--resampling counter` (beambleu's own draws; the default, `--resampling sacrebleu`, draws sacrebleu's numbers
  and is compared unmasked), the numbers drawn by resampling (bootstrap means, 95% half-widths, p-values and their
  `*` marks). Only these are masked, by `mask_resampled`, and only in the cases that draw beambleu's resamples.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import version

SACREBLEU_VERSION = "2.6.0"
BEAMBLEU_VERSION = f"beambleu-{version('beambleu')}"

# environment variables that change sacrebleu's output; a case sets them explicitly or not at all
_OUTPUT_ENV = ("SACREBLEU_FORMAT", "SACREBLEU_SEED", "NO_COLOR", "BEAMBLEU_DEBUG")


def run_both(args, *, stdin: bytes | None = None, env: dict | None = None, cwd=None, ours_only=()):
    """(beambleu, sacrebleu) CompletedProcess of the same arguments, run at the same time (two cores);
    `ours_only`: arguments given to beambleu only (`--resampling counter`)."""
    full_env = {k: v for k, v in os.environ.items() if k not in _OUTPUT_ENV}
    full_env.update(env or {})
    commands = ([sys.executable, "-m", "beambleu", "score", *args, *ours_only],
                [sys.executable, "-m", "sacrebleu", *args])
    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = [pool.submit(subprocess.run, cmd, input=stdin if stdin is not None else b"", capture_output=True,
                            env=full_env, cwd=cwd, timeout=600) for cmd in commands]
        return runs[0].result(), runs[1].result()


def normalise_version(text: str, program_version: str) -> str:
    """`text` with the signature's version value `program_version` (long, short and JSON forms) replaced by
    `<VERSION>`; any other version string is left as it is, so that it shows up as a difference."""
    v = re.escape(program_version)
    text = re.sub(rf"(\|(?:version|v):){v}(?![\w.-])", r"\1<VERSION>", text)
    return re.sub(rf'("version": "){v}"', r'\1<VERSION>"', text)


_NUM = r"\d+(?:\.\d+)?"
_JSON_NUM = r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
# `μ = 15.0 ± 1.7` (single system, text and JSON "confidence"); `(15.0 ± 1.7)` (paired bootstrap table cell)
_MEAN_CI = re.compile(rf"μ = {_NUM} ± {_NUM}|\({_NUM} ± {_NUM}\)")
# `(p = 0.0010)*` / `(p = 0.2318)` in paired-test tables, the `*` marking p <= 0.05
_P_VALUE = re.compile(rf"\(p = {_NUM}\)\*?")
# JSON numbers that come from resampling; `null` is not masked
_JSON_RESAMPLED = re.compile(rf'"(confidence_mean|confidence_var|mean|ci|p_value)": {_JSON_NUM}')


def mask_resampled(text: str) -> str:
    """`text` with the numbers drawn by resampling replaced by fixed tokens: bootstrap means and half-widths,
    p-values and their significance marks. Point scores, signatures and everything else are kept."""
    text = _MEAN_CI.sub(lambda m: "μ = <MEAN> ± <CI>" if m.group().startswith("μ") else "(<MEAN> ± <CI>)", text)
    text = _P_VALUE.sub("(p = <P>)", text)
    return _JSON_RESAMPLED.sub(r'"\1": <R>', text)


_GRID_BORDER = re.compile(r"^[╒╞├╘]")
_GRID_JUNCTION = re.compile(r"([╤╪┼╧])")


def unpad_metric_columns(text: str) -> str:
    """`text` with the padding of a multi-system table's metric columns removed (fancy_grid and LaTeX tables),
    because their width follows the widest cell and so the masked resampled numbers. The first (System) column,
    whose width does not depend on them, is kept byte for byte, as is every line that is not a table row."""
    out = []
    for line in text.split("\n"):
        if line.startswith("│"):
            first, *rest = line[1:].split("│")
            line = "│" + "│".join([first] + [cell.strip() for cell in rest])
        elif _GRID_BORDER.match(line):
            first, *rest = _GRID_JUNCTION.split(line)
            line = first + "".join(re.sub(r"([═─])\1+", r"\1", part) for part in rest)
        elif "&" in line and line.endswith("\\\\"):
            first, *rest = line[:-2].split("&")
            line = "&".join([first] + [cell.strip() for cell in rest]) + "\\\\"
        out.append(line)
    return "\n".join(out)


def comparable(stdout: bytes, program_version: str, resampled: bool) -> str:
    """Standard output decoded (strict UTF-8), with the version normalised and, if `resampled`, the resampled
    numbers and the table padding that follows them masked."""
    text = normalise_version(stdout.decode("utf-8"), program_version)
    if resampled:
        text = unpad_metric_columns(mask_resampled(text))
    return text


def first_difference(ours: str, theirs: str, width: int = 240) -> str:
    """A short report of the first line where the two outputs differ."""
    a, b = ours.split("\n"), theirs.split("\n")
    for i in range(max(len(a), len(b))):
        line_a = a[i] if i < len(a) else "<no line>"
        line_b = b[i] if i < len(b) else "<no line>"
        if line_a != line_b:
            return (f"first difference at stdout line {i + 1} of {len(a)} (beambleu) / {len(b)} (sacrebleu):\n"
                    f"  beambleu : {line_a[:width]!r}\n  sacrebleu: {line_b[:width]!r}")
    return "no line differs"

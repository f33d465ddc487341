"""Dataflow Flex Template entry point: the launcher runs this file with the template's parameters.

It submits the beambleu job to Dataflow and returns without waiting for it to finish (the
launcher VM would otherwise bill for the whole run). Template parameters are plain strings, so:

- flags are ``true`` or ``false`` (``--lowercase=true``), not bare switches;
- ``input``, ``group_by`` and ``keep`` take several values separated by ``;``
  (``--group_by=system,langpair;langpair`` means two grouping sets);
- every other ``--name=value`` is passed on to ``beambleu run`` as it is, Beam's options included.
"""

from __future__ import annotations

import sys
from typing import List

from beambleu.commands.metric_options import template_switches

#: template parameters that are on/off switches of `beambleu run`: its own, and every metric's switch as the
#: metric registry declares it (BLEU's lowercase, ..., and those of installed metric plugins)
FLAGS = ("overwrite", "carry_all", "confidence", "paired_bs", "paired_ar", *template_switches())
#: template parameters that may carry several values separated by ";"
REPEATABLE = ("input", "group_by", "keep")


class ParameterError(ValueError):
    pass


def run_argv(params: List[str]) -> List[str]:
    """The `beambleu run` arguments for the launcher's ``--name=value`` parameters."""
    argv = ["run", "--detach", "--progress=off"]
    runner_given = False
    for param in params:
        if not param.startswith("--") or "=" not in param:
            argv.append(param)
            continue
        key, value = param[2:].split("=", 1)
        name = key.replace("-", "_")
        if name == "runner":
            runner_given = True
        if name in FLAGS:
            if value.lower() == "true":
                argv.append(f"--{name}")
            elif value.lower() != "false":
                raise ParameterError(f"template parameter {name} must be true or false, got {value!r}")
        elif name in REPEATABLE:
            parts = [v.strip() for v in value.split(";")]
            if not value.strip() or any(not v for v in parts):
                raise ParameterError(f"template parameter {name}: empty value in {value!r}")
            argv.extend(f"--{name}={v}" for v in parts)
        else:
            argv.append(param)
    if not runner_given:
        argv.append("--runner=DataflowRunner")
    return argv


def main(params: List[str]) -> int:
    from beambleu.cli import main as beambleu

    try:
        argv = run_argv(params)
    except ParameterError as exc:
        print(f"beambleu: error: {exc}", file=sys.stderr)
        return 2
    return beambleu(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

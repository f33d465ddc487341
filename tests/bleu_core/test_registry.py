"""The metric registry (bleu_core/registry.py) and what is derived from the declarations: the
built-ins' ``--help`` sections stay byte for byte what they were when written by hand (tests/golden,
taken from main before the registry; TER's section since TER is a built-in), the declarations
agree with the constructors, and a plugin's declaration is held to its rules."""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from bleu_core import compat, registry
from bleu_core.metrics.chrf import Chrf
from bleu_core.metrics.bleu import Bleu
from bleu_core.registry import Option
from bleu_core.metrics.ter import Ter

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
TITLES = ("BLEU options", "chrF options", "TER options")


def metric_sections(text: str) -> str:
    """The ``--metrics`` entry and the BLEU, chrF and TER argument groups of a ``--help`` text."""
    out = []
    for block in text.split("\n\n"):
        lines = block.split("\n")
        if lines[0].startswith(TITLES):
            out.append(block)
        elif lines[0] == "options:":
            keep, on = [], False
            for line in lines:
                if re.match(r"  -", line):
                    on = line.startswith(("  --metrics", "  -m"))
                if on:
                    keep.append(line)
            out.append("\n".join(keep))
    return "\n\n".join(out) + "\n"


@pytest.mark.parametrize("command", ["score", "run"])
def test_help_of_the_builtin_metric_options_is_unchanged(command):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["COLUMNS"] = "100"
    proc = subprocess.run([sys.executable, "-m", "beambleu.cli", command, "--help"], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    expected = (GOLDEN / f"{command}_help_metric_options.txt").read_text(encoding="utf-8")
    assert metric_sections(proc.stdout) == expected
    titles = [line for line in proc.stdout.splitlines() if line.startswith(TITLES)]
    assert len(titles) == 3  # BLEU, chrF, TER: on score and on run


def test_builtins_are_registered_in_order():
    assert registry.builtin_metrics() == {"bleu": Bleu, "chrf": Chrf, "ter": Ter}
    assert registry.ids()[:3] == ("bleu", "chrf", "ter") and registry.get("ter") is Ter
    with pytest.raises(registry.UnknownMetric, match=r"unknown metric 'comet' \(choose from bleu, chrf, ter"):
        registry.get("comet")


@pytest.mark.parametrize("cls", [Bleu, Chrf])
def test_declarations_agree_with_the_constructors(cls):
    params = inspect.signature(cls).parameters
    for opt in cls.options:
        if opt.keyword:
            assert opt.name in params, opt.name
            if opt.default is not None:  # None: chosen from the context (BLEU's tokenizer)
                assert params[opt.name].default == opt.default, opt.name
        assert opt.flag.startswith("--") and opt.dest.isidentifier()
        if opt.switch:
            assert opt.default is False
    assert [opt.name for opt in Bleu.options if not opt.keyword] == ["force"]


def test_compat_attributes_are_the_declared_options():
    for klass, metric in ((compat.BLEU, Bleu), (compat.CHRF, Chrf)):
        attrs = [k for k, v in vars(klass).items() if isinstance(v, compat._Option)]
        assert attrs == [o.name for o in metric.options if o.keyword and o.compat]
    assert [k for k, v in vars(compat.BLEU).items() if isinstance(v, compat._Option)] == [
        "lowercase", "smooth_method", "smooth_value", "max_ngram_order", "effective_order"]


def test_bleu_from_options_follows_the_command_line():
    base = {o.name: o.default for o in Bleu.options if o.keyword}
    assert Bleu.from_options(base, registry.CommandLine()).tokenize == "13a"
    assert Bleu.from_options(base, registry.CommandLine(target_language="zh")).tokenize == "zh"
    given = Bleu.from_options({**base, "tokenize": "intl"}, registry.CommandLine(target_language="zh"))
    assert given.tokenize == "intl"
    assert Bleu.from_options(base, registry.CommandLine(sentence_level=True)).effective_order is True
    spm = Bleu.from_options({**base, "tokenize": "flores200", "spm_model": "m.model"}, registry.CommandLine())
    assert spm.spm_model == os.path.abspath("m.model") and spm.named_files() == [spm.spm_model]
    url = Bleu.from_options({**base, "tokenize": "flores200", "spm_model": "gs://b/m"}, registry.CommandLine())
    assert url.spm_model == "gs://b/m"


def test_template_parameter_defaults():
    assert Option("x", bool, False, "--m-x", help="h").template_parameter() == {
        "name": "m_x", "label": "M x", "helpText": "h", "isOptional": True, "paramType": "TEXT",
        "regexes": ["^(true|false)$"]}
    assert Option("n", int, 3, "--m-n", help="n (default: %(default)s)").template_parameter()["helpText"] == \
        "n (default: 3)"
    assert Option("n", int, 3, "--m-n").template_parameter()["regexes"] == ["^[0-9]+$"]
    assert Option("v", float, 0.5, "--m-v").template_parameter()["regexes"] == ["^[0-9]+(\\.[0-9]+)?$"]
    assert Option("c", str, "a", "--m-c", choices=["a-b", "c.d"]).template_parameter()["regexes"] == \
        ["^(a-b|c\\.d)$"]
    assert "regexes" not in Option("s", str, None, "--m-s").template_parameter()


def _plugin(id_, *options):
    @dataclass(frozen=True)
    class Plugin(Chrf):
        pass

    Plugin.id = id_
    Plugin.options = options
    return Plugin


@pytest.mark.parametrize("cls,message", [
    (_plugin("Bad"), "is not a metric id"),
    (_plugin("m", "--m-x"), "not a bleu_core.registry.Option"),
    (_plugin("m", Option("beta", int, 2, "--m-beta"), Option("beta", int, 2, "--m-b")), "declared twice"),
    (_plugin("m", Option("beta", int, 2, "--beta")), "is not of the form --m-NAME"),
    (_plugin("m", Option("beta", int, 2, "--m-beta", "-b")), "short forms are sacrebleu's"),
    (_plugin("m", Option("lowercase", bool, True, "--m-lowercase")), "its default must be False"),
    (_plugin("m", Option("nope", int, 2, "--m-nope")), "'nope' is not a keyword of Plugin()"),
])
def test_check_declaration_refuses(cls, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        registry.check_declaration(cls)


def test_check_declaration_accepts_a_plugin_of_its_rules():
    registry.check_declaration(_plugin("my_metric", Option("beta", int, 2, "--my-metric-beta"),
                                       Option("lowercase", bool, False, "--my-metric-lowercase")))


def test_check_kernels_runs_every_builtin_metric_kernel():
    # what the deploy images run after building: one pair through each built-in's compiled batch path
    assert registry.check_kernels() is None

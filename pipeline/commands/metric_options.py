"""The metrics' command-line options, with sacrebleu's flag names and defaults (shared by
``beambleu score`` and ``beambleu run``), made from :mod:`bleu_core.registry`.

``--metrics`` picks metrics by id: the built-ins, then the installed plugins (a plugin that
cannot be used is one warning line, and its id is then unknown). Each metric's declared options
(:attr:`bleu_core.protocol.Metric.options`) are one argument group, and the metric is made from
their parsed values by its class's ``from_options``. Options are validated once, by the metric's
constructor: a value it refuses is a :class:`~beambleu.errors.UsageError`. Metrics are computed
and reported in sacrebleu's order (sorted by name), whatever the order on the command line.
"""

from __future__ import annotations

import argparse
import contextlib
import sys

from bleu_core import registry
from bleu_core.protocol import MetricSet
from bleu_core.tokenizers.tokenizer_spm import ModelError

from ..errors import UsageError
from .testsets import trg_lang

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Callable

__all__ = ["add_metric_arguments", "builtins_only", "make_metric", "metrics_from_args", "template_parameters",
           "template_switches"]

#: the warnings printed already (Beam builds the run options' parser more than once)
_warned = set()


def _warn(line: str) -> None:
    """A warning line, once per process."""
    if line not in _warned:
        _warned.add(line)
        print(f"beambleu: warning: {line}", file=sys.stderr)


def _flags(opt, run: bool):
    """The option strings of ``opt`` on this command (``run`` also answers to ``--a_b``)."""
    flags = [opt.flag] + ([opt.short] if opt.short else [])
    if run and "-" in opt.flag[2:]:
        flags.append("--" + opt.dest)
    return flags


#: set while a command builds its command line without plugins (:func:`builtins_only`)
_builtins_only = False


@contextlib.contextmanager
def builtins_only():
    """While in force, :func:`add_metric_arguments` adds the built-in metrics only: a command
    builds its own parser so, to learn every option string that is beambleu's (or Beam's)."""
    global _builtins_only
    _builtins_only = True
    try:
        yield
    finally:
        _builtins_only = False


def _usable(run: bool, taken: Callable[[], frozenset]):
    """The registry's metric classes; a plugin that would take a flag of beambleu (or of Beam's
    options, for ``run``: every option string ``taken()`` gives) is left out with a warning line."""
    classes = []
    for metric_id, cls in registry.metrics().items():
        if metric_id in registry.builtin_metrics():
            classes.append(cls)
            continue
        flags = taken()
        clash = [f for opt in cls.options if opt.run or not run for f in _flags(opt, run) if f in flags]
        if clash:
            _warn(f"metric plugin {metric_id!r} is skipped: its flag {clash[0]} is already an option of beambleu")
            continue
        classes.append(cls)
    return classes


def _add_options(p, cls, run: bool) -> None:
    """``cls``'s argument group: one flag per declared option (``score``-only ones left out of ``run``)."""
    g = p.add_argument_group(cls.option_group or f"{cls.id} options")
    for opt in cls.options:
        if run and not opt.run:
            continue
        flags = [opt.flag] + ([opt.short] if opt.short else [])
        if opt.switch:
            g.add_argument(*flags, action="store_true", help=opt.help_for(run))
            continue
        kwargs = {} if opt.type is str else {"type": opt.type}
        g.add_argument(*flags, choices=opt.choices, default=opt.default, metavar=opt.metavar, help=opt.help_for(run),
                       **kwargs)


def _metric_list(ids):
    """The ``type`` of ``run --metrics``: comma-separated ids among ``ids``."""

    def parse(text: str):
        found = [t.strip().lower() for t in text.split(",")]
        bad = [i for i in found if i not in ids]
        if bad or not found:
            raise argparse.ArgumentTypeError(f"unknown metric {bad[0] if bad else text!r} (choose from "
                                             f"{', '.join(ids)}, comma-separated)")
        return found

    return parse


class _Joined(argparse.Action):
    """``run -m bleu chrf,ter``: the ids of every value, in order, once each."""

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, list(dict.fromkeys(i for ids in values for i in ids)))


def add_metric_arguments(p, run: bool, taken: Callable[[], frozenset]) -> None:
    """``--metrics`` and every metric's options (a metric's flags are accepted, and ignored as
    sacrebleu ignores them, when the metric is not selected). ``taken()``: every option string of
    the command with the built-in metrics only (the command builds it under :func:`builtins_only`),
    which no plugin may take. Under :func:`builtins_only`, the built-ins only, and the installed
    distributions' entry points are not read."""
    if _builtins_only:
        classes = list(registry.builtin_metrics().values())
    else:
        for line in registry.skipped():
            _warn(line)
        classes = _usable(run, taken)
    ids = tuple(cls.id for cls in classes)
    if run:
        p.add_argument("--metrics", "-m", nargs="+", type=_metric_list(ids), action=_Joined, default=["bleu"],
                       metavar="METRIC",
                       help=f"metrics computed in the same pass: {', '.join(ids)}, as in score (-m bleu chrf) or "
                            "comma-separated (--metrics bleu,chrf) (default: bleu)")
    else:
        p.add_argument("--metrics", "-m", nargs="+", choices=ids, default=["bleu"], metavar="METRIC",
                       help=f"metrics to compute: {', '.join(ids)} (default: bleu)")
    for cls in classes:
        _add_options(p, cls, run)


class _CommandLine(registry.CommandLine):
    """The context of parsed options: ``-l``'s target language is read only when a metric asks
    (a bad ``-l`` is then a usage error, as before any metric was made)."""

    def __init__(self, args):
        super().__init__(sentence_level=bool(getattr(args, "sentence_level", False)))
        self._args = args

    @property
    def target_language(self):
        return trg_lang(self._args) if getattr(self._args, "langpair", None) else None


def make_metric(metric_id: str, args):
    """The metric ``metric_id`` of parsed options (its class's ``from_options``; an option
    ``run`` lacks takes its declared default)."""
    cls = registry.get(metric_id)
    options = {opt.name: getattr(args, opt.dest, opt.default) for opt in cls.options if opt.keyword}
    return cls.from_options(options, _CommandLine(args))


def metrics_from_args(args, before_load=None):
    """The :class:`~bleu_core.protocol.MetricSet` the options ask for, in sacrebleu's order, each
    metric made and loaded (a missing MeCab extra fails here, before any input is read). A
    file a metric finds by itself (a SentencePiece model, found or downloaded) is fixed in it
    here (:meth:`~bleu_core.protocol.Metric.loaded`), so that every worker reads the file the
    driver found; a model that cannot be had is ModelError.

    ``before_load(paths)``, when given, is called once every metric is made (so bad options are
    usage errors first) and before any is loaded, with the files the metrics' options name
    (:meth:`~bleu_core.protocol.Metric.named_files`: ``run`` checks that an object store holding
    one answers)."""
    ids = sorted(set(args.metrics), key=str.upper)
    made = []
    for i in ids:
        try:
            made.append(make_metric(i, args))
        except (registry.UnknownMetric, ValueError, TypeError, RuntimeError) as exc:
            raise UsageError(str(exc)) from None
    if before_load is not None:
        before_load([path for m in made for path in m.named_files()])
    metrics = []
    for metric in made:
        try:
            metric = metric.loaded()
        except ModelError:
            raise
        except (ValueError, TypeError, RuntimeError) as exc:
            raise UsageError(str(exc)) from None
        metrics.append(metric)
    return MetricSet(metrics)


def template_parameters() -> list:
    """The Dataflow Flex Template parameters of the metrics (``deploy/dataflow/metadata.json``):
    the default metric's (BLEU's) options, ``metrics``, then every other metric's options, each
    ``beambleu run`` option of a metric one parameter (``--a-b`` is parameter ``a_b``)."""
    classes = list(registry.metrics().values())
    ids = [cls.id for cls in classes]
    choice = "(" + "|".join(ids) + ")"
    metrics = {"name": "metrics", "label": "Metrics",
               "helpText": f"Metrics computed in the same pass, comma-separated: {', '.join(ids)} (default: bleu).",
               "isOptional": True, "paramType": "TEXT", "regexes": [f"^{choice}(,{choice})*$"]}
    params = [[opt.template_parameter() for opt in cls.options if opt.run] for cls in classes]
    return params[0] + [metrics] + [p for group in params[1:] for p in group]


def template_switches() -> tuple:
    """The metric parameters that are on/off switches of ``beambleu run`` (``true``/``false`` in a template)."""
    return tuple(opt.dest for cls in registry.metrics().values() for opt in cls.options if opt.run and opt.switch)

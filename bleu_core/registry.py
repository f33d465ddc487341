"""The metrics beambleu knows, and the options each one declares.

A metric class (a :class:`~bleu_core.protocol.Metric`) declares its options once, as
:attr:`~bleu_core.protocol.Metric.options`, a tuple of :class:`Option`: the constructor keyword,
its type and default, sacrebleu's long flag and short form, the help text, and what the Dataflow
template shows. ``beambleu score`` and ``beambleu run`` derive their flags from it, and
``bleu_core.compat`` its sacrebleu-style classes; a metric made from the command line goes
through :meth:`~bleu_core.protocol.Metric.from_options`.

The registry maps a metric id (``--metrics``/``-m``) to its class: the built-ins (``bleu``:
:class:`~bleu_core.metrics.bleu.Bleu`, ``chrf``: :class:`~bleu_core.metrics.chrf.Chrf`, ``ter``:
:class:`~bleu_core.metrics.ter.Ter`), then the metrics of
installed distributions that declare an entry point in the group ``beambleu.metrics``
(``lenratio = beambleu_lenratio:LenRatio``: the name is the metric's id, the value its class).

A plugin that cannot be used is left out, never half used: one that fails to import, is not a
``Metric`` subclass, has an id other than its entry point's name, an id of a built-in or of an
earlier plugin (plugins are read in the order of their ids, then distribution names), or a
declaration that breaks the rules of :func:`check_declaration`. :func:`skipped` gives one line
per plugin left out, naming its distribution and why (the command line prints them as warnings);
asking for its id is then an unknown metric.
"""

from __future__ import annotations

import functools
import importlib
import os
import re
import sys

from .metrics.bleu import Bleu
from .metrics.chrf import Chrf
from .metrics.ter import Ter
from .protocol import CommandLine, Metric, Option

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Dict, List, Tuple

# Option and CommandLine are the protocol's, named here too (a plugin imports Option from here)
__all__ = ["BUILTINS", "ENTRY_POINT_GROUP", "ID", "CommandLine", "Option", "UnknownMetric", "builtin_metrics",
           "check_declaration", "check_kernels", "get", "ids", "metrics", "refresh", "skipped"]

#: the entry-point group of metric plugins
ENTRY_POINT_GROUP = "beambleu.metrics"

#: what a metric id looks like (``--metrics bleu,chrf`` splits on commas and lowercases)
ID = re.compile(r"[a-z][a-z0-9_]*")


def check_declaration(cls) -> None:
    """ValueError (one line) unless ``cls`` declares its options as a metric plugin must: an id
    that :data:`ID` matches, ``Option`` objects with distinct names, long flags ``--<id>-...``
    (so that no plugin takes a flag of beambleu or of another metric) and no short form
    (those are sacrebleu's), switches off by default, and every keyword option a parameter of
    the constructor."""
    if not isinstance(cls.id, str) or not ID.fullmatch(cls.id):
        raise ValueError(f"id {cls.id!r} is not a metric id (lowercase letters, digits and _, a letter first)")
    import inspect  # (plugins only: `beambleu score`'s start-up does without it)

    try:
        params = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        params = {}
    names = set()
    for opt in cls.options:
        if not isinstance(opt, Option):
            raise ValueError(f"options holds {type(opt).__name__} {opt!r}, not a bleu_core.registry.Option")
        if opt.name in names:
            raise ValueError(f"option {opt.name!r} is declared twice")
        names.add(opt.name)
        prefix = f"--{cls.id.replace('_', '-')}-"
        if not re.fullmatch(re.escape(prefix) + r"[a-z0-9]+(-[a-z0-9]+)*", opt.flag):
            raise ValueError(f"option {opt.name!r}: flag {opt.flag!r} is not of the form {prefix}NAME")
        if opt.short is not None:
            raise ValueError(f"option {opt.name!r}: short forms are sacrebleu's; a plugin declares long flags only")
        if opt.switch and opt.default is not False:
            raise ValueError(f"option {opt.name!r}: a bool option is a switch, its default must be False")
        if opt.keyword and opt.name not in params:
            raise ValueError(f"option {opt.name!r} is not a keyword of {cls.__name__}()")


#: the built-in metrics, one line each (a new built-in: its folder under ``bleu_core/metrics/`` and a line here)
BUILTINS = (
    Bleu,
    Chrf,
    Ter,
)


def builtin_metrics() -> Dict[str, type]:
    """The built-in metrics: id -> class."""
    return {cls.id: cls for cls in BUILTINS}


def check_kernels() -> None:
    """Every built-in metric counts one pair with its batch path (its compiled kernel), and the
    kernels no metric owns (resampling, SentencePiece's ids) import; an exception if one is
    missing or broken. The deploy images run it after building (a new built-in is covered)."""
    for cls in builtin_metrics().values():
        cls().batch_stats(["a b"], [["a b"]])
    for name in ("bleu_core.resampling._resample", "bleu_core.tokenizers._spm_ids"):
        importlib.import_module(name)


def _describe(ep) -> str:
    dist = getattr(ep, "dist", None)
    where = f"distribution {dist.name} {dist.version}" if dist is not None else "an unknown distribution"
    return f"metric plugin {ep.name!r} ({ep.value}, {where})"


def _may_declare(group: str) -> bool:
    """False only when no distribution on ``sys.path`` can declare an entry point in ``group``:
    no ``entry_points.txt`` of a ``*.dist-info``/``*.egg-info`` folder names it, no path entry is
    an archive or holds an ``.egg``, and no import finder but Python's own lists distributions.
    Then the plugins are known to be none without importing :mod:`importlib.metadata` and
    reading every distribution's metadata (a few tens of ms of ``beambleu score``'s start-up);
    whenever in doubt, True (and the entry points are read)."""
    from importlib.machinery import PathFinder

    if any(f is not PathFinder and hasattr(f, "find_distributions") for f in sys.meta_path):
        return True
    for entry in sys.path:
        root = entry or "."
        try:
            children = os.scandir(root)
        except FileNotFoundError:
            continue
        except OSError:  # a zip archive (or unreadable): importlib.metadata reads those
            return os.path.exists(root)
        with children:
            for child in children:
                name = child.name
                if name.endswith(".egg"):
                    return True
                if not name.endswith((".dist-info", ".egg-info")):
                    continue
                try:
                    with open(os.path.join(child.path, "entry_points.txt"), "rb") as f:
                        if group.encode() in f.read():
                            return True
                except (FileNotFoundError, NotADirectoryError):
                    continue
                except OSError:
                    return True
    return False


def _entry_points(group: str) -> list:
    """The entry points of ``group`` (none, without importing importlib.metadata, when no
    distribution may declare one: :func:`_may_declare`)."""
    if not _may_declare(group):
        return []
    from importlib import metadata

    return list(metadata.entry_points(group=group))


@functools.lru_cache(maxsize=None)
def _load() -> Tuple[Dict[str, type], Tuple[str, ...], Dict[str, str]]:
    """(id -> class, one line per plugin left out, id -> why it was left out), read once."""
    found = dict(builtin_metrics())
    skipped, why = [], {}

    def skip(ep, reason: str) -> None:
        line = f"{_describe(ep)} is skipped: {reason}"
        skipped.append(line)
        why.setdefault(ep.name, line)

    eps = sorted(_entry_points(ENTRY_POINT_GROUP),
                 key=lambda ep: (ep.name, getattr(getattr(ep, "dist", None), "name", "")))
    for ep in eps:
        try:
            cls = ep.load()
        except Exception as exc:  # a broken plugin is left out, whatever it raised
            skip(ep, f"it cannot be imported: {type(exc).__name__}: {exc}")
            continue
        if not (isinstance(cls, type) and issubclass(cls, Metric)):
            skip(ep, f"{ep.value} is not a subclass of bleu_core.protocol.Metric")
            continue
        if cls.id != ep.name:
            skip(ep, f"its class's id is {cls.id!r}, not the entry point's name")
            continue
        if ep.name in found:
            owner = "a built-in metric" if ep.name in builtin_metrics() else "an earlier plugin"
            skip(ep, f"the id {ep.name!r} is {owner}'s")
            continue
        try:
            check_declaration(cls)
        except ValueError as exc:
            skip(ep, str(exc))
            continue
        found[ep.name] = cls
    return found, tuple(skipped), why


def metrics() -> Dict[str, type]:
    """Every usable metric: id -> class, the built-ins first, then the plugins by id."""
    return dict(_load()[0])


def ids() -> Tuple[str, ...]:
    """The ids of :func:`metrics`, in its order."""
    return tuple(_load()[0])


def skipped() -> List[str]:
    """One line per plugin left out, naming its distribution and why."""
    return list(_load()[1])


class UnknownMetric(LookupError):
    """An id the registry does not have (the message says why, when a plugin of that id was left out)."""


def get(metric_id: str) -> type:
    """The class of a metric id, else :class:`UnknownMetric`. A built-in's id is answered without
    reading the installed distributions' entry points (no plugin may take it: :func:`_load`)."""
    builtins = builtin_metrics()
    if metric_id in builtins:
        return builtins[metric_id]
    found, _, why = _load()
    if metric_id in found:
        return found[metric_id]
    raise UnknownMetric(why.get(metric_id) or f"unknown metric {metric_id!r} (choose from {', '.join(found)})")


def refresh() -> None:
    """Read the built-ins and the entry points again (after installing a plugin in this process)."""
    _load.cache_clear()

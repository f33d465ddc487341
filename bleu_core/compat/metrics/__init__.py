"""sacrebleu's ``sacrebleu.metrics``: :class:`BLEU`, :class:`CHRF`, :class:`TER`, their scores,
``METRICS``, and :func:`compat_class`, the sacrebleu-style class of any registered metric.

Each class's module (``bleu``, ``chrf``, ``ter``) is imported when one of its names is first used
(PEP 562), so that a script scoring BLEU never loads chrF's or TER's kernels, nor they BLEU's."""

from __future__ import annotations

import functools
import inspect
import types
from importlib import import_module

from .base import Score, _Metric

__all__ = ["BLEU", "CHRF", "TER", "BLEUScore", "CHRFScore", "TERScore", "METRICS", "compat_class"]

#: the module of each class (imported on first use)
_CLASSES = {"BLEU": ".bleu", "BLEUScore": ".bleu", "CHRF": ".chrf", "CHRFScore": ".chrf", "TER": ".ter",
            "TERScore": ".ter"}
#: the compat class of each built-in metric's id (``Metric.id``)
_BUILTINS = {"bleu": "BLEU", "chrf": "CHRF", "ter": "TER"}


@functools.lru_cache(maxsize=None)
def compat_class(metric) -> type:
    """The sacrebleu-style class of a registered metric (its class, or its id): :class:`BLEU`
    and :class:`CHRF` for the built-ins; for another metric, a class named after its id
    (``LENRATIO``) whose keyword arguments are the metric's declared keyword options (default:
    the metric's own) and ``references`` (streams kept for calls that pass ``references=None``).
    Its options are attributes as on ``BLEU``; ``corpus_score``, ``sentence_score``,
    ``get_signature`` and :class:`PairedTest` work as they do for ``BLEU``; scores are
    :class:`Score` objects (name and score)."""
    from ... import registry  # (the plugins' entry points are read when one is first asked for)

    if isinstance(metric, str):
        metric = registry.get(metric)
    builtin = _BUILTINS.get(getattr(metric, "id", None))
    if builtin is not None:
        cls = __getattr__(builtin)
        if metric is cls._metric_class:
            return cls
    names = [opt.name for opt in metric.options if opt.keyword]
    defaults = inspect.signature(metric).parameters
    params = [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=defaults[n].default) for n in names]
    params.append(inspect.Parameter("references", inspect.Parameter.KEYWORD_ONLY, default=None))

    def __init__(self, references=None, **options):
        unknown = sorted(set(options) - set(names))
        if unknown:
            raise TypeError(f"{type(self).__name__}() got an unexpected keyword argument {unknown[0]!r}")
        _Metric.__init__(self)
        self._metric = metric(**options)
        self._metric.load()
        if references is not None:
            self._ref_cache = self._cache_references(references)

    __init__.__signature__ = inspect.Signature([inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY),
                                                *params])

    def _compute_score_from_stats(self, stats) -> Score:
        import numpy as np

        core = self._metric.score(np.asarray(stats, dtype=np.int64))
        return Score(core.name, core.score)

    name = metric.id.upper()
    namespace = {"__init__": __init__, "_compute_score_from_stats": _compute_score_from_stats,
                 "__module__": "bleu_core.compat", "__qualname__": name,
                 "__doc__": f"sacrebleu-style class of the metric {metric.id!r} "
                            f"({metric.__module__}.{metric.__name__})."}
    return types.new_class(name, (_Metric,), {"metric": metric}, lambda ns: ns.update(namespace))



def __getattr__(name: str):
    if name in _CLASSES:
        value = globals()[name] = getattr(import_module(_CLASSES[name], __name__), name)
        return value
    if name == "METRICS":  # sacrebleu's table of its metric classes by name
        value = globals()[name] = {cls: __getattr__(cls) for cls in ("BLEU", "CHRF", "TER")}
        return value
    if name == "helpers":  # sacrebleu.metrics.helpers, imported when first used
        return import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted({*globals(), *__all__, "helpers"})

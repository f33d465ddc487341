"""sacrebleu's ``sacrebleu.metrics``: :class:`BLEU`, :class:`CHRF`, :class:`TER`, their scores,
``METRICS``, and :func:`compat_class`, the sacrebleu-style class of any registered metric."""

from __future__ import annotations

import functools
import inspect
import types
from importlib import import_module

import numpy as np

from ... import registry
from ...metrics.bleu import Bleu
from ...metrics.chrf import Chrf
from ...metrics.ter import Ter
from .base import Score, _Metric
from .bleu import BLEU, BLEUScore
from .chrf import CHRF, CHRFScore
from .ter import TER, TERScore

__all__ = ["BLEU", "CHRF", "TER", "BLEUScore", "CHRFScore", "TERScore", "METRICS", "compat_class"]

#: sacrebleu's table of its metric classes by name
METRICS = {"BLEU": BLEU, "CHRF": CHRF, "TER": TER}


@functools.lru_cache(maxsize=None)
def compat_class(metric) -> type:
    """The sacrebleu-style class of a registered metric (its class, or its id): :class:`BLEU`
    and :class:`CHRF` for the built-ins; for another metric, a class named after its id
    (``LENRATIO``) whose keyword arguments are the metric's declared keyword options (default:
    the metric's own) and ``references`` (streams kept for calls that pass ``references=None``).
    Its options are attributes as on ``BLEU``; ``corpus_score``, ``sentence_score``,
    ``get_signature`` and :class:`PairedTest` work as they do for ``BLEU``; scores are
    :class:`Score` objects (name and score)."""
    if isinstance(metric, str):
        metric = registry.get(metric)
    if metric is Bleu:
        return BLEU
    if metric is Chrf:
        return CHRF
    if metric is Ter:
        return TER
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
        core = self._metric.score(np.asarray(stats, dtype=np.int64))
        return Score(core.name, core.score)

    name = metric.id.upper()
    namespace = {"__init__": __init__, "_compute_score_from_stats": _compute_score_from_stats,
                 "__module__": "bleu_core.compat", "__qualname__": name,
                 "__doc__": f"sacrebleu-style class of the metric {metric.id!r} "
                            f"({metric.__module__}.{metric.__name__})."}
    return types.new_class(name, (_Metric,), {"metric": metric}, lambda ns: ns.update(namespace))



def __getattr__(name: str):
    if name == "helpers":  # sacrebleu.metrics.helpers, imported when first used
        return import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""sacrebleu's own test-set registry, for ``bleu_core.compat.dataset`` and ``bleu_core.compat.utils``:
the installed sacrebleu (the extra ``beambleu[testsets]``), imported on first use only.

When the name ``sacrebleu`` is this compat layer itself (``sys.modules["sacrebleu"] =
bleu_core.compat``, or a shim package that aliases it), the installed distribution is loaded once
more under a private module name, so that the registry is still sacrebleu's."""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import sys
import threading
from pathlib import Path

__all__ = ["INSTALL", "sacrebleu"]

INSTALL = "pip install 'beambleu[testsets]'"
#: the module name of the installed sacrebleu when ``sacrebleu`` names this compat layer
PRIVATE_NAME = "_bleu_core_compat_sacrebleu"
_lock = threading.RLock()


def _missing(what: str) -> ImportError:
    return ImportError(f"{what} is sacrebleu's test-set registry, which needs sacrebleu installed: {INSTALL}")


def _is_compat(module) -> bool:
    return getattr(module, "_BLEU_CORE_COMPAT", False) is True


def sacrebleu(what: str = "this"):
    """The installed sacrebleu package (a module), or an ImportError naming the extra to install;
    ``what`` names what was asked for, in the message."""
    with _lock:
        module = sys.modules.get(PRIVATE_NAME)
        if module is not None:
            return module
        module = sys.modules.get("sacrebleu")
        if module is None:
            try:
                module = importlib.import_module("sacrebleu")
            except ImportError:
                raise _missing(what) from None
        if not _is_compat(module):
            return module
        return _load_private(what)


def _load_private(what: str):
    try:
        dist = importlib.metadata.distribution("sacrebleu")
    except importlib.metadata.PackageNotFoundError:
        raise _missing(what) from None
    init = Path(str(dist.locate_file("sacrebleu/__init__.py")))
    if not init.is_file():
        raise _missing(what)
    spec = importlib.util.spec_from_file_location(PRIVATE_NAME, init, submodule_search_locations=[str(init.parent)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[PRIVATE_NAME] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        for name in [n for n in sys.modules if n == PRIVATE_NAME or n.startswith(PRIVATE_NAME + ".")]:
            del sys.modules[name]
        raise
    return module

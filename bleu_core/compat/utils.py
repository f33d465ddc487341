"""sacrebleu's ``sacrebleu.utils``: its test-set functions (``get_source_file``,
``get_reference_files``, ``get_available_testsets``, ``get_available_testsets_for_langpair``,
``get_langpairs_for_testset``, ``download_test_set``, ...) are sacrebleu's own, through its registry
(extra ``beambleu[testsets]``; without it, using one raises an ImportError saying so);
:func:`smart_open` and ``SACREBLEU_DIR`` need no sacrebleu."""

from __future__ import annotations

import gzip

from ..tokenizers.tokenizer_spm import sacrebleu_dir
from ._registry import sacrebleu

__all__ = ["smart_open"]

#: the test-set functions of sacrebleu.utils, read from the installed sacrebleu when first used
REGISTRY_NAMES = ("download_test_set", "get_source_file", "get_reference_files", "get_files",
                  "get_langpairs_for_testset", "get_available_testsets", "get_available_testsets_for_langpair",
                  "get_available_origlangs", "get_available_subsets", "filter_subset", "print_test_set")


def smart_open(file, mode: str = "rt", encoding: str = "utf-8"):
    """``file`` opened as sacrebleu opens it: gzip when its name ends in ``.gz``; lines end at
    ``\\n`` only (no universal newlines)."""
    opener = gzip.open if str(file).endswith(".gz") else open
    return opener(file, mode=mode, encoding=encoding, newline="\n")


def __getattr__(name: str):
    if name == "SACREBLEU_DIR":
        return sacrebleu_dir()  # $SACREBLEU, default ~/.sacrebleu
    if name in REGISTRY_NAMES:
        return getattr(sacrebleu(f"bleu_core.compat.utils.{name}").utils, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), "SACREBLEU_DIR", *REGISTRY_NAMES])

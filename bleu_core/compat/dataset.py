"""sacrebleu's ``sacrebleu.dataset``: ``DATASETS`` (its test sets by name), ``SUBSETS``,
``COUNTRIES``, ``DOMAINS`` and its dataset classes are the installed sacrebleu's own (extra
``beambleu[testsets]``; without it, using one raises an ImportError saying so). Nothing is
imported until one is used."""

from __future__ import annotations

from ._registry import sacrebleu

__all__ = []

#: the names of sacrebleu.dataset this module passes on
REGISTRY_NAMES = ("DATASETS", "SUBSETS", "COUNTRIES", "DOMAINS", "FakeSGMLDataset", "WMTAdditionDataset",
                  "IWSLTXMLDataset", "PlainTextDataset", "TSVDataset", "WMTXMLDataset", "base", "fake_sgml",
                  "iwslt_xml", "plain_text", "tsv", "wmt_xml")


def __getattr__(name: str):
    if name in REGISTRY_NAMES:
        return getattr(sacrebleu(f"bleu_core.compat.dataset.{name}").dataset, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *REGISTRY_NAMES])

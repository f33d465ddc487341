"""Hugging Face ``evaluate`` module ``ter`` computed by bleu_core:
``evaluate.load("<this file's path>")`` (see :mod:`bleu_core.integrations.hf_evaluate`)."""

import bleu_core.integrations.hf_evaluate as _hf

__all__ = ["Ter"]


class Ter(_hf.Ter):
    """evaluate's ``ter``: the same inputs, options and keys."""

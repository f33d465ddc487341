"""Hugging Face ``evaluate`` module ``sacrebleu`` computed by bleu_core:
``evaluate.load("<this file's path>")`` (see :mod:`bleu_core.integrations.hf_evaluate`)."""

import bleu_core.integrations.hf_evaluate as _hf

__all__ = ["Sacrebleu"]


class Sacrebleu(_hf.Sacrebleu):
    """evaluate's ``sacrebleu``: the same inputs, options and keys."""

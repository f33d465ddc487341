"""Hugging Face ``evaluate`` module ``chrf`` computed by bleu_core:
``evaluate.load("<this file's path>")`` (see :mod:`bleu_core.integrations.hf_evaluate`)."""

import bleu_core.integrations.hf_evaluate as _hf

__all__ = ["ChrF"]


class ChrF(_hf.ChrF):
    """evaluate's ``chrf``: the same inputs, options and keys."""

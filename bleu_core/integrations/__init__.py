"""beambleu inside other tools' frameworks, each in a subpackage that imports its framework:
:mod:`bleu_core.integrations.hf_evaluate` (Hugging Face ``evaluate`` modules, the ``hf`` extra).
Importing this package imports none of them."""

__all__: list = []

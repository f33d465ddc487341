"""The two ways of drawing resamples: beambleu's counter-based draws (:mod:`bleu_core.resampling.counter`,
the draws of ``beambleu run``, kernel ``_resample.c``) and sacrebleu's numpy draws
(:mod:`bleu_core.resampling.sacrebleu`, the default of ``beambleu score`` and the compat API)."""

__all__: list = []

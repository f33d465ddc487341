"""``_resample.libm_each``: the C library's ``log``/``exp`` of many floats, which the replicates' BLEU
scores use in place of ``math.log``/``math.exp`` mapped over them. Its values must be Python's, bit
for bit (compared here as int64 bit patterns with Python's own functions run in the test), and it
must give up (False) outside their finite domain (where Python raises or returns an infinity or a
NaN), so that the caller's map does there what sacrebleu's code does."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from bleu_core.metrics.bleu import resampling as bleu_resampling
from bleu_core.resampling import _resample

LOG, EXP = 0, 1


def _bits(values):
    return np.asarray(values, dtype=np.float64).view(np.int64).tolist()


def _python(function, values):
    return [function(v) for v in values]


def test_log_of_positive_values_is_math_log_bit_for_bit():
    rnd = random.Random(20261207)
    values = ([rnd.uniform(0, 100) for _ in range(20000)] + [10 ** rnd.uniform(-300, 300) for _ in range(5000)]
              + [5e-324, 2.2250738585072014e-308, 1e-300, 0.5, 1.0, 2.0, 100.0, 1.7976931348623157e308])
    values = [v for v in values if v > 0]
    out = np.empty(len(values))
    assert _resample.libm_each(np.array(values), out, LOG) is True
    assert _bits(out) == _bits(_python(math.log, values))


def test_exp_of_finite_values_is_math_exp_bit_for_bit():
    rnd = random.Random(7)
    values = ([rnd.uniform(-745, 709.7) for _ in range(20000)] + [rnd.uniform(-1, 1) * 1e-12 for _ in range(2000)]
              + [0.0, -0.0, -745.2, -800.0, 709.78, 1e-310])
    out = np.empty(len(values))
    assert _resample.libm_each(np.array(values), out, EXP) is True
    assert _bits(out) == _bits(_python(math.exp, values))


@pytest.mark.parametrize("kind, value", [(LOG, 0.0), (LOG, -0.0), (LOG, -1.0), (LOG, math.inf), (LOG, math.nan),
                                         (EXP, 710.0), (EXP, math.inf), (EXP, -math.inf), (EXP, math.nan)])
def test_it_gives_up_outside_the_finite_domain(kind, value):
    out = np.empty(3)
    assert _resample.libm_each(np.array([1.0, value, 2.0]), out, kind) is False


@pytest.mark.parametrize("args", [(np.ones(2), np.empty(3), LOG), (np.ones(2), np.empty(2), 2),
                                  (np.ones(2, dtype=np.float32), np.empty(1), LOG),
                                  (np.arange(3), np.empty(3), LOG), (np.ones(3), np.empty(3, dtype=np.int64), EXP)])
def test_bad_buffers_or_kind_are_a_value_error(args):
    with pytest.raises(ValueError, match="libm_each"):
        _resample.libm_each(*args)


def test_each_does_what_python_does_outside_the_finite_domain():
    inf_nan = np.array([math.inf, -math.inf, math.nan])
    assert repr(bleu_resampling._each(math.exp, inf_nan).tolist()) == repr([math.inf, 0.0, math.nan])
    assert repr(bleu_resampling._each(math.log, inf_nan[[0, 2]]).tolist()) == repr([math.inf, math.nan])
    with pytest.raises(OverflowError):
        bleu_resampling._each(math.exp, np.array([1.0, 710.0]))
    with pytest.raises(ValueError):
        bleu_resampling._each(math.log, np.array([1.0, -1.0]))
    values = np.array([0.25, 3.0, 1e-200])
    assert _bits(bleu_resampling._each(math.log, values)) == _bits(_python(math.log, values.tolist()))
    assert _bits(bleu_resampling._each(math.sqrt, values)) == _bits(_python(math.sqrt, values.tolist()))

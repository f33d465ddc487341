"""counter.exact_mean is statistics.mean (what the interval's mean was, and what sacrebleu's
estimate is defined by), the same float for replicate-like and adversarial values: expected values
from statistics.mean, run here."""

import math
import random
import statistics

import pytest

from bleu_core.resampling.counter import exact_mean, percentile_interval


def _cases():
    rng = random.Random(34)
    out = []
    for _ in range(600):
        n = rng.choice([1, 2, 3, 7, 40, 1000, 1001])
        kind = rng.random()
        if kind < 0.3:
            xs = [rng.random() * 100 for _ in range(n)]
        elif kind < 0.5:
            xs = [rng.choice([0.0, 100.0, 1e-300, 5e-324, 1e300, 33.3, -0.0]) for _ in range(n)]
        elif kind < 0.7:
            xs = [math.ldexp(rng.random(), rng.randint(-1074, 1000)) for _ in range(n)]
        else:
            xs = [rng.uniform(-1e6, 1e6) for _ in range(n)]
        out.append(xs)
    # by hand: 0.1 + 0.2 + 0.3 summed as floats is 0.6000000000000001, exactly it is not; the mean of
    # the three exact binary values rounds to 0.2; huge values whose float sum would overflow
    out += [[0.1, 0.2, 0.3], [1e308, 1e308, -1e308], [-0.0], [-0.0, 0.0], [5e-324, 5e-324, 5e-324]]
    return out


def test_exact_mean_is_statistics_mean():
    for xs in _cases():
        want = statistics.mean(xs)
        got = exact_mean(xs)
        assert got == want and math.copysign(1, got) == math.copysign(1, want), xs[:5]


def test_non_finite_and_empty_are_statistics_mean():
    assert exact_mean([1.0, math.inf]) == math.inf
    assert math.isnan(exact_mean([1.0, math.nan]))
    with pytest.raises(statistics.StatisticsError):
        exact_mean([])


def test_interval_mean():
    rng = random.Random(5)
    scores = [rng.random() * 60 for _ in range(1001)]
    assert percentile_interval(scores)["mean"] == statistics.mean(scores)


def test_other_types_keep_statistics_mean_and_its_type():
    import numpy as np

    for xs in ([np.float32(54.87), np.float32(12.5), np.float32(1 / 3)], [1, 2, 4], [1.5, np.float64(2.5)]):
        want, got = statistics.mean(xs), exact_mean(xs)
        assert got == want and type(got) is type(want), xs

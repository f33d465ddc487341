"""counter.exact_mean sums the values of one binary exponent in int64 runs: runs long enough to pass
int64 if they were not cut (each value's 53-bit integer near 2**53, thousands of them), of either
sign and mixed with others, give statistics.mean's float (run here)."""

import math
import random
import statistics

from bleu_core.resampling.counter import exact_mean


def test_long_runs_of_one_exponent_are_exact():
    top = math.nextafter(2.0, 0)  # 2 - 2**-52: the largest 53-bit integer times 2**-52
    rng = random.Random(7)
    cases = [
        [top] * 5000,
        [-top] * 3000 + [1.0] * 2047,
        [1.0 - 2 ** -53] * 1023 + [1.5] * 1024 + [1e-300] * 2,
        [top] * 1024 + [top] * 1025,
        [rng.uniform(-1, 1) * 10 ** rng.randint(-30, 30) for _ in range(20000)],
        [rng.choice([top, 3.0 - 2 ** -51, 1e-320]) for _ in range(9999)],
    ]
    for xs in cases:
        want, got = statistics.mean(xs), exact_mean(xs)
        assert got == want and type(got) is float, xs[:3]

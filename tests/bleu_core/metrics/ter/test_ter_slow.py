"""TER's properties of tests/bleu_core/metrics/ter/test_ter.py with many more examples, and more reordered long
segments against sacrebleu 2.6.0 (slow: sacrebleu's TER runs a few hundred pairs per second)."""

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .test_ter import OPTIONS, agree, reordered, ter_corpus, test_breakdown_is_sacrebleus_final_alignment, text_pairs

pytestmark = pytest.mark.slow

MANY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                         HealthCheck.data_too_large])


@MANY
@given(case=ter_corpus(max_pairs=6), opts=st.sampled_from(OPTIONS))
def test_scalar_kernel_and_sacrebleu_agree_many(case, opts):
    agree(*case, **opts)


@MANY
@given(pair=text_pairs(max_words=80), opts=st.sampled_from(OPTIONS))
def test_breakdown_many(pair, opts):
    test_breakdown_is_sacrebleus_final_alignment.hypothesis.inner_test(pair=pair, opts=opts)


@pytest.mark.parametrize("seed", range(2))
def test_reordered_long_segments(seed):
    rng = random.Random(seed)
    pairs = [reordered(rng, rng.choice([20, 60, 120]), rng.choice([3, 8, 50]), rng.randrange(8)) for _ in range(12)]
    agree([h for h, _ in pairs], [[r, None] for _, r in pairs])

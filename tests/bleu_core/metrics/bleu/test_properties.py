"""scalar path == batch path == sacrebleu 2.6.0, statistics and score, on adversarial text."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bleu_core import Bleu, corpus_bleu, sentence_bleu

from ....oracle import has_mecab, sacre_corpus, sacre_metric
from ....strategies import corpus, segment

BUILTIN = ["13a", "intl", "zh", "char", "none"]
MECAB = [name for name in ("ja-mecab", "ko-mecab") if has_mecab(name)]
TOKENIZERS = BUILTIN + MECAB

options = st.fixed_dictionaries(
    {
        "lowercase": st.booleans(),
        "smooth": st.sampled_from([("exp", None), ("none", None), ("floor", None), ("floor", 0.25),
                                   ("add-k", None), ("add-k", 2), ("add-k", 0.5)]),
        "max_ngram_order": st.integers(1, 6),
        "effective_order": st.booleans(),
    }
)


def check_all_paths(tokenize, cands, refs, opt):
    smooth_method, smooth_value = opt["smooth"]
    kw = dict(tokenize=tokenize, lowercase=opt["lowercase"], smooth_method=smooth_method,
              smooth_value=smooth_value, max_ngram_order=opt["max_ngram_order"],
              effective_order=opt["effective_order"])
    metric = Bleu(**kw)
    scalar = metric.scalar_stats(cands, refs)
    batch = metric.batch_stats(cands, refs)
    summed = metric.batch_stats(cands, refs, per_row=False)
    sacre_score, sacre_seg = sacre_corpus(cands, refs, **kw)
    expected = np.array(sacre_seg, dtype=np.int64)
    np.testing.assert_array_equal(scalar, expected)
    np.testing.assert_array_equal(batch, expected)
    np.testing.assert_array_equal(summed, expected.sum(axis=0))
    ours = corpus_bleu(cands, refs, **kw)
    assert ours.score == sacre_score.score  # bit for bit
    assert ours.bp == sacre_score.bp
    assert ours.sys_len == sacre_score.sys_len and ours.ref_len == sacre_score.ref_len
    if smooth_method != "add-k":  # sacrebleu reports its smoothed (mutated) counts under add-k
        assert ours.counts == list(sacre_score.counts) and ours.totals == list(sacre_score.totals)
        assert ours.precisions == sacre_score.precisions
    else:
        assert ours.counts == expected.sum(axis=0)[2:2 + opt["max_ngram_order"]].tolist()
    # the signature names the same options as sacrebleu's
    theirs = sacre_metric(**kw).get_signature().format()
    assert ours.signature.rsplit("|version:", 1)[0].replace(f"|order:{opt['max_ngram_order']}", "") == \
        theirs.rsplit("|version:", 1)[0]


@pytest.mark.parametrize("tokenize", TOKENIZERS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=corpus(), opt=options)
def test_matches_sacrebleu(tokenize, data, opt):
    check_all_paths(tokenize, *data, opt)


@pytest.mark.slow
@pytest.mark.parametrize("tokenize", TOKENIZERS)
@settings(max_examples=700, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=corpus(), opt=options)
def test_matches_sacrebleu_many(tokenize, data, opt):
    check_all_paths(tokenize, *data, opt)


@pytest.mark.parametrize("tokenize", TOKENIZERS)
@settings(max_examples=60, deadline=None)
@given(data=corpus(max_pairs=3, max_refs=1, allow_missing=False), text=st.text(max_size=40))
def test_matches_sacrebleu_arbitrary_unicode(tokenize, data, text):
    cands, refs = data
    cands = cands + [text]
    refs = refs + [[text[::-1]]]
    check_all_paths(tokenize, cands, refs, {"lowercase": False, "smooth": ("exp", None),
                                            "max_ngram_order": 4, "effective_order": False})


@pytest.mark.parametrize("tokenize", TOKENIZERS)
@settings(max_examples=40, deadline=None)
@given(hyp=segment, refs=st.lists(segment, min_size=1, max_size=3))
def test_sentence_bleu_matches_sacrebleu(tokenize, hyp, refs):
    ours = sentence_bleu(hyp, refs, tokenize=tokenize)
    theirs = sacre_metric(tokenize=tokenize, effective_order=True).sentence_score(hyp, refs)
    assert ours.score == theirs.score


@pytest.mark.parametrize("tokenize", TOKENIZERS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=corpus(), others=st.lists(st.lists(segment, min_size=6, max_size=6), max_size=3),
       lowercase=st.booleans(), order=st.integers(1, 6))
def test_several_systems_at_once_match_sacrebleu(tokenize, data, others, lowercase, order):
    """batch_stats_many (a row's references tokenized once for all the systems) gives each system
    the statistics sacrebleu gives it on its own; MetricSet's, with chrF beside, too."""
    from sacrebleu.metrics.chrf import CHRF

    from bleu_core import Chrf, MetricSet

    cands, refs = data
    systems = [cands] + [other[:len(cands)] for other in others]
    metric = Bleu(tokenize=tokenize, lowercase=lowercase, max_ngram_order=order)
    got = metric.batch_stats_many(systems, refs)
    sums = metric.batch_stats_many(systems, refs, per_row=False)
    assert len(got) == len(sums) == len(systems)
    both = MetricSet([metric, Chrf()]).batch_stats_many(systems, refs)
    sacre_chrf = CHRF()
    streams = [[r[k] if k < len(r) else None for r in refs] for k in range(max(map(len, refs)))]
    for system, rows, total, joint in zip(systems, got, sums, both):
        _, seg = sacre_corpus(system, refs, tokenize=tokenize, lowercase=lowercase, max_ngram_order=order)
        np.testing.assert_array_equal(rows, np.array(seg, dtype=np.int64))
        np.testing.assert_array_equal(total, np.array(seg, dtype=np.int64).sum(axis=0))
        chrf_seg = np.array(sacre_chrf._extract_corpus_statistics(system, streams), dtype=np.int64)
        np.testing.assert_array_equal(joint, np.concatenate([rows, chrf_seg], axis=1))


@pytest.mark.parametrize("tokenize", BUILTIN)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=corpus(max_pairs=4, max_refs=3), copies=st.lists(st.tuples(st.integers(0, 3), segment), min_size=8,
                                                             max_size=14))
def test_rows_sharing_references_match_sacrebleu(tokenize, data, copies):
    """A long table's batch (rows that repeat a reference list: each system's row of a segment)
    scored by batch_stats_shared, each distinct list prepared once, gives every row sacrebleu's
    statistics, in row order; with chrF and TER beside, each row what batch_stats gives it."""
    from bleu_core import Chrf, MetricSet, Ter
    from bleu_core.protocol import batch_stats_shared

    cands, refs = data
    rows = [(cand, refs[i % len(refs)]) for i, cand in copies]  # repeated lists, in any order
    cands, refs = [c for c, _ in rows], [r for _, r in rows]
    metric = Bleu(tokenize=tokenize)
    got = batch_stats_shared(metric, cands, refs)
    _, seg = sacre_corpus(cands, refs, tokenize=tokenize)
    np.testing.assert_array_equal(got, np.array(seg, dtype=np.int64))
    np.testing.assert_array_equal(batch_stats_shared(metric, cands, refs, per_row=False),
                                  np.array(seg, dtype=np.int64).sum(axis=0))
    several = MetricSet([metric, Chrf(), Ter()])
    np.testing.assert_array_equal(batch_stats_shared(several, cands, refs), several.batch_stats(cands, refs))

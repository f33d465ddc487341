"""chrF and chrF++ on every system of ../shared/corpora (its first SEGMENTS segments), with all of its
references, against sacrebleu 2.6.0's CHRF run here (skipped cleanly when the corpora are absent).
sacrebleu's side of the whole corpora took 400 s of both cores, a seventh of CI's time; whole files
of every folder are scored against sacrebleu's command line by test_corpora_ter.py's
test_score_bleu_chrf_ter_prints_sacrebleus_bytes_on_every_folder.

The corpus score must be bit-identical, and the summed statistics must equal the sum of
sacrebleu's per-segment statistics (which carry its choice of the best reference per segment).
"""

from __future__ import annotations

import os

import pytest

from ....oracle import corpus_systems, load_system

sacrebleu_chrf = pytest.importorskip("sacrebleu.metrics.chrf")

pytestmark = pytest.mark.corpora


SYSTEMS = corpus_systems()

#: the segments of each system compared (the first ones of its file)
SEGMENTS = 200


def _first_segments(folder, system, refs):
    hyps, streams = load_system(folder, system, refs)
    return hyps[:SEGMENTS], [stream[:SEGMENTS] for stream in streams]


def _sacrebleu_totals(item):
    """sacrebleu's summed statistics and score of one system, for chrF++ and chrF."""
    folder, system, refs = item
    hyps, streams = _first_segments(folder, system, refs)
    out, plus = {}, None
    for word_order in (2, 0):  # chrF++, chrF
        theirs = sacrebleu_chrf.CHRF(word_order=word_order)
        if word_order == 0 and len(refs) == 1:
            # one reference, nothing to choose: chrF's statistics are the character part of chrF++'s
            # (sacrebleu's own, from the run above), which halves the time sacrebleu takes here
            seg = [row[:18] for row in plus]
        else:
            seg = theirs._extract_corpus_statistics(hyps, streams)
        plus = seg
        out[word_order] = ([sum(col) for col in zip(*seg)], theirs._aggregate_and_compute(seg).score)
    return out


@pytest.fixture(scope="module")
def sacrebleu_side():
    """sacrebleu's results for every system, computed on every core (it is the slow side: about
    1,300 pairs per CPU-second)."""
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        return dict(zip(SYSTEMS, pool.map(_sacrebleu_totals, SYSTEMS, chunksize=4)))


@pytest.mark.skipif(not SYSTEMS, reason="shared corpora not present")
@pytest.mark.parametrize("folder,system,refs", SYSTEMS, ids=lambda v: v if isinstance(v, str) else "+".join(v))
def test_every_system_chrf_and_chrfpp_equal_sacrebleu(sacrebleu_side, folder, system, refs):
    from bleu_core.metrics.chrf import Chrf

    hyps, streams = _first_segments(folder, system, refs)
    per_pair = [list(r) for r in zip(*streams)]
    for word_order in (0, 2):  # chrF, chrF++
        want, expected = sacrebleu_side[(folder, system, refs)][word_order]
        ours = Chrf(word_order=word_order)
        total, nrefs = ours.corpus_stats(hyps, per_pair)
        assert total.tolist() == want, (folder, system, word_order)
        assert nrefs == {len(refs)}
        assert ours.score(total, nrefs).score == expected

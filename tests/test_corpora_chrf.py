"""chrF and chrF++ on every system of ../shared/corpora, with all of its references, against
sacrebleu 2.6.0's CHRF run here (skipped cleanly when the corpora are absent).

The corpus score must be bit-identical, and the summed statistics must equal the sum of
sacrebleu's per-segment statistics (which carry its choice of the best reference per segment).
"""

from __future__ import annotations

import os

import pytest

from .oracle import CORPORA, read_lines

sacrebleu_chrf = pytest.importorskip("sacrebleu.metrics.chrf")

pytestmark = pytest.mark.corpora


def _systems():
    """(folder, system, reference names) of every system output in the corpora."""
    out = []
    if not (CORPORA / "MANIFEST.tsv").exists():
        return out
    for folder in sorted(p for p in CORPORA.glob("*/*") if p.is_dir()):
        refs = sorted(p.name[len("ref."):-len(".txt")] for p in folder.glob("ref.*.txt"))
        for sys_path in sorted(folder.glob("sys.*.txt")):
            out.append((str(folder.relative_to(CORPORA)), sys_path.name[len("sys."):-len(".txt")], tuple(refs)))
    return out


SYSTEMS = _systems()


def _load(folder, system, refs):
    d = CORPORA / folder
    hyps = read_lines(d / f"sys.{system}.txt")
    streams = [read_lines(d / f"ref.{r}.txt") for r in refs]
    assert all(len(s) == len(hyps) for s in streams)
    return hyps, streams


def _sacrebleu_totals(item):
    """sacrebleu's summed statistics and score of one system, for chrF++ and chrF."""
    folder, system, refs = item
    hyps, streams = _load(folder, system, refs)
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
    1,300 pairs per CPU-second, and the corpora hold some 300,000 pairs)."""
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        return dict(zip(SYSTEMS, pool.map(_sacrebleu_totals, SYSTEMS, chunksize=4)))


@pytest.mark.skipif(not SYSTEMS, reason="shared corpora not present")
@pytest.mark.parametrize("folder,system,refs", SYSTEMS, ids=lambda v: v if isinstance(v, str) else "+".join(v))
def test_every_system_chrf_and_chrfpp_equal_sacrebleu(sacrebleu_side, folder, system, refs):
    from bleu_core.chrf import Chrf

    hyps, streams = _load(folder, system, refs)
    per_pair = [list(r) for r in zip(*streams)]
    for word_order in (0, 2):  # chrF, chrF++
        want, expected = sacrebleu_side[(folder, system, refs)][word_order]
        ours = Chrf(word_order=word_order)
        total, nrefs = ours.corpus_stats(hyps, per_pair)
        assert total.tolist() == want, (folder, system, word_order)
        assert nrefs == {len(refs)}
        assert ours.score(total, nrefs).score == expected

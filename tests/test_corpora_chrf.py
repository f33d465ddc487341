"""chrF and chrF++ on every system of ../shared/corpora, with all of its references, against
sacrebleu 2.6.0's CHRF run here (skipped cleanly when the corpora are absent).

The corpus score must be bit-identical, and the summed statistics must equal the sum of
sacrebleu's per-segment statistics (which carry its choice of the best reference per segment).
"""

from __future__ import annotations

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


@pytest.mark.skipif(not SYSTEMS, reason="shared corpora not present")
@pytest.mark.parametrize("folder,system,refs", SYSTEMS, ids=lambda v: v if isinstance(v, str) else "+".join(v))
def test_every_system_chrf_and_chrfpp_equal_sacrebleu(folder, system, refs):
    from bleu_core.chrf import Chrf

    hyps, streams = _load(folder, system, refs)
    per_pair = [list(r) for r in zip(*streams)]
    for word_order in (0, 2):  # chrF, chrF++
        theirs = sacrebleu_chrf.CHRF(word_order=word_order)
        seg = theirs._extract_corpus_statistics(hyps, streams)
        want = [sum(col) for col in zip(*seg)]
        expected = theirs._aggregate_and_compute(seg).score
        ours = Chrf(word_order=word_order)
        total, nrefs = ours.corpus_stats(hyps, per_pair)
        assert total.tolist() == want, (folder, system, word_order)
        assert nrefs == {len(refs)}
        assert ours.score(total, nrefs).score == expected

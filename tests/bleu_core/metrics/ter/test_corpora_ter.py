"""TER on every system of ../shared/corpora, with all of its references, against sacrebleu 2.6.0's
TER run here (skipped cleanly when the corpora are absent).

sacrebleu's TER is slow (a few hundred pairs per CPU-second), so by default each system is
checked on an evenly spaced sample of its segments (``BEAMBLEU_TER_SAMPLE`` per system, default
15; 0 checks every segment, which takes hours). Per segment the edits and the average reference
length must equal sacrebleu's, and the sample's corpus score must be bit-identical; the kernel
also scores every segment of every system (no error, statistics that check).
"""

from __future__ import annotations

import os

import pytest

from ....oracle import CORPORA, corpus_systems, load_system

sacrebleu_ter = pytest.importorskip("sacrebleu.metrics.ter")

pytestmark = [pytest.mark.corpora, pytest.mark.slow]

SAMPLE = int(os.environ.get("BEAMBLEU_TER_SAMPLE", "15"))


SYSTEMS = corpus_systems()


def _sample(n: int) -> list[int]:
    """Evenly spaced segment indices (all of them when SAMPLE is 0 or n is small)."""
    if SAMPLE <= 0 or n <= SAMPLE:
        return list(range(n))
    return [i * n // SAMPLE for i in range(SAMPLE)]


def _sacrebleu_side(item):
    folder, system, refs = item
    hyps, streams = load_system(folder, system, refs)
    pick = _sample(len(hyps))
    hyps, streams = [hyps[i] for i in pick], [[s[i] for i in pick] for s in streams]
    metric = sacrebleu_ter.TER()
    seg = metric._extract_corpus_statistics(hyps, streams)
    return seg, metric._aggregate_and_compute(seg).score


@pytest.fixture(scope="module")
def sacrebleu_side():
    """sacrebleu's per-segment statistics and score of each system's sample, on every core."""
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        return dict(zip(SYSTEMS, pool.map(_sacrebleu_side, SYSTEMS, chunksize=4)))


@pytest.mark.skipif(not SYSTEMS, reason="shared corpora not present")
@pytest.mark.parametrize("folder,system,refs", SYSTEMS, ids=lambda v: v if isinstance(v, str) else "+".join(v))
def test_every_system_ter_equals_sacrebleu(sacrebleu_side, folder, system, refs):
    from bleu_core.metrics.ter import Ter

    hyps, streams = load_system(folder, system, refs)
    per_pair = [list(r) for r in zip(*streams)]
    ours = Ter()
    rows = ours.batch_stats(hyps, per_pair)
    ours.check_stats(rows.sum(axis=0))
    pick = _sample(len(hyps))
    seg, expected = sacrebleu_side[(folder, system, refs)]
    k = len(refs)
    assert [[int(r[0]), int(r[5 + k - 1]) / k] for r in rows[pick]] == seg, (folder, system)
    assert ours.corpus_score([hyps[i] for i in pick], [per_pair[i] for i in pick]).score == expected
    if k in (1, 2, 4):
        assert ours.score(rows[pick].sum(axis=0)).score == expected


#: lines of each folder's files the command-line check reads (sacrebleu's TER on whole files, WMT24's
#: paragraph-long segments above all, takes over 20 minutes, and on 200 lines about 12 of CI's 50;
#: BEAMBLEU_TER_CLI_LINES=0 reads whole files, which passed on every folder at c13ba5c)
CLI_LINES = int(os.environ.get("BEAMBLEU_TER_CLI_LINES", "60"))


def _folders():
    """(folder, first system, reference names, output format) of every folder of the corpora, the
    folders taking JSON and text in turn (sacrebleu's TER on every folder twice would cost minutes more)."""
    firsts = {}
    for folder, system, refs in SYSTEMS:
        firsts.setdefault(folder, (folder, system, refs))
    return [(*v, ("json", "text")[i % 2]) for i, v in enumerate(firsts.values())]


@pytest.mark.skipif(not SYSTEMS, reason="shared corpora not present")
@pytest.mark.parametrize("folder,system,refs,form", _folders(),
                         ids=lambda v: v if isinstance(v, str) else "+".join(v))
def test_score_bleu_chrf_ter_prints_sacrebleus_bytes_on_every_folder(folder, system, refs, form, tmp_path):
    """`beambleu score REF... -i SYS -m bleu chrf ter -f FORM` against `sacrebleu` with the same arguments, on
    every folder's first system with all of its references (their first CLI_LINES lines, byte for byte): the
    same standard output, version fields aside."""
    from ....cli_parity import BEAMBLEU_VERSION, SACREBLEU_VERSION, first_difference, normalise_version, run_both

    names = [*(f"ref.{r}.txt" for r in refs), f"sys.{system}.txt"]
    for name in names:
        data = (CORPORA / folder / name).read_bytes()
        if CLI_LINES > 0:
            lines = data.split(b"\n")
            data = b"".join(line + b"\n" for line in (lines[:-1] if lines[-1] == b"" else lines)[:CLI_LINES])
        (tmp_path / name).write_bytes(data)
    args = [*names[:-1], "-i", names[-1], "-m", "bleu", "chrf", "ter"]
    for extra in (["-f", form],):
        ours, theirs = run_both(args + extra, cwd=tmp_path)
        assert ours.returncode == theirs.returncode == 0, ours.stderr.decode()[-2000:] + theirs.stderr.decode()[-2000:]
        a = normalise_version(ours.stdout.decode(), BEAMBLEU_VERSION)
        b = normalise_version(theirs.stdout.decode(), SACREBLEU_VERSION)
        assert a == b, first_difference(a, b)

"""The per-item API's bootstrap (bleu_core.items) against what an evaluation harness does today
with sacrebleu: ``corpus_bleu`` of each resample's items.

    python -m benchmarks.items                                   # 10,000 items, 100,000 resamples
    python -m benchmarks.items --items 2000 --reference-resamples 20

The items are the benchmark corpus's first pairs (benchmarks/corpus.py: real WMT system outputs
and their first reference from ../shared/corpora, else the synthetic corpus), BLEU with 13a.

* beambleu: ``item_stats`` once (the C kernel), then ``bootstrap(stats, B)``: B resamples of the
  n items drawn with replacement, scored on their exact totals; the best of ``--rounds``.
* sacrebleu 2.6.0: per resample, n indices drawn with replacement and ``sacrebleu.corpus_bleu``
  of those candidates and references (tokenized again each time, as a harness that keeps the
  text does); ``--reference-resamples`` of them are timed and the cost per resample is taken as
  its cost for all B.

Times are CPU seconds of this process (``process_time``) and wall seconds; the ratio is of CPU
per resample. The first replicates of the bootstrap are checked against sacrebleu's corpus_bleu
of the same resampled items.
"""

from __future__ import annotations

import argparse
import itertools
import time
from pathlib import Path

import numpy as np

from .corpus import DEFAULT_CORPORA, real_pairs, synthetic_pairs


def timed(fn):
    """(CPU seconds, wall seconds, result) of one call."""
    c, w = time.process_time(), time.perf_counter()
    out = fn()
    return time.process_time() - c, time.perf_counter() - w, out


def main(argv=None) -> None:
    import sacrebleu

    from bleu_core.items import bootstrap, item_stats, resample_counts

    ap = argparse.ArgumentParser(prog="python -m benchmarks.items", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=10_000)
    ap.add_argument("--resamples", type=int, default=100_000)
    ap.add_argument("--reference-resamples", type=int, default=100,
                    help="resamples timed with sacrebleu (default: %(default)s)")
    ap.add_argument("--rounds", type=int, default=2, help="rounds of beambleu's bootstrap (best is kept)")
    ap.add_argument("--check", type=int, default=3, help="replicates checked against sacrebleu")
    ap.add_argument("--corpora", default=str(DEFAULT_CORPORA))
    a = ap.parse_args(argv)

    pairs = list(itertools.islice(real_pairs(Path(a.corpora), 1), a.items))
    source = "real WMT pairs (1 reference)"
    if len(pairs) < a.items:
        pairs, source = list(itertools.islice(synthetic_pairs(1), a.items)), "synthetic pairs (1 reference)"
    hyps, refs = [h for h, _ in pairs], [r for _, r in pairs]
    n, b = len(hyps), a.resamples

    stats_cpu, stats_wall, stats = timed(lambda: item_stats("bleu", hyps, refs))
    best = None
    for _ in range(a.rounds):
        cpu, wall, scores = timed(lambda: bootstrap("bleu", stats, b, seed=0))
        if best is None or cpu < best[0]:
            best = (cpu, wall)
    ours_cpu, ours_wall = best

    rng = np.random.default_rng(1)
    streams = [[r[0] for r in refs]]

    def reference():
        out = []
        for _ in range(a.reference_resamples):
            idx = rng.integers(0, n, n)
            out.append(sacrebleu.corpus_bleu([hyps[i] for i in idx], [[streams[0][i] for i in idx]]).score)
        return out

    ref_cpu, ref_wall, _ = timed(reference)
    per_ref = ref_cpu / a.reference_resamples
    per_ours = ours_cpu / b

    counts = resample_counts(n, a.check, seed=0)
    same = all(
        scores[k] == sacrebleu.corpus_bleu([hyps[i] for i in np.repeat(np.arange(n), counts[k])],
                                           [[streams[0][i] for i in np.repeat(np.arange(n), counts[k])]]).score
        for k in range(a.check))

    print(f"corpus: {source}; {n:,} items; BLEU (13a); one process")
    print(f"beambleu item_stats ({n:,} items, once)          {stats_cpu:8.2f} s CPU {stats_wall:8.2f} s wall")
    print(f"beambleu bootstrap ({b:,} resamples)            {ours_cpu:8.2f} s CPU {ours_wall:8.2f} s wall  "
          f"({per_ours * 1e6:.1f} us CPU per resample; best of {a.rounds})")
    print(f"sacrebleu corpus_bleu per resample ({a.reference_resamples} timed)  {ref_cpu:8.2f} s CPU {ref_wall:8.2f} s wall  "
          f"({per_ref * 1e3:.1f} ms CPU per resample; {b:,} resamples: ~{per_ref * b / 3600:.1f} h CPU)")
    print(f"ratio (CPU per resample, sacrebleu / beambleu): {per_ref / per_ours:,.0f}x; "
          f"with item_stats counted: {per_ref * b / (ours_cpu + stats_cpu):,.0f}x")
    print(f"bootstrap standard error {scores.std():.4f}, 95% interval [{np.percentile(scores, 2.5):.2f}, "
          f"{np.percentile(scores, 97.5):.2f}]; first {a.check} replicates equal sacrebleu's corpus_bleu "
          f"of the same resampled items: {same}")


if __name__ == "__main__":
    main()

"""TER speed: beambleu's kernel against sacrebleu 2.6.0, in pairs per CPU-second.

    python -m benchmarks.ter                          # 100k real pairs, 1 reference, 3 rounds
    python -m benchmarks.ter --refs 2 --normalized    # 2 references, Tercom normalisation

The pairs are the benchmark corpus's (benchmarks/corpus.py: real WMT system outputs and their
references from ../shared/corpora, else the synthetic corpus). beambleu counts all of them from
Arrow arrays (``Ter.batch_stats``, column sums); sacrebleu, which runs a few hundred pairs per
second, scores an evenly spaced subset (``--sacrebleu-pairs``) and its rate is taken as its rate
on the whole. Each side's time is the best of ``--rounds`` CPU times (process_time) in this
process; the two agree on the subset's statistics, which is checked.
"""

from __future__ import annotations

import argparse
import itertools
import time

import pyarrow as pa

from .corpus import DEFAULT_CORPORA, real_pairs, synthetic_pairs


def best_cpu(fn, rounds: int):
    """(best CPU seconds, last result) of ``rounds`` calls."""
    best, out = float("inf"), None
    for _ in range(rounds):
        t = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t)
    return best, out


def main(argv=None) -> None:
    from sacrebleu.metrics.ter import TER

    from bleu_core.metrics.ter import Ter

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--refs", type=int, default=1)
    ap.add_argument("--sacrebleu-pairs", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--normalized", action="store_true")
    ap.add_argument("--corpora", default=str(DEFAULT_CORPORA))
    args = ap.parse_args(argv)

    pairs = real_pairs(__import__("pathlib").Path(args.corpora), args.refs)
    pairs = list(itertools.islice(pairs, args.size))
    source = "real WMT pairs"
    if len(pairs) < args.size:
        pairs, source = list(itertools.islice(synthetic_pairs(args.refs), args.size)), "synthetic pairs"
    hyps, refs = [h for h, _ in pairs], [r for _, r in pairs]
    cand, ref_arr = pa.array(hyps, pa.large_string()), pa.array(refs, pa.large_list(pa.large_string()))
    ours = Ter(normalized=args.normalized)
    ours_s, totals = best_cpu(lambda: ours.batch_stats(cand, ref_arr, per_row=False), args.rounds)

    step = max(1, len(pairs) // args.sacrebleu_pairs)
    sub = list(range(0, len(pairs), step))[: args.sacrebleu_pairs]
    sub_h, sub_r = [hyps[i] for i in sub], [refs[i] for i in sub]
    streams = [list(s) for s in zip(*sub_r)]
    theirs_s, seg = best_cpu(lambda: TER(normalized=args.normalized)._extract_corpus_statistics(sub_h, streams),
                             args.rounds)
    mine = ours.batch_stats(sub_h, sub_r)
    assert [int(r[0]) for r in mine] == [s[0] for s in seg], "statistics differ from sacrebleu's"

    ours_rate, theirs_rate = len(pairs) / ours_s, len(sub) / theirs_s
    print(f"{len(pairs)} {source}, {args.refs} reference(s), normalized={args.normalized}, best of {args.rounds}")
    print(f"beambleu  {ours_s:8.3f} CPU-s for {len(pairs)} pairs: {ours_rate:10.0f} pairs/CPU-s "
          f"(TER {ours.score(totals).score:.4f})")
    print(f"sacrebleu {theirs_s:8.3f} CPU-s for {len(sub)} pairs: {theirs_rate:10.0f} pairs/CPU-s")
    print(f"ratio     {ours_rate / theirs_rate:10.1f}x (target: 100x)")


if __name__ == "__main__":
    main()

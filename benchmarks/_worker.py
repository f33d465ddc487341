"""One measurement in a process of its own (so peak RSS is that implementation's alone).

    python -m benchmarks._worker IMPL PARQUET TOKENIZE [--batch-size N] [--spm-model PATH]

TOKENIZE is BLEU's tokenizer, or ``chrf`` / ``chrf++`` / ``ter`` to measure those metrics instead.

Prints one JSON line: cpu_s (process CPU time of the scored part), wall_s, peak_rss_mb,
score, stats. For beambleu the scored part includes reading the Parquet file batch by batch;
for sacrebleu and bleuscore the corpus is first loaded into Python lists (their APIs need
it, and that load is not counted), then scored.

spBLEU (TOKENIZE flores101, flores200, spBLEU-1K or spm): beambleu reads the model given with
``--spm-model``, sacrebleu the one at its place (run it with ``SACREBLEU=<home>``); both load it
before the timing starts and report load_s and the model's model_sha256, so the caller can check
they read the same file. Two more modes split the cost: ``beambleu-encode`` (read each batch and
SentencePiece-encode its candidate and reference columns as the full path does, nothing else;
spm_s is the CPU time inside SentencePiece's own calls) and ``sacrebleu-tokenize`` (sacrebleu's
preprocessing and tokenizer alone over every line, references first as its corpus_score does).

BLEU's stage timings (a tokenizer the kernel implements): ``beambleu-normalise`` and
``beambleu-tokenize`` read each batch and hand its buffers to the kernel as the full path does,
but to ``_bleu.stages``, which only normalises (validates UTF-8, lowercases, right-strips) every
segment, or also tokenizes it (the tokenizer's passes, the split into tokens and their hashes),
and counts nothing.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import time

from .spm import SPM_NAMES


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def load_lists(path):
    import pyarrow.parquet as pq

    t = pq.read_table(path)
    return t.column("candidate").to_pylist(), t.column("references").to_pylist()


def run_beambleu(path, tokenize, batch_size, per_row=False):
    from bleu_core import Bleu
    from bleu_core.parquet import parquet_stats

    metric = Bleu(tokenize=tokenize)
    metric.tokenizer.flags()  # one-off table build, reported separately as start-up
    c0, w0 = time.process_time(), time.perf_counter()
    total = parquet_stats(path, metric, batch_size=batch_size, per_row=per_row)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    return cpu, wall, metric.score(total).score, total.tolist(), {"read_s": read_seconds(path, batch_size)}


#: BLEU's stage timings: mode -> the kernel's stop_after (``_bleu.stages``)
STAGES = {"beambleu-normalise": 1, "beambleu-tokenize": 2}


def run_beambleu_stage(path, tokenize, batch_size, stop_after):
    """Read + BLEU's kernel up to a stage: each batch's columns turned into the buffers
    bleu_core.metrics.bleu.kernel.batch_stats hands to ``_bleu.stats``, and handed with the same
    options to ``_bleu.stages``, which stops after normalising (1) or tokenizing (2)."""
    from bleu_core import Bleu
    from bleu_core.kernels.arrow import list_parts, string_buffers, to_arrow
    from bleu_core.metrics.bleu import _bleu
    from bleu_core.parquet import iter_batches

    metric = Bleu(tokenize=tokenize)
    tok = metric.tokenizer
    if tok.kernel_id is None:
        raise SystemExit(f"the stage timings measure the kernel's tokenizers only, not {tokenize}")
    flags = tok.flags()  # one-off table build, reported separately as start-up
    c0, w0 = time.process_time(), time.perf_counter()
    for batch in iter_batches(path, ["candidate", "references"], batch_size):
        cand, refs = to_arrow(batch.column("candidate"), batch.column("references"))
        child, list_offsets = list_parts(refs)
        _bleu.stages(*string_buffers(cand, "candidates"), *string_buffers(child, "references"), list_offsets,
                     tok.kernel_id, int(metric.lowercase), flags, stop_after)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    return cpu, wall, None, [], {}


def read_seconds(path, batch_size):
    """CPU seconds of reading alone (decoding the Parquet pages into Arrow batches)."""
    from bleu_core.parquet import iter_batches

    c0 = time.process_time()
    for _ in iter_batches(path, ["candidate", "references"], batch_size):
        pass
    return time.process_time() - c0


def run_sacrebleu(path, tokenize):
    from sacrebleu.metrics.bleu import BLEU

    hyps, refs = load_lists(path)
    streams = [list(s) for s in zip(*refs)]
    c0, w0 = time.process_time(), time.perf_counter()
    s = BLEU(tokenize=tokenize).corpus_score(hyps, streams)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    return cpu, wall, s.score, [s.sys_len, s.ref_len, *s.counts, *s.totals], {}


def sacrebleu_spm(tokenize):
    """sacrebleu's BLEU with a SentencePiece tokenizer, its model loaded, and what says which file it read."""
    from sacrebleu.metrics.bleu import BLEU
    from sacrebleu.tokenizers.tokenizer_spm import SPM_MODELS
    from sacrebleu.utils import SACREBLEU_DIR

    c0 = time.process_time()
    metric = BLEU(tokenize=tokenize)
    load = time.process_time() - c0
    # the path sacrebleu's TokenizerSPM loads
    with open(os.path.join(SACREBLEU_DIR, "models", os.path.basename(SPM_MODELS[tokenize]["url"])), "rb") as fh:
        sha = hashlib.sha256(fh.read()).hexdigest()
    return metric, {"load_s": load, "model_sha256": sha}


def run_sacrebleu_spm(path, tokenize):
    """sacrebleu's spBLEU, timed as :func:`run_sacrebleu` but with the model loaded before (as beambleu's is)."""
    hyps, refs = load_lists(path)
    streams = [list(s) for s in zip(*refs)]
    metric, extra = sacrebleu_spm(tokenize)
    c0, w0 = time.process_time(), time.perf_counter()
    s = metric.corpus_score(hyps, streams)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    return cpu, wall, s.score, [s.sys_len, s.ref_len, *s.counts, *s.totals], extra


def run_sacrebleu_tokenize(path, tokenize):
    """sacrebleu's preprocessing + tokenizer alone (with its line cache), over the lines corpus_score tokenizes."""
    hyps, refs = load_lists(path)
    streams = [list(s) for s in zip(*refs)]
    metric, extra = sacrebleu_spm(tokenize)
    c0, w0 = time.process_time(), time.perf_counter()
    for lines in (*streams, hyps):
        for line in lines:
            metric._preprocess_segment(line)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    return cpu, wall, None, [], extra


def beambleu_spm(tokenize, spm_model):
    """beambleu's Bleu with a SentencePiece tokenizer, its model loaded, and which file it read."""
    from bleu_core import Bleu

    metric = Bleu(tokenize=tokenize, spm_model=spm_model)
    c0 = time.process_time()
    tok = metric.tokenizer
    return metric, tok, {"load_s": time.process_time() - c0, "model_sha256": tok.model_sha256}


class TimedSentencePiece:
    """A SentencePieceProcessor that adds the CPU time of its encoding calls to ``seconds``
    (every other attribute is the processor's own): SentencePiece's share of encode_ids."""

    def __init__(self, sp):
        self.sp, self.seconds = sp, 0.0

    def _timed(self, method, *args, **kwargs):
        c0 = time.process_time()
        try:
            return getattr(self.sp, method)(*args, **kwargs)
        finally:
            self.seconds += time.process_time() - c0

    def encode(self, *args, **kwargs):
        return self._timed("encode", *args, **kwargs)

    def EncodeAsPieces(self, *args, **kwargs):
        return self._timed("EncodeAsPieces", *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.sp, name)


def run_beambleu_spm(path, tokenize, batch_size, spm_model):
    """beambleu's spBLEU over the Parquet file, as :func:`run_beambleu`, with the model loaded before."""
    from bleu_core.parquet import parquet_stats

    metric, _, extra = beambleu_spm(tokenize, spm_model)
    c0, w0 = time.process_time(), time.perf_counter()
    total = parquet_stats(path, metric, batch_size=batch_size)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    return cpu, wall, metric.score(total).score, total.tolist(), {"read_s": read_seconds(path, batch_size), **extra}


def run_beambleu_encode(path, tokenize, batch_size, spm_model):
    """Read + SentencePiece-encode only: each batch's candidate and reference columns go through
    the tokenizer exactly as in bleu_core.metrics.bleu.kernel.batch_stats (which then hands the ids to the kernel)."""
    from bleu_core.kernels.arrow import list_parts, to_arrow
    from bleu_core.parquet import iter_batches

    metric, tok, extra = beambleu_spm(tokenize, spm_model)
    tok.sp = timed = TimedSentencePiece(tok.sp)
    try:
        c0, w0 = time.process_time(), time.perf_counter()
        for batch in iter_batches(path, ["candidate", "references"], batch_size):
            cand, refs = to_arrow(batch.column("candidate"), batch.column("references"))
            child, _ = list_parts(refs)
            tok.encode_ids([cand, child], metric.lowercase)
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    finally:
        tok.sp = timed.sp
    return cpu, wall, None, [], {"spm_s": timed.seconds, **extra}


#: the chrF variants measured: name -> (char order, word order)
CHRF_VARIANTS = {"chrf": (6, 0), "chrf++": (6, 2)}


def run_beambleu_chrf(path, variant, batch_size):
    from bleu_core.metrics.chrf import Chrf
    from bleu_core.parquet import parquet_stats

    char_order, word_order = CHRF_VARIANTS[variant]
    metric = Chrf(char_order=char_order, word_order=word_order)
    c0, w0 = time.process_time(), time.perf_counter()
    total = parquet_stats(path, metric, batch_size=batch_size)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    return cpu, wall, metric.score(total).score, total.tolist(), {}


#: sacrebleu's CHRF first caches every reference's n-gram Counters (tens of GB for 1M pairs), so it
#: is run on chunks of this many pairs, summing its per-segment statistics: its own code and arithmetic
#: (the score is that of the summed statistics, as for the whole corpus), at a memory this machine has
SACREBLEU_CHRF_CHUNK = 100_000


def run_sacrebleu_chrf(path, variant):
    import pyarrow.parquet as pq
    from sacrebleu.metrics.chrf import CHRF

    char_order, word_order = CHRF_VARIANTS[variant]
    metric = CHRF(char_order=char_order, word_order=word_order)
    total, cpu, wall = None, 0.0, 0.0
    for batch in pq.ParquetFile(path).iter_batches(batch_size=SACREBLEU_CHRF_CHUNK,
                                                    columns=["candidate", "references"]):
        hyps, refs = batch.column(0).to_pylist(), batch.column(1).to_pylist()
        streams = [list(s) for s in zip(*refs)]
        c0, w0 = time.process_time(), time.perf_counter()
        seg = metric._extract_corpus_statistics(hyps, streams)
        part = [sum(col) for col in zip(*seg)]
        total = part if total is None else [a + b for a, b in zip(total, part)]
        cpu, wall = cpu + time.process_time() - c0, wall + time.perf_counter() - w0
        del seg, hyps, refs, streams
    c0 = time.process_time()
    score = metric._compute_score_from_stats(total).score
    return cpu + time.process_time() - c0, wall, score, total, {}


def run_beambleu_ter(path, batch_size):
    from bleu_core.parquet import parquet_stats
    from bleu_core.metrics.ter import Ter

    metric = Ter()
    c0, w0 = time.process_time(), time.perf_counter()
    total = parquet_stats(path, metric, batch_size=batch_size)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    return cpu, wall, metric.score(total).score, total.tolist(), {}


def run_sacrebleu_ter(path):
    import pyarrow.parquet as pq
    from sacrebleu.metrics.ter import TER

    metric = TER()
    table = pq.read_table(path, columns=["candidate", "references"])
    hyps, refs = table.column(0).to_pylist(), table.column(1).to_pylist()
    streams = [list(s) for s in zip(*refs)]
    c0, w0 = time.process_time(), time.perf_counter()
    seg = metric._extract_corpus_statistics(hyps, streams)
    score = metric._aggregate_and_compute(seg).score
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    return cpu, wall, score, [sum(s[0] for s in seg)], {}


def run_bleuscore(path, tokenize):
    import bleuscore

    hyps, refs = load_lists(path)
    c0, w0 = time.process_time(), time.perf_counter()
    s = bleuscore.compute(predictions=hyps, references=refs, max_order=4, smooth=False)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    return cpu, wall, 100 * s["bleu"], [s["translation_length"], s["reference_length"]], {}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("impl", choices=["beambleu", "beambleu-sentence", "beambleu-normalise", "beambleu-tokenize",
                                     "beambleu-encode", "sacrebleu", "sacrebleu-tokenize", "bleuscore"])
    ap.add_argument("parquet")
    ap.add_argument("tokenize", help="BLEU's tokenizer, or chrf / chrf++ / ter for those metrics")
    ap.add_argument("--batch-size", type=int, default=16384)
    ap.add_argument("--spm-model", help="beambleu's SentencePiece model file (sacrebleu's: $SACREBLEU/models)")
    a = ap.parse_args()
    if a.tokenize in SPM_NAMES:
        runs = {"beambleu": lambda: run_beambleu_spm(a.parquet, a.tokenize, a.batch_size, a.spm_model),
                "beambleu-encode": lambda: run_beambleu_encode(a.parquet, a.tokenize, a.batch_size, a.spm_model),
                "sacrebleu": lambda: run_sacrebleu_spm(a.parquet, a.tokenize),
                "sacrebleu-tokenize": lambda: run_sacrebleu_tokenize(a.parquet, a.tokenize)}
        if a.impl not in runs:
            raise SystemExit(f"{a.impl} does not measure {a.tokenize}")
        res = runs[a.impl]()
    elif a.impl in ("beambleu-encode", "sacrebleu-tokenize"):
        raise SystemExit(f"{a.impl} measures the SentencePiece tokenizers only, not {a.tokenize}")
    elif a.tokenize == "ter":
        if a.impl not in ("beambleu", "sacrebleu"):
            raise SystemExit(f"{a.impl} does not measure ter")
        res = run_sacrebleu_ter(a.parquet) if a.impl == "sacrebleu" else run_beambleu_ter(a.parquet, a.batch_size)
    elif a.tokenize in CHRF_VARIANTS:
        if a.impl == "sacrebleu":
            res = run_sacrebleu_chrf(a.parquet, a.tokenize)
        elif a.impl == "beambleu":
            res = run_beambleu_chrf(a.parquet, a.tokenize, a.batch_size)
        else:
            raise SystemExit(f"{a.impl} does not measure {a.tokenize}")
    elif a.impl == "sacrebleu":
        res = run_sacrebleu(a.parquet, a.tokenize)
    elif a.impl == "bleuscore":
        res = run_bleuscore(a.parquet, a.tokenize)
    elif a.impl in STAGES:
        res = run_beambleu_stage(a.parquet, a.tokenize, a.batch_size, STAGES[a.impl])
    else:
        res = run_beambleu(a.parquet, a.tokenize, a.batch_size, per_row=a.impl == "beambleu-sentence")
    cpu, wall, score, stats, extra = res
    print(json.dumps({"cpu_s": cpu, "wall_s": wall, "peak_rss_mb": peak_rss_mb(), "score": score, "stats": stats,
                      **extra}))


if __name__ == "__main__":
    main()

"""One implementation over one corpus, in a process of its own; run by ``benchmarks.peers``.

    python benchmarks/_peers_worker.py IMPL INPUT.json METRIC[,METRIC...]

Runs as a plain script (not ``-m``) so that it works in the peers' virtual environment, where
neither beambleu nor this package is installed; it imports nothing from the project.
INPUT.json holds ``{"hyps": [...], "refs": [[stream 1], [stream 2], ...], "tokenize": "13a"}``
(references as sacrebleu's streams). METRIC is ``bleu``, ``chrf``, ``chrf++`` or ``ter``.

Prints one JSON object: ``startup_cpu_s`` (the CPU time of the interpreter's start, read first
thing), ``import_cpu_s`` (importing the implementation), and per metric ``score``, ``cpu_s``
(time.process_time of the scoring call alone) and ``wall_s``, ``first_call_cpu_s`` (an untimed
first call on the corpus's first pair, made before the timed one: lazy imports and one-off
tables land there), ``how`` (the call and its options), or ``error`` (one line) when the
implementation cannot score that metric. Inputs an
implementation wants in another shape (token lists, per-segment reference lists) are made
before the clock starts; when that shape is sacrebleu's tokens, ``how`` says so, and the
tokenization is not in ``cpu_s``. Every metric runs once per process, so sacrebleu's
per-process tokenizer caches start cold, as in one real evaluation.
"""

import time

_T0_CPU = time.process_time()  # the interpreter's start-up, before this module did anything

import json  # noqa: E402
import sys  # noqa: E402
import traceback  # noqa: E402


def _streams_to_segments(refs):
    """sacrebleu's reference streams -> one list of references per hypothesis."""
    return [list(rs) for rs in zip(*refs)]


def _sacrebleu_tokens(tokenize, lines):
    """Token lists as sacrebleu's BLEU makes them (its tokenizer, then a split on spaces)."""
    from sacrebleu.metrics.bleu import BLEU

    tok = BLEU(tokenize=tokenize).tokenizer
    return [tok(line.rstrip()).split() for line in lines]


# ---------------------------------------------------------------- implementations
# Each maker imports its package and returns ({metric: prepare}, versions); prepare(data)
# does the untimed work and returns (call, how): call() is timed and returns the score.


def make_sacrebleu():
    import sacrebleu
    from sacrebleu.metrics import BLEU, CHRF, TER

    def bleu(d):
        return (lambda: BLEU(tokenize=d["tokenize"]).corpus_score(d["hyps"], d["refs"]).score,
                f"sacrebleu.metrics.BLEU(tokenize={d['tokenize']!r}).corpus_score")

    def chrf(order):
        def prep(d):
            return (lambda: CHRF(word_order=order).corpus_score(d["hyps"], d["refs"]).score,
                    f"sacrebleu.metrics.CHRF(word_order={order}).corpus_score")
        return prep

    def ter(d):
        return lambda: TER().corpus_score(d["hyps"], d["refs"]).score, "sacrebleu.metrics.TER().corpus_score"

    return {"bleu": bleu, "chrf": chrf(0), "chrf++": chrf(2), "ter": ter}, {"sacrebleu": sacrebleu.__version__}


def make_beambleu():
    import bleu_core
    import bleu_core.compat as bc

    def bleu(d):
        return (lambda: bc.corpus_bleu(d["hyps"], d["refs"], tokenize=d["tokenize"]).score,
                f"bleu_core.compat.corpus_bleu(tokenize={d['tokenize']!r})")

    def chrf(order):
        def prep(d):
            return (lambda: bc.corpus_chrf(d["hyps"], d["refs"], word_order=order).score,
                    f"bleu_core.compat.corpus_chrf(word_order={order})")
        return prep

    def ter(d):
        return lambda: bc.TER().corpus_score(d["hyps"], d["refs"]).score, "bleu_core.compat.TER().corpus_score"

    return {"bleu": bleu, "chrf": chrf(0), "chrf++": chrf(2), "ter": ter}, {
        "beambleu": getattr(bleu_core, "__version__", "?")}


def _torch_single_thread():
    import torch

    torch.set_num_threads(1)
    return torch


def make_torchmetrics():
    torch = _torch_single_thread()
    import torchmetrics
    from torchmetrics.text import CHRFScore, SacreBLEUScore, TranslationEditRate

    def bleu(d):
        tgt = _streams_to_segments(d["refs"])

        def run():
            m = SacreBLEUScore(n_gram=4, smooth=False, tokenize=d["tokenize"], lowercase=False)
            m.update(d["hyps"], tgt)
            return 100.0 * float(m.compute())
        return run, f"torchmetrics.text.SacreBLEUScore(tokenize={d['tokenize']!r}), update + compute"

    def chrf(order):
        def prep(d):
            tgt = _streams_to_segments(d["refs"])

            def run():
                m = CHRFScore(n_char_order=6, n_word_order=order, beta=2.0, lowercase=False, whitespace=False)
                m.update(d["hyps"], tgt)
                return 100.0 * float(m.compute())
            return run, f"torchmetrics.text.CHRFScore(n_word_order={order}), update + compute"
        return prep

    def ter(d):
        tgt = _streams_to_segments(d["refs"])

        def run():
            m = TranslationEditRate(normalize=False, no_punctuation=False, lowercase=True, asian_support=False)
            m.update(d["hyps"], tgt)
            return 100.0 * float(m.compute())
        return run, "torchmetrics.text.TranslationEditRate(lowercase=True) (sacrebleu's defaults), update + compute"

    return {"bleu": bleu, "chrf": chrf(0), "chrf++": chrf(2), "ter": ter}, {
        "torchmetrics": torchmetrics.__version__, "torch": torch.__version__}


def make_torchmetrics_bleuscore():
    torch = _torch_single_thread()
    import torchmetrics
    from torchmetrics.text import BLEUScore

    def bleu(d):
        # BLEUScore splits on whitespace: give it sacrebleu's tokens joined by spaces
        hyps = [" ".join(t) for t in _sacrebleu_tokens(d["tokenize"], d["hyps"])]
        tgt = _streams_to_segments([[" ".join(t) for t in _sacrebleu_tokens(d["tokenize"], s)] for s in d["refs"]])

        def run():
            m = BLEUScore(n_gram=4, smooth=False)
            m.update(hyps, tgt)
            return 100.0 * float(m.compute())
        return run, f"torchmetrics.text.BLEUScore() on sacrebleu's {d['tokenize']} tokens"

    return {"bleu": bleu}, {"torchmetrics": torchmetrics.__version__, "torch": torch.__version__}


def make_torcheval():
    torch = _torch_single_thread()
    import torcheval
    from torcheval.metrics.functional import bleu_score

    def bleu(d):
        hyps = [" ".join(t) for t in _sacrebleu_tokens(d["tokenize"], d["hyps"])]
        tgt = _streams_to_segments([[" ".join(t) for t in _sacrebleu_tokens(d["tokenize"], s)] for s in d["refs"]])
        return (lambda: 100.0 * float(bleu_score(hyps, tgt, n_gram=4)),
                f"torcheval.metrics.functional.bleu_score(n_gram=4) on sacrebleu's {d['tokenize']} tokens")

    return {"bleu": bleu}, {"torcheval": getattr(torcheval, "__version__", "?"), "torch": torch.__version__}


def make_ignite():
    torch = _torch_single_thread()
    import ignite
    from ignite.metrics.nlp import Bleu

    def bleu(d):
        hyps = _sacrebleu_tokens(d["tokenize"], d["hyps"])
        tgt = _streams_to_segments([_sacrebleu_tokens(d["tokenize"], s) for s in d["refs"]])

        def run():
            m = Bleu(ngram=4, smooth="no_smooth", average="micro")
            m.update((hyps, tgt))
            return 100.0 * float(m.compute())
        return run, f"ignite.metrics.nlp.Bleu(average='micro') on sacrebleu's {d['tokenize']} tokens"

    return {"bleu": bleu}, {"pytorch-ignite": ignite.__version__, "torch": torch.__version__}


def make_nltk():
    import nltk
    from nltk.translate.bleu_score import corpus_bleu

    def bleu(d):
        hyps = _sacrebleu_tokens(d["tokenize"], d["hyps"])
        tgt = _streams_to_segments([_sacrebleu_tokens(d["tokenize"], s) for s in d["refs"]])
        return (lambda: 100.0 * corpus_bleu(tgt, hyps),
                f"nltk.translate.bleu_score.corpus_bleu (no smoothing) on sacrebleu's {d['tokenize']} tokens")

    return {"bleu": bleu}, {"nltk": nltk.__version__}


def make_bleuscore():
    import bleuscore

    def bleu(d):
        if d["tokenize"] != "13a":
            raise NotImplementedError(f"13a only, no {d['tokenize']}")
        tgt = _streams_to_segments(d["refs"])
        return (lambda: 100.0 * bleuscore.compute(references=tgt, predictions=d["hyps"], max_order=4, smooth=False,
                                                  ref_len_method="closest")["bleu"],
                "bleuscore.compute(ref_len_method='closest'), its own 13a tokenizer")

    return {"bleu": bleu}, {"bleuscore": bleuscore.__version__}


def make_sacrebleu_mojo():
    import sacrebleu_mojo
    from importlib.metadata import version

    def bleu(d):
        if d["tokenize"] not in ("13a", "none"):
            raise NotImplementedError(f"13a/none only, no {d['tokenize']}")
        return (lambda: sacrebleu_mojo.corpus_bleu(d["hyps"], d["refs"], tokenize=d["tokenize"]).score,
                f"sacrebleu_mojo.corpus_bleu(tokenize={d['tokenize']!r})")

    def chrf(order):
        def prep(d):
            return (lambda: sacrebleu_mojo.corpus_chrf(d["hyps"], d["refs"], word_order=order).score,
                    f"sacrebleu_mojo.corpus_chrf(word_order={order})")
        return prep

    info = sacrebleu_mojo.backend_info() if hasattr(sacrebleu_mojo, "backend_info") else "?"
    return {"bleu": bleu, "chrf": chrf(0), "chrf++": chrf(2)}, {"sacrebleu-mojo": version("sacrebleu-mojo"),
                                                                "backend": str(info)}


def make_pyter():
    import pyter
    from importlib.metadata import version

    def ter(d):
        # sacrebleu's TER defaults: lowercase, split on whitespace; several references: the fewest
        # edits over the references, divided by the references' average length, summed over the corpus
        hyps = [h.lower().split() for h in d["hyps"]]
        segs = _streams_to_segments([[r.lower().split() for r in s] for s in d["refs"]])

        def run():
            edits = length = 0.0
            for h, rs in zip(hyps, segs):
                best = min(pyter.ter(h, r) * len(r) if r else float(len(h)) for r in rs)
                edits += best
                length += sum(len(r) for r in rs) / len(rs)
            return 100.0 * edits / length if length else 0.0
        return run, "pyter.ter per segment (lowercased, split on spaces) x reference length, summed (our wrapper)"

    return {"ter": ter}, {"pyter3": version("pyter3")}


MAKERS = {
    "sacrebleu": make_sacrebleu,
    "beambleu": make_beambleu,
    "torchmetrics": make_torchmetrics,
    "torchmetrics-BLEUScore": make_torchmetrics_bleuscore,
    "torcheval": make_torcheval,
    "ignite": make_ignite,
    "nltk": make_nltk,
    "bleuscore": make_bleuscore,
    "sacrebleu-mojo": make_sacrebleu_mojo,
    "pyter3": make_pyter,
}


def _one_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:200]


def main(argv):
    impl, path, metrics = argv[0], argv[1], argv[2].split(",")
    out = {"impl": impl, "python": sys.version.split()[0], "startup_cpu_s": _T0_CPU, "metrics": {}}
    c0 = time.process_time()
    try:
        runs, versions = MAKERS[impl]()
    except BaseException as exc:  # a peer that is missing or fails to import: one line, no crash
        out["error"] = _one_line(exc)
        print(json.dumps(out))
        return
    out["import_cpu_s"] = time.process_time() - c0
    out["versions"] = versions
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    one = dict(data, hyps=data["hyps"][:1], refs=[s[:1] for s in data["refs"]])
    for metric in metrics:
        if metric not in runs:
            continue
        try:
            # first call on the first pair alone: lazy imports, compiled tables and the like land
            # here (reported as first_call_cpu_s), not in the timed call over the corpus
            warm, _ = runs[metric](one)
            c0 = time.process_time()
            warm()
            first = time.process_time() - c0
            call, how = runs[metric](data)
            c0, w0 = time.process_time(), time.perf_counter()
            score = call()
            cpu, wall = time.process_time() - c0, time.perf_counter() - w0
            out["metrics"][metric] = {"score": score, "cpu_s": cpu, "wall_s": wall, "first_call_cpu_s": first,
                                      "how": how}
        except BaseException as exc:
            out["metrics"][metric] = {"error": _one_line(exc)}
            traceback.print_exc(file=sys.stderr)
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1:])

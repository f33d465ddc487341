"""The metrics' command-line options, with sacrebleu's flag names and defaults (shared by
``beambleu score`` and ``beambleu run``).

``--metrics`` picks metrics by id; each metric has one argument group and one constructor call
here (``_METRICS``). Options are validated once, by the metric's constructor: a value it refuses
is a :class:`~beambleu.errors.UsageError`. Metrics are computed and reported in sacrebleu's order
(sorted by name), whatever the order on the command line.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import replace

from .errors import UsageError


def _add_bleu(p, run: bool) -> None:
    from bleu_core.score import SMOOTH_DEFAULTS
    from bleu_core.tokenizers import TOKENIZERS

    g = p.add_argument_group("BLEU options (as in sacrebleu)")
    g.add_argument("--tokenize", "-tok", choices=TOKENIZERS, default=None,
                   help="tokenization method (default: 13a; as in sacrebleu, zh, ja-mecab or ko-mecab when -l "
                        "names that target language); ja-mecab/ko-mecab need the ja/ko extras; flores101, "
                        "flores200, spBLEU-1K and spm (old name of flores101) are spBLEU's SentencePiece "
                        "tokenizers and need the spm extra")
    g.add_argument("--spm-model", default=None, metavar="PATH",
                   help="the SentencePiece model file of those tokenizers: a path, or a gs:// or s3:// URL "
                        "(default: sacrebleu's, $SACREBLEU/models/<file>, downloaded there when missing; "
                        "not a sacrebleu flag)")
    g.add_argument("--lowercase", "-lc", action="store_true", help="case-insensitive BLEU")
    g.add_argument("--smooth-method", "-s", choices=list(SMOOTH_DEFAULTS), default="exp",
                   help="smoothing: exp (default), floor, add-k or none")
    g.add_argument("--smooth-value", "-sv", type=float, default=None,
                   help=f"value for floor (default {SMOOTH_DEFAULTS['floor']}) and add-k "
                        f"(default {SMOOTH_DEFAULTS['add-k']})")
    g.add_argument("--force", action="store_true",
                   help="do not warn about input that looks tokenized (100+ lines ending in ' .')")
    g.add_argument("--max-ngram-order", type=int, default=4, metavar="N",
                   help="highest n-gram order (default: %(default)s; not a sacrebleu flag)")
    g.add_argument("--effective-order", action="store_true",
                   help="leave out orders with no n-grams from the mean" + (
                       " (per-pair scores of --sentence-output always use it)" if run else
                       " (on with --sentence-level)"))


def _bleu(args):
    from bleu_core import Bleu

    from bleu_core.tokenizers import default_tokenizer
    from bleu_core.tokenizers.tokenizer_spm import is_url, local_path

    from .testsets import trg_lang

    tokenize = args.tokenize or default_tokenizer(trg_lang(args) if getattr(args, "langpair", None) else None)
    spm_model = args.spm_model
    if spm_model and not is_url(spm_model):  # the same file for workers started elsewhere ("" is refused below)
        spm_model = os.path.abspath(local_path(spm_model))
    return Bleu(tokenize=tokenize, lowercase=args.lowercase, smooth_method=args.smooth_method,
                smooth_value=args.smooth_value, max_ngram_order=args.max_ngram_order,
                effective_order=args.effective_order or getattr(args, "sentence_level", False),
                spm_model=spm_model)


def _add_chrf(p, run: bool) -> None:
    g = p.add_argument_group("chrF options (as in sacrebleu; chrF++ is --chrf-word-order 2)")
    g.add_argument("--chrf-char-order", "-cc", type=int, default=6, metavar="N",
                   help="character n-gram order (default: %(default)s)")
    g.add_argument("--chrf-word-order", "-cw", type=int, default=0, metavar="N",
                   help="word n-gram order (default: %(default)s; 2 is chrF++)")
    g.add_argument("--chrf-beta", type=int, default=2, metavar="BETA",
                   help="weight of recall against precision (default: %(default)s)")
    g.add_argument("--chrf-whitespace", action="store_true", help="keep whitespace in character n-grams")
    g.add_argument("--chrf-lowercase", action="store_true", help="case-insensitive chrF")
    g.add_argument("--chrf-eps-smoothing", action="store_true",
                   help="eps smoothing of chrF++.py, NLTK and Moses instead of sacrebleu's effective order")


def _chrf(args):
    from bleu_core.chrf import Chrf

    return Chrf(char_order=args.chrf_char_order, word_order=args.chrf_word_order, beta=args.chrf_beta,
                lowercase=args.chrf_lowercase, whitespace=args.chrf_whitespace,
                eps_smoothing=args.chrf_eps_smoothing)


#: id -> (add its options, make it from the parsed options)
_METRICS = {"bleu": (_add_bleu, _bleu), "chrf": (_add_chrf, _chrf)}
METRIC_IDS = tuple(_METRICS)


def _metric_list(text: str):
    ids = [t.strip().lower() for t in text.split(",")]
    bad = [i for i in ids if i not in _METRICS]
    if bad or not ids:
        raise argparse.ArgumentTypeError(f"unknown metric {bad[0] if bad else text!r} (choose from "
                                         f"{', '.join(METRIC_IDS)}, comma-separated)")
    return ids


def _add_ter(p) -> None:
    g = p.add_argument_group("TER options (sacrebleu's; accepted and ignored: beambleu has no TER yet)")
    for flag in ("--ter-case-sensitive", "--ter-asian-support", "--ter-no-punct", "--ter-normalized"):
        g.add_argument(flag, action="store_true", help="ignored")


def add_metric_arguments(p, run: bool = False) -> None:
    """``--metrics`` and every metric's options (``score`` also accepts sacrebleu's TER flags,
    ignored as sacrebleu ignores the flags of a metric that is not selected)."""
    if run:
        p.add_argument("--metrics", type=_metric_list, default=["bleu"], metavar="M[,M...]",
                       help=f"metrics computed in the same pass: {', '.join(METRIC_IDS)} (default: bleu)")
    else:
        p.add_argument("--metrics", "-m", nargs="+", choices=METRIC_IDS, default=["bleu"], metavar="METRIC",
                       help=f"metrics to compute: {', '.join(METRIC_IDS)} (default: bleu)")
    for add, _ in _METRICS.values():
        add(p, run)
    if not run:
        _add_ter(p)


def metrics_from_args(args, before_load=None):
    """The :class:`~bleu_core.protocol.MetricSet` the options ask for, in sacrebleu's order, each
    metric made and loaded (a missing MeCab extra fails here, before any input is read). A
    SentencePiece model is found (or downloaded) here too, and its path fixed in the metric, so
    that every worker reads the file the driver found; a model that cannot be had is ModelError.

    ``before_load(models)``, when given, is called once every metric is made (so bad options are
    usage errors first) and before any is loaded, with the ``spm_model`` paths the metrics name
    (``run`` checks that an object store holding one answers)."""
    from bleu_core.protocol import MetricSet
    from bleu_core.tokenizers.tokenizer_spm import ModelError

    ids = sorted(set(args.metrics), key=str.upper)
    made = []
    for i in ids:
        try:
            made.append(_METRICS[i][1](args))
        except (ValueError, TypeError, RuntimeError) as exc:
            raise UsageError(str(exc)) from None
    if before_load is not None:
        before_load([m.spm_model for m in made if getattr(m, "spm_model", None)])
    metrics = []
    for metric in made:
        try:
            metric.load()
            model = metric.resources().get("spm_model")
            if model is not None and metric.spm_model is None:
                metric = replace(metric, spm_model=model["path"])
        except ModelError:
            raise
        except (ValueError, TypeError, RuntimeError) as exc:
            raise UsageError(str(exc)) from None
        metrics.append(metric)
    return MetricSet(metrics)

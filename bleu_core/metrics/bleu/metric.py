"""BLEU's public API: ``Bleu`` (a configured metric), ``corpus_bleu`` and ``sentence_bleu``."""

from __future__ import annotations

import os
from collections.abc import Sequence

from ...kernels import use_reference
from ...protocol import Metric, Option, Stat, nrefs_label, reference_batch_stats
from ...records import record, replace
from ...tokenizers import TOKENIZERS, check_spm_model, check_tokenizer_name, default_tokenizer, get_tokenizer
from ...tokenizers.tokenizer_spm import is_url, local_path
from .kernel import batch_stats, batch_stats_many
from .reference import BleuStats, scalar_stats
from .score import (SMOOTH_DEFAULTS, BleuScore, BleuSignature, bleu_of_checked, check_order, check_smoothing,
                    check_stats, check_weights, stat_names)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (start-up)
if TYPE_CHECKING:  # numpy, pyarrow and the resampling arithmetic are imported by the functions that need them
    from typing import Iterable, List, Optional, Tuple

    import numpy as np
    import pyarrow as pa

    from .resampling import BleuArithmetic

__all__ = ["Bleu", "corpus_bleu", "sentence_bleu"]


@record(frozen=True)
class Bleu(Metric):
    """BLEU with its options fixed: extracts statistics, scores them, names the signature
    (a :class:`bleu_core.protocol.Metric`).

    Options and defaults are sacrebleu's ``BLEU``'s; ``weights`` (per-order weights of the
    geometric mean, uniform when ``None``) is our addition, and so is ``spm_model``: the model file
    (a path, or a ``gs://``/``s3://`` URL) of the SentencePiece tokenizers ``flores101``,
    ``flores200``, ``spBLEU-1K`` and ``spm``, by default the one sacrebleu uses.
    """

    id = "bleu"
    plain_buffers = True  # its kernels write into bleu_core.kernels.buffers.new_out
    #: BLEU's group-table columns keep the names they always had (``score``, ``bp``, ...)
    counter = ("candidate_tokens", 0)
    option_group = "BLEU options (as in sacrebleu)"
    options = (
        # None: chosen from -l's target language (see from_options); sacrebleu's BLEU keeps no such attribute
        Option("tokenize", str, None, "--tokenize", "-tok", choices=TOKENIZERS, compat=False,
               help="tokenization method (default: 13a; as in sacrebleu, zh, ja-mecab or ko-mecab when -l "
                    "names that target language); ja-mecab/ko-mecab need the ja/ko extras; flores101, "
                    "flores200, spBLEU-1K and spm (old name of flores101) are spBLEU's SentencePiece "
                    "tokenizers and need the spm extra",
               label="Tokenizer",
               template_help="sacrebleu tokenizer: 13a (default), intl, zh, char, none, ja-mecab, ko-mecab (these "
                             "two need the ja/ko extras in the image), or spBLEU's flores101, flores200, spBLEU-1K, "
                             "spm (SentencePiece; give spm_model); auto: each row's from the target language of "
                             "langpair_column (zh, ja-mecab, ko-mecab, else 13a), as sacrebleu -l.",
               template_regex="^(13a|intl|zh|char|none|ja-mecab|ko-mecab|flores101|flores200|spBLEU-1K|spm|auto)$"),
        Option("spm_model", str, None, "--spm-model", metavar="PATH", compat=False,
               help="the SentencePiece model file of those tokenizers: a path, or a gs:// or s3:// URL "
                    "(default: sacrebleu's, $SACREBLEU/models/<file>, downloaded there when missing; "
                    "not a sacrebleu flag)",
               label="SentencePiece model",
               template_help="The model file of the SentencePiece tokenizers, as a gs:// path the workers can read "
                             "(e.g. gs://bucket/models/flores200sacrebleuspm): the workers have no sacrebleu cache "
                             "to find it in.",
               template_regex="^gs://[^/]+/.+$"),
        Option("lowercase", bool, False, "--lowercase", "-lc", help="case-insensitive BLEU",
               label="Lowercase", template_help="true for case-insensitive BLEU (sacrebleu -lc)."),
        Option("smooth_method", str, "exp", "--smooth-method", "-s", choices=list(SMOOTH_DEFAULTS),
               help="smoothing: exp (default), floor, add-k or none",
               label="Smoothing", template_help="exp (default), floor, add-k or none, as in sacrebleu.",
               template_regex="^(exp|floor|add-k|none)$"),
        Option("smooth_value", float, None, "--smooth-value", "-sv",
               help=f"value for floor (default {SMOOTH_DEFAULTS['floor']}) and add-k "
                    f"(default {SMOOTH_DEFAULTS['add-k']})",
               label="Smoothing value",
               template_help=f"Value for floor (default {SMOOTH_DEFAULTS['floor']}) and add-k "
                             f"(default {SMOOTH_DEFAULTS['add-k']})."),
        # not a keyword of Bleu: the command line's warning about tokenized input
        Option("force", bool, False, "--force", keyword=False,
               help="do not warn about input that looks tokenized (100+ lines ending in ' .')",
               label="Force", template_help="true: do not warn about input that looks tokenized."),
        Option("max_ngram_order", int, 4, "--max-ngram-order", metavar="N",
               help="highest n-gram order (default: %(default)s; not a sacrebleu flag)",
               label="Maximum n-gram order", template_help="Highest n-gram order (default: 4).",
               template_regex="^[1-9][0-9]*$"),
        Option("effective_order", bool, False, "--effective-order",
               help="leave out orders with no n-grams from the mean (on with --sentence-level)",
               run_help="leave out orders with no n-grams from the mean (per-pair scores of --sentence-output "
                        "always use it)",
               label="Effective order",
               template_help="true: leave out orders with no n-grams from the geometric mean."),
    )

    tokenize: str = "13a"
    lowercase: bool = False
    smooth_method: str = "exp"
    smooth_value: Optional[float] = None
    max_ngram_order: int = 4
    effective_order: bool = False
    weights: Optional[Tuple[float, ...]] = None
    spm_model: Optional[str] = None

    def __post_init__(self):
        check_tokenizer_name(self.tokenize)
        check_spm_model(self.tokenize, self.spm_model)
        if not isinstance(self.lowercase, bool):
            raise TypeError(f"lowercase must be a bool, got {type(self.lowercase).__name__}")
        if not isinstance(self.effective_order, bool):
            raise TypeError(f"effective_order must be a bool, got {type(self.effective_order).__name__}")
        check_smoothing(self.smooth_method, self.smooth_value)
        check_order(self.max_ngram_order)
        object.__setattr__(self, "weights", check_weights(self.weights, self.max_ngram_order))

    @classmethod
    def from_options(cls, options: dict, context) -> "Bleu":
        """BLEU of the command line's options, with sacrebleu's context rules: no ``--tokenize``
        is the target language's tokenizer (zh, ja-mecab, ko-mecab, else 13a); ``-sl`` turns
        effective order on; a local ``--spm-model`` is made absolute, so that workers started
        elsewhere read the same file (``""`` is left for the constructor to refuse)."""
        options = dict(options)
        if options.get("tokenize") is None:
            options["tokenize"] = default_tokenizer(context.target_language)
        spm_model = options.get("spm_model")
        if spm_model and not is_url(spm_model):
            options["spm_model"] = os.path.abspath(local_path(spm_model))
        options["effective_order"] = options.get("effective_order", False) or context.sentence_level
        return cls(**options)

    @property
    def tokenizer(self):
        return get_tokenizer(self.tokenize, self.spm_model)

    def load(self) -> None:
        self.tokenizer  # MeCab tokenizers need their extra and dictionary, SentencePiece its model

    def named_files(self) -> List[str]:
        return [self.spm_model] if self.spm_model else []

    def loaded(self) -> "Bleu":
        """Loaded, with the SentencePiece model found in sacrebleu's cache (or downloaded there)
        named in ``spm_model`` when none was given."""
        self.load()
        model = self.resources().get("spm_model")
        if model is not None and self.spm_model is None:
            return replace(self, spm_model=model["path"])
        return self

    def resources(self) -> dict:
        """``{"spm_model": {"tokenizer", "path", "sha256"}}`` for a SentencePiece tokenizer: the
        signature says ``tok:flores200`` whatever the model file, its SHA-256 tells them apart."""
        tok = self.tokenizer
        if not hasattr(tok, "model_sha256"):
            return {}
        return {"spm_model": {"tokenizer": self.tokenize, "path": tok.model_path, "sha256": tok.model_sha256}}

    @property
    def name(self) -> str:
        return "BLEU"

    @property
    def width(self) -> int:
        return 2 + 2 * self.max_ngram_order

    def stat_names(self) -> List[str]:
        return stat_names(self.max_ngram_order)

    def check_stats(self, vector) -> np.ndarray:
        import numpy as np

        return np.array(check_stats(vector, self.max_ngram_order), dtype=np.int64)

    def sentence_metric(self) -> "Bleu":
        """Per-pair scores use effective order, as ``sacrebleu -sl`` and ``sentence_bleu`` do."""
        return self if self.effective_order else replace(self, effective_order=True)

    def sacrebleu_arithmetic(self) -> BleuArithmetic:
        """How sacrebleu's resampling holds and scores these statistics (``resampling.py``)."""
        from .resampling import BleuArithmetic

        return BleuArithmetic(self)

    def table_columns(self) -> List[Tuple[str, pa.DataType, object]]:
        import pyarrow as pa  # the group table's types: `beambleu run` only

        order = self.max_ngram_order  # statistics: [sys_len, ref_len, counts_1..N, totals_1..N]
        cols = [("score", pa.float64(), "score"), ("bp", pa.float64(), "bp"), ("ratio", pa.float64(), "ratio"),
                ("sys_len", pa.int64(), Stat(0)), ("ref_len", pa.int64(), Stat(1)),
                ("signature", pa.string(), "signature")]
        for n in range(order):
            cols += [(f"counts_{n + 1}", pa.int64(), Stat(2 + n)), (f"totals_{n + 1}", pa.int64(), Stat(2 + order + n)),
                     (f"precision_{n + 1}", pa.float64(), ("precisions", n))]
        return cols

    # -- statistics ------------------------------------------------------------------------

    def batch_stats(self, candidates, references, per_row: bool = True) -> np.ndarray:
        """Statistics of one batch with the vectorised kernel (see :func:`bleu_core.metrics.bleu.kernel.batch_stats`),
        or with :meth:`scalar_stats` under ``BEAMBLEU_KERNELS=python`` (:mod:`bleu_core.kernels`)."""
        if use_reference():
            tok = self.tokenizer  # the tokenizers the kernel does not run check the whole batch's UTF-8 first
            return reference_batch_stats(self, candidates, references, per_row,
                                         utf8_first=hasattr(tok, "encode_ids") or tok.kernel_id is None)
        return batch_stats(
            candidates,
            references,
            tokenize=self.tokenize,
            lowercase=self.lowercase,
            max_ngram_order=self.max_ngram_order,
            per_row=per_row,
            spm_model=self.spm_model,
        )

    def batch_stats_many(self, systems, references, per_row: bool = True) -> List[np.ndarray]:
        """Each system's :meth:`batch_stats`, the references tokenized once per row for all of them
        (see :func:`bleu_core.metrics.bleu.kernel.batch_stats_many`); under ``BEAMBLEU_KERNELS=python``,
        :meth:`batch_stats` system by system."""
        if use_reference():
            return super().batch_stats_many(systems, references, per_row=per_row)
        return batch_stats_many(systems, references, tokenize=self.tokenize, lowercase=self.lowercase,
                                max_ngram_order=self.max_ngram_order, per_row=per_row, spm_model=self.spm_model)

    def scalar_stats(self, candidates, references) -> np.ndarray:
        """Statistics with the readable one-pair-at-a-time reference path."""
        return scalar_stats(
            candidates, references, tokenizer=self.tokenizer, lowercase=self.lowercase, max_order=self.max_ngram_order
        )[0]

    def corpus_stats(self, candidates: Iterable[str], references: Iterable[Sequence[Optional[str]]]):
        """Summed statistics (:class:`BleuStats`) and the set of reference counts, streamed."""
        total, nrefs = super().corpus_stats(candidates, references)
        return BleuStats(total), nrefs

    # -- scores ----------------------------------------------------------------------------

    def signature(self, nrefs, n_bootstrap=None, seed=None) -> BleuSignature:
        return BleuSignature(
            nrefs=nrefs_label(nrefs),
            tokenizer_signature=self.tokenizer.signature(),
            lowercase=self.lowercase,
            effective_order=self.effective_order,
            smooth_method=self.smooth_method,
            smooth_value=self.smooth_value,
            max_ngram_order=self.max_ngram_order,
            weights=self.weights,
            n_bootstrap=n_bootstrap,
            seed=seed,
        )

    def score(self, stats, nrefs=None, n_bootstrap=None, seed=None) -> BleuScore:
        """Score a statistics vector (BleuStats, or a sequence validated as ``BleuStats`` does);
        ``nrefs`` fills the signature (with ``bs:``/``seed:`` when ``n_bootstrap`` is given)."""
        # the options were checked when the metric was made; the statistics are checked here, once
        values = stats.vector.tolist() if isinstance(stats, BleuStats) else check_stats(stats)
        order = (len(values) - 2) // 2
        if order != self.max_ngram_order:
            raise ValueError(f"stats are for max_ngram_order={order}, the metric uses {self.max_ngram_order}")
        sig = None if nrefs is None else self.signature(nrefs, n_bootstrap, seed)
        return bleu_of_checked(values, order, self.smooth_method, self.smooth_value, self.effective_order,
                               self.weights, None).sign(sig)



def corpus_bleu(
    candidates: Iterable[str],
    references: Iterable[Sequence[Optional[str]]],
    *,
    tokenize: str = "13a",
    lowercase: bool = False,
    smooth_method: str = "exp",
    smooth_value: Optional[float] = None,
    max_ngram_order: int = 4,
    effective_order: bool = False,
    weights: Optional[Sequence[float]] = None,
    spm_model: Optional[str] = None,
) -> BleuScore:
    """Corpus BLEU, equal to sacrebleu 2.6.0's ``BLEU(...).corpus_score``.

    ``references[i]`` is the list of references of ``candidates[i]``; ``None`` marks a missing
    reference, ``""`` is a real empty one. Statistics are summed over the corpus, and the
    brevity penalty and geometric mean are applied once, to the sums.
    """
    metric = Bleu(tokenize, lowercase, smooth_method, smooth_value, max_ngram_order, effective_order,
                  None if weights is None else tuple(weights), spm_model)
    return metric.corpus_score(candidates, references)


def sentence_bleu(candidate: str, references: Sequence[Optional[str]], *, effective_order: bool = True,
                  **options) -> BleuScore:
    """BLEU of one candidate against its references; ``options`` as for :func:`corpus_bleu`.

    Like ``sacrebleu.sentence_bleu``, effective order is on by default; with the same options
    the result equals sacrebleu's ``BLEU(...).sentence_score``.
    """
    if not isinstance(candidate, str):
        raise TypeError(f"candidate must be a str, got {type(candidate).__name__}")
    if isinstance(references, str) or not isinstance(references, Sequence):
        raise TypeError("references must be a list of reference strings")
    return corpus_bleu([candidate], [references], effective_order=effective_order, **options)

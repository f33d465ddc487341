"""Build the C kernels; everything else is declared in pyproject.toml.

Each metric's kernel sits in its folder (``bleu_core/metrics/<id>/_<id>.c``); the headers the
kernels share are in ``bleu_core/kernels/`` (Arrow buffers, UTF-8 text, decoded code points, statuses)."""

from setuptools import Extension, setup

COMPILE_ARGS = ["-O3", "-std=c99", "-Wall", "-Wextra"]
HEADERS = "bleu_core/kernels"
# chrF picks the best reference by an F score computed in C, and TER's band follows floor(i * (m / n))
# in doubles: no FMA contraction, so their doubles are bit-identical to Python's arithmetic
EXACT_DOUBLES = ["-ffp-contract=off"]


def kernel(module: str, *, headers=("_buffers.h", "_text.h"), extra=()) -> Extension:
    """The extension ``module`` (``bleu_core.metrics.bleu._bleu``) from its one C file beside its Python."""
    return Extension(
        module,
        sources=[module.replace(".", "/") + ".c"],
        depends=[f"{HEADERS}/{h}" for h in headers],
        include_dirs=[HEADERS],
        extra_compile_args=COMPILE_ARGS + list(extra),
    )


setup(
    ext_modules=[
        # BLEU: its tokenizer passes and n-gram counting, of text and of token ids (spBLEU)
        kernel("bleu_core.metrics.bleu._bleu", headers=("_buffers.h", "_text.h", "_status.h")),
        kernel("bleu_core.metrics.chrf._chrf", headers=("_buffers.h", "_text.h", "_cps.h", "_status.h"),
               extra=EXACT_DOUBLES),
        kernel("bleu_core.metrics.ter._ter", headers=("_buffers.h", "_text.h", "_cps.h", "_status.h"),
               extra=EXACT_DOUBLES),
        # the Poisson bootstrap and the randomization test's swaps, for every metric's statistics
        kernel("bleu_core.resampling._resample", headers=("_buffers.h",)),
        # SentencePiece's ids of a batch as int32 values and int64 offsets
        kernel("bleu_core.tokenizers._spm_ids", headers=()),
    ]
)

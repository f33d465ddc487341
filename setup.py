"""Build the C kernels; everything else is declared in pyproject.toml."""

from setuptools import Extension, setup

COMPILE_ARGS = ["-O3", "-std=c99", "-Wall", "-Wextra"]

setup(
    ext_modules=[
        # BLEU: its tokenizer passes and n-gram counting, of text and of token ids (spBLEU)
        Extension(
            "bleu_core._bleu",
            sources=["bleu_core/_bleu.c"],
            depends=["bleu_core/_buffers.h", "bleu_core/_text.h"],
            extra_compile_args=COMPILE_ARGS,
        ),
        # chrF picks the best reference by an F score computed in C: no FMA contraction, so the
        # doubles are bit-identical to sacrebleu's Python arithmetic
        Extension(
            "bleu_core._chrf",
            sources=["bleu_core/_chrf.c"],
            depends=["bleu_core/_buffers.h", "bleu_core/_text.h", "bleu_core/_cps.h"],
            extra_compile_args=COMPILE_ARGS + ["-ffp-contract=off"],
        ),
        # the Poisson bootstrap and the randomization test's swaps, for every metric's statistics
        Extension(
            "bleu_core._resample",
            sources=["bleu_core/_resample.c"],
            depends=["bleu_core/_buffers.h"],
            extra_compile_args=COMPILE_ARGS,
        ),
        # SentencePiece's ids of a batch as int32 values and int64 offsets
        Extension(
            "bleu_core.tokenizers._spm_ids",
            sources=["bleu_core/tokenizers/_spm_ids.c"],
            extra_compile_args=COMPILE_ARGS,
        ),
        # TER's band follows floor(i * (m / n)) in doubles: no FMA contraction, so it is Python's
        Extension(
            "bleu_core._ter",
            sources=["bleu_core/_ter.c"],
            depends=["bleu_core/_buffers.h", "bleu_core/_text.h", "bleu_core/_cps.h"],
            extra_compile_args=COMPILE_ARGS + ["-ffp-contract=off"],
        ),
    ]
)

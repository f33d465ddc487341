"""Build the C kernels; everything else is declared in pyproject.toml."""

from setuptools import Extension, setup

COMPILE_ARGS = ["-O3", "-std=c99", "-Wall", "-Wextra"]

setup(
    ext_modules=[
        Extension(
            "bleu_core._kernel",
            sources=["bleu_core/_kernel.c"],
            depends=["bleu_core/_text.h"],
            extra_compile_args=COMPILE_ARGS,
        ),
        # chrF picks the best reference by an F score computed in C: no FMA contraction, so the
        # doubles are bit-identical to sacrebleu's Python arithmetic
        Extension(
            "bleu_core._chrf",
            sources=["bleu_core/_chrf.c"],
            depends=["bleu_core/_text.h"],
            extra_compile_args=COMPILE_ARGS + ["-ffp-contract=off"],
        ),
    ]
)

"""Build the C kernel; everything else is declared in pyproject.toml."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "bleu_core._kernel",
            sources=["bleu_core/_kernel.c"],
            extra_compile_args=["-O3", "-std=c99", "-Wall", "-Wextra"],
        )
    ]
)

"""beambleu's version: the one place it is written (the package, the signatures and ``--version``
read it here; pyproject.toml's ``version`` must equal it, which tests/test_packaging.py checks)."""

__all__ = ["__version__"]

__version__ = "0.1.0"

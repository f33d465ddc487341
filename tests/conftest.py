from .oracle import corpora  # noqa: F401  (fixture)

from .oracle import corpora, spm_dir, spm_home  # noqa: F401  (fixtures)

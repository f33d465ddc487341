"""What every kernel binding shares: the Arrow marshalling (:mod:`bleu_core.kernels.arrow`) and the
C headers (``_buffers.h``: Arrow buffers; ``_text.h``: UTF-8 and whitespace; ``_cps.h``: decoded
code points)."""

__all__: list = []

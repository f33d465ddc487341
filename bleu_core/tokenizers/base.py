"""The tokenizer interface.

Each tokenizer has two forms:

* a scalar form, ``tokenizer(line) -> str``, a line-by-line mirror of sacrebleu 2.6.0's
  tokenizer of the same name (the reference path, easy to read and to compare);
* a batch form, used by :mod:`bleu_core.metrics.bleu.kernel`, one of three: ``kernel_id`` (the C kernel runs
  the tokenizer itself, with the Unicode ``flags`` table when it needs one); ``encode_ids``
  (SentencePiece: the whole batch becomes token ids, which the kernel counts); or, for the other
  tokenizers the kernel does not implement (MeCab), ``kernel_id = None`` and the batch path calls
  the scalar form per segment and hands the kernel already tokenized text.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Optional


__all__ = ["Tokenizer"]


class Tokenizer:
    #: registry name, e.g. ``"13a"``
    name: str = ""
    #: id understood by ``bleu_core.metrics.bleu._bleu`` or ``None``
    kernel_id: Optional[int] = None

    def signature(self) -> str:
        """The value of ``tok:`` in the signature (sacrebleu's ``tokenizer.signature()``)."""
        return self.name

    def flags(self):
        """The Unicode flag table the kernel needs, or ``None``."""
        return None

    def __call__(self, line: str) -> str:  # pragma: no cover - interface
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<tokenizer {self.name}>"

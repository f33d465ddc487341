"""``char``: every character is a token (sacrebleu's ``TokenizerChar``)."""

from .base import Tokenizer

__all__ = ["TokenizerChar"]


class TokenizerChar(Tokenizer):
    name = "char"
    kernel_id = 4

    def __call__(self, line: str) -> str:
        return " ".join(char for char in line)

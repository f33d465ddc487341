"""``none``: no tokenization; tokens are the whitespace-separated words."""

from .base import Tokenizer

__all__ = ["NoneTokenizer"]


class NoneTokenizer(Tokenizer):
    name = "none"
    kernel_id = 0

    def __call__(self, line: str) -> str:
        return line

"""``13a``: the mteval-v13a tokenizer, sacrebleu's default (``tokenizer_13a.py`` + ``tokenizer_re.py``)."""

import re

from .base import Tokenizer

__all__ = ["Tokenizer13a", "regexp_post_tokenize"]

# sacrebleu's TokenizerRegexp, applied in this order (shared with ``zh``)
_REGEXPS = (
    # language-dependent part (assuming Western languages)
    (re.compile(r"([\{-\~\[-\` -\&\(-\+\:-\@\/])"), r" \1 "),
    # tokenize period and comma unless preceded by a digit
    (re.compile(r"([^0-9])([\.,])"), r"\1 \2 "),
    # tokenize period and comma unless followed by a digit
    (re.compile(r"([\.,])([^0-9])"), r" \1 \2"),
    # tokenize dash when preceded by a digit
    (re.compile(r"([0-9])(-)"), r"\1 \2 "),
)


def regexp_post_tokenize(line: str) -> str:
    """sacrebleu's ``TokenizerRegexp.__call__``."""
    for regexp, repl in _REGEXPS:
        line = regexp.sub(repl, line)
    return " ".join(line.split())


class Tokenizer13a(Tokenizer):
    name = "13a"
    kernel_id = 1

    def __call__(self, line: str) -> str:
        line = line.replace("<skipped>", "")
        line = line.replace("-\n", "")
        line = line.replace("\n", " ")
        if "&" in line:
            line = line.replace("&quot;", '"')
            line = line.replace("&amp;", "&")
            line = line.replace("&lt;", "<")
            line = line.replace("&gt;", ">")
        return regexp_post_tokenize(f" {line} ")

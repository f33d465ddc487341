"""``beambleu run -tok auto``: BLEU whose tokenizer is chosen per pair from the target language of
the pair's language pair (a column, ``--langpair-column``), as sacrebleu's ``-l`` chooses it
(``SRC-TRG``: the target is ``split('-')[1]``; zh -> zh, ja -> ja-mecab, ko -> ko-mecab, else 13a).

The statistics stay a sum: :class:`AutoBleu`'s vector is BLEU's ``[c, r, matches_1..N,
totals_1..N]`` followed by one pair count per tokenizer of :data:`AUTO_TOKENIZERS` (a pair counts 1
under its own tokenizer), so a group's totals know which tokenizers made them. Its score is BLEU's
of the first part, and its signature's ``tok:`` is the tokenizer's own (sacrebleu's spelling:
``13a``, ``zh``, ``ja-mecab-0.996-IPA``, ``ko-mecab-0.996/ko-0.9.2-KO``) when all of a group's
pairs used one, else ``mixed(A+B...)`` naming each (in :data:`AUTO_TOKENIZERS` order): a score over
several tokenizers is no score sacrebleu can give, and its signature says so.

The count stage (:class:`beambleu.beam.count.BatchToStats`) splits a batch by tokenizer and counts
each part with :meth:`AutoBleu.for_tokenizer`; MeCab tokenizers are loaded only when a row needs
them. chrF and TER have no tokenizer choice: ``-tok auto`` changes BLEU only, as sacrebleu's ``-l``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import List, Optional, Sequence, Tuple

import numpy as np
import pyarrow as pa

from bleu_core.metrics.bleu import Bleu
from bleu_core.metrics.bleu.score import BleuScore
from bleu_core.protocol import Metric
from bleu_core.tokenizers import DEFAULT_TOKENIZER, LANGUAGE_TOKENIZERS, get_tokenizer

__all__ = ["AUTO", "AUTO_TOKENIZERS", "AutoBleu", "AutoBleuScore", "langpair_problem", "target_tokenizer",
           "tokenizer_codes"]

#: the value of ``--tokenize`` that asks for it
AUTO = "auto"
#: the tokenizers ``-tok auto`` can choose, in the order of the statistics' pair counts
AUTO_TOKENIZERS: Tuple[str, ...] = (DEFAULT_TOKENIZER, *dict.fromkeys(LANGUAGE_TOKENIZERS.values()))


def langpair_problem(value) -> Optional[str]:
    """Why ``value`` is not a usable language pair (``SRC-TRG``, as sacrebleu's ``-l`` takes it, and
    a name a folder can have: ``--mtme-output`` writes one per pair), or None."""
    if value is None:
        return "the language pair is null"
    if not isinstance(value, str):
        return f"the language pair must be text, found {value!r}"
    if len(value.split("-")) < 2:
        return f"{value!r} is not a language pair SRC-TRG (e.g. en-de)"
    if value in (".", "..") or any(c.isspace() or c in "/\\\0" for c in value):
        return f"{value!r}: a language pair cannot hold whitespace, '/', '\\\\' or NUL"
    return None


def target_tokenizer(langpair: str) -> str:
    """sacrebleu's BLEU tokenizer for ``-l langpair`` (``langpair`` checked by :func:`langpair_problem`)."""
    return LANGUAGE_TOKENIZERS.get(langpair.split("-")[1], DEFAULT_TOKENIZER)


def tokenizer_codes(column) -> Tuple[np.ndarray, Optional[Tuple[int, str]]]:
    """Each row's index in :data:`AUTO_TOKENIZERS` (int64) from a string column of language pairs,
    and the first bad row with its reason (then the codes are not to be used), else None. Each
    distinct value is looked at once."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if not pa.types.is_dictionary(column.type):
        column = column.dictionary_encode()
    values = column.dictionary.to_pylist()
    lookup = np.empty(len(values) + 1, dtype=np.int64)
    bad_entry = np.zeros(len(values) + 1, dtype=bool)
    reasons = []
    for i, v in enumerate(values):
        problem = langpair_problem(v)
        reasons.append(problem)
        bad_entry[i] = problem is not None
        lookup[i] = 0 if problem else AUTO_TOKENIZERS.index(target_tokenizer(v))
    bad_entry[-1], lookup[-1] = True, 0  # a null row
    indices = np.asarray(column.indices.fill_null(len(values)), dtype=np.int64)
    bad = np.flatnonzero(bad_entry[indices])
    if len(bad):
        row = int(bad[0])
        entry = indices[row]
        return lookup[indices], (row, "the language pair is null" if entry == len(values) else reasons[entry])
    return lookup[indices], None


@dataclass
class AutoBleuScore(BleuScore):
    """A BLEU score whose signature's ``tok:`` comes from the statistics (the tokenizers its pairs
    used): signing it sets that field of the signature object."""

    tokenizer_label: str = AUTO

    def sign(self, signature) -> "AutoBleuScore":
        if signature is not None:
            signature.update("tok", self.tokenizer_label)
        return super().sign(signature)


@dataclass(frozen=True)
class AutoBleu(Metric):
    """BLEU with a tokenizer per pair (see the module doc): ``base`` holds every other option
    (its ``tokenize`` is not used); ``fixed`` is the tokenizer of the rows an instance counts (the
    count stage's :meth:`for_tokenizer`), None for the instance that scores totals."""

    base: Bleu
    fixed: Optional[str] = None

    id = "bleu"
    counter = ("candidate_tokens", 0)

    def __post_init__(self):
        if self.fixed is not None and self.fixed not in AUTO_TOKENIZERS:
            raise ValueError(f"-tok auto chooses among {', '.join(AUTO_TOKENIZERS)}, not {self.fixed!r}")
        object.__setattr__(self, "_bleu", replace(self.base, tokenize=self.fixed or DEFAULT_TOKENIZER))

    @property
    def column_prefix(self) -> str:
        return self.base.column_prefix

    @property
    def name(self) -> str:
        return self.base.name

    @property
    def width(self) -> int:
        return self.base.width + len(AUTO_TOKENIZERS)

    def stat_names(self) -> List[str]:
        return self.base.stat_names() + [f"pairs_tok_{t}" for t in AUTO_TOKENIZERS]

    def for_tokenizer(self, name: str) -> "AutoBleu":
        """The instance that counts rows whose tokenizer is ``name``."""
        return replace(self, fixed=name)

    def load(self) -> None:
        self._bleu.load()  # the scoring instance: 13a; a counting one: its tokenizer (MeCab's extra)

    def resources(self) -> dict:
        return {}

    # -- statistics ------------------------------------------------------------------------

    def _counted(self, stats: np.ndarray, n: int, per_row: bool) -> np.ndarray:
        if self.fixed is None:
            raise RuntimeError("-tok auto: the rows' tokenizer is not known here (use for_tokenizer)")
        k = AUTO_TOKENIZERS.index(self.fixed)
        if per_row:
            extra = np.zeros((stats.shape[0], len(AUTO_TOKENIZERS)), dtype=np.int64)
            extra[:, k] = 1
            return np.concatenate([stats, extra], axis=1)
        extra = np.zeros(len(AUTO_TOKENIZERS), dtype=np.int64)
        extra[k] = n
        return np.concatenate([stats, extra])

    def batch_stats(self, candidates, references, per_row: bool = True) -> np.ndarray:
        return self._counted(self._bleu.batch_stats(candidates, references, per_row=per_row), len(candidates),
                             per_row)

    def batch_stats_many(self, systems, references, per_row: bool = True) -> List[np.ndarray]:
        systems = list(systems)
        parts = self._bleu.batch_stats_many(systems, references, per_row=per_row)
        return [self._counted(p, len(s), per_row) for p, s in zip(parts, systems)]

    def scalar_stats(self, candidates, references) -> np.ndarray:
        return self._counted(np.asarray(self._bleu.scalar_stats(candidates, references), dtype=np.int64),
                             len(candidates), True)

    def check_stats(self, vector) -> np.ndarray:
        vector = np.asarray(vector)
        w = self.base.width
        if vector.shape != (self.width,):
            raise ValueError(f"expected {self.width} statistics (BLEU's and a pair count per tokenizer), "
                             f"got shape {vector.shape}")
        counts = vector[w:]
        if np.any(counts < 0):
            raise ValueError(f"statistics are counts, got pair counts {counts.tolist()}")
        return np.concatenate([self.base.check_stats(vector[:w]), counts.astype(np.int64)])

    # -- scores ----------------------------------------------------------------------------

    def tokenizer_label(self, counts: Sequence[int]) -> str:
        """The signature's ``tok:`` for a group whose pairs per tokenizer are ``counts``."""
        used = [get_tokenizer(t).signature() for t, n in zip(AUTO_TOKENIZERS, counts) if n]
        if not used:
            return AUTO
        return used[0] if len(used) == 1 else f"mixed({'+'.join(used)})"

    def signature(self, nrefs, n_bootstrap=None, seed=None):
        """BLEU's signature with ``tok:auto``: the score, which knows its pairs, sets the tokenizer."""
        sig = self.base.signature(nrefs, n_bootstrap, seed)
        sig.update("tok", AUTO)
        return sig

    def score(self, stats, nrefs=None, n_bootstrap=None, seed=None) -> AutoBleuScore:
        values = np.asarray(stats, dtype=np.int64)
        w = self.base.width
        plain = self.base.score(values[:w])
        score = AutoBleuScore(**{f.name: getattr(plain, f.name) for f in fields(BleuScore)},
                              tokenizer_label=self.tokenizer_label(values[w:].tolist()))
        return score.sign(None if nrefs is None else self.signature(nrefs, n_bootstrap, seed))

    def sentence_metric(self) -> "AutoBleu":
        return replace(self, base=self.base.sentence_metric())

    def table_columns(self):
        return self.base.table_columns()  # BLEU's statistics come first: the same Stat indices

    def pair_column_names(self) -> List[str]:
        return self.base.pair_column_names()

    def pair_columns(self, rows: np.ndarray) -> dict:
        return self.base.pair_columns(np.asarray(rows)[:, :self.base.width])

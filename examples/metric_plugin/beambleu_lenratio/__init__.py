"""``lenratio``: a toy beambleu metric, the candidates' length as a percentage of the references'.

Per pair the statistics are two integers: ``hyp_len``, the candidate's whitespace tokens
(``len(text.split())``), and ``ref_len``, the tokens of the pair's first reference that is not
missing (with ``shortest=True``, ``--lenratio-shortest``: of its shortest reference instead).
They add over pairs, and the score of a sum is ``100 * hyp_len / ref_len`` (0 when ``ref_len`` is
0). The same function scores a sentence, a group and the corpus.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import List, Optional

import numpy as np
import pyarrow as pa

from bleu_core.errors import BatchInputError
from bleu_core.protocol import Metric, Score, Stat, nrefs_label
from bleu_core.registry import Option
from bleu_core.signature import SignatureFields

__version__ = "0.1.0"


def _texts(values) -> list:
    """A list of Python values from an Arrow array or a sequence."""
    return values.to_pylist() if hasattr(values, "to_pylist") else list(values)


@dataclass(frozen=True)
class LenRatio(Metric):
    """Candidate tokens per 100 reference tokens (see the module documentation)."""

    shortest: bool = False

    id = "lenratio"
    column_prefix = "lenratio_"
    option_group = "length ratio options (the beambleu-lenratio plugin)"
    options = (
        Option("shortest", bool, False, "--lenratio-shortest",
               help="count the tokens of the shortest reference instead of the first",
               label="Length ratio: shortest reference",
               template_help="true: the length ratio counts the shortest reference instead of the first."),
    )

    def __post_init__(self):
        if not isinstance(self.shortest, bool):
            raise TypeError(f"shortest must be a bool, got {type(self.shortest).__name__}")

    @property
    def name(self) -> str:
        return "LenRatio"

    @property
    def width(self) -> int:
        return 2

    def stat_names(self) -> List[str]:
        return ["hyp_len", "ref_len"]

    def pair_stats(self, candidate: str, references) -> List[int]:
        """``[hyp_len, ref_len]`` of one pair (``None`` references are missing)."""
        lengths = [len(r.split()) for r in references if r is not None]
        return [len(candidate.split()), min(lengths) if self.shortest else lengths[0]]

    def batch_stats(self, candidates, references, per_row: bool = True) -> np.ndarray:
        rows = []
        for i, (hyp, refs) in enumerate(zip(_texts(candidates), _texts(references))):
            if hyp is None:
                raise BatchInputError(i, "candidate", "null candidate")
            if refs is None or all(r is None for r in refs):
                raise BatchInputError(i, "references", "no reference (all references are missing)")
            rows.append(self.pair_stats(hyp, refs))
        stats = np.array(rows, dtype=np.int64).reshape(len(rows), 2)
        return stats if per_row else stats.sum(axis=0)

    def scalar_stats(self, candidates, references) -> np.ndarray:
        return self.batch_stats(candidates, references)

    def check_stats(self, vector) -> np.ndarray:
        values = list(vector.tolist() if hasattr(vector, "tolist") else vector)
        if len(values) != 2:
            raise ValueError(f"LenRatio statistics are 2 integers, got {len(values)}")
        for name, x in zip(self.stat_names(), values):
            if isinstance(x, bool) or not isinstance(x, int):
                raise TypeError(f"LenRatio statistics are integers, got {name} = {x!r}")
            if not 0 <= x <= 2**63 - 1:
                raise ValueError(f"LenRatio statistics are between 0 and 2**63 - 1, got {name} = {x}")
        return np.array(values, dtype=np.int64)

    def signature(self, nrefs, n_bootstrap: Optional[int] = None, seed: Optional[int] = None) -> "LenRatioSignature":
        return LenRatioSignature(self, nrefs, n_bootstrap, seed)

    def score(self, stats, nrefs=None, n_bootstrap: Optional[int] = None, seed: Optional[int] = None):
        hyp_len, ref_len = self.check_stats(stats).tolist()
        sig = None if nrefs is None else self.signature(nrefs, n_bootstrap, seed)
        return LenRatioScore(100 * hyp_len / ref_len if ref_len else 0.0, hyp_len, ref_len).sign(sig)

    def table_columns(self):
        return [("score", pa.float64(), "score"), ("signature", pa.string(), operator.methodcaller("get", "signature")),
                ("hyp_len", pa.int64(), Stat(0)), ("ref_len", pa.int64(), Stat(1))]  # statistics: from the totals


class LenRatioSignature(SignatureFields):
    """``nrefs:1|ref:first|version:beambleu_lenratio-0.1.0`` (``bs``/``seed`` after ``nrefs`` when bootstrapping)."""

    ABBR = {**SignatureFields.ABBR, "ref": "r"}

    def __init__(self, metric: LenRatio, nrefs, n_bootstrap=None, seed=None):
        super().__init__(nrefs_label(nrefs), n_bootstrap, seed, version=f"beambleu_lenratio-{__version__}",
                         ref="shortest" if metric.shortest else "first")


@dataclass
class LenRatioScore(Score):
    """A length ratio (percent) and the two sums it came from. beambleu formats it: the text line
    ``LenRatio|<signature> = 77.78 (hyp_len = 7 ref_len = 9)`` and the JSON object come from
    ``name``, ``score``, the signature, :attr:`verbose_score` and :meth:`stat_fields`."""

    score: float
    hyp_len: int
    ref_len: int
    signature: Optional[str] = None

    name = "LenRatio"

    @property
    def verbose_score(self) -> str:
        return f"(hyp_len = {self.hyp_len} ref_len = {self.ref_len})"

    def stat_fields(self) -> dict:
        return {"hyp_len": self.hyp_len, "ref_len": self.ref_len}

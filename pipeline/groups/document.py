"""The shape of ``beambleu run``'s result objects, for the modules that write and read them (no
scoring here): a group's (or the corpus') JSON object is one metric's fields, or with several
metrics ``{"n_pairs", "scores": [one object per metric]}``; a scored part keeps each group's
object in :data:`JSON_COLUMN`."""

from __future__ import annotations

from typing import Dict, List

__all__ = ["JSON_COLUMN", "score_parts"]

#: the JSON object of a group, in a part (a string column)
JSON_COLUMN = "__json__"


def score_parts(doc: Dict) -> List[Dict]:
    """The per-metric objects of a group's (or the corpus') JSON object."""
    return doc["scores"] if isinstance(doc, dict) and "scores" in doc else [doc]

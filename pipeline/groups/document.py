"""The shape of ``beambleu run``'s result objects, for the modules that write and read them (no
scoring here): a group's (or the corpus') JSON object is ``{"group_by", "key", "n_pairs",
"scores": [one object per metric]}`` whatever the number of metrics (the result document's
:data:`FORMAT_VERSION` 2; version 1, which beambleu 0.1 wrote, put a lone metric's fields in the
group itself, and is still read); a scored part keeps each group's object in :data:`JSON_COLUMN`.
:data:`SCHEMA` is the path of the document's JSON Schema (``result.schema.json``, shipped with the package)."""

from __future__ import annotations

import os
from typing import Dict, List

__all__ = ["FORMAT_VERSION", "JSON_COLUMN", "SCHEMA", "score_parts"]

#: the result document's ``format_version``
FORMAT_VERSION = 2
#: the path of the result document's JSON Schema
SCHEMA = os.path.join(os.path.dirname(__file__), "result.schema.json")

#: the JSON object of a group, in a part (a string column)
JSON_COLUMN = "__json__"


def score_parts(doc: Dict) -> List[Dict]:
    """The per-metric objects of a group's (or the corpus') JSON object (of either format version)."""
    return doc["scores"] if isinstance(doc, dict) and "scores" in doc else [doc]

"""``beambleu run --mtme-output DIR``: the scores as google-research/mt-metrics-eval's metric score
files, which its ``EvalSet.AddMetricsFromDir`` and ``ReadScoreFile`` (``mt_metrics_eval/data.py``)
read:

* ``DIR/<langpair>/<METRIC>-<ref>.sys.score``: one line ``system<TAB>score`` per system, the
  score of the (language pair, system) group (the corpus score of that system's pairs, with the
  run's options), systems in canonical key order;
* ``DIR/<langpair>/<METRIC>-<ref>.seg.score`` (with ``--sentence-output``): for each system, in the
  same order, one line ``system<TAB>score`` per segment, its per-pair sentence score (BLEU's with
  effective order, as ``sacrebleu -sl``), the segments in ``--id-column`` order when that column
  holds integers, else in input order (file path, row); every system of a language pair must have
  the same segments (mt-metrics-eval reads the n-th line of each block as the n-th segment).

``<METRIC>`` is the metric's name as sacrebleu prints it (``BLEU``, ``chrF2``, ``chrF2++``,
``TER``); ``<ref>`` is ``--mtme-ref`` (mt-metrics-eval's ``NAME-REF`` convention: reference names
joined by ``.``, or ``all``; no ``-``). The language pair comes from ``--langpair-column``, the
system from ``--system-column`` (long input) or the candidate column (wide input). Scores are
written with Python's ``repr`` (read back by ``float`` to the same value). The directory is an
output like the others: staged, with a manifest listing every file, committed with them.
"""

from __future__ import annotations

import json
import os
from typing import Dict, List, Optional, Sequence, Tuple

import pyarrow as pa

from ..groups.document import score_parts
from . import ownership
from .input_errors import PipelineInputError

__all__ = ["MANIFEST_KIND", "add_system_scores", "file_name", "grouping_set", "ref_problem", "score_text",
           "segment_blocks", "system_lines", "write_directory"]

MANIFEST_KIND = "mtme-output"


def ref_problem(ref: str) -> Optional[str]:
    """Why ``ref`` cannot be the REF of mt-metrics-eval's ``NAME-REF`` file names, or None."""
    names = ref.split(".")
    if not ref or any(not n for n in names):
        return f"--mtme-ref {ref!r}: reference names joined by '.' (e.g. refA or refA.refB), or all"
    if any(c == "-" or c == "/" or c == "\\" or c.isspace() for c in ref):
        return f"--mtme-ref {ref!r}: mt-metrics-eval's reference names cannot hold '-', '/', '\\\\' or whitespace"
    if "src" in names and names != ["src"]:
        return f"--mtme-ref {ref!r}: src is mt-metrics-eval's name for no reference"
    return None


def file_name(metric_name: str, ref: str, level: str) -> str:
    """``<METRIC>-<ref>.<level>.score``, as ``data.MakeMetricName`` and ``ParseMetricFilename`` spell it."""
    return f"{metric_name}-{ref}.{level}.score"


def grouping_set(group_by: Sequence[Sequence[str]], columns: Sequence[str]) -> Optional[int]:
    """The index of the grouping set of exactly the (language pair, system) columns."""
    want = set(columns)
    return next((g for g, gs in enumerate(group_by) if set(gs) == want and len(gs) == len(want)), None)


def score_text(value: float) -> str:
    return repr(float(value))


def _name(value) -> str:
    return str(value)


def add_system_scores(out: Dict, texts: Sequence[str], columns: Sequence[str]) -> None:
    """Add the scores of the (language pair, system) groups' JSON objects ``texts`` (in canonical
    key order) to ``out``: ``{language pair: [(system, [(metric name, score)])]}``."""
    langpair, system = columns
    for text in texts:
        d = json.loads(text)
        scores = [(part["name"], part["score"]) for part in score_parts(d)]
        out.setdefault(d["key"][langpair], []).append((_name(d["key"][system]), scores))


def system_lines(systems: Sequence[Tuple[str, Sequence[Tuple[str, float]]]]) -> Dict[str, str]:
    """``{metric name: the .sys.score file's text}`` of one language pair's systems."""
    files: Dict[str, List[str]] = {}
    for system, scores in systems:
        for name, score in scores:
            files.setdefault(name, []).append(f"{system}\t{score_text(score)}\n")
    return {name: "".join(lines) for name, lines in files.items()}


def segment_blocks(table: pa.Table, langpair: str, system: str, order: Sequence[str], score_columns: Dict[str, str],
                   id_column: Optional[str] = None) -> Dict[str, Dict[str, str]]:
    """``{language pair: {metric name: the .seg.score file's text}}`` from per-pair rows (columns
    ``langpair``, ``system``, the ``order`` columns and each metric's score column
    ``score_columns[name]``): per language pair, each system's block of its segments in ``order``,
    systems in sorted order. Bad input when the systems of a pair do not have the same segments."""
    if table.num_rows == 0:
        return {}
    table = table.sort_by([(langpair, "ascending"), (system, "ascending"), *((c, "ascending") for c in order)])
    lps = table.column(langpair).to_pylist()
    systems = [_name(v) for v in table.column(system).to_pylist()]
    ids = table.column(id_column).to_pylist() if id_column else None
    scores = {name: table.column(col).to_pylist() for name, col in score_columns.items()}
    out: Dict[str, Dict[str, List[str]]] = {}
    start, n = 0, table.num_rows
    blocks: Dict[str, List[Tuple[str, int, int]]] = {}
    while start < n:  # runs of one (language pair, system)
        end = start + 1
        while end < n and lps[end] == lps[start] and systems[end] == systems[start]:
            end += 1
        blocks.setdefault(lps[start], []).append((systems[start], start, end))
        start = end
    for lp, runs in blocks.items():
        first_system, a0, b0 = runs[0]
        for sys_name, a, b in runs[1:]:
            if b - a != b0 - a0 or (ids is not None and ids[a:b] != ids[a0:b0]):
                what = (f"{b - a} segments, {first_system!r} has {b0 - a0}" if b - a != b0 - a0 else
                        f"other segments (--id-column {id_column!r}) than {first_system!r}")
                raise PipelineInputError(f"--mtme-output: in language pair {lp!r}, system {sys_name!r} has {what}: "
                                         "mt-metrics-eval's .seg.score files need the same segments for every system")
        files = out.setdefault(lp, {})
        for name, values in scores.items():
            files[name] = "".join(f"{s}\t{score_text(values[i])}\n" for s, a, b in runs for i in range(a, b))
    return out


def _read_pairs(paths: Sequence[str], columns: Sequence[str]) -> pa.Table:
    import pyarrow.parquet as pq
    from apache_beam.io.filesystems import FileSystems

    tables = []
    for path in sorted(set(paths)):
        with FileSystems.open(path, compression_type="uncompressed") as fh:
            t = pq.read_table(fh, columns=list(columns))
        tables.append(pa.table([_plain(c) for c in t.columns], names=t.column_names))
    return pa.concat_tables(tables, promote_options="permissive") if tables else None


def _plain(col):
    """A column with dictionaries decoded and strings as large_string (the parts agree on types)."""
    t = col.type
    if pa.types.is_dictionary(t):
        col, t = col.cast(t.value_type), t.value_type
    if pa.types.is_string(t):
        col = col.cast(pa.large_string())
    return col


def _write_text(path: str, text: str) -> None:
    from apache_beam.io.filesystems import FileSystems

    if not ownership.is_url(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
    with FileSystems.create(path, compression_type="uncompressed") as fh:
        fh.write(text.encode("utf-8"))


def write_directory(directory: str, system_scores: Dict, ref: str, columns: Sequence[str], spec, metrics,
                    sentence_parts: Optional[Sequence[str]] = None) -> List[str]:
    """Write the staged ``--mtme-output`` directory: every language pair's ``.sys.score`` files
    (``system_scores``: see :func:`add_system_scores`) and, given the per-pair parts, its
    ``.seg.score`` files; then the manifest listing them. Returns the files' relative paths."""
    from apache_beam.io.filesystems import FileSystems

    if FileSystems.exists(directory):  # what a failed attempt of the final step left
        ownership.remove_tree(directory)
    FileSystems.mkdirs(directory)
    files: Dict[str, str] = {}
    for lp, systems in system_scores.items():
        for name, text in system_lines(systems).items():
            files[f"{lp}/{file_name(name, ref, 'sys')}"] = text
    if sentence_parts is not None and metrics is not None:
        langpair, system = columns
        order = [spec.id_column] if spec.id_column and _integer_ids(sentence_parts, spec.id_column) else ["file", "row"]
        score_columns = {m.name: m.column_prefix + "score" for m in metrics}
        wanted = list(dict.fromkeys([langpair, system, *order, *score_columns.values()]))
        table = _read_pairs(sentence_parts, wanted)
        if table is not None:
            segs = segment_blocks(table, langpair, system, order, score_columns,
                                  id_column=spec.id_column if order == [spec.id_column] else None)
            for lp, texts in segs.items():
                for name, text in texts.items():
                    files[f"{lp}/{file_name(name, ref, 'seg')}"] = text
    for rel, text in files.items():
        _write_text(ownership.join(directory, rel), text)
    ownership.write_manifest(directory, sorted(files), {"kind": MANIFEST_KIND, "ref": ref,
                                                        "langpair_column": columns[0], "system_column": columns[1]})
    return sorted(files)


def _integer_ids(paths: Sequence[str], column: str) -> bool:
    import pyarrow.parquet as pq
    from apache_beam.io.filesystems import FileSystems

    for path in paths[:1]:
        with FileSystems.open(path, compression_type="uncompressed") as fh:
            t = pq.read_schema(fh).field(column).type
            return pa.types.is_integer(t)
    return False

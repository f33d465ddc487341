"""beambleu as a component of a user's own Beam pipeline: :class:`Score`, one composite transform
from pairs to typed results, with :class:`ReadPairs` and :class:`WriteResults` beside it.

::

    import apache_beam as beam
    import beambleu

    with beam.Pipeline() as p:
        rows = p | beam.io.ReadFromParquet("pairs/*.parquet")          # dicts
        results = rows | beambleu.Score(metrics=["bleu", "chrf"], group_by=["system"])
        results | beambleu.WriteResults("result.json")

:class:`Score` takes a PCollection of rows (dicts, or ``beam.Row`` s as Beam SQL and Beam YAML give
them) with a candidate, its references and any group columns, or of Arrow record batches (what
``ReadFromParquetBatched`` and :class:`ReadPairs` give). It counts each metric's sufficient
statistics per batch, sums them with the same commutative CombineFn as ``beambleu run`` (per
grouping set and shard), scores each group's totals once, and returns one :class:`ScoreResult`
per (grouping set, key, metric): a ``typing.NamedTuple``, so a Beam schema, which Beam SQL,
dataframes and YAML consume. The numbers are ``beambleu run``'s (a test runs both). What the
component leaves to the command: the group table and per-pair outputs, and the scale tricks of
its final step (``run`` writes sorted Parquet parts and streams its document; :class:`WriteResults`
gathers the results on one worker, fine for thousands of groups, not for millions).
"""

from __future__ import annotations

import json
from typing import Dict, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Union

import apache_beam as beam
import pyarrow as pa

from bleu_core import registry
from bleu_core.protocol import CommandLine, Metric, MetricSet
from bleu_core.resampling import counter as bs

from ..groups import accumulate as acc_ops
from ..groups.document import FORMAT_VERSION
from ..groups.results import BOOTSTRAP, RANDOMIZATION, Significance, group_doc
from ..io.inputs import InputSpec, plan
from ..io.outputs import check_segments
from .combine import ComputeMetrics
from .pairing import CheckSegments, none_last
from .read import ReadPairs as ReadPlanned
from .score import scored_groups

__all__ = ["ReadPairs", "Score", "ScoreResult", "WriteResults", "make_metrics"]

#: the paired tests' default number of approximate randomization trials (sacrebleu's)
_AR_TRIALS = 10_000


class ScoreResult(NamedTuple):
    """One metric's score of one group (or of the corpus: ``group_by`` and ``key`` empty).

    ``key`` holds the group's values in ``group_by`` 's order as text (``None`` for a null), so
    that every result has one schema; ``statistics`` maps each statistic's name (as in the group
    table, without the metric's prefix) to its total; ``fields`` is the JSON object ``beambleu run``
    writes for this metric and group (every field, e.g. BLEU's ``precisions``), ``group_fields`` the
    group's own fields there (``key`` with its values' types)."""

    group_by: Sequence[str]
    key: Sequence[Optional[str]]
    metric: str  # sacrebleu's name: BLEU, chrF2, chrF2++, TER
    metric_id: str  # bleu, chrf, ter
    score: float
    signature: str
    verbose_score: str
    n_pairs: int
    nrefs: Optional[int]  # null when the pairs' reference counts vary (the signature's nrefs:var)
    statistics: Mapping[str, int]
    confidence_mean: Optional[float]
    confidence_low: Optional[float]
    confidence_high: Optional[float]
    baseline: Optional[str]
    p_value: Optional[float]
    difference: Optional[float]
    fields: str  # the metric's JSON object in run's document
    group_fields: str  # the group's own JSON fields there: group_by, key (values typed), n_pairs, baseline...


# a schema'd type: encoded as a Beam Row, which Beam SQL, dataframes and YAML read
beam.coders.registry.register_coder(ScoreResult, beam.coders.RowCoder)


def make_metrics(metrics: Iterable[Union[str, Metric]], options: Optional[Mapping[str, Mapping]] = None) -> MetricSet:
    """A :class:`MetricSet` from ids (built with their declared defaults and ``options[id]``, e.g.
    ``{"bleu": {"tokenize": "intl"}}``; the options are the metric class's keywords) or
    :class:`~bleu_core.protocol.Metric` objects, in the order given."""
    options = dict(options or {})
    made = []
    for m in metrics:
        if isinstance(m, Metric):
            made.append(m)
            continue
        cls = registry.get(str(m).lower())
        kw = {opt.name: opt.default for opt in cls.options if opt.keyword}
        unknown = set(options.get(cls.id, {})) - set(kw)
        if unknown:
            raise ValueError(f"{cls.id}: unknown option(s) {', '.join(sorted(unknown))} (its options: "
                             f"{', '.join(sorted(kw))})")
        kw.update(options.get(cls.id, {}))
        made.append(cls.from_options(kw, CommandLine()))
    unused = set(options) - {m.id for m in made}
    if unused:
        raise ValueError(f"options for {', '.join(sorted(unused))}, which is not among the metrics")
    if not made:
        raise ValueError("no metric given")
    return MetricSet(made)


def _grouping_sets(group_by) -> tuple:
    """``group_by`` as grouping sets: a string is one set (``"system,domain"``); a list holds sets,
    each a string or a list of column names (``["system", ["system", "domain"]]``: two sets)."""
    if not group_by:
        return ()
    if isinstance(group_by, str):
        group_by = [group_by]
    sets = []
    for gs in group_by:
        cols = tuple(c.strip() for c in gs.split(",")) if isinstance(gs, str) else tuple(gs)
        if not cols or any(not c for c in cols) or len(set(cols)) != len(cols):
            raise ValueError(f"group_by: bad grouping set {gs!r}")
        sets.append(cols)
    return tuple(dict.fromkeys(sets))


def _rows_to_batches(rows: List, columns: List[str], reference_columns: bool):
    """A bundle's rows (dicts or ``beam.Row`` s) as one record batch of the columns the job reads;
    record batches, tables and (source, first row, batch) triples pass through."""
    passed, plain = [], []
    for r in rows:
        if isinstance(r, (pa.RecordBatch, pa.Table, tuple)) and not hasattr(r, "_fields"):
            passed.append(r)
        else:
            plain.append(r)
    yield from passed
    if not plain:
        return
    data = {}
    for c in columns:
        values = [r.get(c) if isinstance(r, dict) else getattr(r, c, None) for r in plain]
        data[c] = [None if v is None else list(v) for v in values] if c == "references" and not reference_columns \
            else values
    yield ("<rows>", 0, pa.RecordBatch.from_pydict(data))


class _Results(beam.DoFn):
    """((grouping set, shard), combined table) -> one :class:`ScoreResult` per group and metric."""

    def __init__(self, metrics: MetricSet, spec: InputSpec, sig: Significance):
        self.metrics, self.spec, self.sig = metrics, spec, sig

    def process(self, element):
        (g, _), table = element
        if g == -1:
            acc = table.accs[0]
            yield from self._results({"group_by": [], "key": {}, **group_doc(self.metrics, acc, self.sig)}, acc)
            return
        system = "system" if self.spec.wide else self.sig.system_column
        for chunk in scored_groups(self.metrics, self.spec.group_by[g], table, self.sig, system):
            for doc, acc in chunk:
                yield from self._results(doc, acc)

    def _results(self, doc: Dict, acc):
        stats = self.metrics.split(acc_ops.stats_of(acc, self.metrics.width))
        key = [None if doc["key"][c] is None else str(doc["key"][c]) for c in doc["group_by"]]
        baseline = doc.get("baseline")
        for metric, part, vector in zip(self.metrics, doc["scores"], stats):
            names = [n[len(metric.column_prefix):] for n in metric.pair_column_names()[:-1]]
            yield ScoreResult(
                group_by=list(doc["group_by"]), key=key, metric=part["name"], metric_id=metric.id,
                score=float(part["score"]), signature=part["signature"], verbose_score=part.get("verbose_score", ""),
                n_pairs=int(doc["n_pairs"]), nrefs=part.get("nrefs"),
                statistics={n: int(v) for n, v in zip(names, vector.tolist())},
                confidence_mean=part.get("confidence_mean"), confidence_low=part.get("confidence_low"),
                confidence_high=part.get("confidence_high"), baseline=None if baseline is None else str(baseline),
                p_value=part.get("p_value"), difference=part.get("difference"),
                fields=json.dumps(part, ensure_ascii=False),
                group_fields=json.dumps({k: v for k, v in doc.items() if k != "scores"}, ensure_ascii=False))


def _check_pairing(reports, sig, spec) -> None:
    check_segments(sig, spec, reports)


class Score(beam.PTransform):
    """Pairs -> one :class:`ScoreResult` per (grouping set, key, metric), the corpus included.

    ``metrics``: ids (``"bleu"``, ``"chrf"``, ``"ter"``, a plugin's) or metric objects
    (``bleu_core.Bleu(tokenize="intl")``), with ``metric_options`` for ids (``{"chrf": {"word_order":
    2}}``); ``group_by``: grouping sets, as ``run --group-by`` (``["system", "system,domain"]``);
    the columns: ``candidate_column``, ``references_column`` (a list of strings per row) or
    ``reference_columns`` (one string column per reference), ``id_column``; ``confidence`` (with
    ``confidence_n`` Poisson bootstrap replicates), ``paired_bs`` or ``paired_ar`` against
    ``baseline`` (a value of ``system_column``; long format needs ``id_column``), ``seed``;
    ``null_candidate``: ``"error"`` or ``"empty"``. Bad input fails the pipeline with one line
    naming the row and column (a :class:`beambleu.io.inputs.PipelineInputError`): with
    :class:`ReadPairs` ' batches the file and its row (counted from 0, as ``beambleu run`` does);
    rows of a PCollection have no number, so ``<rows>`` and the row's place in its bundle."""

    def __init__(self, metrics: Sequence[Union[str, Metric]] = ("bleu",), group_by=(), *,
                 candidate_column: str = "candidate", references_column: str = "references",
                 reference_columns: Optional[Sequence[str]] = None, id_column: Optional[str] = None,
                 confidence: bool = False, confidence_n: int = bs.DEFAULT_N, paired_bs: bool = False,
                 paired_ar: bool = False, paired_n: Optional[int] = None, baseline=None,
                 system_column: str = "system", seed: int = 12345, null_candidate: str = "error",
                 batch_size: int = 16384, metric_options: Optional[Mapping[str, Mapping]] = None,
                 label: Optional[str] = None):
        super().__init__(label)
        if isinstance(metrics, (str, Metric)):
            metrics = [metrics]
        self.metrics = make_metrics(metrics, metric_options)
        if paired_bs and paired_ar:
            raise ValueError("paired_bs and paired_ar: one paired test at a time")
        if (paired_bs or paired_ar) and baseline is None:
            raise ValueError("a paired test needs a baseline")
        if (paired_bs or paired_ar) and not id_column:
            raise ValueError("a paired test needs id_column: the segment id, the same for every system")
        if null_candidate not in ("error", "empty"):
            raise ValueError(f"null_candidate: 'error' or 'empty', not {null_candidate!r}")
        group_by = _grouping_sets(group_by)
        if (paired_bs or paired_ar) and not any(system_column in gs for gs in group_by):
            raise ValueError(f"a paired test needs a grouping set with system_column {system_column!r}")
        bs.check_seed(seed)
        width = self.metrics.width
        if paired_ar:
            n = bs.check_replicates(paired_n or _AR_TRIALS, width, _AR_TRIALS)
            self.sig = Significance(n_boot=n, seed=seed, paired=True, baseline=baseline,
                                    system_column=system_column, method=RANDOMIZATION, seed_label=str(seed))
        else:
            n = paired_n or bs.DEFAULT_N if paired_bs else (confidence_n if confidence else 0)
            n = bs.check_replicates(n, width, bs.DEFAULT_N) if n else 0
            self.sig = Significance(n_boot=n, seed=seed, paired=paired_bs, baseline=baseline,
                                    system_column=system_column, method=BOOTSTRAP, seed_label=str(seed))
        self.spec = InputSpec(candidate_columns=(candidate_column,),
                              references_column=None if reference_columns else references_column,
                              reference_columns=tuple(reference_columns) if reference_columns else None,
                              group_by=group_by, id_column=id_column)
        self.null_candidate, self.batch_size = null_candidate, batch_size

    def expand(self, pcoll):
        spec, sig = self.spec, self.sig
        metrics = MetricSet([m.loaded() for m in self.metrics])  # a model found by itself: every worker's
        batches = (pcoll
                   | "Batch" >> beam.BatchElements(min_batch_size=1, max_batch_size=self.batch_size)
                   | "ToArrow" >> beam.FlatMap(_rows_to_batches, spec.columns, bool(spec.reference_columns)))
        computed = batches | "ComputeMetrics" >> ComputeMetrics(metrics, spec, self.null_candidate, None, sig.n_boot,
                                                                sig.seed, sig.system_column, not sig.intervals)
        if sig.paired:
            _ = (batches | "CheckSegments" >> CheckSegments(spec, sig.system_column)
                 | "Reports" >> beam.combiners.ToList()
                 | "CheckPairing" >> beam.Map(_check_pairing, sig, spec))
        return computed | "Results" >> beam.ParDo(_Results(metrics, spec, sig)).with_output_types(ScoreResult)


class ReadPairs(beam.PTransform):
    """PBegin -> ``(file, first row, RecordBatch)`` triples of the pairs at ``input`` (paths, globs,
    directories, as ``run --input``), planned when the pipeline is built: a missing file or column,
    a wrong type or shards that differ stop it then, naming the file and column. Give it the columns
    :class:`Score` reads (``candidate_column``, ...) and feed it to :class:`Score`, whose errors then
    name the file and row."""

    def __init__(self, input: Union[str, Sequence[str]], *, candidate_column: str = "candidate",
                 references_column: str = "references", reference_columns: Optional[Sequence[str]] = None,
                 columns: Sequence[str] = (), batch_size: int = 16384, label: Optional[str] = None):
        super().__init__(label)
        self.inputs = [input] if isinstance(input, str) else list(input)
        group = tuple((c,) for c in columns)
        self.spec = InputSpec(candidate_columns=(candidate_column,),
                              references_column=None if reference_columns else references_column,
                              reference_columns=tuple(reference_columns) if reference_columns else None,
                              group_by=group)
        self.batch_size = batch_size

    def expand(self, pbegin):
        the_plan = plan(self.inputs, self.spec)
        return pbegin | "Read" >> ReadPlanned(the_plan.items, self.spec.columns, self.batch_size, the_plan.total_rows)


def _document(results: List[ScoreResult]) -> Dict:
    """``beambleu run`` 's result document (its ``format_version``) of :class:`Score` 's results,
    groups in canonical order (by grouping set as first seen, then key, nulls last)."""
    groups: Dict = {}
    metrics: List = []
    for r in results:
        entry = groups.setdefault((tuple(r.group_by), tuple(r.key)), {**json.loads(r.group_fields), "scores": []})
        entry["scores"].append((r.metric_id, json.loads(r.fields)))
        if not r.group_by and r.metric_id not in [m[0] for m in metrics]:
            metrics.append((r.metric_id, r.metric, r.signature))
    order = {m[0]: i for i, m in enumerate(metrics)}
    for entry in groups.values():
        entry["scores"] = [s for _, s in sorted(entry["scores"], key=lambda s: order.get(s[0], len(order)))]
    corpus = groups.pop(((), ()), None)
    sets = list(dict.fromkeys(gb for gb, _ in groups))
    ordered = sorted(groups.items(), key=lambda kv: (sets.index(kv[0][0]), [none_last(v) for v in kv[0][1]]))
    return {"format_version": FORMAT_VERSION,
            "metrics": [{"metric": i, "name": n, "signature": s} for i, n, s in metrics],
            "corpus": corpus,
            "grouping_sets": [{"group_by": list(gb), "groups": sum(1 for g, _ in groups if g == gb),
                               "in_document": True} for gb in sets],
            "groups": [g for _, g in ordered]}


def _write_document(results: List[ScoreResult], path: str) -> str:
    from apache_beam.io.filesystems import FileSystems

    tmp = f"{path}.beambleu-tmp"
    with FileSystems.create(tmp) as fh:
        fh.write((json.dumps(_document(results), indent=1, ensure_ascii=False) + "\n").encode("utf-8"))
    FileSystems.rename([tmp], [path])
    return path


class WriteResults(beam.PTransform):
    """:class:`Score` 's results -> the result document at ``path`` (``beambleu run --output`` 's
    layout, without its ``inputs``), written whole or not at all (a temporary file renamed), on
    local paths or object stores. The results are gathered on one worker. Returns the path."""

    def __init__(self, path: str, label: Optional[str] = None):
        super().__init__(label)
        self.path = path

    def expand(self, results):
        return (results
                | "Gather" >> beam.combiners.ToList()
                | "Write" >> beam.Map(_write_document, self.path))

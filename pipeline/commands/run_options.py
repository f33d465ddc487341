"""``BeamBleuOptions``: every ``beambleu run`` option, as a Beam ``PipelineOptions`` subclass."""

from __future__ import annotations

import argparse
import functools

from apache_beam.options.pipeline_options import PipelineOptions

# registers --dask_stall_timeout and --object_store_timeout with Beam's options wherever run's are
from ..io.stores import TimeoutOptions  # noqa: F401
from ..beam.autotok import AUTO
from .metric_options import add_metric_arguments, builtins_only
from .significance import add_significance_arguments

__all__ = ["BeamBleuOptions", "builtin_flags"]



def _csv(value: str):
    parts = [p.strip() for p in value.split(",")]
    if not value.strip() or any(not p for p in parts):
        raise argparse.ArgumentTypeError(f"expected comma-separated column names, got {value!r}")
    return parts


class _Underscored:
    """An argparse parser/group whose ``--a-b`` options also answer to Beam-style ``--a_b``
    (the spelling Flex Template parameters and other Beam tooling use)."""

    def __init__(self, target):
        self._target = target

    def add_argument_group(self, *args, **kwargs):
        return _Underscored(self._target.add_argument_group(*args, **kwargs))

    def add_argument(self, *names, **kwargs):
        aliases = ["--" + n[2:].replace("-", "_") for n in names if n.startswith("--") and "-" in n[2:]]
        return self._target.add_argument(*names, *aliases, **kwargs)


class BeamBleuOptions(PipelineOptions):
    """Input, grouping, output and BLEU options of the beambleu pipeline.

    Every ``--a-b`` option can also be written ``--a_b``, as Beam's own options are."""

    @classmethod
    def _add_argparse_args(cls, parser):
        parser = _Underscored(parser)
        g = parser.add_argument_group("input")
        g.add_argument("--input", action="append", metavar="PATH",
                       help="the pairs: a file, a glob or a directory (every data file under it; hidden files, "
                            "_SUCCESS, _* and beambleu's manifest skipped; col=value/ folders become string columns); "
                            "repeatable; local paths, gs://, s3:// with the extras")
        g.add_argument("--input-format", choices=["auto", "parquet", "jsonl", "csv", "tsv"], default="auto",
                       help="the input files' format (auto: by extension, .jsonl/.json/.ndjson, .csv, .tsv, "
                            "each also .gz/.bz2/.zst, else Parquet; another value reads every file as that format; "
                            "default: %(default)s)")
        g.add_argument("--candidate-column", default="candidate", metavar="COL",
                       help="string column of candidates (default: %(default)s)")
        g.add_argument("--candidate-columns", type=_csv, default=None, metavar="A,B",
                       help="wide input: one string column per system sharing the references; each becomes "
                            "the group system=<column>")
        g.add_argument("--references-column", default="references", metavar="COL",
                       help="list<string> column of references, null entries = missing (JSON Lines: or one string; "
                            "CSV/TSV: one reference per row) (default: %(default)s)")
        g.add_argument("--reference-columns", type=_csv, default=None, metavar="A,B",
                       help="one string column per reference instead (nulls = missing; CSV/TSV: an empty field is a missing "
                            "reference)")
        g.add_argument("--null-candidate", choices=["error", "empty"], default="error",
                       help="a null candidate is an error (default) or scored as the empty string")
        g.add_argument("--id-column", default=None, metavar="COL",
                       help="row identity (string or integer, not null) for --sentence-output and for the bootstrap "
                            "weights of --confidence/--paired-bs: the segment id, the same for every system "
                            "(default: file path and row index)")
        g.add_argument("--langpair-column", default="langpair", metavar="COL",
                       help="string column of each row's language pair SRC-TRG (e.g. en-zh), read by -tok auto and "
                            "--mtme-output; a null or malformed value is an error (default: %(default)s)")
        g.add_argument("--batch-size", type=int, default=16384, metavar="ROWS",
                       help="rows per Arrow batch handed to the kernel (default: %(default)s)")
        g = parser.add_argument_group("grouping and output")
        g.add_argument("--group-by", type=_csv, action="append", default=None, metavar="COL[,COL...]",
                       help="a grouping set (repeatable): scores per distinct value tuple; nulls are a group")
        g.add_argument("--output", metavar="PATH", help="the result JSON (written atomically)")
        g.add_argument("--groups-output", metavar="PATH", default=None,
                       help="the group table as .parquet or .csv (every group of every grouping set)")
        g.add_argument("--json-groups-limit", type=int, default=10_000, metavar="N",
                       help="with --groups-output, a grouping set of more than N groups is left to the table and "
                            "only counted in the --output JSON (default: %(default)s)")
        g.add_argument("--sentence-output", metavar="DIR", default=None,
                       help="per-pair Parquet: row identity, each metric's statistics and sentence score (BLEU's "
                            "with effective order on)")
        g.add_argument("--carry-columns", type=_csv, default=None, metavar="A,B",
                       help="--sentence-output also carries these input columns (e.g. the candidate and the "
                            "references, to filter a corpus)")
        g.add_argument("--carry-all", action="store_true",
                       help="--sentence-output carries every input column")
        g.add_argument("--keep", action="append", default=None, metavar="EXPR",
                       help="--sentence-output keeps only the pairs for which EXPR holds, e.g. 'chrf>=40' or "
                            "'bleu_sys_len>5' (a per-pair column, one of < <= > >= == !=, a number; repeatable: "
                            "all must hold); the summary counts the pairs kept and dropped")
        g.add_argument("--mtme-output", metavar="DIR", default=None,
                       help="mt-metrics-eval score files: DIR/<langpair>/<METRIC>-<ref>.sys.score (a line "
                            "'system<TAB>score' per system; adds the grouping set --langpair-column,--system-column, "
                            "or langpair in wide input) and, with --sentence-output, .seg.score (each system's "
                            "sentence scores, in --id-column order when it holds integers, else input order)")
        g.add_argument("--mtme-ref", default="refA", metavar="NAME",
                       help="--mtme-output: the reference name in the file names, as mt-metrics-eval writes it "
                            "(refA, refA.refB for several, all; no '-') (default: %(default)s)")
        g.add_argument("--overwrite", action="store_true", help="replace existing outputs")
        g.add_argument("--progress", choices=["auto", "on", "off"], default="auto",
                       help="one progress line on stderr: pairs done of all, percent, pairs/s, ETA (a bar on a "
                            "terminal, plain lines otherwise; auto: on unless --detach; off: none)")
        g.add_argument("--verbose", action="store_true",
                       help="show Beam's own log output (by default it goes to a log file, named if the job fails)")
        g.add_argument("--detach", action="store_true",
                       help="submit the job and return without waiting for it (remote runners, Flex Templates); "
                            "the outputs appear when the job ends and are not checked here")
        add_metric_arguments(parser, run=True, taken=builtin_flags)
        add_significance_arguments(parser, run=True)
        _run_only_help(parser._target)


#: what ``run`` adds to ``--tokenize`` (``score`` has ``-l`` for one language pair instead)
_AUTO_HELP = ("; auto (run only): each row's tokenizer from the target language of --langpair-column, as -l "
              "chooses it (zh, ja-mecab, ko-mecab, else 13a); a group's signature says tok:<that tokenizer>, "
              "or tok:mixed(A+B) when its pairs used several (e.g. the corpus); BLEU only, as in sacrebleu")


def _run_only_help(parser) -> None:
    """``run``'s own choices and help of options declared elsewhere: ``-tok auto``, and
    ``--system-column``'s second use (``--mtme-output``)."""
    actions = getattr(parser, "_option_string_actions", {})
    tok = actions.get("--tokenize")
    if tok is not None and tok.choices is not None and AUTO not in tok.choices:
        tok.choices = [*tok.choices, AUTO]
        tok.help = (tok.help or "") + _AUTO_HELP
    system = actions.get("--system-column")
    if system is not None:
        system.help = ("long format: the column naming the system, for the paired tests and --mtme-output "
                       "(default: %(default)s)")


@functools.lru_cache(maxsize=None)
def builtin_flags() -> frozenset:
    """Every option name of ``beambleu run`` and of Beam's pipeline options (imported so far), in
    both spellings, with the built-in metrics only (no plugin may take one)."""
    with builtins_only():  # Beam's get_all_options calls BeamBleuOptions' _add_argparse_args too
        p = argparse.ArgumentParser()
        BeamBleuOptions._add_argparse_args(p)
        names = set(p._option_string_actions)
        for dest in PipelineOptions([]).get_all_options():
            names.update({f"--{dest}", f"--{dest.replace('_', '-')}"})
    return frozenset(names)

"""sacrebleu's test-set options (``-t``, ``-l``, ``--origlang``, ``--subset``, ``--echo``,
``--list``, ``--citation``, ``--download``, ``--detail``) through sacrebleu 2.6.0's own registry.

The registry (``sacrebleu.dataset.DATASETS``) is the optional extra ``beambleu[testsets]``: it is
imported on first use only, so that scoring reference files never needs it. Its cache is
sacrebleu's: ``$SACREBLEU`` (default ``~/.sacrebleu``), read when sacrebleu is imported. A
filled cache is used as is, without the network; what is missing is downloaded and processed by
the registry exactly as sacrebleu does.

sacrebleu's command line reports bad usage by logging and ``sys.exit``, and some cases end in a
traceback; here the arguments are checked first and every failure is one line: a
:class:`~beambleu.errors.UsageError` for the command line (exit 2), a
:class:`~beambleu.io.textfiles.InputError` naming the cached file that is missing or bad (exit 1).
sacrebleu's own log is held back while its registry runs. Where sacrebleu 2.6.0 fails outright
(``--citation``, ``--download`` without ``-l``, ``--detail`` with ``--origlang``), this says so
or does what the option is documented to do; the functions below say which.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import re
import sys

from bleu_core.tokenizers import DEFAULT_TOKENIZER, TARGET_LANGUAGES, default_tokenizer as by_language

from ..errors import UsageError
from ..io.textfiles import InputError

__all__ = ["INSTALL", "NO_SUBSETS", "SACREBLEU_VERSION", "add_testset_arguments", "cache_dirs", "check_testset_args",
           "default_tokenizer", "detail_color", "detail_subsets", "empty_subset_error", "format_detail", "info_command",
           "keep_mask", "read_references", "reference_files", "tokenizer_warnings", "trg_lang"]

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (start-up)
if TYPE_CHECKING:  # numpy is imported where masks are made
    from typing import Callable, Dict, List, Optional, Sequence, Tuple

    import numpy as np

#: the sacrebleu release whose registry (and its quirks) beambleu follows
SACREBLEU_VERSION = "2.6.0"
INSTALL = "pip install 'beambleu[testsets]'"
NO_SUBSETS = "No subset information found. Consider using --origlang argument."
_YELLOW, _RESET = "\x1b[33m", "\x1b[0m"  # colorama's Fore.YELLOW and Style.RESET_ALL


def add_testset_arguments(p, info: bool = True) -> None:
    """sacrebleu's test-set options, with its flag names, dests and defaults. ``info=False``
    (``beambleu convert``) adds only the ones that choose lines: ``-t``, ``-l``, ``--origlang``,
    ``--subset``."""
    g = p.add_argument_group(f"test sets (sacrebleu's registry and cache: $SACREBLEU, default ~/.sacrebleu; "
                             f"{INSTALL})")
    g.add_argument("--test-set", "-t", dest="test_set", type=str, default=None, metavar="SET",
                   help="use the references of this sacrebleu test set instead of REF files (see --list); several, "
                        "separated by commas, are concatenated")
    by_language = ", ".join(f"{lang}: {tok}" for lang, _, tok in TARGET_LANGUAGES)
    if info:
        pair_help = (f"language pair of the test set; its target language also picks BLEU's default tokenizer "
                     f"({by_language}, else {DEFAULT_TOKENIZER})")
    else:  # convert: nothing is tokenized
        pair_help = ("language pair of the test set, recorded in a directory output's manifest (--set "
                     "langpair=... also adds it as a column)")
    g.add_argument("--language-pair", "-l", dest="langpair", default=None, metavar="SRC-TRG", help=pair_help)
    g.add_argument("--origlang", "-ol", dest="origlang", default=None, metavar="LANG",
                   help="keep only documents originally written in LANG (non-LANG: in any other language)")
    g.add_argument("--subset", dest="subset", default=None, metavar="REGEX",
                   help="keep only documents whose domain (WMT21+ XML) or sacrebleu annotation (WMT18-19; "
                        "country:XX for a country) matches REGEX")
    if not info:
        return
    g.add_argument("--download", type=str, default=None, metavar="SET",
                   help="download SET into the cache (with -l: and prepare that pair's files), then exit")
    g.add_argument("--echo", nargs="+", type=str, default=None, metavar="FIELD",
                   help="print these fields of -t/-l (src, ref, ref:A, docid, origlang, ...; all: every field), "
                        "tab-separated, then exit")
    g.add_argument("--list", default=False, action="store_true",
                   help="list the test sets (with -l: those with that pair; with -t: its pairs and fields), then exit")
    g.add_argument("--citation", "--cite", default=False, action="store_true",
                   help="print the BibTeX citation of the -t test set(s), then exit")
    g.add_argument("--detail", "-d", default=False, action="store_true",
                   help="also print the scores of each origlang and domain subset (turns -f json into text)")


# ---------------------------------------------------------------------------------------------
# the registry, imported on first use


def _option_in_use(args) -> str:
    for flag, dest in (("--download", "download"), ("--list", "list"), ("--citation", "citation"),
                       ("--echo", "echo"), ("-t/--test-set", "test_set"), ("--origlang", "origlang"),
                       ("--subset", "subset"), ("--detail", "detail")):
        if getattr(args, dest, None) not in (None, False):
            return flag
    return "this option"


def _registry(args):
    """``sacrebleu.dataset.DATASETS`` (sacrebleu 2.6.0), or a UsageError saying how to get it."""
    what = _option_in_use(args)
    try:
        import sacrebleu
        from sacrebleu.dataset import DATASETS
    except ImportError:
        raise UsageError(f"{what} needs sacrebleu's test-set registry: {INSTALL}") from None
    if sacrebleu.__version__ != SACREBLEU_VERSION:
        raise UsageError(f"{what} needs sacrebleu's test-set registry of sacrebleu {SACREBLEU_VERSION} (found "
                         f"{sacrebleu.__version__}): {INSTALL}")
    return DATASETS


def _cache_dir() -> str:
    from sacrebleu.utils import SACREBLEU_DIR

    return SACREBLEU_DIR


def cache_dirs(args) -> List[str]:
    """The cache folders of the ``-t`` test sets (``$SACREBLEU/NAME``), e.g. so that an output is
    refused inside them; [] without ``-t``."""
    if args.test_set is None:
        return []
    _registry(args)
    return [os.path.join(_cache_dir(), ts) for ts in args.test_set.split(",")]


def _held(messages: List[str]):
    """A logging handler that collects the warnings and errors sacrebleu logs while its registry
    runs (``logging`` is imported here, with the registry: ``score`` on files never needs it)."""
    import logging

    class Held(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            messages.append(" ".join(record.getMessage().split()))

    return Held(logging.WARNING)


@contextlib.contextmanager
def _held_log(messages: List[str]):
    import logging

    logger = logging.getLogger("sacrebleu")
    saved = logger.handlers[:], logger.propagate
    logger.handlers, logger.propagate = [_held(messages)], False
    try:
        yield
    finally:
        logger.handlers, logger.propagate = saved


def _archives(dataset) -> List[Tuple[str, str]]:
    """(URL, cache path) of each archive of a registry entry."""
    return [(url, os.path.join(dataset._rawdir, dataset._get_tarball_filename(url))) for url in dataset.data or ()]


def _present(path: str) -> bool:
    """Whether sacrebleu counts an archive as downloaded (it fetches it when absent or empty)."""
    return os.path.isfile(path) and os.path.getsize(path) > 0


def _run(dataset, raw: Optional[str], fn: Callable, *fn_args):
    """``fn(*fn_args)``, a call into the registry entry ``dataset`` (which may download, unpack
    and process into the cache), with sacrebleu's log held back and its failures turned into
    one line naming the cached file at fault. ``raw``: the raw file the call reads, if known."""
    missing = [(url, path) for url, path in _archives(dataset) if not _present(path)]
    messages: List[str] = []
    try:
        with _held_log(messages):
            return fn(*fn_args)
    except (SystemExit, Exception) as exc:  # sacrebleu exits on a bad download; anything else is one line too
        raise _cache_error(dataset, raw, missing, messages, exc) from None


def _cache_error(dataset, raw, missing, messages, exc) -> InputError:
    for url, path in missing:
        if not _present(path):  # the download failed
            reason = getattr(exc, "reason", None) or (messages[0] if messages else None) or str(exc)
            reason = " ".join(str(reason).split()) or type(exc).__name__
            return InputError(path, f"not in sacrebleu's cache, and cannot be downloaded from {url} ({reason})")
    if isinstance(exc, SystemExit):  # after a download: a wrong MD5 sum, an SSL error
        where = missing[0][1] if missing else dataset._rawdir
        return InputError(where, messages[0] if messages else f"sacrebleu stopped (exit status {exc.code})")
    filename = getattr(exc, "filename", None)
    if isinstance(exc, FileNotFoundError) and filename:
        return InputError(filename, f"missing from sacrebleu's cache (delete {dataset._rawdir} to have "
                                    f"{dataset.name} downloaded again)")
    if isinstance(exc, OSError) and filename:
        return InputError(filename, f"cannot use it: {exc.strerror or exc}")
    detail = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, (SyntaxError, AssertionError)) and raw:  # lxml's XMLSyntaxError; the XML checks
        return InputError(filename if isinstance(filename, str) and os.path.exists(filename) else raw,
                          f"cannot read this test set file: {detail}")
    return InputError(raw or dataset._outdir, f"sacrebleu's test-set registry failed: {type(exc).__name__}: "
                                               f"{detail}")


def _langpair_raw(dataset, pair: str) -> str:
    """The raw file sacrebleu reads for ``pair`` when processing it (the source file for SGML)."""
    entry = dataset.langpairs[pair]
    rel = entry["path"] if isinstance(entry, dict) else entry[0]
    if type(dataset).__name__ == "TSVDataset":
        rel = rel.split(":")[-1]
    return os.path.join(dataset._rawdir, rel)


def _check_test_set(D, ts: str) -> None:
    if ts not in D:
        raise UsageError(f"Unknown test set {ts!r}; run with --list to see the available test sets")


def _check_pair(D, ts: str, pair: str) -> None:
    if pair not in D[ts].langpairs:
        raise UsageError(f"No such language pair {pair!r}; available language pairs for {ts!r}: "
                         f"{', '.join(D[ts].langpairs)}")


# ---------------------------------------------------------------------------------------------
# reading the cache


def _read_lines(path: str) -> List[str]:
    """A processed file's lines as sacrebleu reads them (UTF-8, split on \\n only, rstrip())."""
    import gzip

    try:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        raise InputError(path, "missing from sacrebleu's cache") from None
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(path, f"invalid UTF-8 (byte 0x{data[exc.start]:02x})", data.count(b"\n", 0, exc.start) + 1) \
            from None
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.rstrip() for line in lines]


def read_references(ref_sets: Sequence[Sequence[str]]) -> List[List[str]]:
    """The references of :func:`reference_files`, one list per line (the test sets one after
    the other), read as sacrebleu reads them. All of a test set's files must have as many lines."""
    rows: List[List[str]] = []
    for files in ref_sets:
        streams = [_read_lines(f) for f in files]
        for f, s in zip(files[1:], streams[1:]):
            if len(s) != len(streams[0]):
                raise InputError(f, f"has {len(s)} lines but {files[0]} has {len(streams[0])}")
        rows.extend(map(list, zip(*streams)))
    return rows


@functools.lru_cache(maxsize=8)
def _unwrapped(rawfile: str) -> Dict[str, list]:
    """sacrebleu's parse of a WMT21+ XML file (its fields, one value per segment)."""
    from sacrebleu.dataset.wmt_xml import WMTXMLDataset

    if not os.path.isfile(rawfile):
        raise InputError(rawfile, "missing from sacrebleu's cache")
    try:
        return WMTXMLDataset._unwrap_wmt21_or_later(rawfile)
    except (SyntaxError, AssertionError, OSError) as exc:
        raise InputError(rawfile, f"cannot read this test set file: {' '.join(str(exc).split())}") from None


def _sgm_lines(rawfile: str) -> List[str]:
    from sacrebleu.utils import smart_open

    try:
        with smart_open(rawfile) as fh:
            return list(fh)
    except FileNotFoundError:
        raise InputError(rawfile, "missing from sacrebleu's cache") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(rawfile, f"cannot read: {' '.join(str(exc).split())}") from None


# ---------------------------------------------------------------------------------------------
# --origlang, --subset, --detail: sacrebleu.utils.filter_subset and print_subset_results


def _filter_raw(D, ts: str, pair: str) -> str:
    """The raw file sacrebleu's subset filtering reads for ``ts``/``pair`` (``--origlang``,
    ``--subset``, ``--detail``), downloaded if need be; UsageError where sacrebleu cannot filter."""
    dataset = D[ts]
    entry = dataset.langpairs[pair]
    if isinstance(entry, dict):  # sacrebleu indexes it with [0] and fails with KeyError
        raise UsageError(f"--origlang, --subset and --detail do not work with {ts}/{pair} in sacrebleu "
                         f"{SACREBLEU_VERSION} (its registry entry names the file by key)")
    rawfile = os.path.join(_cache_dir(), ts, "raw", entry[0])
    if not os.path.exists(rawfile):
        _run(dataset, rawfile, dataset.maybe_download)
    return rawfile


def _is_xml(dataset) -> bool:
    from sacrebleu.dataset.wmt_xml import WMTXMLDataset

    return isinstance(dataset, WMTXMLDataset)


def _check_filter(D, ts: str, pair: str, subset: Optional[str]) -> None:
    """What sacrebleu's filter_subset refuses (it raises), found before anything is read."""
    from sacrebleu.dataset import SUBSETS

    dataset = D[ts]
    entry = dataset.langpairs[pair]
    if isinstance(entry, dict):
        _filter_raw(D, ts, pair)  # raises
    if not _is_xml(dataset):
        if not entry[0].endswith(".sgm"):
            raise UsageError(f"--origlang and --subset supports only WMT *.xml and *.sgm files, not "
                             f"{os.path.join(_cache_dir(), ts, 'raw', entry[0])!r}")
        if subset is not None and ts not in SUBSETS:
            raise UsageError(f"No subset annotation available for test set {ts}")


_RE_ORIGLANG = re.compile(r'.* origlang="([^"]+)".*\n')
_RE_DOCID = re.compile(r'.* docid="([^"]+)".*\n')


def _keep_doc(doc_origlang: str, origlang: Optional[str]) -> bool:
    if origlang is None:
        return True
    if origlang.startswith("non-"):
        return doc_origlang != origlang[4:]
    return doc_origlang == origlang


def _search(subset: str, text: str) -> bool:
    try:
        return re.search(subset, text) is not None
    except re.error as exc:
        raise UsageError(f"--subset {subset!r}: not a regular expression ({exc})") from None


def _flags(D, test_sets: str, pair: str, origlang: Optional[str], subset: Optional[str]) -> List[bool]:
    """For every segment of the test sets (one after the other), whether it is kept: the
    ``indices_to_keep`` of sacrebleu's filter_subset, computed the same way."""
    from sacrebleu.dataset import SUBSETS

    if subset is not None and subset.startswith("country:"):
        subset = subset[8:]
    keep: List[bool] = []
    for ts in test_sets.split(","):
        _check_filter(D, ts, pair, subset)
        dataset = D[ts]
        rawfile = _filter_raw(D, ts, pair)
        if _is_xml(dataset):
            fields = _unwrapped(rawfile)
            domains = fields["domain"] if "domain" in fields else itertools.repeat(None)
            for doc_origlang, doc_domain in zip(fields["origlang"], domains):
                include = _keep_doc(doc_origlang, origlang)
                if subset is not None and (doc_domain is None or not _search(subset, doc_domain)):
                    include = False
                keep.append(include)
            continue
        tags = SUBSETS[ts] if subset is not None else {}
        include = False
        for line in _sgm_lines(rawfile):
            if line.startswith("<doc "):
                include = origlang is None or _keep_doc(_RE_ORIGLANG.sub(r"\1", line), origlang)
                if subset is not None and not _search(subset, tags.get(_RE_DOCID.sub(r"\1", line), "")):
                    include = False
            if line.startswith("<seg "):
                keep.append(include)
    return keep


def keep_mask(args, n_lines: int) -> Optional[np.ndarray]:
    """Which of ``n_lines`` lines (system output and references, the ``-t`` test sets one after
    the other) ``--origlang``/``--subset`` keep, as a numpy bool array; None when neither is
    given. sacrebleu's filter_subset: a document is kept if its origlang is ``--origlang``
    (``non-XX``: is not XX) and its domain (WMT21+ XML; a document without one is dropped) or
    its WMT18/19 annotation (``country:XX`` for the country) matches the ``--subset`` regex
    (``re.search``). Lines beyond the test set are dropped (sacrebleu zips with its list). The
    mask may be all False: then raise :func:`empty_subset_error`."""
    import numpy as np

    if args.origlang is None and args.subset is None:
        return None
    _check_filter_args(args)
    D = _registry(args)
    flags = _flags(D, args.test_set, args.langpair, args.origlang, args.subset)
    mask = np.zeros(n_lines, dtype=bool)
    k = min(n_lines, len(flags))
    mask[:k] = flags[:k]
    return mask


def empty_subset_error(args) -> UsageError:
    """sacrebleu's error when --origlang/--subset keep no line."""
    message = f"Test set {args.test_set!r} contains no sentence"
    if args.origlang is not None or args.subset is not None:
        message += " with" + (f" origlang={args.origlang}" if args.origlang else "") + (
            f" subset={args.subset}" if args.subset else "")
    return UsageError(message)


def _available_origlangs(D, test_sets: Optional[str], pair: str) -> List[str]:
    """sacrebleu's get_available_origlangs."""
    if test_sets is None:
        return []
    found = set()
    for ts in test_sets.split(","):
        dataset = D[ts]
        rawfile = _filter_raw(D, ts, pair)
        if _is_xml(dataset):
            found.update(_unwrapped(rawfile)["origlang"])
        if rawfile.endswith(".sgm"):
            found.update(re.sub(r'.* origlang="([^"]+)".*\n', "\\1", line)
                         for line in _sgm_lines(rawfile) if line.startswith("<doc "))
    return sorted(found)


def _available_subsets(D, test_sets: Optional[str], pair: str) -> List[str]:
    """sacrebleu's get_available_subsets."""
    from sacrebleu.dataset import SUBSETS

    if test_sets is None:
        return []
    found = set()
    for ts in test_sets.split(","):
        if _is_xml(D[ts]):
            fields = _unwrapped(_filter_raw(D, ts, pair))
            if "domain" in fields:
                found.update(fields["domain"])
        elif ts in SUBSETS:
            found.update("country:" + v.split("-")[0] for v in SUBSETS[ts].values())
            found.update(v.split("-")[1] for v in SUBSETS[ts].values())
    return sorted(found)


def detail_subsets(args) -> List[Tuple[str, np.ndarray]]:
    """What ``--detail`` scores, in sacrebleu's order (print_subset_results): for each origlang
    (``--origlang``, else all those of the test sets) and each subset (all, then ``--subset`` or
    else every domain/annotation), ``(label, bool mask over the test sets' lines)``, e.g.
    ``('origlang=de domain=ALL', mask)``; subsets without a line are left out. [] means
    sacrebleu prints :data:`NO_SUBSETS` (no test set, or no origlang annotation).

    sacrebleu 2.6.0 iterates over the characters of ``--origlang`` (``de`` is 'd', 'e'), so with
    ``--origlang`` no subset has a line and it fails after printing the scores: that is a
    UsageError here."""
    import numpy as np

    if args.test_set is None:
        return []
    D = _registry(args)
    origlangs = args.origlang if args.origlang else _available_origlangs(D, args.test_set, args.langpair)
    if len(origlangs) == 0:
        return []
    rows = []
    for origlang in origlangs:
        subsets = [None] + ([args.subset] if args.subset is not None else
                            _available_subsets(D, args.test_set, args.langpair))
        for subset in subsets:
            mask = np.array(_flags(D, args.test_set, args.langpair, origlang, subset), dtype=bool)
            if not mask.any():
                continue
            label = f"origlang={origlang}"
            if subset is None:
                label += " domain=ALL"
            elif subset.startswith("country:"):
                label += f" country={subset[8:]}"
            else:
                label += f" domain={subset}"
            rows.append((label, mask))
    if not rows:
        raise UsageError(f"--detail with --origlang {args.origlang}: sacrebleu {SACREBLEU_VERSION} fails here (it "
                         f"reads --origlang as the languages {', '.join(map(repr, origlangs))}, which no subset has)")
    return rows


def detail_color(no_color: bool = False, stream=None) -> bool:
    """Whether sacrebleu colours the ``--detail`` labels: colours are on unless ``NO_COLOR`` is
    set (non-empty) or ``--no-color`` is given, and colorama strips them unless the output
    (default: standard output) is a terminal."""
    stream = sys.stdout if stream is None else stream
    if os.environ.get("NO_COLOR") or no_color:
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def format_detail(rows: Sequence[Tuple[str, int, str, float]], width: int, color: bool = False) -> List[str]:
    """The lines sacrebleu's ``--detail`` prints, from ``(label, sentences, score name, score)``
    rows in :func:`detail_subsets` order, each subset's metrics in sacrebleu's metric order
    (the order of ``-m``). Rows with the same label are printed together, as sacrebleu's dict
    groups them. ``color``: the label in yellow, as sacrebleu does unless colours are off
    (``NO_COLOR``, ``--no-color``)."""
    results: Dict[str, List[Tuple[int, str, float]]] = {}
    for label, n, name, score in rows:
        results.setdefault(label, []).append((n, name, score))
    if not results:
        return [NO_SUBSETS]
    left = max(len(k) for k in results) + 1
    metric = max(len(name) for _, name, _ in next(iter(results.values())))
    lines = []
    for label, scores in results.items():
        key = f"{label:<{left}}"
        if color:
            key = f"{_YELLOW}{key}{_RESET}"
        lines.extend(f"{key}: sentences={n:<6} {name:<{metric}} = {score:.{width}f}" for n, name, score in scores)
    return lines


# ---------------------------------------------------------------------------------------------
# validation, references, target language


def _check_filter_args(args) -> None:
    if (args.origlang is not None or args.subset is not None) and (args.test_set is None or args.langpair is None):
        raise UsageError("Filtering for --origlang or --subset needs a test (-t) and a language pair (-l).")


def check_testset_args(args) -> None:
    """sacrebleu's checks of ``-t``/``-l`` against the reference files (``args.refs``), in its
    order: ``--num-refs`` (``args.num_refs``, if the command has it) only with one reference
    file; known test sets; exactly one of ``-t`` and reference files; ``-l`` with ``-t``, a pair
    of every test set; ``-l`` of the form SRC-TRG; ``--origlang``/``--subset`` only with ``-t``
    and ``-l``, on test sets sacrebleu can filter, ``--subset`` a regular expression;
    ``--detail`` on test sets sacrebleu can split. Imports sacrebleu only for ``-t``."""
    refs = list(getattr(args, "refs", None) or [])
    if getattr(args, "num_refs", 1) != 1 and (args.test_set is not None or len(refs) > 1):
        raise UsageError("--num-refs splits tab-delimited references from a single reference file: not with -t, "
                         "nor with several reference files")
    D = None
    if args.test_set is not None:
        D = _registry(args)
        for ts in args.test_set.split(","):
            _check_test_set(D, ts)
    if args.test_set is None:
        if not refs:
            raise UsageError("I need reference files (before -i/--input) or a predefined test set (-t)")
    elif refs:
        raise UsageError("I need exactly one of (a) a predefined test set (-t) or (b) a list of references")
    elif args.langpair is None:
        raise UsageError("I need a language pair (-l). Use --list to see available language pairs for this test set.")
    else:
        for ts in args.test_set.split(","):
            _check_pair(D, ts, args.langpair)
    trg_lang(args)
    _check_filter_args(args)
    if D is None:
        return
    subset = args.subset
    if subset is not None:
        pattern = subset[8:] if subset.startswith("country:") else subset
        try:
            re.compile(pattern)
        except re.error as exc:
            raise UsageError(f"--subset {subset!r}: not a regular expression ({exc})") from None
    for ts in args.test_set.split(","):
        if args.origlang is not None or subset is not None:
            _check_filter(D, ts, args.langpair, subset[8:] if subset and subset.startswith("country:") else subset)
        elif getattr(args, "detail", False) and isinstance(D[ts].langpairs[args.langpair], dict):
            _filter_raw(D, ts, args.langpair)  # raises: sacrebleu's --detail fails on it


def reference_files(args) -> List[List[str]]:
    """For each ``-t`` test set (comma-separated), the paths of its reference files in sacrebleu's
    cache, which the registry downloads and processes first if need be (a filled cache needs no
    network). sacrebleu reads them one test set after the other, each file one reference
    stream; the test sets must then have the same number of references. Call
    :func:`check_testset_args` first."""
    D = _registry(args)
    out = []
    for ts in args.test_set.split(","):
        dataset = D[ts]
        files = _run(dataset, _langpair_raw(dataset, args.langpair), dataset.get_reference_files, args.langpair)
        if not files:
            raise UsageError(f"No references found for test set {ts}/{args.langpair}")
        out.append(list(files))
    if len({len(f) for f in out}) > 1:
        counts = ", ".join(f"{ts}: {len(f)}" for ts, f in zip(args.test_set.split(","), out))
        raise UsageError(f"-t {args.test_set}: the test sets have different numbers of references ({counts}); "
                         "sacrebleu cannot concatenate them")
    return out


def trg_lang(args) -> Optional[str]:
    """The target language of ``-l`` (sacrebleu: ``langpair.split('-')[1]``), None without ``-l``."""
    if args.langpair is None:
        return None
    parts = args.langpair.split("-")
    if len(parts) < 2:
        raise UsageError(f"-l {args.langpair!r}: a language pair is SRC-TRG, e.g. en-de")
    return parts[1]


def default_tokenizer(trg: Optional[str]) -> str:
    """BLEU's tokenizer when ``--tokenize`` is not given, as sacrebleu's BLEU chooses it from the
    target language: zh -> zh, ja -> ja-mecab, ko -> ko-mecab, else 13a."""
    return by_language(trg)


def tokenizer_warnings(tokenize: Optional[str], trg: Optional[str], test_set: Optional[str],
                       bleu: bool = True) -> List[str]:
    """sacrebleu's warnings about the BLEU tokenizer, in its order: ``-tok none`` with ``-t``;
    then (``bleu``: BLEU is computed) an explicit ``--tokenize`` that is not the one for a
    Chinese, Japanese or Korean target (bleu_core.tokenizers.TARGET_LANGUAGES)."""
    out = []
    if test_set is not None and tokenize == "none":
        out += ["You are turning off BLEU's internal tokenizer presumably to supply your own tokenized files.",
                "Published numbers will not be comparable to other papers."]
    if bleu and tokenize is not None:
        for lang, name, tok in TARGET_LANGUAGES:
            if trg == lang and tokenize != tok:
                out.append(f"Consider using the '{tok}' or 'spm' tokenizer for {name}.")
    if bleu and tokenize == "spm":
        out.append("Tokenizer 'spm' has been changed to 'flores101', and may be removed in the future.")
    return out


# ---------------------------------------------------------------------------------------------
# --download, --list, --citation, --echo


def _emit(lines: Sequence[str]) -> None:
    """Print lines as sacrebleu does (UTF-8, whatever the locale), all at once at the end."""
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    sys.stdout.flush()
    out = getattr(sys.stdout, "buffer", None)
    if out is None:
        sys.stdout.write(data.decode("utf-8"))
    else:
        out.write(data)
    sys.stdout.flush()


def _download(D, args) -> None:
    ts = args.download
    if ts not in D:
        raise UsageError(f"No such test set {ts}; run with --list to see the available test sets")
    dataset = D[ts]
    if args.langpair is None:  # sacrebleu 2.6.0 fails here (KeyError: None); download what it names
        _run(dataset, None, dataset.maybe_download)
        return
    _check_pair(D, ts, args.langpair)
    _run(dataset, _langpair_raw(dataset, args.langpair), dataset.get_files, args.langpair)


def _list(D, args) -> List[str]:
    from sacrebleu.utils import get_available_testsets_for_langpair

    if args.test_set:
        if args.langpair:
            _check_test_set(D, args.test_set)
            _check_pair(D, args.test_set, args.langpair)
            pairs = [args.langpair]
        else:  # an unknown test set lists nothing, as in sacrebleu
            pairs = list(D[args.test_set].langpairs) if args.test_set in D else []
        dataset = D.get(args.test_set)
        return [f"{pair}: {', '.join(_run(dataset, _langpair_raw(dataset, pair), dataset.fieldnames, pair))}"
                for pair in pairs]
    if args.langpair:
        trg_lang(args)
        lines = [f"The available test sets for {args.langpair} are:"]
        names = get_available_testsets_for_langpair(args.langpair)
    else:
        lines = ["The available test sets are:"]
        names = sorted(D.keys(), reverse=True)
    return lines + [f"{ts:<30}: {D[ts].description.strip()}" for ts in sorted(names)]


def _citations(D, args) -> Tuple[List[str], List[str]]:
    """(citations, warnings). sacrebleu 2.6.0 fails on every --citation (``'citation' in`` a
    dataset object); this prints what it means to: each test set's citation, and "No citation
    found" for those without one."""
    if not args.test_set:
        raise UsageError("I need a test set (-t).")
    names = args.test_set.split(",")
    for ts in names:
        _check_test_set(D, ts)
    found = [D[ts].citation for ts in names if D[ts].citation]
    return found, [f"No citation found for {ts}" for ts in names if not D[ts].citation]


def _echo(D, ts: str, pair: str, requested: List[str], origlang, subset) -> List[str]:
    """sacrebleu's print_test_set, as lines."""
    dataset = D[ts]
    raw = _langpair_raw(dataset, pair)
    fieldnames = _run(dataset, raw, dataset.fieldnames, pair)
    all_files = _run(dataset, raw, dataset.get_files, pair)
    if "all" in requested and len(requested) != 1:
        raise UsageError("Cannot use --echo all with other fields")
    if "all" in requested:
        requested = list(fieldnames)
    ref_fields = [f for f in fieldnames if f.startswith("ref")]
    if "ref" in requested and "ref" not in fieldnames:  # backwards compatibility: the first reference
        if not ref_fields:
            raise UsageError(f"No such field ref in test set {ts} for language pair {pair}; available fields: "
                             f"{', '.join(fieldnames)}")
        requested = [f if f != "ref" else min(ref_fields) for f in requested]
    for field in requested:
        if field not in fieldnames:
            alias = f"; 'ref' also allowed (will return {min(ref_fields)})" if "ref" not in fieldnames \
                and ref_fields else ""
            raise UsageError(f"No such field {field} in test set {ts} for language pair {pair}; available fields: "
                             f"{', '.join(fieldnames)}{alias}")
    streams = [_read_lines(all_files[fieldnames.index(f)]) for f in requested]
    if origlang is not None or subset is not None:
        flags = _flags(D, ts, pair, origlang, subset)
        streams = [[line for line, keep in zip(s, flags) if keep] for s in streams]
    return ["\t".join(cols) for cols in zip(*streams)]


def info_command(args) -> Optional[int]:
    """Handle the options that print something about test sets and exit, in sacrebleu's order:
    ``--download``, ``--list``, ``--citation``, then (after :func:`check_testset_args`, as
    sacrebleu checks first) ``--echo``. Prints exactly what sacrebleu prints and returns the
    exit code, or returns None when none of them is given (then score as usual).

    sacrebleu checks ``--sentence-level`` with several metrics between ``--list`` and
    ``--citation``; the caller's own checks come after this."""
    if args.download:
        _download(_registry(args), args)
        return 0
    if args.list:
        _emit(_list(_registry(args), args))
        return 0
    if args.citation:
        found, missing = _citations(_registry(args), args)
        _emit(found)
        if not getattr(args, "quiet", False):
            for message in missing:
                print(f"beambleu: warning: {message}", file=sys.stderr)
        return 0
    if not args.echo:
        return None
    check_testset_args(args)
    if args.langpair is None or args.test_set is None:
        raise UsageError("--echo requires a test set (-t) and a language pair (-l)")
    D = _registry(args)
    lines: List[str] = []
    for ts in args.test_set.split(","):
        lines += _echo(D, ts, args.langpair, list(args.echo), args.origlang, args.subset)
    _emit(lines)
    return 0

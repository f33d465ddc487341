"""sacrebleu's test-set options (beambleu.commands.testsets) against sacrebleu 2.6.0 on the same cache.

The cache (tests/sacrebleu_cache.py) is built from the shared corpora so that nothing is
downloaded; sacrebleu reads ``$SACREBLEU`` when imported, so both sacrebleu and beambleu's
functions run in subprocesses with that variable set and ``urllib.request.urlopen`` disabled:
any download attempt fails at once. ``PYTHONHASHSEED`` is fixed because sacrebleu's WMT XML
reader orders the reference fields by iterating over a set of strings.
"""

import json
import os
import pty
import shutil
import subprocess
import sys

import pytest

from ...oracle import CORPORA, REPO, read_lines
from ...sacrebleu_cache import (NO_NETWORK, add_test_set, build_cache, doc_origlang, documents, env_for,
    sacrebleu_argv_code)

pytestmark = pytest.mark.corpora

WMT22_DE_EN = CORPORA / "wmt22" / "de-en"
WMT17_EN_DE = CORPORA / "wmt17" / "en-de"

#: calls beambleu.commands.testsets as ``beambleu score`` will: ``python -c DRIVER CALL ARGS...``; errors
#: are printed and mapped to exit codes as beambleu's command line does
DRIVER = NO_NETWORK + r'''
import argparse, json, sys
from beambleu.commands import testsets
from beambleu.errors import UsageError
from beambleu.io.textfiles import InputError

call, argv = sys.argv[1], sys.argv[2:]
p = argparse.ArgumentParser()
p.add_argument("refs", nargs="*")
p.add_argument("--input", "-i", default=None)
p.add_argument("--num-refs", "-nr", type=int, default=1)
p.add_argument("--metrics", "-m", nargs="+", default=["bleu"])
p.add_argument("--width", "-w", type=int, default=1)
p.add_argument("--quiet", "-q", action="store_true")
p.add_argument("--n-lines", type=int, default=None)
p.add_argument("--color", action="store_true")
testsets.add_testset_arguments(p)
args = p.parse_args(argv)


def read(path):
    with open(path, encoding="utf-8", newline="\n") as fh:
        return [line.rstrip() for line in fh]


try:
    if call == "info":
        rc = testsets.info_command(args)
        print(f"info_command: {rc}", file=sys.stderr)
        sys.exit(0 if rc is None else rc)
    testsets.check_testset_args(args)
    if call == "refs":
        print(json.dumps(testsets.reference_files(args)))
    elif call == "read":
        print(json.dumps(testsets.read_references(testsets.reference_files(args)), ensure_ascii=False))
    elif call == "mask":
        n = args.n_lines
        if n is None and args.test_set is not None:
            n = len(testsets.read_references(testsets.reference_files(args)))
        mask = testsets.keep_mask(args, n or 0)
        print(json.dumps(None if mask is None else [len(mask), mask.nonzero()[0].tolist()]))
    elif call == "detail":
        from sacrebleu.metrics import METRICS
        if args.test_set is None:
            refs = [read(r) for r in args.refs]
        else:
            refs = [list(r) for r in zip(*testsets.read_references(testsets.reference_files(args)))]
        hyps = read(args.input)
        kwargs = {"trg_lang": testsets.trg_lang(args) or ""}
        metrics = [METRICS[m.upper()](**(kwargs if m == "bleu" else {})) for m in args.metrics]
        rows = []
        for label, mask in testsets.detail_subsets(args):
            keep = mask.nonzero()[0]
            for metric in metrics:
                score = metric.corpus_score([hyps[i] for i in keep], [[r[i] for i in keep] for r in refs])
                rows.append((label, len(keep), score.name, score.score))
        print("\n".join(testsets.format_detail(rows, args.width, color=args.color)))
    elif call == "trg":
        trg = testsets.trg_lang(args)
        print(json.dumps([trg, testsets.default_tokenizer(trg)]))
except (UsageError, InputError) as exc:
    print(f"beambleu: error: {exc}", file=sys.stderr)
    sys.exit(2 if isinstance(exc, UsageError) else 1)
'''


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    if not (CORPORA / "MANIFEST.tsv").exists():
        pytest.skip(f"shared corpora not found at {CORPORA}")
    return build_cache(tmp_path_factory.mktemp("sacrebleu") / "cache", CORPORA)


def env(cache, seed="0", **extra):
    return {**env_for(cache), "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO), **extra}


def sacrebleu(cache, *argv, seed="0", **extra):
    """`sacrebleu ARGV` on the cache, offline: (exit code, stdout bytes, stderr text)."""
    proc = subprocess.run([sys.executable, "-c", sacrebleu_argv_code([str(a) for a in argv])], capture_output=True,
                          env=env(cache, seed, **extra), cwd=REPO, timeout=300)
    return proc.returncode, proc.stdout, proc.stderr.decode("utf-8", "replace")


def ours(cache, call, *argv, seed="0", **extra):
    """beambleu.commands.testsets on the cache, offline: (exit code, stdout bytes, stderr text)."""
    proc = subprocess.run([sys.executable, "-c", DRIVER, call, *map(str, argv)], capture_output=True,
                          env=env(cache, seed, **extra), cwd=REPO, timeout=300)
    return proc.returncode, proc.stdout, proc.stderr.decode("utf-8", "replace")


def sacre_value(cache, code):
    """The JSON value printed by ``code`` run with sacrebleu imported on the cache (offline)."""
    proc = subprocess.run([sys.executable, "-c", NO_NETWORK + "import json, sacrebleu\n" + code],
                          capture_output=True, text=True, env=env(cache), cwd=REPO, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def error_line(result, rc):
    """The one stderr line of a failed call of ours (nothing on stdout, no traceback)."""
    code, out, err = result
    assert code == rc and out == b"" and "Traceback" not in err, (code, out[:200], err)
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


def same_output(cache, call_args, seed="0"):
    """Our info_command prints exactly sacrebleu's bytes, and both exit 0."""
    theirs = sacrebleu(cache, *call_args, seed=seed)
    mine = ours(cache, "info", *call_args, seed=seed)
    assert theirs[0] == 0, theirs[2]
    assert mine[0] == 0 and mine[2] == "info_command: 0\n", mine[2]
    assert mine[1] == theirs[1]
    return mine[1].decode("utf-8")


# ------------------------------------------------------------------------------------------ cache


def test_the_cache_gives_sacrebleu_the_corpus_references(cache):
    """sacrebleu -t scores as with the corpus reference file (the cache holds the same text, as
    sacrebleu cleans it: whitespace runs collapsed), and every line is in its synthetic document."""
    hyp = WMT22_DE_EN / "sys.Online-B.txt"
    with_t = sacrebleu(cache, "-t", "wmt22", "-l", "de-en", "-i", hyp, "-b", "-w", "6", "-m", "bleu", "chrf")
    with_file = sacrebleu(cache, WMT22_DE_EN / "ref.A.txt", "-i", hyp, "-b", "-w", "6", "-m", "bleu", "chrf")
    assert with_t[0] == 0 and with_t[1] == with_file[1], (with_t, with_file)
    echoed = sacrebleu(cache, "-t", "wmt17", "-l", "en-de", "--echo", "ref", "docid", "origlang")
    rows = [line.split("\t") for line in echoed[1].decode().splitlines()]
    assert [r[0] for r in rows] == [" ".join(x.split()) for x in read_lines(WMT17_EN_DE / "ref.A.txt")]
    expected = [(f"wmt17.en-de.doc{i:04d}", doc_origlang(i, "en-de"))
                for i, (a, b) in enumerate(documents(len(rows))) for _ in range(a, b)]
    assert [(r[1], r[2]) for r in rows] == expected


# ------------------------------------------------------------------------------- --list, --echo


@pytest.mark.parametrize("argv", [["--list"], ["--list", "-l", "de-en"], ["--list", "-l", "en-zh-x"],
                                  ["--list", "-t", "wmt17"], ["--list", "-t", "nope"],
                                  ["--list", "-t", "wmt22", "-l", "de-en"], ["--list", "-t", "wmt17", "-l", "en-de"]])
def test_list_is_sacrebleus(cache, argv):
    text = same_output(cache, argv)
    if argv == ["--list"]:
        assert text.startswith("The available test sets are:\n") and "\nwmt22 " in text


@pytest.mark.parametrize("seed", ["0", "1", "2", "3"])
def test_field_order_follows_sacrebleus_registry(cache, seed):
    """The WMT XML reference fields come in set order (hash seed): the same as sacrebleu's."""
    text = same_output(cache, ["--list", "-t", "wmt22", "-l", "en-de"], seed=seed)
    assert text.startswith("en-de: src, ref:") and text.endswith(", domain\n")
    same_output(cache, ["-t", "wmt22", "-l", "en-de", "--echo", "all"], seed=seed)


@pytest.mark.parametrize("argv", [
    ["-t", "wmt22", "-l", "de-en", "--echo", "ref"],
    ["-t", "wmt22", "-l", "de-en", "--echo", "src", "ref:B", "docid", "origlang", "domain", "LT22"],
    ["-t", "wmt22", "-l", "de-en", "--echo", "ref", "--origlang", "en"],
    ["-t", "wmt22", "-l", "de-en", "--echo", "docid", "ref", "--origlang", "non-de", "--subset", "soc|spe"],
    ["-t", "wmt22", "-l", "de-en", "--echo", "ref", "--subset", "country:news"],
    ["-t", "wmt17", "-l", "en-de", "--echo", "all"],
    ["-t", "wmt17", "-l", "en-de", "--echo", "ref", "genre", "--origlang", "de"],
    ["-t", "wmt22,wmt17", "-l", "en-de", "--echo", "ref", "--origlang", "en"],
])
def test_echo_is_sacrebleus(cache, argv):
    assert same_output(cache, argv).count("\n") > 100


def test_a_missing_raw_file_is_one_line_where_sacrebleu_has_a_traceback(cache):
    """--list -t wmt22 reads every pair's XML; the cache has two of them."""
    code, _, err = sacrebleu(cache, "--list", "-t", "wmt22")
    assert code == 1 and "Traceback" in err
    raw = cache / "wmt22" / "raw" / "wmt22-news-systems-1.1" / "xml" / "wmttest2022.cs-en.all.xml"
    assert error_line(ours(cache, "info", "--list", "-t", "wmt22"), 1) == \
        f"beambleu: error: {raw}: missing from sacrebleu's cache (delete {cache / 'wmt22' / 'raw'} to have wmt22 " \
        "downloaded again)"


@pytest.mark.parametrize("argv,message", [
    (["-t", "wmt22", "-l", "de-en", "--echo", "ref:C"],
     "No such field ref:C in test set wmt22 for language pair de-en; available fields: "),
    (["-t", "wmt22", "-l", "de-en", "--echo", "all", "ref"], "Cannot use --echo all with other fields"),
    (["-t", "wmt22", "--echo", "ref"],
     "I need a language pair (-l). Use --list to see available language pairs for this test set."),
    (["ref.txt", "-l", "de-en", "--echo", "ref"], "--echo requires a test set (-t) and a language pair (-l)"),
    (["-t", "wmt17", "-l", "en-de", "--echo", "ref", "--subset", "news"],
     "No subset annotation available for test set wmt17"),
])
def test_echo_refusals_say_what_sacrebleu_says(cache, argv, message):
    code, out, err = sacrebleu(cache, *argv)
    assert code == 1 and out == b""
    line = error_line(ours(cache, "info", *argv), 2)
    assert line.startswith(f"beambleu: error: {message}"), line
    assert message.split(";")[0].split(" (")[0].rstrip(".") in err  # sacrebleu logs (or raises) the same words


def test_citation(cache):
    """sacrebleu 2.6.0 fails on every --citation (TypeError); ours prints the registry's
    citations and warns for a test set without one."""
    code, _, err = sacrebleu(cache, "-t", "wmt17", "--citation")
    assert code == 1 and "TypeError" in err
    citation = sacre_value(cache, "from sacrebleu.dataset import DATASETS\n"
                                  "print(json.dumps(DATASETS['wmt17'].citation))")
    code, out, err = ours(cache, "info", "-t", "wmt17,wmt22", "--cite")
    assert code == 0 and out.decode() == citation + "\n" and citation.startswith("@InProceedings{bojar-EtAl:2017")
    assert err == "beambleu: warning: No citation found for wmt22\ninfo_command: 0\n"
    assert ours(cache, "info", "-t", "wmt17,wmt22", "--cite", "-q")[2] == "info_command: 0\n"
    assert error_line(ours(cache, "info", "--citation"), 2) == "beambleu: error: I need a test set (-t)."
    assert error_line(ours(cache, "info", "--citation", "-t", "wmt99"), 2) == \
        "beambleu: error: Unknown test set 'wmt99'; run with --list to see the available test sets"


def test_precedence_and_pass_through(cache):
    """sacrebleu's order: --download, then --list, then --citation, then --echo; without any of
    them info_command returns None."""
    listing = same_output(cache, ["--list", "-l", "en-de", "--citation", "--echo", "ref"])
    assert listing.startswith("The available test sets for en-de are:\n")
    same_output(cache, ["--download", "wmt22", "-l", "de-en", "--list"])
    assert ours(cache, "info", "-t", "wmt22", "-l", "de-en", "-i", "x")[2] == "info_command: None\n"
    code, out, err = ours(cache, "info", "-t", "wmt17", "--cite", "--echo", "ref")  # --echo would need -l
    assert code == 0 and out.startswith(b"@InProceedings{bojar-EtAl:2017") and err == "info_command: 0\n"


def test_download_offline(cache, tmp_path):
    """--download with a filled cache needs no network; with an empty one it is one line naming
    the archive it needs (sacrebleu: a traceback)."""
    assert ours(cache, "info", "--download", "wmt17", "-l", "en-de")[0] == 0
    assert ours(cache, "info", "--download", "wmt22")[0] == 0  # sacrebleu: KeyError: None
    empty = tmp_path / "empty"
    code, _, err = sacrebleu(empty, "--download", "wmt17", "-l", "en-de")
    assert code == 1 and "URLError" in err
    assert error_line(ours(empty, "info", "--download", "wmt17", "-l", "en-de"), 1) == \
        f"beambleu: error: {empty / 'wmt17' / 'raw' / 'wmt17.test.tgz'}: not in sacrebleu's cache, and cannot be " \
        "downloaded from https://data.statmt.org/wmt17/translation-task/test.tgz (network disabled by the test)"
    assert error_line(ours(empty, "info", "--download", "wmt99"), 2) == \
        "beambleu: error: No such test set wmt99; run with --list to see the available test sets"
    assert error_line(ours(empty, "info", "--download", "wmt17", "-l", "xx-yy"), 2).startswith(
        "beambleu: error: No such language pair 'xx-yy'; available language pairs for 'wmt17': cs-en, de-en")


# --------------------------------------------------------------------------- checks, references


@pytest.mark.parametrize("argv,message", [
    ([], "I need reference files (before -i/--input) or a predefined test set (-t)"),
    (["-t", "wmt99", "-l", "de-en"], "Unknown test set 'wmt99'; run with --list to see the available test sets"),
    (["-t", "wmt22,wmt99", "-l", "de-en"], "Unknown test set 'wmt99'; run with --list to see the available test sets"),
    (["r.txt", "-t", "wmt22", "-l", "de-en"],
     "I need exactly one of (a) a predefined test set (-t) or (b) a list of references"),
    (["-t", "wmt22"], "I need a language pair (-l). Use --list to see available language pairs for this test set."),
    (["-t", "wmt17,wmt22", "-l", "de-fr"], "No such language pair 'de-fr'; available language pairs for 'wmt17': "
                                           "cs-en, de-en, en-cs, en-de, en-fi, en-lv, en-ru, en-tr, en-zh, fi-en, "
                                           "lv-en, ru-en, tr-en, zh-en"),
    (["-t", "wmt22", "-l", "de-en", "-nr", "2"],
     "--num-refs splits tab-delimited references from a single reference file: not with -t, nor with several "
     "reference files"),
    ([WMT22_DE_EN / "ref.A.txt", "--origlang", "de"],
     "Filtering for --origlang or --subset needs a test (-t) and a language pair (-l)."),
    (["-t", "wmt17", "-l", "en-de", "--subset", "x"], "No subset annotation available for test set wmt17"),
    (["-t", "wmt22", "-l", "de-en", "--subset", "a("],
     "--subset 'a(': not a regular expression (missing ), unterminated subpattern at position 1)"),
    (["-t", "wmt22", "-l", "cs-en", "--origlang", "cs"],
     "--origlang, --subset and --detail do not work with wmt22/cs-en in sacrebleu 2.6.0 (its registry entry names "
     "the file by key)"),
    (["-t", "wmt22", "-l", "cs-en", "--detail"],
     "--origlang, --subset and --detail do not work with wmt22/cs-en in sacrebleu 2.6.0 (its registry entry names "
     "the file by key)"),
    (["-t", "wmt20/robust/set1", "-l", "en-ja", "--origlang", "en"],
     "--origlang and --subset supports only WMT *.xml and *.sgm files, not "),
    ([WMT22_DE_EN / "ref.A.txt", "-l", "en"], "-l 'en': a language pair is SRC-TRG, e.g. en-de"),
])
def test_usage_is_refused_as_sacrebleu_refuses_it(cache, argv, message):
    """One line, exit 2; sacrebleu refuses the same command line (exit 1, often with a traceback)."""
    assert error_line(ours(cache, "refs", *argv), 2).startswith(f"beambleu: error: {message}")
    code, out, _ = sacrebleu(cache, *argv, "-i", WMT22_DE_EN / "sys.LT22.txt")
    assert code == 1 and out == b""


def test_reference_files_are_sacrebleus(cache):
    for argv in (["-t", "wmt22", "-l", "de-en"], ["-t", "wmt22,wmt17,wmt22", "-l", "en-de"]):
        code, out, err = ours(cache, "refs", *argv)
        assert code == 0, err
        names = argv[1].split(",")
        expected = sacre_value(cache, "from sacrebleu.utils import get_reference_files\n"
                                      f"print(json.dumps([get_reference_files(t, {argv[3]!r}) for t in {names!r}]))")
        assert json.loads(out) == expected and len(expected[0]) == 1
    code, out, _ = ours(cache, "read", "-t", "wmt22,wmt17", "-l", "en-de")
    echoed = sacrebleu(cache, "-t", "wmt22,wmt17", "-l", "en-de", "--echo", "ref")[1].decode().splitlines()
    assert code == 0 and json.loads(out) == [[r] for r in echoed] and len(echoed) == 2037 + 3004


def test_a_test_set_without_the_registrys_reference(cache, tmp_path):
    """wmt23 uses the reference of translator refA: an XML file without it gives no reference
    file (sacrebleu warns, then fails on the lengths)."""
    root = shutil.copytree(cache, tmp_path / "c")
    add_test_set(root, CORPORA, "wmt23", "de-en")
    xml = root / "wmt23" / "raw" / "wmt23-news-systems-v.0.1" / "xml" / "wmttest2023.de-en.all.xml"
    xml.write_text(xml.read_text(encoding="utf-8").replace('translator="refA"', 'translator="refZ"'),
                   encoding="utf-8")
    assert error_line(ours(root, "refs", "-t", "wmt23", "-l", "de-en"), 2) == \
        "beambleu: error: No references found for test set wmt23/de-en"


def test_offline_with_a_filled_cache_and_missing_files(cache, tmp_path):
    root = shutil.copytree(cache, tmp_path / "c")
    assert ours(root, "refs", "-t", "wmt17", "-l", "en-de")[0] == 0  # processes the raw files, offline
    # processed files are enough for SGML test sets: no raw file, no archive, no network needed
    shutil.rmtree(root / "wmt17" / "raw")
    code, out, err = ours(root, "refs", "-t", "wmt17", "-l", "en-de")
    assert code == 0 and json.loads(out) == [[str(root / "wmt17" / "wmt17.en-de.ref")]], err
    # a WMT XML test set reads its raw file on every use
    raw = root / "wmt22" / "raw" / "wmt22-news-systems-1.1" / "xml" / "wmttest2022.de-en.all.xml"
    raw.unlink()
    assert error_line(ours(root, "refs", "-t", "wmt22", "-l", "de-en"), 1) == \
        f"beambleu: error: {raw}: missing from sacrebleu's cache (delete {root / 'wmt22' / 'raw'} to have wmt22 " \
        "downloaded again)"
    # with its archive gone too, it would be downloaded: offline, one line naming the archive
    (root / "wmt22" / "raw" / "wmt22.v1.1.tar.gz").unlink()
    assert error_line(ours(root, "refs", "-t", "wmt22", "-l", "de-en"), 1) == \
        f"beambleu: error: {root / 'wmt22' / 'raw' / 'wmt22.v1.1.tar.gz'}: not in sacrebleu's cache, and cannot " \
        "be downloaded from https://github.com/wmt-conference/wmt22-news-systems/archive/refs/tags/v1.1.tar.gz " \
        "(network disabled by the test)"
    # a corrupt raw file
    raw2 = root / "wmt22" / "raw" / "wmt22-news-systems-1.1" / "xml" / "wmttest2022.en-de.all.xml"
    (root / "wmt22" / "raw" / "wmt22.v1.1.tar.gz").write_bytes(b"x")
    raw2.write_text("<dataset><doc", encoding="utf-8")
    line = error_line(ours(root, "refs", "-t", "wmt22", "-l", "en-de"), 1)
    assert line.startswith(f"beambleu: error: {raw2}: cannot read this test set file: "), line


def without_sacrebleu(cache, *argv):
    """Our driver with sacrebleu not importable."""
    code = f"import sys\nsys.modules['sacrebleu'] = None\nsys.argv[1:] = {list(argv)!r}\n" + DRIVER
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env(cache), cwd=REPO,
                          timeout=120)


def test_missing_sacrebleu_is_a_usage_error(cache):
    """Without the extra: one line saying how to install it; reference files never need it."""
    for argv, what in [(["refs", "-t", "wmt22", "-l", "de-en"], "-t/--test-set"), (["info", "--list"], "--list"),
                       (["info", "--echo", "ref", "-t", "wmt22", "-l", "de-en"], "--echo")]:
        proc = without_sacrebleu(cache, *argv)
        assert (proc.returncode, proc.stdout, proc.stderr) == (
            2, "", f"beambleu: error: {what} needs sacrebleu's test-set registry: pip install 'beambleu[testsets]'\n")
    proc = without_sacrebleu(cache, "mask", "r.txt", "-l", "de-en")
    assert (proc.returncode, proc.stdout) == (0, "null\n"), proc.stderr
    proc = without_sacrebleu(cache, "info", "r.txt", "-i", "h.txt")
    assert (proc.returncode, proc.stderr) == (0, "info_command: None\n")


# ------------------------------------------------------------------------- --origlang, --subset


FILTERS = [("de", None), ("en", None), ("non-de", None), ("non-xx", None), ("xx", None), (None, "news"),
           (None, "country:soc|spe"), ("de", "news|speech"), ("non-de", "^e"), (None, "nothing")]


@pytest.mark.parametrize("test_set,pair", [("wmt22", "de-en"), ("wmt17", "en-de"), ("wmt22,wmt17", "en-de")])
def test_keep_mask_is_filter_subset(cache, test_set, pair):
    filters = [f for f in FILTERS if f[1] is None or test_set == "wmt22"]  # no annotation for wmt17
    expected = sacre_value(cache, f"""
from sacrebleu.utils import filter_subset, get_reference_files
n = sum(len(open(get_reference_files(t, {pair!r})[0], encoding="utf-8").readlines())
        for t in {test_set!r}.split(","))
print(json.dumps([n, [filter_subset([list(range(n))], {test_set!r}, {pair!r}, o, s)[0] for o, s in {filters!r}]]))
""")
    n, kept = expected
    for (origlang, subset), indices in zip(filters, kept):
        argv = ["-t", test_set, "-l", pair] + (["--origlang", origlang] if origlang else []) + (
            ["--subset", subset] if subset else [])
        code, out, err = ours(cache, "mask", *argv)
        assert code == 0, err
        assert json.loads(out) == [n, indices], (origlang, subset)
    assert 0 < len(kept[0]) < n and len(kept[0]) + len(kept[2]) == n
    assert json.loads(ours(cache, "mask", "-t", test_set, "-l", pair)[1]) is None


def test_keep_mask_length_follows_sacrebleus_zip(cache):
    """Lines beyond the test set are dropped; a shorter output keeps its own lines only. By hand:
    the third synthetic document (lines 21-24, 1-based) is the first with origlang de, the sixth
    (from line 55) the next."""
    argv = ["-t", "wmt17", "-l", "en-de", "--origlang", "de"]
    full = json.loads(ours(cache, "mask", *argv)[1])
    assert full[0] == 3004 and full[1][:5] == [20, 21, 22, 23, 54]
    assert json.loads(ours(cache, "mask", *argv, "--n-lines", "3010")[1]) == [3010, full[1]]
    assert json.loads(ours(cache, "mask", *argv, "--n-lines", "22")[1]) == [22, [20, 21]]


# -------------------------------------------------------------------------------------- --detail


def detail_of_sacrebleu(cache, argv, width="1", **extra):
    code, out, err = sacrebleu(cache, *argv, "--detail", "-w", width, "-f", "text", **extra)
    assert code == 0, err
    lines = out.decode().splitlines()
    n_metrics = len(argv[argv.index("-m") + 1:]) if "-m" in argv else 1
    return lines[n_metrics:]  # the scores come first


@pytest.mark.parametrize("argv", [
    ["-t", "wmt22", "-l", "de-en", "-i", WMT22_DE_EN / "sys.LT22.txt", "-m", "chrf", "bleu"],
    ["-t", "wmt22", "-l", "de-en", "-i", WMT22_DE_EN / "sys.Online-W.txt", "--subset", "soc|news", "-m", "bleu"],
    ["-t", "wmt17", "-l", "en-de", "-i", WMT17_EN_DE / "sys.LIUM-NMT.4900.txt", "-m", "bleu", "chrf"],
    [WMT22_DE_EN / "ref.A.txt", "-i", WMT22_DE_EN / "sys.LT22.txt", "-m", "bleu"],
])
def test_detail_is_sacrebleus(cache, argv):
    expected = detail_of_sacrebleu(cache, argv, width="3")
    code, out, err = ours(cache, "detail", *argv, "-w", "3")
    assert code == 0, err
    assert out.decode().splitlines() == expected
    assert len(expected) >= 4 if "-t" in argv else expected == ["No subset information found. Consider using "
                                                                "--origlang argument."]


def test_detail_with_origlang_fails_in_sacrebleu_and_is_one_line_here(cache):
    argv = ["-t", "wmt22", "-l", "de-en", "-i", WMT22_DE_EN / "sys.LT22.txt", "--origlang", "de", "--detail"]
    code, out, err = sacrebleu(cache, *argv)
    assert code == 1 and "max() arg is an empty sequence" in err
    assert error_line(ours(cache, "detail", *argv), 2) == \
        "beambleu: error: --detail with --origlang de: sacrebleu 2.6.0 fails here (it reads --origlang as the " \
        "languages 'd', 'e', which no subset has)"


def run_in_terminal(argv, env_vars):
    """stdout of a command whose standard output is a terminal (newlines as the tty gives them)."""
    main, sub = pty.openpty()
    proc = subprocess.Popen(argv, stdout=sub, stderr=subprocess.PIPE, env=env_vars, cwd=REPO)
    os.close(sub)
    chunks = []
    while True:
        try:
            data = os.read(main, 1 << 16)
        except OSError:  # EIO: the other end is closed
            break
        if not data:
            break
        chunks.append(data)
    os.close(main)
    assert proc.wait(timeout=300) == 0, proc.stderr.read()
    return b"".join(chunks).replace(b"\r\n", b"\n").decode()


def test_detail_colour_is_sacrebleus_on_a_terminal(cache):
    argv = ["-t", "wmt17", "-l", "en-de", "-i", str(WMT17_EN_DE / "sys.uedin-nmt.4722.txt"), "-m", "bleu", "chrf"]
    colour_env = {k: v for k, v in env(cache).items() if k != "NO_COLOR"}
    text = run_in_terminal([sys.executable, "-c", sacrebleu_argv_code(argv + ["--detail", "-f", "text"])],
                           colour_env)
    expected = [line for line in text.splitlines() if line.startswith("\x1b[33morig")]
    assert len(expected) == 4 and "\x1b[0m: sentences=" in expected[0]
    code, out, err = ours(cache, "detail", *argv, "--color")
    assert code == 0 and out.decode().splitlines() == expected, err
    probe = (NO_NETWORK + "import sys\nfrom beambleu.commands.testsets import detail_color\n"
             "print(detail_color(), detail_color(no_color=True), detail_color(stream=sys.stderr))")
    assert run_in_terminal([sys.executable, "-c", probe], colour_env).strip() == "True False False"
    assert run_in_terminal([sys.executable, "-c", probe], env(cache)).strip() == "False False False"


def test_format_detail_by_hand():
    from beambleu.commands.testsets import NO_SUBSETS, format_detail

    rows = [("origlang=de domain=ALL", 12, "BLEU", 25.04), ("origlang=de domain=ALL", 12, "chrF2++", 51.0),
            ("origlang=en domain=news", 3, "BLEU", 7.0), ("origlang=en domain=news", 3, "chrF2++", 0.449)]
    assert format_detail(rows, 2) == [
        "origlang=de domain=ALL  : sentences=12     BLEU    = 25.04",
        "origlang=de domain=ALL  : sentences=12     chrF2++ = 51.00",
        "origlang=en domain=news : sentences=3      BLEU    = 7.00",
        "origlang=en domain=news : sentences=3      chrF2++ = 0.45",
    ]
    assert format_detail(rows[:1], 0, color=True) == ["\x1b[33moriglang=de domain=ALL \x1b[0m: sentences=12     "
                                                      "BLEU = 25"]
    assert format_detail([], 1) == [NO_SUBSETS] == ["No subset information found. Consider using --origlang argument."]


# ---------------------------------------------------------------------- target language, tokenizer


def test_default_tokenizer_is_sacrebleus_rule(caplog):
    from sacrebleu.metrics.bleu import BLEU

    from beambleu.commands.testsets import default_tokenizer, tokenizer_warnings

    for lang in ("zh", "ja", "ko", "de", "en", "", None, "zh-Hant"):
        assert default_tokenizer(lang) == BLEU._TOKENIZER_MAP.get(lang, BLEU.TOKENIZER_DEFAULT)
    assert [default_tokenizer(x) for x in ("zh", "ja", "ko", "de")] == ["zh", "ja-mecab", "ko-mecab", "13a"]
    for tok, lang in (("13a", "zh"), ("zh", "zh"), ("intl", "ja"), ("char", "ko"), ("13a", "de"), (None, "zh")):
        caplog.clear()
        with caplog.at_level("WARNING", logger="sacrebleu"):
            BLEU(tokenize=tok, trg_lang=lang)
        assert tokenizer_warnings(tok, lang, None) == [r.getMessage() for r in caplog.records]
    assert tokenizer_warnings("none", "de", "wmt22") == [
        "You are turning off BLEU's internal tokenizer presumably to supply your own tokenized files.",
        "Published numbers will not be comparable to other papers."]
    assert tokenizer_warnings("none", "de", None) == []


def test_trg_lang(cache):
    assert json.loads(ours(cache, "trg", "-t", "wmt22", "-l", "en-zh")[1]) == ["zh", "zh"]
    assert json.loads(ours(cache, "trg", "r.txt", "-l", "en-ja")[1]) == ["ja", "ja-mecab"]
    assert json.loads(ours(cache, "trg", "r.txt")[1]) == [None, "13a"]


OPTIONS = r"""
import argparse, json, sys
from beambleu.commands.testsets import add_testset_arguments

def described(parser):
    return {a.dest: [a.option_strings, a.default, a.nargs, a.const, type(a).__name__] for a in parser._actions}

captured = {}
original = argparse.ArgumentParser.parse_args

def capture(self, *args, **kwargs):  # sacrebleu's parse_args builds its parser, then parses
    captured.update(described(self))
    return original(self, [])

argparse.ArgumentParser.parse_args = capture
import sacrebleu.sacrebleu
sacrebleu.sacrebleu.parse_args()
argparse.ArgumentParser.parse_args = original
mine, small = argparse.ArgumentParser(), argparse.ArgumentParser()
add_testset_arguments(mine)
add_testset_arguments(small, info=False)
print(json.dumps([captured, described(mine), described(small)]))
"""


def test_option_names_dests_and_defaults_are_sacrebleus(cache):
    proc = subprocess.run([sys.executable, "-c", OPTIONS], capture_output=True, text=True, env=env(cache), cwd=REPO,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    theirs, mine, small = json.loads(proc.stdout)
    del mine["help"]
    assert set(mine) == {"test_set", "langpair", "origlang", "subset", "download", "echo", "list", "citation",
                         "detail"}
    assert {dest: theirs[dest] for dest in mine} == mine
    assert set(small) == {"help", "test_set", "langpair", "origlang", "subset"}

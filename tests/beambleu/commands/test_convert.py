"""`beambleu convert`: single-pass reading, and outputs that own their paths (staged, committed
by one rename, a manifest in every directory, refusals before anything is written, nothing left
after a failure or Ctrl-C)."""

import json
import os
import resource
import signal
import subprocess
import sys
import time

import pyarrow.parquet as pq
import pytest

from ...oracle import REPO, read_lines
from .test_faults_text import one_line

SAMPLE = REPO / "examples" / "sample"
REF, REF_B, HYP = SAMPLE / "ref.A.txt", SAMPLE / "ref.B.txt", SAMPLE / "sys.alpha.txt"
MANIFEST = "_beambleu_manifest.json"


def convert(*args, cwd=REPO, timeout=300, preexec_fn=None):
    return subprocess.run([sys.executable, "-m", "beambleu.cli", "convert", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=timeout, preexec_fn=preexec_fn,
                          env={**os.environ, "PYTHONPATH": str(REPO)})


def listing(d):
    return sorted(str(p.relative_to(d)) for p in d.rglob("*"))


def rows_of(directory):
    return pq.read_table(sorted(directory.glob("*.parquet"))).to_pydict()


def test_directory_output_has_a_manifest_and_no_stale_parts(tmp_path):
    """A smaller conversion over a larger one: the directory holds exactly the new parts."""
    out = tmp_path / "out"
    proc = convert(REF, REF_B, "-i", HYP, "-o", out, "--rows-per-shard", "5", "--row-group-size", "2",
                   "--set", "system=alpha")
    assert proc.returncode == 0 and proc.stdout == proc.stderr == "", proc.stderr
    parts = [f"part-{i:05d}.parquet" for i in range(6)]
    assert sorted(os.listdir(out)) == [MANIFEST] + parts
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["written_by"] == "beambleu" and manifest["parts"] == parts and manifest["rows"] == 30
    assert manifest["columns"] == ["candidate", "references", "line", "system"]
    assert [pq.ParquetFile(out / p).metadata.num_row_groups for p in parts] == [3] * 6  # 2 + 2 + 1 rows
    table = rows_of(out)
    assert table["candidate"] == read_lines(HYP) and table["line"] == list(range(1, 31))
    assert table["references"] == [list(r) for r in zip(read_lines(REF), read_lines(REF_B))]
    assert set(table["system"]) == {"alpha"}

    short = tmp_path / "short.txt"
    short.write_text("".join(line + "\n" for line in read_lines(HYP)[:12]), encoding="utf-8")
    ref12 = tmp_path / "ref12.txt"
    ref12.write_text("".join(line + "\n" for line in read_lines(REF)[:12]), encoding="utf-8")
    proc = convert(ref12, "-i", short, "-o", out, "--rows-per-shard", "5", "--overwrite")
    assert proc.returncode == 0, proc.stderr
    assert sorted(os.listdir(out)) == [MANIFEST] + parts[:3]
    assert json.loads((out / MANIFEST).read_text())["rows"] == 12
    assert rows_of(out)["line"] == list(range(1, 13))
    assert listing(tmp_path) == sorted(["out", *(f"out/{n}" for n in [MANIFEST] + parts[:3]), "ref12.txt",
                                        "short.txt"])


def test_file_output_is_replaced_only_with_overwrite(tmp_path):
    out = tmp_path / "deep" / "er" / "x.parquet"
    assert convert(REF, "-i", HYP, "-o", out).returncode == 0
    assert pq.read_table(out).num_rows == 30
    before = out.read_bytes()
    assert one_line(convert(REF, "-i", HYP, "-o", out), 2) == \
        f"beambleu: error: {out}: --output exists (use --overwrite to replace it)"
    assert out.read_bytes() == before
    assert convert(REF, "-i", HYP, "-o", out, "--overwrite", "--set", "k=v").returncode == 0
    assert pq.read_table(out).column_names == ["candidate", "references", "line", "k"]
    assert listing(tmp_path) == ["deep", "deep/er", "deep/er/x.parquet"]


def test_refusals_touch_nothing(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    hyp, ref = data / "hyp.txt", data / "ref.txt"
    hyp.write_bytes(HYP.read_bytes())
    ref.write_bytes(REF.read_bytes())
    (tmp_path / "x.parquet").mkdir()
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    work = tmp_path / "work"
    work.mkdir()
    cases = [
        (["-o", hyp, "--overwrite"], f"{hyp}: --output is the input {hyp}"),
        (["-o", data, "--overwrite"], f"{data}: --output contains the input {hyp}"),
        (["-o", tmp_path / "x.parquet", "--overwrite"],
         f"{tmp_path / 'x.parquet'}: --output is a directory; it must name a file"),
        (["-o", mine],
         f"{mine}: --output is a non-empty directory that beambleu did not write (no {MANIFEST}); not replaced"),
        (["-o", mine, "--overwrite"],
         f"{mine}: --output is a non-empty directory that beambleu did not write (no {MANIFEST}); not replaced"),
        (["-o", hyp / "sub"], f"{hyp / 'sub'}: --output lies inside the input {hyp}"),
        (["-o", "x.parquet", "--set", "line=3"], "--set 'line=3': column 'line' is reserved"),
        (["-o", "x.parquet", "--rows-per-shard", "0"], "--rows-per-shard and --row-group-size must be at least 1"),
    ]
    before = listing(tmp_path)
    for args, message in cases:
        assert one_line(convert(ref, "-i", hyp, *args, cwd=work), 2) == f"beambleu: error: {message}"
    for out in (".", str(tmp_path)):
        assert one_line(convert(ref, "-i", hyp, "-o", out, "--overwrite", cwd=work), 2) == \
            f"beambleu: error: {out}: --output is the current directory or contains it; name a file or a new directory"
    assert listing(tmp_path) == before and (mine / "notes.txt").read_text() == "keep me"


def test_failures_leave_nothing(tmp_path):
    bad = tmp_path / "bad.txt"
    lines = HYP.read_bytes().split(b"\n")
    lines[19] = b"caf\xc3 au lait"
    bad.write_bytes(b"\n".join(lines))
    new = tmp_path / "new" / "dir"
    assert one_line(convert(REF, "-i", bad, "-o", new, "--rows-per-shard", "5"), 1) == \
        f"beambleu: error: {bad}: line 20, column 4: invalid UTF-8 (byte 0xc3)"
    short = tmp_path / "short.txt"
    short.write_text("one line\n", encoding="utf-8")
    assert one_line(convert(REF, "-i", short, "-o", tmp_path / "x.parquet"), 1) == \
        f"beambleu: error: {REF}: has 30 lines but the system output {short} has 1"
    assert listing(tmp_path) == ["bad.txt", "short.txt"]
    old = tmp_path / "old"
    assert convert(REF, "-i", HYP, "-o", old, "--rows-per-shard", "7").returncode == 0
    kept = {p: (old / p).read_bytes() for p in os.listdir(old)}
    assert one_line(convert(REF, "-i", bad, "-o", old, "--overwrite"), 1).endswith("line 20, column 4: invalid "
                                                                                    "UTF-8 (byte 0xc3)")
    assert {p: (old / p).read_bytes() for p in os.listdir(old)} == kept  # the earlier output is intact


def test_disk_full_leaves_nothing(tmp_path):
    """A file size limit makes writes fail with EFBIG (Python ignores SIGXFSZ), like a full disk."""
    big = tmp_path / "big.txt"
    big.write_text("".join(f"segment number {i} of a file too large to write\n" for i in range(20_000)))

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (50_000, 50_000))

    proc = convert(big, "-i", big, "-o", tmp_path / "out", "--row-group-size", "500", preexec_fn=limit)
    line = one_line(proc, 1)
    assert line.startswith(f"beambleu: error: {tmp_path / 'out'}: cannot write: ") and "File too large" in line
    assert listing(tmp_path) == ["big.txt"]


def _default_sigint():
    """In the child before exec: SIGINT at its default, so that Python turns it into KeyboardInterrupt
    (a test run started in the background by a non-interactive shell inherits SIGINT ignored, and a
    command started so rightly keeps ignoring it)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("signum,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupt_mid_conversion_leaves_nothing_and_a_rerun_works(tmp_path, signum, code):
    """SIGINT or SIGTERM while convert waits for more input from a FIFO that stalls: exit 130 or
    143, no staged parts left; then the same command works without and with --overwrite."""
    fifo = tmp_path / "hyp.fifo"
    os.mkfifo(fifo)
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "beambleu.cli", "convert", str(REF), "-i", str(fifo), "-o",
                             str(out), "--rows-per-shard", "10", "--row-group-size", "5"],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_default_sigint)
    writer = open(fifo, "wb")
    try:
        writer.write(b"".join(line.encode() + b"\n" for line in read_lines(HYP)[:25]))
        writer.flush()
        deadline = time.monotonic() + 120
        while not list(tmp_path.glob(".out.beambleu-tmp-*/part-00002.parquet")):  # mid-run, reading line 26
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                pytest.fail(f"convert did not start writing its third part (exit code {proc.wait()})")
            time.sleep(0.05)
        proc.send_signal(signum)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        writer.close()
    assert proc.returncode == code and stdout == "" and "Traceback" not in stderr, stderr
    assert listing(tmp_path) == ["hyp.fifo"]
    os.remove(fifo)
    assert convert(REF, "-i", HYP, "-o", out, "--rows-per-shard", "10").returncode == 0
    assert one_line(convert(REF, "-i", HYP, "-o", out), 2) == \
        f"beambleu: error: {out}: --output exists (use --overwrite to replace it)"
    assert convert(REF, "-i", HYP, "-o", out, "--rows-per-shard", "10", "--overwrite").returncode == 0
    assert listing(tmp_path) == ["out"] + [f"out/{n}" for n in sorted([MANIFEST] + [f"part-0000{i}.parquet"
                                                                                    for i in range(3)])]


def test_streams_are_read_once(tmp_path):
    """Standard input and process substitution, each read once (the line count used to open them twice)."""
    out = tmp_path / "x.parquet"
    script = f"{sys.executable} -m beambleu.cli convert <(cat {REF}) -i <(cat {HYP}) -o {out}"
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 0, proc.stderr
    table = pq.read_table(out).to_pydict()
    assert table["candidate"] == read_lines(HYP) and table["references"] == [[r] for r in read_lines(REF)]
    with open(HYP, "rb") as stdin:
        proc = subprocess.run([sys.executable, "-m", "beambleu.cli", "convert", str(REF), "-i", "-", "-o", str(out),
                               "--overwrite"], stdin=stdin, capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert pq.read_table(out).to_pydict() == table
    assert listing(tmp_path) == ["x.parquet"]


# ------------------------------------------------------------------ several system outputs at once

BETA = SAMPLE / "sys.beta.txt"


def test_several_systems_share_the_references(tmp_path):
    """-i a b: a row per segment and system, segment by segment, a `system` column named by each
    file's stem; row groups of --row-group-size rows; the manifest names the systems."""
    out = tmp_path / "out"
    proc = convert(REF, REF_B, "-i", HYP, BETA, "-o", out, "--rows-per-shard", "20", "--row-group-size", "6",
                   "--set", "langpair=en-en")
    assert proc.returncode == 0 and proc.stdout == proc.stderr == "", proc.stderr
    table = rows_of(out)
    alpha, beta, refs = read_lines(HYP), read_lines(BETA), [list(r) for r in zip(read_lines(REF), read_lines(REF_B))]
    assert table["candidate"] == [h for pair in zip(alpha, beta) for h in pair]
    assert table["system"] == ["sys.alpha", "sys.beta"] * 30
    assert table["line"] == [n for n in range(1, 31) for _ in range(2)]
    assert table["references"] == [r for r in refs for _ in range(2)] and set(table["langpair"]) == {"en-en"}
    parts = sorted(p for p in os.listdir(out) if p.endswith(".parquet"))
    assert len(parts) == 3 and [pq.ParquetFile(out / p).metadata.num_rows for p in parts] == [20, 20, 20]
    assert [pq.ParquetFile(out / parts[0]).metadata.row_group(i).num_rows for i in range(4)] == [6, 6, 6, 2]
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["columns"] == ["candidate", "references", "line", "system", "langpair"]
    assert manifest["input"] == [str(HYP), str(BETA)] and manifest["systems"] == ["sys.alpha", "sys.beta"]


def test_system_names(tmp_path):
    out = tmp_path / "x.parquet"
    assert convert(REF, "-i", HYP, BETA, "--system-names", "alpha, beta", "-o", out).returncode == 0
    table = pq.read_table(out).to_pydict()
    assert table["system"][:4] == ["alpha", "beta", "alpha", "beta"] and len(table["system"]) == 60
    # one system output named: the column is there too
    assert convert(REF, "-i", HYP, "--system-names", "alpha", "-o", out, "--overwrite").returncode == 0
    assert pq.read_table(out).to_pydict()["system"] == ["alpha"] * 30
    # the same file twice, told apart by name
    assert convert(REF, "-i", HYP, HYP, "--system-names", "a,b", "-o", out, "--overwrite").returncode == 0
    assert pq.read_table(out).to_pydict()["candidate"] == [h for h in read_lines(HYP) for _ in range(2)]


def test_several_systems_refusals_write_nothing(tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    same = other / HYP.name
    same.write_bytes(HYP.read_bytes())
    out = tmp_path / "x.parquet"
    cases = [
        (["-i", HYP, BETA, "--system-names", "a"], "--system-names 'a': 1 name for 2 system outputs (-i)"),
        (["-i", HYP, "--system-names", "a,b"], "--system-names 'a,b': 2 names for 1 system output (-i)"),
        (["-i", HYP, BETA, "--system-names", "a,a"], "--system-names 'a,a': 'a' names two systems"),
        (["-i", HYP, BETA, "--system-names", "a,"], "--system-names 'a,': an empty name"),
        (["-i", HYP, same], f"-i: {HYP} and {same} are both named 'sys.alpha' by their file names; name the "
                            "systems with --system-names"),
        (["-i", HYP, BETA, "--set", "system=x"], "--set 'system=x': the system column names the system outputs "
                                                 "(several -i, or --system-names)"),
        (["-i", "-", "-"], "-i: standard input (-) can be read once"),
    ]
    for args, message in cases:
        assert one_line(convert(REF, *args, "-o", out), 2) == f"beambleu: error: {message}"
    short = tmp_path / "short.txt"
    short.write_text("one line\n", encoding="utf-8")
    assert one_line(convert(REF, "-i", HYP, short, "-o", out), 1) == \
        f"beambleu: error: {REF}: has 30 lines but the system output {short} has 1"
    assert sorted(os.listdir(tmp_path)) == ["other", "short.txt"]


# ------------------------------------------------------------------ -t/-l: a sacrebleu test set

from ...oracle import CORPORA  # noqa: E402
from ...sacrebleu_cache import NO_NETWORK, build_cache, env_for, sacrebleu_argv_code  # noqa: E402

TS_HYP = CORPORA / "wmt22" / "de-en" / "sys.LT22.txt"


@pytest.fixture(scope="module")
def ts_cache(tmp_path_factory):
    """A sacrebleu cache from the shared corpora (see tests/sacrebleu_cache.py): nothing to download."""
    if not (CORPORA / "MANIFEST.tsv").exists():
        pytest.skip(f"shared corpora not found at {CORPORA}")
    return build_cache(tmp_path_factory.mktemp("sacrebleu") / "cache", CORPORA)


def convert_ts(cache, *args):
    """`beambleu convert ARGS` with SACREBLEU=cache and downloads disabled."""
    argv = ["convert", *map(str, args)]
    code = NO_NETWORK + f"import sys\nfrom beambleu.cli import main\nsys.exit(main({argv!r}))"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=300,
                          env={**env_for(cache), "PYTHONPATH": str(REPO), "PYTHONHASHSEED": "0"})


def echo(cache, *args):
    """`sacrebleu --echo ...` lines, on the same cache, offline."""
    proc = subprocess.run([sys.executable, "-c", sacrebleu_argv_code([str(a) for a in args])], capture_output=True,
                          cwd=REPO, timeout=300, env={**env_for(cache), "PYTHONHASHSEED": "0"})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.decode("utf-8").splitlines()


def test_test_set_references(ts_cache, tmp_path):
    out = tmp_path / "x.parquet"
    proc = convert_ts(ts_cache, "-t", "wmt22", "-l", "de-en", "-i", TS_HYP, "-o", out, "--set", "system=LT22")
    assert proc.returncode == 0 and proc.stdout == proc.stderr == "", proc.stderr
    table = pq.read_table(out).to_pydict()
    refs = echo(ts_cache, "-t", "wmt22", "-l", "de-en", "--echo", "ref")
    assert len(refs) == 1984 and table["references"] == [[r] for r in refs]
    assert table["candidate"] == read_lines(TS_HYP) and table["line"] == list(range(1, 1985))
    assert set(table["system"]) == {"LT22"}


def test_test_set_subset_keeps_line_numbers(ts_cache, tmp_path):
    out = tmp_path / "shards"
    filters = ["--origlang", "de", "--subset", "news|social"]
    proc = convert_ts(ts_cache, "-t", "wmt22", "-l", "de-en", "-i", TS_HYP, "-o", out, "--rows-per-shard", "250",
                      "--row-group-size", "100", *filters)
    assert proc.returncode == 0, proc.stderr
    table = rows_of(out)
    expected = echo(ts_cache, "-t", "wmt22", "-l", "de-en", "--echo", "ref", "LT22", *filters)
    assert [[r] for r, _ in map(lambda x: x.split("\t"), expected)] == table["references"]
    assert table["candidate"] == [x.split("\t")[1] for x in expected]  # the system output, embedded in the XML
    hyps = read_lines(TS_HYP)
    assert table["candidate"] == [hyps[n - 1] for n in table["line"]]
    assert 100 < len(expected) < 1000 and table["line"] == sorted(table["line"]) and table["line"][-1] > 1000
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["rows"] == len(expected) and manifest["n_parts"] == -(-len(expected) // 250)
    assert (manifest["test_set"], manifest["langpair"], manifest["origlang"], manifest["subset"]) == \
        ("wmt22", "de-en", "de", "news|social")
    assert manifest["references"] == [str(ts_cache / "wmt22" / "wmt22.de-en.ref-A")]


def test_test_sets_are_concatenated(ts_cache, tmp_path):
    hyp = tmp_path / "both.txt"
    hyp.write_bytes((CORPORA / "wmt22" / "en-de" / "sys.Online-B.txt").read_bytes()
                    + (CORPORA / "wmt17" / "en-de" / "sys.online-B.0.txt").read_bytes())
    out = tmp_path / "x.parquet"
    proc = convert_ts(ts_cache, "-t", "wmt22,wmt17", "-l", "en-de", "-i", hyp, "-o", out, "--origlang", "en")
    assert proc.returncode == 0, proc.stderr
    table = pq.read_table(out).to_pydict()
    refs = echo(ts_cache, "-t", "wmt22,wmt17", "-l", "en-de", "--echo", "ref", "--origlang", "en")
    assert table["references"] == [[r] for r in refs] and max(table["line"]) > 2037
    assert table["candidate"] == [read_lines(hyp)[n - 1] for n in table["line"]]


def test_test_set_with_several_systems(ts_cache, tmp_path):
    """-t with -i a b: each system's row of a kept segment, the test set's references; an output
    of another length than the test set is named."""
    other = CORPORA / "wmt22" / "de-en" / "sys.Online-B.txt"
    out = tmp_path / "x.parquet"
    proc = convert_ts(ts_cache, "-t", "wmt22", "-l", "de-en", "-i", TS_HYP, other, "-o", out, "--origlang", "de")
    assert proc.returncode == 0, proc.stderr
    table = pq.read_table(out).to_pydict()
    expected = echo(ts_cache, "-t", "wmt22", "-l", "de-en", "--echo", "ref", "--origlang", "de")
    assert table["references"][0::2] == [[r] for r in expected] == table["references"][1::2]
    assert table["system"][:2] == ["sys.LT22", "sys.Online-B"] and table["line"][0::2] == table["line"][1::2]
    hyps = {"sys.LT22": read_lines(TS_HYP), "sys.Online-B": read_lines(other)}
    assert table["candidate"] == [hyps[s][n - 1] for s, n in zip(table["system"], table["line"])]
    wrong = CORPORA / "wmt17" / "en-de" / "sys.online-B.0.txt"
    proc = convert_ts(ts_cache, "-t", "wmt22", "-l", "de-en", "-i", TS_HYP, wrong, "-o", tmp_path / "y.parquet")
    assert one_line(proc, 1) == f"beambleu: error: {wrong}: has 3004 lines but the system output {TS_HYP} has 1984"
    assert sorted(os.listdir(tmp_path)) == ["x.parquet"]


def test_test_set_refusals_write_nothing(ts_cache, tmp_path):
    out = tmp_path / "x.parquet"
    wrong = CORPORA / "wmt17" / "en-de" / "sys.online-B.0.txt"
    cases = [
        ([REF, "-t", "wmt22", "-l", "de-en", "-i", TS_HYP], 2,
         "I need exactly one of (a) a predefined test set (-t) or (b) a list of references"),
        (["-i", TS_HYP], 2, "I need reference files (before -i/--input) or a predefined test set (-t)"),
        (["-t", "wmt22", "-i", TS_HYP], 2,
         "I need a language pair (-l). Use --list to see available language pairs for this test set."),
        ([REF, "-i", HYP, "--origlang", "de"], 2,
         "Filtering for --origlang or --subset needs a test (-t) and a language pair (-l)."),
        (["-t", "wmt22", "-l", "de-en", "-i", TS_HYP, "--origlang", "xx"], 2,
         "Test set 'wmt22' contains no sentence with origlang=xx"),
        (["-t", "wmt22", "-l", "de-en", "-i", wrong], 1,
         f"{wrong}: has 3004 lines but test set wmt22 (de-en) has 1984"),
    ]
    for args, rc, message in cases:
        assert one_line(convert_ts(ts_cache, *args, "-o", out), rc) == f"beambleu: error: {message}"
    inside = ts_cache / "wmt22" / "out.parquet"
    assert one_line(convert_ts(ts_cache, "-t", "wmt22", "-l", "de-en", "-i", TS_HYP, "-o", inside), 2) == \
        f"beambleu: error: {inside}: --output lies inside the input {ts_cache / 'wmt22'}"
    empty = tmp_path / "empty-cache"
    assert one_line(convert_ts(empty, "-t", "wmt17", "-l", "en-de", "-i", TS_HYP, "-o", out), 1) == \
        f"beambleu: error: {empty / 'wmt17' / 'raw' / 'wmt17.test.tgz'}: not in sacrebleu's cache, and cannot be " \
        "downloaded from https://data.statmt.org/wmt17/translation-task/test.tgz (network disabled by the test)"
    assert not out.exists() and not inside.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty-cache"]

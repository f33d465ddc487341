"""UTF-8 text files read a block of lines at a time (``_Segments._utf8_file_lines``) give the lines a
line-at-a-time reader gives: Python's ``bytes.split(b"\\n")``, decoded and ``rstrip()``-ed, written
out in each test; errors name the same line and column, in the same order when files are read in
lockstep. Blocks are made tiny here so that lines, characters and errors straddle them."""

from __future__ import annotations

import gzip
import random

import pytest

from beambleu.io import textfiles
from beambleu.io.textfiles import InputError, iter_chunks

PIECES = ["a", "b c", " ", "\t", "\r", "é", "東京", "\U0001F600", "\u00a0", "\u2028", "\x85", "\x1c", "x" * 40, ""]


def _expected(data: bytes):
    """The lines as sacrebleu's reading gives them: split at b"\\n" only, a final newline ending the
    last line, each decoded and rstrip()-ed."""
    if not data:
        return []
    raws = data.split(b"\n")
    if raws[-1] == b"":
        raws.pop()
    return [raw.decode("utf-8").rstrip() for raw in raws]


def _read(path, max_line_bytes=textfiles.MAX_LINE_BYTES):
    seg = textfiles._Segments(str(path), max_line_bytes, [0])
    try:
        return [row[0] for row in seg]
    finally:
        seg.close()


@pytest.fixture(params=[1, 2, 3, 7, 64, 1 << 16])
def block(request, monkeypatch):
    monkeypatch.setattr(textfiles, "_LINE_BLOCK", request.param)
    return request.param


@pytest.mark.parametrize("seed", range(8))
def test_random_files_read_as_their_lines(tmp_path, block, seed):
    rng = random.Random(seed)
    lines = ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 6))) for _ in range(rng.randint(0, 60))]
    data = "\n".join(lines).encode("utf-8") + rng.choice([b"", b"\n", b"\r\n", b"\n\n"])
    path = tmp_path / "f.txt"
    path.write_bytes(data)
    assert _read(path) == _expected(data)
    # the same bytes gzipped go through the line-at-a-time reader
    gz = tmp_path / "f.txt.gz"
    gz.write_bytes(gzip.compress(data))
    assert _read(gz) == _expected(data)


@pytest.mark.parametrize("data, expected", [
    (b"", []),
    (b"\n", [""]),
    (b"a", ["a"]),
    (b"a\n\nb", ["a", "", "b"]),
    (b"a \t\r\nb\x0b\n", ["a", "b"]),
    ("x\u2028y\x85 \n".encode(), ["x\u2028y"]),  # U+2028 and NEL end no line (bytes are split at \n only)
])
def test_written_out_cases(tmp_path, block, data, expected):
    path = tmp_path / "f.txt"
    path.write_bytes(data)
    assert _read(path) == expected


@pytest.mark.parametrize("data, line, column, byte", [
    (b"ok\nfine\n\xffbad\n", 3, 1, 0xFF),
    (b"ok\nab\xe6\x9d\n", 2, 3, 0xE6),  # a character cut by the newline
    ("\u6771\u4eac\n\u6771".encode() + b"\x80\n", 2, 2, 0x80),
])
def test_invalid_utf8_names_line_and_column(tmp_path, block, data, line, column, byte):
    path = tmp_path / "f.txt"
    path.write_bytes(data)
    with pytest.raises(InputError) as err:
        _read(path)
    assert str(err.value).endswith(f"line {line}, column {column}: invalid UTF-8 (byte 0x{byte:02x})"), str(err.value)


@pytest.mark.parametrize("data, ok, bad", [
    (b"12345\n123456\n", None, 2),   # 6 bytes where 5 are allowed
    (b"12345\n12345", ["12345", "12345"], None),  # exactly the limit, the last line without a newline
    (b"1\n1234567890123", None, 2),  # too long and never ended
    (b"12345\n\n1234567", None, 3),
])
def test_line_length_limit(tmp_path, block, data, ok, bad):
    path = tmp_path / "f.txt"
    path.write_bytes(data)
    if bad is None:
        assert _read(path, max_line_bytes=5) == ok
        return
    with pytest.raises(InputError) as err:
        _read(path, max_line_bytes=5)
    assert f"line {bad}: longer than 5 bytes" in str(err.value)


def test_lockstep_reports_the_first_bad_row_of_any_file(tmp_path, block):
    """Files read side by side: the first row at which either file is bad is the one named, whichever
    file holds it, as reading a line at a time does."""
    hyp, ref = tmp_path / "hyp.txt", tmp_path / "ref.txt"
    hyp.write_bytes(b"a\n" * 9 + b"\xff\n" + b"a\n" * 5)  # bad at line 10
    ref.write_bytes(b"a\n" * 3 + b"\xfe\n" + b"a\n" * 11)  # bad at line 4
    with pytest.raises(InputError) as err:
        list(iter_chunks([str(hyp)], [str(ref)]))
    assert str(err.value).endswith("ref.txt: line 4, column 1: invalid UTF-8 (byte 0xfe)")


@pytest.mark.parametrize("refs", [1, 2, 3])
def test_chunks_of_several_files(tmp_path, block, refs):
    rng = random.Random(refs)
    n = 50
    files = []
    for name in ["hyp", *[f"ref{i}" for i in range(refs)]]:
        lines = ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 4))) for _ in range(n)]
        path = tmp_path / f"{name}.txt"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        files.append((str(path), [line.rstrip() for line in lines]))
    hyps, got = [], []
    for h, r in iter_chunks([files[0][0]], [p for p, _ in files[1:]], max_rows=7, max_bytes=50):
        assert len(h) == 1 and len(h[0]) == len(r) <= 7
        hyps += h[0]
        got += r
    assert hyps == files[0][1]
    assert got == [[lines[i] for _, lines in files[1:]] for i in range(n)]


def _outcome(hyp, ref):
    """What reading ``hyp`` and ``ref`` in lockstep gives: the rows, or the error's message (file names
    without their folder)."""
    try:
        return [(h, r) for hs, rs in iter_chunks([str(hyp)], [str(ref)]) for h, r in zip(hs[0], rs)]
    except InputError as exc:
        return str(exc).replace(str(hyp.parent) + "/", "").replace(".gz", "")


@pytest.mark.parametrize("hyp, ref, expected", [
    # the longer file's last line, without its newline, is still in the reader's hands when the other ends
    (b"a\nb\n", b"a\nb\nc", "ref.txt: has 3 lines but the system output hyp.txt has 2"),
    (b"a\nb", b"a\nb\nc\n", "ref.txt: has 3 lines but the system output hyp.txt has 2"),
    (b"a\nb\nc", b"a\nb\n", "ref.txt: has 2 lines but the system output hyp.txt has 3"),
    (b"a\nb\n", b"a\nb\nc\nd\ne", "ref.txt: has 5 lines but the system output hyp.txt has 2"),
    # a bad line after the shorter file ends is never decoded: the counts differ (as the line reader says)
    (b"a\n", b"a\n\xff\n", "ref.txt: has 2 lines but the system output hyp.txt has 1"),
    (b"a\n", b"a\nb\n\xff", "ref.txt: has 3 lines but the system output hyp.txt has 1"),
    (b"a\n" + b"x" * 9 + b"\n", b"a\n", "ref.txt: has 1 lines but the system output hyp.txt has 2"),
    # the same lines, one file without its last newline: no error
    (b"a\nb", b"a\nb\n", [("a", ["a"]), ("b", ["b"])]),
])
def test_line_counts_in_lockstep_as_the_line_reader_gives_them(tmp_path, block, hyp, ref, expected):
    got = {}
    for kind in ("plain", "gzip"):  # gzip: the line-at-a-time reader
        folder = tmp_path / kind
        folder.mkdir()
        paths = []
        for name, data in (("hyp.txt", hyp), ("ref.txt", ref)):
            path = folder / (name + (".gz" if kind == "gzip" else ""))
            path.write_bytes(gzip.compress(data) if kind == "gzip" else data)
            paths.append(path)
        got[kind] = _outcome(*paths)
    if isinstance(expected, str):
        assert got["plain"] == got["gzip"] == expected, got
    else:
        assert got["plain"] == got["gzip"] == expected


@pytest.mark.parametrize("encoding", ["utf-8", "UTF_8", "u8", "utf", "cp65001", "utf8_ucs4"])
@pytest.mark.parametrize("data, line, column, reason", [
    # a character cut off by the newline: the line reader decodes the line with its newline
    (b"ok\na\xe2\x82\n", 2, 2, "invalid continuation byte"),
    (b"\xe2\nb\n", 1, 1, "invalid continuation byte"),
    (b"a\n\xf0\x9f\x98\nb", 2, 1, "invalid continuation byte"),
    # cut off by the end of the file (no newline after it), or by a CR
    (b"ok\na\xe2\x82", 2, 2, "unexpected end of data"),
    (b"a\xf0\x9f\r\n", 1, 2, "invalid continuation byte"),
    (b"a\xff\n", 1, 2, "invalid start byte"),
])
def test_utf8_under_any_of_its_names_fails_as_the_line_reader_does(tmp_path, block, encoding, data, line, column,
                                                                    reason):
    """The message under a name of UTF-8 other than "utf-8"/"utf8" (Python's aliases: -e u8 reads
    UTF-8 with the block reader) gives the decoder's reason, which must be the line reader's: the
    bytes gzipped are read by it."""
    got = {}
    for kind in ("plain", "gzip"):
        path = tmp_path / ("hyp.txt" + (".gz" if kind == "gzip" else ""))
        path.write_bytes(gzip.compress(data) if kind == "gzip" else data)
        seg = textfiles._Segments(textfiles.Source((str(path),), encoding=encoding), textfiles.MAX_LINE_BYTES, [0])
        with pytest.raises(InputError) as err:
            list(seg)
        seg.close()
        got[kind] = str(err.value).replace(".gz", "")
    assert got["plain"] == got["gzip"], got
    assert f"hyp.txt: line {line}, column {column}: " in got["plain"], got
    if encoding.replace("-", "").replace("_", "").lower() == "utf8":
        assert "invalid UTF-8 (byte 0x" in got["plain"], got
    else:
        assert got["plain"].endswith(f"cannot be decoded as {encoding} ({reason})"), got

"""spBLEU (``flores101``, ``flores200``, ``spBLEU-1K``, ``spm``) against sacrebleu 2.6.0 run here.

The models are the tiny ones of :mod:`tests.spm_models`, installed under sacrebleu's file names
by the ``spm_dir``/``spm_home`` fixtures, so sacrebleu itself tokenizes with the same files,
offline. Covered: the scalar tokenizer equals sacrebleu's; the batch path's row statistics equal
sacrebleu's on what its encoder must get right (null references, duplicate lines, characters the
model does not know, empty lines, sliced and chunked Arrow arrays, batches that repeat); scalar
path == batch path == sacrebleu for every BLEU option; each name reads its own file; an explicit
``spm_model``; a missing, unreadable, stalled or downloaded model (loopback servers only); a model
file that changes on disk; and ``bleu_core.compat.BLEU`` with these tokenizers. The batch path is
tested through its statistics, not its encoder's output, which is internal (and has changed form).
"""

import contextlib
import functools
import hashlib
import http.server
import logging
import os
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bleu_core import Bleu, batch_stats, compat, corpus_bleu, sentence_bleu
from bleu_core.errors import BatchInputError
from bleu_core.tokenizers import get_tokenizer
from bleu_core.tokenizers import tokenizer_spm

from ...oracle import sacre_metric, to_streams
from ...spm_models import MODEL_FILES, TOKENIZER_FILES
from ...strategies import WORDS, corpus, segment
from ..metrics.bleu.test_properties import check_all_paths, options

# after .oracle, which checks that this is sacrebleu 2.6.0
import sacrebleu.tokenizers.tokenizer_spm as sacre_spm
from sacrebleu.metrics.bleu import BLEU as SacreBLEU, _get_tokenizer

NAMES = ["flores101", "flores200", "spBLEU-1K", "spm"]
#: the two test models without byte fallback (spBLEU-1K's turns unknown characters into byte pieces)
NO_BYTE_FALLBACK = ["flores101", "flores200"]
#: characters outside the tiny models' 98% character coverage (test_rare_characters_are_unknown checks it)
RARE = list("ᚠᛇᚻ∮⋅Ꮳᚁⵜ😀𠀀𐀀ไทยአማርኛქართ") + ["İ", "ẞ"]
HEALTH = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
#: sacrebleu's TokenizerSPM("spm") warns through the deprecated Logger.warn
pytestmark = pytest.mark.filterwarnings("ignore:The 'warn' method is deprecated:DeprecationWarning")
FLORES200_URL = "https://tinyurl.com/flores200sacrebleuspm"

#: text with characters the flores models do not know, mixed with known words and spaces
rare_text = st.lists(st.one_of(st.sampled_from(RARE), st.sampled_from(WORDS), st.sampled_from([" ", "", "  "])),
                     max_size=12).map("".join)
#: Python whitespace (what rstrip() removes); SentencePiece's normalization drops most of it but keeps NEL
SPACES = [" ", "\t", "\n", "\x85", "\x1c", "\u2028", "\u3000", "\xa0"]
blank = st.lists(st.sampled_from(SPACES), max_size=3).map("".join)
line = st.one_of(segment, st.text(max_size=30), st.tuples(st.one_of(segment, rare_text), blank).map("".join))
#: extra corpus rows with 1-3 references (None: missing), appended to tests.strategies.corpus rows
extra_rows = st.lists(st.tuples(line, line, st.lists(st.one_of(st.none(), line), max_size=2)), max_size=3)


def sha256(path) -> str:
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def sacre_tokenizer(name):
    """sacrebleu's tokenizer ``name``, reading the models of the sacrebleu home in force now."""
    return _sacre_tokenizer(name, sacre_spm.SACREBLEU_DIR)


@functools.lru_cache(maxsize=None)
def _sacre_tokenizer(name, home):
    return _get_tokenizer(name)()


def with_extra(data, extra):
    cands, refs = data
    return cands + [c for c, _, _ in extra], refs + [[r, *more] for _, r, more in extra]


def assert_same_as_sacrebleu(metric, theirs, cands, refs):
    """Our statistics and score of ``metric`` equal those of the sacrebleu ``BLEU`` object ``theirs``."""
    streams = to_streams(refs)
    expected = np.array(theirs._extract_corpus_statistics(cands, streams), dtype=np.int64)
    np.testing.assert_array_equal(metric.batch_stats(cands, refs), expected)
    np.testing.assert_array_equal(metric.scalar_stats(cands, refs), expected)
    ours, score = metric.corpus_score(cands, refs), theirs.corpus_score(cands, streams)
    assert (ours.score, ours.counts, ours.totals) == (score.score, score.counts, score.totals)


def sacre_home(monkeypatch, home):
    """sacrebleu and beambleu both read their models from ``home``/models from now on."""
    monkeypatch.setenv("SACREBLEU", str(home))
    monkeypatch.setattr(sacre_spm, "SACREBLEU_DIR", str(home))


def offline(monkeypatch, proxy):
    """Every URL goes through ``proxy`` (None: no proxy at all, loopback direct)."""
    for var in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY",
                "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(var, raising=False)
    if proxy is None:
        monkeypatch.setenv("no_proxy", "*")
    else:
        monkeypatch.setenv("http_proxy", proxy)
        monkeypatch.setenv("https_proxy", proxy)


# ------------------------------------------------------------------ the tokenizer, scalar and batch


def test_rare_characters_are_unknown(spm_home):
    """The premise of the unknown-piece tests: RARE is unknown to the flores test models and turns
    into byte pieces under spBLEU-1K's byte fallback."""
    for name in NO_BYTE_FALLBACK:
        sp = get_tokenizer(name).sp
        assert all(sp.unk_id() in sp.encode(ch) for ch in RARE), name
    sp = get_tokenizer("spBLEU-1K").sp
    assert not any(sp.unk_id() in sp.encode(ch) for ch in RARE)
    assert "<0xE1>" in sp.EncodeAsPieces("ᚠ")


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=150, deadline=None, suppress_health_check=HEALTH)
@given(text=st.one_of(line, st.text()))
def test_scalar_tokenizer_equals_sacrebleu(spm_home, name, text):
    ours, theirs = get_tokenizer(name), sacre_tokenizer(name)
    assert ours(text) == theirs(text)
    assert ours.signature() == theirs.signature()


def sacre_rows(name, cands, refs, **opts):
    """sacrebleu's per-row statistics (the oracle's metric for these options)."""
    metric = sacre_metric(tokenize=name, **opts)
    return np.array(metric._extract_corpus_statistics(cands, to_streams(refs)), dtype=np.int64)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=50, deadline=None, suppress_health_check=HEALTH)
@given(lines=st.lists(line, min_size=1, max_size=5), missing=st.lists(st.booleans(), min_size=5, max_size=5),
       lowercase=st.booleans(), order=st.integers(1, 6), arrow_type=st.sampled_from([pa.string(), pa.large_string()]))
def test_batch_rows_equal_sacrebleu(spm_home, name, lines, missing, lowercase, order, arrow_type):
    """The batch encoder on every line twice (duplicates within the candidates, and between
    candidates and references), null (missing) references anywhere, Arrow arrays sliced from
    larger ones (offset != 0, candidates and the references' strings): sacrebleu's row statistics."""
    cands = lines + lines[::-1]
    n = len(cands)
    refs = [[None if missing[i % 5] else cands[i], cands[i - 1], None if missing[(i + 2) % 5] else f"ᚠ {cands[-i]}"]
            for i in range(n)]
    expected = sacre_rows(name, cands, refs, lowercase=lowercase, max_ngram_order=order)
    metric = Bleu(tokenize=name, lowercase=lowercase, max_ngram_order=order)
    np.testing.assert_array_equal(metric.batch_stats(pa.array(cands, arrow_type), refs), expected)
    sliced = pa.array(["ᚠ left out", *cands, "right out"], arrow_type).slice(1, n)
    child = pa.array(["ᚠ left out", *(r for row in refs for r in row)], arrow_type).slice(1)
    ref_lists = pa.ListArray.from_arrays(pa.array(range(0, 3 * n + 1, 3), pa.int32()), child)
    assert sliced.offset == child.offset == 1
    np.testing.assert_array_equal(metric.batch_stats(sliced, ref_lists), expected)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("cands, refs", [
    ([], []),
    ([""], [[""]]),
    (["", "", ""], [["", None], [None, ""], ["", ""]]),
    ([" ", "\t", "\u3000 ", "\x85", "\x1c\n"], [[" "], ["\x85"], [""], ["\u2028"], [None, "  "]]),
], ids=["no-rows", "one-empty", "empties", "whitespace"])
def test_batch_of_empty_lines(spm_home, name, cands, refs):
    """Lines that are empty once rstrip()ped have no tokens: every statistic is 0, as in sacrebleu."""
    metric = Bleu(tokenize=name)
    stats = metric.batch_stats(cands, refs)
    assert stats.shape == (len(cands), 10) and not stats.any()
    assert not metric.batch_stats(cands, refs, per_row=False).any()
    if cands:
        np.testing.assert_array_equal(stats, sacre_rows(name, cands, refs))


@pytest.mark.parametrize("name", NAMES)
def test_null_candidate_and_no_reference_are_row_errors(spm_home, name):
    """A null candidate, and a row whose references are all null, are BatchInputError naming the
    row, as with the kernel's own tokenizers."""
    cases = [(["the cat", None, "ᚠ"], [["the cat"], ["a"], ["ᚠ"]], (1, "candidate")),
             (["ᚠ", "the cat"], [["ᚠ", None], [None, None]], (1, "references"))]
    for cands, refs, where in cases:
        with pytest.raises(BatchInputError) as ours:
            Bleu(tokenize=name).batch_stats(cands, refs)
        with pytest.raises(BatchInputError) as plain:
            Bleu(tokenize="13a").batch_stats(cands, refs)
        assert (ours.value.row, ours.value.column) == (plain.value.row, plain.value.column) == where


@pytest.mark.parametrize("name", NAMES)
def test_unknown_characters(spm_home, name):
    """Unknown characters at the start, middle and end of lines, alone, repeated, in a candidate
    and its references (an unknown surface matches the same surface only), lowercased into
    something else (İ), before trailing whitespace that SentencePiece keeps (NEL): sacrebleu's
    statistics, also for the same batch lowercased next (lowercasing is part of what a batch is
    remembered by). The scalar tokenizer gives the surface, never the ``<unk>`` piece."""
    rare = "".join(RARE)
    cands = ["ᚠ", "ᛇ", f"{rare} the cat", "the cat", "the ᚠ cat ⵜ", "ᚠ ᛇ ᚠ ᛇ", "😀😀 😀", "İstanbul ẞ",
             f"{rare} the cat", "", "ไทย  ", "the cat\x85", "ᚠ\x85 "]
    refs = [["ᚠ", "ᛇ"], ["ᚠ"], [f"{rare} the cat", None], ["the ᚠ cat"], ["ⵜ cat ᚠ the", "the ⵜ"], ["ᛇ ᚠ ᛇ ᚠ"],
            ["😀 😀😀"], ["istanbul ß"], ["the cat"], ["ᚠ"], ["ไทย"], ["the cat"], ["ᚠ"]]
    for lowercase in (False, True, False):
        np.testing.assert_array_equal(Bleu(tokenize=name, lowercase=lowercase).batch_stats(cands, refs),
                                      sacre_rows(name, cands, refs, lowercase=lowercase))
    tok, theirs = get_tokenizer(name), sacre_tokenizer(name)
    for text in cands:
        assert tok(text) == theirs(text) and "<unk>" not in tok(text)
    if name in NO_BYTE_FALLBACK:
        assert tok("ᚠ").split() == ["▁", "ᚠ"]


@pytest.mark.parametrize("name", NAMES)
def test_systems_sharing_references(spm_home, name):
    """Several systems against the same references, one batch each (as ``score`` hands them over):
    each system's statistics are sacrebleu's, whatever unknown surfaces the batches before held."""
    refs = [["ᚠ the cat", "ᛇ"], ["the ⵜ dog", None], ["😀", "ᚠ"]]
    systems = [["ᛇ the cat", "the ᚠ dog", "ⵜ"], ["ᚠ the cat", "the ⵜ dog", "😀"], ["ⵜ ᛇ", "ᚠ", "ᚠ ᚠ"],
               ["ᛇ the cat", "the ᚠ dog", "ⵜ"]]
    for lowercase in (False, True):
        metric = Bleu(tokenize=name, lowercase=lowercase)
        for cands in systems:
            np.testing.assert_array_equal(metric.batch_stats(cands, refs),
                                          sacre_rows(name, cands, refs, lowercase=lowercase))


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=25, deadline=None, suppress_health_check=HEALTH)
@given(data=corpus(max_pairs=4, max_refs=3), extra=extra_rows, split=st.integers(0, 8))
def test_sliced_and_chunked_arrow_inputs(spm_home, name, data, extra, split):
    """Arrow candidates in two chunks cut from a larger array, and references as a sliced list
    array, give sacrebleu's statistics."""
    cands, refs = with_extra(data, extra)
    n = len(cands)
    cut = min(split, n)
    big = pa.array(["ᚠ head", *cands, "tail"], pa.string())
    chunked = pa.chunked_array([big.slice(1, cut), big.slice(1 + cut, n - cut)])
    ref_rows = pa.array([["head"], *refs, ["tail"]], pa.list_(pa.string())).slice(1, n)
    np.testing.assert_array_equal(batch_stats(chunked, ref_rows, tokenize=name), sacre_rows(name, cands, refs))


# ------------------------------------------------------------------ statistics and scores


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=30, deadline=None, suppress_health_check=HEALTH)
@given(data=corpus(max_pairs=4), extra=extra_rows, opt=options)
def test_all_paths_match_sacrebleu(spm_home, name, data, extra, opt):
    check_all_paths(name, *with_extra(data, extra), opt)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=300, deadline=None, suppress_health_check=HEALTH)
@given(data=corpus(), extra=extra_rows, opt=options)
def test_all_paths_match_sacrebleu_many(spm_home, name, data, extra, opt):
    check_all_paths(name, *with_extra(data, extra), opt)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=30, deadline=None, suppress_health_check=HEALTH)
@given(hyp=line, refs=st.lists(line, min_size=1, max_size=3), lowercase=st.booleans())
def test_sentence_bleu_matches_sacrebleu(spm_home, name, hyp, refs, lowercase):
    ours = sentence_bleu(hyp, refs, tokenize=name, lowercase=lowercase)
    theirs = sacre_metric(tokenize=name, lowercase=lowercase, effective_order=True).sentence_score(hyp, refs)
    assert (ours.score, ours.counts, ours.totals, ours.bp) == (theirs.score, theirs.counts, theirs.totals, theirs.bp)


# ------------------------------------------------------------------ which model file each name reads


def test_each_name_reads_its_own_model(spm_home):
    """The three test models differ, so reading the wrong file shows in the pieces; ``spm`` is
    flores101's file and signature."""
    text = ["Heavy rain has caused floods in several villages near the river.", "Hello world"]
    refs = [["Several villages close to the river were flooded after heavy rain."], ["Hello, world"]]
    pieces = {}
    for name in NAMES:
        tok = Bleu(tokenize=name).tokenizer
        path = spm_home / "models" / TOKENIZER_FILES[name]
        assert tok.model_path == str(path)
        assert tok.model_sha256 == sha256(path)
        pieces[name] = [tok(s) for s in text]
        assert pieces[name] == [sacre_tokenizer(name)(s) for s in text]
    assert len({tuple(p) for p in pieces.values()}) == 3
    assert pieces["spm"] == pieces["flores101"]
    stats = {name: Bleu(tokenize=name).batch_stats(text, refs) for name in NAMES}
    assert not np.array_equal(stats["flores101"], stats["flores200"])
    for name in NAMES:
        np.testing.assert_array_equal(stats[name], sacre_rows(name, text, refs))
    assert "|tok:flores101|" in Bleu(tokenize="spm").signature(1).format()
    assert "|tok:flores101|" in corpus_bleu(text, refs, tokenize="spm").signature
    assert get_tokenizer("spm").signature() == "flores101"


def test_explicit_model_file(spm_home, tmp_path, monkeypatch):
    """``spm_model`` replaces sacrebleu's file: flores200 reading spBLEU-1K's model equals sacrebleu
    with that model installed as flores200's in another home; ``resources()`` names it."""
    other = tmp_path / "elsewhere.model"
    shutil.copyfile(spm_home / "models" / MODEL_FILES["spBLEU-1K"], other)
    cands = ["ᚠ the committee meets on Tuesday", "Heavy rain, floods.", ""]
    refs = [["the committee will meet on Tuesday", None], ["heavy rain caused floods", "floods"], ["x", ""]]
    metric = Bleu(tokenize="flores200", spm_model=str(other))
    default = Bleu(tokenize="flores200")
    assert not np.array_equal(metric.batch_stats(cands, refs), default.batch_stats(cands, refs))
    assert metric.resources() == {"spm_model": {"tokenizer": "flores200", "path": str(other),
                                                "sha256": sha256(other)}}
    default_path = spm_home / "models" / MODEL_FILES["flores200"]
    assert default.resources() == {"spm_model": {"tokenizer": "flores200", "path": str(default_path),
                                                 "sha256": sha256(default_path)}}
    assert Bleu(tokenize="13a").resources() == {}
    assert metric.signature(2).format() == default.signature(2).format()  # why resources() exists

    home = tmp_path / "home"
    (home / "models").mkdir(parents=True)
    shutil.copyfile(other, home / "models" / MODEL_FILES["flores200"])
    sacre_home(monkeypatch, home)
    theirs = SacreBLEU(tokenize="flores200")
    assert_same_as_sacrebleu(metric, theirs, cands, refs)
    expected = theirs.corpus_score(cands, to_streams(refs)).score
    assert corpus_bleu(cands, refs, tokenize="flores200", spm_model=str(other)).score == expected
    hyp, hyp_refs = cands[0], [r for r in refs[0] if r is not None]
    assert sentence_bleu(hyp, hyp_refs, tokenize="flores200", spm_model=str(other)).score == \
        SacreBLEU(tokenize="flores200", effective_order=True).sentence_score(hyp, hyp_refs).score


@pytest.mark.parametrize("kwargs, error", [
    ({"tokenize": "13a", "spm_model": "model.spm"}, ValueError),
    ({"tokenize": "none", "spm_model": "model.spm"}, ValueError),
    ({"tokenize": "flores200", "spm_model": 3}, TypeError),
    ({"tokenize": "flores200", "spm_model": b"model.spm"}, TypeError),
    ({"tokenize": "spBLEU-1K", "spm_model": ""}, TypeError),
])
def test_spm_model_argument_errors(kwargs, error):
    for make in (lambda: Bleu(**kwargs), lambda: get_tokenizer(kwargs["tokenize"], kwargs["spm_model"]),
                 lambda: corpus_bleu(["a"], [["a"]], **kwargs)):
        with pytest.raises(error) as info:
            make()
        assert "\n" not in str(info.value) and "spm" in str(info.value).lower()


def test_path_object_is_not_a_model_name(spm_dir):
    with pytest.raises(TypeError, match="spm_model"):
        Bleu(tokenize="flores200", spm_model=spm_dir / "models" / MODEL_FILES["flores200"])


# ------------------------------------------------------------------ missing, broken and downloaded models


def assert_one_line(exc, *parts):
    message = str(exc)
    assert "\n" not in message
    for part in parts:
        assert str(part).lower() in message.lower()


def test_missing_model_offline(tmp_path, monkeypatch):
    """No model and no network (a proxy on a closed port): one ModelError line with the URL and the
    path to copy the model to, and nothing left in models/."""
    sacre_home(monkeypatch, tmp_path)
    offline(monkeypatch, "http://127.0.0.1:9")
    monkeypatch.delenv("BEAMBLEU_DOWNLOAD_TIMEOUT", raising=False)
    expected_path = tmp_path / "models" / MODEL_FILES["flores200"]
    for make in (lambda: get_tokenizer("flores200"), lambda: Bleu(tokenize="flores200").load(),
                 lambda: compat.BLEU(tokenize="flores200")):
        with pytest.raises(tokenizer_spm.ModelError) as info:
            make()
        assert_one_line(info.value, FLORES200_URL, expected_path)
        assert not os.path.exists(tmp_path / "models") or os.listdir(tmp_path / "models") == []


@pytest.mark.parametrize("content", [b"", b"\x00\xffnot a sentencepiece model\n" * 8])
def test_model_file_that_is_not_a_model(tmp_path, monkeypatch, content):
    bad = tmp_path / "bad.model"
    bad.write_bytes(content)
    with pytest.raises(tokenizer_spm.ModelError) as info:
        get_tokenizer("flores101", str(bad))
    assert_one_line(info.value, bad)
    # the same file where sacrebleu keeps the model
    (tmp_path / "models").mkdir()
    shutil.copyfile(bad, tmp_path / "models" / MODEL_FILES["flores101"])
    sacre_home(monkeypatch, tmp_path)
    with pytest.raises(tokenizer_spm.ModelError) as info:
        Bleu(tokenize="spm").batch_stats(["a"], [["a"]])
    assert_one_line(info.value, tmp_path / "models" / MODEL_FILES["flores101"])


def test_model_file_that_does_not_exist(tmp_path):
    missing = tmp_path / "no-such.model"
    with pytest.raises(tokenizer_spm.ModelError) as info:
        Bleu(tokenize="flores200", spm_model=str(missing)).load()
    assert_one_line(info.value, missing)


@contextlib.contextmanager
def silent_server():
    """A loopback TCP port that accepts connections and never answers (daemon thread)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    held = []

    def accept():
        while True:
            try:
                held.append(srv.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield srv.getsockname()[1]
    finally:
        with contextlib.suppress(OSError):
            srv.shutdown(socket.SHUT_RDWR)
        srv.close()
        for conn in held:
            conn.close()


def test_download_that_stalls(tmp_path, monkeypatch):
    """A proxy that never answers: ModelError once BEAMBLEU_DOWNLOAD_TIMEOUT (1 s) has passed."""
    sacre_home(monkeypatch, tmp_path)
    monkeypatch.setenv("BEAMBLEU_DOWNLOAD_TIMEOUT", "1")
    with silent_server() as port:
        offline(monkeypatch, f"http://127.0.0.1:{port}")
        with pytest.raises(tokenizer_spm.ModelError) as info:
            get_tokenizer("flores200")
    assert_one_line(info.value, FLORES200_URL, tmp_path / "models" / MODEL_FILES["flores200"])
    assert os.listdir(tmp_path / "models") == []


@pytest.mark.parametrize("value", ["0", "-3", "soon", "nan"])
def test_download_timeout_must_be_positive(tmp_path, monkeypatch, value):
    sacre_home(monkeypatch, tmp_path)
    offline(monkeypatch, "http://127.0.0.1:9")
    monkeypatch.setenv("BEAMBLEU_DOWNLOAD_TIMEOUT", value)
    with pytest.raises(tokenizer_spm.ModelError, match="BEAMBLEU_DOWNLOAD_TIMEOUT") as info:
        get_tokenizer("flores200")
    assert_one_line(info.value, repr(value))


class _ModelHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the files of a folder, and ``/<way>/<file>`` misbehaving: ``stall`` sends the headers
    and 100 bytes, then waits; ``cut`` sends them and hangs up; ``slow`` answers after 4 s;
    ``trickle`` sends a byte every 50 ms
    (for 20 s at most, then hangs up). Every wait ends when the test is over (``server.release``)."""

    def do_GET(self):
        way, _, name = self.path.lstrip("/").partition("/")
        if way not in ("stall", "slow", "trickle", "cut"):
            return super().do_GET()
        release = self.server.release
        body = (Path(self.directory) / name).read_bytes()
        if way == "cut":  # announces the whole file, sends 100 bytes, hangs up
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[:100])
            self.wfile.flush()
            self.close_connection = True
            return
        if way == "trickle":
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.server.trickled = 0
            for i in range(400):
                try:
                    self.wfile.write(body[i:i + 1])
                    self.wfile.flush()
                except OSError:  # the client hung up
                    return
                self.server.trickled = i + 1
                if release.wait(0.05):
                    return
            return
        if way == "slow" and release.wait(4):
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body[:100] if way == "stall" else body)
        self.wfile.flush()
        if way == "stall":
            release.wait(30)

    def log_message(self, *args):
        pass


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a client that gave up (as it should) closes the socket the handler writes to


@contextlib.contextmanager
def model_server(folder):
    """A loopback HTTP server for ``folder`` (daemon thread); yields its base URL."""
    srv = _Server(("127.0.0.1", 0), functools.partial(_ModelHandler, directory=str(folder)))
    srv.release = threading.Event()
    model_server.last = srv
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.release.set()
        srv.shutdown()
        srv.server_close()


def serve_as(monkeypatch, name, url):
    """Tokenizer ``name`` downloads from ``url`` (sacrebleu's file name is the URL's basename)."""
    monkeypatch.setattr(tokenizer_spm, "SPM_MODELS", {**tokenizer_spm.SPM_MODELS,
                                                      name: (url, tokenizer_spm.SPM_MODELS[name][1])})


def test_download_from_loopback_server(spm_dir, tmp_path, monkeypatch):
    """A missing model is downloaded to $SACREBLEU/models/<basename of the URL>, and scores as
    sacrebleu does with that file."""
    served = tmp_path / "served"
    served.mkdir()
    # spBLEU-1K's model as flores200's: the download is really the file that gets used
    shutil.copyfile(spm_dir / "models" / MODEL_FILES["spBLEU-1K"], served / MODEL_FILES["flores200"])
    home = tmp_path / "home"
    sacre_home(monkeypatch, home)
    offline(monkeypatch, None)
    monkeypatch.delenv("BEAMBLEU_DOWNLOAD_TIMEOUT", raising=False)
    with model_server(served) as base:
        serve_as(monkeypatch, "flores200", f"{base}/{MODEL_FILES['flores200']}")
        metric = Bleu(tokenize="flores200")
        metric.load()
    target = home / "models" / MODEL_FILES["flores200"]
    assert os.listdir(home / "models") == [MODEL_FILES["flores200"]]
    assert target.read_bytes() == (served / MODEL_FILES["flores200"]).read_bytes()
    assert metric.resources()["spm_model"] == {"tokenizer": "flores200", "path": str(target),
                                               "sha256": sha256(target)}
    cands = ["ᚠ Heavy rain has caused floods.", "the cat"]
    refs = [["Heavy rain caused floods.", "Floods after rain."], ["a cat", None]]
    assert_same_as_sacrebleu(metric, SacreBLEU(tokenize="flores200"), cands, refs)


@pytest.mark.parametrize("path, reason", [("missing-file", "not found"), ("empty-file", "empty"),
                                          ("stall/model", ""), ("slow/model", ""),
                                          ("trickle/model", "not complete after 1 s"),
                                          ("cut/model", "the connection closed after 100 of")])
def test_download_failures_leave_nothing(spm_dir, tmp_path, monkeypatch, path, reason):
    """A 404, an empty body, a body that stops halfway, a server slower than the 1 s
    BEAMBLEU_DOWNLOAD_TIMEOUT, one that sends a byte at a time (each read is quick, the whole is
    not: the total limit still holds): ModelError, and no file (partial or temporary) where the model would go."""
    served = tmp_path / "served"
    served.mkdir()
    (served / "empty-file").write_bytes(b"")
    shutil.copyfile(spm_dir / "models" / MODEL_FILES["spBLEU-1K"], served / "model")
    home = tmp_path / "home"
    sacre_home(monkeypatch, home)
    offline(monkeypatch, None)
    monkeypatch.setenv("BEAMBLEU_DOWNLOAD_TIMEOUT", "1")
    with model_server(served) as base:
        serve_as(monkeypatch, "spBLEU-1K", f"{base}/{path}")
        with pytest.raises(tokenizer_spm.ModelError) as info:
            get_tokenizer("spBLEU-1K")
        server = model_server.last
    assert_one_line(info.value, f"{base}/{path}", home / "models" / os.path.basename(path), reason)
    if path.startswith("trickle/"):  # the client gave up at its deadline, long before the server was done
        assert 0 < server.trickled < 400
    assert os.listdir(home / "models") == []


# ------------------------------------------------------------------ a model that changes on disk


def test_changed_model_file_is_reloaded(spm_dir, tmp_path, monkeypatch):
    """get_tokenizer caches by (name, path, mtime/size/inode): an unchanged file is the same
    tokenizer, a rewritten one (explicit path, or sacrebleu's place) is loaded again."""
    models = spm_dir / "models"
    text = "Heavy rain has caused floods in several villages near the river."
    explicit = tmp_path / "explicit.model"
    shutil.copyfile(models / MODEL_FILES["flores101"], explicit)
    first = get_tokenizer("flores200", str(explicit))
    assert get_tokenizer("flores200", str(explicit)) is first
    assert first(text) == get_tokenizer("flores101", str(models / MODEL_FILES["flores101"]))(text)
    shutil.copyfile(models / MODEL_FILES["spBLEU-1K"], explicit)  # rewritten in place, another size
    second = get_tokenizer("flores200", str(explicit))
    assert second.model_sha256 == sha256(explicit) != first.model_sha256
    assert second(text) == get_tokenizer("spBLEU-1K", str(models / MODEL_FILES["spBLEU-1K"]))(text) != first(text)

    home = tmp_path / "home"
    shutil.copytree(spm_dir, home)
    sacre_home(monkeypatch, home)
    before = Bleu(tokenize="flores200").tokenizer(text)
    shutil.copyfile(models / MODEL_FILES["flores101"], home / "models" / MODEL_FILES["flores200"])
    after = Bleu(tokenize="flores200")
    assert after.tokenizer(text) == sacre_tokenizer("flores200")(text) != before
    assert after.resources()["spm_model"]["sha256"] == sha256(models / MODEL_FILES["flores101"])


# ------------------------------------------------------------------ bleu_core.compat


def sample_corpus():
    """Real sentences (examples/sample), rare characters, empty and missing references."""
    from ...oracle import REPO, read_lines

    sample = REPO / "examples" / "sample"
    hyps = read_lines(sample / "sys.alpha.txt")[:12] + ["ᚠᛇᚻ the river ⵜ", "", "İstanbul ẞ 😀"]
    ref_a = read_lines(sample / "ref.A.txt")[:12] + ["the river ᚠ", "x", "istanbul"]
    ref_b = read_lines(sample / "ref.B.txt")[:12] + [None, "", "Istanbul"]
    return hyps, [ref_a, ref_b]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("opts", [{}, {"lowercase": True, "smooth_method": "floor", "max_ngram_order": 3},
                                  {"effective_order": True, "smooth_method": "add-k"}])
def test_compat_bleu_equals_sacrebleu(spm_home, name, opts):
    hyps, streams = sample_corpus()
    ours, theirs = compat.BLEU(tokenize=name, **opts), SacreBLEU(tokenize=name, **opts)
    a, b = ours.corpus_score(hyps, streams), theirs.corpus_score(hyps, streams)
    assert (a.score, a.counts, a.totals, a.bp) == (b.score, b.counts, b.totals, b.bp)
    assert a.format() == b.format()
    # the signature, but for the version and beambleu's order:N (only when the order is not 4)
    sig_a, sig_b = ours.get_signature().format(), theirs.get_signature().format()
    order = opts.get("max_ngram_order", 4)
    assert (f"|order:{order}|" in sig_a) == (order != 4)
    assert [f for f in sig_a.split("|") if not f.startswith(("version:", "order:"))] == \
        [f for f in sig_b.split("|") if not f.startswith("version:")]
    for i in (0, 12, 13, 14):
        refs = [s[i] for s in streams if s[i] is not None]
        a, b = ours.sentence_score(hyps[i], refs), theirs.sentence_score(hyps[i], refs)
        assert (a.score, a.counts, a.totals, a.format()) == (b.score, b.counts, b.totals, b.format())


def test_compat_spm_warns_as_sacrebleu(spm_home, caplog):
    message = "Tokenizer 'spm' has been changed to 'flores101', and may be removed in the future."
    with caplog.at_level(logging.WARNING):
        compat.BLEU(tokenize="flores101")
    assert message not in caplog.messages
    with caplog.at_level(logging.WARNING):
        metric = compat.BLEU(tokenize="spm")
    assert caplog.messages.count(message) == 1
    assert metric.tokenizer_signature == "flores101"
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        _get_tokenizer("spm")()  # sacrebleu says the same
    assert message in caplog.messages


def test_relative_sacrebleu_home_gives_an_absolute_model_path(spm_dir, tmp_path, monkeypatch):
    """A relative $SACREBLEU is resolved once, so the path fixed for workers does not depend on
    their working directory."""
    monkeypatch.chdir(spm_dir.parent)
    monkeypatch.setenv("SACREBLEU", spm_dir.name)
    tok = get_tokenizer("flores200")
    assert tok.model_path == str(spm_dir / "models" / MODEL_FILES["flores200"])
    assert os.path.isabs(Bleu(tokenize="flores200").resources()["spm_model"]["path"])


def test_a_batch_of_a_larger_table_encodes_only_its_own_references(spm_home):
    """References of a sliced list array (a batch of a row group): only the slice's own text is
    read, so bad text elsewhere in the row group is not this batch's error, and a bad reference in
    the slice is named by its row in the slice."""
    good = pa.array(["alpha beta", "gamma", "delta"] * 2, pa.string())
    data = b"".join(v.as_py().encode() for v in good) + b"\xff"
    offsets = np.concatenate([np.cumsum([0] + [len(v.as_py().encode()) for v in good]), [len(data)]])
    child = pa.Array.from_buffers(pa.string(), len(offsets) - 1,
                                  [None, pa.py_buffer(offsets.astype(np.int32).tobytes()), pa.py_buffer(data)])
    table_refs = pa.ListArray.from_arrays(pa.array([0, 2, 4, 7], pa.int32()), child)  # last row has the bad one
    metric = Bleu(tokenize="flores200")
    part = table_refs.slice(0, 2)
    theirs = SacreBLEU(tokenize="flores200")
    cands = ["alpha beta", "gamma delta"]
    streams = [[r[0] for r in part.to_pylist()], [r[1] for r in part.to_pylist()]]
    expected = np.array(theirs._extract_corpus_statistics(cands, streams), dtype=np.int64)
    np.testing.assert_array_equal(metric.batch_stats(cands, part), expected)
    with pytest.raises(BatchInputError) as info:
        metric.batch_stats(["x"], table_refs.slice(2, 1))
    assert (info.value.row, info.value.column, info.value.ref_index) == (0, "references", 2)


def test_a_download_under_a_proxy_leaves_later_requests_of_the_process_alone(tmp_path):
    """urllib.request.urlopen builds one opener per process, at its first call, from the proxy
    variables of that moment. A model download made under ``http_proxy`` (as the offline tests
    make) must not leave that proxy to every later loopback request of the process: in CI it sent
    the Flink cluster's health checks to a closed port for the rest of the session. In a fresh
    process: download under a proxy (it fails), then, with no proxy, a loopback HTTP server answers
    urllib.request.urlopen."""
    script = f"""
import http.server, os, threading, urllib.request
from bleu_core.tokenizers import tokenizer_spm
os.environ["http_proxy"] = os.environ["https_proxy"] = "http://127.0.0.1:9"
os.environ.pop("no_proxy", None); os.environ.pop("NO_PROXY", None)
try:
    tokenizer_spm.download("http://127.0.0.1:9/x.model", {str(tmp_path / "x.model")!r})
except tokenizer_spm.ModelError:
    pass
for var in ("http_proxy", "https_proxy"):
    del os.environ[var]
server = http.server.HTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
threading.Thread(target=server.serve_forever, daemon=True).start()
with urllib.request.urlopen(f"http://127.0.0.1:{{server.server_port}}/", timeout=10) as r:
    print(r.status)
server.shutdown()
"""
    env = {k: v for k, v in os.environ.items() if k.lower() not in ("http_proxy", "https_proxy", "all_proxy")}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, env=env,
                          timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == "200", proc.stderr[-2000:]

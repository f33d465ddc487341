"""BLEU's kernel == sacrebleu 2.6.0 where its 13a scan takes shortcuts: multi-byte characters
passed over by their lead byte's mask (every code point of the BMP inside tokens; every lead byte
with valid and invalid bytes after it, invalid ones named by row and column as Python's strict
decoder judges them), and tokens interned as they are split (distinct tokens by the hundred
thousand, which grow the token table while a row is split; tokens that share their first eight
bytes, differ only by a trailing NUL, or run longer than any word; 13a's rewrites, which split a
segment twice and forget the first split's tokens, in a second reference after a first). Expected
values come from sacrebleu, run here, or from Python's decoder."""

import pytest

from bleu_core import Bleu

from .test_kernel_bytes import _check, assert_invalid_utf8


#: every code point above ASCII: the BMP's but the surrogates, and a sample of the planes above
CODE_POINTS = [c for c in range(0x80, 0x10000) if not 0xD800 <= c <= 0xDFFF] + list(range(0x10000, 0x110000, 997))


@pytest.mark.parametrize("tokenize", ["13a", "zh"])
@pytest.mark.parametrize("lowercase", [False, True])
def test_every_code_point_inside_tokens_matches_sacrebleu(tokenize, lowercase):
    """Each code point alone, between letters, after a digit and '.', and in a run of its block."""
    chars = [chr(c) for c in CODE_POINTS]
    cands, refs = [], []
    for k in range(0, len(chars), 48):
        chunk = chars[k:k + 48]
        cands.append(" ".join(f"a{c}b {c} 1{c}." for c in chunk) + " " + "".join(chunk))
        refs.append([" ".join(f"a{c}b" for c in chunk[::2]) + " " + "".join(chunk[: len(chunk) // 2])])
    _check(tokenize, cands, refs, lowercase=lowercase)


#: bytes after a lead byte: ASCII, each edge of the continuation ranges the lead bytes allow, non-continuations
FOLLOWERS = [0x00, 0x20, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xE0, 0xF0, 0xFF]
TAILS = [b"", b"\x80", b"\xbf", b"\x80\x80", b"\xbf\xbf", b" ", b"\x80 ", b"\x80\xc0", b"\x80\x80\x80"]


def _lead_byte_texts():
    """'a' + each byte >= 0x80, one follower and a tail + 'b': (valid texts, invalid byte strings)."""
    valid, invalid = [], []
    for lead in range(0x80, 0x100):
        for f in FOLLOWERS:
            for tail in TAILS:
                raw = b"a" + bytes([lead, f]) + tail + b"b"
                try:
                    valid.append(raw.decode("utf-8"))
                except UnicodeDecodeError:
                    invalid.append(raw)
    return valid, invalid


def test_every_lead_byte_matches_sacrebleu_or_python_decoder():
    valid, invalid = _lead_byte_texts()
    # both kinds: every lead byte of UTF-8 starts a valid text, and every byte >= 0x80 an invalid one
    assert {v.encode()[1] for v in valid} == set(range(0xC2, 0xF5))
    assert {raw[1] for raw in invalid} == set(range(0x80, 0x100))
    _check("13a", valid, [[v[::-1], "a b"] for v in valid])
    metric = Bleu(tokenize="13a")
    for raw in invalid:
        assert_invalid_utf8(metric, raw)


@pytest.mark.parametrize("tokenize", ["13a", "intl", "none", "char"])
def test_many_distinct_tokens_match_sacrebleu(tokenize):
    """Rows of 1 to 200,000 distinct tokens (the token table grows while a segment is split and,
    for stats_many, between one reference and the next), each against references that share part
    of them, in a batch with short rows before and after (the table, grown, is emptied for them)."""
    def words(n, tag):
        return [f"{tag}{i:x}" for i in range(n)]
    cands, refs = [], []
    for n in (1, 7, 17, 1000, 70_000, 200_000 if tokenize == "13a" else 20_000):
        w = words(n, "t")
        cands.append(" ".join(w + w[: n // 3]))
        refs.append([" ".join(w[::3]), " ".join(words(n // 2, "u") + w[-(n // 2):] + w[: n // 4])])
        cands.append("a b a")
        refs.append(["a b c", "b a"])
    _check(tokenize, cands, refs, order=2)
    _check(tokenize, cands[-4:], refs[-4:])


def test_tokens_alike_in_their_bytes_match_sacrebleu():
    """Tokens equal in their first 8 or 16 bytes, differing only in length or by a trailing NUL
    (a token byte), and tokens longer than any word, repeated so that they are found again."""
    p8, p16 = "abcdefgh", "abcdefghijklmnop"
    alike = [p8, p8 + "i", p8 + "j", p8[:-1], p16, p16 + "q", p16[:-1] + "Q", "a", "a\x00", "a\x00\x00", "\x00",
             "\x00a", p8 + "\x00", p16 + "\x00", "x" * 1000, "x" * 1001, "x" * 999 + "y", "é" * 300, "é" * 301]
    cands, refs = [], []
    for k in range(len(alike)):
        rot = alike[k:] + alike[:k]
        cands.append(" ".join(rot + rot[::2]))
        refs.append([" ".join(rot[::-1]), " ".join(rot[1::3] + rot[:2])])
    _check("13a", cands, refs)
    _check("none", cands, refs)


#: a second reference split twice (13a's rewrites), whose first split would give ids to tokens the
#: first reference has and to new ones
REWRITTEN = ["b &quot;c&quot; d &lt;e&gt;", "x-\ny z <skipped> b", "new&amp;tokens &amp; b", "c\nd\ne"]


@pytest.mark.parametrize("lowercase", [False, True])
def test_rewrites_in_a_later_reference_match_sacrebleu(lowercase):
    cands = ["b c d e", "b \" c \" d < e >", "xy z b", "new & tokens & b", "c d e", "e d c new"]
    refs = [["a b c", r, "c d"] for r in REWRITTEN] + [[REWRITTEN[0], REWRITTEN[2]], [REWRITTEN[3], "&amp;"]]
    _check("13a", cands, refs, lowercase=lowercase)
    # the candidates rewritten too, and empty or blank segments beside them
    _check("13a", [r for r in REWRITTEN] + ["", " \u3000 "], [[c, ""] for c in cands[:4]] + [["a"], [" "]],
           lowercase=lowercase)

"""BLEU's n-gram counting == sacrebleu 2.6.0, row by row, where the kernel's packed rows (order <= 4)
split the candidate's n-grams in two: those whose first token the candidate has once, which it compares
with a reference's ids in place (each counts at most once, however many references or times a
reference has it), and those whose first token it repeats, which it looks up in its table. The rows
mix both kinds, put matches at the candidate's and the reference's last tokens, and have several
references (some missing); orders 1-6 take the packed rows and the others. Expected values come from
sacrebleu, run here."""

import random

import numpy as np
import pytest

from bleu_core import Bleu

from ....oracle import sacre_corpus


def _check(cands, refs, tokenize="13a", order=4):
    kw = dict(tokenize=tokenize, max_ngram_order=order)
    expected = np.array(sacre_corpus(cands, refs, **kw)[1], dtype=np.int64)
    np.testing.assert_array_equal(Bleu(**kw).batch_stats(cands, refs), expected)


def _rows(seed, n, vocab):
    """n rows over `vocab` words (few: most tokens repeat; many: most are unique), each reference
    made of pieces of the candidate (so that its n-grams match, also at either end), words it lacks
    and repeats of its pieces."""
    rnd = random.Random(seed)
    words = [f"w{i}" for i in range(vocab)]
    cands, refs = [], []
    for _ in range(n):
        cand = [rnd.choice(words) for _ in range(rnd.randint(0, 14))]
        row = []
        for _ in range(rnd.randint(1, 4)):
            if rnd.random() < 0.15:
                row.append(None)
                continue
            ref = []
            for _ in range(rnd.randint(0, 5)):
                r = rnd.random()
                if cand and r < 0.6:
                    a = rnd.randrange(len(cand))
                    piece = cand[a:a + rnd.randint(1, 5)]
                    ref += piece * (2 if r < 0.1 else 1)
                elif r < 0.8:
                    ref.append("x" + rnd.choice(words))
                else:
                    ref.append(rnd.choice(words))
            row.append(" ".join(ref))
        if all(r is None for r in row):
            row[0] = " ".join(cand)
        cands.append(" ".join(cand))
        refs.append(row)
    return cands, refs


@pytest.mark.parametrize("order", [1, 2, 3, 4, 5, 6])
@pytest.mark.parametrize("vocab", [3, 8, 40, 1000])
def test_random_rows_match_sacrebleu(order, vocab):
    cands, refs = _rows(order * 1000 + vocab, 300, vocab)
    _check(cands, refs, order=order)
    _check(cands, refs, tokenize="none", order=order)


#: (candidate, references): clipping of n-grams with a unique first token (at most 1) and a repeated one
CASES = [
    ("a b c d", ["a b c d", "a b c d"]),                   # in two references: counted once
    ("a b c d", ["a b c d a b c d", None]),                # twice in one reference: once
    ("a b c d", ["x a b", "b c d y", "c d"]),              # pieces in different references
    ("a b c d", ["d", "c d e", "b c d e f"]),               # at the candidate's end, longer in the reference
    ("a b c d", ["a b c", "a b c d e"]),                    # at the reference's end
    ("a b a b a", ["a b a b a b", "b a b a"]),              # repeated first tokens: clipped by the counts
    ("a b x a b y", ["a b a b a b", "x a b y"]),            # a repeated token starting unique n-grams' neighbours
    ("the cat the dog", ["the dog the cat", "cat the dog the"]),
    ("p q r s t", ["q r s t p q r s t"]),
    ("a", ["a a a", "a"]),
    ("a a", ["a", "a a a"]),
    ("", ["a", ""]),
    ("x y z", [""]),
]


@pytest.mark.parametrize("order", [1, 2, 3, 4, 5])
def test_clipping_cases_match_sacrebleu(order):
    cands = [c for c, _ in CASES]
    refs = [r for _, r in CASES]
    _check(cands, refs, order=order)
    # the same rows after others, so that each starts from the tables the rows before it left
    _check(cands[::-1] + cands, refs[::-1] + refs, order=order)


def _check_lowercase(cands, refs, tokenize, order, lowercase):
    kw = dict(tokenize=tokenize, max_ngram_order=order)
    expected = np.array(sacre_corpus(cands, refs, lowercase=lowercase, **kw)[1], dtype=np.int64)
    np.testing.assert_array_equal(Bleu(lowercase=lowercase, **kw).batch_stats(cands, refs), expected)


#: text for the tokenizers' scans: ASCII punctuation, digits beside '.', ',' and '-', every ASCII byte,
#: 13a's rewrites, " x" pairs (a space then a token byte: the scan's next-token step), case pairs that
#: lowercase changes (İ, ß, ǅ), CJK, emoji, Unicode spaces and line separators
PIECES = ["a", "b", "A", "B", "x", "1", "2", " ", " ", " ", ".", ",", "-", "é", "É", "中", "国", "\u00a0", "\u3000",
          "\n", "<", "&amp;", "&quot;", "\t", "\x1c", "a.", "1.5", "3-4", "\U0001F600", "İ", "ß", "’", "!", "  ",
          "\u2028", "ǅ", "<skipped>", "-\n", "_", "$", " a", " 1", " .", " -", " ,", " é", " 中", "a ", "1 ", ". ",
          "\x85", "\u2000", "\U00010348", "\ue000"] + [chr(c) for c in range(1, 128)]


def _text_rows(seed, n):
    rnd = random.Random(seed)

    def text():
        return "".join(rnd.choice(PIECES) for _ in range(rnd.randint(0, 25)))

    def from_candidate(c):
        out = ""
        for _ in range(rnd.randint(0, 4)):
            if c and rnd.random() < 0.6:
                a = rnd.randrange(len(c))
                out += c[a:a + rnd.randint(1, 12)] * (2 if rnd.random() < 0.15 else 1)
            else:
                out += text()[:6]
            out += rnd.choice(["", " "])
        return out

    cands, refs = [], []
    for _ in range(n):
        cand = text()
        row = [from_candidate(cand) if rnd.random() < 0.8 else text() for _ in range(rnd.randint(1, 3))]
        cands.append(cand)
        refs.append(row + [None] if rnd.random() < 0.2 else row)
    return cands, refs


@pytest.mark.parametrize("tokenize", ["13a", "intl", "zh", "char", "none"])
def test_text_through_every_scan_lowercased_or_not_matches_sacrebleu(tokenize):
    """The scans that feed the counting (13a's and zh's next-token step included) on text of every
    kind, with and without lowercase, orders 1-5."""
    cands, refs = _text_rows(len(tokenize) * 7919, 250)
    for lowercase in (False, True):
        for order in (1, 2, 3, 4, 5):
            _check_lowercase(cands, refs, tokenize, order, lowercase)


def test_long_rows_of_repeated_and_unique_tokens_match_sacrebleu():
    """Candidates of up to 120 tokens (past the unrolled order-4 loop and its tail), a few repeated
    words among unique ones, references made of the candidate's head, tail and slices, repeated."""
    rnd = random.Random(20261207)
    cands, refs = [], []
    for _ in range(400):
        repeated = [f"r{j}" for j in range(rnd.randint(1, 4))]
        share = rnd.choice([0.1, 0.5, 0.9])
        cand = [rnd.choice(repeated) if rnd.random() < share else f"u{rnd.randrange(10 ** 6)}"
                for _ in range(rnd.choice([1, 2, 3, 4, 5, 8, 30, 120]))]
        row = []
        for _ in range(rnd.randint(1, 5)):
            if rnd.random() < 0.1:
                row.append(None)
                continue
            ref = []
            for _ in range(rnd.randint(0, 8)):
                x = rnd.random()
                if x < 0.5:
                    a = rnd.randrange(len(cand))
                    ref += cand[a:a + rnd.randint(1, 6)] * rnd.choice([1, 1, 2, 3])
                elif x < 0.65:
                    ref += cand[-rnd.randint(1, 4):]
                elif x < 0.8:
                    ref += cand[:rnd.randint(1, 4)]
                elif x < 0.9:
                    ref.append(rnd.choice(cand))
                else:
                    ref.append(f"z{rnd.randrange(5)}")
            row.append(" ".join(ref))
        if all(r is None for r in row):
            row[0] = " ".join(cand)
        cands.append(" ".join(cand))
        refs.append(row)
    for tokenize in ("13a", "none"):
        for order in (1, 2, 3, 4):
            _check(cands, refs, tokenize=tokenize, order=order)


@pytest.mark.parametrize("distinct", [65534, 65535, 65536])
def test_candidates_at_the_packed_rows_limit_of_distinct_tokens(distinct):
    """A candidate of 65,534-65,536 distinct tokens (packed keys hold ids below 65,536; above, the row
    is counted unpacked), its last ids repeated, then small rows in the same batch."""
    words = [f"w{i}" for i in range(distinct)]
    cand = words + ["w0", "w1", f"w{distinct - 1}", f"w{distinct - 2}", f"w{distinct - 1}"]
    cands = [" ".join(cand), "a b c a b", " ".join(words[-5:])]
    refs = [[" ".join(cand[-7:] + cand[:5] + cand[30000:30010] + cand[-3:]), None, " ".join(cand[-4:] * 2)],
            ["a b c a b c"], [" ".join(words[-5:])]]
    for order in (2, 4):
        _check(cands, refs, tokenize="none", order=order)

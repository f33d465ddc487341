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

"""Hypothesis strategies for adversarial MT-like text."""

from hypothesis import strategies as st

# characters and strings that sit on a rule of some tokenizer
EDGE = (
    # whitespace by Python's definition (str.split / str.rstrip), and look-alikes that are not
    list(" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
    + ["\ufeff", "\u200b", "\u180e"]
    # 13a: punctuation classes, period/comma/digit rules, dash after digit, entities
    + list(".,-&;<>\"'!?()[]{}/\\@#$%^*+=~`|:_")
    + list("0123456789")
    + ["&quot;", "&amp;", "&lt;", "&gt;", "&amp;quot;", "<skipped>", "<skip", "-\n", "\n"]
    # casing edge cases for str.lower
    + list("aAbBzZéÉßİIΣσςǅẞ")
    # zh: CJK, full-width forms, the two-character range bounds of sacrebleu issue #298
    + list("中文你好。，、「」﹑＂㐀䶵龥龻豈﨩") + ["\u2000", "\u2001", "\u2a6d", "\u2a6e", "\u2f80", "\u2f81", "\u2fa1", "\u2fa2"]
    + ["\U00020000", "\U0002a6d6", "\U0002f800"]
    # intl: Unicode numbers, punctuation, symbols
    + list("٣²½€©‰—…¿¡«»·•′″℃№™♥☃✓㈱㎏")
    + ["\u0301", "e\u0301", "\U0001F600", "\U0001D7D9"]
)

WORDS = ["the", "cat", "a", "mat", "on", "is", "Der", "Hund", "1,000", "3.5", "U.S.", "e-mail", "don't", "猫", "狗"]

atom = st.one_of(
    st.sampled_from(WORDS),
    st.sampled_from(EDGE),
    st.text(max_size=3),
)

segment = st.lists(atom, max_size=24).map("".join)


@st.composite
def corpus(draw, max_pairs=6, max_refs=4, allow_missing=True):
    """(candidates, references): each candidate has 1..max_refs references, None = missing."""
    n = draw(st.integers(1, max_pairs))
    nrefs = draw(st.integers(1, max_refs))
    cands, refs = [], []
    for _ in range(n):
        cands.append(draw(segment))
        row = [draw(segment) for _ in range(nrefs)]
        if allow_missing and nrefs > 1:
            for k in range(nrefs):
                if draw(st.integers(0, 4)) == 0:
                    row[k] = None
            if all(r is None for r in row):
                row[draw(st.integers(0, nrefs - 1))] = draw(segment)
        refs.append(row)
    return cands, refs

"""BLEU's kernel on several threads at once (the Prism engine runs bundles on threads of one worker):
its runs release the GIL, take it back for str.lower of non-ASCII text (lowercase), and raise their
errors once they hold it again. Expected statistics come from sacrebleu, run here."""

import sys
import threading

import numpy as np
import pytest

from bleu_core.kernels.buffers import list_buffers
from bleu_core.metrics.bleu import _bleu
from bleu_core.tokenizers import get_tokenizer

from ....oracle import sacre_corpus

CANDS = ["Die Katze saß auf der MATTE.", "ÉCOLE «très» bien, 1.5-2", "The cat, the Hat & the bat!", "Ünïcödé ΣΑΣ",
         "東京は 晴れ。", "a b c d e f"]
REFS = [["die katze saß auf der matte .", "Die Katze sitzt"], ["école très bien , 1.5-2"], ["the cat the hat"],
        ["ünïcödé σας", None], ["東京は 晴れ 。"], ["a b c d e f g"]]


def _stats(cands, refs, tokenize, lowercase, per_row=0):
    tok = get_tokenizer(tokenize)
    bufs = list_buffers(cands, refs)
    out = np.zeros((len(cands), 10) if per_row else 10, dtype=np.int64)
    _bleu.stats(*bufs.candidates, *bufs.references, bufs.list_offsets, tok.kernel_id, int(lowercase), 4,
                tok.flags(), out, per_row)
    return out


@pytest.mark.parametrize("tokenize", ["13a", "intl"])
@pytest.mark.parametrize("lowercase", [False, True])
def test_threads_at_once_match_sacrebleu(tokenize, lowercase):
    """Eight threads, each scoring the batch many times (lowercase: str.lower called from inside
    every run), all get sacrebleu's statistics."""
    cands, refs = CANDS * 50, REFS * 50
    expected = np.array(sacre_corpus(cands, refs, tokenize=tokenize, lowercase=lowercase)[1], dtype=np.int64)
    results, errors = [], []

    def work():
        try:
            for _ in range(5):
                results.append(_stats(cands, refs, tokenize, lowercase, per_row=1))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(results) == 40
    for r in results:
        np.testing.assert_array_equal(r, expected)


def test_errors_raised_after_the_gil_is_back():
    """A bad row found in a run with the GIL released (here a row without references, beside rows
    that call str.lower) is still its ValueError, from any thread."""
    errors = []

    def work():
        for case in range(3):
            try:
                if case == 0:
                    tok = get_tokenizer("13a")
                    bufs = list_buffers(["a", "b"], [["a"], [None]])
                    out = np.zeros(10, dtype=np.int64)
                    _bleu.stats(*bufs.candidates, *bufs.references, bufs.list_offsets, tok.kernel_id, 1, 4, None,
                                out, 0)
                else:
                    _stats(["Ä", "b"] if case == 1 else ["x"], [["ä"], ["B"]] if case == 1 else [["y"]], "13a", True)
                    errors.append(None)
            except ValueError as exc:
                errors.append(exc.args)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors.count((1, -1, "no reference (all references are missing)")) == 4
    assert errors.count(None) == 8


def test_the_gil_is_released_during_a_run():
    """A thread waiting for the GIL runs while the kernel scores a batch: with a switch interval
    far longer than the call, it can only get the GIL from the kernel releasing it. (The thread
    may need a moment to be scheduled: three tries, one of which must see it run.)"""
    cands = [f"word{i % 97} Ünïcödé number {i}, and more words here." for i in range(40_000)]
    refs = [[c.replace("word", "w")] for c in cands]
    tok = get_tokenizer("13a")
    bufs = list_buffers(cands, refs)
    out = np.zeros(10, dtype=np.int64)
    seen = []
    for _ in range(3):
        ready, go, ran = threading.Event(), threading.Event(), []
        t = threading.Thread(target=lambda: (ready.set(), go.wait(), ran.append(1)))
        t.start()
        ready.wait()
        while t.is_alive() and not _waiting(t):
            pass
        old = sys.getswitchinterval()
        sys.setswitchinterval(1000.0)
        try:
            go.set()  # the thread wakes up wanting the GIL, which this thread keeps ...
            _bleu.stats(*bufs.candidates, *bufs.references, bufs.list_offsets, tok.kernel_id, 0, 4, None, out, 0)
            seen.append(list(ran))  # ... unless the kernel released it
        finally:
            sys.setswitchinterval(old)
            t.join()
        if seen[-1]:
            break
    assert [1] in seen


def _waiting(thread) -> bool:
    """Whether `thread` is blocked in Event.wait (its frame is in threading's wait)."""
    frame = sys._current_frames().get(thread.ident)
    while frame is not None:
        if frame.f_code.co_name == "wait" and frame.f_code.co_filename == threading.__file__:
            return True
        frame = frame.f_back
    return False

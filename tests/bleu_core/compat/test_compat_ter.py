"""bleu_core.compat's TER: bit-identity with sacrebleu 2.6.0's ``TER`` (scores, ``num_edits``,
``ref_length``, text, JSON, signature, statistics) on real lines with 1 to 3 references, missing and
empty ones included, for every option."""

import math

import pytest

from bleu_core import compat
from bleu_core.metrics.ter import Ter

from ...oracle import CORPORA, ragged_references, read_lines

sacrebleu = pytest.importorskip("sacrebleu")
from sacrebleu.metrics import TER as SacreTER  # noqa: E402


TER_OPTIONS = [
    {},
    {"case_sensitive": True},
    {"normalized": True},
    {"no_punct": True},
    {"normalized": True, "asian_support": True, "case_sensitive": True},
    {"no_punct": True, "asian_support": True},
]


def assert_same_ter(ours, theirs):
    assert type(ours.score) is float and ours.score == theirs.score
    assert (ours.name, ours.num_edits, ours.ref_length) == (theirs.name, theirs.num_edits, theirs.ref_length)
    assert type(ours.num_edits) is int and type(ours.ref_length) is float
    assert repr(ours) == repr(theirs)
    assert ours.format(width=17, signature="nrefs:1|x:y") == theirs.format(width=17, signature="nrefs:1|x:y")
    assert ours.format(is_json=True, signature="a:b") == theirs.format(is_json=True, signature="a:b")


@pytest.mark.parametrize("options", TER_OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default")
def test_corpus_and_sentence_scores_identical_to_sacrebleu(options):
    hyps, refs = ragged_references(200)
    ours, theirs = compat.TER(**options), SacreTER(**options)
    assert_same_ter(ours.corpus_score(hyps, refs), theirs.corpus_score(hyps, refs))
    assert ours.get_signature().format().replace("beambleu-0.1.0", "2.6.0") == theirs.get_signature().format()
    for attr in ("normalized", "no_punct", "asian_support", "case_sensitive"):
        assert getattr(ours, attr) == getattr(theirs, attr) == options.get(attr, False)
    for i in range(0, len(hyps), 9):
        segment_refs = [stream[i] for stream in refs if stream[i] is not None]
        assert_same_ter(ours.sentence_score(hyps[i], segment_refs), theirs.sentence_score(hyps[i], segment_refs))


def test_three_references_take_sacrebleus_float_order():
    # every line with 3 references: the averages S/3 are not multiples of a power of two, so the float sum
    # in line order (sacrebleu's) and the correctly rounded exact sum (Ter.score of the totals) can differ
    folder = CORPORA / "wmt21" / "en-de"
    if not (folder / "ref.D.txt").exists():
        pytest.skip(f"shared corpora not found at {CORPORA}")
    hyps = read_lines(folder / "sys.ICL.txt")
    refs = [read_lines(folder / f"ref.{k}.txt") for k in "ACD"]
    ours, theirs = compat.TER().corpus_score(hyps, refs), SacreTER().corpus_score(hyps, refs)
    assert_same_ter(ours, theirs)
    stats = compat.TER()._extract_corpus_statistics(hyps, refs)
    # the statistics' exact sum of average reference lengths is within rounding of sacrebleu's float sum
    exact = Ter.ref_length(stats.sum(axis=0).tolist())
    assert math.isclose(exact, theirs.ref_length, rel_tol=1e-12)


def test_cached_references_and_compat_class():
    hyps, refs = ragged_references(60)
    ours = compat.TER(references=refs)
    assert_same_ter(ours.corpus_score(hyps, None), SacreTER(references=refs).corpus_score(hyps, None))
    assert compat.compat_class("ter") is compat.TER and compat.compat_class(Ter) is compat.TER


def test_identity_is_a_real_check():
    hyps, refs = ragged_references(50)
    ours, theirs = compat.TER().corpus_score(hyps, refs), SacreTER().corpus_score(hyps, refs)
    ours.ref_length = math.nextafter(ours.ref_length, 0)
    with pytest.raises(AssertionError):
        assert_same_ter(ours, theirs)

"""bleu_core's Hugging Face ``evaluate`` modules (bleu_core/integrations/hf_evaluate/), loaded by
path with the real ``evaluate`` package, offline, against sacrebleu 2.6.0 called here as
evaluate's own ``sacrebleu``, ``chrf`` and ``ter`` modules call it: every key of the result, on
small inputs with every option and on a real WMT system (when ../shared/corpora exists)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

# offline before evaluate, datasets and huggingface_hub read their configuration (at import)
for _var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "HF_EVALUATE_OFFLINE"):
    os.environ[_var] = "1"

evaluate = pytest.importorskip("evaluate")
sacrebleu = pytest.importorskip("sacrebleu")
from sacrebleu.metrics import CHRF, TER  # noqa: E402

from bleu_core.integrations.hf_evaluate import MODULES, module_path  # noqa: E402

from ...oracle import CORPORA, REPO, load_system  # noqa: E402

PREDICTIONS = ["hello there general kenobi", "on our way to ankh morpork", "", "The cat sat on the mat .",
               "北京是中国的首都", "Ça va — très bien, merci !"]
REFERENCES = [["hello there general kenobi", "hello there !"], ["goodbye ankh morpork", "ankh morpork"],
              ["nothing", ""], ["The cat is on the mat.", "the cat sat on the mat"],
              ["北京是中国的首都。", "中国的首都是北京"], ["Ça va très bien, merci!", "ca va tres bien merci"]]

KEYS = {"sacrebleu": ["score", "counts", "totals", "precisions", "bp", "sys_len", "ref_len"],
        "chrf": ["score", "char_order", "word_order", "beta"],
        "ter": ["score", "num_edits", "ref_length"]}

OPTIONS = {
    "sacrebleu": [{}, {"smooth_method": "floor", "smooth_value": 0.3}, {"smooth_method": "add-k"},
                  {"smooth_method": "none"}, {"lowercase": True}, {"tokenize": "zh"}, {"tokenize": "char"},
                  {"tokenize": "intl"}, {"use_effective_order": True}, {"force": True}],
    "chrf": [{}, {"word_order": 2}, {"char_order": 4, "beta": 1}, {"lowercase": True}, {"whitespace": True},
             {"eps_smoothing": True}],
    "ter": [{}, {"normalized": True}, {"ignore_punct": True}, {"support_zh_ja_chars": True},
            {"case_sensitive": True}],
}


def sacrebleu_result(name, predictions, references, **opts):
    """What evaluate's module of that name returns, computed by sacrebleu as the module calls it."""
    if isinstance(references[0], str):
        references = [[r] for r in references]
    streams = [[refs[i] for refs in references] for i in range(len(references[0]))]
    if name == "sacrebleu":
        tokenize = opts.pop("tokenize", None)
        out = sacrebleu.corpus_bleu(predictions, streams, **opts, **({"tokenize": tokenize} if tokenize else {}))
    elif name == "chrf":
        out = CHRF(**opts).corpus_score(predictions, streams)
    else:
        out = TER(normalized=opts.get("normalized", False), no_punct=opts.get("ignore_punct", False),
                  asian_support=opts.get("support_zh_ja_chars", False),
                  case_sensitive=opts.get("case_sensitive", False)).corpus_score(predictions, streams)
    return {key: getattr(out, key) for key in KEYS[name]}


@pytest.fixture(scope="module")
def loaded():
    return {name: evaluate.load(module_path(name)) for name in MODULES}


def _same(ours, theirs, name):
    assert list(ours) == KEYS[name]
    for key in KEYS[name]:
        assert ours[key] == theirs[key], key
        assert type(ours[key]) is type(theirs[key]), key  # Python numbers, as sacrebleu's (JSON-serialisable)
        if isinstance(theirs[key], list):
            assert [type(x) for x in ours[key]] == [type(x) for x in theirs[key]], key


CASES = [(name, opts) for name in MODULES for opts in OPTIONS[name]]


@pytest.mark.parametrize("name,opts", CASES, ids=[f"{n}-{o}" for n, o in CASES])
def test_every_key_equals_sacrebleu(loaded, name, opts):
    ours = loaded[name].compute(predictions=PREDICTIONS, references=REFERENCES, **opts)
    _same(ours, sacrebleu_result(name, PREDICTIONS, REFERENCES, **opts), name)


@pytest.mark.parametrize("name", MODULES)
def test_one_reference_as_strings(loaded, name):
    refs = [r[0] for r in REFERENCES]
    ours = loaded[name].compute(predictions=PREDICTIONS, references=refs)
    _same(ours, sacrebleu_result(name, PREDICTIONS, refs), name)


@pytest.mark.parametrize("name", MODULES)
def test_batches_add_up(loaded, name):
    module = loaded[name]
    for p, r in zip(PREDICTIONS, REFERENCES):
        module.add(prediction=p, reference=r)
    _same(module.compute(), sacrebleu_result(name, PREDICTIONS, REFERENCES), name)


@pytest.mark.parametrize("name", MODULES)
def test_different_numbers_of_references_are_refused(loaded, name):
    refs = [list(r) for r in REFERENCES]
    refs[3] = refs[3][:1]
    with pytest.raises(ValueError, match="same number of references"):
        loaded[name].compute(predictions=PREDICTIONS, references=refs)


def test_module_path_names_the_files():
    for name in MODULES:
        assert os.path.isfile(module_path(name)) and module_path(name).endswith(f"{name}.py")
    with pytest.raises(ValueError, match="no module"):
        module_path("bleu")


@pytest.mark.corpora
def test_real_wmt_system(loaded):
    if not (CORPORA / "wmt22" / "cs-en" / "ref.C.txt").exists():
        pytest.skip(f"shared corpora not found at {CORPORA}")
    hyps, streams = load_system("wmt22/cs-en", "Online-A", ("B", "C"))
    refs = [list(r) for r in zip(*streams)]
    for name, opts, n in (("sacrebleu", {}, None), ("chrf", {"word_order": 2}, None), ("ter", {}, 300)):
        p, r = (hyps, refs) if n is None else (hyps[:n], refs[:n])
        _same(loaded[name].compute(predictions=p, references=r, **opts), sacrebleu_result(name, p, r, **opts), name)


NO_NETWORK = r"""
import json, socket, sys
def refuse(*args, **kwargs):
    raise OSError("network access during an offline evaluate.load")
socket.socket.connect = refuse
socket.create_connection = refuse
import evaluate
out = {}
for path in sys.argv[1:]:
    m = evaluate.load(path)
    out[path] = m.compute(predictions=["the cat sat on the mat"], references=[["the cat is on the mat"]])
print(json.dumps(out))
"""


def test_loads_offline_without_network(tmp_path):
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", HF_EVALUATE_OFFLINE="1",
               HF_HOME=str(tmp_path / "hf"), HF_MODULES_CACHE=str(tmp_path / "modules"))
    paths = [module_path(name) for name in MODULES]
    proc = subprocess.run([sys.executable, "-c", NO_NETWORK, *paths], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    for name, path in zip(MODULES, paths):
        want = sacrebleu_result(name, ["the cat sat on the mat"], [["the cat is on the mat"]])
        assert out[path] == json.loads(json.dumps(want))
    assert str(REPO) in paths[0]

"""The SentencePiece model of the spBLEU benchmarks (``flores101``, ``flores200``, ``spBLEU-1K``, ``spm``).

Which model, in this order: the file given with ``--spm-model``; else sacrebleu's real model if it
is at sacrebleu's place (``$SACREBLEU/models/<file>``, default ``~/.sacrebleu``); else a stand-in
trained once into the workdir from the corpora's reference lines (unigram, vocabulary 32000 or as
large as the text allows, one thread) and reused from there. The real models cannot be fetched on
an offline machine; speed ratios measured with a stand-in depend on its vocabulary (the number of
pieces per line drives both SentencePiece's and the n-gram counting's cost).

Both implementations read the same file: beambleu through ``Bleu(tokenize=name, spm_model=path)``,
sacrebleu through ``SACREBLEU=<home>``, where ``<home>/models/<file>`` is a symbolic link to it.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional

#: the spBLEU tokenizer names (``spm`` is sacrebleu's old name of ``flores101``), as in
#: bleu_core.tokenizers.SPM_TOKENIZERS; spelled out so that the sacrebleu and bleuscore workers,
#: which check a tokenizer against it, never import bleu_core (its size would count in their peak RSS)
SPM_NAMES = ("flores101", "flores200", "spBLEU-1K", "spm")
#: the stand-in model: SentencePiece trainer options (vocab_size is an upper bound, hard_vocab_limit=False)
STANDIN = dict(model_type="unigram", vocab_size=32000, hard_vocab_limit=False, num_threads=1)
#: at most this many distinct reference lines train the stand-in
TRAINING_LINES = 200_000
#: TrainerSpec.model_type values of sentencepiece_model.proto
MODEL_TYPES = {1: "unigram", 2: "bpe", 3: "word", 4: "char"}


@dataclass(frozen=True)
class Model:
    """A model file and what the report says about it."""

    path: Path
    kind: str  # one line: where it came from (real, given, trained stand-in)
    standin: bool  # not known to be sacrebleu's real model
    size: int
    sha256: str
    vocab: int
    model_type: str

    def describe(self) -> str:
        text = (f"{self.path} ({self.size:,} bytes, sha256 {self.sha256}, vocabulary {self.vocab:,}, "
                f"{self.model_type}): {self.kind}")
        if self.standin:
            text += ("; NOT sacrebleu's real model as far as this benchmark can tell: speed ratios with a stand-in "
                     "depend on its vocabulary (pieces per line), they are not those of the real model")
        return text


def model_file(name: str) -> str:
    """The file name sacrebleu gives tokenizer ``name``'s model (the basename of its URL)."""
    from bleu_core.tokenizers.tokenizer_spm import SPM_MODELS

    return os.path.basename(SPM_MODELS[name][0])


def _varint(buf: bytes, i: int):
    shift = value = 0
    while True:
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return value, i


def _fields(buf: bytes):
    """(field number, wire type, value) of a protobuf message: ints for varints, bytes for the rest."""
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(buf, i)
        elif wire == 2:
            n, i = _varint(buf, i)
            value, i = buf[i:i + n], i + n
        elif wire in (1, 5):
            n = 8 if wire == 1 else 4
            value, i = buf[i:i + n], i + n
        else:
            raise ValueError(f"unsupported protobuf wire type {wire} in a SentencePiece model")
        yield field, wire, value


def model_type(data: bytes) -> str:
    """The model type recorded in a serialized ModelProto (trainer_spec = 2, its model_type = 3;
    the proto's default is unigram). Read by hand: sentencepiece's generated protobuf module needs
    a matching protobuf runtime, which the tokenizers themselves never need."""
    for field, wire, value in _fields(data):
        if field == 2 and wire == 2:
            for sub, sub_wire, sub_value in _fields(value):
                if sub == 3 and sub_wire == 0:
                    return MODEL_TYPES.get(sub_value, f"type {sub_value}")
            return "unigram"
    return "unknown (no trainer spec)"


def inspect(path: Path, kind: str, standin: bool) -> Model:
    import sentencepiece

    data = path.read_bytes()
    sp = sentencepiece.SentencePieceProcessor()
    sp.LoadFromSerializedProto(data)
    return Model(path=path, kind=kind, standin=standin, size=len(data), sha256=hashlib.sha256(data).hexdigest(),
                 vocab=sp.GetPieceSize(), model_type=model_type(data))


def training_lines(source: str, corpora: Optional[Path]) -> List[str]:
    """Distinct reference lines of the corpora (every ``ref.*.txt``), or of the synthetic corpus."""
    from .corpus import _lines, synthetic_pairs

    seen = {}
    if source == "wmt":
        for path in sorted(corpora.glob("*/*/ref.*.txt")):
            for line in _lines(path):
                if line.strip():
                    seen.setdefault(line, None)
    else:
        for _, refs in synthetic_pairs(1):
            seen.setdefault(refs[0], None)
            if len(seen) == TRAINING_LINES:
                break
    return list(seen)[:TRAINING_LINES]


def train_standin(workdir: Path, source: str, corpora: Optional[Path]) -> Path:
    """The stand-in model of ``source``'s corpus, trained into ``workdir`` the first time."""
    import sentencepiece

    path = workdir / f"spm-standin-{source}-{STANDIN['model_type']}-{STANDIN['vocab_size']}.model"
    if path.exists():
        return path
    workdir.mkdir(parents=True, exist_ok=True)
    text = workdir / f"spm-standin-{source}.{os.getpid()}.txt"
    prefix = workdir / f"spm-standin-{source}.{os.getpid()}"
    lines = training_lines(source, corpora)
    text.write_text("\n".join(lines) + "\n", encoding="utf-8")
    try:
        sentencepiece.SentencePieceTrainer.train(input=str(text), model_prefix=str(prefix), minloglevel=2, **STANDIN)
        os.replace(f"{prefix}.model", path)
    finally:
        for leftover in (text, Path(f"{prefix}.model"), Path(f"{prefix}.vocab")):
            leftover.unlink(missing_ok=True)
    return path


def choose(name: str, given: Optional[Path], workdir: Path, source: str, corpora: Optional[Path]) -> Model:
    """The model tokenizer ``name`` is benchmarked with (see the module docstring)."""
    from bleu_core.tokenizers.tokenizer_spm import default_model_path

    place = Path(default_model_path(name))
    if given is not None:
        if not given.is_file():
            raise SystemExit(f"--spm-model: {given} is not a file")
        real = place.is_file() and place.read_bytes() == given.read_bytes()
        kind = ("given with --spm-model, the same file as sacrebleu's real model at " + str(place) if real else
                f"given with --spm-model; not known to be sacrebleu's real model (none at {place} to compare)"
                if not place.is_file() else f"given with --spm-model; differs from sacrebleu's model at {place}")
        return inspect(given.resolve(), kind, standin=not real)
    if place.is_file():
        return inspect(place.resolve(), f"sacrebleu's real {name} model, found at its place {place}", standin=False)
    path = train_standin(workdir, source, corpora)
    kind = (f"a trained stand-in (sacrebleu's model is not at {place}, and the benchmark does not download it; "
            f"trained from the {source} corpus's reference lines, cached in the workdir)")
    return inspect(path.resolve(), kind, standin=True)


def sacrebleu_home(name: str, model: Model, workdir: Path) -> Path:
    """A ``SACREBLEU`` folder whose ``models/<file>`` for ``name`` is a symbolic link to ``model``."""
    home = workdir / f"sacrebleu-home-{model.sha256[:16]}"
    link = home / "models" / model_file(name)
    link.parent.mkdir(parents=True, exist_ok=True)
    if not (link.is_symlink() and Path(os.readlink(link)) == model.path):
        tmp = link.with_name(f"{link.name}.{os.getpid()}.tmp")
        tmp.unlink(missing_ok=True)
        tmp.symlink_to(model.path)
        os.replace(tmp, link)
    return home

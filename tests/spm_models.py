"""Tiny SentencePiece models for the spBLEU tests, trained here (offline, seconds) and installed
under the file names sacrebleu 2.6.0 looks for in ``$SACREBLEU/models/``, so that sacrebleu
itself runs spBLEU offline as the oracle.

Each tokenizer gets a different model, so a test also sees that each name reads its own file:
``flores101`` (and ``spm``) a unigram model, ``flores200`` a BPE model, ``spBLEU-1K`` a unigram
model with byte fallback (unknown characters become ``<0x..>`` pieces instead of one unknown
piece). Character coverage below 1 leaves rare characters unknown to the first two.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, List

#: sacrebleu 2.6.0's model file names (the basenames of its download URLs)
MODEL_FILES = {
    "flores101": "sacrebleu_tokenizer_spm.model",
    "flores200": "flores200sacrebleuspm",
    "spBLEU-1K": "spbleu-1k_tokenizer_spm.model",
}
#: every spBLEU tokenizer name and the file it reads (``spm`` is flores101's old name)
TOKENIZER_FILES = {**MODEL_FILES, "spm": MODEL_FILES["flores101"]}

_TRAINING = {
    "flores101": dict(model_type="unigram", vocab_size=800, character_coverage=0.98),
    "flores200": dict(model_type="bpe", vocab_size=1000, character_coverage=0.98),
    "spBLEU-1K": dict(model_type="unigram", vocab_size=1200, character_coverage=0.98, byte_fallback=True),
}


def training_text(corpora: Path, repo: Path, limit: int = 3000) -> List[str]:
    """Lines from several languages of ../shared/corpora (when present), else the bundled sample."""
    lines: List[str] = []
    folders = sorted(corpora.glob("*/*/ref.A.txt")) if (corpora / "MANIFEST.tsv").exists() else []
    for path in folders:
        with open(path, encoding="utf-8") as fh:
            lines += [ln.rstrip("\n") for _, ln in zip(range(limit // max(len(folders), 1) + 50), fh)]
    if not lines:
        for path in sorted((repo / "examples" / "sample").glob("*.txt")):
            lines += path.read_text(encoding="utf-8").splitlines()
    return [ln for ln in lines if ln.strip()]


def train_models(models_dir: Path, lines: List[str]) -> Dict[str, Path]:
    """Train the three models into ``models_dir`` under sacrebleu's file names; name -> path."""
    import sentencepiece as spm

    models_dir.mkdir(parents=True, exist_ok=True)
    text = models_dir / "training.txt"
    text.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = {}
    for name, opts in _TRAINING.items():
        prefix = models_dir / f"train-{name}"
        spm.SentencePieceTrainer.train(input=str(text), model_prefix=str(prefix), num_threads=1,
                                       minloglevel=2, hard_vocab_limit=False, **opts)
        path = models_dir / MODEL_FILES[name]
        os.replace(f"{prefix}.model", path)
        os.unlink(f"{prefix}.vocab")
        out[name] = path
    text.unlink()
    return out

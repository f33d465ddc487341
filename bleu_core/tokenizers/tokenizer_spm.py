"""``flores101``, ``flores200``, ``spBLEU-1K`` and ``spm``: SentencePiece pieces (spBLEU), extra ``spm``.

Mirrors sacrebleu 2.6.0's ``TokenizerSPM``: a line becomes ``" ".join(sp.EncodeAsPieces(line))``
(lowercasing, when asked, happens before, as for every BLEU tokenizer), and the signature says
``tok:flores101`` / ``flores200`` / ``spBLEU-1K`` (``spm`` is the old name of ``flores101``).

The model file is found where sacrebleu finds it, ``$SACREBLEU/models/<basename of the URL>``
(``$SACREBLEU`` defaults to ``~/.sacrebleu``), so a machine that has run sacrebleu's spBLEU needs
nothing more; when it is missing it is downloaded there from sacrebleu's URL, with a bounded
timeout. A model can also be named explicitly: a local path, or any URL Beam's ``FileSystems``
reads (``gs://``, ``s3://``; that needs apache-beam, which ``bleu_core`` otherwise never imports).
The signature cannot tell two model files apart, so the tokenizer exposes the file's SHA-256.

The batch form (:meth:`TokenizerSPM.encode_ids`) encodes each distinct line of a batch once
(and a batch's distinct lines equal to one of the last few batches' not at all) through
SentencePiece's batch API, as piece ids, which the kernel counts as they are: no piece becomes a
Python string, and no line's ids are copied per row (the kernel reads each row's ids through the
batch's dictionary index). Only lines with a piece that is not a token as it is are encoded again
as text: an unknown piece (whose text is the unknown surface, not ``<unk>``), or a piece that is
empty or holds a character ``str.split()`` splits at.
"""

from __future__ import annotations

import os
import re
from collections import namedtuple

from .base import Tokenizer

# numpy, pyarrow (and gc, hashlib, logging, tempfile, time) are imported when a model is used: `beambleu score -tok 13a`
# needs none of them
TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Sequence

    import numpy as np
    import pyarrow as pa

__all__ = ["DOWNLOAD_TIMEOUT", "READ_TIMEOUT", "SPM_MODELS", "Encoded", "ModelError", "TokenizerSPM",
           "default_model_path", "download", "is_url", "local_path", "read_model", "require_sentencepiece",
           "resolve_model", "sacrebleu_dir"]

#: sacrebleu 2.6.0's models: tokenizer name -> (URL, signature)
SPM_MODELS = {
    "flores101": ("https://dl.fbaipublicfiles.com/fairseq/models/flores/sacrebleu_tokenizer_spm.model", "flores101"),
    "flores200": ("https://tinyurl.com/flores200sacrebleuspm", "flores200"),
    "spBLEU-1K": ("https://www.dlnlp.ai/spBLEU-1K/spbleu-1k_tokenizer_spm.model", "spBLEU-1K"),
    "spm": ("https://dl.fbaipublicfiles.com/fairseq/models/flores/sacrebleu_tokenizer_spm.model", "flores101"),
}

#: seconds a model download may wait for the server on each read, and in all
#: (``BEAMBLEU_DOWNLOAD_TIMEOUT`` overrides the total; the per-read wait is at most the total)
DOWNLOAD_TIMEOUT = 300.0
READ_TIMEOUT = 30.0

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


class ModelError(RuntimeError):
    """A SentencePiece model that cannot be found, fetched or read (one line, naming the path)."""


def sacrebleu_dir() -> str:
    """sacrebleu's cache folder: ``$SACREBLEU``, else ``~/.sacrebleu`` (read at each call)."""
    return os.environ.get("SACREBLEU", os.path.join(os.path.expanduser("~"), ".sacrebleu"))


def default_model_path(name: str) -> str:
    """Where sacrebleu keeps the model of tokenizer ``name``."""
    return os.path.abspath(os.path.join(sacrebleu_dir(), "models", os.path.basename(SPM_MODELS[name][0])))


def is_url(path: str) -> bool:
    """A URL for Beam's FileSystems (``gs://``, ``s3://``, ...); ``file://`` is a local path."""
    return bool(_URL.match(path)) and not path.startswith("file://")


def local_path(path: str) -> str:
    """A local path without its ``file://`` prefix."""
    return path[len("file://"):] if path.startswith("file://") else path


def _timeout() -> float:
    raw = os.environ.get("BEAMBLEU_DOWNLOAD_TIMEOUT")
    if raw is None:
        return DOWNLOAD_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise ModelError(f"BEAMBLEU_DOWNLOAD_TIMEOUT must be a positive number of seconds, got {raw!r}")
    return value


def download(url: str, path: str) -> None:
    """Fetch ``url`` into ``path`` (through a temporary file of its own beside it, renamed when all
    the bytes the server announced have arrived, so an interrupted download never leaves a
    truncated model); ModelError naming both on failure."""
    import tempfile
    import time
    import urllib.request

    total = _timeout()
    deadline = time.monotonic() + total
    tmp = None
    try:
        folder = os.path.dirname(path) or "."
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".beambleu-tmp", dir=folder)
        # an opener of its own, not urlopen's: that one is built once per process, with the proxy
        # variables of its first call, which then apply to every later urlopen in the process
        opener = urllib.request.build_opener()
        with opener.open(url, timeout=min(READ_TIMEOUT, total)) as resp, os.fdopen(fd, "wb") as out:
            declared = resp.headers.get("Content-Length")
            written = 0
            while True:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"not complete after {total:g} s")
                chunk = resp.read1(1 << 16)  # what has arrived: a server that trickles still meets the deadline
                if not chunk:
                    break
                out.write(chunk)
                written += len(chunk)
        if declared is not None and declared.isdigit() and written != int(declared):
            raise OSError(f"the connection closed after {written} of {declared} bytes")
        if written == 0:
            raise OSError("the server sent an empty file")
        os.replace(tmp, path)
    except BaseException as exc:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        if not isinstance(exc, Exception):
            raise
        reason = " ".join(str(getattr(exc, "reason", None) or exc).split()) or type(exc).__name__
        if getattr(exc, "code", None) is not None:  # an HTTP error status
            reason = f"HTTP {exc.code} {reason}"
        raise ModelError(f"cannot download the SentencePiece model {url} to {path} ({reason}); "
                         f"offline, copy the model file to {path}") from None


def read_model(path: str) -> bytes:
    """The bytes of a model file: a local path, or a URL read through Beam's FileSystems."""
    if is_url(path):
        try:
            from apache_beam.io.filesystems import FileSystems
        except ImportError:
            raise ModelError(f"reading the SentencePiece model {path} needs apache-beam: "
                             "pip install 'beambleu[beam]' (and the store's extra, aws or gcp)") from None
        # Beam's clients log each retry (with its traceback) and their credential search as
        # warnings; the outcome is this function's to say, in one line
        import logging

        beam_log = logging.getLogger("apache_beam")
        level = beam_log.level
        beam_log.setLevel(logging.ERROR)
        try:
            with FileSystems.open(path, compression_type="uncompressed") as fh:
                return fh.read()
        except Exception as exc:  # the stores raise their own types (BeamIOError, botocore, ...)
            reason = " ".join(str(exc).split())[:300]
            raise ModelError(f"cannot read the SentencePiece model {path}: {reason}") from None
        finally:
            beam_log.setLevel(level)
    path = local_path(path)
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise ModelError(f"cannot read the SentencePiece model {path}: {exc.strerror or exc}") from None


def resolve_model(name: str, model: Optional[str]) -> str:
    """The model path tokenizer ``name`` uses: ``model`` if given, else sacrebleu's cache path,
    downloading the model there from sacrebleu's URL when it is missing (as sacrebleu does)."""
    if model is not None:
        return model
    path = default_model_path(name)
    if not os.path.exists(path):
        download(SPM_MODELS[name][0], path)
    return path


def require_sentencepiece(name: str):
    """The sentencepiece module, or RuntimeError telling how to install it (checked before a
    model is looked for or downloaded, as sacrebleu does)."""
    try:
        import sentencepiece
    except ImportError as exc:
        raise RuntimeError(f"the {name} tokenizer needs the sentencepiece package: "
                           f"pip install 'beambleu[spm]' ({exc})") from None
    return sentencepiece


class Encoded(namedtuple("Encoded", ["values", "offsets", "index", "valid"])):
    """An array's token ids (:meth:`TokenizerSPM.encode_ids`), numpy arrays: its distinct lines'
    ids (``values``, int32) and offsets into them (``offsets``, int64, one more than lines), each
    value's line in them (``index``, int32; 0 for a null value, which the kernel never looks up),
    and each value's validity (``valid``, uint8, or None when none is null), as ``_bleu.stats_ids``
    takes them."""

    __slots__ = ()


class TokenizerSPM(Tokenizer):
    """One SentencePiece model, loaded once (see :func:`bleu_core.tokenizers.get_tokenizer`)."""

    kernel_id = None  # the kernel counts the ids of encode_ids (bleu_core.metrics.bleu._bleu.stats_ids)

    def __init__(self, name: str, model: Optional[str] = None):
        if name not in SPM_MODELS:
            raise ValueError(f"{name!r} is not a SentencePiece tokenizer ({', '.join(SPM_MODELS)})")
        import hashlib

        import numpy as np

        sentencepiece = require_sentencepiece(name)
        self.name = name
        self.model_path = resolve_model(name, model)
        data = read_model(self.model_path)
        self.model_sha256 = hashlib.sha256(data).hexdigest()
        self.sp = sentencepiece.SentencePieceProcessor()
        try:
            self.sp.LoadFromSerializedProto(data)
        except Exception as exc:
            reason = " ".join(str(exc).split())[:200]
            raise ModelError(f"{self.model_path} is not a SentencePiece model ({reason})") from None
        self._recent = []
        # pieces that are tokens as they are: not the unknown piece, not empty, no whitespace
        plain = [bool(p) and not any(c.isspace() for c in p)
                 for p in (self.sp.IdToPiece(i) for i in range(self.sp.GetPieceSize()))]
        self._plain = np.array(plain, dtype=bool)
        if 0 <= self.sp.unk_id() < len(plain):
            self._plain[self.sp.unk_id()] = False

    def signature(self) -> str:
        return SPM_MODELS[self.name][1]

    def __call__(self, line: str) -> str:
        return " ".join(self.sp.EncodeAsPieces(line))

    def encode_ids(self, arrays: Sequence[pa.Array], lowercase: bool) -> List[Encoded]:
        """Each string array (nulls kept) as the token ids of its distinct lines and an index: the
        tokens sacrebleu's BLEU counts, ``(line.lower() if lowercase else line).rstrip()`` through
        this tokenizer, split on whitespace. Within one call, equal ids are equal tokens across
        all the arrays (a candidate and its references are numbered alike).

        A token is a piece of the model, numbered by its id, except in the few lines with an
        unknown piece (whose text is the unknown surface, not the ``<unk>`` piece) or a piece that
        ``str.split()`` would cut or drop: those pieces are split as text and their tokens numbered
        by the piece they equal, or past the vocabulary when they equal none."""
        import numpy as np
        import pyarrow.compute as pc  # a 35 ms import that only SentencePiece's batches need

        beyond: Dict[str, int] = {}  # tokens that are no piece -> ids past the vocabulary, this call only
        out = []
        for arr in arrays:
            encoded = pc.dictionary_encode(arr)
            distinct = encoded.dictionary
            entry = self._recent_lookup(distinct, lowercase)
            if entry is None:
                entry = self._encode_distinct(distinct, lowercase)
                self._recent = [(distinct, lowercase, entry), *self._recent[:self.RECENT - 1]]
            values, offsets, odd_rows = entry
            if odd_rows:
                values, offsets = self._replace_rows(values, offsets, odd_rows, beyond)
            indices = encoded.indices
            valid = np.asarray(indices.is_valid()).view(np.uint8) if indices.null_count else None
            index = pc.fill_null(indices, 0) if indices.null_count else indices
            out.append(Encoded(values, offsets, index.to_numpy(zero_copy_only=False).astype(np.int32, copy=False),
                               valid))
        return out

    #: distinct-line arrays remembered with their ids: ``score`` with N systems (and a batch with
    #: several candidate columns) hands every system the same references
    RECENT = 4

    def _recent_lookup(self, distinct: pa.Array, lowercase: bool):
        recent = self._recent
        for k, (seen, lc, entry) in enumerate(recent):
            if lc == lowercase and len(seen) == len(distinct) and seen.equals(distinct):
                if k:  # least recently used goes first
                    self._recent = [recent[k], *recent[:k], *recent[k + 1:]]
                return entry
        return None

    def _encode_distinct(self, distinct: pa.Array, lowercase: bool):
        """(piece ids of the lines, int64 offsets into them, {line index: [(position, tokens)]} for
        the lines with a piece that is not a token as it is, e.g. an unknown piece, whose text is
        its surface: the tokens of that piece's text, each the id of the piece it equals or the
        text itself when it equals none)."""
        import gc

        import numpy as np

        from . import _spm_ids  # built with the batch path's kernel (bleu_core.metrics.bleu.kernel checks that one)

        lines = distinct.to_pylist()
        lines = [s.lower().rstrip() for s in lines] if lowercase else [s.rstrip() for s in lines]
        # the ids come back as nested Python lists: millions of small objects the cyclic garbage
        # collector would walk again and again while they are made; none of them is in a cycle
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            values, offsets = _spm_ids.flatten_ids(self.sp.encode(lines, out_type=int, num_threads=1))
        finally:
            if was_enabled:
                gc.enable()
        values, offsets = np.frombuffer(values, dtype=np.int32), np.frombuffer(offsets, dtype=np.int64)
        odd_rows = {}
        odd = np.flatnonzero(~self._plain[values])
        if len(odd):
            rows, first = np.unique(np.searchsorted(offsets, odd, side="right") - 1, return_index=True)
            last = [*first[1:].tolist(), len(odd)]
            # " ".join(pieces).split() is each piece's own split, in turn: only the odd pieces need text
            texts = self.sp.encode([lines[r] for r in rows.tolist()], out_type=str, num_threads=1)
            for r, pieces, lo, hi in zip(rows.tolist(), texts, first.tolist(), last):
                positions = (odd[lo:hi] - offsets[r]).tolist()
                odd_rows[r] = [(q, [self._piece_id(t) for t in pieces[q].split()]) for q in positions]
        return values, offsets, odd_rows

    def _piece_id(self, token: str):
        """The id of the plain piece ``token`` is, or ``token`` itself when it is none."""
        i = self.sp.PieceToId(token)
        if 0 <= i < len(self._plain) and self._plain[i] and self.sp.IdToPiece(i) == token:
            return i
        return token

    def _replace_rows(self, values: np.ndarray, offsets: np.ndarray, odd_rows, beyond: Dict[str, int]):
        """``values`` and ``offsets`` with the odd pieces of some rows replaced by their tokens' ids;
        a token that is no piece gets the next id past the vocabulary (in ``beyond``)."""
        import numpy as np

        base = len(self._plain)
        parts, lengths, kept = [], np.diff(offsets), int(offsets[0])
        for row in sorted(odd_rows):
            start, end = int(offsets[row]), int(offsets[row + 1])
            ids, prev = [], 0
            for q, tokens in odd_rows[row]:
                ids += values[start + prev:start + q].tolist()
                ids += [t if type(t) is int else beyond.setdefault(t, base + len(beyond)) for t in tokens]
                prev = q + 1
            ids += values[start + prev:end].tolist()
            parts += [values[kept:start], np.asarray(ids, dtype=np.int32)]
            lengths[row] = len(ids)
            kept = end
        parts.append(values[kept:offsets[-1]])
        new_offsets = np.zeros(len(offsets), dtype=np.int64)
        np.cumsum(lengths, out=new_offsets[1:])
        return np.concatenate(parts).astype(np.int32, copy=False), new_offsets

    def __repr__(self) -> str:
        return f"<tokenizer {self.name} {self.model_path} sha256:{self.model_sha256[:12]}>"

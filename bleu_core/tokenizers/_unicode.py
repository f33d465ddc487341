"""The Unicode flag table the batch kernel reads: one byte per code point.

Bits (see ``_bleu.c``): 1 = ``\\p{N}``, 2 = ``\\p{P}``, 4 = ``\\p{S}`` as the installed
``regex`` module classifies them (sacrebleu's ``intl`` uses that module), 8 = Chinese character
as sacrebleu's ``zh`` range comparisons decide. Computed from those sources, never from a copy
of their data, so the kernel agrees with them whatever their versions; the whole table (~0.3
CPU-s to compute) is kept in the cache folder (:func:`cache_dir`) under a key naming the
``regex`` installation's files (name, size, modification time) and this module's definitions,
and read from there by later processes, which then import neither ``regex`` nor numpy.
"""

from __future__ import annotations

import os
from functools import lru_cache

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Iterable, List, Optional, Tuple

__all__ = ["F_N", "F_P", "F_S", "F_ZH", "UCODE_RANGES", "UNI_SIZE", "chinese_ranges", "flag_table", "flag_table_for",
           "is_chinese_char"]

UNI_SIZE = 0x110000
F_N, F_P, F_S, F_ZH = 1, 2, 4, 8
#: each flag bit and the regex of the characters outside its class (what is left after removing them is the class)
_CLASSES = ((F_N, r"\P{N}"), (F_P, r"\P{P}"), (F_S, r"\P{S}"))


def _all_chars():
    import numpy as np

    cps = np.arange(UNI_SIZE, dtype="<u4")
    cps = cps[(cps < 0xD800) | (cps > 0xDFFF)]  # surrogates cannot occur in UTF-8 text
    return cps.tobytes().decode("utf-32-le")


def _members(pattern, text):
    import numpy as np

    kept = pattern.sub("", text)
    return np.frombuffer(kept.encode("utf-32-le"), dtype="<u4")


# zh's Chinese characters: sacrebleu 2.6.0's TokenizerZh range table, kept verbatim, including the
# bounds that are two-character strings ('\u20000' is U+2000 followed by '0'; sacrebleu issue #298)
UCODE_RANGES = [
    ("\u3400", "\u4db5"),  # CJK Unified Ideographs Extension A, release 3.0
    ("\u4e00", "\u9fa5"),  # CJK Unified Ideographs, release 1.1
    ("\u9fa6", "\u9fbb"),  # CJK Unified Ideographs, release 4.1
    ("\uf900", "\ufa2d"),  # CJK Compatibility Ideographs, release 1.1
    ("\ufa30", "\ufa6a"),  # CJK Compatibility Ideographs, release 3.2
    ("\ufa70", "\ufad9"),  # CJK Compatibility Ideographs, release 4.1
    ("\u20000", "\u2a6d6"),  # two-character strings in sacrebleu, kept as they are
    ("\u2f800", "\u2fa1d"),  # two-character strings in sacrebleu, kept as they are
    ("\uff00", "\uffef"),  # Full width ASCII, punctuation, half width kana, Korean alphabet
    ("\u2e80", "\u2eff"),  # CJK Radicals Supplement
    ("\u3000", "\u303f"),  # CJK punctuation mark
    ("\u31c0", "\u31ef"),  # CJK stroke
    ("\u2f00", "\u2fdf"),  # Kangxi Radicals
    ("\u2ff0", "\u2fff"),  # Chinese character structure
    ("\u3100", "\u312f"),  # Phonetic symbols
    ("\u31a0", "\u31bf"),  # Phonetic symbols (Taiwanese and Hakka expansion)
    ("\ufe10", "\ufe1f"),
    ("\ufe30", "\ufe4f"),
    ("\u2600", "\u26ff"),
    ("\u2700", "\u27bf"),
    ("\u3200", "\u32ff"),
    ("\u3300", "\u33ff"),
]


def is_chinese_char(uchar: str) -> bool:
    """sacrebleu's ``TokenizerZh._is_chinese_char``, verbatim."""
    for start, end in UCODE_RANGES:
        if start <= uchar <= end:
            return True
    return False


def _first_cp(pred) -> int:
    """Smallest code point c (0..0x110000) with pred(chr(c)) true, for a monotone pred."""
    lo, hi = 0, 0x110000
    while lo < hi:
        mid = (lo + hi) // 2
        if pred(chr(mid)):
            hi = mid
        else:
            lo = mid + 1
    return lo


@lru_cache(maxsize=None)
def chinese_ranges() -> List[Tuple[int, int]]:
    """Inclusive code point ranges accepted by :func:`is_chinese_char`.

    For one character ``c``, ``start <= c`` and ``c <= end`` are monotone in ``ord(c)``, so
    each range is found by bisection on the comparison itself: exact, whatever the strings.
    """
    out = []
    for start, end in UCODE_RANGES:
        lo = _first_cp(lambda c, s=start: s <= c)
        hi = _first_cp(lambda c, e=end: not (c <= e)) - 1
        if lo <= hi:
            out.append((lo, hi))
    return out


def cache_dir() -> Optional[str]:
    """beambleu's cache folder: ``$BEAMBLEU_CACHE_DIR``, else ``$XDG_CACHE_HOME/beambleu``, else
    ``~/.cache/beambleu``; None when ``BEAMBLEU_CACHE_DIR`` is set and empty (no cache)."""
    where = os.environ.get("BEAMBLEU_CACHE_DIR")
    if where is not None:
        return where or None
    xdg = os.environ.get("XDG_CACHE_HOME")
    return os.path.join(xdg or os.path.join(os.path.expanduser("~"), ".cache"), "beambleu")


#: the cached table's file format; a change of what the table means changes it
_FORMAT = b"beambleu unicode flags 1"


def _regex_files() -> Optional[str]:
    """The ``regex`` module's files as ``name:size:mtime_ns`` (the module this process would
    import, found as ``import`` finds it, not imported), or None when it cannot be told."""
    import sys

    module = sys.modules.get("regex")
    origin = getattr(module, "__file__", None)
    if origin is None:
        from importlib.machinery import PathFinder

        spec = PathFinder.find_spec("regex")
        origin = spec.origin if spec is not None else None
    if not origin or not origin.endswith("__init__.py"):
        return None
    folder = os.path.dirname(os.path.abspath(origin))
    try:
        with os.scandir(folder) as entries:
            files = sorted((e.name, e.stat()) for e in entries if e.is_file() and not e.name.startswith("."))
    except OSError:
        return None
    return f"{folder}|" + "|".join(f"{name}:{st.st_size}:{st.st_mtime_ns}" for name, st in files)


def _cache_key() -> Optional[bytes]:
    """What the whole table is a function of: the ``regex`` installation, the classes and zh's ranges."""
    files = _regex_files()
    if files is None:
        return None
    return b"\n".join([_FORMAT, files.encode("utf-8", "surrogateescape"),
                       repr((_CLASSES, UCODE_RANGES)).encode("utf-8", "backslashreplace")])


def _cache_path(key: bytes) -> Optional[str]:
    import zlib

    folder = cache_dir()
    if folder is None:
        return None
    return os.path.join(folder, "unicode", f"flags-{zlib.crc32(key):08x}.bin")


def _read_cached(path: str, key: bytes) -> Optional[bytes]:
    """The table kept at ``path`` if it was made under ``key`` and is whole (its CRC-32 checked)."""
    import zlib

    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    head = len(key) + 1
    table = data[head + 4:]
    if data[:head] != key + b"\n" or len(table) != UNI_SIZE or int.from_bytes(data[head:head + 4], "big") != \
            zlib.crc32(table):
        return None
    return table


def _write_cached(path: str, key: bytes, table: bytes) -> None:
    """Keep the table at ``path`` (written beside it, then renamed: readers see it whole or not
    at all). A cache that cannot be written only costs the next process the computation."""
    import threading
    import zlib

    tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "wb") as fh:
            fh.write(key + b"\n" + zlib.crc32(table).to_bytes(4, "big") + table)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return
    _remove_dead_writers_files(os.path.dirname(path))


def _remove_dead_writers_files(folder: str) -> None:
    """Remove the temporary files (``flags-*.bin.PID.THREAD.tmp``) of writers that are gone: a
    process killed between writing and renaming leaves one behind (about 1 MB). A file whose
    process still runs (or whose number a later process took) is left; so is anything not named so."""
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        parts = name.split(".")
        if len(parts) != 5 or not name.startswith("flags-") or parts[1] != "bin" or parts[4] != "tmp" \
                or not parts[2].isdigit() or not parts[3].isdigit():
            continue
        try:
            os.kill(int(parts[2]), 0)
        except ProcessLookupError:
            try:
                os.unlink(os.path.join(folder, name))
            except OSError:
                pass
        except (OSError, OverflowError, ValueError):
            pass  # alive under another user, or not a process number at all: left


def _cached_location() -> Optional[Tuple[str, bytes]]:
    key = _cache_key()
    path = _cache_path(key) if key is not None else None
    return (path, key) if path is not None else None


def _can_keep(where) -> bool:
    """The whole table is kept at ``where`` already, or its folder can be made and written."""
    if where is None:
        return False
    if os.path.exists(where[0]):
        return True
    folder = os.path.dirname(where[0])
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return False
    return os.access(folder, os.W_OK)


@lru_cache(maxsize=None)
def flag_table() -> bytes:
    """The whole table: kept from an earlier process (:func:`cache_dir`), else computed and kept."""
    where = _cached_location()
    table = _read_cached(*where) if where is not None else None
    if table is None:
        table = _compute_flag_table()
        if where is not None:
            _write_cached(*where, table)
    return table


def _compute_flag_table() -> bytes:
    import numpy as np
    import regex

    text = _all_chars()
    flags = np.zeros(UNI_SIZE, dtype=np.uint8)
    for bit, pattern in _CLASSES:
        # remove everything outside the class: what is left is the class
        flags[_members(regex.compile(pattern), text)] |= bit
    for lo, hi in chinese_ranges():
        flags[lo : hi + 1] |= F_ZH
    return flags.tobytes()


#: the most characters of list input for which :func:`flag_table_for` builds a table of their own
#: (above it, the whole table is built once per process: ~0.3 CPU-s, less than scanning that text twice)
SMALL_TEXT = 4_000_000
_ASCII = "".join(map(chr, range(1, 0x80)))


def flag_table_for(strings: Iterable[str], lowercase: bool) -> bytes:
    """A flag table of ``UNI_SIZE`` bytes with :func:`flag_table`'s flags for every character of
    ``strings`` (their lowercase forms too with ``lowercase``; and all of ASCII), zero for the
    others: the kernel reads the flags of the characters it scans and of no other (``_bleu.c``'s
    intl/zh scans, and its ASCII table, built from all of ASCII). Building it for a few thousand
    lines costs about a millisecond, where the whole table costs ~0.3 CPU-s (the ``regex`` module
    run over every code point): what ``score -tok intl`` on a small file paid. The whole table when
    it is built already or can be kept in the cache folder (:func:`flag_table`: computed once,
    read by every later process), when the text is large (:data:`SMALL_TEXT`) or holds a value
    that is not a str (the kernel's caller judges it)."""
    if flag_table.cache_info().currsize or _can_keep(_cached_location()):
        return flag_table()
    text = []
    size = 0
    for t in strings:
        if type(t) is not str and not isinstance(t, str):
            return flag_table()
        size += len(t)
        if size > SMALL_TEXT:
            return flag_table()
        text.append(t)
    joined = "".join(text)
    chars = set(joined) | set(_ASCII)
    if lowercase:
        # each character's own lowercase and the whole text's: str.lower is contextual for one
        # character (Greek capital sigma: final or not), so both of its forms are added
        chars |= set(joined.lower()) | set("".join(c.lower() for c in chars))
        if "\u03a3" in chars:
            chars |= {"\u03c2", "\u03c3"}
    return _table_of(chars)


def _table_of(chars: set) -> bytes:
    import regex

    distinct = "".join(sorted(c for c in chars if not 0xD800 <= ord(c) <= 0xDFFF))
    flags = bytearray(UNI_SIZE)
    for bit, pattern in _CLASSES:
        for c in regex.compile(pattern).sub("", distinct):
            flags[ord(c)] |= bit
    for lo, hi in chinese_ranges():
        for c in distinct:
            if lo <= ord(c) <= hi:
                flags[ord(c)] |= F_ZH
    return bytes(flags)

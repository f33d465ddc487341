"""A sacrebleu 2.6.0 test-set cache (``$SACREBLEU``) filled from the shared corpora, so that
sacrebleu's registry (and beambleu's test-set options, which use it) finds everything it needs and
never downloads.

What sacrebleu needs, from ``sacrebleu/dataset/base.py``, ``wmt_xml.py`` and ``fake_sgml.py``:

* ``$SACREBLEU/NAME/raw/NAME.BASENAME_OF_URL`` for each archive in the registry entry's ``data``:
  ``download_file`` fetches it only when it is absent or empty, and checks the MD5 only after a
  download, so a non-empty placeholder stands in for it;
* the raw files the archive would have unpacked, at the registry's relative paths under ``raw/``:
  a WMT XML file for WMT21-24 (``WMTXMLDataset``: parsed for the field names on every use, and
  for ``--origlang``/``--subset``/``--detail``), or ``<seg>``-per-line SGML files for WMT17
  (``FakeSGMLDataset``: source and reference; the ``<doc>`` lines carry docid, genre, origlang).

sacrebleu itself writes the processed text files (``NAME.PAIR.FIELD``) on first use.

The documents are synthetic: the corpora have no document boundaries, so the lines are cut into
documents of a few sizes in turn, each with an ``origlang`` (mostly the source language, every
third the target language) and, optionally, a ``domain`` (WMT23+ XML has one; the option lets
``--subset`` be tested on WMT22 too). The WMT17 en-de corpus has no source side: its source file
holds a placeholder per line.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

#: document sizes used in turn, and the domains given to documents in turn
DOC_SIZES = (7, 13, 4, 21, 9)
DOMAINS = ("news", "social", "speech", "ecommerce")
#: the placeholder archive (sacrebleu does not check the MD5 of an archive it did not download)
PLACEHOLDER = b"placeholder for the archive: its contents are already unpacked beside it\n"


def read_lines(path: Path) -> List[str]:
    """A corpus file's lines, without their newlines (the files end with one)."""
    with open(path, encoding="utf-8", newline="\n") as fh:
        return [line[:-1] if line.endswith("\n") else line for line in fh]


def documents(n_lines: int) -> List[Tuple[int, int]]:
    """(first line, end line) of each synthetic document."""
    out, start, i = [], 0, 0
    while start < n_lines:
        end = min(n_lines, start + DOC_SIZES[i % len(DOC_SIZES)])
        out.append((start, end))
        start, i = end, i + 1
    return out


def doc_origlang(i: int, pair: str) -> str:
    src, trg = pair.split("-")
    return trg if i % 3 == 2 else src


def _placeholders(root: Path, dataset) -> None:
    raw = root / dataset.name / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    for url in dataset.data:
        tarball = raw / dataset._get_tarball_filename(url)
        if not tarball.exists():
            tarball.write_bytes(PLACEHOLDER)


def _ref_files(folder: Path) -> Dict[str, Path]:
    """Reference letter (A, B, stud, ...) -> file, sorted by letter."""
    return {p.name[len("ref."):-len(".txt")]: p for p in sorted(folder.glob("ref.*.txt"))}


def _sys_files(folder: Path) -> Dict[str, Path]:
    return {p.name[len("sys."):-len(".txt")]: p for p in sorted(folder.glob("sys.*.txt"))}


def write_wmt_xml(path: Path, pair: str, src: Sequence[str], refs: Dict[str, Sequence[str]],
                  systems: Dict[str, Sequence[str]], with_domain: bool, set_id: str) -> None:
    """A WMT21+ test-set XML file (as in the wmt2x-news-systems repositories): one ``<doc>`` per
    synthetic document with ``id``, ``origlang`` (and ``domain``), holding ``<src>``, one
    ``<ref translator=...>`` per reference and one ``<hyp system=...>`` per system."""
    import lxml.etree as ET

    src_lang, trg_lang = pair.split("-")
    dataset = ET.Element("dataset", id=set_id)
    collection = ET.SubElement(dataset, "collection", id="general")

    def block(parent, tag, lines, first, end, **attrib):
        el = ET.SubElement(parent, tag, **attrib)
        p = ET.SubElement(el, "p")
        for k in range(first, end):
            seg = ET.SubElement(p, "seg", id=str(k - first + 1))
            seg.text = lines[k]

    for i, (first, end) in enumerate(documents(len(src))):
        attrib = {"id": f"{set_id}.{pair}.doc{i:04d}", "origlang": doc_origlang(i, pair)}
        if with_domain:
            attrib["domain"] = DOMAINS[i % len(DOMAINS)]
        doc = ET.SubElement(collection, "doc", **attrib)
        block(doc, "src", src, first, end, lang=src_lang)
        for translator, lines in refs.items():
            block(doc, "ref", lines, first, end, lang=trg_lang, translator=translator)
        for name, lines in systems.items():
            block(doc, "hyp", lines, first, end, system=name, language=trg_lang)
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(dataset).write(str(path), encoding="utf-8", xml_declaration=True, pretty_print=True)


def write_sgm(path: Path, pair: str, lines: Sequence[str], set_id: str, kind: str) -> None:
    """A pre-2021 WMT ``.sgm`` file as sacrebleu's ``FakeSGMLDataset`` reads it: a ``<doc ...>``
    line per document (docid, genre, origlang) and a ``<seg id=N>`` line per segment, the text
    as is (that reader does not unescape)."""
    tag = "srcset" if kind == "src" else "refset"
    out = [f'<{tag} setid="{set_id}" srclang="any">']
    for i, (first, end) in enumerate(documents(len(lines))):
        out.append(f'<doc sysid="{kind}" docid="{set_id}.{pair}.doc{i:04d}" genre="news" '
                   f'origlang="{doc_origlang(i, pair)}">')
        out.append("<p>")
        out.extend(f'<seg id="{k - first + 1}">{lines[k]}</seg>' for k in range(first, end))
        out.append("</p>")
        out.append("</doc>")
    out.append(f"</{tag}>")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in out), encoding="utf-8")


def add_test_set(root: Path, corpora: Path, name: str, pair: str, with_domain: bool = True,
                 systems: Optional[Iterable[str]] = None) -> None:
    """Put test set ``name``/``pair`` into the cache at ``root`` from ``corpora/NAME/PAIR``
    (``src.txt``, ``ref.X.txt``, ``sys.NAME.txt``); ``systems``: the system outputs to embed in
    a WMT XML file (default: all)."""
    from sacrebleu.dataset import DATASETS
    from sacrebleu.dataset.fake_sgml import FakeSGMLDataset
    from sacrebleu.dataset.wmt_xml import WMTXMLDataset

    dataset = DATASETS[name]
    folder = corpora / name.split("/")[0] / pair
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such corpus folder")
    refs = {letter: read_lines(p) for letter, p in _ref_files(folder).items()}
    raw = root / dataset.name / "raw"
    entry = dataset.langpairs[pair]
    if isinstance(dataset, WMTXMLDataset):
        rel = entry["path"] if isinstance(entry, dict) else entry[0]
        # the registry names references by translator: wmt21/22 "A", wmt23/24 "refA"
        prefix = "ref" if any(r.startswith("ref") for r in dataset.kwargs.get("refs", [])) else ""
        chosen = _sys_files(folder)
        if systems is not None:
            chosen = {k: chosen[k] for k in systems}
        write_wmt_xml(raw / rel, pair, read_lines(folder / "src.txt"),
                      {prefix + letter: lines for letter, lines in refs.items()},
                      {k: read_lines(p) for k, p in chosen.items()}, with_domain, name)
    elif type(dataset) is FakeSGMLDataset and len(entry) == 2:
        ref = next(iter(refs.values()))
        src_path = folder / "src.txt"
        src = read_lines(src_path) if src_path.exists() else [
            f"(source of line {k + 1}: not in the shared corpora)" for k in range(len(ref))]
        write_sgm(raw / entry[0], pair, src, name, "src")
        write_sgm(raw / entry[1], pair, ref, name, "ref")
    else:
        raise ValueError(f"{name}: cannot build a {type(dataset).__name__} entry")
    _placeholders(root, dataset)


#: the test sets the tests use
DEFAULT_SETS = (("wmt22", "de-en"), ("wmt22", "en-de"), ("wmt17", "en-de"))


def build_cache(root: Path, corpora: Path, sets: Iterable[Tuple[str, str]] = DEFAULT_SETS,
                with_domain: bool = True) -> Path:
    """Fill ``root`` (to be used as ``$SACREBLEU``) with the raw files of ``sets`` ((test set,
    language pair) pairs) made from ``corpora``; returns ``root``. sacrebleu must be importable
    here, but its own cache location is not used: run it (and beambleu) in a subprocess with
    ``SACREBLEU=root`` (:func:`env_for`), as it reads that variable when imported."""
    root.mkdir(parents=True, exist_ok=True)
    for name, pair in sets:
        add_test_set(root, corpora, name, pair, with_domain=with_domain)
    return root


#: run as ``python -c NO_NETWORK + code``: any download attempt fails at once instead of reaching
#: the network (sacrebleu calls ``urllib.request.urlopen`` at download time)
NO_NETWORK = (
    "import urllib.request, urllib.error\n"
    "def _offline(url, *a, **k):\n"
    "    raise urllib.error.URLError('network disabled by the test')\n"
    "urllib.request.urlopen = _offline\n"
)


def env_for(root: Path) -> Dict[str, str]:
    """The environment for a subprocess that uses the cache at ``root`` (colours off)."""
    env = {k: v for k, v in os.environ.items() if k not in ("SACREBLEU_FORMAT",)}
    env.update(SACREBLEU=str(root), NO_COLOR="1", PYTHONIOENCODING="utf-8")
    return env


def sacrebleu_argv_code(argv: Sequence[str]) -> str:
    """Python code that runs ``sacrebleu ARGV`` offline (for ``python -c``)."""
    return NO_NETWORK + (f"import sys, runpy\nsys.argv = ['sacrebleu', *{list(argv)!r}]\n"
                         "runpy.run_module('sacrebleu', run_name='__main__', alter_sys=True)\n")

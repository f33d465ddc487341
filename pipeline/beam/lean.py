"""Importing Apache Beam for the ``beambleu run`` command's own process, without the client
libraries that its job does not use.

``import apache_beam`` imports every optional library it finds: pandas (to register pandas batch
converters; beambleu's batches are Arrow's), MongoDB's client (for its MongoDB connector) and,
when the ``gcp`` and ``aws`` extras are installed, Google Cloud's and AWS's clients (``gs://`` and
``s3://`` file systems, BigQuery, Pub/Sub, Dataflow). They are most of the import's CPU time
(1.8 CPU-s with them, 0.7 without, on a machine of the project's), paid by every run, local files
or not. :func:`import_beam` imports Beam with those libraries made unimportable for the duration of
that one import, as if they were not installed (a set-up Beam supports: its imports of them are
optional): pandas and MongoDB's client always; the Google libraries unless an argument names a
``gs://`` URL or Dataflow; the AWS ones unless an argument names an ``s3://`` URL or is an
``--s3_*`` option. Then ``sys.modules`` is restored to what it held, so that a later import of any
of them (an engine's client, pandas where pyarrow converts to numpy) works as usual.

One library Beam needs is put off instead: beartype, whose ``is_subhint`` Beam's type hints import
and call only when a pipeline checks one type hint against another by it, which ``run``'s pipeline
never does (its import: 0.12-0.17 CPU-s). During Beam's import ``beartype.door`` and
``beartype.roar`` are stand-ins (:data:`LAZY_BEARTYPE`): ``is_subhint`` imports beartype and
calls it on its first call, and raises :class:`DoorException` (the name Beam's module catches) for
beartype's ``BeartypeDoorException``. Any other name a Beam imports from them is beartype's own,
imported then: the stand-ins never make Beam's import fail. httplib2 is put off the same way
(:data:`LAZY_HTTPLIB2`) when the Google clients are kept out: Beam's ``http_client`` imports it (and
it pyparsing: 0.09 CPU-s) for the stager's downloads of remote packages, and uses it only when it
makes an HTTP client; its stand-in holds nothing, so each name asked of it is httplib2's own,
imported then. (With the Google clients imported, they import httplib2 themselves.)

One function of Beam's is remembered per DoFn: ``userstate.get_dofn_specs`` (a DoFn's state and
timer specs), which inspects the signature of each of the DoFn's thirty-odd methods and which Beam
calls seven or eight times for each DoFn of a pipeline while building and running it (0.05-0.15
CPU-s of a small run): :func:`import_beam` makes it answer again for the same DoFn object with
fresh copies of the sets it gave the first time (:func:`remember_dofn_specs`).

Only the ``beambleu`` command's own process calls it (``beambleu.cli.main`` run as the command),
before anything else imports Beam: never a program that uses beambleu as a library or a component
of its pipeline (whose Beam must be the one it expects), and never the engines' worker processes,
which import Beam themselves.
"""

from __future__ import annotations

import dis
import os
import sys
import types
from typing import Dict, Sequence, Tuple

__all__ = ["AWS_MODULES", "ArrowWithoutPandas", "DoorException", "GCP_MODULES", "LAZY_BEARTYPE", "LAZY_HTTPLIB2",
           "MONGO_MODULES", "PANDAS_MODULES", "blocked_modules", "import_beam", "remember_dofn_specs"]

#: Beam's ``dataframe`` extra: imported by ``apache_beam.typehints`` only to register converters
PANDAS_MODULES = ("pandas",)

#: what Beam's ``gcp`` extra brings and ``import apache_beam`` imports when it can (each optional
#: there): the clients of GCS, BigQuery, Pub/Sub, Dataflow, and their authentication; and Beam's
#: BigQuery connector, which ``apache_beam.io`` imports in a ``try`` with Pub/Sub's and GCS's (it is
#: loaded, without its client, even when the extra is not installed)
GCP_MODULES = ("google.cloud", "google.api_core", "google.auth", "google_auth_httplib2", "apitools", "oauth2client",
               "apache_beam.io.gcp.bigquery")

#: what Beam's ``aws`` extra brings (the ``s3://`` file system's client)
AWS_MODULES = ("boto3", "botocore")

#: MongoDB's client, for Beam's MongoDB connector (optional there: it logs a warning and goes on),
#: which ``beambleu run`` never uses
MONGO_MODULES = ("bson", "pymongo")

_IMPORT_NAME = dis.opmap["IMPORT_NAME"]


class DoorException(Exception):
    """What the stand-in ``beartype.roar.BeartypeDoorException`` is in Beam's type hints: the stand-in
    ``is_subhint`` raises it for beartype's own (its ``__cause__``)."""


def _is_subhint(subhint, superhint) -> bool:
    """beartype's ``is_subhint``, imported on the first call."""
    from beartype.door import is_subhint
    from beartype.roar import BeartypeDoorException

    try:
        return is_subhint(subhint, superhint)
    except BeartypeDoorException as exc:
        raise DoorException(str(exc)) from exc


#: what each stand-in holds; any other name is the real module's, imported then (see _real_attribute)
_STAND_IN_NAMES = {"beartype.door": {"is_subhint": _is_subhint},
                   "beartype.roar": {"BeartypeDoorException": DoorException},
                   "httplib2": {}}

#: the beartype modules Beam's type hints import from, stand-ins during :func:`import_beam`
LAZY_BEARTYPE = ("beartype.door", "beartype.roar")

#: the module Beam's ``http_client`` imports, a stand-in during :func:`import_beam` when the Google
#: clients are kept out (:data:`GCP_MODULES`)
LAZY_HTTPLIB2 = ("httplib2",)


def _stand_ins(modules: Sequence[str]) -> Dict[str, types.ModuleType]:
    """A stand-in for each of ``modules`` (names of :data:`_STAND_IN_NAMES`), which share the one
    dict of them that :func:`_real_attribute` takes out of ``sys.modules``."""
    stand_ins: Dict[str, types.ModuleType] = {}
    for name in modules:
        module = types.ModuleType(name, f"Stands for {name} during beambleu run's import of Beam.")
        module.__dict__.update(_STAND_IN_NAMES[name])
        module.__getattr__ = _real_attribute(name, stand_ins)
        stand_ins[name] = module
    return stand_ins


def _real_attribute(name: str, stand_ins: Dict[str, types.ModuleType]):
    """A stand-in's ``__getattr__``: a name it does not hold is the real module's, imported at once
    (the stand-ins leave ``sys.modules`` first, so that the real module imports its own). A Beam that
    imports more of them than the stand-ins hold gets the real modules as without them: a failed
    import of Beam could not be undone (its compiled modules keep what they first imported)."""
    def __getattr__(attr: str):
        if attr.startswith("__"):
            raise AttributeError(attr)
        for m, stand_in in stand_ins.items():
            if sys.modules.get(m) is stand_in:
                del sys.modules[m]
        import importlib

        return getattr(importlib.import_module(name), attr)

    return __getattr__


def blocked_modules(argv: Sequence[str]) -> Tuple[str, ...]:
    """The modules :func:`import_beam` keeps out of Beam's import for the command line ``argv``
    (``run``'s arguments): pandas and MongoDB's client; the Google clients unless an argument names ``gs://`` or
    Dataflow (``--runner DataflowRunner``); the AWS clients unless one names ``s3://`` or is an
    ``--s3_*`` option (Beam's S3 options: an S3-compatible store)."""
    text = [a.lower() for a in argv]
    blocked = [*PANDAS_MODULES, *MONGO_MODULES]
    if not any("gs://" in a or "dataflow" in a for a in text):
        blocked += GCP_MODULES
    if not any("s3://" in a or a.startswith(("--s3_", "--s3-")) for a in text):
        blocked += AWS_MODULES
    return tuple(blocked)


def import_beam(argv: Sequence[str]):
    """``apache_beam``, imported with :func:`blocked_modules` unimportable during the import (a
    ``None`` entry of ``sys.modules`` makes ``import`` raise ``ModuleNotFoundError``, which Beam's
    optional imports catch). Afterwards every entry of ``sys.modules`` named there holds what it
    held before (a module that was imported stays imported). A Beam that cannot be imported without
    one of them is imported again, whole. Beartype's two modules are stand-ins during the import
    (:data:`LAZY_BEARTYPE`, unless beartype is imported already), and httplib2 too when the Google
    clients are kept out (:data:`LAZY_HTTPLIB2`); they are gone afterwards. When Beam
    is already imported, nothing is blocked: Beam is already what it is."""
    if sys.modules.get("apache_beam") is not None:
        return sys.modules["apache_beam"]
    missing = object()
    # (a name may be there already: site-packages' *-nspkg.pth files make ``google.cloud`` at start-up)
    saved: Dict[str, object] = {m: sys.modules.get(m, missing) for m in blocked_modules(argv)}
    for m in saved:
        sys.modules[m] = None
    # (an imported beartype or httplib2 is used as it is; with the Google clients, they import httplib2)
    lazy = [] if any(m in sys.modules for m in ("beartype", *LAZY_BEARTYPE)) else [*LAZY_BEARTYPE]
    if "httplib2" not in sys.modules and "google.auth" in saved:
        lazy += LAZY_HTTPLIB2
    stand_ins = _stand_ins(lazy)
    sys.modules.update(stand_ins)
    try:
        import apache_beam
    except ImportError:  # a Beam that needs one of them (or no Beam): imported whole below, or the error
        apache_beam = None
    finally:
        for m, before in saved.items():
            if before is missing:
                sys.modules.pop(m, None)
            else:
                sys.modules[m] = before
        for m, stand_in in stand_ins.items():  # (what is there now is the real module, if anything)
            if sys.modules.get(m) is stand_in:
                del sys.modules[m]
    if apache_beam is None:
        for m in [m for m in sys.modules if m == "apache_beam" or m.startswith("apache_beam.")]:
            del sys.modules[m]  # (what the failed import left half made)
        import apache_beam
    elif saved.get("pandas") is missing and not any(isinstance(f, ArrowWithoutPandas) for f in sys.meta_path):
        sys.meta_path.insert(0, ArrowWithoutPandas())
    remember_dofn_specs()
    return apache_beam


def remember_dofn_specs() -> None:
    """Make Beam's ``userstate.get_dofn_specs`` remember its answer for each DoFn object while it
    lives (a weak reference tells it from a later object with the same ``id``; the answer leaves
    with the object), and give a fresh copy of the two sets each time (a caller may change what it
    got). A call that raises is not remembered; a DoFn that takes no weak reference is not either.
    Once per process; a Beam without that function is left as it is."""
    try:
        from apache_beam.transforms import userstate
    except ImportError:
        return
    original = getattr(userstate, "get_dofn_specs", None)
    if original is None or getattr(original, "remembers", False):
        return
    import weakref

    known: Dict[int, Tuple[weakref.ref, tuple]] = {}

    def forget(ref, key):
        if known.get(key, (None,))[0] is ref:
            del known[key]

    def get_dofn_specs(dofn):
        key = id(dofn)
        hit = known.get(key)
        if hit is None or hit[0]() is not dofn:
            specs = original(dofn)
            try:
                ref = weakref.ref(dofn, lambda r, key=key: forget(r, key))
            except TypeError:  # (no weak reference: answered each time, as by Beam)
                return specs
            hit = known[key] = (ref, specs)
        state_specs, timer_specs = hit[1]
        return set(state_specs), set(timer_specs)

    get_dofn_specs.remembers = True
    get_dofn_specs.__wrapped__ = original
    get_dofn_specs.__doc__ = original.__doc__
    userstate.get_dofn_specs = get_dofn_specs


def _own_code() -> Tuple[str, ...]:
    """The folders of beambleu's two packages (``beambleu``, ``bleu_core``), as paths' prefixes."""
    import bleu_core

    return tuple(os.path.dirname(os.path.abspath(f)) + os.sep
                 for f in (os.path.dirname(os.path.abspath(__file__)), bleu_core.__file__))


class ArrowWithoutPandas:
    """An import finder for which pandas is not installed when pyarrow's compiled code asks for it
    on behalf of beambleu's or Beam's own code, and only then.

    pyarrow imports pandas from its C++ and Cython code the first time it converts an array to or
    from numpy (``np.asarray(array)``, ``to_numpy()``, ``pa.array(ndarray)``: to know pandas' types),
    and, when that import fails, tries again on the next conversion; it works the same without
    pandas (a set-up it supports). In a ``beambleu run``, whose arrays are never pandas', that import
    is 0.2-0.3 CPU-s, a quarter of a small run's CPU. Installed by :func:`import_beam` (the
    ``beambleu`` command's own process only, and only if pandas was not imported already), this
    finder raises ``ModuleNotFoundError`` for ``pandas`` when the import does not come from a Python
    ``import`` statement or ``importlib`` (pyarrow's compiled code has no Python frame of its own:
    the nearest one is the code that called pyarrow) and the nearest frame outside pyarrow's own
    Python code is beambleu's or Beam's. Any other import of pandas works as usual: an ``import pandas`` anywhere, a
    plugin metric's call to ``to_pandas()``; once pandas is imported this finder is not asked again.
    When the frames cannot be read it lets the import through (as without it)."""

    def __init__(self, own: Sequence[str] = ()):
        #: prefixes of the paths of the code judged "own" (beambleu's packages; a test names others)
        self.own = tuple(own) or _own_code()

    def find_spec(self, name, path=None, target=None):
        if name != "pandas" or not _from_compiled_code_of(self.own):
            return None
        raise ModuleNotFoundError("No module named 'pandas' (for pyarrow's conversions in `beambleu run`)",
                                  name=name)


def _from_compiled_code_of(own: Tuple[str, ...]) -> bool:
    try:
        frame = sys._getframe(2)
        while frame is not None and frame.f_code.co_filename.startswith("<frozen importlib"):
            frame = frame.f_back
        if frame is None:
            return False
        code = frame.f_code
        where = os.path.abspath(code.co_filename)
        if os.sep + "importlib" + os.sep in where:  # importlib.import_module, importlib.util.find_spec
            return False
        if code.co_code[frame.f_lasti] == _IMPORT_NAME:  # an ``import`` statement
            return False
        while frame is not None and f"{os.sep}pyarrow{os.sep}" in frame.f_code.co_filename:
            frame = frame.f_back  # (pyarrow's Python code: judged by who called it)
        if frame is None:
            return False
        where = os.path.abspath(frame.f_code.co_filename)
        return where.startswith(own) or f"{os.sep}apache_beam{os.sep}" in where
    except Exception:  # (an interpreter whose frames differ: as without this finder)
        return False

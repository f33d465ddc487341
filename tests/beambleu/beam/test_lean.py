"""``beambleu run``'s own process imports Apache Beam without the client libraries its job does not use
(:mod:`beambleu.beam.lean`, issue 34): what is kept out and when, ``sys.modules`` left as it was, the
libraries importable afterwards, and a run's outputs byte for byte those of a run whose Beam was imported
whole. Each import happens in a fresh interpreter (a subprocess): this test process has Beam already."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest

from beambleu.beam import lean

from ...oracle import REPO

SAMPLE = REPO / "examples" / "sample"

GCP = set(lean.GCP_MODULES)
AWS = set(lean.AWS_MODULES)
ALWAYS = {"pandas", "bson", "pymongo"}


@pytest.mark.parametrize("argv, kept_out", [
    (["--input", "shards/*.parquet", "--output", "r.json"], ALWAYS | GCP | AWS),
    (["--input", "GS://bucket/shards/*.parquet"], ALWAYS | AWS),
    (["--input", "x.parquet", "--spm-model", "gs://bucket/m.model"], ALWAYS | AWS),
    (["--input", "x.parquet", "--runner", "DataflowRunner", "--temp_location", "/tmp/t"], ALWAYS | AWS),
    (["--input", "x.parquet", "--runner=dataflow"], ALWAYS | AWS),
    (["--input", "s3://bucket/x.parquet"], ALWAYS | GCP),
    (["--input", "x.parquet", "--output", "s3://bucket/r.json"], ALWAYS | GCP),
    (["--input", "x.parquet", "--s3_endpoint_url=http://127.0.0.1:9000"], ALWAYS | GCP),
    (["--input", "s3://b/x.parquet", "--output", "gs://b/r.json"], ALWAYS),
])
def test_blocked_modules(argv, kept_out):
    assert set(lean.blocked_modules(argv)) == kept_out


# imports Beam through import_beam in a fresh interpreter and reports what it saw
_PROBE = """
import json, sys
from beambleu.beam.lean import blocked_modules, import_beam
names = blocked_modules(sys.argv[1:])
before = {m: id(sys.modules[m]) if m in sys.modules else None for m in names}
import_beam(sys.argv[1:])
after = {m: id(sys.modules[m]) if m in sys.modules else None for m in names}
report = {"names": names, "same": before == after,
          "pandas_converters": "apache_beam.typehints.pandas_type_compatibility" in sys.modules,
          "gcs_in_beam": "apache_beam.io.gcp.gcsfilesystem" in sys.modules,
          "boto3_in_beam": getattr(sys.modules.get("apache_beam.io.aws.clients.s3.boto3_client"), "boto3", None)
          is not None}
importable = {}
for m in names:
    try:
        __import__(m)
        importable[m] = True
    except ImportError:
        importable[m] = False
report["importable"] = importable
import apache_beam as beam
from apache_beam.testing.util import assert_that, equal_to
with beam.Pipeline() as p:  # the local runner works with this Beam
    assert_that(p | beam.Create([1, 2, 3]) | beam.Map(lambda x: x * 2), equal_to([2, 4, 6]))
print(json.dumps(report))
"""


def _probe(*argv):
    proc = subprocess.run([sys.executable, "-c", _PROBE, *argv], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _installed(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def test_import_beam_keeps_them_out_then_restores():
    """Beam is imported without pandas' converters, the GCS file system nor S3's client (when those libraries are
    installed, the control below shows Beam loads them); afterwards ``sys.modules`` holds for each blocked
    name what it held before (the same module, or nothing), every one that is installed imports, and a local
    pipeline runs."""
    report = _probe("--input", "x.parquet")
    assert report["same"]
    assert not report["pandas_converters"] and not report["gcs_in_beam"] and not report["boto3_in_beam"]
    for m, ok in report["importable"].items():
        assert ok == _installed(m), m


def test_import_beam_control():
    """The control: the same probe with gs:// and s3:// paths blocks only pandas and MongoDB's client, and
    then Beam has the GCS file system and S3's client when their libraries are installed (which shows that the
    probe sees them)."""
    report = _probe("--input", "gs://b/x.parquet", "--output", "s3://b/r.json")
    assert set(report["names"]) == ALWAYS and report["same"]
    assert report["gcs_in_beam"] == _installed("google.cloud.storage")
    assert report["boto3_in_beam"] == _installed("boto3")
    if not (_installed("google.cloud.storage") or _installed("boto3")):
        pytest.skip("neither the gcp nor the aws extra is installed: the control cannot tell")


def test_import_beam_when_beam_is_there():
    """With Beam already imported (this process), nothing is blocked nor touched."""
    import apache_beam

    before = dict(sys.modules)
    assert lean.import_beam(["--input", "x.parquet"]) is apache_beam
    assert {k: id(v) for k, v in sys.modules.items()} == {k: id(v) for k, v in before.items()}


# Beam's type hints checked against each other by beartype (the last branch of is_consistent_with): plain classes,
# a generic, and a value that is no type hint (beartype raises its door exception, which Beam takes for False)
_BEARTYPE = """
import json, sys, typing
if sys.argv[1] == "before":
    import beartype.door  # imported already: used as it is
if sys.argv[1] == "partial":  # stand-ins that lack what Beam imports: beartype's own is imported then
    import beambleu.beam.lean as lean
    lean._STAND_IN_NAMES = {**lean._STAND_IN_NAMES, "beartype.door": {}, "beartype.roar": {}}
if sys.argv[1] == "whole":
    import apache_beam
else:
    from beambleu.beam.lean import import_beam
    import_beam(["--input", "x.parquet"])
after_import = sorted(m for m in sys.modules if m == "beartype" or m.startswith("beartype."))
from apache_beam.typehints.typehints import is_consistent_with as ok
cases = [(bool, int), (int, str), (1, int), (typing.List[int], typing.Sequence[int]), (str, typing.Hashable)]
answers = [ok(a, b) for a, b in cases]
print(json.dumps({"after_import": after_import[:3], "beartype_after_calls": "beartype.door" in sys.modules,
                  "answers": answers}))
"""


def _beartype_probe(how):
    proc = subprocess.run([sys.executable, "-c", _BEARTYPE, how], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_beartype_is_imported_when_beam_first_calls_it():
    """Beam's import leaves beartype out (stand-ins, then nothing in sys.modules); its type checks import it on
    their first call and answer as with Beam imported whole (the door exception of a value that is no type hint
    included); with a beartype imported before, or stand-ins that lack a name Beam imports, Beam gets beartype's
    own at its import."""
    whole = _beartype_probe("whole")
    assert whole["after_import"] and whole["answers"] == [True, False, False, True, True]
    lean_ = _beartype_probe("lean")
    assert lean_["after_import"] == [] and lean_["beartype_after_calls"] and lean_["answers"] == whole["answers"]
    for how in ("before", "partial"):
        got = _beartype_probe(how)
        assert got["after_import"] and got["answers"] == whole["answers"], how


# Beam's http_client after an import of Beam through import_beam (or whole): what is imported, and the HTTP
# client it makes (with a proxy from the environment, as Beam reads it)
_HTTPLIB2 = """
import json, os, sys
os.environ["https_proxy"] = "http://proxy.example:3128"
if sys.argv[1] == "whole":
    import apache_beam
else:
    from beambleu.beam.lean import import_beam
    import_beam(sys.argv[2:])
after_import = [m for m in ("httplib2", "pyparsing") if m in sys.modules]
from apache_beam.internal import http_client
http = http_client.get_new_http()
import httplib2
print(json.dumps({"after_import": after_import, "real": isinstance(http, httplib2.Http),
                  "proxy": [http.proxy_info.proxy_host, http.proxy_info.proxy_port], "timeout": http.timeout}))
"""


def _httplib2_probe(*argv):
    proc = subprocess.run([sys.executable, "-c", _HTTPLIB2, *argv], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_httplib2_is_imported_when_beam_first_uses_it():
    """Beam's import leaves httplib2 (and the pyparsing it imports) out when the Google clients are kept out;
    Beam's HTTP client is then httplib2's own, made as with Beam imported whole. With a gs:// argument the
    Google clients import httplib2 themselves, when installed."""
    whole = _httplib2_probe("whole")
    assert whole["after_import"] == ["httplib2", "pyparsing"] and whole["real"]
    assert whole["proxy"] == ["proxy.example", 3128] and whole["timeout"]
    lean_ = _httplib2_probe("lean", "--input", "x.parquet")
    assert lean_["after_import"] == [] and {**lean_, "after_import": None} == {**whole, "after_import": None}
    gcs = _httplib2_probe("lean", "--input", "gs://b/x.parquet")
    assert {**gcs, "after_import": None} == {**whole, "after_import": None}
    if not _installed("google_auth_httplib2"):
        pytest.skip("the gcp extra is not installed: nothing imports httplib2 during the gs:// import")
    assert "httplib2" in gcs["after_import"]


# DoFns' state and timer specs after an import of Beam through import_beam: remembered per DoFn object, equal to
# Beam's own answer, and a stateful pipeline (state and a timer) still runs on the local runner
_SPECS = """
import json, sys
from beambleu.beam.lean import import_beam
import_beam(["--input", "x.parquet"])
import apache_beam as beam
from apache_beam.coders import VarIntCoder
from apache_beam.transforms import userstate
from apache_beam.transforms.timeutil import TimeDomain
from apache_beam.testing.util import assert_that, equal_to
import types
original = userstate.get_dofn_specs.__wrapped__
class Stateful(beam.DoFn):
    COUNT = userstate.BagStateSpec("count", VarIntCoder())
    DONE = userstate.TimerSpec("done", TimeDomain.WATERMARK)
    def process(self, kv, count=beam.DoFn.StateParam(COUNT), done=beam.DoFn.TimerParam(DONE)):
        count.add(1)
        done.set(0)
    @userstate.on_timer(DONE)
    def finish(self, key=beam.DoFn.KeyParam, count=beam.DoFn.StateParam(COUNT)):
        yield key, len(list(count.read()))
class Twice(beam.DoFn):
    S = userstate.BagStateSpec("s", VarIntCoder())
    def process(self, x, a=beam.DoFn.StateParam(S), b=beam.DoFn.StateParam(S)):
        yield x
one, other = Stateful(), Stateful()
first, again = userstate.get_dofn_specs(one), userstate.get_dofn_specs(one)
first[0].clear()  # a caller that changes what it got does not change the next answer
report = {"remembers": userstate.get_dofn_specs.remembers,
          "same": [sorted(map(repr, x)) for x in userstate.get_dofn_specs(one)]
                  == [sorted(map(repr, x)) for x in original(one)],
          "other": [len(x) for x in userstate.get_dofn_specs(other)],
          "again": [len(x) for x in again], "after_clear": [len(x) for x in userstate.get_dofn_specs(one)],
          "stateless": [len(x) for x in userstate.get_dofn_specs(beam.Map(str).dofn)]}
def extra(self, x, s=beam.DoFn.StateParam(Twice.S)):
    yield x
one.extra = types.MethodType(extra, one)  # Beam would now find a second state spec; the first answer stays
report["remembered"] = [len(x) for x in userstate.get_dofn_specs(one)]
report["beams_now"] = [len(x) for x in original(one)]
class Plain(beam.DoFn):
    def process(self, x):
        yield x
seen, reused, right = set(), 0, True  # a DoFn gone: a later one at its address gets its own answer
for i in range(200):
    dofn = Stateful() if i % 2 else Plain()
    reused += id(dofn) in seen
    seen.add(id(dofn))
    right &= [len(x) for x in userstate.get_dofn_specs(dofn)] == ([1, 1] if i % 2 else [0, 0])
    del dofn
report["ids_reused"], report["right_after_reuse"] = reused > 0, right
errors = []
for _ in range(2):
    try:
        userstate.get_dofn_specs(Twice())
    except ValueError as exc:
        errors.append("duplicate" in str(exc))
report["errors"] = errors
with beam.Pipeline() as p:
    got = p | beam.Create([("a", 1), ("b", 2), ("a", 3)]) | beam.ParDo(Stateful())
    assert_that(got, equal_to([("a", 2), ("b", 1)]))
print(json.dumps(report))
"""


def test_dofn_specs_are_remembered_per_dofn():
    """After the command's import of Beam, ``get_dofn_specs`` answers as Beam's own for each DoFn (state and timer
    specs), remembered per DoFn object, a fresh copy each time; an error (duplicate state parameters) is raised
    each time; a pipeline with state and a timer runs on the local runner."""
    proc = subprocess.run([sys.executable, "-c", _SPECS], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report == {"remembers": True, "same": True, "other": [1, 1], "again": [1, 1], "after_clear": [1, 1],
                      "stateless": [0, 0], "errors": [True, True], "remembered": [1, 1], "beams_now": [2, 1],
                      "ids_reused": True, "right_after_reuse": True}


# `beambleu run ARGS` in a fresh interpreter whose Beam is imported lean (as the command does) or whole
_RUN = """
import sys
lean = sys.argv[1] == "lean"
if lean:
    from beambleu.beam.lean import import_beam
    from beambleu.commands.stderr_filter import quiet_logging
    with quiet_logging():
        import_beam(sys.argv[3:])
else:
    import apache_beam
from beambleu.cli import main
rc = main(sys.argv[2:])
sys.stdout.flush()
assert not lean or "apache_beam.io.gcp.gcsfilesystem" not in sys.modules  # (a lean run never loads it)
sys.exit(rc)
"""


def _run(tmp_path, how, name, *args):
    out = tmp_path / how
    out.mkdir(exist_ok=True)
    proc = subprocess.run([sys.executable, "-c", _RUN, how, "run", "--input", str(SAMPLE / "shards" / "*.parquet"),
                           "--output", str(out / f"{name}.json"), "--progress", "off", *args],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("name, args", [
    ("grouped", ["--group-by", "system", "-m", "bleu", "chrf", "ter"]),
    ("confidence", ["--group-by", "system", "-m", "bleu", "chrf", "--confidence", "--confidence-n", "50",
                    "--seed", "3", "--groups-output", "{out}/groups.parquet", "--sentence-output", "{out}/pairs"]),
])
def test_run_outputs_are_the_same(tmp_path, name, args):
    """A run whose Beam was imported lean prints and writes the same bytes as one whose Beam was imported
    whole (the JSON result, the group table, the per-pair Parquet)."""
    got = {}
    for how in ("whole", "lean"):
        got[how] = _run(tmp_path, how, name, *[a.replace("{out}", str(tmp_path / how)) for a in args])
    assert got["lean"][0] == got["whole"][0] and got["lean"][0]
    assert got["lean"][1] == got["whole"][1] and f"{name}.json" in got["lean"][1]


def test_import_beam_whole_when_beam_needs_them(tmp_path):
    """A Beam that cannot be imported without a blocked module (here a stand-in that imports pandas, beside
    a stand-in pandas) is imported again, whole, without what the failed import left; no Beam at all is
    still an ImportError."""
    beam = tmp_path / "needs" / "apache_beam"
    beam.mkdir(parents=True)
    (beam / "__init__.py").write_text("from . import early\nimport pandas\nVALUE = pandas.VALUE\n")
    (beam / "early.py").write_text("import sys\nsys.stdout.write('early ')\n")
    (tmp_path / "needs" / "pandas").mkdir()
    (tmp_path / "needs" / "pandas" / "__init__.py").write_text("VALUE = 42\n")
    (tmp_path / "none" / "apache_beam").mkdir(parents=True)
    (tmp_path / "none" / "apache_beam" / "__init__.py").write_text("raise ImportError('no Beam here')\n")
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from beambleu.beam.lean import import_beam\n"
            "try:\n    print(import_beam(['--input', 'x']).VALUE)\nexcept ImportError as exc:\n    print(exc)")
    outs = [subprocess.run([sys.executable, "-c", code, str(tmp_path / d)], capture_output=True, text=True,
                           cwd=REPO) for d in ("needs", "none")]
    assert [p.stdout for p in outs] == ["early early 42\n", "no Beam here\n"], [p.stderr for p in outs]


# pyarrow's compiled code imports pandas on its first conversion to or from numpy; with the finder, that import
# fails when the code that asked for the conversion is "own" code (in `beambleu run`: beambleu's and Beam's;
# here a folder of the test's), and works for anyone else
_ARROW = """
import importlib.util, json, os, sys
sys.path.insert(0, sys.argv[2])
if sys.argv[1] == "finder":
    from beambleu.beam.lean import ArrowWithoutPandas
    sys.meta_path.insert(0, ArrowWithoutPandas([os.path.join(sys.argv[2], "own") + os.sep]))
from own import conv
report = {"own": conv.to_numpy_and_back(), "after_own_code": "pandas" in sys.modules}
report["spec"] = importlib.util.find_spec("pandas") is not None
import plugin  # a module of someone else's, which converts a table to pandas without importing pandas itself
report["plugin"] = plugin.frame_type()
report["after_plugin"] = "pandas" in sys.modules
import pandas
report["statement"] = pandas.__name__
print(json.dumps(report))
"""


@pytest.mark.skipif(not _installed("pandas"), reason="pandas is not installed: nothing to keep out")
@pytest.mark.parametrize("how", ["finder", "without"])
def test_arrow_conversions_without_pandas(tmp_path, how):
    """With the finder, the own code's conversions (a list to Arrow, to numpy, a list array's parent indices:
    [0, 0, 2, 2, 2] by hand) leave pandas unimported; ``importlib.util.find_spec`` still finds it; a plugin's
    ``to_pandas()`` gets a pandas DataFrame; an ``import pandas`` statement works. Without it (the control), the
    same conversions import pandas, which shows the test sees that import."""
    (tmp_path / "own").mkdir()
    (tmp_path / "own" / "__init__.py").write_text("")
    (tmp_path / "own" / "conv.py").write_text(
        "import numpy as np\nimport pyarrow as pa\nimport pyarrow.compute as pc\n\n\ndef to_numpy_and_back():\n"
        "    refs = pa.array([['a', 'b'], [], ['c', 'd', 'e']])\n"
        "    return np.asarray(pa.array(np.asarray(pc.list_parent_indices(refs)))).tolist()\n")
    (tmp_path / "plugin.py").write_text("def frame_type():\n    import pyarrow as pa\n"
                                        "    return type(pa.table({'a': [1, 2]}).to_pandas()).__name__\n")
    proc = subprocess.run([sys.executable, "-c", _ARROW, how, str(tmp_path)], capture_output=True, text=True,
                          cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["own"] == [0, 0, 2, 2, 2]
    assert report["after_own_code"] is (how == "without")
    assert report["spec"] and report["plugin"] == "DataFrame" and report["after_plugin"]
    assert report["statement"] == "pandas"


def test_run_command_leaves_pandas_out(tmp_path):
    """The `beambleu` command itself (``main()`` without arguments, as the console script calls it) runs the
    sample without importing pandas, and writes what a run inside a program writes (``main([...])``, where
    Beam is imported whole and pandas with it)."""
    code = ("import sys, json\nfrom beambleu.cli import main\nsys.argv = ['beambleu', *sys.argv[1:]]\n"
            "try:\n    rc = main()\nexcept SystemExit as exc:\n    rc = exc.code\n"
            "sys.stdout.flush()\nprint(json.dumps({'rc': rc, 'pandas': 'pandas' in sys.modules}))")
    args = ["run", "--input", str(SAMPLE / "shards" / "*.parquet"), "--group-by", "system", "--progress", "off"]
    proc = subprocess.run([sys.executable, "-c", code, *args, "--output", str(tmp_path / "lean.json")],
                          capture_output=True, text=True, cwd=tmp_path)
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == {"rc": 0, "pandas": False}, proc.stderr
    whole = subprocess.run([sys.executable, "-c", _RUN, "whole", *args, "--output", str(tmp_path / "whole.json")],
                           capture_output=True, text=True, cwd=tmp_path)
    assert whole.returncode == 0, whole.stderr
    assert (tmp_path / "lean.json").read_bytes() == (tmp_path / "whole.json").read_bytes()

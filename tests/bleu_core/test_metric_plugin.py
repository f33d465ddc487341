"""A metric plugin is found through its entry point, with no edit to beambleu: the example in
examples/metric_plugin (``lenratio``) is installed into a folder of its own and put on the path of
``beambleu`` subprocesses, which then offer its flag and compute it beside BLEU in ``score``,
``run`` (group table, per-pair output, JSON) and ``bleu_core.compat``. Every expected number is
worked out by hand below. Plugins that cannot be used are one warning line and change nothing else."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "metric_plugin"

# Three segments, two reference files. Whitespace tokens:
#   candidate                  first reference                  second reference
#   "the cat sat" 3            "the cat sat on the mat" 6       "a cat sat" 3
#   "hello world again today" 4  "hello world" 2                "hello there world again" 4
#   "one two" 2                "one two three four five" 5      "one" 1
SYSTEM = ["the cat sat", "hello world again today", "one two"]
REF1 = ["the cat sat on the mat", "hello world", "one two three four five"]
REF2 = ["a cat sat", "hello there world again", "one"]
HYP_LEN = 3 + 4 + 2  # 9
REF_LEN_FIRST = 6 + 2 + 5  # 13
REF_LEN_SHORTEST = 3 + 2 + 1  # 6


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory) -> str:
    """The example plugin installed (pip, its own build requirements) into a folder of its own: on
    PYTHONPATH, its dist-info is what importlib.metadata finds. The source is copied first, so the
    build leaves nothing in the checkout."""
    base = tmp_path_factory.mktemp("plugin")
    src, target = base / "src", base / "site"
    shutil.copytree(EXAMPLE, src, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target),
                           str(src)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (target / "beambleu_lenratio-0.1.0.dist-info" / "entry_points.txt").exists()
    return str(target)


def cli(*args, path=None, cwd=None) -> subprocess.CompletedProcess:
    """``beambleu ARGS`` in a subprocess, with ``path`` (or nothing) as PYTHONPATH."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    if path:
        env["PYTHONPATH"] = path
    return subprocess.run([sys.executable, "-m", "beambleu.cli", *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=600)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("text")
    for name, lines in (("sys.txt", SYSTEM), ("ref1.txt", REF1), ("ref2.txt", REF2)):
        (d / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return d


def score(files, *args, path=None):
    return cli("score", files / "ref1.txt", files / "ref2.txt", "-i", files / "sys.txt", *args, path=path)


# ----------------------------------------------------------------------------- beambleu score


def test_score_json_of_the_plugin_metric(plugin_path, files):
    proc = score(files, "-m", "lenratio", "--with-stats", path=plugin_path)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    doc = json.loads(proc.stdout)
    assert doc == {"name": "LenRatio", "score": 69.2,  # 100 * 9 / 13 = 69.23..., sacrebleu's one decimal
                   "signature": "nrefs:2|ref:first|version:beambleu_lenratio-0.1.0",
                   # sacrebleu's key for the text after the score, as BLEU's JSON has it
                   "verbose_score": "(hyp_len = 9 ref_len = 13)", "nrefs": "2", "ref": "first",
                   "version": "beambleu_lenratio-0.1.0", "score_exact": 100 * 9 / 13, "hyp_len": 9, "ref_len": 13}
    assert (HYP_LEN, REF_LEN_FIRST) == (9, 13)


def test_score_text_with_the_derived_flag(plugin_path, files):
    proc = score(files, "-m", "lenratio", "--lenratio-shortest", "-f", "text", path=plugin_path)
    assert proc.returncode == 0, proc.stderr
    # shortest references: 3 + 2 + 1 = 6 tokens; 100 * 9 / 6 = 150
    assert REF_LEN_SHORTEST == 6
    assert proc.stdout == ("LenRatio|nrefs:2|ref:shortest|version:beambleu_lenratio-0.1.0 = 150.0 "
                           "(hyp_len = 9 ref_len = 6)\n")


def test_score_bleu_and_the_plugin(plugin_path, files):
    alone = score(files, "-m", "bleu")  # no plugin on the path
    both = score(files, "-m", "lenratio", "bleu", path=plugin_path)
    assert alone.returncode == both.returncode == 0, both.stderr
    bleu, lenratio = json.loads(both.stdout)  # sacrebleu's order: by name
    assert bleu == json.loads(alone.stdout)  # BLEU is not changed by a plugin beside it
    assert lenratio["name"] == "LenRatio" and lenratio["score"] == 69.2
    text = score(files, "-m", "bleu", "lenratio", "-f", "text", path=plugin_path)
    bleu_text = score(files, "-m", "bleu", "-f", "text")
    lines = text.stdout.splitlines()
    assert len(lines) == 2 and lines[0] == bleu_text.stdout.rstrip("\n")
    # -f text with several metrics right-aligns the names, as sacrebleu does
    assert lines[1].lstrip() == ("LenRatio|nrefs:2|ref:first|version:beambleu_lenratio-0.1.0 = 69.2 "
                                 "(hyp_len = 9 ref_len = 13)")


def test_built_in_metrics_are_scored_without_reading_the_plugins(plugin_path, files):
    """``score`` with the built-in metrics parses its command line with their options alone: neither
    importlib.metadata nor the plugin's module is imported, and the output is the same as without the
    plugin installed. Where the plugins could change the answer, the full parser decides: an
    abbreviation of the plugin's flag (``--lenratio-sh``) and of a flag of beambleu's own that is not
    sacrebleu's (``--with-s``, which a plugin's flag could make ambiguous) work as they always did."""
    code = textwrap.dedent("""
        import sys
        from beambleu.cli import main
        rc = main(sys.argv[1:])
        print(rc, "importlib.metadata" in sys.modules, "beambleu_lenratio" in sys.modules, file=sys.stderr)
    """)
    args = ["score", files / "ref1.txt", files / "ref2.txt", "-i", files / "sys.txt", "-m", "bleu", "chrf"]
    env = {**os.environ, "PYTHONPATH": plugin_path}
    proc = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, env=env,
                          timeout=120)
    assert proc.stderr == "0 False False\n" and proc.stdout == score(files, "-m", "bleu", "chrf").stdout
    proc = subprocess.run([sys.executable, "-c", code, *map(str, args[:-3]), "-m", "lenratio"], capture_output=True,
                          text=True, env=env, timeout=120)
    assert proc.stderr == "0 True True\n" and json.loads(proc.stdout)["score"] == 69.2
    short = score(files, "-m", "lenratio", "--lenratio-sh", "-f", "text", path=plugin_path)
    assert short.returncode == 0 and short.stdout.startswith("LenRatio|nrefs:2|ref:shortest|"), short.stderr
    stats = score(files, "--with-s", path=plugin_path)
    assert stats.returncode == 0 and json.loads(stats.stdout) == json.loads(score(files, "--with-stats").stdout)


def test_help_shows_the_derived_flag(plugin_path):
    out = cli("score", "--help", path=plugin_path).stdout
    assert "length ratio options (the beambleu-lenratio plugin):" in out
    assert "--lenratio-shortest" in out and "count the tokens of the shortest reference instead of" in out
    assert "metrics to compute: bleu, chrf, ter, lenratio" in out
    assert out.index("chrF options") < out.index("TER options") < out.index("length ratio options")  # built-ins first
    run = cli("run", "--help", path=plugin_path).stdout
    assert "--lenratio-shortest, --lenratio_shortest" in run
    assert "metrics computed in the same pass: bleu, chrf, ter, lenratio" in " ".join(run.split())


def test_without_the_plugin_lenratio_is_unknown(files, tmp_path):
    proc = score(files, "-m", "lenratio")
    assert proc.returncode == 2 and proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1 and "invalid choice: 'lenratio'" in proc.stderr
    run = cli("run", "--input", tmp_path / "none.parquet", "--metrics", "bleu,lenratio", "--output",
              tmp_path / "r.json")
    assert run.returncode == 2 and len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert "unknown metric 'lenratio' (choose from bleu, chrf, ter, comma-separated)" in run.stderr
    assert "--lenratio-shortest" not in cli("score", "--help").stdout


# ----------------------------------------------------------------------------- beambleu run

# system a: (3 tokens, first reference 6), (4, first reference 2; the None one is missing)
# system b: (2, 5), (3, first reference that is not missing: "x y", 2)
ROWS = [
    {"candidate": "the cat sat", "references": ["the cat sat on the mat", "a cat sat"], "system": "a"},
    {"candidate": "hello world again today", "references": ["hello world", None, "hello there world again"],
     "system": "a"},
    {"candidate": "one two", "references": ["one two three four five"], "system": "b"},
    {"candidate": "x y z", "references": [None, "x y"], "system": "b"},
]


def test_run_bleu_and_the_plugin_per_group(plugin_path, tmp_path):
    schema = pa.schema([("candidate", pa.string()), ("references", pa.list_(pa.string())), ("system", pa.string())])
    pq.write_table(pa.Table.from_pylist(ROWS, schema=schema), tmp_path / "pairs.parquet")
    out = tmp_path / "out"
    proc = cli("run", "--input", tmp_path / "pairs.parquet", "--metrics", "bleu,lenratio", "--group-by", "system",
               "--output", out / "r.json", "--groups-output", out / "groups.csv", "--sentence-output", out / "pairs",
               path=plugin_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((out / "r.json").read_text(encoding="utf-8"))
    bleu, lenratio = doc["corpus"]["scores"]
    assert (bleu["metric"], bleu["name"]) == ("bleu", "BLEU") and doc["corpus"]["n_pairs"] == 4
    # the signature's nrefs:var is a null nrefs (the reference counts vary)
    assert lenratio == {"metric": "lenratio", "name": "LenRatio", "score": 100 * (3 + 4 + 2 + 3) / (6 + 2 + 5 + 2),
                        "signature": "nrefs:var|ref:first|version:beambleu_lenratio-0.1.0",
                        "verbose_score": "(hyp_len = 12 ref_len = 15)", "nrefs": None,
                        "ref": "first", "version": "beambleu_lenratio-0.1.0", "hyp_len": 12, "ref_len": 15}
    assert [m["metric"] for m in doc["metrics"]] == ["bleu", "lenratio"]
    assert doc["metrics"][1] == {"metric": "lenratio", "name": "LenRatio", "signature": lenratio["signature"]}
    groups = {g["key"]["system"]: g["scores"][1] for g in doc["groups"]}
    assert groups["a"]["score"] == 100 * (3 + 4) / (6 + 2)  # 87.5
    assert groups["b"]["score"] == 100 * (2 + 3) / (5 + 2)
    assert (groups["a"]["nrefs"], groups["b"]["nrefs"]) == (2, 1)
    by_system = {row["system"]: row for row in pacsv.read_csv(out / "groups.csv").to_pylist()}
    assert by_system["a"]["lenratio_score"] == 87.5 and by_system["b"]["lenratio_score"] == 100 * 5 / 7
    assert (by_system["a"]["lenratio_hyp_len"], by_system["a"]["lenratio_ref_len"]) == (7, 8)
    assert by_system["b"]["lenratio_signature"] == "nrefs:1|ref:first|version:beambleu_lenratio-0.1.0"
    assert (by_system["a"]["nrefs"], by_system["b"]["nrefs"]) == (2, 1)
    # every metric's columns have its id as prefix, BLEU's too; none has another's
    assert "bleu_score" in by_system["a"] and "score" not in by_system["a"] and "lenratio_bp" not in by_system["a"]
    parts = pq.read_table(next((out / "pairs").glob("*.parquet"))).to_pylist()
    assert "bleu_score" in parts[0] and "lenratio" not in parts[0]
    pairs = sorted((r["lenratio_hyp_len"], r["lenratio_ref_len"], r["lenratio_score"]) for r in parts)
    assert pairs == sorted([(3, 6, 100 * 3 / 6), (4, 2, 100 * 4 / 2), (2, 5, 100 * 2 / 5), (3, 2, 100 * 3 / 2)])


# ----------------------------------------------------------------------------- bleu_core.compat and Dataflow


def test_compat_class_and_template_parameters_of_the_plugin(plugin_path):
    script = textwrap.dedent(f"""
        import inspect, json
        from bleu_core import compat
        from beambleu.commands.metric_options import template_parameters, template_switches
        cls = compat.compat_class("lenratio")
        m = cls()
        out = {{"name": cls.__name__, "params": str(inspect.signature(cls)),
               "first": m.corpus_score({SYSTEM!r}, [{REF1!r}, {REF2!r}]).score,
               "sig": m.get_signature().format()}}
        m.shortest = True
        out["shortest"] = m.corpus_score({SYSTEM!r}, [{REF1!r}, {REF2!r}]).score
        out["sentence"] = cls(references=[{REF1!r}]).sentence_score("a b", ["a b c d"]).score
        test = compat.PairedTest([("base", {SYSTEM!r}), ("other", ["the", "hello", "one two three"])],
                                 {{"LenRatio": cls()}}, [{REF1!r}], test_type="bs", n_samples=20)
        sigs, scores = test()
        out["paired"] = [r.score for r in scores["LenRatio"]]
        out["template"] = [p for p in template_parameters() if p["name"].startswith("lenratio")]
        out["metrics_regex"] = [p["regexes"] for p in template_parameters() if p["name"] == "metrics"]
        out["switches"] = list(template_switches())
        print(json.dumps(out))
    """)
    env = {**os.environ, "PYTHONPATH": plugin_path}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["name"] == "LENRATIO" and out["params"] == "(*, shortest=False, references=None)"
    assert out["first"] == 100 * 9 / 13 and out["shortest"] == 100 * 9 / 6
    assert out["sig"] == "nrefs:2|ref:first|version:beambleu_lenratio-0.1.0"
    assert out["sentence"] == 100 * 2 / 4
    # one reference file: base 100 * (3 + 4 + 2) / (6 + 2 + 5), other 100 * (1 + 1 + 3) / 13
    assert out["paired"] == [100 * 9 / 13, 100 * 5 / 13]
    assert out["template"] == [{"name": "lenratio_shortest", "label": "Length ratio: shortest reference",
                                "helpText": "true: the length ratio counts the shortest reference instead of the "
                                            "first.", "isOptional": True, "paramType": "TEXT",
                                "regexes": ["^(true|false)$"]}]
    assert out["metrics_regex"] == [["^(bleu|chrf|ter|lenratio)(,(bleu|chrf|ter|lenratio))*$"]]
    assert "lenratio_shortest" in out["switches"] and "lowercase" in out["switches"]


# ----------------------------------------------------------------------------- plugins that cannot be used

# (distribution, entry point "name = module:Class", module source, what the warning says)
_METRIC = "from bleu_core.metrics.chrf import Chrf\nfrom bleu_core.registry import Option\n"
BROKEN = [
    ("broken-import", "broken = broken_import:Metric", "raise ImportError('no such kernel')\n",
     "it cannot be imported: ImportError: no such kernel"),
    ("clash", "chrf = clash:Fake", _METRIC + "class Fake(Chrf):\n    id = 'chrf'\n",
     "the id 'chrf' is a built-in metric's"),
    ("not-a-metric", "nam = not_a_metric:Thing", "class Thing:\n    id = 'nam'\n",
     "not_a_metric:Thing is not a subclass of bleu_core.protocol.Metric"),
    ("wrong-id", "wid = wrong_id:Fake", _METRIC + "class Fake(Chrf):\n    id = 'other'\n",
     "its class's id is 'other', not the entry point's name"),
    ("bad-flag", "badflag = bad_flag:Fake",
     _METRIC + "class Fake(Chrf):\n    id = 'badflag'\n"
     "    options = (Option('lowercase', bool, False, '--lowercase'),)\n",
     "flag '--lowercase' is not of the form --badflag-NAME"),
    ("short-form", "shortf = short_form:Fake",
     _METRIC + "class Fake(Chrf):\n    id = 'shortf'\n"
     "    options = (Option('lowercase', bool, False, '--shortf-lowercase', '-lc'),)\n",
     "short forms are sacrebleu's"),
    # a flag of beambleu's own that comes after the metric options in --help
    ("takes-a-flag", "paired = takes_a_flag:Fake",
     _METRIC + "class Fake(Chrf):\n    id = 'paired'\n    options = (Option('beta', int, 2, '--paired-bs'),)\n",
     "its flag --paired-bs is already an option of beambleu"),
]


def _fake_dist(root: Path, dist: str, entry: str, source: str) -> None:
    """An installed distribution ``dist`` (its dist-info) whose one module is ``source``."""
    module = entry.split("=")[1].strip().split(":")[0]
    (root / f"{module}.py").write_text(source, encoding="utf-8")
    info = root / f"{dist.replace('-', '_')}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[beambleu.metrics]\n{entry}\n", encoding="utf-8")


def test_a_plugin_flag_that_begins_a_flag_of_sacrebleu_is_the_plugins(files, tmp_path):
    """A plugin's flag ``--<id>-NAME`` may be the start of one of sacrebleu's: ``--smooth-v`` of a plugin
    ``smooth`` begins BLEU's ``--smooth-value``. With the plugin installed it is the plugin's option, as
    it always was (the first parse, with the built-in options alone, must not take it for sacrebleu's
    abbreviation); without it, it is that abbreviation."""
    _fake_dist(tmp_path, "smooth-plugin", "smooth = smooth_plugin:Fake",
               _METRIC + "class Fake(Chrf):\n    id = 'smooth'\n"
               "    options = (Option('beta', int, 2, '--smooth-v'),)\n")
    plain = score(files, "-s", "floor", "-f", "text")
    mine = score(files, "-s", "floor", "--smooth-v", "3", "-f", "text", path=str(tmp_path))
    assert plain.returncode == mine.returncode == 0 and mine.stdout == plain.stdout, mine.stderr  # BLEU's untouched
    for arg in (["--smooth-v", "0.5"], ["--smooth-v=0.5"]):  # the plugin's option is an integer
        bad = score(files, *arg, path=str(tmp_path))
        assert bad.returncode == 2 and "argument --smooth-v: invalid int value: '0.5'" in bad.stderr, bad.stderr
    alone = score(files, "-s", "floor", "--smooth-v", "3", "-f", "text")  # no plugin: sacrebleu's --smooth-value
    assert alone.returncode == 0 and "|smooth:floor[3.00]|" in alone.stdout, alone.stderr


@pytest.mark.parametrize("dist,entry,source,reason", BROKEN, ids=[b[0] for b in BROKEN])
def test_a_plugin_that_cannot_be_used_is_one_warning(files, tmp_path, dist, entry, source, reason):
    _fake_dist(tmp_path, dist, entry, source)
    metric_id = entry.split("=")[0].strip()
    clean = score(files, "-m", "bleu", "chrf")
    proc = score(files, "-m", "bleu", "chrf", path=str(tmp_path))
    # beambleu works as without the plugin; scoring built-in metrics does not look at the plugins
    assert proc.returncode == 0 and proc.stdout == clean.stdout and proc.stderr == ""
    shown = cli("score", "--help", path=str(tmp_path))  # the help lists the plugins' options: it reads them
    assert shown.returncode == 0 and "--chrf-word-order" in shown.stdout
    warning = shown.stderr.splitlines()
    assert len(warning) == 1 and warning[0].startswith(f"beambleu: warning: metric plugin {metric_id!r}")
    assert reason in warning[0] and "is skipped" in warning[0]
    if dist != "takes-a-flag":  # (that check is the command line's: the registry has the class)
        assert f"distribution {dist} 0.1" in warning[0]
    if metric_id != "chrf":
        asked = score(files, "-m", metric_id, path=str(tmp_path))
        assert asked.returncode == 2 and asked.stdout == ""
        lines = asked.stderr.splitlines()
        assert lines[0] == warning[0] and len(lines) == 2 and f"invalid choice: {metric_id!r}" in lines[1]
    assert "Traceback" not in proc.stderr


def test_registry_says_why_a_plugin_was_left_out(tmp_path):
    _fake_dist(tmp_path, "broken-import", "broken = broken_import:Metric", "raise ImportError('no such kernel')\n")
    script = textwrap.dedent("""
        from bleu_core import registry
        print(list(registry.metrics()))
        print(registry.skipped())
        try:
            registry.get("broken")
        except registry.UnknownMetric as exc:
            print(exc)
    """)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    names, skipped, why = proc.stdout.splitlines()
    assert names == "['bleu', 'chrf', 'ter']"
    line = ("metric plugin 'broken' (broken_import:Metric, distribution broken-import 0.1) is skipped: it cannot be "
            "imported: ImportError: no such kernel")
    assert skipped == repr([line]) and why == line


def test_a_plugin_taking_an_option_of_beam_is_left_out_of_run(tmp_path):
    """--dask-stall-timeout is beambleu's own Beam-style option (--dask_stall_timeout), outside ``run``'s parser."""
    _fake_dist(tmp_path, "takes-beams", "dask = takes_beams:Fake",
               _METRIC + "class Fake(Chrf):\n    id = 'dask'\n"
               "    options = (Option('beta', int, 2, '--dask-stall-timeout'),)\n")
    proc = cli("run", "--help", path=str(tmp_path))
    assert proc.returncode == 0 and "--dask-stall-timeout" not in proc.stdout
    assert [line for line in proc.stderr.splitlines() if line.startswith("beambleu: warning: metric plugin")] == [
        "beambleu: warning: metric plugin 'dask' is skipped: its flag --dask-stall-timeout is already an option of "
        "beambleu"]

"""The open trust cases of issue 34 (item 7): each gives one line naming what is wrong, or
sacrebleu's result; never a hang, never a silent result.

1. ``run --id-column`` with a null id (``--sentence-output`` too): the file, row and column, exit 1.
2. Two candidate columns of one name: ``--candidate-columns a,a`` is bad usage; a file whose schema
   has a needed column twice is named, exit 1 (a duplicated column that is not read changes nothing).
3. ``--spm-model s3://`` or ``--input s3://`` without credentials or endpoint: one line naming the
   path and what is missing, at once (not after Beam's retries).
4. ``score -pbsn/-parn/-cin`` and ``run --paired-*-n`` beyond what can finish: refused at once.
5. ``report`` of a result whose groups are in the group table only: one line naming the table.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import time
from argparse import Namespace

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

pytest.importorskip("apache_beam")

from ...oracle import REPO, sacre_corpus  # noqa: E402
from ...pipeline_helpers import bleu_of, load, run_cli  # noqa: E402

SAMPLE = REPO / "examples" / "sample"
SHARDS = str(SAMPLE / "shards" / "*.parquet")
REFS = [str(SAMPLE / "ref.A.txt"), str(SAMPLE / "ref.B.txt")]
SYSTEMS = [str(SAMPLE / "sys.alpha.txt"), str(SAMPLE / "sys.beta.txt")]


def beambleu_run(*args, env=None, timeout=90):
    """(exit code, stdout, stderr, seconds) of ``beambleu run ...`` in a process of its own, killed
    after ``timeout`` seconds: the cases that once hung."""
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "beambleu.cli", "run", *map(str, args)], capture_output=True,
                          text=True, cwd=REPO, timeout=timeout, env=env)
    return proc.returncode, proc.stdout, proc.stderr, time.monotonic() - t0


def error_line(err: str) -> str:
    """The one error line (and no traceback) of a command's stderr."""
    assert "Traceback" not in err, err
    lines = [ln for ln in err.splitlines() if ln.startswith("beambleu: error:")]
    assert len(lines) == 1, err
    return lines[0]


def score_cli(*args, timeout=60):
    """(exit code, stdout, stderr, seconds) of ``beambleu score ...`` in a process of its own."""
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "beambleu.cli", "score", *map(str, args)], capture_output=True,
                          text=True, cwd=REPO, timeout=timeout)
    return proc.returncode, proc.stdout, proc.stderr, time.monotonic() - t0


# ------------------------------------------------------------------ 1. null ids ---

@pytest.mark.parametrize("ids,outputs", [
    (pa.array([1, None, 3], pa.int64()), ["--sentence-output", "pairs"]),
    (pa.array(["s1", "s2", None], pa.string()), ["--sentence-output", "pairs", "--output", "r.json"]),
    (pa.array([1, None, 3], pa.int64()), ["--mtme-output", "mtme", "--sentence-output", "pairs"]),
    (pa.array([None, 2, 3], pa.int64()), ["--output", "r.json"]),  # an --id-column with nothing to pair: the same
])
def test_a_null_id_is_bad_input_naming_file_row_and_column(tmp_path, monkeypatch, ids, outputs):
    monkeypatch.chdir(tmp_path)
    f = tmp_path / "in.parquet"
    pq.write_table(pa.table({"candidate": ["a b c", "b c d", "c d e"], "references": [["a b c"]] * 3,
                             "seg": ids, "langpair": ["de-en"] * 3, "system": ["x"] * 3}), f)
    bad = ids.to_pylist().index(None)
    rc, out, err = run_cli("--input", f, "--id-column", "seg", *outputs, "--progress", "off")
    assert rc == 1, err
    assert error_line(err) == (f"beambleu: error: {f}: row {bad}, column 'seg': the id is null (--id-column names "
                               "each pair's segment: every row needs one)")
    assert out == "" and sorted(p.name for p in tmp_path.iterdir()) == ["in.parquet"]


def test_ids_without_nulls_give_sacrebleus_score_and_one_row_per_pair(tmp_path):
    cands, refs = ["a b c d", "b c d e f", "c d e"], [["a b c d"], ["b c d e"], ["c d x"]]
    f = tmp_path / "in.parquet"
    pq.write_table(pa.table({"candidate": cands, "references": refs, "seg": [3, 1, 2]}), f)
    rc, out, err = run_cli("--input", f, "--id-column", "seg", "--sentence-output", tmp_path / "pairs",
                           "--output", tmp_path / "r.json", "--progress", "off")
    assert rc == 0, err
    theirs = sacre_corpus(cands, refs)[0]
    assert bleu_of(load(tmp_path / "r.json")["corpus"])["score"] == theirs.score
    pairs = pq.read_table(tmp_path / "pairs").sort_by("row")
    assert pairs.column("seg").to_pylist() == [3, 1, 2]


# ---------------------------------------------------- 2. two columns of one name ---

def test_candidate_columns_naming_a_column_twice_is_bad_usage(tmp_path):
    f = tmp_path / "in.parquet"
    pq.write_table(pa.table({"a": ["a b c"] * 3, "ref": ["a b c"] * 3}), f)
    rc, out, err = run_cli("--input", f, "--candidate-columns", "a,a", "--reference-columns", "ref",
                           "--output", tmp_path / "r.json", "--progress", "off")
    assert rc == 2, err
    assert error_line(err) == ("beambleu: error: --candidate-columns a,a: column 'a' is named twice (each candidate "
                               "column is a system)")
    assert out == "" and sorted(p.name for p in tmp_path.iterdir()) == ["in.parquet"]


@pytest.mark.parametrize("names,flags,column", [
    (["a", "a", "ref"], ["--candidate-columns", "a", "--reference-columns", "ref"], "a"),
    (["candidate", "candidate", "references"], [], "candidate"),
    (["candidate", "ref", "ref"], ["--reference-columns", "ref"], "ref"),
])
def test_a_file_with_a_needed_column_twice_is_named(tmp_path, names, flags, column):
    f = tmp_path / "in.parquet"
    refs = pa.array([["a b c"]] * 3) if names[-1] == "references" else pa.array(["a b c"] * 3)
    pq.write_table(pa.Table.from_arrays([pa.array(["a b c"] * 3), pa.array(["x y"] * 3), refs], names=names), f)
    rc, out, err = run_cli("--input", f, *flags, "--output", tmp_path / "r.json", "--progress", "off")
    assert rc == 1, err
    assert error_line(err) == (f"beambleu: error: {f}: column {column!r} appears 2 times in the file: beambleu "
                               "cannot tell which one to read; rename the others")
    assert out == "" and sorted(p.name for p in tmp_path.iterdir()) == ["in.parquet"]


def test_a_duplicated_column_that_is_not_read_changes_nothing(tmp_path):
    cands, refs = ["a b c d", "b c d e f"], [["a b c d"], ["b c d e"]]
    f = tmp_path / "in.parquet"
    pq.write_table(pa.Table.from_arrays([pa.array(cands), pa.array(refs), pa.array([1, 2]), pa.array([3, 4])],
                                        names=["candidate", "references", "x", "x"]), f)
    rc, out, err = run_cli("--input", f, "--output", tmp_path / "r.json", "--progress", "off")
    assert rc == 0, err
    assert bleu_of(load(tmp_path / "r.json")["corpus"])["score"] == sacre_corpus(cands, refs)[0].score


# ------------------------------------------------- 3. object stores without credentials ---

@pytest.fixture
def no_aws(monkeypatch, tmp_path):
    """An environment where boto3 finds no credentials (none in the environment, no files, no
    instance metadata) and no endpoint."""
    pytest.importorskip("boto3")
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
                 "AWS_DEFAULT_PROFILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                 "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_WEB_IDENTITY_TOKEN_FILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    return dict(os.environ)


MISSING = ("no S3 credentials and no endpoint (requests would go to AWS S3): set AWS_ACCESS_KEY_ID and "
           "AWS_SECRET_ACCESS_KEY (or AWS_PROFILE), or give --s3_access_key_id and --s3_secret_access_key, and "
           "--s3_endpoint_url=URL for a store other than AWS")


@pytest.mark.parametrize("flags,path", [
    (["--input", str(SAMPLE / "shards" / "alpha.parquet"), "-tok", "flores200", "--spm-model",
      "s3://models/spm/flores200.model"], "s3://models/spm/flores200.model"),
    (["--input", "s3://corpus/wmt/*.parquet"], "s3://corpus/wmt/*.parquet"),
])
def test_s3_without_credentials_is_one_line_at_once(tmp_path, no_aws, flags, path):
    rc, out, err, seconds = beambleu_run(*flags, "--output", tmp_path / "r.json", "--progress", "off", env=no_aws)
    assert rc == 1, err
    assert error_line(err) == f"beambleu: error: {path}: {MISSING}"
    assert out == "" and list(tmp_path.iterdir()) == []
    assert seconds < 30  # (before: Beam's client retried until --object_store_timeout, 60 s)


def test_s3_without_credentials_names_the_endpoint_given(tmp_path, no_aws):
    rc, _, err = run_cli("--input", "s3://corpus/x.parquet", "--s3_endpoint_url=http://127.0.0.1:9",
                         "--output", tmp_path / "r.json", "--progress", "off")
    assert rc == 1, err
    assert error_line(err) == ("beambleu: error: s3://corpus/x.parquet: no S3 credentials for http://127.0.0.1:9: set "
                               "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE), or give "
                               "--s3_access_key_id and --s3_secret_access_key")


def test_a_model_store_without_beam_options_is_checked_before_reading(no_aws, monkeypatch):
    """What ``score --spm-model s3://...`` needs (it has no Beam options: Beam's S3 filesystem
    would say 'Must provide one of client or options'): options set, the credentials missing named
    with the environment's names; a local path is left alone."""
    from apache_beam.io.filesystems import FileSystems

    from beambleu.io.inputs import PipelineInputError, check_model_store

    monkeypatch.setattr(FileSystems, "_pipeline_options", None)
    check_model_store(str(SAMPLE / "ref.A.txt"))
    assert FileSystems._pipeline_options is None
    with pytest.raises(PipelineInputError) as caught:
        check_model_store("s3://models/x.model")
    assert caught.value.message == (
        "s3://models/x.model: no S3 credentials and no endpoint (requests would go to AWS S3): set AWS_ACCESS_KEY_ID "
        "and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE), and AWS_ENDPOINT_URL_S3=URL for a store other than AWS")
    assert FileSystems._pipeline_options is not None


def test_a_model_store_that_does_not_answer_is_given_up_in_bounded_time(monkeypatch, capsys):
    """Credentials, an endpoint nothing listens on: one line after the timeout (Beam's client alone
    retried for 8 minutes), its retries announced; Beam's own log lines stay out of stderr."""
    pytest.importorskip("boto3")
    from apache_beam.io.filesystems import FileSystems
    from apache_beam.options.pipeline_options import PipelineOptions

    from beambleu.io.inputs import PipelineInputError, check_model_store

    with socket_nobody_listens() as port:
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "a")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "b")
        monkeypatch.setenv("AWS_ENDPOINT_URL_S3", f"http://127.0.0.1:{port}")
        monkeypatch.setattr(FileSystems, "_pipeline_options", PipelineOptions(["--object_store_timeout", "2"]))
        t0 = time.monotonic()
        with pytest.raises(PipelineInputError) as caught:
            check_model_store("s3://models/x.model")
    assert time.monotonic() - t0 < 20
    assert caught.value.message.startswith(f"s3://models/x.model: no answer from http://127.0.0.1:{port} within 2 s")
    err = capsys.readouterr().err
    assert all(line.startswith("beambleu: ") for line in err.splitlines()), err


@contextlib.contextmanager
def socket_nobody_listens():
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # (refused connections: the client retries, as for a store that is down)
    yield port


# ------------------------------------------------------------ 4. draws that cannot finish ---

@pytest.mark.parametrize("flags,line", [
    (["-pbs", "-pbsn", "100000000"],
     "--paired-bs-n 100000000: above the limit of 1,000,000 (every resample is drawn over every segment and its "
     "scores are kept: this many would take hours and at least 0.8 GB of memory per system and metric); use "
     "1,000,000 or fewer (sacrebleu's default is 1,000)"),
    (["-par", "-parn", "100000000"],
     "--paired-ar-n 100000000: above the limit of 1,000,000 (every trial is drawn over every segment: this many "
     "would take hours); use 1,000,000 or fewer (sacrebleu's default is 10,000)"),
])
def test_score_refuses_paired_draws_that_cannot_finish_at_once(flags, line):
    rc, out, err, seconds = score_cli(*REFS, "-i", *SYSTEMS, *flags)
    assert rc == 2 and out == "", err
    assert error_line(err) == f"beambleu: error: {line}"
    assert seconds < 30


def test_score_refuses_an_interval_that_cannot_finish_at_once():
    rc, out, err, seconds = score_cli(*REFS, "-i", SYSTEMS[0], "-ci", "-cin", "2000000")
    assert rc == 2 and out == "", err
    assert error_line(err).startswith("beambleu: error: --confidence-n 2000000: above the limit of 1,000,000")
    assert seconds < 30


@pytest.mark.parametrize("test,flag", [("--paired-bs", "--paired-bs-n"), ("--paired-ar", "--paired-ar-n")])
def test_run_refuses_paired_draws_that_cannot_finish_at_once(tmp_path, test, flag):
    rc, out, err, seconds = beambleu_run("--input", SHARDS, "--group-by", "system", "--id-column", "line", test, flag,
                                         "100000000", "--baseline", "alpha", "--output", tmp_path / "r.json",
                                         "--progress", "off")
    assert rc == 2 and out == "", err
    assert error_line(err).startswith(f"beambleu: error: {flag}: 100000000 resamples is above the limit of 100000")
    assert seconds < 30 and list(tmp_path.iterdir()) == []


def test_the_limits_are_in_help_and_the_limit_itself_is_accepted():
    from beambleu.commands import significance as sig
    from bleu_core.resampling import sacrebleu as nr

    args = Namespace(paired_bs=True, paired_bs_n=sig.MAX_DRAWS, paired_ar=False, confidence=False,
                     resampling=nr.SACREBLEU, seed=1, seed_label="1")
    assert sig.resampling(args, 10).n == sig.MAX_DRAWS
    args.paired_bs_n += 1
    with pytest.raises(sig.UsageError, match="above the limit of 1,000,000"):
        sig.resampling(args, 10)
    rc, out, _, _ = score_cli("--help")
    assert rc == 0 and "at most 1,000,000 and resamples x segments x systems at most 1e10" in " ".join(out.split())


def test_draw_work_is_checked_from_segments_and_systems():
    from beambleu.commands import significance as sig
    from bleu_core import scoring
    from bleu_core.resampling import sacrebleu as nr

    paired = scoring.Resampling(scoring.BOOTSTRAP, 1_000_000, 1, "1", nr.SACREBLEU)
    sig.check_draw_work(paired, 2_000, 2)  # 4e9: about a minute
    with pytest.raises(sig.UsageError) as caught:
        sig.check_draw_work(paired, 100_000, 3)
    assert str(caught.value) == ("--paired-bs-n 1000000: 1,000,000 resamples x 100,000 segments x 3 systems is above "
                                 "the limit of 1e10 segment draws (minutes of drawing; this would take hours); use "
                                 "33,333 or fewer")
    trials = scoring.Resampling(scoring.RANDOMIZATION, 10_000, 1, "1", nr.SACREBLEU)
    with pytest.raises(sig.UsageError, match=r"^--paired-ar-n 10000: 10,000 trials x 1,000,000 segments x 2 systems"):
        sig.check_draw_work(trials, 1_000_000, 2)
    ci = scoring.Resampling(scoring.BOOTSTRAP, 1_000_000, 1, "1", nr.SACREBLEU)
    with pytest.raises(sig.UsageError, match=r"^--confidence-n 1000000: .* x 1 system is above"):
        sig.check_draw_work(ci, 20_000, 1)
    sig.check_draw_work(scoring.Resampling(scoring.BOOTSTRAP, 10 ** 6, 1, "1", nr.COUNTER), 10 ** 9, 9)  # run's
    sig.check_draw_work(None, 10 ** 9, 9)


# ------------------------------------------------ 5. groups in the group table only ---

@pytest.mark.parametrize("sets,named", [
    (["--group-by", "system"], "grouping set system (2 groups) is"),
    (["--group-by", "system", "--group-by", "line"], "grouping sets system (2 groups); line (30 groups) are"),
])
def test_report_of_groups_left_to_the_group_table_names_it(tmp_path, sets, named):
    from beambleu.cli import main

    table = tmp_path / "g.parquet"
    rc, _, err = run_cli("--input", SHARDS, *sets, "--json-groups-limit", "0", "--output", tmp_path / "r.json",
                         "--groups-output", table, "--progress", "off")
    assert rc == 0, err
    for extra in ([], ["-f", "latex"], ["--compare", str(tmp_path / "r.json")]):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            rc = main(["report", str(tmp_path / "r.json"), *extra])
        assert rc == 1 and out.getvalue() == "", err.getvalue()
        assert error_line(err.getvalue()) == (
            f"beambleu: error: {tmp_path / 'r.json'}: the document lists none of its groups (run's "
            f"--json-groups-limit left them to the group table): {named} in the group table {table}")

"""``beambleu score`` and ``beambleu run`` ask OpenBLAS for one thread (score's products are small,
run calls no BLAS; extra threads only spin), unless the user chose a number; the other commands
leave the environment alone."""

import os

import pytest

from beambleu import cli


@pytest.mark.parametrize("argv", [["score", "ref.txt"], ["run", "--input", "x"], ["--verbose", "run", "--input", "x"]])
def test_score_and_run_ask_for_one_blas_thread(monkeypatch, argv):
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "")  # (recorded, so that teardown restores the variable as it was)
    monkeypatch.delenv("OPENBLAS_NUM_THREADS")
    cli._one_blas_thread(argv)
    assert os.environ["OPENBLAS_NUM_THREADS"] == "1"


def test_the_users_choice_and_other_commands_are_left_alone(monkeypatch):
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "4")
    cli._one_blas_thread(["score", "ref.txt"])
    assert os.environ["OPENBLAS_NUM_THREADS"] == "4"
    cli._one_blas_thread(["run", "--input", "x"])
    assert os.environ["OPENBLAS_NUM_THREADS"] == "4"
    monkeypatch.delenv("OPENBLAS_NUM_THREADS")
    for argv in (["report", "r.json"], ["convert", "--help"]):
        cli._one_blas_thread(argv)
        assert "OPENBLAS_NUM_THREADS" not in os.environ

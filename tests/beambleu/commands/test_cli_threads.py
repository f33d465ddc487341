"""``beambleu score`` asks OpenBLAS for one thread (its products are small; extra threads only
spin), unless the user chose a number; the other commands leave the environment alone."""

import os

from beambleu import cli


def test_score_asks_for_one_blas_thread(monkeypatch):
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    cli._one_blas_thread(["score", "ref.txt"])
    assert os.environ["OPENBLAS_NUM_THREADS"] == "1"


def test_the_users_choice_and_other_commands_are_left_alone(monkeypatch):
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "4")
    cli._one_blas_thread(["score", "ref.txt"])
    assert os.environ["OPENBLAS_NUM_THREADS"] == "4"
    monkeypatch.delenv("OPENBLAS_NUM_THREADS")
    cli._one_blas_thread(["run", "--input", "x"])
    assert "OPENBLAS_NUM_THREADS" not in os.environ

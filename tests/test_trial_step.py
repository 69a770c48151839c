"""An adapter's training step: a pass and its one stage begun and ended as one (``Trial._step``,
``pass_loop.Step``), the stage object reused from batch to batch.

Driven in this process as a framework drives the adapters (``TrainingAttempt``), and compared
with what ``trial.passes`` and ``trial.stage`` record for the same work: the step is a faster
path to the same attempt, never a different one.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from kernodeck_diagnostic import Trial
from kernodeck_diagnostic.trial.adapters.attempt import TrainingAttempt
from trial_helpers import assert_valid_attempt, attempt_of, only_attempt

linux_only = pytest.mark.skipif(sys.platform != "linux", reason="/proc/self/clear_refs")


def _touch(mib: int) -> None:
    block = bytearray(mib * 2**20)
    for offset in range(0, len(block), 4096):
        block[offset] = 1
    del block


def _kept(document: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(s["name"], s["pass_index"], s["status"], s["occurrence"])
            for s in document["stages"]]


def test_steps_leave_the_attempt_that_passes_and_stages_leave(tmp_path: Path) -> None:
    # Five batches, one with a stage opened in it, the fourth failing inside a stage the program
    # catches: the same records, counts and verdict both ways.
    def work(trial: Trial, index: int) -> None:
        if index == 1:
            with trial.stage("forward"):
                pass
        if index == 3:
            with contextlib.suppress(KeyError), trial.stage("lookup"):
                raise KeyError("id")

    with Trial(tmp_path / "passes") as trial:
        for index in trial.passes(5):
            with trial.stage("train_batch"):
                work(trial, index)
    attempt = TrainingAttempt(tmp_path / "steps", None, check_step=False)
    attempt.start()
    for index in range(5):
        attempt.batch_started()
        assert attempt.step == index
        work(attempt.trial, index)
        attempt.batch_ended()
    attempt.end()
    by_passes = attempt_of(only_attempt(tmp_path / "passes"))
    by_steps = attempt_of(only_attempt(tmp_path / "steps"))
    assert_valid_attempt(by_steps)
    assert _kept(by_steps) == _kept(by_passes)
    for key in ("requested", "completed", "first_failed_pass", "left_at_pass"):
        assert by_steps["passes"][key] == by_passes["passes"][key], key
    assert by_steps["passes"]["first_failed_pass"] == {"index": 3, "stage": "lookup",
                                                       "error_type": "KeyError"}
    counts = ("stage", "count", "completed", "failed")
    assert [{key: row[key] for key in counts} for row in by_steps["stage_summary"]] == [
        {key: row[key] for key in counts} for row in by_passes["stage_summary"]]
    assert by_steps["status"] == by_passes["status"] == "completed"


def test_a_step_whose_end_never_came_ends_where_the_next_begins(tmp_path: Path) -> None:
    # Lightning skips a batch's end when a hook returns -1: the next batch's start closes it.
    attempt = TrainingAttempt(tmp_path / "runs", None, check_step=False)
    attempt.start()
    attempt.batch_started()
    attempt.batch_started()
    attempt.batch_ended()
    attempt.end()
    document = attempt_of(only_attempt(tmp_path / "runs"))
    assert _kept(document) == [("train_batch", 0, "completed", 1),
                               ("train_batch", 1, "completed", 2)]
    assert document["passes"]["completed"] == 2


def test_a_step_is_begun_once_before_it_ends(tmp_path: Path) -> None:
    with Trial(tmp_path / "runs") as trial:
        step = trial._step("train_batch")
        assert step.begin() == 0
        with pytest.raises(RuntimeError, match="begun once"):
            step.begin()
        step.__exit__(None, None, None)
        assert step.begin() == 1
        step.__exit__(None, None, None)
    assert attempt_of(only_attempt(tmp_path / "runs"))["passes"]["completed"] == 2


def test_a_step_from_another_thread_is_refused(tmp_path: Path) -> None:
    refused: list[BaseException] = []
    with Trial(tmp_path / "runs") as trial:
        step = trial._step("train_batch")

        def other() -> None:
            try:
                step.begin()
            except RuntimeError as error:
                refused.append(error)

        thread = threading.Thread(target=other)
        thread.start()
        thread.join(timeout=30)
    assert len(refused) == 1
    assert "another thread" in str(refused[0])
    document = attempt_of(only_attempt(tmp_path / "runs"))
    assert document["passes"]["completed"] == 0
    assert document["status"] == "completed"


def test_a_failed_step_leaves_its_pass_uncompleted(tmp_path: Path) -> None:
    trial = Trial(tmp_path / "runs").__enter__()
    step = trial._step("train_batch")
    step.begin()
    step.__exit__(None, None, None)
    step.begin()
    error = ValueError("bad batch")
    step.__exit__(ValueError, error, None)
    trial.__exit__(ValueError, error, None)
    document = attempt_of(only_attempt(tmp_path / "runs"))
    assert document["passes"]["completed"] == 1
    assert document["passes"]["first_failed_pass"]["index"] == 1
    assert document["first_error"]["stage"] == "train_batch"
    assert document["status"] == "failed"


@linux_only
def test_a_reused_step_measures_each_call_s_own_peak(tmp_path: Path) -> None:
    # Batch 0 opens a stage that touches 300 MiB; batches 1 and 2 touch nothing: their peaks are
    # their own, not the first batch's (the reused stage starts each call afresh).
    attempt = TrainingAttempt(tmp_path / "runs", None, check_step=False)
    attempt.start()
    for index in range(3):
        attempt.batch_started()
        if index == 0:
            with attempt.trial.stage("inner"):
                _touch(300)
        attempt.batch_ended()
    attempt.end()
    document = attempt_of(only_attempt(tmp_path / "runs"))
    peaks = {s["pass_index"]: s["memory"]["rss_peak_bytes"] for s in document["stages"]
             if s["name"] == "train_batch"}
    assert peaks[0] - max(peaks[1], peaks[2]) > 250 * 2**20, peaks

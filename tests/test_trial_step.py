"""An adapter's training step: a pass and its one stage begun and ended as one (``Trial._step``,
``pass_loop.Step``), the stage object reused from batch to batch.

Driven in this process as a framework drives the adapters (``TrainingAttempt``), and compared
with what ``trial.passes`` and ``trial.stage`` record for the same work: the step is a faster
path to the same attempt, never a different one.
"""

from __future__ import annotations

import contextlib
import random
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from kernodeck_diagnostic import Trial
from kernodeck_diagnostic.trial import pass_loop, passes, stages
from kernodeck_diagnostic.trial.adapters.attempt import TrainingAttempt
from kernodeck_diagnostic.trial.pass_loop import Step
from trial_helpers import assert_valid_attempt, attempt_of, events_of, only_attempt

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


# What a memory reading or a clock of the event log holds: the process's, not the steps'.
_NOT_THE_STEPS = {"t_ms", "memory", "last_memory", "rss_peak_bytes", "device_peak_bytes",
                  "memory_after_pass", "memory_after_pass_bytes", "growth_per_pass_bytes",
                  "peak_memory_bytes", "attempt_id", "started_at", "ended_at", "command",
                  "runtime", "pytorch", "trace", "tool"}


def _the_steps(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _the_steps(item) for key, item in value.items()
                if key not in _NOT_THE_STEPS}
    if isinstance(value, list):
        return [_the_steps(item) for item in value]
    return value


def _attempt_and_events(where: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    folder = only_attempt(where)
    return attempt_of(folder), events_of(folder)


def _both_ways(run: Any, where: Path) -> tuple[Any, Any]:
    """``run(folder, quiet)`` on the quiet paths, then on the general ones: both results, the
    quiet one's attempt (the first item) checked valid."""
    quiet = run(where / "quiet", True)
    general = run(where / "general", False)
    assert_valid_attempt(quiet[0])
    return quiet, general


TOUCHED = 2226  # the step that touches memory: a quiet one (asserted), after a log call


def _steps_script() -> list[tuple[float, float]]:
    """(the time before a step, its duration) of 3,000 steps: the first ten ever faster, then
    a slow one now and then, a pause of 50 ms every 500 steps (a memory reading is due)."""
    script = random.Random(41)  # noqa: S311 (durations, not secrets)
    return [(0.05 if index % 500 == 0 else 0.00005,
             0.003 - index * 0.0002 if index < 10 else
             0.001 + script.random() * 0.0002 + (0.004 if script.random() < 0.01 else 0.0))
            for index in range(3000)]


@pytest.mark.parametrize("before", ["nothing", "loads", "calls"])
def test_a_quiet_step_keeps_what_the_general_path_keeps(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        before: str) -> None:
    # 3,000 steps on a scripted clock (``_steps_script``), a stage ``log`` between two steps
    # every seventh, and the summaries' doublings. Most steps end quietly (``Step.quiet_path``);
    # with it off every step takes the general path. Both leave the same attempt and the same
    # events, but for what memory readings and clocks hold. ``before``: six passes of 50 ms of
    # another stage (the steps' passes are never among the slowest, their counts not their
    # stage's), or five calls of 50 ms of the steps' own stage outside any pass (their passes
    # are among the slowest where their stage's calls are not): each check is its own.
    steps = _steps_script()
    ended: list[int] = []
    general_exit = stages.Stage.__exit__

    def counted(stage: stages.Stage, *args: Any) -> None:
        if stage.name == "train_batch":  # a step that ended by the general path
            ended.append(1)
        general_exit(stage, *args)

    def run(where: Path, quiet: bool) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        clock = [1000.0]
        monkeypatch.setattr(stages.Stage, "__exit__", counted)
        monkeypatch.setattr(time, "perf_counter", lambda: clock[0])
        monkeypatch.setattr(pass_loop, "perf_counter", lambda: clock[0])  # its own name of it
        monkeypatch.setattr(Step, "quiet_path", quiet)
        monkeypatch.setattr(stages.Stage, "quiet_path", quiet)  # its stages' starts too
        ended.clear()
        with Trial(where, summary=False) as trial:
            for _ in trial.passes(range(6 if before == "loads" else 0)):
                with trial.stage("load"):
                    clock[0] += 0.05
            for _ in range(5 if before == "calls" else 0):
                with trial.stage("train_batch"):
                    clock[0] += 0.05
            with trial.stage("base"):
                pass
            first = trial._loop.next_index
            beacon = Path(trial.folder) / stages.BEACON_FILE
            step = trial._step("train_batch")
            epoch = trial.stage("epoch")  # steps 1500 to 1599 run inside it
            for index, (pause, duration) in enumerate(steps):
                clock[0] += pause
                if index % 7 == 0:
                    with trial.stage("log"):
                        _touch(128 if index == TOUCHED - 7 else 0)  # not a step's peak
                if index in (1500, 1600):
                    epoch.__enter__() if index == 1500 else epoch.__exit__(None, None, None)
                if index == 1550:
                    _touch(96)  # the epoch's, between two steps
                if index == 2100:  # a pass left: decided when the next step is asked for
                    for _ in trial.passes(range(2)):
                        with trial.stage("load"):
                            clock[0] += 0.001
                        break
                    first += 1
                assert step.begin() == first + index
                clock[0] += duration
                if index % 11 == 0:
                    with trial.stage("forward"):
                        pass
                general = len(ended)
                if index == TOUCHED:  # a peak of its own, above every call's before it
                    _touch(64)
                    assert stages.read_beacon(str(beacon))[1:] == (first + index, True)
                step.__exit__(None, None, None)
                if index == TOUCHED:
                    assert len(ended) == general + (not quiet)  # it ended quietly
                    assert stages.read_beacon(str(beacon))[1:] == (first + index, False)
            assert len(ended) < len(steps) // 4 if quiet else len(ended) >= len(steps)
        monkeypatch.undo()
        folder = only_attempt(where)
        return attempt_of(folder), events_of(folder)

    quiet, quiet_events = run(tmp_path / "quiet", True)
    general, general_events = run(tmp_path / "general", False)
    assert_valid_attempt(quiet)
    assert quiet["passes"]["completed"] == len(steps) + (6 if before == "loads" else 0) + 1
    summary = {row["stage"]: row for row in quiet["stage_summary"]}
    assert summary["train_batch"]["count"] == len(steps) + (5 if before == "calls" else 0)
    assert quiet["last_completed_stage"] == "train_batch"
    assert quiet["passes"]["memory_after_pass_indexes"]  # memory read on its schedule
    assert _the_steps(quiet) == _the_steps(general)
    assert _the_steps(quiet_events) == _the_steps(general_events)
    if sys.platform == "linux":  # each call's own CPU peak (clear_refs): the touched step's
        for document in (quiet, general):
            peaks = {row["stage"]: row["rss_peak_bytes"] for row in document["stage_summary"]}
            assert peaks["train_batch"] >= peaks["base"] + 60 * 2**20
            assert peaks["train_batch"] < peaks["log"]  # reset at each step's start
            assert peaks["epoch"] >= peaks["base"] + 90 * 2**20  # kept before a step's reset


def test_a_quiet_stage_keeps_what_the_general_path_keeps(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # A Trial's own loop, on a scripted clock: 2,000 passes of a stage ``train_step`` (with a
    # stage ``forward`` inside it every fifth, a caught failure every 97th), a stage ``log``
    # outside the passes every 50th, memory touched in a few calls. Most starts are quiet
    # (``Stage.quiet_path``); with it off every start takes the general path. Both leave the same
    # attempt and the same events, but for what memory readings and clocks hold; each call's own
    # CPU peak stays its own.
    script = random.Random(7)  # noqa: S311 (durations, not secrets)
    durations = [0.001 + script.random() * 0.0003 for _ in range(2000)]

    def run(where: Path, quiet: bool) -> tuple[dict[str, Any], list[dict[str, Any]], int]:
        clock = [1000.0]
        monkeypatch.setattr(time, "perf_counter", lambda: clock[0])
        monkeypatch.setattr(pass_loop, "perf_counter", lambda: clock[0])  # its own name of it
        monkeypatch.setattr(stages.Stage, "quiet_path", quiet)
        started_quietly = [0]
        with Trial(where, summary=False) as trial:
            recorder = trial._recorder
            asked = recorder.quiet

            def counted(at_end: bool = False) -> bool:
                answer = asked(at_end)
                started_quietly[0] += answer and not at_end
                return answer

            recorder.quiet = counted  # type: ignore[method-assign]
            for index in trial.passes(len(durations)):
                clock[0] += 0.00005
                if index % 50 == 0:
                    with trial.stage("log"):
                        _touch(192 if index == 1500 else 0)  # not a train_step's peak
                with trial.stage("train_step"):
                    clock[0] += durations[index]
                    if index % 5 == 0:
                        with trial.stage("forward"):
                            _touch(64 if index == 1205 else 0)  # the forward's, nested
                    if index == 1234:
                        _touch(128)  # a train_step's own peak, above every one before
                        beacon = stages.read_beacon(str(Path(trial.folder) / stages.BEACON_FILE))
                        assert beacon is not None
                        assert beacon[1:] == (index, True)  # open, in its pass
                if index % 97 == 0:
                    with contextlib.suppress(ValueError), trial.stage("validate"):
                        raise ValueError("caught by the program")
            for _ in trial.passes(3):  # left after its stage ran: the pass counts as completed
                with trial.stage("train_step"):
                    clock[0] += 0.001
                break
            with trial.stage("log"):  # the program goes on: the pass left is decided
                pass
        monkeypatch.undo()
        return (*_attempt_and_events(where), started_quietly[0])

    (quiet, quiet_events, quietly), (general, general_events, generally) = _both_ways(
        run, tmp_path)
    assert quietly > 2000  # most train_step starts, and the log's
    assert generally == 0
    summary = {row["stage"]: row for row in quiet["stage_summary"]}
    assert summary["train_step"]["count"] == 2001
    assert quiet["passes"]["completed"] == 2001
    assert quiet["passes"]["left_at_pass"] == 2000
    assert summary["validate"]["failed"] == len(range(0, 2000, 97))
    assert _the_steps(quiet) == _the_steps(general)
    assert _the_steps(quiet_events) == _the_steps(general_events)
    if sys.platform == "linux":  # each call's own CPU peak (clear_refs), either path
        for document in (quiet, general):
            peaks = {row["stage"]: row["rss_peak_bytes"] for row in document["stage_summary"]}
            assert peaks["train_step"] >= peaks["validate"] + 100 * 2**20
            assert peaks["train_step"] < peaks["log"]  # reset at each start
            assert peaks["forward"] >= peaks["validate"] + 50 * 2**20
            assert peaks["forward"] < peaks["train_step"]


def test_the_calls_and_passes_written_in_full_are_among_the_slowest_kept() -> None:
    # A quiet step's end asks only whether the slowest kept are full (``pass_loop.Step``): the
    # first calls and passes, written in full, must be fewer than those.
    assert stages.SLOWEST_KEPT > stages.FIRST_KEPT
    assert passes.SLOWEST_KEPT > passes.FIRST_KEPT


def test_a_quiet_pass_keeps_what_the_general_path_keeps(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # ``Trial.passes`` over a loader of unknown length, on a scripted clock (``_steps_script``:
    # a slow pass now and then, a pause of 50 ms every 500 passes, a memory reading then): a
    # stage ``train_step`` in most passes, ``prepare`` before it in every third, none in every
    # thirteenth, a caught failure in every 97th, five passes of 40 s and then one of 31 s (not
    # among the slowest: a summary due by time), a loop left at pass 2,050 and a counted one
    # after it. Most passes complete quietly
    # (``PassLoop.quiet_path``); with it off, every one by ``PassLoop.completed``. Both leave the
    # same attempt and the same events, but for what memory readings and clocks hold.
    script = _steps_script()
    general = pass_loop.PassLoop.completed

    def run(where: Path, quiet: bool) -> tuple[dict[str, Any], list[dict[str, Any]], int]:
        clock = [1000.0]
        completed = [0]

        def counted(loop: pass_loop.PassLoop, index: int, duration_ms: float) -> None:
            completed[0] += 1
            general(loop, index, duration_ms)

        monkeypatch.setattr(time, "perf_counter", lambda: clock[0])
        monkeypatch.setattr(pass_loop, "perf_counter", lambda: clock[0])  # its own name of it
        monkeypatch.setattr(pass_loop.PassLoop, "quiet_path", quiet)
        monkeypatch.setattr(pass_loop.PassLoop, "completed", counted)

        def loader(count: int) -> Any:  # a loader of unknown length, its fetch timed
            for index in range(count):
                clock[0] += script[index][0] + (40.0 if 20 <= index < 25 else
                                                31.0 if index == 1700 else 0.0)
                yield index

        with Trial(where, summary=False) as trial:
            for index in trial.passes(loader(2100)):
                if index % 13 == 0:
                    clock[0] += 0.001
                    continue
                if index % 3 == 0:
                    with trial.stage("prepare"):
                        clock[0] += 0.0001
                with trial.stage("train_step"):
                    clock[0] += script[index][1]
                if index % 97 == 0:
                    with contextlib.suppress(ValueError), trial.stage("validate"):
                        raise ValueError("caught by the program")
                if index == 2050:  # left after its stages ran: completed when the program goes on
                    break
            for count, index in enumerate(trial.passes(900)):
                assert index == 2051 + count  # the attempt's pass indexes go on
                with trial.stage("train_step"):
                    clock[0] += script[2100 + count][1]
        monkeypatch.undo()
        return (*_attempt_and_events(where), completed[0])

    (quiet, quiet_events, generally_quiet), (general_document, general_events, generally) = (
        _both_ways(run, tmp_path))
    assert generally == 2050 + 1 + 900  # the pass left, completed when the next loop began
    assert generally_quiet < 300  # the first passes, the slowest, the summaries due
    assert quiet["passes"]["completed"] == 2951
    assert quiet["passes"]["left_at_pass"] == 2050
    summary = {row["stage"]: row for row in quiet["stage_summary"]}
    assert summary["validate"]["failed"] == len([i for i in range(0, 2051, 97) if i % 13])
    assert quiet["passes"]["memory_after_pass_indexes"]  # memory read on its schedule
    assert _the_steps(quiet) == _the_steps(general_document)
    assert _the_steps(quiet_events) == _the_steps(general_events)

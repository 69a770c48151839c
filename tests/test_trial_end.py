"""How an attempt ends, for real: the stage that was running when a SIGKILL came, the trial's own
teardown under a real memory limit, the out-of-memory advice from the measured growth, and the
line the trial prints on stderr (plus its table of stages, on request).

Every application here runs without torch: the toolkit needs none, and Python's own allocator
refusing under RLIMIT_AS raises a real MemoryError.
"""

from __future__ import annotations

import subprocess
import sys
from itertools import islice
from pathlib import Path

import pytest

from kernodeck_diagnostic.report.codes import CODES
from trial_helpers import (
    app_env,
    assert_valid_attempt,
    attempt_of,
    events_of,
    only_attempt,
    run_app,
)

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL, RLIMIT_AS")
SUMMARY_SOME_FAILED = CODES["SUMMARY_SOME_FAILED"].exit_code

# The process kills itself (a real SIGKILL, as the OOM killer sends) inside pass 1's "compute".
KILLED_IN_A_STAGE = """
    import os, signal
    from kernodeck_diagnostic import Trial

    with Trial("runs") as trial:
        with trial.stage("load_weights"):
            pass
        for step in trial.passes(3):
            with trial.stage("prepare"):
                pass
            with trial.stage("compute"):
                if step == 1:
                    os.kill(os.getpid(), signal.SIGKILL)
"""


@posix_only
def test_the_stage_running_at_a_sigkill_is_in_the_events(tmp_path: Path) -> None:
    done = run_app(sys.executable, tmp_path, KILLED_IN_A_STAGE)
    assert done.returncode == -9, done.stderr
    folder = only_attempt(tmp_path / "runs")
    assert not (folder / "attempt.json").exists()
    events = events_of(folder)
    started = [(e["stage"], e["pass_index"]) for e in events if e["event"] == "stage_started"]
    assert started[-1] == ("compute", 1)
    assert started == [("load_weights", None), ("prepare", 0), ("compute", 0), ("prepare", 1),
                       ("compute", 1)]


def test_attempt_json_names_the_last_started_stage(tmp_path: Path) -> None:
    done = run_app(sys.executable, tmp_path, """
        from kernodeck_diagnostic import Trial
        with Trial("runs") as trial:
            with trial.stage("load"):
                pass
            with trial.stage("compute"):
                raise ValueError("boom")
    """)
    assert done.returncode == 1
    attempt = attempt_of(only_attempt(tmp_path / "runs"))
    assert_valid_attempt(attempt)
    assert (attempt["last_started_stage"], attempt["last_completed_stage"]) == ("compute", "load")


# -- the trial's own teardown ----------------------------------------------------------------------

# 10,000 stage records, then the program limits its address space to what it uses plus 2 MiB:
# the work is done, and the trial's teardown must write attempt.json within what is left.
TIGHT_TEARDOWN = """
    import resource
    from kernodeck_diagnostic import Trial

    def address_space():
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024

    with Trial("runs", params={"stages": 10000}) as trial:
        for step in trial.passes(2):
            for index in range(5000):
                with trial.stage("compute"):
                    pass
        limit = address_space() + 2 * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
"""


@posix_only
def test_the_teardown_writes_attempt_json_under_a_tight_memory_limit(tmp_path: Path) -> None:
    done = run_app(sys.executable, tmp_path, TIGHT_TEARDOWN)
    assert "could not be closed" not in done.stderr, done.stderr
    folder = only_attempt(tmp_path / "runs")
    assert (folder / "attempt.json").is_file(), done.stderr
    attempt = attempt_of(folder)
    assert attempt["status"] == "completed"
    # Every call counted; of them, attempt.json keeps the first and the slowest (issue 25).
    [summary] = attempt["stage_summary"]
    assert (summary["stage"], summary["count"], summary["completed"]) == ("compute", 10000, 10000)
    assert len(attempt["stages"]) <= 3 + 5
    ends = [e["event"] for e in events_of(folder)][-2:]
    assert ends == ["work_done", "attempt_ended"]
    assert done.returncode == 0, done.stderr


# -- out-of-memory advice from the measured growth -------------------------------------------------

# Each pass allocates and frees the same 8 MiB (flat growth); pass 6 asks for 1 GiB once, more
# than the address-space limit leaves: a one-off spike, not retained memory. "after": the
# passes all completed and the 1 GiB comes after them.
SPIKE = """
    import resource, sys
    from kernodeck_diagnostic import Trial

    def address_space():
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024

    limit = address_space() + 256 * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    with Trial("runs") as trial:
        for step in trial.passes(8):
            with trial.stage("compute"):
                block = bytearray((2**30 if step == 6 and sys.argv[1] == "spike" else 8 * 2**20))
                del block
        if sys.argv[1] == "after":
            with trial.stage("write_output"):
                block = bytearray(2**30)
"""


@posix_only
def test_a_later_pass_oom_with_flat_growth_says_a_spike_is_likelier(tmp_path: Path) -> None:
    done = run_app(sys.executable, tmp_path, SPIKE, "spike")
    assert done.returncode == 1, done.stderr
    oom = attempt_of(only_attempt(tmp_path / "runs"))["oom"]
    assert (oom["phase"], oom["pass_index"]) == ("later_pass", 6)
    # glibc keeps the first pass's freed block (its mmap threshold rises): one step, then flat.
    assert sum(abs(grown) > 2**20 for grown in oom["growth_per_pass_bytes"]) <= 1
    assert "retained tensors" not in oom["advice"]
    assert "one-off" in oom["advice"]


@posix_only
def test_an_oom_after_the_passes_says_so(tmp_path: Path) -> None:
    done = run_app(sys.executable, tmp_path, SPIKE, "after")
    assert done.returncode == 1, done.stderr
    oom = attempt_of(only_attempt(tmp_path / "runs"))["oom"]
    assert (oom["phase"], oom["pass_index"]) == ("later_pass", None)
    assert "after the passes" in oom["advice"]
    assert "retained tensors" not in oom["advice"]


# -- what the trial prints when an attempt ends ----------------------------------------------------

CONTRACT_FAILS = """
    import sys
    from kernodeck_diagnostic import Trial

    with Trial("runs", summary=sys.argv[1] == "table") as trial:
        with trial.stage("load"):
            pass
        for step in trial.passes(3):
            with trial.stage("compute"):
                pass
        trial.expect_vectors(["a", "b"], [[1.0, 2.0], [float("nan"), 0.0]], dim=2)
"""


def test_a_failed_contract_is_one_line_on_stderr(tmp_path: Path) -> None:
    done = run_app(sys.executable, tmp_path, CONTRACT_FAILS, "line")
    assert done.returncode == 0  # the program's own exit status is its own
    folder = only_attempt(tmp_path / "runs")
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("kernodeck-diagnostic: attempt completed; contract failed: "
                               "vectors (non-finite values"), lines[0]
    assert lines[0].endswith(f"; folder {Path('runs') / folder.name}"), lines[0]
    assert done.stdout == ""


def test_the_table_of_stages_on_request(tmp_path: Path) -> None:
    done = run_app(sys.executable, tmp_path, CONTRACT_FAILS, "table")
    lines = done.stderr.splitlines()
    assert lines[0].startswith("kernodeck-diagnostic: attempt completed; contract failed")
    header = lines[1].split()
    assert header[:3] == ["stage", "count", "failed"], lines
    rows = {line.split()[0]: line.split() for line in lines[2:]}
    assert rows["load"][1:3] == ["1", "0"]
    assert rows["compute"][1:3] == ["3", "0"]


def test_a_failed_attempt_names_its_first_error(tmp_path: Path) -> None:
    done = run_app(sys.executable, tmp_path, """
        from kernodeck_diagnostic import Trial
        with Trial("runs") as trial:
            with trial.stage("compute"):
                raise ValueError("shape mismatch")
    """)
    assert done.returncode == 1
    first = done.stderr.splitlines()[0]
    assert first.startswith("kernodeck-diagnostic: attempt failed; first error in stage "
                            "compute: ValueError: shape mismatch; folder runs"), first


def test_a_trial_used_after_its_end_refuses_instead_of_dropping(tmp_path: Path) -> None:
    """Before: after the with block, stages were silently dropped and expect() returned False;
    start()/end() span cells on purpose, and everything after the end is refused."""
    from kernodeck_diagnostic import Trial

    trial = Trial(tmp_path / "runs").start()
    with trial.stage("load"):
        pass
    assert trial.expect("rows", True)
    trial.end()
    for use in (lambda: trial.stage("late"), lambda: trial.expect("late", True),
                lambda: trial.passes(2), lambda: trial.describe(x=1), trial.end):
        with pytest.raises(RuntimeError, match="this attempt has ended"):
            use()
    with pytest.raises(RuntimeError, match="entered once"), trial:
        pass
    document = attempt_of(Path(str(trial.folder)))
    assert_valid_attempt(document)
    assert document["status"] == "completed"
    assert [stage["name"] for stage in document["stages"]] == ["load"]
    with pytest.raises(RuntimeError, match="has not begun"):
        Trial(tmp_path / "runs").stage("early")


def test_a_stage_error_that_left_its_cell_fails_the_attempt_ended_by_end(
        tmp_path: Path) -> None:
    """A notebook: a cell's stage raises (the cell stops, the attempt goes on), the next cell
    calls ``trial.end()``: the attempt failed with that error, never ``completed``. A stage
    that completed after the error (the program went on past it) lets end() complete it."""
    from kernodeck_diagnostic import Trial

    stopped = Trial(tmp_path / "runs").start()
    with pytest.raises(MemoryError), stopped.stage("forward"):  # the cell's error
        raise MemoryError("no room")
    stopped.end()  # the next cell
    went_on = Trial(tmp_path / "runs").start()
    with pytest.raises(MemoryError), went_on.stage("forward"):
        raise MemoryError("no room")
    with went_on.stage("forward"):  # a smaller batch, tried by the program: it passed
        pass
    went_on.end()
    first = attempt_of(Path(str(stopped.folder)))
    second = attempt_of(Path(str(went_on.folder)))
    assert (first["status"], first["first_error"]["type"]) == ("failed", "MemoryError")
    assert (second["status"], second["first_error"]["type"]) == ("completed", "MemoryError")


def test_end_after_an_interrupted_stage_never_records_completed(tmp_path: Path) -> None:
    """Before: a stage stopped by Ctrl-C (caught by the program, or by IPython's terminal), then
    ``trial.end()``: ``completed``, with an interrupted stage. Now ``interrupted``, whatever ran
    since, with no first error (an interrupt is no error of the program)."""
    from kernodeck_diagnostic import Trial

    trial = Trial(tmp_path / "runs").start()
    with pytest.raises(KeyboardInterrupt), trial.stage("train"):
        raise KeyboardInterrupt
    with trial.stage("save"):  # the program went on
        pass
    trial.end()
    document = attempt_of(Path(str(trial.folder)))
    assert_valid_attempt(document)
    assert document["status"] == "interrupted"
    assert document["first_error"] is None
    assert [stage["status"] for stage in document["stages"]] == ["interrupted", "completed"]
    with pytest.raises(RuntimeError, match="this attempt ended interrupted"):
        trial.stage("late")


def test_a_loop_the_program_leaves_is_no_missing_pass(tmp_path: Path) -> None:
    """``zip(trial.passes(10), loader)`` with a 3-batch loader: pass 3 starts, the loader has no
    more, no work runs in it; ``islice(trial.passes(10), 3)`` and ``zip(loader,
    trial.passes(n))`` stop asking after their last pass's work. Each attempt is
    ``completed``: a pass the program never asked for is not a missing pass; the passes count
    those a stage ran in, and ``left_at_pass`` says where the program stopped. An iterable is
    taken as passes."""
    from kernodeck_diagnostic import Trial

    with Trial(tmp_path / "runs") as whole:
        batches = [batch for batch in whole.passes(iter([[1], [2], [3]]))]
    with Trial(tmp_path / "runs") as cut:
        for _step, _batch in zip(cut.passes(10), [[1], [2], [3]]):
            with cut.stage("step"):
                pass
    with Trial(tmp_path / "runs") as sliced:
        for _step in islice(sliced.passes(10), 3):
            with sliced.stage("step"):
                pass
    with Trial(tmp_path / "runs") as zipped:
        for _batch, _step in zip([[1], [2], [3]], zipped.passes(10)):
            with zipped.stage("step"):
                pass
    assert batches == [[1], [2], [3]]
    first, second, third, fourth = (attempt_of(Path(str(trial.folder)))
                                    for trial in (whole, cut, sliced, zipped))
    assert (first["status"], first["passes"]["requested"], first["passes"]["completed"],
            first["passes"]["left_at_pass"]) == ("completed", 3, 3, None)
    assert (second["status"], second["passes"]["completed"],
            second["passes"]["left_at_pass"]) == ("completed", 3, 3)
    assert (third["status"], third["passes"]["completed"],
            third["passes"]["left_at_pass"]) == ("completed", 3, 2)
    assert (fourth["status"], fourth["passes"]["completed"],
            fourth["passes"]["left_at_pass"]) == ("completed", 3, 2)
    for document in (first, second, third, fourth):
        assert_valid_attempt(document)
    with Trial(tmp_path / "runs") as trial, pytest.raises(TypeError, match="DataLoader"):
        trial.passes(2.5)  # type: ignore[arg-type]


def test_a_pass_left_before_its_work_adds_nothing_to_the_timings_of_passes(
        tmp_path: Path) -> None:
    """A pass left by break before any stage of it ran is not counted; the per-stage timing of
    the passes holds the completed ones only, as the passes do."""
    from kernodeck_diagnostic import Trial

    with Trial(tmp_path / "runs") as trial:
        for index in trial.passes(3):
            if index == 1:
                break
            with trial.stage("step"):
                pass
    document = attempt_of(Path(str(trial.folder)))
    assert (document["status"], document["passes"]["completed"]) == ("completed", 1)
    (step,) = [item for item in document["timings"] if item["stage"] == "step"]
    assert step["first_pass_ms"] is not None
    assert step["later_passes"] is None


def test_an_error_raised_in_a_pass_outside_its_stages_fails_that_pass(tmp_path: Path) -> None:
    """The loop is closed before the error reaches the Trial: the pass is still the failing
    one, never counted as completed."""
    from kernodeck_diagnostic import Trial

    def program(trial: Trial) -> None:
        for index in trial.passes(5):
            with trial.stage("step"):
                pass
            if index == 2:
                raise ValueError("bad batch")

    trial = Trial(tmp_path / "runs")
    with pytest.raises(ValueError, match="bad batch"), trial:
        program(trial)
    document = attempt_of(Path(str(trial.folder)))
    assert document["status"] == "failed"
    assert document["passes"]["completed"] == 2
    assert document["passes"]["first_failed_pass"] == {"index": 2, "stage": None,
                                                       "error_type": "ValueError"}
    assert document["first_error"]["pass_index"] == 2


def test_a_trial_used_from_a_second_thread_is_refused_in_one_line(tmp_path: Path) -> None:
    """A worker thread's stage would land in the main thread's pass, and its error in the
    main thread's attempt: refused where it is made, the attempt unharmed."""
    import threading

    from kernodeck_diagnostic import Trial

    refused: list[BaseException] = []

    def worker(trial: Trial) -> None:
        for use in (lambda: trial.stage("upload"), lambda: trial.passes(2)):
            try:
                use()
            except RuntimeError as error:
                refused.append(error)

    with Trial(tmp_path / "runs") as trial:
        for _ in trial.passes(2):
            with trial.stage("step"):
                thread = threading.Thread(target=worker, args=(trial,))
                thread.start()
                thread.join()
    assert len(refused) == 4  # two uses, in each of the two passes
    for error in refused:
        assert len(str(error).splitlines()) == 1
        assert "thread" in str(error)
    document = attempt_of(Path(str(trial.folder)))
    assert (document["status"], document["passes"]["completed"]) == ("completed", 2)
    assert [item["stage"] for item in document["stage_summary"]] == ["step"]


def test_an_attempt_driven_by_a_framework_gives_sigterm_back(tmp_path: Path) -> None:
    """The adapters hold the signals over their whole end, the Trial's release of SIGTERM
    inside it: the default action comes back all the same."""
    import signal

    from kernodeck_diagnostic.trial.adapters.attempt import TrainingAttempt

    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    attempt = TrainingAttempt(tmp_path / "runs", {}, check_step=False)
    attempt.start()
    assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
    attempt.batch_started()
    attempt.batch_ended()
    attempt.end()
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


# A child forked during the attempt leaves the with block (its own sys.exit, or the end of the
# block): its copy of the attempt ends there too, and must write nothing of its parent's.
FORKED_CHILD_ENDS = """
    import os, signal, sys, time
    from kernodeck_diagnostic import Trial

    case = sys.argv[1]
    child = False
    with Trial("runs") as trial:
        with trial.stage("load"):
            pass
        child = os.fork() == 0
        if child:
            for _ in trial.passes(2):
                with trial.stage("child_work"):  # its own: recorded nowhere
                    pass
            try:
                with trial.stage("child_fails"):  # its error too: no trace, no first error
                    raise ValueError("the child's own")
            except ValueError:
                pass
            if case == "exit":
                sys.exit(0)  # leaves the with block, as the program's own exit would
        else:
            if case == "killed":
                time.sleep(1)  # the child has left the with block by now
            os.waitpid(-1, 0) if case == "exit" else None
            with trial.stage("train"):
                if case == "killed":
                    os.kill(os.getpid(), signal.SIGKILL)  # the OOM killer, in the parent
    if child:
        os._exit(0)
"""


@posix_only
def test_a_forked_child_that_leaves_the_attempt_writes_nothing_of_it(tmp_path: Path) -> None:
    done = run_app(sys.executable, tmp_path, FORKED_CHILD_ENDS, "exit")
    assert done.returncode == 0, done.stderr[-3000:]
    folder = only_attempt(tmp_path / "runs")
    attempt = attempt_of(folder)
    assert_valid_attempt(attempt)
    assert attempt["status"] == "completed"
    assert [item["stage"] for item in attempt["stage_summary"]] == ["load", "train"]
    assert attempt["first_error"] is None
    assert not (folder / "trace.txt").exists()
    events = events_of(folder)
    assert [e["event"] for e in events].count("attempt_ended") == 1
    assert not [e for e in events if "child_" in str(e)
                or ("pass_index" in e and e["pass_index"] is not None)]
    assert done.stderr.count("attempt completed") == 1  # the parent's line alone


@posix_only
def test_a_parent_killed_after_its_forked_child_left_the_attempt_is_no_pass(
        tmp_path: Path) -> None:
    """Was a false pass: the child's copy wrote a completed attempt.json, which stood once the
    parent was killed in its next stage."""
    done = run_app(sys.executable, tmp_path, FORKED_CHILD_ENDS, "killed")
    assert done.returncode == -9, done.stderr[-3000:]
    folder = only_attempt(tmp_path / "runs")
    assert not (folder / "attempt.json").exists()
    assert [e["event"] for e in events_of(folder)][-1] == "stage_started"
    summarized = subprocess.run([sys.executable, "-m", "kernodeck_diagnostic", "summarize",
                                 "runs"], cwd=tmp_path, capture_output=True, text=True,
                                env=app_env(), timeout=120, stdin=subprocess.DEVNULL,
                                check=False)
    assert summarized.returncode == SUMMARY_SOME_FAILED, summarized.stdout
    assert "0 passed, 1 failed" in summarized.stdout
    row = next(line for line in summarized.stdout.splitlines() if "events.jsonl" in line)
    assert row.split()[-1] == "train"  # the parent's stage the kill came in, from its log


# An adapter's attempt in a child forked during it: the child's interpreter exit runs the
# attempt's atexit end in its copy.
FORKED_ADAPTER = """
    import os, sys
    from kernodeck_diagnostic.trial.adapters.attempt import TrainingAttempt

    attempt = TrainingAttempt("runs", {"lr": 0.1}, check_step=False)
    attempt.start()
    for _ in range(3):
        attempt.batch_started()
        attempt.batch_ended(loss=0.5)
    if os.fork() == 0:
        attempt.batch_started()  # a batch of its own, then its exit: atexit ends its copy
        sys.exit(0)
    os.waitpid(-1, 0)
    attempt.batch_started()
    attempt.batch_ended(loss=0.5)
    attempt.end()
"""


@posix_only
def test_a_forked_child_of_an_adapters_attempt_keeps_no_summary_of_it(tmp_path: Path) -> None:
    done = run_app(sys.executable, tmp_path, FORKED_ADAPTER)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "could not be kept" not in done.stderr
    folder = only_attempt(tmp_path / "runs")
    attempt = attempt_of(folder)
    assert attempt["status"] == "completed"
    assert [(item["stage"], item["count"]) for item in attempt["stage_summary"]] == [
        ("train_batch", 4)]
    kept = (folder / "summary.txt").read_text(encoding="utf-8")
    assert "train_batch" in kept
    assert "interrupted" not in kept
    assert done.stderr.count("train_batch") == kept.count("train_batch")  # one table printed

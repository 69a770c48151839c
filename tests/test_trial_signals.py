"""Interrupts and kills of a real program: Ctrl-C and SIGTERM end the attempt as interrupted and
reach the program; SIGKILL leaves every completed stage in events.jsonl."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from trial_helpers import (
    app_env,
    assert_valid_attempt,
    attempt_of,
    events_of,
    only_attempt,
    write_app,
)

pytestmark = pytest.mark.slow

# Two stages complete, then the third waits (a long computation) after saying it started.
APPLICATION = """
    import sys, time
    import torch
    from kernodeck_diagnostic import Trial

    outside = len(sys.argv) > 1  # the wait between two stages, none open
    try:
        with Trial("runs") as trial:
            with trial.stage("load_weights"):
                model = torch.nn.Linear(4, 4)
            with trial.stage("prepare_input"):
                batch = torch.ones(2, 4)
            for step in trial.passes(3):
                with trial.stage("compute"):
                    out = model(batch)
                    if step == 1 and not outside:
                        open("inside-compute", "w").close()
                        time.sleep(60)
                if step == 1 and outside:
                    open("inside-compute", "w").close()
                    time.sleep(60)
    except KeyboardInterrupt:
        print("the program saw KeyboardInterrupt")
        raise
"""
WAIT_S = 60


def _start(python: Path, work: Path, *args: str) -> subprocess.Popen[str]:
    script = write_app(work, APPLICATION)
    process = subprocess.Popen([str(python), script.name, *args], cwd=work, env=app_env(),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + WAIT_S
    while not (work / "inside-compute").exists():
        assert process.poll() is None, process.communicate(timeout=10)
        assert time.monotonic() < deadline, "the application never reached its compute stage"
        time.sleep(0.05)
    return process


@pytest.mark.parametrize(("signum", "returncode", "said"), [
    (signal.SIGINT, -signal.SIGINT, "the program saw KeyboardInterrupt"),
    (signal.SIGTERM, 128 + signal.SIGTERM, ""),
])
def test_an_interrupt_in_a_stage_ends_the_attempt_as_interrupted(
        cpu_torch_python: Path, tmp_path: Path, signum: int, returncode: int,
        said: str) -> None:
    process = _start(cpu_torch_python, tmp_path)
    process.send_signal(signum)
    stdout, stderr = process.communicate(timeout=WAIT_S)
    # The exception went on to the program, which ended as it would without the trial.
    assert process.returncode == returncode, stderr[-3000:]
    assert said in stdout
    folder = only_attempt(tmp_path / "runs")
    attempt = attempt_of(folder)
    assert_valid_attempt(attempt)
    assert attempt["status"] == "interrupted"
    assert attempt["last_completed_stage"] == "compute"  # pass 0's
    assert attempt["first_error"] is None
    assert attempt["passes"]["completed"] == 1
    assert attempt["stages"][-1]["status"] == "interrupted"
    assert attempt["stages"][-1]["pass_index"] == 1
    # SIGTERM names the stage open when it came; Ctrl-C is no signal the trial handles.
    assert attempt["signal"] == ({"signal": "SIGTERM", "stage": "compute", "pass_index": 1}
                                 if signum == signal.SIGTERM else None)
    events = events_of(folder)
    # The stage interrupted, then the program's work over (said before the teardown), then the end.
    shown = [e["event"] for e in events if e["event"] not in ("terminated", "passes_summary")]
    assert shown[-3:] == ["stage_interrupted", "work_done", "attempt_ended"]
    assert events[-2]["status"] == events[-1]["status"] == "interrupted"


def test_a_time_limit_between_stages_names_no_stage(cpu_torch_python: Path,
                                                    tmp_path: Path) -> None:
    """A time limit's SIGTERM that comes while no stage is open names none: not the last one
    started (which had completed)."""
    process = _start(cpu_torch_python, tmp_path, "outside")
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=WAIT_S)
    assert process.returncode == 128 + signal.SIGTERM, stderr[-3000:]
    attempt = attempt_of(only_attempt(tmp_path / "runs"))
    assert_valid_attempt(attempt)
    assert attempt["status"] == "interrupted"
    assert attempt["last_started_stage"] == "compute"
    assert attempt["signal"] == {"signal": "SIGTERM", "stage": None, "pass_index": 1}
    assert "SIGTERM outside every stage" in stderr


def test_sigkill_leaves_every_completed_stage_in_the_event_log(cpu_torch_python: Path,
                                                               tmp_path: Path) -> None:
    process = _start(cpu_torch_python, tmp_path)
    process.kill()
    process.communicate(timeout=WAIT_S)
    assert process.returncode == -signal.SIGKILL
    folder = only_attempt(tmp_path / "runs")
    assert not (folder / "attempt.json").exists()  # never reached: only the log is left
    events = events_of(folder)  # every line whole
    assert [(e["event"], e.get("stage"), e.get("pass_index")) for e in events] == [
        ("attempt_started", None, None),
        ("stage_started", "load_weights", None),
        ("stage_completed", "load_weights", None),
        ("stage_started", "prepare_input", None),
        ("stage_completed", "prepare_input", None),
        ("pass_started", None, 0),
        ("stage_started", "compute", 0),
        ("stage_completed", "compute", 0),
        ("pass_completed", None, 0),
        ("pass_started", None, 1),
        ("stage_started", "compute", 1),  # the stage the SIGKILL came in
    ]


# A pool's worker stuck in native code: a lock this thread holds at the fork, which the worker
# then waits for (as a child can wait on OpenMP's or an allocator's lock, held by a thread of
# the parent that the child does not have).
POOL = """
    import ctypes, multiprocessing, os, select
    from kernodeck_diagnostic import Trial

    libc = ctypes.CDLL(None)
    mutex = ctypes.create_string_buffer(64)  # a pthread_mutex_t (40 bytes on x86_64)
    libc.pthread_mutex_init(mutex, None)
    libc.pthread_mutex_lock(mutex)
    waiting_end, waiting = os.pipe()


    def stuck(_):
        os.write(waiting, b"w")  # about to wait, in native code, where no Python handler runs
        libc.pthread_mutex_lock(mutex)  # held at the fork: waits for ever
        return 0


    with Trial("runs") as trial:
        with trial.stage("preprocess"):
            pool = multiprocessing.get_context("fork").Pool(1)
            pool.map_async(stuck, [0])
            assert select.select([waiting_end], [], [], 60)[0], "the worker never began"
            pool.terminate()  # SIGTERM to its workers, then joins them
            print("pool terminated", flush=True)
"""


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX: fork, process groups")
def test_a_pool_whose_worker_is_stuck_in_native_code_still_terminates(tmp_path: Path) -> None:
    """``Pool.terminate()`` inside an attempt returns, as it does without one: the attempt's
    SIGTERM handler is not its forked workers' (a Python handler never runs in a process stuck
    in native code, which then outlives the signal, and the pool's join waits for ever)."""
    script = write_app(tmp_path, POOL)
    process = subprocess.Popen([sys.executable, script.name], cwd=tmp_path,
                               env=app_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=WAIT_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)  # the program and its stuck worker
        process.communicate(timeout=30)
        pytest.fail(f"Pool.terminate() never returned in {WAIT_S} s")
    assert process.returncode == 0, stderr[-3000:]
    assert "pool terminated" in stdout
    attempt = attempt_of(only_attempt(tmp_path / "runs"))
    assert_valid_attempt(attempt)
    assert attempt["status"] == "completed"

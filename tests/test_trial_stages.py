"""What a stage records for what it costs (issue 25): the event log grows with the distinct
stages, not the calls, and still says what a diagnosis needs; the stage a SIGKILL came in is
known from the beacon; each stage's CPU peak is its own; a ``torch.profiler`` session sees each
stage as a named range.

Real programs (plain Python, and the real CPU torch build for the profiler), real SIGKILLs.
"""

from __future__ import annotations

import json
import math
import os
import random
import select
import signal
import subprocess
import sys
import threading
import time
import types
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest

from kernodeck_diagnostic import Trial
from kernodeck_diagnostic.ramp.rows import rows_of
from kernodeck_diagnostic.trial import memory, signals, stages
from kernodeck_diagnostic.trial.compare import from_events
from trial_helpers import (
    app_env,
    assert_valid_attempt,
    attempt_of,
    events_of,
    only_attempt,
    run_app,
    write_app,
)


def _peak_resettable() -> bool:
    """Whether this process may reset its peak resident size (Linux 4.0+, not forbidden)."""
    try:
        with open("/proc/self/clear_refs", "w") as clear_refs:
            clear_refs.write("5")
    except OSError:
        return False
    return True


linux_only = pytest.mark.skipif(not _peak_resettable(),
                                reason="no /proc/self/clear_refs to reset the peak")

# 240,000 calls of three names (one nested in another, one failing now and then, caught).
MANY_CALLS = """
    from kernodeck_diagnostic import Trial

    with Trial("runs") as trial:
        for step in trial.passes(3):
            for index in range(20_000):
                with trial.stage("fetch"):
                    pass
                with trial.stage("compute"):
                    with trial.stage("fetch"):
                        pass
                try:
                    with trial.stage("write"):
                        if index % 10_000 == 7:
                            raise ValueError("disk full")
                except ValueError:
                    pass
"""


def test_the_event_log_grows_with_the_stages_not_the_calls(tmp_path: Path) -> None:
    done = run_app(sys.executable, tmp_path, MANY_CALLS)
    assert done.returncode == 0, done.stderr
    folder = only_attempt(tmp_path / "runs")
    size = (folder / "events.jsonl").stat().st_size
    assert size < 150_000, size  # 240,000 calls; before: about 1 KB per call
    attempt = attempt_of(folder)
    assert_valid_attempt(attempt)
    summary = {item["stage"]: item for item in attempt["stage_summary"]}
    assert list(summary) == ["fetch", "compute", "write"]  # as they first ran
    assert (summary["fetch"]["count"], summary["fetch"]["completed"]) == (120_000, 120_000)
    assert (summary["write"]["completed"], summary["write"]["failed"]) == (60_000 - 6, 6)
    for item in summary.values():
        assert 0 <= item["min_ms"] <= item["p50_ms"] <= item["p95_ms"] <= item["max_ms"]
        assert len(item["slowest"]) == stages.SLOWEST_KEPT
        assert item["slowest"][0]["duration_ms"] == item["max_ms"]
        assert item["rss_peak_bytes"] > 0
    # Every call is in the timings, per pass.
    timings = {item["stage"]: item for item in attempt["timings"]}
    assert timings["compute"]["later_passes"]["count"] == 2
    # attempt.json keeps the first calls of each name, its first failures and its slowest.
    kept = attempt["stages"]
    assert len(kept) <= 3 * (stages.FIRST_KEPT + stages.SLOWEST_KEPT) + 6
    assert [r["occurrence"] for r in kept if r["name"] == "compute"][:3] == [1, 2, 3]
    assert sum(r["status"] == "failed" for r in kept) == 6
    assert attempt["first_error"]["type"] == "ValueError"
    # The log alone (a killed teardown) says the same counts: the end's summaries are in it.
    read = from_events(str(folder / "events.jsonl"))
    assert read is not None
    assert {item["stage"]: item["count"] for item in read["stage_summary"]} == {
        "fetch": 120_000, "compute": 60_000, "write": 60_000}
    assert {item["stage"]: item["later_passes"]["count"] for item in read["timings"]} == {
        "fetch": 2, "compute": 2, "write": 2}


# Stages run many times; in pass 1 the tenth call of "forward" (nested in "embed") waits, and
# is killed there. Its start is in no line of the log: only its first calls are written in full.
KILLED_INSIDE = """
    import time
    from kernodeck_diagnostic import Trial

    with Trial("runs") as trial:
        for step in trial.passes(2):
            with trial.stage("embed"):
                for index in range(5):
                    with trial.stage("forward"):
                        if step == 1 and index == 4:
                            open("inside", "w").close()
                            time.sleep(600)
            for index in range(20_000):
                with trial.stage("tokenize"):
                    pass
"""


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_the_stage_a_sigkill_came_in_is_known_from_the_beacon(tmp_path: Path) -> None:
    process = subprocess.Popen([sys.executable, write_app(tmp_path, KILLED_INSIDE).name],
                               cwd=tmp_path, env=app_env(), stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while not (tmp_path / "inside").exists():
            assert process.poll() is None
            assert time.monotonic() < deadline
            time.sleep(0.01)
        process.send_signal(signal.SIGKILL)
        process.wait(60)
    finally:
        process.kill()
        process.wait(60)
        if process.stderr is not None:
            process.stderr.close()
    folder = only_attempt(tmp_path / "runs")
    assert not (folder / "attempt.json").exists()
    read = from_events(str(folder / "events.jsonl"))
    assert read is not None
    assert (read["last_started_stage"], read["last_started_pass"], read["last_started_open"]) == (
        "forward", 1, True)
    started = [event for event in events_of(folder) if event["event"] == "stage_started"]
    assert (started[-1]["stage"], started[-1]["pass_index"]) == ("embed", 1)  # the log alone
    counts = {item["stage"]: item["count"] for item in read["stage_summary"]}
    assert counts["tokenize"] >= 16_384  # the latest summary: the count doubled since
    # summarize's row of the killed attempt: the stage it was in, the peak of every call.
    [row] = rows_of(str(folder / "events.jsonl"), "killed")
    # Killed inside a stage: the judge's outcome, the attempt's own status beside it.
    assert (row["status"], row["last_started_stage"]) == ("failed (unfinished)", "forward")
    assert row["peak_memory_bytes"] >= max(item["rss_peak_bytes"]
                                           for item in read["stage_summary"])
    size = (folder / "events.jsonl").stat().st_size
    assert size < 60_000, size


def test_a_kill_at_a_random_moment_leaves_a_beacon_that_names_a_started_stage(
        tmp_path: Path) -> None:
    source = """
        from kernodeck_diagnostic import Trial

        names = ["a", "b", "c"]
        with Trial("runs") as trial:
            open("started", "w").close()
            for index in range(10**9):
                with trial.stage(names[index % 3]):
                    pass
    """
    process = subprocess.Popen([sys.executable, write_app(tmp_path, source).name],
                               cwd=tmp_path, env=app_env(), stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not (tmp_path / "started").exists():
            assert process.poll() is None
            assert time.monotonic() < deadline
            time.sleep(0.01)
        time.sleep(random.uniform(0.2, 0.6))  # noqa: S311 (a moment, not a secret)
        process.send_signal(signal.SIGKILL)
        process.wait(60)
    finally:
        process.kill()
        process.wait(60)
    folder = only_attempt(tmp_path / "runs")
    read = from_events(str(folder / "events.jsonl"))
    assert read is not None
    assert read["last_started_stage"] in ("a", "b", "c")
    assert read["last_started_pass"] is None
    assert isinstance(read["last_started_open"], bool)
    assert all(event["event"] != "work_done" for event in events_of(folder))


# A stage that touches 200 MiB and frees it, then a small one, then both nested in one.
PEAKS = """
    from kernodeck_diagnostic import Trial

    def touch(mib):
        block = bytearray(mib * 2**20)
        for offset in range(0, len(block), 4096):
            block[offset] = 1
        del block

    with Trial("runs") as trial:
        for _ in range(5):
            with trial.stage("big"):
                touch(400)
            with trial.stage("small"):
                touch(1)
        with trial.stage("outer"):
            with trial.stage("inner_big"):
                touch(400)
            with trial.stage("inner_small"):
                touch(1)
        for index in range(6):  # its largest peak in a later call, past the first ones
            with trial.stage("grows"):
                touch(200 if index == 5 else 1)
"""


def _assert_own_peaks(summary: dict[str, int]) -> None:
    # 400 MiB touched: the small stage's peak is its own, not the big one's before it.
    assert summary["big"] - summary["small"] > 380 * 2**20, summary
    assert summary["inner_big"] - summary["inner_small"] > 380 * 2**20, summary
    # The nested stages reset the peak; the enclosing one still has the largest of them.
    assert summary["outer"] >= summary["inner_big"], summary
    # A later call's peak above its name's largest so far is read exact and kept.
    assert summary["grows"] - summary["small"] > 180 * 2**20, summary


def _peaks(folder: Path) -> dict[str, int]:
    return {item["stage"]: item["rss_peak_bytes"]
            for item in attempt_of(only_attempt(folder))["stage_summary"]}


@linux_only
def test_each_stage_has_its_own_cpu_peak(tmp_path: Path) -> None:
    done = run_app(sys.executable, tmp_path, PEAKS)
    assert done.returncode == 0, done.stderr
    _assert_own_peaks(_peaks(tmp_path / "runs"))


# The launcher holds 600 MiB when it starts the program: Linux then reports 600 MiB as the
# program's ru_maxrss, whatever its own peak (the kernel keeps the launcher's at exec). Seen
# first as this file's test above failing in a full serial suite, pytest having grown to 260 MB.
BIG_LAUNCHER = """
    import subprocess, sys
    held = bytearray(600 * 2**20)
    for offset in range(0, len(held), 4096):
        held[offset] = 1
    sys.exit(subprocess.run([sys.executable, "app.py"], timeout=120).returncode)
"""


@linux_only
def test_a_stage_peak_is_the_programs_own_when_a_big_process_launched_it(
        tmp_path: Path) -> None:
    write_app(tmp_path, PEAKS)
    launcher = write_app(tmp_path, BIG_LAUNCHER, "launcher.py")
    done = subprocess.run([sys.executable, launcher.name], cwd=tmp_path, env=app_env(),
                          capture_output=True, text=True, timeout=180,
                          stdin=subprocess.DEVNULL, check=False)
    assert done.returncode == 0, done.stderr
    summary = _peaks(tmp_path / "runs")
    _assert_own_peaks(summary)
    assert summary["small"] < 300 * 2**20, summary  # not the launcher's 600 MiB
    assert summary["big"] < 600 * 2**20, summary


@linux_only
def test_a_reading_not_above_the_largest_kept_needs_no_status_read(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``peak(known)``: a getrusage reading that may be inherited is made exact (a read of
    /proc/self/status) only when it is above what the caller keeps."""
    cpu = memory.CpuMemory()
    cpu.open()
    try:
        cpu.inherited = 2**62  # every reading may be the launcher's: only status can tell
        reads: list[int] = []
        read = cpu.read
        monkeypatch.setattr(cpu, "read", lambda: reads.append(1) or read())
        cpu.reset_peak()
        assert cpu.peak(known=2**61) is not None
        assert reads == []
        assert cpu.peak(known=1024) is not None
        assert cpu.peak() is not None
        assert reads == [1, 1]
    finally:
        cpu.close()


@linux_only
def test_a_peak_another_thread_raised_is_read_by_this_one() -> None:
    """The peak is read with the calling thread's usage (cheaper than the process's): its
    ``ru_maxrss`` is the process's memory all the same, raised here by another thread."""
    import resource  # POSIX only

    cpu = memory.CpuMemory()
    cpu.open()
    try:
        cpu.reset_peak()
        before = cpu.peak() or 0

        def grow() -> None:
            held = bytearray(256 * 2**20)
            for offset in range(0, len(held), 4096):
                held[offset] = 1

        worker = threading.Thread(target=grow)
        worker.start()
        worker.join()
        after = memory._process_peak() or 0
        assert after - before >= 200 * 2**20, (before, after)
        assert after == resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    finally:
        cpu.close()


# A device module as torch's own: ``is_initialized`` reads the module's flag.
DEVICE_MODULE = """
_initialized = False
calls = []
def _is_in_bad_fork():
    return False
def is_initialized():
    calls.append(1)
    return _initialized and not _is_in_bad_fork()
def current_device():
    return 0
"""


def test_a_device_is_in_use_by_its_modules_flag_or_its_replaced_function() -> None:
    """While torch's own flag says not initialised, ``is_initialized()`` is not called; once it
    says so, or where the function was replaced (it may answer otherwise), it is."""
    cuda = types.ModuleType("cuda_of_a_test")
    exec(DEVICE_MODULE, cuda.__dict__)  # noqa: S102 - the test's own module text
    torch = types.SimpleNamespace(cuda=cuda)
    devices = memory.Devices()
    assert devices.in_use(torch) == []
    assert cuda.calls == []
    cuda._initialized = True
    assert [device.name for device in devices.in_use(torch)] == ["cuda:0"]
    assert cuda.calls == [1]

    replaced = types.ModuleType("cuda_replaced")
    exec(DEVICE_MODULE, replaced.__dict__)  # noqa: S102
    replaced.is_initialized = lambda: True  # a mock's answer, the flag still false
    devices = memory.Devices()
    assert [device.name for device in devices.in_use(
        types.SimpleNamespace(cuda=replaced))] == ["cuda:0"]

    # A torch whose is_initialized no longer reads the flag: asked, whatever the flag says.
    other = types.ModuleType("cuda_of_another_torch")
    exec(DEVICE_MODULE.replace("return _initialized and not _is_in_bad_fork()",  # noqa: S102
                               "return not _is_in_bad_fork()"), other.__dict__)
    assert [device.name for device in memory.Devices().in_use(
        types.SimpleNamespace(cuda=other))] == ["cuda:0"]


def _started_device_module(name: str, compiled: str) -> types.ModuleType:
    """A device module as torch's own, its flag set (a device started), whose ``_is_compiled``
    runs ``compiled``."""
    module = types.ModuleType(name)
    exec(DEVICE_MODULE + f"def _is_compiled():\n    {compiled}\n",  # noqa: S102
         module.__dict__)
    module._initialized = True
    return module


def test_a_backend_torch_was_built_without_is_never_asked() -> None:
    """A CPU-only build's ``torch.cuda`` (an XPU module in a CUDA build) can never start: no
    stage asks it, even with its flag set (by hand: no real torch without CUDA sets it). A
    module that cannot say whether it was built in is asked as before."""
    cuda = _started_device_module("cuda_not_built", "return False")
    devices = memory.Devices()
    assert devices.in_use(types.SimpleNamespace(cuda=cuda)) == []
    assert devices.flags(types.SimpleNamespace(cuda=cuda)) == []
    assert cuda.calls == []
    for name, compiled in (("cuda_built", "return True"),
                           ("cuda_cannot_say", "raise RuntimeError('no')")):
        module = _started_device_module(name, compiled)
        assert [device.name for device in memory.Devices().in_use(
            types.SimpleNamespace(cuda=module))] == ["cuda:0"]


@pytest.mark.skipif(not hasattr(signal, "SIGCHLD"), reason="no SIGCHLD (Windows)")
def test_after_sigterm_a_python_sigchld_handler_raises_nothing() -> None:
    """PyTorch's DataLoader raises from its SIGCHLD handler when a worker dies; the workers die of
    the same SIGTERM, perhaps before the attempt's end holds SIGCHLD: from the SIGTERM on, SIGCHLD
    raises nothing, and the program exits 143 (``Terminated``), not 1."""

    def dataloader_handler(signum: int, frame: object) -> None:
        raise RuntimeError("DataLoader worker (pid 1) is killed by signal: Terminated.")

    previous = signal.signal(signal.SIGCHLD, dataloader_handler)
    try:
        with pytest.raises(signals.Terminated):
            signals.terminate(signal.SIGTERM, None)
        signal.raise_signal(signal.SIGCHLD)  # a worker dead of it: nothing raised
    finally:
        signal.signal(signal.SIGCHLD, previous)



def _forked(fork_from_thread: bool, child: Callable[[int], None]) -> bytes:
    """Fork now, from this thread or another one; the child runs ``child(write_end)`` and exits
    (1 when it raised), the parent reads what it wrote. Bounded: a child that says nothing in
    30 s is killed, and its status is checked."""
    read_end, write_end = os.pipe()
    pids: list[int] = []

    def fork() -> None:
        with warnings.catch_warnings():  # 3.12+: a multi-threaded process's fork is warned of
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:
            status = 1
            try:
                child(write_end)
                status = 0
            finally:
                os._exit(status)
        pids.append(pid)

    if fork_from_thread:
        thread = threading.Thread(target=fork, daemon=True)
        thread.start()
        thread.join(timeout=30)
    else:
        fork()
    os.close(write_end)
    try:
        ready, _, _ = select.select([read_end], [], [], 30)
        said = os.read(read_end, 1 << 16) if ready else b""
    finally:
        os.close(read_end)
    assert len(pids) == 1
    deadline = time.monotonic() + 30
    while (done := os.waitpid(pids[0], os.WNOHANG))[0] == 0:
        if time.monotonic() > deadline:
            os.kill(pids[0], signal.SIGKILL)
            os.waitpid(pids[0], 0)
            pytest.fail("the forked child never ended")
        time.sleep(0.01)
    assert os.waitstatus_to_exitcode(done[1]) == 0, said
    return said


def _forked_handlers(fork_from_thread: bool = False) -> dict[str, str]:
    """What a child forked now finds as SIGTERM's, SIGINT's and SIGHUP's handlers (their names)."""

    def handlers(write_end: int) -> None:
        found = {name: signal.getsignal(getattr(signal, name))
                 for name in ("SIGTERM", "SIGINT", "SIGHUP")}
        os.write(write_end, json.dumps({name: getattr(handler, "__name__", str(handler))
                                        for name, handler in found.items()}).encode())

    found: dict[str, str] = json.loads(_forked(fork_from_thread, handlers))
    return found


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork (Windows)")
@pytest.mark.parametrize("fork_from_thread", [False, True])
def test_a_process_forked_during_an_attempt_gets_the_default_sigterm_back(
        tmp_path: Path, fork_from_thread: bool) -> None:
    """A pool's worker, the program's own fork: not the attempt's process. Python's handler for
    SIGTERM would run only between bytecodes, so a child stuck in native code would outlive
    the signal (``Pool.terminate`` then waits for ever: test_trial_signals.py). The parent keeps
    its own; the child gets the default, forked from the main thread or another one."""
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    with Trial(tmp_path / "runs", summary=False):
        assert signal.getsignal(signal.SIGTERM) is signals.terminate
        child = _forked_handlers(fork_from_thread)
        assert signal.getsignal(signal.SIGTERM) is signals.terminate
    assert child["SIGTERM"] == str(signal.SIG_DFL)
    assert child["SIGINT"] == "default_int_handler"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork (Windows)")
def test_a_process_forked_while_an_attempt_is_written_gets_every_held_handler_back() -> None:
    """Forked while the signals are held (an attempt's end): the child's SIGTERM, SIGINT and
    SIGHUP are those the hold replaced (SIGTERM's default where the attempt's was there), none
    of them a hold that would keep a signal for ever; the parent's hold goes on."""

    def own_sighup(signum: int, frame: object) -> None:
        """The program's own handler: the child keeps it."""

    previous = {name: signal.getsignal(getattr(signal, name)) for name in ("SIGTERM", "SIGHUP")}
    signal.signal(signal.SIGTERM, signals.terminate)  # as during an attempt
    signal.signal(signal.SIGHUP, own_sighup)
    try:
        with signals.signals_held():
            held = signal.getsignal(signal.SIGTERM)
            child = _forked_handlers()
            assert signal.getsignal(signal.SIGTERM) is held  # the parent still holds
        assert signal.getsignal(signal.SIGTERM) is signals.terminate
    finally:
        for name, handler in previous.items():
            signal.signal(getattr(signal, name), handler)
    assert child == {"SIGTERM": str(signal.SIG_DFL), "SIGINT": "default_int_handler",
                     "SIGHUP": "own_sighup"}


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork (Windows)")
@pytest.mark.parametrize("fork_from_thread", [False, True])
def test_a_forked_copy_of_an_attempt_reaches_nothing_of_the_parents(
        tmp_path: Path, fork_from_thread: bool) -> None:
    """What the copy's event log holds or is given (an event another thread's fork caught
    between its write and its flush) is flushed nowhere; its stages, contracts and end write
    nothing; a Trial the child enters is its own attempt, in its own folder."""

    def child(write_end: int) -> None:
        trial._log._file.write('{"event": "from_the_child"}\n')  # type: ignore[union-attr]
        trial._log._file.flush()  # type: ignore[union-attr]
        with trial.stage("child_stage"):
            pass
        trial.expect("child_contract", False, "the child's own")
        trial.__exit__(None, None, None)
        with Trial(tmp_path / "child-runs", summary=False) as own, own.stage("own_stage"):
            pass
        os.write(write_end, b"done")

    with Trial(tmp_path / "runs", summary=False) as trial:
        with trial.stage("parent_stage"):
            pass
        assert _forked(fork_from_thread, child) == b"done"
        with trial.stage("parent_after"):
            pass
    parent = only_attempt(tmp_path / "runs")
    log = (parent / "events.jsonl").read_text(encoding="utf-8")
    assert "child" not in log
    assert log.count("attempt_ended") == 1
    attempt = attempt_of(parent)
    assert [item["stage"] for item in attempt["stage_summary"]] == ["parent_stage",
                                                                    "parent_after"]
    assert attempt["contracts"] == []
    own = attempt_of(only_attempt(tmp_path / "child-runs"))
    assert (own["status"], [item["stage"] for item in own["stage_summary"]]) == (
        "completed", ["own_stage"])

PROFILED = """
    import json, sys
    import torch
    from kernodeck_diagnostic import Trial

    with Trial("runs") as trial:
        with trial.stage("before_profiling"):
            torch.ones(4) @ torch.ones(4)
        step = trial._step("train_batch")  # an adapter's: past its first steps, quiet ones
        for _ in range(8):
            step.begin()
            step.__exit__(None, None, None)
        with torch.profiler.profile() as profile:
            with trial.stage("profiled_stage"):
                torch.ones(8, 8) @ torch.ones(8, 8)
            step.begin()
            torch.ones(2) + 1
            step.__exit__(None, None, None)
    print(json.dumps(sorted({event.key for event in profile.key_averages()})))
"""


@pytest.mark.slow
def test_a_profiler_session_sees_each_stage_as_a_named_range(cpu_torch_python: Path,
                                                             tmp_path: Path) -> None:
    done = run_app(cpu_torch_python, tmp_path, PROFILED)
    assert done.returncode == 0, done.stderr[-3000:]
    keys = json.loads(done.stdout.splitlines()[-1])
    assert "profiled_stage" in keys
    assert "train_batch" in keys  # a step that would be quiet sees the session too
    assert "before_profiling" not in keys  # no session then: nothing recorded, nothing spent


def test_a_profiler_is_known_from_torchs_python_flag_else_its_cpp_state() -> None:
    # Asked at each stage's two ends: torch's own Python flag of a running profiler, read live;
    # a torch without it (older ones) is asked through its C++ binding.
    profiler = types.ModuleType("profiler")
    vars(profiler).update(_is_profiler_enabled=False)  # the module's global, as torch's
    asked: list[int] = []

    def enabled() -> bool:
        asked.append(1)
        return True

    flags = stages._profiler_on(profiler, enabled)
    assert flags is vars(profiler)
    assert flags[stages.PROFILER_FLAG] is False
    vars(profiler).update(_is_profiler_enabled=True)  # a profiler started
    assert flags[stages.PROFILER_FLAG] is True
    assert not asked
    assert stages._profiler_on(types.ModuleType("profiler"), enabled)[stages.PROFILER_FLAG]
    assert asked == [1]


def test_the_percentiles_are_exact_then_within_one_percent() -> None:
    rng = random.Random(25)  # noqa: S311 (durations, not secrets)
    durations = [rng.lognormvariate(-3, 1.5) for _ in range(50_000)]
    few = stages.StageStats("few", '"few"', 0)
    for ms in durations[:500]:
        few.add_duration(ms)
    exact = sorted(durations[:500])
    assert few.percentile(0.5) == exact[249]
    assert few.percentile(0.95) == exact[math.ceil(0.95 * 500) - 1]
    many = stages.StageStats("many", '"many"', 1)
    for ms in durations:
        many.add_duration(ms)
    ordered = sorted(durations)
    for fraction in (0.5, 0.95, 0.99):
        found = many.percentile(fraction)
        expected = ordered[math.ceil(fraction * len(ordered)) - 1]
        assert found is not None
        assert abs(found - expected) <= 0.01 * expected, (fraction, found, expected)
    assert many.summary()["max_ms"] == round(ordered[-1], 3)


def test_a_stage_name_redacted_is_tallied_under_the_name_shown(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    from kernodeck_diagnostic import Trial

    monkeypatch.delenv("KERNODECK_RUN_DIR", raising=False)
    private = str(tmp_path / "secret-corpus" / "shard-7.jsonl")
    with Trial(tmp_path / "runs") as trial:
        for _ in trial.passes(2):
            for _ in range(10):
                with trial.stage(f"read {private}"):
                    pass
    text = (only_attempt(tmp_path / "runs") / "attempt.json").read_text(encoding="utf-8")
    attempt = json.loads(text)
    assert str(tmp_path) not in text
    [timing] = attempt["timings"]
    assert timing["stage"].startswith("read ")
    assert timing["stage"].endswith("shard-7.jsonl")
    assert timing["first_pass_ms"] is not None
    assert timing["later_passes"]["count"] == 1


def test_the_beacon_names_the_innermost_stage_running(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Read as a reader after a kill reads it, while the attempt runs: once a nested stage has
    ended, the one around it is running again (an OOM there is its, not the nested one's)."""
    from kernodeck_diagnostic import Trial

    monkeypatch.delenv("KERNODECK_RUN_DIR", raising=False)

    def now(folder: Path) -> tuple[int, int | None, bool] | None:
        return stages.read_beacon(str(folder / stages.BEACON_FILE))

    with Trial(tmp_path / "runs") as trial:
        folder = only_attempt(tmp_path / "runs")
        assert now(folder) is None  # no stage yet
        for index in trial.passes(2):
            with trial.stage("embed"):
                with trial.stage("forward"):
                    assert now(folder) == (1, index, True)
                assert now(folder) == (0, index, True)  # embed again
        assert now(folder) == (0, 1, False)  # none open: the last one
        with trial.stage("forward"):
            assert now(folder) == (1, None, True)
    assert not (folder / stages.BEACON_FILE).exists()  # attempt.json says it now


FORKED = """
    import os
    from kernodeck_diagnostic import OutputLedger, Trial

    ledger = OutputLedger("out.jsonl", sync_interval_s=0.001)
    ledger.append("before", 0)
    with Trial("runs") as trial:
        with trial.stage("parent"):
            pass
        for _ in range(20):  # forks while the ledger's helper may hold its lock
            ledger.append(f"p{_}", _)
            child = os.fork()
            if child == 0:  # a DataLoader worker, say: its stages are its own
                with trial.stage("child"):
                    pass
                ledger.append(f"c{_}", _)
                ledger.close()
                os._exit(0)
            os.waitpid(child, 0)
        with trial.stage("parent"):
            pass
    ledger.close()
"""


def test_a_forked_child_writes_nothing_into_the_parents_attempt_and_never_deadlocks(
        tmp_path: Path) -> None:
    """A child forked during an attempt (a DataLoader's worker): its stages land in neither the
    parent's log nor its beacon, and the ledger's lock, perhaps held by the helper thread at the
    fork, is a fresh one in the child: every append of both, once each."""
    from kernodeck_diagnostic.ledger import read_ledger
    from trial_helpers import attempt_of, events_of, only_attempt, run_app

    done = run_app(sys.executable, tmp_path, FORKED, timeout=60)
    assert done.returncode == 0, done.stderr[-3000:]
    folder = only_attempt(tmp_path / "runs")
    attempt = attempt_of(folder)
    assert [item["stage"] for item in attempt["stage_summary"]] == ["parent"]
    assert [event for event in events_of(folder) if event.get("stage") == "child"] == []
    assert attempt["stage_summary"][0]["count"] == 2
    counts = read_ledger(str(tmp_path / "out.jsonl")).counts
    assert counts == {"before": 1, **{f"p{n}": 1 for n in range(20)},
                      **{f"c{n}": 1 for n in range(20)}}

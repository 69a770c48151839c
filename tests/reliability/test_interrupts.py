"""Interrupts: SIGINT and SIGTERM to the front stop the check cleanly, whatever the worker does.

The worker is a real process stuck for real (in a native call that ignores SIGTERM and SIGINT,
with a forked child, or in a slow import); the signal goes to the front only, as `kill` or a
terminal's Ctrl-C on the front would send it. Each run must end with exit 130 (SIGINT) or 143
(SIGTERM), one line on the terminal saying it was interrupted, no report (not even a partial
file), no process of the worker's tree left, and the private temporary folder removed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from reliability.harness import front_command, recorded_pids, survivors, tagged_env, wait_for

EXITS = {signal.SIGINT: 130, signal.SIGTERM: 143}


def interrupt(pyz: Path, tmp_path: Path, scenario: str, signals: Sequence[signal.Signals], *,
              ready: int, args: Sequence[str] = (),
              **extra: str) -> tuple[subprocess.CompletedProcess[str], str, float]:
    """Start the front, wait until the worker has recorded ``ready`` processes (0: until it
    has started importing torch), send ``signals``."""
    pids_file = tmp_path / "pids"
    marker = tmp_path / "importing"
    (tmp_path / "tmp").mkdir()
    env, tag = tagged_env(scenario, KD_FAKE_TORCH_PIDS=str(pids_file),
                          KD_FAKE_TORCH_MARKER=str(marker), TMPDIR=str(tmp_path / "tmp"),
                          **extra)
    command = front_command(pyz, ["--timeout", "60", "--output", str(tmp_path / "report.json"),
                                  *args], tmp_path / "rss")
    with subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True) as front:
        try:
            wait_for(lambda: marker.exists() and len(recorded_pids(pids_file)) >= ready, 30,
                     "the worker to start")
            sent = time.monotonic()
            for signum in signals:
                os.kill(front.pid, signum)
                time.sleep(0.01)
            stdout, stderr = front.communicate(timeout=30)
        finally:
            if front.poll() is None:
                front.kill()
        ended = time.monotonic() - sent
    return subprocess.CompletedProcess(command, front.returncode, stdout, stderr), tag, ended


def assert_stopped_cleanly(result: subprocess.CompletedProcess[str], tag: str, tmp_path: Path,
                           signum: signal.Signals) -> None:
    assert result.returncode == EXITS[signum], result.stderr
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert f"interrupted by {signum.name}" in lines[0]
    assert not (tmp_path / "report.json").exists()
    assert survivors(tag) == []
    assert list((tmp_path / "tmp").iterdir()) == [], "the private temporary folder was left"


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=lambda s: s.name)
def test_signal_while_the_worker_hangs_in_native_code(pyz: Path, tmp_path: Path,
                                                      signum: signal.Signals) -> None:
    """The worker and its child, both deaf to SIGTERM and SIGINT, are killed at once."""
    result, tag, ended = interrupt(pyz, tmp_path, "hang_in_native_driver_call", [signum],
                                   ready=2)
    assert_stopped_cleanly(result, tag, tmp_path, signum)
    assert ended < 3.0, ended


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=lambda s: s.name)
def test_signal_during_a_slow_import(pyz: Path, tmp_path: Path, signum: signal.Signals) -> None:
    """Interrupted in the import stage (a cold torch import takes seconds): same clean stop."""
    result, tag, _ = interrupt(pyz, tmp_path, "cuda_pass", [signum], ready=0,
                               KD_FAKE_TORCH_IMPORT_DELAY="30")
    assert_stopped_cleanly(result, tag, tmp_path, signum)


@pytest.mark.slow
def test_an_impatient_second_ctrl_c_does_not_break_the_cleanup(pyz: Path,
                                                               tmp_path: Path) -> None:
    """Three SIGINTs in a row: the first stops the check, the others cannot interrupt the
    killing of the worker's tree or the removal of the temporary folder (no traceback)."""
    result, tag, _ = interrupt(pyz, tmp_path, "hang_in_native_driver_call",
                               [signal.SIGINT, signal.SIGINT, signal.SIGINT], ready=2)
    assert "Traceback" not in result.stderr
    assert_stopped_cleanly(result, tag, tmp_path, signal.SIGINT)


@pytest.mark.slow
def test_a_hung_host_tool_is_killed_too(pyz: Path, tmp_path: Path) -> None:
    """With --host-check, a hung nvidia-smi (started by the front in a thread) does not outlive
    the interrupted front either."""
    tools = tmp_path / "bin"
    tools.mkdir()
    smi = tools / "nvidia-smi"
    smi.write_text('#!/bin/sh\necho $$ >> "$KD_FAKE_TORCH_PIDS"\nexec sleep 60\n')
    smi.chmod(0o755)
    result, tag, _ = interrupt(pyz, tmp_path, "hang_in_native_driver_call", [signal.SIGTERM],
                               ready=3, args=["--host-check"],
                               PATH=f"{tools}{os.pathsep}{os.environ['PATH']}")
    assert_stopped_cleanly(result, tag, tmp_path, signal.SIGTERM)


def test_a_child_being_started_when_the_front_ends_is_killed_too(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The race behind a hung nvidia-smi that outlived an interrupted front: the host probe's
    thread had started the tool (it was running) but not yet registered it when the final
    kill_all took its list. The final kill_all now waits for children being started."""
    import threading

    from kernodeck_diagnostic import children as proc

    monkeypatch.setattr(proc, "_LIVE", set())
    monkeypatch.setattr(proc, "_CLOSED", threading.Event())
    real_popen = subprocess.Popen
    running = threading.Event()
    children: list[subprocess.Popen[bytes]] = []

    def slow_to_return(*args: object, **kwargs: object) -> subprocess.Popen[bytes]:
        child = real_popen(*args, **kwargs)  # type: ignore[call-overload]
        children.append(child)
        running.set()
        time.sleep(0.5)  # the thread is not scheduled again for a while
        return child  # type: ignore[no-any-return]

    monkeypatch.setattr(proc.subprocess, "Popen", slow_to_return)
    started: list[object] = []

    def probe() -> None:
        try:
            started.append(proc.spawn(["sleep", "60"], stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL))
        except OSError as refused:
            started.append(refused)

    thread = threading.Thread(target=probe, daemon=True)
    thread.start()
    assert running.wait(10)
    monkeypatch.setattr(proc.subprocess, "Popen", real_popen)
    proc.kill_all(for_good=True)
    assert children[0].poll() == -signal.SIGKILL, "the child being started outlived kill_all"
    assert not proc._LIVE
    thread.join(10)
    assert len(started) == 1
    assert isinstance(started[0], OSError)
    with pytest.raises(OSError, match="ending"):
        proc.spawn(["true"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=lambda s: s.name)
def test_an_interrupt_is_not_swallowed_by_a_handler_of_errors(signum: signal.Signals) -> None:
    """The signal's handler raises wherever the front is. Inside an ``except Exception`` (a
    probe that must never fail the check, the zipapp's importer falling back to compiling), an
    interrupt that is an Exception was swallowed, and the check ran on to its end: a SIGTERM
    during the zipapp's module loading was lost in about 1 run of 8."""
    from kernodeck_diagnostic.children import Interrupted
    from kernodeck_diagnostic.commands.runner import InterruptOnSignals

    with pytest.raises(Interrupted), InterruptOnSignals():
        _a_probe_that_keeps_its_errors(signum)


def _a_probe_that_keeps_its_errors(signum: signal.Signals) -> None:
    try:
        os.kill(os.getpid(), signum)
        time.sleep(5)  # the handler runs here, in this thread
    except Exception:  # noqa: S110 - what a probe does with its own failures
        pass
    pytest.fail("the interrupt was swallowed")

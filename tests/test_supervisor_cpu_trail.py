"""The worker's CPU time in its last seconds (supervision/supervisor.CpuTrail), read for real from
a process that works, then waits: what the time limit's finding judges by."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from kernodeck_diagnostic.supervision.supervisor import CpuTrail

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/<pid>/stat")

# Busy for 1.5 s of its own CPU time, then waiting, as a worker that hangs after its import.
WORKS_THEN_WAITS = """
import time
start = time.process_time()
while time.process_time() - start < 1.5:
    pass
time.sleep(60)
"""


def _follow(trail: CpuTrail, seconds: float) -> None:
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        trail.sample()
        time.sleep(0.05)


def test_a_process_that_waits_at_the_end_used_next_to_no_cpu_in_its_last_seconds() -> None:
    child = subprocess.Popen([sys.executable, "-c", WORKS_THEN_WAITS])
    try:
        trail = CpuTrail(child.pid, timeout_s=8.0)  # a window of 2 s
        assert trail.window == 2.0
        _follow(trail, 1.0)
        busy = trail.last(_cpu(child.pid))  # one second in: busy all along
        # busy all along, as much as a loaded machine gives it (a hang: next to none)
        assert busy is not None and busy[0] > 0.2 * busy[1], busy  # noqa: PT018
        while _cpu(child.pid) < 1.5:  # its work done, whatever the load
            _follow(trail, 0.2)
        _follow(trail, 2.5)
        used, seconds = trail.last(_cpu(child.pid)) or (None, None)
        assert seconds is not None and 2.0 <= seconds < 3.0, seconds  # noqa: PT018
        assert used is not None and used < 0.1, used  # noqa: PT018
    finally:
        child.kill()
        child.wait(10)


def test_the_readings_kept_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """However long the worker runs (an hour's limit), a few seconds of readings are kept."""
    monkeypatch.setattr(CpuTrail, "SPACING_S", 0.0)
    trail = CpuTrail(os.getpid(), timeout_s=3600.0)
    for _ in range(1000):
        trail.sample()
    assert len(trail._readings) == CpuTrail.KEPT
    assert trail.window < CpuTrail.KEPT * 0.25  # the window fits in what is kept


def _cpu(pid: int) -> float:
    from kernodeck_diagnostic.supervision.supervisor import process_cpu_seconds

    value = process_cpu_seconds(pid)
    assert value is not None
    return value

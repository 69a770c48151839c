"""Nothing outlives its limit: a grandchild the application started in a session of its own
(``setsid``: out of the group the limit kills) is gone once ``ramp --attempt-timeout`` ends the
attempt, and once each of resume-check's runs ends (supervision/application.py: the tool is the
subreaper of its attempts and kills what they left behind)."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import SRC, clean_env, pids_gone, run_tool

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="PR_SET_CHILD_SUBREAPER and /proc: Linux")

# Starts a grandchild in a new session (as setsid(1) or a daemon does), writes its pid, then
# waits past any limit. The grandchild's parent (a shell-like middle process) exits at once,
# so the grandchild is an orphan at once, as a daemon is.
APPLICATION = """
import os, subprocess, sys, time
pids = sys.argv[1]
middle = subprocess.Popen([sys.executable, "-c", '''
import os, subprocess, sys
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                         start_new_session=True)
with open(sys.argv[1], "a") as file:
    file.write(f"{child.pid}\\\\n")
''', pids])
middle.wait()
time.sleep(600)
"""


def _orphans(pids_file: Path) -> list[int]:
    return [int(line) for line in pids_file.read_text().split()]


def _survivors(orphans: list[int]) -> list[int]:
    """The orphans still running a moment after the tool ended; killed here (never left
    behind by the test itself when the tool failed to)."""
    alive = pids_gone(orphans)
    for pid in alive:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return alive


def test_a_setsid_grandchild_does_not_outlive_the_attempt_timeout(tmp_path: Path) -> None:
    app, pids = tmp_path / "app.py", tmp_path / "pids"
    app.write_text(textwrap.dedent(APPLICATION), encoding="utf-8")
    done = run_tool(sys.executable, ["-m", "kernodeck_diagnostic"],
                    ["ramp", "--axis", "batch", "--start", "1", "--stop", "1",
                     "--attempt-timeout", "3", "--out", str(tmp_path / "ramp"), "--",
                     sys.executable, str(app), str(pids), "{batch}"],
                    env=clean_env({"PYTHONPATH": str(SRC), "LC_ALL": "C.UTF-8"}), timeout=120)
    assert done.returncode == 24, done.stderr  # RAMP_NOTHING_PASSED: the attempt timed out
    orphans = _orphans(pids)
    assert len(orphans) == 1
    assert _survivors(orphans) == []


def test_a_setsid_grandchild_does_not_outlive_a_resume_check_run(tmp_path: Path) -> None:
    app, pids = tmp_path / "app.py", tmp_path / "pids"
    app.write_text(textwrap.dedent(APPLICATION), encoding="utf-8")
    done = run_tool(sys.executable, ["-m", "kernodeck_diagnostic"],
                    ["resume-check", "--ledger", str(tmp_path / "out.jsonl"), "--stop-after",
                     "2", "--timeout", "3", "--grace", "1", "--", sys.executable, str(app),
                     str(pids)],
                    env=clean_env({"PYTHONPATH": str(SRC), "LC_ALL": "C.UTF-8"}), timeout=120)
    assert done.returncode == 30, done.stderr  # RESUME_RUN_FAILED
    orphans = _orphans(pids)
    assert len(orphans) == 2  # one per run
    assert _survivors(orphans) == []

"""The suite passes however it is started: under `nohup` or as a background job, the signals a
terminal would deliver are inherited as ignored, and the tests that send them to the tool must
still mean a process started from a terminal (conftest.py sets that up)."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

INNER_TEST = '''
import signal, subprocess, sys

def ignored_by_a_child():
    status = subprocess.run([sys.executable, "-c", "print(open('/proc/self/status').read())"],
                            capture_output=True, text=True, timeout=60, check=True).stdout
    line = next(line for line in status.splitlines() if line.startswith("SigIgn:"))
    mask = int(line.split()[1], 16)
    signals = (signal.SIGINT, signal.SIGHUP, signal.SIGTERM)
    return {signum for signum in signals if mask >> (signum - 1) & 1}

def test_children_start_with_the_default_actions():
    assert ignored_by_a_child() == set()

def test_the_suite_itself_still_ignores_what_it_inherited_as_ignored():
    assert signal.getsignal(signal.SIGHUP) not in (signal.SIG_DFL, signal.default_int_handler)
'''


def ignore_hangup_and_interrupt() -> None:
    """What `nohup` and a script's background job do to the suite they start."""
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc (Linux)")
def test_a_suite_started_with_hangup_and_interrupt_ignored_gives_its_children_the_defaults(
        tmp_path: Path) -> None:
    (tmp_path / "test_inner.py").write_text(INNER_TEST, encoding="utf-8")
    inner = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "conftest",
         "--rootdir", str(tmp_path), str(tmp_path / "test_inner.py")],
        capture_output=True, text=True, timeout=120, cwd=tmp_path, check=False,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT / "tests")},
        preexec_fn=ignore_hangup_and_interrupt)
    assert inner.returncode == 0, inner.stdout + inner.stderr
    assert "2 passed" in inner.stdout

"""Launch mistakes of --distributed, made for real: a launcher's SIGTERM while the worker is
started, stray torchrun variables in a Slurm job, a store address that does not resolve or
refuses, ranks that disagree on the world size, a store port another program holds."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import SRC, assert_valid_report
from kernodeck_diagnostic.facts.launcher import detect
from kernodeck_diagnostic.supervision.process import kill_tree, spawn
from test_distributed import free_port, rank_env

# The worker's first step, as the front starts it: SIGTERM arrives while it is still blocked.
_CHILD = ("import sys, time; sys.path.insert(0, sys.argv[1]); time.sleep(0.5); "
          "from kernodeck_diagnostic.worker.stages import release_sigterm; release_sigterm(); "
          "print('alive', flush=True); time.sleep(0.3)")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_sigterm_meant_for_the_front_before_the_worker_runs_does_not_kill_it() -> None:
    """Between the fork and its own session the worker is in the front's group, which torchrun
    signals: SIGTERM is blocked across the fork and a pending one discarded by the worker."""
    for hold, alive in ((True, True), (False, False)):
        child = spawn([sys.executable, "-c", _CHILD, str(SRC)], stdout=subprocess.PIPE,
                      stderr=subprocess.DEVNULL, hold_sigterm=hold)
        try:
            child.send_signal(signal.SIGTERM)  # at once: the child is still starting
            out, _ = child.communicate(timeout=30)
        finally:
            kill_tree(child)
        assert (b"alive" in out) is alive, (hold, child.returncode)
    # Afterwards SIGTERM stops it as before (unblocked, the default action).
    child = spawn([sys.executable, "-c", _CHILD.replace("0.3", "30"), str(SRC)],
                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, hold_sigterm=True)
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == b"alive\n"
        child.send_signal(signal.SIGTERM)
        assert child.wait(timeout=30) == -signal.SIGTERM
    finally:
        kill_tree(child)

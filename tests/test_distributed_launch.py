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


SLURM_TASK = {"SLURM_PROCID": "1", "SLURM_NTASKS": "3", "SLURM_LOCALID": "1",
              "SLURM_NODEID": "0", "SLURM_JOB_ID": "77", "SLURM_STEP_ID": "0",
              "SLURM_STEP_NODELIST": "node[01-02]"}


def test_world_size_exported_into_a_slurm_job_is_ignored_with_a_warning() -> None:
    launch = detect({**SLURM_TASK, "WORLD_SIZE": "8"})
    assert (launch.launcher, launch.rank, launch.world_size) == ("slurm", 1, 3)
    assert launch.ignored == ("WORLD_SIZE",)
    # Every torchrun variable set: torchrun's ranks (srun starting torchrun).
    both = detect({**SLURM_TASK, "RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0",
                   "MASTER_ADDR": "h", "MASTER_PORT": "29500"})
    assert (both.launcher, both.ignored) == ("torchrun", ())
    # No Slurm job around it: torchrun's usage error, as before.
    completed = subprocess.run(
        [sys.executable, "-m", "kernodeck_diagnostic", "--distributed", "--device", "cpu"],
        env=rank_env({"WORLD_SIZE": "2"}), capture_output=True, text=True, timeout=60,
        check=False)
    assert completed.returncode == 2 and "RANK, LOCAL_RANK" in completed.stderr


def _srun(python: Path, tasks: int, folder: Path, env: dict[str, str],
          timeout: int = 20) -> subprocess.CompletedProcess[str]:
    from test_slurm import slurm_up

    reason = slurm_up()
    if reason is not None:
        pytest.skip(reason)
    return subprocess.run(
        ["srun", "-O", "-n", str(tasks), "--time", "2", str(python), "-m",
         "kernodeck_diagnostic", "--distributed", "--device", "cpu", "--timeout", str(timeout),
         "--output", str(folder / "report-{rank}.json")],
        env=env, cwd=folder, capture_output=True, text=True, timeout=150, check=False)


@pytest.mark.slow
def test_world_size_exported_into_a_real_slurm_job_still_passes(cpu_torch_python: Path,
                                                                tmp_path: Path) -> None:
    completed = _srun(cpu_torch_python, 2, tmp_path, rank_env({"WORLD_SIZE": "5"}))
    assert completed.returncode == 0, completed.stderr
    assert "WORLD_SIZE set without the rest of torchrun's variables" in completed.stderr
    verdict = json.loads((tmp_path / "report-0.json").read_text(encoding="utf-8"))
    assert_valid_report(verdict)
    assert (verdict["code"], verdict["distributed"]["world_size"]) == ("CPU_CHECK_PASSED", 2)

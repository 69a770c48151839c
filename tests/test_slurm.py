"""--distributed under a real single-node Slurm (munge, slurmctld and slurmd from Debian's
packages on loopback, brought up by scripts/slurm-up, which scripts/test runs as root).

``srun -O -n 3`` starts three tasks of the real CPU build of torch; each finds its rank in
SLURM_PROCID, and the store's place is derived (the first host of the step's node list, a port
from the job and step ids): no MASTER_ADDR or MASTER_PORT is set.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import FAKES, SRC, assert_valid_report
from test_distributed import rank_env


def slurm_up() -> str | None:
    """Why Slurm cannot be used here, or None when a node is idle."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "Slurm's daemons run as root here: not root (scripts/slurm-up starts them)"
    if shutil.which("srun") is None or shutil.which("sinfo") is None:
        return "Slurm is not installed (scripts/slurm-up installs slurm-wlm and munge as root)"
    try:
        states = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True,
                                timeout=10, check=False).stdout.split()
    except (OSError, subprocess.TimeoutExpired):
        states = []
    if "idle" not in states and "mixed" not in states:
        return "Slurm is not up (run scripts/slurm-up as root)"
    return None


def require_slurm() -> None:
    """Skipped when Slurm cannot be used here; in CI as root, where scripts/test brings it up,
    a failed start is a failure."""
    reason = slurm_up()
    if reason is not None:
        in_ci_as_root = os.environ.get("CI") == "true" and getattr(os, "geteuid", lambda: 1)() == 0
        (pytest.fail if in_ci_as_root else pytest.skip)(reason)


@pytest.mark.slow
def test_srun_three_tasks_pass_for_real(cpu_torch_python: Path, tmp_path: Path) -> None:
    require_slurm()
    completed = subprocess.run(
        ["srun", "-O", "-n", "3", "--time", "2", str(cpu_torch_python), "-m",
         "kernodeck_diagnostic", "--distributed", "--device", "cpu", "--timeout", "30",
         "--output", str(tmp_path / "report-{rank}.json")],
        env=rank_env(), cwd=tmp_path, capture_output=True, text=True, timeout=150,
        check=False)
    assert completed.returncode == 0, completed.stderr
    found = {}
    for rank in range(3):
        found[rank] = json.loads((tmp_path / f"report-{rank}.json").read_text(encoding="utf-8"))
        assert_valid_report(found[rank])
        assert found[rank]["code"] == "CPU_CHECK_PASSED"
    block = found[0]["distributed"]
    assert (block["launcher"], block["world_size"]) == ("slurm", 3)
    assert block["collective"] == {**block["collective"], "status": "passed", "expected": 6,
                                   "observed": 6}
    assert [entry["rank"] for entry in block["ranks"]] == [0, 1, 2]
    assert {entry["node"] for entry in block["ranks"]} == {0}
    assert block["missing_ranks"] == []
    assert completed.stdout.count("PASSED CPU_CHECK_PASSED") == 1


# The launcher's own stop, by Slurm for real: the check's only rank held in a slow import of torch
# (the fake build: nothing here needs a GPU, but a real import cannot be made slow on purpose),
# far from its own --timeout, when Slurm sends the step SIGTERM.
STOPPED_TIMEOUT_S = 120  # the most --timeout allows: the launcher's stop, not it, ends the check


def _slow_step(folder: Path, name: str, *srun_options: str) -> subprocess.Popen[str]:
    marker = folder / "imported"
    # The tool's private folder in the test's own: srun's SIGTERM kills every process of the
    # step (SIGKILL), none left to remove it (docs/scale.md), and the suite leaves /tmp clean.
    private = folder / "tmp"
    private.mkdir(exist_ok=True)
    env = rank_env({"PYTHONPATH": os.pathsep.join([str(FAKES), str(SRC)]),
                    "KD_FAKE_TORCH": "cpu_only", "KD_FAKE_TORCH_IMPORT_DELAY": "300",
                    "KD_FAKE_TORCH_MARKER": str(marker), "TMPDIR": str(private)})
    step = subprocess.Popen(
        ["srun", "-O", "-n", "1", "-J", name, *srun_options, sys.executable, "-m",
         "kernodeck_diagnostic", "--distributed", "--device", "cpu", "--timeout",
         str(STOPPED_TIMEOUT_S), "--output", str(folder / "report-{rank}.json")],
        env=env, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    until = time.monotonic() + 60  # a busy node may queue the job a while
    while not marker.exists() and step.poll() is None and time.monotonic() < until:
        time.sleep(0.2)
    if not marker.exists():
        step.kill()
        pytest.fail(f"the step never reached torch's import: {step.communicate()[1]}")
    return step


def _job_id(name: str) -> str:
    return subprocess.run(["squeue", "-h", "-n", name, "-o", "%i"], capture_output=True,
                          text=True, timeout=10, check=True).stdout.strip()


def _ended(step: subprocess.Popen[str], name: str) -> str:
    """srun's stderr, once its job has left the queue (a completing job keeps the node from
    idle, which the next test of Slurm waits for)."""
    try:
        _, stderr = step.communicate(timeout=STOPPED_TIMEOUT_S)
    finally:
        step.kill()
    until = time.monotonic() + 30
    while _job_id(name) and time.monotonic() < until:
        time.sleep(0.5)
    return stderr


def _stopped_report(step: subprocess.Popen[str], name: str, folder: Path, why: str,
                    since: float) -> None:
    stderr = _ended(step, name)
    # Within the launcher's hurry (18 s, supervision/supervisor.py), far below --timeout.
    assert time.monotonic() - since < 30, stderr
    report = json.loads((folder / "report-0.json").read_text(encoding="utf-8"))
    assert_valid_report(report)
    assert report["distributed"]["launcher_stopped"] is True
    assert report["distributed"]["launcher_stop"] == why
    assert (report["code"], report["stage"]) == ("TIMEOUT", "import")
    assert report["error"]["message_key"] == f"error.launcher_stop.{why}"
    # Never "no result within 120 s", never "examine the environment": the job was stopped.
    assert f"{STOPPED_TIMEOUT_S} s" not in report["error"]["message"]
    assert report["next_action"].startswith("Nothing was proven on this node")


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="Slurm")
def test_a_cancelled_step_says_the_launcher_stopped_it(tmp_path: Path) -> None:
    require_slurm()
    # Before the job's time limit: "cancelled", from the task's end time where Slurm sets it,
    # else from what its controller says of the job to rank 0 (Slurm 22.05).
    why = "cancelled"
    name = f"kd-cancel-{os.getpid()}"
    step = _slow_step(tmp_path, name, "--time", "3")
    since = time.monotonic()
    subprocess.run(["scancel", _job_id(name)], timeout=10, check=True)
    _stopped_report(step, name, tmp_path, why, since)


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="Slurm")
def test_sigterm_to_srun_kills_the_step_at_once_as_docs_scale_says(tmp_path: Path) -> None:
    """srun's own SIGTERM is no SIGTERM to the tasks: srun kills the step (SIGKILL), which no
    process can outlive to write a report; docs/scale.md says so, and advises scancel."""
    require_slurm()
    name = f"kd-srun-term-{os.getpid()}"
    step = _slow_step(tmp_path, name, "--time", "3")
    step.send_signal(signal.SIGTERM)
    stderr = _ended(step, name)
    assert "forcing job termination" in stderr, stderr
    assert "Killed" in stderr, stderr
    assert not (tmp_path / "report-0.json").exists()


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="Slurm")
def test_a_step_past_its_time_limit_says_the_launcher_stopped_it(tmp_path: Path) -> None:
    require_slurm()
    why = "time_limit"  # as above: the end time, or the controller's "Reason=TimeLimit"
    # --time 1, Slurm's shortest: its SIGTERM comes at 60 s or at its next check after.
    name = f"kd-limit-{os.getpid()}"
    step = _slow_step(tmp_path, name, "--time", "1")
    stderr = _ended(step, name)
    assert "DUE TO TIME LIMIT" in stderr, stderr
    report = json.loads((tmp_path / "report-0.json").read_text(encoding="utf-8"))
    assert_valid_report(report)
    assert (report["distributed"]["launcher_stopped"],
            report["distributed"]["launcher_stop"]) == (True, why)
    assert (report["code"], report["error"]["message_key"]) == ("TIMEOUT",
                                                              f"error.launcher_stop.{why}")
    assert report["next_action"].startswith("Nothing was proven on this node")

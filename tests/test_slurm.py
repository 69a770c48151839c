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
import subprocess
from pathlib import Path

import pytest

from conftest import assert_valid_report
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


@pytest.mark.slow
def test_srun_three_tasks_pass_for_real(cpu_torch_python: Path, tmp_path: Path) -> None:
    reason = slurm_up()
    if reason is not None:
        # CI runs as root and scripts/test brings Slurm up there: a failed start is a failure.
        in_ci_as_root = os.environ.get("CI") == "true" and getattr(os, "geteuid", lambda: 1)() == 0
        (pytest.fail if in_ci_as_root else pytest.skip)(reason)
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

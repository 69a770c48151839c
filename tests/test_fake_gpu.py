"""GPU situations this machine cannot produce, through the fake torch (tests/fakes/torch)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conftest import Result, assert_valid_report, fake_gpu_env, pids_gone, run_tool


def check(pyz: Path, tmp_path: Path, scenario: str, *args: str, **extra: str) -> Result:
    out = tmp_path / f"{scenario}.json"
    result = run_tool(sys.executable, pyz, [*args, "--output", str(out)],
                      env=fake_gpu_env(scenario, **extra))
    assert result.report is not None, result.stdout + result.stderr
    assert_valid_report(result.report)
    assert "Traceback" not in result.stdout + result.stderr
    return result


def test_cuda_pass(pyz: Path, tmp_path: Path) -> None:
    result = check(pyz, tmp_path, "cuda_pass")
    assert result.returncode == 0
    assert result.headline == "PASSED GPU_CHECK_PASSED (exit 0) at stage compute"
    report = result.report
    assert report["execution"] == {**report["execution"], "device": "cuda:0",
                                   "product_verified": True, "gradient_verified": True,
                                   "loss": 196, "synchronized": True}
    assert report["pytorch"]["backend"] == "cuda"
    assert report["pytorch"]["gpu_available"] is True
    assert report["pytorch"]["visible_device_count"] == 1
    device = report["pytorch"]["devices"][0]
    assert device == {"index": 0, "name": "NVIDIA GeForce RTX 5070", "capability": "12.0",
                      "total_memory_bytes": 12 * 2**30,
                      # mem_get_info before the computation: all but this process's context
                      "free_memory_bytes": 12 * 2**30 - 300 * 2**20}


def test_rocm_pass_uses_the_cuda_device_name(pyz: Path, tmp_path: Path) -> None:
    result = check(pyz, tmp_path, "rocm_pass")
    assert result.returncode == 0
    report = result.report
    assert report["code"] == "GPU_CHECK_PASSED"
    assert report["pytorch"]["backend"] == "rocm"
    assert report["pytorch"]["hip_build"] == "6.3.42131"
    assert report["pytorch"]["cuda_build"] is None
    assert report["execution"]["device"] == "cuda:0"


def test_index_beyond_the_visible_devices(pyz: Path, tmp_path: Path) -> None:
    result = check(pyz, tmp_path, "cuda_pass", "--device-index", "3", KD_FAKE_DEVICES="2")
    assert result.returncode == 7
    report = result.report
    assert (report["code"], report["stage"]) == ("DEVICE_INDEX_INVALID", "device")
    assert report["pytorch"]["visible_device_count"] == 2
    assert len(report["pytorch"]["devices"]) == 2
    assert report["request"]["device_index"] == 3


def test_wrong_product_is_check_failed(pyz: Path, tmp_path: Path) -> None:
    result = check(pyz, tmp_path, "wrong_product")
    assert result.returncode == 8
    report = result.report
    assert (report["code"], report["stage"]) == ("CHECK_FAILED", "compute")
    assert report["execution"]["product_verified"] is False
    assert report["error"]["step"] == "verify"


def test_out_of_memory_at_allocation(pyz: Path, tmp_path: Path) -> None:
    result = check(pyz, tmp_path, "oom_at_allocation")
    assert result.returncode == 9
    report = result.report
    assert (report["code"], report["stage"]) == ("OUT_OF_MEMORY", "compute")
    assert report["error"]["step"] == "allocate"
    assert report["error"]["type"] == "OutOfMemoryError"


def test_error_at_synchronization_is_runtime_error(pyz: Path, tmp_path: Path) -> None:
    result = check(pyz, tmp_path, "error_at_synchronize")
    assert result.returncode == 9
    report = result.report
    assert (report["code"], report["stage"]) == ("RUNTIME_ERROR", "compute")
    assert report["error"]["step"] == "synchronize"
    assert "illegal memory access" in report["error"]["message"]
    assert "\n" not in report["error"]["message"]


def test_hang_in_synchronization_times_out_and_leaves_nothing(pyz: Path, tmp_path: Path) -> None:
    pids_file = tmp_path / "pids"
    result = check(pyz, tmp_path, "hang_in_synchronize", "--timeout", "5",
                   KD_FAKE_TORCH_PIDS=str(pids_file))
    assert result.returncode == 10
    assert result.elapsed_s < 5 + 2, result.elapsed_s
    report = result.report
    assert (report["code"], report["stage"]) == ("TIMEOUT", "compute")
    assert report["error"]["step"] == "synchronize"
    pids = [int(pid) for pid in pids_file.read_text().split()]
    assert len(pids) == 2  # the worker and the child it forked
    assert pids_gone(pids) == []


def test_segfault_is_worker_failed_with_the_signal(pyz: Path, tmp_path: Path) -> None:
    result = check(pyz, tmp_path, "segfault_in_compute")
    assert result.returncode == 11
    report = result.report
    assert (report["code"], report["stage"]) == ("WORKER_FAILED", "compute")
    assert report["error"]["step"] == "product"
    assert "SIGSEGV" in report["error"]["message"]


@pytest.mark.parametrize("scenario", ["cuda_pass", "rocm_pass"])
def test_gpu_facts_are_not_queried_in_cpu_mode(pyz: Path, tmp_path: Path, scenario: str) -> None:
    result = check(pyz, tmp_path, scenario, "--device", "cpu")
    assert result.returncode == 0
    report = result.report
    assert report["code"] == "CPU_CHECK_PASSED"
    assert report["pytorch"]["gpu_available"] is None
    assert report["pytorch"]["visible_device_count"] is None
    assert report["pytorch"]["devices"] == []
    assert report["execution"]["device"] == "cpu"

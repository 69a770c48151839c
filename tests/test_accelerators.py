"""Accelerators beyond CUDA and ROCm: Apple MPS and Intel XPU, through the fake torch (no such
hardware here; tests/fakes/torch/_devices.py), and a real CPU build that has neither."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from accelerator_fixtures import mps_unavailable
from conftest import Result, assert_valid_report, fake_gpu_env, run_tool
from findings_helpers import ids, report
from kernodeck_diagnostic.report.findings import derive

CUDA_ADVICE = ("download.pytorch.org/whl/cu", "CUDA build", "NVIDIA")


def check(pyz: Path, tmp_path: Path, scenario: str, *args: str) -> Result:
    out = tmp_path / f"{scenario}.json"
    result = run_tool(sys.executable, pyz, [*args, "--output", str(out)],
                      env=fake_gpu_env(scenario))
    assert result.report is not None, result.stdout + result.stderr
    assert_valid_report(result.report)
    assert "Traceback" not in result.stdout + result.stderr
    return result


def finding(report: dict[str, Any], finding_id: str) -> dict[str, Any]:
    found = [item for item in report["findings"] if item["id"] == finding_id]
    assert found, [item["id"] for item in report["findings"]]
    return found[0]


def no_cuda_advice(report: dict[str, Any]) -> None:
    """An MPS or XPU build is never called CPU-only, nor told to install a CUDA build."""
    assert report["code"] != "GPU_BACKEND_ABSENT"
    assert "CPU_ONLY_BUILD" not in [item["id"] for item in report["findings"]]
    said = " ".join([report["summary"], report["next_action"],
                     *(item["summary"] + " " + item["next_action"] for item in report["findings"])])
    assert not [words for words in CUDA_ADVICE if words in said], said


def test_apple_silicon_runs_the_computation_on_mps(pyz: Path, tmp_path: Path) -> None:
    result = check(pyz, tmp_path, "mps_apple_silicon")
    assert result.returncode == 0
    assert result.headline == "PASSED GPU_CHECK_PASSED (exit 0) at stage compute"
    report = result.report
    assert report["pytorch"]["backend"] == "mps"
    assert (report["pytorch"]["cuda_build"], report["pytorch"]["hip_build"]) == (None, None)
    assert report["pytorch"]["mps"] == {"available": True, "macos_version": "14.5",
                                        "machine": "arm64", "translated": None}
    assert report["execution"] == {**report["execution"], "device": "mps",
                                   "product_verified": True, "gradient_verified": True,
                                   "loss": 196, "synchronized": True}
    assert "on mps" in result.stdout
    no_cuda_advice(report)


@pytest.mark.parametrize(("scenario", "says"), [
    ("mps_macos_too_old", "macOS 12.6 is too old"),
    ("mps_x86_under_rosetta", "runs as x86_64 (under Rosetta 2"),
    ("mps_in_virtual_machine", "no Metal GPU it can use"),
])
def test_a_mac_whose_mps_is_unavailable_is_told_why(pyz: Path, tmp_path: Path, scenario: str,
                                                     says: str) -> None:
    result = check(pyz, tmp_path, scenario)
    assert result.returncode == 6
    report = result.report
    assert (report["code"], report["stage"]) == ("GPU_UNAVAILABLE", "device")
    assert report["error"]["message"] == "torch.backends.mps.is_available() is False"
    assert report["pytorch"]["backend"] == "mps"
    assert report["pytorch"]["mps"]["available"] is False
    assert says in finding(report, "MPS_UNAVAILABLE")["summary"]
    assert "MPS_UNAVAILABLE" in result.stdout
    no_cuda_advice(report)


def test_mps_has_one_device(pyz: Path, tmp_path: Path) -> None:
    result = check(pyz, tmp_path, "mps_apple_silicon", "--device-index", "1")
    assert result.returncode == 7
    assert result.report["code"] == "DEVICE_INDEX_INVALID"
    assert result.report["error"]["message"] == "device index 1 of 1 visible"


def test_intel_arc_runs_the_computation_on_xpu(pyz: Path, tmp_path: Path) -> None:
    result = check(pyz, tmp_path, "xpu_intel_arc")
    assert result.returncode == 0
    report = result.report
    assert report["code"] == "GPU_CHECK_PASSED"
    assert (report["pytorch"]["backend"], report["pytorch"]["xpu_build"]) == ("xpu", "20250101")
    assert report["pytorch"]["devices"] == [{
        "index": 0, "name": "Intel(R) Arc(TM) A770 Graphics", "capability": None,
        "total_memory_bytes": 16 * 2**30}]
    assert report["execution"]["device"] == "xpu:0"
    assert report["execution"]["synchronized"] is True
    assert "xpu:0    Intel(R) Arc(TM) A770 Graphics" in result.stdout
    no_cuda_advice(report)


def test_the_device_index_applies_to_xpu(pyz: Path, tmp_path: Path) -> None:
    chosen = check(pyz, tmp_path, "xpu_two_devices", "--device-index", "1")
    assert chosen.returncode == 0
    assert chosen.report["execution"]["device"] == "xpu:1"
    assert chosen.report["pytorch"]["visible_device_count"] == 2
    (tmp_path / "beyond").mkdir()
    beyond = check(pyz, tmp_path / "beyond", "xpu_two_devices", "--device-index", "2")
    assert beyond.returncode == 7
    assert beyond.report["error"]["message"] == "device index 2 of 2 visible"


def test_an_xpu_build_without_its_driver_is_unavailable_not_cpu_only(pyz: Path,
                                                                      tmp_path: Path) -> None:
    result = check(pyz, tmp_path, "xpu_without_driver")
    assert result.returncode == 6
    report = result.report
    assert (report["code"], report["stage"]) == ("GPU_UNAVAILABLE", "device")
    assert report["error"]["message"] == "torch.xpu.is_available() is False"
    assert report["error"]["message_values"] == {"call": "torch.xpu.is_available()"}
    no_cuda_advice(report)


def test_the_unavailable_sentence_is_translated(pyz: Path, tmp_path: Path) -> None:
    result = run_tool(sys.executable, pyz, ["--lang", "fr"],
                      env=fake_gpu_env("xpu_without_driver"))
    assert "torch.xpu.is_available() vaut False" in result.stdout


@pytest.mark.parametrize(("macos", "machine", "translated", "variant"), [
    ("14.5", "x86_64", True, "rosetta"),
    ("14.5", "x86_64", None, "rosetta"),  # translation unknown: an x86_64 process says enough
    ("13.6", "arm64", False, "macos_too_old"),
    ("15.1", "arm64", False, "no_device"),
    ("14.5", "x86_64", False, "no_device"),  # an Intel Mac: nothing is translated
])
def test_mps_unavailable_names_the_cause(macos: str, machine: str, translated: bool | None,
                                         variant: str) -> None:
    derived = derive(mps_unavailable(macos, machine, translated))
    found = [item for item in derived if item["id"] == "MPS_UNAVAILABLE"]
    assert len(found) == 1, derived
    says = {"rosetta": "Rosetta 2", "macos_too_old": f"macOS {macos} is too old",
            "no_device": "no Metal GPU"}[variant]
    assert says in found[0]["summary"]
    assert "CPU_ONLY_BUILD" not in [item["id"] for item in derived]


def test_mps_unavailable_stays_quiet_when_mps_works_or_in_cpu_mode() -> None:
    working = mps_unavailable("14.5", "arm64", False)
    working["pytorch"]["mps"]["available"] = True
    assert "MPS_UNAVAILABLE" not in ids(working)
    cpu_mode = mps_unavailable("12.6", "arm64", False)
    cpu_mode["request"]["device"] = "cpu"
    assert "MPS_UNAVAILABLE" not in ids(cpu_mode)


def test_a_cpu_only_build_on_a_mac_gets_macos_advice() -> None:
    on_mac = report(**{"code": "GPU_BACKEND_ABSENT", "stage": "backend",
                       "runtime.os_family": "macos", "pytorch.backend": "cpu",
                       "pytorch.cuda_build": None})
    advice = next(item for item in derive(on_mac) if item["id"] == "CPU_ONLY_BUILD")
    assert "MPS" in advice["summary"]
    assert "download.pytorch.org/whl/cu" not in advice["next_action"]
    on_linux = report(**{"code": "GPU_BACKEND_ABSENT", "stage": "backend",
                         "pytorch.backend": "cpu", "pytorch.cuda_build": None})
    linux_advice = next(item for item in derive(on_linux) if item["id"] == "CPU_ONLY_BUILD")
    assert "download.pytorch.org/whl/xpu (Intel)" in linux_advice["next_action"]


@pytest.mark.slow
def test_a_real_cpu_build_declares_no_gpu_backend(cpu_torch_python: Path, pyz: Path,
                                                  tmp_path: Path) -> None:
    """The real build has torch.xpu and torch.backends.mps, compiled out: still a CPU build."""
    out = tmp_path / "report.json"
    result = run_tool(cpu_torch_python, pyz, ["--output", str(out)])
    assert result.report is not None, result.stderr
    assert_valid_report(result.report)
    pytorch = result.report["pytorch"]
    assert (result.report["code"], pytorch["backend"]) == ("GPU_BACKEND_ABSENT", "cpu")
    assert (pytorch["xpu_build"], pytorch["mps"]) == (None, None)
    assert result.report["error"]["message"] == \
        "the build declares no GPU backend (neither CUDA, HIP, XPU nor MPS)"

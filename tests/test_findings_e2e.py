"""Findings end to end: real torch builds on this GPU-less machine, and recorded tool outputs."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import (
    ROOT,
    Lifetime,
    assert_valid_report,
    clean_env,
    fake_gpu_env,
    pids_gone,
    run_tool,
)
from findings_helpers import host_block, replay


def findings(report: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    assert report is not None
    assert_valid_report(report)
    return {finding["id"]: finding for finding in report["findings"]}


def real_check(python: Path, pyz: Path, tmp_path: Path, *args: str,
               **env: str) -> dict[str, Any] | None:
    out = tmp_path / "report.json"
    result = run_tool(python, pyz, [*args, "--output", str(out)], env=clean_env(env))
    return result.report


@pytest.mark.slow
def test_cuda_build_without_a_driver(cuda_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    found = findings(real_check(cuda_torch_python, pyz, tmp_path))
    assert "NVIDIA_DRIVER_MISSING" in found
    evidence = found["NVIDIA_DRIVER_MISSING"]["evidence"]
    assert any("Found no NVIDIA driver" in line for line in evidence)
    assert "DEVICES_HIDDEN" not in found


@pytest.mark.slow
@pytest.mark.parametrize("value", ["", "-1"])
def test_visibility_variable_hiding_every_device(cuda_torch_python: Path, pyz: Path,
                                                 tmp_path: Path, value: str) -> None:
    report = real_check(cuda_torch_python, pyz, tmp_path, CUDA_VISIBLE_DEVICES=value)
    found = findings(report)
    assert "DEVICES_HIDDEN" in found
    state = "empty" if value == "" else "hides_all"
    assert report is not None
    assert report["runtime"]["visibility"]["CUDA_VISIBLE_DEVICES"] == state
    text = json.dumps(report)
    assert "CUDA_VISIBLE_DEVICES=-1" not in text  # the state, never the value


@pytest.mark.slow
def test_cpu_build_in_gpu_mode_gets_the_install_command(cpu_torch_python: Path, pyz: Path,
                                                        tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    result = run_tool(cpu_torch_python, pyz, ["--output", str(out)])
    found = findings(result.report)
    assert "--index-url https://download.pytorch.org/whl/cu128" in \
        found["CPU_ONLY_BUILD"]["next_action"]
    assert "CPU_ONLY_BUILD" in result.stdout  # and on the terminal, under the result
    assert result.stdout.rstrip().splitlines()[-1].startswith("next: ")


@pytest.mark.slow
def test_torch_without_numpy(cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    report = real_check(cpu_torch_python, pyz, tmp_path, "--device", "cpu")
    found = findings(report)
    assert report is not None
    assert report["code"] == "CPU_CHECK_PASSED"  # findings never change the code
    assert report["pytorch"]["numpy_present"] is False
    assert "NUMPY_MISSING" in found


@pytest.mark.slow
def test_local_torch_py_shadows_the_install(cpu_torch_python: Path, tmp_path: Path) -> None:
    work = tmp_path / "project"
    work.mkdir()
    (work / "torch.py").write_text("# a user's script unluckily named torch.py\nprint('hello')\n")
    out = work / "report.json"
    result = run_tool(cpu_torch_python, ["-m", "kernodeck_diagnostic"],
                      ["--device", "cpu", "--output", str(out)],
                      env=clean_env({"PYTHONPATH": str(ROOT / "src")}), cwd=work)
    found = findings(result.report)
    assert "TORCH_SHADOWED" in found
    assert result.report is not None
    # Located, never run: the verdict is at the import stage (tests/test_verdicts_shadowing.py).
    assert (result.report["code"], result.report["stage"]) == ("TORCH_IMPORT_FAILED", "import")
    assert result.report["pytorch"]["origin"] == "working-folder"
    assert "hello" not in result.stdout


@pytest.mark.slow
def test_installed_torch_is_not_reported_as_shadowed(cpu_torch_python: Path, pyz: Path,
                                                     tmp_path: Path) -> None:
    report = real_check(cpu_torch_python, pyz, tmp_path, "--device", "cpu")
    assert report is not None
    assert report["pytorch"]["origin"] == "site-packages"
    assert report["pytorch"]["distributions_on_path"] == 1
    assert {"TORCH_SHADOWED", "TORCH_DUPLICATE_INSTALL"}.isdisjoint(findings(report))


def test_arch_not_in_build(pyz: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    result = run_tool(sys.executable, pyz, ["--output", str(out)],
                      env=fake_gpu_env("arch_not_in_build"))
    assert result.returncode == 9
    found = findings(result.report)
    assert "ARCH_NOT_IN_BUILD" in found
    assert any("sm_120" in line for line in found["ARCH_NOT_IN_BUILD"]["evidence"])


# -- host tools replaying recorded outputs ------------------------------------------------------

NVIDIA_SMI_MIG = """\
GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-5c7c2d9e-0000-0000-0000-000000000000)
  MIG 3g.40gb     Device  0: (UUID: MIG-1a2b3c4d-0000-0000-0000-000000000000)
  MIG 3g.40gb     Device  1: (UUID: MIG-5e6f7a8b-0000-0000-0000-000000000000)
"""
AMD_SMI_NEW = [{"gpu": 0, "driver": {"name": "amdgpu", "version": "6.10.5"},
                "vram": {"type": "HBM", "vendor": "SAMSUNG",
                         "size": {"value": 196592, "unit": "MB"}, "bit_width": 8192}}]
AMD_SMI_OLD = {"gpu_data": [{"gpu": 0, "driver": {"driver_name": "amdgpu",
                                                  "driver_version": "6.3.6"},
                             "vram": {"vram_type": "HBM", "vram_vendor": "SAMSUNG",
                                      "vram_size_mb": 65520}}]}
ROCM_SMI = ("WARNING: AMD GPU device(s) is/are in a low-power state. Check power control/"
            "runtime_status\n\n"
            + json.dumps({"card0": {"VRAM Total Memory (B)": "68702699520",
                                    "VRAM Total Used Memory (B)": "10960896"},
                          "system": {"Driver version": "6.7.0"}}) + "\n")


def test_mig_slices_from_nvidia_smi_listing(pyz: Path, tmp_path: Path) -> None:
    listing = replay(NVIDIA_SMI_MIG)
    report = host_block(pyz, tmp_path, **{"nvidia-smi": (
        f'if [ "$1" = "-L" ]; then {listing}\nelse echo "NVIDIA H100 80GB HBM3, 570.86.15, 81559"; '
        "fi\n")})
    assert report["host"]["mig_devices"] == 2
    assert "MIG_SLICE" in findings(report)


@pytest.mark.parametrize(("document", "driver", "mib"), [
    (AMD_SMI_NEW, "6.10.5", 196592), (AMD_SMI_OLD, "6.3.6", 65520)])
def test_amd_smi_both_shapes(pyz: Path, tmp_path: Path, document: Any, driver: str,
                             mib: int) -> None:
    report = host_block(pyz, tmp_path, **{"amd-smi": (
        '[ "$*" = "static --driver --vram --json" ] || exit 3\n' + replay(json.dumps(document)))})
    assert report["host"] == {"tool": "amd-smi", "status": "ok", "driver_version": driver,
                              "gpus": [{"name": None, "memory_total_mib": mib}],
                              "mig_devices": None}


def test_rocm_smi_with_warning_lines(pyz: Path, tmp_path: Path) -> None:
    report = host_block(pyz, tmp_path, **{"rocm-smi": (
        '[ "$*" = "--showdriverversion --showmeminfo vram --json" ] || exit 3\n'
        + replay(ROCM_SMI))})
    assert report["host"] == {"tool": "rocm-smi", "status": "ok", "driver_version": "6.7.0",
                              "gpus": [{"name": None, "memory_total_mib": 65520}],
                              "mig_devices": None}


@pytest.mark.parametrize("tool", ["amd-smi", "rocm-smi"])
def test_garbage_from_amd_tools_is_failed(pyz: Path, tmp_path: Path, tool: str) -> None:
    report = host_block(pyz, tmp_path, **{tool: "echo '{not json'\n"})
    assert report["host"]["status"] == "failed"
    assert report["code"] == "GPU_CHECK_PASSED"


@pytest.mark.parametrize("tool", ["amd-smi", "rocm-smi"])
def test_hung_amd_tool_times_out_within_3_seconds(pyz: Path, tmp_path: Path, tool: str) -> None:
    pid_file = tmp_path / "tool.pid"
    with Lifetime(pid_file) as life:
        report = host_block(pyz, tmp_path, **{tool: f"echo $$ > {pid_file}\nexec sleep 60\n"})
    assert life.seconds is not None and life.seconds < 3 + 1.5, life.seconds  # noqa: PT018
    assert report["host"]["status"] == "timeout"
    assert pids_gone([int(pid_file.read_text())]) == []

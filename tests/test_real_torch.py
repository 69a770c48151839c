"""End to end with real interpreters and real torch builds: what a user of this machine gets."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import ROOT, assert_valid_report, clean_env, run_tool

pytestmark = pytest.mark.slow


def test_venv_without_torch_is_torch_missing(notorch_python: Path, pyz: Path,
                                             tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    result = run_tool(notorch_python, pyz, ["--output", str(out)])
    assert result.returncode == 3, result.stderr
    assert result.headline == "FAILED TORCH_MISSING (exit 3) at stage import"
    report = result.report
    assert report is not None
    assert_valid_report(report)
    assert (report["code"], report["stage"], report["status"]) == ("TORCH_MISSING", "import",
                                                                   "failed")
    assert report["error"]["type"] == "ModuleNotFoundError"
    assert report["pytorch"]["imported"] is False
    assert report["runtime"]["environment_kind"] == "venv"


def test_torch_with_a_deleted_library_is_an_import_failure(broken_torch_python: Path, pyz: Path,
                                                           tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    result = run_tool(broken_torch_python, pyz, ["--device", "cpu", "--output", str(out)])
    assert result.returncode == 4, result.stdout + result.stderr
    report = result.report
    assert report is not None
    assert_valid_report(report)
    assert (report["code"], report["stage"]) == ("TORCH_IMPORT_FAILED", "import")
    error = report["error"]
    assert error["type"] in ("ImportError", "OSError")
    # The useful part survives (which library), the machine's paths do not.
    assert "libtorch_cpu.so" in error["message"]
    assert not re.search(r"(?<![<\w])/(?:root|home|tmp|usr|opt)\b", error["message"])
    assert str(broken_torch_python.parent.parent) not in result.stdout + result.stderr


def test_cpu_build_in_gpu_mode_is_backend_absent(cpu_torch_python: Path, pyz: Path,
                                                 tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    result = run_tool(cpu_torch_python, pyz, ["--output", str(out)])
    assert result.returncode == 5
    assert result.headline == "FAILED GPU_BACKEND_ABSENT (exit 5) at stage backend"
    report = result.report
    assert report is not None
    assert_valid_report(report)
    assert report["pytorch"]["backend"] == "cpu"
    assert report["pytorch"]["cuda_build"] is None
    assert report["pytorch"]["hip_build"] is None
    assert report["execution"]["device"] is None


def test_cpu_build_in_cpu_mode_passes(cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    out = tmp_path / "diagnostic-cpu.json"
    result = run_tool(cpu_torch_python, pyz, ["--device", "cpu", "--output", str(out)])
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.headline == "PASSED CPU_CHECK_PASSED (exit 0) at stage compute"
    report = result.report
    assert report is not None
    assert_valid_report(report)
    assert report["status"] == "passed"
    execution = report["execution"]
    assert execution["device"] == "cpu"
    assert execution["product_verified"] is True
    assert execution["gradient_verified"] is True
    assert execution["loss"] == 196
    assert execution["synchronized"] is None
    pytorch = report["pytorch"]
    assert pytorch["gpu_available"] is None
    assert pytorch["visible_device_count"] is None
    assert pytorch["version"].startswith("2.13.0")
    assert pytorch["distribution_version"].startswith("2.13.0")
    assert report["error"] is None
    assert set(report["timings_ms"]) >= {"import", "compute", "worker_total"}


def test_cuda_build_without_a_driver_is_gpu_unavailable(cuda_torch_python: Path, pyz: Path,
                                                        tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    result = run_tool(cuda_torch_python, pyz, ["--output", str(out)])
    assert result.returncode == 6, result.stdout + result.stderr
    assert result.headline == "FAILED GPU_UNAVAILABLE (exit 6) at stage device"
    report = result.report
    assert report is not None
    assert_valid_report(report)
    assert report["pytorch"]["cuda_build"] == "13.0"
    assert report["pytorch"]["gpu_available"] is False
    assert report["pytorch"]["visible_device_count"] == 0
    # The reason torch gives when asked to initialise, not only "is_available() is False".
    assert "NVIDIA driver" in report["error"]["message"]
    assert "http://www.nvidia.com/Download/index.aspx" in report["error"]["message"]


def test_cuda_build_in_cpu_mode_passes_on_the_cpu(cuda_torch_python: Path, pyz: Path,
                                                  tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    result = run_tool(cuda_torch_python, pyz, ["--device", "cpu", "--output", str(out)])
    assert result.returncode == 0, result.stdout + result.stderr
    report = result.report
    assert report is not None
    assert_valid_report(report)
    assert report["code"] == "CPU_CHECK_PASSED"
    assert report["pytorch"]["cuda_build"] == "13.0"
    assert report["execution"]["device"] == "cpu"
    assert report["pytorch"]["gpu_available"] is None


def test_python_m_entry_point(cpu_torch_python: Path) -> None:
    result = run_tool(cpu_torch_python, ["-m", "kernodeck_diagnostic"], ["--device", "cpu"],
                      env=clean_env({"PYTHONPATH": str(ROOT / "src")}))
    assert result.returncode == 0, result.stderr
    assert result.headline.startswith("PASSED CPU_CHECK_PASSED")


def test_the_front_never_imports_torch(cpu_torch_python: Path, pyz: Path) -> None:
    # Run the front in-process inside an interpreter where torch is importable, then look.
    probe = (
        "import runpy, sys\n"
        f"sys.path.insert(0, {str(pyz)!r})\n"
        "sys.argv = ['kernodeck-diagnostic', '--device', 'cpu']\n"
        "try:\n"
        "    runpy.run_module('kernodeck_diagnostic', run_name='__main__')\n"
        "except SystemExit as exit:\n"
        "    code = exit.code\n"
        "print('TORCH_IMPORTED' if 'torch' in sys.modules else 'TORCH_NOT_IMPORTED', code)\n"
    )
    result = run_tool(cpu_torch_python, ["-c", probe], [])
    assert result.stdout.splitlines()[0].startswith("PASSED CPU_CHECK_PASSED")
    assert result.stdout.splitlines()[-1] == "TORCH_NOT_IMPORTED 0"

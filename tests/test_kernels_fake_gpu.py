"""--kernels on a GPU: the branches only a GPU gives, with the fake torch's scenarios named
after the real failure (tests/fakes/torch/_kernels.py). The arithmetic of the kernels is real in
tests/test_kernels_real.py (the CPU build); here the fake is exact by construction, and what is
tested is what the device lacks or breaks, and how the check reports it."""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

from conftest import Result, fake_gpu_env, run_tool
from kernodeck_diagnostic.report.compare import compare
from kernodeck_diagnostic.worker.protocol import KERNELS
from library_fixtures import checked, with_libraries


def check(pyz: Path, tmp_path: Path, scenario: str) -> tuple[Result, dict[str, Any]]:
    result = checked(sys.executable, pyz, tmp_path, ["--kernels"], fake_gpu_env(scenario))
    assert result.report is not None
    return result, result.report


def kernels(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {kernel["name"]: kernel for kernel in report["libraries"]["kernels"]}


def findings(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {finding["id"]: finding for finding in report["findings"]}


def test_every_kernel_runs_on_the_gpu_of_the_computation(pyz: Path, tmp_path: Path) -> None:
    result, report = check(pyz, tmp_path, "cuda_pass")
    assert (result.returncode, report["code"]) == (0, "GPU_CHECK_PASSED")
    assert report["request"]["kernels"] is True
    found = kernels(report)
    assert list(found) == list(KERNELS)
    assert {k["status"] for k in found.values()} == {"passed"}
    assert {k["device"] for k in found.values()} == {"cuda:0"}
    transfer = found["transfer"]
    assert transfer["bytes"] == 64 * 2**20
    assert transfer["host_to_device_bytes_per_s"] > 0
    assert transfer["device_to_host_bytes_per_s"] > 0
    assert set(found["sdpa"]["backends"]) == {"flash", "efficient", "cudnn"}
    assert {"compile_ms", "run_ms"} <= set(found["compile"])
    assert "GB/s to the device" in result.stdout


def test_a_turing_card_has_no_bfloat16_and_no_flash_attention(pyz: Path,
                                                                tmp_path: Path) -> None:
    result, report = check(pyz, tmp_path, "tesla_t4_turing")
    # Neither is a failure: the check passes, and the findings say what to use instead.
    assert (result.returncode, report["code"]) == (0, "GPU_CHECK_PASSED")
    found = kernels(report)
    assert found["matmul_bfloat16"]["status"] == "unsupported"
    assert "including_emulation=False" in found["matmul_bfloat16"]["reason"]
    assert found["matmul_float16"]["status"] == "passed"
    flash = found["sdpa"]["backends"]["flash"]
    assert flash["available"] is False
    assert "[sm80, sm121]" in flash["reason"]
    assert "sm 7.5" in flash["reason"]
    assert found["sdpa"]["backends"]["efficient"]["available"] is True
    said = findings(report)
    assert said["DTYPE_UNSUPPORTED"]["severity"] == "warning"
    assert "Tesla T4 has no native bfloat16" in said["DTYPE_UNSUPPORTED"]["summary"]
    assert "float16" in said["DTYPE_UNSUPPORTED"]["next_action"]
    assert said["FUSED_ATTENTION_UNAVAILABLE"]["severity"] == "info"
    assert "flash" in said["FUSED_ATTENTION_UNAVAILABLE"]["summary"]
    assert any("sm 7.5" in line for line in said["FUSED_ATTENTION_UNAVAILABLE"]["evidence"])


def test_a_cudnn_error_is_a_runtime_error_at_its_kernel(pyz: Path, tmp_path: Path) -> None:
    result, report = check(pyz, tmp_path, "cudnn_status_not_initialized")
    assert (result.returncode, report["code"], report["stage"]) == (9, "RUNTIME_ERROR",
                                                                      "kernels")
    assert report["error"]["step"] == "conv2d"  # the kernel that raised, not the last one
    assert "CUDNN_STATUS_NOT_INITIALIZED" in report["error"]["message"]
    found = kernels(report)
    assert found["conv2d"]["status"] == "failed"
    assert found["conv2d"]["error"]["type"] == "RuntimeError"
    # The others still ran, each with its own result.
    assert {name for name, k in found.items() if k["status"] == "passed"} == \
        set(KERNELS) - {"conv2d"}


def test_a_wrong_half_precision_product_is_check_failed(pyz: Path, tmp_path: Path) -> None:
    result, report = check(pyz, tmp_path, "faulty_tensor_cores")
    assert (result.returncode, report["code"], report["stage"]) == (8, "CHECK_FAILED", "kernels")
    assert report["error"]["step"] == "matmul_float16"
    assert report["error"]["kind"] == "check_failed"
    found = kernels(report)
    # The worker sent the difference it measured; the front judged it.
    assert (found["matmul_float16"]["status"], found["matmul_float16"]["max_abs_error"],
            found["matmul_float16"]["error"]) == ("failed", 1.0, None)
    assert found["matmul_float32"]["status"] == "passed"
    assert "wrong result" in result.stdout


def test_compare_names_kernels_and_extensions_by_name() -> None:
    before = with_libraries()
    after = copy.deepcopy(before)
    kernels_after = {k["name"]: k for k in after["libraries"]["kernels"]}
    kernels_after["compile"].update(status="failed", max_abs_error=None,
                                    error={"type": "InductorError", "message": "no compiler"})
    kernels_after["conv2d"]["duration_ms"] = 3.5  # jitter: not a change
    kernels_after["sdpa"]["duration_ms"] = 900.0  # moved by 100 ms and 20 %: a timing change
    kernels_after["transfer"]["host_to_device_bytes_per_s"] = 1.0  # a fact, never compared
    after["libraries"]["kernels"].reverse()  # the order does not matter: the names do
    fields = [change["field"] for change in compare(before, after).changes]
    assert fields == ["libraries.kernels[compile].status",
                      "libraries.kernels[compile].max_abs_error",
                      "libraries.kernels[compile].error.type",
                      "libraries.kernels[compile].error.message",
                      "libraries.kernels[sdpa].duration_ms"]


def test_a_kernel_that_hangs_is_named_by_the_time_limit(pyz: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    result = run_tool(sys.executable, pyz, ["--kernels", "--timeout", "8", "--output", str(out)],
                      env=fake_gpu_env("triton_cache_lock_held"))
    report = result.report
    assert report is not None
    assert (result.returncode, report["code"], report["stage"]) == (10, "TIMEOUT", "kernels")
    assert report["error"]["step"] == "compile"
    assert "during kernels (compile)" in report["error"]["message"]
    # The kernels that ended before it are in the report, each verified.
    assert [(k["name"], k["status"]) for k in report["libraries"]["kernels"]] == [
        (name, "passed") for name in KERNELS[:-1]]
    assert result.elapsed_s < 8 + 5

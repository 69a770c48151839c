"""Fact fixtures for the library layer's findings (--extensions, --kernels): the passing report
of findings_helpers with a ``libraries`` block, changed in one place per case."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from conftest import Result, assert_valid_report, run_tool
from findings_helpers import report

TORCHVISION = {"name": "torchvision", "version": "0.23.0", "module": "torchvision",
               "requires_torch": "==2.8.0", "requirement_met": True, "cuda": "12.8",
               "status": "passed", "duration_ms": 450.0, "error": None}
KERNELS = [{"name": name, "device": "cuda:0", "dtype": dtype, "status": "passed",
            "duration_ms": 3.0, "max_abs_error": 0.0, "error": None, "reason": None}
           for name, dtype in (("matmul_float32", "float32"), ("matmul_tf32", "tf32"),
                               ("matmul_float16", "float16"), ("matmul_bfloat16", "bfloat16"),
                               ("conv2d", "float32"), ("sdpa", "float16"),
                               ("transfer", "int32"), ("compile", "float32"))]
AVAILABLE = {"available": True, "reason": None, "max_abs_error": 0.001}
KERNELS[5]["backends"] = {"flash": AVAILABLE, "efficient": AVAILABLE, "cudnn": AVAILABLE}


def with_libraries(extensions: list[dict[str, Any]] | None = None,
                   kernels: list[dict[str, Any]] | None = None, **changes: Any) -> dict[str, Any]:
    """The passing report with both library checks asked for and ``libraries`` set."""
    case = report(**changes)
    case["request"].update(extensions=True, kernels=True)
    case["libraries"] = {"torch_version": case["pytorch"]["distribution_version"],
                         "extensions": copy.deepcopy([TORCHVISION] if extensions is None
                                                     else extensions),
                         "kernels": copy.deepcopy(KERNELS if kernels is None else kernels)}
    return case


def extension(**changes: Any) -> dict[str, Any]:
    return {**TORCHVISION, **changes}


def kernel(name: str, **changes: Any) -> list[dict[str, Any]]:
    """Every kernel passing, but ``name`` changed."""
    return [{**entry, **changes} if entry["name"] == name else entry
            for entry in copy.deepcopy(KERNELS)]


EXTENSION_FAILED = {"code": "EXTENSION_FAILED", "stage": "extensions",
                    "error": {"stage": "extensions", "kind": "extension_failed", "type": None,
                              "message": "1 of 1 torch extension(s) failed to import"}}
LIBRARY_FIRES: dict[str, dict[str, Any]] = {
    # torchvision 0.29.1 beside torch 2.13.0, as pip install --no-deps leaves it.
    "EXTENSION_TORCH_MISMATCH": with_libraries([extension(
        version="0.29.1", requires_torch=">=2.14.0", requirement_met=False, cuda=None,
        status="failed", error={"type": "RuntimeError",
                                "message": "operator torchvision::nms does not exist"})],
        **EXTENSION_FAILED),
    # A torchvision from the cu126 index beside a cu128 torch: its own check at import.
    "EXTENSION_CUDA_MISMATCH": with_libraries([extension(
        version="0.23.0+cu126", cuda="12.6", status="failed", error={
            "type": "RuntimeError", "message": "Detected that PyTorch and torchvision were "
            "compiled with different CUDA major versions. PyTorch has CUDA Version=12.8 and "
            "torchvision has CUDA Version=12.6."})], **EXTENSION_FAILED),
    "EXTENSION_IMPORT_FAILED": with_libraries([extension(
        name="flash-attn", version="2.8.3", module="flash_attn", requires_torch="",
        requirement_met=True, cuda=None, status="failed", error={
            "type": "ModuleNotFoundError", "message": "No module named 'einops'"})],
        **EXTENSION_FAILED),
    "DTYPE_UNSUPPORTED": with_libraries(kernels=kernel(
        "matmul_bfloat16", status="unsupported", max_abs_error=None,
        reason="torch.cuda.is_bf16_supported(including_emulation=False) is False on this "
               "device"), **{"pytorch.devices.0.name": "Tesla T4",
                             "pytorch.devices.0.capability": "7.5"}),
    "COMPILER_MISSING": with_libraries(kernels=kernel(
        "compile", status="failed", max_abs_error=None, error={
            "type": "InductorError", "message": "InvalidCxxCompiler: No working C++ compiler "
            "found in torch._inductor.config.cpp.cxx: (None, '<path>/cxx')"}),
        **{"code": "RUNTIME_ERROR", "stage": "kernels",
           "error": {"stage": "kernels", "step": "compile", "kind": "runtime_error",
                     "type": "InductorError", "message": "InvalidCxxCompiler: No working C++ "
                     "compiler found in torch._inductor.config.cpp.cxx: (None, '<path>/cxx')"}}),
    # torchinductor_<user> in $TMPDIR left by sudo -E: the check's compile, in its own folder,
    # passed.
    "COMPILE_CACHE_UNUSABLE": with_libraries(kernels=kernel("compile",
                                                            default_cache="not_writable")),
    "FUSED_ATTENTION_UNAVAILABLE": with_libraries(kernels=kernel("sdpa", backends={
        "flash": {"available": False, "reason": "Flash attention only supports gpu "
                  "architectures in the range [sm80, sm121]. Attempting to run on a sm 7.5 gpu."},
        "efficient": AVAILABLE, "cudnn": AVAILABLE})),
}


def checked(python: Path | str, pyz: Path, tmp_path: Path, args: list[str],
            env: dict[str, str] | None = None) -> Result:
    """The tool run as a user runs it, with --output: its report read back and held to the
    schema."""
    out = tmp_path / "report.json"
    result = run_tool(python, pyz, [*args, "--output", str(out)], env=env)
    assert result.report is not None, result.stdout + result.stderr
    assert_valid_report(result.report)
    return result

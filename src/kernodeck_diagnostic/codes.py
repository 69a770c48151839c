"""The result codes: one table, and the one function that picks a code for a finished check."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Code:
    """One stable result code: its name, process exit code, meaning and next action."""

    name: str
    exit_code: int
    passed: bool
    summary: str
    next_action: str


_TABLE = (
    Code("GPU_CHECK_PASSED", 0, True,
         "Product and gradient verified on the chosen GPU.",
         "Move to a small input of your application."),
    Code("CPU_CHECK_PASSED", 0, True,
         "Product and gradient verified on the CPU only.",
         "Conclude nothing about CUDA or ROCm: run without --device cpu to check the GPU."),
    Code("INTERNAL_ERROR", 1, False,
         "The diagnostic itself failed (a bug in the tool).",
         "Report it with the command you ran."),
    Code("USAGE_ERROR", 2, False,
         "Invalid arguments.",
         "Read the one-line message, then see --help."),
    Code("TORCH_MISSING", 3, False,
         "PyTorch is not installed in this Python.",
         "Check which interpreter runs your project, then install PyTorch into it."),
    Code("TORCH_IMPORT_FAILED", 4, False,
         "import torch failed.",
         "Check the interpreter, the PyTorch package and its dependencies."),
    Code("GPU_BACKEND_ABSENT", 5, False,
         "This PyTorch build declares neither CUDA nor HIP (a CPU-only build).",
         "Install the PyTorch build that matches your GPU (CUDA or ROCm)."),
    Code("GPU_UNAVAILABLE", 6, False,
         "The GPU is not usable from this process.",
         "Check the card's exposure to this process, the driver and permissions."),
    Code("DEVICE_INDEX_INVALID", 7, False,
         "The device index is outside the visible devices.",
         "Ask for an index below the visible device count."),
    Code("CHECK_FAILED", 8, False,
         "The fixed computation gave a wrong result.",
         "Read the flagged stage before running the full model."),
    Code("OUT_OF_MEMORY", 9, False,
         "Allocation on the device failed: out of memory.",
         "Read the flagged stage; check what else holds memory on that device."),
    Code("RUNTIME_ERROR", 9, False,
         "A backend operation failed.",
         "Read the flagged stage and the error before running the full model."),
    Code("TIMEOUT", 10, False,
         "The check was stopped by the time limit.",
         "Treat the control as failed; examine the environment at the stage shown."),
    Code("WORKER_FAILED", 11, False,
         "The check ended without a usable report.",
         "Treat the control as failed; examine the environment at the stage shown."),
    Code("OUTPUT_WRITE_FAILED", 12, False,
         "The report was not saved where asked.",
         "Use a new file name in a folder you can write to."),
    Code("COLLECTIVE_FAILED", 13, False,
         "A distributed collective check failed.",
         "See the ranks named in the report."),
    Code("INTERRUPTED", 130, False,
         "The check was interrupted.",
         "Run it again when ready."),
)

CODES: Mapping[str, Code] = {code.name: code for code in _TABLE}

EXIT_USAGE = CODES["USAGE_ERROR"].exit_code
EXIT_INTERNAL = CODES["INTERNAL_ERROR"].exit_code
EXIT_OUTPUT = CODES["OUTPUT_WRITE_FAILED"].exit_code

# Error kinds the worker reports, mapped to codes. The worker names what went wrong; this table
# (with the few rules in ``classify``) decides what that means for the user.
_KIND_TO_CODE = {
    "backend_absent": "GPU_BACKEND_ABSENT",
    "gpu_unavailable": "GPU_UNAVAILABLE",
    "device_index_invalid": "DEVICE_INDEX_INVALID",
    "check_failed": "CHECK_FAILED",
    "out_of_memory": "OUT_OF_MEMORY",
    "runtime_error": "RUNTIME_ERROR",
    "timeout": "TIMEOUT",
    "worker_failed": "WORKER_FAILED",
    "interrupted": "INTERRUPTED",
}


def classify(device: str, error: Mapping[str, Any] | None) -> Code:
    """Pick the code of a finished check from the requested device and the error, if any.

    ``error`` carries ``stage``, ``kind`` and, for import failures, ``type`` and ``missing_module``.
    """
    if error is None:
        return CODES["GPU_CHECK_PASSED" if device == "gpu" else "CPU_CHECK_PASSED"]
    kind = error.get("kind")
    if kind == "import_failed":
        # Only torch itself missing is TORCH_MISSING; a missing dependency of torch is an import
        # failure of torch.
        missing_torch = (error.get("type") == "ModuleNotFoundError"
                         and error.get("missing_module") == "torch")
        return CODES["TORCH_MISSING" if missing_torch else "TORCH_IMPORT_FAILED"]
    name = _KIND_TO_CODE.get(str(kind))
    if name is None:
        return CODES["WORKER_FAILED"]
    return CODES[name]

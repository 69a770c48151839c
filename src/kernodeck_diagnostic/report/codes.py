"""The result codes: one table, and the one function that picks a code for a finished check."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..i18n import ENGLISH


@dataclass(frozen=True)
class Code:
    """One stable result code: its name, process exit code and whether it is a pass.

    Its meaning and next action are messages (``code.<NAME>.summary`` and ``.next_action`` in
    ``i18n``): English here and in JSON, the user's language on the terminal.
    """

    name: str
    exit_code: int
    passed: bool = False

    @property
    def summary(self) -> str:
        return ENGLISH(f"code.{self.name}.summary")

    @property
    def next_action(self) -> str:
        return ENGLISH(f"code.{self.name}.next_action")


_TABLE = (
    Code("GPU_CHECK_PASSED", 0, passed=True),
    Code("CPU_CHECK_PASSED", 0, passed=True),
    Code("INTERNAL_ERROR", 1),
    Code("USAGE_ERROR", 2),
    Code("TORCH_MISSING", 3),
    Code("TORCH_IMPORT_FAILED", 4),
    Code("GPU_BACKEND_ABSENT", 5),
    Code("GPU_UNAVAILABLE", 6),
    Code("DEVICE_INDEX_INVALID", 7),
    Code("CHECK_FAILED", 8),
    Code("OUT_OF_MEMORY", 9),
    Code("RUNTIME_ERROR", 9),
    Code("TIMEOUT", 10),
    Code("WORKER_FAILED", 11),
    Code("OUTPUT_WRITE_FAILED", 12),
    Code("COLLECTIVE_FAILED", 13),
    # Not a verdict: the check ran (and its report file, if asked for, was saved) but what it
    # printed could not reach stdout (closed, a full device). Never inside a saved report, which
    # is written before stdout.
    Code("STDOUT_WRITE_FAILED", 15),
    Code("INTERRUPTED", 130),
)

CODES: Mapping[str, Code] = {code.name: code for code in _TABLE}

EXIT_USAGE = CODES["USAGE_ERROR"].exit_code
EXIT_INTERNAL = CODES["INTERNAL_ERROR"].exit_code
EXIT_OUTPUT = CODES["OUTPUT_WRITE_FAILED"].exit_code
EXIT_STDOUT = CODES["STDOUT_WRITE_FAILED"].exit_code

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

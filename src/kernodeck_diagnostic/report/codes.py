"""The result codes: one table, and the one function that picks a code for a finished check."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..i18n import ENGLISH

if TYPE_CHECKING:
    from ..worker.protocol import ErrorKind as WorkerErrorKind

# A signal stops any command with the status a shell gives a process killed by it (128 + the
# signal's number). SIGHUP: the terminal was closed (Windows has no such signal).
INTERRUPT_EXITS = {"SIGINT": 130, "SIGTERM": 143, "SIGHUP": 129}


@dataclass(frozen=True)
class Code:
    """One stable result code: its name, process exit code and whether it is a pass.

    A ``verdict`` is what a check found: the code a report carries. A ``process`` code is only
    how the process ended when that is not the check's verdict (invalid arguments, a bug of the
    tool, a report or a result that could not be written, an interrupt): an exit status, never
    in a report. A ``command`` code is the verdict of another command (``command`` names it:
    ``compare``, ``summarize``, ``ramp``, ``resume-check``): an exit status of that command only,
    never 1 (the tool's own failure) or 2 (a usage error), which every command shares; nor 16
    (``TOOL_RESOURCES``), which every command also exits with when its own process runs out of
    open files before it can say more (``runner``), and which the check writes as a verdict.

    Its meaning and next action are messages (``code.<NAME>.summary`` and ``.next_action`` in
    ``i18n``): English here and in JSON, the user's language on the terminal.
    """

    name: str
    exit_code: int
    passed: bool = False
    kind: Literal["verdict", "process", "command"] = "verdict"
    other_exit_codes: tuple[int, ...] = ()  # INTERRUPTED: one exit status per signal
    command: str | None = None  # kind "command": the command whose verdict it is

    @property
    def exit_codes(self) -> tuple[int, ...]:
        return (self.exit_code, *self.other_exit_codes)

    @property
    def summary(self) -> str:
        return ENGLISH(f"code.{self.name}.summary")

    @property
    def next_action(self) -> str:
        return ENGLISH(f"code.{self.name}.next_action")


_TABLE = (
    Code("GPU_CHECK_PASSED", 0, passed=True),
    Code("CPU_CHECK_PASSED", 0, passed=True),
    Code("INTERNAL_ERROR", 1, kind="process"),
    Code("USAGE_ERROR", 2, kind="process"),
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
    # The check ran but its report was not saved where asked: the report keeps the check's code.
    Code("OUTPUT_WRITE_FAILED", 12, kind="process"),
    # --distributed: the job is not healthy (a rank failed or is missing, the collective failed,
    # timed out or summed wrong) while this rank's own check passed.
    Code("COLLECTIVE_FAILED", 13),
    # --extensions: a torch extension failed to import (or hung), the checks before it passed.
    Code("EXTENSION_FAILED", 14),
    # The check ran (and its report file, if asked for, was saved) but what it printed could not
    # reach stdout (closed, a full device). Never inside a saved report, which is written before.
    Code("STDOUT_WRITE_FAILED", 15, kind="process"),
    # The tool could not get what it needs to run the check from this process's limits (open
    # files, a process, memory: supervision/tool_needs.py): nothing concluded about the machine.
    Code("TOOL_RESOURCES", 16),
    Code("INTERRUPTED", INTERRUPT_EXITS["SIGINT"], kind="process",
         other_exit_codes=(INTERRUPT_EXITS["SIGTERM"], INTERRUPT_EXITS["SIGHUP"])),
    # The other commands' verdicts: each its own status, none shared with 1 or 2 (an OK is earned
    # by evidence the command checked; missing evidence is inconclusive, never a pass).
    # compare: the same verdict (code or status, contracts, first error); a different one that is
    # no regression; a regression (a pass that fails, a completed attempt that did not, a
    # contract that fails or is gone).
    Code("COMPARE_SAME", 0, passed=True, kind="command", command="compare"),
    Code("COMPARE_CHANGED", 20, kind="command", command="compare"),
    Code("COMPARE_REGRESSION", 21, kind="command", command="compare"),
    Code("SUMMARY_ALL_PASSED", 0, passed=True, kind="command", command="summarize"),
    Code("SUMMARY_SOME_FAILED", 22, kind="command", command="summarize"),
    Code("SUMMARY_NOTHING_READ", 23, kind="command", command="summarize"),
    Code("SUMMARY_INCONCLUSIVE", 33, kind="command", command="summarize"),
    Code("RAMP_RANGE_MEASURED", 0, passed=True, kind="command", command="ramp"),
    Code("RAMP_NOTHING_PASSED", 24, kind="command", command="ramp"),
    Code("RAMP_INCONCLUSIVE", 25, kind="command", command="ramp"),
    # Issue 41: a failure below a passing value (no one limit exists); a value that both
    # passed and failed (--repeat); a set of files with nothing failing but something unjudged.
    Code("RAMP_NO_SINGLE_LIMIT", 31, kind="command", command="ramp"),
    Code("RAMP_FLAKY", 32, kind="command", command="ramp"),
    Code("RESUME_INTACT", 0, passed=True, kind="command", command="resume-check"),
    Code("RESUME_RECORDS_LOST", 26, kind="command", command="resume-check"),
    Code("RESUME_RECORDS_DUPLICATED", 27, kind="command", command="resume-check"),
    Code("RESUME_BAD_RECORD", 28, kind="command", command="resume-check"),
    Code("RESUME_INCONCLUSIVE", 29, kind="command", command="resume-check"),
    Code("RESUME_RUN_FAILED", 30, kind="command", command="resume-check"),
    # health-check: whose fault a failed check is (report/health.py); only the node's drains.
    Code("HEALTH_PASSED", 0, passed=True, kind="command", command="health-check"),
    Code("HEALTH_NODE_FAULT", 40, kind="command", command="health-check"),
    Code("HEALTH_ENVIRONMENT_FAULT", 41, kind="command", command="health-check"),
    Code("HEALTH_INCONCLUSIVE", 42, kind="command", command="health-check"),
)

CODES: Mapping[str, Code] = {code.name: code for code in _TABLE}
# The codes a report can carry (the schema's ``code``): the check's verdicts.
VERDICTS: Mapping[str, Code] = {code.name: code for code in _TABLE if code.kind == "verdict"}


class Verdict:
    """The verdicts' names, for code that compares a report's ``code`` with one:
    ``report["code"] == Verdict.TIMEOUT``. Each is read from the table, so a name it lacks fails
    at import, and a misspelt attribute fails the type check (a test holds this list to the
    table)."""

    GPU_CHECK_PASSED = VERDICTS["GPU_CHECK_PASSED"].name
    CPU_CHECK_PASSED = VERDICTS["CPU_CHECK_PASSED"].name
    TORCH_MISSING = VERDICTS["TORCH_MISSING"].name
    TORCH_IMPORT_FAILED = VERDICTS["TORCH_IMPORT_FAILED"].name
    GPU_BACKEND_ABSENT = VERDICTS["GPU_BACKEND_ABSENT"].name
    GPU_UNAVAILABLE = VERDICTS["GPU_UNAVAILABLE"].name
    DEVICE_INDEX_INVALID = VERDICTS["DEVICE_INDEX_INVALID"].name
    CHECK_FAILED = VERDICTS["CHECK_FAILED"].name
    OUT_OF_MEMORY = VERDICTS["OUT_OF_MEMORY"].name
    RUNTIME_ERROR = VERDICTS["RUNTIME_ERROR"].name
    TIMEOUT = VERDICTS["TIMEOUT"].name
    WORKER_FAILED = VERDICTS["WORKER_FAILED"].name
    COLLECTIVE_FAILED = VERDICTS["COLLECTIVE_FAILED"].name
    EXTENSION_FAILED = VERDICTS["EXTENSION_FAILED"].name
    TOOL_RESOURCES = VERDICTS["TOOL_RESOURCES"].name


def command_codes(command: str) -> list[Code]:
    """The verdicts of ``command`` (its exit statuses besides the process's own), in order."""
    return [code for code in _TABLE if code.kind == "command" and code.command == command]


EXIT_USAGE = CODES["USAGE_ERROR"].exit_code
EXIT_INTERNAL = CODES["INTERNAL_ERROR"].exit_code
EXIT_OUTPUT = CODES["OUTPUT_WRITE_FAILED"].exit_code
EXIT_STDOUT = CODES["STDOUT_WRITE_FAILED"].exit_code

# What the front concludes itself: a result that is wrong or missing, the time limit reached, a
# worker that ended without saying why. The worker's own kinds are the protocol's (ErrorKind).
FrontErrorKind = Literal["check_failed", "timeout", "worker_failed", "collective_failed",
                         "tool_resources"]

# Error kinds, the worker's and the front's, mapped to codes. The worker names what went wrong;
# this table (with the few rules in ``classify``) decides what that means for the user.
_KIND_TO_CODE: Mapping[WorkerErrorKind | FrontErrorKind, str] = {
    "backend_absent": "GPU_BACKEND_ABSENT",
    "gpu_unavailable": "GPU_UNAVAILABLE",
    "device_index_invalid": "DEVICE_INDEX_INVALID",
    "check_failed": "CHECK_FAILED",
    "out_of_memory": "OUT_OF_MEMORY",
    "runtime_error": "RUNTIME_ERROR",
    "timeout": "TIMEOUT",
    "worker_failed": "WORKER_FAILED",
    "collective_failed": "COLLECTIVE_FAILED",
    "extension_failed": "EXTENSION_FAILED",
    "tool_resources": "TOOL_RESOURCES",
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
    name = _KIND_TO_CODE.get(kind) if isinstance(kind, str) else None  # type: ignore[call-overload]
    if name is None:
        return CODES["WORKER_FAILED"]
    return CODES[name]

"""A check's verdict as a node's health check reads it: whose fault it is, one reason line, and
the exit status each host of health checks understands.

A health check runs on every node, and what it says drains nodes: a false drain costs a node, a
drain storm costs a cluster. So the verdict is split by whose fault it is, and only the node's
own fault (the GPU or its driver) may drain:

- ``node``: the GPU or its driver failed the check (unusable, a wrong result, a backend error
  such as an ECC error) while the environment could run it;
- ``environment``: the image's or the venv's PyTorch (missing, broken, built without a GPU
  backend) or a setting that hides the devices: the node may be fine, the software is not;
- ``inconclusive``: nothing proven about the node: the time limit (a busy node), an allocation
  refused (memory held by a running job), a worker that ended without a result, the tool's own
  failure or a usage error, what the tool could not get from the process's limits
  (``TOOL_RESOURCES``: open files, processes; its worker killed by a memory cgroup is the job's
  limit, ``environment``);
- ``passed``: every device checked passed.

The reason line is at most ``REASON_MAX`` characters, printable ASCII, names no host (Slurm
writes it beside the node's name already): ``kernodeck: GPU_UNAVAILABLE gpu 3: CUDA init
failed``. Every reason starts with ``REASON_PREFIX``, which is how ``health-check`` knows a drain
is its own and may undo it, and never undoes an operator's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .codes import CODES, Verdict

Fault = Literal["passed", "node", "environment", "inconclusive"]
FAULTS: tuple[Fault, ...] = ("passed", "node", "environment", "inconclusive")
Profile = Literal["native", "npd", "prolog"]
PROFILES: tuple[Profile, ...] = ("native", "npd", "prolog")

REASON_PREFIX = "kernodeck:"
REASON_MAX = 80

_NODE = frozenset((Verdict.GPU_UNAVAILABLE, Verdict.DEVICE_INDEX_INVALID, Verdict.CHECK_FAILED,
                   Verdict.RUNTIME_ERROR))
_ENVIRONMENT = frozenset((Verdict.TORCH_MISSING, Verdict.TORCH_IMPORT_FAILED,
                          Verdict.GPU_BACKEND_ABSENT, Verdict.EXTENSION_FAILED))
# Findings that put a failure on the software or the settings, not on the node: the devices
# hidden by a visibility variable, a build for another vendor or without the GPU's
# architecture, a driver libraries' mount missing in a container.
_ENVIRONMENT_FINDINGS = frozenset(("DEVICES_HIDDEN", "CPU_ONLY_BUILD", "BUILD_FOR_OTHER_VENDOR",
                                   "ARCH_NOT_IN_BUILD", "ROCM_VISIBILITY_CONFLICT",
                                   "LIBRARY_PATH_OVERRIDE", "DRIVER_TOO_OLD"))
# Findings that say the GPU is taken, not broken: a running job's context or memory.
_BUSY_FINDINGS = frozenset(("GPU_BUSY", "GPU_MEMORY_HELD"))

# The exit status each host understands, by fault. native: the codes table's HEALTH_* statuses.
# npd: Kubernetes node-problem-detector's custom plugins (0 OK, 1 a problem, anything else
# unknown). prolog: a Slurm prolog or an NHC check, which drain the node on any status but 0, so
# only the node's own fault is one (a tool's bug or a usage error must never drain every node).
_EXIT: Mapping[Profile, Mapping[Fault, int]] = {
    "native": {"passed": CODES["HEALTH_PASSED"].exit_code,
               "node": CODES["HEALTH_NODE_FAULT"].exit_code,
               "environment": CODES["HEALTH_ENVIRONMENT_FAULT"].exit_code,
               "inconclusive": CODES["HEALTH_INCONCLUSIVE"].exit_code},
    "npd": {"passed": 0, "node": 1, "environment": 2, "inconclusive": 2},
    "prolog": {"passed": 0, "node": 1, "environment": 0, "inconclusive": 0},
}
# How the tool's own ending (1: a bug, 2: a usage error, an interrupt) reads under each profile.
_PROCESS_EXIT: Mapping[Profile, int | None] = {"native": None, "npd": 2, "prolog": 0}


@dataclass(frozen=True)
class Health:
    """One health check's outcome: whose fault, the code and device behind it, the reason."""

    fault: Fault
    code: str
    device: int | None
    reason: str
    devices: int | None = None  # how many devices' own checks were read (--all-devices)

    @property
    def drains(self) -> bool:
        return self.fault == "node"


def judge_health(report: Mapping[str, Any]) -> Health:
    """The outcome of a finished check's report (an ``--all-devices`` one or a single device's).

    A pass needs the report's own pass and, under ``--all-devices``, every device's: no device
    checked is no pass (``inconclusive``)."""
    code = str(report.get("code"))
    device, detail = _first_failing_device(report)
    passed = CODES.get(code) is not None and CODES[code].passed
    if passed and device is None and _devices_checked(report) != 0:
        return Health("passed", code, None, "", _devices_checked(report))
    if passed:  # the report passed, a device's own check did not, or none was checked
        code = detail or Verdict.WORKER_FAILED
    fault: Fault
    found = _finding_ids(report)
    if code in _ENVIRONMENT or found & _ENVIRONMENT_FINDINGS or _memory_limit(report, code):
        fault = "environment"
    elif code in _NODE and not found & _BUSY_FINDINGS:
        fault = "node"
    else:
        fault = "inconclusive"
    if device is None and not _all_devices(report):
        device = _requested_device(report)
    return Health(fault, code, device, reason_line(code, device, _error_message(report)))


def reason_line(code: str, device: int | None, detail: str | None) -> str:
    """``kernodeck: CODE gpu N: detail``, printable ASCII, at most ``REASON_MAX`` characters."""
    head = f"{REASON_PREFIX} {code}" + (f" gpu {device}" if device is not None else "")
    text = _printable(detail or "")
    if not text:
        return head[:REASON_MAX]
    line = f"{head}: {text}"
    return line if len(line) <= REASON_MAX else line[: REASON_MAX - 3].rstrip() + "..."


def exit_status(health: Health, profile: Profile) -> int:
    return _EXIT[profile][health.fault]


def process_exit_status(status: int, profile: Profile) -> int:
    """The tool's own ending (a bug, a usage error, an interrupt) as ``profile`` reads it: never a
    status that drains the node."""
    mapped = _PROCESS_EXIT[profile]
    return status if mapped is None else mapped


SlurmAction = Literal["drain", "resume", "already_drained", "left_operator_drain",
                     "not_drained", "nothing"]


def slurm_action(health: Health, drained: bool, reason: str | None) -> SlurmAction:
    """What to do with this node, drained or not, with the reason it carries: drain on the
    node's own fault only and once (the same reason again is no new drain), resume on a pass
    only a drain of its own; an operator's drain (any other reason) is never touched."""
    if drained and not ours(reason):
        return "left_operator_drain" if health.drains or health.fault == "passed" \
            else "not_drained"
    if health.drains:
        return "already_drained" if drained and reason == health.reason else "drain"
    if health.fault == "passed":
        return "resume" if drained else "nothing"
    return "not_drained"


def ours(reason: str | None) -> bool:
    """Whether a node's drain reason is one ``health-check`` wrote (and so may undo)."""
    return reason is not None and reason.startswith(REASON_PREFIX)


# -- the report's facts ---------------------------------------------------------------------------

def _entries(items: Any) -> list[Mapping[str, Any]]:
    return [item for item in items if isinstance(item, Mapping)] if isinstance(items, list) \
        else []


def _pytorch(report: Mapping[str, Any]) -> Mapping[str, Any]:
    pytorch = report.get("pytorch")
    return pytorch if isinstance(pytorch, Mapping) else {}


def _all_devices(report: Mapping[str, Any]) -> bool:
    request = report.get("request")
    return isinstance(request, Mapping) and request.get("all_devices") is True


def _first_failing_device(report: Mapping[str, Any]) -> tuple[int | None, str | None]:
    """Under ``--all-devices``, the first device whose own check did not pass, and its code."""
    if not _all_devices(report):
        return None, None
    for entry in _entries(_pytorch(report).get("devices")):
        check, index = entry.get("check"), entry.get("index")
        if type(index) is not int:
            continue
        code = check.get("code") if isinstance(check, Mapping) else None
        if not (isinstance(code, str) and code in CODES and CODES[code].passed):
            return index, code if isinstance(code, str) and code in CODES else None
    return None, None


def _devices_checked(report: Mapping[str, Any]) -> int | None:
    """How many devices' own checks passed under ``--all-devices``; None for one device's."""
    if not _all_devices(report):
        return None
    return sum(1 for entry in _entries(_pytorch(report).get("devices"))
               if isinstance(entry.get("check"), Mapping))


def _requested_device(report: Mapping[str, Any]) -> int | None:
    request = report.get("request")
    index = request.get("device_index") if isinstance(request, Mapping) else None
    return index if type(index) is int and report.get("stage") in ("device", "compute") else None


def _finding_ids(report: Mapping[str, Any]) -> set[str]:
    return {str(finding.get("id")) for finding in _entries(report.get("findings"))}


def _memory_limit(report: Mapping[str, Any], code: str) -> bool:
    """The tool's worker killed by its memory cgroup's OOM killer (``TOOL_RESOURCES``): the job's
    memory limit, an environment's setting. Its other needs (open files, processes) say nothing
    of the node or its software: inconclusive."""
    error = report.get("error")
    key = error.get("message_key") if isinstance(error, Mapping) else None
    return (code == Verdict.TOOL_RESOURCES and isinstance(key, str)
            and key.startswith("error.tool_needs.memory"))


def _error_message(report: Mapping[str, Any]) -> str | None:
    error = report.get("error")
    message = error.get("message") if isinstance(error, Mapping) else None
    return message if isinstance(message, str) else None


def _printable(text: str) -> str:
    """One line of printable ASCII: what a scheduler's reason field and a log take safely."""
    kept = "".join(char if " " <= char <= "~" else " " for char in text)
    return " ".join(kept.split())

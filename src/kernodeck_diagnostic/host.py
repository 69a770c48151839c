"""Host probe: what the system's GPU tool (nvidia-smi) says, bounded by its own short timeout."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Callable

from .process import run_bounded

HOST_TIMEOUT_S = 3.0
NVIDIA_SMI_QUERY = ("--query-gpu=name,driver_version,memory.total", "--format=csv,noheader,nounits")

# Values nvidia-smi prints where it has none.
_NOT_AVAILABLE = {"", "[n/a]", "n/a", "[not supported]", "not supported", "[unknown error]",
                  "[insufficient permissions]", "[gpu is lost]"}


@dataclass
class ToolOutput:
    """What one run of a probe tool gave: status is ok, timeout or failed."""

    status: str
    stdout: str = ""


Runner = Callable[[Sequence[str], float], ToolOutput]


def default_runner(argv: Sequence[str], timeout: float) -> ToolOutput:
    result = run_bounded(argv, timeout)
    if result.timed_out:
        return ToolOutput("timeout")
    if result.returncode != 0:
        return ToolOutput("failed", result.stdout)
    return ToolOutput("ok", result.stdout)


def probe_nvidia_smi(which: Callable[[str], str | None] = shutil.which,
                     runner: Runner = default_runner) -> dict[str, Any]:
    """The host block of the report, from ``nvidia-smi``."""
    block: dict[str, Any] = {"tool": "nvidia-smi", "status": "not_found", "driver_version": None,
                             "gpus": []}
    executable = which("nvidia-smi")
    if executable is None:
        return block
    output = runner([executable, *NVIDIA_SMI_QUERY], HOST_TIMEOUT_S)
    if output.status != "ok":
        block["status"] = output.status
        return block
    gpus, drivers = parse_nvidia_smi_csv(output.stdout)
    if not gpus:
        block["status"] = "failed"
        return block
    block["status"] = "ok"
    block["driver_version"] = drivers[0] if drivers else None
    block["gpus"] = gpus
    return block


def parse_nvidia_smi_csv(text: str) -> tuple[list[dict[str, Any]], list[str]]:
    """Rows of ``name, driver_version, memory.total`` (MiB, no units) into GPUs and drivers."""
    gpus: list[dict[str, Any]] = []
    drivers: list[str] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        # The name may itself hold commas; the last two fields never do.
        parts = line.rsplit(",", 2)
        if len(parts) != 3:
            continue
        name, driver, memory = (_value(part) for part in parts)
        gpus.append({"name": name, "memory_total_mib": _int_or_none(memory)})
        if driver is not None and driver not in drivers:
            drivers.append(driver)
    return gpus, drivers


def _value(field: str) -> str | None:
    text = field.strip()
    return None if text.lower() in _NOT_AVAILABLE else text


def _int_or_none(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return int(float(text))
    except ValueError:
        return None


class HostProbe:
    """Runs the host probe in a thread, concurrently with the worker."""

    def __init__(self, probe: Callable[[], dict[str, Any]] = probe_nvidia_smi) -> None:
        self._result: dict[str, Any] | None = None
        self._thread = threading.Thread(target=self._run, args=(probe,), daemon=True,
                                        name="host-probe")

    def start(self) -> HostProbe:
        self._thread.start()
        return self

    def _run(self, probe: Callable[[], dict[str, Any]]) -> None:
        try:
            self._result = probe()
        except Exception:  # a probe that breaks is a failed probe, never a failed check
            self._result = {"tool": "nvidia-smi", "status": "failed", "driver_version": None,
                            "gpus": []}

    def result(self) -> dict[str, Any]:
        # The probe bounds itself; the margin covers killing and reaping a hung tool.
        self._thread.join(HOST_TIMEOUT_S + 2.0)
        if self._result is None:
            return {"tool": "nvidia-smi", "status": "timeout", "driver_version": None, "gpus": []}
        return self._result

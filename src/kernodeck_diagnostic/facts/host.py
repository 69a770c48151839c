"""Host probe: what the system's GPU tool says (nvidia-smi, else amd-smi, else rocm-smi).

Every tool run is bounded by HOST_TIMEOUT_S and the runs of one probe happen concurrently, so the
whole probe takes at most that long, while the check runs beside it. One failed lookup never sinks
the block: it becomes a status.
"""

from __future__ import annotations

import re
import shutil
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..supervision.process import run_bounded
from ..untrusted_json import loads

HOST_TIMEOUT_S = 3.0
NVIDIA_SMI_QUERY = ("--query-gpu=name,driver_version,memory.total", "--format=csv,noheader,nounits")
NVIDIA_SMI_LIST = ("-L",)
AMD_SMI_STATIC = ("static", "--driver", "--vram", "--json")
ROCM_SMI_QUERY = ("--showdriverversion", "--showmeminfo", "vram", "--json")

# Values nvidia-smi prints where it has none.
_NOT_AVAILABLE = {"", "[n/a]", "n/a", "[not supported]", "not supported", "[unknown error]",
                  "[insufficient permissions]", "[gpu is lost]"}
_MIG_LINE = re.compile(r"^\s+MIG\s", re.MULTILINE)


# What one run of a probe tool gave; a host block's status may also be not_found (no tool).
ToolStatus = Literal["ok", "timeout", "failed"]
HostStatus = Literal[ToolStatus, "not_found"]


@dataclass
class ToolOutput:
    """What one run of a probe tool gave, and its output."""

    status: ToolStatus
    stdout: str = ""


Runner = Callable[[Sequence[str], float], ToolOutput]
Which = Callable[[str], "str | None"]


def default_runner(argv: Sequence[str], timeout: float) -> ToolOutput:
    result = run_bounded(argv, timeout)
    if result.timed_out:
        return ToolOutput("timeout")
    if result.returncode != 0:
        return ToolOutput("failed", result.stdout)
    return ToolOutput("ok", result.stdout)


def empty_block(tool: str, status: HostStatus = "not_found") -> dict[str, Any]:
    return {"tool": tool, "status": status, "driver_version": None, "gpus": [],
            "mig_devices": None}


def probe_host(which: Which = shutil.which, runner: Runner = default_runner) -> dict[str, Any]:
    """The report's host block, from the first GPU tool found on PATH."""
    for tool, probe in (("nvidia-smi", _nvidia), ("amd-smi", _amd_smi), ("rocm-smi", _rocm_smi)):
        executable = which(tool)
        if executable is not None:
            return probe(executable, runner)
    return empty_block("nvidia-smi")


def _concurrently(runner: Runner, *commands: Sequence[str]) -> list[ToolOutput]:
    results: list[ToolOutput] = [ToolOutput("timeout") for _ in commands]

    def run(slot: int, argv: Sequence[str]) -> None:
        results[slot] = runner(argv, HOST_TIMEOUT_S)

    threads = [threading.Thread(target=run, args=(slot, argv), daemon=True)
               for slot, argv in enumerate(commands)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(HOST_TIMEOUT_S + 2.0)
    return results


def _nvidia(executable: str, runner: Runner) -> dict[str, Any]:
    block = empty_block("nvidia-smi")
    query, listing = _concurrently(runner, [executable, *NVIDIA_SMI_QUERY],
                                   [executable, *NVIDIA_SMI_LIST])
    if listing.status == "ok":
        block["mig_devices"] = len(_MIG_LINE.findall(listing.stdout))
    if query.status != "ok":
        block["status"] = query.status
        return block
    gpus, drivers = parse_nvidia_smi_csv(query.stdout)
    block["status"] = "ok" if gpus else "failed"
    block["driver_version"] = drivers[0] if drivers else None
    block["gpus"] = gpus
    return block


def _amd_smi(executable: str, runner: Runner) -> dict[str, Any]:
    return _json_tool("amd-smi", runner([executable, *AMD_SMI_STATIC], HOST_TIMEOUT_S),
                      parse_amd_smi_json)


def _rocm_smi(executable: str, runner: Runner) -> dict[str, Any]:
    return _json_tool("rocm-smi", runner([executable, *ROCM_SMI_QUERY], HOST_TIMEOUT_S),
                      parse_rocm_smi_json)


def _json_tool(tool: str, output: ToolOutput,
               parse: Callable[[Any], tuple[list[dict[str, Any]], str | None]]) -> dict[str, Any]:
    block = empty_block(tool, output.status)
    if output.status != "ok":
        return block
    try:
        gpus, driver = parse(_json_after_warnings(output.stdout))
    except (ValueError, TypeError, AttributeError, KeyError):
        gpus, driver = [], None
    block.update(status="ok" if gpus else "failed", driver_version=driver, gpus=gpus)
    return block


def _json_after_warnings(text: str) -> Any:
    """The JSON document in ``text``, after any WARNING: lines the ROCm tools print first."""
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    if start < 0:
        raise ValueError("no JSON document")
    return loads(text[start:])  # a tool's output is not trusted either


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


def parse_amd_smi_json(document: Any) -> tuple[list[dict[str, Any]], str | None]:
    """``amd-smi static --driver --vram --json``, in both known shapes.

    Newer: ``driver.version`` and ``vram.size = {value, unit}``; older: ``driver.driver_version``
    and ``vram.vram_size_mb``. Either as a bare list of GPUs or under ``gpu_data``.
    """
    entries = document.get("gpu_data", []) if isinstance(document, dict) else document
    gpus: list[dict[str, Any]] = []
    driver: str | None = None
    for entry in entries:
        driver_block = entry.get("driver") or {}
        driver = driver or _value(str(driver_block.get("version")
                                      or driver_block.get("driver_version") or ""))
        vram = entry.get("vram") or {}
        size = vram.get("size")
        if isinstance(size, dict):
            mib = _to_mib(size.get("value"), str(size.get("unit") or "MB"))
        else:
            mib = _to_mib(vram.get("vram_size_mb", size), "MB")
        gpus.append({"name": None, "memory_total_mib": mib})
    return gpus, driver


def parse_rocm_smi_json(document: Any) -> tuple[list[dict[str, Any]], str | None]:
    """``rocm-smi --showdriverversion --showmeminfo vram --json``: bytes as strings, per card."""
    gpus: list[dict[str, Any]] = []
    driver: str | None = None
    for key, values in document.items():
        if not isinstance(values, dict):
            continue
        for name, value in values.items():
            if "driver version" in name.lower():
                driver = driver or _value(str(value))
        if key.lower().startswith("card"):
            total = next((v for n, v in values.items()
                          if "total memory" in n.lower() and "used" not in n.lower()), None)
            gpus.append({"name": None, "memory_total_mib": _to_mib(total, "B")})
    return gpus, driver


def _to_mib(value: Any, unit: str) -> int | None:
    number = _int_or_none(None if value is None else str(value))
    if number is None:
        return None
    scale = {"B": 1 / 2**20, "KB": 1 / 1024, "KIB": 1 / 1024, "MB": 1, "MIB": 1, "GB": 1024,
             "GIB": 1024}.get(unit.strip().upper(), 1)
    return int(number * scale)


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

    def __init__(self, probe: Callable[[], dict[str, Any]] = probe_host) -> None:
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
            self._result = empty_block("nvidia-smi", "failed")

    def result(self) -> dict[str, Any]:
        # The probe bounds itself; the margin covers killing and reaping a hung tool.
        self._thread.join(HOST_TIMEOUT_S + 2.0)
        if self._result is None:
            return empty_block("nvidia-smi", "timeout")
        return self._result

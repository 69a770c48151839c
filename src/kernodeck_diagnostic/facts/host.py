"""Host probe: what the system's GPU tool says (nvidia-smi, else amd-smi, else rocm-smi).

Every tool run is bounded by HOST_TIMEOUT_S and the runs of one probe happen concurrently, so the
whole probe takes at most that long, while the check runs beside it. One failed lookup never sinks
the block: it becomes a status.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..children import find_program, run_bounded
from ..terminal import one_line
from ..untrusted_json import loads

HOST_TIMEOUT_S = 3.0
MAX_FIELD_CHARS = 200  # of one value a tool printed (a GPU's name, a driver's version)
NVIDIA_SMI_FIELDS = "name,driver_version,memory.total"
# The health fields, after the first three in the same call. A driver that knows a field not
# prints [N/A] or [Not Supported] for it (the field is then absent); one that does not know a
# field's name rejects the whole query, which is then asked again without them.
NVIDIA_SMI_HEALTH = ("pci.bus_id", "persistence_mode", "compute_mode",
                     "ecc.errors.uncorrected.volatile.total", "retired_pages.pending",
                     "remapped_rows.pending")
NVIDIA_SMI_QUERY = (f"--query-gpu={NVIDIA_SMI_FIELDS},{','.join(NVIDIA_SMI_HEALTH)}",
                    "--format=csv,noheader,nounits")
NVIDIA_SMI_BASIC_QUERY = (f"--query-gpu={NVIDIA_SMI_FIELDS}", "--format=csv,noheader,nounits")
# Counts only: the bus id of each process's GPU, never its pid or name.
NVIDIA_SMI_APPS = ("--query-compute-apps=gpu_bus_id", "--format=csv,noheader")
NVIDIA_SMI_LIST = ("-L",)
AMD_SMI_STATIC = ("static", "--driver", "--vram", "--json")
ROCM_SMI_QUERY = ("--showdriverversion", "--showmeminfo", "vram", "--json")

# Values nvidia-smi prints where it has none.
_NOT_AVAILABLE = {"", "[n/a]", "n/a", "[not supported]", "not supported", "[unknown error]",
                  "[insufficient permissions]", "[gpu is lost]"}
_MIG_LINE = re.compile(r"^\s+MIG\s", re.MULTILINE)
# What nvidia-smi says of a GPU that fell off the bus (Xid 79) or stopped answering.
_LOST = re.compile(r"Unable to determine the device handle|GPU is lost", re.IGNORECASE)
COMPUTE_MODES = ("Default", "Exclusive_Thread", "Prohibited", "Exclusive_Process")


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


def probe_host(which: Which = find_program, runner: Runner = default_runner) -> dict[str, Any]:
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

    started = []
    for slot, argv in enumerate(commands):
        thread = threading.Thread(target=run, args=(slot, argv), daemon=True)
        try:
            thread.start()
            started.append(thread)
        except RuntimeError:  # no thread to be had (`ulimit -u`, pids.max): this one in turn
            run(slot, argv)
    for thread in started:
        thread.join(HOST_TIMEOUT_S + 2.0)
    return results


def _nvidia(executable: str, runner: Runner) -> dict[str, Any]:
    block = empty_block("nvidia-smi")
    start = time.monotonic()
    query, listing, apps = _concurrently(runner, [executable, *NVIDIA_SMI_QUERY],
                                         [executable, *NVIDIA_SMI_LIST],
                                         [executable, *NVIDIA_SMI_APPS])
    if listing.status == "ok":
        block["mig_devices"] = len(_MIG_LINE.findall(listing.stdout))
    if query.status in ("ok", "failed"):
        # A lost GPU makes nvidia-smi fail, after the rows of the others.
        block["lost_gpus"] = sum(1 for line in query.stdout.splitlines() if _LOST.search(line))
    gpus, drivers = parse_nvidia_smi_csv(query.stdout)
    left = HOST_TIMEOUT_S - (time.monotonic() - start)
    if query.status == "failed" and not gpus and left > 0.1:
        # A driver that does not know a health field refuses the whole query: ask without them,
        # within what is left of the probe's time.
        query = runner([executable, *NVIDIA_SMI_BASIC_QUERY], left)
        gpus, drivers = parse_nvidia_smi_csv(query.stdout)
    if query.status != "ok" and not gpus:
        block["status"] = query.status
        return block
    if apps.status == "ok":
        count_processes(gpus, apps.stdout)
    for gpu in gpus:
        gpu.pop("bus_id", None)  # only to count each GPU's processes: not a fact of the report
    block["status"] = "ok" if gpus else "failed"
    block["driver_version"] = drivers[0] if drivers else None
    block["gpus"] = gpus
    return block


def count_processes(gpus: list[dict[str, Any]], listing: str) -> None:
    """Each GPU's count of compute processes, from ``--query-compute-apps=gpu_bus_id`` lines."""
    seen: dict[str, int] = {}
    for line in listing.splitlines():
        bus = _bus_id(line)
        if bus:
            seen[bus] = seen.get(bus, 0) + 1
    for gpu in gpus:
        if gpu.get("bus_id"):
            gpu["compute_processes"] = seen.get(gpu["bus_id"], 0)


def _bus_id(text: str) -> str | None:
    """A PCI bus id in one form whatever the tool printed: 8 or 4 hex digits of domain."""
    match = re.fullmatch(r"\s*(?:([0-9a-fA-F]{4,8}):)?([0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.\d)\s*",
                         text)
    return f"{int(match.group(1) or '0', 16):08x}:{match.group(2).lower()}" if match else None


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
    """Rows of ``name, driver_version, memory.total`` (MiB, no units), and the health fields
    when the row has them, into GPUs and drivers. A field the driver has no value for is absent
    from its GPU."""
    gpus: list[dict[str, Any]] = []
    drivers: list[str] = []
    extra = len(NVIDIA_SMI_HEALTH)
    for line in text.splitlines():
        if not line.strip() or _LOST.search(line):
            continue
        # The name may itself hold commas; the fields after it never do.
        parts = line.rsplit(",", 2 + extra) if line.count(",") >= 2 + extra else \
            line.rsplit(",", 2)
        if len(parts) not in (3, 3 + extra):
            continue
        name, driver, memory = (_value(part) for part in parts[:3])
        gpu: dict[str, Any] = {"name": name, "memory_total_mib": _int_or_none(memory)}
        if len(parts) > 3:
            gpu.update(_health([_value(part) for part in parts[3:]]))
        gpus.append(gpu)
        if driver is not None and driver not in drivers:
            drivers.append(driver)
    return gpus, drivers


def _health(fields: list[str | None]) -> dict[str, Any]:
    """The health fields of one GPU (NVIDIA_SMI_HEALTH's, in order) that have a value; an
    unknown one is absent, not an error."""
    bus, persistence, mode, ecc, retired, remapped = fields
    values: dict[str, Any] = {"bus_id": _bus_id(bus or ""),
                              "persistence_mode": _switch(persistence, "enabled", "disabled"),
                              "compute_mode": next((known for known in COMPUTE_MODES
                                                    if known.lower() == (mode or "").lower()),
                                                   None),
                              "ecc_uncorrected_volatile": _int_or_none(ecc),
                              "retired_pages_pending": _switch(retired, "yes", "no"),
                              "remapped_rows_pending": _switch(remapped, "yes", "no")}
    return {key: value for key, value in values.items() if value is not None}


def _switch(text: str | None, true: str, false: str) -> bool | None:
    word = (text or "").lower()
    return True if word == true else False if word == false else None


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
    """A field as the tool printed it, or None for its words for no value. At most
    MAX_FIELD_CHARS characters: a GPU's name or a driver's version is short, and whatever the
    tool printed is the machine's (redacted with the report); its controls and bidi overrides
    are escaped here (``one_line``), so the report holds printable text only."""
    text = one_line(field.strip())
    if len(text) > MAX_FIELD_CHARS:
        text = text[:MAX_FIELD_CHARS - 1] + "\u2026"
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
        self._probe = probe
        self._started = True
        self._thread = threading.Thread(target=self._run, args=(probe,), daemon=True,
                                        name="host-probe")

    def start(self) -> HostProbe:
        try:
            self._thread.start()
        except RuntimeError:  # no thread to be had (`ulimit -u`, pids.max): the probe runs
            self._started = False  # when its block is asked for, after the worker
        return self

    def _run(self, probe: Callable[[], dict[str, Any]]) -> None:
        try:
            self._result = probe()
        except Exception:  # a probe that breaks is a failed probe, never a failed check
            self._result = empty_block("nvidia-smi", "failed")

    def result(self) -> dict[str, Any]:
        if not self._started:
            self._run(self._probe)
        else:  # the probe bounds itself; the margin covers killing and reaping a hung tool
            self._thread.join(HOST_TIMEOUT_S + 2.0)
        if self._result is None:
            return empty_block("nvidia-smi", "timeout")
        return self._result

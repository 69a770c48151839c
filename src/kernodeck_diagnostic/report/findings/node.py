"""Node and host: the machine around the driver and the GPUs (control 2 of the method): the
host's memory and its limits, the shared-memory folder, a container started without the
driver's compute libraries, WSL with a Linux driver installed inside it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from ..codes import Verdict
from ..shapes import EMPTY, Shm
from .core import (
    Finding,
    Layer,
    Report,
    Severity,
    check_passed,
    cuda_or_unknown,
    gpu_mode,
    messages,
    mib,
    node_block,
    pattern,
    quote,
    requested_device,
    search,
)

layer = Layer("node and host")

SHM_MINIMUM_BYTES = 256 * 2**20  # a container's default is 64 MiB: too small for both users
_SHM = "/dev/shm"  # noqa: S108 - named in evidence, never opened here


@layer.rule(350, "SHM_TOO_SMALL", variants=("small", "read_only", "absent"))
def shm_too_small(report: Report) -> Finding | None:
    """The shared-memory folder too small, read-only or absent: DataLoader workers (CPU and GPU
    alike) die of SIGBUS or cannot start, and NCCL cannot create its segments."""
    found = node_block(report).get("shm")
    if found is not None and "absent" in found:
        return Finding("SHM_TOO_SMALL", "warning", (f"there is no {_SHM} (/dev is there)",),
                       {}, variant="absent")
    shm: Shm | Mapping[str, Any] = found or EMPTY
    size, free = shm.get("size_bytes"), shm.get("free_bytes")
    small = isinstance(size, int) and size < SHM_MINIMUM_BYTES
    if not small and shm.get("writable") is not False:
        return None
    evidence = []
    if isinstance(size, int) and small:
        evidence.append(f"{_SHM} is {mib(size)} MiB"
                        + (f" ({mib(free)} MiB free)" if isinstance(free, int) else "")
                        + f", below {mib(SHM_MINIMUM_BYTES)} MiB")
    if shm.get("writable") is False:
        evidence.append(f"{_SHM} is not writable by this user")
    return Finding("SHM_TOO_SMALL", "warning", tuple(evidence),
                   {"size_mib": mib(size) if isinstance(size, int) else "?"},
                   variant="small" if small else "read_only")


# How running out of host memory reads: C++'s std::bad_alloc (the worker then aborts; its name
# mangled, St9bad_alloc, when libstdc++'s terminate handler cannot allocate to demangle it), the
# dynamic loader's fatal error for a thread's TLS (exit 127), ENOMEM in an OSError, a MemoryError
# the worker could not even report (the report's sentence quotes its last line on stderr; one it
# reported is the error's type). Not glibc's "cannot allocate memory in static TLS block", a
# fixed-size area that no amount of memory enlarges.
_OUT_OF_MEMORY = (r"std::bad_alloc|St9bad_alloc|cannot allocate memory for thread-local data"
                  r"|\[Errno 12\] Cannot allocate memory|on stderr: MemoryError\b"
                  r"|Cannot recover from MemoryErrors")
# What counts only when a limit on memory is set: the loader could not map a library (ENOMEM
# under a limit, but also a noexec mount or a damaged file), and CPython's fatal "Cannot recover
# from stack overflow", which a MemoryError in the middle of an import gives with a stack of 30
# frames (CPython 3.11 under ulimit -d, seen for real), and a deep recursion gives without one;
# and the SystemError of a C function that failed without setting an exception, which an
# allocation that fails while an exception is being raised gives (a third of real imports of
# torch under ulimit -d 100 MB here, 2026-12-03), and a faulty extension gives without one.
_UNDER_A_LIMIT = (r"failed to map segment from shared object"
                  r"|Fatal Python error: \S+: Cannot recover from stack overflow"
                  r"|SystemError: (?:error return without exception set"
                  r"|.* returned NULL without setting an exception)")
# What says the host's memory ran out, without a limit on it, and with one.
_EXHAUSTED = pattern(_OUT_OF_MEMORY)
_EXHAUSTED_UNDER_A_LIMIT = pattern(f"{_OUT_OF_MEMORY}|{_UNDER_A_LIMIT}")
# The limits that fail an allocation (node.memory_limits), with the shell's command for each.
_MEMORY_LIMITS: tuple[tuple[Literal["address_space_bytes", "data_bytes"], str], ...] = (
    ("address_space_bytes", "ulimit -v"), ("data_bytes", "ulimit -d"))
# CUDA starting up says "out of memory" (cudaErrorMemoryAllocation, error 2) when it cannot
# reserve the host address space it maps the GPUs' memory into: cudaGetDeviceCount()'s "Error 2:
# out of memory", or the raw "CUDA error: out of memory" of a context that could not be made
# (never the caching allocator's "CUDA out of memory. Tried to allocate", which needs a context).
_CUDA_START_OUT_OF_MEMORY = pattern(r"\bError 2: out of memory|CUDA error: out of memory")
_NAMES_LIBCUDA = pattern(r"libcuda\.so")


@layer.rule(270, "HOST_MEMORY_EXHAUSTED", variants=(None, "limited", "cuda_reservation"))
def host_memory_exhausted(report: Report) -> Finding | None:
    """The process ran out of host memory: std::bad_alloc, MemoryError, the loader's own words;
    under a limit on memory (``ulimit -v``, ``-d``), the limit is named and raising it is the
    advice; CUDA that cannot start under ``ulimit -v`` is told apart from a full GPU."""
    error = report.get("error") or EMPTY
    limits = (report.get("node") or EMPTY).get("memory_limits") or EMPTY
    limited = [(command, f"{mib(limit)} MiB") for key, command in _MEMORY_LIMITS
               if isinstance(limit := limits.get(key), int)]
    address_space = next((limit for command, limit in limited if command == "ulimit -v"), None)
    reservation = _cuda_reservation_refused(report, address_space)
    if reservation is not None:
        return reservation
    said = search(_EXHAUSTED_UNDER_A_LIMIT if limited else _EXHAUSTED, messages(report))
    if said is None and error.get("type") != "MemoryError":
        return None
    evidence = [quote(said[0]) if said else f"MemoryError at the {error.get('stage')} stage"]
    evidence += [_limit_evidence(command, limit) for command, limit in limited]
    if not limited:
        return Finding("HOST_MEMORY_EXHAUSTED", "error", tuple(evidence))
    command, limit = limited[0]
    return Finding("HOST_MEMORY_EXHAUSTED", "error", tuple(evidence),
                   {"command": command, "limit": limit}, variant="limited")


def _limit_evidence(command: str, limit: str) -> str:
    return f"{command}: {limit} for this process and the worker"


def _cuda_reservation_refused(report: Report, address_space: str | None) -> Finding | None:
    """CUDA's "out of memory" before it had a context on the device, under an address-space
    limit: the driver could not reserve the host address space it maps every GPU's memory into
    (at least as large as their memory), so the limit, not the GPU, ran out. Once
    the device's free memory could be read (a context exists), a later "out of memory" is the
    GPU's own and this says nothing."""
    if not (address_space and gpu_mode(report) and not check_passed(report)
            and report["pytorch"].get("backend") == "cuda"
            and not isinstance(requested_device(report).get("free_memory_bytes"), int)):
        return None
    said = search(_CUDA_START_OUT_OF_MEMORY, messages(report))
    if said is None:
        return None
    return Finding("HOST_MEMORY_EXHAUSTED", "error",
                   (quote(said[0]), _limit_evidence("ulimit -v", address_space),
                    "the device's free memory could not be read: CUDA had no context on it yet"),
                   {"command": "ulimit -v", "limit": address_space}, variant="cuda_reservation")


@layer.rule(400, "CONTAINER_NO_COMPUTE_CAPABILITY")
def container_no_compute_capability(report: Report) -> Finding | None:
    """NVIDIA's device nodes and NVML are here, libcuda is not: a container given the driver's
    utility libraries (nvidia-smi works) without its compute ones."""
    node, nodes = node_block(report), report["runtime"].get("device_nodes") or EMPTY
    if not (gpu_mode(report) and not check_passed(report) and node.get("libcuda") == "absent"
            and node.get("nvml") is True and (nodes.get("nvidiactl") or node.get("dev_gpus"))):
        return None
    if not (report["pytorch"].get("backend") == "cuda"
            or search(_NAMES_LIBCUDA, messages(report, ["import"]))):
        return None
    return Finding("CONTAINER_NO_COMPUTE_CAPABILITY", "error",
                   ("NVIDIA device nodes are present (/dev/nvidiactl or /dev/nvidiaN)",
                    "libnvidia-ml.so.1 (NVML, utility) is found; libcuda.so.1 (compute) is not"))


@layer.rule(410, "WSL_LINUX_DRIVER_INSTALLED", variants=("system", "library_path"))
def wsl_linux_driver_installed(report: Report) -> Finding | None:
    node = node_block(report)
    place = node.get("libcuda")
    if not (gpu_mode(report) and not check_passed(report) and cuda_or_unknown(report)
            and node.get("wsl") and place in ("system", "library_path")):
        return None
    where = "a folder of LD_LIBRARY_PATH" if place == "library_path" else "the system's folders"
    return Finding("WSL_LINUX_DRIVER_INSTALLED", "error",
                   ("/dev/dxg exists: WSL 2",
                    f"the loader finds libcuda.so.1 first in {where}, not in WSL's driver folder"),
                   variant=str(place))


# What the check may use is "far below" the machine when it is at most this share of its CPUs.
CPU_SHARE_LIMITED = 0.5


@layer.rule(660, "CPU_LIMITED", variants=("affinity", "quota"))
def cpu_limited(report: Report) -> Finding | None:
    """This process may use far fewer CPUs than the machine has: its affinity (taskset, a
    cpuset) or its cgroup's CPU quota (a container's --cpus, a job's CPU request). An error when
    the time limit ended the check, a warning under one CPU, else for information."""
    system = report.get("system") or EMPTY
    logical = system.get("logical_cpus")
    affinity, quota = system.get("usable_cpus"), system.get("cpu_quota")
    allowed = [value for value in (affinity, quota) if isinstance(value, (int, float))
               and not isinstance(value, bool) and value > 0]
    if not (isinstance(logical, int) and logical > 0 and allowed):
        return None
    usable = min(allowed)
    if not (usable < logical and (usable <= logical * CPU_SHARE_LIMITED or usable < 1)):
        return None
    evidence = [f"the machine has {logical} logical CPUs"]
    if isinstance(affinity, int) and affinity < logical:
        evidence.append(f"this process may run on {affinity} of them (its CPU affinity)")
    if isinstance(quota, (int, float)) and quota < logical:
        evidence.append(f"its cgroup's CPU quota allows {quota:g} CPU(s) of time "
                        "(cpu.max or cpu.cfs_quota_us)")
    timed_out = report["code"] == Verdict.TIMEOUT
    if timed_out:
        evidence.append(f"the time limit ended the check at the {report['stage']} stage")
    variant = "quota" if isinstance(quota, (int, float)) and quota == usable else "affinity"
    severity: Severity = "error" if timed_out else "warning" if usable < 1 else "info"
    return Finding("CPU_LIMITED", severity, tuple(evidence),
                   {"usable": f"{usable:g}", "logical": logical}, variant=variant)

"""The machine a maintainer asks about, read by the front while the worker runs (the ``system``
block): the operating system, kernel, C library, processor, memory, the NVIDIA kernel module's
driver version, the CUDA toolkit an extension build would use, and the allow-listed configuration
variables that are set.

The worker inherits the front's environment unchanged and runs on the same machine, so what the
front reads here is what the worker's process sees. Every fact is read on its own and is None
when it cannot be read; only the toolkit costs a process (``nvcc --version``, bounded by
TOOLKIT_TIMEOUT_S), and the whole probe runs in a thread beside the worker (``start_probe``), so
it adds nothing to the check's time. No host name, no path, no value of a variable outside
CONFIGURATION_VARIABLES is read into the block.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from ..children import find_program
from ..forked import affinity_cpus
from ..untrusted_json import read_regular
from .host import Runner, ToolOutput, default_runner

TOOLKIT_TIMEOUT_S = 3.0
NVIDIA_VERSION_FILE = "/proc/driver/nvidia/version"
KFD_TOPOLOGY = "/sys/class/kfd/kfd/topology/nodes"
OS_RELEASE_FILES = ("/etc/os-release", "/usr/lib/os-release")
# Where PyTorch's extension builder looks when neither CUDA_HOME, CUDA_PATH nor nvcc on PATH
# says (torch.utils.cpp_extension._find_cuda_home), on Linux and macOS.
DEFAULT_CUDA_HOME = "/usr/local/cuda"
WINDOWS_CUDA_HOMES = "C:/Program Files/NVIDIA GPU Computing Toolkit/CUDA"

# Variables that carry configuration PyTorch, CUDA, ROCm, NCCL or OpenMP read, never a secret
# nor a path: reported by name and value when set. Variables that hold paths (NCCL_DEBUG_FILE,
# TORCH_HOME, CUDA_CACHE_PATH...) and the visibility variables (runtime.visibility says what
# those do, never their value) are not here.
CONFIGURATION_VARIABLES = (
    "CUDA_DEVICE_ORDER", "CUDA_LAUNCH_BLOCKING", "CUDA_MODULE_LOADING",
    "CUDA_DEVICE_MAX_CONNECTIONS", "CUBLAS_WORKSPACE_CONFIG", "NVIDIA_TF32_OVERRIDE",
    "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF", "PYTORCH_ALLOC_CONF",
    "PYTORCH_NO_CUDA_MEMORY_CACHING", "PYTORCH_NVML_BASED_CUDA_CHECK", "TORCH_CUDA_ARCH_LIST",
    "TORCH_USE_CUDA_DSA", "TORCH_SHOW_CPP_STACKTRACES", "TORCH_NCCL_BLOCKING_WAIT",
    "TORCH_NCCL_ASYNC_ERROR_HANDLING", "PYTORCH_ROCM_ARCH",
    "HSA_OVERRIDE_GFX_VERSION", "HIP_LAUNCH_BLOCKING", "AMD_SERIALIZE_KERNEL",
    "NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL", "NCCL_IB_DISABLE",
    "NCCL_SHM_DISABLE", "NCCL_NET_GDR_LEVEL", "NCCL_ALGO", "NCCL_PROTO",
    "OMP_NUM_THREADS", "MKL_NUM_THREADS",
)
CONFIGURATION_SET = frozenset(CONFIGURATION_VARIABLES)
MAX_VALUE_CHARS = 100  # a configuration value is short; anything longer is cut
MAX_TEXT_CHARS = 200  # a distribution name, a processor model

# How the extension builder found the toolkit, in the order it looks.
ToolkitSource = Literal["CUDA_HOME", "CUDA_PATH", "PATH", "default_location"]
ToolkitStatus = Literal["ok", "not_found", "timeout", "failed"]
_RELEASE = re.compile(r"release (\d+\.\d+)")
# "NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.133.20  Fri ..." (the open module says
# "NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release Build ...").
_NVRM = re.compile(r"NVRM version:.*?\s(\d+\.\d+(?:\.\d+)?)\s")
_GFX_TARGET = re.compile(r"^gfx_target_version\s+(\d+)\s*$", re.MULTILINE)
_CPUINFO_BYTES = 64 * 1024  # the first processor's block, which names the model


def probe_system(environ: Mapping[str, str] | None = None, which: Callable[[str], str | None]
                 = find_program, runner: Runner = default_runner,
                 default_cuda_home: str = DEFAULT_CUDA_HOME) -> dict[str, Any]:
    """The report's ``system`` block, every fact guarded: one that cannot be read is None."""
    env = os.environ if environ is None else environ
    name, version = _guarded(operating_system) or (None, None)
    return {
        "os_name": name, "os_version": version,
        "kernel": _guarded(kernel_release), "libc": _guarded(libc),
        "cpu_model": _guarded(cpu_model), "logical_cpus": _guarded(os.cpu_count),
        "usable_cpus": _guarded(affinity_cpus), "cpu_quota": _guarded(cpu_quota),
        "memory_total_bytes": _guarded(memory_total_bytes),
        "nvidia_driver_version": _guarded(nvidia_driver_version),
        "kfd_gfx_targets": _guarded(kfd_gfx_targets),
        "cuda_toolkit": _guarded(lambda: cuda_toolkit(env, which, runner, default_cuda_home))
        or _toolkit("failed", None, None, env),
        "configuration": _guarded(lambda: configuration(env)) or {},
    }


def cpu_quota(cgroup_root: str = "/sys/fs/cgroup", own: str = "/proc/self/cgroup") -> float | None:
    """The CPU time this process's cgroup may use, in CPUs (0.05: 5% of one), the smallest
    quota of its cgroup and those above it: cgroup v2's ``cpu.max``, v1's ``cpu.cfs_quota_us``
    over ``cpu.cfs_period_us``. None when no quota is set or it cannot be read."""
    try:
        lines = read_regular(own, 64 * 1024, cut=True).decode("utf-8", "replace").splitlines()
    except OSError:
        return None
    quotas = []
    for line in lines:
        fields = line.split(":", 2)
        if len(fields) != 3:
            continue
        controllers, path = fields[1], fields[2]
        if controllers == "":  # v2: the unified hierarchy
            folders = _cgroup_folders(os.path.join(cgroup_root, "unified"), path) \
                if os.path.isdir(os.path.join(cgroup_root, "unified")) else \
                _cgroup_folders(cgroup_root, path)
            quotas += [q for q in map(_cpu_max, folders) if q is not None]
        elif "cpu" in controllers.split(","):
            for name in ("cpu", "cpu,cpuacct", "cpuacct,cpu"):
                mount = os.path.join(cgroup_root, name)
                if os.path.isdir(mount):
                    quotas += [q for q in map(_cfs_quota, _cgroup_folders(mount, path))
                               if q is not None]
                    break
    return min(quotas) if quotas else None


def _cgroup_folders(mount: str, path: str) -> list[str]:
    """The cgroup's folder under ``mount`` and each one above it, up to the mount; in a
    container whose own cgroup is the mount's root, the path it names is not there: the mount."""
    parts = [part for part in path.strip("/").split("/") if part and part != ".."]
    folders = [os.path.join(mount, *parts[:depth]) for depth in range(len(parts), -1, -1)]
    return [folder for folder in folders if os.path.isdir(folder)]


def _cpu_max(folder: str) -> float | None:
    words = _read_small(os.path.join(folder, "cpu.max")).split()
    if len(words) == 2 and words[0].isdigit() and words[1].isdigit() and int(words[1]) > 0:
        return int(words[0]) / int(words[1])
    return None  # "max": no quota


def _cfs_quota(folder: str) -> float | None:
    quota = _read_small(os.path.join(folder, "cpu.cfs_quota_us")).strip()
    period = _read_small(os.path.join(folder, "cpu.cfs_period_us")).strip()
    if quota.isdigit() and period.isdigit() and int(period) > 0 and int(quota) > 0:
        return int(quota) / int(period)
    return None  # -1: no quota


def _read_small(path: str) -> str:
    try:
        return read_regular(path, 256, cut=True).decode("ascii", "replace")
    except OSError:
        return ""


def _guarded(read: Callable[[], Any]) -> Any:
    try:
        return read()
    except Exception:  # one fact that cannot be read is None, never a failed check
        return None


def _short(text: str | None, limit: int = MAX_TEXT_CHARS) -> str | None:
    line = " ".join(str(text or "").split())
    if not line:
        return None
    return line if len(line) <= limit else line[: limit - 1] + "\u2026"


def operating_system() -> tuple[str | None, str | None]:
    """(name, version): ``Ubuntu``, ``24.04.2 LTS (Noble Numbat)``; ``macOS``, ``15.5``;
    ``Windows``, ``10.0.26100``. Never the host's name."""
    if sys.platform.startswith("linux"):
        for path in OS_RELEASE_FILES:
            fields = os_release(path)
            if fields is not None:
                return (_short(fields.get("NAME")),
                        _short(fields.get("VERSION") or fields.get("VERSION_ID")
                               or fields.get("BUILD_ID")))
        return "Linux", None
    import platform  # here: only where /etc/os-release does not say

    if sys.platform == "darwin":
        return "macOS", _short(platform.mac_ver()[0])
    if sys.platform == "win32":
        release, build = platform.win32_ver()[:2]
        return "Windows", _short(f"{release} ({build})" if build else release)
    return _short(platform.system()), _short(platform.release())


def os_release(path: str) -> dict[str, str] | None:
    """The KEY=value lines of an os-release file, quotes removed; None when it cannot be read."""
    try:
        text = read_regular(path, 16 * 1024, cut=True).decode("utf-8", "replace")
    except OSError:
        return None
    fields = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip().isidentifier():
            fields[key.strip()] = value.strip().strip("\"'")
    return fields


def kernel_release() -> str | None:
    if sys.platform == "win32":
        import platform

        return _short(platform.version())
    return _short(os.uname().release)


def libc() -> str | None:
    """The C library the process runs on, e.g. ``glibc 2.36``; None where there is no glibc
    (musl, macOS, Windows)."""
    if sys.platform == "win32":
        return None
    try:
        version = os.confstr("CS_GNU_LIBC_VERSION")
    except (ValueError, OSError):
        return None
    return _short(version)


def cpu_model() -> str | None:
    """The processor's model name: /proc/cpuinfo on Linux (x86), the platform's word elsewhere."""
    if sys.platform.startswith("linux"):
        try:
            text = read_regular("/proc/cpuinfo", _CPUINFO_BYTES, cut=True)
        except OSError:
            return None
        for line in text.decode("utf-8", "replace").splitlines():
            key, sep, value = line.partition(":")
            if sep and key.strip().lower() in ("model name", "cpu model", "hardware"):
                return _short(value)
        return None
    import platform

    return _short(platform.processor())


def memory_total_bytes() -> int | None:
    if sys.platform == "win32":
        import ctypes

        class MemoryStatus(ctypes.Structure):
            _fields_ = [("dwLength", ctypes.c_ulong), ("dwMemoryLoad", ctypes.c_ulong),
                        ("ullTotalPhys", ctypes.c_ulonglong), ("ullAvailPhys", ctypes.c_ulonglong),
                        ("ullTotalPageFile", ctypes.c_ulonglong),
                        ("ullAvailPageFile", ctypes.c_ulonglong),
                        ("ullTotalVirtual", ctypes.c_ulonglong),
                        ("ullAvailVirtual", ctypes.c_ulonglong),
                        ("ullAvailExtendedVirtual", ctypes.c_ulonglong)]

        status = MemoryStatus()
        status.dwLength = ctypes.sizeof(MemoryStatus)
        if not ctypes.windll.kernel32.GlobalMemoryStatusEx(ctypes.byref(status)):
            return None
        return int(status.ullTotalPhys)
    pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    return int(pages) * int(size) if pages > 0 and size > 0 else None


def nvidia_driver_version(path: str = NVIDIA_VERSION_FILE) -> str | None:
    """The loaded NVIDIA kernel module's version, from its /proc file (no process, no cost); None
    when the module is not loaded (no file) or the file does not say."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        text = read_regular(path, 4096, cut=True).decode("utf-8", "replace")
    except OSError:
        return None
    match = _NVRM.search(text)
    return match.group(1) if match else None


def kfd_gfx_targets(topology: str = KFD_TOPOLOGY) -> list[str] | None:
    """The AMD GPUs' real architectures (``gfx1031``), from the kernel's KFD topology: what the
    hardware is, whatever HSA_OVERRIDE_GFX_VERSION makes the runtime report. None without KFD."""
    if not sys.platform.startswith("linux") or not os.path.isdir(topology):
        return None
    targets = []
    for node in sorted(os.listdir(topology), key=lambda name: (len(name), name))[:64]:
        try:
            properties = read_regular(os.path.join(topology, node, "properties"), 16 * 1024,
                                      cut=True)
            match = _GFX_TARGET.search(properties.decode("utf-8", "replace"))
        except OSError:
            continue
        number = int(match.group(1)) if match else 0
        if number:  # 0: a CPU node
            targets.append(gfx_name(number))
    return targets


def gfx_name(target: int) -> str:
    """KFD's gfx_target_version (major * 10000 + minor * 100 + stepping) as LLVM names it:
    90402 -> gfx942, 90010 -> gfx90a, 100301 -> gfx1031."""
    major, minor, stepping = target // 10000, target // 100 % 100, target % 100
    return f"gfx{major}{minor:x}{stepping:x}"


def cuda_toolkit(environ: Mapping[str, str], which: Callable[[str], str | None] = find_program,
                 runner: Runner = default_runner,
                 default_cuda_home: str = DEFAULT_CUDA_HOME) -> dict[str, Any]:
    """The CUDA toolkit PyTorch's extension builder (torch.utils.cpp_extension) would compile
    with, found as it finds it: CUDA_HOME, else CUDA_PATH, else nvcc on PATH, else the default
    location; and its version, from ``nvcc --version``. Never a path: only how it was found."""
    source: ToolkitSource
    nvcc: str | None
    home = environ.get("CUDA_HOME") or environ.get("CUDA_PATH")
    if home:
        source = "CUDA_HOME" if environ.get("CUDA_HOME") else "CUDA_PATH"
        nvcc = os.path.join(home, "bin", "nvcc.exe" if sys.platform == "win32" else "nvcc")
    elif (nvcc := which("nvcc")) is not None:
        source = "PATH"
    else:
        source, folder = "default_location", _default_home(default_cuda_home)
        nvcc = None if folder is None else os.path.join(
            folder, "bin", "nvcc.exe" if sys.platform == "win32" else "nvcc")
    if nvcc is None or not os.path.isfile(nvcc):
        return _toolkit("not_found", None if source == "default_location" else source, None,
                        environ)
    return toolkit_version(runner([nvcc, "--version"], TOOLKIT_TIMEOUT_S), source, environ)


def _default_home(default_cuda_home: str) -> str | None:
    if sys.platform == "win32":
        import glob

        found = sorted(glob.glob(WINDOWS_CUDA_HOMES + "/v*.*"))
        return found[0] if found else None
    return default_cuda_home if os.path.exists(default_cuda_home) else None


def toolkit_version(output: ToolOutput, source: ToolkitSource,
                    environ: Mapping[str, str]) -> dict[str, Any]:
    """The block from one ``nvcc --version`` run: ``release 13.0`` gives ``13.0``."""
    if output.status != "ok":
        return _toolkit(output.status, source, None, environ)
    match = _RELEASE.search(output.stdout)
    return _toolkit("ok" if match else "failed", source, match.group(1) if match else None,
                    environ)


def _toolkit(status: ToolkitStatus, source: ToolkitSource | None, version: str | None,
             environ: Mapping[str, str]) -> dict[str, Any]:
    return {"status": status, "version": version, "found_via": source,
            "cuda_home_set": "CUDA_HOME" in environ, "cuda_path_set": "CUDA_PATH" in environ}


def configuration(environ: Mapping[str, str],
                  names: Sequence[str] = CONFIGURATION_VARIABLES) -> dict[str, str]:
    """Each allow-listed variable that is set, with its value as one line of at most
    MAX_VALUE_CHARS characters (the report's redaction still reduces a path or a name in it).
    A byte that is not UTF-8 (``NCCL_DEBUG=$'INFO\\xa0'``, which Python keeps as a lone
    surrogate that no JSON file or terminal can take) is shown as its escape, ``\\xa0``."""
    found = {}
    for name in names:
        if name in environ:
            raw = environ[name].encode("utf-8", "surrogateescape")
            value = " ".join(raw.decode("utf-8", "backslashreplace").split())
            found[name] = value if len(value) <= MAX_VALUE_CHARS else \
                value[: MAX_VALUE_CHARS - 1] + "\u2026"
    return found


def start_probe(probe: Callable[[], dict[str, Any]] = probe_system,
                ) -> Callable[[], dict[str, Any] | None]:
    """Start ``probe`` in a thread, beside the worker; return the function that waits for its
    block: None when the probe broke or did not end in time (every fact then unknown)."""
    found: list[dict[str, Any]] = []

    def run() -> None:
        with contextlib.suppress(Exception):  # a probe that breaks never fails the check
            found.append(probe())

    thread: threading.Thread | None = threading.Thread(target=run, daemon=True,
                                                       name="system-probe")
    try:
        thread.start()  # type: ignore[union-attr]
    except RuntimeError:  # no thread to be had (`ulimit -u`, a cgroup's pids.max), while the
        thread = None     # worker may still compute: the probe runs when its block is asked for

    def result() -> dict[str, Any] | None:
        if thread is None:
            run()
        else:  # the toolkit's run bounds itself; the margin covers killing and reaping a hung nvcc
            thread.join(TOOLKIT_TIMEOUT_S + 2.0)
        return found[0] if found else None

    return result

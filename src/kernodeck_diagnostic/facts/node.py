"""Node facts: what the kernel and the file system show about this machine's GPU setup.

The report's ``node`` block, read by the front itself (the worker inherits its environment
unchanged, so the variables here are the ones the worker saw). Linux only: None elsewhere. Cheap
by construction: no root, no network, no subprocess, nothing loaded or opened as a device; only
``/sys``, ``/proc``, ``/dev``, ``os.statvfs`` and the dynamic loader's cache file
(``/etc/ld.so.cache``, parsed here, never ``ldconfig -p``). It holds counts, booleans, categories
and variable names: never a path, a value or a device identifier.

- ``shm``: ``/dev/shm``'s size and free space (bytes) and whether this user can write there; null
  when it is absent. DataLoader workers share tensors through it (both modes), NCCL its buffers.
- ``memory_limits``: the address-space (``ulimit -v``) and data (``ulimit -d``) limits this process
  runs under, and the worker it starts inherits (bytes; null when unlimited). Importing torch alone
  maps about 1 GB; under a lower limit it fails in ways that look like a broken install.
- ``nvidia_module_loaded``: ``/proc/driver/nvidia`` or ``/sys/module/nvidia`` exists.
- ``pci_gpus``, ``pci_models``, ``pci_drivers``: NVIDIA display-class PCI functions (vendor
  0x10de, class 0x03xx) in ``/sys/bus/pci/devices``, how many distinct device ids (models) they
  have, and the kernel driver each is bound to, counted by category.
- ``proc_gpus``: entries of ``/proc/driver/nvidia/gpus`` (null when the folder is absent);
  ``dev_gpus``: ``/dev/nvidiaN`` nodes present; ``dev_gpus_accessible``: those this process may
  open: read and write permission, and allowed by the cgroup (v1) device list when it is readable
  (cgroup v2 keeps its device filter in a BPF program no user can read).
- ``libcuda``: where the loader finds ``libcuda.so.1`` first (``LD_LIBRARY_PATH``, the cache, the
  default folders): ``absent``, ``wsl`` (WSL 2's driver folder), ``library_path`` or ``system``;
  ``libcuda_unversioned``: a ``libcuda.so`` link beside one (what ``-lcuda`` links against);
  ``nvml``: ``libnvidia-ml.so.1`` is found.
- ``wsl``: ``/dev/dxg`` exists (WSL 2's paravirtualised GPU).
- ``debug_variables``: which of the variables NVIDIA's DCGM flags as altering CUDA's behaviour are
  set (names only).
- ``compilers_not_found``: ``CXX`` when it is set to a program this ``PATH`` cannot run (a folder
  of another machine, a compiler removed) while the one ``torch.compile``'s C++ builder takes
  without it (``g++``; ``clang++`` on macOS) is there: the setting alone stands in the way (name
  only, never the value).
- ``visibility_by_index``: visibility variables that select devices by index (not UUID);
  ``mig_entries``: per visibility variable listing MIG devices, how many; ``visibility_conflicts``:
  variables set beside ``HIP_VISIBLE_DEVICES`` that select differently;
  ``visibility_unmatched``: per variable, how many of its GPU UUIDs no GPU of the driver's
  (``/proc/driver/nvidia/gpus/*/information``) has; {} when they all match or none can be read.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import stat
import struct
import sys
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from ..untrusted_json import read_regular

# The variables DCGM's diagnostic flags as changing CUDA's behaviour (DCGM_FR_BAD_CUDA_ENV).
# The compiler torch.compile's C++ builder runs on the CPU when set, and the one it runs without it
# (torch._inductor.config.cpp.cxx).
COMPILER_VARIABLES = {"CXX": "clang++" if sys.platform == "darwin" else "g++"}
DEBUG_VARIABLES = ("CUDA_INJECTION64_PATH", "CUDA_INJECTION32_PATH", "NSIGHT_CUDA_DEBUGGER",
                   "CUDA_ENABLE_COREDUMP_ON_EXCEPTION", "CUDA_COREDUMP_FILE",
                   "CUDA_DEVICE_WAITS_ON_EXCEPTION", "CUDA_PROFILE", "COMPUTE_PROFILE",
                   "CUDA_AUTO_BOOST")
VISIBILITY_VARIABLES = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
                        "GPU_DEVICE_ORDINAL")
# The kernel drivers an NVIDIA GPU is found bound to, as the report counts them.
PCI_DRIVERS = ("nvidia", "nouveau", "vfio-pci", "other", "none")
LibraryPlace = Literal["absent", "wsl", "library_path", "system"]

_NVIDIA_VENDOR = "0x10de"
_CACHE_MAGIC = b"glibc-ld.so.cache1.1"
_CACHE_HEADER = 48  # magic and version (20), nlibs, len_strings, flags + padding, 4 more words
_CACHE_ENTRY = struct.Struct("=iIIIQ")  # flags, key, value, osversion, hwcap
_CACHE_MAX_BYTES = 16 * 2**20
_CACHE_MAX_ENTRIES = 100_000
_FLAG_ELF_LIBC6 = 0x0003
_WSL_LIBRARIES = "usr/lib/wsl"


def collect(environ: Mapping[str, str] | None = None, root: str = "/") -> dict[str, Any] | None:
    """The ``node`` block, or None off Linux. ``root`` stands for ``/`` (a test's fixture tree);
    the variables are read from ``environ`` (this process's environment by default)."""
    if not sys.platform.startswith("linux"):
        return None
    env = os.environ if environ is None else environ
    pci = pci_gpus(root)
    present, accessible = device_nodes(root)
    proc_gpus = os.path.join(root, "proc/driver/nvidia/gpus")
    libraries = Libraries(env, root)
    libcuda = libraries.find("libcuda.so.1")
    return {
        "shm": shared_memory(root),
        "memory_limits": memory_limits(),
        "nvidia_module_loaded": any(os.path.exists(os.path.join(root, path))
                                    for path in ("proc/driver/nvidia", "sys/module/nvidia")),
        "pci_gpus": pci[0], "pci_models": pci[1], "pci_drivers": pci[2],
        "proc_gpus": _count_entries(proc_gpus),
        "dev_gpus": present, "dev_gpus_accessible": accessible,
        "libcuda": libraries.place(libcuda),
        "libcuda_unversioned": libraries.beside("libcuda.so", "libcuda.so.1"),
        "nvml": libraries.find("libnvidia-ml.so.1") is not None,
        "wsl": os.path.exists(os.path.join(root, "dev/dxg")),
        **variables(env),
        "visibility_unmatched": visibility_unmatched(env, gpu_uuids(proc_gpus)),
    }


def gpu_uuids(folder: str) -> list[str] | None:
    """The UUIDs of the driver's GPUs ("gpu-8f6c...", lower case), from each GPU's
    ``information`` file; None when the driver's folder is absent or no UUID can be read."""
    uuids = []
    for entry in _listdir(folder) if os.path.isdir(folder) else []:
        text = _read_text(os.path.join(folder, entry, "information"))
        found = re.search(r"^GPU UUID:\s*(GPU-[0-9a-fA-F-]+)", text, re.MULTILINE)
        if found:
            uuids.append(found.group(1).lower())
    return uuids or None


def visibility_unmatched(env: Mapping[str, str], uuids: list[str] | None) -> dict[str, int]:
    """How many of CUDA_VISIBLE_DEVICES' GPU UUIDs match none of ``uuids`` (CUDA takes a unique
    prefix of one); MIG entries and indices are not UUIDs of a GPU and are not counted."""
    value = env.get("CUDA_VISIBLE_DEVICES")
    if value is None or not uuids:
        return {}
    unmatched = sum(1 for entry in _entries(value) if entry.upper().startswith("GPU-")
                    and not any(uuid.startswith(entry.lower()) for uuid in uuids))
    return {"CUDA_VISIBLE_DEVICES": unmatched} if unmatched else {}


def variables(env: Mapping[str, str]) -> dict[str, Any]:
    """The facts read from variables: names and counts, never a value."""
    selected = {name: _entries(env[name]) for name in VISIBILITY_VARIABLES if name in env}
    return {
        "debug_variables": [name for name in DEBUG_VARIABLES if name in env],
        "compilers_not_found": [name for name, default in COMPILER_VARIABLES.items()
                                if env.get(name) and not runnable(env[name], env)
                                and runnable(default, env)],
        "visibility_by_index": [name for name, entries in selected.items()
                                if any(entry.isdigit() for entry in entries)],
        "mig_entries": {name: count for name, entries in selected.items()
                        if (count := sum(entry.upper().startswith("MIG-") for entry in entries))},
        "visibility_conflicts": visibility_conflicts(selected),
    }


def runnable(command: str, env: Mapping[str, str]) -> bool:
    """Whether ``command`` (a variable's value: ``g++``, ``/opt/gcc/bin/g++``, ``ccache g++``)
    names a program that can be run here: a file with execute permission, found through ``env``'s
    ``PATH`` when it has no folder. A value that cannot be read as words is taken as runnable."""
    try:
        program = shlex.split(command)[0]
    except (ValueError, IndexError):
        return True
    if os.sep in program:
        return os.path.isfile(program) and os.access(program, os.X_OK)
    return shutil.which(program, path=env.get("PATH", os.defpath)) is not None


def visibility_conflicts(selected: Mapping[str, list[str]]) -> list[str]:
    """The variables set beside HIP_VISIBLE_DEVICES that select differently.

    HIP reads CUDA_VISIBLE_DEVICES as well, and GPU_DEVICE_ORDINAL is ROCclr's; ROCr applies
    ROCR_VISIBLE_DEVICES first and HIP's indices then count among what it left, so an index of
    HIP's beyond ROCr's list selects nothing even where both say the same.
    """
    hip = selected.get("HIP_VISIBLE_DEVICES")
    if hip is None:
        return []
    conflicts = [name for name in ("CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL")
                 if name in selected and selected[name] != hip]
    rocr = selected.get("ROCR_VISIBLE_DEVICES")
    if rocr is not None and (rocr != hip or any(
            entry.isdigit() and int(entry) >= len(rocr) for entry in hip)):
        conflicts.insert(0, "ROCR_VISIBLE_DEVICES")
    return conflicts


def _entries(value: str) -> list[str]:
    return [entry.strip() for entry in value.split(",") if entry.strip()]


def shared_memory(root: str = "/") -> dict[str, Any] | None:
    """``/dev/shm``'s size, free space and writability; ``{"absent": True}`` when there is no
    such folder (a container or a mount namespace without it: POSIX shared memory then fails);
    None when it cannot be read, or on Windows."""
    path = os.path.join(root, "dev/shm")
    if sys.platform == "win32":
        return None
    if not os.path.lexists(path) and os.path.isdir(os.path.join(root, "dev")):
        return {"absent": True}
    if not os.path.isdir(path):
        return None
    try:
        found = os.statvfs(path)
    except OSError:
        return None
    read_only = bool(found.f_flag & os.ST_RDONLY)
    return {"size_bytes": found.f_blocks * found.f_frsize,
            "free_bytes": found.f_bavail * found.f_frsize,
            "writable": not read_only and os.access(path, os.W_OK | os.X_OK)}


def memory_limits() -> dict[str, int | None]:
    """The soft address-space and data limits of this process (the ones that fail an allocation),
    in bytes; None for a limit that is not set."""
    if sys.platform == "win32":  # no such limits (nor a node block)
        return {"address_space_bytes": None, "data_bytes": None}
    import resource

    def soft(limit: int) -> int | None:
        value = resource.getrlimit(limit)[0]
        return None if value == resource.RLIM_INFINITY or value < 0 else value

    return {"address_space_bytes": soft(resource.RLIMIT_AS),
            "data_bytes": soft(resource.RLIMIT_DATA)}


def pci_gpus(root: str = "/") -> tuple[int, int, dict[str, int]]:
    """NVIDIA display-class PCI functions: how many, how many distinct models, and the driver
    each is bound to (counted by PCI_DRIVERS' categories)."""
    folder = os.path.join(root, "sys/bus/pci/devices")
    drivers = dict.fromkeys(PCI_DRIVERS, 0)
    models: set[str] = set()
    count = 0
    for name in _listdir(folder):
        device = os.path.join(folder, name)
        # Class 0x03xxxx is a display controller (VGA 0x0300, 3D 0x0302): a GPU's audio and USB
        # functions share its vendor id and are not GPUs.
        if _read(device, "vendor") != _NVIDIA_VENDOR or not _read(device, "class").startswith(
                "0x03"):
            continue
        count += 1
        models.add(_read(device, "device"))
        try:
            bound = os.path.basename(os.readlink(os.path.join(device, "driver")))
        except OSError:
            bound = "none"
        drivers[bound if bound in drivers else "other"] += 1
    return count, len(models), drivers


def device_nodes(root: str = "/") -> tuple[int, int]:
    """How many ``/dev/nvidiaN`` exist, and how many of them this process may open.

    Opening one would initialise the GPU (seconds without persistence mode), so nothing is
    opened: permission bits, and the cgroup v1 device list when it can be read.
    """
    folder = os.path.join(root, "dev")
    allowed = _cgroup_device_rules(root)
    present = accessible = 0
    for name in _listdir(folder):
        if not re.fullmatch(r"nvidia\d+", name):
            continue
        path = os.path.join(folder, name)
        try:
            info = os.stat(path)
        except OSError:
            continue
        present += 1
        if os.access(path, os.R_OK | os.W_OK) and _cgroup_allows(allowed, info):
            accessible += 1
    return present, accessible


def _cgroup_device_rules(root: str) -> list[tuple[str, str, str]] | None:
    """The cgroup v1 device controller's allow list of this process, or None when unreadable."""
    place = "/"
    for line in _read_text(os.path.join(root, "proc/self/cgroup")).splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3 and "devices" in parts[1].split(","):
            place = parts[2]
    base = os.path.join(root, "sys/fs/cgroup/devices")
    # Inside a container without a cgroup namespace the path names the host's hierarchy, and the
    # container's own cgroup is mounted at the controller's root.
    for folder in (os.path.join(base, place.lstrip("/")), base):
        text = _read_text(os.path.join(folder, "devices.list"))
        if text:
            rules = [line.split() for line in text.splitlines()]
            return [(rule[0], rule[1], rule[2]) for rule in rules if len(rule) == 3]
    return None


def _cgroup_allows(rules: list[tuple[str, str, str]] | None, info: os.stat_result) -> bool:
    if rules is None or sys.platform == "win32" or not stat.S_ISCHR(info.st_mode):
        return True  # nothing to read: permission bits alone decide
    major, minor = os.major(info.st_rdev), os.minor(info.st_rdev)
    for kind, numbers, access in rules:
        if kind not in ("a", "c") or not {"r", "w"} <= set(access):
            continue
        if kind == "a":
            return True
        rule_major, _, rule_minor = numbers.partition(":")
        if rule_major in ("*", str(major)) and rule_minor in ("*", str(minor)):
            return True
    return False


class Libraries:
    """Where the dynamic loader would find a library: ``LD_LIBRARY_PATH``'s folders, then the
    loader's cache (in its order), then the default folders."""

    def __init__(self, env: Mapping[str, str], root: str = "/") -> None:
        self.root = root
        self.variable = [entry for entry in (env.get("LD_LIBRARY_PATH") or "").split(":")
                         if entry]
        self.cache = loader_cache(os.path.join(root, "etc/ld.so.cache")) or []
        # Debian's multiarch folders (lib/x86_64-linux-gnu...), as this Python names its own.
        uname = getattr(os, "uname", None)
        multiarch = getattr(sys.implementation, "_multiarch", None) or (
            f"{uname().machine}-linux-gnu" if uname else "")
        self.defaults = [os.path.join(root, folder) for folder in (
            f"lib/{multiarch}", f"usr/lib/{multiarch}", "lib64", "usr/lib64", "lib", "usr/lib")]

    def candidates(self, name: str) -> Iterable[tuple[str, str]]:
        """(source, folder) of every copy of ``name`` the loader could take, in its order."""
        for folder in self.variable:
            if os.path.isfile(os.path.join(folder, name)):
                yield "library_path", folder
        for soname, path in self.cache:
            if soname == name:
                yield "system", os.path.dirname(os.path.join(self.root, path.lstrip("/")))
        for folder in self.defaults:
            if os.path.isfile(os.path.join(folder, name)):
                yield "system", folder

    def find(self, name: str) -> tuple[str, str] | None:
        return next(iter(self.candidates(name)), None)

    def place(self, found: tuple[str, str] | None) -> LibraryPlace:
        if found is None:
            return "absent"
        source, folder = found
        wsl = os.path.join(self.root, _WSL_LIBRARIES)
        if folder == wsl or folder.startswith(wsl + os.sep):
            return "wsl"
        return "library_path" if source == "library_path" else "system"

    def beside(self, link: str, name: str) -> bool:
        """Whether ``link`` exists in a folder holding ``name``, or in a default folder (where the
        linker looks after the folders it is given)."""
        folders = [folder for _, folder in self.candidates(name)] + self.defaults
        return any(os.path.exists(os.path.join(folder, link)) for folder in folders)


def loader_cache(path: str) -> list[tuple[str, str]] | None:
    """(soname, path) of every native entry of glibc's loader cache, in its order; None when the
    file is absent or not in the format glibc has written since 2.32 (or appended before)."""
    try:
        data = read_regular(path, _CACHE_MAX_BYTES, cut=True)
    except OSError:
        return None
    start = data.find(_CACHE_MAGIC)
    if start < 0 or len(data) < start + _CACHE_HEADER:
        return None
    (count,) = struct.unpack_from("=I", data, start + len(_CACHE_MAGIC))
    # 64-bit libraries carry an architecture in the flags' second byte (x86-64 0x0300, AArch64
    # 0x0a00...); a 32-bit one has none: the i386 libcuda.so.1 is no use to a 64-bit Python.
    wide = sys.maxsize > 2**32
    entries: list[tuple[str, str]] = []
    for index in range(min(count, _CACHE_MAX_ENTRIES)):
        offset = start + _CACHE_HEADER + index * _CACHE_ENTRY.size
        if offset + _CACHE_ENTRY.size > len(data):
            break
        flags, key, value, _, _ = _CACHE_ENTRY.unpack_from(data, offset)
        if flags & 0xFF != _FLAG_ELF_LIBC6 or bool(flags & 0xFF00) != wide:
            continue
        # The strings' offsets count from the start of this format's header.
        soname, target = _cstring(data, start + key), _cstring(data, start + value)
        if soname and target:
            entries.append((soname, target))
    return entries


def _cstring(data: bytes, offset: int) -> str:
    end = data.find(b"\0", offset)
    if offset >= len(data) or end < 0:
        return ""
    return data[offset:end].decode("utf-8", "replace")


def _listdir(folder: str) -> list[str]:
    try:
        return sorted(os.listdir(folder))
    except OSError:
        return []


def _count_entries(folder: str) -> int | None:
    return len(_listdir(folder)) if os.path.isdir(folder) else None


def _read(folder: str, name: str) -> str:
    return _read_text(os.path.join(folder, name)).strip().lower()


def _read_text(path: str) -> str:
    try:
        return read_regular(path, 65536, cut=True).decode("ascii", "replace")
    except OSError:
        return ""

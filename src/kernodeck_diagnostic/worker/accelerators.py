"""The worker's view of an accelerator: which backend a build drives, and how to use its devices.

CUDA and ROCm builds drive their GPUs through ``torch.cuda`` (device name ``cuda``), Intel XPU
builds through ``torch.xpu`` (``xpu``), Apple builds through ``torch.mps`` (``mps``, one device).
Everything a stage needs to place, count, name, set and synchronise a device goes through
``Accelerator``, so the stages (and the later ones that run on the same device: ``target``,
``module``) never name a backend's submodule themselves.

A companion of the worker (see ``stages``): the standard library only at its top, Python 3.9+.
"""

from __future__ import annotations

import ctypes  # torch imports it too: nothing more to load (macOS's sysctl, see rosetta)
import platform
import sys
from typing import TYPE_CHECKING, Any, Callable, Literal

if TYPE_CHECKING or not __name__.startswith("_kernodeck_worker_"):
    from . import protocol
else:  # copied beside the worker, which loaded this file (stages.companion)
    protocol = sys.modules["_kernodeck_worker_protocol"]

Backend = Literal["cuda", "rocm", "xpu", "mps", "cpu"]
# The torch submodule (and device name) each GPU backend uses: ROCm reuses CUDA's.
Kind = Literal["cuda", "xpu", "mps"]
_KINDS: dict[str, Kind] = {"cuda": "cuda", "rocm": "cuda", "xpu": "xpu", "mps": "mps"}


def build_backend(torch: Any) -> dict[str, Any]:
    """The backend the build declares, and the versions it was built with (``pytorch`` facts).

    HIP first (ROCm builds set both), then CUDA, then Intel XPU, then Apple's MPS; a build with
    none of them is ``cpu``. Only what the build says: no driver is asked anything.
    """
    version_module = getattr(torch, "version", None)
    hip_build = getattr(version_module, "hip", None)
    cuda_build = getattr(version_module, "cuda", None)
    xpu_build = getattr(version_module, "xpu", None)
    backend: Backend
    if hip_build:
        backend = "rocm"
    elif cuda_build:
        backend = "cuda"
    elif xpu_build or _asked(lambda: torch.xpu._is_compiled()):  # noqa: PLW0108
        backend = "xpu"
    elif _asked(lambda: torch.backends.mps.is_built()):  # noqa: PLW0108
        backend = "mps"
    else:
        backend = "cpu"
    return {"cuda_build": str(cuda_build) if cuda_build else None,
            "hip_build": str(hip_build) if hip_build else None,
            "xpu_build": str(xpu_build) if xpu_build else None,
            "backend": backend}


def _asked(question: Any) -> bool:
    """A build's yes-or-no answer; no when it cannot answer (an older torch without the call:
    the callers' lambdas defer the attribute lookups that raise there)."""
    try:
        return bool(question())
    except Exception:
        return False


class Accelerator:
    """One GPU backend's devices, as the worker uses them."""

    def __init__(self, torch: Any, backend: str) -> None:
        self.torch = torch
        self.backend = backend
        self.kind: Kind = _KINDS[backend]
        # torch.cuda, torch.xpu or torch.mps: for the stages that run after the computation.
        # (torch.mps came with PyTorch 2.0: older builds with MPS have none.)
        self.module: Any = getattr(torch, self.kind, None)

    @property
    def available_call(self) -> str:
        """The call whose answer says whether the backend is usable, as the user would type it."""
        if self.kind == "mps":
            return "torch.backends.mps.is_available()"
        return f"torch.{self.kind}.is_available()"

    def is_available(self) -> bool:
        if self.kind == "mps":
            return bool(self.torch.backends.mps.is_available())
        return bool(self.module.is_available())

    def device_count(self) -> int:
        count = getattr(self.module, "device_count", None)
        if count is None:  # a torch.mps without device_count: one Metal device when available
            return 1
        return int(count())

    def target(self, index: int) -> str:
        """The device string tensors are placed with: ``cuda:0``, ``xpu:1``, ``mps``."""
        return "mps" if self.kind == "mps" else f"{self.kind}:{index}"

    def set_device(self, index: int) -> None:
        if self.kind != "mps":  # MPS has one device and no current-device setting
            self.module.set_device(index)

    def synchronize(self, index: int) -> None:
        if self.kind == "mps":
            if self.module is not None:  # without torch.mps, reading the values back waits
                self.module.synchronize()
        else:
            self.module.synchronize(index)

    def initialisation_error(self) -> str | None:
        """The reason the backend gives when asked to initialise (is_available() only says no);
        None when it gives none, or has no such call (MPS)."""
        init = None if self.kind == "mps" else getattr(self.module, "init", None)
        if init is None:
            return None
        try:
            init()
        except Exception as exc:
            return protocol.bounded(str(exc)) or type(exc).__name__
        return None

    def properties(self, index: int) -> Any:
        """The device's properties object (name, total_memory; major and minor on CUDA and ROCm),
        or None for a backend that has none (MPS)."""
        if self.kind == "mps":
            return None
        return self.module.get_device_properties(index)

    def describe(self, index: int) -> dict[str, Any]:
        """One visible device as ``pytorch.devices[]`` says it."""
        device: dict[str, Any] = {"index": index, "name": None, "capability": None,
                                  "total_memory_bytes": None}
        try:
            props = self.properties(index)  # None: a backend without any (MPS)
            if props is not None:
                device["name"] = str(props.name)
                major, minor = getattr(props, "major", None), getattr(props, "minor", None)
                if major is not None and minor is not None:  # CUDA and ROCm; XPU has none
                    device["capability"] = f"{major}.{minor}"
                device["total_memory_bytes"] = int(props.total_memory)
                gcn_arch = getattr(props, "gcnArchName", None)  # ROCm only: gfx942:sramecc+
                if gcn_arch:
                    device["gcn_arch"] = str(gcn_arch)
        except Exception as exc:  # one unreadable device is a partial result, not a failed run
            device["error"] = f"{type(exc).__name__}: {protocol.bounded(str(exc))}"
        return device

    def free_memory(self, index: int) -> dict[str, int]:
        """The device's free memory before the computation (``torch.cuda.mem_get_info``, XPU's
        alike): what other processes left. Asked of the requested device only, since it creates
        a context there (the computation needs one anyway); nothing when the call fails or the
        backend has none (MPS), the computation then says why."""
        try:
            free, _ = self.module.mem_get_info(index)
            return {"free_memory_bytes": int(free)}
        except Exception:
            return {}

    def can_access_peer(self, source: int, target: int) -> bool | None:
        """Whether ``source`` can reach ``target``'s memory directly (peer to peer); None when
        the backend cannot say."""
        ask = getattr(self.module, "can_device_access_peer", None)
        if ask is None:
            return None
        try:
            return bool(ask(source, target))
        except Exception:
            return None


def apple_facts(available: bool) -> dict[str, Any]:
    """What says why MPS is or is not usable on this Mac: the macOS version, the process's
    architecture, and whether Rosetta translates it (an x86_64 Python on Apple silicon)."""
    return {"available": available, "macos_version": platform.mac_ver()[0] or None,
            "machine": platform.machine() or None, "translated": rosetta()}


def rosetta() -> bool | None:
    """Whether this process runs translated by Rosetta 2; None when it cannot be told (not
    macOS, or the call failed)."""
    if sys.platform != "darwin":
        return None
    try:
        value = ctypes.c_int(0)
        size = ctypes.c_size_t(ctypes.sizeof(value))
        found = ctypes.CDLL(None).sysctlbyname(b"sysctl.proc_translated", ctypes.byref(value),
                                               ctypes.byref(size), None, 0)
    except Exception:
        return None
    # The name is unknown on Intel Macs, where nothing is translated.
    return found == 0 and value.value == 1


def build_facts(torch: Any) -> tuple[dict[str, Any], dict[str, str]]:
    """The GPU build's own facts (architectures, cuDNN, NCCL), read without asking the driver.

    Each is read on its own: one that raises is None, and its exception's type is kept apart
    (the second mapping), so "this build has none" (None, not in the mapping) is never confused
    with "this build could not say".
    """
    readers: dict[str, Callable[[], Any]] = {
        "arch_list": lambda: build_arch_list(torch),
        # The lambdas defer attribute lookups that themselves raise on some builds.
        "cudnn_version": lambda: torch.backends.cudnn.version(),  # noqa: PLW0108 - None: no cuDNN
        "nccl_version": lambda: nccl_version(torch),
    }
    values: dict[str, Any] = {}
    raised: dict[str, str] = {}
    for name, read in readers.items():
        try:
            value = read()
        except Exception as exc:
            values[name], raised[name] = None, type(exc).__name__
            continue
        if isinstance(value, (list, tuple)):
            values[name] = [str(item) for item in value] or None  # an empty list says nothing
        else:
            values[name] = None if value is None else str(value)
    return values, raised


def build_arch_list(torch: Any) -> list[str] | None:
    """The architectures the build has code for: sm_90, compute_120, gfx942...

    Read from the build's own flags: ``torch.cuda.get_arch_list()`` returns [] without a usable
    GPU in some releases. A torch without that binding is asked through the public function.
    """
    flags = getattr(getattr(torch, "_C", None), "_cuda_getArchFlags", None)
    if flags is None:
        return list(torch.cuda.get_arch_list())
    text = flags()
    return str(text).split() if text else None  # None: not a GPU build


def nccl_version(torch: Any) -> str | None:
    """NCCL's (or RCCL's) version, e.g. 2.26.2; None when the build has no NCCL (CPU, Windows)."""
    if getattr(getattr(torch, "_C", None), "_nccl_version", None) is None:
        return None
    return ".".join(map(str, torch.cuda.nccl.version()))

"""A fake ``torch``: the test double for what needs a GPU, which this machine does not have.

Only GPU situations use it; CPU checks, missing and broken installs use real torch builds. The
scenario is chosen by ``KD_FAKE_TORCH`` and each is named after the real failure it stands for:

    cuda_pass               a CUDA 12.8 build with one working GPU
    rocm_pass               a ROCm (HIP) build with one working AMD GPU (still the ``cuda`` name)
    wrong_product           the backend computes a wrong matrix product
    nan_in_product          a faulty kernel (or GPU) puts a NaN into the product: the loss is
                            NaN and the gradient partly NaN, values JSON cannot write as numbers
    oom_at_allocation       the allocator runs out of device memory on the first tensor
    error_at_synchronize    an asynchronous kernel fault surfaces at synchronisation
    hang_in_synchronize     synchronisation never returns, SIGTERM and SIGINT ignored, with a
                            forked child that would outlive it
    segfault_in_compute     the driver crashes the process (a real SIGSEGV) in the product
    import_error_with_secrets  import fails with a message full of private data
    arch_not_in_build       a Blackwell GPU (sm_120) with a build made only up to sm_90: the
                            first kernel fails with "no kernel image is available"
    rocm_without_amd_gpu    a ROCm build where HIP finds no AMD GPU (on an NVIDIA machine, or
                            with the GPUs hidden): is_available() is False, "No HIP GPUs are
                            available"
    driver_libraries_not_mounted
                            a build linked against the NVIDIA driver (as Jetson's are) in a
                            container started without the GPU runtime: import fails on
                            libcuda.so.1
    gpu_memory_held_by_another_process
                            another process holds 11.5 GiB of the GPU's 12: mem_get_info says
                            so, and the tiny check still passes
    gpu_exclusive_process_busy
                            the GPU is in Exclusive_Process compute mode and another process
                            has its context: the first allocation fails with "CUDA-capable
                            device(s) is/are busy or unavailable" (cudaErrorDevicesUnavailable)
    uncorrectable_ecc_error
                            a double-bit memory error: synchronisation fails with "uncorrectable
                            ECC error encountered"
    mixed_gpu_models        two GPUs of different models (with KD_FAKE_DEVICES=2): CUDA's default
                            order puts the faster first
    driver_init_under_address_space_limit
                            CUDA's driver cannot reserve the host address space it maps the
                            GPU's memory into when the process's real address-space limit
                            (ulimit -v) is below twice the GPU's 12 GiB: cudaGetDeviceCount()
                            fails with "Error 2: out of memory", is_available() is False; without
                            such a limit it behaves like cuda_pass
    context_under_address_space_limit
                            the same refusal when the first context is made (is_available() was
                            true): mem_get_info and the first tensor fail with the raw "CUDA
                            error: out of memory"

Apple MPS, Intel XPU and nodes of four GPUs where one misbehaves (``mps_apple_silicon``,
``xpu_intel_arc``, ``node_with_faulty_and_hung_gpu``...) are listed in ``_devices.py``.

The kernels' scenarios (``tesla_t4_turing``, ``cudnn_status_not_initialized``) are listed in
``_kernels.py``.

Hostile workers (signals, exits, native hangs, floods, escaping processes, a corrupt event log,
huge or non-UTF-8 messages, private data) are listed in ``_hostile.py``, next to this file.

``KD_FAKE_DEVICES`` sets the number of visible devices (default 1). ``KD_FAKE_TORCH_MARKER``
names a file written at import (proof the worker ran); ``KD_FAKE_TORCH_PIDS`` a file where the
hang scenario records the pids it leaves behind; ``KD_FAKE_TORCH_IMPORT_CPU`` the seconds of CPU
time the import burns (a slow import that works all along); ``KD_FAKE_TORCH_IMPORTS`` a file naming
modules, one per line, that the import loads first (the standard modules a real build loads:
benchmarks/run.py measures the tool's own overhead with them); ``KD_FAKE_TORCH_RESIDENT_MB`` the
memory the import holds, written (a real build's, whose return to the system an exit waits
for). The arithmetic is real: a tiny
autograd over 2x2 lists, so the worker's verification is exercised, not bypassed.
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import time
import warnings
from typing import Any

SCENARIO = os.environ.get("KD_FAKE_TORCH", "cuda_pass")
_ROCM = SCENARIO in ("rocm_pass", "rocm_without_amd_gpu")
_NO_DEVICE = SCENARIO == "rocm_without_amd_gpu"

if os.environ.get("KD_FAKE_TORCH_IMPORTS"):
    import importlib

    with open(os.environ["KD_FAKE_TORCH_IMPORTS"], encoding="utf-8") as _listed:
        for _name in _listed.read().split():
            try:
                importlib.import_module(_name)
            except Exception:  # noqa: S112 - one a build loads on another platform only
                continue
# As much memory as a real build holds once imported, each page written (resident): its process
# then takes as long to end as the real one's, the system taking it back.
_RESIDENT = bytearray(int(os.environ.get("KD_FAKE_TORCH_RESIDENT_MB", "0") or 0) << 20)
_RESIDENT[::4096] = b"\1" * len(range(0, len(_RESIDENT), 4096))
if os.environ.get("KD_FAKE_TORCH_MARKER"):
    with open(os.environ["KD_FAKE_TORCH_MARKER"], "a") as _marker:
        _marker.write("imported\n")
_delay = float(os.environ.get("KD_FAKE_TORCH_IMPORT_DELAY", "0"))
if _delay:
    time.sleep(_delay)
# A slow import that works all along (a cold cache, a big build under a CPU quota): it burns
# this much CPU time, however long the wall clock takes to give it.
_work = float(os.environ.get("KD_FAKE_TORCH_IMPORT_CPU", "0"))
_until = time.process_time() + _work
while time.process_time() < _until:
    pass

from . import _devices, _hostile, _kernels  # noqa: E402 - the hostile scenarios act at their points

_hostile.at("import")

if SCENARIO == "driver_libraries_not_mounted":
    raise ImportError("libcuda.so.1: cannot open shared object file: No such file or directory")

if SCENARIO == "import_error_with_secrets":
    home = os.path.expanduser("~")
    raise ImportError(
        f"libcudart.so.12: cannot open shared object file, searched {home}/envs/lib and "
        f"C:\\Users\\{os.environ.get('KD_PLANTED_USER', 'someone')}\\AppData\\torch\\lib\\c10.dll; "
        f"token {os.environ.get('HF_TOKEN', '')} from "
        f"https://{os.environ.get('KD_PLANTED_USER', 'someone')}:hunter2@models.example.com/x "
        f"on {os.environ.get('KD_PLANTED_USER', 'someone')}@buildhost")

__version__ = _devices.VERSION or ("2.7.0+rocm6.3" if _ROCM else "2.7.0+cu128")
float32 = "float32"


def _reservation_refused(at: str) -> bool:
    """Whether CUDA, at ``at`` ("driver_init" or "context"), would be refused the address space
    it reserves: twice the GPU's memory, more than the process's real ulimit -v allows."""
    scenario = f"{at}_under_address_space_limit"
    if scenario != SCENARIO:
        return False
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return soft != resource.RLIM_INFINITY and soft < 2 * _Properties(0).total_memory


_DRIVER_INIT_REFUSED = ("Unexpected error from cudaGetDeviceCount(). Did you run some cuda "
                        "functions before calling NumCudaDevices() that might have already set an "
                        "error? Error 2: out of memory")
_CONTEXT_REFUSED = ("CUDA error: out of memory\nCUDA kernel errors might be asynchronously "
                    "reported at some other API call, so the stacktrace below might be "
                    "incorrect.")


class version:  # noqa: N801 - mirrors torch.version
    cuda = None if _ROCM or _devices.NOT_CUDA else "12.8"
    hip = "6.3.42131" if _ROCM else None
    xpu = _devices.XPU_BUILD  # Intel XPU builds only (see _devices.py)


class Tensor:
    def __init__(self, rows: list[list[float]], device: str, requires_grad: bool = False,
                 parents: tuple[tuple[Tensor, Any], ...] = ()) -> None:
        self.rows = rows
        self.device = device
        self.requires_grad = requires_grad
        self.grad: Tensor | None = None
        self._parents = parents  # (parent, function from this tensor's gradient to the parent's)

    def __matmul__(self, other: Tensor) -> Tensor:
        if SCENARIO == "arch_not_in_build" and self.device.startswith("cuda"):
            raise RuntimeError("CUDA error: no kernel image is available for execution on the "
                               "device\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side "
                               "assertions.")
        rows = _devices.product(self.device, _matmul(self.rows, other.rows))
        if SCENARIO == "wrong_product":
            rows[0][0] += 1.0
        if SCENARIO == "nan_in_product":
            rows[1][1] = float("nan")
        if SCENARIO == "segfault_in_compute":
            ctypes.string_at(0)  # a real segmentation fault, as a crashing driver gives
        return Tensor(rows, self.device, parents=(
            (self, lambda g: _matmul(g, _transpose(other.rows))),
            (other, lambda g: _matmul(_transpose(self.rows), g))))

    def __pow__(self, exponent: int) -> Tensor:
        rows = [[v ** exponent for v in row] for row in self.rows]
        return Tensor(rows, self.device, parents=((self, lambda g: [
            [gv * exponent * v ** (exponent - 1) for gv, v in zip(grow, row)]
            for grow, row in zip(g, self.rows)]),))

    def sum(self) -> Tensor:
        total = sum(sum(row) for row in self.rows)
        return Tensor([[total]], self.device, parents=((self, lambda g: [
            [g[0][0] for _ in row] for row in self.rows]),))

    def backward(self) -> None:
        pending: list[tuple[Tensor, list[list[float]]]] = [(self, [[1.0]])]
        while pending:
            tensor, gradient = pending.pop()
            if tensor.requires_grad:
                tensor.grad = Tensor(gradient if tensor.grad is None else
                                     _add(tensor.grad.rows, gradient), "cpu")
            for parent, function in tensor._parents:
                pending.append((parent, function(gradient)))

    def to(self, device: str) -> Tensor:
        return Tensor(_devices.copied(self.device, device, self.rows, _hang), device)

    def detach(self) -> Tensor:
        return Tensor(self.rows, self.device)

    def cpu(self) -> Tensor:
        return Tensor(self.rows, "cpu")

    def tolist(self) -> list[list[float]]:
        return [list(row) for row in self.rows]

    def item(self) -> float:
        return self.rows[0][0]


def tensor(values: list[list[float]], dtype: Any = None, device: str = "cpu",
           requires_grad: bool = False) -> Tensor:
    if _kernels.nested_depth(values) != 2:  # a kernel's tensor (--kernels), not the 2x2's
        return _kernels.Ideal(device)
    if device.startswith("cuda"):
        _hostile.at("allocate")
    if SCENARIO == "gpu_exclusive_process_busy" and device.startswith("cuda"):
        raise RuntimeError(_BUSY)
    if device.startswith("cuda") and _reservation_refused("context"):
        raise RuntimeError(_CONTEXT_REFUSED)
    if SCENARIO == "oom_at_allocation" and device.startswith("cuda"):
        raise cuda.OutOfMemoryError(
            "CUDA out of memory. Tried to allocate 2.00 MiB. GPU 0 has a total capacity of "
            "11.94 GiB of which 0 bytes is free.")
    return Tensor([[float(v) for v in row] for row in values], device, requires_grad)


class backends:  # noqa: N801 - mirrors torch.backends
    class cudnn:  # noqa: N801
        @staticmethod
        def version() -> int | None:
            return None if _ROCM or _devices.NOT_CUDA else 90800

    mps = _devices.mps_backend


_BUSY = ("CUDA error: CUDA-capable device(s) is/are busy or unavailable\nCUDA kernel errors "
         "might be asynchronously reported at some other API call, so the stacktrace below might "
         "be incorrect.")


class _Properties:
    def __init__(self, index: int) -> None:
        self.name = "AMD Instinct MI300X" if _ROCM else "NVIDIA GeForce RTX 5070"
        if SCENARIO == "mixed_gpu_models" and index == 1:
            self.name = "NVIDIA GeForce GTX 1080"
        self.major, self.minor = (9, 4) if _ROCM else (12, 0)
        self.total_memory = (192 if _ROCM else 12) * 2**30
        self.gcnArchName = "gfx942:sramecc+:xnack-" if _ROCM else None
        if _kernels.TURING:
            self.name, self.major, self.minor, self.total_memory = "Tesla T4", 7, 5, 15 * 2**30


class cuda:  # noqa: N801 - mirrors torch.cuda
    class OutOfMemoryError(RuntimeError):
        pass

    @staticmethod
    def is_available() -> bool:
        _hostile.at("device")
        if _reservation_refused("driver_init"):
            warnings.warn(f"CUDA initialization: {_DRIVER_INIT_REFUSED} (Triggered internally at "
                          "/pytorch/c10/cuda/CUDAFunctions.cpp:119.)", UserWarning, stacklevel=2)
            return False
        return not _NO_DEVICE and not _devices.NOT_CUDA

    @staticmethod
    def device_count() -> int:
        if _reservation_refused("driver_init"):
            return 0
        return 0 if _NO_DEVICE else _devices.cuda_devices(int(os.environ.get("KD_FAKE_DEVICES",
                                                                             "1")))

    can_device_access_peer = staticmethod(_devices.can_device_access_peer)

    @staticmethod
    def init() -> None:
        if _reservation_refused("driver_init"):
            raise RuntimeError(_DRIVER_INIT_REFUSED)
        if _NO_DEVICE:
            raise RuntimeError("No HIP GPUs are available")

    # What the caching allocator reports, for the trial toolkit (a program that has used the
    # GPU): 1 MiB allocated, 2 MiB reserved, the peak 1.5 MiB; and its history, recorded and
    # dumped as torch.cuda.memory's private functions do (a pickle for the memory visualiser).
    @staticmethod
    def is_initialized() -> bool:
        return not _NO_DEVICE

    @staticmethod
    def current_device() -> int:
        return 0

    @staticmethod
    def memory_allocated(index: int | None = None) -> int:
        return 2**20

    @staticmethod
    def memory_reserved(index: int | None = None) -> int:
        return 2 * 2**20

    @staticmethod
    def max_memory_allocated(index: int | None = None) -> int:
        return 3 * 2**19

    @staticmethod
    def reset_peak_memory_stats(index: int | None = None) -> None:
        pass

    class memory:  # noqa: N801 - mirrors torch.cuda.memory
        recording: Any = None

        @staticmethod
        def _record_memory_history(enabled: Any = "all", max_entries: int = 0) -> None:
            cuda.memory.recording = enabled

        @staticmethod
        def _dump_snapshot(filename: str) -> None:
            import pickle

            with open(filename, "wb") as file:
                pickle.dump({"segments": [], "device_traces": [[]],
                             "recording": cuda.memory.recording}, file)

    @staticmethod
    def get_arch_list() -> list[str]:
        if _ROCM:
            return ["gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx1030", "gfx1100"]
        if SCENARIO == "arch_not_in_build":
            return ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]
        return ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120"]

    @staticmethod
    def get_device_properties(index: int) -> _Properties:
        return _Properties(index)

    @staticmethod
    def set_device(index: int) -> None:
        pass

    @staticmethod
    def mem_get_info(index: int | None = None) -> tuple[int, int]:
        total = _Properties(index or 0).total_memory
        if SCENARIO == "gpu_exclusive_process_busy":
            raise RuntimeError(_BUSY)
        if SCENARIO == "gpu_memory_held_by_another_process":
            return total // 24, total  # 0.5 of 12 GiB left
        if _reservation_refused("context"):
            raise RuntimeError(_CONTEXT_REFUSED)
        return total - 300 * 2**20, total  # what this process's own context takes

    @staticmethod
    def synchronize(index: int | None = None) -> None:
        _hostile.at("synchronize")
        if SCENARIO == "uncorrectable_ecc_error":
            raise RuntimeError("CUDA error: uncorrectable ECC error encountered\nCUDA kernel "
                               "errors might be asynchronously reported at some other API call")
        if SCENARIO == "error_at_synchronize":
            raise RuntimeError("CUDA error: an illegal memory access was encountered\nCUDA kernel "
                               "errors might be asynchronously reported at some other API call")
        if SCENARIO == "hang_in_synchronize":
            _hang()
        _devices.synchronize(index, _hang)


def _hang() -> None:
    """Stuck in the driver: deaf to SIGTERM and SIGINT, with a child that would outlive us."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    child = os.fork()
    if child == 0:
        while True:
            time.sleep(1)
    pids_file = os.environ.get("KD_FAKE_TORCH_PIDS")
    if pids_file:
        with open(pids_file, "w") as file:
            file.write(f"{os.getpid()} {child}\n")
    while True:
        time.sleep(1)


def _matmul(a: list[list[float]], b: list[list[float]]) -> list[list[float]]:
    return [[sum(a[i][k] * b[k][j] for k in range(len(b))) for j in range(len(b[0]))]
            for i in range(len(a))]


def _transpose(a: list[list[float]]) -> list[list[float]]:
    return [list(column) for column in zip(*a)]


def _add(a: list[list[float]], b: list[list[float]]) -> list[list[float]]:
    return [[x + y for x, y in zip(ra, rb)] for ra, rb in zip(a, b)]


xpu = _devices.xpu  # Intel XPU and Apple MPS: see _devices.py
mps = _devices.mps
# --kernels: exact tensors and the GPU's own limits (see _kernels.py).
from . import nn as nn  # noqa: E402 - torch.nn, a re-export

globals().update({name: getattr(_kernels, name) for name in _kernels.TOP_LEVEL})

cuda.is_bf16_supported = staticmethod(_kernels.is_bf16_supported)  # type: ignore[attr-defined]

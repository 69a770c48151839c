"""Accelerators and multi-GPU nodes for the fake torch (tests/fakes/torch): Apple MPS, Intel XPU,
and nodes of several GPUs where one misbehaves. Chosen by ``KD_FAKE_TORCH`` like every scenario,
each named after the situation it stands for:

    mps_apple_silicon       the standard macOS build on an Apple silicon Mac (macOS 14.5, arm64):
                            MPS built and available, no CUDA nor HIP
    mps_macos_too_old       the same build on macOS 12.6: MPS built, not available
    mps_x86_under_rosetta   an x86_64 Python (and its x86_64 build) on macOS 14.5, run by
                            Rosetta 2 on an Apple silicon Mac: MPS built, not available
    mps_in_virtual_machine  an arm64 macOS 14.5 virtual machine without GPU access: MPS built,
                            not available
    xpu_intel_arc           an Intel XPU build (torch.version.xpu set) with one Arc A770
    xpu_two_devices         the same build with two Data Center GPU Max 1100
    xpu_without_driver      an Intel XPU build on a machine without the Level Zero GPU driver:
                            torch.xpu.is_available() is False
    node_with_faulty_and_hung_gpu
                            four NVIDIA GPUs: cuda:1 computes a wrong product (silent data
                            corruption), cuda:2 hangs in synchronisation (SIGTERM ignored)
    node_with_ecc_error_gpu four NVIDIA GPUs: cuda:2 fails its synchronisation with an
                            uncorrectable ECC error; the others pass
    node_with_corrupt_peer_copy
                            four NVIDIA GPUs whose peer-to-peer copies into cuda:3 arrive
                            corrupted (P2P through a PCIe switch with ACS/IOMMU in the way)
    node_with_hung_peer_copy
                            four NVIDIA GPUs whose copy from cuda:1 to cuda:2 never returns
                            (a peer-to-peer transfer stuck in the driver, SIGTERM ignored):
                            the copies after it are never tried

``KD_FAKE_DEVICES`` still sets the number of CUDA devices for the other scenarios; the node
scenarios have four. Peer access (``can_device_access_peer``) is modelled as NVLink pairs:
devices 0-1 and 2-3 reach each other, the others go through the host.

The platform of the Mac scenarios (macOS version, the process's architecture) is what
``platform.mac_ver`` and ``platform.machine`` answer once this fake is imported: the worker reads
them after ``import torch``.
"""

from __future__ import annotations

import os
import platform
import time
from typing import Any

SCENARIO = os.environ.get("KD_FAKE_TORCH", "cuda_pass")
# (macOS version, the process's architecture, MPS usable) of each Mac scenario.
_MACS = {"mps_apple_silicon": ("14.5", "arm64", True),
         "mps_macos_too_old": ("12.6", "arm64", False),
         "mps_x86_under_rosetta": ("14.5", "x86_64", False),
         "mps_in_virtual_machine": ("14.5", "arm64", False)}
# (device name, how many, usable) of each Intel XPU scenario.
_XPUS = {"xpu_intel_arc": ("Intel(R) Arc(TM) A770 Graphics", 1, True),
         "xpu_two_devices": ("Intel(R) Data Center GPU Max 1100", 2, True),
         "xpu_without_driver": ("", 0, False)}
NODES = ("node_with_faulty_and_hung_gpu", "node_with_ecc_error_gpu",
         "node_with_corrupt_peer_copy", "node_with_hung_peer_copy")
MAC = _MACS.get(SCENARIO)
XPU = _XPUS.get(SCENARIO)
NOT_CUDA = MAC is not None or XPU is not None  # a build without CUDA nor HIP
XPU_BUILD = "20250101" if XPU is not None else None
VERSION = "2.7.0" if MAC is not None else "2.7.0+xpu" if XPU is not None else None

if MAC is not None:
    platform.mac_ver = lambda *args, **kwargs: (MAC[0], ("", "", ""), MAC[1])
    platform.machine = lambda: MAC[1]


def cuda_devices(default: int) -> int:
    """How many CUDA devices the scenario shows."""
    if NOT_CUDA:
        return 0
    return 4 if SCENARIO in NODES else default


def index_of(device: str) -> int:
    """The index in a device string: ``cuda:2`` -> 2; ``mps``, ``cpu`` -> 0."""
    return int(device.rsplit(":", 1)[1]) if ":" in device else 0


def product(device: str, rows: list[list[float]]) -> list[list[float]]:
    """The product as the device computed it: a faulty GPU corrupts it."""
    if SCENARIO == "node_with_faulty_and_hung_gpu" and device == "cuda:1":
        rows[0][1] += 2.0
    return rows


def synchronize(index: int | None, hang: Any) -> None:
    """What synchronising device ``index`` does in the node scenarios (``hang``: the fake's
    hang, deaf to SIGTERM)."""
    if SCENARIO == "node_with_faulty_and_hung_gpu" and index == 2:
        hang()
    if SCENARIO == "node_with_ecc_error_gpu" and index == 2:
        raise RuntimeError("CUDA error: uncorrectable ECC error encountered\nCUDA kernel errors "
                           "might be asynchronously reported at some other API call")


def copied(source: str, target: str, rows: list[list[float]], hang: Any) -> list[list[float]]:
    """The values a copy from ``source`` to ``target`` holds once there (``hang``: the fake's
    hang, deaf to SIGTERM)."""
    if SCENARIO == "node_with_hung_peer_copy" and (source, target) == ("cuda:1", "cuda:2"):
        hang()
    rows = [list(row) for row in rows]
    if SCENARIO == "node_with_corrupt_peer_copy" and target == "cuda:3" and source != target:
        rows[1][0] = 0.0
    return rows


def can_device_access_peer(source: int, target: int) -> bool:
    return source != target and source // 2 == target // 2


class mps_backend:  # noqa: N801 - mirrors torch.backends.mps
    is_built = staticmethod(lambda: MAC is not None)
    is_available = staticmethod(lambda: MAC is not None and MAC[2])


class mps:  # noqa: N801 - mirrors torch.mps
    @staticmethod
    def device_count() -> int:
        return 1 if mps_backend.is_available() else 0

    @staticmethod
    def synchronize() -> None:
        time.sleep(0)


class _XpuProperties:
    def __init__(self, index: int) -> None:
        self.name = XPU[0] if XPU else ""
        self.total_memory = 16 * 2**30
        self.driver_version = "1.6.32224"


class xpu:  # noqa: N801 - mirrors torch.xpu
    _is_compiled = staticmethod(lambda: XPU is not None)
    is_available = staticmethod(lambda: XPU is not None and XPU[2])

    @staticmethod
    def device_count() -> int:
        return XPU[1] if XPU else 0

    @staticmethod
    def get_device_name(index: int = 0) -> str:
        return _XpuProperties(index).name

    @staticmethod
    def get_device_properties(index: int) -> _XpuProperties:
        if not 0 <= index < xpu.device_count():
            raise RuntimeError(f"device index {index} is out of range")
        return _XpuProperties(index)

    @staticmethod
    def set_device(index: int) -> None:
        if not 0 <= index < xpu.device_count():
            raise RuntimeError(f"device index {index} is out of range")

    @staticmethod
    def synchronize(index: int | None = None) -> None:
        time.sleep(0)

"""Fact fixtures for the accelerator findings (Apple MPS), merged into test_findings.FIRES."""

from __future__ import annotations

from typing import Any

from findings_helpers import report


def mps_unavailable(macos: str, machine: str, translated: bool | None) -> dict[str, Any]:
    """A Mac's standard build (MPS, no CUDA nor HIP) whose MPS is not usable."""
    return report(**{
        "code": "GPU_UNAVAILABLE", "stage": "device", "runtime.os_family": "macos",
        "runtime.machine": machine, "pytorch.version": "2.8.0", "pytorch.distribution_version":
        "2.8.0", "pytorch.cuda_build": None, "pytorch.backend": "mps",
        "pytorch.gpu_available": False, "pytorch.visible_device_count": 0, "pytorch.devices": [],
        "pytorch.arch_list": None, "pytorch.cudnn_version": None, "pytorch.nccl_version": None,
        "pytorch.mps": {"available": False, "macos_version": macos, "machine": machine,
                        "translated": translated},
        "execution.device": None,
        "error": {"stage": "device", "kind": "gpu_unavailable", "type": None,
                  "message": "torch.backends.mps.is_available() is False"}})


ACCELERATOR_FIRES = {
    "MPS_UNAVAILABLE": mps_unavailable("12.6", "arm64", False),
}


def two_gpus(access: bool | None, copy_code: str, second_device: str = "GPU_CHECK_PASSED",
             ) -> dict[str, Any]:
    """--all-devices on two GPUs that each computed (or not), and the copy from 0 to 1."""
    def device(index: int, code: str) -> dict[str, Any]:
        return {"index": index, "name": "NVIDIA A100-SXM4-80GB", "capability": "8.0",
                "total_memory_bytes": 85_000_000_000, "check": {"code": code}}

    peer = {"source": 0, "target": 1, "access": access, "copy_verified": copy_code ==
            "GPU_CHECK_PASSED", "code": copy_code, "duration_ms": 1.0, "error": None}
    return report(**{"code": "CHECK_FAILED", "stage": "compute", "pytorch.visible_device_count": 2,
                     "pytorch.devices": [device(0, "GPU_CHECK_PASSED"), device(1, second_device)],
                     "pytorch.peers": [peer]})


ACCELERATOR_FIRES["NCCL_P2P_BROKEN"] = two_gpus(True, "CHECK_FAILED")
# Cases NCCL_P2P_BROKEN leaves alone: a good copy; a wrong copy without peer access (it went
# through host memory); a copy to a GPU that does not compute right itself.
P2P_QUIET = [two_gpus(True, "GPU_CHECK_PASSED"), two_gpus(False, "CHECK_FAILED"),
             two_gpus(True, "TIMEOUT", second_device="TIMEOUT")]

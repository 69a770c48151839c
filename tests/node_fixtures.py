"""Fact fixtures for the node and GPU-health findings: a healthy node block and nvidia-smi's health
fields, changed in one place per case (the ground is findings_helpers' passing report)."""

from __future__ import annotations

import copy
from functools import reduce
from typing import Any

from findings_helpers import report, unavailable

# A Linux machine with one NVIDIA GPU, its driver loaded, nothing odd: no finding.
NODE: dict[str, Any] = {
    "shm": {"size_bytes": 8 * 2**30, "free_bytes": 8 * 2**30, "writable": True},
    "memory_limits": {"address_space_bytes": None, "data_bytes": None},
    "nvidia_module_loaded": True, "pci_gpus": 1, "pci_models": 1,
    "pci_drivers": {"nvidia": 1, "nouveau": 0, "vfio-pci": 0, "other": 0, "none": 0},
    "proc_gpus": 1, "dev_gpus": 1, "dev_gpus_accessible": 1, "libcuda": "system",
    "libcuda_unversioned": True, "nvml": True, "wsl": False, "debug_variables": [],
    "visibility_by_index": [], "mig_entries": {}, "visibility_conflicts": [],
    "visibility_unmatched": {}, "compilers_not_found": []}
# nvidia-smi's row for that GPU, with every health field a healthy one has.
HEALTHY_GPU: dict[str, Any] = {
    "name": "NVIDIA H200", "memory_total_mib": 143771, "persistence_mode": True,
    "compute_mode": "Default", "ecc_uncorrected_volatile": 0, "retired_pages_pending": False,
    "remapped_rows_pending": False, "compute_processes": 0}
NO_DRIVER = ("Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and "
             "installed a driver from http://www.nvidia.com/Download/index.aspx")
NO_DEVICE = "CUDA driver initialization failed, you might not have a CUDA gpu."
# What the device nodes say without NVIDIA's kernel module: no /dev/nvidiactl, no /proc entry.
NO_MODULE_NODES = {"runtime.device_nodes.nvidiactl": False,
                   "runtime.device_nodes.nvidia_uvm": False,
                   "runtime.device_nodes.proc_driver_nvidia": False}


def host(lost_gpus: int = 0, **fields: Any) -> dict[str, Any]:
    """An nvidia-smi host block with one GPU: HEALTHY_GPU changed by ``fields``."""
    return {"tool": "nvidia-smi", "status": "ok", "driver_version": "570.124.06",
            "gpus": [{**HEALTHY_GPU, **fields}], "mig_devices": 0, "lost_gpus": lost_gpus}


def with_node(base: dict[str, Any] | None = None, **changes: Any) -> dict[str, Any]:
    """``base`` (the passing report by default) with NODE, then dotted changes to either."""
    result = copy.deepcopy(base) if base is not None else report()
    result["node"] = copy.deepcopy(NODE)
    for path, value in changes.items():
        *parents, leaf = path.split(".")
        reduce(_step, parents, result)[leaf] = value
    return result


def _step(value: Any, key: str) -> Any:
    return value[int(key)] if isinstance(value, list) else value[key]


def no_driver(**changes: Any) -> dict[str, Any]:
    """A CUDA build that found no driver, on a machine whose node facts ``changes`` describe."""
    return with_node(unavailable(NO_DRIVER), **changes)


def runtime_error(message: str, **changes: Any) -> dict[str, Any]:
    return report(**{"code": "RUNTIME_ERROR", "stage": "compute",
                     "execution.product_verified": False, "execution.gradient_verified": False,
                     "execution.duration_ms": None,
                     "error": {"stage": "compute", "kind": "runtime_error",
                               "type": "RuntimeError", "message": message}, **changes})


BUSY = ("CUDA error: CUDA-capable device(s) is/are busy or unavailable\nCUDA kernel errors might "
        "be asynchronously reported at some other API call")
ROCM = {"pytorch.backend": "rocm", "pytorch.cuda_build": None, "pytorch.hip_build": "6.4.43482"}

# One case per finding: the report that must give it.
NODE_FIRES: dict[str, dict[str, Any]] = {
    "SHM_TOO_SMALL": with_node(**{"node.shm.size_bytes": 64 * 2**20,
                                  "node.shm.free_bytes": 60 * 2**20}),
    "DEVICE_ORDER_MISMATCH": with_node(**{
        "runtime.visibility.CUDA_VISIBLE_DEVICES": "lists 1", "node.pci_models": 2,
        "node.visibility_by_index": ["CUDA_VISIBLE_DEVICES"], "system": {"configuration": {}}}),
    "MIG_MULTIPLE_LISTED": with_node(**{"runtime.visibility.CUDA_VISIBLE_DEVICES": "lists 2",
                                        "node.mig_entries": {"CUDA_VISIBLE_DEVICES": 2}}),
    "NVIDIA_MODULE_NOT_LOADED": no_driver(**NO_MODULE_NODES, **{
        "node.nvidia_module_loaded": False, "node.proc_gpus": None, "node.dev_gpus": 0,
        "node.dev_gpus_accessible": 0, "node.pci_drivers.nvidia": 0,
        "node.pci_drivers.none": 1}),
    "NOUVEAU_BOUND": no_driver(**NO_MODULE_NODES, **{
        "node.nvidia_module_loaded": False, "node.proc_gpus": None, "node.dev_gpus": 0,
        "node.dev_gpus_accessible": 0, "node.pci_drivers.nvidia": 0,
        "node.pci_drivers.nouveau": 1}),
    "CONTAINER_NO_COMPUTE_CAPABILITY": no_driver(**{"node.libcuda": "absent",
                                                    "node.libcuda_unversioned": False}),
    "WSL_LINUX_DRIVER_INSTALLED": no_driver(**NO_MODULE_NODES, **{
        "runtime.device_nodes.dxg": True, "node.wsl": True, "node.pci_gpus": 0,
        "node.pci_models": 0, "node.pci_drivers.nvidia": 0, "node.proc_gpus": None,
        "node.dev_gpus": 0, "node.dev_gpus_accessible": 0, "node.nvidia_module_loaded": False}),
    "LIBCUDA_LINK_MISSING": with_node(**{"node.libcuda_unversioned": False}),
    "GPU_NODES_MISMATCH": with_node(unavailable(NO_DEVICE), **{
        "node.proc_gpus": 8, "node.pci_gpus": 8, "node.pci_drivers.nvidia": 8,
        "node.dev_gpus": 8, "node.dev_gpus_accessible": 0}),
    "GPU_MEMORY_HELD": report(**{"pytorch.devices.0.free_memory_bytes": 2**30}),
    "GPU_BUSY": runtime_error(BUSY),
    "ECC_UNCORRECTABLE": report(host=host(ecc_uncorrected_volatile=2)),
    "GPU_NEEDS_RESET": report(host=host(remapped_rows_pending=True)),
    "GPU_LOST": report(host=host(lost_gpus=1)),
    "PERSISTENCE_MODE_OFF": report(**{"execution.duration_ms": 21000.0,
                                      "host": host(persistence_mode=False)}),
    "DEBUG_INJECTION_SET": with_node(**{"node.debug_variables": ["CUDA_INJECTION64_PATH"]}),
    "ROCM_VISIBILITY_CONFLICT": with_node(
        unavailable("No HIP GPUs are available", **ROCM, **{
            "runtime.device_nodes.kfd": "ok",
            "runtime.visibility.HIP_VISIBLE_DEVICES": "lists 1",
            "runtime.visibility.ROCR_VISIBLE_DEVICES": "lists 1"}),
        **{"node.visibility_conflicts": ["ROCR_VISIBLE_DEVICES"]}),
}

"""What the worker reads of the interpreter and the system it runs in: the report's ``runtime``
block (the Python, the OS, the kind of environment, the device-visibility variables, the GPU
device nodes, the warning filters, tracemalloc). Read before torch is imported, and none of it
needs torch.

A companion of the worker (see ``stages``): the standard library only, Python 3.9+.
"""

from __future__ import annotations

import os
import platform
import sys
import warnings
from typing import Any


def interpreter() -> dict[str, Any]:
    """The interpreter stage's ``runtime`` facts."""
    return {
        "python_version": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "os_family": {"win32": "windows", "darwin": "macos"}.get(
            sys.platform, "linux" if sys.platform.startswith("linux") else sys.platform),
        "machine": platform.machine() or None,
        "environment_kind": environment_kind(),
        "visibility": {name: visibility(os.environ.get(name)) for name in VISIBILITY_VARIABLES},
        "device_nodes": device_nodes(),
    }


VISIBILITY_VARIABLES = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")


def visibility(value: str | None) -> str:
    """What a device-visibility variable does, never its value: unset, empty, hides_all, lists N.

    The runtimes read the comma-separated list up to the first invalid entry: a list starting
    with a negative or non-numeric entry hides every device.
    """
    if value is None:
        return "unset"
    if not value.strip():
        return "empty"
    count = 0
    for raw in value.split(","):
        entry = raw.strip()
        if entry.isdigit() or entry.upper().startswith(("GPU-", "MIG-")):
            count += 1
        else:
            break
    return f"lists {count}" if count else "hides_all"


DEVICE_NODES = {
    "nvidiactl": "/dev/nvidiactl",
    "nvidia_uvm": "/dev/nvidia-uvm",
    "proc_driver_nvidia": "/proc/driver/nvidia/version",
    "dxg": "/dev/dxg",  # WSL 2's GPU paravirtualisation
}


def device_nodes() -> dict[str, Any]:
    """Which GPU device nodes exist (booleans only); /dev/kfd also says if it is usable."""
    nodes: dict[str, Any] = {name: os.path.exists(path) for name, path in DEVICE_NODES.items()}
    if not os.path.exists("/dev/kfd"):
        nodes["kfd"] = "absent"
    else:
        nodes["kfd"] = "ok" if os.access("/dev/kfd", os.R_OK | os.W_OK) else "no_access"
    return nodes


def warnings_as_errors() -> bool:
    """An active warning filter turns warnings into errors (-W error, PYTHONWARNINGS=error...).

    Only the fact: a filter's text may name the user's modules.
    """
    return any(entry[0] == "error" for entry in warnings.filters)


def tracemalloc_frames() -> int:
    """How many frames tracemalloc records per allocation (PYTHONTRACEMALLOC=N, -X tracemalloc=N);
    0 when it is not tracing. Tracing every allocation makes `import torch` many times slower."""
    try:  # the C module: tracemalloc.py would import pickle and more for two calls
        import _tracemalloc
    except ImportError:  # an interpreter without it (PyPy) cannot trace this way
        return 0
    return int(_tracemalloc.get_traceback_limit()) if _tracemalloc.is_tracing() else 0


def environment_kind() -> str:
    if os.path.isdir(os.path.join(sys.prefix, "conda-meta")):
        return "conda"
    if sys.prefix != getattr(sys, "base_prefix", sys.prefix):
        return "venv"
    if sys.prefix and os.path.isdir(sys.prefix):
        return "system"
    return "unknown"

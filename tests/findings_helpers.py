"""Shared by the findings tests: fact fixtures (a neutral passing report changed in one place) and
the recorded GPU tools the end-to-end tests put on PATH."""

from __future__ import annotations

import copy
import os
import sys
from pathlib import Path
from typing import Any

from conftest import assert_valid_report, fake_gpu_env, run_tool
from kernodeck_diagnostic.report.findings import derive

# A GPU-mode report of a CUDA 12.8 build on one visible GPU, passing: the neutral ground each
# case below changes in one place.
BASE: dict[str, Any] = {
    "code": "GPU_CHECK_PASSED", "stage": "compute",
    "request": {"device": "gpu", "device_index": 0, "timeout_s": 30, "host_check": False},
    "runtime": {"python_version": "3.12.3", "python_implementation": "CPython",
                "os_family": "linux", "machine": "x86_64", "environment_kind": "venv",
                "visibility": {"CUDA_VISIBLE_DEVICES": "unset", "HIP_VISIBLE_DEVICES": "unset",
                               "ROCR_VISIBLE_DEVICES": "unset"},
                "device_nodes": {"nvidiactl": True, "nvidia_uvm": True,
                                 "proc_driver_nvidia": True, "dxg": False, "kfd": "absent"}},
    "pytorch": {"imported": True, "version": "2.8.0+cu128", "distribution_version": "2.8.0+cu128",
                "cuda_build": "12.8", "hip_build": None, "backend": "cuda", "gpu_available": True,
                "visible_device_count": 1,
                "devices": [{"index": 0, "name": "NVIDIA H200", "capability": "9.0",
                             "total_memory_bytes": 150 * 2**30}],
                "init_error": None, "arch_list": ["sm_80", "sm_86", "sm_90", "sm_100", "sm_120"],
                "cudnn_version": "91002", "nccl_version": "2.27.3", "origin": "site-packages",
                "distributions_on_path": 1, "numpy_present": True, "numpy_version": "2.3.2"},
    "execution": {"device": "cuda:0", "product_verified": True, "gradient_verified": True,
                  "loss": 196.0, "synchronized": True, "duration_ms": 120.0},
    "host": None, "findings": [], "error": None, "warnings": [],
}


def report(**changes: Any) -> dict[str, Any]:
    """BASE with dotted-path changes, e.g. report(**{"pytorch.backend": "cpu"})."""
    result = copy.deepcopy(BASE)
    for path, value in changes.items():
        *parents, leaf = path.split(".")
        target = result
        for key in parents:
            target = target[int(key)] if isinstance(target, list) else target[key]
        target[leaf] = value
    return result


def unavailable(message: str, **changes: Any) -> dict[str, Any]:
    return report(**{"code": "GPU_UNAVAILABLE", "stage": "device", "pytorch.gpu_available": False,
                     "pytorch.visible_device_count": 0, "pytorch.devices": [],
                     "pytorch.init_error": message, "execution.device": None,
                     "error": {"stage": "device", "kind": "gpu_unavailable", "type": None,
                               "message": "torch.cuda.is_available() is False: " + message},
                     **changes})


def import_failed(kind: str, message: str) -> dict[str, Any]:
    return report(**{"code": "TORCH_IMPORT_FAILED", "stage": "import", "pytorch.imported": False,
                     "error": {"stage": "import", "kind": "import_failed", "type": kind,
                               "message": message}})


def ids(found: dict[str, Any]) -> list[str]:
    return [finding["id"] for finding in derive(found)]


def tools_on_path(folder: Path, **scripts: str) -> str:
    folder.mkdir(exist_ok=True)
    for name, body in scripts.items():
        path = folder / name
        path.write_text("#!/bin/sh\n" + body)
        path.chmod(0o755)
    return f"{folder}:{os.defpath}"


def replay(text: str) -> str:
    return f"cat <<'RECORDED'\n{text}\nRECORDED\n"


def host_block(pyz: Path, tmp_path: Path, **scripts: str) -> dict[str, Any]:
    out = tmp_path / "report.json"
    path = tools_on_path(tmp_path / "bin", **scripts)
    result = run_tool(sys.executable, pyz, ["--host-check", "--output", str(out)],
                      env=fake_gpu_env("cuda_pass", PATH=path))
    assert result.report is not None, result.stderr
    assert_valid_report(result.report)
    return result.report

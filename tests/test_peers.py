"""Side by side, proven: ``python -m torch.utils.collect_env`` and the check, run on the same real
torch builds, agree on every fact both report (docs/peers.md lists them and where ours differs
on purpose)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import clean_env
from facts_helpers import checked

pytestmark = pytest.mark.slow

NOT_KNOWN = {"Could not collect", "N/A", "None"}


def collect_env(python: Path) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """collect_env's ``Key: value`` lines, its ``lscpu`` section, and its ``[pip3] name==version``
    lines."""
    output = subprocess.run([str(python), "-m", "torch.utils.collect_env"], capture_output=True,
                            text=True, timeout=300, check=True,
                            env=clean_env({"PIP_DISABLE_PIP_VERSION_CHECK": "1"})).stdout
    head, _, rest = output.partition("\nCPU:\n")
    cpu, _, libraries = rest.partition("\nVersions of relevant libraries:\n")
    fields = dict(line.split(": ", 1) for line in head.splitlines() if ": " in line)
    lscpu = {key.strip(): value.strip() for key, _, value in
             (line.partition(":") for line in cpu.splitlines()) if value}
    pip = dict(re.findall(r"^\[pip3\] ([\w.-]+)==(\S+)$", libraries, re.MULTILINE))
    return fields, lscpu, pip


def ours(python: Path, pyz: Path, tmp_path: Path, device: str) -> dict[str, Any]:
    return checked(python, pyz, tmp_path, "--device", device)[0]


def known(value: str | None) -> str | None:
    return None if value is None or value.strip() in NOT_KNOWN else value.strip()


def assert_agree(fields: dict[str, str], lscpu: dict[str, str], pip: dict[str, str],
                 report: dict[str, Any]) -> None:
    """Every fact both tools report, compared; a fact collect_env could not collect is one ours
    must not claim either (where both read the same source)."""
    pytorch, system, runtime = report["pytorch"], report["system"], report["runtime"]
    assert fields["PyTorch version"] == pytorch["version"]
    assert fields["Is debug build"] == str(pytorch["debug_build"])
    assert known(fields["CUDA used to build PyTorch"]) == pytorch["cuda_build"]
    assert known(fields["ROCM used to build PyTorch"]) == pytorch["hip_build"]
    assert fields["OS"] == f"{system['os_name']} {system['os_version']} ({runtime['machine']})"
    assert fields["Libc version"] == (system["libc"] or "").replace(" ", "-")
    assert fields["Python version"].startswith(runtime["python_version"] + " ")
    assert fields["Python platform"].startswith(f"Linux-{system['kernel']}-")
    # collect_env's "CUDA runtime version" is nvcc's: the toolkit, not torch's CUDA runtime.
    toolkit = known(fields["CUDA runtime version"])
    assert (toolkit or "").rsplit(".", 1)[0] == (system["cuda_toolkit"]["version"] or "")
    assert known(fields["Nvidia driver version"]) == system["nvidia_driver_version"]
    if pytorch["gpu_available"] is not None:  # asked in GPU mode only
        assert fields["Is CUDA available"] == str(pytorch["gpu_available"])
        assert known(fields["GPU models and configuration"]) is None \
            or len(pytorch["devices"]) > 0
    assert lscpu["Model name"] == system["cpu_model"]
    assert int(lscpu["CPU(s)"]) == system["logical_cpus"]
    # Versions of relevant libraries: each nvidia-* wheel, triton, numpy, torch.
    wheels = {entry["name"]: entry["version"] for entry in pytorch["cuda_libraries"]}
    for name, version in pip.items():
        if name.startswith("nvidia-"):
            assert wheels[name] == version, name
    assert pip.get("triton") == pytorch["triton_version"]
    assert pip.get("numpy") == pytorch["numpy_version"]
    assert pip["torch"] == pytorch["distribution_version"]


def test_cuda_build_side_by_side(cuda_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    fields, lscpu, pip = collect_env(cuda_torch_python)
    report = ours(cuda_torch_python, pyz, tmp_path, "gpu")
    assert report["code"] == "GPU_UNAVAILABLE"  # no GPU here: both say CUDA is not available
    assert_agree(fields, lscpu, pip, report)
    assert any(name.startswith("nvidia-") for name in pip)  # the comparison above compared


def test_cpu_build_side_by_side(cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    fields, lscpu, pip = collect_env(cpu_torch_python)
    report = ours(cpu_torch_python, pyz, tmp_path, "cpu")
    assert_agree(fields, lscpu, pip, report)
    assert report["pytorch"]["cuda_libraries"] == []

"""Issue 23: advice that applies to the case, proven by applying it where this machine allows.

Each finding here is built for real where it can be (a mount namespace for a device node, a
pseudo-filesystem, taskset, a cgroup CPU quota), with the fake torch only for what needs a GPU;
docs/reliability.md's table says, for each, what was applied and the verdict after, or why it
cannot be applied here.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import assert_valid_report, fake_gpu_env, run_tool
from findings_helpers import unavailable
from kernodeck_diagnostic.report.findings import derive

ROCM = {"pytorch.backend": "rocm", "pytorch.cuda_build": None, "pytorch.hip_build": "6.4.43482",
        "pytorch.version": "2.8.0+rocm6.4"}
NO_NVIDIA_NODE = {"runtime.device_nodes.nvidiactl": False, "runtime.device_nodes.nvidia_uvm": False,
                  "runtime.device_nodes.proc_driver_nvidia": False}


def by_id(found: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {finding["id"]: finding for finding in derive(found)}


def check(python: Path | str, tool: Path | list[str], tmp_path: Path, env: dict[str, str],
          *args: str) -> dict[str, Any]:
    out = tmp_path / "report.json"
    out.unlink(missing_ok=True)
    result = run_tool(python, tool, [*args, "--output", str(out)], env=env)
    assert result.report is not None, result.stderr
    assert_valid_report(result.report)
    return result.report


# -- ROCm on WSL 2: no /dev/kfd there, by design ------------------------------------------------

def test_rocm_on_wsl_is_not_told_to_load_amdgpu() -> None:
    found = by_id(unavailable("No HIP GPUs are available", **ROCM, **NO_NVIDIA_NODE, **{
        "runtime.device_nodes.kfd": "absent", "runtime.device_nodes.dxg": True}))
    finding = found["ROCM_KFD_ACCESS"]
    assert "modprobe" not in finding["next_action"]
    assert "--device=/dev/kfd" not in finding["next_action"].replace("not load amdgpu or pass", "")
    assert "usecase=wsl" in finding["next_action"]
    assert any("/dev/dxg exists" in line for line in finding["evidence"])
    plain = by_id(unavailable("No HIP GPUs are available", **ROCM, **NO_NVIDIA_NODE, **{
        "runtime.device_nodes.kfd": "absent"}))
    assert "modprobe amdgpu" in plain["ROCM_KFD_ACCESS"]["next_action"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a Linux mount namespace")
def test_rocm_on_a_real_dev_dxg_gets_wsl_advice(pyz: Path, tmp_path: Path) -> None:
    """/dev/dxg made in a private mount namespace (WSL 2's node; the fake ROCm build finds no
    GPU): WSL's advice, not modprobe. Applying it needs WSL and an AMD GPU: not here."""
    from test_review_findings import in_namespace_with

    prefix = in_namespace_with({"dxg": "10 63"}, tmp_path)
    checked = check(prefix[0], [*prefix[1:], sys.executable, str(pyz)], tmp_path,
                    fake_gpu_env("rocm_without_amd_gpu"))
    assert checked["runtime"]["device_nodes"]["dxg"] is True
    finding = {f["id"]: f for f in checked["findings"]}["ROCM_KFD_ACCESS"]
    assert "modprobe" not in finding["next_action"]
    assert "usecase=wsl" in finding["next_action"]
    assert not Path("/dev/dxg").exists()  # the machine's own /dev is untouched


# -- CHECK_FAILED: silent data corruption -------------------------------------------------------

@pytest.mark.parametrize(("scenario", "variant", "said"), [
    ("wrong_product", "wrong", "product: finite values other than the known answer"),
    ("nan_in_product", "non_finite", "product: NaN or infinity where the known answer is finite"),
])
def test_a_wrong_result_on_a_working_device_is_silent_data_corruption(
        pyz: Path, tmp_path: Path, scenario: str, variant: str, said: str) -> None:
    """The fake GPU computes a wrong (or NaN) product without an error. The advice (run again,
    the vendor's diagnostic, take the node out of service) needs a real faulty GPU; what can be
    applied here is the last step: the same check on a sound device (the fake's working GPU)
    passes."""
    checked = check(sys.executable, pyz, tmp_path, fake_gpu_env(scenario))
    assert checked["code"] == "CHECK_FAILED"
    assert checked["execution"]["wrong_values"]["product"] == variant
    finding = {f["id"]: f for f in checked["findings"]}["SILENT_DATA_CORRUPTION"]
    assert said in finding["evidence"]
    assert "silent data corruption" in finding["summary"]
    for step in ("Run the check again", "dcgmi diag", "take the node out of service"):
        assert step in finding["next_action"]
    sound = check(sys.executable, pyz, tmp_path, fake_gpu_env("cuda_pass"))
    assert sound["code"] == "GPU_CHECK_PASSED"
    assert "wrong_values" not in sound["execution"]
    assert "SILENT_DATA_CORRUPTION" not in {f["id"] for f in sound["findings"]}

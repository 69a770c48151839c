"""The ``system`` block: the machine, the NVIDIA driver without --host-check, the CUDA toolkit an
extension build would use, the allow-listed configuration, and the findings they give."""

from __future__ import annotations

import os
import platform
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import assert_valid_report, clean_env, run_tool
from facts_helpers import checked
from findings_helpers import report, unavailable
from kernodeck_diagnostic.facts import system
from kernodeck_diagnostic.facts.host import ToolOutput, default_runner
from kernodeck_diagnostic.report.findings import derive

# Recorded from real machines: the proprietary module and the open one (580 and newer).
PROPRIETARY = ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  470.239.06  Wed Feb 28 00:39:22 "
               "UTC 2024\nGCC version:  gcc version 9.4.0 (Ubuntu 9.4.0-1ubuntu1~20.04.2)\n")
OPEN_MODULE = ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release Build  "
               "(dvs-builder@U16-I3-B03-4-3)  Sun Jul 27 07:09:39 UTC 2025\nGCC version:  gcc "
               "version 13.3.0 (Ubuntu 13.3.0-6ubuntu2~24.04)\n")
NVCC_12_4 = ("nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2024 NVIDIA Corporation\n"
             "Built on Thu_Mar_28_02:18:24_PDT_2024\nCuda compilation tools, release 12.4, "
             "V12.4.131\nBuild cuda_12.4.r12.4/compiler.34097967_0\n")
REAL_NVCC = shutil.which("nvcc")
needs_nvcc = pytest.mark.skipif(REAL_NVCC is None, reason="no nvcc on PATH on this machine")


def fake_nvcc(folder: Path, body: str) -> Path:
    """A toolkit folder whose bin/nvcc is a script (``printf`` of a recorded answer, a hang)."""
    (folder / "bin").mkdir(parents=True, exist_ok=True)
    nvcc = folder / "bin" / "nvcc"
    nvcc.write_text("#!/bin/sh\n" + body)
    nvcc.chmod(0o755)
    return folder


def recorded(text: str) -> str:
    return f"cat <<'RECORDED'\n{text}RECORDED\n"


# -- the machine ---------------------------------------------------------------------------------

def test_the_machine_as_the_system_says_it() -> None:
    block = system.probe_system()
    fields = system.os_release("/etc/os-release") or system.os_release("/usr/lib/os-release")
    assert fields is not None
    assert block["os_name"] == fields["NAME"]
    assert block["os_version"] == (fields.get("VERSION") or fields.get("VERSION_ID"))
    assert block["kernel"] == platform.release()
    assert block["libc"] == "glibc " + platform.libc_ver()[1]
    assert block["logical_cpus"] == os.cpu_count()
    meminfo = Path("/proc/meminfo").read_text().split()
    total_kib = int(meminfo[meminfo.index("MemTotal:") + 1])
    assert abs(block["memory_total_bytes"] - total_kib * 1024) < 64 * 2**20
    models = [line.split(":", 1)[1].strip() for line in
              Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name")]
    assert block["cpu_model"] == (models[0] if models else None)


def test_os_release_quotes_and_fallbacks(tmp_path: Path) -> None:
    path = tmp_path / "os-release"
    path.write_text('NAME="Ubuntu"\nVERSION="24.04.2 LTS (Noble Numbat)"\nID=ubuntu\n# c\n')
    assert system.os_release(str(path)) == {"NAME": "Ubuntu",
                                            "VERSION": "24.04.2 LTS (Noble Numbat)",
                                            "ID": "ubuntu"}
    assert system.os_release(str(tmp_path / "absent")) is None


@pytest.mark.parametrize(("text", "version"), [(PROPRIETARY, "470.239.06"),
                                               (OPEN_MODULE, "580.65.06"),
                                               ("garbage\n", None)])
def test_driver_version_from_the_kernel_module_file(tmp_path: Path, text: str,
                                                    version: str | None) -> None:
    path = tmp_path / "version"
    path.write_text(text)
    assert system.nvidia_driver_version(str(path)) == version


def test_no_kernel_module_no_driver_version(tmp_path: Path) -> None:
    assert system.nvidia_driver_version(str(tmp_path / "absent")) is None


@pytest.mark.parametrize(("target", "name"), [(90402, "gfx942"), (90010, "gfx90a"),
                                              (100301, "gfx1031"), (110000, "gfx1100"),
                                              (120001, "gfx1201")])
def test_kfd_target_versions_named_as_llvm_names_them(target: int, name: str) -> None:
    assert system.gfx_name(target) == name


def test_kfd_topology_lists_gpu_nodes_only(tmp_path: Path) -> None:
    for node, target in (("0", 0), ("1", 100301), ("2", 90402)):
        (tmp_path / node).mkdir()
        (tmp_path / node / "properties").write_text(
            f"cpu_cores_count 0\nsimd_count 40\ngfx_target_version {target}\nvendor_id 4098\n")
    assert system.kfd_gfx_targets(str(tmp_path)) == ["gfx1031", "gfx942"]
    assert system.kfd_gfx_targets(str(tmp_path / "absent")) is None


# -- the CUDA toolkit ----------------------------------------------------------------------------

@needs_nvcc
def test_the_real_nvcc_on_path() -> None:
    toolkit = system.cuda_toolkit({"PATH": os.environ["PATH"]})
    assert toolkit == {"status": "ok", "version": system.toolkit_version(
        default_runner([str(REAL_NVCC), "--version"], 5), "PATH", {})["version"],
        "found_via": "PATH", "cuda_home_set": False, "cuda_path_set": False}
    assert toolkit["version"] == "13.0"  # this machine's toolkit (CUDA 13.0.88)


def test_path_without_nvcc_uses_the_default_location_as_the_extension_builder_does(
        tmp_path: Path) -> None:
    def nowhere(name: str) -> None:
        return None

    home = fake_nvcc(tmp_path / "cuda", recorded(NVCC_12_4))
    assert system.cuda_toolkit({}, which=nowhere, default_cuda_home=str(home)) == {
        "status": "ok", "version": "12.4", "found_via": "default_location",
        "cuda_home_set": False, "cuda_path_set": False}
    assert system.cuda_toolkit({}, which=nowhere, default_cuda_home=str(tmp_path / "none")) == {
        "status": "not_found", "version": None, "found_via": None, "cuda_home_set": False,
        "cuda_path_set": False}


def test_cuda_home_wins_over_path_and_cuda_path(tmp_path: Path) -> None:
    home = fake_nvcc(tmp_path / "home", recorded(NVCC_12_4))
    other = fake_nvcc(tmp_path / "other", recorded(NVCC_12_4.replace("12.4", "11.8")))
    env = {"CUDA_HOME": str(home), "CUDA_PATH": str(other)}
    assert system.cuda_toolkit(env) == {"status": "ok", "version": "12.4",
                                        "found_via": "CUDA_HOME", "cuda_home_set": True,
                                        "cuda_path_set": True}
    assert system.cuda_toolkit({"CUDA_PATH": str(other)})["version"] == "11.8"
    # A variable naming a folder without bin/nvcc: the builder would fail there, not go on.
    assert system.cuda_toolkit({"CUDA_HOME": str(tmp_path / "empty")}) == {
        "status": "not_found", "version": None, "found_via": "CUDA_HOME", "cuda_home_set": True,
        "cuda_path_set": False}


def test_a_hung_nvcc_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(system, "TOOLKIT_TIMEOUT_S", 0.5)
    home = fake_nvcc(tmp_path / "cuda", "exec sleep 30\n")
    start = time.monotonic()
    toolkit = system.cuda_toolkit({"CUDA_HOME": str(home)})
    assert toolkit["status"] == "timeout"
    assert toolkit["version"] is None
    assert time.monotonic() - start < 3.0


def test_an_nvcc_that_says_no_release_failed() -> None:
    assert system.toolkit_version(ToolOutput("ok", "nvcc: usage"), "PATH", {})["status"] \
        == "failed"


def test_the_probe_runs_beside_the_caller() -> None:
    def slow() -> dict[str, Any]:
        time.sleep(0.6)
        return {"os_name": "x"}

    start = time.monotonic()
    result = system.start_probe(slow)
    assert time.monotonic() - start < 0.3  # started, not waited for
    assert result() == {"os_name": "x"}

    def broken() -> dict[str, Any]:
        raise RuntimeError("boom")

    assert system.start_probe(broken)() is None


# -- configuration -------------------------------------------------------------------------------

def test_only_allow_listed_variables_are_kept_and_bounded() -> None:
    env = {"CUDA_DEVICE_ORDER": "PCI_BUS_ID", "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",
           "CUDA_VISIBLE_DEVICES": "0,1", "HF_TOKEN": "hf_abcdefghijklmnop",
           "MY_APP_SETTING": "x", "OMP_NUM_THREADS": "8 " * 200}
    found = system.configuration(env)
    assert set(found) == {"CUDA_DEVICE_ORDER", "PYTORCH_CUDA_ALLOC_CONF", "OMP_NUM_THREADS"}
    assert found["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID"
    assert len(found["OMP_NUM_THREADS"]) == system.MAX_VALUE_CHARS
    assert "CUDA_VISIBLE_DEVICES" not in system.CONFIGURATION_VARIABLES


# -- findings on fixtures -----------------------------------------------------------------------

def _toolkit(version: str) -> dict[str, Any]:
    return {"cuda_toolkit": {"status": "ok", "version": version, "found_via": "CUDA_HOME",
                             "cuda_home_set": True, "cuda_path_set": False},
            "configuration": {}, "nvidia_driver_version": None}


def _by_id(found: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {finding["id"]: finding for finding in derive(found)}


def test_driver_too_old_from_the_kernel_module_without_host_check() -> None:
    case = unavailable("Found no NVIDIA driver on your system",
                       **{"system": {"nvidia_driver_version": "470.239.06"},
                          "pytorch.cuda_build": "13.0"})
    found = _by_id(case)
    assert found["DRIVER_TOO_OLD"]["severity"] == "error"
    assert "/proc/driver/nvidia/version: driver 470.239.06, below 580.65.06, the minimum for " \
           "CUDA 13.x" in found["DRIVER_TOO_OLD"]["evidence"]
    # A new enough module says nothing; nvidia-smi's answer, when asked, is the one compared.
    case["system"]["nvidia_driver_version"] = "580.82.07"
    assert "DRIVER_TOO_OLD" not in _by_id(case)
    case["host"] = {"tool": "nvidia-smi", "status": "ok", "driver_version": "470.239.06",
                    "gpus": [], "mig_devices": None}
    assert _by_id(case)["DRIVER_TOO_OLD"]["evidence"][1].startswith(
        "nvidia-smi: driver 470.239.06, below 580.65.06")


def test_toolkit_major_against_the_build() -> None:
    same = report(**{"system": _toolkit("12.9"), "pytorch.cuda_build": "12.8"})
    assert "CUDA_TOOLKIT_MISMATCH" not in _by_id(same)  # another minor builds (with a warning)
    other = report(**{"system": _toolkit("12.4"), "pytorch.cuda_build": "13.0"})
    finding = _by_id(other)["CUDA_TOOLKIT_MISMATCH"]
    assert finding["evidence"] == ["torch built for CUDA 13.0", "the CUDA toolkit extensions "
                                   "compile with: nvcc 12.4 (found via CUDA_HOME)"]
    rocm = report(**{"system": _toolkit("12.4"), "pytorch.backend": "rocm",
                     "pytorch.cuda_build": None, "pytorch.hip_build": "6.4.43482"})
    assert "CUDA_TOOLKIT_MISMATCH" not in _by_id(rocm)


def test_launch_blocking_only_when_on() -> None:
    on = report(**{"system": {"configuration": {"CUDA_LAUNCH_BLOCKING": "1"}}})
    assert _by_id(on)["CUDA_LAUNCH_BLOCKING_ON"]["severity"] == "warning"
    off = report(**{"system": {"configuration": {"CUDA_LAUNCH_BLOCKING": "0"}}})
    assert "CUDA_LAUNCH_BLOCKING_ON" not in _by_id(off)


def _rocm(real: list[str] | None, override: bool, **changes: Any) -> dict[str, Any]:
    configuration = {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"} if override else {}
    return report(**{"code": "RUNTIME_ERROR", "status": "failed", "pytorch.backend": "rocm",
                     "pytorch.cuda_build": None, "pytorch.hip_build": "6.4.43482",
                     "pytorch.arch_list": ["gfx90a", "gfx942", "gfx1100"],
                     "pytorch.devices.0.gcn_arch": "gfx1030",
                     "error": {"stage": "compute", "kind": "runtime_error", "type": "RuntimeError",
                               "message": "HIP error: hipErrorNoBinaryForGpu"},
                     "system": {"kfd_gfx_targets": real, "configuration": configuration},
                     **changes})


def test_hsa_override_on_a_supported_card_is_the_cause_not_the_gfx() -> None:
    found = _by_id(_rocm(["gfx1100"], override=True))
    assert found["HSA_OVERRIDE_ON_SUPPORTED_GPU"]["severity"] == "error"
    assert "ROCM_GFX_UNSUPPORTED" not in found
    # The card the build lacks: the override may be the user's fix; the gfx finding stays.
    unsupported = _by_id(_rocm(["gfx1031"], override=True))
    assert "HSA_OVERRIDE_ON_SUPPORTED_GPU" not in unsupported
    assert "ROCM_GFX_UNSUPPORTED" in unsupported
    # Without the override, or without the kernel's own word on the card: nothing claimed.
    assert "HSA_OVERRIDE_ON_SUPPORTED_GPU" not in _by_id(_rocm(["gfx1100"], override=False))
    assert "HSA_OVERRIDE_ON_SUPPORTED_GPU" not in _by_id(_rocm(None, override=True))
    passed = _rocm(["gfx1100"], override=True, code="GPU_CHECK_PASSED", status="passed",
                   error=None)
    assert _by_id(passed)["HSA_OVERRIDE_ON_SUPPORTED_GPU"]["severity"] == "warning"


# -- end to end: the real CUDA build, the real toolkit ---------------------------------------------

@pytest.mark.slow
@needs_nvcc
def test_real_cuda_build_and_real_toolkit_agree(cuda_torch_python: Path, pyz: Path,
                                                tmp_path: Path) -> None:
    report_, text = checked(cuda_torch_python, pyz, tmp_path, "--device", "cpu")
    toolkit = report_["system"]["cuda_toolkit"]
    assert report_["pytorch"]["cuda_build"] == "13.0"
    assert toolkit["status"] == "ok"
    assert toolkit["version"] == "13.0"
    assert toolkit["found_via"] == ("CUDA_HOME" if "CUDA_HOME" in os.environ else "PATH")
    assert "CUDA_TOOLKIT_MISMATCH" not in [f["id"] for f in report_["findings"]]
    assert "nvcc 13.0 (via PATH), for building extensions, not torch's runtime" in text
    assert report_["system"]["logical_cpus"] == os.cpu_count()


@pytest.mark.slow
def test_a_toolkit_of_another_major_on_path_is_named(cuda_torch_python: Path, pyz: Path,
                                                      tmp_path: Path) -> None:
    home = fake_nvcc(tmp_path / "toolkit-folder-planted", recorded(NVCC_12_4))
    report_, text = checked(cuda_torch_python, pyz, tmp_path, "--device", "cpu",
                           PATH=f"{home / 'bin'}:{os.defpath}")
    assert report_["system"]["cuda_toolkit"] == {"status": "ok", "version": "12.4",
                                                 "found_via": "PATH", "cuda_home_set": False,
                                                 "cuda_path_set": False}
    finding = next(f for f in report_["findings"] if f["id"] == "CUDA_TOOLKIT_MISMATCH")
    assert finding["evidence"][1] == ("the CUDA toolkit extensions compile with: nvcc 12.4 "
                                      "(found via PATH)")
    assert "CUDA_TOOLKIT_MISMATCH" in text
    assert "toolkit-folder-planted" not in text


@pytest.mark.slow
def test_a_path_without_nvcc(cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    report_, _ = checked(cpu_torch_python, pyz, tmp_path, "--device", "cpu",
                        PATH=f"{Path(sys.executable).parent}:/nonexistent")
    toolkit = report_["system"]["cuda_toolkit"]
    if os.path.exists(system.DEFAULT_CUDA_HOME + "/bin/nvcc"):  # as cpp_extension finds it
        assert (toolkit["status"], toolkit["found_via"]) == ("ok", "default_location")
    else:
        assert (toolkit["status"], toolkit["found_via"]) == ("not_found", None)
    assert report_["pytorch"]["cuda_libraries"] == []  # the CPU build has no nvidia-* wheel


def _as_root_with_unshare() -> bool:
    return sys.platform.startswith("linux") and os.geteuid() == 0 and \
        shutil.which("unshare") is not None and shutil.which("mount") is not None


@pytest.mark.slow
@pytest.mark.skipif(not _as_root_with_unshare(), reason="needs root and unshare(1)")
def test_driver_too_old_without_host_check_from_the_real_proc_file(
        cuda_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    """In a private mount namespace, /proc/driver holds a kernel module's version file as a
    machine with the 470 driver has it: the check reads it, with no --host-check."""
    if not os.path.isdir("/proc/driver"):
        pytest.skip("no /proc/driver to mount over")
    version = tmp_path / "version"
    version.write_text(PROPRIETARY)
    out = tmp_path / "report.json"
    script = ("mount -t tmpfs none /proc/driver && mkdir /proc/driver/nvidia && "
              f'cp "{version}" /proc/driver/nvidia/version && '
              f'exec "{cuda_torch_python}" "{pyz}" --output "{out}"')
    result = run_tool("unshare", ["-m", "--propagation", "private", "sh", "-c", script], [],
                      env=clean_env())
    assert out.is_file(), result.stderr
    import json

    report_ = json.loads(out.read_text())
    assert_valid_report(report_)
    assert report_["request"]["host_check"] is False
    assert report_["host"] is None
    assert report_["system"]["nvidia_driver_version"] == "470.239.06"
    assert report_["runtime"]["device_nodes"]["proc_driver_nvidia"] is True
    finding = next(f for f in report_["findings"] if f["id"] == "DRIVER_TOO_OLD")
    assert finding["evidence"] == ["torch built for CUDA 13.0",
                                   "/proc/driver/nvidia/version: driver 470.239.06, below "
                                   "580.65.06, the minimum for CUDA 13.x"]
    assert "NVIDIA 470.239.06 (kernel module)" in result.stdout

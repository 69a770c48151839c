"""Findings that must not give wrong advice: each rule on the situation that fooled it, on fact
fixtures and, where this machine allows, on real runs.

A wrong verdict is worse than none: a single ``pip install --user torch`` is not two installs; a
CUDA build on an AMD machine needs a ROCm build, not an NVIDIA driver (and the reverse); a driver
that ran the build is not too old for it; libcuda is the driver's, never a wheel's; ROCm's
"unknown error" is not CUDA's 999; a variable the build's runtime never reads hides nothing; a
ROCm worker that died is no evidence of a missing gfx code object.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import assert_valid_report, clean_env, fake_gpu_env, run_tool
from findings_helpers import host_block, ids, replay, report, unavailable
from kernodeck_diagnostic.report.findings import derive

NO_NVIDIA_NODE = {"runtime.device_nodes.nvidiactl": False, "runtime.device_nodes.nvidia_uvm": False,
                  "runtime.device_nodes.proc_driver_nvidia": False}
NO_DRIVER = ("Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and "
             "installed a driver from http://www.nvidia.com/Download/index.aspx")
ROCM = {"pytorch.backend": "rocm", "pytorch.cuda_build": None, "pytorch.hip_build": "6.4.43482",
        "pytorch.version": "2.8.0+rocm6.4"}
AMD_MACHINE = {**NO_NVIDIA_NODE, "runtime.device_nodes.kfd": "ok"}


def by_id(found: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {finding["id"]: finding for finding in derive(found)}


# -- 1. TORCH_DUPLICATE_INSTALL: evidence of two installs, never the user site alone --------------

def test_a_single_user_site_install_is_not_a_duplicate() -> None:
    assert "TORCH_DUPLICATE_INSTALL" not in ids(report(**{"pytorch.origin": "user-site"}))


def test_the_user_site_is_context_for_real_evidence_of_two_installs() -> None:
    found = by_id(report(**{"pytorch.origin": "user-site", "pytorch.distributions_on_path": 2}))
    evidence = found["TORCH_DUPLICATE_INSTALL"]["evidence"]
    assert evidence[0] == "2 torch distributions are visible on sys.path"
    assert any("user site-packages" in line for line in evidence[1:])
    # pip uninstall has no --user: each run removes the first install found, the user site's too.
    assert "--user" not in found["TORCH_DUPLICATE_INSTALL"]["next_action"]


def test_a_module_version_other_than_the_distributions_is_evidence() -> None:
    found = ids(report(**{"pytorch.distribution_version": "2.9.1"}))
    assert "TORCH_DUPLICATE_INSTALL" in found


# -- 2. BUILD_FOR_OTHER_VENDOR --------------------------------------------------------------------

@pytest.mark.parametrize("kfd", ["ok", "no_access"])
def test_a_cuda_build_on_an_amd_machine_needs_a_rocm_build(kfd: str) -> None:
    found = by_id(unavailable(NO_DRIVER, **NO_NVIDIA_NODE, **{"runtime.device_nodes.kfd": kfd}))
    assert "NVIDIA_DRIVER_MISSING" not in found  # installing an NVIDIA driver helps no one here
    finding = found["BUILD_FOR_OTHER_VENDOR"]
    assert finding["severity"] == "error"
    assert "https://download.pytorch.org/whl/rocm" in finding["next_action"]
    assert any("CUDA" in line for line in finding["evidence"])
    assert any("/dev/kfd (AMD) is present" in line for line in finding["evidence"])


def test_a_rocm_build_on_an_nvidia_machine_needs_a_cuda_build() -> None:
    found = by_id(unavailable("No HIP GPUs are available",
                              **ROCM, **{"runtime.device_nodes.kfd": "absent"}))
    assert "ROCM_KFD_ACCESS" not in found  # modprobe amdgpu on an NVIDIA machine: no
    finding = found["BUILD_FOR_OTHER_VENDOR"]
    assert "https://download.pytorch.org/whl/cu" in finding["next_action"]
    assert any("/dev/nvidiactl" in line for line in finding["evidence"])


def test_both_vendors_or_neither_is_not_the_other_vendor() -> None:
    both = unavailable(NO_DRIVER, **{"runtime.device_nodes.kfd": "ok"})  # NVIDIA nodes too
    assert "BUILD_FOR_OTHER_VENDOR" not in ids(both)
    neither = unavailable(NO_DRIVER, **NO_NVIDIA_NODE)
    assert ids(neither)[0] == "NVIDIA_DRIVER_MISSING"
    assert "BUILD_FOR_OTHER_VENDOR" not in ids(neither)
    rocm_alone = unavailable("No HIP GPUs are available", **ROCM, **NO_NVIDIA_NODE)
    assert "ROCM_KFD_ACCESS" in ids(rocm_alone)
    assert "BUILD_FOR_OTHER_VENDOR" not in ids(rocm_alone)


def test_wsl_and_other_systems_are_not_told_apart_by_nodes() -> None:
    # /dev/dxg is WSL 2's node for any vendor's GPU.
    wsl = unavailable(NO_DRIVER, **NO_NVIDIA_NODE, **{"runtime.device_nodes.dxg": True,
                                                      "runtime.device_nodes.kfd": "ok"})
    assert "BUILD_FOR_OTHER_VENDOR" not in ids(wsl)
    windows = unavailable(NO_DRIVER, **NO_NVIDIA_NODE, **{"runtime.device_nodes.kfd": "ok",
                                                          "runtime.os_family": "windows"})
    assert "BUILD_FOR_OTHER_VENDOR" not in ids(windows)


def test_a_usable_gpu_is_never_the_other_vendors() -> None:
    assert "BUILD_FOR_OTHER_VENDOR" not in ids(report(**NO_NVIDIA_NODE,
                                                      **{"runtime.device_nodes.kfd": "ok"}))


# -- 3. DRIVER_TOO_OLD beside a passing check: CUDA forward compatibility -------------------------

OLD_DRIVER = {"tool": "nvidia-smi", "status": "ok", "driver_version": "470.239.06", "gpus": [],
              "mig_devices": 0}


def test_a_driver_that_ran_the_build_is_not_an_error() -> None:
    finding = by_id(report(host=OLD_DRIVER))["DRIVER_TOO_OLD"]
    assert finding["severity"] == "info"
    assert "cuda-compat" in finding["summary"]
    assert "470.239.06" in finding["summary"]
    assert "525.60.13" in finding["summary"]
    assert finding["next_action"].startswith("Nothing to fix")


def test_a_driver_too_old_where_the_gpu_is_unavailable_stays_an_error() -> None:
    failed = unavailable("CUDA driver version is insufficient for CUDA runtime version",
                         host=OLD_DRIVER)
    assert by_id(failed)["DRIVER_TOO_OLD"]["severity"] == "error"


# -- 4. SHARED_LIBRARY_MISSING: the driver's libraries --------------------------------------------

def import_failed(message: str) -> dict[str, Any]:
    return report(**{"code": "TORCH_IMPORT_FAILED", "stage": "import", "pytorch.imported": False,
                     "error": {"stage": "import", "kind": "import_failed", "type": "ImportError",
                               "message": message}})


@pytest.mark.parametrize("library", ["libcuda.so.1", "libnvidia-ml.so.1", "libcuda.so"])
def test_a_driver_library_is_not_reinstalled_with_torch(library: str) -> None:
    finding = by_id(import_failed(f"{library}: cannot open shared object file: No such file or "
                                  "directory"))["SHARED_LIBRARY_MISSING"]
    assert "--gpus all" in finding["next_action"]
    assert "nvidia-*" not in finding["next_action"]
    assert "--force-reinstall" not in finding["next_action"]


@pytest.mark.parametrize("library", ["libcudnn.so.9", "libcudart.so.12", "libnvJitLink.so.12",
                                     "libnccl.so.2"])
def test_the_wheels_cuda_libraries_still_come_with_torch(library: str) -> None:
    finding = by_id(import_failed(f"{library}: cannot open shared object file: No such file or "
                                  "directory"))["SHARED_LIBRARY_MISSING"]
    assert "nvidia-*" in finding["next_action"]


# -- 5. CUDA's error numbers on a CUDA build only ------------------------------------------------

@pytest.mark.parametrize("message", [
    "HIP error: unknown error", "hipErrorUnknown: unknown error (999)"])
def test_a_rocm_failure_is_not_a_cuda_error(message: str) -> None:
    found = ids(report(**ROCM, **AMD_MACHINE, **{"code": "RUNTIME_ERROR", "error": {
        "stage": "compute", "kind": "runtime_error", "type": "RuntimeError",
        "message": message}}))
    assert {"CUDA_UNKNOWN_ERROR", "FABRIC_MANAGER_NOT_READY"}.isdisjoint(found)


# -- 6. DEVICES_HIDDEN: the variables the build's runtime reads, when no GPU was usable -----------

@pytest.mark.parametrize("variable", ["HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"])
def test_cuda_never_reads_the_rocm_variables(variable: str) -> None:
    failed = unavailable(NO_DRIVER, **{f"runtime.visibility.{variable}": "hides_all"})
    assert "DEVICES_HIDDEN" not in ids(failed)


def test_nothing_is_hidden_beside_a_pass() -> None:
    passed = report(**{"runtime.visibility.CUDA_VISIBLE_DEVICES": "empty",
                       "runtime.visibility.HIP_VISIBLE_DEVICES": "hides_all"})
    assert ids(passed) == []


@pytest.mark.parametrize("variable", ["HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
                                      "CUDA_VISIBLE_DEVICES"])
def test_rocm_reads_its_variables_and_cudas(variable: str) -> None:
    failed = unavailable("No HIP GPUs are available", **ROCM, **AMD_MACHINE,
                         **{f"runtime.visibility.{variable}": "empty"})
    finding = by_id(failed)["DEVICES_HIDDEN"]
    assert f"unset {variable}" in finding["next_action"]


# -- 7. ROCM_GFX_UNSUPPORTED: evidence, not a dead worker -----------------------------------------

def rocm_worker_died(last_line: str) -> dict[str, Any]:
    return report(**ROCM, **AMD_MACHINE, **{
        "code": "WORKER_FAILED", "stage": "compute", "pytorch.devices.0.gcn_arch": "gfx942",
        "pytorch.arch_list": ["gfx90a", "gfx942"],
        "error": {"stage": "compute", "kind": "worker_failed", "type": None,
                  "message": "the worker was killed by signal SIGKILL during compute, without a "
                             f"final result; its last line on stderr: {last_line}"}})


def test_a_rocm_worker_killed_for_memory_is_no_gfx_finding() -> None:
    assert ids(rocm_worker_died("loading the model")) == []


def test_a_rocm_worker_that_said_no_binary_for_the_gpu_is() -> None:
    found = by_id(rocm_worker_died(
        "HIP error: hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"))
    assert any("hipErrorNoBinaryForGpu" in line
               for line in found["ROCM_GFX_UNSUPPORTED"]["evidence"])


def test_a_rocm_check_that_passed_under_a_gfx_override_is_no_gfx_finding() -> None:
    """gfx1030 is not in the build's list, but the check passed: HSA_OVERRIDE_GFX_VERSION (or a
    compatible code object) ran the kernels, so nothing is unsupported."""
    passed = report(**ROCM, **AMD_MACHINE, **{
        "status": "passed", "pytorch.devices.0.gcn_arch": "gfx1030",
        "pytorch.arch_list": ["gfx90a", "gfx942"]})
    assert "ROCM_GFX_UNSUPPORTED" not in ids(passed)
    failed = report(**ROCM, **AMD_MACHINE, **{
        "status": "failed", "code": "RUNTIME_ERROR", "pytorch.devices.0.gcn_arch": "gfx1030",
        "pytorch.arch_list": ["gfx90a", "gfx942"]})
    assert "ROCM_GFX_UNSUPPORTED" in ids(failed)


# -- real runs -----------------------------------------------------------------------------------

def check(python: Path | str, tool: Path | list[str], tmp_path: Path, env: dict[str, str],
          *args: str) -> dict[str, Any]:
    out = tmp_path / "report.json"
    result = run_tool(python, tool, [*args, "--output", str(out)], env=env)
    assert result.report is not None, result.stderr
    assert_valid_report(result.report)
    return result.report


def found_ids(checked: dict[str, Any]) -> set[str]:
    return {finding["id"] for finding in checked["findings"]}


def user_site_install(cpu_torch_python: Path, tmp_path: Path) -> tuple[str, Path, Path]:
    """A plain interpreter (the one the torch environment was made from, which has no torch)
    with the real CPU build in its user site-packages, as ``pip install --user torch`` leaves it.

    Returns the interpreter, the user base (PYTHONUSERBASE) and the user site-packages.
    """
    base = subprocess.run([str(cpu_torch_python), "-c", "import sys; print(sys._base_executable)"],
                          capture_output=True, text=True, timeout=60, check=True).stdout.strip()
    user_base = tmp_path / "userbase"
    user_site = Path(subprocess.run(
        [base, "-c", "import site; print(site.getusersitepackages())"], capture_output=True,
        text=True, timeout=60, check=True, env=clean_env({"PYTHONUSERBASE": str(user_base)}),
    ).stdout.strip())
    has_torch = subprocess.run([base, "-s", "-c", "import importlib.util, sys; "
                                "sys.exit(importlib.util.find_spec('torch') is not None)"],
                               timeout=60, check=False, env=clean_env())
    if has_torch.returncode != 0:
        pytest.skip("the base interpreter has a torch of its own")
    installed = Path(subprocess.run(
        [str(cpu_torch_python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, timeout=60, check=True).stdout.strip())
    user_site.mkdir(parents=True)
    for entry in installed.iterdir():  # torch and what it needs; not pip's, nor .pth files
        if entry.name.startswith(("pip", "setuptools", "_distutils_hack", "__pycache__")) or \
                entry.suffix == ".pth":
            continue
        (user_site / entry.name).symlink_to(entry)
    return base, user_base, user_site


@pytest.mark.slow
def test_a_real_single_user_site_install_is_no_duplicate(cpu_torch_python: Path, pyz: Path,
                                                         tmp_path: Path) -> None:
    base, user_base, _ = user_site_install(cpu_torch_python, tmp_path)
    checked = check(base, pyz, tmp_path, clean_env({"PYTHONUSERBASE": str(user_base)}),
                    "--device", "cpu")
    assert checked["code"] == "CPU_CHECK_PASSED"
    assert checked["pytorch"]["origin"] == "user-site"
    assert checked["pytorch"]["distributions_on_path"] == 1
    assert "TORCH_DUPLICATE_INSTALL" not in found_ids(checked)


@pytest.mark.slow
def test_a_real_user_site_install_over_another_is_a_duplicate(cpu_torch_python: Path, pyz: Path,
                                                              tmp_path: Path) -> None:
    base, user_base, user_site = user_site_install(cpu_torch_python, tmp_path)
    # Another, older torch further down the path (a .pth adds its folder after site-packages,
    # as a system or conda site-packages would be).
    other = tmp_path / "other-site"
    other.mkdir()
    (other / "torch").symlink_to(user_site / "torch")
    record = next(user_site.glob("torch-*.dist-info"))
    older = other / "torch-2.9.1.dist-info"
    shutil.copytree(record, older)
    metadata = older / "METADATA"
    metadata.write_text("\n".join("Version: 2.9.1" if line.startswith("Version:") else line
                                  for line in metadata.read_text().splitlines()) + "\n")
    (user_site / "zz-other-torch.pth").write_text(f"{other}\n")
    checked = check(base, pyz, tmp_path, clean_env({"PYTHONUSERBASE": str(user_base)}),
                    "--device", "cpu")
    assert checked["pytorch"]["origin"] == "user-site"
    assert checked["pytorch"]["distributions_on_path"] == 2
    finding = {f["id"]: f for f in checked["findings"]}["TORCH_DUPLICATE_INSTALL"]
    assert finding["evidence"][0] == "2 torch distributions are visible on sys.path"
    assert any("user site-packages" in line for line in finding["evidence"])


def in_namespace_with(nodes: dict[str, str], tmp_path: Path) -> list[str]:
    """A command prefix running the rest in a private mount namespace where /dev has ``nodes``
    (name: "major minor" of a character device) besides its own: an overlay on /dev, so the
    machine's /dev is left as it is. Needs root (CAP_SYS_ADMIN, CAP_MKNOD)."""
    upper, work = tmp_path / "dev-upper", tmp_path / "dev-work"
    upper.mkdir()
    work.mkdir()
    made = "; ".join(f"mknod /dev/{name} c {numbers}" for name, numbers in nodes.items())
    layers = f"lowerdir=/dev,upperdir={upper},workdir={work}"
    script = (f"set -e; mount -t overlay overlay -o {shlex.quote(layers)} /dev; {made}; "
              'exec "$@"')
    prefix = ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh"]
    probe = subprocess.run([*prefix, "test", "-c", f"/dev/{next(iter(nodes))}"],
                           capture_output=True, text=True, timeout=30, check=False)
    if probe.returncode != 0:
        pytest.skip("no private mount namespace with device nodes here: " + probe.stderr.strip())
    shutil.rmtree(upper)
    shutil.rmtree(work)
    upper.mkdir()
    work.mkdir()
    return prefix


KFD = {"kfd": "234 0"}  # amdgpu's /dev/kfd (its major is given at load time; 234 is common)
NVIDIACTL = {"nvidiactl": "195 255"}


@pytest.mark.slow
def test_a_real_cuda_build_with_no_gpu_node_still_misses_the_nvidia_driver(
        cuda_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    checked = check(cuda_torch_python, pyz, tmp_path, clean_env())
    assert checked["runtime"]["device_nodes"]["kfd"] == "absent"
    found = found_ids(checked)
    assert "NVIDIA_DRIVER_MISSING" in found
    assert "BUILD_FOR_OTHER_VENDOR" not in found


@pytest.mark.slow
def test_a_real_cuda_build_on_a_machine_with_an_amd_gpu_node(
        cuda_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    prefix = in_namespace_with(KFD, tmp_path)
    checked = check(prefix[0], [*prefix[1:], str(cuda_torch_python), str(pyz)], tmp_path,
                    clean_env())
    assert checked["code"] == "GPU_UNAVAILABLE"
    assert checked["runtime"]["device_nodes"]["kfd"] == "ok"
    findings = {f["id"]: f for f in checked["findings"]}
    assert "NVIDIA_DRIVER_MISSING" not in findings
    assert "whl/rocm" in findings["BUILD_FOR_OTHER_VENDOR"]["next_action"]
    assert not Path("/dev/kfd").exists()  # the machine's own /dev is untouched


@pytest.mark.slow
def test_a_rocm_build_on_a_machine_with_an_nvidia_gpu_node(pyz: Path, tmp_path: Path) -> None:
    # The ROCm build is the fake's (this machine has no real one): HIP finds no AMD GPU.
    prefix = in_namespace_with(NVIDIACTL, tmp_path)
    checked = check(prefix[0], [*prefix[1:], sys.executable, str(pyz)], tmp_path,
                    fake_gpu_env("rocm_without_amd_gpu"))
    assert checked["pytorch"]["backend"] == "rocm"
    assert checked["runtime"]["device_nodes"]["nvidiactl"] is True
    findings = {f["id"]: f for f in checked["findings"]}
    assert "ROCM_KFD_ACCESS" not in findings
    assert "whl/cu" in findings["BUILD_FOR_OTHER_VENDOR"]["next_action"]


def test_a_rocm_build_with_no_gpu_node_still_needs_kfd(pyz: Path, tmp_path: Path) -> None:
    checked = check(sys.executable, pyz, tmp_path, fake_gpu_env("rocm_without_amd_gpu"))
    found = found_ids(checked)
    assert "ROCM_KFD_ACCESS" in found
    assert "BUILD_FOR_OTHER_VENDOR" not in found


def test_a_passing_check_on_an_old_driver_is_forward_compatibility(pyz: Path,
                                                                   tmp_path: Path) -> None:
    # An R470 driver running a CUDA 12.8 build: only the cuda-compat libraries make that work.
    checked = host_block(pyz, tmp_path, **{"nvidia-smi": (
        f'if [ "$1" = "-L" ]; then {replay("GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-0)")}\n'
        'else echo "NVIDIA A100-SXM4-80GB, 470.239.06, 81920"; fi\n')})
    assert checked["code"] == "GPU_CHECK_PASSED"
    assert checked["host"]["driver_version"] == "470.239.06"
    finding = {f["id"]: f for f in checked["findings"]}["DRIVER_TOO_OLD"]
    assert finding["severity"] == "info"
    assert "cuda-compat" in finding["summary"]


def test_libcuda_missing_in_a_container_without_the_gpu_runtime(pyz: Path,
                                                                 tmp_path: Path) -> None:
    checked = check(sys.executable, pyz, tmp_path, fake_gpu_env("driver_libraries_not_mounted"))
    assert checked["code"] == "TORCH_IMPORT_FAILED"
    finding = {f["id"]: f for f in checked["findings"]}["SHARED_LIBRARY_MISSING"]
    assert "libcuda.so.1" in finding["summary"]
    assert "--gpus all" in finding["next_action"]


@pytest.mark.slow
@pytest.mark.parametrize(("variables", "hidden"), [
    ({"CUDA_VISIBLE_DEVICES": "-1"}, True),
    ({"HIP_VISIBLE_DEVICES": "-1"}, False),
    ({"ROCR_VISIBLE_DEVICES": "", "HIP_VISIBLE_DEVICES": "-1"}, False)])
def test_a_real_cuda_build_reads_only_cuda_visible_devices(
        cuda_torch_python: Path, pyz: Path, tmp_path: Path, variables: dict[str, str],
        hidden: bool) -> None:
    checked = check(cuda_torch_python, pyz, tmp_path, clean_env(variables))
    assert checked["code"] == "GPU_UNAVAILABLE"
    assert ("DEVICES_HIDDEN" in found_ids(checked)) is hidden


def test_a_rocm_build_reads_hip_visible_devices(pyz: Path, tmp_path: Path) -> None:
    checked = check(sys.executable, pyz, tmp_path,
                    fake_gpu_env("rocm_without_amd_gpu", HIP_VISIBLE_DEVICES="-1"))
    finding = {f["id"]: f for f in checked["findings"]}["DEVICES_HIDDEN"]
    assert "unset HIP_VISIBLE_DEVICES" in finding["next_action"]

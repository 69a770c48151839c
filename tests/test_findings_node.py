"""The node's and the GPUs' health findings: each rule fires on its signal and stays quiet without
it (fact fixtures), the node facts are read from a real file tree, and, for real where this machine
allows, a tiny /dev/shm and real variables give their findings end to end."""

from __future__ import annotations

import copy
import json
import os
import resource
import shutil
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import SRC, assert_valid_report, clean_env, fake_gpu_env, run_tool
from findings_helpers import BASE, ids, report
from kernodeck_diagnostic.facts import node as node_facts
from kernodeck_diagnostic.i18n import LANGUAGES, translator
from kernodeck_diagnostic.report.findings import SHM_MINIMUM_BYTES, derive
from node_fixtures import (
    BUSY,
    NODE,
    NODE_FIRES,
    ROCM,
    host,
    no_driver,
    runtime_error,
    with_node,
)

SHM = "/dev/shm"  # noqa: S108 - the folder the evidence names


def found(case: dict[str, Any], language: str = "en") -> dict[str, dict[str, Any]]:
    return {finding["id"]: finding for finding in derive(case, translator(language))}


# -- the rules on fact fixtures ------------------------------------------------------------------

@pytest.mark.parametrize("finding_id", sorted(NODE_FIRES))
@pytest.mark.parametrize("language", LANGUAGES)
def test_each_fires_with_evidence_in_every_language(finding_id: str, language: str) -> None:
    finding = found(NODE_FIRES[finding_id], language)[finding_id]
    assert finding["evidence"]
    assert finding["summary"]
    assert finding["next_action"]


def test_a_healthy_node_and_healthy_gpus_give_nothing() -> None:
    assert derive(with_node(report(host=host()))) == []
    assert derive(BASE) == []  # a report written before the node block: nothing either


def test_shm_too_small_in_both_modes_and_only_when_small() -> None:
    cpu = with_node(report(**{"request.device": "cpu", "code": "CPU_CHECK_PASSED",
                              "pytorch.backend": "cpu", "pytorch.cuda_build": None}),
                    **{"node.shm.size_bytes": 64 * 2**20})
    # DataLoader workers share tensors through /dev/shm on a CPU as on a GPU.
    assert ids(cpu) == ["SHM_TOO_SMALL"]
    assert "64 MiB" in found(cpu)["SHM_TOO_SMALL"]["summary"]
    assert ids(with_node(**{"node.shm.size_bytes": 512 * 2**20})) == []
    assert ids(with_node(**{"node.shm": None})) == []  # absent: nothing known
    read_only = found(with_node(**{"node.shm.writable": False}))["SHM_TOO_SMALL"]
    assert read_only["evidence"] == [f"{SHM} is not writable by this user"]
    assert "cannot write" in read_only["summary"]


def test_device_order_needs_models_index_and_a_known_order() -> None:
    case = NODE_FIRES["DEVICE_ORDER_MISMATCH"]
    assert "CUDA_DEVICE_ORDER is unset (CUDA's default: FASTEST_FIRST)" in \
        found(case)["DEVICE_ORDER_MISMATCH"]["evidence"]
    pci = copy.deepcopy(case)
    pci["system"]["configuration"]["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
    assert ids(pci) == []
    unknown = copy.deepcopy(case)
    del unknown["system"]  # an older report: the order is unknown, not unset
    assert ids(unknown) == []
    one_model = copy.deepcopy(case)
    one_model["node"]["pci_models"] = 1
    assert ids(one_model) == []
    by_uuid = copy.deepcopy(case)
    by_uuid["node"]["visibility_by_index"] = []
    assert ids(by_uuid) == []
    # CUDA's order only: a CPU check, a ROCm build (each ONE change) say nothing of it.
    cpu = copy.deepcopy(case)
    cpu["request"]["device"] = "cpu"
    assert "DEVICE_ORDER_MISMATCH" not in ids(cpu)
    rocm = copy.deepcopy(case)
    rocm["pytorch"]["backend"] = "rocm"
    assert "DEVICE_ORDER_MISMATCH" not in ids(rocm)
    # Different names among PyTorch's devices are seen too, the PCI ids aside.
    names = copy.deepcopy(one_model)
    names["pytorch"]["devices"] = [{**BASE["pytorch"]["devices"][0], "index": 0},
                                   {**BASE["pytorch"]["devices"][0], "index": 1,
                                    "name": "NVIDIA L40S"}]
    assert "2 different GPU models (PyTorch's devices)" in \
        found(names)["DEVICE_ORDER_MISMATCH"]["evidence"]


def test_mig_only_when_more_than_one_is_listed() -> None:
    assert ids(with_node(**{"node.mig_entries": {"CUDA_VISIBLE_DEVICES": 1}})) == []
    assert "2 MIG devices" in found(NODE_FIRES["MIG_MULTIPLE_LISTED"])["MIG_MULTIPLE_LISTED"][
        "summary"]


def test_module_and_nouveau_replace_the_generic_driver_advice() -> None:
    module = ids(NODE_FIRES["NVIDIA_MODULE_NOT_LOADED"])
    assert "NVIDIA_MODULE_NOT_LOADED" in module
    assert "NVIDIA_DRIVER_MISSING" not in module
    nouveau = ids(NODE_FIRES["NOUVEAU_BOUND"])
    assert "NOUVEAU_BOUND" in nouveau
    assert "NVIDIA_MODULE_NOT_LOADED" not in nouveau
    assert "NVIDIA_DRIVER_MISSING" not in nouveau
    # No NVIDIA GPU on the bus: the driver is simply missing, as before.
    no_gpu = copy.deepcopy(NODE_FIRES["NVIDIA_MODULE_NOT_LOADED"])
    no_gpu["node"].update(pci_gpus=0, pci_models=0)
    assert "NVIDIA_DRIVER_MISSING" in ids(no_gpu)
    assert "NVIDIA_MODULE_NOT_LOADED" not in ids(no_gpu)
    # A GPU nouveau holds beside one the NVIDIA driver runs: a warning on a passing check.
    passing = with_node(**{"node.pci_gpus": 2, "node.pci_drivers.nouveau": 1})
    assert found(passing)["NOUVEAU_BOUND"]["severity"] == "warning"
    assert ids(with_node()) == []


def test_container_without_compute_only_when_libcuda_is_missing() -> None:
    case = ids(NODE_FIRES["CONTAINER_NO_COMPUTE_CAPABILITY"])
    assert "CONTAINER_NO_COMPUTE_CAPABILITY" in case
    assert "NVIDIA_DRIVER_MISSING" not in case
    assert "CONTAINER_NO_COMPUTE_CAPABILITY" not in ids(no_driver())  # libcuda is there
    passing = with_node(**{"node.libcuda": "absent"})
    assert "CONTAINER_NO_COMPUTE_CAPABILITY" not in ids(passing)
    no_nvml = no_driver(**{"node.libcuda": "absent", "node.nvml": False})
    assert "CONTAINER_NO_COMPUTE_CAPABILITY" not in ids(no_nvml)


def test_wsl_only_when_libcuda_is_not_wsls_own() -> None:
    case = copy.deepcopy(NODE_FIRES["WSL_LINUX_DRIVER_INSTALLED"])
    assert "system's folders" in " ".join(found(case)["WSL_LINUX_DRIVER_INSTALLED"]["evidence"])
    case["node"]["libcuda"] = "library_path"
    assert "LD_LIBRARY_PATH" in found(case)["WSL_LINUX_DRIVER_INSTALLED"]["summary"]
    case["node"]["libcuda"] = "wsl"
    assert "WSL_LINUX_DRIVER_INSTALLED" not in ids(case)


def test_libcuda_link_from_the_node_or_the_message() -> None:
    assert ids(with_node(**{"node.libcuda": "absent", "node.libcuda_unversioned": False})) == []
    said = runtime_error("BackendCompilerFailed: backend='inductor' raised: AssertionError: "
                         "libcuda.so cannot found!")
    assert "LIBCUDA_LINK_MISSING" in ids(said)
    cpu_build = with_node(**{"node.libcuda_unversioned": False, "pytorch.backend": "cpu",
                             "code": "GPU_BACKEND_ABSENT"})
    assert "LIBCUDA_LINK_MISSING" not in ids(cpu_build)
    # Triton installed: torch.compile links; not installed: nothing links with -lcuda.
    with_triton = with_node(**{"node.libcuda_unversioned": False,
                               "pytorch.triton_version": "3.4.0"})
    assert ids(with_triton) == ["LIBCUDA_LINK_MISSING"]
    without = with_node(**{"node.libcuda_unversioned": False, "pytorch.triton_version": None})
    assert ids(without) == []


def test_gpu_nodes_from_the_device_nodes_or_cudas_own_count() -> None:
    evidence = found(NODE_FIRES["GPU_NODES_MISMATCH"])["GPU_NODES_MISMATCH"]["evidence"]
    assert "/proc/driver/nvidia/gpus lists 8 GPU(s); this process may open 0 of the 8 " \
        "/dev/nvidiaN nodes" in evidence
    assert ids(with_node(**{"node.proc_gpus": 8, "node.dev_gpus": 8,
                            "node.dev_gpus_accessible": 8, "pytorch.visible_device_count": 8})) \
        == []
    # cgroup v2: the nodes look open, CUDA sees 2 of 8 with no variable to explain it.
    hidden = with_node(**{"node.proc_gpus": 8, "node.dev_gpus": 8, "node.dev_gpus_accessible": 8,
                          "pytorch.visible_device_count": 2})
    assert found(hidden)["GPU_NODES_MISMATCH"]["evidence"] == [
        "CUDA_VISIBLE_DEVICES is unset, yet CUDA enumerates 2 of them"]
    chosen = copy.deepcopy(hidden)
    chosen["runtime"]["visibility"]["CUDA_VISIBLE_DEVICES"] = "lists 2"
    assert ids(chosen) == []
    sliced = copy.deepcopy(hidden)
    sliced["pytorch"]["devices"][0]["name"] = "NVIDIA H200 MIG 1g.18gb"
    assert "GPU_NODES_MISMATCH" not in ids(sliced)
    lost = copy.deepcopy(hidden)
    lost["host"] = host(lost_gpus=6)  # fallen off the bus: not a scheduler's limit
    assert ids(lost) == ["GPU_LOST"]


def test_memory_held_below_half_and_with_processes() -> None:
    assert ids(report(**{"pytorch.devices.0.free_memory_bytes": 100 * 2**30})) == []
    case = report(**{"pytorch.devices.0.free_memory_bytes": 2**30,
                     "host": host(compute_processes=3)})
    finding = found(case)["GPU_MEMORY_HELD"]
    assert finding["severity"] == "warning"
    assert finding["evidence"] == ["cuda:0: 1.0 GiB of 150.0 GiB free before the check",
                                   "nvidia-smi lists 3 compute process(es) on the GPUs (this "
                                   "check's own may be one)"]
    oom = report(**{"pytorch.devices.0.free_memory_bytes": 2**30, "code": "OUT_OF_MEMORY"})
    assert found(oom)["GPU_MEMORY_HELD"]["severity"] == "error"


def test_busy_from_the_message_or_an_exclusive_mode_on_failure() -> None:
    assert found(NODE_FIRES["GPU_BUSY"])["GPU_BUSY"]["evidence"][0].startswith(
        "RuntimeError: CUDA error: CUDA-capable device(s) is/are busy")
    exclusive = runtime_error("CUDA error: an illegal memory access was encountered",
                              host=host(compute_mode="Exclusive_Process"))
    assert "nvidia-smi GPU 0: compute mode Exclusive_Process" in \
        found(exclusive)["GPU_BUSY"]["evidence"]
    assert ids(report(host=host(compute_mode="Exclusive_Process"))) == []  # it ran: no cause
    assert "GPU_BUSY" not in ids(runtime_error("CUDA error: an illegal memory access"))
    rocm = runtime_error(BUSY, **ROCM)
    assert "GPU_BUSY" not in ids(rocm)


def test_ecc_reset_and_lost_from_host_fields_or_messages() -> None:
    assert ids(report(host=host())) == []
    assert "ECC_UNCORRECTABLE" in ids(runtime_error(
        "CUDA error: uncorrectable ECC error encountered"))
    retired = found(report(host=host(retired_pages_pending=True)))["GPU_NEEDS_RESET"]
    assert retired == {**retired, "severity": "warning",
                       "evidence": ["nvidia-smi GPU 0: retired pages pending"]}
    assert "GPU_LOST" in ids(runtime_error("CUDA error: GPU is lost"))
    amd = report(host={"tool": "amd-smi", "status": "ok", "driver_version": None,
                       "gpus": [{"name": None, "memory_total_mib": 1, "remapped_rows_pending":
                                 True}], "mig_devices": None})
    assert ids(amd) == []  # the health fields are nvidia-smi's


def test_slow_first_call_does_not_blame_jit_alone_without_persistence() -> None:
    slow = report(**{"execution.duration_ms": 21000.0, "host": host()})
    assert ids(slow) == ["SLOW_FIRST_CALL"]
    assert "persistence" not in found(slow)["SLOW_FIRST_CALL"]["summary"]
    off = found(NODE_FIRES["PERSISTENCE_MODE_OFF"])
    assert set(off) == {"PERSISTENCE_MODE_OFF", "SLOW_FIRST_CALL"}
    assert "persistence mode is off" in off["SLOW_FIRST_CALL"]["summary"]
    assert "nvidia-persistenced" in off["SLOW_FIRST_CALL"]["next_action"]
    assert ids(report(host=host(persistence_mode=False))) == []  # fast: nothing to say
    device_stage = report(host=host(persistence_mode=False), timings_ms={"device": 9000.0})
    assert found(device_stage)["PERSISTENCE_MODE_OFF"]["evidence"] == [
        "nvidia-smi: persistence mode is disabled on 1 of 1 GPU(s)", "timings_ms.device = 9000"]


def test_debug_variables_names_only_and_gpu_mode_only() -> None:
    case = with_node(**{"node.debug_variables": ["CUDA_INJECTION64_PATH",
                                                 "NSIGHT_CUDA_DEBUGGER"]})
    finding = found(case)["DEBUG_INJECTION_SET"]
    assert finding["evidence"] == ["set (names only): CUDA_INJECTION64_PATH, NSIGHT_CUDA_DEBUGGER"]
    cpu = copy.deepcopy(case)
    cpu["request"]["device"] = "cpu"
    assert ids(cpu) == []


def test_rocm_conflict_only_for_a_rocm_build() -> None:
    assert found(NODE_FIRES["ROCM_VISIBILITY_CONFLICT"])["ROCM_VISIBILITY_CONFLICT"][
        "severity"] == "error"
    cuda = with_node(**{"node.visibility_conflicts": ["CUDA_VISIBLE_DEVICES"]})
    assert ids(cuda) == []
    passing = with_node(report(**ROCM), **{"node.visibility_conflicts": ["GPU_DEVICE_ORDINAL"]})
    assert found(passing)["ROCM_VISIBILITY_CONFLICT"]["severity"] == "warning"


# -- the node facts, read from a real file tree --------------------------------------------------

def _pci(root: Path, name: str, ids_: tuple[str, str, str], driver: str | None) -> None:
    """A PCI function under ``root``'s sysfs: (vendor, class, device) ids and its bound driver."""
    vendor, klass, device = ids_
    folder = root / "sys/bus/pci/devices" / name
    folder.mkdir(parents=True)
    (folder / "vendor").write_text(vendor + "\n")
    (folder / "class").write_text(klass + "\n")
    (folder / "device").write_text(device + "\n")
    if driver:
        target = root / "sys/bus/pci/drivers" / driver
        target.mkdir(parents=True, exist_ok=True)
        (folder / "driver").symlink_to(target)


def test_pci_gpus_counts_display_functions_models_and_drivers(tmp_path: Path) -> None:
    _pci(tmp_path, "0000:01:00.0", ("0x10de", "0x030000", "0x2684"), "nvidia")
    _pci(tmp_path, "0000:01:00.1", ("0x10de", "0x040300", "0x22ba"), "snd_hda_intel")  # audio
    _pci(tmp_path, "0000:02:00.0", ("0x10de", "0x030200", "0x2330"), "nouveau")
    _pci(tmp_path, "0000:03:00.0", ("0x10de", "0x030200", "0x2330"), None)
    _pci(tmp_path, "0000:04:00.0", ("0x8086", "0x030000", "0x46a6"), "i915")
    assert node_facts.pci_gpus(str(tmp_path)) == (
        3, 2, {"nvidia": 1, "nouveau": 1, "vfio-pci": 0, "other": 0, "none": 1})
    assert node_facts.pci_gpus(str(tmp_path / "nothing")) == (
        0, 0, {"nvidia": 0, "nouveau": 0, "vfio-pci": 0, "other": 0, "none": 0})


@pytest.mark.skipif(os.geteuid() != 0, reason="creating character devices needs root")
def test_device_nodes_follow_the_cgroup_v1_device_list(tmp_path: Path) -> None:
    dev = tmp_path / "dev"
    dev.mkdir()
    for minor in (0, 1):
        os.mknod(dev / f"nvidia{minor}", 0o666 | 0o020000, os.makedev(195, minor))
    (dev / "nvidiactl").write_text("")
    cgroup = tmp_path / "sys/fs/cgroup/devices/slurm/job_7"
    cgroup.mkdir(parents=True)
    (tmp_path / "proc/self").mkdir(parents=True)
    (tmp_path / "proc/self/cgroup").write_text("5:devices:/slurm/job_7\n4:memory:/x\n")
    (cgroup / "devices.list").write_text("c 1:3 rwm\nc 195:1 rw\nc 195:0 m\n")
    assert node_facts.device_nodes(str(tmp_path)) == (2, 1)
    (cgroup / "devices.list").write_text("a *:* rwm\n")
    assert node_facts.device_nodes(str(tmp_path)) == (2, 2)
    (cgroup / "devices.list").unlink()  # unreadable (cgroup v2): permission bits decide
    assert node_facts.device_nodes(str(tmp_path)) == (2, 2)


def test_libraries_in_loader_order_and_where_they_are(tmp_path: Path) -> None:
    wsl = tmp_path / "usr/lib/wsl/lib"
    wsl.mkdir(parents=True)
    (wsl / "libcuda.so.1").write_text("")
    (wsl / "libcuda.so").write_text("")
    system = tmp_path / "usr/lib64"
    system.mkdir(parents=True)
    (system / "libcuda.so.1").write_text("")
    (tmp_path / "etc").mkdir()
    _write_cache(tmp_path / "etc/ld.so.cache", [("libcuda.so.1", "/usr/lib/wsl/lib/libcuda.so.1"),
                                                ("libnvidia-ml.so.1", "/usr/lib64/x.so")])
    libraries = node_facts.Libraries({}, str(tmp_path))
    assert libraries.place(libraries.find("libcuda.so.1")) == "wsl"  # the cache's order first
    assert libraries.beside("libcuda.so", "libcuda.so.1")
    assert libraries.find("libnvidia-ml.so.1") is not None
    override = tmp_path / "override"
    override.mkdir()
    (override / "libcuda.so.1").write_text("")
    first = node_facts.Libraries({"LD_LIBRARY_PATH": f"::{override}"}, str(tmp_path))
    assert first.place(first.find("libcuda.so.1")) == "library_path"
    (tmp_path / "etc/ld.so.cache").unlink()
    (wsl / "libcuda.so").unlink()
    without_cache = node_facts.Libraries({}, str(tmp_path))
    assert without_cache.place(without_cache.find("libcuda.so.1")) == "system"  # default folder
    assert not without_cache.beside("libcuda.so", "libcuda.so.1")
    assert without_cache.find("libnvidia-ml.so.1") is None


def _write_cache(path: Path, entries: list[tuple[str, str]]) -> None:
    """A loader cache in glibc's format (the new one, alone): header, entries, strings."""
    flags = 0x0303 if sys.maxsize > 2**32 else 0x0003
    header = 48
    strings = b""
    offsets = []
    start = header + 24 * len(entries)
    for soname, target in entries:
        key = start + len(strings)
        strings += soname.encode() + b"\0"
        value = start + len(strings)
        strings += target.encode() + b"\0"
        offsets.append((key, value))
    # magic and version, nlibs, len_strings, then flags, padding, extension offset, unused[3]
    data = b"glibc-ld.so.cache1.1" + struct.pack("=II", len(entries), len(strings)) + bytes(20)
    data += b"".join(struct.pack("=iIIIQ", flags, key, value, 0, 0) for key, value in offsets)
    path.write_bytes(data + strings)


@pytest.mark.skipif(not os.path.isfile("/etc/ld.so.cache") or shutil.which("ldconfig") is None,
                    reason="needs this machine's loader cache and ldconfig to compare with")
def test_the_loader_cache_reads_as_ldconfig_lists_it() -> None:
    listed = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, timeout=30,
                            check=True).stdout
    native = "x86-64" if sys.maxsize > 2**32 else "libc6)"
    expected = [(line.split(" (")[0].strip(), line.rsplit("=> ", 1)[1].strip())
                for line in listed.splitlines()[1:] if "=>" in line and native in line]
    assert expected, "ldconfig listed nothing native"
    assert node_facts.loader_cache("/etc/ld.so.cache") == expected
    assert node_facts.loader_cache("/nonexistent") is None


def test_variables_give_names_and_counts_never_values() -> None:
    planted = "/home/someone/private-tool/libinject.so"
    facts = node_facts.variables({
        "CUDA_INJECTION64_PATH": planted, "CUDA_AUTO_BOOST": "0", "PATH": "/usr/bin",
        "CUDA_VISIBLE_DEVICES": "MIG-6f3a, MIG-9b1c", "HIP_VISIBLE_DEVICES": "1",
        "ROCR_VISIBLE_DEVICES": "1", "GPU_DEVICE_ORDINAL": "1"})
    assert facts == {"debug_variables": ["CUDA_INJECTION64_PATH", "CUDA_AUTO_BOOST"],
                     "visibility_by_index": ["HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
                                             "GPU_DEVICE_ORDINAL"],
                     "mig_entries": {"CUDA_VISIBLE_DEVICES": 2},
                     # ROCr keeps one GPU; HIP's index 1 then points past it.
                     "visibility_conflicts": ["ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"],
                     "compilers_not_found": []}
    assert planted not in json.dumps(facts)
    same = node_facts.variables({"HIP_VISIBLE_DEVICES": "0,1", "ROCR_VISIBLE_DEVICES": "0,1",
                                 "CUDA_VISIBLE_DEVICES": "0,1"})
    assert same["visibility_conflicts"] == []
    assert node_facts.variables({})["visibility_conflicts"] == []


def test_a_cxx_that_names_no_program_here_is_said_by_name_only(tmp_path: Path) -> None:
    """CXX set to a compiler this PATH cannot run, while the one torch.compile takes without it
    is there: named (COMPILER_MISSING's cause), never its value; CXX that runs, CXX's program
    not executable, no default compiler either (then installing one is the advice): as they
    are."""
    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()
    for name in ("g++", "ccache", "not-executable"):
        (bin_folder / name).write_text("#!/bin/sh\n", encoding="utf-8")
        (bin_folder / name).chmod(0o755 if name != "not-executable" else 0o644)
    planted = str(tmp_path / "opt" / "gcc-13" / "bin" / "g++")

    def found(cxx: str, path: str = str(bin_folder)) -> list[str]:
        facts = node_facts.variables({"CXX": cxx, "PATH": path})
        assert planted not in json.dumps(facts)
        return facts["compilers_not_found"]

    assert found(planted) == ["CXX"]
    assert found("clang++-17") == ["CXX"]  # not on PATH
    assert found(str(bin_folder / "not-executable")) == ["CXX"]
    assert found("g++") == found("ccache g++") == found(str(bin_folder / "g++")) == []
    assert found("") == []  # set empty: Inductor takes its default
    assert found(planted, path=str(tmp_path / "empty")) == []  # no g++ either
    assert node_facts.variables({"PATH": str(bin_folder)})["compilers_not_found"] == []


def test_collect_on_this_machine_is_schema_shaped() -> None:
    collected = node_facts.collect()
    assert collected is not None
    assert set(collected) == set(NODE)
    assert collected["shm"] is None or collected["shm"]["size_bytes"] > 0
    one = report()
    one["node"] = collected
    assert isinstance(derive(one), list)


def _soft_limits(address_space: int, data: int) -> Callable[[], None]:
    def set_limits() -> None:
        for limit, soft in ((resource.RLIMIT_AS, address_space), (resource.RLIMIT_DATA, data)):
            resource.setrlimit(limit, (soft, resource.getrlimit(limit)[1]))
    return set_limits


def test_memory_limits_are_the_ones_the_process_runs_under() -> None:
    hard = {key: resource.getrlimit(limit)[1] for key, limit in (
        ("address_space_bytes", resource.RLIMIT_AS), ("data_bytes", resource.RLIMIT_DATA))}
    if any(value != resource.RLIM_INFINITY for value in hard.values()):
        pytest.skip(f"this machine has hard limits on memory: {hard}")
    code = ("import json; from kernodeck_diagnostic.facts import node; "
            "print(json.dumps(node.memory_limits()))")
    said = []
    for preexec in (_soft_limits(6 * 2**30, 5 * 2**30),
                    _soft_limits(resource.RLIM_INFINITY, resource.RLIM_INFINITY)):
        completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                   timeout=60, env=clean_env({"PYTHONPATH": str(SRC)}),
                                   preexec_fn=preexec, check=True)
        said.append(json.loads(completed.stdout))
    assert said == [{"address_space_bytes": 6 * 2**30, "data_bytes": 5 * 2**30},
                    {"address_space_bytes": None, "data_bytes": None}]


# -- for real ------------------------------------------------------------------------------------

def _in_tiny_shm(python: Path, command: list[str], size: str = "16m",
                 env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``command`` run by ``python`` in a private mount namespace whose /dev/shm is a tmpfs of
    ``size``: what a container's default --shm-size gives (root and unshare needed)."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("a private /dev/shm needs root and unshare -m (util-linux)")
    script = f'mount -t tmpfs -o size={size} tmpfs /dev/shm && exec "$@"'
    return subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh",
                           str(python), *command], capture_output=True, text=True, timeout=180,
                          env=clean_env(env), check=False)


DATALOADER = """
import torch
from torch.utils.data import DataLoader, Dataset
class Tensors(Dataset):
    def __len__(self): return 2
    def __getitem__(self, i): return torch.ones(4 * 2**20)  # 16 MiB of float32
for batch in DataLoader(Tensors(), batch_size=2, num_workers=1):
    print("batch", tuple(batch.shape))
"""


@pytest.mark.slow
def test_a_tiny_dev_shm_breaks_a_real_cpu_dataloader(cpu_torch_python: Path,
                                                      tmp_path: Path) -> None:
    # Why SHM_TOO_SMALL is said in CPU mode too: the CPU build's DataLoader needs /dev/shm.
    # (The crashed loader leaves multiprocessing's pymp-* folder: in the test's own folder.)
    result = _in_tiny_shm(cpu_torch_python, ["-c", DATALOADER], env={"TMPDIR": str(tmp_path)})
    assert result.returncode != 0
    assert "shared memory" in result.stderr or "Bus error" in result.stderr, result.stderr[-800:]


@pytest.mark.slow
def test_shm_too_small_for_real_in_cpu_mode(cpu_torch_python: Path, pyz: Path,
                                            tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    result = _in_tiny_shm(cpu_torch_python, [str(pyz), "--device", "cpu", "--output", str(out)])
    assert result.returncode == 0, result.stderr  # findings never change the verdict
    tiny = json.loads(out.read_text())
    assert_valid_report(tiny)
    assert tiny["code"] == "CPU_CHECK_PASSED"
    assert tiny["node"]["shm"]["size_bytes"] == 16 * 2**20
    finding = {f["id"]: f for f in tiny["findings"]}["SHM_TOO_SMALL"]
    assert finding["evidence"][0].startswith(f"{SHM} is 16 MiB")
    assert "SHM_TOO_SMALL" in result.stdout
    # The machine's own /dev/shm (not a container's): nothing to say.
    normal = run_tool(cpu_torch_python, pyz, ["--device", "cpu", "--output",
                                              str(tmp_path / "normal.json")])
    assert normal.report is not None
    if normal.report["node"]["shm"]["size_bytes"] >= SHM_MINIMUM_BYTES:
        assert "SHM_TOO_SMALL" not in {f["id"] for f in normal.report["findings"]}


@pytest.mark.slow
def test_debug_variables_for_real_names_only(cuda_torch_python: Path, pyz: Path,
                                             tmp_path: Path) -> None:
    planted = f"{tmp_path}/private-profiler/libinjection-planted.so"
    result = run_tool(cuda_torch_python, pyz, ["--output", str(tmp_path / "r.json")],
                      env=clean_env({"CUDA_INJECTION64_PATH": planted,
                                     "NSIGHT_CUDA_DEBUGGER": "1"}))
    assert result.report is not None, result.stderr
    assert_valid_report(result.report)
    assert result.report["node"]["debug_variables"] == ["CUDA_INJECTION64_PATH",
                                                        "NSIGHT_CUDA_DEBUGGER"]
    finding = {f["id"]: f for f in result.report["findings"]}["DEBUG_INJECTION_SET"]
    assert "CUDA_INJECTION64_PATH, NSIGHT_CUDA_DEBUGGER" in finding["summary"]
    for text in (json.dumps(result.report), result.stdout, result.stderr):
        assert "libinjection-planted" not in text
        assert "private-profiler" not in text
    quiet = run_tool(cuda_torch_python, pyz, ["--output", str(tmp_path / "q.json")])
    assert quiet.report is not None
    assert "DEBUG_INJECTION_SET" not in {f["id"] for f in quiet.report["findings"]}


@pytest.mark.slow
def test_several_mig_entries_for_real(cuda_torch_python: Path, pyz: Path,
                                      tmp_path: Path) -> None:
    value = "MIG-4f1e0a57-planted-aaaa,MIG-9c2d7b31-planted-bbbb"
    result = run_tool(cuda_torch_python, pyz, ["--output", str(tmp_path / "r.json")],
                      env=clean_env({"CUDA_VISIBLE_DEVICES": value}))
    assert result.report is not None, result.stderr
    assert result.report["node"]["mig_entries"] == {"CUDA_VISIBLE_DEVICES": 2}
    assert "MIG_MULTIPLE_LISTED" in {f["id"] for f in result.report["findings"]}
    assert "planted" not in json.dumps(result.report)
    one = run_tool(cuda_torch_python, pyz, ["--output", str(tmp_path / "one.json")],
                   env=clean_env({"CUDA_VISIBLE_DEVICES": value.split(",", maxsplit=1)[0]}))
    assert one.report is not None
    assert "MIG_MULTIPLE_LISTED" not in {f["id"] for f in one.report["findings"]}


def test_rocm_visibility_conflict_with_real_variables(pyz: Path, tmp_path: Path) -> None:
    # The variables are real; the ROCm GPU is the fake's (this machine has none).
    result = run_tool(sys.executable, pyz, ["--output", str(tmp_path / "r.json")],
                      env=fake_gpu_env("rocm_pass", HIP_VISIBLE_DEVICES="1",
                                       ROCR_VISIBLE_DEVICES="1"))
    assert result.report is not None, result.stderr
    assert result.report["node"]["visibility_conflicts"] == ["ROCR_VISIBLE_DEVICES"]
    finding = {f["id"]: f for f in result.report["findings"]}["ROCM_VISIBILITY_CONFLICT"]
    assert finding["evidence"] == [
        "HIP_VISIBLE_DEVICES and ROCR_VISIBLE_DEVICES are both set and select differently"]
    same = run_tool(sys.executable, pyz, ["--output", str(tmp_path / "same.json")],
                    env=fake_gpu_env("rocm_pass", HIP_VISIBLE_DEVICES="0",
                                     ROCR_VISIBLE_DEVICES="0,1"))
    assert same.report is not None
    assert "ROCM_VISIBILITY_CONFLICT" in {f["id"] for f in same.report["findings"]}
    alone = run_tool(sys.executable, pyz, ["--output", str(tmp_path / "alone.json")],
                     env=fake_gpu_env("rocm_pass", ROCR_VISIBLE_DEVICES="0"))
    assert alone.report is not None
    assert "ROCM_VISIBILITY_CONFLICT" not in {f["id"] for f in alone.report["findings"]}


# -- GPU-side facts through the fake torch (this machine has no GPU) -----------------------------

def _fake(pyz: Path, scenario: str, tmp_path: Path, **env: str) -> dict[str, Any]:
    out = tmp_path / f"{scenario}-{len(list(tmp_path.iterdir()))}.json"
    ran = run_tool(sys.executable, pyz, ["--output", str(out)], env=fake_gpu_env(scenario, **env))
    assert ran.report is not None, ran.stderr
    assert_valid_report(ran.report)
    return ran.report


def test_memory_held_by_another_process(pyz: Path, tmp_path: Path) -> None:
    held = _fake(pyz, "gpu_memory_held_by_another_process", tmp_path)
    assert held["code"] == "GPU_CHECK_PASSED"
    assert held["pytorch"]["devices"][0]["free_memory_bytes"] == 512 * 2**20
    assert {f["id"]: f for f in held["findings"]}["GPU_MEMORY_HELD"]["evidence"] == [
        "cuda:0: 0.5 GiB of 12.0 GiB free before the check"]
    free = _fake(pyz, "cuda_pass", tmp_path)
    assert free["pytorch"]["devices"][0]["free_memory_bytes"] == 12 * 2**30 - 300 * 2**20
    assert "GPU_MEMORY_HELD" not in {f["id"] for f in free["findings"]}


def test_exclusive_process_gpu_busy(pyz: Path, tmp_path: Path) -> None:
    busy = _fake(pyz, "gpu_exclusive_process_busy", tmp_path)
    assert busy["code"] == "RUNTIME_ERROR"
    assert "free_memory_bytes" not in busy["pytorch"]["devices"][0]  # the call failed too
    assert "GPU_BUSY" in {f["id"] for f in busy["findings"]}


def test_uncorrectable_ecc_error(pyz: Path, tmp_path: Path) -> None:
    ecc = _fake(pyz, "uncorrectable_ecc_error", tmp_path)
    assert ecc["code"] == "RUNTIME_ERROR"
    assert "ECC_UNCORRECTABLE" in {f["id"] for f in ecc["findings"]}


def test_mixed_models_numbered_by_speed(pyz: Path, tmp_path: Path) -> None:
    mixed = _fake(pyz, "mixed_gpu_models", tmp_path, KD_FAKE_DEVICES="2",
                  CUDA_VISIBLE_DEVICES="0,1")
    names = [device["name"] for device in mixed["pytorch"]["devices"]]
    assert names == ["NVIDIA GeForce RTX 5070", "NVIDIA GeForce GTX 1080"]
    assert mixed["node"]["visibility_by_index"] == ["CUDA_VISIBLE_DEVICES"]
    assert mixed["system"]["configuration"] == {}  # CUDA_DEVICE_ORDER unset: FASTEST_FIRST
    order = {f["id"]: f for f in mixed["findings"]}["DEVICE_ORDER_MISMATCH"]
    assert "2 different GPU models (PyTorch's devices)" in order["evidence"]
    ordered = _fake(pyz, "mixed_gpu_models", tmp_path, KD_FAKE_DEVICES="2",
                    CUDA_VISIBLE_DEVICES="0,1", CUDA_DEVICE_ORDER="PCI_BUS_ID")
    assert "DEVICE_ORDER_MISMATCH" not in {f["id"] for f in ordered["findings"]}


# CUDA's "out of memory" under `ulimit -v`, each row ONE change: before CUDA had a context on the
# device (its free memory unread), the limit refused the driver's reservation; once the free
# memory was read, the GPU's own memory ran out and the limit is not blamed for CUDA's start.
@pytest.mark.parametrize(("free", "reservation"), [(None, True), (2**30, False)],
                         ids=["free memory unread", "free memory read"])
def test_cuda_out_of_memory_under_an_address_space_limit(free: int | None,
                                                         reservation: bool) -> None:
    case = with_node(runtime_error("CUDA error: out of memory"),
                     **{"node.memory_limits.address_space_bytes": 8 * 2**30})
    if free is not None:
        case["pytorch"]["devices"][0]["free_memory_bytes"] = free
    evidence = {f["id"]: f for f in derive(case)}.get("HOST_MEMORY_EXHAUSTED", {}).get(
        "evidence", [])
    said = "the device's free memory could not be read: CUDA had no context on it yet"
    assert (said in evidence) is reservation, evidence

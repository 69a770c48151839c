"""Every threshold a verdict depends on, pinned from both sides: a value just below the boundary
and one at (or just past) it, each with the verdict it must give.

The boundaries are written here as numbers, never read from the constants they pin: a constant
lowered or raised, a ``<`` turned into ``<=``, a version compared on its major only, an index
shifted by one must each fail a test below (docs/reliability.md, "Thresholds pinned from both
sides", lists which). Fast unit tests only: no torch, no worker.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from accelerator_fixtures import mps_unavailable
from distributed_fixtures import distributed
from findings_helpers import ids, report, unavailable
from kernodeck_diagnostic.commands import ramp as ramp_command
from kernodeck_diagnostic.commands.runner import UsageError
from kernodeck_diagnostic.facts import launcher
from kernodeck_diagnostic.facts.node import visibility_conflicts
from kernodeck_diagnostic.i18n import ENGLISH
from kernodeck_diagnostic.ramp.plan import explore, next_value
from kernodeck_diagnostic.report import libraries as library_facts
from kernodeck_diagnostic.report.compare import compare
from kernodeck_diagnostic.report.devices import EveryDevice
from kernodeck_diagnostic.report.distributed import shared_devices
from kernodeck_diagnostic.report.findings import derive
from kernodeck_diagnostic.report.findings import device as device_rules
from kernodeck_diagnostic.report.findings.distributed import memlock_low
from kernodeck_diagnostic.report.pep440 import satisfies
from kernodeck_diagnostic.supervision import oom_killer
from kernodeck_diagnostic.trial import Trial, contracts, evidence, oom
from kernodeck_diagnostic.trial import compare as attempt_compare
from kernodeck_diagnostic.worker import extensions as worker_extensions
from library_fixtures import extension, with_libraries
from node_fixtures import host, with_node

MIB, GIB = 2**20, 2**30


def _finding(found: dict[str, Any], finding_id: str) -> dict[str, Any] | None:
    return next((item for item in derive(found) if item["id"] == finding_id), None)


# -- the node: /dev/shm ---------------------------------------------------------------------------

@pytest.mark.parametrize(("size", "fires"), [(256 * MIB - 1, True), (256 * MIB, False)])
def test_shm_below_256_mib_is_too_small(size: int, fires: bool) -> None:
    found = with_node(**{"node.shm.size_bytes": size, "node.shm.free_bytes": size})
    assert ("SHM_TOO_SMALL" in ids(found)) is fires
    if fires:
        assert "below 256 MiB" in " ".join(_finding(found, "SHM_TOO_SMALL")["evidence"])


# -- the driver: the minimum per CUDA major ------------------------------------------------------

def _driver(build: str, driver: str, os_family: str = "linux") -> dict[str, Any]:
    """A CUDA ``build`` that found no usable GPU, the module's file giving ``driver``."""
    return unavailable("CUDA driver initialization failed, you might not have a CUDA gpu.",
                       **{"pytorch.cuda_build": build, "runtime.os_family": os_family,
                          "system": {"nvidia_driver_version": driver}})


@pytest.mark.parametrize(("build", "os_family", "below", "minimum"), [
    ("11.8", "linux", "450.80.01", "450.80.02"),
    ("11.8", "windows", "452.38", "452.39"),
    ("12.8", "linux", "525.60.12", "525.60.13"),
    ("12.8", "windows", "528.32", "528.33"),
    ("13.0", "linux", "580.65.05", "580.65.06"),
])
def test_the_minimum_driver_of_each_cuda_major(build: str, os_family: str, below: str,
                                              minimum: str) -> None:
    too_old = _finding(_driver(build, below, os_family), "DRIVER_TOO_OLD")
    assert too_old is not None
    assert too_old["severity"] == "error"
    major = build.partition(".")[0]
    assert f"below {minimum}, the minimum for CUDA {major}.x" in " ".join(too_old["evidence"])
    assert "DRIVER_TOO_OLD" not in ids(_driver(build, minimum, os_family))


def test_windows_has_no_cuda_13_minimum_and_linux_minimums_are_not_windows_ones() -> None:
    assert "DRIVER_TOO_OLD" not in ids(_driver("13.0", "400.00", "windows"))
    # 528.32 is below Windows' minimum for CUDA 12 but above Linux's.
    assert "DRIVER_TOO_OLD" not in ids(_driver("12.8", "528.32", "linux"))


def test_the_driver_version_cuda_reports_reads_as_major_and_minor() -> None:
    found = unavailable("The NVIDIA driver on your system is too old (found version 12020).",
                        **{"pytorch.cuda_build": "12.8"})
    too_old = _finding(found, "DRIVER_TOO_OLD")
    assert too_old is not None
    assert "the driver supports CUDA up to 12.2 (found version 12020)" in too_old["evidence"]


# -- the devices: memory held, a slow first call, MPS, MIG, models, counts -----------------------

@pytest.mark.parametrize(("free", "fires"), [(75 * GIB - 1, True), (75 * GIB, False)])
def test_less_than_half_the_memory_free_is_held(free: int, fires: bool) -> None:
    found = report(**{"pytorch.devices.0.free_memory_bytes": free})  # of 150 GiB
    assert ("GPU_MEMORY_HELD" in ids(found)) is fires


@pytest.mark.parametrize(("duration", "fires"), [(5000.0, False), (5000.5, True)])
def test_a_first_call_over_five_seconds_is_slow(duration: float, fires: bool) -> None:
    assert ("SLOW_FIRST_CALL" in ids(report(**{"execution.duration_ms": duration}))) is fires
    found = report(**{"execution.duration_ms": duration, "host": host(persistence_mode=False)})
    assert ("PERSISTENCE_MODE_OFF" in ids(found)) is fires


@pytest.mark.parametrize(("device_ms", "fires"), [(5000.0, False), (5000.5, True)])
def test_a_device_stage_over_five_seconds_is_slow_with_persistence_off(device_ms: float,
                                                                      fires: bool) -> None:
    found = report(**{"timings_ms": {"device": device_ms}, "host": host(persistence_mode=False)})
    assert ("PERSISTENCE_MODE_OFF" in ids(found)) is fires


@pytest.mark.parametrize(("macos", "variant"), [("13.7", "macos_too_old"), ("14.0", "no_device"),
                                               ("13", "macos_too_old"), ("14", "no_device")])
def test_mps_needs_macos_14(macos: str, variant: str) -> None:
    found = device_rules.mps_unavailable(mps_unavailable(macos, "arm64", False))
    assert found is not None
    assert found.variant == variant


@pytest.mark.parametrize(("count", "fires"), [(1, False), (2, True)])
def test_more_than_one_mig_device_listed(count: int, fires: bool) -> None:
    found = with_node(**{"runtime.visibility.CUDA_VISIBLE_DEVICES": f"lists {count}",
                         "node.mig_entries": {"CUDA_VISIBLE_DEVICES": count}})
    assert ("MIG_MULTIPLE_LISTED" in ids(found)) is fires


@pytest.mark.parametrize(("models", "fires"), [(1, False), (2, True)])
def test_two_gpu_models_make_the_order_matter(models: int, fires: bool) -> None:
    found = with_node(**{"runtime.visibility.CUDA_VISIBLE_DEVICES": "lists 1",
                         "node.pci_models": models,
                         "node.visibility_by_index": ["CUDA_VISIBLE_DEVICES"],
                         "system": {"configuration": {}}})
    assert ("DEVICE_ORDER_MISMATCH" in ids(found)) is fires


@pytest.mark.parametrize(("gpus", "accessible", "fires"), [(8, 7, True), (8, 8, False),
                                                          (1, 0, True), (1, 1, False)])
def test_fewer_device_nodes_openable_than_the_driver_has(gpus: int, accessible: int,
                                                         fires: bool) -> None:
    found = with_node(unavailable("CUDA driver initialization failed, you might not have a CUDA "
                                  "gpu."),
                      **{"node.proc_gpus": gpus, "node.pci_gpus": gpus, "node.dev_gpus": gpus,
                         "node.dev_gpus_accessible": accessible})
    assert ("GPU_NODES_MISMATCH" in ids(found)) is fires


@pytest.mark.parametrize(("count", "fires"), [(1, True), (2, False)])
def test_fewer_devices_enumerated_than_the_driver_has(count: int, fires: bool) -> None:
    found = with_node(**{"node.proc_gpus": 2, "node.pci_gpus": 2, "node.dev_gpus": 2,
                         "node.dev_gpus_accessible": 2, "pytorch.visible_device_count": count})
    assert ("GPU_NODES_MISMATCH" in ids(found)) is fires


@pytest.mark.parametrize(("errors", "fires"), [(0, False), (1, True)])
def test_one_uncorrectable_ecc_error_is_enough(errors: int, fires: bool) -> None:
    found = report(host=host(ecc_uncorrected_volatile=errors))
    assert ("ECC_UNCORRECTABLE" in ids(found)) is fires


@pytest.mark.parametrize(("lost", "fires"), [(0, False), (1, True)])
def test_one_lost_gpu_is_enough(lost: int, fires: bool) -> None:
    assert ("GPU_LOST" in ids(report(host=host(lost_gpus=lost)))) is fires


# -- the build: architectures and the toolkit's CUDA ---------------------------------------------

@pytest.mark.parametrize(("capability", "arch_list", "verdict"), [
    ("8.6", ["sm_86"], None),  # the device's own minor
    ("8.6", ["sm_80"], None),  # a lower minor of its major runs natively
    ("8.6", ["sm_87"], "ARCH_NOT_IN_BUILD"),  # a higher minor does not
    ("9.0", ["sm_86"], "ARCH_NOT_IN_BUILD"),  # nor another major
    ("10.0", ["sm_100"], None),  # two-digit majors
    ("10.0", ["sm_90"], "ARCH_NOT_IN_BUILD"),
    ("8.6", ["sm_90", "compute_86"], "ARCH_PTX_ONLY"),  # PTX up to the device's own
    ("8.6", ["sm_90", "compute_87"], "ARCH_NOT_IN_BUILD"),
    ("9.0", ["compute_80"], "ARCH_PTX_ONLY"),  # PTX of a lower major is compiled up
    ("8.6", ["compute_90"], "ARCH_NOT_IN_BUILD"),
])
def test_which_architectures_run_on_a_device(capability: str, arch_list: list[str],
                                             verdict: str | None) -> None:
    found = ids(report(**{"pytorch.devices.0.capability": capability,
                          "pytorch.arch_list": arch_list}))
    arch = [finding for finding in found if finding.startswith("ARCH_")]
    assert arch == ([verdict] if verdict else [])


@pytest.mark.parametrize(("toolkit", "fires"), [("12.1", False), ("12.9", False),
                                                ("11.8", True), ("13.0", True)])
def test_the_toolkit_is_compared_on_its_cuda_major(toolkit: str, fires: bool) -> None:
    found = report(system={"cuda_toolkit": {"status": "ok", "version": toolkit,
                                            "found_via": "nvcc on PATH"}})
    assert ("CUDA_TOOLKIT_MISMATCH" in ids(found)) is fires


# -- the interpreter and the application --------------------------------------------------------

@pytest.mark.parametrize(("count", "fires"), [(1, False), (2, True)])
def test_two_torch_distributions_are_a_duplicate_install(count: int, fires: bool) -> None:
    found = report(**{"pytorch.distributions_on_path": count})
    assert ("TORCH_DUPLICATE_INSTALL" in ids(found)) is fires


@pytest.mark.parametrize(("frames", "fires"), [(0, False), (1, True)])
def test_one_tracemalloc_frame_is_tracing(frames: int, fires: bool) -> None:
    assert ("TRACEMALLOC_ON" in ids(report(**{"runtime.tracemalloc_frames": frames}))) is fires


# -- distributed ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("devices", "fires"), [(0, False), (1, True)])
def test_one_rdma_device_under_a_memlock_limit(devices: int, fires: bool) -> None:
    found = distributed(rdma_devices=devices, memlock_limit_bytes=65536)
    assert ("MEMLOCK_LOW" in ids(found)) is fires


@pytest.mark.parametrize(("limit", "shown"), [(MIB - 1024, "1023 KiB"), (MIB, "1 MiB")])
def test_a_memlock_limit_is_shown_in_kib_below_one_mib(limit: int, shown: str) -> None:
    found = memlock_low(distributed(rdma_devices=1, memlock_limit_bytes=limit))
    assert found is not None
    assert f"locked-memory limit (ulimit -l) {shown}, not unlimited" in found.evidence


def _rank(rank: int, device: str = "cuda:0") -> dict[str, Any]:
    return {"rank": rank, "node": 0, "device": device, "visibility_set": False}


def test_two_ranks_not_one_rank_twice_share_a_gpu() -> None:
    assert shared_devices([_rank(0), _rank(1, "cuda:1")]) == []
    assert shared_devices([_rank(0), _rank(0)]) == []  # one rank reported twice
    assert shared_devices([_rank(0), _rank(1)]) == [[0, 1]]


@pytest.mark.parametrize(("count", "peers"), [(1, None), (2, [])])
def test_copies_between_devices_need_two_devices(count: int, peers: list[Any] | None) -> None:
    checked = EveryDevice("cuda", devices={index: {"error": None} for index in range(count)})
    pytorch: dict[str, Any] = {"devices": [{"index": index} for index in range(count)]}
    checked.fill(pytorch, lambda error: error)
    assert pytorch["peers"] == peers


def _torchrun(**changes: str) -> dict[str, str]:
    return {"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0", "MASTER_ADDR": "node-a",
            "MASTER_PORT": "29500", **changes}


@pytest.mark.parametrize(("changes", "accepted"), [
    ({"WORLD_SIZE": "0"}, False), ({"WORLD_SIZE": "1"}, True),
    ({"WORLD_SIZE": "65536", "RANK": "65535"}, True), ({"WORLD_SIZE": "65537"}, False),
    ({"RANK": "1"}, True), ({"RANK": "2"}, False),  # a rank below the world size
    ({"MASTER_PORT": "0"}, False), ({"MASTER_PORT": "1"}, True),
    ({"MASTER_PORT": "65535"}, True), ({"MASTER_PORT": "65536"}, False),
])
def test_the_launchers_numbers_and_their_ranges(changes: dict[str, str], accepted: bool) -> None:
    environ = _torchrun(**changes)
    if accepted:
        launcher.detect(environ)
    else:
        with pytest.raises(launcher.LaunchError):
            launcher.detect(environ)


@pytest.mark.parametrize(("rocr", "hip", "conflicts"), [
    (["0", "1"], ["0", "1"], []),  # HIP's indices count among ROCr's two GPUs
    (["0", "2"], ["0", "2"], ["ROCR_VISIBLE_DEVICES"]),  # HIP's 2 is past ROCr's two
])
def test_hip_indices_past_rocrs_list_conflict(rocr: list[str], hip: list[str],
                                             conflicts: list[str]) -> None:
    selected = {"ROCR_VISIBLE_DEVICES": rocr, "HIP_VISIBLE_DEVICES": hip}
    assert visibility_conflicts(selected) == conflicts


# -- libraries: an extension's CUDA, a kernel's tolerance -----------------------------------------

@pytest.mark.parametrize(("theirs", "ours", "mismatch"), [
    ("12.8", "12.8", False), ("12.6", "12.8", True), ("12.9", "12.8", True),
    ("11.8", "12.8", True), ("12.8.1", "12.8", False), ("12.8", "12.8.1", False),
])
def test_an_extensions_cuda_is_compared_on_major_and_minor(theirs: str, ours: str,
                                                           mismatch: bool) -> None:
    assert library_facts.cuda_mismatch(extension(cuda=theirs), ours) is mismatch
    found = with_libraries([extension(version=f"0.23.0+cu{theirs.replace('.', '')[:3]}",
                                      cuda=theirs)], **{"pytorch.cuda_build": ours})
    assert ("EXTENSION_CUDA_MISMATCH" in ids(found)) is mismatch


@pytest.mark.parametrize(("version", "cuda"), [
    ("0.23.0+cu128", "12.8"), ("0.23.0+cu118", "11.8"), ("0.24.0+cu130", "13.0"),
    ("0.5.0+cu92", "9.2"),
    ("0.23.0+cpu", "cpu"), ("0.23.0", None)])
def test_a_local_label_names_its_cuda(version: str, cuda: str | None) -> None:
    assert worker_extensions.build_cuda(version) == cuda


@pytest.mark.parametrize(("value", "cuda"), [(12080, "12.8"), (11080, "11.8"), (1000, None),
                                             (1001, "1.0"), ("12.8.1", "12.8"), ("12", None)])
def test_a_modules_own_cuda_reads_as_major_and_minor(value: Any, cuda: str | None) -> None:
    assert worker_extensions.cuda_of(value) == cuda


@pytest.mark.parametrize(("name", "dtype", "limit", "above"), [
    ("sdpa", "float16", 1e-2, 1.01e-2), ("sdpa", "bfloat16", 5e-2, 5.01e-2),
    ("sdpa", "float32", 1e-4, 1.01e-4), ("matmul_float32", "float32", 0.0, 1e-12),
])
def test_a_kernel_passes_up_to_its_tolerance(name: str, dtype: str, limit: float,
                                             above: float) -> None:
    def status(difference: float) -> str:
        entry = {"name": name, "dtype": dtype, "status": "ran", "max_abs_error": difference}
        return str(library_facts.library_block(
            {"kernels": True}, {"kernels": [entry]}, {"version": "2.8.0"})["kernels"][0]["status"])

    assert status(limit) == "passed"
    assert status(above) == "failed"


@pytest.mark.parametrize(("version", "specifier", "met"), [
    ("2.0", ">2.0", False), ("2.0.1", ">2.0", True), ("2.0+cu128", ">2.0", False),
    ("2.0.post1", ">2.0", False),
    ("2.0", "<2.0", False), ("1.9.9", "<2.0", True), ("2.0rc1", "<2.0", False),
    ("2.0.dev0", "<2.0", False),
    ("2.13.9", ">=2.14", False), ("2.14.0", ">=2.14", True), ("2.14.0+cu128", ">=2.14", True),
    ("2.14.0+cu128", "<=2.14.0", True), ("2.14.0.post1", "<=2.14.0", False),
    ("2.5.0", "~=2.5.1", False), ("2.5.1", "~=2.5.1", True), ("2.5.9", "~=2.5.1", True),
    ("2.6.0", "~=2.5.1", False), ("2.9", "~=2.5", True), ("3.0", "~=2.5", False),
    ("2.14.1", "~=2", None),
    ("2.0", "==2.0.0.*", True), ("2.14.1rc1", "==2.14.*", True), ("2.15", "==2.14.*", False),
    ("2.0.0", "==2", True),
])
def test_a_torch_requirement_at_its_bounds(version: str, specifier: str, met: bool | None) -> None:
    assert satisfies(version, specifier) is met


# -- a trial: the out-of-memory phase, the contracts ----------------------------------------------

def test_an_oom_in_pass_1_is_a_later_pass_not_the_first() -> None:
    assert oom.phase_of(0, passes_started=True) == "first_pass"
    assert oom.phase_of(1, passes_started=True) == "later_pass"
    assert oom.phase_of(None, passes_started=False) == "loading"


def test_growth_is_each_pass_minus_the_one_before() -> None:
    assert oom.growth([100, 300, 600]) == [200, 300]
    assert oom.growth([100, None, 600]) == [None, None]
    assert oom.growth([100]) == []


def _run(trial: Trial, program: Callable[[Trial], None]) -> None:
    with trial:
        program(trial)


@pytest.mark.parametrize(("failing", "phase"), [(None, "loading"), (0, "first_pass"),
                                                (1, "later_pass"), (2, "later_pass")])
def test_a_trials_oom_phase_from_the_pass_it_failed_in(tmp_path: Path, failing: int | None,
                                                       phase: str) -> None:
    def program(trial: Trial) -> None:
        if failing is None:
            raise MemoryError
        for index in trial.passes(3):
            if index == failing:
                raise MemoryError

    trial = Trial(tmp_path / "runs")
    with pytest.raises(MemoryError):
        _run(trial, program)
    attempt = json.loads(Path(trial.folder or "", "attempt.json").read_text())
    assert attempt["oom"]["phase"] == phase
    assert attempt["oom"]["pass_index"] == failing
    assert len(attempt["oom"]["growth_per_pass_bytes"]) == max(0, (failing or 0) - 1)


@pytest.mark.parametrize(("ids_given", "repeated"), [(["a", "b"], []), (["a", "a"], ["a"])])
def test_an_id_given_twice_is_duplicated(ids_given: list[str], repeated: list[str]) -> None:
    found, _ = contracts.vectors(ids_given, [[1.0, 2.0], [3.0, 4.0]], 2, None)
    duplicated = [p for p in found["problems"] if p["kind"] == "duplicated_id"]
    assert [p["ids"] for p in duplicated] == ([repeated] if repeated else [])


@pytest.mark.parametrize(("size", "passed"), [(1, False), (2, True), (3, False)])
def test_a_vector_of_one_more_or_one_less_dimension_is_wrong(size: int, passed: bool) -> None:
    found, _ = contracts.vectors(["a"], [[0.5] * size], 2, None)
    assert found["passed"] is passed


@pytest.mark.parametrize(("content", "kind"), [(b"", "checkpoint_empty"),
                                               (b"x", "checkpoint_unloadable")])
def test_an_empty_checkpoint_is_not_saved(tmp_path: Path, content: bytes, kind: str) -> None:
    path = tmp_path / "model.pt"
    path.write_bytes(content)
    found, _ = contracts.training_step(1.0, {"w": 1}, {"w": 2}, path, None)
    assert [problem["kind"] for problem in found["problems"]] == [kind]


# -- comparisons: what counts as changed ---------------------------------------------------------

@pytest.mark.parametrize(("a", "b", "moved"), [
    (1000.0, 1199.9, False), (1000.0, 1200.0, True),  # 20 % of the smaller one
    (1200.0, 1000.0, True), (1199.9, 1000.0, False),
    (100.0, 199.9, False), (100.0, 200.0, True),  # and at least 100 ms
])
def test_a_timing_changed_by_20_percent_and_100_ms(a: float, b: float, moved: bool) -> None:
    def timed(ms: float) -> dict[str, Any]:
        return {"code": "GPU_CHECK_PASSED", "timings_ms": {"compute": ms}}

    changed = [c["field"] for c in compare(timed(a), timed(b)).changes]
    assert changed == (["timings_ms.compute"] if moved else [])
    attempt_a, attempt_b = ({"status": "passed", "timings": [
        {"stage": "work", "outside_passes_ms": ms}]} for ms in (a, b))
    changed = [c["field"] for c in attempt_compare.compare(attempt_a, attempt_b).changes]
    assert changed == (["timings_ms.work"] if moved else [])


def _peaked(peak: int) -> dict[str, Any]:
    return {"status": "passed", "stages": [
        {"name": "work", "memory": {"device": None, "rss_peak_bytes": peak}}]}


@pytest.mark.parametrize(("a", "b", "moved"), [
    (100 * MIB, 110 * MIB - 1, False), (100 * MIB, 110 * MIB, True),  # 10 % of the smaller one
    (110 * MIB, 100 * MIB, True),
    (5 * MIB, 6 * MIB - 1, False), (5 * MIB, 6 * MIB, True),  # and at least 1 MiB
])
def test_a_memory_peak_changed_by_10_percent_and_1_mib(a: int, b: int, moved: bool) -> None:
    changed = [c["field"] for c in attempt_compare.memory_changes(_peaked(a), _peaked(b))]
    assert changed == (["memory.work.peak_bytes"] if moved else [])


# -- a ramp: its outcome, its values ---------------------------------------------------------------

def _events(run: Path, *events: dict[str, Any]) -> None:
    folder = run / "attempt-1"
    folder.mkdir(parents=True)
    (folder / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))


OOM_EVENT = {"event": "stage_failed", "error": {
    "type": "OutOfMemoryError", "message": "CUDA out of memory. Tried to allocate 2.00 GiB"}}


@pytest.mark.parametrize(("completed", "phase", "pass_index"), [
    (None, "loading", None), (0, "first_pass", None), (1, "later_pass", 1),
    (2, "later_pass", 2)])
def test_the_event_logs_oom_phase_counts_completed_passes(tmp_path: Path, completed: int | None,
                                                         phase: str,
                                                         pass_index: int | None) -> None:
    events: list[dict[str, Any]] = [{"event": "attempt_started"}]
    for index in range(completed + 1 if completed is not None else 0):
        events.append({"event": "pass_started", "pass_index": index})
        if index < (completed or 0):
            events.append({"event": "pass_completed", "pass_index": index})
    _events(tmp_path, *events, OOM_EVENT)
    (facts,) = evidence.run_records(str(tmp_path))
    assert facts.oom == {"phase": phase, "pass_index": pass_index, "requested_bytes": 2 * GIB}


@pytest.mark.parametrize(("pass_index", "read"), [(-1, None), (0, 0), (1, 1)])
def test_an_attempts_pass_index_from_zero(tmp_path: Path, pass_index: int,
                                          read: int | None) -> None:
    (tmp_path / "attempt-1").mkdir()
    (tmp_path / "attempt-1" / "attempt.json").write_text(json.dumps({
        "format": "kernodeck-attempt", "status": "failed",
        "oom": {"phase": "first_pass", "pass_index": pass_index, "requested_bytes": 0}}))
    (facts,) = evidence.run_records(str(tmp_path))
    assert facts.oom == {"phase": "first_pass", "pass_index": read, "requested_bytes": 0}


@pytest.mark.parametrize(("extra", "read"), [(0, True), (1, False)])
def test_an_attempt_json_of_16_mib_is_read_one_byte_more_is_not(tmp_path: Path, extra: int,
                                                                read: bool) -> None:
    head = b'{"format": "kernodeck-attempt", "status": "passed", "pad": "'
    size = 16 * MIB + extra
    (tmp_path / "attempt-1").mkdir()
    (tmp_path / "attempt-1" / "attempt.json").write_bytes(
        head + b"x" * (size - len(head) - 2) + b'"}')
    found = evidence.run_records(str(tmp_path))  # too large: no attempt this tool reads
    assert len(found) == 1  # never skipped: unread, a record the judge never passes
    assert (found[0].source == "attempt.json" and not found[0].unreadable) is read
    assert found[0].unreadable is not read


def test_ramp_values_grow_to_stop_then_bisect_to_one() -> None:
    tried: list[int] = []

    def passes(limit: int) -> Any:
        def ask(value: int) -> bool:
            assert len(tried) < 50, tried
            tried.append(value)
            return value <= limit
        return ask

    explore(1, 64, 2.0, True, passes(20))
    assert tried == [1, 2, 4, 8, 16, 32, 64, 24, 20, 22, 21]  # 64: one above the failure
    tried.clear()
    explore(1, 5, 2.0, True, passes(100))  # stop itself is the last value, tried once
    assert tried == [1, 2, 4, 5]
    tried.clear()
    explore(3, 3, 2.0, True, passes(100))
    assert tried == [3]
    tried.clear()
    explore(1, 64, 2.0, True, passes(1))  # 1 passes, 2 fails: nothing between them
    assert tried == [1, 2, 4]
    tried.clear()
    explore(1, 64, 2.0, True, lambda value: tried.append(value) or value != 16)
    assert tried == [1, 2, 4, 8, 16, 32]  # 32 passes above 16's failure: no bisection
    tried.clear()
    # Inconclusive at 16 (None): no failure to hold to a value above it (32 never runs).
    explore(1, 64, 2.0, False, lambda value: None if tried.append(value) or value >= 16 else True)
    assert tried == [1, 2, 4, 8, 16]
    assert next_value(1, 1.1, 10) == 2  # at least one more
    assert next_value(9, 2.0, 10) == 10  # never past stop


def _ramp_args(**changes: Any) -> argparse.Namespace:
    values = {"axis": "batch", "start": 1, "stop": 8, "factor": 2.0, "attempt_timeout": 600.0,
              "value_from_env": True, "repeat": 1}
    return argparse.Namespace(**{**values, **changes})


@pytest.mark.parametrize(("changes", "accepted"), [
    ({"start": 1}, True), ({"start": 0}, False),
    ({"start": 8, "stop": 8}, True), ({"start": 8, "stop": 7}, False),
    ({"factor": 1.0}, False), ({"factor": 1.001}, True),
    ({"attempt_timeout": 0.0}, False), ({"attempt_timeout": 0.001}, True),
])
def test_a_ramps_range_factor_and_limit(changes: dict[str, Any], accepted: bool) -> None:
    validate = ramp_command._validate
    if accepted:
        validate(_ramp_args(**changes), ["python", "app.py"], ENGLISH)
    else:
        with pytest.raises(UsageError):
            validate(_ramp_args(**changes), ["python", "app.py"], ENGLISH)


# -- the OOM killer: a count that grew ------------------------------------------------------------

@pytest.mark.parametrize(("after", "evidence"), [(3, []), (4, ["cgroup_oom_kill"])])
def test_one_more_oom_kill_in_the_cgroup_is_evidence(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch, after: int,
                                                     evidence: list[str]) -> None:
    events = tmp_path / "memory.events"
    events.write_text("low 0\nhigh 0\nmax 2\noom 3\noom_kill 3\noom_group_kill 0\n")
    monkeypatch.setattr(oom_killer, "cgroups_of", lambda pid="self": [str(tmp_path)])
    monkeypatch.setattr(oom_killer, "kernel_log_names", lambda pid: False)
    watch = oom_killer.OomWatch()
    events.write_text(f"low 0\nhigh 0\nmax 2\noom 4\noom_kill {after}\noom_group_kill 0\n")
    assert watch.evidence(os.getpid()) == evidence

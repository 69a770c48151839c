"""Findings: each rule on fact fixtures (fires on its signal, stays quiet without it)."""

from __future__ import annotations

import copy
import re

import pytest

from accelerator_fixtures import ACCELERATOR_FIRES
from conftest import ROOT
from distributed_fixtures import DISTRIBUTED_FIRES
from findings_helpers import BASE, ids, import_failed, report, unavailable
from kernodeck_diagnostic.i18n.en import MESSAGES
from kernodeck_diagnostic.report.codes import VERDICTS, Verdict
from kernodeck_diagnostic.report.findings import LAYERS, RULES, derive
from library_fixtures import LIBRARY_FIRES
from node_fixtures import NODE_FIRES

# One case per rule: the report that must give the finding.
FIRES = {
    "CPU_ONLY_BUILD": report(**{
        "code": "GPU_BACKEND_ABSENT", "stage": "backend", "pytorch.backend": "cpu",
        "pytorch.cuda_build": None, "pytorch.version": "2.13.0+cpu"}),
    "NVIDIA_DRIVER_MISSING": unavailable(
        "Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and "
        "installed a driver", **{"runtime.device_nodes.nvidiactl": False,
                                 "runtime.device_nodes.proc_driver_nvidia": False}),
    "BUILD_FOR_OTHER_VENDOR": unavailable(
        "Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and "
        "installed a driver", **{"runtime.device_nodes.nvidiactl": False,
                                 "runtime.device_nodes.nvidia_uvm": False,
                                 "runtime.device_nodes.proc_driver_nvidia": False,
                                 "runtime.device_nodes.kfd": "ok"}),
    "DRIVER_TOO_OLD": unavailable(
        "The NVIDIA driver on your system is too old (found version 12020). Please update your "
        "GPU driver"),
    "ARCH_NOT_IN_BUILD": report(**{"pytorch.devices.0.capability": "12.0",
                                   "pytorch.devices.0.name": "NVIDIA GeForce RTX 5090",
                                   "pytorch.arch_list": ["sm_50", "sm_80", "sm_90"]}),
    "ARCH_PTX_ONLY": report(**{"pytorch.devices.0.capability": "12.0",
                               "pytorch.arch_list": ["sm_80", "sm_90", "compute_90"]}),
    "DEVICES_HIDDEN": unavailable("No CUDA GPUs are available",
                                  **{"runtime.visibility.CUDA_VISIBLE_DEVICES": "hides_all"}),
    "FABRIC_MANAGER_NOT_READY": unavailable(
        "CUDA driver initialization failed: Error 802: system not yet initialized"),
    "DRIVER_LIBRARY_MISMATCH": unavailable(
        "Error 803: system has unsupported display driver / cuda driver combination"),
    "FORWARD_COMPAT_UNSUPPORTED": unavailable(
        "Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before "
        "calling NumCudaDevices() that might have already set an error? Error 804: forward "
        "compatibility was attempted on non supported HW"),
    "CUDA_UNKNOWN_ERROR": unavailable(
        "CUDA unknown error - this may be due to an incorrectly set up environment, e.g. changing "
        "env variable CUDA_VISIBLE_DEVICES after program start. Error 999: unknown error"),
    "MIG_SLICE": report(**{"pytorch.devices.0.name": "NVIDIA H200 MIG 1g.18gb"}),
    "NUMPY_MISSING": report(**{"pytorch.numpy_present": False, "pytorch.numpy_version": None,
                               "warnings": [{"stage": "import", "category": "UserWarning",
                                             "message": "Failed to initialize NumPy: No module "
                                                        "named 'numpy' (Triggered internally)"}]}),
    "NUMPY_ABI_MISMATCH": report(**{"warnings": [{
        "stage": "import", "category": "UserWarning",
        "message": "Failed to initialize NumPy: _ARRAY_API not found (Triggered internally)"}]}),
    "CALLER_TORCH_DIFFERS": report(**{"runtime.caller": {
        "kernel": True, "torch_imported": True, "torch_version": "2.12.0+cpu",
        "torch_origin": "site-packages", "torch_same": True}}),
    "TORCH_SHADOWED": report(**{
        "code": "TORCH_IMPORT_FAILED", "stage": "import", "pytorch.imported": False,
        "pytorch.version": None, "pytorch.backend": None, "pytorch.origin": "working-folder",
        "pytorch.module_kind": "file",
        "error": {"stage": "import", "kind": "import_failed", "type": None,
                  "message": "'import torch' would load torch.py (origin: working-folder), not "
                             "an installed PyTorch package: it was not imported"}}),
    "TORCH_PARTIAL_INSTALL": report(**{
        "code": "TORCH_MISSING", "stage": "import", "pytorch.imported": False,
        "pytorch.distribution_version": "2.13.0+cpu",
        "error": {"stage": "import", "kind": "import_failed", "type": "ModuleNotFoundError",
                  "message": "No module named 'torch'"}}),
    "TORCH_FOR_OTHER_PYTHON": report(**{
        "code": "TORCH_IMPORT_FAILED", "stage": "import", "pytorch.imported": False,
        "pytorch.distribution_version": "2.13.0+cpu",
        "pytorch.extension_tags": ["cpython-312-x86_64-linux-gnu"],
        "pytorch.interpreter_tag": "cpython-311-x86_64-linux-gnu",
        "error": {"stage": "import", "kind": "import_failed", "type": "ImportError",
                  "message": "Failed to load PyTorch C extensions: It appears that PyTorch has "
                             "loaded the `torch/_C` folder of the PyTorch repository"}}),
    "TORCH_HIDDEN_BY_SETTING": report(**{
        "code": "TORCH_MISSING", "stage": "import", "pytorch.imported": False,
        "pytorch.hidden_by": "PYTHONNOUSERSITE",
        "error": {"stage": "import", "kind": "import_failed", "type": "ModuleNotFoundError",
                  "message": "No module named 'torch'"}}),
    "TORCH_BACKEND_PLUGIN_FAILED": report(**{
        "code": "TORCH_IMPORT_FAILED", "stage": "import", "pytorch.imported": False,
        "pytorch.backend_plugin": {"name": "kd_vendor", "distribution": "kd-vendor-plugin",
                                   "cause": "OSError: libkd_vendor_runtime.so.3: cannot open "
                                            "shared object file: No such file or directory"},
        "error": {"stage": "import", "kind": "import_failed", "type": "RuntimeError",
                  "message": "Failed to load the backend extension: kd_vendor. You can disable "
                             "extension auto-loading with TORCH_DEVICE_BACKEND_AUTOLOAD=0."}}),
    "TORCH_LOGS_INVALID": report(**{
        "code": "TORCH_IMPORT_FAILED", "stage": "import", "pytorch.imported": False,
        "error": {"stage": "import", "kind": "import_failed", "type": "ValueError",
                  "message": "Invalid log settings: <redacted>, must be a comma separated list "
                             "of fully qualified module names, registered log names or "
                             "registered artifact names."}}),
    "TORCH_ON_NOEXEC_MOUNT": report(**{
        "code": "TORCH_IMPORT_FAILED", "stage": "import", "pytorch.imported": False,
        "pytorch.noexec_mount": True,
        "error": {"stage": "import", "kind": "import_failed", "type": "OSError",
                  "message": "<path>/libtorch_global_deps.so: failed to map segment from "
                             "shared object"}}),
    "TORCH_FILES_UNREADABLE": report(**{
        "code": "TORCH_IMPORT_FAILED", "stage": "import", "pytorch.imported": False,
        "pytorch.unreadable_file": "torch/functional.py",
        "error": {"stage": "import", "kind": "import_failed", "type": "PermissionError",
                  "message": "[Errno 13] Permission denied: '<path>/functional.py'"}}),
    "TORCH_PATH_NOT_UTF8": report(**{
        "code": "TORCH_IMPORT_FAILED", "stage": "import", "pytorch.imported": False,
        "pytorch.path_not_utf8": True,
        "error": {"stage": "import", "kind": "import_failed", "type": "UnicodeEncodeError",
                  "message": "'utf-8' codec can't encode character '\\udcff' in position 21: "
                             "surrogates not allowed"}}),
    "TORCH_ORPHAN_METADATA": report(**{"pytorch.distributions_on_path": 2,
                                       "pytorch.distribution_version": "2.13.0+cpu",
                                       "pytorch.version": "2.13.0+cpu",
                                       "pytorch.orphan_metadata": ["torch-2.12.0.dist-info"]}),
    "PYTHONHOME_SET": report(**{
        "code": "WORKER_FAILED", "stage": "interpreter", "pytorch.imported": False,
        "runtime.python_home_set": True,
        "error": {"stage": "interpreter", "kind": "worker_failed", "type": None,
                  "message": "the worker exited with code 1 during interpreter, without a final "
                             "result; its last line on stderr: ModuleNotFoundError: No module "
                             "named 'encodings'"}}),
    "WORKING_FOLDER_MISSING": report(**{
        "code": "WORKER_FAILED", "stage": "import", "pytorch.imported": False,
        "runtime.working_folder_missing": True,
        "error": {"stage": "import", "kind": "worker_failed", "type": None,
                  "message": "the worker exited with code 2 during import, without a final "
                             "result; its last line on stderr: Intel oneMKL FATAL ERROR: Cannot "
                             "load <home>/libtorch_cpu.so."}}),
    "LOCAL_MODULE_SHADOWS": report(**{"runtime.local_modules": [
        {"name": "typing", "file": "typing.py", "folder": "working-folder",
         "hides": "standard-library"}]}),
    "TORCH_DUPLICATE_INSTALL": report(**{"pytorch.distributions_on_path": 2,
                                         "pytorch.distribution_version": "2.9.1"}),
    "SHARED_LIBRARY_MISSING": import_failed(
        "ImportError", "libcudnn.so.9: cannot open shared object file: No such file or directory"),
    "UNDEFINED_SYMBOL": import_failed(
        "ImportError", "<path>/libtorch_cuda.so: undefined symbol: ncclCommRegister"),
    "WINDOWS_DLL_LOAD_FAILED": import_failed(
        "OSError", '[WinError 126] The specified module could not be found. Error loading '
                   '"<path>\\c10.dll" or one of its dependencies.'),
    "ROCM_KFD_ACCESS": unavailable("No HIP GPUs are available", **{
        "pytorch.backend": "rocm", "pytorch.cuda_build": None, "pytorch.hip_build": "6.4.43482",
        "runtime.device_nodes.kfd": "no_access"}),
    "ROCM_GFX_UNSUPPORTED": report(**{
        "code": "RUNTIME_ERROR", "pytorch.backend": "rocm", "pytorch.cuda_build": None,
        "pytorch.hip_build": "6.4.43482", "pytorch.arch_list": ["gfx90a", "gfx942"],
        "pytorch.devices.0.gcn_arch": "gfx1036:xnack-",
        "error": {"stage": "compute", "kind": "runtime_error", "type": "RuntimeError",
                  "message": "HIP error: hipErrorNoBinaryForGpu: Unable to find code object"}}),
    "SLOW_FIRST_CALL": report(**{"execution.duration_ms": 21000.0}),
    "VISIBLE_DEVICE_UNMATCHED": unavailable("no CUDA-capable device is detected") | {
        "node": {"visibility_unmatched": {"CUDA_VISIBLE_DEVICES": 1}, "proc_gpus": 1}},
    "SILENT_DATA_CORRUPTION": report(**{
        "code": "CHECK_FAILED", "execution.product_verified": False,
        "execution.wrong_values": {"product": "wrong"},
        "error": {"stage": "compute", "kind": "check_failed", "type": None,
                  "message": "wrong product"}}),
    "LIBRARY_PATH_OVERRIDE": import_failed(
        "ImportError", "<path>/libstdc++.so.6: version `GLIBCXX_3.4.21' not found (required by "
                       "<path>/libtorch_python.so)") | {"runtime": {
        **BASE["runtime"], "library_override": {"variable": "LD_LIBRARY_PATH",
                                                "library": "libstdc++.so.6",
                                                "conda_env_lib": False}}},
    "HOST_MEMORY_EXHAUSTED": report(**{
        "code": "WORKER_FAILED", "stage": "import", "pytorch.imported": False,
        "error": {"stage": "import", "kind": "worker_failed", "type": None,
                  "message": "the worker was killed by signal SIGABRT during import, without a "
                             "final result; its last line on stderr: terminate called after "
                             "throwing an instance of 'std::bad_alloc' what(): std::bad_alloc"}}),
    "TOOL_ISOLATED_INSTALL": report(**{
        "code": "TORCH_MISSING", "stage": "import", "pytorch.imported": False,
        "runtime.tool_environment": "pipx",
        "error": {"stage": "import", "kind": "import_failed", "type": "ModuleNotFoundError",
                  "message": "No module named 'torch'"}}),
    "CUDA_TOOLKIT_MISMATCH": report(**{"system": {
        "cuda_toolkit": {"status": "ok", "version": "12.4", "found_via": "PATH",
                         "cuda_home_set": False, "cuda_path_set": False},
        "configuration": {}}, "pytorch.cuda_build": "13.0"}),
    "CUDA_LIBRARY_SHADOWED": report(**{"pytorch.cuda_libraries": [
        {"name": "nvidia-cudnn-cu12", "version": "9.10.2.21", "loaded": "other",
         "loaded_file": "libcudnn.so.9.1.0", "loaded_from": "LD_LIBRARY_PATH",
         "library_path_copies": ["libcudnn.so.9", "libcudnn.so.9.1.0"]}]}),
    "CUDA_LAUNCH_BLOCKING_ON": report(**{"system": {
        "configuration": {"CUDA_LAUNCH_BLOCKING": "1"}}}),
    "HSA_OVERRIDE_ON_SUPPORTED_GPU": report(**{
        "pytorch.backend": "rocm", "pytorch.cuda_build": None, "pytorch.hip_build": "6.4.43482",
        "pytorch.arch_list": ["gfx90a", "gfx942", "gfx1100"],
        "pytorch.devices.0.gcn_arch": "gfx1030",
        "system": {"kfd_gfx_targets": ["gfx1100"],
                   "configuration": {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}}}),
    "WARNING_AS_ERROR": report(**{
        "code": "TORCH_IMPORT_FAILED", "stage": "import", "pytorch.imported": False,
        "runtime.warnings_as_errors": True,
        "error": {"stage": "import", "kind": "import_failed", "type": "UserWarning",
                  "message": "Failed to initialize NumPy: No module named 'numpy' (Triggered "
                             "internally at <path>/tensor_numpy.cpp:84.)"}}),
    "PYTHONPATH_MODULE_BREAKS_IMPORT": report(**{
        "code": "TORCH_IMPORT_FAILED", "stage": "import", "pytorch.imported": False,
        "pytorch.import_error_origin": {"module": "typing_extensions", "place": "pythonpath"},
        "error": {"stage": "import", "kind": "import_failed", "type": "ImportError",
                  "message": "cannot import name 'deprecated' from 'typing_extensions' "
                             "(<path>/typing_extensions.py)"}}),
    "TIME_LIMIT_REACHED": report(**{
        "code": "TIMEOUT", "stage": "import", "timings_ms": {"worker_total": 30100.0,
                                                             "worker_cpu": 29000.0}}),
    "HUNG_IN": report(**{
        "code": "TIMEOUT", "stage": "import", "pytorch.imported": False,
        "execution.device": None,
        "error": {"stage": "import", "kind": "timeout", "type": None,
                  "message": "no result within 30 s; the worker was stopped during import, hung "
                             "in kd_hang_plugin (kd_hang_plugin/__init__.py:6)",
                  "hung_in": {"package": "kd_hang_plugin", "file": "kd_hang_plugin/__init__.py",
                              "line": 6, "torch_backend": True,
                              "distribution": "kd-hang-plugin"}}}),
    "CPU_LIMITED": report(**{"system": {"logical_cpus": 64, "usable_cpus": 64,
                                        "cpu_quota": 0.05}}),
    "TRACEMALLOC_ON": report(**{
        "code": "TIMEOUT", "stage": "import", "pytorch.imported": False,
        "runtime.tracemalloc_frames": 5, "execution.device": None,
        "error": {"stage": "import", "kind": "timeout", "type": None,
                  "message": "the check did not finish within 30 s"}}),
    # The node's and the GPUs' health findings (facts/node.py, the host check's fields):
    # their cases are in node_fixtures, next to the node's healthy ground.
    **NODE_FIRES,
    **DISTRIBUTED_FIRES,  # --distributed
    **ACCELERATOR_FIRES,
    **LIBRARY_FIRES,  # --extensions, --kernels
}


def test_every_rule_has_a_case_that_fires_it() -> None:
    fired: set[str] = set()
    for rule in RULES:
        names = {name for name, case in FIRES.items()
                 if (finding := rule(case)) is not None and finding.id == name}
        assert names, f"no case fires {rule.__name__}"
        fired |= names
    assert fired == set(FIRES)


@pytest.mark.parametrize("finding_id", sorted(FIRES))
def test_rule_fires_on_its_signal(finding_id: str) -> None:
    found = {f["id"]: f for f in derive(FIRES[finding_id])}
    assert finding_id in found
    finding = found[finding_id]
    assert finding["evidence"], "a finding states what it stands on"
    assert finding["next_action"]
    assert finding["severity"] in ("error", "warning", "info")


def _local(name: str, folder: str) -> dict[str, str]:
    return {"name": name, "file": f"{name}.py", "folder": folder, "hides": "standard-library"}


@pytest.mark.parametrize(("entries", "said", "advice"), [
    # The command line's program starts in the working folder: another folder helps.
    ([_local("typing", "working-folder")], "the working folder", "from another folder"),
    # The API's calling script: Python searches its folder wherever it runs from.
    ([_local("typing", "script-folder")], "the folder of the script", "a folder of its own"),
    # Both, in an API call from a script run where both are searched.
    ([_local("typing", "working-folder"), _local("re", "script-folder")],
     "the working folder and the calling script's own", "Rename them"),
], ids=["working-folder", "script-folder", "both"])
def test_local_module_shadows_names_the_folder_it_blames(
        entries: list[dict[str, str]], said: str, advice: str) -> None:
    """The sentence says which folder holds the modules (issue 43: the zipapp's folder was blamed
    as "the folder your program starts from"), and advice that helps for that folder."""
    found = {f["id"]: f for f in derive(report(**{"runtime.local_modules": entries}))}
    shadows = found["LOCAL_MODULE_SHADOWS"]
    assert said in shadows["summary"], shadows["summary"]
    assert advice in shadows["next_action"], shadows["next_action"]


def test_a_healthy_report_has_no_finding() -> None:
    assert derive(BASE) == []


def test_cpu_mode_never_complains_about_the_gpu() -> None:
    cpu = report(**{"request.device": "cpu", "pytorch.backend": "cpu", "pytorch.cuda_build": None,
                    "code": "CPU_CHECK_PASSED", "runtime.visibility.CUDA_VISIBLE_DEVICES": "empty",
                    "runtime.device_nodes.nvidiactl": False,
                    "runtime.device_nodes.proc_driver_nvidia": False})
    assert ids(cpu) == []


def test_native_code_for_an_older_minor_of_the_same_major_runs() -> None:
    # sm_86 runs code built for sm_80 (same major, lower minor): nothing to say.
    assert ids(report(**{"pytorch.devices.0.capability": "8.6",
                         "pytorch.arch_list": ["sm_80", "sm_90"]})) == []
    # sm_80 does not run sm_86 code: a newer minor is not compatible downwards.
    assert "ARCH_NOT_IN_BUILD" in ids(report(**{"pytorch.devices.0.capability": "8.0",
                                                "pytorch.arch_list": ["sm_86", "sm_90"]}))


def test_driver_too_old_from_nvidia_smi() -> None:
    old = report(**{"code": "GPU_UNAVAILABLE", "pytorch.cuda_build": "13.0",
                    "host": {"tool": "nvidia-smi", "status": "ok", "driver_version": "570.124.06",
                             "gpus": [], "mig_devices": 0}})
    found = {f["id"]: f for f in derive(old)}
    assert "580.65.06" in " ".join(found["DRIVER_TOO_OLD"]["evidence"])
    new = copy.deepcopy(old)
    new["host"]["driver_version"] = "580.82.07"
    assert "DRIVER_TOO_OLD" not in ids(new)


def test_driver_version_from_the_init_message_names_the_cuda_it_supports() -> None:
    found = {f["id"]: f for f in derive(FIRES["DRIVER_TOO_OLD"])}
    assert "CUDA up to 12.2 (found version 12020)" in " ".join(found["DRIVER_TOO_OLD"]["evidence"])


def test_mig_from_nvidia_smi_listing() -> None:
    sliced = report(**{"host": {"tool": "nvidia-smi", "status": "ok", "driver_version": "570",
                                "gpus": [], "mig_devices": 7}})
    assert ids(sliced) == ["MIG_SLICE"]


def test_shared_library_finding_names_the_library() -> None:
    found = {f["id"]: f for f in derive(FIRES["SHARED_LIBRARY_MISSING"])}
    assert "libcudnn.so.9" in found["SHARED_LIBRARY_MISSING"]["summary"]
    assert "nvidia-*" in found["SHARED_LIBRARY_MISSING"]["next_action"]


def test_windows_dll_finding_names_the_dll() -> None:
    found = {f["id"]: f for f in derive(FIRES["WINDOWS_DLL_LOAD_FAILED"])}
    assert "c10.dll" in found["WINDOWS_DLL_LOAD_FAILED"]["summary"]


def test_errors_come_before_warnings() -> None:
    both = copy.deepcopy(FIRES["SLOW_FIRST_CALL"])
    both["pytorch"].update(origin="working-folder", module_kind="package")
    assert ids(both) == ["TORCH_SHADOWED", "SLOW_FIRST_CALL"]


def test_findings_doc_lists_every_finding() -> None:
    doc = (ROOT / "docs" / "findings.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| `([A-Z_0-9]+)` \|", doc, re.MULTILINE))
    assert documented == set(FIRES)


def test_every_id_a_rule_declares_has_its_sentences_and_its_row() -> None:
    """A rule's layer registers it with the ids it can give: each has its sentences in the
    catalog (plain or per variant) and its row in docs/findings.md, whether a case fires it or
    not; and on every case, a rule gives only the ids and variants it declares."""
    doc = (ROOT / "docs" / "findings.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| `([A-Z_0-9]+)` \|", doc, re.MULTILINE))
    registered = [entry for layer in LAYERS for entry in layer.registered]
    assert [entry.rule for entry in sorted(registered, key=lambda e: e.rank)] == list(RULES)
    for entry in registered:
        assert entry.ids, f"{entry.rule.__name__} declares no id"
        for finding_id in entry.ids:
            summaries = [key for key in MESSAGES
                         if key.startswith(f"finding.{finding_id}.") and key.endswith(".summary")]
            assert summaries, f"no sentence for {finding_id}"
            for key in summaries:
                assert key.removesuffix(".summary") + ".next_action" in MESSAGES, key
            assert finding_id in documented, f"{finding_id} has no row in docs/findings.md"
        for case in FIRES.values():
            finding = entry.rule(case)
            assert finding is None or finding.id in entry.ids, (entry.rule.__name__, finding)
            assert finding is None or finding.variant in entry.variants, (entry.rule.__name__,
                                                                            finding)


def test_the_verdicts_the_rules_compare_with_are_the_tables() -> None:
    named = {name: value for name, value in vars(Verdict).items() if name.isupper()}
    assert named == {name: name for name in VERDICTS}


def test_a_callers_own_torch_failing_to_import_now_is_not_another_torch() -> None:
    """CALLER_TORCH_DIFFERS says the caller holds another torch than the check found: the
    caller's very file failing to import now (a library path a cell changed, say) is no other
    torch; another file, or none found, is."""
    caller = {"kernel": True, "torch_imported": True, "torch_version": "2.13.0+cpu",
              "torch_origin": "site-packages"}
    failed = {"code": "TORCH_IMPORT_FAILED", "stage": "import", "pytorch.imported": False,
              "pytorch.version": None}
    assert "CALLER_TORCH_DIFFERS" not in ids(report(**failed, **{
        "runtime.caller": {**caller, "torch_same": True}}))
    for same in (False, None):
        assert "CALLER_TORCH_DIFFERS" in ids(report(**failed, **{
            "runtime.caller": {**caller, "torch_same": same}}))
    # The worker hung or crashed before comparing: the front's own knowledge says nothing.
    assert "CALLER_TORCH_DIFFERS" not in ids(report(**{
        "code": "TIMEOUT", "stage": "import", "pytorch.imported": False,
        "runtime.caller": {**caller, "torch_origin": None, "torch_same": None}}))


# A CUDA error the backend said (torch's warning at its initialisation), on a GPU check that
# failed with each verdict the CUDA errors' rules read (``core.gpu_failed``): each row changes ONE
# thing of a failed GPU check, so that dropping any verdict from that set fails its row (issue
# 47: a check that timed out lost the finding, and no test saw it).
_SAID_999 = [{"stage": "device", "category": "UserWarning",
              "message": "CUDA initialization: CUDA unknown error - this may be due to an "
                         "incorrectly set up environment. Error 999: unknown error"}]
CUDA_ERROR_KEPT = [
    ("gpu unavailable", "GPU_UNAVAILABLE", "device", "gpu_unavailable", "gpu", True),
    ("device index invalid", "DEVICE_INDEX_INVALID", "device", "device_index_invalid", "gpu",
     True),
    ("runtime error", "RUNTIME_ERROR", "compute", "runtime_error", "gpu", True),
    ("worker failed", "WORKER_FAILED", "device", "worker_failed", "gpu", True),
    ("timed out", "TIMEOUT", "device", "timeout", "gpu", True),
    ("timed out, a CPU check", "TIMEOUT", "device", "timeout", "cpu", False),
    ("passed", "GPU_CHECK_PASSED", "compute", None, "gpu", False),
]


@pytest.mark.parametrize(("code", "stage", "kind", "device", "kept"),
                         [row[1:] for row in CUDA_ERROR_KEPT],
                         ids=[row[0] for row in CUDA_ERROR_KEPT])
def test_a_cuda_error_is_named_whatever_verdict_ended_the_gpu_check(
        code: str, stage: str, kind: str | None, device: str, kept: bool) -> None:
    error = None if kind is None else {"stage": stage, "kind": kind, "type": None,
                                       "message": "the check stopped"}
    found = report(**{"code": code, "stage": stage, "error": error, "warnings": _SAID_999,
                      "request.device": device})
    assert ("CUDA_UNKNOWN_ERROR" in ids(found)) is kept


def test_the_backends_own_message_alone_names_the_cause() -> None:
    """The backend's initialisation message is read even when the error says only that no GPU
    was available (its ONE cause: the helper ``unavailable`` plants the message in both)."""
    said = "CUDA unknown error - this may be due to an incorrectly set up environment. " \
           "Error 999: unknown error"
    alone = unavailable(said, **{"error.message": "torch.cuda.is_available() is False"})
    (finding,) = [f for f in derive(alone) if f["id"] == "CUDA_UNKNOWN_ERROR"]
    assert finding["evidence"] == [f"CUDA error 999: {said}"]


# What a module of the user's hides, each row ONE kind (the evidence says which: the slow
# tests/test_verdicts_shadowing.py reads it from real runs, these from the facts alone).
@pytest.mark.parametrize(("name", "hides", "said"), [
    ("typing", "standard-library", "typing.py in the working-folder hides the standard "
                                   "library's typing"),
    ("torch", "torch", "torch.py in the working-folder hides the installed torch"),
    ("numpy", "torch-dependency", "numpy.py in the working-folder hides numpy, which torch "
                                  "needs"),
])
def test_a_local_module_is_said_to_hide_what_it_hides(name: str, hides: str, said: str) -> None:
    entry = {"name": name, "file": f"{name}.py", "folder": "working-folder", "hides": hides}
    found = {f["id"]: f for f in derive(report(**{"runtime.local_modules": [entry]}))}
    assert found["LOCAL_MODULE_SHADOWS"]["evidence"] == [said]


# The caller's torch and the check's, each row ONE difference: the evidence names both sides.
_CALLER = {"kernel": True, "torch_imported": True, "torch_version": "2.12.0+cpu",
           "torch_origin": "site-packages", "torch_same": True}


@pytest.mark.parametrize(("changes", "said"), [
    ({}, ("this kernel imported torch 2.12.0+cpu before the check (origin: site-packages)",
          "the check imported torch 2.8.0+cu128 (origin: site-packages)")),
    ({"runtime.caller.kernel": False},
     ("this program imported torch 2.12.0+cpu before the check (origin: site-packages)",
      "the check imported torch 2.8.0+cu128 (origin: site-packages)")),
    ({"code": "TORCH_IMPORT_FAILED", "stage": "import", "pytorch.imported": False,
      "pytorch.version": None, "runtime.caller.torch_same": False},
     ("this kernel imported torch 2.12.0+cpu before the check (origin: site-packages)",
      "the check could not import torch from the same import path")),
], ids=["kernel", "program", "check's import failed"])
def test_a_callers_other_torch_is_named_on_both_sides(changes: dict[str, object],
                                                     said: tuple[str, str]) -> None:
    found = {f["id"]: f for f in derive(report(**{"runtime.caller": dict(_CALLER), **changes}))}
    assert found["CALLER_TORCH_DIFFERS"]["evidence"] == list(said)


@pytest.mark.parametrize(("module", "named"), [("typing_extensions", "typing_extensions"),
                                               (None, "a module")])
def test_the_module_on_pythonpath_that_broke_the_import_is_named(module: str | None,
                                                                named: str) -> None:
    case = copy.deepcopy(FIRES["PYTHONPATH_MODULE_BREAKS_IMPORT"])
    case["pytorch"]["import_error_origin"]["module"] = module
    found = {f["id"]: f for f in derive(case)}["PYTHONPATH_MODULE_BREAKS_IMPORT"]
    assert found["evidence"][0] == (f"the import failed in {named}, found in a folder on "
                                    "PYTHONPATH (searched before this environment's own "
                                    "packages)")
    assert named in found["summary"] + found["next_action"]


# The tool's own isolated install, each kind its row: the severity and what the evidence says
# (the slow tests/test_verdicts_libraries.py builds each install for real).
@pytest.mark.parametrize(("kind", "severity", "said"), [
    ("pipx", "warning", "the check ran in the tool's own pipx environment"),
    ("uv_tool", "warning", "the check ran in the tool's own uv tool environment"),
    ("venv", "info", "the check ran in the virtual environment holding the kernodeck-diagnostic "
                     "command"),
])
def test_the_tools_own_install_is_said_by_kind(kind: str, severity: str, said: str) -> None:
    case = copy.deepcopy(FIRES["TOOL_ISOLATED_INSTALL"])
    case["runtime"]["tool_environment"] = kind
    found = {f["id"]: f for f in derive(case)}["TOOL_ISOLATED_INSTALL"]
    assert (found["severity"], found["evidence"]) == (
        severity, [said, "torch is not installed in it"])


@pytest.mark.parametrize("device", ["cuda:0", None], ids=["the kernel's", "the check's"])
def test_an_unsupported_dtype_names_the_device_it_ran_on(device: str | None) -> None:
    """A kernel's entry may leave its device unsaid (the schema does not require it): then the
    check's own device is the one named."""
    case = copy.deepcopy(LIBRARY_FIRES["DTYPE_UNSUPPORTED"])
    (entry,) = [k for k in case["libraries"]["kernels"] if k["name"] == "matmul_bfloat16"]
    entry.pop("device", None)
    if device is not None:
        entry["device"] = device
    found = {f["id"]: f for f in derive(case)}["DTYPE_UNSUPPORTED"]
    assert found["evidence"][0].startswith("matmul_bfloat16 on cuda:0: "), found["evidence"]
    assert "Tesla T4" in found["summary"]


@pytest.mark.parametrize(("kfd", "said"), [("absent", "/dev/kfd is absent"),
                                           ("no_access", "/dev/kfd is not readable and "
                                                         "writable by this user")])
def test_rocm_says_how_dev_kfd_fails(kfd: str, said: str) -> None:
    """On an AMD machine (no NVIDIA node: else an absent /dev/kfd is BUILD_FOR_OTHER_VENDOR's)."""
    case = copy.deepcopy(FIRES["ROCM_KFD_ACCESS"])
    case["runtime"]["device_nodes"].update(kfd=kfd, nvidiactl=False, nvidia_uvm=False,
                                           proc_driver_nvidia=False)
    assert {f["id"]: f for f in derive(case)}["ROCM_KFD_ACCESS"]["evidence"] == [said]


def _hung(package: str, file: str, *, torch_backend: bool = False,
          distribution: str | None = None) -> dict[str, object]:
    return report(**{
        "code": "TIMEOUT", "stage": "import", "pytorch.imported": False,
        "execution.device": None,
        "error": {"stage": "import", "kind": "timeout", "type": None, "message": "",
                  "hung_in": {"package": package, "file": file, "line": 3,
                              "torch_backend": torch_backend, "distribution": distribution}}})


@pytest.mark.parametrize(("case", "summary", "advice"), [
    (_hung("kd_hang_plugin", "kd_hang_plugin/__init__.py", torch_backend=True,
           distribution="kd-hang-plugin"),
     "device plugin kd_hang_plugin (kd_hang_plugin/__init__.py:3)",
     "TORCH_DEVICE_BACKEND_AUTOLOAD=0 python app.py"),
    # No metadata named its distribution: the package's name is what pip is given.
    (_hung("kd_hang_plugin", "kd_hang_plugin/__init__.py", torch_backend=True),
     "device plugin kd_hang_plugin", "python -m pip uninstall kd_hang_plugin"),
    # The user's own module, not a plugin: where it waits, no plugin switch.
    (_hung("typing_extensions", "typing_extensions.py"),
     "hung in typing_extensions (typing_extensions.py:3) at the import stage",
     "See what typing_extensions waits for at typing_extensions.py:3"),
], ids=["plugin", "plugin-no-metadata", "users-module"])
def test_hung_in_names_where_and_the_way_round_it(case: dict[str, object], summary: str,
                                                   advice: str) -> None:
    found = {f["id"]: f for f in derive(case)}["HUNG_IN"]
    assert summary in found["summary"], found["summary"]
    assert advice in found["next_action"], found["next_action"]
    plugin = "TORCH_DEVICE_BACKEND_AUTOLOAD" in found["next_action"]
    assert plugin == ("plugin" in summary)


def test_a_hang_in_torch_itself_or_a_check_that_did_not_time_out_is_no_hung_in() -> None:
    """torch's own hang (a driver call) is the stage's and the device's findings' to explain."""
    assert "HUNG_IN" not in ids(_hung("torch", "torch/cuda/__init__.py"))
    passed = _hung("kd_hang_plugin", "kd_hang_plugin/__init__.py", torch_backend=True)
    passed["code"] = "TORCH_IMPORT_FAILED"
    assert "HUNG_IN" not in ids(passed)


def test_the_time_limit_is_judged_by_the_workers_last_seconds_when_they_are_known() -> None:
    """A worker that hangs after a long import used much CPU time in all and none at the end:
    waiting, not working (no TIME_LIMIT_REACHED); one busy to the end was working."""
    base = {"code": "TIMEOUT", "stage": "import"}
    hung = report(**base, timings_ms={"worker_total": 8000.0, "worker_cpu": 4000.0,
                                       "worker_last": 2000.0, "worker_cpu_last": 20.0})
    busy = report(**base, timings_ms={"worker_total": 8000.0, "worker_cpu": 4000.0,
                                       "worker_last": 2000.0, "worker_cpu_last": 1900.0})
    assert "TIME_LIMIT_REACHED" not in ids(hung)
    found = {finding["id"]: finding for finding in derive(busy)}["TIME_LIMIT_REACHED"]
    assert "1.9 s of CPU time in its last 2.0 s" in found["evidence"][0]

"""The advice of the findings that name a command: pinned to the build installed (issue 23), and
the cases the rules tell apart (a build hiding the installed one, a half-finished uninstall, a
removed working folder). The same cases built for real: test_verdicts_advice_applied.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from findings_helpers import import_failed, report
from kernodeck_diagnostic.report.findings import derive
from kernodeck_diagnostic.report.findings.core import reinstall_command
from kernodeck_diagnostic.report.writer import OutputError, preflight


@pytest.mark.parametrize(("version", "command"), [
    ("2.13.0+cpu", "python -m pip install --force-reinstall torch==2.13.0+cpu --index-url "
                   "https://download.pytorch.org/whl/cpu"),
    ("2.8.0+cu128", "python -m pip install --force-reinstall torch==2.8.0+cu128 --index-url "
                    "https://download.pytorch.org/whl/cu128"),
    ("2.7.1+rocm6.3", "python -m pip install --force-reinstall torch==2.7.1+rocm6.3 "
                      "--index-url https://download.pytorch.org/whl/rocm6.3"),
    ("2.14.1", "python -m pip install --force-reinstall torch==2.14.1"),
    ("2.15.0a0+git1234", "python -m pip install --force-reinstall torch==2.15.0a0+git1234"),
    (None, "python -m pip install --force-reinstall torch"),
    ("not a version; rm -rf", "python -m pip install --force-reinstall torch"),
])
def test_a_reinstall_is_pinned_to_the_build_installed(version: str | None, command: str) -> None:
    assert reinstall_command(version) == command


def by_id(data: dict) -> dict:
    return {finding["id"]: finding for finding in derive(data)}


def test_every_reinstall_advice_names_the_installed_version() -> None:
    shared = import_failed("ImportError", "libgomp.so.1: cannot open shared object file: No "
                                          "such file or directory")
    shared["pytorch"]["distribution_version"] = "2.13.0+cpu"
    advice = by_id(shared)["SHARED_LIBRARY_MISSING"]["next_action"]
    assert "torch==2.13.0+cpu --index-url https://download.pytorch.org/whl/cpu" in advice
    cuda = import_failed("ImportError", "libcudnn.so.9: cannot open shared object file: No "
                                        "such file or directory")
    cuda["pytorch"]["distribution_version"] = "2.8.0+cu128"
    assert "torch==2.8.0+cu128 --index-url https://download.pytorch.org/whl/cu128" in \
        by_id(cuda)["SHARED_LIBRARY_MISSING"]["next_action"]
    dll = import_failed("OSError", "[WinError 126] The specified module could not be found. "
                                   'Error loading "<path>\\c10.dll"')
    dll["pytorch"]["distribution_version"] = "2.8.0+cu128"
    assert "torch==2.8.0+cu128" in by_id(dll)["WINDOWS_DLL_LOAD_FAILED"]["next_action"]


def test_a_build_on_pythonpath_over_the_installed_one_is_named_not_a_cpu_build() -> None:
    data = report(**{"code": "GPU_BACKEND_ABSENT", "stage": "backend", "pytorch.backend": "cpu",
                     "pytorch.cuda_build": None, "pytorch.version": "2.13.0+cpu",
                     "pytorch.distribution_version": "2.14.1", "pytorch.origin": "pythonpath",
                     "pytorch.module_kind": "unverified"})
    found = by_id(data)
    assert {"CPU_ONLY_BUILD", "TORCH_DUPLICATE_INSTALL"}.isdisjoint(found)
    shadowed = found["TORCH_SHADOWED"]
    assert "2.13.0+cpu" in shadowed["summary"]
    assert "2.14.1" in shadowed["summary"]
    assert "unset PYTHONPATH" in shadowed["next_action"]
    # The same build elsewhere (the installed one, or an unknown distribution): nothing said.
    data["pytorch"]["distribution_version"] = None
    assert "TORCH_SHADOWED" not in by_id(data)


def test_a_half_finished_uninstall_advises_a_forced_reinstall_of_its_version() -> None:
    gone = report(**{"code": "TORCH_MISSING", "stage": "import", "pytorch.imported": False,
                     "pytorch.distribution_version": "2.13.0+cpu",
                     "error": {"stage": "import", "kind": "import_failed",
                               "type": "ModuleNotFoundError",
                               "message": "No module named 'torch'"}})
    partial = by_id(gone)["TORCH_PARTIAL_INSTALL"]
    assert partial["severity"] == "error"
    assert ("python -m pip install --force-reinstall --no-deps torch==2.13.0+cpu --index-url "
            "https://download.pytorch.org/whl/cpu") in partial["next_action"]
    left = report(**{"code": "CPU_CHECK_PASSED", "pytorch.version": "2.13.0+cpu",
                     "pytorch.distribution_version": None, "pytorch.origin": "site-packages",
                     "pytorch.module_kind": "unverified"})
    partial = by_id(left)["TORCH_PARTIAL_INSTALL"]
    assert partial["severity"] == "warning"
    assert "torch==2.13.0+cpu" in partial["next_action"]


def test_a_removed_working_folder_is_not_a_missing_library() -> None:
    data = report(**{"code": "WORKER_FAILED", "stage": "import", "pytorch.imported": False,
                     "runtime.working_folder_missing": True,
                     "error": {"stage": "import", "kind": "worker_failed", "type": None,
                               "message": "its last line on stderr: Intel oneMKL FATAL ERROR: "
                                          "Cannot load <home>/libtorch_cpu.so."}})
    found = by_id(data)
    assert "SHARED_LIBRARY_MISSING" not in found
    assert "cd ~" in found["WORKING_FOLDER_MISSING"]["next_action"]


def test_a_relative_output_in_a_removed_folder_is_refused_with_its_reason(
        tmp_path: Path) -> None:
    gone = tmp_path / "removed"
    gone.mkdir()
    script = ("import os, sys\n"
              "from kernodeck_diagnostic.report.writer import OutputError, preflight\n"
              f"os.chdir({str(gone)!r}); os.rmdir({str(gone)!r})\n"
              "try:\n    preflight('report.json')\nexcept OutputError as exc:\n"
              "    print(exc.key)\n")
    ran = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=60, check=False,
                         env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1] / "src")})
    assert ran.stdout.strip() == "output.reason.no_working_folder", ran.stderr
    with pytest.raises(OutputError):
        preflight(str(tmp_path / "missing" / "report.json"))


def test_a_build_of_another_variant_keeps_the_installed_version() -> None:
    """CPU_ONLY_BUILD and BUILD_FOR_OTHER_VENDOR swap the variant on purpose, never the version:
    torch==2.13.0 from the GPU index, not the newest torch."""
    cpu = report(**{"code": "GPU_BACKEND_ABSENT", "stage": "backend", "pytorch.backend": "cpu",
                    "pytorch.cuda_build": None, "pytorch.version": "2.13.0+cpu",
                    "pytorch.distribution_version": "2.13.0+cpu"})
    advice = by_id(cpu)["CPU_ONLY_BUILD"]["next_action"]
    assert "python -m pip install --force-reinstall torch==2.13.0 --index-url " \
        "https://download.pytorch.org/whl/cu128" in advice
    amd = report(**{"code": "GPU_UNAVAILABLE", "pytorch.gpu_available": False,
                    "pytorch.version": "2.8.0+cu128", "pytorch.distribution_version": "2.8.0+cu128",
                    "runtime.device_nodes.nvidiactl": False,
                    "runtime.device_nodes.nvidia_uvm": False,
                    "runtime.device_nodes.proc_driver_nvidia": False,
                    "runtime.device_nodes.kfd": "ok"})
    assert "torch==2.8.0 --index-url https://download.pytorch.org/whl/rocm" in \
        by_id(amd)["BUILD_FOR_OTHER_VENDOR"]["next_action"]


def test_advice_made_from_a_kernel_is_in_the_notebooks_words() -> None:
    """A report made by check() in a kernel: pip through the kernel's own interpreter (an
    uninstall that asks no question a cell cannot answer), the flags as check()'s arguments."""
    from kernodeck_diagnostic.report.kernel_form import in_notebook_words

    assert in_notebook_words("Run python -m pip uninstall torch twice, then python -m pip "
                             "install torch==2.13.0.") == (
        "Run %pip uninstall -y torch twice, then %pip install torch==2.13.0.")
    assert in_notebook_words("Run the check again with --timeout 120.") == (
        "Run the check again with timeout=120.")
    assert in_notebook_words("Check another GPU with --device-index 1, or --device cpu; "
                             "--show-paths prints the file.") == (
        'Check another GPU with device_index=1, or device="cpu"; report.local_paths prints '
        "the file.")
    assert in_notebook_words("python -m pip uninstall -y torch") == "%pip uninstall -y torch"


# -- issue 44: the advice follows where torch or its libraries came from --------------------------

CUDNN_MISSING = "libcudnn.so.9: cannot open shared object file: No such file or directory"
TORCH_LIBRARY = {"variable": "LD_LIBRARY_PATH", "library": "libc10.so", "conda_env_lib": False,
                 "torch_library": True}
OTHER_TAG = {"pytorch.extension_tags": ["cpython-311-x86_64-linux-gnu"],
             "pytorch.interpreter_tag": "cpython-312-x86_64-linux-gnu",
             "pytorch.distribution_version": "2.13.0+cpu"}


@pytest.mark.parametrize(("origin", "says", "never"), [
    # one cause planted per row
    ("site-packages", "--force-reinstall", "PYTHONPATH"),
    ("pythonpath", "unset PYTHONPATH", "--force-reinstall"),
])
def test_torch_for_another_python_found_on_pythonpath_is_taken_off_it(
        origin: str, says: str, never: str) -> None:
    failed = report(**{"code": "TORCH_IMPORT_FAILED", "stage": "import",
                       "pytorch.imported": False, "pytorch.origin": origin, **OTHER_TAG,
                       "error": {"stage": "import", "kind": "import_failed", "type": "ImportError",
                                 "message": "Failed to load PyTorch C extensions"}})
    found = by_id(failed)["TORCH_FOR_OTHER_PYTHON"]
    assert says in found["next_action"]
    assert never not in found["next_action"]


@pytest.mark.parametrize(("origin", "says", "never"), [
    ("working-folder", "cd ..", "PYTHONPATH"),
    ("pythonpath", "unset PYTHONPATH", "cd .."),
])
def test_a_source_checkout_on_pythonpath_is_taken_off_it(origin: str, says: str,
                                                         never: str) -> None:
    found = by_id(report(**{"code": "TORCH_IMPORT_FAILED", "stage": "import",
                            "pytorch.imported": False, "pytorch.origin": origin,
                            "pytorch.module_kind": "source-checkout"}))["TORCH_SHADOWED"]
    assert says in found["next_action"]
    assert never not in found["next_action"]


@pytest.mark.parametrize(("override", "expected"), [
    (None, {"SHARED_LIBRARY_MISSING"}),  # nothing on the path: the plain advice
    (TORCH_LIBRARY, {"LIBRARY_PATH_OVERRIDE"}),  # a libtorch there: the cause named
])
def test_a_libtorch_on_the_library_path_replaces_the_reinstall_advice(
        override: dict | None, expected: set) -> None:
    failed = import_failed("ImportError", CUDNN_MISSING)
    failed["runtime"]["library_override"] = override
    found = by_id(failed)
    libraries = {"SHARED_LIBRARY_MISSING", "UNDEFINED_SYMBOL", "LIBRARY_PATH_OVERRIDE"}
    assert libraries & set(found) == expected
    if override is not None:
        assert "env -u LD_LIBRARY_PATH" in found["LIBRARY_PATH_OVERRIDE"]["next_action"]
        assert "reinstall" not in found["LIBRARY_PATH_OVERRIDE"]["next_action"].replace(
            "Reinstalling torch would not help", "")


@pytest.mark.parametrize(("elsewhere", "severity"), [
    ([], None),
    ([{"name": "libc10.so", "loaded_from": "LD_LIBRARY_PATH"}], "warning"),
    ([{"name": "libtorch_cpu.so", "loaded_from": "elsewhere"}], "warning"),
])
def test_torchs_own_library_loaded_from_elsewhere_warns(elsewhere: list,
                                                        severity: str | None) -> None:
    found = by_id(report(**{"pytorch.torch_libraries_elsewhere": elsewhere}))
    assert (found.get("LIBRARY_PATH_OVERRIDE") or {}).get("severity") == severity


# Each setting, and the folder it hides (the summary and the evidence say which: -S hides
# site-packages, the others the user's).
@pytest.mark.parametrize(("setting", "says", "folder"), [
    (None, None, None),
    ("-S", "without -S", "this interpreter's site-packages"),
    ("PYTHONNOUSERSITE", "unset PYTHONNOUSERSITE", "your user site-packages"),
    ("-s", "without -s", "your user site-packages"),
    ("-I", "without -I", "your user site-packages"),
])
def test_a_setting_that_hides_torch_is_named(setting: str | None, says: str | None,
                                             folder: str | None) -> None:
    missing = report(**{"code": "TORCH_MISSING", "stage": "import", "pytorch.imported": False,
                        "pytorch.hidden_by": setting,
                        "error": {"stage": "import", "kind": "import_failed",
                                  "type": "ModuleNotFoundError",
                                  "message": "No module named 'torch'"}})
    found = by_id(missing).get("TORCH_HIDDEN_BY_SETTING")
    assert (found is None) == (says is None)
    if found is not None:
        assert says in found["next_action"]
        assert found["summary"].startswith(f"torch is installed in {folder}"), found["summary"]
        where = "site-packages" if setting == "-S" else "user site-packages"
        assert found["evidence"] == [f"torch is installed in this interpreter's {where}",
                                     f"{setting} keeps that folder off the import path"]


@pytest.mark.parametrize(("count", "orphans", "expected"), [
    (2, None, {"TORCH_DUPLICATE_INSTALL"}),  # two real installs
    (2, ["torch-2.12.0.dist-info"], {"TORCH_ORPHAN_METADATA"}),  # one, and an orphan
    (3, ["torch-2.12.0.dist-info"], {"TORCH_DUPLICATE_INSTALL", "TORCH_ORPHAN_METADATA"}),
])
def test_an_orphan_dist_info_is_not_a_second_install(count: int, orphans: list | None,
                                                     expected: set) -> None:
    found = by_id(report(**{"pytorch.distributions_on_path": count,
                            "pytorch.orphan_metadata": orphans}))
    assert {"TORCH_DUPLICATE_INSTALL", "TORCH_ORPHAN_METADATA"} & set(found) == expected
    if orphans:
        assert f"/{orphans[0]}\"" in found["TORCH_ORPHAN_METADATA"]["next_action"]


@pytest.mark.parametrize(("files", "failed", "expected"), [
    ((), True, None),  # nothing of torch's there
    (("libc10.so", "libtorch_python.so"), False, None),  # the import worked (or never ran)
    (("libc10.so", "libtorch_python.so"), True, "libc10.so"),
    (("libc10.so.2.1",), True, "libc10.so.2.1"),
    (("libcudnn.so.9",), True, None),  # a CUDA library is not torch's own
])
def test_torchs_own_library_on_ld_library_path_is_read_by_the_front(
        tmp_path: Path, files: tuple[str, ...], failed: bool, expected: str | None) -> None:
    from kernodeck_diagnostic.facts.environment import library_override

    for name in files:
        (tmp_path / name).write_bytes(b"\x7fELF")
    found = library_override([CUDNN_MISSING], {"LD_LIBRARY_PATH": str(tmp_path)}, "linux",
                             torch_failed=failed)
    assert (found or {}).get("library") == expected
    if expected is not None:
        assert found == {"variable": "LD_LIBRARY_PATH", "library": expected,
                         "conda_env_lib": False, "torch_library": True}
        assert str(tmp_path) not in str(found)


@pytest.mark.parametrize(("kind", "key", "fires"), [
    ("installed", "error.torch_incomplete", True),  # the install's own files gave no version
    ("unverified", "error.torch_incomplete", False),  # another copy: not the install's damage
    ("installed", None, False),  # another import failure
])
def test_an_installed_torch_without_a_version_is_a_damaged_install(
        kind: str, key: str | None, fires: bool) -> None:
    failed = report(**{"code": "TORCH_IMPORT_FAILED", "stage": "import",
                       "pytorch.imported": False, "pytorch.module_kind": kind,
                       "pytorch.distribution_version": "2.13.0+cpu",
                       "error": {"stage": "import", "kind": "import_failed", "type": None,
                                 "message": "not a PyTorch build", "message_key": key,
                                 "message_values": {"missing": "torch.__version__"}}})
    found = by_id(failed).get("TORCH_PARTIAL_INSTALL")
    assert (found is not None) == fires
    if found is not None:
        assert "torch==2.13.0+cpu --index-url https://download.pytorch.org/whl/cpu" in \
            found["next_action"]


# torch imported with no distribution installed, each row ONE place it came from: only the
# environment's own packages are a half-removed install (a folder on the path is no install).
@pytest.mark.parametrize(("origin", "partial"), [
    ("site-packages", True), ("user-site", True), ("pythonpath", False)])
def test_metadata_gone_only_for_torch_in_the_environments_own_packages(origin: str,
                                                                       partial: bool) -> None:
    left = report(**{"code": "CPU_CHECK_PASSED", "pytorch.version": "2.13.0+cpu",
                     "pytorch.distribution_version": None, "pytorch.origin": origin,
                     "pytorch.module_kind": "unverified"})
    assert ("TORCH_PARTIAL_INSTALL" in by_id(left)) is partial

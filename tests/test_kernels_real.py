"""--kernels with the real CPU build of torch: every kernel verified against its known answer,
and torch.compile without a C++ compiler (COMPILER_MISSING) while the others are still
verified."""

from __future__ import annotations

import getpass
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import Result, clean_env
from kernodeck_diagnostic.worker.protocol import KERNELS
from library_fixtures import checked

pytestmark = pytest.mark.slow
# torch.compile's first run loads Inductor and compiles C++: tens of seconds on a busy machine.
TIMEOUT = "120"


def check(python: Path, pyz: Path, tmp_path: Path, env: dict[str, str] | None = None,
          ) -> Result:
    return checked(python, pyz, tmp_path, ["--device", "cpu", "--kernels", "--timeout",
                                           TIMEOUT], env)


def by_name(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {kernel["name"]: kernel for kernel in report["libraries"]["kernels"]}


def test_every_kernel_is_verified_on_the_cpu(cpu_torch_python: Path, pyz: Path,
                                             tmp_path: Path) -> None:
    result = check(cpu_torch_python, pyz, tmp_path)
    report = result.report
    assert report is not None
    assert (result.returncode, report["code"]) == (0, "CPU_CHECK_PASSED"), result.stdout
    found = by_name(report)
    assert list(found) == list(KERNELS)
    assert {name for name, k in found.items() if k["status"] == "passed"} == \
        set(KERNELS) - {"transfer"}
    assert found["transfer"]["status"] == "skipped"  # no device to copy to in CPU mode
    for name in ("matmul_float32", "matmul_tf32", "matmul_float16", "matmul_bfloat16",
                 "conv2d", "compile"):
        assert found[name]["max_abs_error"] == 0, name  # exact, as the inputs are chosen
        assert found[name]["device"] == "cpu"
    assert [found[n]["dtype"] for n in KERNELS[:4]] == ["float32", "tf32", "float16",
                                                         "bfloat16"]
    assert 0 <= found["sdpa"]["max_abs_error"] <= 1e-4
    assert found["compile"]["compile_ms"] > found["compile"]["run_ms"]
    assert report["timings_ms"]["kernels"] > 0
    assert "compile cpu | ok" in result.stdout


def test_without_a_compiler_torch_compile_is_named_and_the_rest_verified(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    # A PATH without any compiler, and CXX pointing nowhere: Inductor has none to use.
    env = clean_env({"PATH": str(empty), "CXX": str(tmp_path / "no" / "c++")})
    result = check(cpu_torch_python, pyz, tmp_path, env=env)
    report = result.report
    assert report is not None
    assert (result.returncode, report["code"], report["stage"]) == (9, "RUNTIME_ERROR",
                                                                     "kernels")
    assert report["error"]["step"] == "compile"
    found = by_name(report)
    assert found["compile"]["status"] == "failed"
    assert "No working C++ compiler" in found["compile"]["error"]["message"]
    assert {name for name, k in found.items() if k["status"] == "passed"} == \
        set(KERNELS) - {"transfer", "compile"}
    finding = next(f for f in report["findings"] if f["id"] == "COMPILER_MISSING")
    assert finding["severity"] == "error"
    assert "C++ compiler" in finding["summary"]
    assert "g++" in finding["next_action"]
    assert str(tmp_path) not in result.stdout + str(report)  # CXX's value is never shown


def test_a_cxx_that_names_no_program_is_the_cause_and_unsetting_it_as_printed_ends_it(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    """g++ is on PATH, CXX names a compiler this machine does not have (a module system's, a
    conda environment's from another node): Inductor runs that one and no other. Was
    COMPILER_MISSING with "install one (sudo apt install g++...)", g++ installed already and
    CXX's value hidden. Now the cause is CXX, and unsetting it, as printed, ends it."""
    if shutil.which("g++") is None:
        pytest.skip("no g++ on this machine's PATH")
    missing = tmp_path / "opt" / "gcc-13" / "bin" / "g++"
    result = check(cpu_torch_python, pyz, tmp_path, env=clean_env({"CXX": str(missing)}))
    report = result.report
    assert report is not None
    assert (result.returncode, report["code"]) == (9, "RUNTIME_ERROR"), result.stdout
    assert report["node"]["compilers_not_found"] == ["CXX"]
    finding = next(f for f in report["findings"] if f["id"] == "COMPILER_MISSING")
    assert finding["summary"].startswith("torch.compile could not run the C++ compiler CXX names")
    assert "CXX is set (its value not shown)" in " ".join(finding["evidence"])
    assert "env -u CXX" in finding["next_action"]
    assert str(tmp_path) not in result.stdout + str(report)  # CXX's value is never shown
    (tmp_path / "after").mkdir()
    after = check(cpu_torch_python, pyz, tmp_path / "after", env=clean_env())  # env -u CXX
    assert after.report is not None
    assert (after.returncode, after.report["code"]) == (0, "CPU_CHECK_PASSED"), after.stdout
    assert after.report["node"]["compilers_not_found"] == []


def test_a_compile_cache_folder_that_is_a_file_is_said_and_removing_it_as_printed_ends_it(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    """torchinductor_<user> in the temporary folder is a file: every torch.compile of the user's
    programs fails there (FileExistsError), while the check compiles in a folder of its own and
    passes. Was CPU_CHECK_PASSED, "compile cpu | ok", nothing said. The check still passes (the
    folder's state is read, not tried), and says so; the file removed as printed, nothing."""
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    user = re.sub(r'[\\/:*?"<>|]', "_", getpass.getuser())  # as Inductor names the folder
    cache = temporary / f"torchinductor_{user}"
    cache.write_text("left here\n", encoding="utf-8")
    env = clean_env({"TMPDIR": str(temporary)})
    plain = subprocess.run([str(cpu_torch_python), "-c", "import torch; torch.compile("
                            "lambda x: x * 2)(torch.ones(2))"], env=env, capture_output=True,
                           text=True, timeout=300, check=False)
    assert plain.returncode != 0, plain.stderr  # the user's own compile fails there
    result = check(cpu_torch_python, pyz, tmp_path, env=env)
    report = result.report
    assert report is not None
    assert (result.returncode, report["code"]) == (0, "CPU_CHECK_PASSED"), result.stdout
    assert by_name(report)["compile"]["default_cache"] == "not_a_folder"
    finding = next(f for f in report["findings"] if f["id"] == "COMPILE_CACHE_UNUSABLE")
    assert finding["severity"] == "warning"
    assert "is a file" in finding["summary"]
    assert 'rm "${TMPDIR:-/tmp}/torchinductor_$(whoami)"' in finding["next_action"]
    assert str(tmp_path) not in result.stdout + str(report)
    assert cache.read_text(encoding="utf-8") == "left here\n"  # never touched
    subprocess.run(["sh", "-c", 'rm "${TMPDIR:-/tmp}/torchinductor_$(whoami)"'], env=env,
                   check=True, timeout=30)
    (tmp_path / "after").mkdir()
    after = check(cpu_torch_python, pyz, tmp_path / "after", env=env)
    assert after.report is not None
    assert after.report["code"] == "CPU_CHECK_PASSED"
    assert "default_cache" not in by_name(after.report)["compile"]
    assert "COMPILE_CACHE_UNUSABLE" not in {f["id"] for f in after.report["findings"]}


def test_the_default_cache_folders_state_is_read_never_changed(tmp_path: Path) -> None:
    """``default_cache_problem``: a file, a link to a file or to nothing, a folder, a link to a
    folder, an absent one; as another user than root, a folder this user cannot write."""
    from kernodeck_diagnostic.worker.runtime import default_cache_problem

    (tmp_path / "file").write_text("x", encoding="utf-8")
    (tmp_path / "folder").mkdir()
    (tmp_path / "to-file").symlink_to(tmp_path / "file")
    (tmp_path / "to-folder").symlink_to(tmp_path / "folder")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    assert default_cache_problem(str(tmp_path / "file")) == "not_a_folder"
    assert default_cache_problem(str(tmp_path / "to-file")) == "not_a_folder"
    assert default_cache_problem(str(tmp_path / "dangling")) == "not_a_folder"
    assert default_cache_problem(str(tmp_path / "folder")) is None
    assert default_cache_problem(str(tmp_path / "to-folder")) is None
    assert default_cache_problem(str(tmp_path / "absent")) is None
    if os.geteuid() != 0:  # root may write any folder but a read-only mount's
        (tmp_path / "locked").mkdir(mode=0o500)
        assert default_cache_problem(str(tmp_path / "locked")) == "not_writable"
    assert (tmp_path / "file").read_text(encoding="utf-8") == "x"

"""Advice proven by applying it (issue 23): each broken environment built for real, the tool run
in it as a user of the single-file download would, and the advice applied exactly as printed.

- a torch without its dist-info (a copied site-packages) is a working torch: imported, passed;
- a CPU build in a folder on PYTHONPATH over the environment's CUDA build: the loaded and the
  hidden versions named, ``unset PYTHONPATH`` applied, the environment's own build then judged;
- a shell left in a removed folder: WORKING_FOLDER_MISSING, never SHARED_LIBRARY_MISSING nor an
  internal error; ``cd ~`` applied, the check passes;
- an interpreter that dies at start (a preloaded library aborts it): WORKER_FAILED at the
  interpreter stage naming the signal, not a usage error.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import Result, assert_valid_report, clean_env, run_tool

pytestmark = pytest.mark.slow


def site_packages(python: Path) -> Path:
    found = sorted(python.parent.parent.glob("lib/python3*/site-packages"))
    assert found, python
    return found[0]


def linked_copy(source: Path, target: Path) -> None:
    """``source`` copied as hard links (a copy of a site-packages, instantly), else symlinked."""
    try:
        shutil.copytree(source, target, copy_function=os.link, symlinks=True)
    except (OSError, shutil.Error):
        shutil.rmtree(target, ignore_errors=True)
        target.symlink_to(source, target_is_directory=source.is_dir())


def findings(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {finding["id"]: finding for finding in report["findings"]}


def checked(result: Result) -> dict[str, Any]:
    assert result.report is not None, result.stdout + result.stderr
    assert_valid_report(result.report)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.report["code"] != "INTERNAL_ERROR", result.report["error"]
    return result.report


def test_a_torch_without_its_dist_info_is_imported_and_passes(
        cpu_torch_python: Path, notorch_python: Path, pyz: Path, tmp_path: Path) -> None:
    """Was TORCH_IMPORT_FAILED + TORCH_SHADOWED "pip install -e ." (wheels ship torch/csrc, taken
    for a source checkout) while ``import torch`` worked in the same interpreter."""
    copied = tmp_path / "copied-site-packages"
    copied.mkdir()
    for entry in site_packages(cpu_torch_python).iterdir():
        if not re.match(r"torch-.*\.dist-info$", entry.name):
            linked_copy(entry, copied / entry.name)
    work = tmp_path / "work"
    work.mkdir()
    env = clean_env({"PYTHONPATH": str(copied)})
    works = subprocess.run([str(notorch_python), "-c", "import torch; x = torch.ones(2, 2); "
                            "print((x @ x).sum().item())"], capture_output=True, text=True,
                           env=env, cwd=work, timeout=300, check=False)
    assert works.stdout.strip() == "8.0", works.stderr  # a working torch, as the user sees it
    report = checked(run_tool(notorch_python, pyz, ["--device", "cpu", "--output",
                                                    str(tmp_path / "report.json")],
                              env=env, cwd=work))
    assert report["code"] == "CPU_CHECK_PASSED", (report["error"], report["findings"])
    assert report["pytorch"]["module_kind"] == "unverified"
    assert report["pytorch"]["origin"] == "pythonpath"
    assert "TORCH_SHADOWED" not in findings(report)


@pytest.mark.parametrize("with_metadata", [False, True], ids=["package", "whole_install"])
def test_a_cpu_build_on_pythonpath_hiding_the_cuda_build_says_so_and_unsetting_it_works(
        cpu_torch_python: Path, cuda_torch_python: Path, pyz: Path, tmp_path: Path,
        with_metadata: bool) -> None:
    """Was CPU_ONLY_BUILD "force-reinstall torch --index-url ...cu128": the venv has that build
    already, hidden under the folder on PYTHONPATH; with its dist-info too (a whole second
    install, issue 44), which pip would show first."""
    folder = tmp_path / "on-pythonpath"
    folder.mkdir()
    linked_copy(site_packages(cpu_torch_python) / "torch", folder / "torch")
    if with_metadata:
        for info in site_packages(cpu_torch_python).glob("torch-*.dist-info"):
            linked_copy(info, folder / info.name)
    work = tmp_path / "work"
    work.mkdir()
    env = clean_env({"PYTHONPATH": str(folder)})
    result = run_tool(cuda_torch_python, pyz, ["--output", str(tmp_path / "before.json")],
                      env=env, cwd=work)
    report = checked(result)
    assert report["code"] == "GPU_BACKEND_ABSENT", report["error"]
    assert report["pytorch"]["module_kind"] == "unverified"  # not the environment's own
    assert report["pytorch"]["distribution_version"].startswith("2.14.1")
    found = findings(report)
    assert {"CPU_ONLY_BUILD", "TORCH_DUPLICATE_INSTALL"}.isdisjoint(found), found
    shadowed = found["TORCH_SHADOWED"]
    assert shadowed["severity"] == "error"
    assert "2.13.0+cpu" in shadowed["summary"]
    assert "2.14.1" in shadowed["summary"]
    assert "PYTHONPATH" in shadowed["summary"]
    assert "--index-url" not in shadowed["next_action"]
    # The advice as printed: the variable to unset.
    unset = re.search(r"unset (\w+)", shadowed["next_action"])
    assert unset is not None, shadowed["next_action"]
    env.pop(unset.group(1))
    after = checked(run_tool(cuda_torch_python, pyz, ["--output", str(tmp_path / "after.json")],
                             env=env, cwd=work))
    # The environment's own CUDA build is judged now: the next layer (no driver on this machine).
    assert after["pytorch"]["version"].startswith("2.14.1")
    assert after["pytorch"]["backend"] == "cuda"
    assert after["code"] != "GPU_BACKEND_ABSENT"
    assert "TORCH_SHADOWED" not in findings(after)


def in_a_removed_folder(python: Path, pyz: Path, tmp_path: Path, *args: str,
                        env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The tool run from a shell whose working folder was removed under it."""
    gone = tmp_path / "removed"
    gone.mkdir()
    script = 'cd "$1" && rmdir "$1" && shift && exec "$@"'
    return subprocess.run(["sh", "-c", script, "sh", str(gone), str(python), str(pyz), *args],
                          capture_output=True, text=True, env=env, timeout=300, check=False)


def test_a_removed_working_folder_is_named_and_cd_home_fixes_it(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    """Was SHARED_LIBRARY_MISSING "reinstall torch" (Intel oneMKL cannot load libtorch_cpu.so,
    which is there), and an internal error for a relative --output."""
    home = tmp_path / "home"
    home.mkdir()
    env = clean_env({"HOME": str(home)})
    output = tmp_path / "report.json"
    ran = in_a_removed_folder(cpu_torch_python, pyz, tmp_path, "--device", "cpu", "--output",
                              str(output), env=env)
    assert output.is_file(), ran.stdout + ran.stderr
    result = Result(ran.returncode, ran.stdout, ran.stderr, 0.0)
    result.report = __import__("json").loads(output.read_text(encoding="utf-8"))
    report = checked(result)
    assert report["status"] == "failed"
    assert report["runtime"]["working_folder_missing"] is True
    found = findings(report)
    assert "SHARED_LIBRARY_MISSING" not in found, found
    missing = found["WORKING_FOLDER_MISSING"]
    assert missing["severity"] == "error"
    assert "reinstall" not in missing["next_action"].replace("nothing needs reinstalling", "")
    # A relative --output there: refused at once with its reason, never an internal error.
    relative = in_a_removed_folder(cpu_torch_python, pyz, tmp_path, "--device", "cpu",
                                   "--output", "report.json", env=env)
    assert relative.returncode == 12, relative.stdout + relative.stderr
    assert "working folder no longer exists" in relative.stderr
    assert "internal error" not in relative.stderr.lower()
    # The advice as printed: the folder to change to.
    cd = re.search(r"\bcd (\S+?)[,)]", missing["next_action"])
    assert cd is not None, missing["next_action"]
    after = tmp_path / "after.json"
    ran = subprocess.run(["sh", "-c", f'cd {cd.group(1)} && exec "$@"', "sh",
                          str(cpu_torch_python), str(pyz), "--device", "cpu", "--output",
                          str(after)], capture_output=True, text=True, env=env, timeout=300,
                         check=False)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert __import__("json").loads(after.read_text(encoding="utf-8"))["code"] == \
        "CPU_CHECK_PASSED"


def test_an_interpreter_that_dies_at_start_is_a_worker_failure_naming_the_signal(
        cpu_torch_python: Path, tmp_path: Path) -> None:
    """Was the usage error "not a Python interpreter": it is one, and it died (SIGABRT)."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler to build the library that aborts")
    source = tmp_path / "abort.c"
    source.write_text("#include <stdlib.h>\n"
                      "__attribute__((constructor)) static void die(void) { abort(); }\n",
                      encoding="utf-8")
    library = tmp_path / "libabort.so"
    subprocess.run([compiler, "-shared", "-fPIC", "-o", str(library), str(source)], check=True,
                   timeout=120, capture_output=True)
    wrapper = tmp_path / "python-wrapper"
    wrapper.write_text(f'#!/bin/sh\nLD_PRELOAD="{library}" exec "{cpu_torch_python}" "$@"\n',
                       encoding="utf-8")
    wrapper.chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    result = run_tool(sys.executable, ["-m", "kernodeck_diagnostic"],
                      ["--device", "cpu", "--python", str(wrapper), "--output",
                       str(tmp_path / "report.json")],
                      env=clean_env({"PYTHONPATH": str(Path(__file__).parents[1] / "src")}),
                      cwd=work)
    assert "not a Python interpreter" not in result.stderr
    report = checked(result)
    assert (report["code"], report["stage"]) == ("WORKER_FAILED", "interpreter")
    assert result.returncode == report["exit_code"]
    assert "SIGABRT" in report["error"]["message"]


# -- a half-finished uninstall, and the pinned reinstall applied ---------------------------------

def scratch_env(python: Path, tmp_path: Path) -> Path:
    """A copy of ``python``'s environment made of hard links (pip unlinks before it writes, so
    the original is never touched); its python."""
    folder = tmp_path / "scratch-env"
    shutil.copytree(python.parent.parent, folder, copy_function=os.link, symlinks=True)
    return folder / "bin" / python.name


def printed_command(next_action: str) -> list[str]:
    """The pip command the advice prints, as the words a shell would run (its sentence's last
    full stop is not part of it)."""
    found = re.search(r"python -m pip install [^\s].*?(?=\.?$)", next_action)
    assert found is not None, next_action
    return found.group(0).split()


def apply_pip(python: Path, next_action: str) -> None:
    words = printed_command(next_action)
    assert words[:1] == ["python"]
    # pip as the user's shell runs it; the machine's pip configuration is kept (its find-links
    # holds the wheel when the variant's index cannot be reached from here).
    ran = subprocess.run([str(python), *words[1:]], capture_output=True, text=True,
                         timeout=900, check=False,
                         env={k: v for k, v in os.environ.items()
                              if not k.startswith(("PYTEST_", "PYTHON"))})
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]


@pytest.mark.parametrize("removed", ["package", "metadata", "init_emptied"])
def test_a_half_finished_uninstall_is_named_and_its_pinned_reinstall_fixes_it(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path, removed: str) -> None:
    """Was TORCH_MISSING "install PyTorch into it" (pip: "Requirement already satisfied"), or,
    the metadata gone, nothing at all while pip does not list torch; torch/__init__.py emptied
    (issue 44): "not a PyTorch build", and no finding."""
    python = scratch_env(cpu_torch_python, tmp_path)
    packages = site_packages(python)
    if removed == "package":
        shutil.rmtree(packages / "torch")
    elif removed == "init_emptied":
        (packages / "torch" / "__init__.py").unlink()  # a hard link: the original is kept
        (packages / "torch" / "__init__.py").write_bytes(b"")
    else:
        for info in packages.glob("torch-*.dist-info"):
            shutil.rmtree(info)
    work = tmp_path / "work"
    work.mkdir()
    report = checked(run_tool(python, pyz, ["--device", "cpu", "--output",
                                            str(tmp_path / "before.json")], cwd=work))
    partial = findings(report)["TORCH_PARTIAL_INSTALL"]
    if removed == "package":
        assert report["code"] == "TORCH_MISSING"
        assert partial["severity"] == "error"
    elif removed == "init_emptied":
        assert report["code"] == "TORCH_IMPORT_FAILED"
        assert "damaged" in partial["summary"]
    else:
        assert report["code"] == "CPU_CHECK_PASSED"
        assert partial["severity"] == "warning"
    # Pinned: the very build, from its variant's index, never an upgrade nor a CUDA build.
    assert "torch==2.13.0+cpu --index-url https://download.pytorch.org/whl/cpu" in \
        partial["next_action"]
    apply_pip(python, partial["next_action"])
    after = checked(run_tool(python, pyz, ["--device", "cpu", "--output",
                                           str(tmp_path / "after.json")], cwd=work))
    assert after["code"] == "CPU_CHECK_PASSED", after["error"]
    assert after["pytorch"]["version"] == "2.13.0+cpu"
    assert "TORCH_PARTIAL_INSTALL" not in findings(after)


@pytest.mark.parametrize("case", ["other_tag", "no_extension"])
def test_a_torch_built_for_another_python_names_both_tags_and_a_reinstall_here_fixes_it(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path, case: str) -> None:
    """Was torch's own message only ("loaded the torch/_C folder of the PyTorch repository"),
    with no finding: its _C built for another Python (its ABI tag), or no _C at all."""
    python = scratch_env(cpu_torch_python, tmp_path)
    package = site_packages(python) / "torch"
    (extension,) = package.glob("_C.*.so")
    own = extension.name[len("_C."):-len(".so")]
    other = own.replace("cpython-3", "cpython-9", 1)
    if case == "other_tag":
        extension.rename(package / f"_C.{other}.so")
    else:
        extension.unlink()
    work = tmp_path / "work"
    work.mkdir()
    report = checked(run_tool(python, pyz, ["--device", "cpu", "--output",
                                            str(tmp_path / "before.json")], cwd=work))
    assert report["code"] == "TORCH_IMPORT_FAILED"
    found = findings(report)["TORCH_FOR_OTHER_PYTHON"]
    assert own in found["summary"]
    if case == "other_tag":
        assert other in found["summary"]
    assert "torch==2.13.0+cpu --index-url https://download.pytorch.org/whl/cpu" in \
        found["next_action"]
    apply_pip(python, found["next_action"])
    after = checked(run_tool(python, pyz, ["--device", "cpu", "--output",
                                           str(tmp_path / "after.json")], cwd=work))
    assert after["code"] == "CPU_CHECK_PASSED", after["error"]
    assert "TORCH_FOR_OTHER_PYTHON" not in findings(after)

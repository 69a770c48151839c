"""Issue 44: advice about where torch comes from, proven by applying it as printed.

Each broken environment is built for real (hard-linked copies of the cached torch environments,
another Python's site-packages on PYTHONPATH, a user site-packages hidden by PYTHONNOUSERSITE or
``-S``, an orphan dist-info, a C++ libtorch on LD_LIBRARY_PATH, a base interpreter in a folder
another user may not enter), the tool run in it as a user of the single-file download would, the
advice applied exactly as printed and the verdict seen to change. docs/reliability.md's table
"Advice applied" lists them.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from conftest import clean_env, pyenv_python, run_tool
from test_verdicts_advice_applied import checked, findings, linked_copy, scratch_env, site_packages

pytestmark = pytest.mark.slow


def check(python: Path | str, pyz: Path, tmp_path: Path, env: dict[str, str], *args: str,
          flags: tuple[str, ...] = (), name: str = "report.json") -> dict[str, Any]:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    output = tmp_path / name
    output.unlink(missing_ok=True)
    return checked(run_tool(python, [*flags, str(pyz)], [*args, "--output", str(output)],
                            env=env, cwd=work))


def unset_in(next_action: str) -> str:
    """The variable the advice says to unset, as printed."""
    found = re.search(r"\bunset (\w+)", next_action)
    assert found is not None, next_action
    return found.group(1)


# -- torch from another Python's site-packages on PYTHONPATH -------------------------------------

def other_python(than: Path) -> Path | None:
    """pyenv's CPython of another minor version (3.9+) than ``than``'s."""
    own = subprocess.run([str(than), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                         capture_output=True, text=True, timeout=60, check=True).stdout.strip()
    for minor in ("3.12", "3.13", "3.10", "3.9", "3.14"):
        found = pyenv_python(minor) if minor != own else None
        if found is not None:
            return found
    return None


def test_another_pythons_site_packages_on_pythonpath_is_taken_off_it(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    """Was TORCH_FOR_OTHER_PYTHON "reinstall torch with this interpreter's pip": pip installs
    into the environment, which PYTHONPATH (a module system's 3.11 packages) comes before."""
    python = other_python(cpu_torch_python)
    if python is None:
        pytest.skip("no CPython of another minor version than the torch environment's")
    env = clean_env({"PYTHONPATH": str(site_packages(cpu_torch_python))})
    before = check(python, pyz, tmp_path, env, "--device", "cpu")
    assert before["code"] == "TORCH_IMPORT_FAILED", before["error"]
    assert before["pytorch"]["origin"] == "pythonpath"
    found = findings(before)["TORCH_FOR_OTHER_PYTHON"]
    assert "PYTHONPATH" in found["summary"]
    assert "--force-reinstall" not in found["next_action"]
    env.pop(unset_in(found["next_action"]))
    after = check(python, pyz, tmp_path, env, "--device", "cpu", name="after.json")
    # That Python's own torch is now judged: it has none, which the report says plainly.
    assert after["code"] == "TORCH_MISSING", after["error"]
    assert "TORCH_FOR_OTHER_PYTHON" not in findings(after)


def test_a_source_checkout_on_pythonpath_is_not_left_by_changing_folders(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    """Was TORCH_SHADOWED "run from another folder (cd ..)": PYTHONPATH follows every folder."""
    checkout = tmp_path / "pytorch"
    checkout.mkdir()
    (checkout / "setup.py").write_text("# PyTorch's setup\n", encoding="utf-8")
    linked_copy(site_packages(cpu_torch_python) / "torch", checkout / "torch")
    for built in [*(checkout / "torch").glob("_C.*.so"), checkout / "torch" / "lib"]:
        shutil.rmtree(built) if built.is_dir() else built.unlink()  # not built here
    env = clean_env({"PYTHONPATH": str(checkout)})
    before = check(cpu_torch_python, pyz, tmp_path, env, "--device", "cpu")
    assert before["code"] == "TORCH_IMPORT_FAILED", before["error"]
    assert (before["pytorch"]["module_kind"], before["pytorch"]["origin"]) == (
        "source-checkout", "pythonpath")
    shadowed = findings(before)["TORCH_SHADOWED"]
    assert "PYTHONPATH" in shadowed["summary"]
    assert "cd .." not in shadowed["next_action"]
    env.pop(unset_in(shadowed["next_action"]))
    after = check(cpu_torch_python, pyz, tmp_path, env, "--device", "cpu", name="after.json")
    assert after["code"] == "CPU_CHECK_PASSED", after["error"]
    assert "TORCH_SHADOWED" not in findings(after)


# -- torch installed where a setting of the interpreter does not look ---------------------------

def base_python(python: Path) -> str:
    """The interpreter a venv was made from."""
    return subprocess.run([str(python), "-c", "import sys; print(sys._base_executable)"],
                          capture_output=True, text=True, timeout=60,
                          check=True).stdout.strip()


@pytest.fixture
def user_site_torch(cpu_torch_python: Path, tmp_path: Path) -> tuple[str, Path]:
    """A base interpreter without torch, and a home whose user site-packages holds the real CPU
    build (``pip install --user``, as a hard-linked copy)."""
    base = base_python(cpu_torch_python)
    home = tmp_path / "home"
    probe = subprocess.run([base, "-c", "import site; print(site.getusersitepackages())"],
                           capture_output=True, text=True, timeout=60, check=True,
                           env=clean_env({"HOME": str(home)}))
    user_site = Path(probe.stdout.strip())
    if not user_site.is_relative_to(home):
        pytest.skip("this interpreter's user site-packages is not under HOME")
    user_site.parent.mkdir(parents=True)
    linked_copy(site_packages(cpu_torch_python), user_site)
    alone = subprocess.run([base, "-s", "-c", "import torch"], capture_output=True,
                           timeout=120, check=False, env=clean_env({"HOME": str(home)}))
    if alone.returncode == 0:
        pytest.skip("the base interpreter has a torch of its own")
    return base, home


def test_pythonnousersite_hiding_a_user_install_is_named_and_unsetting_it_works(
        user_site_torch: tuple[str, Path], pyz: Path, tmp_path: Path) -> None:
    """Was TORCH_MISSING "install PyTorch into it", which with the variable set installs a
    second copy (pip does not see the user site-packages either)."""
    base, home = user_site_torch
    env = clean_env({"HOME": str(home), "PYTHONNOUSERSITE": "1"})
    before = check(base, pyz, tmp_path, env, "--device", "cpu")
    assert before["code"] == "TORCH_MISSING", before["error"]
    assert before["pytorch"]["hidden_by"] == "PYTHONNOUSERSITE"
    hidden = findings(before)["TORCH_HIDDEN_BY_SETTING"]
    assert "PYTHONNOUSERSITE" in hidden["summary"]
    assert "1" not in " ".join(hidden["evidence"])  # the setting's name, never its value
    env.pop(unset_in(hidden["next_action"]))
    after = check(base, pyz, tmp_path, env, "--device", "cpu", name="after.json")
    assert after["code"] == "CPU_CHECK_PASSED", after["error"]
    assert after["pytorch"]["origin"] == "user-site"


def test_python_dash_s_hiding_a_user_install_is_named(
        user_site_torch: tuple[str, Path], pyz: Path, tmp_path: Path) -> None:
    base, home = user_site_torch
    env = clean_env({"HOME": str(home)})
    before = check(base, pyz, tmp_path, env, "--device", "cpu", flags=("-s",))
    assert before["code"] == "TORCH_MISSING", before["error"]
    hidden = findings(before)["TORCH_HIDDEN_BY_SETTING"]
    assert "without -s" in hidden["next_action"]
    after = check(base, pyz, tmp_path, env, "--device", "cpu", name="after.json")
    assert after["code"] == "CPU_CHECK_PASSED", after["error"]


def test_python_dash_capital_s_hiding_site_packages_is_named_and_dropping_it_works(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    """Was TORCH_MISSING "install PyTorch into it"; pip (run without -S) says "Requirement
    already satisfied"."""
    env = clean_env()
    before = check(cpu_torch_python, pyz, tmp_path, env, "--device", "cpu", flags=("-S",))
    assert before["code"] == "TORCH_MISSING", before["error"]
    assert before["pytorch"]["hidden_by"] == "-S"
    hidden = findings(before)["TORCH_HIDDEN_BY_SETTING"]
    assert "Run Python without -S" in hidden["next_action"]
    after = check(cpu_torch_python, pyz, tmp_path, env, "--device", "cpu", name="after.json")
    assert after["code"] == "CPU_CHECK_PASSED", after["error"]
    assert "TORCH_HIDDEN_BY_SETTING" not in findings(after)


def test_a_missing_torch_no_setting_hides_gets_no_such_finding(
        notorch_python: Path, pyz: Path, tmp_path: Path) -> None:
    for flags in ((), ("-S",)):
        report = check(notorch_python, pyz, tmp_path, clean_env({"PYTHONNOUSERSITE": "1"}),
                       "--device", "cpu", flags=flags)
        assert report["code"] == "TORCH_MISSING"
        assert report["pytorch"]["hidden_by"] is None
        assert "TORCH_HIDDEN_BY_SETTING" not in findings(report)


# -- an orphan dist-info beside the real install -------------------------------------------------

def test_an_orphan_dist_info_is_named_and_removing_it_as_printed_works(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    """Was TORCH_DUPLICATE_INSTALL "pip uninstall torch until pip says it is not installed":
    after the real install, pip finds the orphan at every run and says "No files were found to
    uninstall", for ever."""
    python = scratch_env(cpu_torch_python, tmp_path)
    orphan = site_packages(python) / "torch-2.12.0.dist-info"
    orphan.mkdir()
    (orphan / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.12.0\n",
                                     encoding="utf-8")
    (orphan / "INSTALLER").write_text("pip\n", encoding="utf-8")
    (orphan / "RECORD").write_text("torch/_removed_since.py,,\n"
                                   "torch-2.12.0.dist-info/METADATA,,\n", encoding="utf-8")
    env = clean_env()
    before = check(python, pyz, tmp_path, env, "--device", "cpu")
    assert before["code"] == "CPU_CHECK_PASSED", before["error"]
    assert before["pytorch"]["orphan_metadata"] == ["torch-2.12.0.dist-info"]
    assert before["pytorch"]["distribution_version"] == "2.13.0+cpu"
    found = findings(before)
    assert "TORCH_DUPLICATE_INSTALL" not in found  # its loop would never end
    named = found["TORCH_ORPHAN_METADATA"]
    command = re.search(r"rm -r \"\$\(.*?\)/torch-2\.12\.0\.dist-info\"", named["next_action"])
    assert command is not None, named["next_action"]
    # As printed, in a shell whose python is the environment's.
    ran = subprocess.run(["bash", "-c", command.group(0)], capture_output=True, text=True,
                         timeout=120, check=False,
                         env={**env, "PATH": f"{python.parent}{os.pathsep}{env['PATH']}"})
    assert ran.returncode == 0, ran.stderr
    assert not orphan.exists()
    assert (site_packages(python) / "torch").is_dir()  # the install is untouched
    after = check(python, pyz, tmp_path, env, "--device", "cpu", name="after.json")
    assert after["code"] == "CPU_CHECK_PASSED"
    assert after["pytorch"]["distributions_on_path"] == 1
    assert {"TORCH_ORPHAN_METADATA", "TORCH_DUPLICATE_INSTALL"}.isdisjoint(findings(after))


# -- a C++ libtorch on LD_LIBRARY_PATH ------------------------------------------------------------

def env_u_in(next_action: str) -> str:
    found = re.search(r"env -u (\w+)", next_action)
    assert found is not None, next_action
    return found.group(1)


def test_another_libtorch_on_ld_library_path_is_the_cause_not_a_reinstall(
        cpu_torch_python: Path, cuda_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    """Another build's libtorch (the CUDA build's lib folder, as a C++ libtorch unpacks) on
    LD_LIBRARY_PATH: import torch loads its libtorch_python.so, which asks for cuDNN. Was
    SHARED_LIBRARY_MISSING "reinstall torch" (applied: no change)."""
    libtorch = tmp_path / "libtorch"
    libtorch.mkdir()
    linked_copy(site_packages(cuda_torch_python) / "torch" / "lib", libtorch / "lib")
    env = clean_env({"LD_LIBRARY_PATH": str(libtorch / "lib")})
    before = check(cpu_torch_python, pyz, tmp_path, env, "--device", "cpu")
    assert before["code"] == "TORCH_IMPORT_FAILED", before["error"]
    assert before["runtime"]["library_override"]["torch_library"] is True
    found = findings(before)
    assert {"SHARED_LIBRARY_MISSING", "UNDEFINED_SYMBOL"}.isdisjoint(found), found
    override = found["LIBRARY_PATH_OVERRIDE"]
    assert override["severity"] == "error"
    assert "LD_LIBRARY_PATH" in override["summary"]
    assert "--force-reinstall" not in override["next_action"]
    env.pop(env_u_in(override["next_action"]))
    after = check(cpu_torch_python, pyz, tmp_path, env, "--device", "cpu", name="after.json")
    assert after["code"] == "CPU_CHECK_PASSED", after["error"]
    assert "LIBRARY_PATH_OVERRIDE" not in findings(after)


def test_torchs_own_libraries_loaded_from_ld_library_path_warn_when_the_check_passes(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    """The same build's libraries on LD_LIBRARY_PATH: loaded instead of torch's own (the
    process's /proc/self/maps says so), and the check passes: was silent."""
    libtorch = tmp_path / "libtorch"
    libtorch.mkdir()
    linked_copy(site_packages(cpu_torch_python) / "torch" / "lib", libtorch / "lib")
    env = clean_env({"LD_LIBRARY_PATH": str(libtorch / "lib")})
    before = check(cpu_torch_python, pyz, tmp_path, env, "--device", "cpu")
    assert before["code"] == "CPU_CHECK_PASSED", before["error"]
    loaded = {entry["name"]: entry["loaded_from"]
              for entry in before["pytorch"]["torch_libraries_elsewhere"]}
    assert loaded.get("libc10.so") == "LD_LIBRARY_PATH", loaded
    override = findings(before)["LIBRARY_PATH_OVERRIDE"]
    assert override["severity"] == "warning"
    env.pop(env_u_in(override["next_action"]))
    after = check(cpu_torch_python, pyz, tmp_path, env, "--device", "cpu", name="after.json")
    assert after["code"] == "CPU_CHECK_PASSED"
    assert after["pytorch"]["torch_libraries_elsewhere"] == []
    assert "LIBRARY_PATH_OVERRIDE" not in findings(after)


# -- --python: an interpreter this user may not reach ---------------------------------------------

def _second_user_missing() -> str | None:
    if sys.platform == "win32" or os.geteuid() != 0:
        return "needs root (the owner) and a second user (who runs the check)"
    if shutil.which("setpriv") is None:
        return "setpriv (util-linux) is missing"
    import pwd

    try:
        pwd.getpwnam("nobody")
    except KeyError:
        return "no user nobody"
    return None


SECOND_USER = _second_user_missing()


@pytest.mark.skipif(SECOND_USER is not None, reason=SECOND_USER or "")
def test_an_interpreter_in_a_folder_closed_to_this_user_is_not_called_removed(
        pyz: Path) -> None:
    """A venv made from a base interpreter in its owner's 0700 folder, checked by another user:
    was "a link to an interpreter that no longer exists ... removed or upgraded". It is there;
    the folder is closed (permission denied). The advice applied: its owner opens the folder."""
    # The system's own Python, which any user may run (the test's own is in root's home).
    system_python = next((path for path in ("/usr/bin/python3", "/usr/local/bin/python3")
                          if os.path.isfile(path)), None)
    if system_python is None:
        pytest.skip("no system python3 the second user could run")
    as_nobody = [str(shutil.which("setpriv")), "--reuid=nobody", "--regid=nogroup",
                 "--clear-groups"]
    place = Path(tempfile.mkdtemp(prefix="kd-closed-"))
    try:
        place.chmod(0o755)
        runnable = subprocess.run([*as_nobody, system_python, "-c", "import sys; "
                                   "assert sys.version_info >= (3, 9)"],
                                  capture_output=True, timeout=60, check=False)
        if runnable.returncode != 0:
            pytest.skip("the system's python3 is not a Python 3.9+ the second user can run")
        shutil.copy(pyz, place / pyz.name)
        (place / pyz.name).chmod(0o644)
        closed = place / "owner-only"
        (closed / "bin").mkdir(parents=True)
        (closed / "bin" / "python3").symlink_to(os.path.realpath(system_python))
        subprocess.run([str(closed / "bin" / "python3"), "-m", "venv", "--without-pip",
                        str(place / "venv")], check=True, timeout=120, capture_output=True)
        closed.chmod(0o700)
        command = [*as_nobody, system_python, str(place / pyz.name), "--device", "cpu",
                   "--python", str(place / "venv" / "bin" / "python")]
        env = clean_env({"HOME": str(place)})
        before = subprocess.run(command, capture_output=True, text=True, timeout=300,
                                check=False, env=env, cwd=place)
        assert before.returncode == 2, before.stdout + before.stderr
        assert "permission denied" in before.stderr
        assert "no longer exists" not in before.stderr
        assert "chmod o+x" in before.stderr
        closed.chmod(0o701)  # the advice, applied by the folder's owner
        after = subprocess.run(command, capture_output=True, text=True, timeout=300,
                               check=False, env=env, cwd=place)
        # The check now runs in that interpreter, which has no torch: said as such.
        assert after.returncode == 3, after.stdout + after.stderr
        assert "TORCH_MISSING" in after.stdout
    finally:
        shutil.rmtree(place, ignore_errors=True)

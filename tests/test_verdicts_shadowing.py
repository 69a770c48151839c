"""Environments people break by shadowing: a module of theirs hides torch or what torch needs.

Every case is made for real in a folder of the test and run the way a user does: the real torch
builds (CPU 2.13.0, CUDA 2.14.1 with no driver here), ``python -m kernodeck_diagnostic`` from the
user's folder, the zipapp, the installed console script and the API. The shadowing modules are the
ones people really write: a script named ``torch.py`` (that may itself ``import torch``), its
``torch.pyc`` left behind, a ``torch/`` package or plain folder, a PyTorch source checkout, a
folder on ``PYTHONPATH``, a ``typing.py`` or ``numpy.py`` next to the user's script.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import (
    FAKES,
    SRC,
    SUPPORTED_PYTHONS,
    Result,
    assert_valid_report,
    clean_env,
    pyenv_python,
    run_tool,
)
from test_verdicts_advice_applied import linked_copy, site_packages

pytestmark = pytest.mark.slow


# -- how the cases are made and run -------------------------------------------------------------

def project(tmp_path: Path, **files: str) -> Path:
    """A user's project folder holding ``files`` (name -> text; a name ending in / is a folder)."""
    folder = tmp_path / "project"
    folder.mkdir(exist_ok=True)
    for name, text in files.items():
        path = folder / name
        if name.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder


def python_m(python: Path, cwd: Path, *args: str, pythonpath: str = "") -> Result:
    """``python -m kernodeck_diagnostic ARGS`` in ``cwd``, the package found on PYTHONPATH."""
    paths = os.pathsep.join(p for p in (str(SRC), pythonpath) if p)
    return run_tool(python, ["-m", "kernodeck_diagnostic"],
                    [*args, "--output", str(cwd.parent / "report.json")],
                    env=clean_env({"PYTHONPATH": paths}), cwd=cwd)


def zipapp(python: Path, pyz: Path, cwd: Path, *args: str, **env: str) -> Result:
    return run_tool(python, pyz, [*args, "--output", str(cwd.parent / "report.json")],
                    env=clean_env(env), cwd=cwd)


def checked(result: Result, tmp_path: Path) -> dict[str, Any]:
    """The report, valid, with no path of the test's folders in it nor on the terminal."""
    assert result.report is not None, result.stdout + result.stderr
    assert_valid_report(result.report)
    assert "Traceback" not in result.stderr, result.stderr
    for text in (json.dumps(result.report), result.stdout, result.stderr):
        assert str(tmp_path) not in text
    return result.report


def findings(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {finding["id"]: finding for finding in report["findings"]}


def assert_shadowed(report: dict[str, Any], origin: str, kind: str, said: str) -> dict[str, Any]:
    """TORCH_IMPORT_FAILED at import, TORCH_SHADOWED with the place and the kind of module."""
    assert (report["code"], report["stage"]) == ("TORCH_IMPORT_FAILED", "import"), report["error"]
    assert report["error"]["message_key"] == "error.torch_shadowed"
    assert report["pytorch"]["imported"] is False
    assert report["pytorch"]["origin"] == origin
    assert report["pytorch"]["module_kind"] == kind
    found = findings(report)
    assert {"GPU_BACKEND_ABSENT", "CPU_ONLY_BUILD"}.isdisjoint(found)
    shadowed = found["TORCH_SHADOWED"]
    assert shadowed["severity"] == "error"
    evidence = " ".join(shadowed["evidence"])
    assert origin in evidence
    assert said in evidence
    return shadowed


# -- item 1: a module that shadows torch ----------------------------------------------------------

def test_torch_py_beside_a_cuda_build_is_an_import_failure_not_a_cpu_build(
        cuda_torch_python: Path, tmp_path: Path) -> None:
    """Was GPU_BACKEND_ABSENT + CPU_ONLY_BUILD ("reinstall torch"): the wrong layer."""
    work = project(tmp_path, **{"torch.py": "print('my first torch script')\n"})
    result = python_m(cuda_torch_python, work)
    report = checked(result, tmp_path)
    assert result.returncode == 4
    shadowed = assert_shadowed(report, "working-folder", "file", "a file torch.py")
    assert "Rename" in shadowed["next_action"]
    assert "torch.py" in shadowed["next_action"]
    # The installed build is named: the user sees it is there, only hidden.
    assert report["pytorch"]["distribution_version"].startswith("2.14.1")
    assert any("2.14.1" in line for line in shadowed["evidence"])
    assert "my first torch script" not in result.stdout  # the module was never run


@pytest.mark.parametrize("body", [
    "import torch\nprint(torch.__version__)\n",  # the classic: a tutorial saved as torch.py
    "def broken(:\n",  # a syntax error
])
def test_a_torch_py_that_fails_is_still_named(cpu_torch_python: Path, tmp_path: Path,
                                             body: str) -> None:
    """Was a bare import error (or a circular import) with no finding at all."""
    work = project(tmp_path, **{"torch.py": body})
    report = checked(python_m(cpu_torch_python, work, "--device", "cpu"), tmp_path)
    assert_shadowed(report, "working-folder", "file", "a file torch.py")


def test_a_torch_pyc_left_behind(cpu_torch_python: Path, tmp_path: Path) -> None:
    """A compiled torch.pyc without its source still hides the package."""
    work = project(tmp_path, **{"old_torch.py": "x = 1\n"})
    subprocess.run([str(cpu_torch_python), "-c",
                    "import py_compile; py_compile.compile('old_torch.py', cfile='torch.pyc')"],
                   cwd=work, check=True, timeout=60, env=clean_env())
    (work / "old_torch.py").unlink()
    report = checked(python_m(cpu_torch_python, work, "--device", "cpu"), tmp_path)
    shadowed = assert_shadowed(report, "working-folder", "compiled", "a compiled torch.pyc")
    assert "torch.pyc" in shadowed["next_action"]


def test_a_torch_package_of_the_user(cuda_torch_python: Path, tmp_path: Path) -> None:
    work = project(tmp_path, **{"torch/__init__.py": "from .helpers import *\n",
                                "torch/helpers.py": "def train(): pass\n"})
    report = checked(python_m(cuda_torch_python, work), tmp_path)
    assert_shadowed(report, "working-folder", "package", "a package folder torch/")


def test_a_plain_torch_folder_when_no_torch_is_installed(notorch_python: Path,
                                                         tmp_path: Path) -> None:
    """A torch/ folder of data imports as an empty namespace package: never a CPU build."""
    work = project(tmp_path, **{"torch/": "", "torch/checkpoints/": ""})
    report = checked(python_m(notorch_python, work), tmp_path)
    shadowed = assert_shadowed(report, "working-folder", "folder", "a folder torch/")
    assert any("no torch distribution is installed" in line for line in shadowed["evidence"])


def test_running_from_a_pytorch_source_checkout(cpu_torch_python: Path, tmp_path: Path) -> None:
    """The classic: python in the root of a clone of pytorch/pytorch, torch installed besides."""
    work = project(tmp_path, **{
        "setup.py": "from setuptools import setup\nsetup(name='torch')\n",
        "torch/__init__.py": "from torch._C import *  # noqa\n__version__ = '2.14.0a0'\n",
        "torch/csrc/": ""})
    report = checked(python_m(cpu_torch_python, work, "--device", "cpu"), tmp_path)
    shadowed = assert_shadowed(report, "working-folder", "source-checkout", "source checkout")
    assert "another folder" in shadowed["next_action"]


def test_torch_py_in_a_pythonpath_folder(cpu_torch_python: Path, pyz: Path,
                                         tmp_path: Path) -> None:
    libs = tmp_path / "libs"
    libs.mkdir()
    (libs / "torch.py").write_text("import torch\n")
    work = project(tmp_path)
    report = checked(zipapp(cpu_torch_python, pyz, work, "--device", "cpu",
                            PYTHONPATH=str(libs)), tmp_path)
    shadowed = assert_shadowed(report, "pythonpath", "file", "a file torch.py")
    assert "PYTHONPATH" in shadowed["next_action"]


# A stale typing_extensions (an old release: no `deprecated`) in a PYTHONPATH folder, as a module
# system or another Python's packages leave it: the real torch fails to import, and the report's
# redacted path hid where the module came from.
STALE_TYPING_EXTENSIONS = "from typing import *  # noqa\nfrom typing import Protocol, Literal\n"


def test_a_stale_module_on_pythonpath_that_breaks_the_import_is_named(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    libs = tmp_path / "libs"
    libs.mkdir()
    (libs / "typing_extensions.py").write_text(STALE_TYPING_EXTENSIONS)
    work = project(tmp_path)
    result = zipapp(cpu_torch_python, pyz, work, "--device", "cpu", PYTHONPATH=str(libs))
    report = checked(result, tmp_path)
    assert (result.returncode, report["code"]) == (4, "TORCH_IMPORT_FAILED")
    assert "cannot import name" in report["error"]["message"]
    assert report["pytorch"]["import_error_origin"] == {"module": "typing_extensions",
                                                        "place": "pythonpath"}
    finding = findings(report)["PYTHONPATH_MODULE_BREAKS_IMPORT"]
    assert finding["evidence"][0] == (
        "the import failed in typing_extensions, found in a folder on PYTHONPATH (searched "
        "before this environment's own packages)")
    assert "env -u PYTHONPATH" in finding["next_action"]
    assert "PYTHONPATH_MODULE_BREAKS_IMPORT" in result.stdout
    # The advice followed: the same check without PYTHONPATH passes.
    (work.parent / "report.json").unlink()
    report = checked(zipapp(cpu_torch_python, pyz, work, "--device", "cpu"), tmp_path)
    assert report["code"] == "CPU_CHECK_PASSED"
    assert report["pytorch"]["import_error_origin"] is None


def test_a_module_of_the_users_that_raises_on_pythonpath_is_not_named(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    # A file named like a torch dependency that raises: found by the innermost frame. A module
    # name torch does not need is the user's own and stays unnamed.
    libs = tmp_path / "libs"
    (libs / "typing_extensions").mkdir(parents=True)
    (libs / "typing_extensions" / "__init__.py").write_text("import my_private_helpers\n")
    (libs / "my_private_helpers.py").write_text("raise RuntimeError('no licence server')\n")
    work = project(tmp_path)
    result = zipapp(cpu_torch_python, pyz, work, "--device", "cpu", PYTHONPATH=str(libs))
    report = checked(result, tmp_path)
    assert report["code"] == "TORCH_IMPORT_FAILED"
    assert report["pytorch"]["import_error_origin"] == {"module": None, "place": "pythonpath"}
    assert "my_private_helpers" not in json.dumps(report["findings"])
    assert findings(report)["PYTHONPATH_MODULE_BREAKS_IMPORT"]["evidence"][0].startswith(
        "the import failed in a module, found in a folder on PYTHONPATH")


def test_the_environments_own_packages_listed_on_pythonpath_stay_site_packages(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """PYTHONPATH=$VIRTUAL_ENV/lib/python3.X/site-packages (seen in job scripts) changes no
    package: the folder is still the environment's own, so a failure there is no stale copy.
    Another Python's site-packages on PYTHONPATH is a PYTHONPATH folder."""
    import site

    from kernodeck_diagnostic.worker import origin as stages

    own = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    other = tmp_path / "other-python" / "lib" / "python3.9" / "site-packages"
    own.mkdir(parents=True)
    other.mkdir(parents=True)
    monkeypatch.setattr(site, "getsitepackages", lambda: [str(own)])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join((str(own), str(other))))
    assert stages.place_of(str(own), None) == "site-packages"
    assert stages.place_of(str(other), None) == "pythonpath"


# -- issue 43: the folder of the tool's own file is none of the user's ----------------------------

# Modules import torch loads first, planted where only the tool's own file is: each one notes that
# it ran (and fails, as a stranger's module would). torch.py apart: a torch.py on the worker's
# path is located and never run, so the verdict says whether the worker searched its folder.
EARLY_MODULES = ("typing_extensions", "numpy", "filelock", "sympy")


def plant(folder: Path, marker: Path, names: tuple[str, ...]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / f"{name}.py").write_text(
            f"open({str(marker)!r}, 'a').write({name!r} + '\\n')\nraise RuntimeError('planted')\n",
            encoding="utf-8")


def console_script(folder: Path) -> Path:
    """The console script as pip writes it (``CONSOLE_SCRIPT``), in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "kernodeck-diagnostic"
    script.write_text(CONSOLE_SCRIPT, encoding="utf-8")
    return script


def run_beside(how: str, python: Path, pyz: Path, tools: Path, cwd: Path, *args: str,
               out: Path) -> Result:
    """The check started ``how``, its own file in ``tools``, from ``cwd``: the zipapp copied
    there; the console script written there; ``python -m`` with the package copied there (its
    folder on PYTHONPATH, the modules planted inside the package, beside ``__main__.py``)."""
    if how == "zipapp":
        shutil.copy(pyz, tools / pyz.name)
        return run_tool(python, tools / pyz.name, [*args, "--output", str(out)],
                        env=clean_env(), cwd=cwd)
    if how == "console-script":
        script = console_script(tools)
        return run_tool(python, [str(script)], [*args, "--output", str(out)],
                        env=clean_env({"PYTHONPATH": str(SRC)}), cwd=cwd)
    return run_tool(python, ["-m", "kernodeck_diagnostic"], [*args, "--output", str(out)],
                    env=clean_env({"PYTHONPATH": str(tools.parent)}), cwd=cwd)


ENTRIES = ("zipapp", "console-script", "python-m")


@pytest.mark.parametrize("planted", [("torch",), EARLY_MODULES], ids=["torch.py", "early"])
@pytest.mark.parametrize("how", ENTRIES)
def test_modules_beside_the_tools_own_file_never_run(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path, how: str,
        planted: tuple[str, ...]) -> None:
    """python3 /tmp/kd.pyz from $HOME: Python puts the archive on the import path, never its
    folder; anyone who can write beside the download (/tmp, ~/Downloads) must not run code as
    the user who runs the check (issue 43). Was TORCH_SHADOWED (script-folder) for a torch.py,
    and the planted typing_extensions.py run in the worker. The same for the console script's
    folder and for the package's own folder under python -m."""
    marker = tmp_path / "ran"
    tools = tmp_path / "shared" / ("kernodeck_diagnostic" if how == "python-m" else "tools")
    if how == "python-m":
        shutil.copytree(SRC / "kernodeck_diagnostic", tools,
                        ignore=shutil.ignore_patterns("__pycache__"))
    plant(tools, marker, planted)
    out = tmp_path / "report.json"
    report = checked(run_beside(how, cpu_torch_python, pyz, tools, project(tmp_path),
                                "--device", "cpu", out=out), tmp_path)
    assert not marker.exists(), marker.read_text(encoding="utf-8")
    assert report["code"] == "CPU_CHECK_PASSED", report["error"]
    assert (report["pytorch"]["origin"], report["pytorch"]["module_kind"]) == (
        "site-packages", "installed")
    assert report["runtime"]["local_modules"] == []
    assert {"TORCH_SHADOWED", "LOCAL_MODULE_SHADOWS"}.isdisjoint(findings(report))


@pytest.mark.parametrize("how", ["zipapp", "console-script"])
def test_modules_beside_the_tools_own_file_never_run_under_python(
        notorch_python: Path, cpu_torch_python: Path, pyz: Path, tmp_path: Path,
        how: str) -> None:
    """--python: the worker runs in another interpreter; its import path is still a program's
    started in the working folder, never the folder of the tool's file."""
    marker = tmp_path / "ran"
    tools = tmp_path / "shared" / "tools"
    plant(tools, marker, ("torch", *EARLY_MODULES))
    report = checked(run_beside(how, notorch_python, pyz, tools, project(tmp_path),
                                "--python", str(cpu_torch_python), "--device", "cpu",
                                out=tmp_path / "report.json"), tmp_path)
    assert not marker.exists(), marker.read_text(encoding="utf-8")
    assert report["code"] == "CPU_CHECK_PASSED", report["error"]
    assert report["pytorch"]["origin"] == "site-packages"
    assert {"TORCH_SHADOWED", "LOCAL_MODULE_SHADOWS"}.isdisjoint(findings(report))


@pytest.mark.parametrize("case", [
    ((), {}, True),  # python -c there searches the working folder first: so does the worker
    (("-P",), {}, False),
    ((), {"PYTHONSAFEPATH": "1"}, False),
    (("-I",), {}, False),
], ids=["plain", "-P", "PYTHONSAFEPATH", "-I"])
def test_the_working_folder_is_searched_as_python_c_there_would(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path,
        case: tuple[tuple[str, ...], dict[str, str], bool]) -> None:
    """The zipapp run from a folder holding a typing_extensions.py: the worker imports it exactly
    when python -c in that folder, under the same flags, would (the planted module is the
    proof: it runs, or it does not)."""
    flags, env, searched = case
    if not hasattr(sys.flags, "safe_path") and (flags == ("-P",) or env):
        pytest.skip("-P and PYTHONSAFEPATH are Python 3.11's")
    marker = tmp_path / "ran"
    work = project(tmp_path)
    plant(work, marker, ("typing_extensions",))
    python_c = subprocess.run([str(cpu_torch_python), *flags, "-c", "import typing_extensions"],
                              capture_output=True, text=True, timeout=60, check=False, cwd=work,
                              env=clean_env(env))
    assert marker.exists() == searched == (python_c.returncode != 0), python_c.stderr
    marker.unlink(missing_ok=True)
    result = run_tool(cpu_torch_python, [*flags, str(pyz)],
                      ["--device", "cpu", "--output", str(tmp_path / "report.json")],
                      env=clean_env(env), cwd=work)
    report = checked(result, tmp_path)
    assert marker.exists() == searched
    assert report["code"] == ("TORCH_IMPORT_FAILED" if searched else "CPU_CHECK_PASSED")
    named = {entry["name"] for entry in report["runtime"]["local_modules"]}
    assert named == ({"typing_extensions"} if searched else set())


def test_torch_py_beside_the_downloaded_zipapp_hides_nothing(
        cuda_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    """python ~/tools/kd.pyz: Python searches the archive, not ~/tools (was TORCH_SHADOWED,
    script-folder); the CUDA build, with no GPU here, is then checked as installed."""
    tools = tmp_path / "tools"
    tools.mkdir()
    shutil.copy(pyz, tools / pyz.name)
    (tools / "torch.py").write_text("print('hello')\n")
    work = project(tmp_path)
    report = checked(zipapp(cuda_torch_python, tools / pyz.name, work), tmp_path)
    assert report["code"] != "TORCH_IMPORT_FAILED", report["error"]
    assert (report["pytorch"]["origin"], report["pytorch"]["module_kind"]) == (
        "site-packages", "installed")
    assert "TORCH_SHADOWED" not in findings(report)


def test_an_installed_torch_without_torch_version_is_not_a_cpu_build(
        notorch_python: Path, pyz: Path, tmp_path: Path) -> None:
    """A truncated install (its __init__.py emptied by a full disk) imports, and is nothing."""
    target = tmp_path / "target"  # as pip install --target makes it
    (target / "torch").mkdir(parents=True)
    (target / "torch" / "__init__.py").write_text("")
    (target / "torch-2.13.0.dist-info").mkdir()
    (target / "torch-2.13.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: torch\nVersion: 2.13.0\n")
    work = project(tmp_path)
    report = checked(zipapp(notorch_python, pyz, work, PYTHONPATH=str(target)), tmp_path)
    assert (report["code"], report["stage"]) == ("TORCH_IMPORT_FAILED", "import")
    assert report["error"]["message_key"] == "error.torch_incomplete"
    assert report["pytorch"]["module_kind"] == "installed"
    assert report["pytorch"]["backend"] is None
    assert {"GPU_BACKEND_ABSENT", "CPU_ONLY_BUILD", "TORCH_SHADOWED"}.isdisjoint(
        findings(report))


def test_an_editable_install_run_from_its_own_checkout_is_not_shadowing(
        pyz: Path, tmp_path: Path) -> None:
    """pip install -e . in a source checkout, then the check from that checkout: legitimate.

    The checkout holds a (fake, GPU-needing) torch; the environment's site folder holds what pip
    writes for an editable install: the metadata with direct_url.json, and a .pth file.
    """
    checkout = project(tmp_path, **{"setup.py": "from setuptools import setup\nsetup()\n"})
    shutil.copytree(FAKES / "torch", checkout / "torch",
                    ignore=shutil.ignore_patterns("__pycache__"))
    site = tmp_path / "site"
    info = site / "torch-2.7.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.7.0\n")
    (info / "direct_url.json").write_text(json.dumps(
        {"url": checkout.as_uri(), "dir_info": {"editable": True}}))
    shutil.copy(pyz, tmp_path / pyz.name)
    result = zipapp(Path(sys.executable), tmp_path / pyz.name, checkout,
                    PYTHONPATH=os.pathsep.join([str(site), str(checkout)]),
                    KD_FAKE_TORCH="cuda_pass")
    report = checked(result, tmp_path)
    assert report["code"] == "GPU_CHECK_PASSED", report["error"]
    assert report["pytorch"]["module_kind"] == "installed"
    assert report["pytorch"]["origin"] == "working-folder"
    assert "TORCH_SHADOWED" not in findings(report)


def test_a_target_folder_of_torch_and_its_dependencies_hides_nothing_it_holds(
        notorch_python: Path, cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    """The working folder is a ``pip install --target .`` of torch with its dependencies, the
    interpreter has none installed: ``import torch`` there works, and each dependency is the
    only one the program can import. Was LOCAL_MODULE_SHADOWS "hide ones it needs: filelock,
    sympy, typing_extensions..." with the advice to rename them, which breaks the import. A
    module there hides one only when the import path finds another elsewhere (the venv's own
    setuptools, on 3.11); the others are listed as hiding nothing."""
    work = tmp_path / "app"
    linked_copy(site_packages(cpu_torch_python), work)
    plain = subprocess.run([str(notorch_python), "-c", "import torch, sympy, typing_extensions"],
                           cwd=work, env=clean_env(), capture_output=True, text=True,
                           timeout=120, check=False)
    assert plain.returncode == 0, plain.stderr
    report = checked(zipapp(notorch_python, pyz, work, "--device", "cpu"), tmp_path)
    assert report["code"] == "CPU_CHECK_PASSED", report["error"]
    hides = {entry["name"]: entry["hides"] for entry in report["runtime"]["local_modules"]}
    assert {hides[name] for name in ("typing_extensions", "sympy", "filelock")} == {"nothing"}
    installed = {path.name.split("-")[0].lower()
                 for path in site_packages(notorch_python).glob("*.dist-info")}
    hidden = {name for name, what in hides.items() if what != "nothing"}
    assert hidden <= installed, hidden  # only those the venv has a copy of
    shadows = findings(report).get("LOCAL_MODULE_SHADOWS")
    named = shadows["summary"] if shadows else ""
    assert not any(name in named for name in ("typing_extensions", "sympy", "filelock"))


def test_the_installed_torch_is_located_and_not_shadowed(cpu_torch_python: Path, pyz: Path,
                                                         tmp_path: Path) -> None:
    report = checked(zipapp(cpu_torch_python, pyz, project(tmp_path), "--device", "cpu"),
                     tmp_path)
    assert report["code"] == "CPU_CHECK_PASSED"
    assert (report["pytorch"]["origin"], report["pytorch"]["module_kind"]) == (
        "site-packages", "installed")
    assert report["runtime"]["local_modules"] == []
    assert {"TORCH_SHADOWED", "LOCAL_MODULE_SHADOWS"}.isdisjoint(findings(report))


@pytest.mark.parametrize("entry", ["zipapp", "python_m"])
def test_the_users_csv_and_email_never_run_in_the_worker(cpu_torch_python: Path, pyz: Path,
                                                         tmp_path: Path, entry: str) -> None:
    """Reading the installed distributions (where torch comes from) loads csv, email, zipfile...:
    done before the user's folder is on the worker's import path, so a csv.py or email/ of the
    user's never runs there, and torch is still located and checked (a regression once). It
    runs when torch is imported, as in ``python -c "import torch"`` there, which it breaks (was
    CPU_CHECK_PASSED: torch took the worker's own csv, loaded for that reading)."""
    marker = tmp_path / "ran"
    planted = (f"import sys\nopen({str(marker)!r}, 'a').write("
               "__name__ + (' torch' if 'torch' in sys.modules else ' worker') + '\\n')\n"
               "raise RuntimeError('mine')\n")
    folder = project(tmp_path, **{"csv.py": planted, "email/__init__.py": planted})
    result = (zipapp(cpu_torch_python, pyz, folder, "--device", "cpu") if entry == "zipapp"
              else python_m(cpu_torch_python, folder, "--device", "cpu"))
    report = checked(result, tmp_path)
    ran = marker.read_text(encoding="utf-8").split()
    assert ran[1::2] == ["torch"], ran  # torch's import ran the first of them; it raised
    assert (report["code"], report["error"]["message"]) == ("TORCH_IMPORT_FAILED", "mine")
    assert findings(report)["LOCAL_MODULE_SHADOWS"]["severity"] == "error"
    assert (report["pytorch"]["origin"], report["pytorch"]["module_kind"]) == (
        "site-packages", "installed")


# -- item 2: what python app.py sees, whatever entry point ran the check -------------------------

LOCAL = {
    "typing.py": "raise RuntimeError('my typing helpers')\n",
    "numpy.py": "raise RuntimeError('my numpy experiments')\n",
    "torch.py": "print('hello')\n",
    "app.py": "import torch\n",
}


def assert_local_shadows(report: dict[str, Any], names: set[str]) -> dict[str, Any]:
    found = findings(report)["LOCAL_MODULE_SHADOWS"]
    assert found["severity"] == "warning"
    listed = {entry["name"] for entry in report["runtime"]["local_modules"]}
    assert names <= listed
    for name in names:
        assert name in found["summary"]
    return found


def assert_as_python_app_py_here(report: dict[str, Any]) -> None:
    """What python app.py in the LOCAL folder meets: torch.py located (never run) and named
    where it is, typing.py and numpy.py named as hiding what the program needs."""
    assert_shadowed(report, "working-folder", "file", "a file torch.py")
    found = assert_local_shadows(report, {"typing", "numpy"})
    evidence = " ".join(found["evidence"])
    assert "typing.py in the working-folder hides the standard library's typing" in evidence
    assert "numpy.py in the working-folder hides numpy, which torch needs" in evidence
    assert "the working folder" in found["summary"]
    assert "another folder" in found["next_action"]


def test_zipapp_run_from_a_folder_that_hides_modules_warns(cpu_torch_python: Path, pyz: Path,
                                                           tmp_path: Path) -> None:
    """The zipapp kept elsewhere imports torch as python app.py in the working folder would
    (was: from the zipapp's own folder, CPU_CHECK_PASSED while app.py failed; issue 43)."""
    work = project(tmp_path, **LOCAL)
    result = zipapp(cpu_torch_python, pyz, work, "--device", "cpu")
    assert_as_python_app_py_here(checked(result, tmp_path))
    assert "hello" not in result.stdout  # torch.py never ran


def test_console_script_run_from_such_a_folder_warns(cpu_torch_python: Path,
                                                     tmp_path: Path) -> None:
    """The console script pip installed (here, the test environment's own), with --python: the
    same verdict as the zipapp and python -m in that folder."""
    script = Path(sys.executable).parent / "kernodeck-diagnostic"
    if not script.is_file():
        pytest.skip("the package's console script is not installed in this environment")
    work = project(tmp_path, **LOCAL)
    out = tmp_path / "report.json"
    result = run_tool(script, [], ["--python", str(cpu_torch_python), "--device", "cpu",
                                   "--output", str(out)], cwd=work,
                      env=clean_env({"PYTHONPATH": str(SRC)}))  # these sources, not an old copy
    # run_tool starts "python TOOL": here the "python" is the script itself, run by its shebang.
    assert_as_python_app_py_here(checked(result, tmp_path))


def test_api_from_a_script_in_such_a_folder_names_the_failures_cause(
        cpu_torch_python: Path, tmp_path: Path) -> None:
    work = project(tmp_path, **{"numpy.py": "raise RuntimeError('mine')\n", "check.py": (
        "import json, kernodeck_diagnostic\n"
        "report = kernodeck_diagnostic.check(device='cpu')\n"
        "print(json.dumps(report.to_dict()))\n")})
    result = run_tool(cpu_torch_python, [str(work / "check.py")], [], cwd=work,
                      env=clean_env({"PYTHONPATH": str(SRC)}))
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert_valid_report(report)
    # torch imports numpy, which is the script folder's numpy.py: the failure's cause (issue 44).
    assert report["code"] == "TORCH_IMPORT_FAILED"
    found = findings(report)["LOCAL_MODULE_SHADOWS"]
    assert found["severity"] == "error"
    assert found["summary"].startswith("import torch failed in numpy: your own numpy.py")
    assert str(tmp_path) not in result.stdout


def pyenv_pythons() -> list[Any]:
    return [pytest.param(pyenv_python(minor), id=minor) for minor in SUPPORTED_PYTHONS]


@pytest.mark.parametrize("python", pyenv_pythons())
def test_python_m_in_a_folder_hiding_the_standard_library_never_tracebacks(
        python: Path | None, tmp_path: Path) -> None:
    """python -m puts the working folder first: the tool's own imports must not go there."""
    if python is None:
        pytest.skip("no such pyenv Python here")
    # On 3.9 and 3.10 runpy itself imports typing (and typing re) before the module it runs:
    # there every python -m fails (python -m pip too) before a line of the package is read.
    names = [name for name in ("argparse", "re", "json", "dataclasses", "enum", "signal", "typing")
             if python_m_starts_beside(python, tmp_path, name)]
    assert "argparse" in names
    work = project(tmp_path, **{f"{name}.py": f"raise RuntimeError('my own {name}.py')\n"
                                for name in names})
    result = python_m(python, work, "--device", "cpu")
    assert "my own" not in result.stderr, result.stderr
    report = checked(result, tmp_path)
    assert report["code"] == "TORCH_MISSING"  # pyenv's Pythons have no torch
    # A module the interpreter loads before any script (a .pth file may load typing) is hidden by
    # nothing: python app.py gets the loaded one.
    assert_local_shadows(report, {"typing", "argparse", "re"} & set(names)
                         - startup_modules(python, tmp_path))


def python_m_starts_beside(python: Path, tmp_path: Path, name: str) -> bool:
    """Whether ``python -m`` runs any module at all from a folder holding a broken NAME.py."""
    folder = tmp_path / f"beside-{name}"
    (folder / "lib").mkdir(parents=True)
    (folder / "lib" / "kd_probe.py").write_text("print('started')\n")
    (folder / f"{name}.py").write_text("raise RuntimeError\n")
    done = subprocess.run([str(python), "-m", "kd_probe"], capture_output=True, text=True,
                          timeout=60, check=False, cwd=folder,
                          env=clean_env({"PYTHONPATH": str(folder / "lib")}))
    return done.stdout.strip() == "started"


def startup_modules(python: Path, tmp_path: Path) -> set[str]:
    """The modules ``python`` has loaded when a script's first line runs."""
    probe = tmp_path / "probe.py"
    probe.write_text("import sys; print(' '.join(sys.modules))\n")
    done = subprocess.run([str(python), str(probe)], capture_output=True, text=True, timeout=60,
                          check=True, env=clean_env())
    return set(done.stdout.split())


# What pip writes as the console script (its own template): it imports re before the package.
CONSOLE_SCRIPT = """import re
import sys
from kernodeck_diagnostic.cli import entry
if __name__ == "__main__":
    sys.argv[0] = re.sub(r"(-script\\.pyw|\\.exe)?$", "", sys.argv[0])
    sys.exit(entry())
"""
# A start-up hook that notes the front's fork (the early worker), and, with KD_TEST_THREAD, runs a
# thread (a profiler's, say): the front cannot be forked then, the worker is a new interpreter.
STARTUP_HOOK = """
import os, sys, threading, time
_front = os.getpid()
def _forks(event, args):
    if event == "os.fork" and os.getpid() == _front and "--events" not in sys.argv:
        open(os.environ["KD_TEST_FORKED"], "a").write("fork\\n")
sys.addaudithook(_forks)
if os.environ.get("KD_TEST_THREAD"):
    threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()
"""


@pytest.mark.parametrize("python", pyenv_pythons())
def test_what_the_console_script_loaded_first_is_still_said_to_be_hidden(
        python: Path | None, tmp_path: Path) -> None:
    """The console script imports re, and with it enum, before the package: the worker, the
    front forked, has both loaded, which python app.py would not have. A re.py and an enum.py in
    the working folder are still said to hide them (the worker asks a fresh interpreter what it
    loads before a script's first line), and encodings.py, which that start-up loads, hides
    nothing: the very modules a worker started as a new interpreter names."""
    if python is None:
        pytest.skip("no such pyenv Python here")
    script = tmp_path / "bin" / "kernodeck-diagnostic"
    script.parent.mkdir()
    script.write_text(CONSOLE_SCRIPT, encoding="utf-8")
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(STARTUP_HOOK, encoding="utf-8")
    work = project(tmp_path, **{f"{name}.py": f"raise RuntimeError('my own {name}.py')\n"
                                for name in ("re", "enum", "encodings")})
    expected = {"re", "enum"} - startup_modules(python, tmp_path)
    for started, thread in (("forked", ""), ("new interpreter", "1")):
        forked = tmp_path / f"{started}.forks"
        result = run_tool(python, [str(script)], ["--device", "cpu", "--output",
                                                  str(tmp_path / f"{started}.json")],
                          env=clean_env({"PYTHONPATH": os.pathsep.join([str(hook), str(SRC)]),
                                         "KD_TEST_FORKED": str(forked),
                                         "KD_TEST_THREAD": thread}),
                          cwd=work)
        assert "my own" not in result.stderr, result.stderr
        assert forked.exists() == (started == "forked")
        report = checked(result, tmp_path)
        assert report["code"] == "TORCH_MISSING"  # pyenv's Pythons have no torch
        assert {entry["name"] for entry in report["runtime"]["local_modules"]} == expected
        if expected:
            assert_local_shadows(report, expected)

"""Programs the check runs by name (``nvcc``, ``nvidia-smi``, ``amd-smi``, ``rocm-smi``) come
from PATH's absolute folders only (issue 43): an empty entry (``PATH=:/usr/bin``, a trailing or
doubled ``:``) or a relative one (``.``, ``bin``) is the working folder or one under it, where
anyone who can write (a shared ``/tmp``) would choose what runs on every check.

Each case is real: an executable of that name in the working folder (or under it) that notes it
ran, PATH made as a user's shell profile leaves it, the real lookup and the real check.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from conftest import clean_env, run_tool
from kernodeck_diagnostic.children import find_program
from kernodeck_diagnostic.facts import host, system

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX shell scripts")

TOOLS = ("nvcc", "nvidia-smi", "amd-smi", "rocm-smi")


def plant(folder: Path, marker: Path) -> None:
    """An executable of each tool's name in ``folder`` that notes it ran."""
    folder.mkdir(parents=True, exist_ok=True)
    for tool in TOOLS:
        path = folder / tool
        path.write_text(f"#!/bin/sh\necho {tool} >> '{marker}'\necho 'release 99.9'\n",
                        encoding="utf-8")
        path.chmod(0o755)


# One row per way a PATH names the working folder: (PATH with {sys} for the system's folders,
# the folder under the working folder the tools are planted in).
UNSAFE = [
    pytest.param(":{sys}", ".", id="leading-empty"),
    pytest.param("{sys}:", ".", id="trailing-empty"),
    pytest.param("/nonexistent::{sys}", ".", id="doubled-colon"),
    pytest.param(".:{sys}", ".", id="dot"),
    pytest.param("bin:{sys}", "bin", id="relative"),
]


@pytest.mark.parametrize(("path", "under"), UNSAFE)
def test_a_program_in_the_working_folder_is_never_found(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: str, under: str) -> None:
    work = tmp_path / "work"
    marker = tmp_path / "ran"
    plant(work / under, marker)
    monkeypatch.chdir(work)
    monkeypatch.setenv("PATH", path.format(sys="/usr/bin:/bin"))
    for tool in TOOLS:
        found = find_program(tool)
        assert found is None or not found.startswith(str(work)), found
    toolkit = system.cuda_toolkit({}, default_cuda_home=str(tmp_path / "no-cuda"))
    assert toolkit["version"] != "99.9"
    host.probe_host()
    assert not marker.exists(), marker.read_text(encoding="utf-8")


def test_the_same_folder_named_in_full_is_searched(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The guard of the rows above: the planted tools run when PATH names their folder in
    full, so their not running there is the lookup's doing."""
    work = tmp_path / "work"
    marker = tmp_path / "ran"
    plant(work, marker)
    monkeypatch.chdir(work)
    monkeypatch.setenv("PATH", f"{work}:/usr/bin:/bin")
    assert find_program("nvcc") == str(work / "nvcc")
    toolkit = system.cuda_toolkit({}, default_cuda_home=str(tmp_path / "no-cuda"))
    assert (toolkit["found_via"], toolkit["version"]) == ("PATH", "99.9")
    assert "nvcc" in marker.read_text(encoding="utf-8")


def test_the_check_runs_nothing_from_its_working_folder(pyz: Path, tmp_path: Path) -> None:
    """The real check, ``--host-check`` too, from a folder holding nvcc and nvidia-smi, with
    the empty PATH entry a shell profile's ``PATH=$PATH:$EXTRA`` leaves when EXTRA is unset."""
    work = tmp_path / "work"
    marker = tmp_path / "ran"
    plant(work, marker)
    env = clean_env({"PATH": os.environ.get("PATH", "/usr/bin:/bin") + ":"})
    result = run_tool(sys.executable, pyz, ["--device", "cpu", "--host-check", "--timeout", "30",
                                            "--output", str(tmp_path / "report.json")],
                      env=env, cwd=work)
    assert result.report is not None, result.stdout + result.stderr
    assert not marker.exists(), marker.read_text(encoding="utf-8")
    toolkit = result.report["system"]["cuda_toolkit"]
    assert toolkit is None or toolkit.get("version") != "99.9"

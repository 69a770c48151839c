"""The single-file download: reproducible, stdlib only, runs on every Python 3.9-3.13.

``python -m kernodeck_diagnostic`` runs on each of them too: the Pythons the README says were
tested are exactly these (``SUPPORTED_PYTHONS``), on Linux.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import (
    ROOT,
    SRC,
    SUPPORTED_PYTHONS,
    assert_valid_report,
    clean_env,
    required_pyenv_python,
    run_tool,
)
from kernodeck_diagnostic.worker.protocol import COMPANIONS


def test_two_builds_are_byte_identical(tmp_path: Path) -> None:
    digests = []
    # Two time zones far apart: ZIP stores local times, which must not leak into the archive.
    for name, zone in (("one.pyz", "UTC"), ("two.pyz", "Pacific/Kiritimati")):
        target = tmp_path / name
        subprocess.run([sys.executable, str(ROOT / "scripts" / "build_pyz.py"), "--output",
                        str(target)], check=True, timeout=60, capture_output=True,
                       env=dict(os.environ, TZ=zone))
        digests.append(hashlib.sha256(target.read_bytes()).hexdigest())
    assert digests[0] == digests[1]


def test_archive_holds_sources_and_their_bytecode(pyz: Path) -> None:
    with zipfile.ZipFile(pyz) as archive:
        names = archive.namelist()
        assert "__main__.py" in names
        assert "kernodeck_diagnostic/worker/stages.py" in names
        assert "kernodeck_diagnostic/report/schema/report-v1.json" in names
        # Each module's bytecode for the Python that built it, where an installed package has
        # it (zipimport never reads __pycache__: _zipapp.py does), checked against the source's
        # hash; no other bytecode, no compiled extension.
        tag = sys.implementation.cache_tag
        sources = [name for name in names if name.endswith(".py") and name != "__main__.py"]
        if sys.version_info < (3, 10):  # its zipimport compiles the front: the worker's alone
            sources = _worker_sources()
        bytecode = sorted(name for name in names
                          if name.endswith((".pyc", ".so")) or "__pycache__" in name)
        assert bytecode == sorted(_cached(name, tag) for name in sources)
        assert {archive.read(name)[4:8] for name in bytecode} == {b"\x03\0\0\0"}  # PEP 552
    assert pyz.read_bytes().startswith(b"#!/usr/bin/env python3\n")


def _cached(source: str, tag: str) -> str:
    folder, _, file = source.rpartition("/")
    return f"{folder}/__pycache__/{file[:-3]}.{tag}.pyc"


def test_a_release_holds_the_bytecode_each_python_loads(tmp_path: Path) -> None:
    """Built for several Pythons: each module's bytecode for each; for Python 3.9, whose
    zipimport never asks the entry point's importer for a module's code, the worker's alone
    (test_zipapp_imports.py runs both and counts what each compiles)."""
    old, new = required_pyenv_python("3.9"), required_pyenv_python("3.12")
    target = tmp_path / "release.pyz"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "build_pyz.py"), "--output",
                    str(target), "--bytecode-for", str(old), str(new)],
                   check=True, timeout=120, capture_output=True)
    with zipfile.ZipFile(target) as archive:
        names = archive.namelist()
    sources = [name for name in names if name.endswith(".py") and name != "__main__.py"]
    bytecode = sorted(name for name in names if name.endswith(".pyc"))
    assert bytecode == sorted([_cached(name, "cpython-312") for name in sources]
                              + [_cached(name, "cpython-39") for name in _worker_sources()])


def _worker_sources() -> list[str]:
    return [f"kernodeck_diagnostic/worker/{name}.py" for name in ("stages", *COMPANIONS)]


@pytest.mark.slow
@pytest.mark.parametrize("entry", ["zipapp", "python_m"])
@pytest.mark.parametrize("minor", SUPPORTED_PYTHONS)
def test_runs_on_every_supported_python(pyz: Path, tmp_path: Path, minor: str,
                                        entry: str) -> None:
    python = required_pyenv_python(minor)
    out = tmp_path / "diagnostic-cpu.json"
    args = ["--device", "cpu", "--output", str(out)]
    if entry == "zipapp":
        # -I: nothing of the user's site-packages, only the standard library and the archive.
        result = run_tool(python, ["-I", str(pyz)], args, env=clean_env())
    else:
        # -s: no user site-packages; the sources come from PYTHONPATH, as in a checkout.
        result = run_tool(python, ["-s", "-m", "kernodeck_diagnostic"], args,
                          env=clean_env({"PYTHONPATH": str(SRC)}), cwd=tmp_path)
    assert result.returncode == 3, result.stdout + result.stderr
    assert result.report is not None
    assert_valid_report(result.report)
    assert result.report["code"] == "TORCH_MISSING"
    assert result.report["runtime"]["python_version"].startswith(minor + ".")


@pytest.mark.slow
def test_runs_with_a_real_cpu_torch(cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    out = tmp_path / "diagnostic-cpu.json"
    result = run_tool(cpu_torch_python, pyz, ["--device", "cpu", "--output", str(out)])
    assert result.returncode == 0
    assert result.report is not None
    assert result.report["code"] == "CPU_CHECK_PASSED"


@pytest.mark.slow
def test_installs_nothing_into_the_python_it_runs_with(notorch_python: Path, pyz: Path) -> None:
    def installed() -> str:
        return subprocess.run([str(notorch_python), "-m", "pip", "list", "--format=freeze"],
                              capture_output=True, text=True, timeout=120, check=True).stdout

    before = installed()
    run_tool(notorch_python, pyz, ["--device", "cpu"])
    assert installed() == before

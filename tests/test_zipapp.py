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


def test_archive_holds_sources_and_the_workers_bytecode_alone(pyz: Path) -> None:
    with zipfile.ZipFile(pyz) as archive:
        names = archive.namelist()
    assert "__main__.py" in names
    assert "kernodeck_diagnostic/worker/stages.py" in names
    assert "kernodeck_diagnostic/report/schema/report-v1.json" in names
    # Bytecode: the worker's, for the Python that built it (checked against the sources' hash;
    # zipimport never reads __pycache__), and nothing else.
    tag = sys.implementation.cache_tag
    bytecode = sorted(name for name in names
                      if name.endswith((".pyc", ".so")) or "__pycache__" in name)
    assert bytecode == sorted(f"kernodeck_diagnostic/worker/__pycache__/{name}.{tag}.pyc"
                              for name in ("stages", *COMPANIONS))
    with zipfile.ZipFile(pyz) as archive:
        flags = archive.read(bytecode[0])[4:8]
    assert flags == b"\x03\0\0\0"  # PEP 552: hash-based, checked
    assert pyz.read_bytes().startswith(b"#!/usr/bin/env python3\n")



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

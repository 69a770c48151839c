"""--extensions with real torch builds: torchvision built for another torch (the real
"operator torchvision::nms does not exist"), the matching pair, and extensions of our own that
crash and hang at import, each named while the others are still checked."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import envs
from conftest import Result, clean_env
from library_fixtures import checked

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def mismatched_python() -> Path:
    """torch 2.13.0 (CPU) with torchvision 0.29.1, which declares torch>=2.14.0."""
    return envs.python_of(envs.torch_cpu_torchvision())


@pytest.fixture(scope="module")
def matching_python() -> Path:
    """torch 2.14.1 (CUDA 13.0) with torchvision 0.29.1, its own pair."""
    return envs.python_of(envs.torch_cuda_torchvision())


def check(python: Path, pyz: Path, tmp_path: Path, *args: str,
          env: dict[str, str] | None = None) -> Result:
    return checked(python, pyz, tmp_path, ["--device", "cpu", "--extensions", *args], env)


def by_name(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {entry["name"]: entry for entry in report["libraries"]["extensions"]}


def test_torchvision_built_for_another_torch(mismatched_python: Path, pyz: Path,
                                             tmp_path: Path) -> None:
    result = check(mismatched_python, pyz, tmp_path, "--timeout", "60")
    report = result.report
    assert report is not None
    assert (result.returncode, report["code"], report["stage"]) == (14, "EXTENSION_FAILED",
                                                                      "extensions")
    assert report["error"]["kind"] == "extension_failed"
    assert "operator torchvision::nms does not exist" in report["error"]["message"]
    torchvision = by_name(report)["torchvision"]
    assert (torchvision["version"], torchvision["requires_torch"],
            torchvision["requirement_met"], torchvision["status"]) == (
        "0.29.1", ">=2.14.0", False, "failed")
    assert report["libraries"]["torch_version"] == "2.13.0+cpu"
    found = {finding["id"]: finding for finding in report["findings"]}
    mismatch = found["EXTENSION_TORCH_MISMATCH"]
    assert mismatch["severity"] == "error"
    # Both versions named, and the command that installs the pair from torch's own index.
    assert "torchvision 0.29.1" in mismatch["summary"]
    assert "2.13.0" in mismatch["summary"]
    assert "torch>=2.14.0" in mismatch["summary"]
    assert ('"torch==2.13.0" "torchvision" --index-url https://download.pytorch.org/whl/cpu'
            in mismatch["next_action"])
    assert "EXTENSION_IMPORT_FAILED" not in found
    assert "EXTENSION_FAILED (exit 14) at stage extensions" in result.headline


def test_the_matching_pair_passes(matching_python: Path, pyz: Path, tmp_path: Path) -> None:
    result = check(matching_python, pyz, tmp_path, "--timeout", "90")
    report = result.report
    assert report is not None
    assert (result.returncode, report["code"]) == (0, "CPU_CHECK_PASSED"), result.stdout
    torchvision = by_name(report)["torchvision"]
    assert (torchvision["requirement_met"], torchvision["status"], torchvision["error"]) == (
        True, "passed", None)
    # The CUDA it was built for, read from the imported module: torch's own.
    assert torchvision["cuda"] == report["pytorch"]["cuda_build"] == "13.0"
    assert not [f for f in report["findings"] if f["id"].startswith("EXTENSION_")]


EXTENSIONS = {
    # name: the module's source
    "kd-ext-crashes": "import os\nos.abort()\n",
    "kd-ext-hangs": "import time\ntime.sleep(3600)\n",
    "kd-ext-works": "import torch\n__version__ = '1.0'\n",
}


def installed(site: Path, name: str, source: str, requires: str = "torch") -> None:
    module = name.replace("-", "_")
    (site / module).mkdir(parents=True)
    (site / module / "__init__.py").write_text(source, encoding="utf-8")
    info = site / f"{module}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n"
                                   f"Requires-Dist: {requires}\n", encoding="utf-8")
    (info / "top_level.txt").write_text(module + "\n", encoding="utf-8")


def running(marker: str) -> list[int]:
    """Processes whose command line holds ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_a_crashing_and_a_hanging_import_are_named_and_the_others_still_run(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    for name, source in EXTENSIONS.items():
        installed(site, name, source)
    # Not extensions: torch only through an extra, and no torch at all. Never imported.
    installed(site, "kd-optional", "raise SystemExit('imported')\n", "torch; extra == 'gpu'")
    installed(site, "kd-unrelated", "raise SystemExit('imported')\n", "numpy")
    env = clean_env({"PYTHONPATH": str(site)})
    result = check(cpu_torch_python, pyz, tmp_path, "--timeout", "60", env=env)
    report = result.report
    assert report is not None
    assert (result.returncode, report["code"]) == (14, "EXTENSION_FAILED")
    found = by_name(report)
    assert list(found) == list(EXTENSIONS)
    crashed, hung, works = (found[name] for name in EXTENSIONS)
    assert (crashed["status"], crashed["error"]["type"]) == ("failed", None)
    assert "ended its process (signal SIGABRT)" in crashed["error"]["message"]
    assert hung["status"] == "timeout"
    assert 2 <= hung["limit_s"] <= 20
    assert (works["status"], works["error"]) == ("passed", None)
    # The first failure is the error; the finding names the hanging one too.
    assert "kd-ext-crashes" in report["error"]["message"]
    evidence = " ".join(f for finding in report["findings"]
                        if finding["id"] == "EXTENSION_IMPORT_FAILED"
                        for f in finding["evidence"])
    assert "kd-ext-hangs 1.0" in evidence
    assert "did not finish within" in evidence
    assert result.elapsed_s < 60 + 10  # within --timeout, with the interpreter's start
    assert running("kd_ext_hangs") == [], "the hanging import's process outlived the check"
    assert os.path.isdir(site)  # nothing of the user's removed

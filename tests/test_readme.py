"""The README's first two commands are the ones a newcomer runs: they must work as written."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, clean_env

FIRST_COMMANDS = re.findall(r"```sh\n(.+?)\n```", (ROOT / "README.md").read_text(), re.S)[:2]


def test_ci_runs_exactly_the_readme_test_command() -> None:
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines()
          if line.strip() and not line.startswith(("#", "set ", "cd "))]
    assert ci == [FIRST_COMMANDS[1]]


@pytest.mark.slow
def test_first_command_installs_and_runs_a_real_cpu_check(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    shutil.copytree(ROOT, checkout, ignore=shutil.ignore_patterns(
        ".git", ".venv", "dist", "build", "*.egg-info", "__pycache__", ".*_cache"))
    completed = subprocess.run(["bash", "-c", FIRST_COMMANDS[0]], cwd=checkout,
                               capture_output=True, text=True, timeout=900,
                               env=clean_env(), stdin=subprocess.DEVNULL, check=False)
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    assert "PASSED CPU_CHECK_PASSED (exit 0) at stage compute" in completed.stdout
    report = json.loads((checkout / "diagnostic-cpu.json").read_text())
    assert report["execution"]["device"] == "cpu"
    assert report["execution"]["loss"] == 196

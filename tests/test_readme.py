"""The README's first two commands are the ones a newcomer runs: they must work as written, in
that order, in a fresh clone."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, clean_env, fresh_checkout

FIRST_COMMANDS = re.findall(r"```sh\n(.+?)\n```", (ROOT / "README.md").read_text(), re.S)[:2]


def test_ci_runs_exactly_the_readme_test_command() -> None:
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines()
          if line.strip() and not line.startswith(("#", "set ", "cd "))]
    assert ci == [FIRST_COMMANDS[1]]


def _run(argv: list[str], checkout: Path, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=checkout, capture_output=True, text=True, timeout=timeout,
                          env=clean_env(), stdin=subprocess.DEVNULL, check=False)


def _linted(checkout: Path) -> set[str]:
    """The files ruff checks in ``checkout``, as scripts/test runs it (the dev environment's)."""
    ruff = Path(sys.executable).parent / "ruff"
    shown = _run([str(ruff), "check", "--show-files"], checkout, 300)
    assert shown.returncode == 0, shown.stderr[-2000:]
    return {Path(name).relative_to(checkout).as_posix() for name in shown.stdout.splitlines()}


def _first_command(checkout: Path) -> subprocess.CompletedProcess[str]:
    return _run(["bash", "-c", FIRST_COMMANDS[0]], checkout)


@pytest.fixture(scope="module")
def first_command_run(tmp_path_factory: pytest.TempPathFactory,
                      ) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """A fresh clone with its own git history, and the README's first command run in it."""
    checkout = fresh_checkout(tmp_path_factory.mktemp("readme") / "checkout")
    for argv in (["git", "init", "-q"], ["git", "add", "-A"],
                 ["git", "-c", "user.name=readme", "-c", "user.email=readme@example.invalid",
                  "-c", "commit.gpgsign=false", "commit", "-q", "-m", "clone"]):
        subprocess.run(argv, cwd=checkout, check=True, capture_output=True, timeout=120)
    return checkout, _first_command(checkout)


@pytest.mark.slow
def test_first_command_installs_and_runs_a_real_cpu_check(
        first_command_run: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    checkout, completed = first_command_run
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    assert "PASSED CPU_CHECK_PASSED (exit 0) at stage compute" in completed.stdout
    report = json.loads((checkout / "diagnostic-cpu.json").read_text())
    assert report["execution"]["device"] == "cpu"
    assert report["execution"]["loss"] == 196


@pytest.mark.slow
def test_the_second_command_works_after_the_first(
        first_command_run: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path) -> None:
    """The second command, ``scripts/test``, runs every test, this one included: run here, it
    would run itself. So this checks what it needs of a checkout where the first command ran
    (which used to fail: the copy made by the test above carried the first run's
    ``diagnostic-cpu.json``, and the first command, rightly, refused to overwrite it):

    - git sees nothing new: the venv, the build folders and the report are ignored, so a copy
      of the checkout made the way the tests make one is a fresh clone again, in which the
      first command passes once more (the test above, as ``scripts/test`` runs it there);
    - its lint and its test collection see the tree of a clone, not the venv's packages.
    """
    checkout, first = first_command_run
    assert first.returncode == 0, first.stderr[-2000:]
    assert (checkout / "diagnostic-cpu.json").is_file()
    assert (checkout / ".venv").is_dir()
    status = _run(["git", "status", "--porcelain", "--untracked-files=all"], checkout, 120)
    assert status.returncode == 0
    assert status.stdout == ""

    again = fresh_checkout(tmp_path / "again", checkout)
    assert not (again / "diagnostic-cpu.json").exists()
    assert not (again / ".venv").exists()
    clean_lint = _linted(again)
    completed = _first_command(again)
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    assert "PASSED CPU_CHECK_PASSED (exit 0) at stage compute" in completed.stdout

    assert _linted(checkout) == clean_lint
    collected = _run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                      "-p", "no:cacheprovider"], checkout, 300)
    assert collected.returncode == 0, collected.stdout[-2000:] + collected.stderr[-2000:]
    nodes = [line for line in collected.stdout.splitlines() if "::" in line]
    assert nodes
    assert [node for node in nodes if not node.startswith("tests/")] == []

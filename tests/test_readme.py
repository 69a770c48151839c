"""The README as a newcomer meets it: what the tool is for, then two commands that work as
written in a fresh clone, then every other command block, each run as written, in that order,
in the same clone (``test_every_command_block_runs_as_written``).

Nothing is stubbed: the README installs the tool from the clone itself (``pip install ... .``)
and torch and NumPy from the package index this machine is given, so no block names an index
install of the tool that no index here could serve. One block is not run by these tests: the
second command, ``scripts/test``, which runs them (CI runs exactly it, ``.ci/run``).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, clean_env, fresh_checkout

README = (ROOT / "README.md").read_text(encoding="utf-8")
# Every command block, in order: its language (sh or python) and its text.
BLOCKS = re.findall(r"^```(sh|python)\n(.*?)^```", README, re.M | re.S)
FIRST_COMMANDS = [text.strip() for _, text in BLOCKS[:2]]
# A command's own comment may say the status it ends with here (`# exit 5 here`); else 0.
SAYS_EXIT = re.compile(r"#.*\bexit (\d+)\b")
# The pages the README's long sections moved to: each opens with the example a user copies.
MOVED_PAGES = ("check.md", "compare-summarize.md", "architecture.md", "development.md")


def test_the_readme_says_what_the_tool_is_for_then_the_two_commands() -> None:
    lines = README.splitlines()
    assert len(lines) < 200  # the map; the rest is in docs/
    before = README.split("```", 1)[0]
    assert "finds the **first\nlayer that fails**" in before  # what it is for, first
    assert [language for language, _ in BLOCKS[:2]] == ["sh", "sh"]
    assert "pip install torch==2.13.0 numpy ." in FIRST_COMMANDS[0]  # NumPy: a clean first run
    assert FIRST_COMMANDS[1] == "scripts/test"
    # No index serves the tool here: the README installs it from the clone, never by name.
    assert re.search(r"pip install [^\n`&;|]*kernodeck-diagnostic", README) is None


def test_the_pages_the_readme_sends_to_exist_and_open_with_an_example() -> None:
    named = set(re.findall(r"`docs/([a-z-]+\.md)`", README))
    assert set(MOVED_PAGES) <= named
    for page in named:
        text = (ROOT / "docs" / page).read_text(encoding="utf-8")
        if page in MOVED_PAGES:
            title, rest = text.split("\n", 1)
            assert title.startswith("# ")
            assert rest.lstrip("\n").startswith("```sh\n"), page


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


def _script(blocks: list[tuple[str, str]], marks: Path) -> tuple[str, list[tuple[str, int]]]:
    """One bash script running ``blocks`` as a user types them in one terminal, in order (what
    a block changes, such as the venv activated, holds for the next): each command, then its
    exit status noted in ``marks``. The commands with the status each must end with."""
    lines = [f"kd_mark() {{ echo \"$1 $2\" >> '{marks}'; }}"]
    expected: list[tuple[str, int]] = []
    for language, text in blocks:
        if language == "python":  # pasted into the venv's Python
            commands = [f"python - <<'KD_PYTHON'\n{text}KD_PYTHON"]
        else:
            commands = [command for command in text.replace("\\\n", " ").splitlines()
                        if command.strip()]
        for command in commands:
            said = SAYS_EXIT.search(command) if language == "sh" else None
            expected.append((command, int(said.group(1)) if said else 0))
            lines += [command, f"kd_mark {len(expected) - 1} $?"]
    return "\n".join(lines) + "\n", expected


@pytest.mark.slow
def test_every_command_block_runs_as_written(
        first_command_run: tuple[Path, subprocess.CompletedProcess[str]],
        tmp_path: Path) -> None:
    """After the first command (``first_command_run``), every other block of the README, in
    order, in that clone: each command ends with the status the README says (0 unless its own
    comment names another), and does what the README says it does."""
    checkout, first = first_command_run
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-2000:]
    marks = tmp_path / "marks"
    script, expected = _script(BLOCKS[2:], marks)
    completed = _run(["bash", "--noprofile", "--norc", "-c", script], checkout, 1500)
    said = completed.stdout[-6000:] + completed.stderr[-6000:]
    statuses = [int(line.split()[1]) for line in marks.read_text().splitlines()]
    assert [(command, status) for (command, _), status in zip(expected, statuses)] == \
        expected, said
    assert len(statuses) == len(expected), said

    def report(name: str) -> dict[str, object]:
        data: dict[str, object] = json.loads((checkout / name).read_text())
        return data

    assert report("diagnostic-project.json")["code"] == "CPU_CHECK_PASSED"
    assert report("diagnostic-gpu.json")["code"] == "GPU_BACKEND_ABSENT"  # a CPU-only torch
    out = completed.stdout
    assert "PASSED CPU_CHECK_PASSED (exit 0) at stage collective" in out  # rank 0's, under torchrun
    # The project's check, and the single file's (the first command's is the fixture's).
    assert out.count("PASSED CPU_CHECK_PASSED (exit 0) at stage compute") == 2
    assert "**APROVADO** `CPU_CHECK_PASSED` (código de saída 0)" in out  # markdown, in pt
    assert "CPU_CHECK_PASSED 0 True" in out  # the Python API's block
    # resume-check's default stop is a hard one, and its verdict line names it
    assert "RESUME OK after a stop by SIGKILL: nothing lost, nothing redone" in out
    assert "batch: 1, 2, 4, 8 passed (values between were not tried); no failure up to 8" in out
    attempts = [json.loads(path.read_text()) for path in (checkout / "runs").glob("*/attempt.json")]
    assert [attempt["status"] for attempt in attempts] == ["completed"]  # the Trial's block
    # What the commands wrote is ignored: the clone stays a clean one for scripts/test.
    status = _run(["git", "status", "--porcelain", "--untracked-files=all"], checkout, 120)
    assert (status.returncode, status.stdout) == (0, "")

"""The check's output file and terminal as people break them (issue 9, items 9 and 13).

Every run is the single-file download under the real CPU build of torch, with the streams made
for real: a stdout closed before the start (fd 1 closed, then exec, as `>&-` does), stdout on
/dev/full, a report file on a real full file system, a real FIFO, a real pseudo-terminal.
"""

from __future__ import annotations

import json
import os
import pty
import re
import stat
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pytest

from conftest import (
    RUN_TIMEOUT_S,
    SRC,
    assert_valid_report,
    clean_env,
    read_terminal,
    small_tmpfs,
)
from kernodeck_diagnostic.report.writer import OutputError, write_new

# `>&-` without a shell: the launcher closes fd 1 and becomes the tool, which starts with no
# stdout at all (Python then sets sys.stdout to None).
CLOSE_STDOUT_THEN_EXEC = "import os, sys; os.close(1); os.execv(sys.argv[1], sys.argv[1:])"


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str

    @property
    def stderr_lines(self) -> list[str]:
        return self.stderr.splitlines()


def _run(command: Sequence[str], *, stdout: IO[Any] | int, cwd: Path | None = None,
         env: dict[str, str] | None = None) -> Run:
    completed = subprocess.run(list(command), stdin=subprocess.DEVNULL, stdout=stdout,
                               stderr=subprocess.PIPE, cwd=cwd, env=env or clean_env(),
                               timeout=RUN_TIMEOUT_S, check=False)
    out = completed.stdout.decode() if isinstance(completed.stdout, bytes) else ""
    return Run(completed.returncode, out, completed.stderr.decode())


def _tool(python: Path, pyz: Path, *args: str) -> list[str]:
    return [str(python), str(pyz), "--device", "cpu", *args]


def _saved(path: Path) -> dict[str, Any]:
    report: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    assert_valid_report(report)
    return report


def _no_crash(run: Run) -> None:
    assert "Traceback" not in run.stderr
    assert "Exception ignored" not in run.stderr  # the interpreter's own flush at exit
    assert "internal error" not in run.stderr


# -- item 9: a failing stdout never loses the report file ------------------------------------

@pytest.mark.slow
def test_closed_stdout_still_saves_the_report_and_exits_15(cpu_torch_python: Path, pyz: Path,
                                                           tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    run = _run([sys.executable, "-c", CLOSE_STDOUT_THEN_EXEC,
                *_tool(cpu_torch_python, pyz, "--output", str(out))], stdout=subprocess.DEVNULL)
    _no_crash(run)
    assert run.returncode == 15, run.stderr
    assert _saved(out)["code"] == "CPU_CHECK_PASSED"  # the file holds the check's own verdict
    assert run.stderr_lines == [
        "kernodeck-diagnostic: the report was saved to the file asked for, but could not be "
        "written to stdout: it is closed (exit 15, STDOUT_WRITE_FAILED)."]


@pytest.mark.slow
def test_closed_stdout_without_a_file_is_said_not_an_internal_error(
        cpu_torch_python: Path, pyz: Path) -> None:
    run = _run([sys.executable, "-c", CLOSE_STDOUT_THEN_EXEC,
                *_tool(cpu_torch_python, pyz, "--format", "json")], stdout=subprocess.DEVNULL)
    _no_crash(run)
    assert run.returncode == 15, run.stderr
    assert run.stderr_lines == [
        "kernodeck-diagnostic: the result could not be written to stdout: it is closed "
        "(exit 15, STDOUT_WRITE_FAILED)."]


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_stdout_on_a_full_device_still_saves_the_report(cpu_torch_python: Path, pyz: Path,
                                                        tmp_path: Path, fmt: str) -> None:
    out = tmp_path / "r.json"
    with open("/dev/full", "wb") as full:
        run = _run(_tool(cpu_torch_python, pyz, "--format", fmt, "--output", str(out)),
                   stdout=full)
    _no_crash(run)
    assert run.returncode == 15, run.stderr
    assert _saved(out)["code"] == "CPU_CHECK_PASSED"
    assert len(run.stderr_lines) == 1
    assert "saved to the file asked for" in run.stderr
    assert "no space left on the device (exit 15, STDOUT_WRITE_FAILED)" in run.stderr


@pytest.mark.slow
def test_stdout_on_a_full_device_in_portuguese(cpu_torch_python: Path, pyz: Path) -> None:
    with open("/dev/full", "wb") as full:
        run = _run(_tool(cpu_torch_python, pyz, "--lang", "pt"), stdout=full)
    _no_crash(run)
    assert run.returncode == 15
    assert run.stderr_lines == [
        "kernodeck-diagnostic: o resultado não pôde ser escrito na saída padrão: não há espaço "
        "disponível no dispositivo (código de saída 15, STDOUT_WRITE_FAILED)."]


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A real file system with no page free: a new file can be created, not written."""
    with small_tmpfs(tmp_path, free_pages=0) as mount_point:
        yield mount_point


# -- item 13 (c): the first line says the exit status the process ends with -------------------

@pytest.mark.slow
def test_a_report_not_saved_is_said_in_the_first_line(cpu_torch_python: Path, pyz: Path,
                                                      full_disk: Path) -> None:
    out = full_disk / "r.json"
    run = _run(_tool(cpu_torch_python, pyz, "--output", str(out)), stdout=subprocess.PIPE)
    _no_crash(run)
    assert run.returncode == 12
    # The check's verdict stays; the exit status and its reason are the process's.
    assert run.stdout.splitlines()[0] == (
        "PASSED CPU_CHECK_PASSED (exit 12, OUTPUT_WRITE_FAILED) at stage compute")
    assert run.stderr_lines == ["kernodeck-diagnostic: the report was NOT saved: no space left "
                                "on the device (exit 12, OUTPUT_WRITE_FAILED)."]
    assert not out.exists()


@pytest.mark.slow
def test_file_and_stdout_both_failing_exit_12_and_say_both(cpu_torch_python: Path, pyz: Path,
                                                           full_disk: Path) -> None:
    out = full_disk / "r.json"
    with open("/dev/full", "wb") as full:
        run = _run(_tool(cpu_torch_python, pyz, "--output", str(out)), stdout=full)
    _no_crash(run)
    assert run.returncode == 12  # the report itself is lost: that outranks the terminal
    assert run.stderr_lines == [
        "kernodeck-diagnostic: the report was NOT saved: no space left on the device "
        "(exit 12, OUTPUT_WRITE_FAILED).",
        "kernodeck-diagnostic: the result could not be written to stdout: no space left on the "
        "device (exit 12, OUTPUT_WRITE_FAILED)."]
    assert not out.exists()


# -- item 13 (a): --output - ----------------------------------------------------------------

@pytest.mark.slow
def test_output_dash_is_refused_and_points_to_format_json(cpu_torch_python: Path, pyz: Path,
                                                          tmp_path: Path) -> None:
    run = _run(_tool(cpu_torch_python, pyz, "--output", "-"), stdout=subprocess.PIPE,
               cwd=tmp_path)
    assert run.returncode == 2
    assert run.stdout == ""
    assert run.stderr_lines == [
        "kernodeck-diagnostic: error: --output - would create a file named '-': for the JSON "
        "report on stdout use --format json; for a file really named '-' write ./- "
        "(see --help)"]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_a_file_really_named_dash_is_written_as_dot_slash(cpu_torch_python: Path, pyz: Path,
                                                          tmp_path: Path) -> None:
    run = _run(_tool(cpu_torch_python, pyz, "--output", "./-"), stdout=subprocess.PIPE,
               cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert _saved(tmp_path / "-")["code"] == "CPU_CHECK_PASSED"


@pytest.mark.slow
def test_help_documents_the_output_rules(cpu_torch_python: Path, pyz: Path) -> None:
    run = _run([str(cpu_torch_python), str(pyz), "--help"], stdout=subprocess.PIPE)
    assert run.returncode == 0
    flat = " ".join(run.stdout.split())
    assert "STDOUT_WRITE_FAILED 15" in flat
    assert "--output - is refused (exit 2): the JSON report on stdout is --format json" in flat
    assert "--output FILE is written first, then stdout" in flat
    assert "with TERM=dumb the progress line on stderr uses no escape sequences" in flat


# -- item 13 (b): a device or a FIFO is named for what it is ---------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("kind", ["device", "fifo"])
def test_a_device_or_a_fifo_is_not_called_an_existing_file(cpu_torch_python: Path, pyz: Path,
                                                           tmp_path: Path, kind: str) -> None:
    if kind == "device":
        target, said = "/dev/full", "that name is a device, not a regular file"
    else:
        fifo = tmp_path / "pipe"
        os.mkfifo(fifo)
        target, said = str(fifo), "that name is a named pipe (FIFO), not a regular file"
    run = _run(_tool(cpu_torch_python, pyz, "--output", target), stdout=subprocess.PIPE)
    assert run.returncode == 12
    assert run.stdout == ""
    assert len(run.stderr_lines) == 1
    assert said in run.stderr
    assert "already exists" not in run.stderr
    assert str(tmp_path) not in run.stderr
    if kind == "fifo":
        assert stat.S_ISFIFO(os.lstat(target).st_mode)  # untouched, still a FIFO


def test_at_write_time_too_a_device_or_a_fifo_is_named(tmp_path: Path) -> None:
    """Appearing during the check: the exclusive create refuses it, without opening it (a FIFO
    with no reader would block an open for writing forever)."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for target, key in ((str(fifo), "output.reason.exists_fifo"),
                        ("/dev/full", "output.reason.exists_device"),
                        ("/dev/null", "output.reason.exists_device")):
        with pytest.raises(OutputError) as raised:
            write_new(target, b"{}\n")
        assert raised.value.key == key
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


# -- item 13 (d): a dumb terminal receives no escape sequence --------------------------------

@pytest.mark.slow
def test_a_dumb_terminal_receives_no_escape_sequence(cpu_torch_python: Path, pyz: Path) -> None:
    leader, follower = pty.openpty()
    with subprocess.Popen(_tool(cpu_torch_python, pyz), stdin=subprocess.DEVNULL,
                          stdout=follower, stderr=follower,
                          env=clean_env({"TERM": "dumb"})) as process:
        process.wait(RUN_TIMEOUT_S)
    os.close(follower)
    seen = read_terminal(leader)
    assert process.returncode == 0, seen
    assert b"\x1b" not in seen  # no colour, no erase-line: nothing a dumb terminal cannot show
    # The progress line is still there, drawn with a carriage return and blanked with spaces.
    assert re.search(rb"\r(starting Python|importing torch|reading the build|computing)"
                     rb"\.\.\. \d+\.\d s / 30 s", seen), seen
    assert re.search(rb"\r {20,}\r", seen), seen
    assert b"PASSED CPU_CHECK_PASSED (exit 0) at stage compute" in seen


# -- the other commands: a failing stdout is the user's device, said as the check says it -------

RECORDED = Path(__file__).parent / "snapshots"


# resume-check's application: five records through an OutputLedger, skipping those done.
LEDGER_APP = """
import sys, time
from kernodeck_diagnostic import OutputLedger
ids = [f"doc-{i}" for i in range(5)]
ledger = OutputLedger(sys.argv[1], expected_ids=ids)
done = ledger.done_ids()
for item in ids:
    if item not in done:
        time.sleep(0.2)
        ledger.append(item, {"length": len(item)})
"""


def _command(pyz: Path, name: str, tmp_path: Path) -> tuple[list[str], int, dict[str, str]]:
    """A real run of each command that prints a result, its exit status when stdout works, and
    its environment."""
    tool = [sys.executable, str(pyz), name]
    if name == "summarize":
        return [*tool, str(RECORDED)], 22, clean_env()  # SUMMARY_SOME_FAILED
    if name == "compare":
        return [*tool, str(RECORDED / "gpu_pass.json"), str(RECORDED / "out_of_memory.json")], \
            21, clean_env()  # a pass that fails: COMPARE_REGRESSION
    if name == "ramp":
        return [*tool, "--out", str(tmp_path / "ramp"), "--axis", "n", "--start", "1", "--stop",
                "2", "--value-from-env", "--", sys.executable, "-c", "pass"], 0, clean_env()
    app, ledger = tmp_path / "app.py", tmp_path / f"ledger-{len(list(tmp_path.iterdir()))}.jsonl"
    app.write_text(LEDGER_APP, encoding="utf-8")
    return ([*tool, "--ledger", str(ledger), "--stop-after-records", "2", "--", sys.executable,
             str(app), str(ledger)], 0, clean_env({"PYTHONPATH": str(SRC)}))


@pytest.mark.parametrize("name", ["summarize", "compare", "ramp", "resume-check"])
@pytest.mark.parametrize("broken", ["full", "closed"])
def test_the_other_commands_say_a_failing_stdout_as_the_check_does(pyz: Path, tmp_path: Path,
                                                                   name: str,
                                                                   broken: str) -> None:
    """Before: 'internal error (OSError: [Errno 28] No space left on device); please report it'
    and exit 1 on /dev/full (our bug, said the tool: the user's full device); and with stdout
    closed, the result lost without a word."""
    command, usual, env = _command(pyz, name, tmp_path)
    assert _run(command, stdout=subprocess.DEVNULL, env=env).returncode == usual
    command, _, env = _command(pyz, name, tmp_path)  # resume-check: a ledger not there yet
    if broken == "full":
        with open("/dev/full", "wb") as full:
            run = _run(command, stdout=full, env=env)
        reason = "no space left on the device"
    else:
        run = _run([sys.executable, "-c", CLOSE_STDOUT_THEN_EXEC, *command],
                   stdout=subprocess.DEVNULL, env=env)
        reason = "it is closed"
    _no_crash(run)
    assert run.returncode == 15, run.stderr
    said = [line for line in run.stderr_lines if "stdout" in line]
    assert said == [f"kernodeck-diagnostic {name}: the result could not be written to stdout: "
                    f"{reason} (exit 15, STDOUT_WRITE_FAILED)."]
    assert "internal error" not in run.stderr
    if name == "ramp":  # the record is kept, and said to be
        assert (tmp_path / "ramp" / "ramp.json").exists()
        assert any("ramp.json" in line for line in run.stderr_lines)


def test_a_reader_that_left_is_still_no_failure_for_the_other_commands(pyz: Path) -> None:
    """A pipe whose reader is gone before the first write (| head that ended): EPIPE."""
    command, usual, env = _command(pyz, "summarize", Path())
    read_end, write_end = os.pipe()
    os.close(read_end)
    with open(write_end, "wb") as gone:
        run = _run(command, stdout=gone, env=env)
    _no_crash(run)
    assert run.returncode == usual
    assert run.stderr == ""

"""Every command ends alike: the check, ``compare`` and ``summarize`` run through one runner.

Each command runs as a user runs it (the zipapp, in a real interpreter) on real reports recorded
from real runs (tests/snapshots/CASE.json): a usage error is one line with what was typed redacted
(exit 2); a signal sent to a real running process stops it with one line and exit 130, 143 or
129; ``--version`` prints the tool's version (exit 0); the JSON of ``compare`` and ``summarize``
starts with the version of its layout. A bug of the tool cannot be made to happen for real, so
it is made in-process (the function a command calls replaced by one that raises) to see that
``--debug`` shows its traceback and that only ``--debug`` does. In-process too: ``main(argv)`` of
every command returns its status, never raises ``SystemExit``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from conftest import ROOT, SRC, clean_env, pipe_full, run_tool, schema
from kernodeck_diagnostic import TOOL_NAME, __version__, cli
from kernodeck_diagnostic.commands import check, compare, summarize
from kernodeck_diagnostic.report.codes import CODES, VERDICTS, classify
from kernodeck_diagnostic.report.load import judge
from reliability.harness import recorded_pids, tagged_env, wait_for

RECORDED = ROOT / "tests" / "snapshots"  # CASE.json: see tests/test_snapshots.py
SECRET = "planted-secret-4f9a1c"  # noqa: S105 - HF_TOKEN's value: never echoed back
COMMANDS = ("check", "compare", "summarize")
PROG = {"check": TOOL_NAME, "compare": f"{TOOL_NAME} compare",
        "summarize": f"{TOOL_NAME} summarize"}
MAINS: dict[str, Callable[[Sequence[str]], int]] = {
    "check": check.main, "compare": compare.main, "summarize": summarize.main}
ENGLISH = {"LC_ALL": "C.UTF-8"}
QUICK_S = 30
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
linux_only = pytest.mark.skipif(not Path("/proc").is_dir(), reason="F_GETPIPE_SZ, /proc")


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two real reports: a pass and an out-of-memory."""
    folder = tmp_path_factory.mktemp("reports")
    for name in ("gpu_pass", "out_of_memory"):
        (folder / f"{name}.json").write_bytes((RECORDED / f"{name}.json").read_bytes())
    return folder


def arguments(command: str, reports: Path) -> list[str]:
    """What a command needs besides options: the check nothing, compare two reports,
    summarize a folder."""
    if command == "compare":
        return ["compare", str(reports / "gpu_pass.json"), str(reports / "out_of_memory.json")]
    if command == "summarize":
        return ["summarize", str(reports)]
    return []


# -- usage errors ----------------------------------------------------------------------------------

@pytest.mark.parametrize("command", COMMANDS)
def test_a_usage_error_is_one_line_that_does_not_echo_a_secret(pyz: Path, reports: Path,
                                                               command: str) -> None:
    """compare and summarize echoed ``--bogus=<the token's value>`` verbatim; the check did not.
    Now all three redact it the same way."""
    result = run_tool(sys.executable, pyz, [*arguments(command, reports), f"--bogus={SECRET}"],
                      env=clean_env({"HF_TOKEN": SECRET, **ENGLISH}))
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert result.stderr == (f"{PROG[command]}: error: unrecognized arguments: "
                             f"--bogus=<redacted> (see --help)\n")


# -- a bug of the tool: one line, the traceback only with --debug ---------------------------------

def _broken(*args: object, **kwargs: object) -> None:
    raise RuntimeError(f"a bug near {SECRET}")


@pytest.fixture
def bug(monkeypatch: pytest.MonkeyPatch) -> None:
    """The function each command calls first for its work raises: a bug of the tool."""
    monkeypatch.setenv("HF_TOKEN", SECRET)
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    monkeypatch.setattr(check, "run", _broken)
    monkeypatch.setattr(compare, "load", _broken)
    monkeypatch.setattr(summarize, "collect", _broken)


@pytest.mark.usefixtures("bug")
@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("debug", [False, True], ids=["plain", "debug"])
def test_a_bug_is_one_line_and_debug_adds_its_traceback(
        reports: Path, capsys: pytest.CaptureFixture[str], command: str, debug: bool) -> None:
    """compare and summarize refused --debug as an unknown argument (exit 2)."""
    argv = [*arguments(command, reports)[1:], *(["--device", "cpu"] if command == "check" else [])]
    code = MAINS[command]([*argv, *(["--debug"] if debug else [])])
    out, err = capsys.readouterr()
    assert code == 1, err
    assert out == ""
    lines = err.splitlines()
    assert lines[-1] == (f"{PROG[command]}: internal error (RuntimeError: a bug near <redacted>); "
                         f"please report it with the command you ran.")
    if debug:
        assert lines[0] == "Traceback (most recent call last):", err
        assert "RuntimeError" in lines[-2]
    else:
        assert len(lines) == 1, err


# -- --version and --help: exit 0, from main() and from the zipapp ------------------------------

@pytest.mark.parametrize("command", COMMANDS)
def test_main_returns_0_for_version_and_help(capsys: pytest.CaptureFixture[str],
                                             command: str) -> None:
    """cli.main(["--version"]) raised SystemExit; compare.main(["--version"]) was exit 2."""
    assert MAINS[command](["--version"]) == 0
    assert capsys.readouterr().out == f"{TOOL_NAME} {__version__}\n"
    name = [] if command == "check" else [command]
    assert cli.main([*name, "--version"]) == 0
    assert capsys.readouterr().out == f"{TOOL_NAME} {__version__}\n"
    assert cli.main([*name, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: {PROG[command]} ")
    assert "--debug" in out


@pytest.mark.parametrize("command", COMMANDS)
def test_version_from_the_zipapp(pyz: Path, reports: Path, command: str) -> None:
    name = arguments(command, reports)[:1]
    result = run_tool(sys.executable, pyz, [*name, "--version"])
    assert (result.returncode, result.stdout, result.stderr) == (
        0, f"{TOOL_NAME} {__version__}\n", "")


# -- signals: a real running process, stopped by a real signal ------------------------------------

@pytest.fixture(scope="module")
def busy_inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """For each command that reads reports, arguments that write far more than a pipe holds:
    two thousand reports to summarize, two reports that differ in three thousand warnings."""
    folder = tmp_path_factory.mktemp("busy")
    report = json.loads((RECORDED / "gpu_pass.json").read_text(encoding="utf-8"))
    many = folder / "many"
    many.mkdir()
    for index in range(2000):
        (many / f"node-{index:04d}.json").write_text(json.dumps(report), encoding="utf-8")
    pair = []
    for side in ("a", "b"):
        report["warnings"] = [{"stage": "import", "category": "UserWarning",
                               "message": f"warning {index} seen in run {side}"}
                              for index in range(3000)]
        pair.append(folder / f"{side}.json")
        pair[-1].write_text(json.dumps(report), encoding="utf-8")
    # summarize's default output is a screenful (issue 46): its export writes a line per report.
    return {"summarize": ["summarize", "--format", "jsonl", str(many)],
            "compare": ["compare", *map(str, pair)]}


@contextlib.contextmanager
def running(command: str, busy_inputs: dict[str, list[str]], pyz: Path,
            tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """The command, started as a user starts it and busy for real: the check on a GPU that
    hangs in synchronize (the fake torch: its worker ignores SIGINT and SIGTERM and forks a
    child), compare and summarize blocked writing to a pipe nobody reads."""
    if command == "check":
        pids = tmp_path / "pids"
        env, _ = tagged_env("hang_in_synchronize", KD_FAKE_TORCH_PIDS=str(pids))
        argv = ["--timeout", "60"]
    else:
        env, argv = clean_env(ENGLISH), busy_inputs[command]
    env.update(ENGLISH)
    process = subprocess.Popen([sys.executable, str(pyz), *argv], env=env,
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    try:
        if command == "check":
            wait_for(lambda: len(recorded_pids(pids)) >= 2, QUICK_S, "the GPU to hang")
        else:
            wait_for(lambda: pipe_full(process.stdout), QUICK_S, "blocked on a full pipe")
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate()
        for pid in recorded_pids(tmp_path / "pids"):  # a worker left behind, if the test failed
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def _interrupted(process: subprocess.Popen[bytes]) -> tuple[int, str]:
    """How the process ended after a signal: its status and stderr (stdout is not read)."""
    try:
        process.wait(timeout=QUICK_S)
    except subprocess.TimeoutExpired:
        pytest.fail("the command did not end after the signal")
    assert process.stderr is not None
    return process.returncode, process.stderr.read().decode()


SIGNALS = [signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", signal.SIGTERM)]
EXITS = {signal.SIGINT: 130, signal.SIGTERM: 143, getattr(signal, "SIGHUP", 0): 129}


@posix_only
@linux_only
@pytest.mark.slow
@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
@pytest.mark.parametrize("command", COMMANDS)
def test_a_signal_stops_every_command_alike(pyz: Path, tmp_path: Path,
                                            busy_inputs: dict[str, list[str]], command: str,
                                            signum: int) -> None:
    with running(command, busy_inputs, pyz, tmp_path) as process:
        process.send_signal(signum)
        status, stderr = _interrupted(process)
    name = signal.Signals(signum).name
    said = (f"interrupted by {name}; the check was stopped and no report was written."
            if command == "check" else f"interrupted by {name}.")
    assert (status, stderr) == (EXITS[signum], f"{PROG[command]}: {said}\n")


@posix_only
@linux_only
@pytest.mark.parametrize("signum", [signal.SIGTERM, getattr(signal, "SIGHUP", signal.SIGTERM)],
                         ids=lambda s: signal.Signals(s).name)
def test_a_program_calling_a_commands_main_gets_the_same_ending(
        busy_inputs: dict[str, list[str]], signum: int) -> None:
    """``summarize.main`` called by another program (not through the command line's dispatcher)
    had no signal guard: SIGTERM or SIGHUP killed the process. Now: one line, 143 or 129."""
    program = ("import sys\nfrom kernodeck_diagnostic.commands import summarize\n"
               "sys.exit(summarize.main(sys.argv[1:]))\n")
    env = clean_env({"PYTHONPATH": str(SRC), **ENGLISH})
    process = subprocess.Popen([sys.executable, "-c", program, *busy_inputs["summarize"][1:]],
                               env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    try:
        wait_for(lambda: pipe_full(process.stdout), QUICK_S, "blocked on a full pipe")
        process.send_signal(signum)
        status, stderr = _interrupted(process)
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate()
    assert (status, stderr) == (EXITS[signum], f"{PROG['summarize']}: interrupted by "
                                               f"{signal.Signals(signum).name}.\n")


# -- versions of what is written, and what a report can carry --------------------------------------

def test_compare_and_summarize_json_start_with_their_layouts_version(pyz: Path,
                                                                     reports: Path) -> None:
    # A pass that fails (COMPARE_REGRESSION); a report failed (SUMMARY_SOME_FAILED).
    for command, key, status in (("compare", "compare_version", 21),
                                 ("summarize", "summarize_version", 22)):
        result = run_tool(sys.executable, pyz, [*arguments(command, reports), "--format", "json"])
        assert result.returncode == status, result.stderr
        data = json.loads(result.stdout)
        assert next(iter(data)) == key
        assert data[key] == 1
        # Not a report: a reader of reports refuses it rather than taking it for one.
        assert judge(data, "output.json").reason == "not_a_report"


def test_a_report_carries_only_verdicts() -> None:
    """The schema allowed INTERRUPTED, USAGE_ERROR... (exit statuses of the process, never a
    report's code) and COLLECTIVE_FAILED (a check that does not exist yet)."""
    properties = schema()["properties"]
    assert properties["code"]["enum"] == list(VERDICTS)
    assert {name for name, code in CODES.items() if code.kind == "process"} == {
        "INTERNAL_ERROR", "USAGE_ERROR", "OUTPUT_WRITE_FAILED", "STDOUT_WRITE_FAILED",
        "INTERRUPTED"}
    # The other commands' verdicts: exit statuses of their commands, never a report's code.
    assert {code.command for name, code in CODES.items() if name not in VERDICTS
            and code.kind != "process"} == {"compare", "summarize", "ramp", "resume-check",
                                            "health-check"}
    block = next(choice for choice in properties["error"]["oneOf"] if "properties" in choice)
    kinds = block["properties"]["kind"]["enum"]
    for kind in [*kinds, "something new"]:
        for device in ("gpu", "cpu"):
            assert classify(device, {"kind": kind}).name in VERDICTS, kind
    interrupted = json.loads((RECORDED / "out_of_memory.json").read_text(encoding="utf-8"))
    interrupted.update(code="INTERRUPTED", exit_code=130)
    assert judge(interrupted, "old.json").reason == "not_a_report"


def test_help_names_every_exit_status_of_an_interrupt(capsys: pytest.CaptureFixture[str]) -> None:
    """--help listed INTERRUPTED as 130 only."""
    assert cli.main(["--help"]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert ["INTERRUPTED", "130/143/129"] in [row[:2] for row in rows]

"""The command line as a user meets it: arguments, help, version, entry points, terminal text."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from conftest import ROOT, clean_env, fake_gpu_env, read_terminal, run_tool
from kernodeck_diagnostic import __version__
from kernodeck_diagnostic.report.codes import CODES


@pytest.mark.parametrize(("args", "says"), [
    (["--timeout", "4"], "between 5 and 120"),
    (["--timeout", "121"], "between 5 and 120"),
    (["--timeout", "abc"], "not a number"),
    (["--timeout", "nan"], "between 5 and 120"),
    (["--device", "rocm"], "'cuda' device name"),
    (["--device", "hip"], "'cuda' device name"),
    (["--device", "tpu"], "must be gpu or cpu"),
    (["--device-index", "-1"], "0 or more"),
    (["--device-index", "one"], "not a whole number"),
    (["--no-such-flag"], "unrecognized arguments"),
    (["--output"], "expected one argument"),
    (["--devic", "cpu"], "unrecognized arguments"),  # no silent abbreviations
])
def test_bad_arguments_give_one_line_and_exit_2(pyz: Path, args: list[str], says: str) -> None:
    result = run_tool(sys.executable, pyz, args, env=fake_gpu_env("cuda_pass"))
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("kernodeck-diagnostic: error: ")
    assert says in lines[0]
    assert "Traceback" not in result.stderr


def test_timeout_bounds_are_inclusive(pyz: Path) -> None:
    for value in ("5", "120", "30.5"):
        result = run_tool(sys.executable, pyz, ["--timeout", value], env=fake_gpu_env("cuda_pass"))
        assert result.returncode == 0, (value, result.stderr)


def test_help_lists_every_result_code(pyz: Path) -> None:
    result = run_tool(sys.executable, pyz, ["--help"])
    assert result.returncode == 0
    for code in CODES.values():  # another command's verdicts are in that command's --help
        assert (f"{code.name} " in result.stdout) == (code.kind != "command")
    for flag in ("--device", "--device-index", "--timeout", "--output", "--host-check",
                 "--version"):
        assert flag in result.stdout


def test_each_commands_help_lists_its_exit_statuses(pyz: Path) -> None:
    """Before: summarize, ramp and resume-check said 1 for their negative verdict, the status of
    the tool's own failure, and listed no table."""
    for command in sorted({code.command for code in CODES.values() if code.command}):
        result = run_tool(sys.executable, pyz, [command, "--help"])
        assert result.returncode == 0, result.stderr
        for code in CODES.values():
            if code.command == command or code.name in ("INTERNAL_ERROR", "USAGE_ERROR"):
                row = f"  {code.name} "
                assert row in result.stdout, (command, code.name)
                assert f"{code.name}".ljust(26) + str(code.exit_code) in result.stdout


def test_the_top_level_help_lists_every_command(pyz: Path) -> None:
    """Before: only compare and summarize were named, in the description."""
    result = run_tool(sys.executable, pyz, ["--help"])
    assert result.returncode == 0
    after = result.stdout.split("\ncommands (the first argument; none runs the check):\n", 1)[1]
    listed = after.split("\n\n", 1)[0].splitlines()
    assert [line.split()[0] for line in listed] == [
        "(none)", "compare", "summarize", "ramp", "resume-check", "health-check"]
    assert all(len(line.split(None, 1)[1]) > 10 for line in listed)


@pytest.mark.parametrize(("typed", "meant"), [("sumarize", "summarize"), ("comapre", "compare"),
                                              ("resume_check", "resume-check"), ("ramps", "ramp")])
def test_a_misspelt_command_gets_did_you_mean(pyz: Path, typed: str, meant: str) -> None:
    """Before: "error: unrecognized arguments: sumarize"."""
    result = run_tool(sys.executable, pyz, [typed, "reports/"])
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (f"kernodeck-diagnostic: error: unknown command {typed!r}: did you "
                             f"mean {meant}? (see --help)\n")


def test_an_unknown_word_lists_the_commands_and_the_check_still_runs(pyz: Path) -> None:
    result = run_tool(sys.executable, pyz, ["frobnicate"])
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == ("kernodeck-diagnostic: error: unknown command 'frobnicate': the "
                             "commands are compare, summarize, ramp, resume-check, health-check, "
                             "or none for the check (see --help)\n")
    check = run_tool(sys.executable, pyz, ["--device", "cpu"], env=fake_gpu_env("cuda_pass"))
    assert check.returncode == 0, check.stderr


def on_terminal(pyz: Path, args: list[str], columns: int = 80,
                env: dict[str, str] | None = None) -> tuple[int, list[str]]:
    """The tool run as a user runs it in a terminal ``columns`` wide (a real pseudo-terminal
    for stdout and stderr): its exit status and the lines the terminal received."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    env = clean_env() if env is None else env
    for sized in ("COLUMNS", "LINES"):  # the terminal's own size, as argparse reads it
        env.pop(sized, None)
    with subprocess.Popen([sys.executable, str(pyz), *args], stdin=subprocess.DEVNULL,
                          stdout=follower, stderr=follower, env=env) as process:
        os.close(follower)
        seen = read_terminal(leader)  # read while it writes: a long output fills the terminal
        status = process.wait(60)
    return status, seen.decode().replace("\r\n", "\n").splitlines()


def test_the_help_on_a_terminal_says_what_the_tool_is_for_then_every_command(pyz: Path) -> None:
    """What a newcomer sees first, on a terminal 80 columns wide: what the tool is for, then
    every command on one line of its own, before the options."""
    status, lines = on_terminal(pyz, ["--help"])
    assert status == 0
    first = lines.index("", 1) + 1  # after the usage lines
    assert lines[first].startswith("Find the first layer of a PyTorch GPU setup that fails")
    listed = lines.index("commands (the first argument; none runs the check):")
    assert listed < lines.index("options:")
    commands = lines[listed + 1:lines.index("", listed)]
    assert [line.split()[0] for line in commands] == [
        "(none)", "compare", "summarize", "ramp", "resume-check", "health-check"]
    assert all(len(line) < 80 for line in lines[:lines.index("options:")])  # none wraps


@pytest.mark.parametrize(("typed", "meant"), [("compre", "compare"), ("sumarize", "summarize")])
def test_a_misspelt_command_on_a_terminal(pyz: Path, typed: str, meant: str) -> None:
    status, lines = on_terminal(pyz, [typed, "a.json", "b.json"])
    assert (status, lines) == (2, [f"kernodeck-diagnostic: error: unknown command {typed!r}: "
                                   f"did you mean {meant}? (see --help)"])


@pytest.mark.parametrize(("args", "first", "second"), [
    (["--device", "cpu", "--device-index", "1"], "--device cpu", "--device-index"),
    (["--device-index", "0", "--device", "cpu"], "--device cpu", "--device-index"),
    (["--all-devices", "--device", "cpu"], "--all-devices", "--device cpu"),
    (["--all-devices", "--device-index", "2"], "--all-devices", "--device-index"),
    (["--all-devices", "--distributed"], "--all-devices", "--distributed"),
    (["--distributed", "--device-index", "1"], "--distributed", "--device-index"),
    (["--show-paths", "--format", "json"], "--show-paths", "--format json"),
    (["--show-paths", "--format", "markdown"], "--show-paths", "--format markdown"),
])
def test_contradictory_options_are_refused_in_one_line(pyz: Path, args: list[str], first: str,
                                                       second: str) -> None:
    """Before: ``--device cpu --device-index 1`` checked the CPU and dropped the index in
    silence. Refused before anything runs (no launcher needed for --distributed's)."""
    status, lines = on_terminal(pyz, args, env=fake_gpu_env("cuda_pass"))
    assert status == 2
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"kernodeck-diagnostic: error: {first} contradicts {second}: ")
    assert lines[0].endswith("; give one of them (see --help)")


def test_the_api_names_its_own_arguments_when_they_contradict() -> None:
    import kernodeck_diagnostic

    for arguments, said in [
        ({"all_devices": True, "device": "cpu"}, "check(all_devices=True, device='cpu'): "),
        ({"device": "cpu", "device_index": 1}, "check(device='cpu', device_index=1): "),
        ({"distributed": True, "device_index": 2}, "check(distributed=True, device_index=2): "),
        ({"all_devices": True, "distributed": True}, "check(all_devices=True, distributed=True)"),
    ]:
        with pytest.raises(ValueError, match=re.escape(said)) as refused:
            kernodeck_diagnostic.check(**arguments)  # refused before anything runs
        assert str(refused.value).startswith(said)
        assert "--" not in str(refused.value)  # never a flag of the command line


def test_summarize_a_folder_of_other_files_on_a_terminal(pyz: Path, tmp_path: Path) -> None:
    """Before: thousands of "unreadable" lines, the long names cut to the same prefix. Now one
    line with the count and the kinds; the list on request, each name told apart."""
    deep = tmp_path / "node_modules" / ("a-package-with-a-long-name-" * 3) / "dist"
    deep.mkdir(parents=True)
    for number in range(1500):
        (deep / f"package-{number}.json").write_text('{"name": "x"}')
    (tmp_path / "broken.json").write_text("{")
    status, lines = on_terminal(pyz, ["summarize", str(tmp_path)])
    assert status == 23  # SUMMARY_NOTHING_READ
    assert lines == ["unreadable: 1501 file(s), 1500 not a report, 1 not JSON "
                     "(--list-unreadable lists them)", "",
                     "1501 file(s): 0 report(s), 0 passed, 0 failed, 1501 unreadable"]
    status, lines = on_terminal(pyz, ["summarize", "--list-unreadable", str(tmp_path)])
    assert status == 23
    names = [line.split()[0] for line in lines[1:-2]]
    assert len(names) == len(set(names)) == 1501  # each file, each name its own
    assert all(len(name) <= 80 for name in names)  # a long name cut in its middle
    assert names[0] == "broken.json"
    assert names[-1] == ("node_modules/a-pack…long-name-a-package-with-a-long-name-/dist/"
                         "package-1499.json")


def test_version(pyz: Path) -> None:
    result = run_tool(sys.executable, pyz, ["--version"])
    assert (result.returncode, result.stdout.strip()) == (0, f"kernodeck-diagnostic {__version__}")


def test_terminal_text_reads_top_down(pyz: Path) -> None:
    result = run_tool(sys.executable, pyz, ["--host-check"],
                      env=fake_gpu_env("oom_at_allocation", PATH="/nonexistent"))
    lines = result.stdout.splitlines()
    assert lines[0] == "FAILED OUT_OF_MEMORY (exit 9) at stage compute"
    assert lines[-1].startswith("next: ")
    # The facts block: from the summary to the first blank line (findings, if any, follow).
    facts = lines[3:lines.index("", 3)]
    labels = [line.split()[0] for line in facts if not line.startswith(" ")]
    assert labels == ["runtime", "machine", "toolkit", "pytorch", "gpu", "execution", "host",
                      "error"]
    assert "\033[" not in result.stdout  # not a terminal: no colour


def test_colour_only_on_a_terminal_without_no_color(pyz: Path) -> None:
    def on_terminal(extra: dict[str, str]) -> str:
        leader, follower = pty.openpty()
        env = fake_gpu_env("cuda_pass", **extra)
        with subprocess.Popen([sys.executable, str(pyz)], stdout=follower, stderr=follower,
                              stdin=subprocess.DEVNULL, env=env) as process:
            process.wait(60)
        os.close(follower)
        return read_terminal(leader).decode()

    assert "\033[32m" in on_terminal({"TERM": "xterm"})
    assert "\033[32m" not in on_terminal({"TERM": "xterm", "NO_COLOR": "1"})


@pytest.mark.slow
def test_console_script_and_package_install(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(ROOT)],
                   check=True, timeout=600, capture_output=True)
    script = venv / "bin" / "kernodeck-diagnostic"
    completed = subprocess.run([str(script), "--device", "cpu"], capture_output=True, text=True,
                               timeout=120, env=clean_env(), check=False)
    assert completed.returncode == 3
    assert completed.stdout.startswith("FAILED TORCH_MISSING (exit 3) at stage import")
    listed = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "list",
                             "--format=freeze"], capture_output=True, text=True, timeout=120,
                            check=True)
    installed = {line.split("==")[0].lower() for line in listed.stdout.split()}
    assert installed <= {"kernodeck-diagnostic", "pip", "setuptools"}  # no runtime dependencies
    package = "python3*/site-packages/kernodeck_diagnostic"
    assert list((venv / "lib").glob(package + "/report/schema/*.json"))

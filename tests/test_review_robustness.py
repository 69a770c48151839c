"""What a review of the front found fragile: each case as a user meets it.

- numbers no float can hold, from a worker's events or a saved report (valid JSON, 400 digits);
- a stderr closed before the start (``2>&-``, made for real: fd 2 closed, then exec);
- ``check(timeout=10**400)``;
- an install whose worker module is missing;
- the front's own interpreter named another way (a relative path, another name in its folder);
- stale bits: doctests that could not run, a stage nothing produces, a flush done twice.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import (
    RUN_TIMEOUT_S,
    SRC,
    assert_valid_report,
    clean_env,
    fake_gpu_env,
    run_tool,
    schema,
)
from kernodeck_diagnostic import api, interpreter_probe, package_data
from kernodeck_diagnostic.commands.check import _LiveLine
from kernodeck_diagnostic.facts.environment import tool_environment
from kernodeck_diagnostic.report.compare import STAGE_ORDER
from kernodeck_diagnostic.supervision import start, supervisor
from kernodeck_diagnostic.supervision.events import EventReader
from kernodeck_diagnostic.worker.protocol import STAGES

SNAPSHOT = SRC.parent / "tests" / "snapshots" / "gpu_pass.json"
HUGE = int("9" * 400)  # valid JSON; float() of it raises OverflowError


# -- numbers no float can hold -------------------------------------------------------------------

@pytest.mark.parametrize("event", [
    {"event": "step", "t_ms": HUGE, "stage": "compute", "step": "allocate"},
    {"event": "result", "product": None, "loss": HUGE, "gradient": None},
    {"event": "result", "product": [[HUGE, 1], [1, 1]], "loss": 1, "gradient": None},
    {"event": "stage_finished", "stage": "compute", "duration_ms": HUGE},
    {"event": "facts", "block": "execution", "values": {"duration_ms": HUGE}},
    {"event": "facts", "block": "runtime", "values": {"python_version": [[[[[[[[[[[[[[[[[1]]]]]]]]]
                                                                          ]]]]]]]]}},
], ids=["t_ms", "loss", "product", "stage_duration", "execution_duration", "nesting"])
def test_an_event_with_an_absurd_number_or_nesting_is_an_unreadable_line(
        tmp_path: Path, event: dict[str, Any]) -> None:
    log = tmp_path / "events.jsonl"
    log.write_text(json.dumps(event) + "\n" + json.dumps({"event": "final"}) + "\n")
    with log.open("rb") as file:
        reader = EventReader(file)
        reader.poll()  # was OverflowError out of WorkerState.apply: the front's exit 1
    assert (reader.state.unreadable_lines, reader.state.events) == (1, 1)
    assert reader.state.final


def test_twenty_digits_are_still_read(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    big = int("9" * 20)
    log.write_text(json.dumps({"event": "stage_finished", "t_ms": big, "stage": "compute",
                               "duration_ms": big}) + "\n")
    with log.open("rb") as file:
        reader = EventReader(file)
        reader.poll()
    assert reader.state.unreadable_lines == 0
    assert reader.state.stage_ms == {"compute": float(big)}


def test_a_worker_writing_huge_integers_gets_a_report_not_an_internal_error(
        pyz: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    result = run_tool(sys.executable, pyz, ["--output", str(out)],
                      env=fake_gpu_env("huge_integers_in_events"))
    assert "internal error" not in result.stderr, result.stderr
    assert result.stderr == ""
    assert result.returncode == 11, result.stdout
    report = result.report
    assert report is not None
    assert_valid_report(report)
    assert (report["code"], report["stage"]) == ("WORKER_FAILED", "compute")
    assert report["error"]["message"] == (
        "the worker's event log held 3 unreadable line(s) and no verified result")
    assert report["execution"]["duration_ms"] is None


def _crafted(folder: Path, name: str, change: Any) -> Path:
    report = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    change(report)
    path = folder / name
    path.write_text(json.dumps(report), encoding="utf-8")
    return path


HOSTILE_REPORTS = {
    "duration.json": lambda r: r["execution"].update(duration_ms=HUGE),
    "timing.json": lambda r: r["timings_ms"].update(compute=HUGE),
    "loss.json": lambda r: r["execution"].update(loss=-HUGE),
    "exit.json": lambda r: r.update(exit_code=HUGE),
    "deep.json": lambda r: r["tool"].update(extra=json.loads("[" * 900 + "]" * 900)),
}


@pytest.mark.parametrize("name", sorted(HOSTILE_REPORTS))
def test_compare_and_summarize_refuse_a_report_with_absurd_numbers(
        pyz: Path, tmp_path: Path, name: str) -> None:
    good = _crafted(tmp_path, "good.json", lambda r: None)
    hostile = _crafted(tmp_path, name, HOSTILE_REPORTS[name])
    compared = run_tool(sys.executable, pyz, ["compare", str(good), str(hostile)])
    assert compared.returncode == 2, compared.stderr  # was 1: "internal error (OverflowError...)"
    assert compared.stderr == (
        f"kernodeck-diagnostic compare: cannot compare: B ({name}): not JSON\n")
    summarized = run_tool(sys.executable, pyz, ["summarize", "--format", "json", str(good),
                                                str(hostile)])
    assert summarized.returncode == 22, summarized.stderr  # SUMMARY_SOME_FAILED
    assert json.loads(summarized.stdout)["unreadable"] == [
        {"file": name, "reason": "not_json", "detail": None}]


# -- a stderr closed before the start ----------------------------------------------------------

# `2>&-` without a shell: the launcher closes fd 2 and becomes the tool, which starts with no
# stderr at all (Python then sets sys.stderr to None).
CLOSE_STDERR_THEN_EXEC = "import os, sys; os.close(2); os.execv(sys.argv[1], sys.argv[1:])"


def _without_stderr(python: Path, pyz: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", CLOSE_STDERR_THEN_EXEC, str(python), str(pyz),
                           *args], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          env=clean_env(), timeout=RUN_TIMEOUT_S, check=False)


@pytest.mark.slow
def test_closed_stderr_usage_error_still_exits_2(cpu_torch_python: Path, pyz: Path) -> None:
    run = _without_stderr(cpu_torch_python, pyz, "--device", "tpu")
    assert run.returncode == 2  # was 1: AttributeError writing the usage line to None
    assert run.stdout == ""


@pytest.mark.slow
def test_closed_stderr_refused_output_still_exits_12(cpu_torch_python: Path, pyz: Path,
                                                      tmp_path: Path) -> None:
    taken = tmp_path / "report.json"
    taken.write_text("mine\n")
    run = _without_stderr(cpu_torch_python, pyz, "--device", "cpu", "--output", str(taken))
    assert run.returncode == 12
    assert taken.read_text() == "mine\n"


@pytest.mark.slow
def test_closed_stderr_passing_check_exits_0(cpu_torch_python: Path, pyz: Path,
                                             tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    run = _without_stderr(cpu_torch_python, pyz, "--device", "cpu", "--output", str(out))
    assert run.returncode == 0
    assert run.stdout.startswith("PASSED CPU_CHECK_PASSED (exit 0)"), run.stdout
    assert json.loads(out.read_text(encoding="utf-8"))["code"] == "CPU_CHECK_PASSED"


def test_closed_stderr_compare_of_an_unreadable_file_exits_2(pyz: Path, tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("{")
    run = _without_stderr(Path(sys.executable), pyz, "compare", str(tmp_path / "bad.json"),
                          str(tmp_path / "bad.json"))
    assert run.returncode == 2
    assert run.stdout == ""


# -- check(timeout=...) ---------------------------------------------------------------------------

@pytest.mark.parametrize("timeout", [10**400, -(10**400)])
def test_a_timeout_no_float_holds_is_a_value_error_naming_it(timeout: int) -> None:
    with pytest.raises(ValueError, match=r"^check\(timeout=\.\.\.\): must be between 5 and 120"):
        api.check(device="cpu", timeout=timeout)  # was OverflowError


# -- an install without its worker module ---------------------------------------------------------

def test_a_missing_worker_module_is_said_as_such(monkeypatch: pytest.MonkeyPatch) -> None:
    read = package_data.read

    def stripped(*parts: str) -> bytes:
        if parts == ("worker", "stages.py"):
            raise FileNotFoundError(2, "No such file or directory", "/somewhere/stages.py")
        return read(*parts)

    monkeypatch.setattr(package_data, "read", stripped)
    report = api.check(device="cpu").to_dict()
    assert (report["code"], report["stage"]) == ("WORKER_FAILED", "interpreter")
    error = report["error"]
    assert error["message_key"] == "error.not_started.worker_missing"  # was temp_not_writable
    assert error["message"] == (
        "the worker could not be started: the tool's own worker module is missing from its "
        "install (no such file or directory); reinstall the tool")


# -- the front's own interpreter, however it is named ---------------------------------------------

def _same_folder_name() -> str:
    """Another name for this interpreter in its own folder (``python3.11`` beside ``python``)."""
    folder, own = os.path.split(sys.executable)
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if (name != own and name.startswith("python") and os.path.isfile(path)
                and os.path.samefile(path, sys.executable)):
            return path
    pytest.skip("this interpreter has no other name in its folder")


def _other_folder_link(tmp_path: Path) -> str:
    link = tmp_path / "elsewhere" / "python"
    link.parent.mkdir()
    link.symlink_to(sys.executable)
    return str(link)


NAMES: dict[str, tuple[Callable[[Path], str], bool]] = {
    "relative": (lambda tmp: os.path.relpath(sys.executable), True),
    "dotted": (lambda tmp: os.path.join(os.path.dirname(sys.executable), "..",
                                        os.path.basename(os.path.dirname(sys.executable)),
                                        os.path.basename(sys.executable)), True),
    "same_folder_name": (lambda tmp: _same_folder_name(), True),
    "link_in_another_folder": (_other_folder_link, False),
}


@pytest.mark.skipif(sys.prefix == sys.base_prefix, reason="needs a virtual environment")
@pytest.mark.parametrize("name", sorted(NAMES))
def test_every_part_of_the_front_agrees_on_its_own_interpreter(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str) -> None:
    """The worker's options, the interpreter probe and the tool's environment ask one question."""
    make, same = NAMES[name]
    python = make(tmp_path)
    assert start.is_front_interpreter(python) is same
    monkeypatch.setattr(start, "interpreter_options", lambda: ["-X", "marker"])
    assert start.worker_options(python) == (["-X", "marker"] if same else [])
    # Installed in this virtual environment as a console script: the tool's own install.
    package = os.path.join(sys.prefix, "lib", "site-packages", "kernodeck_diagnostic", "x.py")
    assert tool_environment(python, argv0="kernodeck-diagnostic", package_file=package) == (
        "venv" if same else None)
    probed: list[str] = []

    def probe(path: str, timeout_s: float) -> interpreter_probe.InterpreterProbe:
        probed.append(path)
        return interpreter_probe.InterpreterProbe("python", (3, 11))

    monkeypatch.setattr(interpreter_probe, "interpreter_version", probe)
    monkeypatch.setattr(supervisor, "run_worker", lambda *args, **kwargs:
                        supervisor.WorkerRun.not_started("error.not_started.interpreter", "x"))
    api.run(api.Options(device="cpu", device_index=0, timeout_s=5, host_check=False,
                        python=python))
    assert probed == ([] if same else [python])  # only another interpreter is asked what it is


@pytest.mark.skipif(sys.prefix == sys.base_prefix, reason="needs a virtual environment")
def test_a_link_in_another_folder_really_is_another_environment(tmp_path: Path) -> None:
    """Why the same file is not enough: the venv's python links to its base Python, and the
    same link elsewhere starts without the venv's packages."""
    link = _other_folder_link(tmp_path)
    assert os.path.samefile(link, sys.executable)
    prefix = subprocess.run([link, "-c", "import sys; print(sys.prefix)"], capture_output=True,
                            text=True, timeout=60, check=True).stdout.strip()
    assert prefix != sys.prefix


# -- stale bits -----------------------------------------------------------------------------------

PACKAGE = SRC / "kernodeck_diagnostic"
DOCTESTED = sorted(
    ".".join(path.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__")
    for path in PACKAGE.rglob("*.py") if re.search(r"^\s*>>> ", path.read_text(), re.M))


def test_the_doctests_are_found() -> None:
    assert {"kernodeck_diagnostic", "kernodeck_diagnostic.api",
            "kernodeck_diagnostic.report.markup", "kernodeck_diagnostic.report.load",
            "kernodeck_diagnostic.untrusted_json"} <= set(DOCTESTED)


@pytest.mark.slow
@pytest.mark.parametrize("module", DOCTESTED)
def test_the_examples_in_the_docstrings_run(cpu_torch_python: Path, tmp_path: Path,
                                            module: str) -> None:
    """Every example, run by a real interpreter with the real CPU build of torch (``check()``'s
    examples run a check), in an empty folder (``load("no-such-file.json")``)."""
    code = ("import doctest, importlib, sys\n"
            "result = doctest.testmod(importlib.import_module(sys.argv[1]))\n"
            "sys.exit(1 if result.failed or not result.attempted else 0)\n")
    run = subprocess.run([str(cpu_torch_python), "-c", code, module], capture_output=True,
                         text=True, cwd=tmp_path, env=clean_env({"PYTHONPATH": str(SRC)}),
                         timeout=RUN_TIMEOUT_S, check=False)
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_report_stages_are_the_stages_the_worker_runs() -> None:
    properties = schema()["properties"]
    assert properties["stage"]["enum"] == list(STAGES)
    error = next(rule for rule in properties["error"]["oneOf"] if rule.get("type") == "object")
    assert error["properties"]["stage"]["enum"] == list(STAGES)
    assert tuple(STAGE_ORDER) == STAGES


class _GoneTerminal:
    """A terminal whose reader left: every flush raises, as a real one keeps doing."""

    def __init__(self) -> None:
        self.written: list[str] = []

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.written.append(text)
        return len(text)

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")


def test_the_live_line_leaves_a_gone_terminal_to_write() -> None:
    terminal = _GoneTerminal()
    live = _LiveLine(terminal, 30)  # type: ignore[arg-type]
    live.update("compute", 1.0)  # was BrokenPipeError from the second flush
    live.clear()
    assert len(terminal.written) == 2

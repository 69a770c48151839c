"""The one judge over real programs, run by ``ramp`` as a user runs it (the zipapp): the false
passes of issue 41, each a program that exits 0 while it is broken, each now not a pass.

The headline ones run a real CPU torch program (slow): a service that catches a stage's exception
and exits 0; ``os._exit(0)`` inside a stage; a child process's Trial failing while the parent's
passes; a second Trial after a first that failed (with ``keep=1`` too: retention never removes
a failure the run's verdict needs). The others are plain Python programs (the
trial toolkit needs no torch): the axis that changed nothing, the axis name kept from the
redaction, a flaky value under ``--repeat``, a program changed between two runs of one ramp,
``summarize`` over a ramp whose every attempt failed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import SRC, Result, clean_env, run_tool

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="os._exit in a stage, fork")

# A small service: four requests, the third raises; the program catches it, answers 500, goes
# on and exits 0. Before: "completed", the ramp "passed".
SERVICE_APP = """
import torch
from kernodeck_diagnostic import Trial
model = torch.nn.Linear(4, 2)
answers = []
with Trial("runs", params={"requests": 4}) as trial:
    for request in range(4):
        try:
            with trial.stage("handle"):
                if request == 2:
                    raise KeyError("id")
                answers.append(model(torch.ones(1, 4)).sum().item())
        except KeyError:
            answers.append(500)
print(answers)
"""

# os._exit(0) in the middle of a stage: the process says 0, its attempt never ended.
EXIT_IN_STAGE_APP = """
import os
import torch
from kernodeck_diagnostic import Trial
with Trial("runs", params={"n": 1}) as trial:
    with trial.stage("load"):
        weights = torch.ones(4, 4)
    with trial.stage("compute"):
        total = float(weights.sum())
        os._exit(0)
"""

# The parent passes; the child it starts (a worker, a rank) fails in a stage. The parent does
# not look at its child's exit status and exits 0. Before: the newest folder (or the parent's)
# spoke for the run.
CHILD_APP = """
import subprocess, sys
import torch
from kernodeck_diagnostic import Trial
CHILD = '''
import torch
from kernodeck_diagnostic import Trial
with Trial("runs", params={"n": 1}) as trial:
    with trial.stage("child_compute"):
        raise RuntimeError("the worker's shard is missing")
'''
with Trial("runs", params={"n": 1}) as trial:
    with trial.stage("compute"):
        total = float(torch.ones(4).sum())
    subprocess.run([sys.executable, "-c", CHILD], check=False, timeout=120)
"""

# A first Trial fails; the program catches the error and runs a second Trial, which passes.
SECOND_TRIAL_APP = """
import torch
from kernodeck_diagnostic import Trial
try:
    with Trial("runs", params={"n": 1}) as trial:
        with trial.stage("compute"):
            raise ValueError("shape mismatch")
except ValueError:
    pass
with Trial("runs", params={"n": 1}) as trial:
    with trial.stage("compute"):
        total = float(torch.ones(4).sum())
"""

# The same two Trials with ``keep=1``: the second's start removed the first's folder before
# ramp read it. Before: "passed", exit 0, while the run's stderr said "attempt failed".
KEEP_APP = """
import torch
from kernodeck_diagnostic import Trial
try:
    with Trial("runs", params={"n": 1}, keep=1) as trial:
        with trial.stage("compute"):
            raise ValueError("shape mismatch")
except ValueError:
    pass
with Trial("runs", params={"n": 1}, keep=1) as trial:
    with trial.stage("compute"):
        total = float(torch.ones(4).sum())
"""


def _ramp(pyz: Path, out: Path, python: Path | str, app: Path, *options: str) -> Result:
    return run_tool(sys.executable, pyz,
                    ["ramp", "--out", str(out), "--value-from-env", "--axis", "n", "--start",
                     "1", "--stop", "1", *options, "--", str(python), str(app)],
                    env=clean_env({"LC_ALL": "C.UTF-8", "PYTHONPATH": str(SRC)}))


def _attempts(out: Path) -> list[dict[str, Any]]:
    document: dict[str, Any] = json.loads((out / "ramp.json").read_text(encoding="utf-8"))
    attempts: list[dict[str, Any]] = document["attempts"]
    return attempts


def _kinds(attempt: dict[str, Any]) -> list[str]:
    return [reason["kind"] for reason in attempt["reasons"]]


@pytest.mark.slow
@posix_only
@pytest.mark.parametrize("case", [
    (SERVICE_APP, "failed", "stage_calls_failed", "1 of 4 stage calls failed (handle)", 1),
    (EXIT_IN_STAGE_APP, "failed", "ended_in_stage",
     "the process ended inside stage compute", 1),
    (CHILD_APP, "failed", "status_failed", "the attempt ended failed", 2),
    (SECOND_TRIAL_APP, "failed", "status_failed", "the attempt ended failed", 2),
    (KEEP_APP, "failed", "status_failed", "the attempt ended failed", 2),
], ids=["a service catching a stage exception, exit 0", "os._exit(0) in a stage",
        "a child's Trial failing, the parent's passing", "a second Trial after a failed one",
        "a second Trial after a failed one, keep=1"])
def test_a_program_that_exits_0_while_broken_is_not_a_pass(
        pyz: Path, tmp_path: Path, cpu_torch_python: Path,
        case: tuple[str, str, str, str, int]) -> None:
    source, outcome, cause, said, trials = case
    app, out = tmp_path / "app.py", tmp_path / "ramp"
    app.write_text(source)
    result = _ramp(pyz, out, cpu_torch_python, app)
    assert result.returncode == 24, result.stdout + result.stderr  # RAMP_NOTHING_PASSED
    (attempt,) = _attempts(out)
    assert attempt["exit_code"] == 0  # the process said all was well
    assert (attempt["outcome"], attempt["trials"]) == (outcome, trials), attempt
    assert cause in _kinds(attempt), attempt["reasons"]
    assert said in " ".join(reason["text"] for reason in attempt["reasons"])
    assert "already failed (failed)" in result.stdout
    if cause in ("stage_calls_failed", "ended_in_stage"):  # what the exit status hid, shown
        assert said in result.stdout
    # summarize over the ramp's folder: a ramp whose every attempt failed is no pass.
    summary = run_tool(sys.executable, pyz, ["summarize", str(out)],
                       env=clean_env({"LC_ALL": "C.UTF-8"}))
    assert summary.returncode == 22, summary.stdout  # SUMMARY_SOME_FAILED


# -- plain programs ----------------------------------------------------------------------------

# Its parameters never follow the axis: batch 8, whatever the ramp gave.
IGNORING_APP = """
from kernodeck_diagnostic import Trial
with Trial("runs", params={"batch": 8}) as trial:
    with trial.stage("compute"):
        total = sum(range(100))
"""

# The axis name (7 characters) and a value of 6 digits: both long enough to be redacted as an
# environment variable's value, which they are in the attempt's environment.
LONG_AXIS_APP = """
import os
from kernodeck_diagnostic import Trial
value = int(os.environ["KERNODECK_AXIS_VALUE"])
with Trial("runs", params={"max_len": value}) as trial:
    with trial.stage("compute"):
        total = sum(range(10))
"""

# Fails every other run of a value from 4 on (a counter file beside the script).
FLAKY_APP = """
import os, sys
from pathlib import Path
value = int(os.environ["KERNODECK_AXIS_VALUE"])
counter = Path(__file__).with_name(f"runs-{value}")
runs = int(counter.read_text()) + 1 if counter.exists() else 1
counter.write_text(str(runs))
sys.exit(3 if value >= 4 and runs % 2 == 1 else 0)
"""


def _plain(pyz: Path, out: Path, app: Path, *options: str) -> Result:
    return run_tool(sys.executable, pyz,
                    ["ramp", "--out", str(out), "--value-from-env", *options, "--",
                     sys.executable, str(app)],
                    env=clean_env({"LC_ALL": "C.UTF-8", "PYTHONPATH": str(SRC)}))


def test_a_program_that_ignores_the_axis_measured_nothing(pyz: Path, tmp_path: Path) -> None:
    app, out = tmp_path / "app.py", tmp_path / "ramp"
    app.write_text(IGNORING_APP)
    result = _plain(pyz, out, app, "--axis", "batch", "--start", "1", "--stop", "4096")
    assert result.returncode == 25, result.stdout + result.stderr  # RAMP_INCONCLUSIVE
    assert ("batch: the axis changed nothing: at batch=1 the program's own parameters say "
            "batch=8; nothing was measured") in result.stdout
    assert [item["outcome"] for item in _attempts(out)] == ["inconclusive"]


def test_the_axis_name_and_value_survive_the_redaction(pyz: Path, tmp_path: Path) -> None:
    app, out = tmp_path / "app.py", tmp_path / "ramp"
    app.write_text(LONG_AXIS_APP)
    result = _plain(pyz, out, app, "--axis", "max_len", "--start", "131072", "--stop",
                    "131072")
    assert result.returncode == 0, result.stdout + result.stderr
    (attempt_file,) = (out / "max_len-131072").glob("*/attempt.json")
    params = json.loads(attempt_file.read_text(encoding="utf-8"))["params"]
    assert params == {"max_len": 131072}  # before: {"<redacted>": "<redacted>"}
    assert [item["outcome"] for item in _attempts(out)] == ["passed"]


def test_a_value_that_both_passed_and_failed_is_flaky(pyz: Path, tmp_path: Path) -> None:
    app, out = tmp_path / "app.py", tmp_path / "ramp"
    app.write_text(FLAKY_APP)
    result = _plain(pyz, out, app, "--axis", "n", "--start", "1", "--stop", "16",
                    "--repeat", "2")
    assert result.returncode == 32, result.stdout + result.stderr  # RAMP_FLAKY
    runs = [(item["value"], item["run"], item["outcome"]) for item in _attempts(out)]
    # 8: the value above the first failure, tried once (it failed: the limit stood).
    assert runs == [(1, 1, "passed"), (2, 1, "passed"), (4, 1, "failed"), (8, 1, "failed"),
                    (2, 2, "passed"), (4, 2, "passed")]
    assert "n: flaky: 4 both passed and failed; no limit can be given" in result.stdout
    assert (out / "n-4.run-2" / "stderr.txt").exists()


def test_a_ramp_rerun_after_its_program_changed_is_refused(pyz: Path, tmp_path: Path) -> None:
    app, out = tmp_path / "app.py", tmp_path / "ramp"
    app.write_text("import sys\nsys.exit(0)\n")
    first = _plain(pyz, out, app, "--axis", "n", "--start", "1", "--stop", "2")
    assert first.returncode == 0, first.stderr
    app.write_text("import sys\nsys.exit(1)\n")  # the program changed: its attempts are stale
    again = _plain(pyz, out, app, "--axis", "n", "--start", "1", "--stop", "2")
    assert again.returncode == 2, again.stdout + again.stderr
    assert again.stderr == (
        "kernodeck-diagnostic ramp: error: the program's files changed since --out's ramp.json "
        "was written (app.py): its attempts would be stale; choose another --out, or remove "
        "ramp.json to start again (see --help)\n")


# 1,000 Trials that pass, then (a second later: its folder's name sorts last) one that fails.
MANY_TRIALS_APP = """
import time
from kernodeck_diagnostic import Trial
for _ in range(1000):
    with Trial("runs") as trial, trial.stage("compute"):
        pass
time.sleep(1.2)
try:
    with Trial("runs") as trial, trial.stage("compute"):
        raise RuntimeError("the 1001st batch")
except RuntimeError:
    pass
"""


@pytest.mark.slow
def test_a_failing_trial_after_a_thousand_passing_ones_is_read(pyz: Path, tmp_path: Path) -> None:
    """Every Trial folder of a run is read, past the 1,000 kept whole (each later one kept when
    it is the first with its cause): before, the 1001st was never read and ramp said passed."""
    app, out = tmp_path / "app.py", tmp_path / "ramp"
    app.write_text(MANY_TRIALS_APP)
    result = _plain(pyz, out, app, "--axis", "batch", "--start", "1", "--stop", "1")
    assert result.returncode == 24, result.stdout  # RAMP_NOTHING_PASSED
    (attempt,) = _attempts(out)
    assert (attempt["outcome"], attempt["trials"]) == ("failed", 1001), attempt
    assert "status_failed" in _kinds(attempt)
    assert attempt["error"] == "RuntimeError: the 1001st batch"
    summary = run_tool(sys.executable, pyz, ["summarize", str(out)],
                       env=clean_env({"LC_ALL": "C.UTF-8"}))
    assert summary.returncode == 22, summary.stdout  # SUMMARY_SOME_FAILED


# A Trial that fails, in a folder of its own, then a link to it in the run's folder, then a
# Trial that passes. The link is never followed (another user's may lead anywhere).
def _inconclusive_ramp(pyz: Path, tmp_path: Path, program: str, kind: str) -> Any:
    """A one-value ramp (``--out tmp_path/ramp``) of ``program``, whose two Trials the judge
    finds inconclusive for ``kind`` alone (exit 25): the ramp's result."""
    app, out = tmp_path / "app.py", tmp_path / "ramp"
    app.write_text(program)
    result = _plain(pyz, out, app, "--axis", "n", "--start", "1", "--stop", "1")
    assert result.returncode == 25, result.stdout + result.stderr  # RAMP_INCONCLUSIVE
    (attempt,) = _attempts(out)
    assert (attempt["outcome"], attempt["trials"]) == ("inconclusive", 2), attempt
    assert _kinds(attempt) == [kind]
    return result


LINKED_APP = """
import os
from kernodeck_diagnostic import Trial
run = os.environ["KERNODECK_RUN_DIR"]
os.environ["KERNODECK_RUN_DIR"] = os.path.join(os.path.dirname(__file__), "elsewhere")
try:
    with Trial("runs") as trial, trial.stage("compute"):
        raise RuntimeError("boom")
except RuntimeError:
    pass
os.environ["KERNODECK_RUN_DIR"] = run
os.symlink(trial.folder, os.path.join(run, "20991231T000000Z-aaaaaa"))
with Trial("runs") as trial, trial.stage("compute"):
    pass
"""


@posix_only
def test_a_link_to_a_failed_attempts_folder_is_said_never_passed(pyz: Path,
                                                                 tmp_path: Path) -> None:
    """A link to a folder is not followed, and never skipped in silence: ``summarize`` lists
    it unreadable ("a link to a folder, not followed"), exit 22, in its table and its fleet
    view; ``ramp`` judges the attempt inconclusive. Before: "1 passed", exit 0, nothing
    listed."""
    out = tmp_path / "ramp"
    result = _inconclusive_ramp(pyz, tmp_path, LINKED_APP, "link_not_followed")
    assert ("20991231T000000Z-aaaaaa is a link to a folder, not followed: what it holds was "
            "not read") in result.stdout
    runs = out / "n-1"
    env = clean_env({"LC_ALL": "C.UTF-8"})
    summary = run_tool(sys.executable, pyz, ["summarize", str(runs), "--list-unreadable"],
                       env=env)
    assert summary.returncode == 22, summary.stdout  # SUMMARY_SOME_FAILED
    assert ("20991231T000000Z-aaaaaa  a link to a folder, not followed (what it holds is not "
            "read)") in summary.stdout
    assert "1 file(s): 0 report(s), 0 passed, 0 failed, 1 unreadable" in summary.stdout
    prom = tmp_path / "fleet.prom"
    fleet = run_tool(sys.executable, pyz, ["summarize", str(runs), "--prometheus", str(prom)],
                     env=env)
    assert fleet.returncode == 22, fleet.stdout
    assert "1 a link to a folder, not followed" in fleet.stdout
    assert 'kernodeck_fleet_unreadable_files{reason="link_not_followed"} 1' in prom.read_text()


KEEP_AXIS_APP = """
import os
from kernodeck_diagnostic import Trial
with Trial("runs", params={"n": 999}, keep=1) as trial, trial.stage("compute"):
    pass
value = int(os.environ["KERNODECK_AXIS_VALUE"])
with Trial("runs", params={"n": value}, keep=1) as trial, trial.stage("compute"):
    pass
"""


def test_keep_under_a_ramp_never_removes_a_trial_whose_parameters_ignore_the_axis(
        pyz: Path, tmp_path: Path) -> None:
    """keep=1: the first Trial's own parameters give the axis another value (n 999 while the
    ramp runs n 1). Judged alone, without the ramp's axis, it passed and was removed: the run
    passed on the second. Its evidence is the run's verdict: inconclusive, axis_not_followed."""
    _inconclusive_ramp(pyz, tmp_path, KEEP_AXIS_APP, "axis_not_followed")


LATEST_APP = """
import os
from kernodeck_diagnostic import Trial
with Trial("runs") as trial, trial.stage("compute"):
    pass
os.symlink(".", os.path.join(os.environ["KERNODECK_RUN_DIR"], "loop"))
"""


@posix_only
def test_a_link_back_inside_the_folder_is_neither_followed_nor_a_failure(pyz: Path,
                                                                         tmp_path: Path) -> None:
    """A link that leads back inside the folder read (``loop -> .``; a Trial's own ``latest``
    when its root is a folder of the run) holds nothing that is not read there already. Counted
    as a link not followed, it made such a ramp inconclusive and summarize exit 22 with nothing
    missing."""
    app, out = tmp_path / "app.py", tmp_path / "ramp"
    app.write_text(LATEST_APP)
    result = _plain(pyz, out, app, "--axis", "n", "--start", "1", "--stop", "1")
    assert result.returncode == 0, result.stdout + result.stderr
    (attempt,) = _attempts(out)
    assert (attempt["outcome"], attempt["trials"]) == ("passed", 1), attempt
    runs = out / "n-1"
    assert (runs / "loop").is_symlink()
    env = clean_env({"LC_ALL": "C.UTF-8"})
    summary = run_tool(sys.executable, pyz, ["summarize", str(runs), "--list-unreadable"],
                       env=env)
    assert summary.returncode == 0, summary.stdout
    assert "unreadable" not in summary.stdout.replace("0 unreadable", "")
    prom = tmp_path / "fleet.prom"
    fleet = run_tool(sys.executable, pyz, ["summarize", str(runs), "--prometheus", str(prom)],
                     env=env)
    assert fleet.returncode == 0, fleet.stdout
    assert 'kernodeck_fleet_unreadable_files{reason="link_not_followed"} 0' in prom.read_text()


CUT_APP = """
import os
from kernodeck_diagnostic import Trial
with Trial("runs") as first, first.stage("compute"):
    pass
with Trial("runs") as second, second.stage("compute"):
    pass
for name in os.listdir(first.folder):  # a disk that filled up: the files cut short
    if name in ("attempt.json", "events.jsonl"):
        open(os.path.join(first.folder, name), "w").write("{")
"""


def test_a_trial_folder_whose_files_cannot_be_read_is_never_skipped(pyz: Path,
                                                                    tmp_path: Path) -> None:
    """Two Trials, the first one's attempt.json and events.jsonl cut short: what it holds is
    unknown. Was skipped in silence: the ramp passed on the second alone."""
    result = _inconclusive_ramp(pyz, tmp_path, CUT_APP, "attempt_unreadable")
    assert "neither its attempt.json nor its events.jsonl can be read" in result.stdout


def test_summarize_does_not_pass_a_ramp_that_never_ended(pyz: Path, tmp_path: Path) -> None:
    app, out = tmp_path / "app.py", tmp_path / "ramp"
    app.write_text("import sys\nsys.exit(0)\n")
    assert _plain(pyz, out, app, "--axis", "n", "--start", "1", "--stop", "2").returncode == 0
    record = json.loads((out / "ramp.json").read_text(encoding="utf-8"))
    record["status"] = "running"  # a ramp killed mid-way leaves this
    (out / "ramp.json").write_text(json.dumps(record), encoding="utf-8")
    summary = run_tool(sys.executable, pyz, ["summarize", str(out)],
                       env=clean_env({"LC_ALL": "C.UTF-8"}))
    assert summary.returncode == 33, summary.stdout  # SUMMARY_INCONCLUSIVE
    assert "1 attempt(s) or ramp(s) inconclusive" in summary.stdout


# -- a time limit names the stage open then ----------------------------------------------------

# Sleeps past the ramp's time limit inside stage "embed" (after a stage "load" that completed),
# or between stages (after "warmup" completed: the last one started is not an open one). The
# ramp kills the attempt's process tree at its time limit: the Trial's beacon says which stage
# was open (SIGTERM's block, a scheduler's time limit, is in tests/test_judge.py).
SLEEPING_APP = """
import os, time
from kernodeck_diagnostic import Trial
with Trial("runs", params={"n": 1}) as trial:
    with trial.stage("load"):
        pass
    if os.environ["APP_WHERE"] == "in_stage":
        with trial.stage("embed"):
            time.sleep(60)
    with trial.stage("warmup"):
        pass
    time.sleep(60)
"""


@posix_only
@pytest.mark.parametrize(("where", "said"), [
    ("in_stage", "the time limit was reached in stage embed"),
    ("between", "the time limit was reached outside every stage (no stage was open)"),
], ids=["asleep in a stage", "asleep between stages"])
def test_a_time_limit_names_the_stage_open_then(pyz: Path, tmp_path: Path, where: str,
                                                said: str) -> None:
    app, out = tmp_path / "app.py", tmp_path / "ramp"
    app.write_text(SLEEPING_APP)
    result = run_tool(sys.executable, pyz,
                      ["ramp", "--out", str(out), "--value-from-env", "--axis", "n", "--start",
                       "1", "--stop", "1", "--attempt-timeout", "2", "--", sys.executable,
                       str(app)],
                      env=clean_env({"LC_ALL": "C.UTF-8", "PYTHONPATH": str(SRC),
                                     "APP_WHERE": where}))
    assert result.returncode == 24, result.stdout + result.stderr  # RAMP_NOTHING_PASSED
    (attempt,) = _attempts(out)
    assert (attempt["outcome"], attempt["trials"]) == ("timeout", 1)
    assert attempt["reasons"][0] == {"kind": "timeout", "text": said}
    assert not list((out / "n-1").glob("*/attempt.json"))  # killed: its beacon spoke
    # The table says it, and never names the last stage started as the one it stopped in.
    row = next(line for line in result.stdout.splitlines() if line.startswith("1 "))
    assert said in row, row
    if where == "between":
        assert "warmup" not in row, row

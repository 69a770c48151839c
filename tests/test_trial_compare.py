"""``compare`` with two trial attempts (folders or attempt.json): what changed between them."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from trial_helpers import app_env, only_attempt, run_app

# An attempt without torch (the toolkit needs none): the parameters and a stage that may fail.
APPLICATION = """
    import sys, time
    from kernodeck_diagnostic import Trial

    batch, fail = int(sys.argv[1]), sys.argv[2] == "fail"
    with Trial("runs", params={"batch": batch}) as trial:
        with trial.stage("load_weights"):
            time.sleep(0.01)
        for step in trial.passes(2):
            with trial.stage("compute"):
                time.sleep(0.01 if batch < 16 else 0.5)
                if fail:
                    raise ValueError(f"shape mismatch for batch {batch}")
        trial.expect_vectors(["a", "b"], [[1.0, 2.0], [3.0, 4.0]], dim=2)
"""


def _compare(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kernodeck_diagnostic", "compare", *args],
                          capture_output=True, text=True, env=app_env(), timeout=60,
                          stdin=subprocess.DEVNULL, check=False)


@pytest.fixture(scope="module")
def attempts(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    made = []
    for batch, fail in (("8", "pass"), ("32", "fail")):
        work = tmp_path_factory.mktemp(f"batch-{batch}")
        run_app(sys.executable, work, APPLICATION, batch, fail)
        made.append(only_attempt(work / "runs"))
    return made[0], made[1]


def test_two_attempt_folders_say_what_changed(attempts: tuple[Path, Path]) -> None:
    a, b = attempts
    done = _compare(str(a), str(b / "attempt.json"))
    assert done.returncode == 21, done.stderr  # COMPARE_REGRESSION: completed -> failed
    lines = done.stdout.splitlines()
    assert lines[0] == "status changed: completed -> failed"
    assert lines[1:4] == [
        "regression: A passed, B failed: the attempt ended failed; 1 of 2 stage calls failed "
        "(compute)",
        "regression: stage compute: 2/2 calls completed in A, 0/1 in B",
        "regression: contract vectors passed in A, is missing in B"]
    assert a.name in lines[4]
    assert b.name in lines[4]
    table = "\n".join(lines[4:])
    for field in ("last_completed_stage", "first_error.stage", "first_error.type",
                  "first_error.message", "contracts.vectors.passed", "params.batch",
                  "timings_ms.compute.first_pass"):
        assert field in table, field
    assert str(a.parent) not in done.stdout  # never the folders above the attempts


def test_the_json_form_of_an_attempt_comparison(attempts: tuple[Path, Path]) -> None:
    a, b = attempts
    done = _compare(str(a), str(b), "--format", "json")
    result = json.loads(done.stdout)
    assert result["same_status"] is False
    assert result["verdict"] == "regression"
    changes = {change["field"]: (change["a"], change["b"]) for change in result["changes"]}
    assert changes["params.batch"] == (8, 32)
    assert changes["last_completed_stage"] == ("compute", "load_weights")
    assert changes["first_error.type"] == (None, "ValueError")
    assert changes["passes.completed"] == (2, 0)


def test_an_attempt_compared_with_itself_changed_nothing(attempts: tuple[Path, Path],
                                                         tmp_path: Path) -> None:
    copy = tmp_path / "copy.json"
    shutil.copy(attempts[0] / "attempt.json", copy)  # a copy is still an attempt
    done = _compare(str(attempts[0]), str(copy))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["same status: completed", "nothing else changed"]


def test_a_report_and_an_attempt_are_not_compared(attempts: tuple[Path, Path],
                                                  tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"schema_version": 1, "code": "CPU_CHECK_PASSED"}),
                      encoding="utf-8")
    done = _compare(str(report), str(attempts[0]))
    assert done.returncode == 2
    assert "report.json is a check report and " + attempts[0].name in done.stderr
    empty = tmp_path / "not-an-attempt"
    empty.mkdir()
    done = _compare(str(attempts[0]), str(empty))
    assert done.returncode == 2
    assert "B (not-an-attempt): not found" in done.stderr


# -- the verdict of a comparison: its exit status ----------------------------------------------

# The output contract fails from batch 16 on (a NaN in the vectors); the status stays completed.
CONTRACT_APP = """
    import sys
    from kernodeck_diagnostic import Trial

    batch = int(sys.argv[1])
    with Trial("runs", params={"batch": batch}) as trial:
        with trial.stage("compute"):
            vectors = [[1.0, 2.0], [3.0, float("nan") if batch >= 16 else 4.0]]
        trial.expect_vectors(["a", "b"], vectors, dim=2)
"""


def _attempt(tmp_path: Path, name: str, source: str, *args: str) -> Path:
    work = tmp_path / name
    run_app(sys.executable, work, source, *args)
    return only_attempt(work / "runs")


def test_a_contract_that_fails_in_b_is_a_regression(tmp_path: Path) -> None:
    good = _attempt(tmp_path, "good", CONTRACT_APP, "8")
    bad = _attempt(tmp_path, "bad", CONTRACT_APP, "16")
    done = _compare(str(good), str(bad))
    assert done.returncode == 21, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "same status: completed"
    assert lines[1] == "regression: contract vectors passed in A, fails in B"
    back = _compare(str(bad), str(good), "--format", "json")
    assert back.returncode == 20  # COMPARE_CHANGED: fixed, not a regression
    assert json.loads(back.stdout)["verdict"] == "changed"
    again = _compare(str(good), str(_attempt(tmp_path, "good-again", CONTRACT_APP, "8")))
    assert again.returncode == 0, again.stdout  # params the same, contracts the same
    other = _compare(str(good), str(_attempt(tmp_path, "other", CONTRACT_APP, "9")))
    assert other.returncode == 0, other.stdout  # a parameter changed: listed, still the same
    assert "params.batch" in other.stdout


# The process kills itself with SIGKILL in pass 1's compute stage (as the OOM killer would):
# only events.jsonl is left.
KILLED_APP = """
    import os, signal, sys
    from kernodeck_diagnostic import Trial

    with Trial("runs", params={"batch": 8}) as trial:
        with trial.stage("load_weights"):
            pass
        for step in trial.passes(3):
            with trial.stage("compute"):
                if sys.argv[1] == "kill" and step == 1:
                    os.kill(os.getpid(), signal.SIGKILL)
        trial.expect("rows", True)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_an_attempt_killed_before_attempt_json_is_compared_from_its_events(
        tmp_path: Path) -> None:
    good = _attempt(tmp_path, "good", KILLED_APP, "run")
    killed = _attempt(tmp_path, "killed", KILLED_APP, "kill")
    assert not (killed / "attempt.json").exists()
    done = _compare(str(good), str(killed), "--format", "json")
    assert done.returncode == 21, done.stdout + done.stderr
    result = json.loads(done.stdout)
    changes = {change["field"]: (change["a"], change["b"]) for change in result["changes"]}
    assert result["same_status"] is False
    assert {"kind": "passed_to", "b": "failed",
            "why": "the process ended inside stage compute, pass 1: its attempt never ended"
            } in result["regressions"]
    assert changes["passes.completed"] == (3, 1)
    text = _compare(str(good), str(killed))
    assert text.stdout.splitlines()[0] == "status changed: completed -> unfinished"
    assert "last started stage in B: compute (pass 1)" in text.stdout


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_attempts_are_read_and_compared_from_python_with_a_notebook_display(
        tmp_path: Path) -> None:
    """A notebook's user reads an attempt, a killed one included (rebuilt from events.jsonl),
    and compares two, without the command line: each displays as markdown."""
    from kernodeck_diagnostic.trial import compare_attempts, open_attempt

    good = open_attempt(_attempt(tmp_path, "good", KILLED_APP, "run"))
    killed = open_attempt(_attempt(tmp_path, "killed", KILLED_APP, "kill"))
    assert (good.status, killed.status) == ("completed", "unfinished")
    shown = killed._repr_markdown_()
    assert shown.startswith("**kernodeck-diagnostic: attempt unfinished**")
    assert "last started: `compute`" in shown
    assert "| compute | 1 | 0 |" in shown  # its one call, none failed
    assert "contract `rows` passed" in good._repr_markdown_()
    compared = compare_attempts(good, _attempt_folder(tmp_path, "killed"))  # a path too
    assert compared.verdict == "regression"
    assert "completed" in compared._repr_markdown_()
    with pytest.raises(ValueError, match="nothing"):
        open_attempt(tmp_path / "nothing")


def _attempt_folder(tmp_path: Path, name: str) -> Path:
    return only_attempt(tmp_path / name / "runs")


SLOW_APP = """
    import sys, time
    from kernodeck_diagnostic import Trial

    slow = int(sys.argv[1])
    with Trial("runs") as trial:
        for step in trial.passes(8):
            with trial.stage("compute"):
                time.sleep(0.5 if step == slow else 0.025)
"""


def test_one_pass_twenty_times_slower_is_named(tmp_path: Path) -> None:
    even = _attempt(tmp_path, "even", SLOW_APP, "-1")
    spiky = _attempt(tmp_path, "spiky", SLOW_APP, "5")
    done = _compare(str(even), str(spiky), "--format", "json")
    changes = {change["field"]: (change["a"], change["b"]) for change in
               json.loads(done.stdout)["changes"]}
    assert "timings_ms.compute.later_passes_median" not in changes  # the median hides it
    assert changes["timings_ms.compute.later_passes_max"][1] >= 500
    assert changes["timings_ms.compute.slowest_pass"][1] == 5
    assert done.returncode == 0  # slower is shown, not a regression of the verdict
    text = _compare(str(even), str(spiky)).stdout
    assert "timings_ms.compute.slowest_pass" in text


def test_summarize_reads_attempt_folders_even_killed_ones(attempts: tuple[Path, Path],
                                                          tmp_path: Path) -> None:
    killed = _attempt(tmp_path, "killed", KILLED_APP, "kill")
    for folder in (*attempts, killed):
        shutil.copytree(folder, tmp_path / "all" / folder.name)
    done = subprocess.run([sys.executable, "-m", "kernodeck_diagnostic", "summarize",
                           str(tmp_path / "all"), "--format", "json"], capture_output=True,
                          text=True, env=app_env(), timeout=60, stdin=subprocess.DEVNULL,
                          check=False)
    result = json.loads(done.stdout)
    assert result["unreadable"] == [], result
    rows = {row["attempt"]: row for row in result["attempts"]}
    good, failed = (rows[f"{folder.name}/attempt.json"] for folder in attempts)
    assert (good["status"], good["contracts_passed"]) == ("completed", True)
    assert (failed["status"], failed["first_error_stage"]) == ("failed", "compute")
    assert failed["first_error"].startswith("ValueError: shape mismatch")
    lost = rows[f"{killed.name}/events.jsonl"]
    # Killed inside a stage: the one judge's outcome, the attempt's own status beside it.
    assert (lost["status"], lost["last_started_stage"]) == ("failed (unfinished)", "compute")
    assert done.returncode == 22  # a failed attempt: as a failed report (SUMMARY_SOME_FAILED)
    text = subprocess.run([sys.executable, "-m", "kernodeck_diagnostic", "summarize",
                           str(tmp_path / "all")], capture_output=True, text=True,
                          env=app_env(), timeout=60, stdin=subprocess.DEVNULL, check=False)
    header = next(line for line in text.stdout.splitlines() if line.startswith("attempt "))
    assert header.split() == ["attempt", "status", "first", "error", "stage", "contracts",
                              "peak", "memory", "last", "started", "stage"] or \
        "last started stage" in header, header

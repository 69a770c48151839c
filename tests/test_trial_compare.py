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
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "status changed: completed -> failed"
    assert a.name in lines[1]
    assert b.name in lines[1]
    table = "\n".join(lines[1:])
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

"""The attempt folder: a new one for every attempt, never reused nor overwritten; where it goes."""

from __future__ import annotations

import contextlib
import signal
import sys
from pathlib import Path

import pytest

from conftest import SUPPORTED_PYTHONS, required_pyenv_python
from kernodeck_diagnostic import Trial
from kernodeck_diagnostic.safe_files import Folder
from kernodeck_diagnostic.trial import folder
from kernodeck_diagnostic.trial.evidence import run_records
from kernodeck_diagnostic.trial.judge import judge
from trial_helpers import assert_valid_attempt, attempt_of, events_of, only_attempt, run_app


def test_an_attempt_id_drawn_twice_is_drawn_again(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    draws = iter(["aaaaaa", "aaaaaa", "bbbbbb"])
    monkeypatch.setattr(folder.secrets, "token_hex", lambda _: next(draws))
    monkeypatch.setattr(folder.time, "gmtime", lambda: (2026, 12, 1, 6, 0, 0, 1, 335, 0))
    first_id, made = folder.create(str(tmp_path))
    made.close()
    first = made.path
    (Path(first) / "attempt.json").write_text("the first attempt's", encoding="utf-8")
    second_id, made = folder.create(str(tmp_path))
    made.close()
    second = made.path
    assert (first_id, second_id) == ("20261201T060000Z-aaaaaa", "20261201T060000Z-bbbbbb")
    assert (Path(first) / "attempt.json").read_text(encoding="utf-8") == "the first attempt's"
    assert not any(Path(second).iterdir())


def test_latest_names_the_newest_attempt_and_keep_removes_the_older_ones(
        tmp_path: Path) -> None:
    """A notebook re-run all day left one folder per run (23 in one sitting): ``latest`` names
    the newest, ``keep=N`` leaves the newest N. Only attempt folders of plain files are removed:
    a link named like one (to a folder of the user's), a folder holding a folder, and what is
    not named like an attempt stay, and nothing is followed."""
    root = tmp_path / "runs"
    made = []
    for _ in range(4):
        with Trial(root) as trial, trial.stage("step"):
            pass
        made.append(Path(str(trial.folder)))
        assert (root / "latest").read_text() == made[-1].name + "\n"
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "model.pt").write_text("weights")
    (root / "20000101T000000Z-aaaaaa").symlink_to(precious, target_is_directory=True)
    nested = root / "20000101T000000Z-bbbbbb"
    (nested / "inside").mkdir(parents=True)
    (root / "notes").mkdir()
    with Trial(root, keep=2) as trial:
        pass
    newest = Path(str(trial.folder))
    left = sorted(path.name for path in root.iterdir())
    assert left == sorted([made[-1].name, newest.name, "20000101T000000Z-aaaaaa",
                           "20000101T000000Z-bbbbbb", "notes", "latest"])
    assert (precious / "model.pt").read_text() == "weights"
    assert (nested / "inside").is_dir()
    assert (root / "latest").read_text() == newest.name + "\n"
    with pytest.raises(ValueError, match="keep"):
        Trial(root, keep=0)


def test_keep_never_removes_an_attempt_that_has_not_ended(tmp_path: Path) -> None:
    """An attempt still running (another cell's, another rank's sharing the root) or killed has
    no attempt.json yet: ``keep=1`` leaves it, and removes only the ended ones."""
    root = tmp_path / "runs"
    with Trial(root) as trial, trial.stage("step"):
        pass
    ended = Path(str(trial.folder))
    running = Trial(root).start()
    with running.stage("load"):
        pass
    with Trial(root, keep=1) as trial:
        pass
    left = {path.name for path in root.iterdir() if path.is_dir()}
    assert left == {Path(str(running.folder)).name, Path(str(trial.folder)).name}
    assert not ended.exists()
    running.end()
    assert (Path(str(running.folder)) / "attempt.json").is_file()


def test_keep_in_a_tools_run_folder_removes_no_failure_its_verdict_needs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under ``KERNODECK_RUN_DIR`` (a ``ramp`` attempt's folder, judged whole once the program
    ends) ``keep=N`` removes the older attempts the judge passes, and of the others every one
    whose deciding cause an older one kept already shows: the run's verdict and its first
    failure stay, and the folder stays bounded (before: a failed Trial then a passing one with
    ``keep=1`` left the passing one alone, and the ramp said passed). Outside a tool's run,
    ``keep`` leaves the newest N as before."""
    run = tmp_path / "run"
    monkeypatch.setenv("KERNODECK_RUN_DIR", str(run))

    def attempt(fail: str | None) -> Path:
        with contextlib.suppress(RuntimeError), Trial("ignored", keep=2) as trial:
            with trial.stage("compute"):
                if fail == "stage":
                    raise RuntimeError("boom")
            if fail == "contract":
                trial.expect("rows", False)
        return Path(str(trial.folder))

    first_failure = attempt("stage")
    first_contract = attempt("contract")
    for index in range(30):  # a long loop: what is kept does not grow with it
        attempt("stage" if index % 3 == 0 else "contract" if index % 3 == 1 else None)
    newest = [attempt(None), attempt(None)]
    left = {path.name for path in run.iterdir() if path.is_dir()}
    assert left == {first_failure.name, first_contract.name, *(path.name for path in newest)}
    records = run_records(str(run))
    assert {record.name for record in records} == left
    verdict = judge(records)
    assert verdict.outcome == "contract_failed"
    assert verdict.trial is not None
    assert verdict.trial.name == first_contract.name
    monkeypatch.delenv("KERNODECK_RUN_DIR")
    root = tmp_path / "runs"
    for fail in ("stage", None, None):
        with contextlib.suppress(RuntimeError), Trial(root, keep=2) as trial, \
                trial.stage("compute"):
            if fail:
                raise RuntimeError("boom")
    assert len([path for path in root.iterdir() if path.is_dir()]) == 2


def test_files_are_never_written_over(tmp_path: Path) -> None:
    target = tmp_path / "attempt.json"
    with Folder.open(tmp_path) as place:
        folder.write_new(place, "attempt.json", b"{}")
        with pytest.raises(FileExistsError):
            folder.write_new(place, "attempt.json", b"[]")
    assert target.read_bytes() == b"{}"


def test_attempts_in_the_same_second_get_their_own_folders(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KERNODECK_RUN_DIR", raising=False)
    made = []
    for batch in (1, 2, 3):
        with Trial(tmp_path / "runs", params={"batch": batch}) as trial, trial.stage("work"):
            pass
        made.append(Path(trial.folder or ""))
    assert len({path.name for path in made}) == 3
    for batch, path in zip((1, 2, 3), made):
        attempt = attempt_of(path)
        assert_valid_attempt(attempt)
        assert attempt["params"] == {"batch": batch}
        assert events_of(path)[-1]["event"] == "attempt_ended"


def test_the_run_folder_variable_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KERNODECK_RUN_DIR", str(tmp_path / "given"))
    with Trial(tmp_path / "asked") as trial:
        pass
    assert Path(trial.folder or "").parent == tmp_path / "given"
    assert not (tmp_path / "asked").exists()


def test_without_torch_the_attempt_still_says_what_it_can(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KERNODECK_RUN_DIR", raising=False)
    monkeypatch.delitem(sys.modules, "torch", raising=False)  # whatever another test imported
    with Trial(tmp_path) as trial:
        # SIGTERM is the trial's own during the attempt, the program's again after it.
        assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
        trial.expect("always", True)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    attempt = attempt_of(Path(trial.folder or ""))
    assert_valid_attempt(attempt)
    assert attempt["pytorch"]["imported"] is False
    assert attempt["status"] == "completed"
    assert attempt["last_completed_stage"] is None
    with pytest.raises(RuntimeError, match="entered once"):
        trial.__enter__()


# Without torch: the toolkit itself, in every Python the user's program may run in.
ANY_PYTHON = """
    from kernodeck_diagnostic import Trial

    with Trial("runs", params={"batch": 2}) as trial:
        with trial.stage("load_weights"):
            pass
        for step in trial.passes(2):
            with trial.stage("compute"):
                pass
        trial.describe(ids=["a", "b"])
        trial.expect_vectors(["a", "b"], [[1.0, 2.0], [3.0, float("nan")]], dim=2)
"""


@pytest.mark.parametrize("minor", SUPPORTED_PYTHONS)
def test_the_toolkit_runs_on_every_supported_python(minor: str, tmp_path: Path) -> None:
    done = run_app(required_pyenv_python(minor), tmp_path, ANY_PYTHON)
    assert done.returncode == 0, done.stderr[-3000:]
    attempt = attempt_of(only_attempt(tmp_path / "runs"))
    assert_valid_attempt(attempt)
    assert attempt["runtime"]["python_version"].startswith(minor + ".")
    assert attempt["passes"]["completed"] == 2
    assert attempt["contracts"][0]["detail"] == "non-finite values (NaN or infinity) for ids: b"

"""The folders the tool makes are never writable by others, whatever the umask (issue 43).

Under ``umask 000`` a plain ``mkdir`` gives 0777: a Trial's root and attempt folders were made so
and accepted, so anyone could rename or replace ``attempt.json`` in them, and the next Trial in
the same root was refused (a folder others can write). Each case runs the real thing under the
umask set for the process (a Trial in this process, ``ramp`` as a command) and reads the modes.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import clean_env
from kernodeck_diagnostic import Trial

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes and umask")
SRC = Path(__file__).resolve().parents[2] / "src"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


@pytest.fixture
def umask() -> Iterator[None]:
    """Restores this process's umask after a test that sets its own."""
    previous = os.umask(0o022)
    os.umask(previous)
    try:
        yield
    finally:
        os.umask(previous)


def failing_attempt(root: Path, trials: list[Trial]) -> None:
    """An attempt with a stage, ended by an error (its trace written)."""
    with Trial(root) as trial:
        trials.append(trial)
        with trial.stage("load"):
            pass
        raise RuntimeError("boom")


@pytest.mark.usefixtures("umask")
@pytest.mark.parametrize(("mask", "folders"), [
    (0o000, 0o755),  # was 0777, accepted once and refused on the next run
    (0o022, 0o755),  # the common case, unchanged
    (0o077, 0o700),  # a narrower umask narrows it further
], ids=["000", "022", "077"])
def test_a_trials_folders_are_never_writable_by_others(tmp_path: Path, mask: int,
                                                       folders: int) -> None:
    os.umask(mask)
    root = tmp_path / "runs"
    trials: list[Trial] = []
    with pytest.raises(RuntimeError):
        failing_attempt(root, trials)
    attempt = Path(trials[0].folder or "")
    assert (mode(root), mode(attempt)) == (folders, folders)
    assert mode(attempt / "trace.txt") == 0o600
    assert mode(attempt / "attempt.json") & 0o022 == 0  # nobody else writes what it says
    # The next Trial in the same root is accepted (under umask 000 it was refused: "writable").
    with Trial(root) as second:
        pass
    assert mode(Path(second.folder or "")) == folders


def test_a_ramps_folders_under_umask_000(tmp_path: Path) -> None:
    out = tmp_path / "ramp-out"
    app = "import os; print(os.environ['KERNODECK_AXIS_VALUE'])"
    command = [sys.executable, "-m", "kernodeck_diagnostic", "ramp", "--axis", "n", "--start",
               "1", "--stop", "2", "--out", str(out), "--", sys.executable, "-c", app, "{n}"]
    done = subprocess.run(["sh", "-c", 'umask 000 && exec "$@"', "sh", *command],
                          capture_output=True, text=True, timeout=300, check=False,
                          env=clean_env({"PYTHONPATH": str(SRC)}), cwd=tmp_path,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout + done.stderr
    made = [out, *(path for path in out.rglob("*") if path.is_dir())]
    assert len(made) > 1, made
    assert {path.name: mode(path) for path in made} == {path.name: 0o755 for path in made}

"""``--output`` never follows another user's link on its way (issue 43), for real: root runs the
check, the second user (``nobody``, through ``setpriv``; the fixtures of ``test_links.py``) plants
links in folders it can write, pointing at root-only folders.

Was: a link ``/tmp/reports -> /srv/target`` made root create ``/srv/target/diag.json``, and a
write that failed removed the report by its path, which a folder swapped for a link meanwhile
redirects to a file of root's elsewhere. The report's writer now goes through the safe file layer
every other write uses; each case asserts the refusal and the target's whole state unchanged.
"""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import clean_env, run_tool
from kernodeck_diagnostic import cli
from kernodeck_diagnostic.report import writer as output
from kernodeck_diagnostic.report.writer import OutputError, preflight, write_new
from kernodeck_diagnostic.supervision import supervisor
from reliability.harness import recorded_run
from reliability.test_links import (
    LINK_REFUSED,
    SRC,
    as_adversary,
    as_root_with_adversary,
    plant_link,
    shared,
    state,
    victims,
)

__all__ = ["shared", "victims"]  # fixtures, used by name

REPORT = b'{"schema_version": 1}\n' * 200
pytestmark = as_root_with_adversary


@pytest.fixture
def open_to_all(shared: Path) -> Path:
    """A folder every user can write, without the sticky bit (a careless team's scratch): the
    second user may rename what root made in it."""
    folder = shared / "scratch"
    folder.mkdir()
    folder.chmod(0o777)
    return folder


def check(output: Path, cwd: Path) -> Any:
    return run_tool(sys.executable, ["-m", "kernodeck_diagnostic"],
                    ["--device", "cpu", "--timeout", "5", "--output", str(output)],
                    env=clean_env({"PYTHONPATH": str(SRC), "LC_ALL": "C.UTF-8"}), cwd=cwd)


def test_a_link_of_another_user_above_the_file_stops_the_check_at_once(
        shared: Path, victims: Path, tmp_path: Path) -> None:
    """``--output /tmp/reports/diag.json``, ``/tmp/reports`` the second user's link to a
    root-only folder: exit 12 before the check, the reason said, nothing created there."""
    before = state(victims)
    plant_link(victims / "folder", shared / "reports")
    result = check(shared / "reports" / "diag.json", tmp_path)
    assert result.returncode == 12, result.stdout + result.stderr
    assert LINK_REFUSED in result.stderr
    assert result.stdout == ""  # refused before the check: no result to show
    assert state(victims) == before


@pytest.mark.parametrize("where", ["sticky", "open-to-all"])
def test_the_writer_refuses_another_users_link_on_the_way(
        shared: Path, open_to_all: Path, victims: Path, where: str) -> None:
    """At write time (as if the link appeared during the check): ``OutputError`` with the
    layer's reason, the target unchanged; in a sticky folder and in one without the bit."""
    folder = shared if where == "sticky" else open_to_all
    before = state(victims)
    plant_link(victims / "folder", folder / "reports")
    with pytest.raises(OutputError) as raised:
        write_new(str(folder / "reports" / "diag.json"), REPORT)
    assert raised.value.key == "files.unsafe.link"
    assert state(victims) == before


def test_a_folder_swapped_for_a_link_during_the_check_receives_nothing(
        open_to_all: Path, victims: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Root's own ``reports`` folder passes the pre-flight; while the check runs the second
    user renames it away and plants a link at its name (the folder above lets anyone rename):
    exit 12 after the full result, the target unchanged, nothing in the moved folder."""
    reports = open_to_all / "reports"
    reports.mkdir()
    before = state(victims)

    def run_then_swap(*args: Any, **kwargs: Any) -> Any:
        as_adversary("mv", str(reports), str(open_to_all / "moved"))
        plant_link(victims / "folder", reports)
        return recorded_run("cuda_pass", "cpu")

    monkeypatch.setattr(supervisor, "run_worker", run_then_swap)
    code = cli.main(["--device", "cpu", "--timeout", "5", "--output",
                     str(reports / "diag.json")])
    captured = capsys.readouterr()
    assert code == 12, captured.err
    assert LINK_REFUSED in captured.err
    assert captured.out.startswith("PASSED CPU_CHECK_PASSED")
    assert state(victims) == before
    assert list((open_to_all / "moved").iterdir()) == []


def test_a_failed_write_removes_its_own_file_never_one_a_swapped_path_names(
        open_to_all: Path, victims: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The disk fills up mid-write; meanwhile the second user swaps the report's folder for a
    link to a root-only folder holding a file of the same name. Removing by path would delete
    root's file there: the writer empties and removes its own file, in the folder it opened."""
    reports = open_to_all / "reports"
    reports.mkdir()
    (victims / "folder" / "diag.json").write_text("root's own report\n", encoding="utf-8")
    before = state(victims)
    real_write = os.write

    def swap_then_fail(descriptor: int, data: Any) -> int:
        real_write(descriptor, bytes(data[: len(data) // 2]))
        as_adversary("mv", str(reports), str(open_to_all / "moved"))
        plant_link(victims / "folder", reports)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(output.os, "write", swap_then_fail)
    with pytest.raises(OutputError) as raised:
        write_new(str(reports / "diag.json"), REPORT)
    monkeypatch.undo()
    assert "no space left" in raised.value.reason
    assert state(victims) == before
    assert list((open_to_all / "moved").iterdir()) == []  # the partial report removed


@pytest.mark.parametrize("case", ["own-link", "adversary-folder"])
def test_what_is_refused_and_what_is_not(shared: Path, victims: Path, tmp_path: Path,
                                         case: str) -> None:
    """The rule's two sides: root's own link in the sticky folder is followed (the report is
    written where it points); a folder the second user made there is refused ("belongs to
    another user"), before the check and at write time."""
    if case == "own-link":
        target = tmp_path / "reports"
        target.mkdir()
        (shared / "mine").symlink_to(target)
        preflight(str(shared / "mine" / "diag.json"))
        write_new(str(shared / "mine" / "diag.json"), REPORT)
        assert (target / "diag.json").read_bytes() == REPORT
        return
    as_adversary("mkdir", str(shared / "theirs"))
    for attempt in (preflight, lambda path: write_new(path, REPORT)):
        with pytest.raises(OutputError) as raised:
            attempt(str(shared / "theirs" / "diag.json"))
        assert raised.value.key == "files.unsafe.owner"
    assert list((shared / "theirs").iterdir()) == []

"""Nothing is written through another user's link: for real, root running the tool, an
unprivileged second user (``nobody``, through ``setpriv``) planting symbolic links in a
world-writable folder with the sticky bit (``/tmp``'s mode), pointing at root-only files and
folders.

Each case runs the real thing: ``python -m kernodeck_diagnostic ramp`` and ``resume-check``,
``OutputLedger`` and ``Trial`` as an application uses them. Each asserts that the command refuses
(exit 2 and the reason on stderr, or ``UnsafePath`` raised) and that the adversary's target is
exactly as it was (never created, never written). The kernel's own ``fs.protected_symlinks``,
which would hide the flaw, is off in most containers; the tool does not rely on it either way.
A few checks of the rules themselves (a link of one's own is followed, a folder others can
write is refused, the path-only fallback of Windows) need no second user.
"""

from __future__ import annotations

import hashlib
import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import Result, clean_env, run_tool
from kernodeck_diagnostic import OutputLedger, Trial, safe_files
from kernodeck_diagnostic.safe_files import Folder, UnsafePath
from kernodeck_diagnostic.trial import folder as attempt_folder

SRC = Path(__file__).resolve().parents[2] / "src"
SETPRIV = shutil.which("setpriv")
ADVERSARY = ["--reuid=nobody", "--regid=nogroup", "--clear-groups"]
LINK_REFUSED = "symbolic link owned by another user"
# An application that passes at once: the ramp's attempts are not what is tried here.
PASSING_APP = "import os; print(os.environ['KERNODECK_AXIS_VALUE'])"


def _second_user_missing() -> str | None:
    if sys.platform == "win32" or os.geteuid() != 0:
        return "needs root (the tool's victim) and a second user (the adversary)"
    if SETPRIV is None:
        return "setpriv (util-linux) is missing: no way to act as the second user"
    try:
        pwd.getpwnam("nobody")
        import grp

        grp.getgrnam("nogroup")
    except KeyError:
        return "no user nobody or group nogroup to act as the adversary"
    return None


MISSING = _second_user_missing()
as_root_with_adversary = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX owners and modes")


def as_adversary(*command: str) -> None:
    """Run ``command`` as the second user (nobody:nogroup, no other group)."""
    subprocess.run([str(SETPRIV), *ADVERSARY, *command], check=True, timeout=30,
                   stdin=subprocess.DEVNULL, capture_output=True)


def plant_link(target: Path, link: Path) -> None:
    as_adversary("ln", "-s", str(target), str(link))
    assert link.lstat().st_uid == pwd.getpwnam("nobody").pw_uid


@pytest.fixture
def shared() -> Iterator[Path]:
    """A folder every user can write, with the sticky bit, that the second user can reach
    (pytest's own folders are root's, mode 0700)."""
    folder = Path(tempfile.mkdtemp(prefix="kd-links-"))
    folder.chmod(0o1777)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def victims(tmp_path: Path) -> Path:
    """Root-only files and an empty root-only folder: what the adversary points at."""
    place = tmp_path / "root-only"
    place.mkdir(mode=0o700)
    for name in ("shadow", "authorized_keys"):
        (place / name).write_text(f"{name}: root's own\n", encoding="utf-8")
        (place / name).chmod(0o600)
    (place / "empty").write_bytes(b"")
    (place / "folder").mkdir(mode=0o700)
    return place


def state(place: Path) -> dict[str, tuple[object, ...]]:
    """Everything observable of a tree: names, kinds, contents, modes, times."""
    seen: dict[str, tuple[object, ...]] = {}
    for root, dirs, files in os.walk(place):
        for name in [*dirs, *files]:
            path = Path(root) / name
            info = path.lstat()
            digest = (hashlib.sha256(path.read_bytes()).hexdigest()
                      if stat.S_ISREG(info.st_mode) else None)
            seen[str(path.relative_to(place))] = (stat.filemode(info.st_mode), digest,
                                                  info.st_size, info.st_mtime_ns)
    return seen


def ramp(out: Path | None, *, cwd: Path, app: str = PASSING_APP) -> Result:
    options = ["--out", str(out)] if out is not None else []
    return run_tool(sys.executable, ["-m", "kernodeck_diagnostic"],
                    ["ramp", "--axis", "n", "--start", "1", "--stop", "2", *options, "--",
                     sys.executable, "-c", app, "{n}"],
                    env=clean_env({"PYTHONPATH": str(SRC), "LC_ALL": "C.UTF-8"}), cwd=cwd)


# -- ramp ---------------------------------------------------------------------------------------

@as_root_with_adversary
def test_ramp_refuses_links_planted_at_its_record_and_table(shared: Path, victims: Path) -> None:
    before = state(victims)
    plant_link(victims / "shadow", shared / "ramp.json.partial")
    plant_link(victims / "authorized_keys", shared / "ramp.md")
    done = ramp(shared, cwd=shared)
    assert done.returncode == 2, done.stderr
    assert LINK_REFUSED in done.stderr
    assert state(victims) == before
    assert not (shared / "ramp.json").exists()
    assert not any(shared.glob("n-*")), "no attempt runs in a folder that was refused"


@as_root_with_adversary
@pytest.mark.parametrize("name", ["ramp.json", "ramp.json.partial", "ramp.md", "ramp.md.partial",
                                  "ramp.png", "ramp.png.partial"])
def test_ramp_refuses_a_link_at_any_name_it_writes(shared: Path, victims: Path,
                                                   name: str) -> None:
    before = state(victims)
    plant_link(victims / "shadow", shared / name)
    done = ramp(shared, cwd=shared)
    assert done.returncode == 2, done.stderr
    assert LINK_REFUSED in done.stderr
    assert state(victims) == before


@as_root_with_adversary
def test_a_link_planted_while_the_ramp_runs_is_refused_not_followed(shared: Path,
                                                                    victims: Path) -> None:
    # The adversary acts during the first attempt: the record's next save meets the link.
    plant = (f"import subprocess; subprocess.run([{str(SETPRIV)!r}, *{ADVERSARY!r}, 'ln', '-s',"
             f" {str(victims / 'shadow')!r}, {str(shared / 'ramp.json.partial')!r}],"
             " check=True)")
    before = state(victims)
    done = ramp(shared, cwd=shared, app=plant)
    assert done.returncode == 2, done.stderr
    assert LINK_REFUSED in done.stderr
    assert state(victims) == before


@as_root_with_adversary
def test_a_table_link_planted_during_the_ramp_is_replaced_never_followed(
        shared: Path, victims: Path) -> None:
    # After the names were checked: the table is renamed over the link, which is gone, its
    # target untouched.
    plant = (f"import os, subprocess; os.environ['KERNODECK_AXIS_VALUE'] == '1' and "
             f"subprocess.run([{str(SETPRIV)!r}, *{ADVERSARY!r}, 'ln', '-s',"
             f" {str(victims / 'authorized_keys')!r}, {str(shared / 'ramp.md')!r}],"
             " check=True)")
    before = state(victims)
    done = ramp(shared, cwd=shared, app=plant)
    assert done.returncode == 0, done.stderr
    assert state(victims) == before
    table = shared / "ramp.md"
    assert stat.S_ISREG(table.lstat().st_mode)
    assert table.lstat().st_uid == 0
    assert "| n |" in table.read_text(encoding="utf-8")


@as_root_with_adversary
@pytest.mark.parametrize("planted", ["runs_as_link", "ramp_folder_as_link",
                                     "ramp_folder_of_theirs"])
def test_the_default_ramp_folder_in_a_shared_working_folder(shared: Path, victims: Path,
                                                            planted: str) -> None:
    before = state(victims)
    if planted == "runs_as_link":
        plant_link(victims / "folder", shared / "runs")
        expected = LINK_REFUSED
    elif planted == "ramp_folder_as_link":
        as_adversary("mkdir", "-m", "0777", str(shared / "runs"))
        plant_link(victims / "folder", shared / "runs" / "ramp-n")
        expected = LINK_REFUSED
    else:
        as_adversary("mkdir", "-m", "0777", str(shared / "runs"))
        as_adversary("mkdir", "-m", "0777", str(shared / "runs" / "ramp-n"))
        expected = "belongs to another user"
    done = ramp(None, cwd=shared)
    assert done.returncode == 2, done.stderr
    assert expected in done.stderr
    assert state(victims) == before
    if planted == "ramp_folder_of_theirs":
        assert not any((shared / "runs" / "ramp-n").iterdir())


# -- the ledger -----------------------------------------------------------------------------------

@as_root_with_adversary
@pytest.mark.parametrize("target", ["dangling", "empty"])
def test_resume_check_refuses_a_link_at_the_ledger(shared: Path, victims: Path,
                                                   target: str) -> None:
    pointed = victims / ("created.jsonl" if target == "dangling" else "empty")
    plant_link(pointed, shared / "results.jsonl")
    before = state(victims)
    done = run_tool(sys.executable, ["-m", "kernodeck_diagnostic"],
                    ["resume-check", "--ledger", str(shared / "results.jsonl"),
                     "--stop-after-records", "1", "--", sys.executable, "-c", "pass"],
                    env=clean_env({"PYTHONPATH": str(SRC), "LC_ALL": "C.UTF-8"}), cwd=shared)
    assert done.returncode == 2, done.stderr
    assert "--ledger cannot be used" in done.stderr
    assert LINK_REFUSED in done.stderr
    assert state(victims) == before
    assert not (victims / "created.jsonl").exists()


@as_root_with_adversary
@pytest.mark.parametrize("target", ["dangling", "empty"])
def test_output_ledger_never_writes_through_a_link(shared: Path, victims: Path,
                                                   target: str) -> None:
    pointed = victims / ("created.jsonl" if target == "dangling" else "empty")
    plant_link(pointed, shared / "results.jsonl")
    before = state(victims)
    with pytest.raises(UnsafePath) as refused:
        OutputLedger(shared / "results.jsonl", expected_ids=["a", "b"])
    assert refused.value.reason == "link"
    assert state(victims) == before
    assert not (victims / "created.jsonl").exists()


@as_root_with_adversary
def test_output_ledger_refuses_a_link_planted_between_two_records(shared: Path,
                                                                  victims: Path) -> None:
    """The name is checked before each sync, not at each append (issue 42: a system call per
    record): the record appended in the window goes to the file the ledger holds (moved), never
    through the link; the sync refuses, and so does every later append."""
    ledger = OutputLedger(shared / "results.jsonl", expected_ids=["a", "b", "c"])
    ledger.append("a", {"ok": True})
    (shared / "results.jsonl").rename(shared / "moved.jsonl")
    plant_link(victims / "empty", shared / "results.jsonl")
    before = state(victims)
    ledger.append("b", {"ok": True})
    with pytest.raises(UnsafePath):
        ledger.sync()
    with pytest.raises(UnsafePath):
        ledger.append("c", {"ok": True})
    assert state(victims) == before
    assert [json.loads(line).get("id") for line in
            (shared / "moved.jsonl").read_text().splitlines()] == [None, "a", "b"]


# -- Trial ----------------------------------------------------------------------------------------

@as_root_with_adversary
def test_a_trial_root_planted_as_a_link_is_refused(shared: Path, victims: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KERNODECK_RUN_DIR", raising=False)
    plant_link(victims / "folder", shared / "runs")
    before = state(victims)
    with pytest.raises(UnsafePath), Trial(shared / "runs"):
        pass
    assert state(victims) == before
    # KERNODECK_RUN_DIR (what ramp gives its attempts) is walked the same way.
    monkeypatch.setenv("KERNODECK_RUN_DIR", str(shared / "runs"))
    with pytest.raises(UnsafePath), Trial("elsewhere"):
        pass
    assert state(victims) == before


@as_root_with_adversary
def test_an_attempt_folder_swapped_for_a_link_mid_run_receives_nothing(
        shared: Path, victims: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Between two stages the attempt folder is renamed and a link planted at its name. Renaming
    root's folder in a sticky folder is root's privilege alone, so root's own hook does that
    part; the link is the second user's."""
    monkeypatch.delenv("KERNODECK_RUN_DIR", raising=False)
    before = state(victims)

    def swapped_mid_run() -> None:
        with Trial(shared) as trial:
            with trial.stage("load"):
                pass
            attempt = Path(trial.folder or "")
            attempt.rename(shared / "moved")
            plant_link(victims / "folder", attempt)
            with trial.stage("compute"):
                raise ValueError("after the swap")

    with pytest.raises(ValueError, match="after the swap"):
        swapped_mid_run()
    assert state(victims) == before
    # What the attempt wrote after the swap went to its own folder, wherever it now is.
    moved = shared / "moved"
    assert {"attempt.json", "events.jsonl", "trace.txt"} <= {p.name for p in moved.iterdir()}
    assert attempt_folder.TRACE_HEADER.strip() in (moved / "trace.txt").read_text("utf-8")


@as_root_with_adversary
def test_a_trial_root_of_another_user_is_refused(shared: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KERNODECK_RUN_DIR", raising=False)
    as_adversary("mkdir", "-m", "0755", str(shared / "theirs"))
    with pytest.raises(UnsafePath) as refused, Trial(shared / "theirs"):
        pass
    assert refused.value.reason == "owner"
    assert not any((shared / "theirs").iterdir())


# -- the rules themselves (no second user needed) --------------------------------------------------

@posix_only
def test_a_folder_others_can_write_is_refused_unless_sticky(tmp_path: Path) -> None:
    open_to_all = tmp_path / "open"
    open_to_all.mkdir()
    open_to_all.chmod(0o777)
    with pytest.raises(UnsafePath) as refused:
        Folder.open(open_to_all)
    assert refused.value.reason == "writable"
    open_to_all.chmod(0o1777)
    Folder.open(open_to_all).close()


@as_root_with_adversary
def test_a_folder_its_group_can_write_is_refused_unless_the_group_is_ours(tmp_path: Path) -> None:
    import grp

    team = tmp_path / "team"
    team.mkdir()
    team.chmod(0o775)
    os.chown(team, 0, grp.getgrnam("nogroup").gr_gid)  # a group root is no member of
    with pytest.raises(UnsafePath) as refused:
        Folder.open(team)
    assert refused.value.reason == "writable"
    os.chown(team, 0, os.getegid())
    Folder.open(team).close()


@posix_only
def test_a_link_of_ones_own_is_followed(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "mine").symlink_to(tmp_path / "real")
    with Folder.open(tmp_path / "mine" / "deeper", create=True) as made:
        made.create_file("x", b"1")
    assert (tmp_path / "real" / "deeper" / "x").read_bytes() == b"1"


@posix_only
def test_trace_and_captured_output_are_private(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KERNODECK_RUN_DIR", raising=False)
    with pytest.raises(RuntimeError), Trial(tmp_path / "runs") as trial:
        raise RuntimeError("boom")
    trace = Path(trial.folder or "") / "trace.txt"
    assert stat.S_IMODE(trace.stat().st_mode) == 0o600
    assert trace.read_text("utf-8").startswith("# kernodeck-diagnostic trace: local only")
    done = ramp(tmp_path / "out", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    for name in ("stdout.txt", "stderr.txt"):
        assert stat.S_IMODE((tmp_path / "out" / "n-1" / name).stat().st_mode) == 0o600


def test_without_descriptors_the_same_calls_work_by_path(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Windows' fallback (no O_NOFOLLOW, no dir_fd): exclusive creation, links refused by
    lstat."""
    monkeypatch.setattr(safe_files, "DIR_FDS", False)
    with Folder.open(tmp_path / "a" / "b", create=True) as made:
        assert made.fd is None
        made.create_file("new", b"1")
        with pytest.raises(FileExistsError):
            made.create_file("new", b"2")
        made.replace("record.json", b"{}")
        made.replace("record.json", b"[]")
        with made.subfolder("sub") as sub:
            sub.create_file("inside", b"x")
    assert (tmp_path / "a" / "b" / "record.json").read_bytes() == b"[]"
    assert (tmp_path / "a" / "b" / "sub" / "inside").read_bytes() == b"x"
    if sys.platform != "win32":
        (tmp_path / "link").symlink_to(tmp_path / "a")
        with pytest.raises(UnsafePath):
            Folder.open(tmp_path / "link")

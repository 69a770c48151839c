"""Output file safety: a report goes to a new file or nowhere; nothing else is ever touched.

Every condition is tried twice. Through the single-file download, when it is there before the
run: exit 12 at once, the check never runs, one line on stderr, and the folder is exactly as it
was. And at write time, as if it appeared during the check (a race), on the writer itself: it
refuses, and again nothing changes. A full disk is a real tmpfs of two pages; where mounting is
not allowed, the same failure is injected at the write call. Names with spaces, unicode, a
leading dash, a tilde, relative and absolute forms land exactly where asked.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import signal
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import assert_valid_report, fake_gpu_env, run_tool
from kernodeck_diagnostic import cli
from kernodeck_diagnostic.report import writer as output
from kernodeck_diagnostic.report.writer import OutputError, preflight, write_new
from kernodeck_diagnostic.supervision import supervisor
from reliability.harness import recorded_run

REPORT = b'{"schema_version": 1}\n' * 200


def snapshot(folder: Path) -> dict[str, Any]:
    """Everything observable about a folder's tree: kinds, link targets, contents, times."""
    state: dict[str, Any] = {}
    for root, dirs, files in os.walk(folder):
        for name in [*dirs, *files]:
            path = Path(root) / name
            info = path.lstat()
            if path.is_symlink():
                state[str(path)] = ("link", os.readlink(path), info.st_mtime_ns)
            elif path.is_dir():
                state[str(path)] = ("dir", info.st_mtime_ns)
            else:
                state[str(path)] = ("file", hashlib.sha256(path.read_bytes()).hexdigest(),
                                    info.st_mtime_ns, info.st_size)
    return state


def existing_file(base: Path) -> str:
    (base / "report.json").write_text('{"precious": true}\n')
    return str(base / "report.json")


def symlink_to_existing_file(base: Path) -> str:
    (base / "precious.json").write_text('{"precious": true}\n')
    (base / "report.json").symlink_to(base / "precious.json")
    return str(base / "report.json")


def dangling_symlink(base: Path) -> str:
    (base / "report.json").symlink_to(base / "nowhere.json")
    return str(base / "report.json")


def directory(base: Path) -> str:
    (base / "report.json").mkdir()
    return str(base / "report.json")


def missing_parent(base: Path) -> str:
    return str(base / "missing" / "report.json")


def parent_is_a_file(base: Path) -> str:
    (base / "afile").write_text("a file, not a folder\n")
    return str(base / "afile" / "report.json")


def name_too_long(base: Path) -> str:
    return str(base / ("r" * 300 + ".json"))


def unicode_name_too_long(base: Path) -> str:
    return str(base / ("\u00e9" * 200 + ".json"))  # 200 characters, 400 bytes: over NAME_MAX (255)


def path_too_long(base: Path) -> str:
    return str(base.joinpath(*["d" * 200] * 25, "report.json"))  # over PATH_MAX (4096)


def trailing_separator(base: Path) -> str:
    return str(base / "report.json") + os.sep


CONDITIONS: dict[str, tuple[Callable[[Path], str], str]] = {
    "existing_file": (existing_file, "a file of that name already exists"),
    "symlink_to_existing_file": (symlink_to_existing_file, "a symbolic link of that name"),
    "dangling_symlink": (dangling_symlink, "a symbolic link of that name"),
    "directory": (directory, "a folder of that name already exists"),
    "missing_parent": (missing_parent, "its folder does not exist"),
    "parent_is_a_file": (parent_is_a_file, "its folder is not a folder"),
    "name_too_long": (name_too_long, "too long"),
    "unicode_name_too_long": (unicode_name_too_long, "too long"),
    "path_too_long": (path_too_long, "too long"),
    "trailing_separator": (trailing_separator, "folder separator"),
}


@pytest.mark.parametrize("condition", list(CONDITIONS))
def test_unwritable_output_stops_before_the_check_and_touches_nothing(
        pyz: Path, tmp_path: Path, condition: str) -> None:
    """Exit 12 at once: the worker never starts, one line says why, the folder is unchanged."""
    make, says = CONDITIONS[condition]
    base = tmp_path / "out"
    base.mkdir()
    out = make(base)
    before = snapshot(base)
    marker = tmp_path / "worker-ran"
    result = run_tool(sys.executable, pyz, ["--output", str(out)],
                      env=fake_gpu_env("cuda_pass", KD_FAKE_TORCH_MARKER=str(marker)))
    assert result.returncode == 12, result.stderr
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert says in lines[0]
    assert str(tmp_path) not in result.stderr
    assert not marker.exists(), "the check ran although its report could not be saved"
    assert snapshot(base) == before


@pytest.mark.parametrize("condition", list(CONDITIONS))
def test_condition_appearing_during_the_check_is_refused_at_write_time(
        tmp_path: Path, condition: str) -> None:
    """The writer itself refuses (exclusive create, links never followed), changing nothing."""
    make, _ = CONDITIONS[condition]
    out = make(tmp_path)
    before = snapshot(tmp_path)
    with pytest.raises(OutputError):
        write_new(str(out), REPORT)
    assert snapshot(tmp_path) == before
    with pytest.raises(OutputError):
        preflight(str(out))


@pytest.mark.slow
def test_disk_full_during_the_write_on_a_real_tmpfs(pyz: Path, nearly_full_disk: Path) -> None:
    """A real ENOSPC part-way through the report: the check's result is shown, the failure
    said in one line, exit 12, and the half-written file removed."""
    out = nearly_full_disk / "diagnostic.json"
    before = snapshot(nearly_full_disk)
    result = run_tool(sys.executable, pyz, ["--output", str(out)],
                      env=fake_gpu_env("cuda_pass", KD_FAKE_DEVICES="40"))
    assert result.returncode == 12, result.stderr
    assert result.stdout.startswith("PASSED GPU_CHECK_PASSED (exit 12, OUTPUT_WRITE_FAILED)")
    assert result.stderr.count("\n") == 1
    assert "no space left" in result.stderr
    assert snapshot(nearly_full_disk) == before


class _Faulty:
    """os.write, os.fsync or os.close of the writer on the report's own file, failing as a full
    or broken disk does (the folders the writer opens on the way are closed as usual)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, call: str, error: BaseException) -> None:
        self.real = getattr(os, call)
        self.error = error
        self.calls = 0
        monkeypatch.setattr(output.os, call, self)

    def __call__(self, *args: Any) -> Any:
        if not stat.S_ISREG(os.fstat(args[0]).st_mode):
            return self.real(*args)
        self.calls += 1
        if self.calls == 2 or (self.real is not os.write and self.calls == 1):
            raise self.error
        if self.real is os.write:  # a short first write, as a nearly full disk gives
            descriptor, data = args
            return self.real(descriptor, data[: len(data) // 2])
        return self.real(*args)


@pytest.mark.parametrize(("call", "errno_", "says"), [
    ("write", errno.ENOSPC, "no space left on the device"),
    ("write", errno.EDQUOT, "disk quota exceeded"),
    ("write", errno.EFBIG, "larger than allowed"),
    ("fsync", errno.EIO, "input/output error"),
    ("close", errno.ENOSPC, "no space left on the device"),  # NFS reports it at close
])
def test_injected_write_faults_leave_no_partial_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, call: str, errno_: int,
        says: str) -> None:
    """Where no tmpfs can be mounted, the same failures at the write call itself."""
    out = tmp_path / "report.json"
    faulty = _Faulty(monkeypatch, call, OSError(errno_, os.strerror(errno_)))
    with pytest.raises(OutputError) as raised:
        write_new(str(out), REPORT)
    assert faulty.calls >= 1
    assert says in raised.value.reason
    assert list(tmp_path.iterdir()) == []


def test_sigterm_while_the_report_is_written_leaves_no_partial_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A real SIGTERM lands between the first half of the report and the rest: the front
    exits 143 with its one line, and the half-written file is removed."""
    out = tmp_path / "report.json"
    monkeypatch.setattr(supervisor, "run_worker", lambda *args, **kwargs: recorded_run())
    real_write = os.write

    def write_then_terminated(descriptor: int, data: Any) -> int:
        written = real_write(descriptor, bytes(data[: len(data) // 2]))
        os.kill(os.getpid(), signal.SIGTERM)  # handled at the next bytecode: mid-write
        return written

    monkeypatch.setattr(output.os, "write", write_then_terminated)
    code = cli.main(["--timeout", "5", "--output", str(out)])
    captured = capsys.readouterr()
    assert code == 143
    assert captured.err.splitlines() == [
        "kernodeck-diagnostic: interrupted by SIGTERM; the check was stopped and no report "
        "was written."]
    assert not out.exists()


@pytest.mark.parametrize(("argument", "lands"), [
    ("report with spaces.json", "work/report with spaces.json"),
    ("rapport-\u00e9t\u00e9-\u8a3a\u65ad.json", "work/rapport-\u00e9t\u00e9-\u8a3a\u65ad.json"),
    ("./-report.json", "work/-report.json"),
    ("~report.json", "work/~report.json"),
    ("sub/report.json", "work/sub/report.json"),
    ("../report.json", "report.json"),
    ("ABSOLUTE/absolute.json", "absolute.json"),
])
def test_output_names_land_exactly_where_asked(pyz: Path, tmp_path: Path, argument: str,
                                               lands: str) -> None:
    """Spaces, unicode, a leading dash, a tilde, relative and absolute: the file is where the
    name says (from the working folder), and nowhere else is anything written."""
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    argument = argument.replace("ABSOLUTE", str(tmp_path))
    result = run_tool(sys.executable, pyz, ["--output", argument],
                      env=fake_gpu_env("cuda_pass", HOME=str(tmp_path / "home")), cwd=work)
    assert result.returncode == 0, result.stderr
    written = sorted(str(path.relative_to(tmp_path)) for path in tmp_path.rglob("*")
                     if path.is_file())
    assert written == [lands]
    assert_valid_report(json.loads((tmp_path / lands).read_text(encoding="utf-8")))


def test_a_leading_dash_name_is_given_with_equals(pyz: Path, tmp_path: Path) -> None:
    """`--output=-report.json` names a file; `--output -report.json` is a usage error (the
    name looks like an option), one line, and nothing is written."""
    env = fake_gpu_env("cuda_pass")
    result = run_tool(sys.executable, pyz, ["--output=-report.json"], env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "-report.json").is_file()
    result = run_tool(sys.executable, pyz, ["--output", "-other.json"], env=env, cwd=tmp_path)
    assert result.returncode == 2
    assert len(result.stderr.splitlines()) == 1
    assert "expected one argument" in result.stderr
    assert not (tmp_path / "-other.json").exists()


def test_an_unexpanded_tilde_is_refused_with_the_reason(pyz: Path, tmp_path: Path) -> None:
    """`--output=~/report.json` reaches the tool with its tilde (the shell expands it only at
    the start of a word): no folder named ~ exists, so exit 12 at once, saying why, and nothing
    is written in the home folder or in a folder named ~."""
    home = tmp_path / "home"
    home.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    result = run_tool(sys.executable, pyz, ["--output=~/report.json"],
                      env=fake_gpu_env("cuda_pass", HOME=str(home)), cwd=work)
    assert result.returncode == 12
    assert "the shell did not expand it" in result.stderr
    assert list(home.iterdir()) == []
    assert list(work.iterdir()) == []

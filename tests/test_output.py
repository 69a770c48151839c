"""--output: a new file or nothing; checked before the run and again at write time."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import assert_valid_report, clean_env, fake_gpu_env, run_tool


def test_new_file_is_written_and_valid(pyz: Path, tmp_path: Path) -> None:
    out = tmp_path / "diagnostic-gpu.json"
    result = run_tool(sys.executable, pyz, ["--output", str(out)], env=fake_gpu_env("cuda_pass"))
    assert result.returncode == 0
    assert result.report is not None
    assert_valid_report(result.report)
    assert list(result.report)[:9] == ["schema_version", "tool", "created_at", "status", "code",
                                       "exit_code", "stage", "summary", "next_action"]
    assert out.stat().st_mode & 0o777 == 0o644 & ~_umask()


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def test_existing_file_is_untouched_and_nothing_runs(pyz: Path, tmp_path: Path) -> None:
    out = tmp_path / "diagnostic.json"
    out.write_bytes(b'{"precious": true}\n')
    before = hashlib.sha256(out.read_bytes()).hexdigest(), out.stat().st_mtime_ns
    marker = tmp_path / "worker-ran"
    result = run_tool(sys.executable, pyz, ["--output", str(out)],
                      env=fake_gpu_env("cuda_pass", KD_FAKE_TORCH_MARKER=str(marker)))
    assert result.returncode == 12
    assert (hashlib.sha256(out.read_bytes()).hexdigest(), out.stat().st_mtime_ns) == before
    assert not marker.exists(), "the check ran although its report could not be saved"
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1
    assert "already exists" in result.stderr
    assert str(tmp_path) not in result.stderr


def test_missing_folder_fails_fast(pyz: Path, tmp_path: Path) -> None:
    marker = tmp_path / "worker-ran"
    result = run_tool(sys.executable, pyz, ["--output", str(tmp_path / "nope" / "r.json")],
                      env=fake_gpu_env("cuda_pass", KD_FAKE_TORCH_MARKER=str(marker)))
    assert result.returncode == 12
    assert "folder does not exist" in result.stderr
    assert not marker.exists()
    assert not (tmp_path / "nope").exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and /sys are Linux's")
@pytest.mark.parametrize(("folder", "kind"), [("/proc", "proc"), ("/sys", "sysfs")])
def test_pseudo_filesystem_is_refused_before_the_check_naming_it(
        pyz: Path, tmp_path: Path, folder: str, kind: str) -> None:
    """Root may "write" in /proc by its mode; the kernel refuses the name only after the check
    ran, and the refusal said "its folder does not exist". Refused at once, naming it; the same
    check with --output in a real folder (the advice) saves its report."""
    marker = tmp_path / "worker-ran"
    env = fake_gpu_env("cuda_pass", KD_FAKE_TORCH_MARKER=str(marker))
    result = run_tool(sys.executable, pyz, ["--output", f"{folder}/kd-report.json"], env=env)
    assert result.returncode == 12
    assert f"on {kind}, a file system of the kernel" in result.stderr
    assert "does not exist" not in result.stderr
    assert not marker.exists(), "the check ran although its report could not be saved"
    moved = tmp_path / "kd-report.json"
    assert run_tool(sys.executable, pyz, ["--output", str(moved)], env=env).returncode == 0
    assert moved.is_file()


def test_pseudo_filesystem_is_read_from_the_longest_mount(tmp_path: Path) -> None:
    from kernodeck_diagnostic.report.writer import pseudo_filesystem

    mountinfo = tmp_path / "mountinfo"
    mountinfo.write_text(
        "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
        "23 22 0:5 / /proc rw,nosuid - proc proc rw\n"
        "24 22 0:6 / /sys rw - sysfs sysfs rw\n"
        "25 24 0:7 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"
        "26 22 0:8 / /my\\040data rw - tmpfs tmpfs rw\n", encoding="utf-8")
    read = str(mountinfo)
    assert pseudo_filesystem("/proc", read) == "proc"
    assert pseudo_filesystem("/sys/fs/cgroup", read) == "cgroup2"
    assert pseudo_filesystem("/sys/kernel", read) == "sysfs"
    assert pseudo_filesystem("/processes", read) is None
    assert pseudo_filesystem("/my data/x", read) is None
    assert pseudo_filesystem("/proc", str(tmp_path / "absent")) is None


def test_file_appearing_during_the_check_is_not_overwritten(pyz: Path, tmp_path: Path) -> None:
    """The race: the name is free at start, taken when the report is written."""
    out = tmp_path / "diagnostic.json"
    marker = tmp_path / "worker-ran"
    command = [sys.executable, str(pyz), "--output", str(out)]
    env = fake_gpu_env("cuda_pass", KD_FAKE_TORCH_MARKER=str(marker),
                       KD_FAKE_TORCH_IMPORT_DELAY="1.5")
    with subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True) as process:
        deadline = time.monotonic() + 30
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        out.write_text("someone else's\n")
        stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 12
    assert out.read_text() == "someone else's\n"
    # The check's full result is still shown, its first line with the exit status the process
    # really ends with, then the write failure.
    assert stdout.startswith("PASSED GPU_CHECK_PASSED (exit 12, OUTPUT_WRITE_FAILED) at stage "
                             "compute")
    assert "next:" in stdout
    assert "NOT saved" in stderr
    assert "already exists" in stderr


def test_disk_full_midway_leaves_no_partial_file(pyz: Path, nearly_full_disk: Path) -> None:
    out = nearly_full_disk / "diagnostic.json"
    # Forty devices make a report larger than the one free page: the first write is short, the
    # next one fails with ENOSPC, half a report is on disk until the tool removes it.
    result = run_tool(sys.executable, pyz, ["--output", str(out)],
                      env=fake_gpu_env("cuda_pass", KD_FAKE_DEVICES="40"))
    assert result.returncode == 12, result.stderr
    assert not out.exists()
    assert result.stdout.startswith("PASSED GPU_CHECK_PASSED")
    assert "no space left" in result.stderr


@pytest.mark.slow
def test_relative_output_goes_to_the_working_folder(notorch_python: Path, pyz: Path,
                                                    tmp_path: Path) -> None:
    result = run_tool(notorch_python, pyz, ["--device", "cpu", "--output", "diagnostic-cpu.json"],
                      env=clean_env(), cwd=tmp_path)
    assert result.returncode == 3
    assert result.report is not None
    assert result.report["code"] == "TORCH_MISSING"


def test_full_temporary_folder_is_a_clear_failure(pyz: Path, nearly_full_disk: Path,
                                                  tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    env = fake_gpu_env("cuda_pass", TMPDIR=str(nearly_full_disk))
    result = run_tool(sys.executable, pyz, ["--output", str(out)], env=env)
    assert result.returncode == 11
    assert result.report is not None
    assert result.report["code"] == "WORKER_FAILED"
    assert result.report["error"]["message"] == (
        "the worker could not be started: the temporary folder is not writable "
        "(no space left on device)")
    assert list(nearly_full_disk.iterdir()) == [nearly_full_disk / "filler"]

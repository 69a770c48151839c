"""report.load.read_bounded: a report in one read, whole however the file system hands it over,
and the caller's stat (its st_mode) trusted for what it says (summarize stats each file once)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kernodeck_diagnostic.report import load as load_module
from kernodeck_diagnostic.report.load import MAX_REPORT_BYTES, load, read_bounded

REPORT = b'{"schema_version": 1, "code": "CPU_CHECK_PASSED", "note": "' + b"x" * 5000 + b'"}'


def counted_reads(monkeypatch: pytest.MonkeyPatch, most: int | None = None) -> list[int]:
    """Every os.read's size in report.load, each giving at most ``most`` bytes (a network file
    system's short reads)."""
    sizes: list[int] = []
    real = os.read

    def read(fd: int, size: int) -> bytes:
        sizes.append(size)
        return real(fd, size if most is None else min(size, most))

    monkeypatch.setattr(load_module.os, "read", read)
    return sizes


def test_a_report_takes_one_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "r.json"
    path.write_bytes(REPORT)
    sizes = counted_reads(monkeypatch)
    assert read_bounded(str(path)) == REPORT
    assert len(sizes) == 1


@pytest.mark.parametrize("most", [1, 100, 4096, len(REPORT) - 1])
def test_short_reads_before_the_end_are_read_on_from(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     most: int) -> None:
    path = tmp_path / "r.json"
    path.write_bytes(REPORT)
    counted_reads(monkeypatch, most)
    assert read_bounded(str(path)) == REPORT
    assert load(str(path)).report is not None


def test_an_empty_file_is_read_as_empty(tmp_path: Path) -> None:
    path = tmp_path / "empty.json"
    path.write_bytes(b"")
    assert read_bounded(str(path)) == b""
    assert load(str(path)).reason == "not_json"


def test_a_file_one_byte_over_the_limit_is_too_large(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    with path.open("wb") as file:
        file.truncate(MAX_REPORT_BYTES + 1)
    assert read_bounded(str(path)) == "too_large"
    with path.open("r+b") as file:
        file.truncate(MAX_REPORT_BYTES)
    assert read_bounded(str(path)) == b"\0" * MAX_REPORT_BYTES


def test_the_callers_stat_is_used_instead_of_a_new_one(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "r.json"
    path.write_bytes(REPORT)
    mode = os.stat(path).st_mode

    def no_stat(*_args: object, **_kwargs: object) -> os.stat_result:
        raise AssertionError("stat again")

    monkeypatch.setattr(load_module.os, "stat", no_stat)
    assert read_bounded(str(path), mode) == REPORT
    assert load(str(path), mode=mode).report is not None


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_a_fifo_is_refused_by_the_callers_stat_without_being_opened(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    mode = os.stat(fifo).st_mode

    def no_open(*_args: object, **_kwargs: object) -> int:
        raise AssertionError("opened")

    monkeypatch.setattr(load_module.os, "open", no_open)
    assert read_bounded(str(fifo), mode) == "not_a_file"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_a_fifo_swapped_in_after_the_callers_stat_is_refused_after_opening(
        tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_bytes(REPORT)
    mode = os.stat(path).st_mode  # a regular file then
    path.unlink()
    os.mkfifo(path)  # a FIFO with no writer: opened without waiting, then refused
    assert read_bounded(str(path), mode) == "not_a_file"

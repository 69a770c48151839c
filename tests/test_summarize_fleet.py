"""``summarize`` at fleet scale (issue 46): past ``fleet.SMALL`` files the output is a screenful
(counts, failing reports grouped, the first few named), memory does not grow with the reports
that passed, and the same fleet read from a folder, a list on stdin, JSON Lines and a tar archive
gives the same counts. The reports are the recorded real ones (``tests/snapshots/``)."""

from __future__ import annotations

import contextlib
import copy
import csv
import io
import json
import os
import shutil
import sys
import tarfile
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT
from distributed_fixtures import distributed
from kernodeck_diagnostic import forked
from kernodeck_diagnostic.commands import fleet_summary, summarize
from kernodeck_diagnostic.report import fleet
from test_health_check import _all_devices, _promtool, assert_exposition_format

SNAPSHOTS = {path.stem: path for path in (ROOT / "tests" / "snapshots").glob("*.json")}
FAILING = ("gpu_unavailable", "out_of_memory", "torch_missing")


def _fleet(folder: Path, count: int, failing_every: int = 10) -> dict[str, int]:
    """``count`` reports, one in ``failing_every`` failing (the three failing snapshots in
    turn), nested per day and node; the count of each code."""
    codes: dict[str, int] = {}
    for index in range(count):
        name = FAILING[(index // failing_every) % 3] if index % failing_every == 0 \
            else "gpu_pass"
        node = folder / f"day-{index % 2 + 1:02d}" / f"node-{index // 2 % 50:04d}"
        node.mkdir(parents=True, exist_ok=True)
        shutil.copy(SNAPSHOTS[name], node / f"check-{index:05d}.json")
        code = json.loads(SNAPSHOTS[name].read_text(encoding="utf-8"))["code"]
        codes[code] = codes.get(code, 0) + 1
    return codes


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    status = summarize.main(list(args))
    return status, capsys.readouterr().out


def _counts(out: str) -> dict[str, int]:
    lines = out.split("counts per code, worst first\n", 1)[1].split("\n\n", 1)[0]
    return {code: int(count) for code, count in (line.split() for line in lines.splitlines())}


def test_the_default_output_of_a_fleet_fits_a_screen(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    codes = _fleet(tmp_path / "fleet", 400)
    (tmp_path / "fleet" / "broken.json").write_text("{", encoding="utf-8")
    status, out = _run(capsys, str(tmp_path / "fleet"))
    assert status == 22  # some failed: the judge's rule, whatever the view
    assert len(out.splitlines()) < 40
    assert _counts(out) == codes
    assert "GPU_UNAVAILABLE  device  gpu_unavailable: 14" in out
    assert "… and 11 more (--only failed lists them all)" in out  # 14 failing, 3 named
    assert out.count("… and 10 more (--only failed lists them all)") == 2  # 13 and 13
    assert "unreadable: 1 file(s), 1 not JSON (--list-unreadable lists them)" in out
    status, out = _run(capsys, str(tmp_path / "fleet"), "--list-unreadable")
    assert "unreadable (1)\n  broken.json  not JSON\n" in out
    assert out.rstrip().endswith("401 file(s): 400 report(s), 360 passed, 40 failed, 1 unreadable")


def test_only_failed_lists_every_failing_report_and_json_stays_bounded(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _fleet(tmp_path / "fleet", 400)
    status, out = _run(capsys, str(tmp_path / "fleet"), "--only", "failed")
    assert status == 22
    rows = [line.split("\t") for line in out.splitlines()]
    assert len(rows) == 40
    assert {row[1] for row in rows} == {"GPU_UNAVAILABLE", "OUT_OF_MEMORY", "TORCH_MISSING"}
    assert all(row[0].startswith("day-0") for row in rows)
    status, out = _run(capsys, str(tmp_path / "fleet"), "--only", "failed", "--format", "json")
    assert len(json.loads(out)) == 40
    status, out = _run(capsys, str(tmp_path / "fleet"), "--format", "json")
    document = json.loads(out)
    assert document["view"] == "fleet"
    assert (document["reports_read"], document["failed"]) == (400, 40)
    assert all(len(group["reports"]) <= fleet.FEW for group in document["groups"])
    assert sum(group["count"] for group in document["groups"]) == 40


def test_the_same_output_however_many_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    _fleet(tmp_path / "fleet", 700)
    monkeypatch.setattr(fleet_summary, "usable_cpus", lambda: 1)
    alone = _run(capsys, str(tmp_path / "fleet"))
    monkeypatch.setattr(fleet_summary, "usable_cpus", lambda: 3)
    assert _run(capsys, str(tmp_path / "fleet")) == alone


def _mixed_fleet(folder: Path, backwards: bool = False) -> None:
    """A fleet whose batches cross folders: a flat folder of several batches and folders of a
    few reports, failing reports of three groups, unreadable files (not JSON, nested too deep, not
    a report), a job with a rank missing (incomplete) and a whole one; ``backwards``: the same
    files written in the reverse order (a folder lists them in another order)."""
    written: dict[Path, bytes] = {}
    for index in range(3 * fleet.BATCH + 17):
        name = FAILING[index % 3] if index % 7 == 0 else "gpu_pass"
        written[folder / "flat" / f"r-{index}.json"] = SNAPSHOTS[name].read_bytes()
    for index in range(120):
        name = FAILING[index % 3] if index % 9 == 0 else "gpu_pass"
        node = folder / f"day-{index % 2}" / f"node-{index // 2 % 40}"
        written[node / f"c-{index}.json"] = SNAPSHOTS[name].read_bytes()
    written[folder / "flat" / "r-5.json"] = b"{"
    written[folder / "day-1" / "deep.json"] = b"[" * 40 + b"]" * 40
    written[folder / "day-0" / "node-3" / "odd.json"] = b'{"schema_version": 1, "code": "NO"}'
    for job, ranks, world in (("aaaaaaaaaaaa", (0, 2), 3), ("bbbbbbbbbbbb", (0, 1), 2)):
        for number in ranks:
            report = _rank_report(number, world)
            report["distributed"]["job"] = job
            own = report["distributed"]["ranks"][0]
            report["distributed"]["ranks"] = [{**own, "rank": number}]  # its own account only
            written[folder / f"day-{number % 2}" / f"{job}-{number}.json"] = \
                json.dumps(report).encode()
    for path in (list(written)[::-1] if backwards else written):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(written[path])


@pytest.mark.parametrize("args", [(), ("--format", "json"), ("--format", "markdown"),
                                  ("--only", "failed"), ("--list-unreadable",)])
def test_parts_in_children_and_in_one_process_give_the_same_output(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        args: tuple[str, ...]) -> None:
    """Read in one process, in 2 or 3 parts forked, in 2 parts one after the other here (where a
    fork is not made: not Linux, or a thread running), and in another listing order: the same
    output and status, byte for byte."""
    _mixed_fleet(tmp_path / "fleet")
    _mixed_fleet(tmp_path / "again", backwards=True)
    assert sorted(p.name for p in (tmp_path / "fleet").rglob("*")) == sorted(
        p.name for p in (tmp_path / "again").rglob("*"))
    monkeypatch.setattr(fleet_summary, "usable_cpus", lambda: 1)
    alone = _run(capsys, str(tmp_path / "fleet"), *args)
    assert alone[0] == 22
    if not args:
        assert "unreadable: 3 file(s)" in alone[1]
        assert "incomplete" in alone[1]
        assert "… and " in alone[1]
    forks: list[int] = []
    real_fork = os.fork
    monkeypatch.setattr(os, "fork", lambda: forks.append(1) or real_fork())
    for parts in (2, 3):
        monkeypatch.setattr(fleet_summary, "usable_cpus", lambda parts=parts: parts)
        assert _run(capsys, str(tmp_path / "fleet"), *args) == alone, f"{parts} parts"
        assert _run(capsys, str(tmp_path / "again"), *args) == alone, f"{parts} parts, again"
    if forked.can_fork():
        assert len(forks) == 2 * (1 + 2)  # each run: one child per part past the first
    monkeypatch.setattr(forked, "can_fork", lambda: False)
    forks.clear()
    assert _run(capsys, str(tmp_path / "fleet"), *args) == alone
    assert not forks


def _peak(folder: Path) -> int:
    with open(os.devnull, "w", encoding="utf-8") as sink, contextlib.redirect_stdout(sink):
        tracemalloc.start()
        try:
            assert summarize.main([str(folder)]) == 22
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()


def test_memory_does_not_grow_with_the_reports_that_passed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before, each report's line was kept (about 1.2 KiB per report)."""
    monkeypatch.setattr(fleet_summary, "usable_cpus", lambda: 1)  # all read in this process
    small = _peak(_fleetof(tmp_path / "small", 200))
    large = _peak(_fleetof(tmp_path / "large", 2200))
    per_report = (large - small) / 2000
    assert per_report < 64, f"{per_report:.0f} bytes per report"


def _fleetof(folder: Path, count: int) -> Path:
    _fleet(folder, count, failing_every=count)  # one failing report, the rest passed
    return folder


def test_a_list_json_lines_and_a_tar_archive_give_the_folders_counts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    codes = _fleet(tmp_path / "fleet", 60)
    files = sorted((tmp_path / "fleet").rglob("*.json"))
    monkeypatch.chdir(tmp_path)
    for separator in (b"\0", b"\n"):
        listing = separator.join(bytes(path.relative_to(tmp_path)) for path in files)
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(listing + separator)))
        status, out = _run(capsys, "-")
        assert (status, _counts(out)) == (22, codes)
        assert "fleet/day-01/node-0000/check-00000.json" in out  # as the list named it
    lines = b"\n".join(json.dumps(json.loads(path.read_bytes())).encode() for path in files)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(lines + b"\n\n")))
    status, out = _run(capsys, "-")
    assert (status, _counts(out)) == (22, codes)
    assert "<stdin>:1" in out
    with tarfile.open(tmp_path / "fleet.tar.gz", "w:gz") as archive:
        archive.add(tmp_path / "fleet", arcname="fleet")
    status, out = _run(capsys, "fleet.tar.gz")
    assert (status, _counts(out)) == (22, codes)
    assert "fleet.tar.gz:fleet/day-01/node-0000/check-00000.json" in out


def test_a_tar_archive_is_never_extracted_and_its_odd_members_are_counted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A member named out of the archive, a link, one too large: nothing is written, each is
    counted unreadable; the reports beside them are read."""
    monkeypatch.chdir(tmp_path)
    data = SNAPSHOTS["gpu_pass"].read_bytes()
    with tarfile.open("nodes.tar", "w") as archive:
        for name in [f"n-{index}.json" for index in range(45)] + ["../../escape.json"]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("link.json")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        archive.addfile(link)
        big = tarfile.TarInfo("big.json")
        big.size = fleet.MAX_REPORT_BYTES + 1
        archive.addfile(big, io.BytesIO(b" " * big.size))
    before = sorted(os.listdir(tmp_path))
    status, out = _run(capsys, "nodes.tar")
    assert sorted(os.listdir(tmp_path)) == before
    assert not (tmp_path.parent.parent / "escape.json").exists()
    assert status == 22
    assert _counts(out) == {"GPU_CHECK_PASSED": 46}
    assert "unreadable: 2 file(s)" in out


def test_a_fifo_in_a_list_is_refused_without_waiting(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFO here")
    os.mkfifo(tmp_path / "fifo.json")
    shutil.copy(SNAPSHOTS["gpu_pass"], tmp_path / "pass.json")
    listing = f"{tmp_path / 'fifo.json'}\n{tmp_path / 'pass.json'}\n".encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(listing)))
    status, out = _run(capsys, "-")
    assert status == 22
    assert "1 not a regular file" in out or "not a regular file" in out


@pytest.mark.parametrize("form", ["jsonl", "csv"])
def test_the_exports_have_one_line_per_report(tmp_path: Path, form: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    codes = _fleet(tmp_path / "fleet", 30)
    (tmp_path / "fleet" / "broken.json").write_text("{", encoding="utf-8")
    status, out = _run(capsys, str(tmp_path / "fleet"), "--format", form)
    assert status == 22
    rows = ([json.loads(line) for line in out.splitlines()] if form == "jsonl"
            else list(csv.DictReader(io.StringIO(out))))
    assert len(rows) == 30
    assert {row["code"] for row in rows} == set(codes)
    assert {row["cause"] for row in rows if row["code"] == "OUT_OF_MEMORY"} == {"out_of_memory"}


def _rank_report(number: int, world: int, *, stop: str | None = None) -> dict[str, Any]:
    report = copy.deepcopy(distributed(rank=number, world_size=world))
    report["distributed"]["job"] = "0123456789ab"
    report["schema_version"] = 1
    if stop is not None:
        report["code"] = "WORKER_FAILED"
        report["distributed"]["launcher_stopped"] = True
        report["distributed"]["launcher_stop"] = stop
    return report


def test_a_part_of_a_fleet_says_where_a_jobs_ranks_may_be(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One part of ``xargs``: rank 1 is elsewhere. Without ``--part`` the job is incomplete
    (22, as ever); with it, partial: no evidence of a pass, none of a failure (33)."""
    report = _rank_report(0, 2)
    report["distributed"]["ranks"] = report["distributed"]["ranks"][:1]  # its own account only
    (tmp_path / "r-0.json").write_text(json.dumps(report), encoding="utf-8")
    status, out = _run(capsys, str(tmp_path / "r-0.json"))
    assert status == 22
    assert "incomplete" in out
    status, out = _run(capsys, str(tmp_path / "r-0.json"), "--part")
    assert status == 33
    assert "partial (its other ranks may be in another part)" in out
    assert "not among these reports: rank(s) 1" in out


def test_the_launchers_stop_is_the_jobs_cause(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    for number in (0, 1):
        (tmp_path / f"r-{number}.json").write_text(
            json.dumps(_rank_report(number, 2, stop="time_limit")), encoding="utf-8")
    status, out = _run(capsys, str(tmp_path))
    assert status == 22
    assert "stopped by the launcher, the job's Slurm time limit: rank(s) 0, 1" in out


def test_prometheus_metrics_meet_the_format_and_name_no_host(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _fleet(tmp_path / "fleet", 50)
    metrics = tmp_path / "summary.prom"
    status, _ = _run(capsys, str(tmp_path / "fleet"), "--prometheus", str(metrics))
    assert status == 22
    text = metrics.read_text(encoding="utf-8")
    assert set(assert_exposition_format(text).values()) == {"gauge"}
    _promtool(text)
    assert 'kernodeck_fleet_reports{code="GPU_UNAVAILABLE"} 2' in text
    assert 'kernodeck_fleet_failed_reports{code="OUT_OF_MEMORY",stage="compute",' \
           'cause="out_of_memory"} 2' in text
    assert "node-" not in text
    assert "day-" not in text
    assert not list(tmp_path.glob("*.partial"))
    assert summarize.main([str(tmp_path / "fleet"), "--prometheus",
                           str(tmp_path / "x.txt")]) == 2


def test_a_failing_all_devices_report_is_counted_in_the_fleet_view(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _fleet(tmp_path / "fleet", 45)
    report = _all_devices("GPU_CHECK_PASSED", "RUNTIME_ERROR", code="RUNTIME_ERROR")
    (tmp_path / "fleet" / "all.json").write_text(json.dumps(report), encoding="utf-8")
    status, out = _run(capsys, str(tmp_path / "fleet"))
    assert status == 22
    assert "--all-devices reports that did not pass: 1" in out


def test_a_fleet_whose_jobs_all_passed_says_so_and_lists_none(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for job in ("0123456789ab", "ba9876543210"):
        for number in (0, 1):
            report = _rank_report(number, 2)
            report["distributed"]["job"] = job
            (tmp_path / f"{job}-r{number}.json").write_text(json.dumps(report),
                                                            encoding="utf-8")
    for index in range(fleet.SMALL):  # a fleet, every report passing
        shutil.copy(SNAPSHOTS["gpu_pass"], tmp_path / f"check-{index:03d}.json")
    status, out = _run(capsys, str(tmp_path))
    assert status == 0, out
    assert "jobs: 2, every one passed" in out
    assert "did not" not in out


def test_one_folder_of_more_than_a_screenful_of_reports_is_a_fleet(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Counted by its files, not by the batch its folder is read in: one folder of 41 reports
    gets the fleet view, never a line per report (a million of them, one line each)."""
    for index in range(fleet.SMALL + 1):
        shutil.copy(SNAPSHOTS["gpu_pass"], tmp_path / f"check-{index:03d}.json")
    status, out = _run(capsys, str(tmp_path))
    assert status == 0, out
    assert "counts per code, worst first" in out
    assert "check-000.json" not in out
    (tmp_path / f"check-{fleet.SMALL:03d}.json").unlink()  # 40: each report's line, as ever
    status, out = _run(capsys, str(tmp_path))
    assert status == 0, out
    assert "check-000.json" in out

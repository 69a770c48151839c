"""--all-devices: every visible GPU checked in one worker, each with its own result, through the
fake torch's nodes of four GPUs (tests/fakes/torch/_devices.py)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import SRC, Result, assert_valid_report, fake_gpu_env, pids_gone, run_tool


def check(pyz: Path, tmp_path: Path, scenario: str, *args: str, **extra: str) -> Result:
    out = tmp_path / f"{scenario}.json"
    result = run_tool(sys.executable, pyz, ["--all-devices", *args, "--output", str(out)],
                      env=fake_gpu_env(scenario, **extra))
    assert result.report is not None, result.stdout + result.stderr
    assert_valid_report(result.report)
    assert "Traceback" not in result.stdout + result.stderr
    return result


def codes(report: dict[str, Any]) -> list[str | None]:
    return [device["check"]["code"] for device in report["pytorch"]["devices"]]


def test_four_healthy_gpus_each_pass_and_copy_to_each_other(pyz: Path, tmp_path: Path) -> None:
    result = check(pyz, tmp_path, "cuda_pass", KD_FAKE_DEVICES="4")
    assert result.returncode == 0
    report = result.report
    assert report["code"] == "GPU_CHECK_PASSED"
    assert report["request"]["all_devices"] is True
    assert codes(report) == ["GPU_CHECK_PASSED"] * 4
    for device in report["pytorch"]["devices"]:
        assert device["check"] == {**device["check"], "stage": "compute", "product_verified": True,
                                   "gradient_verified": True, "loss": 196, "synchronized": True,
                                   "error": None}
    peers = report["pytorch"]["peers"]
    assert [(peer["source"], peer["target"]) for peer in peers] == [
        (source, target) for source in range(4) for target in range(4) if source != target]
    assert all(peer["copy_verified"] and peer["code"] == "GPU_CHECK_PASSED" for peer in peers)
    # The fake's NVLink pairs: 0-1 and 2-3 reach each other directly, the others do not.
    assert {(peer["source"], peer["target"]) for peer in peers if peer["access"]} == {
        (0, 1), (1, 0), (2, 3), (3, 2)}
    assert report["execution"]["device"] == "cuda:0"
    lines = result.stdout.splitlines()
    assert [line.split()[0] for line in lines if "passed in" in line] == [
        "cuda:0", "cuda:1", "cuda:2", "cuda:3"]
    assert any("12 of 12 copies verified | peer access 4 of 12" in line for line in lines)


def test_one_failing_and_one_hanging_gpu_hide_nothing_checked(pyz: Path,
                                                              tmp_path: Path) -> None:
    pids_file = tmp_path / "pids"
    result = check(pyz, tmp_path, "node_with_faulty_and_hung_gpu", "--timeout", "5",
                   KD_FAKE_TORCH_PIDS=str(pids_file))
    assert result.elapsed_s < 5 + 2, result.elapsed_s
    report = result.report
    # The lowest-index GPU that failed decides: cuda:1's wrong product, not cuda:2's hang.
    assert (result.returncode, report["code"], report["stage"]) == (8, "CHECK_FAILED", "compute")
    assert codes(report) == ["GPU_CHECK_PASSED", "CHECK_FAILED", "TIMEOUT", None]
    faulty, hung, unreached = (device["check"] for device in report["pytorch"]["devices"][1:])
    assert (faulty["product_verified"], faulty["gradient_verified"]) == (False, False)
    assert faulty["error"]["step"] == "verify"
    assert faulty["error"]["message"] == "wrong product, loss, gradient"
    assert (hung["error"]["kind"], hung["error"]["step"]) == ("timeout", "synchronize")
    assert hung["synchronized"] is False
    assert unreached == {"code": None, "stage": None, "product_verified": False,
                         "gradient_verified": False, "loss": None, "synchronized": None,
                         "duration_ms": None, "error": None}
    assert report["error"] == faulty["error"]
    assert report["execution"]["device"] == "cuda:1"
    assert report["pytorch"]["peers"] == []  # the hang came before any copy
    text = result.stdout
    assert "cuda:1   NVIDIA GeForce RTX 5070 | capability 12.0 | 12.0 GiB | CHECK_FAILED at " \
           "compute (verify): wrong product, loss, gradient" in text
    assert "TIMEOUT at compute (synchronize): no result within 5 s" in text
    assert "not checked: the worker was stopped before this device" in text
    pids = [int(pid) for pid in pids_file.read_text().split()]
    assert pids_gone(pids) == []


def test_a_hang_on_the_first_gpu_is_the_verdict(pyz: Path, tmp_path: Path) -> None:
    result = check(pyz, tmp_path, "hang_in_synchronize", "--timeout", "5", KD_FAKE_DEVICES="2")
    assert (result.returncode, result.report["code"]) == (10, "TIMEOUT")
    assert codes(result.report) == ["TIMEOUT", None]
    assert result.report["error"]["step"] == "synchronize"


def test_a_gpu_with_an_ecc_error_leaves_the_others_checked_and_copying(pyz: Path,
                                                                        tmp_path: Path) -> None:
    result = check(pyz, tmp_path, "node_with_ecc_error_gpu")
    report = result.report
    assert (result.returncode, report["code"]) == (9, "RUNTIME_ERROR")
    assert codes(report) == ["GPU_CHECK_PASSED", "GPU_CHECK_PASSED", "RUNTIME_ERROR",
                             "GPU_CHECK_PASSED"]
    failed = report["pytorch"]["devices"][2]["check"]["error"]
    assert (failed["type"], failed["step"]) == ("RuntimeError", "synchronize")
    assert "uncorrectable ECC error" in failed["message"]
    pairs = {(peer["source"], peer["target"]) for peer in report["pytorch"]["peers"]}
    assert pairs == {(s, t) for s in (0, 1, 3) for t in (0, 1, 3) if s != t}
    assert all(peer["copy_verified"] for peer in report["pytorch"]["peers"])


def test_a_corrupt_peer_copy_fails_the_check(pyz: Path, tmp_path: Path) -> None:
    result = check(pyz, tmp_path, "node_with_corrupt_peer_copy")
    report = result.report
    assert (result.returncode, report["code"]) == (8, "CHECK_FAILED")
    assert codes(report) == ["GPU_CHECK_PASSED"] * 4
    wrong = [(peer["source"], peer["target"]) for peer in report["pytorch"]["peers"]
             if not peer["copy_verified"]]
    assert wrong == [(0, 3), (1, 3), (2, 3)]
    assert (report["error"]["step"], report["error"]["message"]) == (
        "copy", "wrong copy cuda:0 -> cuda:3")
    assert "cuda:0 -> cuda:3: CHECK_FAILED" in result.stdout


def test_a_hung_copy_names_the_copies_never_tried_and_its_access_as_unknown(
        pyz: Path, tmp_path: Path) -> None:
    pids_file = tmp_path / "pids"
    result = check(pyz, tmp_path, "node_with_hung_peer_copy", "--timeout", "5",
                   KD_FAKE_TORCH_PIDS=str(pids_file))
    assert result.elapsed_s < 5 + 2, result.elapsed_s
    report = result.report
    assert (result.returncode, report["code"], report["error"]["step"]) == (10, "TIMEOUT", "copy")
    assert codes(report) == ["GPU_CHECK_PASSED"] * 4
    peers = report["pytorch"]["peers"]
    assert [(peer["source"], peer["target"], peer["code"]) for peer in peers] == [
        (0, 1, "GPU_CHECK_PASSED"), (0, 2, "GPU_CHECK_PASSED"), (0, 3, "GPU_CHECK_PASSED"),
        (1, 0, "GPU_CHECK_PASSED"), (1, 2, "TIMEOUT")]
    assert peers[-1]["access"] is None  # the hung copy never said
    text = result.stdout
    # Of the five copies tried, 0-1 and 1-0 reached their target directly; the hung one is not
    # counted as "no"; the seven after it are named.
    assert "4 of 5 copies verified | peer access 2 of 5, 1 unknown" in text
    assert "cuda:1 -> cuda:2: TIMEOUT" in text
    assert ("7 copies not tried (the worker was stopped first): cuda:1 -> cuda:3, "
            "cuda:2 -> cuda:0, cuda:2 -> cuda:1, cuda:2 -> cuda:3, cuda:3 -> cuda:0, "
            "cuda:3 -> cuda:1, cuda:3 -> cuda:2") in text
    pids = [int(pid) for pid in pids_file.read_text().split()]
    assert pids_gone(pids) == []


def test_a_hang_before_any_copy_names_the_copies_never_tried(pyz: Path,
                                                             tmp_path: Path) -> None:
    result = check(pyz, tmp_path, "node_with_faulty_and_hung_gpu", "--timeout", "5")
    # cuda:0 and cuda:1 computed (cuda:1 wrongly) before cuda:2 hung: their copies never ran.
    assert result.report["pytorch"]["peers"] == []
    assert ("peers    2 copies not tried (the worker was stopped first): cuda:0 -> cuda:1, "
            "cuda:1 -> cuda:0") in result.stdout


def test_peer_access_the_backend_cannot_tell_is_unknown_not_none(pyz: Path,
                                                                 tmp_path: Path) -> None:
    result = check(pyz, tmp_path, "xpu_two_devices")
    assert [peer["access"] for peer in result.report["pytorch"]["peers"]] == [None, None]
    assert "2 of 2 copies verified | peer access unknown" in result.stdout
    assert "peer access 0 of 2" not in result.stdout


def test_summarize_shows_each_device_and_the_copies_of_every_device_reports(
        pyz: Path, tmp_path: Path) -> None:
    for scenario in ("node_with_hung_peer_copy", "node_with_faulty_and_hung_gpu",
                     "xpu_two_devices"):
        check(pyz, tmp_path, scenario, "--timeout", "5")
    result = run_tool(sys.executable, pyz, ["summarize", str(tmp_path)])
    lines = result.stdout.splitlines()
    assert lines[0].startswith("devices of --all-devices")
    at = lines.index("  node_with_faulty_and_hung_gpu.json: CHECK_FAILED")
    assert [line.split()[:3] for line in lines[at + 2:at + 6]] == [
        ["cuda:0", "GPU_CHECK_PASSED", "-"], ["cuda:1", "CHECK_FAILED", "verify"],
        ["cuda:2", "TIMEOUT", "synchronize"], ["cuda:3", "-", "not"]]
    assert lines[at + 6] == ("    copies  2 copies not tried (the worker was stopped first): "
                             "cuda:0 -> cuda:1, cuda:1 -> cuda:0")
    assert "    copies  2 of 2 copies verified | peer access unknown" in lines
    every = json.loads(run_tool(sys.executable, pyz, ["summarize", str(tmp_path), "--format",
                                                      "json"]).stdout)["every_device"]
    hung = next(node for node in every if node["file"] == "node_with_hung_peer_copy.json")
    assert hung["copies"] == {**hung["copies"], "tried": 5, "verified": 4, "access": 2,
                              "access_unknown": 1}
    assert hung["copies"]["not_tried"][0] == {"source": "cuda:1", "target": "cuda:3"}
    assert len(hung["copies"]["not_tried"]) == 7
    shown = run_tool(sys.executable, pyz, ["summarize", str(tmp_path), "--format",
                                           "markdown"]).stdout
    assert "- copies: 7 copies not tried (the worker was stopped first): cuda:1 -&gt; cuda:3, " \
           "cuda:2 -&gt; cuda:0" in shown


def test_odd_devices_and_copies_of_a_report_from_elsewhere_are_left_out() -> None:
    from kernodeck_diagnostic.report.devices import every_device_row

    passed = {"code": "GPU_CHECK_PASSED", "error": None}
    report = {"code": "TIMEOUT", "request": {"all_devices": True}, "pytorch": {
        "backend": "\x1b[31m", "devices": [
            {"index": 0, "check": passed}, {"index": 1, "check": passed},
            {"index": "2", "check": passed}, {"index": 3, "check": {"code": "\x1b[0mX",
                                                                    "error": {"step": 7}}},
            "not a device"],
        "peers": [{"source": 0, "target": 1, "code": "\x1b[1m", "access": None},
                  {"source": True, "target": 0}, 5]}}
    row = every_device_row(report, "odd.json")
    assert row is not None
    assert row.devices == ((0, "GPU_CHECK_PASSED", None), (1, "GPU_CHECK_PASSED", None),
                           (3, None, None))
    assert row.copies is not None
    assert (row.backend, row.copies.tried, row.copies.unknown) == ("cuda", 1, 1)
    assert row.copies.failed == ((0, 1, "-"),)
    assert row.copies.untried == ((1, 0),)
    # A report with a hundred thousand devices is not a node: no pair is listed as untried.
    many = {"index": 0, "check": passed}
    report["pytorch"]["devices"] = [{**many, "index": index} for index in range(100_000)]
    row = every_device_row(report, "many.json")
    assert row is not None
    assert row.copies is not None
    assert row.copies.untried == ()


def test_markdown_has_one_row_per_device(pyz: Path, tmp_path: Path) -> None:
    result = check(pyz, tmp_path, "node_with_ecc_error_gpu", "--format", "markdown")
    rows = [line for line in result.stdout.splitlines() if line.startswith("| cuda:")]
    assert len(rows) == 4
    assert "RUNTIME\\_ERROR" in rows[2] or "RUNTIME_ERROR" in rows[2]
    assert all("passed in" in row for row in (rows[0], rows[1], rows[3]))


def test_the_worker_runs_once_for_every_device(pyz: Path, tmp_path: Path) -> None:
    marker = tmp_path / "imports"
    result = check(pyz, tmp_path, "cuda_pass", KD_FAKE_DEVICES="4",
                   KD_FAKE_TORCH_MARKER=str(marker))
    assert result.returncode == 0
    assert marker.read_text() == "imported\n"  # one process, one import of torch


@pytest.mark.parametrize(("args", "says"), [
    (["--device", "cpu"], "--all-devices contradicts --device cpu: every GPU is checked, and "
                          "the CPU mode uses none; give one of them"),
    (["--device-index", "1"], "--all-devices contradicts --device-index: every GPU is checked, "
                              "not one chosen GPU; give one of them"),
    (["--device-index", "0"], "--all-devices contradicts --device-index: every GPU is checked, "
                              "not one chosen GPU; give one of them"),
])
def test_all_devices_with_one_device_is_a_usage_error(pyz: Path, args: list[str],
                                                      says: str) -> None:
    result = run_tool(sys.executable, pyz, ["--all-devices", *args],
                      env=fake_gpu_env("cuda_pass"))
    assert result.returncode == 2
    assert says in result.stderr
    assert result.stdout == ""


def test_the_api_checks_every_device(tmp_path: Path) -> None:
    script = (
        "import kernodeck_diagnostic as k\n"
        "r = k.check(all_devices=True).to_dict()\n"
        "print(r['code'], [d['check']['code'] for d in r['pytorch']['devices']])\n"
        "for bad in ({'all_devices': 'yes'}, {'all_devices': True, 'device': 'cpu'}):\n"
        "    try:\n"
        "        k.check(**bad)\n"
        "    except (TypeError, ValueError) as exc:\n"
        "        print(type(exc).__name__, exc)\n")
    env = fake_gpu_env("node_with_ecc_error_gpu")
    env["PYTHONPATH"] += f":{SRC}"
    said = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=60, cwd=tmp_path, check=False)
    lines = said.stdout.splitlines()
    assert lines[0] == "RUNTIME_ERROR ['GPU_CHECK_PASSED', 'GPU_CHECK_PASSED', " \
                       "'RUNTIME_ERROR', 'GPU_CHECK_PASSED']", said.stderr
    assert lines[1] == "TypeError check(all_devices=...) takes True or False; not str"
    # The API's own words: its arguments, never a --flag.
    assert lines[2] == ("ValueError check(all_devices=True, device='cpu'): these contradict each "
                        "other: every GPU is checked, and the CPU mode uses none")


# -- the front decides: what a worker says of its devices is values, never verdicts -------------

def _events(*events: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(event).encode() + b"\n" for event in events)


def _report_of(log: bytes, all_devices: bool = True) -> dict[str, Any]:
    from kernodeck_diagnostic.api import Request
    from kernodeck_diagnostic.report.build import build
    from kernodeck_diagnostic.report.redact import Redactor
    from kernodeck_diagnostic.supervision.events import EventReader
    from kernodeck_diagnostic.supervision.supervisor import WorkerRun

    reader = EventReader(io.BytesIO(log))  # type: ignore[arg-type]
    reader.poll()
    reader.close()
    request = Request("gpu", 0, 30, False, all_devices=all_devices)
    report = build(request, WorkerRun(reader.state, "finished", 0, 0.5), None, Redactor()).report
    assert_valid_report(report)
    return report


RIGHT = {"product": [[4.0, 4.0], [10.0, 8.0]], "loss": 196.0,
         "gradient": [[16.0, 24.0], [40.0, 52.0]]}
CLAIMED = {"code": "GPU_CHECK_PASSED", "stage": "compute", "product_verified": True,
           "gradient_verified": True, "loss": 196, "synchronized": True, "duration_ms": 1.0,
           "error": None}


def _two_devices(*extra: dict[str, Any]) -> bytes:
    devices = [{"index": index, "name": "NVIDIA H200", "capability": "9.0",
                "total_memory_bytes": 150 * 2**30, "check": CLAIMED} for index in (0, 1)]
    return _events(
        {"event": "stage_started", "stage": "device"},
        {"event": "facts", "block": "pytorch", "values": {
            "imported": True, "backend": "cuda", "cuda_build": "12.8", "gpu_available": True,
            "visible_device_count": 2, "devices": devices, "peers": []}},
        {"event": "stage_finished", "stage": "device", "duration_ms": 1.0},
        {"event": "stage_started", "stage": "compute"},
        *extra,
        {"event": "stage_finished", "stage": "compute", "duration_ms": 1.0},
        {"event": "final"})


def test_a_device_verdict_the_worker_sends_is_never_kept() -> None:
    wrong = {**RIGHT, "product": [[4.0, 4.0], [10.0, 9.0]]}
    report = _report_of(_two_devices(
        {"event": "device_result", "index": 0, **RIGHT, "synchronized": True,
         "duration_ms": 1.0, "error": None},
        {"event": "device_result", "index": 1, **wrong, "synchronized": True,
         "duration_ms": 1.0, "error": None}))
    # cuda:1 claimed a pass beside wrong values: the front compares the values itself.
    assert report["code"] == "CHECK_FAILED"
    assert codes(report) == ["GPU_CHECK_PASSED", "CHECK_FAILED"]
    assert report["pytorch"]["peers"] == []  # the worker's own "peers" fact was dropped
    assert "facts.pytorch.peers" in report["warnings"][-1]["message"]


def test_a_worker_that_ends_without_a_device_s_values_passes_nothing() -> None:
    report = _report_of(_two_devices(
        {"event": "device_result", "index": 0, **RIGHT, "synchronized": True,
         "duration_ms": 1.0, "error": None}))
    assert codes(report) == ["GPU_CHECK_PASSED", "CHECK_FAILED"]
    assert report["code"] == "CHECK_FAILED"
    assert report["error"]["message"] == "the worker reported no verified result"


@pytest.mark.parametrize("event", [
    {"event": "device_result", "index": -1, **RIGHT, "synchronized": True, "duration_ms": 1.0,
     "error": None},
    {"event": "device_result", "index": 0, **RIGHT, "synchronized": "yes", "duration_ms": 1.0,
     "error": None},
    {"event": "device_result", "index": 0, **RIGHT, "synchronized": True, "duration_ms": 1.0,
     "error": {"kind": "bogus", "step": "verify", "message": "x"}},
    {"event": "peer_result", "source": 0, "target": 64, "copy": RIGHT["product"],
     "access": None, "duration_ms": 1.0, "error": None},
])
def test_a_malformed_device_event_is_dropped_and_counted(event: dict[str, Any]) -> None:
    report = _report_of(_two_devices(event))
    assert report["warnings"][-1]["category"] == "kernodeck-diagnostic"


def test_a_wrong_direct_copy_between_good_gpus_is_named_as_broken_peer_to_peer(
        pyz: Path, tmp_path: Path) -> None:
    """In the corrupt-copy node only cuda:2 -> cuda:3 is a direct (peer access) path: the copies
    into cuda:3 from 0 and 1 went through host memory and are not P2P's fault."""
    report = check(pyz, tmp_path, "node_with_corrupt_peer_copy").report
    found = {f["id"]: f for f in report["findings"]}
    assert found["NCCL_P2P_BROKEN"]["evidence"] == [
        "cuda:2 -> cuda:3: peer access reported, copy wrong"]
    assert "NCCL_P2P_DISABLE=1" in found["NCCL_P2P_BROKEN"]["next_action"]
    # Its cuda:2 hangs: the time limit ends that device sooner, the copies between the others
    # are what is read.
    healthy = check(pyz, tmp_path, "node_with_faulty_and_hung_gpu", "--timeout", "5").report
    assert "NCCL_P2P_BROKEN" not in {f["id"] for f in healthy["findings"]}


def test_broken_peer_to_peer_needs_a_direct_path_between_good_gpus() -> None:
    from accelerator_fixtures import P2P_QUIET
    from findings_helpers import ids

    assert [("NCCL_P2P_BROKEN" in ids(case)) for case in P2P_QUIET] == [False, False, False]

"""``health-check`` and ``--prometheus``: whose fault a failure is, the reason line, the exit
profiles, the Slurm drain and resume (for real, on the test set-up's Slurm), the metrics.

The decisions are pure functions (``report/health.py``): one table row per branch, each row
planting exactly one cause on a passing report. The command runs as an operator runs it: the
GPUs it needs are the fake torch's (named after the failure each stands for), the missing torch
is the dev venv's real one, Slurm is real (``scripts/slurm-up``), and the metrics are read by
Prometheus' own ``promtool`` where it is installed (``scripts/test`` installs it as root) and by
the exposition format's grammar everywhere.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, clean_env, fake_gpu_env, run_tool
from kernodeck_diagnostic.report.codes import CODES, VERDICTS
from kernodeck_diagnostic.report.health import (
    FAULTS,
    REASON_MAX,
    Health,
    exit_status,
    judge_health,
    process_exit_status,
    reason_line,
    slurm_action,
)
from kernodeck_diagnostic.report.prometheus import check_metrics, write
from test_slurm import slurm_up

MODULE = ["-m", "kernodeck_diagnostic"]
PASSING = json.loads((ROOT / "tests" / "snapshots" / "gpu_pass.json").read_text(encoding="utf-8"))


def _report(**changes: Any) -> dict[str, Any]:
    """The recorded passing GPU report with ``changes`` (one cause) planted."""
    report = copy.deepcopy(PASSING)
    report.update(changes)
    return report


def _failed(code: str, message: str = "it failed", **changes: Any) -> dict[str, Any]:
    return _report(code=code, status="failed", exit_code=VERDICTS[code].exit_code,
                   error={"stage": "compute", "kind": "runtime_error", "type": "RuntimeError",
                          "message": message}, **changes)


def _all_devices(*codes: str | None, code: str = "GPU_CHECK_PASSED") -> dict[str, Any]:
    """An --all-devices report whose devices' own checks gave ``codes`` (None: no check)."""
    report = _report(code=code)
    report["request"] = {**report["request"], "all_devices": True}
    devices = []
    for index, device_code in enumerate(codes):
        entry: dict[str, Any] = {"index": index, "name": "GPU"}
        if device_code is not None:
            entry["check"] = {"code": device_code}
        devices.append(entry)
    report["pytorch"] = {**report["pytorch"], "devices": devices}
    return report


def _finding(finding_id: str) -> dict[str, Any]:
    return {"id": finding_id, "severity": "error", "summary": "", "next_action": "",
            "evidence": {}}


# -- whose fault: one row per branch, one cause per row ------------------------------------------

JUDGED = [
    ("one GPU passed", _report(), "passed", None),
    ("every GPU passed", _all_devices("GPU_CHECK_PASSED", "GPU_CHECK_PASSED"), "passed", None),
    ("no device checked is no pass", _all_devices(), "inconclusive", None),
    ("a device without its own check", _all_devices("GPU_CHECK_PASSED", None),
     "inconclusive", 1),
    ("one device of four failed", _all_devices("GPU_CHECK_PASSED", "GPU_CHECK_PASSED",
                                               "RUNTIME_ERROR", "GPU_CHECK_PASSED",
                                               code="RUNTIME_ERROR"), "node", 2),
    ("GPU unusable", _failed("GPU_UNAVAILABLE"), "node", 0),
    ("a wrong product", _failed("CHECK_FAILED"), "node", 0),
    ("a backend error (ECC)", _failed("RUNTIME_ERROR"), "node", 0),
    ("torch missing", _failed("TORCH_MISSING", stage="import"), "environment", None),
    ("torch broken", _failed("TORCH_IMPORT_FAILED", stage="import"), "environment", None),
    ("a build without a GPU backend", _failed("GPU_BACKEND_ABSENT", stage="backend"),
     "environment", None),
    ("devices hidden by a setting", _failed("GPU_UNAVAILABLE",
                                            findings=[_finding("DEVICES_HIDDEN")]),
     "environment", 0),
    ("the GPU taken by a job", _failed("RUNTIME_ERROR", findings=[_finding("GPU_BUSY")]),
     "inconclusive", 0),
    ("the time limit", _failed("TIMEOUT"), "inconclusive", 0),
    ("memory held", _failed("OUT_OF_MEMORY"), "inconclusive", 0),
    ("no result from the worker", _failed("WORKER_FAILED"), "inconclusive", 0),
]


@pytest.mark.parametrize(("report", "fault", "device"),
                         [row[1:] for row in JUDGED], ids=[row[0] for row in JUDGED])
def test_whose_fault(report: dict[str, Any], fault: str, device: int | None) -> None:
    health = judge_health(report)
    assert (health.fault, health.device) == (fault, device)
    assert health.drains is (fault == "node")
    if fault == "passed":
        assert health.reason == ""
    else:
        assert health.reason.startswith("kernodeck: ")
        assert len(health.reason) <= REASON_MAX


def test_every_fault_has_a_row() -> None:
    assert {row[2] for row in JUDGED} == set(FAULTS)


def test_the_reason_line_is_short_printable_and_names_no_host() -> None:
    host = socket.gethostname()
    long = "CUDA error: " + "x" * 200 + "\x1b[31m\r\nforged line"
    line = reason_line("RUNTIME_ERROR", 3, long)
    assert line.startswith("kernodeck: RUNTIME_ERROR gpu 3: CUDA error: x")
    assert len(line) == REASON_MAX
    assert line.endswith("...")
    assert all(" " <= char <= "~" for char in line)
    assert reason_line("GPU_UNAVAILABLE", None, "\x07") == "kernodeck: GPU_UNAVAILABLE"
    health = judge_health(_failed("GPU_UNAVAILABLE", message="no GPU <host> found"))
    assert host not in health.reason


# -- exit profiles ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("fault", "native", "npd", "prolog"), [
    ("passed", 0, 0, 0), ("node", 40, 1, 1), ("environment", 41, 2, 0),
    ("inconclusive", 42, 2, 0)])
def test_exit_profiles(fault: str, native: int, npd: int, prolog: int) -> None:
    health = Health(fault, "X", None, "")  # type: ignore[arg-type]
    assert [exit_status(health, p) for p in ("native", "npd", "prolog")] == [native, npd, prolog]


def test_the_codes_table_holds_the_native_statuses() -> None:
    assert [CODES[name].exit_code for name in ("HEALTH_PASSED", "HEALTH_NODE_FAULT",
                                               "HEALTH_ENVIRONMENT_FAULT",
                                               "HEALTH_INCONCLUSIVE")] == [0, 40, 41, 42]


@pytest.mark.parametrize("status", [1, 2, 130, 143, 15])
def test_the_tools_own_ending_never_drains(status: int) -> None:
    assert process_exit_status(status, "native") == status
    assert process_exit_status(status, "npd") == 2  # node-problem-detector's "unknown"
    assert process_exit_status(status, "prolog") == 0  # a prolog drains on anything else


# -- what to do with a Slurm node: one row per branch ---------------------------------------------

NODE = Health("node", "RUNTIME_ERROR", 2, "kernodeck: RUNTIME_ERROR gpu 2: ECC")
PASS = Health("passed", "GPU_CHECK_PASSED", None, "")
ENVIRONMENT = Health("environment", "TORCH_MISSING", None, "kernodeck: TORCH_MISSING")


@pytest.mark.parametrize(("health", "drained", "reason", "action"), [
    (NODE, False, None, "drain"),
    (NODE, True, NODE.reason, "already_drained"),
    (NODE, True, "kernodeck: CHECK_FAILED gpu 1: wrong", "drain"),  # ours, a new reason
    (NODE, True, "disk replaced, ticket 4411", "left_operator_drain"),
    (PASS, True, "kernodeck: RUNTIME_ERROR gpu 2: ECC", "resume"),
    (PASS, True, "disk replaced, ticket 4411", "left_operator_drain"),
    (PASS, False, None, "nothing"),
    (ENVIRONMENT, False, None, "not_drained"),
    (ENVIRONMENT, True, "kernodeck: RUNTIME_ERROR gpu 2: ECC", "not_drained"),
    (ENVIRONMENT, True, "disk replaced", "not_drained"),
])
def test_slurm_action(health: Health, drained: bool, reason: str | None, action: str) -> None:
    assert slurm_action(health, drained, reason) == action


# -- the command, as an operator runs it -----------------------------------------------------------

def _health_check(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *MODULE, "health-check", *args], capture_output=True,
                          text=True, env=env, timeout=120, stdin=subprocess.DEVNULL, check=False)


def test_a_healthy_node_of_two_gpus() -> None:
    done = _health_check(env=fake_gpu_env("cuda_pass", KD_FAKE_DEVICES="2"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("HEALTHY     GPU_CHECK_PASSED: 2 GPU(s) checked")


@pytest.mark.parametrize(("profile", "status"), [("native", 40), ("npd", 1), ("prolog", 1)])
def test_an_ecc_error_on_one_gpu_is_the_nodes_fault(profile: str, status: int) -> None:
    done = _health_check("--exit-profile", profile, "--format", "json",
                         env=fake_gpu_env("node_with_ecc_error_gpu"))
    said = json.loads(done.stdout)
    assert done.returncode == status, done.stderr
    assert said["fault"] == "node"
    assert said["device"] == 2
    assert said["exit_code"] == status
    assert said["reason"].startswith("kernodeck: RUNTIME_ERROR gpu 2: CUDA error: uncorrectable")
    assert len(said["reason"]) <= REASON_MAX
    assert said["slurm"] is None


@pytest.mark.parametrize(("profile", "status"), [("native", 41), ("npd", 2), ("prolog", 0)])
def test_torch_missing_is_the_environments_fault(profile: str, status: int) -> None:
    done = _health_check("--exit-profile", profile, env=clean_env())  # the dev venv: no torch
    assert done.returncode == status, done.stderr
    assert done.stdout.startswith("ENVIRONMENT kernodeck: TORCH_MISSING")
    assert "not drained" in done.stdout


def test_a_busy_gpu_is_no_fault_of_the_node() -> None:
    done = _health_check(env=fake_gpu_env("gpu_exclusive_process_busy"))
    assert done.returncode == 42, done.stdout + done.stderr
    assert done.stdout.startswith("INCONCLUSIVE")


@pytest.mark.parametrize(("profile", "status"), [("native", 2), ("npd", 2), ("prolog", 0)])
def test_a_usage_error_never_drains(profile: str, status: int) -> None:
    done = _health_check("--exit-profile", profile, "--timeout", "500", env=clean_env())
    assert done.returncode == status
    assert "--timeout must be between 5 and 120 seconds" in done.stderr


def test_prometheus_needs_the_collectors_suffix(tmp_path: Path) -> None:
    done = _health_check("--prometheus", str(tmp_path / "kernodeck.txt"), env=clean_env())
    assert done.returncode == 2
    assert "reads only files ending in .prom" in done.stderr


def test_the_report_and_the_metrics_are_written(tmp_path: Path) -> None:
    report, metrics = tmp_path / "report.json", tmp_path / "kernodeck.prom"
    done = _health_check("--output", str(report), "--prometheus", str(metrics),
                         env=fake_gpu_env("node_with_ecc_error_gpu"))
    assert done.returncode == 40, done.stderr
    assert json.loads(report.read_text(encoding="utf-8"))["code"] == "RUNTIME_ERROR"
    text = metrics.read_text(encoding="utf-8")
    assert 'kernodeck_health_fault{fault="node"} 1' in text
    assert 'kernodeck_device_check_passed{device="2"} 0' in text
    assert sorted(path.name for path in tmp_path.iterdir()) == ["kernodeck.prom", "report.json"]


# -- the metrics -----------------------------------------------------------------------------------

# The text exposition format (0.0.4): comments, then samples `name{labels} value`.
_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"'
SAMPLE = re.compile(rf"({_NAME})(?:\{{(?:{_LABEL})(?:,{_LABEL})*\}})? "
                    r"(?:[-+]?(?:[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?|Inf|NaN))")
HELP = re.compile(rf"# HELP ({_NAME}) .+")
TYPE = re.compile(rf"# TYPE ({_NAME}) (counter|gauge|histogram|summary|untyped)")


def assert_exposition_format(text: str) -> dict[str, str]:
    """Every line of ``text`` is a HELP, a TYPE or a sample of the family last typed; each family
    is typed once, before its samples. The families and their types."""
    assert text.endswith("\n")
    typed: dict[str, str] = {}
    helped: set[str] = set()
    current = None
    for line in text.splitlines():
        if (found := HELP.fullmatch(line)) is not None:
            assert found.group(1) not in helped
            helped.add(found.group(1))
        elif (found := TYPE.fullmatch(line)) is not None:
            assert found.group(1) not in typed
            assert found.group(1) in helped
            typed[found.group(1)], current = found.group(2), found.group(1)
        else:
            sample = SAMPLE.fullmatch(line)
            assert sample is not None, line
            assert sample.group(1) == current, line
    return typed


def _promtool(text: str) -> None:
    promtool = shutil.which("promtool")
    if promtool is None:
        return  # scripts/test installs it as root; the grammar above holds everywhere
    checked = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True,
                             text=True, timeout=30, check=False)
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout + checked.stderr == ""  # not even a lint warning


@pytest.mark.parametrize("report", [
    _report(), _failed("TIMEOUT"), _all_devices("GPU_CHECK_PASSED", "RUNTIME_ERROR",
                                                code="RUNTIME_ERROR"),
    _report(tool={"name": "kernodeck-diagnostic", "version": 'bad"\nversion'},
            timings_ms={"worker_total": float("nan")}, created_at="not a time")],
    ids=["pass", "timeout", "all-devices", "hostile"])
def test_the_metrics_meet_the_format_and_promtool(report: dict[str, Any]) -> None:
    text = check_metrics(report, judge_health(report), now=1_800_000_000.0)
    families = assert_exposition_format(text)
    assert set(families.values()) == {"gauge"}
    assert {"kernodeck_check_passed", "kernodeck_check_code", "kernodeck_check_stage",
            "kernodeck_check_last_run_timestamp_seconds", "kernodeck_build_info",
            "kernodeck_health_fault"} <= set(families)
    _promtool(text)


def test_the_labels_are_closed_sets_and_name_no_host() -> None:
    text = check_metrics(_failed("RUNTIME_ERROR", message=f"on {socket.gethostname()}"))
    codes = re.findall(r'kernodeck_check_code\{code="([A-Z_]+)"\} ([01])', text)
    assert [name for name, _ in codes] == list(VERDICTS)
    assert [name for name, value in codes if value == "1"] == ["RUNTIME_ERROR"]
    assert socket.gethostname() not in text
    assert "kernodeck_check_last_run_timestamp_seconds 946684800" in text  # created_at's
    assert re.search(r'kernodeck_build_info\{tool_version="[^"]+",torch_version="[^"]+",'
                     r'backend="cuda",python_version="[^"]+"\} 1', text)


def test_a_hostile_version_is_no_label_value() -> None:
    text = check_metrics(_report(pytorch={**PASSING["pytorch"], "version": 'x"} 1\nevil 2'}))
    assert 'torch_version="unknown"' in text
    assert "evil" not in text


def test_the_metrics_file_is_replaced_whole_and_never_through_a_link(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep\n", encoding="utf-8")
    metrics = tmp_path / "kernodeck.prom"
    metrics.symlink_to(target)
    write(str(metrics), "# first\n")
    assert target.read_text(encoding="utf-8") == "keep\n"
    assert not metrics.is_symlink()
    assert metrics.read_text(encoding="utf-8") == "# first\n"
    write(str(metrics), "# second\n")
    assert metrics.read_text(encoding="utf-8") == "# second\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["elsewhere.txt", "kernodeck.prom"]


def test_the_check_writes_metrics_too(tmp_path: Path) -> None:
    metrics = tmp_path / "kernodeck.prom"
    result = run_tool(sys.executable, MODULE, ["--prometheus", str(metrics)],
                      env=fake_gpu_env("cuda_pass"))
    assert result.returncode == 0, result.stderr
    text = metrics.read_text(encoding="utf-8")
    assert assert_exposition_format(text)
    assert "kernodeck_check_passed 1" in text
    assert "kernodeck_health_fault" not in text
    _promtool(text)


def test_the_check_says_when_the_metrics_were_not_saved(tmp_path: Path) -> None:
    result = run_tool(sys.executable, MODULE, ["--prometheus", str(tmp_path / "no" / "k.prom")],
                      env=fake_gpu_env("cuda_pass"))
    assert result.returncode == 12
    assert "--prometheus was not saved" in result.stderr
    assert result.stdout.startswith("PASSED GPU_CHECK_PASSED")


# -- a real Slurm: the node drained and resumed ----------------------------------------------------

def _node() -> str:
    return socket.gethostname().split(".")[0]


def _node_state() -> tuple[str, str]:
    shown = subprocess.run(["scontrol", "show", "node", _node(), "--oneliner"],
                           capture_output=True, text=True, timeout=10, check=True).stdout
    state = re.search(r"\bState=(\S+)", shown)
    reason = re.search(r"\bReason=(.*?)(?: \[[^\]]*@[^\]]*\])?(?: \w+=|$)", shown)
    return (state.group(1) if state else "", reason.group(1).strip() if reason else "")


def _resume() -> None:
    subprocess.run(["scontrol", "update", f"NodeName={_node()}", "State=RESUME"],
                   capture_output=True, timeout=10, check=False)
    deadline = time.monotonic() + 30
    while "DRAIN" in _node_state()[0] and time.monotonic() < deadline:
        time.sleep(0.2)


@pytest.fixture
def slurm_node() -> Iterator[str]:
    reason = slurm_up()
    deadline = time.monotonic() + 30
    while reason is not None and "not up" in reason and time.monotonic() < deadline:
        time.sleep(0.5)  # a node just resumed takes a moment to show as idle again
        reason = slurm_up()
    if reason is not None:
        in_ci_as_root = os.environ.get("CI") == "true" and getattr(os, "geteuid", lambda: 1)() == 0
        (pytest.fail if in_ci_as_root else pytest.skip)(reason)
    try:
        yield _node()
    finally:
        _resume()  # the node as the suite found it: idle


@pytest.mark.slow
def test_slurm_drains_on_the_nodes_fault_and_resumes_only_its_own_drain(slurm_node: str) -> None:
    ecc, healthy = fake_gpu_env("node_with_ecc_error_gpu"), fake_gpu_env("cuda_pass")
    drained = _health_check("--slurm", env=ecc)
    assert drained.returncode == 40, drained.stderr
    assert "drained this node with that reason" in drained.stdout
    state, reason = _node_state()
    assert "DRAIN" in state
    assert reason.startswith("kernodeck: RUNTIME_ERROR gpu 2: CUDA error: uncorrectable")
    again = _health_check("--slurm", env=ecc)
    assert "already drained with that reason" in again.stdout  # no storm of updates
    resumed = _health_check("--slurm", env=healthy)
    assert resumed.returncode == 0, resumed.stderr
    assert "resumed this node" in resumed.stdout
    assert "DRAIN" not in _node_state()[0]


@pytest.mark.slow
def test_slurm_never_undoes_an_operators_drain(slurm_node: str) -> None:
    subprocess.run(["scontrol", "update", f"NodeName={slurm_node}", "State=DRAIN",
                    "Reason=disk replaced, ticket 4411"], check=True, timeout=10,
                   capture_output=True)
    for env in (fake_gpu_env("cuda_pass"), fake_gpu_env("node_with_ecc_error_gpu")):
        done = _health_check("--slurm", env=env)
        assert "drained for another reason" in done.stdout, done.stdout + done.stderr
        state, reason = _node_state()
        assert "DRAIN" in state
        assert reason == "disk replaced, ticket 4411"


@pytest.mark.slow
def test_slurm_is_not_drained_for_the_environments_fault(slurm_node: str) -> None:
    done = _health_check("--slurm", env=clean_env())  # no torch in the dev venv
    assert done.returncode == 41
    assert "not drained" in done.stdout
    assert "DRAIN" not in _node_state()[0]

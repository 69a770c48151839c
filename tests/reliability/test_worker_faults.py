"""Worker faults: whatever the worker does, the front ends on time with the right code.

Each scenario of the fake torch (tests/fakes/torch/_hostile.py) makes the real worker process
misbehave for real: signals, exits, native hangs deaf to SIGTERM and SIGINT, floods, helper and
forked processes, a corrupt event log, huge and non-UTF-8 messages. For every one the run must
give the right code and stage, reach its verdict within the timeout plus one second, leave no
process of the worker's tree alive, and keep the front's own peak memory under 50 MB.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conftest import FAKES, assert_valid_report
from reliability.harness import (
    FRONT_MEMORY_LIMIT_MB,
    STARTUP_FLOOD,
    FrontRun,
    recorded_pids,
    run_front,
    survivors,
    tagged_env,
)

TIMEOUT_S = 5
VERDICT_LIMIT_S = TIMEOUT_S + 1.0


@dataclass(frozen=True)
class Fault:
    """A hostile scenario and the verdict it must give."""

    scenario: str
    code: str
    stage: str
    step: str | None = None
    says: str = ""  # part of the error message, when there is an error
    env: dict[str, str] = field(default_factory=dict)


FAULTS = [
    Fault("segfault_in_compute", "WORKER_FAILED", "compute", "product", "killed by signal SIGSEGV"),
    Fault("abort_in_device_query", "WORKER_FAILED", "device", None, "killed by signal SIGABRT"),
    Fault("oom_killer_in_allocate", "WORKER_FAILED", "compute", "allocate",
          "killed by signal SIGKILL"),
    Fault("exit_zero_in_synchronize", "WORKER_FAILED", "compute", "synchronize",
          "exited with code 0 during compute (synchronize), without a final result"),
    Fault("exit_nonzero_in_device_query", "WORKER_FAILED", "device", None,
          "exited with code 3 during device"),
    Fault("hang_in_native_driver_call", "TIMEOUT", "compute", "synchronize",
          f"no result within {TIMEOUT_S} s"),
    Fault("hang_in_synchronize", "TIMEOUT", "compute", "synchronize",
          f"no result within {TIMEOUT_S} s"),
    Fault("runaway_logging_in_synchronize", "TIMEOUT", "compute", "synchronize",
          f"no result within {TIMEOUT_S} s"),
    Fault("flooding_library", "GPU_CHECK_PASSED", "compute",
          env={"PYTHONPATH": f"{FAKES}:{STARTUP_FLOOD}"}),
    Fault("lingering_thread_after_result", "GPU_CHECK_PASSED", "compute"),
    Fault("helper_process_outlives_worker", "GPU_CHECK_PASSED", "compute"),
    Fault("forked_workers_outlive_oom_kill", "WORKER_FAILED", "compute", "allocate",
          "killed by signal SIGKILL"),
    Fault("corrupt_event_log", "GPU_CHECK_PASSED", "compute"),
    Fault("torn_event_then_killed", "WORKER_FAILED", "compute", "synchronize",
          "killed by signal SIGKILL"),
    Fault("huge_exception_message", "RUNTIME_ERROR", "compute", "synchronize",
          "misaligned address"),
    Fault("unbounded_error_event", "RUNTIME_ERROR", "compute", "synchronize",
          "an illegal instruction was encountered"),
    Fault("non_utf8_messages", "RUNTIME_ERROR", "compute", "synchronize",
          "erreur du p\ufffdriph\ufffdrique"),
    Fault("undecodable_error_event", "RUNTIME_ERROR", "compute", "synchronize",
          "erreur du p\ufffdriph\ufffdrique"),
    Fault("huge_integers_in_events", "WORKER_FAILED", "compute", "synchronize",
          "held 3 unreadable line(s) and no verified result"),
]
EXIT = {"GPU_CHECK_PASSED": 0, "RUNTIME_ERROR": 9, "TIMEOUT": 10, "WORKER_FAILED": 11}


def run_fault(pyz: Path, tmp_path: Path, fault: Fault, **extra: str) -> tuple[FrontRun, str]:
    env, tag = tagged_env(fault.scenario, KD_FAKE_TORCH_PIDS=str(tmp_path / "pids"),
                          TMPDIR=str(tmp_path / "tmp"), **{**fault.env, **extra})
    (tmp_path / "tmp").mkdir()
    out = tmp_path / "report.json"
    result = run_front(pyz, ["--timeout", str(TIMEOUT_S), "--output", str(out)], env=env,
                       rss_file=tmp_path / "rss", output=out)
    return result, tag


@pytest.mark.slow
@pytest.mark.parametrize("fault", FAULTS, ids=[fault.scenario for fault in FAULTS])
def test_worker_fault_gives_the_right_verdict_on_time_and_leaves_nothing(
        pyz: Path, tmp_path: Path, fault: Fault) -> None:
    """The right code, stage and step; within timeout + 1 s; no survivor; front under 50 MB."""
    result, tag = run_fault(pyz, tmp_path, fault)
    assert result.report is not None, result.describe()
    report = result.report
    assert_valid_report(report)
    assert (report["code"], report["stage"]) == (fault.code, fault.stage), result.describe()
    assert result.returncode == EXIT[fault.code]
    assert result.stdout.startswith(f"{report['status'].upper()} {fault.code} "), result.stdout
    assert "Traceback" not in result.stdout + result.stderr
    assert result.stderr == "", result.stderr
    if fault.code != "GPU_CHECK_PASSED":
        error = report["error"]
        assert error.get("step") == fault.step
        assert fault.says in error["message"], error["message"]
        assert len(error["message"]) <= 2000
        assert "\n" not in error["message"]
    assert result.elapsed_s <= VERDICT_LIMIT_S, result.elapsed_s
    assert survivors(tag) == []
    pids = recorded_pids(tmp_path / "pids")
    assert pids, "the scenario did not record the processes it made"
    assert result.max_rss_mb is not None
    assert result.max_rss_mb < FRONT_MEMORY_LIMIT_MB, result.max_rss_mb
    assert list((tmp_path / "tmp").iterdir()) == [], "the private temporary folder was left"


@pytest.mark.slow
def test_floods_reach_100_mb_per_stream_before_during_and_after_the_stages(
        pyz: Path, tmp_path: Path) -> None:
    """The flood is real: 100 MB to stdout and to stderr at interpreter start-up (before any
    stage), at import and while synchronising (during) and after the final event (after);
    the check still passes, on time, and the front's memory does not grow with it."""
    log = tmp_path / "floods"
    fault = next(fault for fault in FAULTS if fault.scenario == "flooding_library")
    result, tag = run_fault(pyz, tmp_path, fault, KD_FAKE_FLOOD_LOG=str(log))
    assert result.returncode == 0, result.describe()
    assert log.read_text().split("\n") == ["startup 100", "import 100", "synchronize 100",
                                           "exit 100", ""]
    assert result.max_rss_mb is not None
    assert result.max_rss_mb < FRONT_MEMORY_LIMIT_MB
    assert survivors(tag) == []


@pytest.mark.slow
def test_processes_the_worker_made_are_all_gone(pyz: Path, tmp_path: Path) -> None:
    """A helper holding the worker's stdout and stderr, and forked children deaf to SIGTERM, are
    all killed with the worker: each recorded pid is checked, not only the run tag."""
    for scenario, made in (("helper_process_outlives_worker", 2),
                           ("forked_workers_outlive_oom_kill", 4),
                           ("hang_in_native_driver_call", 2)):
        folder = tmp_path / scenario
        folder.mkdir()
        fault = next(fault for fault in FAULTS if fault.scenario == scenario)
        result, tag = run_fault(pyz, folder, fault)
        pids = recorded_pids(folder / "pids")
        assert len(pids) == made, (scenario, pids)
        assert survivors(tag) == [], scenario
        for pid in pids:
            assert not Path(f"/proc/{pid}").exists() or _zombie(pid), (scenario, pid)
        assert result.report is not None


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


def test_non_utf8_bytes_become_replacement_characters_in_a_valid_utf8_report(
        pyz: Path, tmp_path: Path) -> None:
    """Surrogate escapes from undecodable bytes never reach the JSON: the file is strict UTF-8,
    and the warning keeps the library's file name with one replaced character."""
    fault = next(fault for fault in FAULTS if fault.scenario == "non_utf8_messages")
    result, _ = run_fault(pyz, tmp_path, fault)
    raw = (tmp_path / "report.json").read_bytes()
    report = json.loads(raw.decode("utf-8"))  # strict: raises on anything not UTF-8
    assert result.returncode == 9
    warning = report["warnings"][0]["message"]
    assert "libcaf\ufffd.so.6" in warning
    assert "acc\ufffds refus\ufffd" in warning
    assert "\\udc" not in raw.decode("utf-8")

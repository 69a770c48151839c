"""``report.build.decide``: the verdict of one check from what the worker said, decided before any
report is assembled. One row per branch, one cause planted per row: the worker's run is
otherwise the clean one (final, the known values, no error)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from kernodeck_diagnostic.report.build import decide
from kernodeck_diagnostic.report.redact import Redactor
from kernodeck_diagnostic.request import Request
from kernodeck_diagnostic.supervision.events import WorkerState
from kernodeck_diagnostic.supervision.supervisor import WorkerRun
from kernodeck_diagnostic.worker.protocol import EXPECTED

CLEAN = WorkerState(stage="compute", result=dict(EXPECTED), final=True, events=12)
WRONG_KERNEL = {"kernels": [{"name": "matmul_fp16", "status": "failed", "error": None,
                             "max_abs_error": 0.5}]}


def _run(state: WorkerState = CLEAN, outcome: Any = "finished", returncode: int | None = 0,
         **fields: Any) -> WorkerRun:
    return WorkerRun(state, outcome, returncode, 0.5, **fields)


# (name, the run, the libraries block, the request's device) -> (code, stage, error kind, key)
ROWS: list[tuple[str, WorkerRun, dict[str, Any], str, tuple[str, str, str | None, str | None]]] = [
    ("clean, cpu", _run(), {}, "cpu", ("CPU_CHECK_PASSED", "compute", None, None)),
    ("clean, gpu", _run(), {}, "gpu", ("GPU_CHECK_PASSED", "compute", None, None)),
    ("a value wrong", _run(replace(CLEAN, result={**EXPECTED, "loss": 195.0})), {}, "cpu",
     ("CHECK_FAILED", "compute", "check_failed", "error.check_failed")),
    ("no value sent", _run(replace(CLEAN, result={})), {}, "cpu",
     ("CHECK_FAILED", "compute", "check_failed", "error.no_verified_result")),
    ("no value, unreadable lines", _run(replace(CLEAN, result={}, unreadable_lines=2)), {},
     "cpu", ("WORKER_FAILED", "compute", "worker_failed", "error.unreadable_log")),
    ("a kernel wrong", _run(), WRONG_KERNEL, "cpu",
     ("CHECK_FAILED", "kernels", "check_failed", "error.kernel_wrong")),
    ("the worker's own error", _run(replace(CLEAN, result={}, error={
        "stage": "device", "kind": "gpu_unavailable", "type": "RuntimeError", "message": "no"})),
     {}, "gpu", ("GPU_UNAVAILABLE", "device", "gpu_unavailable", None)),
    ("not started", WorkerRun.not_started("error.not_started.worker_missing", "gone"), {}, "cpu",
     ("WORKER_FAILED", "interpreter", "worker_failed", "error.not_started.worker_missing")),
    ("timed out before any event", _run(WorkerState(), "timeout", None), {}, "cpu",
     ("TIMEOUT", "interpreter", "timeout", "error.timeout_at_start")),
    ("timed out in a stage", _run(replace(CLEAN, result={}, final=False), "timeout", None), {},
     "cpu", ("TIMEOUT", "compute", "timeout", "error.timeout")),
    ("crashed", _run(replace(CLEAN, final=False), "crashed", -9), {}, "cpu",
     ("WORKER_FAILED", "compute", "worker_failed", "error.worker_ended.signal")),
    ("ended without its final event", _run(replace(CLEAN, final=False)), {}, "cpu",
     ("WORKER_FAILED", "compute", "worker_failed", "error.worker_ended.exit")),
]


@pytest.mark.parametrize(("run", "libraries", "device", "expected"),
                         [row[1:] for row in ROWS], ids=[row[0] for row in ROWS])
def test_decide(run: WorkerRun, libraries: dict[str, Any], device: str,
                expected: tuple[str, str, str | None, str | None]) -> None:
    request = Request(device, 0, 30, False)
    decision = decide(request, run, {}, libraries, redactor=Redactor())
    error = decision.error or {}
    assert (decision.code.name, decision.stage, error.get("kind"),
            error.get("message_key")) == expected
    assert (decision.error is None) == decision.code.passed
    assert decision.every is None
    assert decision.distributed is None

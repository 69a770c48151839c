"""In-process tests of the pieces with rules of their own: codes, events, report assembly."""

from __future__ import annotations

import io
import json

import pytest

from kernodeck_diagnostic.report.build import Request, build
from kernodeck_diagnostic.report.codes import CODES, classify
from kernodeck_diagnostic.report.redact import Redactor
from kernodeck_diagnostic.supervision.events import EventReader
from kernodeck_diagnostic.supervision.supervisor import WorkerRun


def test_code_table_is_the_contract() -> None:
    exits = {name: code.exit_code for name, code in CODES.items()}
    assert exits == {
        "GPU_CHECK_PASSED": 0, "CPU_CHECK_PASSED": 0, "INTERNAL_ERROR": 1, "USAGE_ERROR": 2,
        "TORCH_MISSING": 3, "TORCH_IMPORT_FAILED": 4, "GPU_BACKEND_ABSENT": 5,
        "GPU_UNAVAILABLE": 6, "DEVICE_INDEX_INVALID": 7, "CHECK_FAILED": 8, "OUT_OF_MEMORY": 9,
        "RUNTIME_ERROR": 9, "TIMEOUT": 10, "WORKER_FAILED": 11, "OUTPUT_WRITE_FAILED": 12,
        "COLLECTIVE_FAILED": 13, "EXTENSION_FAILED": 14, "STDOUT_WRITE_FAILED": 15,
        "TOOL_RESOURCES": 16,
        "INTERRUPTED": 130,
        "COMPARE_SAME": 0, "COMPARE_CHANGED": 20, "COMPARE_REGRESSION": 21,
        "SUMMARY_ALL_PASSED": 0, "SUMMARY_SOME_FAILED": 22, "SUMMARY_NOTHING_READ": 23,
        "RAMP_RANGE_MEASURED": 0, "RAMP_NOTHING_PASSED": 24, "RAMP_INCONCLUSIVE": 25,
        "RESUME_INTACT": 0, "RESUME_RECORDS_LOST": 26, "RESUME_RECORDS_DUPLICATED": 27,
        "RESUME_BAD_RECORD": 28, "RESUME_INCONCLUSIVE": 29, "RESUME_RUN_FAILED": 30,
        "RAMP_NO_SINGLE_LIMIT": 31, "RAMP_FLAKY": 32, "SUMMARY_INCONCLUSIVE": 33,
        "HEALTH_PASSED": 0, "HEALTH_NODE_FAULT": 40, "HEALTH_ENVIRONMENT_FAULT": 41,
        "HEALTH_INCONCLUSIVE": 42,
    }
    # Each exit status is one code's, but for OUT_OF_MEMORY and RUNTIME_ERROR (9), and 0: every
    # command's pass.
    statuses = [status for code in CODES.values() for status in code.exit_codes]
    assert sorted(s for s in set(statuses) if statuses.count(s) > 1) == [0, 9]
    assert CODES["INTERRUPTED"].exit_codes == (130, 143, 129)
    assert [name for name, code in CODES.items() if code.passed] == [
        "GPU_CHECK_PASSED", "CPU_CHECK_PASSED", "COMPARE_SAME", "SUMMARY_ALL_PASSED",
        "RAMP_RANGE_MEASURED", "RESUME_INTACT", "HEALTH_PASSED"]
    # Another command's verdicts: 0 for its pass, else a status no process code has (1, 2...).
    process = {status for code in CODES.values() if code.kind == "process"
               for status in code.exit_codes}
    for code in CODES.values():
        if code.kind == "command":
            assert code.command is not None
            assert code.exit_code == 0 if code.passed else code.exit_code not in process


@pytest.mark.parametrize(("error", "code"), [
    ({"kind": "import_failed", "type": "ModuleNotFoundError", "missing_module": "torch"},
     "TORCH_MISSING"),
    # A dependency of torch missing is a broken torch, not a missing one.
    ({"kind": "import_failed", "type": "ModuleNotFoundError", "missing_module": "sympy"},
     "TORCH_IMPORT_FAILED"),
    ({"kind": "import_failed", "type": "ImportError", "missing_module": None},
     "TORCH_IMPORT_FAILED"),
    ({"kind": "import_failed", "type": "OSError"}, "TORCH_IMPORT_FAILED"),
    ({"kind": "something new"}, "WORKER_FAILED"),
])
def test_classify(error: dict[str, object], code: str) -> None:
    assert classify("gpu", error).name == code


def test_no_error_passes_on_the_requested_device() -> None:
    assert classify("gpu", None).name == "GPU_CHECK_PASSED"
    assert classify("cpu", None).name == "CPU_CHECK_PASSED"


def read(lines: bytes) -> EventReader:
    reader = EventReader(io.BytesIO(lines))
    reader.poll()
    return reader


def test_event_reader_keeps_going_past_garbage() -> None:
    good = json.dumps({"event": "stage_started", "stage": "import"}).encode()
    reader = read(b"\x00\xff garbage\n{\"event\": \n" + good + b"\n[1, 2]\n" + b"x" * 200_000
                  + b"\n" + good.replace(b"import", b"backend") + b"\n{\"event\": \"final\"")
    assert reader.state.stage == "backend"
    assert reader.state.unreadable_lines == 4
    assert reader.state.final is False  # the last line never ended: not a complete event


def test_event_reader_reads_a_line_split_across_polls() -> None:
    stream = io.BytesIO()
    reader = EventReader(stream)
    stream.write(b'{"event": "fac')
    stream.seek(0)
    reader.poll()
    position = stream.tell()
    stream.write(b'ts", "block": "runtime", "values": {"python_version": "3.9.18"}}\n')
    stream.seek(position)
    reader.poll()
    assert reader.state.facts == {"runtime": {"python_version": "3.9.18"}}


def test_a_bare_final_event_is_not_a_pass() -> None:
    """A worker that says "final" without a verified result does not pass."""
    reader = read(b'{"event": "final"}\n')
    run = WorkerRun(reader.state, "finished", 0, 0.1)
    report = build(Request("gpu", 0, 30, False), run, None, Redactor()).report
    assert report["code"] == "CHECK_FAILED"


def test_worker_killed_without_events_is_worker_failed_at_interpreter() -> None:
    run = WorkerRun(read(b"").state, "crashed", -9, 0.2)
    report = build(Request("cpu", 0, 30, False), run, None, Redactor()).report
    assert (report["code"], report["stage"]) == ("WORKER_FAILED", "interpreter")
    assert "SIGKILL" in report["error"]["message"]

"""The event log as a rogue worker may write it, read by the real reader, in-process.

The end-to-end scenarios (test_worker_faults.py) prove the verdicts; these pin the reader's
bounds exactly: what is kept of an over-long line, what a byte that is not UTF-8 becomes, how
much a flood of events may hold in the front, and that an unreadable log never claims a wrong
computation.
"""

from __future__ import annotations

import io
import json

from kernodeck_diagnostic.report.build import Request, build, to_json
from kernodeck_diagnostic.report.redact import Redactor
from kernodeck_diagnostic.supervision import events
from kernodeck_diagnostic.supervision.events import EventReader
from kernodeck_diagnostic.supervision.supervisor import WorkerRun


class _Trickle(io.RawIOBase):
    """A file that grows by ``step`` bytes per read, as the worker's writes land."""

    def __init__(self, data: bytes, step: int) -> None:
        self._data, self._step, self._at = data, step, 0

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        chunk = self._data[self._at:self._at + min(self._step, size if size > 0 else self._step)]
        self._at += len(chunk)
        return chunk


def read_all(data: bytes, step: int = 1024 * 1024) -> EventReader:
    reader = EventReader(_Trickle(data, step))  # type: ignore[arg-type]
    reader.poll()
    reader.close()
    return reader


def line(**event: object) -> bytes:
    return json.dumps(event).encode() + b"\n"


def report_of(reader: EventReader) -> dict[str, object]:
    return build(Request("gpu", 0, 30, False), WorkerRun(reader.state, "finished", 0, 0.1),
                 None, Redactor()).report


def test_a_10_mb_error_event_keeps_its_fields_and_a_bounded_message() -> None:
    """Read in 1 MiB pieces, the 10 MB line is never held whole; its head gives the event."""
    message = "CUDA error: an illegal instruction " + "0xdeadbeef " * 1_000_000
    data = (line(event="stage_started", stage="compute")
            + line(event="error", stage="compute", kind="runtime_error", type="RuntimeError",
                   message=message)
            + line(event="final"))
    reader = read_all(data)
    error = reader.state.error
    assert error is not None
    assert (error["kind"], error["type"]) == ("runtime_error", "RuntimeError")
    assert error["message"].startswith("CUDA error: an illegal instruction 0xdeadbeef")
    assert len(error["message"]) <= events.MAX_TEXT_CHARS
    assert reader.state.final is True
    assert report_of(reader)["code"] == "RUNTIME_ERROR"


def test_an_over_long_line_that_is_not_one_long_string_is_unreadable() -> None:
    reader = read_all(b'{"event": "facts", "values": [' + b"1, " * 100_000 + b"1]}\n")
    assert reader.state.unreadable_lines == 1
    assert reader.state.facts == {}


def test_bytes_that_are_not_utf8_spoil_a_character_not_the_event() -> None:
    reader = read_all(b'{"event": "error", "stage": "compute", "kind": "runtime_error", '
                      b'"type": "RuntimeError", "message": "p\xe9riph\xe9rique \xff"}\n')
    assert reader.state.error is not None
    assert reader.state.error["message"] == "p\ufffdriph\ufffdrique \ufffd"


def test_surrogate_escapes_become_replacement_characters_and_the_report_encodes() -> None:
    """JSON may carry lone surrogates (\\udce9 from surrogateescape): the report still writes."""
    reader = read_all(line(event="warning", stage="import", category="UserWarning",
                           message="libcaf\udce9.so") + line(event="final"))
    assert reader.state.warnings[0]["message"] == "libcaf\ufffd.so"
    to_json(report_of(reader)).decode("utf-8")  # strict: no surrogate left


def test_an_unreadable_log_is_a_failed_worker_not_a_wrong_computation() -> None:
    """The error event lost to garbage, then "final": nothing is known about the computation,
    so the code is WORKER_FAILED, never CHECK_FAILED."""
    reader = read_all(line(event="stage_started", stage="compute") + b"\x00garbage\n"
                      + line(event="final"))
    report = report_of(reader)
    assert report["code"] == "WORKER_FAILED"
    assert "1 unreadable line" in report["error"]["message"]  # type: ignore[index]


def test_a_line_cut_by_a_crash_counts_as_unreadable() -> None:
    reader = read_all(line(event="stage_started", stage="compute") + b'{"event": "err')
    assert reader.state.unreadable_lines == 1


def test_a_flood_of_events_is_held_to_a_bounded_size() -> None:
    """Hundreds of 60 KB facts do not grow the front: lines past MAX_EVENT_BYTES_TOTAL are not
    read (counted unreadable), and of those read, a fact the report does not have is dropped
    (counted), a fact it has is kept cut to MAX_TEXT_CHARS."""
    fact = line(event="facts", block="pytorch", values={"x" * 20: "y" * 60_000})
    data = b"".join(fact.replace(b"x" * 20, str(i).zfill(20).encode()) for i in range(500))
    known = line(event="facts", block="pytorch", values={"init_error": "y" * 60_000})
    reader = read_all(known + data)
    accepted = reader.state.events
    assert accepted * 60_000 <= events.MAX_EVENT_BYTES_TOTAL
    assert reader.state.unreadable_lines == 501 - accepted > 0
    assert reader.state.dropped == accepted - 1  # every fact of a name the report lacks
    assert reader.state.facts["pytorch"] == {"init_error": "y" * (events.MAX_TEXT_CHARS - 1)
                                             + "\u2026"}

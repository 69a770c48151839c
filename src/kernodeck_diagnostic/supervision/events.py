"""The worker's event log, decoded as it grows: one JSON object a line, none of it trusted.

The worker runs in the interpreter under diagnosis, which may be hostile: every line is bounded,
every string cleaned and cut, and a line that is not an event is counted, never guessed at. Every
field of every event is held to the worker's protocol (``worker/protocol.py``) and every fact to
the report's schema (``report_schema.py``): a field of the wrong type, or one the protocol does not
have, is dropped and counted, and the report says so in one note.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import IO, Any

from ..report_schema import conforms, fact_schema
from ..untrusted_json import loads
from ..worker.protocol import (
    BACKENDS,
    COLLECTIVE_STATUSES,
    ERROR_KINDS,
    EXPECTED,
    FACT_BLOCKS,
    MAX_TEXT_CHARS,
    STAGES,
    STEPS,
    STORE_STATES,
    decode_number,
)

MAX_EVENT_LINE_BYTES = 64 * 1024
MAX_EVENT_BYTES_TOTAL = 4 * 1024 * 1024  # all accepted events together: the front stays small
MAX_WARNINGS = 50
MAX_EVENTS = 10_000
MAX_DROPPED_NAMED = 10  # how many of the dropped fields the note names
MAX_DEVICES = 64  # --all-devices: results kept for devices 0 to 63 (a node has at most 16)
SURROGATES = re.compile("[\ud800-\udfff]")  # lone surrogates: not encodable as UTF-8
_MESSAGE_KEY = re.compile(r"error\.[a-z_]+(?:\.[a-z_]+)?")  # the tool's own sentences (i18n)
# Report fields the front establishes itself (the computation's verdicts from the values of the
# ``result`` event; what it reads once the worker ended): sent by a worker, they are dropped.
FRONT_FACTS: Mapping[str, tuple[str, ...]] = {
    "runtime": ("library_override", "tool_environment", "working_folder_missing",
                "python_home_set"),
    "execution": ("product_verified", "gradient_verified", "loss"),
    "pytorch": ("peers",),  # --all-devices: the front's verdicts on the copies between devices
    "libraries": ("torch_version",),  # the torch the requirements were judged against
}
NOTE_CATEGORY = "kernodeck-diagnostic"  # the category of the tool's own note among the warnings

Check = Callable[[Any], bool]


def _one_of(names: tuple[str, ...]) -> Check:
    return lambda value: isinstance(value, str) and value in names


def _string(value: Any) -> bool:
    return isinstance(value, str)


def _string_or_null(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _object(value: Any) -> bool:
    return isinstance(value, dict)


def _duration(value: Any) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value) and value >= 0)


# Where another rank computed: a word of the tool's own, never free text from another machine.
_RANK_DEVICE = re.compile(r"cpu|cuda:[0-9]{1,3}")


def _or_null(check: Check) -> Check:
    return lambda value: value is None or check(value)


def _count(value: Any) -> bool:
    """A rank, a node index, a sum: an integer, 0 or more."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _value(value: Any) -> bool:
    """A computed value (``result``): a number, "nan", "inf", "-inf", or null (none computed)."""
    return value is None or decode_number(value) is not None


def _matrix(value: Any) -> bool:
    return value is None or (isinstance(value, list) and all(
        isinstance(row, list) and all(decode_number(item) is not None for item in row)
        for row in value))


def _device(value: Any) -> bool:
    """A device's index (--all-devices), below MAX_DEVICES: the front keeps one entry each."""
    return (isinstance(value, int) and not isinstance(value, bool)
            and 0 <= value < MAX_DEVICES)


# What one device's (or one copy's) failure says: null when it did not fail.
_DEVICE_ERROR: Mapping[str, Check] = {
    "kind": lambda value: value in ERROR_KINDS, "step": lambda value: value in STEPS,
    "type": _string_or_null, "message": _string, "missing_module": _string_or_null}


def _device_error(value: Any) -> bool:
    return value is None or (isinstance(value, dict) and {"kind", "step", "message"} <= set(value)
                             and all(name in _DEVICE_ERROR and _DEVICE_ERROR[name](item)
                                     for name, item in value.items()))


_STAGE = _one_of(STAGES)
# With --all-devices, a step names its device (and the device a copy goes to).
_STEP = {"stage": _STAGE, "step": _one_of(STEPS), "device": _device, "peer": _device}
_STAGE_END = {"stage": _STAGE, "duration_ms": _duration}
# Each event's fields and what each must be ("event" itself aside; "t_ms" is every event's). The
# events are the protocol's EVENTS, each once (a test checks that no event is missing).
FIELDS: Mapping[str, Mapping[str, Check]] = {
    "facts": {"block": _one_of(FACT_BLOCKS), "values": _object},
    "stage_started": {"stage": _STAGE},
    "stage_finished": _STAGE_END,
    "stage_failed": _STAGE_END,
    "step": _STEP,
    "step_failed": _STEP,
    "warning": {"stage": _STAGE, "category": _string, "message": _string},
    "error": {"stage": _STAGE, "kind": _one_of(ERROR_KINDS), "type": _string_or_null,
              "message": _string, "missing_module": _string_or_null,
              "message_key": lambda value: isinstance(value, str) and bool(
                  _MESSAGE_KEY.fullmatch(value)),
              "message_values": _object},
    "result": {"product": _matrix, "loss": _value, "gradient": _matrix},
    # --all-devices (worker/all_devices.py): one device's values, one copy's values.
    "device_result": {"index": _device, "product": _matrix,
                      "loss": _value, "gradient": _matrix,
                      "synchronized": lambda value: isinstance(value, bool),
                      "duration_ms": _duration, "error": _device_error},
    "peer_result": {"source": _device,
                    "target": _device, "copy": _matrix,
                    "access": lambda value: value is None or isinstance(value, bool),
                    "duration_ms": _duration, "error": _device_error},
    "local_paths": {"interpreter": _string_or_null, "torch": _string_or_null},
    "final": {},
    # --distributed: one ``rank`` event per rank gathered from the job's store (from other
    # machines: held to the same rules), then this rank's ``collective`` outcome.
    "rank": {"rank": _count, "local_rank": _count, "node": _count,
             "stage": _or_null(_STAGE), "kind": _or_null(_one_of(ERROR_KINDS)),
             "type": _string_or_null, "missing_module": _string_or_null,
             "device": _or_null(lambda value: isinstance(value, str)
                                and bool(_RANK_DEVICE.fullmatch(value))),
             "product": _matrix, "loss": _value,
             "gradient": _matrix, "collective": _or_null(_one_of(COLLECTIVE_STATUSES)),
             "observed": _or_null(_count),
             "visibility_set": lambda value: isinstance(value, bool)},
    "collective": {"backend": _one_of(BACKENDS), "status": _one_of(COLLECTIVE_STATUSES),
                   "expected": _count, "observed": _or_null(_count),
                   "duration_ms": _or_null(_duration), "error_type": _string_or_null,
                   "gathered": lambda value: isinstance(value, bool),
                   "store": _or_null(_one_of(STORE_STATES)),
                   "world_sizes": _or_null(lambda value: isinstance(value, list) and all(
                       isinstance(size, int) and size > 0 for size in value)),
                   "duplicated_ranks": _or_null(lambda value: isinstance(value, list) and all(
                       type(rank) is int and rank >= 0 for rank in value))},
}


@dataclass
class WorkerState:
    """Everything the worker said, folded as its events arrive (bounded in memory)."""

    facts: dict[str, dict[str, Any]] = field(default_factory=dict)
    stage: str | None = None
    step: str | None = None
    stage_ms: dict[str, float] = field(default_factory=dict)
    error: dict[str, Any] | None = None
    warnings: list[dict[str, Any]] = field(default_factory=list)
    # The computation's values (``result``), decoded: floats, NaN and infinities included.
    result: dict[str, Any] = field(default_factory=dict)
    final: bool = False
    # --all-devices: the device (and the device a copy goes to) of the last step, each device's
    # values by index, each copy's by (source, target); see worker/all_devices.py.
    device: int | None = None
    peer: int | None = None
    devices: dict[int, dict[str, Any]] = field(default_factory=dict)
    peers: dict[tuple[int, int], dict[str, Any]] = field(default_factory=dict)
    # --distributed: every rank's own account, as gathered (``rank`` events), and this rank's
    # collective outcome (``collective``); see worker/collective.py.
    ranks: list[dict[str, Any]] = field(default_factory=list)
    collective: dict[str, Any] | None = None
    # Where the interpreter and torch live: for --show-paths on the terminal only. Kept apart
    # from the facts so that no path can reach a report.
    local_paths: dict[str, str | None] = field(default_factory=dict)
    events: int = 0
    unreadable_lines: int = 0
    # Fields (and events) of the wrong type or not of the protocol: dropped, never trusted.
    dropped: int = 0
    dropped_names: list[str] = field(default_factory=list)  # distinct, the protocol's words only
    dropped_at: str | None = None  # the stage the first one was dropped at

    def apply(self, event: dict[str, Any]) -> None:
        self.events += 1
        kind = event.get("event")
        if not (isinstance(kind, str) and kind in FIELDS):
            self._drop("an event not of the protocol")
            return
        fields = self._checked(kind, event, FIELDS[kind])
        if kind == "stage_started" and "stage" in fields:
            self.stage = fields["stage"]
            self.step = None
        elif (kind in ("stage_finished", "stage_failed") and "stage" in fields
              and "duration_ms" in fields):
            self.stage_ms[fields["stage"]] = float(fields["duration_ms"])
        elif kind == "step" and "step" in fields:
            self.step = fields["step"]
            self.device, self.peer = fields.get("device"), fields.get("peer")
        elif kind in ("device_result", "peer_result"):
            self._device_result(kind, fields)
        elif kind == "facts" and "block" in fields and "values" in fields:
            self._facts(fields["block"], fields["values"])
        elif kind == "warning" and len(self.warnings) < MAX_WARNINGS:
            self.warnings.append({"stage": fields.get("stage"),
                                  "category": fields.get("category"),
                                  "message": _one_line(fields.get("message"))})
        elif kind == "error" and self.error is None:
            self._error(fields)
        elif kind == "result":
            self.result = {name: _decoded(value) for name, value in fields.items()
                           if name in EXPECTED}
        elif kind == "local_paths":
            self.local_paths = {name: fields.get(name) for name in ("interpreter", "torch")}
        elif kind == "final":
            self.final = True
        elif kind in ("rank", "collective"):
            self._distributed(kind, fields)

    def _distributed(self, kind: str, fields: dict[str, Any]) -> None:
        """--distributed: one rank's account (``rank``), or this rank's outcome (``collective``)."""
        fields.pop("t_ms", None)
        if kind == "rank" and "rank" in fields:
            for name in EXPECTED:
                fields[name] = _decoded(fields.get(name))
            self.ranks.append(fields)
        elif kind == "collective" and {"backend", "status", "expected"} <= set(fields):
            self.collective = fields

    def _device_result(self, kind: str, fields: dict[str, Any]) -> None:
        """One device's values (``device_result``) or one copy's (``peer_result``), decoded."""
        fields.pop("t_ms", None)
        for name in ("product", "loss", "gradient", "copy"):
            if name in fields:
                fields[name] = _decoded(fields[name])
        if kind == "device_result" and "index" in fields:
            self.devices[fields["index"]] = fields
        elif kind == "peer_result" and {"source", "target"} <= set(fields):
            self.peers[fields["source"], fields["target"]] = fields

    def notes(self) -> list[dict[str, Any]]:
        """The report's note of what was dropped, shaped as a warning (none if nothing was)."""
        if not self.dropped:
            return []
        named = ", ".join(self.dropped_names[:MAX_DROPPED_NAMED])
        if len(self.dropped_names) > MAX_DROPPED_NAMED:
            named += ", \u2026"
        return [{"stage": self.dropped_at, "category": NOTE_CATEGORY,
                 "message": f"{self.dropped} field(s) of the worker's events were not of the "
                            f"protocol's types and were dropped unread ({named})"}]

    def _checked(self, kind: str, event: dict[str, Any],
                 expected: Mapping[str, Check]) -> dict[str, Any]:
        """The fields of ``event`` that meet ``expected``; every other one dropped."""
        kept = {}
        for name, value in event.items():
            if name == "event":
                continue
            check = _duration if name == "t_ms" else expected.get(name)
            if check is None:
                self._drop(f"a field of {kind} not of the protocol")
            elif check(value):
                kept[name] = value
            else:
                self._drop(f"{kind}.{name}")
        return kept

    def _facts(self, block: str, values: dict[str, Any]) -> None:
        kept = self.facts.setdefault(block, {})
        for name, value in values.items():
            owned = name in FRONT_FACTS.get(block, ())
            rule = None if owned else fact_schema(block, name)
            if rule is not None and conforms(value, rule):
                kept[name] = value
            else:
                self._drop(f"facts.{block}.{name}" if owned or rule is not None
                           else f"a fact of {block} not of the report")

    def _error(self, fields: dict[str, Any]) -> None:
        # The first error is the one diagnosed; without a kind of the protocol, what failed is
        # unknown: the worker failed.
        self.error = {"stage": fields.get("stage"), "kind": fields.get("kind", "worker_failed"),
                      "type": fields.get("type"), "message": _one_line(fields.get("message")),
                      "missing_module": fields.get("missing_module")}
        if "message_key" in fields:
            values = {}
            for name, value in fields.get("message_values", {}).items():
                if isinstance(value, str):
                    values[name] = _one_line(value)
                else:
                    self._drop("error.message_values")
            self.error.update(message_key=fields["message_key"], message_values=values)
        if self.step is not None:
            self.error["step"] = self.step

    def _drop(self, name: str) -> None:
        self.dropped += 1
        if self.dropped_at is None:
            self.dropped_at = self.stage or STAGES[0]
        if name not in self.dropped_names:  # the protocol's own names: a short list
            self.dropped_names.append(name)


def _decoded(value: Any) -> Any:
    """A ``result`` value with its numbers as floats (non-finite ones from their strings)."""
    if isinstance(value, list):
        return [_decoded(item) for item in value]
    return None if value is None else decode_number(value)


class EventReader:
    """Reads complete lines appended to the events file since the last call."""

    def __init__(self, file: IO[bytes]) -> None:
        self._file = file
        self.state = WorkerState()
        self._partial = b""
        # The head of an over-long line, kept while the rest of it is dropped until its end.
        self._long_head: bytes | None = None
        self._accepted_bytes = 0
        self._held = False

    def poll(self) -> None:
        while not self._held:
            chunk = self._file.read(1024 * 1024)
            if not chunk:
                return
            self._feed(chunk)

    def hold(self) -> None:
        """Read what the worker has written by now, and nothing it writes after (the time limit:
        what it says once asked for its stack, supervision/hang.py, is past the limit)."""
        self.poll()
        self._held = True

    def close(self) -> None:
        """The worker is gone: a last line it never ended (killed mid-write) is unreadable."""
        if self._partial.strip() or self._long_head is not None:
            self.state.unreadable_lines += 1
        self._partial, self._long_head = b"", None

    def _feed(self, chunk: bytes) -> None:
        lines = (self._partial + chunk).split(b"\n")
        self._partial = lines.pop()
        for line in lines:
            if self._long_head is not None:  # this line ends an over-long one: read its head
                self._line(self._long_head)
                self._long_head = None
            else:
                self._line(line)
        if self._long_head is not None:
            self._partial = b""
        elif len(self._partial) > MAX_EVENT_LINE_BYTES:
            self._long_head, self._partial = self._partial[:MAX_EVENT_LINE_BYTES], b""

    def _line(self, line: bytes) -> None:
        if not line.strip():
            return
        if (self.state.events >= MAX_EVENTS
                or self._accepted_bytes + min(len(line), MAX_EVENT_LINE_BYTES)
                > MAX_EVENT_BYTES_TOTAL):
            self.state.unreadable_lines += 1
            return
        try:
            if len(line) >= MAX_EVENT_LINE_BYTES:  # the kept head of an over-long line, or one
                event = _salvage(line[:MAX_EVENT_LINE_BYTES])
            else:
                # A byte that is not UTF-8 spoils one character, not the whole event.
                event = loads(line.decode("utf-8", "replace"))
            event = _clean(event) if isinstance(event, dict) else None
        except ValueError:  # not JSON, or an absurd integer or nesting (see untrusted_json)
            event = None
        if event is not None:
            self._accepted_bytes += min(len(line), MAX_EVENT_LINE_BYTES)
            self.state.apply(event)
        else:
            self.state.unreadable_lines += 1


def _one_line(value: Any) -> str | None:
    """A message as one line, whatever the worker wrote (the worker's own bound is not trusted)."""
    return " ".join(value.split()) if isinstance(value, str) else None


def _clean(value: Any) -> Any:
    """Every string of an event made safe to keep and to encode.

    A lone surrogate (a non-UTF-8 byte the worker decoded with surrogateescape and JSON carried as
    ``\\udcXX``) becomes U+FFFD, so the report can always be written as UTF-8; a string longer
    than MAX_TEXT_CHARS is cut there, with an ellipsis. (``loads`` bounded the nesting.)
    """
    if isinstance(value, str):
        if len(value) > MAX_TEXT_CHARS:
            value = value[:MAX_TEXT_CHARS - 1] + "\u2026"
        return SURROGATES.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_clean(key): _clean(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_clean(item) for item in value]
    return value


def _salvage(head: bytes) -> Any:
    """The event at the start of an over-long line, when what made it long was one string.

    A worker that does not bound its messages writes an error event whose message is megabytes
    long; its small fields (event, stage, kind, type) come first. Closing the string and the
    object after the kept head gives that event back, its message cut. Anything else: None.
    """
    text = head.decode("utf-8", "replace")
    with contextlib.suppress(ValueError):
        event = loads(text)  # a line exactly at the limit may be whole
        return event if isinstance(event, dict) else None
    for cut in range(len(text), max(len(text) - 8, 0), -1):  # never inside an escape sequence
        try:
            event = loads(text[:cut] + '\u2026"}')
        except ValueError:
            continue
        return event if isinstance(event, dict) else None
    return None

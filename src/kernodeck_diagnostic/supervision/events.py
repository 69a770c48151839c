"""The worker's event log, decoded as it grows: one JSON object a line, none of it trusted.

The worker runs in the interpreter under diagnosis, which may be hostile: every line is bounded,
every string cleaned and cut, and a line that is not an event is counted, never guessed at.
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass, field
from typing import IO, Any

MAX_EVENT_LINE_BYTES = 64 * 1024
MAX_EVENT_BYTES_TOTAL = 4 * 1024 * 1024  # all accepted events together: the front stays small
MAX_TEXT_CHARS = 2000  # any string from the worker; the worker bounds messages alike
MAX_WARNINGS = 50
MAX_EVENTS = 10_000
SURROGATES = re.compile("[\ud800-\udfff]")  # lone surrogates: not encodable as UTF-8
_MESSAGE_KEY = re.compile(r"error\.[a-z_]+(?:\.[a-z_]+)?")  # the tool's own sentences (i18n)


@dataclass
class WorkerState:
    """Everything the worker said, folded as its events arrive (bounded in memory)."""

    facts: dict[str, dict[str, Any]] = field(default_factory=dict)
    stage: str | None = None
    step: str | None = None
    stage_ms: dict[str, float] = field(default_factory=dict)
    error: dict[str, Any] | None = None
    warnings: list[dict[str, Any]] = field(default_factory=list)
    final: bool = False
    # Where the interpreter and torch live: for --show-paths on the terminal only. Kept apart
    # from the facts so that no path can reach a report.
    local_paths: dict[str, str | None] = field(default_factory=dict)
    events: int = 0
    unreadable_lines: int = 0

    def apply(self, event: dict[str, Any]) -> None:
        self.events += 1
        kind = event.get("event")
        if kind == "stage_started":
            self.stage = _text(event.get("stage"))
            self.step = None
        elif kind in ("stage_finished", "stage_failed"):
            stage = _text(event.get("stage"))
            duration = event.get("duration_ms")
            if stage and isinstance(duration, (int, float)):
                self.stage_ms[stage] = float(duration)
        elif kind == "step":
            self.step = _text(event.get("step"))
        elif kind == "facts":
            block, values = event.get("block"), event.get("values")
            if isinstance(block, str) and isinstance(values, dict):
                self.facts.setdefault(block, {}).update(values)
        elif kind == "warning" and len(self.warnings) < MAX_WARNINGS:
            self.warnings.append({"stage": _text(event.get("stage")),
                                  "category": _text(event.get("category")),
                                  "message": _one_line(event.get("message"))})
        elif kind == "error" and self.error is None:
            self.error = {key: event.get(key) for key in
                          ("stage", "kind", "type", "message", "missing_module")}
            self.error["message"] = _one_line(event.get("message"))
            key, values = event.get("message_key"), event.get("message_values")
            if isinstance(key, str) and _MESSAGE_KEY.fullmatch(key):
                self.error["message_key"] = key
                self.error["message_values"] = {
                    name: _one_line(str(value)) for name, value in
                    (values.items() if isinstance(values, dict) else ()) if isinstance(name, str)}
            if self.step is not None:
                self.error["step"] = self.step
        elif kind == "local_paths":
            self.local_paths = {name: _text(event.get(name)) for name in ("interpreter", "torch")}
        elif kind == "final":
            self.final = True


class EventReader:
    """Reads complete lines appended to the events file since the last call."""

    def __init__(self, file: IO[bytes]) -> None:
        self._file = file
        self.state = WorkerState()
        self._partial = b""
        # The head of an over-long line, kept while the rest of it is dropped until its end.
        self._long_head: bytes | None = None
        self._accepted_bytes = 0

    def poll(self) -> None:
        while True:
            chunk = self._file.read(1024 * 1024)
            if not chunk:
                return
            self._feed(chunk)

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
        if len(line) >= MAX_EVENT_LINE_BYTES:  # the kept head of an over-long line, or one
            event = _salvage(line[:MAX_EVENT_LINE_BYTES])
        else:
            try:
                # A byte that is not UTF-8 spoils one character, not the whole event.
                event = json.loads(line.decode("utf-8", "replace"))
            except ValueError:
                event = None
        if isinstance(event, dict):
            self._accepted_bytes += min(len(line), MAX_EVENT_LINE_BYTES)
            self.state.apply(_clean(event))
        else:
            self.state.unreadable_lines += 1


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _one_line(value: Any) -> str | None:
    """A message as one line, whatever the worker wrote (the worker's own bound is not trusted)."""
    return " ".join(value.split()) if isinstance(value, str) else None


def _clean(value: Any) -> Any:
    """Every string of an event made safe to keep and to encode.

    A lone surrogate (a non-UTF-8 byte the worker decoded with surrogateescape and JSON carried as
    ``\\udcXX``) becomes U+FFFD, so the report can always be written as UTF-8; a string longer
    than MAX_TEXT_CHARS is cut there, with an ellipsis.
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
        event = json.loads(text)  # a line exactly at the limit may be whole
        return event if isinstance(event, dict) else None
    for cut in range(len(text), max(len(text) - 8, 0), -1):  # never inside an escape sequence
        try:
            event = json.loads(text[:cut] + '\u2026"}')
        except ValueError:
            continue
        return event if isinstance(event, dict) else None
    return None

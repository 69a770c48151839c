"""What ``summarize`` shows of trial attempts and ramps: one row per attempt, across attempts.

A file ``summarize`` finds that is not a check report may be an attempt's ``attempt.json``, the
``events.jsonl`` of an attempt killed before writing it (``trial/log_reader.py`` reads it), or a
ramp's ``ramp.json`` (each of its attempts, with what its attempt folder says). Each row: the
attempt's name, its status (a ramp's: the attempt's outcome), the stage of its first error, its
contracts (passed, or the names of those that failed), its peak memory, the last stage it had
started, and whether it counts as passed (a ramp's attempts are not counted: a ramp looks for
its failures).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from ..ramp.record import FORMAT as RAMP_FORMAT
from ..untrusted_json import load_file
from .compare import is_attempt_document
from .folder import ATTEMPT_FILE
from .log import EVENTS_FILE
from .log_reader import from_events

MAX_FILE_BYTES = 16 * 2**20


def read_too(name: str, names: Sequence[str]) -> bool:
    """Whether ``summarize`` reads a folder's file ``name`` that is not ``*.json``: the event log
    of an attempt killed before it wrote its ``attempt.json``."""
    return name == EVENTS_FILE and ATTEMPT_FILE not in names


def rows_of(path: str, name: str) -> list[dict[str, Any]] | None:
    """The rows of the file at ``path`` (shown as ``name``), or None when it is neither an
    attempt nor a ramp."""
    if os.path.basename(path) == EVENTS_FILE:
        document = from_events(path)
        return None if document is None else [row(document, name)]
    document = load_file(path, MAX_FILE_BYTES)
    if is_attempt_document(document):
        return [row(document, name)]
    if isinstance(document, dict) and document.get("format") == RAMP_FORMAT and isinstance(
            document.get("attempts"), list):
        return _ramp_rows(document, os.path.dirname(path), name)
    return None


def row(attempt: dict[str, Any], name: str, *, counted: bool = True) -> dict[str, Any]:
    found = attempt.get("first_error")
    error: dict[str, Any] = found if isinstance(found, dict) else {}
    contracts = [item for item in attempt.get("contracts") or [] if isinstance(item, dict)]
    failed = [str(item.get("name")) for item in contracts if item.get("passed") is not True]
    text = None
    if error:
        text = ": ".join(str(part) for part in (error.get("type"), error.get("message"))
                         if part)
    status = attempt.get("status")
    return {"attempt": name, "status": status, "first_error_stage": error.get("stage"),
            "first_error": text, "contracts_passed": (not failed) if contracts else None,
            "contracts_failed": failed, "peak_memory_bytes": _peak(attempt),
            "last_started_stage": attempt.get("last_started_stage"), "counted": counted,
            "passed": status == "completed" and not failed}


def _ramp_rows(document: dict[str, Any], folder: str, name: str) -> list[dict[str, Any]]:
    """One row per attempt of a ramp, by value, its trial folder read when there is one."""
    axis = str(document.get("axis"))
    rows = []
    attempts = [item for item in document["attempts"] if isinstance(item, dict)]
    for item in sorted(attempts, key=lambda item: str(item.get("value")).zfill(20)):
        trial = _trial_of(os.path.join(folder, str(item.get("folder"))))
        found = row(trial or {}, f"{name}[{axis}={item.get('value')}]", counted=False)
        found["status"] = item.get("outcome")
        found["passed"] = item.get("outcome") == "passed"
        if trial is None:
            found["contracts_failed"] = list(item.get("contracts_failed") or [])
            found["first_error"] = item.get("error")
        if found["peak_memory_bytes"] is None:
            found["peak_memory_bytes"] = item.get("peak_memory_bytes")
        block = item.get("oom")
        oom: dict[str, Any] = block if isinstance(block, dict) else {}
        found["last_started_stage"] = found["last_started_stage"] or oom.get("stage")
        rows.append(found)
    return rows


def _trial_of(folder: str) -> dict[str, Any] | None:
    """The attempt a ramp's attempt folder holds (the newest trial folder inside it); its files
    read only as regular files of their own (never through a link: a Trial makes none)."""
    try:
        names = sorted(os.listdir(folder), reverse=True)
    except OSError:
        return None
    for entry in names:
        document = load_file(os.path.join(folder, entry, ATTEMPT_FILE), MAX_FILE_BYTES,
                             follow_links=False)
        if is_attempt_document(document):
            return dict(document)
        events = os.path.join(folder, entry, EVENTS_FILE)
        if os.path.isfile(events):
            return from_events(events)
    return None


def _peak(attempt: dict[str, Any]) -> int | None:
    peak = attempt.get("peak_memory_bytes")
    if isinstance(peak, int) and not isinstance(peak, bool):
        return peak
    peaks = []
    for item in attempt.get("stage_summary") or []:  # every call's (an attempt read from events)
        if isinstance(item, dict):
            value = item.get("device_peak_bytes")
            value = value if value is not None else item.get("rss_peak_bytes")
            if isinstance(value, int) and not isinstance(value, bool):
                peaks.append(value)
    for record in attempt.get("stages") or []:
        memory = record.get("memory") if isinstance(record, dict) else None
        if isinstance(memory, dict):
            value = memory.get("peak_allocated_bytes") if memory.get("device") else \
                memory.get("rss_peak_bytes")
            if isinstance(value, int) and not isinstance(value, bool):
                peaks.append(value)
    return max(peaks) if peaks else None


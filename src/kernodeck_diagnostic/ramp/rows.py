"""What ``summarize`` shows of trial attempts and ramps: one row per attempt, across attempts.

A file ``summarize`` finds that is not a check report may be an attempt's ``attempt.json``, the
``events.jsonl`` of an attempt killed before writing it (``trial/log_reader.py`` reads it), or a
ramp's ``ramp.json`` (each of its attempts, with what its attempt folder says). Each row: the
attempt's name, its status (a ramp's: the attempt's outcome), the stage of its first error, its
contracts (passed, or the names of those that failed), its peak memory, the last stage it had
started, and whether it counts as passed: the one judge's outcome (``trial/judge.py``), so an
attempt that ended ``completed`` after a stage failure its program caught is failed, and one
killed before its end is not passed. A ramp counts once, by a row of its own: what its attempts
measured (``record.py``'s ``verdict``); its attempts' rows are shown, not counted, each
judged again from its Trial folders (all of them) when they are there.

It stands on both the trial toolkit and the ramp, so it lives on the ramp's side: the ramp builds
on the trial, never the other way round.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from ..trial.accessors import judge_document, peak_of
from ..trial.evidence import run_records
from ..trial.folder import ATTEMPT_FILE
from ..trial.judge import INCONCLUSIVE, PASSED, judge
from ..trial.log import EVENTS_FILE
from ..trial.log_reader import from_events, is_attempt_document
from ..untrusted_json import load_file
from .record import FORMAT as RAMP_FORMAT
from .record import MEASURED, attempt_from, verdict

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
    judged = judge_document(attempt, name)
    return {"attempt": name, "status": status if judged.passed or status in (None, judged.outcome)
            else f"{judged.outcome} ({status})", "outcome": judged.outcome,
            "why": judged.explain() or None, "first_error_stage": error.get("stage"),
            "first_error": text, "contracts_passed": (not failed) if contracts else None,
            "contracts_failed": failed, "peak_memory_bytes": peak_of(attempt),
            "last_started_stage": attempt.get("last_started_stage"), "counted": counted,
            "passed": judged.passed, "inconclusive": judged.inconclusive}


def _ramp_rows(document: dict[str, Any], folder: str, name: str) -> list[dict[str, Any]]:
    """A row for the ramp itself (counted: what its attempts measured), then one per attempt,
    by value, each judged again from its Trial folders when they are there (a ramp.json
    written before the one judge may have passed an attempt they fail)."""
    axis = str(document.get("axis"))
    rows = []
    attempts = [item for item in map(attempt_from, document["attempts"]) if item is not None]
    for item in sorted(attempts, key=lambda item: (int(item["value"]), item.get("run", 1))):
        where = os.path.join(folder, str(item.get("folder")))
        trial = _trial_of(where)
        found = row(trial or {}, f"{name}[{axis}={item.get('value')}]", counted=False)
        records = run_records(where)
        if item["outcome"] == PASSED and records:
            again = judge(records)
            if not again.passed:
                item["outcome"] = again.outcome
                item["reasons"] = [{"kind": reason.kind, "text": reason.text}
                                   for reason in again.reasons]
        found["status"] = found["outcome"] = item["outcome"]
        found["passed"] = item["outcome"] == PASSED
        found["inconclusive"] = item["outcome"] == INCONCLUSIVE
        if trial is None:
            found["contracts_failed"] = list(item.get("contracts_failed") or [])
            found["first_error"] = item.get("error")
        if found["peak_memory_bytes"] is None:
            found["peak_memory_bytes"] = item.get("peak_memory_bytes")
        block = item.get("oom")
        oom: dict[str, Any] = block if isinstance(block, dict) else {}
        found["last_started_stage"] = found["last_started_stage"] or oom.get("stage")
        rows.append(found)
    said = verdict({**document, "attempts": attempts})
    ramp_row = {"attempt": f"{name}[{axis}]", "status": f"ramp {said['kind']}",
                "outcome": said["kind"], "why": said["code"], "first_error_stage": None,
                "first_error": None, "contracts_passed": None, "contracts_failed": [],
                "peak_memory_bytes": None, "last_started_stage": None, "counted": True,
                "passed": said["kind"] in MEASURED,
                "inconclusive": said["code"] == "RAMP_INCONCLUSIVE"}
    return [ramp_row, *rows]


def _trial_of(folder: str) -> dict[str, Any] | None:
    """The attempt a ramp's attempt folder holds (the newest trial folder inside it); its files
    read only as regular files of their own (never through a link, a folder's included: a Trial
    makes none, and the judge's records say one was met)."""
    try:
        names = sorted(os.listdir(folder), reverse=True)
    except OSError:
        return None
    for entry in names:
        if os.path.islink(os.path.join(folder, entry)):  # never followed: run_records says it
            continue
        document = load_file(os.path.join(folder, entry, ATTEMPT_FILE), MAX_FILE_BYTES,
                             follow_links=False)
        if is_attempt_document(document):
            return dict(document)
        events = os.path.join(folder, entry, EVENTS_FILE)
        if os.path.isfile(events):
            return from_events(events)
    return None

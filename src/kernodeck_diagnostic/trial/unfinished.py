"""An attempt as its ``events.jsonl`` tells it, when the process ended before writing
``attempt.json`` (a SIGKILL, the OOM killer, ``os._exit``): status ``unfinished``, with what the
log and the beacon ``stage.bin`` say: the stages started and completed, the first error, the
contracts, the passes, the parameters, the Python and torch versions, where the log stops
(``log_phase``).

``compare``, ``summarize``, ``open_attempt`` and the judge's evidence (``trial/evidence.py``)
read a killed attempt through ``from_events``.
"""

from __future__ import annotations

import os
from typing import Any

from ..untrusted_json import loads
from .accessors import UNFINISHED
from .folder import FORMAT, VERSION
from .log import EVENTS_FILE
from .session import timings_of
from .stages import first_and_later, last_started

__all__ = ["UNFINISHED", "from_events", "is_attempt_document"]
MAX_EVENTS_BYTES = 64 * 2**20  # an event log larger than this is read from its end


def from_events(path: str) -> dict[str, Any] | None:
    """An attempt as its ``events.jsonl`` tells it, when the process ended before writing
    ``attempt.json``: status ``unfinished``; None when the file is no trial's event log."""
    events = _events(path)
    started = next((event for event in events if event.get("event") == "attempt_started"), None)
    if started is None:
        return None
    stages: list[dict[str, Any]] = []
    contracts: list[dict[str, Any]] = []
    passes: dict[int, float] = {}
    summaries: dict[str, dict[str, Any]] = {}  # each stage's latest
    stage_ms: dict[str, dict[int, float]] = {}  # each stage's time in each completed pass
    name, pass_index, still_open = last_started(events, path)
    document: dict[str, Any] = {
        "format": FORMAT, "version": VERSION, "attempt_id": started.get("attempt_id"),
        "status": UNFINISHED, "source": EVENTS_FILE, "work_done": None,
        "last_completed_stage": None, "last_started_stage": name, "last_started_pass": pass_index,
        "last_started_open": still_open, "first_error": None, "oom": None,
        "contracts": contracts, "params": started.get("params"), "command": started.get("command"),
        # What the log says of the versions (attempt_started): read, never "changed to null".
        "runtime": {"python_version": started.get("python_version")},
        "pytorch": {"version": started.get("torch_version")},
        "stages": stages}
    pass_started = False
    completed: set[int] = set()  # the passes the log saw completed, timed or not
    for event in events:
        kind = event.get("event")
        if kind in ("stage_completed", "stage_failed", "stage_interrupted", "stage_slow"):
            _stage_call(document, stages, event, str(kind))
        elif kind == "stage_summary":
            summaries[str(event.get("stage"))] = event
        elif kind == "pass_completed" and isinstance(event.get("pass_index"), int):
            completed.add(event["pass_index"])
            duration = event.get("duration_ms")
            if isinstance(duration, (int, float)) and not isinstance(duration, bool):
                passes[event["pass_index"]] = float(duration)
            for stage, ms in _object(event.get("stage_ms")).items():
                if isinstance(ms, (int, float)) and not isinstance(ms, bool):
                    stage_ms.setdefault(stage, {})[event["pass_index"]] = float(ms)
        elif kind == "pass_started":
            pass_started = True
        elif kind == "contract_checked":
            contracts.append({"name": event.get("name"), "passed": event.get("passed"),
                              "detail": event.get("detail")})
        elif kind == "work_done":
            document["work_done"] = event.get("status")
            summaries.update((str(item.get("stage")), item) for item in
                             _list(event.get("stage_summary")) if isinstance(item, dict))
        if kind in ("stage_failed", "error") and document["first_error"] is None:
            error = _object(event.get("error"))
            document["first_error"] = {"stage": event.get("stage"),
                                       "pass_index": event.get("pass_index"),
                                       "type": error.get("type"), "message": error.get("message")}
            document["oom"] = event.get("oom")
    # Where the log stops: before the first pass, in it, in a later one, or after the work.
    document["log_phase"] = ("after_work" if document["work_done"] is not None
                             else "later_pass" if completed else "first_pass" if pass_started
                             else "loading")
    document["passes"] = {"requested": None, "completed": len(completed),
                          **first_and_later(passes)}
    document["stage_summary"] = list(summaries.values())
    document["timings"] = _timings_of_events(stages, summaries, stage_ms)
    return document


def _stage_call(document: dict[str, Any], stages: list[dict[str, Any]],
                event: dict[str, Any], kind: str) -> None:
    """A stage call the log wrote in full, kept in ``stages``."""
    stages.append({"name": event.get("stage"), "pass_index": event.get("pass_index"),
                   "status": event.get("status", kind[len("stage_"):]),
                   "duration_ms": event.get("duration_ms"), "memory": event.get("memory")})
    if stages[-1]["status"] == "completed":
        document["last_completed_stage"] = event.get("stage")


def _timings_of_events(stages: list[dict[str, Any]], summaries: dict[str, dict[str, Any]],
                       stage_ms: dict[str, dict[int, float]]) -> list[dict[str, Any]]:
    """The timings of an event log: each stage's time per completed pass (``pass_completed``)
    and outside the passes (its latest summary), else from the calls written in full."""
    timings = timings_of(stages)
    for item in timings:
        stage = str(item.get("stage"))
        if stage in stage_ms:
            item.update(first_and_later(stage_ms[stage]))
        outside = summaries.get(stage, {}).get("outside_passes_ms")
        if isinstance(outside, (int, float)) and not isinstance(outside, bool):
            item["outside_passes_ms"] = float(outside)
    return timings


def _events(path: str) -> list[dict[str, Any]]:
    """Every complete JSON object line of the log (its last MAX_EVENTS_BYTES)."""
    try:
        with open(path, "rb") as file:
            size = os.fstat(file.fileno()).st_size
            file.seek(max(0, size - MAX_EVENTS_BYTES))
            data = file.read(MAX_EVENTS_BYTES)
    except OSError:
        return []
    found = []
    for line in data.decode("utf-8", "replace").splitlines():
        try:
            event = loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            found.append(event)
    return found


def is_attempt_document(document: Any) -> bool:
    return isinstance(document, dict) and document.get("format") == FORMAT


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []

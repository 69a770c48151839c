"""What an attempt document says, read in one place: the accessors of its stages, contracts
and memory, and the judge's evidence (``TrialRecord``) made from it.

An attempt document is ``attempt.json``'s, or the one ``trial/log_reader.py`` rebuilds from
the ``events.jsonl`` of an attempt killed before its end (status ``unfinished``). What the
judge needs of an attempt's stages (how many calls, how many failed, which) is read by the
accessors below and nowhere else: the one place that knows where an attempt keeps them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .judge import OOM_TEXT, Judgement, TrialRecord, judge, requested_bytes

UNFINISHED = "unfinished"  # the status of an attempt read from its events alone


@dataclass(frozen=True)
class StageCount:
    """One stage name's calls: every call counted, the completed, failed and interrupted ones."""

    name: str
    calls: int
    completed: int
    failed: int
    interrupted: int


# -- the accessors: an attempt's stages ---------------------------------------------------------

def stage_counts(document: Mapping[str, Any]) -> list[StageCount]:
    """Each stage name's counts, in the order the names first ran: from ``stage_summary`` (every
    call counted), else (or where more) from the calls written in full (``stages``)."""
    found: dict[str, dict[str, int]] = {}
    for item in _list(document.get("stage_summary")):
        if isinstance(item, Mapping):
            counts = found.setdefault(str(item.get("stage")), _zero())
            counts["calls"] = max(counts["calls"], _count(item.get("count")))
            for key in ("completed", "failed", "interrupted"):
                counts[key] = max(counts[key], _count(item.get(key)))
    written: dict[str, dict[str, int]] = {}
    for record in _list(document.get("stages")):
        if isinstance(record, Mapping) and record.get("status") in (
                "completed", "failed", "interrupted"):
            counts = written.setdefault(str(record.get("name")), _zero())
            counts["calls"] += 1
            counts[str(record["status"])] += 1
    for name, counts in written.items():
        mine = found.setdefault(name, _zero())
        for key, value in counts.items():
            mine[key] = max(mine[key], value)
    return [StageCount(name, max(counts["calls"], counts["completed"] + counts["failed"]
                                 + counts["interrupted"]),
                       counts["completed"], counts["failed"], counts["interrupted"])
            for name, counts in found.items()]


def stage_totals(document: Mapping[str, Any]) -> tuple[int, int, list[str]]:
    """(calls, failed calls, the names of the stages with a failure) of an attempt."""
    counts = stage_counts(document)
    return (sum(item.calls for item in counts), sum(item.failed for item in counts),
            [item.name for item in counts if item.failed])


def contract_results(document: Mapping[str, Any]) -> tuple[tuple[str, bool | None], ...]:
    """Each contract checked: (name, passed), in the order they were checked."""
    return tuple((str(item.get("name")), item.get("passed") if isinstance(
        item.get("passed"), bool) else None) for item in _list(document.get("contracts"))
        if isinstance(item, Mapping))


def unchecked_contracts(document: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """Each contract that had nothing to check: (name, why)."""
    return tuple((str(item.get("name")), str(item.get("detail") or ""))
                 for item in _list(document.get("contracts_unchecked"))
                 if isinstance(item, Mapping))


def peak_of(document: Mapping[str, Any]) -> int | None:
    """The attempt's largest memory peak: ``peak_memory_bytes``, else its stages'."""
    peak = document.get("peak_memory_bytes")
    if _integer(peak) and isinstance(peak, int):
        return peak
    peaks = []
    for item in _list(document.get("stage_summary")):
        if isinstance(item, Mapping):
            value = item.get("device_peak_bytes")
            value = value if value is not None else item.get("rss_peak_bytes")
            if _integer(value) and isinstance(value, int):
                peaks.append(value)
    for record in _list(document.get("stages")):
        memory = record.get("memory") if isinstance(record, Mapping) else None
        if isinstance(memory, Mapping):
            value = memory.get("peak_allocated_bytes") if memory.get("device") else \
                memory.get("rss_peak_bytes")
            if _integer(value) and isinstance(value, int):
                peaks.append(value)
    return max(peaks) if peaks else None


def record_of(document: Mapping[str, Any], name: str) -> TrialRecord:
    """The judge's evidence from an attempt document: ``attempt.json``'s, or the one its
    ``events.jsonl`` tells (status ``unfinished``)."""
    unfinished = document.get("status") == UNFINISHED
    calls, failures, stages = stage_totals(document)
    error = document.get("first_error")
    error = error if isinstance(error, Mapping) else None
    oom = document.get("oom")
    phase = _text(document.get("log_phase"))
    if isinstance(oom, Mapping):
        oom = {"phase": oom.get("phase"), "pass_index": _whole(oom.get("pass_index")),
               "requested_bytes": _whole(oom.get("requested_bytes"))}
    elif unfinished and error is not None:  # a log's failure whose text is an allocator's
        text = " ".join(str(error.get(key) or "") for key in ("type", "message"))
        # The pass it failed in: the error's own, else the passes the log saw completed.
        done = _whole((document.get("passes") or {}).get("completed"))
        index = _whole(error.get("pass_index"))
        oom = {"phase": phase, "pass_index": index if index is not None else done or None,
               "requested_bytes": requested_bytes(text)} if OOM_TEXT.search(text) else None
    else:
        oom = None
    params = document.get("params")
    passes = document.get("passes")
    failed_pass = passes.get("first_failed_pass") if isinstance(passes, Mapping) else None
    signal = document.get("signal")
    return TrialRecord(
        name=name, source="events.jsonl" if unfinished else "attempt.json",
        status=_text(document.get("work_done")) if unfinished else _text(document.get("status")),
        ended=not unfinished,
        stage_open=document.get("last_started_open") if unfinished and isinstance(
            document.get("last_started_open"), bool) else (False if not unfinished else None),
        last_started_stage=_text(document.get("last_started_stage")),
        stage_calls=calls, stage_failures=failures, failed_stages=tuple(stages),
        first_error=error, contracts=contract_results(document),
        unchecked=unchecked_contracts(document), oom=oom, phase=phase,
        params=params if isinstance(params, Mapping) else None,
        peak_memory_bytes=peak_of(document),
        pass_index=_whole(document.get("last_started_pass")) if unfinished else None,
        signal=signal if isinstance(signal, Mapping) else None,
        failed_pass=_whole(failed_pass.get("index")) if isinstance(failed_pass, Mapping)
        else None)


def judge_document(document: Mapping[str, Any], name: str = "",
                   axis: tuple[str, int] | None = None) -> Judgement:
    """An attempt read alone (its folder, its ``attempt.json``): the judge's outcome; ``axis``,
    a ramp's, held to its parameters."""
    return judge([record_of(document, name)], axis=axis)


def _zero() -> dict[str, int]:
    return {"calls": 0, "completed": 0, "failed": 0, "interrupted": 0}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _count(value: Any) -> int:
    return int(value) if _integer(value) and value >= 0 else 0


def _whole(value: Any) -> int | None:
    return int(value) if _integer(value) and value >= 0 else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None

"""``compare`` for two trial attempts: what changed between them, as for two check reports.

An argument is an attempt when it is an attempt folder (holding ``attempt.json``) or a file
whose JSON says ``"format": "kernodeck-attempt"`` (``attempt.json`` itself, or a copy). The two
attempts are compared by their status (the headline, as the code heads a comparison of
reports), then, most important first: the last
completed stage, the first error, the out-of-memory block, the contracts, the parameters, the
command, the versions (``pytorch``, ``runtime``), what was obtained, the tensors described, the
memory peak per stage (a change counts from 1 MiB and 10 percent) and the timing per stage
(pass 0 apart from the median of the later passes; the reports' noise rule). The walk over the
facts, the noise rule of the timings and the output are those of two reports
(``report/compare.py``); ``compare`` (the command) is ``commands/compare.py``.
"""

from __future__ import annotations

import os
from typing import Any

from ..report.compare import TIMINGS, Comparison, differences, timing_moved
from ..report.load import Loaded, file_name
from ..report.load import load as read_report
from .folder import ATTEMPT_FILE, FORMAT, VERSION

# A peak counts as changed when it moved by this many bytes and this fraction of the smaller.
MEMORY_MIN_DELTA_BYTES = 2**20
MEMORY_MIN_RATIO = 0.1


def compare(a: dict[str, Any], b: dict[str, Any]) -> Comparison:
    """The differences between two trial attempts, headed by their status as a comparison of
    reports is by their code."""
    changes = list(differences("", comparable(a), comparable(b)))
    changes += memory_changes(a, b)
    timings_a, timings_b = timings(a), timings(b)
    changes += [{"field": key, "a": timings_a.get(key), "b": timings_b.get(key)}
                for key in [*timings_a, *(k for k in timings_b if k not in timings_a)]
                if timing_moved(timings_a.get(key), timings_b.get(key))]
    return Comparison(str(a.get("status")), str(b.get("status")), changes, [], [], "status")


def load(path: str) -> Loaded:
    """An attempt, from its folder or its attempt.json, as ``report.load.Loaded``: shown by its
    attempt id (the folder's name), never the folders above it."""
    target = os.path.join(path, ATTEMPT_FILE) if os.path.isdir(path) else path
    shown = file_name(path)
    if os.path.basename(target) == ATTEMPT_FILE:
        shown = file_name(os.path.dirname(os.path.abspath(target)))
    return read_report(target, shown, judge)


def judge(document: Any, name: str) -> Loaded:
    """Whether a parsed JSON document is an attempt this tool can read."""
    if not is_attempt_document(document):
        return Loaded(name, reason="not_a_report")
    if document.get("version") != VERSION or isinstance(document.get("version"), bool):
        return Loaded(name, reason="schema_version", detail=str(document.get("version"))[:20])
    return Loaded(name, report=document)


def is_attempt_document(document: Any) -> bool:
    return isinstance(document, dict) and document.get("format") == FORMAT


def comparable(attempt: dict[str, Any]) -> dict[str, Any]:
    """The facts of an attempt in the order they are compared (status aside: it heads)."""
    contracts = {str(item.get("name")): {"passed": item.get("passed"),
                                         "detail": item.get("detail")}
                 for item in _list(attempt.get("contracts")) if isinstance(item, dict)}
    tensors = {str(item.get("name")): item.get("text")
               for item in _list(attempt.get("tensors")) if isinstance(item, dict)}
    passes = _object(attempt.get("passes"))
    return {
        "last_completed_stage": attempt.get("last_completed_stage"),
        "first_error": attempt.get("first_error"),
        "oom": _without(attempt.get("oom"), "advice"),
        "contracts": contracts,
        "params": attempt.get("params"),
        "command": attempt.get("command"),
        "pytorch": attempt.get("pytorch"),
        "runtime": attempt.get("runtime"),
        "output": attempt.get("output"),
        "passes": {"requested": passes.get("requested"), "completed": passes.get("completed")},
        "tensors": tensors,
    }


def memory_changes(a: dict[str, Any], b: dict[str, Any]) -> list[dict[str, Any]]:
    """The stages whose memory peak moved noticeably (``memory.<stage>.peak_bytes``)."""
    peaks_a, peaks_b = _peaks(a), _peaks(b)
    changes = []
    for stage in [*peaks_a, *(name for name in peaks_b if name not in peaks_a)]:
        before, after = peaks_a.get(stage), peaks_b.get(stage)
        if _moved(before, after):
            changes.append({"field": f"memory.{stage}.peak_bytes", "a": before, "b": after})
    return changes


def timings(attempt: dict[str, Any]) -> dict[str, float]:
    """Per stage: outside the passes, pass 0, the later passes' median (``timings_ms.*``)."""
    found: dict[str, float] = {}
    for item in _list(attempt.get("timings")):
        if not isinstance(item, dict):
            continue
        stage = str(item.get("stage"))
        later = _object(item.get("later_passes"))
        for key, value in (("", item.get("outside_passes_ms")),
                           (".first_pass", item.get("first_pass_ms")),
                           (".later_passes_median", later.get("median_ms"))):
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                found[f"{TIMINGS}.{stage}{key}"] = float(value)
    return found


def _peaks(attempt: dict[str, Any]) -> dict[str, int]:
    """The largest peak of each stage: the device's when it ran on one, else the process's."""
    peaks: dict[str, int] = {}
    for record in _list(attempt.get("stages")):
        memory = record.get("memory") if isinstance(record, dict) else None
        if not isinstance(memory, dict):
            continue
        peak = memory.get("peak_allocated_bytes") if memory.get("device") else \
            memory.get("rss_peak_bytes")
        if isinstance(peak, int) and not isinstance(peak, bool):
            name = str(record.get("name"))
            peaks[name] = max(peak, peaks.get(name, peak))
    return peaks


def _moved(a: int | None, b: int | None) -> bool:
    if a is None or b is None:
        return a is not b
    delta = abs(b - a)
    return delta >= MEMORY_MIN_DELTA_BYTES and delta >= MEMORY_MIN_RATIO * min(a, b)


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _without(value: Any, key: str) -> Any:
    """An object without one of its keys (a sentence that only restates the others)."""
    return {k: v for k, v in value.items() if k != key} if isinstance(value, dict) else value

"""The per-stage table printed at the end of an attempt, kept beside it (``summary.txt``),
shown by ``Trial.summary()`` and in a notebook's summary of the attempt.

    stage        count  failed  first_ms  total_ms  mean_ms  p95_ms  max_ms  peak_memory
    setup        1      0       812.406   812.406   812.406  812.406 812.406 301.2 MiB
    train_batch  8      0       95.113    156.633   19.579   95.113  95.113  311.0 MiB

One row per stage name, in the order the names first ran, from the attempt's ``stage_summary``
(every call counted, whatever the log kept); the name's first call apart (``first_ms``: the
first batch pays for warming up, an average hides it). An attempt written before the summary
existed is read from its ``stages`` records. ``rows`` is the one place that reads them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..terminal import one_line

SUMMARY_FILE = "summary.txt"
COLUMNS = ("stage", "count", "failed", "first_ms", "total_ms", "mean_ms", "p95_ms", "max_ms",
           "peak_memory")


def rows(attempt: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per stage name: its calls (completed, and failed or interrupted), its first call's time,
    the completed calls' total, mean, p95 and max, and its peak memory."""
    records = [record for record in attempt.get("stages") or []
               if isinstance(record, Mapping) and isinstance(record.get("duration_ms"),
                                                             (int, float))]
    summaries = [item for item in attempt.get("stage_summary") or []
                 if isinstance(item, Mapping) and isinstance(item.get("count"), int)]
    summarised = {item.get("stage") for item in summaries}
    # A name with no summary yet (an attempt killed before its first, or one written before
    # summaries existed) is read from its records, which then hold its every call.
    unsummarised = _from_records([record for record in records
                                  if record.get("name") not in summarised])
    first: dict[Any, float] = {}
    for record in records:  # the first calls of every name are kept in full
        first.setdefault(record.get("name"), float(record["duration_ms"]))
    found = []
    for item in summaries:
        completed = item.get("completed") if isinstance(item.get("completed"), int) else 0
        total = float(item.get("total_ms") or 0.0)
        peak = item.get("device_peak_bytes")
        peak = peak if isinstance(peak, int) else item.get("rss_peak_bytes")
        found.append({"stage": str(item.get("stage")), "count": item["count"],
                      "failed": _count(item.get("failed")) + _count(item.get("interrupted")),
                      "first_ms": first.get(item.get("stage")),
                      "total_ms": round(total, 3),
                      "mean_ms": round(total / completed, 3) if completed else None,
                      "p95_ms": item.get("p95_ms"), "max_ms": item.get("max_ms"),
                      "peak_memory_bytes": peak if isinstance(peak, int) else None})
    return found + unsummarised


def _from_records(records: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The rows of an attempt that kept every call as a record (written before the summary)."""
    groups: dict[str, tuple[list[float], list[int], list[int]]] = {}
    for record in records:
        durations, peaks, failed = groups.setdefault(str(record.get("name")), ([], [], [0]))
        if record.get("status") != "completed":
            failed[0] += 1
            continue
        durations.append(float(record["duration_ms"]))
        peak = _peak(record.get("memory"))
        if peak is not None:
            peaks.append(peak)
    found = []
    for name, (durations, peaks, failed) in groups.items():
        ordered = sorted(durations)
        total = sum(ordered)
        found.append({"stage": name, "count": len(ordered) + failed[0], "failed": failed[0],
                      "first_ms": round(durations[0], 3) if durations else None,
                      "total_ms": round(total, 3),
                      "mean_ms": round(total / len(ordered), 3) if ordered else None,
                      "p95_ms": round(ordered[math.ceil(0.95 * len(ordered)) - 1], 3)
                      if ordered else None,
                      "max_ms": round(ordered[-1], 3) if ordered else None,
                      "peak_memory_bytes": max(peaks) if peaks else None})
    return found


def table(found: list[dict[str, Any]]) -> str:
    """The rows as aligned text, a header first."""
    lines = [COLUMNS, *cells(found)]
    widths = [max(len(line[column]) for line in lines) for column in range(len(COLUMNS))]
    return "".join("  ".join(value.ljust(width) for value, width in zip(line, widths)).rstrip()
                   + "\n" for line in lines)


def cells(found: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    """Each row's cells as text, in COLUMNS' order; a stage's name (the program's) on one
    printable line (``terminal.one_line``)."""
    return [(one_line(row["stage"]), str(row["count"]), str(row["failed"]), _ms(row["first_ms"]),
             _ms(row["total_ms"]), _ms(row["mean_ms"]), _ms(row["p95_ms"]), _ms(row["max_ms"]),
             _size(row["peak_memory_bytes"])) for row in found]


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _peak(memory: Any) -> int | None:
    """The device's peak when the stage ran on one, else the resident set's."""
    if not isinstance(memory, Mapping):
        return None
    value = (memory.get("peak_allocated_bytes") if memory.get("device") is not None
             else memory.get("rss_peak_bytes"))
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _size(count: int | None) -> str:
    return "-" if count is None else f"{count / 2**20:.1f} MiB"

"""The per-stage table printed at the end of an attempt and kept beside it (``summary.txt``).

    stage                   count  total_ms  mean_ms  p95_ms  max_ms  peak_memory
    setup                   1      812.406   812.406  812.406 812.406 301.2 MiB
    train_batch (pass 0)    1      95.113    95.113   95.113  95.113  310.9 MiB
    train_batch             7      61.520    8.789    9.870   9.870   311.0 MiB

One row per stage name, in the order the stages first ran; pass 0 of a stage that runs in the
passes has its own row (it pays for warming up: an average over it hides both), and so has each
stage's failed or interrupted records. Everything is read from the attempt's document
(``attempt.json``'s ``stages``) through ``rows``: where the attempt records its stages is this
function's business alone.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

SUMMARY_FILE = "summary.txt"
COLUMNS = ("stage", "count", "total_ms", "mean_ms", "p95_ms", "max_ms", "peak_memory")


def rows(attempt: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per stage (pass 0 and each failed status apart): count, total, mean, p95, max, peak."""
    groups: dict[str, tuple[list[float], list[int]]] = {}
    for record in attempt.get("stages") or []:
        if not isinstance(record, Mapping) or not isinstance(record.get("duration_ms"),
                                                             (int, float)):
            continue
        durations, peaks = groups.setdefault(_label(record), ([], []))
        durations.append(float(record["duration_ms"]))
        peak = _peak(record.get("memory"))
        if peak is not None:
            peaks.append(peak)
    found = []
    for label, (durations, peaks) in groups.items():
        ordered = sorted(durations)
        total = sum(ordered)
        found.append({"stage": label, "count": len(ordered), "total_ms": round(total, 3),
                      "mean_ms": round(total / len(ordered), 3),
                      "p95_ms": round(ordered[math.ceil(0.95 * len(ordered)) - 1], 3),
                      "max_ms": round(ordered[-1], 3),
                      "peak_memory_bytes": max(peaks) if peaks else None})
    return found


def read_attempt(data: bytes | None) -> dict[str, Any] | None:
    """The attempt's document from the bytes of its ``attempt.json`` (None: none, or not one)."""
    if data is None:
        return None
    try:
        document = json.loads(data.decode("utf-8"))
    except ValueError:
        return None
    return document if isinstance(document, dict) else None


def table(found: list[dict[str, Any]]) -> str:
    """The rows as aligned text, a header first."""
    lines = [COLUMNS]
    lines += [(row["stage"], str(row["count"]), f"{row['total_ms']:.3f}",
               f"{row['mean_ms']:.3f}", f"{row['p95_ms']:.3f}", f"{row['max_ms']:.3f}",
               _size(row["peak_memory_bytes"])) for row in found]
    widths = [max(len(line[column]) for line in lines) for column in range(len(COLUMNS))]
    return "".join("  ".join(value.ljust(width) for value, width in zip(line, widths)).rstrip()
                   + "\n" for line in lines)


def _label(record: Mapping[str, Any]) -> str:
    label = str(record.get("name"))
    if record.get("pass_index") == 0:
        label += " (pass 0)"
    status = record.get("status")
    return label if status == "completed" else f"{label} ({status})"


def _peak(memory: Any) -> int | None:
    """The device's peak when the stage ran on one, else the resident set's."""
    if not isinstance(memory, Mapping):
        return None
    value = (memory.get("peak_allocated_bytes") if memory.get("device") is not None
             else memory.get("rss_peak_bytes"))
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _size(count: int | None) -> str:
    return "-" if count is None else f"{count / 2**20:.1f} MiB"

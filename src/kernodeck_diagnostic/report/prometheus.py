"""A check's verdict as Prometheus metrics, for node_exporter's textfile collector.

The collector reads every ``*.prom`` file of one folder at each scrape; ``--prometheus FILE``
writes one there (``write``: a ``.partial`` file beside it, which the collector does not read,
renamed over it, so a scrape reads the last whole file, never half of one; through the safe file
layer, never through another user's link). The text exposition format
(version 0.0.4): a ``# HELP`` and a ``# TYPE`` line for each metric family, then its samples.
Names follow Prometheus' conventions (a ``kernodeck_`` prefix, base units, ``_seconds``,
``_info`` for an information metric); every label takes its values from a closed set or from a
version string, never a host name, a path or a message, so the series stay few.

    kernodeck_check_passed 1                                     # 1 passed, 0 did not
    kernodeck_check_code{code="GPU_CHECK_PASSED"} 1              # one series per code, 1 for the
    kernodeck_check_code{code="GPU_UNAVAILABLE"} 0               # code the check gave
    kernodeck_check_stage{stage="compute"} 1                     # likewise per stage
    kernodeck_check_duration_seconds 1.42
    kernodeck_check_last_run_timestamp_seconds 1796515200        # for an alert on staleness
    kernodeck_device_check_passed{device="0"} 1                  # --all-devices, per device
    kernodeck_build_info{tool_version=...,torch_version=...,backend=...,python_version=...} 1
    kernodeck_health_fault{fault="node"} 0                       # health-check: whose fault
"""

from __future__ import annotations

import calendar
import math
import os
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ..safe_files import Folder
from ..worker.protocol import STAGES
from .codes import VERDICTS
from .health import FAULTS, Health

PREFIX = "kernodeck_"
SUFFIX = ".prom"  # the only files the textfile collector reads
# A label value taken from the report is one of these shapes, else "unknown": a version, a
# backend's name. Anything longer or stranger is not a label value (it could be anything).
_VERSION = re.compile(r"[0-9A-Za-z.+_-]{1,40}")


def check_metrics(report: Mapping[str, Any], health: Health | None = None,
                  now: float | None = None) -> str:
    """The metrics of one finished check (and its health-check outcome, when there is one)."""
    return "".join(_lines(report, health, time.time() if now is None else now))


def write(path: str, text: str) -> None:
    """Replace the file at ``path`` with ``text`` atomically; OSError (``UnsafePath`` for a link
    or a folder not to be trusted) when it cannot be."""
    folder, name = os.path.split(os.path.abspath(path))
    with Folder.open(folder) as opened:
        opened.replace(name, text.encode("utf-8"), mode=0o644)


def _lines(report: Mapping[str, Any], health: Health | None, now: float) -> Iterator[str]:
    code = str(report.get("code"))
    passed = VERDICTS.get(code) is not None and VERDICTS[code].passed
    yield from family("check_passed", "gauge",
                       "Whether the last check passed (1) or not (0).", [({}, int(passed))])
    yield from family("check_code", "gauge",
                       "The last check's result code: 1 for the code it gave, 0 for the others.",
                       [({"code": name}, int(name == code)) for name in VERDICTS])
    stage = report.get("stage")
    yield from family("check_stage", "gauge",
                       "The stage the last check reached: 1 for that stage, 0 for the others.",
                       [({"stage": name}, int(name == stage)) for name in STAGES])
    duration = _duration_s(report)
    if duration is not None:
        yield from family("check_duration_seconds", "gauge",
                           "Wall time of the last check's worker, in seconds.", [({}, duration)])
    ran_at = _created_at(report)
    yield from family("check_last_run_timestamp_seconds", "gauge",
                       "When the last check ran, in seconds since the epoch.",
                       [({}, ran_at if ran_at is not None else now)])
    devices = _device_samples(report)
    if devices:
        yield from family("device_check_passed", "gauge",
                           "Whether each device's own check passed (1) or not (0), by index.",
                           devices)
    yield from family("build_info", "gauge",
                       "The tool's, PyTorch's and Python's versions and the backend, as labels.",
                       [(_build_labels(report), 1)])
    if health is not None:
        yield from family("health_fault", "gauge",
                           "Whose fault the last health check found: 1 for that one, 0 for the "
                           "others (passed, node, environment, inconclusive).",
                           [({"fault": fault}, int(fault == health.fault)) for fault in FAULTS])


def family(name: str, kind: str, help_text: str,
            samples: Sequence[tuple[Mapping[str, str], float]]) -> Iterator[str]:
    full = PREFIX + name
    yield f"# HELP {full} {_help(help_text)}\n"
    yield f"# TYPE {full} {kind}\n"
    for labels, value in samples:
        shown = ",".join(f'{key}="{_label_value(text)}"' for key, text in labels.items())
        yield f"{full}{{{shown}}} {_number(value)}\n" if shown else f"{full} {_number(value)}\n"


def _help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def _label_value(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(round(value, 6))


def _duration_s(report: Mapping[str, Any]) -> float | None:
    timings = report.get("timings_ms")
    total = timings.get("worker_total") if isinstance(timings, Mapping) else None
    if isinstance(total, (int, float)) and not isinstance(total, bool) and math.isfinite(total) \
            and total >= 0:
        return total / 1000
    return None


def _created_at(report: Mapping[str, Any]) -> float | None:
    created = report.get("created_at")
    if not isinstance(created, str):
        return None
    try:
        return float(calendar.timegm(time.strptime(created, "%Y-%m-%dT%H:%M:%SZ")))
    except ValueError:
        return None


def _device_samples(report: Mapping[str, Any]) -> list[tuple[Mapping[str, str], float]]:
    request, pytorch = report.get("request"), report.get("pytorch")
    if not (isinstance(request, Mapping) and request.get("all_devices") is True
            and isinstance(pytorch, Mapping) and isinstance(pytorch.get("devices"), list)):
        return []
    samples: list[tuple[Mapping[str, str], float]] = []
    for entry in pytorch["devices"]:
        if not isinstance(entry, Mapping) or type(entry.get("index")) is not int:
            continue
        check = entry.get("check")
        code = check.get("code") if isinstance(check, Mapping) else None
        passed = isinstance(code, str) and code in VERDICTS and VERDICTS[code].passed
        samples.append(({"device": str(entry["index"])}, int(passed)))
    return samples


def _build_labels(report: Mapping[str, Any]) -> dict[str, str]:
    tool, pytorch, runtime = (report.get(key) for key in ("tool", "pytorch", "runtime"))
    return {
        "tool_version": _version(tool.get("version") if isinstance(tool, Mapping) else None),
        "torch_version": _version(pytorch.get("version") if isinstance(pytorch, Mapping)
                                  else None),
        "backend": _version(pytorch.get("backend") if isinstance(pytorch, Mapping) else None),
        "python_version": _version(runtime.get("python_version")
                                   if isinstance(runtime, Mapping) else None),
    }


def _version(value: Any) -> str:
    return value if isinstance(value, str) and _VERSION.fullmatch(value) else "unknown"

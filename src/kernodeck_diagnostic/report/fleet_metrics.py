"""``summarize --prometheus FILE``: a summary's counts as metrics for node_exporter's textfile
collector, written as the check's are (``report/prometheus.py``: atomically, Prometheus' naming
conventions, a HELP and a TYPE line per family). Every label comes from a closed set (a code, a
stage of the worker's protocol, a reason, a job's status) or is a cause shaped as an identifier,
at most ``GROUPS`` of them (the others summed as ``other``): never a host name, a path or a
message.

    kernodeck_fleet_reports{code="GPU_UNAVAILABLE"} 15
    kernodeck_fleet_failed_reports{code="OUT_OF_MEMORY",stage="compute",cause="out_of_memory"} 9
    kernodeck_fleet_unreadable_files{reason="not_json"} 1
    kernodeck_fleet_jobs{status="failed"} 1
    kernodeck_fleet_files 1000
    kernodeck_fleet_last_run_timestamp_seconds 1796515200
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from typing import get_args

from ..worker.protocol import STAGES
from .codes import VERDICTS
from .jobs import Job
from .load import Reason
from .prometheus import family

GROUPS = 20
_STATUSES = ("passed", "failed", "incomplete", "partial")


def summary_metrics(by_code: Mapping[str, int], unreadable: Mapping[str, int],
                    jobs: Sequence[Job], groups: Mapping[tuple[str, str, str], int],
                    now: float | None = None) -> str:
    return "".join(_lines(by_code, unreadable, jobs, groups,
                          time.time() if now is None else now))


def _lines(by_code: Mapping[str, int], unreadable: Mapping[str, int], jobs: Sequence[Job],
           groups: Mapping[tuple[str, str, str], int], now: float) -> Iterator[str]:
    yield from family("fleet_reports", "gauge", "Reports read, per code.",
                       [({"code": code}, int(by_code.get(code, 0))) for code in VERDICTS])
    shown: dict[tuple[str, str, str], int] = {}
    for (code, stage, cause), count in sorted(groups.items(), key=lambda item: -item[1]):
        key = (code if code in VERDICTS else "other", stage if stage in STAGES else "other",
               cause if len(shown) < GROUPS and cause.replace(":", "_").isidentifier()
               and len(cause) <= 40 else "other")
        shown[key] = shown.get(key, 0) + count
    yield from family("fleet_failed_reports", "gauge",
                       "Reports that did not pass, per code, stage and cause.",
                       [({"code": code, "stage": stage, "cause": cause}, count)
                        for (code, stage, cause), count in sorted(shown.items())])
    reasons = get_args(Reason)
    yield from family("fleet_unreadable_files", "gauge",
                       "Files that are not readable reports, per reason.",
                       [({"reason": reason}, int(unreadable.get(reason, 0)))
                        for reason in reasons])
    yield from family("fleet_jobs", "gauge", "Distributed jobs, per status.",
                       [({"status": status}, sum(job.status == status for job in jobs))
                        for status in _STATUSES])
    yield from family("fleet_files", "gauge", "Files read.",
                       [({}, sum(by_code.values()) + sum(unreadable.values()))])
    yield from family("fleet_last_run_timestamp_seconds", "gauge",
                       "When this summary was made (Unix time).", [({}, round(now, 3))])

"""An attempt's event log read back: streamed a line at a time, only summaries kept.

The attempt a killed process left is its ``events.jsonl`` (and its beacon ``stage.bin``): the
``compare`` of two attempts, ``summarize``, ``open_attempt()`` and ``ramp`` read it back. A log is
whatever the disk holds (a long run's, a copy, another person's), so reading one is bounded in
time and memory whatever its size:

- it is read through the one reader (``untrusted_json.json_objects``): a regular file of its
  own, never through a link (a ``Trial`` never makes one), opened without waiting; a line held
  at most ``MAX_EVENT_LINE_BYTES`` (a longer one skipped as it is read), and at most
  ``MAX_LOG_BYTES`` of the file read, its head and its last ``TAIL_BYTES`` (where it says how
  the attempt ended);
- each event is folded into what the document keeps as it is read, never a list of them: of
  each stage name, its first ``MAX_RECORDS_PER_STAGE`` records and the one with the highest
  memory peak; its latest summary; the passes' and each stage's durations per pass exact up to
  ``EXACT_PASSES`` passes, then a histogram (percentiles within 1 percent); the contracts, one
  entry a check up to ``MAX_CONTRACTS``, then each name's result folded into its first entry;
  at most ``MAX_STAGE_NAMES`` stage names;
- what was not read is said (``log_read``: ``whole`` False, the lines skipped, the bytes never
  read, the events of stage names past the bound), never silently taken as an attempt that had
  nothing more to say (what is folded, a name's records past its first, a contract's checks
  past the bound, loses no failure and no peak).

``from_events`` gives the document ``trial/compare.py`` compares (status ``unfinished``);
``LastStarted`` the stage the attempt was in, which ``ramp/outcome.py`` reads too.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from typing import Any

from ..untrusted_json import Tally, json_objects
from .accessors import UNFINISHED
from .folder import FORMAT, VERSION
from .log import EVENTS_FILE
from .passes import bucket_of, histogram_percentile
from .session import timings_of
from .stages import BEACON_FILE, first_and_later, read_beacon

MAX_LOG_BYTES = 32 * 2**20  # of a larger log, its first 24 MiB and its last 8 MiB are read
TAIL_BYTES = 8 * 2**20
MAX_EVENT_LINE_BYTES = 2**20  # an event is a few hundred bytes; a longer line is skipped
MAX_STAGE_NAMES = 256  # distinct stage names whose records, summaries and timings are kept
MAX_RECORDS_PER_STAGE = 32  # records of one stage name kept in full (a Trial writes fewer)
MAX_CONTRACTS = 256  # contract checks kept one by one; then folded by name
EXACT_PASSES = 1024  # durations kept one by one per series, then a histogram
MORE_CONTRACTS = "(more contracts)"  # the one entry that stands for names past MAX_CONTRACTS

_RECORD_KINDS = ("stage_completed", "stage_failed", "stage_interrupted", "stage_slow")


def events(path: str, tally: Tally | None = None) -> Iterator[dict[str, Any]]:
    """Each event (a JSON object line) of the log at ``path``, one at a time, within the bounds
    of the module's docstring; OSError (at the first ``next()``) when it is no regular file."""
    return json_objects(path, tally=tally, max_line_bytes=MAX_EVENT_LINE_BYTES,
                        max_bytes=MAX_LOG_BYTES, tail_bytes=TAIL_BYTES, follow_links=False)


def log_read(tally: Tally, names_dropped: int = 0) -> dict[str, Any]:
    """What of a log was read: ``whole`` only when every line of it was read and every stage
    name it holds kept (``names_dropped``: the events of names past ``MAX_STAGE_NAMES``)."""
    return {"whole": tally.whole and not names_dropped, "skipped_lines": tally.skipped,
            "unread_bytes": tally.unread_bytes, "names_dropped": names_dropped}


class LastStarted:
    """The stage an attempt was in (the innermost one open) or, when none was open, its last:
    from the beacon beside its event log, named by the log's ``stage_started`` of that index,
    else the log's last ``stage_started`` (open: unknown, None). Fed the events one at a time.
    """

    def __init__(self, events_path: str) -> None:
        self.beacon = read_beacon(os.path.join(os.path.dirname(events_path), BEACON_FILE))
        self.named: tuple[Any] | None = None  # the beacon's stage's name, once the log gives it
        self.last: dict[str, Any] | None = None

    def add(self, event: dict[str, Any]) -> None:
        if event.get("event") != "stage_started":
            return
        self.last = event
        if self.beacon is not None and "stage_index" in event and \
                event.get("stage_index") == self.beacon[0]:
            self.named = (event.get("stage"),)

    def result(self) -> tuple[Any, Any, bool | None]:
        """(name, pass index, still open); (None, None, None) when nothing says."""
        if self.beacon is not None and self.named is not None:
            return self.named[0], self.beacon[1], self.beacon[2]
        if self.last is None:
            return None, None, None
        return self.last.get("stage"), self.last.get("pass_index"), None


class PassTimes:
    """Durations by pass index, as ``stages.first_and_later`` summarizes them: exact up to
    ``EXACT_PASSES`` later passes, then their count, extremes and slowest exact and their
    median and p95 from a histogram (``BUCKETS_PER_E`` buckets per factor e: within 1 percent).
    """

    __slots__ = ("count", "exact", "first", "histogram", "max_ms", "min_ms", "slowest")

    def __init__(self) -> None:
        self.first: float | None = None
        self.exact: dict[int, float] | None = {}
        self.histogram: dict[int, int] = {}
        self.count = 0
        self.min_ms = math.inf
        self.max_ms = -math.inf
        self.slowest = 0

    def add(self, index: int, ms: float) -> None:
        if index == 0:
            self.first = ms
            return
        if self.exact is not None:
            self.exact[index] = ms
            if len(self.exact) <= EXACT_PASSES:
                return
            held, self.exact = self.exact, None
            for number, duration in sorted(held.items()):
                self._count(number, duration)
            return
        self._count(index, ms)

    def _count(self, index: int, ms: float) -> None:
        self.count += 1
        if ms > self.max_ms or (ms == self.max_ms and index > self.slowest):
            self.max_ms, self.slowest = ms, index
        self.min_ms = min(self.min_ms, ms)
        bucket = bucket_of(ms, 1000)
        self.histogram[bucket] = self.histogram.get(bucket, 0) + 1

    def summary(self) -> dict[str, Any]:
        """``first_pass_ms`` and ``later_passes`` (count, median, min, p95, max, slowest)."""
        if self.exact is not None:
            durations = dict(self.exact)
            if self.first is not None:
                durations[0] = self.first
            return first_and_later(durations)
        return {"first_pass_ms": self.first, "later_passes": {
            "count": self.count, "median_ms": round(self._percentile(0.5), 3),
            "min_ms": round(self.min_ms, 3), "p95_ms": round(self._percentile(0.95), 3),
            "max_ms": round(self.max_ms, 3), "slowest_pass": self.slowest}}

    def _percentile(self, fraction: float) -> float:
        rank = max(1, math.ceil(fraction * self.count))
        return histogram_percentile(self.histogram, rank, self.min_ms, self.max_ms, 1000)


class _Fold:
    """What ``from_events`` keeps of a log, fed one event at a time."""

    def __init__(self, path: str) -> None:
        self.started: dict[str, Any] | None = None
        self.last_started = LastStarted(path)
        self.records: list[dict[str, Any]] = []  # each name's first ones, in the order they ran
        self.kept: dict[str, int] = {}  # how many of each name's are in records
        self.peak_records: dict[str, tuple[int, int, dict[str, Any]]] = {}  # past the first ones
        self.order = 0
        self.last_completed: Any = None
        self.summaries: dict[str, dict[str, Any]] = {}  # each stage's latest
        self.passes = PassTimes()
        self.passes_completed: set[int] | int = set()  # the indices, or a count past EXACT
        self.stage_ms: dict[str, PassTimes] = {}
        self.contracts: list[dict[str, Any]] = []
        self.contract_at: dict[str, int] = {}  # a name's first entry
        self.work_done: Any = None
        self.pass_started = False  # a pass began: the log goes past the loading
        # The Trial writes each pass's events for its first passes only, then a passes_summary
        # (counts and figures) as the count doubles and at the end: the latest one counts.
        self.passes_summary: dict[str, Any] = {}
        self.first_error: dict[str, Any] | None = None
        self.oom: Any = None
        self.names_dropped = 0  # events of stage names past MAX_STAGE_NAMES

    def add(self, event: dict[str, Any]) -> None:
        kind = event.get("event")
        self.last_started.add(event)
        if kind == "attempt_started" and self.started is None:
            self.started = event
        elif kind in _RECORD_KINDS:
            self._record(event, str(kind))
        elif kind == "stage_summary":
            self._summary(event)
        elif kind == "pass_completed" and isinstance(event.get("pass_index"), int):
            self._pass(event)
        elif kind == "pass_started":
            self.pass_started = True
        elif kind == "passes_summary":
            self.passes_summary = event
        elif kind == "contract_checked":
            self._contract(event)
        elif kind == "work_done":
            self.work_done = event.get("status")
            items = event.get("stage_summary")
            for item in items if isinstance(items, list) else []:
                if isinstance(item, dict):
                    self._summary(item)
        if kind in ("stage_failed", "error") and self.first_error is None:
            error = _object(event.get("error"))
            self.first_error = {"stage": event.get("stage"), "pass_index": event.get("pass_index"),
                                "type": error.get("type"), "message": error.get("message")}
            self.oom = event.get("oom")

    def _named(self, table: dict[str, Any], name: str) -> bool:
        """Whether ``name`` has, or may have, an entry in ``table`` (MAX_STAGE_NAMES)."""
        if name in table or len(table) < MAX_STAGE_NAMES:
            return True
        self.names_dropped += 1
        return False

    def _record(self, event: dict[str, Any], kind: str) -> None:
        record = {"name": event.get("stage"), "pass_index": event.get("pass_index"),
                  "status": event.get("status", kind[len("stage_"):]),
                  "duration_ms": event.get("duration_ms"), "memory": event.get("memory")}
        if record["status"] == "completed":
            self.last_completed = event.get("stage")
        name = str(event.get("stage"))
        self.order += 1
        if not self._named(self.kept, name):
            return
        if self.kept.get(name, 0) < MAX_RECORDS_PER_STAGE:
            self.kept[name] = self.kept.get(name, 0) + 1
            self.records.append(record)
            return
        peak = _peak(record)  # past the first ones: the highest peak still shows
        best = self.peak_records.get(name)
        if peak is not None and (best is None or peak > best[0]):
            self.peak_records[name] = (peak, self.order, record)

    def _summary(self, item: dict[str, Any]) -> None:
        name = str(item.get("stage"))
        if self._named(self.summaries, name):
            self.summaries[name] = item

    def _pass(self, event: dict[str, Any]) -> None:
        index = event["pass_index"]
        duration = _number(event.get("duration_ms"))
        if duration is not None:
            self.passes.add(index, duration)
        if isinstance(self.passes_completed, set):  # completed, timed or not
            self.passes_completed.add(index)
            if len(self.passes_completed) > EXACT_PASSES:
                self.passes_completed = len(self.passes_completed)
        else:
            self.passes_completed += 1
        stage_ms = event.get("stage_ms")
        for stage, ms in (stage_ms.items() if isinstance(stage_ms, dict) else ()):
            value = _number(ms)
            if value is not None and self._named(self.stage_ms, stage):
                self.stage_ms.setdefault(stage, PassTimes()).add(index, value)

    def _contract(self, event: dict[str, Any]) -> None:
        entry = {"name": event.get("name"), "passed": event.get("passed"),
                 "detail": event.get("detail")}
        if len(self.contracts) < MAX_CONTRACTS:
            self.contract_at.setdefault(str(entry["name"]), len(self.contracts))
            self.contracts.append(entry)
            return
        # Past the bound: a name's result folded into its first entry (a name passes when each
        # of its checks passed), a new name's into one entry that stands for all of them.
        at = self.contract_at.get(str(entry["name"]))
        if at is None:
            if self.contracts[-1].get("name") != MORE_CONTRACTS:
                self.contracts.append({"name": MORE_CONTRACTS, "passed": True, "detail": None})
            at = len(self.contracts) - 1
        kept = self.contracts[at]
        if kept.get("passed") is True and entry["passed"] is not True:
            kept["passed"], kept["detail"] = entry["passed"], entry["detail"]

    def stages(self) -> list[dict[str, Any]]:
        """The records kept, in the order they ran: each name's first ones, then the record
        with each name's highest peak past them."""
        extra = sorted(self.peak_records.values(), key=lambda item: item[1])
        return self.records + [record for _, _, record in extra]


def from_events(path: str) -> dict[str, Any] | None:
    """An attempt as its ``events.jsonl`` tells it, when the process ended before writing
    ``attempt.json``: status ``unfinished``; None when the file is no trial's event log (none
    of its lines says ``attempt_started``), or not a regular file of its own."""
    tally = Tally()
    fold = _Fold(path)
    try:
        for event in events(path, tally):
            fold.add(event)
    except OSError:
        return None
    started = fold.started
    if started is None:
        return None
    name, pass_index, still_open = fold.last_started.result()
    stages = fold.stages()
    counted = fold.passes_completed
    told = fold.passes_summary
    passes = max(len(counted) if isinstance(counted, set) else counted,
                 _count(told.get("completed")) or 0)
    # Where the log stops: before the first pass, in it, in a later one, or after the work.
    phase = ("after_work" if fold.work_done is not None else "later_pass" if passes
             else "first_pass" if fold.pass_started else "loading")
    return {
        "format": FORMAT, "version": VERSION, "attempt_id": started.get("attempt_id"),
        "status": UNFINISHED, "source": EVENTS_FILE, "work_done": fold.work_done,
        "log_phase": phase,
        # What the log says of the versions (attempt_started): read, never "changed to null".
        "runtime": {"python_version": started.get("python_version")},
        "pytorch": {"version": started.get("torch_version")},
        "last_completed_stage": fold.last_completed, "last_started_stage": name,
        "last_started_pass": pass_index, "last_started_open": still_open,
        "first_error": fold.first_error, "oom": fold.oom, "contracts": fold.contracts,
        "params": started.get("params"), "command": started.get("command"), "stages": stages,
        "passes": {"requested": _count(told.get("requested")), "completed": passes,
                   "first_failed_pass": _object(told.get("first_failed_pass")) or None,
                   "left_at_pass": _count(told.get("left_at_pass")),
                   **fold.passes.summary()},
        "stage_summary": list(fold.summaries.values()),
        "timings": _timings(stages, fold.summaries, fold.stage_ms),
        "log_read": log_read(tally, fold.names_dropped)}


def is_attempt_document(document: Any) -> bool:
    """Whether ``document`` is a Trial's attempt (``attempt.json``, or one ``from_events``
    rebuilt), not a check's report or anything else."""
    return isinstance(document, dict) and document.get("format") == FORMAT


def _timings(stages: list[dict[str, Any]], summaries: dict[str, dict[str, Any]],
             stage_ms: dict[str, PassTimes]) -> list[dict[str, Any]]:
    """The timings of an event log: each stage's time per completed pass (``pass_completed``)
    and outside the passes (its latest summary), else from the calls written in full."""
    timings = timings_of(stages)
    for item in timings:
        stage = str(item.get("stage"))
        if stage in stage_ms:
            item.update(stage_ms[stage].summary())
        outside = _number(summaries.get(stage, {}).get("outside_passes_ms"))
        if outside is not None:
            item["outside_passes_ms"] = outside
    return timings


def _peak(record: dict[str, Any]) -> int | None:
    memory = record.get("memory")
    if not isinstance(memory, dict):
        return None
    peak = memory.get("peak_allocated_bytes") if memory.get("device") else \
        memory.get("rss_peak_bytes")
    return peak if isinstance(peak, int) and not isinstance(peak, bool) else None


def _number(value: Any) -> float | None:
    """A JSON number as a float (``loads`` bounded its digits); None for anything else."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        else None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 \
        else None


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}

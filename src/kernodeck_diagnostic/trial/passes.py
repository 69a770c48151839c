"""The passes of a ``Trial``, kept in a size that does not grow with their number.

A million passes leave the same attempt as a hundred: what is kept of them is the first pass in
full (its time and memory), the ``SLOWEST_KEPT`` slowest later ones, the first pass that failed
(its index, its stage), the counts, and the later passes' durations as a ``Sketch`` (count,
total, min, median, p95, max: exact up to ``EXACT_VALUES`` passes, then a histogram of
``BUCKETS_PER_E`` buckets per factor e, within 1 percent). The memory kept after a pass is read
for the first ``FIRST_KEPT`` passes, then at most every ``MEMORY_EVERY_S`` (a pass of a
millisecond does not pay for a read each time; and then the resident size alone, from
``/proc/self/statm``, a fifth of ``/proc/self/status``'s cost): the readings feed a
sketch of their own and the newest ``MEMORY_KEPT`` of them, with their pass indexes, say the
growth per pass an out-of-memory error's advice reads.

``events.jsonl`` receives ``pass_started`` and ``pass_completed`` for the first ``FIRST_KEPT``
passes, ``pass_slow`` when a later pass becomes one of the slowest (rarer and rarer; at most
``SLOW_WRITTEN`` times), and a
``passes_summary`` each time the count doubles, at most ``SUMMARY_EVERY_S`` after the last one,
and at the attempt's end: a process killed at any point leaves the count of its passes.
"""

from __future__ import annotations

import heapq
import math
import time
from collections import Counter, deque
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

FIRST_KEPT = 3  # passes written in full to the event log, and read for memory each
SLOWEST_KEPT = 5  # slowest later passes kept
SLOW_WRITTEN = 20  # pass_slow events, at most
MEMORY_KEPT = 32  # newest memory readings kept, with their pass indexes
MEMORY_EVERY_S = 0.05  # after the first passes, the memory is read at most this often
SUMMARY_EVERY_S = 30.0
EXACT_VALUES = 1024  # values kept one by one for the percentiles, then a histogram
FOLDED_TOGETHER = 64  # values a sketch adds before it folds them into its figures
BUCKETS_PER_E = 100
_log1p = math.log1p
_not_below_zero = partial(max, 0.0)


def bucket_of(value: float, scale: float) -> int:
    """The histogram bucket of a non-negative ``value`` in the unit ``scale`` makes of it
    (``BUCKETS_PER_E`` buckets per factor e: within 1 percent)."""
    return int(math.log1p(max(value, 0.0) * scale) * BUCKETS_PER_E)


def count_buckets(histogram: dict[int, int], values: list[float], scale: float) -> None:
    """Count each of ``values`` (non-negative) in its bucket of ``histogram`` (``bucket_of``),
    the buckets computed and counted by the interpreter's C loops: a fold of many values."""
    per_e = float(BUCKETS_PER_E)
    buckets = Counter(map(int, map(per_e.__mul__, map(_log1p, map(
        float(scale).__mul__, map(_not_below_zero, values))))))
    for bucket, count in buckets.items():
        histogram[bucket] = histogram.get(bucket, 0) + count


def histogram_percentile(histogram: dict[int, int], rank: int, low: float, high: float,
                         scale: float) -> float:
    """The value of the ``rank``-th smallest one counted in ``histogram`` (its bucket's middle,
    held between the values' extremes ``low`` and ``high``)."""
    seen = 0
    for bucket in sorted(histogram):
        seen += histogram[bucket]
        if seen >= rank:
            return min(max(math.expm1((bucket + 0.5) / BUCKETS_PER_E) / scale, low), high)
    return high


class Sketch:
    """A stream of non-negative numbers summarised in a bounded size: count, total, extremes
    (with the key of the largest), percentiles (see the module's docstring). ``scale`` turns a
    value into the histogram's unit (a duration in ms: 1000, so buckets are in µs).

    ``add`` keeps the count and the largest value at once and the value itself aside, folded
    into the other figures ``FOLDED_TOGETHER`` at a time, or when one of them is read: the call
    made at every pass stays a few stores."""

    __slots__ = ("_exact", "_histogram", "_min", "_sum", "count", "max", "max_key", "pending",
                 "scale")

    def __init__(self, scale: float = 1.0) -> None:
        self.scale = scale
        self.count = 0
        self.max = -math.inf
        self.max_key: Any = None
        self.pending: list[float] = []  # added, not folded yet
        self._sum = 0.0
        self._min = math.inf
        self._exact: list[float] | None = []
        self._histogram: dict[int, int] = {}

    def add(self, value: float, key: Any = None) -> None:
        # Called at every pass (twice: the pass's time, its stage's): no call it can spare.
        self.count += 1
        if value > self.max:
            self.max, self.max_key = value, key
        pending = self.pending
        pending.append(value)
        if len(pending) >= FOLDED_TOGETHER:
            self.fold()

    def fold(self) -> None:
        """Bring the values added since the last fold into the total, the smallest value and
        the percentiles' tallies (exact values up to ``EXACT_VALUES``, then the histogram)."""
        pending = self.pending
        if not pending:
            return
        self.pending = []
        self._sum += math.fsum(pending)
        self._min = min(self._min, *pending)
        exact = self._exact
        if exact is not None:
            exact.extend(pending)
            if len(exact) <= EXACT_VALUES:
                return
            self._exact = None
            pending = exact
        count_buckets(self._histogram, pending, self.scale)

    @property
    def total(self) -> float:
        self.fold()
        return self._sum

    @property
    def min(self) -> float:
        self.fold()
        return self._min

    @property
    def exact(self) -> list[float] | None:
        """The values, while there are at most ``EXACT_VALUES``; then None (the histogram)."""
        self.fold()
        return self._exact

    @property
    def histogram(self) -> dict[int, int]:
        self.fold()
        return self._histogram

    def percentile(self, fraction: float) -> float | None:
        """The value under which ``fraction`` of the values lie (nearest rank)."""
        self.fold()
        if not self.count:
            return None
        rank = max(1, math.ceil(fraction * self.count))
        if self._exact is not None:
            return sorted(self._exact)[rank - 1]
        return histogram_percentile(self._histogram, rank, self._min, self.max, self.scale)

    def later_passes(self) -> dict[str, Any] | None:
        """The ``later_passes`` block of attempt.json (durations in ms), None when empty."""
        self.fold()
        if not self.count:
            return None
        return {"count": self.count, "median_ms": _ms(self.percentile(0.5)),
                "min_ms": _ms(self.min), "p95_ms": _ms(self.percentile(0.95)),
                "max_ms": _ms(self.max), "slowest_pass": self.max_key}

    def figures(self) -> dict[str, Any] | None:
        """min, median, p95, max (integers: a size in bytes), None when empty."""
        self.fold()
        if not self.count:
            return None
        return {"count": self.count, "min": int(self.min),
                "p50": int(self.percentile(0.5) or 0), "p95": int(self.percentile(0.95) or 0),
                "max": int(self.max)}


class Passes:
    """What an attempt keeps of its passes (see the module's docstring)."""

    def __init__(self) -> None:
        self.requested = 0
        self.completed = 0
        self.first: dict[str, Any] | None = None  # pass 0: index, duration_ms, memory
        self.kept: list[dict[str, Any]] = []  # the first passes in full (FIRST_KEPT)
        self.durations = Sketch(1000.0)  # later passes, ms
        self.slowest: list[tuple[float, int, dict[str, Any]]] = []  # a min-heap
        self.slow_written = 0
        self.first_failed: dict[str, Any] | None = None
        self.memory = Sketch(1.0 / 1024)  # memory kept after a pass, bytes (buckets in KiB)
        self.readings: deque[tuple[int, int | None]] = deque(maxlen=MEMORY_KEPT)
        self.read_at = -math.inf  # when the memory was last read
        self.left_at: int | None = None  # the pass the program stopped asking after
        self.next_summary = FIRST_KEPT + 1
        self.summary_at = time.perf_counter()

    def memory_read(self, index: int, kept: int | None, now: float) -> None:
        self.read_at = now
        self.readings.append((index, kept))
        if kept is not None:
            self.memory.add(kept, index)

    def completed_pass(self, index: int, duration_ms: float, stage_ms: Mapping[Any, float],
                       read_memory: Callable[[], dict[str, Any]],
                       write: Callable[..., None], *,
                       read_kept: Callable[[], int | None]) -> None:
        """Pass ``index`` completed (``stage_ms``: each stage's time in it, by its tallies, whose
        ``name`` is written): counted and summarised; its memory read in full (``read_memory``)
        when it is one of the first passes or of the slowest, else the memory it keeps alone
        (``read_kept``, a cheaper read) when the last reading is ``MEMORY_EVERY_S`` old; written
        (``write``: the event log's) in full when it is one of the first or of the slowest."""
        # Called at every pass: no call it can spare.
        now = time.perf_counter()
        self.completed += 1
        slow = False
        if index:
            self.durations.add(duration_ms, index)
            slow = len(self.slowest) < SLOWEST_KEPT or duration_ms > self.slowest[0][0]
        memory = None
        if slow or index < FIRST_KEPT:
            memory = read_memory()
            self.memory_read(index, memory["allocated_bytes"] if memory["device"] is not None
                             else memory["rss_bytes"], now)
        elif now - self.read_at >= MEMORY_EVERY_S:
            self.memory_read(index, read_kept(), now)
        if memory is not None:
            record = {"index": index, "duration_ms": round(duration_ms, 3), "memory": memory}
            if index < FIRST_KEPT:
                self.kept.append(record)
                if index == 0:
                    self.first = record
            if slow:
                self.keep_slow(duration_ms, record)
            if index < FIRST_KEPT or self.slow_written < SLOW_WRITTEN:
                self.slow_written += index >= FIRST_KEPT
                write("pass_completed" if index < FIRST_KEPT else "pass_slow",
                      pass_index=index, duration_ms=record["duration_ms"], memory=memory,
                      stage_ms={stats.name: round(ms, 3) for stats, ms in stage_ms.items()})
        if self.completed >= self.next_summary or now - self.summary_at >= SUMMARY_EVERY_S:
            self.summary_at = now
            while self.next_summary <= self.completed:
                self.next_summary *= 2
            write("passes_summary", **self.summary())

    def floor(self) -> float:
        """The time (ms) a later pass must exceed to be among the slowest kept: their smallest
        once they are ``SLOWEST_KEPT``, else -inf (every pass is)."""
        slowest = self.slowest
        return slowest[0][0] if len(slowest) >= SLOWEST_KEPT else -math.inf

    def keep_slow(self, ms: float, record: dict[str, Any]) -> None:
        if len(self.slowest) < SLOWEST_KEPT:
            heapq.heappush(self.slowest, (ms, record["index"], record))
        else:
            heapq.heapreplace(self.slowest, (ms, record["index"], record))

    def failed(self, index: int, stage: str | None, error_type: str) -> None:
        if self.first_failed is None:
            self.first_failed = {"index": index, "stage": stage, "error_type": error_type}

    def memory_after_pass(self) -> tuple[list[int | None], list[int]]:
        """The newest readings of the memory kept after a pass: (bytes, pass indexes)."""
        return [kept for _, kept in self.readings], [index for index, _ in self.readings]

    def growth(self) -> list[int | None]:
        """The growth per pass between consecutive readings (their difference over the passes
        between them)."""
        readings = list(self.readings)
        return [None if a is None or b is None or j <= i else round((b - a) / (j - i))
                for (i, a), (j, b) in zip(readings, readings[1:])]

    def summary(self) -> dict[str, Any]:
        """The event ``passes_summary``: counts and the sketches' figures."""
        return {"requested": self.requested, "completed": self.completed,
                "first_pass_ms": None if self.first is None else self.first["duration_ms"],
                "later_passes": self.durations.later_passes(),
                "memory_after_pass": self.memory.figures(),
                "first_failed_pass": self.first_failed, "left_at_pass": self.left_at}

    def document(self) -> dict[str, Any]:
        """attempt.json's ``passes``: the summary, the newest memory readings and their growth,
        and the passes kept whole (the first ones, the slowest), in the order they ran."""
        memory, indexes = self.memory_after_pass()
        items = {record["index"]: record for record in self.kept}
        for _, _, record in self.slowest:
            items.setdefault(record["index"], record)
        return {**self.summary(), "memory_after_pass_bytes": memory,
                "memory_after_pass_indexes": indexes, "growth_per_pass_bytes": self.growth(),
                "items": [items[index] for index in sorted(items)]}


def _ms(value: float | None) -> float | None:
    return None if value is None else round(value, 3)

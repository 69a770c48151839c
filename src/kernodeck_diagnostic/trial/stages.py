"""The stages of a ``Trial``, recorded for what they cost: cheap enough to leave on in a real job.

A stage does, per call, only what a diagnosis needs at once, without a system call it can
spare: two clock reads, the stage's CPU memory peak (a write to ``/proc/self/clear_refs`` at its
start, ``getrusage`` at its end; a later call skips the write while the peak read last is at most
a level its name held: ``memory.CpuMemory.reset_peak``), the devices in use (``is_initialized``,
no device call on a CPU-only program) and a store into the *beacon*: a small file mapped in memory,
``stage.bin``, that holds the stage running now. A store into a shared mapping is in the
kernel's page cache at once, so a process ended by SIGKILL or the OOM killer leaves the stage it
was in, without a ``write`` per call.

The event log grows with the distinct stages, not with the calls. Of each stage name
``events.jsonl`` holds the first ``FIRST_KEPT`` occurrences in full (``stage_started`` and
``stage_completed``), the first ``FAILED_KEPT`` failures, each occurrence that becomes one of
its ``SLOWEST_KEPT`` slowest (``stage_slow``: that happens ever more rarely, and is written
``SLOW_WRITTEN`` times at most; the slowest are kept in memory all the same), and a
``stage_summary`` (count by status, total, min, p50, p95, max, the memory figures, the slowest
occurrences) each time its count doubles, at most ``SUMMARY_EVERY_S`` after the last one, and
at the attempt's end. Its durations are a ``passes.Sketch``: the percentiles are exact up to
``EXACT_VALUES`` calls, then read from a histogram, within 1 percent.

While a ``torch.profiler`` session is active each stage is also a named range of its trace
(``record_function``), and with ``nvtx=True`` an NVTX range on a CUDA program (Nsight
Systems): one C call per stage asks whether a profiler is on, nothing more when none is.
"""

from __future__ import annotations

import contextlib
import heapq
import math
import mmap
import os
import statistics
import struct
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from types import TracebackType
from typing import Any

from ..at_fork import copies_told
from ..safe_files import Folder
from ..untrusted_json import read_regular
from .log import EventLog
from .memory import Accelerator, CpuMemory, Devices
from .passes import Sketch

FIRST_KEPT = 3  # occurrences of each stage name written in full
FAILED_KEPT = 20  # failures of each stage name written in full (every one is counted)
SLOWEST_KEPT = 5  # slowest occurrences of each stage name kept
SLOW_WRITTEN = 20  # stage_slow events of each stage name, at most
SUMMARY_EVERY_S = 30.0  # a stage's summary is written at most this long after its last one
FIRST_SUMMARY = FIRST_KEPT + 1  # calls at a name's first summary: its first call not kept in full
# (then at each doubling): a name with no summary yet has every call of its kept in full
BEACON_FILE = "stage.bin"
BEACON_MAGIC = int.from_bytes(b"KDSTAGE1", "little", signed=True)
# The beacon: the magic, then (pass index + 1) << 32 | (stage index + 1) of the innermost stage
# open (once all have ended: of the last one started), then how many stages are open (0: none).
# Little-endian 64-bit words.
_BEACON = struct.Struct("<qqq")
PROFILER_FLAG = "_is_profiler_enabled"  # torch.autograd.profiler's global (``_profiler_on``)


class Beacon:
    """The stage running now (the innermost open one), or the last one when none is, and how
    many are open, in ``stage.bin`` (see the module's docstring): three aligned 64-bit words of
    a shared mapping, each written with one store (by ``Stage``, into ``words``, inline: it is
    the hot path). A kill between the two stores of a start leaves the new stage with the old
    depth: still a stage that was running."""

    def __init__(self, folder: Folder) -> None:
        folder.create_file(BEACON_FILE, _BEACON.pack(BEACON_MAGIC, 0, 0))
        fd = folder.open_existing(BEACON_FILE, os.O_RDWR)  # a mapping needs both
        try:
            self._map: mmap.mmap | None = mmap.mmap(fd, _BEACON.size)
        finally:
            os.close(fd)  # the mapping keeps the file
        self.words = memoryview(self._map).cast("q")

    def close(self) -> None:
        if self._map is not None:
            self.words.release()
            with contextlib.suppress(OSError, ValueError):
                self._map.close()
            self._map = None


def read_beacon(path: str) -> tuple[int, int | None, bool] | None:
    """(stage index, pass index, still open) of the beacon at ``path``: the innermost stage open,
    else the last one started; None when there is none, no stage started, or it is no beacon
    (a FIFO, a device, a link or a file of another size at its name included: the one reader,
    ``untrusted_json.read_regular``, never waits on one)."""
    try:
        data = read_regular(path, _BEACON.size, follow_links=False)
    except OSError:
        return None
    if len(data) != _BEACON.size:
        return None
    magic, started, depth = _BEACON.unpack(data)
    if magic != BEACON_MAGIC or started & 0xFFFFFFFF == 0:
        return None
    passes = started >> 32
    return (started & 0xFFFFFFFF) - 1, (passes - 1 if passes else None), depth > 0


class StageStats:
    """What is kept of one stage name across its calls (see the module's docstring)."""

    __slots__ = ("completed", "count", "device_peak_bytes", "encoded", "failures",
                 "first_pass_ms", "index", "last_memory", "last_read", "later_passes", "name",
                 "next_summary", "outside_ms", "peak_bytes", "slow_written", "slowest", "statuses",
                 "steady_peak", "summary_at", "times")

    def __init__(self, name: str, encoded: str, index: int) -> None:
        self.name, self.encoded, self.index = name, encoded, index
        self.count = 0  # calls started
        self.completed = 0
        self.statuses: dict[str, list[float]] = {}  # failed, interrupted: count, total, max ms
        self.failures = 0
        self.times = Sketch(1000.0)  # of the completed calls, ms (buckets in µs)
        self.slowest: list[tuple[float, int, dict[str, Any]]] = []  # a min-heap
        self.slow_written = 0
        self.peak_bytes: int | None = None  # the largest CPU peak of a call
        self.last_read: int | None = None  # the CPU peak read at the end of its last call
        # That reading while it was not above the one before (a level its calls held), else
        # None: what a later call may carry from before it (``CpuMemory.reset_peak``).
        self.steady_peak: int | None = None
        self.device_peak_bytes: int | None = None
        self.last_memory: dict[str, Any] | None = None
        self.outside_ms: float | None = None  # completed calls outside the passes
        self.first_pass_ms: float | None = None  # its time in pass 0
        self.later_passes = Sketch(1000.0)  # its time in each later pass (bounded)
        self.next_summary = FIRST_SUMMARY
        self.summary_at = time.perf_counter()

    def peak_read(self, peak: int | None) -> None:
        """A call's CPU peak, as read at its end: the largest kept, and whether it held the
        level of the call before (``steady_peak``)."""
        if peak is None:
            return
        last = self.last_read
        self.steady_peak = peak if last is not None and peak <= last else None
        self.last_read = peak
        if self.peak_bytes is None or peak > self.peak_bytes:
            self.peak_bytes = peak

    def add_duration(self, ms: float) -> None:
        self.completed += 1
        self.times.add(ms)

    def percentile(self, fraction: float) -> float | None:
        """The duration under which ``fraction`` of the completed calls ran (nearest rank)."""
        return self.times.percentile(fraction)

    def ended(self, status: str) -> tuple[int, float, float]:
        """(count, total ms, max ms) of the calls that ended with ``status``."""
        if status == "completed":
            times = self.times
            return self.completed, times.total, max(times.max, 0.0)
        count, total, slowest = self.statuses.get(status, (0, 0.0, 0.0))
        return int(count), total, slowest

    def summary(self) -> dict[str, Any]:
        """The ``stage_summary`` of this name (its event's fields, and attempt.json's item)."""
        times = self.times
        slowest = sorted(self.slowest, reverse=True)
        return {"stage": self.name, "stage_index": self.index, "count": self.count,
                "completed": self.completed, "failed": self.ended("failed")[0],
                "interrupted": self.ended("interrupted")[0],
                "total_ms": round(times.total, 3),
                "min_ms": _rounded(times.min if self.completed else None),
                "p50_ms": _rounded(times.percentile(0.5)),
                "p95_ms": _rounded(times.percentile(0.95)),
                "max_ms": _rounded(times.max if self.completed else None),
                "outside_passes_ms": _rounded(self.outside_ms),
                "rss_peak_bytes": self.peak_bytes, "device_peak_bytes": self.device_peak_bytes,
                "last_memory": self.last_memory,
                "slowest": [{"occurrence": occurrence, "pass_index": record["pass_index"],
                             "duration_ms": record["duration_ms"]}
                            for _, occurrence, record in slowest]}


class Recorder:
    """The stages of one attempt: their statistics, what of them goes to the event log and the
    beacon. ``Trial`` owns it; ``stage()`` returns a ``Stage`` bound to it."""

    def __init__(self, cpu: CpuMemory, devices: Devices, *, nvtx: bool = False) -> None:
        _LIVE.add(self)
        self.cpu = cpu
        self.devices = devices
        self.nvtx = nvtx
        self.log: EventLog | None = None
        self.beacon: Beacon | None = None
        self.words: memoryview | None = None  # the beacon's words, stored into by the stages
        self.stats: dict[str, StageStats] = {}  # by the name the program gave
        self.pass_index: int | None = None
        self.owner: int | None = None  # the thread that began the attempt (Trial's alone)
        self.pass_ms: dict[StageStats, float] = {}  # the current pass's completed calls
        self.open: list[Stage] = []
        self.last_started: str | None = None
        self.last_completed: str | None = None
        self.kept: list[dict[str, Any]] = []  # records written in full (first, failed)
        self.sequence = 0  # calls started, all names: orders the records
        # Called at a stage's start (the allocator's history); at a failure (the first error).
        self.before: Callable[[Any], None] | None = None
        self.failed: Callable[[BaseException, str], dict[str, Any]] | None = None
        self._torch: Any = None
        # The device backends' flags of the torch watched (see ``quiet``); None: ask them.
        self._idle: list[dict[str, Any]] | None = []
        # Whether a profiler is on: ``PROFILER_FLAG`` read here (``_profiler_on``); None: never.
        self._profiler: Mapping[str, bool] | None = None
        self._range: Any = None
        self._nvtx: Any = None

    def attach(self, log: EventLog, folder: Folder) -> None:
        """Start writing: the events to ``log``, the running stage to the beacon in ``folder``
        (where no mapping can be made, each start is written to the log instead)."""
        self.log = log
        try:
            self.beacon = Beacon(folder)
        except (OSError, ValueError):
            self.beacon = None
        else:
            self.words = self.beacon.words

    def close(self, folder: Folder | None) -> None:
        """Drop the beacon: attempt.json, or the end's events, now say it all."""
        if self.beacon is not None:
            self.words = None
            self.beacon.close()
            self.beacon = None
            if folder is not None:
                with contextlib.suppress(OSError):
                    folder.unlink(BEACON_FILE)

    def summaries(self) -> list[dict[str, Any]]:
        return [stats.summary() for stats in self.stats.values() if stats.count]

    def named(self, name: str, shown: str, encoded: str) -> StageStats:
        stats = self.stats.get(name)
        if stats is None:
            stats = self.stats[name] = StageStats(shown, encoded, len(self.stats))
        return stats

    def watch(self, torch: Any) -> None:
        """Resolve once per torch module what the stages ask it: is a profiler on, NVTX."""
        self._torch = torch
        self._profiler = self._range = self._nvtx = None
        self._idle = [] if torch is None else self.devices.flags(torch)
        if torch is None:
            return
        with contextlib.suppress(Exception):  # a torch without them: no ranges
            profiler = torch.autograd.profiler
            self._range = profiler.record_function  # first: asked only once a profiler is on
            self._profiler = _profiler_on(profiler, torch._C._autograd._profiler_enabled)
        if self.nvtx:
            with contextlib.suppress(Exception):
                self._nvtx = torch.cuda.nvtx

    def pass_ended(self, index: int) -> dict[StageStats, float]:
        """The completed time of each stage in pass ``index`` (by its tallies: ``name``); the
        pass's tally starts over."""
        pass_ms = self.pass_ms
        if not pass_ms:
            return pass_ms
        self.pass_ms = {}
        for stats, ms in pass_ms.items():
            if index == 0:
                stats.first_pass_ms = ms
            else:
                stats.later_passes.add(ms, index)
        return pass_ms

    def forked(self) -> None:
        """In a child forked while the attempt runs (a DataLoader's worker): its stages are its
        own, written nowhere, so that they never land in the parent's beacon or log, and its
        memory is read from its own files."""
        self.words = None
        self.beacon = None
        self.log = None
        self.owner = threading.get_ident()  # this process's thread that forked
        self.cpu.reopen()

    def pass_abandoned(self) -> None:
        """A pass that never completed (a break, an error): its stages' time is no pass's."""
        self.pass_ms = {}

    def records(self) -> list[dict[str, Any]]:
        """The records attempt.json keeps: the first and failed ones of each name, and its
        slowest, in the order they ran."""
        found = {id(record): record for record in self.kept}
        for stats in self.stats.values():
            for _, _, record in stats.slowest:
                found.setdefault(id(record), record)
        return sorted(found.values(), key=lambda record: record["occurrence_sequence"])

    def timings(self) -> list[dict[str, Any]]:
        """``session.timings_of``'s result, from the tallies: every call counted, none kept."""
        return [{"stage": stats.name, "outside_passes_ms": _rounded(stats.outside_ms),
                 "first_pass_ms": _rounded(stats.first_pass_ms),
                 "later_passes": stats.later_passes.later_passes()}
                for stats in self.stats.values() if stats.completed]

    def begun_in_stage(self) -> list[Accelerator]:
        """The devices a stage began using (torch perhaps imported in it), at its end."""
        torch = sys.modules.get("torch")
        if torch is None:
            return []
        if torch is not self._torch:
            self.watch(torch)
        return self.devices.in_use(torch)

    def quiet(self, at_end: bool = False) -> bool:
        """Whether a stage can start or end now without its device and profiler checks
        (``pass_loop.Step``): torch the one watched already (or none), every device backend's
        flag false (``Devices.flags``), no profiler on (asked at a start only: ``at_end``)."""
        flags = self._idle
        if flags is None or sys.modules.get("torch") is not self._torch:
            return False
        for backend in flags:
            if backend["_initialized"]:
                return False
        if at_end:
            return True
        profiler = self._profiler
        return profiler is None or not profiler[PROFILER_FLAG]

    def peak(self) -> int | None:
        """The largest stage peak: the device's where a stage ran on one, else the CPU's."""
        device = [s.device_peak_bytes for s in self.stats.values()
                  if s.device_peak_bytes is not None]
        cpu = [s.peak_bytes for s in self.stats.values() if s.peak_bytes is not None]
        return max(device or cpu) if device or cpu else None


def _profiler_on(module: Any, enabled: Callable[[], bool]) -> Mapping[str, bool]:
    """Where to read whether a profiler is on (``PROFILER_FLAG``), at each stage's two ends: the
    globals of ``module`` where they hold torch's own Python flag of it
    (``torch.autograd.profiler._is_profiler_enabled``: set and cleared by every profiler torch
    starts, the check its compiler makes before a range), read with no call, a quarter of a call
    into torch's C++ bindings in a training batch's cold caches; else its C++ state's
    ``enabled``, called at each read (``_AskedProfiler``)."""
    state: dict[str, Any] = vars(module)
    if isinstance(state.get(PROFILER_FLAG), bool):
        return state
    return _AskedProfiler(enabled)


class _AskedProfiler(Mapping[str, bool]):
    """A torch without the Python flag: ``PROFILER_FLAG`` read by asking its C++ state."""

    def __init__(self, enabled: Callable[[], bool]) -> None:
        self.enabled = enabled

    def __getitem__(self, key: str) -> bool:
        if key != PROFILER_FLAG:
            raise KeyError(key)
        return bool(self.enabled())

    def __iter__(self) -> Iterator[str]:
        return iter((PROFILER_FLAG,))

    def __len__(self) -> int:
        return 1


# Every recorder alive: in a child forked meanwhile, each is its parent's (``Recorder.forked``).
_LIVE: weakref.WeakSet[Recorder] = copies_told("forked")


class Stage:
    """The context manager ``Trial.stage`` returns (a class with slots: cheaper than a
    generator). The common case (completed, no device, nothing kept) is the short path. Once
    exited, it may be entered again (``pass_loop.Step`` reuses one): a call of its name again.

    A later call of a name, no stage around it, on a quiet program (``Recorder.quiet``: no
    device in use, no profiler on, torch the one watched) and nothing to call at its start
    (``Recorder.before``), starts *quietly*: the tallies, the beacon's two stores and the peak's
    reset, without the device, profiler and log checks that the general path makes one by one
    (each a miss in the cold caches a training batch leaves).
    ``test_a_quiet_stage_keeps_what_the_general_path_keeps`` holds the two to one record."""

    __slots__ = ("devices", "floor", "name", "occurrence", "profiled", "recorder", "start", "stats",
                 "sync", "word")
    quiet_path = True  # False: every start by the general path (the test above compares them)

    def __init__(self, recorder: Recorder, stats: StageStats, sync: bool) -> None:
        self.recorder = recorder
        self.stats = stats
        self.name = stats.name
        self.sync = sync
        self.start = 0.0
        self.floor = 0  # the peak of the stages nested in this one (each reset it)
        self.occurrence = 0
        self.word = 0  # this stage in the beacon
        self.devices: list[Accelerator] = []
        self.profiled: Any = None

    def __enter__(self) -> Stage:
        recorder = self.recorder
        stats = self.stats
        words = recorder.words
        opened = recorder.open
        quiet = (words is not None and stats.count >= FIRST_KEPT and not opened
                 and recorder.before is None and self.quiet_path and recorder.quiet())
        if quiet:
            self.devices = []
            self.floor = 0
            # Not reset while the peak read last is at most its name's steady level (see memory).
            recorder.cpu.reset_peak(stats.steady_peak)
        else:
            self._prepare()
            recorder.cpu.reset_peak()
        opened.append(self)
        stats.count += 1
        recorder.sequence += 1
        self.occurrence = stats.count
        recorder.last_started = stats.name
        if words is not None:  # the beacon's two stores (see Beacon)
            pass_index = recorder.pass_index
            words[1] = self.word = (0 if pass_index is None else pass_index + 1) << 32 | (
                stats.index + 1)
            words[2] = len(opened)
        if not quiet:
            self._announce()
        self.start = time.perf_counter()
        return self

    def _prepare(self) -> None:
        """Before a start by the general path: the devices in use (synchronised with ``sync``,
        their peaks reset), the allocator's history, the enclosing stage's peak so far."""
        recorder = self.recorder
        torch = sys.modules.get("torch")
        if torch is not recorder._torch:
            recorder.watch(torch)
        if recorder.before is not None:
            recorder.before(torch)
        self.devices = devices = recorder.devices.in_use(torch) if torch is not None else []
        for device in devices:
            if self.sync:
                device.synchronize()
            device.reset_peak()
        opened = recorder.open
        self.floor = 0
        if opened:  # the enclosing stage's peak so far, before this one resets it
            outer = opened[-1]
            outer.floor = max(outer.floor, recorder.cpu.peak() or 0)

    def _announce(self) -> None:
        """After a start by the general path: the log (a name's first calls, or no beacon), the
        profiler's range, NVTX's on a device."""
        recorder, stats = self.recorder, self.stats
        if (stats.count <= FIRST_KEPT or recorder.words is None) and recorder.log is not None:
            recorder.log.stage_started(stats.encoded, recorder.pass_index, stats.index)
        profiler = recorder._profiler
        if profiler is not None and profiler[PROFILER_FLAG]:
            self.profiled = recorder._range(stats.name)
            self.profiled.__enter__()
        if recorder._nvtx is not None and self.devices:
            recorder._nvtx.range_push(stats.name)

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        end = time.perf_counter()
        recorder = self.recorder
        devices = self.devices or recorder.begun_in_stage()
        raised: BaseException | None = None
        if devices or self.profiled is not None:
            raised = self._leave_ranges(devices, exc)
            exc = raised or exc
            end = time.perf_counter()
        opened = recorder.open
        if opened and opened[-1] is self:
            opened.pop()
        stats = self.stats
        short = exc is None and not devices and self.occurrence > FIRST_KEPT
        # A later call, no stage around it: its peak counts only above its name's largest, so a
        # reading not above that one is not made exact (no read of /proc/self/status).
        peak = max(recorder.cpu.peak(stats.peak_bytes if short and not opened else None) or 0,
                   self.floor) or None
        if opened:
            opened[-1].floor = max(opened[-1].floor, peak or 0)
        words = recorder.words
        if words is not None:  # the enclosing stage runs again, if any
            words[1] = opened[-1].word if opened else self.word
            words[2] = len(opened)
        ms = (end - self.start) * 1000
        if short:
            # The short path: a completed CPU call of a name already written in full.
            stats.add_duration(ms)
            stats.peak_read(peak)
            if recorder.pass_index is None:
                stats.outside_ms = (stats.outside_ms or 0.0) + ms
            else:
                recorder.pass_ms[stats] = recorder.pass_ms.get(stats, 0.0) + ms
            recorder.last_completed = stats.name
            if len(stats.slowest) < SLOWEST_KEPT or ms > stats.slowest[0][0]:
                # Rarer and rarer (one of the slowest so far): its memory is read in full.
                # Its peak read exact with its resident size (``peak`` may be a bound).
                self._slow(ms, self._record("completed", ms, None,
                                            self._memory([], self.floor or None, True)))
            if stats.count >= stats.next_summary or end - stats.summary_at >= SUMMARY_EVERY_S:
                self._summarize(end)
            return
        self._ended(exc, ms, peak, devices, end)
        if raised is not None:
            raise raised

    def _leave_ranges(self, devices: list[Accelerator],
                      exc: BaseException | None) -> BaseException | None:
        """Synchronise the devices (``sync``), close the NVTX and profiler ranges; the error an
        asynchronous fault raised in the synchronisation, if any."""
        raised: BaseException | None = None
        if self.sync and exc is None:
            try:
                for device in devices:
                    device.synchronize()
            except Exception as error:  # an asynchronous fault surfaces here: the stage failed
                raised = error
        nvtx = self.recorder._nvtx
        if nvtx is not None and self.devices:
            with contextlib.suppress(Exception):
                nvtx.range_pop()
        if self.profiled is not None:
            self.profiled.__exit__(None, None, None)
            self.profiled = None
        return raised

    def _ended(self, exc: BaseException | None, ms: float, peak: int | None,
               devices: list[Accelerator], end: float) -> None:
        """The long path: a failure, a call on a device, one of the first calls of a name."""
        recorder, stats = self.recorder, self.stats
        status = "completed" if exc is None else (
            "failed" if isinstance(exc, Exception) else "interrupted")
        full = self.occurrence <= FIRST_KEPT
        memory = self._memory(devices, peak, full)
        stats.last_memory = memory
        device_peak = memory["peak_allocated_bytes"]
        if device_peak is not None and (stats.device_peak_bytes is None
                                        or device_peak > stats.device_peak_bytes):
            stats.device_peak_bytes = device_peak
        stats.peak_read(memory["rss_peak_bytes"])
        record = self._record(status, ms, (self.sync if devices else None), memory)
        event = {"stage": stats.name, **{key: value for key, value in record.items()
                                         if key not in ("name", "occurrence_sequence")}}
        if status == "completed":
            stats.add_duration(ms)
            if recorder.pass_index is None:
                stats.outside_ms = (stats.outside_ms or 0.0) + ms
            else:
                recorder.pass_ms[stats] = recorder.pass_ms.get(stats, 0.0) + ms
            recorder.last_completed = stats.name
            self._slow(ms, record, write=not full)
        else:
            tally = stats.statuses.setdefault(status, [0, 0.0, 0.0])
            tally[0] += 1
            tally[1] += ms
            tally[2] = max(tally[2], ms)
            stats.failures += 1
            full = full or stats.failures <= FAILED_KEPT
            if recorder.failed is not None and exc is not None:
                event.update(recorder.failed(exc, stats.name))
        if full:
            recorder.kept.append(record)
            if recorder.log is not None:
                recorder.log.write_fields("stage_" + status, event)
        if stats.count >= stats.next_summary or end - stats.summary_at >= SUMMARY_EVERY_S:
            self._summarize(end)

    def _record(self, status: str, ms: float, synchronized: bool | None,
                memory: dict[str, Any]) -> dict[str, Any]:
        return {"name": self.stats.name, "pass_index": self.recorder.pass_index,
                "status": status, "duration_ms": round(ms, 3), "synchronized": synchronized,
                "memory": memory, "occurrence": self.occurrence,
                "occurrence_sequence": self.recorder.sequence}

    def _memory(self, devices: list[Accelerator], peak: int | None,
                full: bool) -> dict[str, Any]:
        rss = None
        if full:  # the resident size, and the peak read with it (never below it)
            rss, peak_now = self.recorder.cpu.read()
            if peak_now is not None:
                peak = max(peak or 0, peak_now)
        return memory_reading(rss, peak, devices)

    def _slow(self, ms: float, record: dict[str, Any], *, write: bool = True) -> None:
        """Keep ``record`` among the slowest of its name; say so in the log when it is not one of
        the first calls (those are there in full)."""
        slowest = self.stats.slowest
        if len(slowest) < SLOWEST_KEPT:
            heapq.heappush(slowest, (ms, self.occurrence, record))
        elif ms > slowest[0][0]:
            heapq.heapreplace(slowest, (ms, self.occurrence, record))
        else:
            return
        log = self.recorder.log
        if write and log is not None and self.occurrence > FIRST_KEPT \
                and self.stats.slow_written < SLOW_WRITTEN:
            self.stats.slow_written += 1
            log.write_fields("stage_slow", {"stage": self.stats.name, **{
                key: value for key, value in record.items()
                if key not in ("name", "occurrence_sequence")}})

    def _summarize(self, now: float) -> None:
        stats = self.stats
        stats.summary_at = now
        while stats.next_summary <= stats.count:
            stats.next_summary *= 2
        if self.recorder.log is not None:
            self.recorder.log.write_fields("stage_summary", stats.summary())


def timings_of(stages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per stage: its duration outside the passes, or pass 0's apart from the median and
    spread of the later passes. Never an average that hides the first pass."""
    by_name: dict[str, dict[int | None, float]] = {}
    for record in stages:
        if record.get("status") == "completed" and isinstance(record.get("duration_ms"),
                                                               (int, float)):
            durations = by_name.setdefault(str(record.get("name")), {})
            key = record.get("pass_index")
            key = key if isinstance(key, int) else None
            durations[key] = durations.get(key, 0.0) + record["duration_ms"]
    timings = []
    for name, durations in by_name.items():
        in_passes = {key: ms for key, ms in durations.items() if key is not None}
        timings.append({"stage": name, "outside_passes_ms": durations.get(None),
                        **first_and_later(in_passes)})
    return timings


def first_and_later(durations: Mapping[int, float]) -> dict[str, Any]:
    """Pass 0's duration apart; the later passes' count, median and spread (min, p95, max),
    and the slowest of them (its index): one slow batch among many must show."""
    later = sorted((ms, index) for index, ms in durations.items() if index != 0)
    summary = None
    if later:
        times = [ms for ms, _ in later]
        summary = {"count": len(times), "median_ms": round(statistics.median(times), 3),
                   "min_ms": round(times[0], 3),
                   "p95_ms": round(times[min(len(times) - 1, math.ceil(0.95 * len(times)) - 1)],
                                   3),
                   "max_ms": round(times[-1], 3), "slowest_pass": later[-1][1]}
    return {"first_pass_ms": durations.get(0), "later_passes": summary}


def last_started(events: list[dict[str, Any]],
                 events_path: str) -> tuple[Any, Any, bool | None]:
    """(name, pass index, still open) of the stage an attempt was in (the innermost one open)
    or, when none was open, of its last; from the beacon beside its event log, else from the
    log's last ``stage_started`` (open: unknown, None)."""
    beacon = read_beacon(os.path.join(os.path.dirname(events_path), BEACON_FILE))
    if beacon is not None:
        index, pass_index, still_open = beacon
        names = {event.get("stage_index"): event.get("stage") for event in events
                 if event.get("event") == "stage_started" and "stage_index" in event}
        if index in names:
            return names[index], pass_index, still_open
    started = [event for event in events if event.get("event") == "stage_started"]
    if not started:
        return None, None, None
    return started[-1].get("stage"), started[-1].get("pass_index"), None


def memory_reading(rss: int | None, peak: int | None,
                   devices: list[Accelerator]) -> dict[str, Any]:
    """A stage's or a pass's memory: the process's resident size and peak, and the first device
    in use's allocator figures (its name alone when the device cannot answer)."""
    memory = _cpu_memory(rss, peak)
    if devices:
        try:
            memory.update(devices[0].read())
        except Exception:  # a device in a failed state: its memory is unknown
            memory["device"] = devices[0].name
    return memory


def _cpu_memory(rss: int | None, peak: int | None) -> dict[str, Any]:
    return {"rss_bytes": rss, "rss_peak_bytes": peak, "device": None, "allocated_bytes": None,
            "reserved_bytes": None, "peak_allocated_bytes": None}


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 3)

"""The passes of a ``Trial`` as they run: the one running now, the one the program left, the
last one an error came in. ``Passes`` keeps what is recorded of them.

A pass begins when the program asks for it (``Trial.passes``' loop, or an adapter's training
step: ``Step``) and completes when the program asks for the next one, or the step ends. A pass the
program leaves (a ``break``, ``islice``, an error, the attempt's end inside it) is *left*, and
decided when the program goes on (``resolve_left``): completed when a stage of it ran (the
evidence that its work did) and no error was raised in it, else abandoned, its stages' time no
pass's.

``Step`` is a pass and its one stage, begun and ended as one: what an adapter makes of each
training batch, at a fraction of ``passes(1)`` and ``stage(name)``'s cost (no generator, no
stage object made per batch; measured in docs/performance.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from threading import get_ident
from time import perf_counter
from types import TracebackType
from typing import Any

from .passes import FIRST_KEPT, MEMORY_EVERY_S, SUMMARY_EVERY_S, Passes
from .stages import FIRST_KEPT as CALLS_FIRST_KEPT
from .stages import SLOWEST_KEPT as CALLS_SLOWEST_KEPT
from .stages import SUMMARY_EVERY_S as CALLS_SUMMARY_EVERY_S
from .stages import Recorder, Stage


class PassLoop:
    """The running state of an attempt's passes (see the module's docstring). ``write`` is the
    event log's; ``read_memory`` reads the memory of a pass kept in full, ``read_kept`` the
    memory a pass keeps alone (see ``Passes.completed_pass``).

    Most passes of ``Trial.passes``' loop (``run``) complete *quietly*: a pass past the first
    ones, not among the slowest, no summary due. Its time and its stages' are tallied in the
    loop itself, with what ``completed`` would keep of it and without its calls (each a miss in
    the cold caches a batch's own work leaves: measured in docs/performance.md). Every other
    pass completes by ``completed`` (``test_a_quiet_pass_keeps_what_the_general_path_keeps``
    holds the two to one record)."""

    quiet_path = True  # False: every pass of ``run`` completes by the general path

    def __init__(self, recorder: Recorder, write: Callable[..., None],
                 read_memory: Callable[[], dict[str, Any]],
                 read_kept: Callable[[], int | None]) -> None:
        self.recorder = recorder
        self.record = Passes()
        self._write = write
        self._read_memory = read_memory
        self.read_kept = read_kept
        self.started = False  # a pass was asked for: an out-of-memory error's phase
        self.next_index = 0
        self.start = 0.0  # when the current pass began (its fetch included)
        self.stages_at_start = 0  # stage calls started when the current pass began
        self.left: tuple[int, float, bool] | None = None  # index, ms, whether a stage of it ran
        self.left_pass: int | None = None  # the pass the program stopped asking after
        self.failed_pass: int | None = None  # the last pass an error was raised in

    def begin(self, start: float) -> int:
        """The next pass begins (at ``start``, a ``perf_counter``): its index."""
        index = self.next_index
        self.next_index = index + 1
        recorder = self.recorder
        recorder.pass_index = index
        self.stages_at_start = recorder.sequence
        self.start = start
        if index < FIRST_KEPT:
            self._write("pass_started", pass_index=index)
        return index

    def run(self, items: Iterator[Any], count: int | None, *, indexes: bool,
            fetch_failed: Callable[[BaseException, int], None],
            ended: Callable[[], bool]) -> Iterator[Any]:
        """``Trial.passes``' loop over ``items`` (``count`` of them, None when unknown): yields
        each pass's index (``indexes``) or item. Fetching an item is part of its pass: an error
        there goes to ``fetch_failed`` with the pass's index. Closed before the attempt
        ``ended``, the pass running is left (``leave``)."""
        self.started = True
        record = self.record
        record.requested += count or 0
        recorder = self.recorder
        clock = perf_counter
        # At or below these, a pass completes quietly (see the class's docstring): the slowest
        # kept's smallest, the completed count and the time a summary is due. Read after each
        # pass completed by the general path; each only grows, so an older value is never past
        # the true one, and a pass beyond it completes by the general path, which reads them.
        floor = due_count = due_at = -math.inf
        while True:
            start = clock()
            try:
                item = next(items)
            except StopIteration:
                return
            except BaseException as error:  # fetching this pass's item: its data loading
                fetch_failed(error, self.next_index)
                raise
            if count is None:
                record.requested += 1  # an iterable of unknown length: as drawn
            index = self.begin(start)
            try:
                yield index if indexes else item
            except GeneratorExit:
                if ended():  # closed after the attempt ended: it counted it then
                    raise
                # The program stopped asking (a break, islice, zip, or an error raised in the
                # pass, not seen yet: the loop is closed before the error reaches the Trial):
                # decided when the program goes on (``resolve_left``).
                self.leave(index, start)
                raise
            end = clock()
            recorder.pass_index = None
            duration_ms = (end - start) * 1000
            # The first passes, written in full, are among the slowest kept (more of those than of
            # these): below ``floor`` only once they are.
            if (duration_ms <= floor and record.completed < due_count and end < due_at
                    and self.quiet_path):
                record.completed += 1
                record.durations.add(duration_ms, index)
                stage_ms = recorder.pass_ms  # each stage's time in it (``Recorder.pass_ended``)
                if stage_ms:
                    for stats, ms in stage_ms.items():
                        stats.later_passes.add(ms, index)
                    stage_ms.clear()
                if end - record.read_at >= MEMORY_EVERY_S:  # the memory it keeps, time come
                    record.memory_read(index, self.read_kept(), end)
                continue
            self.completed(index, duration_ms)
            floor = record.floor()
            due_count = record.next_summary - 1
            due_at = record.summary_at + SUMMARY_EVERY_S

    def completed(self, index: int, duration_ms: float) -> None:
        """Pass ``index`` completed: ``Passes.completed_pass`` keeps what it keeps of it."""
        self.record.completed_pass(index, duration_ms, self.recorder.pass_ended(index),
                                   self._read_memory, self._write,
                                   read_kept=self.read_kept)

    def leave(self, index: int, start: float) -> None:
        """The program left pass ``index`` (begun at ``start``) before it completed: decided when
        the program goes on (``resolve_left``)."""
        recorder = self.recorder
        recorder.pass_index = None
        self.left = (index, (perf_counter() - start) * 1000,
                     recorder.sequence > self.stages_at_start)
        self.record.left_at = self.left_pass = index

    def resolve_left(self, failed: bool, terminated: bool) -> None:
        """The pass the program left: completed when the program went on without an error the
        Trial saw (in a stage of it, caught or not; one that left the attempt's block; a SIGTERM)
        and a stage of it ran; else abandoned. One the program caught outside every stage is
        not seen: Python closes the loop alike after a ``break`` (docs/trial.md)."""
        left, self.left = self.left, None
        if left is None:
            return
        index, duration_ms, ran = left
        if ran and not failed and self.failed_pass != index and not terminated:
            self.completed(index, duration_ms)
        else:
            self.recorder.pass_abandoned()

    def failed(self, index: int, stage: str | None, error_type: str) -> None:
        """An error was raised in pass ``index`` (in ``stage``)."""
        self.failed_pass = index
        self.record.failed(index, stage, error_type)


class Step:
    """A pass and its one stage (``Trial._step``), begun (``begin``) and ended (``__exit__``, as
    a stage ends: with the error, if any) as one, again and again: the stage object is reused.
    Ended with an error, or by a failure of its stage's end, the pass is left (see
    ``PassLoop``). ``asked`` runs the checks of a pass asked for (the attempt open, the thread
    that began it, the pass left before decided).

    Most steps of a long run are *quiet*: a pass past the first ones, its stage a call not
    written in full, on a CPU program, no stage around it or inside it, no profiler, nothing to
    keep or write (no slowest call or pass, no summary; a memory reading due is the resident
    size alone). Such a step is begun and ended here in a few stores and the memory system
    calls (the peak's read, and its reset when needed: ``CpuMemory.reset_peak``): the same
    tallies as ``PassLoop.begin``, ``Stage.__enter__``, ``Stage.__exit__`` and
    ``PassLoop.completed`` keep, without their calls (a training batch of a millisecond pays for
    each). Every other step takes those
    (``test_a_quiet_step_keeps_what_the_general_path_keeps`` holds the two to one record).

    What a quiet step touches is its cost: a batch's own work has left the caches cold, and
    each object read is a miss. So the time a call or a pass must exceed to be among the slowest
    kept is read once, after each step of the general path (``_floors``), not from the two heaps
    at each step: a heap's smallest only grows, so a floor read earlier is at most the true one,
    and a step above it takes the general path, which reads the heap itself."""

    __slots__ = ("asked", "call_floor", "index", "loop", "pass_floor", "stage")
    quiet_path = True  # False: every step by the general path (the test above compares them)

    def __init__(self, loop: PassLoop, stage: Stage, asked: Callable[[], None]) -> None:
        self.loop = loop
        self.stage = stage
        self.asked = asked
        self.index: int | None = None  # the pass running, None between steps
        # Above these (ms), a call or a pass may be among the slowest kept (``_floors``).
        self.call_floor = self.pass_floor = -math.inf

    def begin(self) -> int:
        """The step's pass begins, then its stage; the pass's index."""
        if self.index is not None:
            raise RuntimeError("a step is begun once before it ends")
        loop = self.loop
        recorder = loop.recorder
        stage = self.stage
        stats = stage.stats
        index = loop.next_index
        words = recorder.words  # None before the attempt's start and after its end
        if (words is not None and index >= FIRST_KEPT and stats.count >= CALLS_FIRST_KEPT
                and self.quiet_path and loop.left is None and not recorder.open
                and recorder.before is None and recorder.owner == get_ident()
                and recorder.quiet()):
            loop.next_index = index + 1
            loop.started = True
            loop.record.requested += 1
            recorder.pass_index = index
            loop.stages_at_start = recorder.sequence
            stage.devices = []
            stage.floor = 0
            recorder.cpu.reset_peak(stats.steady_peak)  # see Stage.__enter__'s quiet start
            recorder.open.append(stage)
            stats.count += 1
            recorder.sequence += 1
            stage.occurrence = stats.count
            recorder.last_started = stats.name
            words[1] = stage.word = (index + 1) << 32 | (stats.index + 1)
            words[2] = 1
            loop.start = stage.start = perf_counter()
            self.index = index
            return index
        self.asked()
        loop.started = True
        loop.record.requested += 1
        index = self.index = loop.begin(perf_counter())
        try:
            stage.__enter__()
        except BaseException:
            self.index = None
            loop.leave(index, loop.start)
            raise
        return index

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        index, self.index = self.index, None
        if index is None:
            return
        loop = self.loop
        stage = self.stage
        recorder = loop.recorder
        opened = recorder.open
        words = recorder.words
        # A quiet step's end (see the class's docstring), else the general path. The first
        # calls and passes, written in full, are not asked for: each is among the slowest kept
        # (``SLOWEST_KEPT``, more than ``FIRST_KEPT``), a reason for the general path below. A
        # profiler started in the step changes nothing at its end (no range was opened).
        if (exc is None and words is not None and self.quiet_path and len(opened) == 1
                and opened[0] is stage and not stage.devices and stage.profiled is None
                and recorder.sequence == loop.stages_at_start + 1
                and recorder.quiet(at_end=True)):
            end = perf_counter()
            stats = stage.stats
            record = loop.record
            ms = (end - stage.start) * 1000
            duration_ms = (end - loop.start) * 1000
            # Nothing to keep or write: no slowest call or pass, no summary.
            if not (ms > self.call_floor or duration_ms > self.pass_floor
                    or stats.count >= stats.next_summary
                    or end - stats.summary_at >= CALLS_SUMMARY_EVERY_S
                    or record.completed + 1 >= record.next_summary
                    or end - record.summary_at >= SUMMARY_EVERY_S):
                opened.pop()
                peak = recorder.cpu.peak(stats.peak_bytes)
                words[2] = 0  # words[1] is this stage's still: none began since
                stats.add_duration(ms)
                stats.peak_read(peak)
                recorder.last_completed = stats.name
                stats.later_passes.add(ms, index)
                recorder.pass_index = None
                record.completed += 1
                record.durations.add(duration_ms, index)
                if end - record.read_at >= MEMORY_EVERY_S:  # the memory it keeps, its time come
                    record.memory_read(index, loop.read_kept(), end)
                return
        try:
            stage.__exit__(exc_type, exc, tb)
        except BaseException:  # its end failed (an asynchronous fault in a synchronisation)
            loop.leave(index, loop.start)
            raise
        if exc is None:
            recorder.pass_index = None
            loop.completed(index, (perf_counter() - loop.start) * 1000)
        else:
            loop.leave(index, loop.start)
        self._floors()

    def _floors(self) -> None:
        """The times above which a call of the step's stage, or a pass, may be among the
        slowest kept: their heaps' smallest once full (see the class's docstring)."""
        calls = self.stage.stats.slowest
        self.call_floor = calls[0][0] if len(calls) >= CALLS_SLOWEST_KEPT else -math.inf
        self.pass_floor = self.loop.record.floor()

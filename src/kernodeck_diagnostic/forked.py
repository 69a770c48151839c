"""Independent work on many items, in parts: the first part in this process, each of the others
in a forked child that sends its result back. ``summarize`` reads 20,000 reports this way on
every core it may use (docs/performance.md).

    >>> from kernodeck_diagnostic.forked import in_parts
    >>> in_parts(sum, list(range(10)), parts=3)
    [6, 22, 17]

The result is the same as ``[work(part) for part in parts]``, whatever happens: a part whose
child cannot be started, fails, dies or sends back what cannot be read is done here after the
first. Only on Linux, where a fork is cheap and safe (macOS's system libraries may not survive
one), and only in a process that runs no other thread (a fork copies only the calling thread: a
lock another thread held would stay locked in the child). Elsewhere every part is done here, one
after the other.

A child never writes to the terminal (it ends with ``os._exit``: nothing of the parent's buffers
is flushed twice), dies at once and in silence on SIGINT, SIGTERM or SIGHUP unless the parent
ignores it (started under ``nohup``: the parent says what happened), and is killed and reaped if
the parent stops early, by a signal or an error.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

# Signals that stop the command in the parent (commands/runner.py): a child dies of them.
_STOPPING = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                  if hasattr(signal, name))


def in_parts(work: Callable[[Sequence[Item]], Result], items: Sequence[Item],
             parts: int) -> list[Result]:
    """``work`` of each of ``parts`` consecutive slices of ``items`` (fewer when there are fewer
    items), in order: the first here, the others each in a child at the same time (see the
    module's docstring). Only the results travel between processes, pickled: a child has the
    parent's memory, ``work`` and the items included."""
    size = -(-len(items) // max(parts, 1)) if items else 0
    slices = [items[start:start + size] for start in range(0, len(items), size)] if size else []
    if len(slices) < 2 or not can_fork():
        return [work(part) for part in slices]
    children: list[_Child | None] = []
    try:
        with _stopping_signals_held() as mask:
            for part in slices[1:]:
                children.append(_Child.start(work, part, mask))
        results = [work(slices[0])]
        for child, part in zip(children, slices[1:]):
            sent = child.result() if child is not None else None
            results.append(work(part) if sent is None else sent[0])
        return results
    finally:
        for child in children:
            if child is not None:
                child.stop()


@contextlib.contextmanager
def _stopping_signals_held() -> Iterator[set[int]]:
    """SIGINT, SIGTERM and SIGHUP held back while children are forked; the signal mask from
    before, which each child restores once it has its own handlers. Without this, one arriving
    right after a fork ran the parent's handler in the child (it raised in Python's own
    after-fork code, which printed a traceback); held, it is handled once the fork is done: in
    the parent after every child started is recorded, to be stopped."""
    if sys.platform == "win32":  # never forks
        yield set()
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPPING)
    try:
        yield {int(signum) for signum in previous}
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def can_fork() -> bool:
    """Whether parts may run in forked children here (see the module's docstring)."""
    return (sys.platform.startswith("linux") and hasattr(os, "fork")
            and threading.active_count() == 1)


def usable_cpus() -> int:
    """The processors this process may run on: its affinity, as taskset and cpusets set it (a
    CPU quota is not seen: there, parts share the time the quota gives); where the system does
    not say (not Linux) or cannot (``OSError``), every processor."""
    with contextlib.suppress(OSError):
        known = affinity_cpus()
        if known is not None:
            return known
    return os.cpu_count() or 1


def affinity_cpus() -> int | None:
    """The logical CPUs this process may run on: its affinity (taskset, a cpuset); None where
    the system does not say (not Linux). The one reading of it: the machine's facts report it
    (facts/system.py), ``usable_cpus`` sizes the parts by it. (The check reads it beside the
    worker: this module imports ``pickle`` only where a part's result travels, so the check's
    path loads nothing more for it.)"""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else None


class _Child:
    """A forked child doing ``work(part)``, which writes the result, pickled, to a pipe."""

    def __init__(self, pid: int, read_end: int) -> None:
        self.pid, self.read_end = pid, read_end
        self._reading, self._running = True, True

    @classmethod
    def start(cls, work: Callable[[Sequence[Item]], Any], part: Sequence[Item],
              mask: set[int]) -> _Child | None:
        """The child started, with the stopping signals held (``_stopping_signals_held``);
        None when it cannot be (no more processes allowed, no memory)."""
        if sys.platform == "win32":  # no fork (can_fork says so first)
            return None
        # Loaded here, before the fork (each child has it), not with this module: the check reads
        # affinity_cpus from here, beside its worker, and never runs a part.
        import pickle

        try:
            read_end, write_end = os.pipe()
        except OSError:
            return None
        try:
            pid = os.fork()
        except OSError:
            os.close(read_end)
            os.close(write_end)
            return None
        if pid == 0:  # the child: whatever happens, it ends here, never in the parent's code
            status = 1
            try:
                for signum in _STOPPING:  # ignored ones stay so (nohup)
                    if signal.getsignal(signum) is not signal.SIG_IGN:
                        signal.signal(signum, signal.SIG_DFL)
                signal.pthread_sigmask(signal.SIG_SETMASK, mask)
                os.close(read_end)
                view = memoryview(pickle.dumps(work(part), protocol=pickle.HIGHEST_PROTOCOL))
                while view:
                    view = view[os.write(write_end, view):]
                status = 0
            finally:
                os._exit(status)
        os.close(write_end)
        return cls(pid, read_end)

    def result(self) -> tuple[Any] | None:
        """What the child sent, in a 1-tuple (a result may be None itself); None when it did
        not finish its work or sent what cannot be read. The child is reaped."""
        chunks: list[bytes] = []
        try:
            while chunk := os.read(self.read_end, 1 << 20):
                chunks.append(chunk)
        except OSError:
            self.stop()
            return None
        self._close()
        _, status = os.waitpid(self.pid, 0)
        self._running = False
        if status != 0:
            return None
        try:
            # From the pipe only this child holds the other end of: as trusted as our memory.
            import pickle  # loaded already: start() loaded it

            return (pickle.loads(b"".join(chunks)),)  # noqa: S301
        except Exception:  # cut short: its part is done here
            return None

    def stop(self) -> None:
        """Kill and reap the child if it is still there (the parent is stopping early)."""
        self._close()
        if self._running and sys.platform != "win32":
            self._running = False
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.waitpid(self.pid, 0)

    def _close(self) -> None:
        if self._reading:
            self._reading = False
            os.close(self.read_end)

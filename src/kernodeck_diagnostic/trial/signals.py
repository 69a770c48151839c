"""SIGTERM during an attempt, and the signals held while an attempt is written.

During an attempt SIGTERM raises ``Terminated`` in the main thread (a ``SystemExit`` with status
143, as a shell reports SIGTERM), after marking every attempt open in the process: the stage open
when it came is the one it came in, and what fails after it (a DataLoader worker killed by the
same signal, PyTorch's SIGCHLD handler raising for it) is its consequence. ``signals_held``
keeps SIGTERM, SIGINT, SIGHUP and a Python SIGCHLD handler from cutting an attempt's end short
(docs/trial.md, "Interrupts"). A process forked during an attempt gets the handlers it replaced
back (``_after_fork_in_child``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any, ClassVar, Protocol


class Marked(Protocol):
    def terminated(self) -> None: ...


class Terminated(SystemExit):
    """Raised in the program's main thread when SIGTERM arrives during an attempt: the attempt
    ends as ``interrupted`` and the program exits with status 143, as a shell reports SIGTERM."""

    def __init__(self) -> None:
        super().__init__(128 + int(signal.SIGTERM))


# The attempts open in this process: SIGTERM marks each (``Trial.terminated``); in a child forked
# meanwhile, none is the child's (``_after_fork_in_child``).
OPEN: list[Marked] = []
_HELD = ("SIGTERM", "SIGINT", "SIGHUP", "SIGCHLD")


def terminate(signum: int, frame: Any) -> None:
    for trial in list(OPEN):
        trial.terminated()
    _quiet_sigchld()
    raise Terminated


def _after_sigterm(signum: int, frame: Any) -> None:
    """SIGCHLD once SIGTERM ended the attempts: a child that ended now (a DataLoader worker) died
    of the same signal, as the process group did; nothing to raise."""


def _quiet_sigchld() -> None:
    """A Python SIGCHLD handler (PyTorch's DataLoader raises from it when a worker dies) would
    run as soon as the workers die of the same SIGTERM, before the attempt's end holds it, and
    raise in place of ``Terminated``: from the SIGTERM on, SIGCHLD raises nothing."""
    sigchld = getattr(signal, "SIGCHLD", None)
    if sigchld is None:
        return
    handler = signal.getsignal(sigchld)
    if callable(handler) and handler is not _after_sigterm:
        with contextlib.suppress(OSError, ValueError):
            signal.signal(sigchld, _after_sigterm)


class _Hold:
    """What ``signals_held`` holds now: the signals that came, and how deep the holds are."""

    came: ClassVar[list[int]] = []
    previous: ClassVar[dict[int, Any]] = {}  # the handlers held signals go back to
    depth = 0


@contextlib.contextmanager
def signals_held(drop_sigchld: Callable[[], bool] = lambda: False) -> Iterator[None]:
    """While an attempt is written: SIGTERM, SIGINT and SIGHUP, and SIGCHLD when a Python
    handler has it (PyTorch's DataLoader raises from it when a worker dies, as every worker does
    when SIGTERM reaches the process group), are held, then delivered again, in the order they
    came, to the handlers they had, once the outermost hold ends (an adapter holds them over its
    whole end, the Trial's included). ``drop_sigchld``: asked at the end; true (the attempt was
    ended by SIGTERM) drops a held SIGCHLD: the workers died of the same signal. Only the main
    thread can hold them; elsewhere (and on Windows) nothing is held."""
    if threading.current_thread() is not threading.main_thread() or _Hold.depth:
        nested = bool(_Hold.depth)
        _Hold.depth += nested
        try:
            yield
        finally:
            _Hold.depth -= nested
        return

    def hold(signum: int, frame: Any) -> None:
        if signum not in _Hold.came:
            _Hold.came.append(signum)

    previous = _Hold.previous
    previous.clear()
    for name in _HELD:
        signum = getattr(signal, name, None)
        if signum is None:
            continue
        handler = signal.getsignal(signum)
        if name == "SIGCHLD" and not callable(handler):
            continue  # the default (ignore): nothing raises, nothing to hold
        if handler is signal.SIG_IGN or handler is None:
            continue
        with contextlib.suppress(OSError, ValueError):
            signal.signal(signum, hold)
            previous[signum] = handler
    _Hold.depth = 1
    try:
        yield
    finally:
        _Hold.depth = 0
        for signum, handler in previous.items():
            with contextlib.suppress(OSError, ValueError):
                signal.signal(signum, handler)
        previous.clear()
        held = list(_Hold.came)
        _Hold.came.clear()
        sigchld = getattr(signal, "SIGCHLD", None)
        for signum in held:  # delivered now, to the handlers they had: the attempt is written
            if signum != sigchld or not drop_sigchld():
                signal.raise_signal(signum)


def _after_fork_in_child() -> None:
    """A child forked during an attempt (a ``multiprocessing`` pool's worker, the program's own
    ``os.fork``) is not the attempt's process: the handlers the attempt set are put back there,
    SIGTERM's default first. A Python handler runs only between two bytecodes, so a child stuck
    in native code (a lock another thread of the parent held at the fork, as OpenMP's or an
    allocator's can be) would outlive the SIGTERM meant to end it, and ``Pool.terminate()``,
    which joins its workers after that signal, would wait for ever. (A DataLoader's workers
    set their own SIGTERM handler.) The attempts open are the parent's, not the child's (their
    copies there write nothing: ``Trial._forked``)."""
    OPEN.clear()
    held = dict(_Hold.previous) if _Hold.depth else {}  # forked while an attempt was written
    # Emptied in place: a hold the forking thread is inside of puts nothing back when it ends.
    _Hold.depth = 0
    _Hold.previous.clear()
    _Hold.came.clear()
    if signal.getsignal(signal.SIGTERM) is terminate or held.get(signal.SIGTERM) is terminate:
        held[signal.SIGTERM] = signal.SIG_DFL
    for signum, handler in held.items():
        with contextlib.suppress(OSError, ValueError):  # ValueError: not the main thread
            signal.signal(signum, handler)


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_after_fork_in_child)


def catch_sigterm() -> Any:
    """During an attempt, SIGTERM raises ``Terminated`` (``terminate``): installed from the main
    thread alone (only it may), and only over the default action (a handler of the program's own
    stays). The handler it replaced (None: none replaced)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, terminate)
        return signal.SIG_DFL
    return None


def release_sigterm(previous: Any) -> None:
    """Put back the handler ``catch_sigterm`` replaced, if ours is still there (or, while the
    signals are held, where the hold puts it back)."""
    if previous is None:
        return
    if signal.getsignal(signal.SIGTERM) is terminate:
        signal.signal(signal.SIGTERM, previous)
    elif _Hold.previous.get(signal.SIGTERM) is terminate:
        _Hold.previous[signal.SIGTERM] = previous

"""forked.in_parts: the same result as doing every part here, whatever a child does; children
really run at once, and none outlives the call."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ROOT
from kernodeck_diagnostic import forked
from kernodeck_diagnostic.forked import in_parts

PARENT = os.getpid()
SRC = ROOT / "src"

needs_fork = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="parts run in forked children on Linux only")


def no_children_left() -> bool:
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def where(part: Sequence[int]) -> tuple[int, list[int]]:
    return os.getpid(), list(part)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(), max_size=40), st.integers(0, 6))
def test_the_parts_are_the_slices_in_order(items: list[int], parts: int) -> None:
    results = in_parts(where, items, parts)
    assert [item for _, part in results for item in part] == items
    assert len(results) <= max(parts, 1)
    assert all(part for _, part in results)
    assert no_children_left()


@needs_fork
def test_every_part_but_the_first_runs_in_its_own_child_at_the_same_time() -> None:
    started = time.monotonic()
    results = in_parts(lambda part: (os.getpid(), time.sleep(1)), list(range(4)), 4)
    pids = [pid for pid, _ in results]
    assert pids[0] == PARENT
    assert len(set(pids)) == 4
    assert time.monotonic() - started < 3.5  # four seconds, one after the other
    assert no_children_left()


def fails_in_a_child(how: str) -> object:
    def work(part: Sequence[int]) -> object:
        if os.getpid() != PARENT:
            if how == "raises":
                raise RuntimeError("a bug")
            if how == "killed":
                os.kill(os.getpid(), signal.SIGKILL)
            if how == "exits":
                os._exit(0)  # ends without sending anything
            if how == "unpicklable":
                return lambda: None
        return sum(part)
    return work


@needs_fork
@pytest.mark.parametrize("how", ["raises", "killed", "exits", "unpicklable"])
def test_a_part_whose_child_fails_is_done_here(how: str) -> None:
    assert in_parts(fails_in_a_child(how), list(range(9)), 3) == [3, 12, 21]  # type: ignore[arg-type]
    assert no_children_left()


@needs_fork
def test_a_part_whose_child_cannot_be_started_is_done_here(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def refused() -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(forked.os, "fork", refused)
    assert in_parts(where, list(range(6)), 3) == [(PARENT, [0, 1]), (PARENT, [2, 3]),
                                                  (PARENT, [4, 5])]


@needs_fork
def test_children_are_killed_and_reaped_when_the_parent_stops_early() -> None:
    def work(part: Sequence[int]) -> None:
        if os.getpid() == PARENT:
            raise KeyboardInterrupt
        time.sleep(60)

    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        in_parts(work, list(range(3)), 3)
    assert time.monotonic() - started < 10
    assert no_children_left()


@needs_fork
def test_a_child_dies_of_the_signals_that_stop_the_command() -> None:
    """The parent's handlers (commands/runner.py raises in them) are not the child's: SIGTERM
    ends a child at once, and its part is then done here."""
    def work(part: Sequence[int]) -> int:
        if os.getpid() != PARENT:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(60)
        return sum(part)

    previous = signal.signal(signal.SIGTERM, lambda *_: None)  # the parent ignores it
    try:
        started = time.monotonic()
        assert in_parts(work, [1, 2, 3, 4], 2) == [3, 7]
        assert time.monotonic() - started < 10
    finally:
        signal.signal(signal.SIGTERM, previous)


# A signal that arrives in a child right after its fork, before it has its own handlers: the
# parent's handler (one that raises, as commands/runner.py's does) must never run there.
SIGNAL_AT_FORK = """
import os, signal, sys
sys.path.insert(0, sys.argv[1])
from kernodeck_diagnostic import forked

def interrupted(signum, frame):
    raise KeyboardInterrupt

real_fork = os.fork

def fork_then_signal():
    pid = real_fork()
    if pid == 0:
        os.kill(os.getpid(), signal.SIGINT)  # as a Ctrl-C to the group at that moment
    return pid

signal.signal(signal.SIGINT, interrupted)
forked.os.fork = fork_then_signal
print("result", forked.in_parts(sum, list(range(9)), 3), "from", os.getpid())
"""


@needs_fork
def test_a_signal_at_the_fork_kills_the_child_silently_and_never_runs_the_parents_code(
        ) -> None:
    process = subprocess.Popen([sys.executable, "-c", SIGNAL_AT_FORK, str(SRC)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               stdin=subprocess.DEVNULL, start_new_session=True)
    out, err = process.communicate(timeout=60)
    # Both children died of the signal, at once and silently; their parts were done here, and
    # only the parent printed.
    assert err == ""
    assert out.splitlines() == [f"result [3, 12, 21] from {process.pid}"]
    assert process.returncode == 0


@needs_fork
def test_a_signal_the_parent_ignores_the_child_ignores_too() -> None:
    """Started under nohup, the command outlives its terminal: so do the children."""
    def work(part: Sequence[int]) -> tuple[int, int]:
        if os.getpid() != PARENT:
            os.kill(os.getpid(), signal.SIGHUP)
        return os.getpid(), sum(part)

    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        (first, three), (second, seven) = in_parts(work, [1, 2, 3, 4], 2)
    finally:
        signal.signal(signal.SIGHUP, previous)
    assert (first, three, seven) == (PARENT, 3, 7)
    assert second != PARENT  # the child lived on and sent its part


def test_with_another_thread_running_every_part_is_done_here() -> None:
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not forked.can_fork()
        assert [pid for pid, _ in in_parts(where, list(range(6)), 3)] == [PARENT] * 3
    finally:
        stop.set()
        thread.join()


def test_usable_cpus_is_at_least_one() -> None:
    assert forked.usable_cpus() >= 1

"""Running the user's own application (``ramp``, ``resume-check``): one process group, a time limit,
a gentle stop, and how it ended.

The application is started from an argument list (never a shell) as the leader of its own process
group, its stdout and stderr going to files (bounded like the worker's). It ends in one of four
ways: it exits by itself; the time limit is reached and its whole tree is killed; the caller asks it
to stop (``stop_when``); or the front itself is interrupted (Ctrl-C, SIGTERM, SIGHUP), which stops
it the same gentle way before the interrupt goes on. A gentle stop is what a user's Ctrl-C would
be: SIGINT to the group (CTRL_BREAK on Windows), SIGTERM after ``grace_s``, then SIGKILL to the
whole tree after another ``grace_s``. A stop may start later in that sequence (``stop_signal``):
SIGTERM (what a scheduler sends), or SIGKILL at once (a preemption, the OOM killer); on Windows
both are the tree killed at once.

The whole tree, even what left the group: a process the application started in a session of its
own (``setsid``, a daemon) is not in its group, and once its parent is gone it would be
re-parented to init and outlive every limit. On Linux this process is made the *subreaper* of
its descendants (``prctl(PR_SET_CHILD_SUBREAPER)``): an orphan of the application becomes a child
of the tool, not of init. When the application's run ends (by itself, its limit, a stop, an
interrupt), every child of the tool that was not one before the run started is killed and
reaped, and so are their children in turn, re-parented the same way, until none is left
(``reap_orphans``; read from ``/proc``). The tool runs one application at a time, and nothing
else of its own starts a child meanwhile. Elsewhere (macOS, Windows), or where prctl is refused,
the group (the job's tree on Windows) is what is killed, as before.

A SIGKILL of the tool gives none of this a chance: the guard (supervision/guard.py), a small
process told which session runs, kills that session once the tool is gone.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO

from ..children import Interrupted, kill_tree, spawn
from ..safe_files import PRIVATE_MODE, Folder
from ..untrusted_json import read_regular
from .captures import bound_capture
from .guard import GUARD
from .oom_killer import Evidence, OomWatch

POLL_INTERVAL_S = 0.05
_PROC_FILE_BYTES = 64 * 1024  # a process's stat line, a thread's children (read bounded)
GRACE_S = 10.0
_SIGKILL = getattr(signal, "SIGKILL", 9)
STOP_SIGNALS = ("SIGINT", "SIGTERM", "SIGKILL")  # where a stop starts, gentlest first


@dataclass
class Ending:
    """How one run of the application ended."""

    returncode: int | None  # negative: killed by that signal (POSIX); None: never started
    duration_s: float
    timed_out: bool = False
    stopped: bool = False  # the caller (or an interrupt) asked it to stop
    start_error: str | None = None  # why it could not be started (no path in it)
    peak_rss_bytes: int | None = None  # the process's own peak, from wait4 (POSIX)
    oom_evidence: list[Evidence] = field(default_factory=list)
    # OOM kills the run's cgroups counted while it ran, whichever process of the run they
    # ended (a child, a data loader's worker); None when no cgroup's count could be read.
    oom_kills: int | None = None

    @property
    def signal_name(self) -> str | None:
        if self.returncode is None or self.returncode >= 0:
            return None
        try:
            return signal.Signals(-self.returncode).name
        except ValueError:
            return f"signal {-self.returncode}"


def run_application(argv: Sequence[str], *, env: Mapping[str, str], captures: Folder,
                    stdout_name: str, stderr_name: str, timeout_s: float,
                    grace_s: float = GRACE_S,
                    stop_when: Callable[[float], bool] | None = None,
                    stop_signal: str = "SIGINT") -> Ending:
    """Run ``argv`` to its end, within ``timeout_s``; ``stop_when(elapsed)`` asks for a gentle stop.

    Its stdout and stderr go to two new files of ``captures`` (created exclusively, readable by
    their owner only: what a program prints may hold anything).
    Raises ``Interrupted`` (after stopping the application gently) when the front is interrupted.
    """
    watch = OomWatch()
    adopting = become_subreaper()
    before = children() if adopting else set()
    inherited = own_peak_bytes()
    start = time.monotonic()
    with _capture(captures, stdout_name) as out, _capture(captures, stderr_name) as err:
        try:
            process = spawn(argv, stdout=out, stderr=err, env=dict(env))
        except OSError as exc:
            return Ending(None, 0.0, start_error=(exc.strerror or type(exc).__name__).lower())
        GUARD.running(process.pid)  # a SIGKILL of the tool from now on ends the program too
        ending = Ending(None, 0.0)
        try:
            _wait(process, ending, watch=watch, captures=(out, err), start=start,
                  timeout_s=timeout_s, grace_s=grace_s, stop_when=stop_when,
                  stop_signal=stop_signal)
        except Interrupted:
            ending.stopped = True
            stop_gently(process, grace_s, ending)
            raise
        finally:
            kill_tree(process)  # what it left running in its group goes too
            if adopting:  # and what left its group (setsid), re-parented to this process
                reap_orphans(before | {process.pid})
            GUARD.ended()
    if ending.returncode is None:
        ending.returncode = process.returncode
    ending.duration_s = time.monotonic() - start
    if ending.peak_rss_bytes is not None and ending.peak_rss_bytes <= inherited:
        # Linux keeps this process's peak as the program's from its exec on: one not above it
        # may be ours, not the program's. Unknown, rather than this tool's size.
        ending.peak_rss_bytes = None
    ending.oom_kills = watch.kills()
    if ending.returncode == -_SIGKILL and not ending.timed_out and not ending.stopped:
        ending.oom_evidence = watch.evidence(process.pid)
    return ending


def own_peak_bytes() -> int:
    """This process's own peak resident size (Linux's ``VmHWM``), what ``wait4`` reports as a
    child's peak when the child's own is below it; 0 where it is not read (a child's ``ru_maxrss``
    is then taken as it is)."""
    try:
        with open("/proc/self/status", "rb") as status:
            found = re.search(rb"VmHWM:\s*(\d+) kB", status.read(_PROC_FILE_BYTES))
    except OSError:
        return 0
    return int(found.group(1)) * 1024 if found else 0


# prctl's option (linux/prctl.h): orphans of descendants are re-parented to this process.
_PR_SET_CHILD_SUBREAPER = 36
_SUBREAPER: list[bool] = []  # set once per process: whether this process is a subreaper
ORPHANS_KILL_S = 2.0  # a process stuck in the kernel (D state) is given up on after this


def become_subreaper() -> bool:
    """Make this process the subreaper of its descendants (Linux 3.4+); whether it is one.
    Anywhere else, or when refused, False: nothing changes."""
    if not _SUBREAPER:
        _SUBREAPER.append(_set_subreaper())
    return _SUBREAPER[0]


def _set_subreaper() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError, TypeError):  # no libc, no prctl: the group is the limit
        return False


def children() -> set[int]:
    """This process's children (Linux's ``/proc``: each thread's ``children`` file, else every
    process's parent); empty where there is no ``/proc``."""
    own = os.getpid()
    found: set[int] = set()
    try:
        tasks = os.listdir(f"/proc/{own}/task")
    except OSError:
        return found
    listed = False
    for task in tasks:
        try:
            listing = read_regular(f"/proc/{own}/task/{task}/children", _PROC_FILE_BYTES,
                                   cut=True)
            found.update(int(pid) for pid in listing.split())
            listed = True
        except (OSError, ValueError):
            continue
    if listed:
        return found
    for name in os.listdir("/proc"):  # a kernel without CONFIG_PROC_CHILDREN
        if name.isdigit():
            try:
                record = read_regular(f"/proc/{name}/stat", _PROC_FILE_BYTES, cut=True)
                fields = record.rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if len(fields) > 1 and fields[1] == str(own).encode():
                found.add(int(name))
    return found


def reap_orphans(known: set[int], within_s: float = ORPHANS_KILL_S) -> None:
    """Kill and reap every child of this process not in ``known`` (those it had before the run,
    and the application itself): what the application left running outside its group, which
    its end re-parented here. Their own children come here in turn when they die, and go the
    same way. Only children are signalled: their ids cannot be reused before they are reaped."""
    if sys.platform == "win32":  # no /proc: never one found
        return
    deadline = time.monotonic() + within_s
    while True:
        orphans = children() - known
        if not orphans or time.monotonic() > deadline:
            return
        for pid in orphans:
            with contextlib.suppress(OSError):
                os.kill(pid, _SIGKILL)
        for pid in orphans:
            with contextlib.suppress(OSError):
                os.waitpid(pid, os.WNOHANG)
        time.sleep(0.01)


def _capture(folder: Folder, name: str) -> IO[bytes]:
    return os.fdopen(folder.open_new(name, PRIVATE_MODE, append=True), "ab")


def _wait(process: subprocess.Popen[bytes], ending: Ending, *, watch: OomWatch,
          captures: tuple[IO[bytes], IO[bytes]], start: float, timeout_s: float, grace_s: float,
          stop_when: Callable[[float], bool] | None, stop_signal: str) -> None:
    while not _reaped(process, ending):
        elapsed = time.monotonic() - start
        if elapsed >= timeout_s:
            ending.timed_out = True
            kill_tree(process)
            _reaped(process, ending)
            return
        if stop_when is not None and stop_when(elapsed):
            ending.stopped = True
            stop_gently(process, grace_s, ending, first=stop_signal)
            return
        watch.see(process.pid)
        for capture in captures:
            bound_capture(capture)
        time.sleep(POLL_INTERVAL_S)


def stop_gently(process: subprocess.Popen[bytes], grace_s: float, ending: Ending,
                first: str = "SIGINT") -> None:
    """SIGINT to the group, SIGTERM after ``grace_s``, then the whole tree killed; ``first``
    (one of ``STOP_SIGNALS``) starts later in that sequence."""
    if sys.platform == "win32":
        # What a console's Ctrl-Break sends a group; SIGTERM and SIGKILL: the tree killed.
        steps = [int(signal.CTRL_BREAK_EVENT)] if first == "SIGINT" else []
    else:
        steps = [int(signal.SIGINT), int(signal.SIGTERM)][STOP_SIGNALS.index(first):]
    for signum in steps:
        _signal_group(process, signum)
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline:
            if _reaped(process, ending):
                return
            time.sleep(POLL_INTERVAL_S)
    kill_tree(process)
    _reaped(process, ending)


def _signal_group(process: subprocess.Popen[bytes], signum: int) -> None:
    with contextlib.suppress(OSError):
        if sys.platform == "win32":
            process.send_signal(signum)
        else:
            os.killpg(process.pid, signum)


def _reaped(process: subprocess.Popen[bytes], ending: Ending) -> bool:
    """Whether the process has ended; on POSIX it is reaped with ``wait4`` for its peak memory."""
    if process.returncode is not None:
        return True
    if sys.platform == "win32":  # no wait4: no peak of its own
        return process.poll() is not None
    try:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
    except ChildProcessError:  # reaped elsewhere (kill_tree's wait)
        return process.poll() is not None
    if pid == 0:
        return False
    process.returncode = os.waitstatus_to_exitcode(status)
    ending.returncode = process.returncode
    # ru_maxrss: KiB on Linux, bytes on macOS.
    ending.peak_rss_bytes = usage.ru_maxrss * (1 if sys.platform == "darwin" else 1024)
    return True

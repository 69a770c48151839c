"""Child processes that cannot outlive their limit: own process group, whole-tree kill, timeouts."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from typing import IO, Any, NamedTuple

MAX_TOOL_OUTPUT = 256 * 1024
_REAP_TIMEOUT_S = 2.0
# Every child started here (or adopted) and not yet killed and reaped: on an interrupt, kill_all()
# ends them (the host probe's tool runs in a thread the interrupt does not reach).
_LIVE: set[subprocess.Popen[bytes] | Spawned] = set()
_LIVE_LOCK = threading.Condition()
# Set by kill_all(for_good=True) when this process is about to end: a thread that starts a
# child after that (the host probe's second tool) would leave it running behind us.
_CLOSED = threading.Event()
# Children being started right now (forked, perhaps already running, not yet in _LIVE): a final
# kill_all waits for them, or a child whose thread had not registered it yet would outlive us.
_STARTING: set[object] = set()
_START_WAIT_S = 2.0


def spawn(argv: Sequence[str], *, stdout: IO[Any] | int, stderr: IO[Any] | int,
          env: dict[str, str] | None = None,
          stdin: IO[Any] | int = subprocess.DEVNULL,
          hold_sigterm: bool = False) -> subprocess.Popen[bytes]:
    """Start ``argv`` as the leader of a new process group, so its whole tree can be killed.

    ``hold_sigterm``: SIGTERM blocked while the child is forked, which inherits it blocked (the
    worker discards one already pending and unblocks it first thing: worker/stages.py). Between
    the fork and its ``setsid`` the child is still in this process's group: a launcher stopping
    the job then (torchrun signals each rank's group) would kill the worker, not this process.

    ``stdin=subprocess.PIPE`` gives the child a lifeline: the write end stays here only (it is
    not inheritable, and ``close_fds`` keeps it from every other child), so the child reads
    end-of-file once this process is gone, whatever ended it.
    """
    with _LIVE_LOCK:
        if _CLOSED.is_set():
            raise OSError("not started: the process is ending")
        start = object()
        _STARTING.add(start)
    process = None
    try:
        if sys.platform == "win32":
            process = subprocess.Popen(
                list(argv), stdin=stdin, stdout=stdout, stderr=stderr, env=env,
                creationflags=subprocess.CREATE_NEW_PROCESS_GROUP)
        else:
            held = {signal.SIGTERM} if hold_sigterm else set()
            previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
            try:
                process = subprocess.Popen(list(argv), stdin=stdin, stdout=stdout,
                                           stderr=stderr, env=env, start_new_session=True)
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, previous)
    finally:
        with _LIVE_LOCK:
            if process is not None:
                _LIVE.add(process)
            _STARTING.discard(start)
            _LIVE_LOCK.notify_all()
            closed = _CLOSED.is_set()
    if closed:
        # The final kill_all waited for this start and kills the child itself (this thread may
        # never run again: the process may end first).
        raise OSError("not started: the process is ending")
    return process


def adopt(process: Spawned) -> None:
    """Count a child started elsewhere (``Spawned``) among those ``kill_all`` ends; when this
    process is already ending, kill it instead and raise ``OSError``, as ``spawn`` would."""
    with _LIVE_LOCK:
        closed = _CLOSED.is_set()
        if not closed:
            _LIVE.add(process)
    if closed:
        kill_tree(process)
        raise OSError("not started: the process is ending")


def kill_all(*, for_good: bool = False) -> None:
    """Kill the tree of every child still running that ``spawn`` started; ``for_good`` when
    this process ends next: no child starts any more, and those being started are waited for
    (at most a few seconds) and killed too."""
    with _LIVE_LOCK:
        if for_good:
            _CLOSED.set()
            _LIVE_LOCK.wait_for(lambda: not _STARTING, _START_WAIT_S)
        live = list(_LIVE)
    for process in live:
        kill_tree(process)


def kill_tree(process: subprocess.Popen[bytes] | Spawned, *, reap: bool = True) -> None:
    """Kill ``process`` and every process of its group (POSIX) or tree (Windows), then reap it;
    ``reap=False`` (POSIX): only kill it, the system reaps it once this process has ended."""
    if sys.platform == "win32":
        if process.poll() is None:
            with contextlib.suppress(OSError, subprocess.SubprocessError):
                # taskkill is a Windows system tool, found by name like the shell would.
                subprocess.run(["taskkill", "/T", "/F", "/PID", str(process.pid)],  # noqa: S607
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, timeout=_REAP_TIMEOUT_S, check=False)
            if process.poll() is None:
                process.kill()
    else:
        # The group outlives its leader: children the worker forked are killed even after the
        # worker itself has exited.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
    # A process stuck in uninterruptible sleep inside a driver cannot be reaped: give up on it.
    if reap or sys.platform == "win32":
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(_REAP_TIMEOUT_S)
    with _LIVE_LOCK:
        _LIVE.discard(process)


class Spawned:
    """A child started with ``os.posix_spawn`` (the worker started first thing, before this
    module and ``subprocess`` are loaded: supervision/start.py), with the part of ``Popen``'s
    interface the supervision uses: ``pid``, ``args``, ``stdin``, ``returncode``, ``poll()``
    and ``wait(timeout)``, which raises ``subprocess.TimeoutExpired`` as Popen's does."""

    def __init__(self, pid: int, args: list[str], stdin: IO[bytes] | None) -> None:
        self.pid = pid
        self.args = args
        self.stdin = stdin
        self.returncode: int | None = None
        self._waiting = threading.Lock()  # one waitpid at a time, as Popen has

    def poll(self) -> int | None:
        """The exit status (negative: the signal that ended it) once it has ended, else None."""
        if sys.platform == "win32":  # never: posix_spawn is POSIX's
            raise OSError("no posix_spawn here")
        if self.returncode is None and self._waiting.acquire(blocking=False):
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                # Reaped by someone else (SIGCHLD ignored): its status is lost. Popen says 0.
                self.returncode = 0
            else:
                if pid == self.pid:
                    self.returncode = os.waitstatus_to_exitcode(status)
            finally:
                self._waiting.release()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        """Its exit status, waited for at most ``timeout`` seconds (polled as Popen polls)."""
        end = None if timeout is None else time.monotonic() + timeout
        delay = 0.0005
        while self.poll() is None:
            remaining = None if end is None else end - time.monotonic()
            if remaining is not None and remaining <= 0:
                raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
            delay = min(delay * 2, 0.05)
            time.sleep(delay if remaining is None else min(delay, remaining))
        return self.returncode or 0  # not None: poll has set it

    def kill(self) -> None:
        """SIGKILL to the process itself (``kill_tree`` kills its whole group)."""
        if sys.platform != "win32":  # always: posix_spawn is POSIX's
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)


class Interrupted(BaseException):
    """The user stopped the check (SIGINT, SIGTERM, or SIGHUP from a closed terminal): whatever
    runs is killed, nothing saved.

    A ``BaseException``, as ``KeyboardInterrupt`` is: the signal's handler raises it wherever the
    front happens to be, and an ``except Exception`` there (a probe that must never fail the
    check, the zipapp's importer falling back to compiling) would otherwise swallow it, and the
    check would run on to its end with the signal spent."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"interrupted by signal {signum}")
        self.signum = signum


class BoundedResult(NamedTuple):
    """What ``run_bounded`` saw. (A named tuple, not a dataclass: this module is loaded while
    the worker starts, which ``dataclasses``, with ``inspect``, would slow down.)"""

    returncode: int | None
    stdout: str
    timed_out: bool


def find_program(name: str) -> str | None:
    """``name`` as the shell finds it on ``PATH``, from its absolute folders only.

    An empty entry (``PATH=:/usr/bin``, a trailing or doubled ``:``) or a relative one (``.``,
    ``bin``) is the working folder or a folder under it: whoever can write there (a shared
    ``/tmp``, a project folder of a team) would choose what the check runs, on every check. Such
    entries are skipped, and the working folder is never searched first as Windows' own lookup
    (and ``shutil.which`` there) does: only a program in one of the absolute folders is run.
    """
    folders = [entry for entry in os.environ.get("PATH", os.defpath).split(os.pathsep)
               if entry and os.path.isabs(entry)]
    names = [name]
    if sys.platform == "win32":
        extensions = [ext for ext in os.environ.get("PATHEXT", ".COM;.EXE;.BAT;.CMD").split(";")
                      if ext]
        given = any(name.lower().endswith(ext.lower()) for ext in extensions)
        names = ([name] if given else []) + [name + ext for ext in extensions]
    for folder in folders:
        for candidate in names:
            path = os.path.join(folder, candidate)
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return path
    return None


def run_bounded(argv: Sequence[str], timeout: float) -> BoundedResult:
    """Run a short tool with a hard time limit; its output is cut at MAX_TOOL_OUTPUT bytes."""
    try:
        process = spawn(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except OSError:
        return BoundedResult(None, "", False)
    try:
        out, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_tree(process)
        if process.stdout is not None:
            process.stdout.close()
        return BoundedResult(None, "", True)
    finally:
        kill_tree(process)
    text = out[:MAX_TOOL_OUTPUT].decode("utf-8", "replace")
    return BoundedResult(process.returncode, text, False)

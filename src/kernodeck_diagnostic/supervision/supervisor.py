"""Runs the worker in the interpreter under diagnosis, within the time limit; reads its events."""

from __future__ import annotations

import collections
import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Literal, Optional

from ..safe_files import PRIVATE_MODE, Folder
from ..worker.protocol import LAUNCHER_HURRY_S, deadline_argument

# Where the user's code imports from, for the worker (run_worker): a file of its private folder.
PLACES_FILE = "places.json"

if TYPE_CHECKING:
    from ..children import Spawned
    from ..facts.launcher import StopReason
    from .events import EventReader, WorkerState
    from .oom_killer import OomWatch
    from .start import Started
# What reads the worker's events and output (``events``, ``captures``, the report's schema) is
# imported once the worker is started, not before: its start is the check's critical path.

POLL_INTERVAL_S = 0.05
# After its final event the worker has this long to exit; then its tree is killed and the result
# stands (a library's non-daemon thread must not turn a finished check into a timeout).
FINAL_GRACE_S = 1.0
# --distributed: when the launcher's SIGTERM reached the front (held there: commands/check.py),
# once. The worker, in a session of its own, never gets torchrun's: it is forwarded, the worker
# cuts what is left of its collective stage to LAUNCHER_HURRY_S, and the front's limit is cut to
# that and HURRY_MARGIN_S (the worker's own end margin, the report).
# Why it came (facts/launcher.stop_reason), read at that moment; where the task's variables do
# not tell, the job's rank 0 asks Slurm's controller in a thread (_ASKING), waited for at most
# ASK_WAIT_S when the reason is read (``launcher_stop_reason``).
LAUNCHER_STOP: list[float] = []
LAUNCHER_STOP_REASON: list[StopReason] = []
HURRY_MARGIN_S = 8.0
_ASKING: list[threading.Thread] = []
ASK_WAIT_S = 4.0


def launcher_stopping() -> None:
    """The launcher is stopping the job (its SIGTERM, from a signal handler): said once."""
    if not LAUNCHER_STOP:
        LAUNCHER_STOP.append(time.monotonic())
        # Already imported under --distributed (the rank's Launch comes from it).
        from ..facts.launcher import asks_why_stopped, stop_reason

        LAUNCHER_STOP_REASON.append(stop_reason(os.environ, time.time()))
        if LAUNCHER_STOP_REASON[0] == "sigterm" and asks_why_stopped(os.environ):
            asking = threading.Thread(target=_ask_why_stopped, daemon=True,
                                      name="launcher-stop")
            with contextlib.suppress(RuntimeError):  # no thread to spare: "sigterm" stays
                asking.start()
                _ASKING.append(asking)


def _ask_why_stopped() -> None:
    from ..facts.launcher import asked_stop_reason

    found = asked_stop_reason(os.environ)
    if found is not None:
        LAUNCHER_STOP_REASON[0] = found


def launcher_stop_reason() -> StopReason:
    """Why the launcher's SIGTERM came, once the controller has answered (at most ASK_WAIT_S)."""
    for asking in _ASKING:
        asking.join(ASK_WAIT_S)
    return LAUNCHER_STOP_REASON[0] if LAUNCHER_STOP_REASON else "sigterm"

ProgressCallback = Callable[[str, float], None]
# How the worker ended: its final event written (whatever its exit), the time limit reached, an
# exit without the final event, or no start at all.
Outcome = Literal["finished", "timeout", "crashed", "not_started"]
# Each ending's sentence, and the same with the last line the worker wrote to stderr.
_WITH_STDERR = {
    "error.worker_ended.signal": "error.worker_ended.signal_stderr",
    "error.worker_ended.exit": "error.worker_ended.exit_stderr",
    "error.worker_ended.status": "error.worker_ended.status_stderr",
    "error.worker_ended.running": "error.worker_ended.running_stderr",
}


@dataclass
class WorkerRun:
    """How the worker ended, and what it said."""

    state: WorkerState
    outcome: Outcome
    returncode: int | None
    elapsed_s: float
    # Why the worker could not start: a message key (``error.not_started.*``) and the system's
    # reason, which names no path.
    start_error: tuple[str, str] | None = None
    # The last meaningful line the worker wrote to stderr (raw: the report redacts it); for a
    # worker that died without saying why, it is often the only cause there is.
    stderr_line: str | None = None
    # The CPU time the worker had used when the time limit ended it (None otherwise, or unknown).
    cpu_s: float | None = None
    # Of it, what the last seconds before the limit used, and how long they were (CpuTrail): a
    # worker that hangs after a long import used much CPU in all, next to none at the end.
    cpu_last_s: float | None = None
    last_s: float | None = None
    # --distributed: the launcher's SIGTERM cut the limit (facts/launcher.stop_reason: why).
    launcher_stop: StopReason | None = None
    # What the tool itself could not get from this process's limits (open files, a process,
    # memory): a message key (``error.tool_needs.*``) and its values (tool_needs.py).
    tool_need: tuple[str, dict[str, str]] | None = None
    # Where the worker the time limit ended hung, from its stack (hang.py): package, file
    # relative to its import folder, line; None otherwise, or where it cannot be told.
    hung_in: dict[str, Any] | None = None

    @classmethod
    def not_started(cls, key: str, detail: str) -> WorkerRun:
        from .events import WorkerState

        return cls(WorkerState(), "not_started", None, 0.0, (key, detail))

    def end_description(self) -> tuple[str, dict[str, str]]:
        """How the worker ended: a message key (``error.worker_ended.*``) and its values; with
        the last line it wrote to stderr (``_WITH_STDERR``) when it wrote one."""
        key, values = self._ending()
        if self.stderr_line:
            return _WITH_STDERR[key], dict(values, stderr=self.stderr_line)
        return key, values

    def _ending(self) -> tuple[str, dict[str, str]]:
        code = self.returncode
        if code is None:
            return "error.worker_ended.running", {}
        if code < 0:
            try:
                return "error.worker_ended.signal", {"signal": signal.Signals(-code).name}
            except ValueError:
                return "error.worker_ended.signal", {"signal": str(-code)}
        if sys.platform == "win32" and code >= 0xC0000000:
            # An NTSTATUS such as an access violation.
            return "error.worker_ended.status", {"status": f"0x{code:08X}"}
        return "error.worker_ended.exit", {"code": str(code)}


def user_path0(*, command_line: bool = False) -> str:
    """The first import path of the user's own code: what shadows an install.

    From the command line (whichever entry point: the console script, ``python -m``, the
    single-file download), the user's program is one started in the working folder, as
    ``python -c`` or ``python app.py`` there: the working folder comes first. Never the folder
    of the tool's own file: Python puts a script's folder first for that script only, and for
    an archive (``python kd.pyz``) the archive itself, never its folder, so a module written
    beside the download (``/tmp``, ``~/Downloads``) is none of the user's. A working folder that
    no longer exists is ``''``, as ``python -c`` has it (the import system skips it).

    From the API, the calling program is the user's: its own first entry, as Python put it (a
    script's folder; an archive, itself), the working folder for ``''`` (``python -c``, a
    REPL). Under -P (PYTHONSAFEPATH) or -I the caller has none: ``run_worker`` then sends
    none for the same interpreter, and the worker's own flags decide for another one.
    """
    if command_line:
        try:
            return os.getcwd()
        except OSError:  # removed under the user's shell
            return ""
    first = sys.path[0] if sys.path else ""
    if not first:
        try:
            return os.getcwd()
        except OSError:
            return ""
    return first


def run_worker(python: str, *, device: str, device_index: int, timeout_s: float,
               on_progress: ProgressCallback | None = None,
               on_started: Callable[[], None] | None = None,
               path0: str | None = None, caller: dict[str, Any] | None = None,
               extra: Sequence[str] = ()) -> WorkerRun:
    """Run the worker under ``python`` and return what happened, within ``timeout_s`` seconds:
    the one the console script started before reading its command line when it suits
    (``start.take``), else one started now; then its request is sent (``_supervise``).

    ``path0`` is the first import path the user's own code would have (see ``user_path0``);
    ``extra``, more of the worker's arguments (``--distributed``: the rank's place in the job);
    ``on_started``, what the front does once the worker runs, while it starts its interpreter and
    imports torch (its time limit and its kill on any ending already cover it).
    ``caller``, when the worker runs in the API caller's own interpreter (a notebook's kernel, a
    script): its whole ``sys.path`` (``import_path``), which the worker imports torch with, and
    its own torch (``facts.caller.caller_state``), which the worker compares with what it found.

    Whatever happens (timeout, crash, interrupt), the worker's whole process tree is killed and
    the private temporary folder removed before this returns or raises.
    """
    from . import start as starting

    started = starting.take(python)
    if started is None:
        try:
            started = starting.start(python)
        except starting.NotStarted as exc:
            from .tool_needs import at_start

            run = WorkerRun.not_started(exc.key, exc.detail)
            run.tool_need = at_start(exc.errno)
            return run
    watches: list[OomWatch] = []

    def running() -> None:
        # The OOM kills counted by the front's memory cgroups and the worker's, read once it
        # runs (off the path to its request): a kill before them is never claimed.
        from .oom_killer import OomWatch

        watches.append(OomWatch())
        watches[0].see(started.process.pid)
        if on_started is not None:
            on_started()

    try:
        # --deadline: the time limit below, the one way it reaches the worker (its library
        # stages and its collective end before it; see protocol.deadline_argument).
        request = ["--device", device, "--device-index", str(device_index),
                   "--deadline", deadline_argument(timeout_s)]
        # Where the user's code imports from: its first import path (-I and -P keep a program's
        # own folder off its search path: nothing is to be put back), and the API caller's own
        # path, which wins over the flags (what its next import searches). In a file of the
        # private folder, never on a command line, which any user of the machine can read
        # (/proc/<pid>/cmdline): both name the user's folders.
        places: dict[str, Any] = {}
        if path0 is not None and not {"-I", "-P"} & set(started.options):
            places["path0"] = path0
        if caller is not None:
            places["caller"] = caller
        if places:
            with Folder.made(started.folder) as private, \
                    os.fdopen(private.open_new(PLACES_FILE, PRIVATE_MODE), "w",
                              encoding="utf-8") as file:
                json.dump(places, file)
            request += ["--places", started.path(PLACES_FILE)]
        run = _supervise(started, [*request, *extra], timeout_s=timeout_s,
                         on_progress=on_progress, on_started=running)
        from .captures import last_stderr_line
        from .tool_needs import after_run

        run.stderr_line = last_stderr_line(started.path("stderr"))
        run.tool_need = after_run(run.outcome == "crashed" and run.state.error is None,
                                  run.returncode, run.stderr_line,
                                  watches[0] if watches else None)
        return run
    finally:
        started.close()


def _supervise(started: Started, request: list[str], *, timeout_s: float,
               on_progress: ProgressCallback | None,
               on_started: Callable[[], None] | None = None) -> WorkerRun:
    """Send the worker its request and follow it until it ends or the time limit: the limit
    counts from the request, which is when the worker is asked to run."""
    start = time.monotonic()
    deadline = start + timeout_s
    process = started.process
    started.send(request)
    outcome: Outcome = "timeout"
    limit: AtTheLimit = None, None, None
    exit_watch = _ExitWatch(process, started.done)
    trail = CpuTrail(process.pid, timeout_s)
    ranked, hurried = "--launcher" in request, False
    try:
        from .events import EventReader

        reader = EventReader(started.events)
        state = reader.state
        if on_started is not None:
            on_started()
        while True:
            if ranked and LAUNCHER_STOP and not hurried:
                hurried = True
                _forward_stop(process.pid)
                deadline = min(deadline, time.monotonic() + LAUNCHER_HURRY_S + HURRY_MARGIN_S)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            exit_watch.wait(min(POLL_INTERVAL_S, remaining))
            reader.poll()
            if process.returncode is not None:
                outcome = "finished" if state.final else "crashed"
                break
            if state.final and exit_watch.done:
                # The result is in, and all the worker wrote: what runs now is its exit, which
                # the console script need not wait for (start.fork_early).
                outcome = "finished"
                break
            if state.final and outcome != "finished":
                outcome = "finished"  # the result is in; what runs now is the worker's exit
                deadline = min(deadline, time.monotonic() + FINAL_GRACE_S)
            _tend(started, trail)
            if on_progress is not None:
                on_progress(_where(state), time.monotonic() - start)
        if outcome == "timeout":
            limit = _at_the_limit(started, reader, trail)
    finally:
        exit_watch.close()
        started.stop(finished=outcome == "finished")
    reader.poll()
    reader.close()
    if outcome == "crashed" and state.final:
        outcome = "finished"  # the final event landed between the last read and the exit
    stop = launcher_stop_reason() if hurried else None
    cpu_s, last, hung_in = limit
    return WorkerRun(state, outcome, process.returncode, time.monotonic() - start,
                     cpu_s=cpu_s, cpu_last_s=last[0] if last else None,
                     last_s=last[1] if last else None, launcher_stop=stop, hung_in=hung_in)


def _tend(started: Started, trail: CpuTrail) -> None:
    """Between two looks at the worker: its captured output kept bounded, its CPU time read."""
    from .captures import bound_capture

    for capture in started.captures:
        bound_capture(capture)
    trail.sample()


class CpuTrail:
    """The worker's CPU time, read every ``SPACING_S`` or so while it runs, the last readings
    only (bounded): at the time limit, what its last ``window`` seconds used. A quarter of the
    limit, at most 5 s: a hang that began after a long import is seen as the wait it is."""

    SPACING_S = 0.25
    KEPT = 24  # 6 s of readings: more than the longest window

    def __init__(self, pid: int, timeout_s: float) -> None:
        self._pid = pid
        self.window = min(5.0, timeout_s / 4)
        self._readings: collections.deque[tuple[float, float]] = collections.deque(
            maxlen=self.KEPT)
        self._readable = True

    def sample(self) -> None:
        now = time.monotonic()
        if not self._readable or (self._readings and now - self._readings[-1][0]
                                  < self.SPACING_S):
            return
        cpu = process_cpu_seconds(self._pid)
        if cpu is None:
            self._readable = False  # not Linux, or gone: nothing to read again
            return
        self._readings.append((now, cpu))

    def last(self, cpu_now: float | None) -> tuple[float, float] | None:
        """(CPU seconds used, seconds elapsed) over about the last ``window`` seconds, from
        the reading nearest before its start; None without a reading one second old."""
        now = time.monotonic()
        if cpu_now is None:
            return None
        before = [(at, cpu) for at, cpu in self._readings if now - at >= self.window]
        older = before[-1] if before else (self._readings[0] if self._readings else None)
        if older is None or now - older[0] < 1.0:
            return None
        return max(0.0, cpu_now - older[1]), now - older[0]


# At the time limit: the worker's CPU time, that of its last seconds (and how long), where it hung.
AtTheLimit = tuple[Optional[float], Optional[tuple[float, float]], Optional[dict[str, Any]]]


def _at_the_limit(started: Started, reader: EventReader, trail: CpuTrail) -> AtTheLimit:
    """What the worker the time limit ends says before it is killed: was it working or waiting
    (the CPU time it used, in all and at the end), and where it hangs, asked of the worker
    itself (hang.py). Its events are read up to now, none after: a worker stuck in a native call
    that the signal interrupts (pause, a driver's wait) may go on until it is killed."""
    cpu_s = process_cpu_seconds(started.process.pid)
    last = trail.last(cpu_s)
    reader.hold()
    from .hang import ask_where

    return cpu_s, last, ask_where(started)


class _ExitWatch:
    """Waits for the worker's exit. With a pidfd (Linux 5.3+), a descriptor readable the moment
    the process exits, the wait ends as it exits; ``Popen.wait``'s own polling, used elsewhere,
    notices an exit only up to tens of milliseconds later, which every check would wait for
    after its final event."""

    def __init__(self, process: subprocess.Popen[bytes] | Spawned, done: int | None) -> None:
        self._process = process
        self._done = done  # readable once a forked worker is done (start.fork_early)
        self.done = False  # it has said so
        self._pidfd: int | None = None
        pidfd_open = getattr(os, "pidfd_open", None)
        if pidfd_open is not None:
            with contextlib.suppress(OSError):  # an older kernel, or a sandbox that refuses it
                self._pidfd = pidfd_open(process.pid)

    def wait(self, timeout_s: float) -> None:
        """At most ``timeout_s``; ``returncode`` is set when the process has exited, ``done``
        when it said it is done (then only its exit is left)."""
        if self._pidfd is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._process.wait(timeout_s)
            return
        watched = [self._pidfd] if self._done is None or self.done else [self._pidfd, self._done]
        try:
            ready, _, _ = select.select(watched, [], [], timeout_s)
        except (OSError, ValueError):  # a descriptor select cannot take: poll, as elsewhere
            self.close()
            self.wait(timeout_s)
            return
        self.done = self.done or self._done in ready
        self._process.poll()

    def close(self) -> None:
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None


def _forward_stop(pid: int) -> None:
    """The launcher's SIGTERM, to the worker alone (it holds it: worker/collective.py)."""
    if sys.platform != "win32":  # there SIGTERM would end it at once
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)


def process_cpu_seconds(pid: int, proc: str = "/proc") -> float | None:
    """The CPU time (user and system) the process ``pid`` and the children it waited for used,
    in seconds, from ``/proc/<pid>/stat`` (Linux); None elsewhere or when it cannot be read."""
    sysconf = getattr(os, "sysconf", None)  # POSIX only
    if sysconf is None:
        return None
    try:
        with open(f"{proc}/{pid}/stat", encoding="ascii", errors="replace") as file:
            text = file.read(4096)
        ticks = int(sysconf("SC_CLK_TCK"))
    except (OSError, ValueError):
        return None
    # The command name (field 2) is in parentheses and may hold spaces: count after the last ')'.
    fields = text.rpartition(")")[2].split()
    try:  # utime, stime, cutime, cstime: fields 14 to 17, the 12th to 15th after the name
        return sum(int(value) for value in fields[11:15]) / ticks if ticks > 0 else None
    except (ValueError, IndexError):
        return None


def _where(state: WorkerState) -> str:
    """The stage for the progress line; the kernels stage with its kernel ("kernels:compile"):
    one of them may take a minute."""
    where = state.stage or "interpreter"
    return f"{where}:{state.step}" if where == "kernels" and state.step else where



"""Runs the worker in the interpreter under diagnosis, within the time limit; reads its events."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, Callable, Literal

from ..interpreter import is_front_interpreter
from ..safe_files import PRIVATE_MODE, Folder
from ..worker.protocol import deadline_argument
from .process import kill_tree, spawn

# Where the user's code imports from, for the worker (run_worker): a file of its private folder.
PLACES_FILE = "places.json"

if TYPE_CHECKING:
    from .events import WorkerState
# What reads the worker's events and output (``events``, ``captures``, the report's schema) is
# imported once the worker is started, not before: its start is the check's critical path.

POLL_INTERVAL_S = 0.05
# After its final event the worker has this long to exit; then its tree is killed and the result
# stands (a library's non-daemon thread must not turn a finished check into a timeout).
FINAL_GRACE_S = 1.0

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


def user_path0() -> str:
    """The first import path of code started where the tool was: what shadows an install.

    ``python -m`` and ``python -c`` search the working folder first; a script or the zipapp,
    the folder that holds it. The worker, run from a private folder, imports torch from there.
    Under ``python -m kernodeck_diagnostic`` the package took the working folder off the front's
    own import path (see ``PYTHON_M_PATH0``): it is still the user's.
    """
    from .. import PYTHON_M_PATH0

    if PYTHON_M_PATH0 is not None:
        return PYTHON_M_PATH0
    first = sys.path[0] if sys.path else ""
    if not first:
        return os.getcwd()
    return os.path.dirname(first) if os.path.isfile(first) else first


def interpreter_options() -> list[str]:
    """The options this interpreter was started with that change what an import does.

    -I, -E, -s, -P (PYTHONSAFEPATH), -S, -O, -b, every -W filter (PYTHONWARNINGS and -X dev
    included: given twice, a filter keeps its place) and every -X option. Nothing else: -u, -q
    and the like change no import.
    """
    flags = sys.flags
    options: list[str] = []
    if flags.isolated:
        options.append("-I")  # implies -E, -s and, on 3.11+, -P
    else:
        options += [flag for flag, on in (
            ("-E", flags.ignore_environment), ("-s", flags.no_user_site),
            ("-P", getattr(flags, "safe_path", False))) if on]
    if flags.no_site:
        options.append("-S")
    if flags.optimize:
        options.append("-" + "O" * flags.optimize)
    if flags.bytes_warning:
        options.append("-" + "b" * flags.bytes_warning)
    for option in sys.warnoptions:
        options += ["-W", option]
    for name, value in getattr(sys, "_xoptions", {}).items():
        options += ["-X", name if value is True else f"{name}={value}"]
    return options


def worker_options(python: str) -> list[str]:
    """The interpreter options for the worker: the front's own when it runs in the front's
    interpreter (the user's program starts as the front did); none for another interpreter,
    which the front's options say nothing about."""
    return interpreter_options() if is_front_interpreter(python) else []


def worker_files() -> dict[str, bytes]:
    """The worker's files by the name each gets in its private folder (the worker module and its
    companions), from the installed package or from inside the zipapp."""
    from ..package_data import read
    from ..worker.protocol import COMPANIONS

    files = {"worker.py": read("worker", "stages.py")}
    for name in COMPANIONS:
        files[name + ".py"] = read("worker", name + ".py")
    return files


def share_bytecode(folder: str, sources: dict[str, bytes]) -> None:
    """Give the worker the installed package's bytecode of its companions, beside their copies.

    Loaded by path from a new folder, each would otherwise be compiled again on every check,
    before ``import torch`` (10-20 ms). Only for the front's own interpreter (the bytecode is
    this Python's) and an installed package (the zipapp has none). Each copy gets its original's
    time stamp, so Python's own check of the bytecode against its source (time stamp and size,
    or a hash) decides as it would in the package: bytecode that is stale, missing or unreadable
    is ignored and the source compiled, as before. The worker module itself runs as
    ``__main__``, whose bytecode Python never caches.
    """
    import importlib.util

    if getattr(sys, "pycache_prefix", None):
        return  # bytecode lives under the prefix, named by each source's path: none to share
    package = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "worker")
    cache = os.path.join(folder, "__pycache__")
    for name in sources:
        if name == "worker.py":
            continue
        original = os.path.join(package, name)
        try:
            compiled = importlib.util.cache_from_source(original)
            with open(compiled, "rb") as file:
                bytecode = file.read()
            stamp = os.stat(original)
            os.makedirs(cache, mode=0o700, exist_ok=True)
            with open(os.path.join(cache, os.path.basename(compiled)), "xb") as file:
                file.write(bytecode)
            os.utime(os.path.join(folder, name), ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
        except (OSError, NotImplementedError, ValueError):
            continue  # no bytecode to share (the zipapp, a package installed without it)


def run_worker(python: str, *, device: str, device_index: int, timeout_s: float,
               on_progress: ProgressCallback | None = None,
               on_started: Callable[[], None] | None = None,
               path0: str | None = None, caller: dict[str, Any] | None = None,
               extra: Sequence[str] = ()) -> WorkerRun:
    """Run the worker under ``python`` and return what happened, within ``timeout_s`` seconds.

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
    try:
        sources = worker_files()
    except OSError as exc:  # an install stripped of its worker module: not the system's fault
        return WorkerRun.not_started("error.not_started.worker_missing", _reason(exc))
    try:
        folder = tempfile.mkdtemp(prefix="kernodeck-")  # private: mode 0700
    except OSError as exc:
        return WorkerRun.not_started("error.not_started.temp_folder", _reason(exc))
    try:
        try:
            for name, source in sources.items():
                with open(os.path.join(folder, name), "wb") as file:
                    file.write(source)
            if is_front_interpreter(python):
                share_bytecode(folder, sources)
            worker_path = os.path.join(folder, "worker.py")
            events_path = os.path.join(folder, "events.jsonl")
            open(events_path, "wb").close()
        except OSError as exc:
            # EFBIG: the folder is fine, a file-size limit (ulimit -f) refused the files.
            key = ("error.not_started.file_size_limit" if exc.errno == errno.EFBIG
                   else "error.not_started.temp_not_writable")
            return WorkerRun.not_started(key, _reason(exc))
        options = worker_options(python)
        # --watch-front: the worker ends itself, its children and this folder once stdin (a
        # pipe only this process holds) reads end-of-file, whatever ended the front.
        # --deadline: the time limit below, the one way it reaches the worker (its library
        # stages and its collective end before it; see protocol.deadline_argument).
        argv = [python, *options, worker_path, "--events", events_path, "--device", device,
                "--device-index", str(device_index), "--watch-front",
                "--deadline", deadline_argument(timeout_s)]
        # Where the user's code imports from: its first import path (-I and -P keep a program's
        # own folder off its search path: nothing is to be put back), and the API caller's own
        # path, which wins over the flags (what its next import searches). In a file of the
        # private folder, never on the command line, which any user of the machine can read
        # (/proc/<pid>/cmdline): both name the user's folders.
        places: dict[str, Any] = {}
        if path0 is not None and not {"-I", "-P"} & set(options):
            places["path0"] = path0
        if caller is not None:
            places["caller"] = caller
        if places:
            with Folder.made(folder) as private, \
                    os.fdopen(private.open_new(PLACES_FILE, PRIVATE_MODE), "w",
                              encoding="utf-8") as file:
                json.dump(places, file)
            argv += ["--places", os.path.join(folder, PLACES_FILE)]
        argv += extra
        # The worker's output, readable by its owner only (it may hold anything).
        with Folder.made(folder) as private, \
                os.fdopen(private.open_new("stdout", PRIVATE_MODE, append=True), "ab") as out, \
                os.fdopen(private.open_new("stderr", PRIVATE_MODE, append=True), "ab") as err, \
                open(events_path, "rb") as events:
            run = _supervise(argv, captures=(out, err), events=events,
                             timeout_s=timeout_s, on_progress=on_progress, on_started=on_started)
        from .captures import last_stderr_line

        run.stderr_line = last_stderr_line(os.path.join(folder, "stderr"))
        return run
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _supervise(argv: list[str], *, captures: tuple[IO[bytes], IO[bytes]], events: IO[bytes],
               timeout_s: float, on_progress: ProgressCallback | None,
               on_started: Callable[[], None] | None = None) -> WorkerRun:
    start = time.monotonic()
    deadline = start + timeout_s
    try:
        # The environment is inherited unchanged: the worker must see what the user's
        # application sees (CUDA_VISIBLE_DEVICES, LD_LIBRARY_PATH, PYTHONPATH...).
        process = spawn(argv, stdout=captures[0], stderr=captures[1], stdin=subprocess.PIPE,
                        hold_sigterm=True)
    except OSError as exc:
        return WorkerRun.not_started("error.not_started.interpreter", _reason(exc))
    outcome: Outcome = "timeout"
    cpu_s: float | None = None
    exit_watch = _ExitWatch(process)
    try:
        from .captures import bound_capture
        from .events import EventReader

        reader = EventReader(events)
        state = reader.state
        if on_started is not None:
            on_started()
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            exit_watch.wait(min(POLL_INTERVAL_S, remaining))
            reader.poll()
            if process.returncode is not None:
                outcome = "finished" if state.final else "crashed"
                break
            if state.final and outcome != "finished":
                outcome = "finished"  # the result is in; what runs now is the worker's exit
                deadline = min(deadline, time.monotonic() + FINAL_GRACE_S)
            for capture in captures:
                bound_capture(capture)
            if on_progress is not None:
                on_progress(_where(state), time.monotonic() - start)
        if outcome == "timeout":
            # Was it working or waiting? The CPU time it used, read before it is killed.
            cpu_s = process_cpu_seconds(process.pid)
    finally:
        exit_watch.close()
        kill_tree(process)
        # Only once the tree is dead: the worker's watch would otherwise read end-of-file first.
        if process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
    reader.poll()
    reader.close()
    if outcome == "crashed" and state.final:
        outcome = "finished"  # the final event landed between the last read and the exit
    return WorkerRun(state, outcome, process.returncode, time.monotonic() - start,
                     cpu_s=cpu_s)


class _ExitWatch:
    """Waits for the worker's exit. With a pidfd (Linux 5.3+), a descriptor readable the moment
    the process exits, the wait ends as it exits; ``Popen.wait``'s own polling, used elsewhere,
    notices an exit only up to tens of milliseconds later, which every check would wait for
    after its final event."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self._process = process
        self._pidfd: int | None = None
        pidfd_open = getattr(os, "pidfd_open", None)
        if pidfd_open is not None:
            with contextlib.suppress(OSError):  # an older kernel, or a sandbox that refuses it
                self._pidfd = pidfd_open(process.pid)

    def wait(self, timeout_s: float) -> None:
        """At most ``timeout_s``; ``returncode`` is set when the process has exited."""
        if self._pidfd is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._process.wait(timeout_s)
            return
        try:
            select.select([self._pidfd], [], [], timeout_s)
        except (OSError, ValueError):  # a descriptor select cannot take: poll, as elsewhere
            self.close()
            self.wait(timeout_s)
            return
        self._process.poll()

    def close(self) -> None:
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None


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


def _reason(exc: OSError) -> str:
    """An OS error without the path it carries (the report must not hold one)."""
    return (exc.strerror or type(exc).__name__).lower()



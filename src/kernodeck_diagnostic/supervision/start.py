"""The worker's start: its private folder, its files and its process, before the request.

The check's critical path is the worker's: its interpreter's start, what it loads before
``import torch``, the import itself. So the worker is started before it is told what to check:
it loads what every check needs, then waits for the rest of its arguments, the *request*
(device, time limit, import path...), one line on its stdin (``--request-on-stdin``,
worker/stages.py). The supervisor sends it (``Started.send``) and supervises from then on.

The console script starts one first thing (``start_early``, cli.py), before it has even imported
what reading its command line needs: the front reads the command line while the worker's
interpreter starts, on another processor where there is one. The check then takes that worker
(``take``) when it runs in the same interpreter with the same options; otherwise (a usage error,
the help, another command, ``--python``, an API call) the worker is discarded, or none was
started and the check starts its own. A worker discarded before its request has imported nothing
of the user's and touched no device: it is killed, or reads end-of-file, removes its folder and
ends.

Everything this module imports is on the path to the worker's start: no ``dataclasses``, no
``argparse``, no ``json`` at its top (docs/performance.md).
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
from collections.abc import Sequence

from ..interpreter import is_front_interpreter
from ..safe_files import PRIVATE_MODE, Folder

# Neither typing's nor subprocess's (with threading, selectors, locale): they would lengthen the
# path to the worker's start. .process, which needs both, is loaded once the worker runs.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from typing import IO

    from .process import Spawned

# The worker's argument that makes it wait for its request on stdin (worker/stages.py).
REQUEST_ON_STDIN = "--request-on-stdin"


class NotStarted(Exception):
    """The worker could not be started: why, as a message key (``error.not_started.*``), and the
    system's reason, which names no path."""

    def __init__(self, key: str, detail: str) -> None:
        super().__init__(key, detail)
        self.key = key
        self.detail = detail


class Started:
    """A worker started in its private folder and waiting for its request; the files it writes
    (``stdout``, ``stderr``, its events) are read from here. ``close`` ends it all."""

    def __init__(self, python: str, options: list[str], argv: list[str], folder: str, *,
                 process: subprocess.Popen[bytes] | Spawned,
                 captures: tuple[IO[bytes], IO[bytes]], events: IO[bytes]) -> None:
        self.python = python
        self.options = options  # the interpreter's options (worker_options)
        self.argv = argv  # its command line: interpreter, options, script and first arguments
        self.folder = folder
        self.process = process
        self.captures = captures
        self.events = events
        self._stopped = False

    def path(self, name: str) -> str:
        """A file of the worker's private folder."""
        return os.path.join(self.folder, name)

    def send(self, request: Sequence[str]) -> None:
        """The rest of the worker's arguments, one JSON line on its stdin; the front writes
        nothing else there (the worker's watch reads the pipe's end as the front's)."""
        import json

        stdin = self.process.stdin
        if stdin is None:
            return
        try:
            stdin.write((json.dumps(list(request)) + "\n").encode("utf-8"))
            stdin.flush()
        except OSError:  # the worker ended before reading it: its supervision says how
            return

    def stop(self) -> None:
        """Kill the worker's process tree (once), then close its stdin: closed first, the
        worker's watch would read end-of-file and end the worker itself."""
        if self._stopped:
            return
        self._stopped = True
        from .process import kill_tree

        kill_tree(self.process)
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()

    def close(self) -> None:
        """Stop the worker if it still runs, close its files and remove its folder."""
        try:
            self.stop()
        finally:
            for file in (*self.captures, self.events):
                with contextlib.suppress(OSError):
                    file.close()
            import shutil

            shutil.rmtree(self.folder, ignore_errors=True)


def start(python: str, *, early: bool = False) -> Started:
    """Start the worker under ``python`` in a new private folder (mode 0700); it waits for its
    request. ``NotStarted`` says why it could not be. ``early``: first thing in the console
    script, before ``subprocess`` is loaded (``spawn_early``, where the system allows it)."""
    try:
        sources = worker_files()
    except OSError as exc:  # an install stripped of its worker module: not the system's fault
        raise NotStarted("error.not_started.worker_missing", reason(exc)) from None
    try:
        folder = private_folder()
    except OSError as exc:
        raise NotStarted("error.not_started.temp_folder", reason(exc)) from None
    opened: list[IO[bytes]] = []
    try:
        try:
            for name, source in sources.items():
                with open(os.path.join(folder, name), "wb") as file:
                    file.write(source)
            if is_front_interpreter(python):
                share_bytecode(folder, sources)
            events_path = os.path.join(folder, "events.jsonl")
            open(events_path, "wb").close()
        except OSError as exc:
            # EFBIG: the folder is fine, a file-size limit (ulimit -f) refused the files.
            key = ("error.not_started.file_size_limit" if exc.errno == errno.EFBIG
                   else "error.not_started.temp_not_writable")
            raise NotStarted(key, reason(exc)) from None
        # --watch-front: the worker ends itself, its children and this folder once stdin (a
        # pipe only this process holds) reads end-of-file, whatever ended the front. Its other
        # arguments come with the request (``Started.send``).
        options = worker_options(python)
        argv = [python, *options, os.path.join(folder, "worker.py"),
                "--events", events_path, "--watch-front", REQUEST_ON_STDIN]
        # The worker's output, readable by its owner only (it may hold anything).
        with Folder.made(folder) as private:
            opened.append(os.fdopen(private.open_new("stdout", PRIVATE_MODE, append=True), "ab"))
            opened.append(os.fdopen(private.open_new("stderr", PRIVATE_MODE, append=True), "ab"))
        opened.append(open(events_path, "rb"))  # noqa: SIM115 - Started.close closes it
        out, err, events = opened
        try:
            # The environment is inherited unchanged: the worker must see what the user's
            # application sees (CUDA_VISIBLE_DEVICES, LD_LIBRARY_PATH, PYTHONPATH...).
            if early and SPAWNS_EARLY:
                process: subprocess.Popen[bytes] | Spawned = spawn_early(argv, out, err)
            else:
                import subprocess

                from .process import spawn

                process = spawn(argv, stdout=out, stderr=err, stdin=subprocess.PIPE,
                                hold_sigterm=True)
        except OSError as exc:
            raise NotStarted("error.not_started.interpreter", reason(exc)) from None
    except BaseException:
        for made in opened:
            made.close()
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
        raise
    return Started(python, options, argv, folder, process=process, captures=(out, err),
                   events=events)


# -- started before the command line is read ------------------------------------------------------

# Where the worker can be started without ``subprocess``: Linux, where this process's open
# descriptors are listed in /proc (to close those Popen's close_fds would), with posix_spawn.
SPAWNS_EARLY = sys.platform.startswith("linux") and hasattr(os, "posix_spawn")


def spawn_early(argv: list[str], stdout: IO[bytes], stderr: IO[bytes]) -> Spawned:
    """Start the worker as ``process.spawn`` does, with ``os.posix_spawn``: ``subprocess`` (with
    threading, selectors, locale: about 10 ms here) is not loaded yet.

    As with ``spawn(..., stdin=PIPE, hold_sigterm=True)`` and Popen's defaults: a new session
    (``setsid``), SIGTERM blocked until the worker unblocks it, SIGPIPE and SIGXFSZ at their
    default actions again, the standard descriptors only (every other one this process could
    pass on is closed), and stdin a pipe whose write end stays here. Once it runs, the worker
    is counted among the children ``process.kill_all`` ends. ``OSError`` (and
    ``NotImplementedError`` where posix_spawn has no ``setsid``) when it cannot start.
    """
    import signal

    if sys.platform == "win32":  # never: SPAWNS_EARLY is Linux's
        raise OSError(errno.ENOSYS, "no posix_spawn here")
    read, write = os.pipe()  # neither end inheritable
    try:
        out, err = stdout.fileno(), stderr.fileno()
        if min(read, out, err) <= 2:
            # A standard descriptor of this process is closed: one of these took its number,
            # and posix_spawn's dup2 onto itself would leave it to be closed at exec. Popen
            # handles that case (the check starts its own worker).
            raise OSError(errno.EBADF, "a standard descriptor is closed")
        actions: list[tuple[int, ...]] = [
            (os.POSIX_SPAWN_DUP2, read, 0), (os.POSIX_SPAWN_DUP2, out, 1),
            (os.POSIX_SPAWN_DUP2, err, 2)]
        actions += [(os.POSIX_SPAWN_CLOSE, fd) for fd in _inheritable_descriptors()]
        held = signal.pthread_sigmask(signal.SIG_BLOCK, ())  # this thread's mask, unchanged
        pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=actions, setsid=True,
                             setsigmask={*held, signal.SIGTERM},
                             setsigdef=(signal.SIGPIPE, signal.SIGXFSZ))
    except BaseException:
        os.close(write)
        raise
    finally:
        os.close(read)
    from .process import Spawned, adopt  # the worker runs: from here on, off its path

    stdin = os.fdopen(write, "wb")
    process = Spawned(pid, argv, stdin)
    try:
        adopt(process)
    except OSError:
        stdin.close()
        raise
    return process


def _inheritable_descriptors() -> list[int]:
    """This process's open descriptors above the standard three that a child would inherit."""
    found = []
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2:
            with contextlib.suppress(OSError):  # the listing's own, closed by now
                if os.get_inheritable(fd):
                    found.append(fd)
    return found


_EARLY: list[Started] = []


def start_early() -> None:
    """The console script's first step, for what is most likely a check: this interpreter's
    worker started while the front reads its command line (``take`` hands it to the check).

    A guess, never a decision: a wrong one costs a worker started and discarded, or a check that
    starts its own. Any failure here is left to that check, which says what it is.
    """
    try:
        _EARLY.append(start(sys.executable, early=True))
    except Exception:  # the check starts its worker itself, and says why it could not
        return


def take(python: str) -> Started | None:
    """The worker ``start_early`` started, if it suits a check under ``python``: the very
    interpreter it was started with, with the same options. Otherwise it is discarded and the
    check starts its own."""
    if not _EARLY:
        return None
    started = _EARLY.pop()
    if started.python == python and started.options == worker_options(python):
        return started
    started.close()
    return None


def discard_early() -> None:
    """End the early worker if no check took it (a usage error, the help, an interruption)."""
    while _EARLY:
        _EARLY.pop().close()


# -- what the worker is started with --------------------------------------------------------------

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
    """The worker's files by the name each gets in its private folder (its script, the worker
    module and its companions), from the installed package or from inside the zipapp."""
    from ..package_data import read
    from ..worker import COMPANIONS  # not the protocol's: see there

    # The worker's script (worker/launcher.py) runs the worker module from its bytecode.
    files = {"worker.py": read("worker", "launcher.py"), "stages.py": read("worker", "stages.py")}
    for name in COMPANIONS:
        files[name + ".py"] = read("worker", name + ".py")
    return files


def share_bytecode(folder: str, sources: dict[str, bytes]) -> None:
    """Give the worker the package's bytecode of its module and companions, beside their copies.

    Loaded by path from a new folder, each would otherwise be compiled again on every check,
    before ``import torch`` (15-25 ms). Only for the front's own interpreter: the bytecode is
    this Python's, named by its cache tag. An installed package has the bytecode pip compiled,
    checked against its source's time stamp: each copy gets its original's. The zipapp holds the
    bytecode of the interpreters it was built for (scripts/build_pyz.py), checked against the
    source's hash. Either way Python's own check of the bytecode against the copy of its source
    decides: bytecode that is stale, missing, of another Python or unreadable is ignored and the
    source compiled, as before. The worker's script (``worker.py``, the launcher) is run as
    ``__main__``, whose bytecode Python never caches: it is a few lines.
    """
    from ..package_data import bytecode_name, read

    if sys.implementation.cache_tag is None or getattr(sys, "pycache_prefix", None):
        # No bytecode at all, or it lives under the prefix, named by each source's path.
        return
    package = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "worker")
    cache = os.path.join(folder, "__pycache__")
    for name in sources:
        if name == "worker.py":
            continue
        compiled = bytecode_name(name)
        try:
            bytecode = read("worker", "__pycache__", compiled)
            if bytecode[4:8] == b"\0\0\0\0":  # PEP 552: checked by the source's time stamp
                stamp = os.stat(os.path.join(package, name))
                os.utime(os.path.join(folder, name), ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
            os.makedirs(cache, mode=0o700, exist_ok=True)
            with open(os.path.join(cache, compiled), "xb") as file:
                file.write(bytecode)
        except (OSError, ValueError):
            continue  # no bytecode to share (a package installed without it, another Python)


# Where tempfile looks first for its folder, in its order (POSIX).
_TEMP_VARIABLES = ("TMPDIR", "TEMP", "TMP")
_NAME_TRIES = 100


def private_folder() -> str:
    """A new folder only this user can enter (mode 0700, a name nobody can guess), where
    ``tempfile.mkdtemp`` puts it, made without loading ``tempfile`` (with ``shutil`` and
    ``random``: about 9 ms here, on the path to the worker's start) in the common case.

    On POSIX, the first folder that ``TMPDIR``, ``TEMP`` or ``TMP`` names, else ``/tmp``: where
    tempfile also begins. Anything else (that folder missing or not writable, Windows) is left
    to ``tempfile.mkdtemp`` itself, whose search goes on to the next place and raises
    ``OSError`` when there is none.
    """
    if os.name == "posix":
        root = next((os.environ[name] for name in _TEMP_VARIABLES if os.environ.get(name)),
                    "/tmp")  # noqa: S108 - a new name, made with mkdir's own exclusion
        for _ in range(_NAME_TRIES):
            path = os.path.join(os.path.abspath(root), "kernodeck-" + os.urandom(6).hex())
            try:
                os.mkdir(path, 0o700)
            except FileExistsError:
                continue
            except OSError:
                break
            return path
    import tempfile

    return tempfile.mkdtemp(prefix="kernodeck-")


def reason(exc: OSError) -> str:
    """An OS error without the path it carries (the report must not hold one)."""
    return (exc.strerror or type(exc).__name__).lower()

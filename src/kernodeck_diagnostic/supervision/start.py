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
import gc
import os
import sys
from collections.abc import Sequence

from ..interpreter import is_front_interpreter, started_as_a_program
from ..safe_files import PRIVATE_MODE, Folder, remove_folder

# Neither typing's nor subprocess's (with threading, selectors, locale): they would lengthen the
# path to the worker's start. .process, which needs both, is loaded once the worker runs.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from typing import IO, NoReturn

    from ..children import Spawned

# The worker's argument that makes it wait for its request on stdin (worker/stages.py).
REQUEST_ON_STDIN = "--request-on-stdin"


class NotStarted(Exception):
    """The worker could not be started: why, as a message key (``error.not_started.*``), and the
    system's reason, which names no path."""

    def __init__(self, key: str, detail: str, code: int | None = None) -> None:
        super().__init__(key, detail)
        self.key = key
        self.detail = detail
        self.errno = code  # the system's refusal (EMFILE, EAGAIN: supervision/tool_needs.py)


class Started:
    """A worker started in its private folder and waiting for its request; the files it writes
    (``stdout``, ``stderr``, its events) are read from here. ``close`` ends it all."""

    def __init__(self, python: str, options: list[str], argv: list[str], folder: str, *,
                 process: subprocess.Popen[bytes] | Spawned,
                 captures: tuple[IO[bytes], IO[bytes]], events: IO[bytes],
                 early: bool = False, done: int | None = None) -> None:
        self.python = python
        self.options = options  # the interpreter's options (worker_options)
        self.argv = argv  # its command line: interpreter, options, script and first arguments
        self.folder = folder
        self.process = process
        self.captures = captures
        self.events = events
        # Started by the console script (``start_early``): the process ends with its command.
        self.early = early
        # A forked worker's pipe, readable once it is done (``fork_early``), else None.
        self.done = done
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

    def stop(self, *, finished: bool = False) -> None:
        """Kill the worker's process tree (once), then close its stdin: closed first, the
        worker's watch would read end-of-file and end the worker itself. ``finished``: the
        worker has said its last word (its final event), and ends: one the console script
        started is not waited for (``early``: the process ends with its command, the system
        reaps the worker), while the system takes its memory back (torch's, 10-15 ms here; a
        GPU's context, longer)."""
        if self._stopped:
            return
        self._stopped = True
        from ..children import kill_tree

        kill_tree(self.process, reap=not (finished and self.early))
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
            if self.done is not None:
                os.close(self.done)
                self.done = None
            remove_folder(self.folder)


def start(python: str, *, early: bool = False) -> Started:
    """Start the worker under ``python`` in a new private folder (mode 0700); it waits for its
    request. ``NotStarted`` says why it could not be. ``early``: first thing in the console
    script, before ``subprocess`` is loaded: this process forked where that is safe
    (``can_fork_early``), else a new interpreter started with ``posix_spawn`` where the system
    has it (``spawn_early``)."""
    forks = early and can_fork_early(python)
    try:
        sources = {} if forks else worker_files()
    except OSError as exc:  # an install stripped of its worker module: not the system's fault
        raise NotStarted("error.not_started.worker_missing", reason(exc)) from None
    try:
        folder = private_folder()
    except OSError as exc:
        raise NotStarted("error.not_started.temp_folder", reason(exc), exc.errno) from None
    opened: list[IO[bytes]] = []
    try:
        try:
            for name, source in sources.items():
                with open(os.path.join(folder, name), "wb") as file:
                    file.write(source)
            if forks:
                room_for_the_worker(folder)
            if is_front_interpreter(python):
                share_bytecode(folder, sources)
            events_path = os.path.join(folder, "events.jsonl")
            open(events_path, "wb").close()
        except OSError as exc:
            # EFBIG: the folder is fine, a file-size limit (ulimit -f) refused the files.
            key = ("error.not_started.file_size_limit" if exc.errno == errno.EFBIG
                   else "error.not_started.temp_not_writable")
            raise NotStarted(key, reason(exc), exc.errno) from None
        # --watch-front: the worker ends itself, its children and this folder once stdin (a
        # pipe only this process holds) reads end-of-file, whatever ended the front. Its other
        # arguments come with the request (``Started.send``).
        options = worker_options(python)
        words = ["--events", events_path, "--watch-front", REQUEST_ON_STDIN]
        argv = [python, *options, os.path.join(folder, "worker.py"), *words]
        # The worker's output, readable by its owner only (it may hold anything).
        with Folder.made(folder) as private:
            opened.append(os.fdopen(private.open_new("stdout", PRIVATE_MODE, append=True), "ab"))
            opened.append(os.fdopen(private.open_new("stderr", PRIVATE_MODE, append=True), "ab"))
        opened.append(open(events_path, "rb"))  # noqa: SIM115 - Started.close closes it
        out, err, events = opened
        try:
            process, done = _launch(argv, words, (out, err), forks=forks, early=early)
        except OSError as exc:
            raise NotStarted("error.not_started.interpreter", reason(exc),
                             exc.errno) from None
    except BaseException:
        for made in opened:
            made.close()
        remove_folder(folder)
        raise
    return Started(python, options, argv, folder, process=process, captures=(out, err),
                   events=events, early=early, done=done)


def _launch(argv: list[str], words: list[str], output: tuple[IO[bytes], IO[bytes]], *,
            forks: bool, early: bool) -> tuple[subprocess.Popen[bytes] | Spawned, int | None]:
    """Start the worker of ``start``, ``argv`` with ``output`` as its stdout and stderr: this
    process forked (with the pipe it says it is done on), or a new interpreter.

    The environment is inherited unchanged: the worker must see what the user's application
    sees (CUDA_VISIBLE_DEVICES, LD_LIBRARY_PATH, PYTHONPATH...).
    """
    if forks:
        return fork_early(argv, words, *output)
    if early and SPAWNS_EARLY:
        return spawn_early(argv, *output), None
    import subprocess

    from ..children import spawn

    return spawn(argv, stdout=output[0], stderr=output[1], stdin=subprocess.PIPE,
                 hold_sigterm=True), None


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
    return _adopted(pid, argv, write)


def _adopted(pid: int, argv: list[str], write: int, *others: int) -> Spawned:
    """The worker started as ``pid``, its stdin's write end ``write``, counted among the
    children ``process.kill_all`` ends; ``OSError`` (``write`` and ``others`` closed) when this
    process is already ending (``process.adopt``)."""
    from ..children import Spawned, adopt  # the worker runs: from here on, off its path

    stdin = os.fdopen(write, "wb")
    process = Spawned(pid, argv, stdin)
    try:
        adopt(process)
    except OSError:
        stdin.close()
        for fd in others:
            os.close(fd)
        raise
    return process


# Where the worker can be this very process, forked: Linux, where a fork is cheap and safe (macOS's
# system libraries may not survive one; Windows has none). See ``fork_early``.
FORKS_EARLY = SPAWNS_EARLY and hasattr(os, "fork")


def can_fork_early(python: str) -> bool:
    """Whether the early worker under ``python`` can be this process forked: the front's own
    interpreter, where forks are safe, in a process that runs no other thread (a fork copies only
    the calling thread: a lock another one held, in a library a start-up hook loaded, would stay
    locked in the worker), started as the command itself (``started_as_a_program``)."""
    if not (FORKS_EARLY and is_front_interpreter(python) and started_as_a_program()):
        return False
    try:
        with open("/proc/self/status", "rb") as status:
            threads = [line for line in status if line.startswith(b"Threads:")]
    except OSError:
        return False
    return threads == [b"Threads:\t1\n"]


def fork_early(argv: list[str], words: list[str], stdout: IO[bytes],
               stderr: IO[bytes]) -> tuple[Spawned, int]:
    """Start the worker as this process forked: it runs the worker module (``worker/stages.py``)
    with ``words``, its arguments, as a fresh interpreter would run it under ``argv``. The
    worker, and a pipe readable once it is done: its output flushed, its last event written,
    nothing left but its exit (``_become_worker``), which a check need not wait for (the system
    taking back its memory: torch's, 10-15 ms here; a GPU context's, longer).

    A fresh interpreter costs the check its start (about 12 ms here), the worker's files copied
    and read again, and every module the front had loaded already, each loaded a second time
    before ``import torch``; the forked worker starts from this process's memory, and loads what
    every check needs while the front reads its command line. It is set up as ``spawn_early``
    sets up its interpreter (a new session, SIGTERM blocked, the standard descriptors only:
    ``_become_worker``), and as that interpreter would start the user's program (the import
    path, ``__main__``: ``_as_a_fresh_interpreter``). What a fork cannot give, the modules a
    fresh interpreter has loaded before a script's first line (a module of the user's named like
    one of them hides nothing), the worker asks a fresh interpreter when it needs it
    (``origin.preloaded``).
    """
    import signal

    if sys.platform == "win32":  # never: FORKS_EARLY is Linux's
        raise OSError(errno.ENOSYS, "no fork here")
    read, write = os.pipe()  # neither end inheritable
    try:
        done, says_done = os.pipe()
    except OSError:
        os.close(read)
        os.close(write)
        raise
    try:
        out, err = stdout.fileno(), stderr.fileno()
        if min(read, out, err) <= 2:  # as in spawn_early: Popen's case
            raise OSError(errno.EBADF, "a standard descriptor is closed")
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
        try:
            pid = os.fork()
            if pid == 0:
                _become_worker(argv, words, (read, out, err), [write, done], says_done)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
    except BaseException:
        os.close(write)
        os.close(done)
        raise
    finally:
        os.close(read)
        os.close(says_done)
    return _adopted(pid, argv, write, done), done


def _become_worker(argv: list[str], words: list[str], standard: tuple[int, int, int],
                   front_ends: list[int], says_done: int) -> NoReturn:
    """The forked worker: its own session, ``standard`` as its stdin, stdout and stderr, none
    of the front's inheritable descriptors (as ``spawn_early`` closes them) nor the front's ends
    of its pipes (``front_ends``: the lifeline's end is the front's death, which the worker's
    watch waits for); then the worker module's ``main``. The other descriptors stay: a fresh
    interpreter would have opened its own (a start-up hook's log file), and what holds them here
    would fail without them. It never returns into the front's code: it ends as the worker's
    script ends (``worker/launcher.py``), or as a Python program ends on an exception it did not
    catch, its output flushed, then a line on ``says_done``, then its exit."""
    status = 1
    try:
        # The front's objects, alive in the worker for good, out of its collector's reach: torch's
        # import runs the collector again and again, which would traverse them and write into
        # each one's header, a copy of every page they share with the front (copy-on-write).
        gc.freeze()
        if sys.platform != "win32":  # always: FORKS_EARLY is Linux's
            os.setsid()
        for target, fd in enumerate(standard):
            os.dup2(fd, target)
        for fd in {*standard, *front_ends, *_inheritable_descriptors()}:
            with contextlib.suppress(OSError):
                os.close(fd)
        script = argv[-len(words) - 1]
        _as_a_fresh_interpreter(script, words)
        from .. import MODULES_AT_START
        from ..worker import origin, stages

        stages.PRIVATE_FOLDER = os.path.dirname(script)
        stages.STARTUP_MODULES = MODULES_AT_START
        origin.STARTUP_PROBE = [argv[0], *interpreter_options()]
        status = stages.main(words)
    except SystemExit as exc:
        status = _exit_status(exc.code)
    except KeyboardInterrupt:  # told, then ended by SIGINT itself, as Python ends a program
        import signal

        with contextlib.suppress(BaseException):
            sys.excepthook(*sys.exc_info())
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    except BaseException:
        with contextlib.suppress(BaseException):
            sys.excepthook(*sys.exc_info())
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(BaseException):
                stream.flush()
        with contextlib.suppress(OSError):
            os.write(says_done, b"\n")
        os._exit(status)


def _exit_status(code: object) -> int:
    """The exit status ``sys.exit(code)`` gives a Python program."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    with contextlib.suppress(BaseException):
        sys.stderr.write(f"{code}\n")
    return 1


def _as_a_fresh_interpreter(script: str, words: list[str]) -> None:
    """What the user's program would see, were it ``script`` run with ``words`` as arguments:
    the script's folder first on the import path where the flags put one there, the start-up's
    path after it; a ``__main__`` of its own (not the front's, which a library that starts
    Python processes, such as multiprocessing's spawn, would run again); stdout buffered as a
    fresh interpreter buffers a file. The zipapp's importer stays (``_zipapp``): the worker's
    modules load with it from the archive's bytecode, and for an archive on the user's import
    path it loads what zipimport would, from that archive's own checked bytecode if it holds
    any."""
    from .. import PATH_AT_START

    path = list(PATH_AT_START)
    safe = getattr(sys.flags, "safe_path", False)  # -P, and -I from 3.11 on
    if path and not safe:
        path[0] = os.path.dirname(script)
    elif path and _is_this_archive(path[0]):
        # The single-file download is first even under -P (Python runs it from there): a script
        # run under -P has nothing of its own on its path.
        del path[0]
    sys.path[:] = path
    sys.argv[:] = [script, *words]
    main = type(sys)("__main__")
    main.__builtins__ = sys.modules["builtins"]  # type: ignore[attr-defined]
    sys.modules["__main__"] = main
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if getattr(sys.stdout, "line_buffering", False) and reconfigure and not os.isatty(1):
        with contextlib.suppress(Exception):
            reconfigure(line_buffering=False)


def _is_this_archive(entry: str) -> bool:
    """Whether ``entry`` is the archive the front's package was loaded from (the zipapp)."""
    package_file = getattr(sys.modules.get(__name__.partition(".")[0]), "__file__", None)
    archive = os.path.dirname(os.path.dirname(package_file or ""))
    try:
        return os.path.isfile(archive) and os.path.samefile(entry, archive)
    except (OSError, ValueError):
        return False


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
    if few_descriptors():
        return
    try:
        _EARLY.append(start(sys.executable, early=True))
    except Exception:  # the check starts its worker itself, and says why it could not
        return


# Below this soft limit on open files (``ulimit -n``), the early worker is not started: it holds
# descriptors of its own while the front reads its command line and loads its modules, and its
# forked copy holds the front's too. The check's own worker needs fewer (a limit of 10 is enough
# for it, where torch itself needs 6): the tool's needs never cost a check it can run.
EARLY_START_FILES = 64


def few_descriptors() -> bool:
    """Whether this process may open fewer than ``EARLY_START_FILES`` files (``sysconf``: no
    module to load on the worker's path)."""
    sysconf = getattr(os, "sysconf", None)  # POSIX only: Windows starts no early fork either
    if sysconf is None:
        return False
    try:
        return 0 < int(sysconf("SC_OPEN_MAX")) < EARLY_START_FILES
    except (OSError, ValueError):
        return False


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


# What a forked worker's folder must have room for (its events and output), as the files of a
# worker started anew took: a full disk or a file-size limit is said before it starts.
WORKER_ROOM = 64 * 1024


def room_for_the_worker(folder: str) -> None:
    """Write ``WORKER_ROOM`` bytes into ``folder`` and remove them: ``OSError`` (ENOSPC, EFBIG)
    when the worker would find no room there for what it writes."""
    path = os.path.join(folder, "room")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                 0o600)
    try:
        left = memoryview(bytes(WORKER_ROOM))
        while left:  # a nearly full disk takes part of it, then refuses the rest
            left = left[os.write(fd, left):]
    finally:
        os.close(fd)
        os.unlink(path)


# Where tempfile looks first for its folder, in its order (POSIX).
_TEMP_VARIABLES = ("TMPDIR", "TEMP", "TMP")
_NAME_TRIES = 100


def private_folder() -> str:
    """A new folder only this user can enter (mode 0700, a name nobody can guess), where
    ``tempfile.mkdtemp`` puts it, made without loading ``tempfile`` (with ``shutil`` and
    ``random``: about 9 ms here, on the path to the worker's start) in the common case.

    On POSIX, the first folder that ``TMPDIR``, ``TEMP`` or ``TMP`` names, else ``/tmp``: where
    tempfile also begins. Anything else (that folder missing or not writable, Windows) is left
    to ``tempfile.mkdtemp`` itself, whose search goes on to the next place. Where none of its
    places takes a folder (a full ``/tmp``, a read-only ``/var/tmp``, a working folder nobody
    can write), the tool's own needs are not a fault of the machine checked: the user's private
    runtime folder (``XDG_RUNTIME_DIR``) and ``/dev/shm`` are tried last, and ``OSError`` is
    raised when there is none.
    """
    if os.name == "posix":
        root = next((os.environ[name] for name in _TEMP_VARIABLES if os.environ.get(name)),
                    "/tmp")  # noqa: S108 - a new name, made with mkdir's own exclusion
        made = _made_in(root)
        if made is not None:
            return made
    import tempfile

    try:
        return tempfile.mkdtemp(prefix="kernodeck-")
    except OSError:
        if os.name != "posix":
            raise
        for last in (os.environ.get("XDG_RUNTIME_DIR"), "/dev/shm"):  # noqa: S108 - as above
            made = _made_in(last) if last else None
            if made is not None:
                return made
        raise


def _made_in(root: str) -> str | None:
    """A new private folder in ``root``, or None when ``root`` takes none."""
    for _ in range(_NAME_TRIES):
        path = os.path.join(os.path.abspath(root), "kernodeck-" + os.urandom(6).hex())
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            continue
        except OSError:
            return None
        return path
    return None


def reason(exc: OSError) -> str:
    """An OS error without the path it carries (the report must not hold one)."""
    return (exc.strerror or type(exc).__name__).lower()

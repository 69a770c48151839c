"""The worker: imports torch, reads its facts and runs the fixed computation, one stage at a time.

It is run by path, in the interpreter under diagnosis, from a private temporary folder, by its
script (``launcher.py``, copied there as ``worker.py``, which runs this module from its bytecode)
or as a script itself:

    python worker.py --events EVENTS.jsonl --device gpu --device-index 0

The protocol it speaks (stages, events, error kinds, bounds, expected values) is ``protocol``,
which the front imports too. Worker-side code that has a subject of its own (where torch comes
from, an accelerator, a library check, a collective) lives in a companion module of this folder,
named in ``protocol.COMPANIONS``, the protocol first: the supervisor copies each one beside this
file, and ``companion(name)`` loads it by file path, never through the import path that holds
the user's folder. Companions are loaded before that path is put in place (their
standard-library imports cannot be shadowed either), import nothing but the standard library at
their top, and reach this module as ``stages``::

    # Told by the module's name, not __package__: Python 3.9's zipimport runs a module of the
    # zipapp before setting __package__.
    if TYPE_CHECKING or not __name__.startswith("_kernodeck_worker_"):
        from . import stages
    else:  # copied beside the worker, which loaded this file (stages.companion)
        stages = sys.modules["_kernodeck_worker_stages"]

It depends on the standard library and torch only (the interpreter under diagnosis lacks our
package), runs on Python 3.9+, and writes newline-delimited JSON events to the events file as each
stage finishes, never to stdout (libraries print there). The supervisor decides the result code;
the worker only says what happened (the values it computed, never whether they are right), so a
crash or a hang still leaves the last stage reached. Messages are written raw but bounded; the
supervisor redacts them. The stages read their facts with the functions of the ``readings``
companion, which a Trial uses too (``readings.environment``) to read the facts of the program it
runs in (``trial/facts.py``); the front imports nothing from here.
"""

# ruff: noqa: E402 - the worker's own imports come after the note of what was loaded before them

from __future__ import annotations

import sys

# What the interpreter loads before a script's first line, as it does before the user's own
# script: a module of the user's named like one of these hides nothing (see origin.preloaded).
# Set by the worker's script (launcher.py) before this module runs; read now when it is the script.
STARTUP_MODULES: frozenset[str] = globals().get("STARTUP_MODULES") or frozenset(sys.modules)
# A worker forked from the front (supervision/start.py): its private folder, without its files.
PRIVATE_FOLDER: str | None = None

import contextlib
import json
import os
import shutil
import signal
import time
import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Callable, Protocol, TextIO

_BY_PATH_PREFIX = "_kernodeck_worker_"
# The package this module was imported from, by its name (see the module's docstring); "" when
# it runs by path: as __main__, or run by runpy.
_PACKAGE = __name__.rpartition(".")[0]


def companion(name: str) -> Any:
    """The companion module ``name``: the package's when this module was imported from it, else
    the file copied beside this one (the worker run by path)."""
    import importlib

    if _PACKAGE:  # imported from the package (by the front's Trial, or a test)
        return importlib.import_module(f"{_PACKAGE}.{name}")
    loaded = sys.modules.get(_BY_PATH_PREFIX + name)
    if loaded is not None:
        return loaded
    import importlib.util

    sys.modules.setdefault(_BY_PATH_PREFIX + "stages", sys.modules[__name__])
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), name + ".py")
    spec = importlib.util.spec_from_file_location(_BY_PATH_PREFIX + name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"the worker's companion module {name} is missing")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    # Its bytecode is not written: it would go into this run's folder, removed at the end, or
    # under a PYTHONPYCACHEPREFIX, where one tree per run would pile up.
    writes, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = writes
    return module


# The protocol, first of all: the stages below are written in its words.
if TYPE_CHECKING or _PACKAGE:
    from . import protocol
else:  # run by path: the copy beside this file
    protocol = companion("protocol")


class StageError(Exception):
    """A diagnosed failure: the stage ends and the worker stops after reporting it.

    Either an exception (its type and message are reported) or a sentence of the tool's own,
    named by a key of the front's message catalog (``error.*``) and its values: the front writes
    it in English in the report and in the user's language on the terminal.
    """

    def __init__(self, kind: protocol.ErrorKind, exc: BaseException | None = None, key: str = "",
                 **values: Any) -> None:
        super().__init__(key)
        self.kind = kind
        self.exc = exc
        self.key = key
        self.values = values


class ComputeFailure(Exception):
    """The fixed computation failed at ``step``: the exception, and its kind."""

    def __init__(self, step: protocol.Step, exc: BaseException, kind: protocol.ErrorKind) -> None:
        super().__init__(step)
        self.step = step
        self.exc = exc
        self.kind = kind


class EventSink(Protocol):
    """Where a Worker's events go (Events: the events file)."""

    def emit(self, event: protocol.EventName, **fields: Any) -> None: ...


class Events:
    """Appends one JSON object per line to the events file, flushed at once."""

    def __init__(self, path: str) -> None:
        self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 - lives as long as the run
        self.path = path  # in the run's private folder: the extensions' children write there
        self._start = self.start = time.monotonic()

    def emit(self, event: protocol.EventName, **fields: Any) -> None:
        record = {"event": event, "t_ms": round((time.monotonic() - self._start) * 1000, 1)}
        record.update(fields)
        self._file.write(json.dumps(record, ensure_ascii=True, default=str) + "\n")
        self._file.flush()


def describe_exception(exc: BaseException) -> dict[str, Any]:
    info: dict[str, Any] = {"type": type(exc).__name__, "message": protocol.bounded(str(exc))}
    if isinstance(exc, ModuleNotFoundError):
        info["missing_module"] = exc.name
    return info


class Worker:
    def __init__(self, events: EventSink, device: str, index: int,
                 path0: str | None = None) -> None:
        self.events = events
        self.device = device
        self.index = index
        self.path0 = path0
        self.torch: Any = None
        self.all_devices = False  # --all-devices: every visible device (see all_devices.py)
        self.backend = "cpu"
        # The GPU backend's devices (accelerators.Accelerator; None in CPU mode), how many are
        # visible, and where the computation runs (``cuda:0``, ``xpu:1``, ``mps``, ``cpu``): the
        # stages after compute run on that same device (``accelerator.module`` is its torch API).
        self.accelerator: Any = None
        self.visible_count = 0
        self.target = "cpu"
        # --distributed: this rank's place in the job (see collective.py); None otherwise.
        self.distributed: dict[str, Any] | None = None
        self.failure: dict[str, Any] | None = None  # the first error event's fields
        self.result: dict[str, Any] | None = None  # the ``result`` event's values
        # --extensions, --kernels: the library stages asked for (libraries.py).
        self.libraries: frozenset[str] = frozenset()
        # The front's time limit as this process's time.monotonic() (--deadline, see
        # protocol.deadline_argument; None when run without one): the library stages and the
        # collective end before it.
        self.deadline: float | None = None
        self.torch_found: str | None = None  # the file `import torch` would run (stage_import)
        self.installs: list[Any] | None = None  # torch judged against these (stage_import)
        self.caller: dict[str, Any] | None = None  # --places (supervisor.run_worker)

    def run(self) -> None:
        runtime = companion("runtime")
        self.facts("runtime", warnings_as_errors=runtime.warnings_as_errors(),
                   tracemalloc_frames=runtime.tracemalloc_frames())
        # Each stage's name is the protocol's (STAGES), never its method's: renaming a method
        # changes no report.
        bodies: dict[protocol.Stage, Callable[[], None]] = {
            "interpreter": self.stage_interpreter, "import": self.stage_import,
            "backend": self.stage_backend, "device": self.stage_device,
            "compute": self.stage_compute,
            "extensions": lambda: companion("extensions").stage_extensions(self),
            "kernels": lambda: companion("kernels").stage_kernels(self),
        }
        for name in protocol.STAGES:
            if name == "collective":
                continue  # below: it also runs after a failed stage
            if name in protocol.LIBRARY_STAGES and name not in self.libraries:
                continue  # only when asked: the check stays as fast as it is
            passed = self._run_stage(name, bodies[name])
            if name == "import" and self.caller is not None:
                # The API's caller: its own torch against this one's, said as soon as it is
                # known, so that a later hang or crash does not take it from the report.
                self.facts("runtime", caller=companion("origin").caller_state(self))
            if not passed:
                break
        if self.distributed is not None and self.torch is not None:
            # Also after this rank's own check failed: the other ranks learn it from the job's
            # store instead of waiting for this rank until their time runs out.
            self._run_stage("collective", lambda: companion("collective").stage(self))
        self.events.emit("final")

    def _run_stage(self, name: protocol.Stage, body: Callable[[], None]) -> bool:
        self.events.emit("stage_started", stage=name)
        start = time.monotonic()
        caught: list[tuple[str, str]] = []
        with recording_warnings(caught):
            try:
                body()
                failure: StageError | None = None
            except StageError as err:
                failure = err
            except Exception as exc:  # a stage that fails in an unforeseen way is still reported
                # (a warning that the user's filters turn into an error among them)
                failure = StageError("import_failed" if name == "import" else "runtime_error", exc)
        for category, message in caught:
            self.events.emit("warning", stage=name, category=category, message=message)
        duration = round((time.monotonic() - start) * 1000, 1)
        if failure is not None:
            error: dict[str, Any] = {"stage": name, "kind": failure.kind}
            if failure.exc is not None:
                error.update(describe_exception(failure.exc))
            else:
                error.update(type=None, message_key=failure.key,
                             message_values={k: protocol.bounded(str(v))
                                             for k, v in failure.values.items()})
            self.events.emit("error", **error)
            self.failure = self.failure or error
            self.events.emit("stage_failed", stage=name, duration_ms=duration)
            return False
        self.events.emit("stage_finished", stage=name, duration_ms=duration)
        return True

    def facts(self, block: protocol.FactBlock, **values: Any) -> None:
        self.events.emit("facts", block=block, values=values)

    # -- stages ---------------------------------------------------------------------------------

    def stage_interpreter(self) -> None:
        self.facts("runtime", **companion("runtime").interpreter())
        # For --show-paths only: the supervisor keeps these out of every report.
        self.events.emit("local_paths", interpreter=sys.executable, torch=None)

    def stage_import(self) -> None:
        self.facts("pytorch", imported=False)
        origin = companion("origin")  # where torch comes from, read without importing it
        origin.load_what_locating_reads()  # loaded already by a worker that waited its request
        import importlib.util

        # Import torch from where the user's own code would: the worker runs from a private
        # folder, so the import path is put back to the caller's (origin.user_import_path), once
        # the installed distributions are read (None when they cannot be: torch is then imported
        # unchecked): reading them loads csv, email, zipfile..., never the user's modules.
        path = origin.user_import_path(self.path0, self.caller)
        installs = origin.judged_installs(path, self)  # also self.installs, and the orphans
        sys.path[:] = path
        self.facts("runtime", local_modules=(local := origin.local_modules(
            self.path0, installs or [], (self.caller or {}).get("import_path"))))
        # Locate torch without running it (finding a top-level module executes nothing): a
        # module that is not the installed package is never imported, whatever it would do.
        try:
            spec = importlib.util.find_spec("torch")
        except Exception:  # a broken finder or entry: the import below says what it is
            spec = None
        located = (origin.locate(spec, installs) if spec is not None and installs is not None
                   else None)
        self.torch_found = getattr(spec, "origin", None)  # the file `import torch` would run
        if located is not None:
            kind, folder = located
            place = origin.place_of(folder, self.path0) if folder else "elsewhere"
            self.facts("pytorch", **companion("readings").located_facts(located, self.path0))
            if kind in origin.SHADOW_KINDS:
                # For --show-paths, on the terminal only: the very file or folder to rename.
                self.events.emit("local_paths", interpreter=sys.executable,
                                 torch=origin.module_path(spec) or folder)
                raise StageError("import_failed", key="error.torch_shadowed",
                                 module=origin.SHADOW_MODULES[kind], origin=place)
        try:
            torch = origin.import_torch(local)  # a json.py of the user's breaks it, as it does
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            self.facts("pytorch", import_error_origin=origin.failure_origin(exc, self.path0))
            with contextlib.suppress(Exception):  # the Python its _C is for; -S that hid it
                self.facts("pytorch", **companion("readings").failure_facts(exc, spec))
            raise StageError("import_failed", exc) from None
        self.events.emit("local_paths", interpreter=sys.executable,
                         torch=os.path.dirname(getattr(torch, "__file__", None) or "") or None)
        # A module without these is no PyTorch build, whatever it is: never a CPU-only one.
        missing = [name for name in ("version", "__version__") if not hasattr(torch, name)]
        if missing:
            raise StageError("import_failed", key="error.torch_incomplete",
                             missing=", ".join("torch." + name for name in missing))
        self.torch = torch
        self.facts("pytorch", **companion("readings").imported_facts(torch, located, self.path0))

    def stage_backend(self) -> None:
        for values in companion("readings").backend_facts(self.torch, gpu=self.device == "gpu",
                                                          installs=self.installs):
            self.backend = values.get("backend", self.backend)
            self.facts("pytorch", **values)
        if self.device == "gpu" and self.backend == "cpu":
            raise StageError("backend_absent", key="error.backend_absent")

    def stage_device(self) -> None:
        if self.device == "cpu":
            return  # CPU mode never asks the GPU driver anything: gpu facts stay null
        accelerators = companion("accelerators")
        self.accelerator = accelerator = accelerators.Accelerator(self.torch, self.backend)
        readings = companion("readings")
        try:
            available, count = readings.seen_devices(accelerator)
        except Exception as exc:
            raise StageError("gpu_unavailable", exc) from None
        self.visible_count = count
        self.facts("pytorch", **readings.availability_facts(accelerator, available, count))
        if not available or count == 0:
            reason = accelerator.initialisation_error()
            self.facts("pytorch", init_error=reason)
            said: dict[str, str] = {}
            if available:
                key = "error.no_visible_device.reason" if reason else "error.no_visible_device"
            elif accelerator.kind == "cuda":
                key = "error.gpu_unavailable.reason" if reason else "error.gpu_unavailable"
            else:  # the same sentence, naming the backend's own call
                key = ("error.backend_unavailable.reason" if reason
                       else "error.backend_unavailable")
                said = {"call": accelerator.available_call}
            failure = StageError("gpu_unavailable", key=key)
            failure.values.update(said, **({"reason": reason} if reason else {}))
            raise failure
        if self.distributed is not None and self.index >= count:
            # A rank's device is its local rank; a launcher that gives each task devices of its
            # own (srun --gpus-per-task) shows it fewer: they are shared out in turn.
            self.index %= count
        self.facts("pytorch", devices=readings.described_devices(accelerator, count, self.index))
        if not self.all_devices and not 0 <= self.index < count:
            raise StageError("device_index_invalid", key="error.device_index_invalid",
                             index=self.index, count=count)

    def stage_compute(self) -> None:
        on_gpu = self.device == "gpu"
        self.target = self.accelerator.target(self.index) if on_gpu else "cpu"
        if self.all_devices:  # every visible device, each with its own result
            companion("all_devices").check_every_device(self)
            return
        self.facts("execution", device=self.target, synchronized=False if on_gpu else None)
        start = time.monotonic()

        def reached(step: protocol.Step) -> None:
            if step == "verify" and on_gpu:  # the synchronisation returned
                self.facts("execution", synchronized=True)
            self.events.emit("step", stage="compute", step=step)

        try:
            result = self.fixed_computation(self.index if on_gpu else None, reached)
        except ComputeFailure as failure:
            self.events.emit("step_failed", stage="compute", step=failure.step)
            raise StageError(failure.kind, failure.exc) from None
        self.facts("execution", duration_ms=round((time.monotonic() - start) * 1000, 1))
        # The values themselves, not a verdict: the front compares them with EXPECTED.
        self.result = result
        self.events.emit("result", **result)

    def fixed_computation(self, index: int | None,
                          reached: Callable[[protocol.Step], None]) -> dict[str, Any]:
        """The fixed computation on the accelerator's device ``index`` (None: on the CPU): the
        values read back (the ``result`` event's). ``reached`` is told each step as it starts;
        a failure raises ComputeFailure, naming its step."""
        torch = self.torch
        accelerator = self.accelerator if index is not None else None
        target = accelerator.target(index) if accelerator is not None else "cpu"
        step: protocol.Step = "allocate"
        try:
            reached(step)
            if accelerator is not None:
                accelerator.set_device(index)
            a = torch.tensor(protocol.A_VALUES, dtype=torch.float32, device=target,
                             requires_grad=True)
            b = torch.tensor(protocol.B_VALUES, dtype=torch.float32, device=target)
            step = "product"
            reached(step)
            product = a @ b
            loss = (product ** 2).sum()
            step = "gradient"
            reached(step)
            loss.backward()
            if accelerator is not None:
                step = "synchronize"
                reached(step)
                accelerator.synchronize(index)
            step = "verify"
            reached(step)
            return {
                "product": encoded(product.detach().cpu().tolist()),
                "loss": encoded(loss.detach().cpu().item()),
                "gradient": encoded(a.grad.detach().cpu().tolist()) if a.grad is not None
                else None,
            }
        except Exception as exc:
            raise ComputeFailure(step, exc, "out_of_memory"
                                 if protocol.is_out_of_memory(torch, exc)
                                 else "runtime_error") from None


def encoded(values: Any) -> Any:
    """Values read back from the device (a number or nested lists of them), as JSON carries
    them: see encode_number."""
    if isinstance(values, (list, tuple)):
        return [encoded(item) for item in values]
    return protocol.encode_number(float(values))


@contextlib.contextmanager
def recording_warnings(into: list[tuple[str, str]]) -> Iterator[None]:
    """Keep the warnings the user's own filters let through, without changing those filters.

    The filters (``-W``, ``PYTHONWARNINGS``, ``-X dev``) act as they do in the user's program:
    'ignore' drops a warning, 'error' raises it, 'default' shows it once per place. Only the
    display is replaced: each warning shown is kept as (category, message), at most
    MAX_WARNINGS_PER_STAGE, and not printed.
    """
    def keep(message: Warning | str, category: type[Warning], filename: str, lineno: int,  # noqa: PLR0917 - showwarning's own signature
             file: TextIO | None = None, line: str | None = None) -> None:
        if len(into) < protocol.MAX_WARNINGS_PER_STAGE:
            name = getattr(category, "__name__", None) or type(message).__name__
            into.append((str(name), protocol.bounded(str(message))))

    previous = warnings.showwarning
    warnings.showwarning = keep
    try:
        yield
    finally:
        # A library that installed its own display meanwhile (logging.captureWarnings) keeps it.
        if warnings.showwarning is keep:
            warnings.showwarning = previous


def search_path0(path0: str | None) -> str | None:
    """The first import path to put back, or None when this interpreter's flags say none.

    Under -P, PYTHONSAFEPATH (3.11+) or -I a program's own folder is not searched: the user's
    code imports nothing from it, so neither does the worker.
    """
    if sys.flags.isolated or getattr(sys.flags, "safe_path", False):
        return None
    return path0


# -- the front's lifeline ------------------------------------------------------------------------

EXIT_FRONT_GONE = 129  # as a shell reports a process ended by a hang-up
EXIT_PYTHON_TOO_OLD = 3
MINIMUM_PYTHON = (3, 9)
# Where the front's watch is forked before the worker loads anything (main): while the process is
# the front's copy or a bare interpreter, a smaller one to copy, and which shares none of the
# pages the worker writes next (one copy each, on their first write, while torch imports).
WATCHES_FIRST = sys.platform.startswith("linux")


def watch_front(events_path: str) -> None:
    """End this worker, its children and its private folder as soon as the front is gone.

    The front gives the worker a pipe as stdin and keeps the only write end, closed once the
    front has ended by any cause (SIGKILL, a closed terminal, a crash), on every system
    (``_front_gone``). On POSIX the watch is a forked process, not a thread: a worker stuck in a
    native call that holds the GIL (a driver hung in its initialisation) would never let a thread
    run.
    The watch stays in the worker's process group, which the front kills at the end of every run.
    On Windows (no fork) it is a thread, which ends the worker alone: see docs/reliability.md.
    """
    folder = _private_folder(events_path)
    worker = os.getpid()
    if sys.platform != "win32":
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # 3.12+ warns about forking a threaded process
                child = os.fork()
        except OSError:
            child = -1  # no process to spare: the thread below watches instead
        if child == 0:
            try:
                protocol.watch_wakes_with_the_worker(worker)  # a frozen rank's: its poll decides
                if _front_gone():
                    _remove(folder)
                    _kill_worker(worker)  # its group: this watch goes with it
            finally:
                os._exit(0)
        if child > 0:
            return
    import threading
    # No process nor thread to spare (ulimit -u, pids.max): unwatched (docs/reliability.md).
    with contextlib.suppress(RuntimeError):
        threading.Thread(target=_watch_in_thread, args=(folder, worker), daemon=True,
                         name="front-watch").start()


def _watch_in_thread(folder: str | None, worker: int) -> None:
    if _front_gone():
        _remove(folder)  # on Windows, files still open here stay: see docs/reliability.md
        _kill_worker(worker)
        os._exit(EXIT_FRONT_GONE)


def _front_gone() -> bool:
    """Block until the front's end of stdin (a pipe) is closed; False when it cannot be watched.
    On Linux it is polled, never read: the watch starts before this worker has read its request
    from it (``main``); elsewhere it is read to its end-of-file, and starts after the request."""
    if sys.platform.startswith("linux"):  # WATCHES_FIRST, said so that mypy reads it
        import select

        poller = select.poll()
        poller.register(0, 0)  # no event asked for: a closed writer's POLLHUP always comes
        return not any(happened & select.POLLNVAL for _, happened in poller.poll())
    while True:
        try:
            if not os.read(0, 4096):  # the front never writes: anything read is ignored
                return True
        except OSError:  # no pipe to watch (closed, not readable): nothing says the front died
            return False


def _kill_worker(worker: int) -> None:
    """On POSIX, SIGKILL the worker's process group when the worker leads it (the front starts it
    as the leader of a new session); never a group it merely belongs to, such as a shell's."""
    if sys.platform == "win32":
        return  # the caller exits: Windows has no group to kill (see docs/reliability.md)
    if os.getpgid(0) == worker:
        os.killpg(worker, signal.SIGKILL)
    elif os.getpid() != worker and os.getppid() == worker:  # the forked watch, in a user's group
        os.kill(worker, signal.SIGKILL)


def _private_folder(events_path: str) -> str | None:
    """The run's private folder, the one holding the events file and this worker (or, forked, its
    script), if it is a ``kernodeck-`` folder: no other folder is ever removed."""
    folder = os.path.dirname(os.path.abspath(events_path))
    here = PRIVATE_FOLDER or os.path.dirname(os.path.abspath(__file__))
    if (os.path.basename(folder).startswith("kernodeck-")
            and os.path.normcase(folder) == os.path.normcase(here)):
        return folder
    return None


def _remove(folder: str | None) -> None:
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def release_sigterm(keep_pending: bool = False) -> None:
    """SIGTERM unblocked: the front forks this process with it blocked (children.py).
    One that arrived before this process had its own process group was meant for the front's
    group: discarded (ignoring a pending signal drops it), unless ``keep_pending`` (a rank's)."""
    if sys.platform == "win32":  # no signal mask there
        return
    dropped = signal.SIGTERM in signal.sigpending() and not keep_pending
    previous = signal.signal(signal.SIGTERM, signal.SIG_IGN) if dropped else signal.SIG_DFL
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    if dropped:
        signal.signal(signal.SIGTERM, previous)


def companions_used(args: Any) -> list[str]:
    """The companions this run uses, each loaded before the user's folder is on the import path.

    Those of an option (--all-devices, --launcher, --extensions and --kernels) only with it: each
    is compiled from source as it loads, several milliseconds apiece before ``import torch``, for
    code the default check never runs. Only the stages of that option call them.
    """
    used_only_with = {"all_devices": args.all_devices, "collective": args.launcher is not None,
                      "extensions": args.extensions, "kernels": args.kernels}
    return [name for name in protocol.COMPANIONS if used_only_with.get(name, True)]


def read_request() -> list[str] | None:
    """The rest of this worker's arguments: one line of stdin, a JSON list of words, which the
    front writes once it has read its own command line (supervision/start.py); None when the
    pipe ends first (the front did not need this worker, or is gone). Read from the descriptor,
    never through a buffer: the front writes nothing after the line, and what follows on the
    pipe, its end, is the front's watch's (``watch_front``)."""
    data = b""
    while not data.endswith(b"\n"):
        try:
            chunk = os.read(0, 65536)
        except OSError:  # no stdin to read: no request will come
            return None
        if not chunk:
            return None
        data += chunk
    words = json.loads(data)
    if not isinstance(words, list) or not all(isinstance(word, str) for word in words):
        raise ValueError("the request is not a list of words")
    return words


def _json_file(path: str) -> Any:
    with open(path, encoding="utf-8") as file:
        return json.load(file)


def _as_rank(worker: Worker, args: Any, deadline: float | None, held: bool) -> None:
    """--launcher: this rank's place (collective.place); then SIGTERM released if ``held``."""
    if args.launcher is not None:
        companion("collective").place(worker, args, deadline)
    if held:
        release_sigterm(keep_pending=args.launcher is not None)


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    if "--request-on-stdin" not in words and "--launcher" not in words:
        release_sigterm()  # else once the request says whether it is a rank's (_as_rank)
    if sys.version_info < MINIMUM_PYTHON:
        # Before any event: the front, seeing none, asks the interpreter its version and says
        # it is too old (a partial run on 3.7 or 3.8 would look like a diagnosis).
        sys.stderr.write(f"worker: Python {MINIMUM_PYTHON[0]}.{MINIMUM_PYTHON[1]} or newer is "
                         "needed\n")
        return EXIT_PYTHON_TOO_OLD
    import argparse  # here: the front, which imports this module, may not need it

    parser = argparse.ArgumentParser(prog="worker")
    parser.add_argument("--events", required=True)
    parser.add_argument("--request-on-stdin", action="store_true",
                        help="the other arguments come later, one line of stdin (read_request)")
    parser.add_argument("--device", choices=("gpu", "cpu"))
    parser.add_argument("--device-index", type=int, default=0)
    parser.add_argument("--places", type=_json_file, default={},
                        help="a JSON file: the first import path of the user's own code "
                        "(path0), the API caller's import path and torch (caller)")
    parser.add_argument("--watch-front", action="store_true",
                        help="stdin is a pipe the front holds: its end means the front is gone")
    parser.add_argument("--all-devices", action="store_true",
                        help="the computation on every visible device (all_devices.py)")
    # The front's time limit, as time.time() says it (protocol.deadline_argument).
    parser.add_argument("--deadline", type=float)
    # --distributed (collective.py): this rank's place in the job, the job's identity (--job).
    for name in ("--rank", "--world-size", "--local-rank", "--node", "--master-port"):
        parser.add_argument(name, type=int)
    parser.add_argument("--launcher")
    parser.add_argument("--master-addr")
    parser.add_argument("--job")
    for name in protocol.LIBRARY_STAGES:  # --extensions, --kernels (libraries.py)
        parser.add_argument(f"--{name}", action="store_true")
    args = parser.parse_args(words)
    if args.watch_front and WATCHES_FIRST:
        watch_front(args.events)
    if args.request_on_stdin:
        # Started before the front knew what to check (supervision/start.py): what every check
        # loads is loaded while the front reads its command line, then the request.
        for name in companions_used(args):
            companion(name)
        companion("origin").load_what_locating_reads()
        request = read_request()
        if request is None:  # the front did not need this worker, or is gone
            _remove(_private_folder(args.events))
            return 0
        args = parser.parse_args([*words, *request])
    if args.device is None:
        parser.error("the following arguments are required: --device")
    # First of all: the front's limit read on this process's clock as early as it can be.
    deadline = None if args.deadline is None else protocol.monotonic_deadline(args.deadline)
    if args.launcher is not None and deadline is None:
        parser.error("--launcher needs --deadline")
    if args.watch_front and not WATCHES_FIRST:
        watch_front(args.events)
    for name in companions_used(args):  # now, before the user's folder is on the import path
        companion(name)
    companion("runtime").dump_stacks(args.events, protocol.STACK_SIGNAL, protocol.STACK_FILE)
    events = Events(args.events)
    worker = Worker(events, args.device, args.device_index,
                    search_path0(args.places.get("path0")))
    worker.all_devices = args.all_devices
    worker.libraries = frozenset(name for name in protocol.LIBRARY_STAGES if getattr(args, name))
    worker.deadline, worker.caller = deadline, args.places.get("caller")
    _as_rank(worker, args, deadline, "--request-on-stdin" in words or "--launcher" in words)
    worker.run()
    return 0


if __name__ == "__main__":
    status = main()
    # Every event is written and flushed: skip the interpreter's teardown (unloading torch takes
    # 0.3-0.5 s), which the front would otherwise wait for with nothing left to learn.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)

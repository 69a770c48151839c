"""The worker: imports torch, reads its facts and runs the fixed computation, one stage at a time.

It is run by path, in the interpreter under diagnosis, from a private temporary folder:

    python worker.py --events EVENTS.jsonl --device gpu --device-index 0

Worker-side code that has a subject of its own (an accelerator, a library check, a collective)
lives in a companion module of this folder, named in COMPANIONS: the supervisor copies each one
beside this file, and ``companion(name)`` loads it by file path, never through the import path
that holds the user's folder. Companions are loaded before that path is put in place (their
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
supervisor redacts them. The protocol (stages, events, error kinds, bounds, expected values) is
defined at the top of this file, and the front imports it from here.
"""

# ruff: noqa: E402 - the worker's own imports come after the note of what was loaded before them

from __future__ import annotations

import sys

# What the interpreter loads before a script's first line, as it does before the user's own
# script: a module of the user's named like one of these hides nothing (see local_modules).
STARTUP_MODULES = frozenset(sys.modules)

import contextlib
import json
import math
import os
import shutil
import signal
import time
import warnings
from collections.abc import Iterator
from typing import Any, Callable, Literal, TextIO, get_args

# The worker's companion modules (see the module's docstring), by file name without ".py".
COMPANIONS: tuple[str, ...] = ("accelerators", "all_devices", "inventory", "collective",
                               "libraries")
_BY_PATH_PREFIX = "_kernodeck_worker_"


def companion(name: str) -> Any:
    """The companion module ``name``: the package's when the front imported this module, else
    the file copied beside this one (the worker run by path)."""
    import importlib

    if __name__ != "__main__":  # imported from the package (by the front, or a Trial)
        return importlib.import_module(f"{__name__.rpartition('.')[0]}.{name}")
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
    spec.loader.exec_module(module)
    return module


# -- the protocol ---------------------------------------------------------------------------------
# What the worker says and the front reads, defined here once: the front imports this module
# (never runs it) for these names, and holds every event to them on arrival (see
# supervision/events.py), because the interpreter under diagnosis may write anything.

# The stages, in the order they run. A stable report field: never derived from a method's name.
Stage = Literal["interpreter", "import", "backend", "device", "compute", "extensions", "kernels",
                "collective"]
STAGES: tuple[Stage, ...] = get_args(Stage)
# The kernels of the kernels stage (--kernels, worker/libraries.py), in the order they run: each
# is a step of that stage, so a kernel that hangs is named.
Kernel = Literal["matmul_float32", "matmul_tf32", "matmul_float16", "matmul_bfloat16", "conv2d",
                 "sdpa", "transfer", "compile"]
KERNELS: tuple[Kernel, ...] = get_args(Kernel)
# The steps of the compute stage, in order (``verify`` reads the values back to the host;
# ``copy``, with --all-devices only, copies a tensor from one device to another), then the
# kernels'.
Step = Literal["allocate", "product", "gradient", "synchronize", "verify", "copy", Kernel]
STEPS: tuple[Step, ...] = get_args(Step)
# Every event the worker writes: one JSON object a line, ``{"event": NAME, "t_ms": ..., ...}``.
# With --all-devices, ``step`` also names the ``device`` (and the ``peer`` a copy goes to), and
# each device's values come in a ``device_result``, each copy's in a ``peer_result``.
EventName = Literal["facts", "stage_started", "stage_finished", "stage_failed", "step",
                    "step_failed", "warning", "error", "result", "local_paths", "final",
                    "device_result", "peer_result", "rank", "collective"]
EVENTS: tuple[EventName, ...] = get_args(EventName)
# The report's blocks a ``facts`` event fills.
FactBlock = Literal["runtime", "pytorch", "execution", "libraries"]
FACT_BLOCKS: tuple[FactBlock, ...] = get_args(FactBlock)
# What went wrong, as the worker names it; the front maps each to a result code.
ErrorKind = Literal["import_failed", "backend_absent", "gpu_unavailable",
                    "device_index_invalid", "out_of_memory", "runtime_error",
                    "extension_failed"]
ERROR_KINDS: tuple[ErrorKind, ...] = get_args(ErrorKind)
# The stages that run only when their flag asks for them (--extensions, --kernels).
LIBRARY_STAGES: frozenset[Stage] = frozenset(("extensions", "kernels"))
# Any string of an event, messages included, is at most this long (the front cuts longer ones).
MAX_TEXT_CHARS = 2000
MAX_WARNINGS_PER_STAGE = 20

# The fixed computation: exact in float32 on any backend (every value is a small integer), so
# the expected values are compared exactly. The worker sends the values it got (the ``result``
# event); the front compares them with these: the worker never says whether they are right.
A_VALUES = [[1.0, 2.0], [3.0, 4.0]]
B_VALUES = [[2.0, 0.0], [1.0, 2.0]]
EXPECTED_PRODUCT = [[4.0, 4.0], [10.0, 8.0]]  # A @ B
EXPECTED_LOSS = 196.0  # ((A @ B) ** 2).sum()
EXPECTED_GRADIENT = [[16.0, 24.0], [40.0, 52.0]]  # d loss / d A = 2 (A @ B) B^T
# The ``result`` event's fields, in the order a wrong one is named, and their expected values.
EXPECTED: dict[str, Any] = {"product": EXPECTED_PRODUCT, "loss": EXPECTED_LOSS,
                            "gradient": EXPECTED_GRADIENT}
# JSON has no NaN nor infinity: a non-finite value travels as one of these strings.
NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def encode_number(value: float) -> float | str:
    """A computed value as JSON carries it: the number, or "nan", "inf" or "-inf"."""
    if math.isfinite(value):
        return value
    return "nan" if math.isnan(value) else "inf" if value > 0 else "-inf"


def decode_number(value: Any) -> float | None:
    """A computed value as the front reads it back; None when it is not one (a wrong type)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return NON_FINITE.get(value) if isinstance(value, str) else None


class StageError(Exception):
    """A diagnosed failure: the stage ends and the worker stops after reporting it.

    Either an exception (its type and message are reported) or a sentence of the tool's own,
    named by a key of the front's message catalog (``error.*``) and its values: the front writes
    it in English in the report and in the user's language on the terminal.
    """

    def __init__(self, kind: ErrorKind, exc: BaseException | None = None, key: str = "",
                 **values: Any) -> None:
        super().__init__(key)
        self.kind = kind
        self.exc = exc
        self.key = key
        self.values = values


class ComputeFailure(Exception):
    """The fixed computation failed at ``step``: the exception, and its kind."""

    def __init__(self, step: Step, exc: BaseException, kind: ErrorKind) -> None:
        super().__init__(step)
        self.step = step
        self.exc = exc
        self.kind = kind


class Events:
    """Appends one JSON object per line to the events file, flushed at once."""

    def __init__(self, path: str) -> None:
        self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 - lives as long as the run
        self.path = path  # in the run's private folder: the extensions' children write there
        self._start = self.start = time.monotonic()

    def emit(self, event: EventName, **fields: Any) -> None:
        record = {"event": event, "t_ms": round((time.monotonic() - self._start) * 1000, 1)}
        record.update(fields)
        self._file.write(json.dumps(record, ensure_ascii=True, default=str) + "\n")
        self._file.flush()


def bounded(text: str) -> str:
    """One line, at most MAX_TEXT_CHARS characters."""
    line = " ".join(str(text).split())
    if len(line) > MAX_TEXT_CHARS:
        line = line[: MAX_TEXT_CHARS - 1] + "\u2026"
    return line


def describe_exception(exc: BaseException) -> dict[str, Any]:
    info: dict[str, Any] = {"type": type(exc).__name__, "message": bounded(str(exc))}
    if isinstance(exc, ModuleNotFoundError):
        info["missing_module"] = exc.name
    return info


class Worker:
    def __init__(self, events: Events, device: str, index: int,
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
        # --extensions, --kernels: the library stages asked for (libraries.py), and the front's
        # time limit in seconds from the worker's start (--budget-s), which bounds them.
        self.libraries: frozenset[str] = frozenset()
        self.budget_s: float | None = None

    def run(self) -> None:
        self.facts("runtime", warnings_as_errors=warnings_as_errors(),
                   tracemalloc_frames=tracemalloc_frames())
        # Each stage's name is the protocol's (STAGES), never its method's: renaming a method
        # changes no report.
        bodies: dict[Stage, Callable[[], None]] = {
            "interpreter": self.stage_interpreter, "import": self.stage_import,
            "backend": self.stage_backend, "device": self.stage_device,
            "compute": self.stage_compute,
            "extensions": lambda: companion("libraries").stage_extensions(self),
            "kernels": lambda: companion("libraries").stage_kernels(self),
        }
        for name in STAGES:
            if name == "collective":
                continue  # below: it also runs after a failed stage
            if name in LIBRARY_STAGES and name not in self.libraries:
                continue  # only when asked: the check stays as fast as it is
            if not self._run_stage(name, bodies[name]):
                break
        if self.distributed is not None and self.torch is not None:
            # Also after this rank's own check failed: the other ranks learn it from the job's
            # store instead of waiting for this rank until their time runs out.
            self._run_stage("collective", lambda: companion("collective").stage(self))
        self.events.emit("final")

    def _run_stage(self, name: Stage, body: Callable[[], None]) -> bool:
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
                failure = StageError(
                    "import_failed" if name == "import" else "runtime_error", exc)
        for category, message in caught:
            self.events.emit("warning", stage=name, category=category, message=message)
        duration = round((time.monotonic() - start) * 1000, 1)
        if failure is not None:
            error: dict[str, Any] = {"stage": name, "kind": failure.kind}
            if failure.exc is not None:
                error.update(describe_exception(failure.exc))
            else:
                error.update(type=None, message_key=failure.key,
                             message_values={k: bounded(str(v)) for k, v in failure.values.items()})
            self.events.emit("error", **error)
            self.failure = self.failure or error
            self.events.emit("stage_failed", stage=name, duration_ms=duration)
            return False
        self.events.emit("stage_finished", stage=name, duration_ms=duration)
        return True

    def facts(self, block: FactBlock, **values: Any) -> None:
        self.events.emit("facts", block=block, values=values)

    # -- stages ---------------------------------------------------------------------------------

    def stage_interpreter(self) -> None:
        # Imported here, not at the top: the front imports this module for the protocol alone.
        # (Before the user's first import path is put back in stage_import: see there.)
        import platform

        self.facts(
            "runtime",
            python_version=platform.python_version(),
            python_implementation=platform.python_implementation(),
            os_family={"win32": "windows", "darwin": "macos"}.get(
                sys.platform, "linux" if sys.platform.startswith("linux") else sys.platform),
            machine=platform.machine() or None,
            environment_kind=environment_kind(),
            visibility={name: visibility(os.environ.get(name)) for name in VISIBILITY_VARIABLES},
            device_nodes=device_nodes(),
        )
        # For --show-paths only: the supervisor keeps these out of every report.
        self.events.emit("local_paths", interpreter=sys.executable, torch=None)

    def stage_import(self) -> None:
        self.facts("pytorch", imported=False)
        # What locating torch reads is loaded first: once the user's first import path is in
        # place, a module of theirs with the same name (csv.py, email/) would be loaded instead.
        import importlib.machinery
        import importlib.util
        import site  # noqa: F401 - loaded now, read by place_of
        from urllib.parse import unquote  # noqa: F401 - loaded now, for editable installs

        # None when the installed distributions cannot be read: torch is then imported unchecked.
        installs = torch_installs([self.path0, *sys.path[1:]] if self.path0 is not None
                                  else sys.path)
        # Import torch from where the user's own code would: the worker runs from a private
        # folder, so the first search path is put back to the one the front was started with.
        if self.path0 is not None and sys.path:
            sys.path[0] = self.path0
        self.facts("runtime", local_modules=local_modules(self.path0, installs or []))
        # Locate torch without running it (finding a top-level module executes nothing): a
        # module that is not the installed package is never imported, whatever it would do.
        try:
            spec = importlib.util.find_spec("torch")
        except Exception:  # a broken finder or entry: the import below says what it is
            spec = None
        located = locate(spec, installs) if spec is not None and installs is not None else None
        if located is not None:
            kind, folder = located
            origin = place_of(folder, self.path0) if folder else "elsewhere"
            self.facts("pytorch", origin=origin, module_kind=kind)
            if kind in SHADOW_KINDS:
                # For --show-paths, on the terminal only: the very file or folder to rename.
                self.events.emit("local_paths", interpreter=sys.executable,
                                 torch=module_path(spec) or folder)
                self.facts("pytorch", distributions_on_path=count_distributions("torch"),
                           distribution_version=installs[0].version if installs else None)
                raise StageError("import_failed", key="error.torch_shadowed",
                                 module=SHADOW_MODULES[kind], origin=origin)
        try:
            import torch
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            self.facts("pytorch", import_error_origin=failure_origin(exc, self.path0))
            raise StageError("import_failed", exc) from None
        self.events.emit("local_paths", interpreter=sys.executable,
                         torch=os.path.dirname(getattr(torch, "__file__", None) or "") or None)
        # A module without these is no PyTorch build, whatever it is: never a CPU-only one.
        missing = [name for name in ("version", "__version__") if not hasattr(torch, name)]
        if missing:
            raise StageError("import_failed", key="error.torch_incomplete",
                             missing=", ".join("torch." + name for name in missing))
        self.torch = torch
        if located is None:
            folder = module_folder(getattr(torch, "__spec__", None))
            self.facts("pytorch", origin=place_of(folder, self.path0) if folder else "elsewhere")
        self.facts("pytorch", imported=True,
                   distributions_on_path=count_distributions("torch"),
                   numpy_present=module_present("numpy"),
                   numpy_version=distribution_version("numpy"))

    def stage_backend(self) -> None:
        torch = self.torch
        declared = companion("accelerators").build_backend(torch)
        self.backend = backend = declared["backend"]
        self.facts(
            "pytorch",
            version=str(getattr(torch, "__version__", "")) or None,
            distribution_version=distribution_version("torch"),
            **declared,
        )
        # What surrounds the build, from installed metadata (worker/inventory.py), in both modes.
        self.facts("pytorch", **companion("inventory").inventory(torch))
        if self.device == "gpu":
            # What the build was made with needs no driver: known even when no GPU is usable,
            # which is when an architecture or library mismatch matters most.
            values, raised = build_facts(torch)
            self.facts("pytorch", build_fact_errors=raised, **values)
        if self.device == "gpu" and backend == "cpu":
            raise StageError("backend_absent", key="error.backend_absent")

    def stage_device(self) -> None:
        if self.device == "cpu":
            return  # CPU mode never asks the GPU driver anything: gpu facts stay null
        accelerators = companion("accelerators")
        self.accelerator = accelerator = accelerators.Accelerator(self.torch, self.backend)
        try:
            available = accelerator.is_available()
            # MPS counts its one device only when usable; CUDA and XPU count what they see.
            count = accelerator.device_count() if available or accelerator.kind != "mps" else 0
        except Exception as exc:
            raise StageError("gpu_unavailable", exc) from None
        self.visible_count = count
        self.facts("pytorch", gpu_available=available, visible_device_count=count)
        if accelerator.kind == "mps":
            self.facts("pytorch", mps=accelerators.apple_facts(available))
        if not available or count == 0:
            reason = accelerator.initialisation_error()
            self.facts("pytorch", init_error=reason)
            said: dict[str, str] = {}
            if available:
                key = "error.no_visible_device"
            elif accelerator.kind == "cuda":
                key = "error.gpu_unavailable"
            else:  # the same sentence, naming the backend's own call
                key, said = "error.backend_unavailable", {"call": accelerator.available_call}
            failure = StageError("gpu_unavailable", key=key + ".reason" if reason else key)
            failure.values.update(said, **({"reason": reason} if reason else {}))
            raise failure
        devices = [self.describe_device(accelerator, index) for index in range(count)]
        if self.distributed is not None and self.index >= count:
            # A rank's device is its local rank; a launcher that gives each task devices of its
            # own (srun --gpus-per-task) shows it fewer: they are shared out in turn.
            self.index %= count
        if 0 <= self.index < count:
            devices[self.index].update(free_memory(accelerator.module, self.index))
        self.facts("pytorch", devices=devices)
        if not self.all_devices and not 0 <= self.index < count:
            raise StageError("device_index_invalid", key="error.device_index_invalid",
                             index=self.index, count=count)

    @staticmethod
    def describe_device(accelerator: Any, index: int) -> dict[str, Any]:
        """One visible device as ``pytorch.devices[]`` says it (``accelerator``: the backend's
        devices, see accelerators.Accelerator)."""
        device: dict[str, Any] = {"index": index, "name": None, "capability": None,
                                  "total_memory_bytes": None}
        try:
            props = accelerator.properties(index)  # None: a backend without any (MPS)
            if props is not None:
                device["name"] = str(props.name)
                major, minor = getattr(props, "major", None), getattr(props, "minor", None)
                if major is not None and minor is not None:  # CUDA and ROCm; XPU has none
                    device["capability"] = f"{major}.{minor}"
                device["total_memory_bytes"] = int(props.total_memory)
                gcn_arch = getattr(props, "gcnArchName", None)  # ROCm only: gfx942:sramecc+
                if gcn_arch:
                    device["gcn_arch"] = str(gcn_arch)
        except Exception as exc:  # one unreadable device is a partial result, not a failed run
            device["error"] = f"{type(exc).__name__}: {bounded(str(exc))}"
        return device

    def stage_compute(self) -> None:
        on_gpu = self.device == "gpu"
        self.target = self.accelerator.target(self.index) if on_gpu else "cpu"
        if self.all_devices:  # every visible device, each with its own result
            companion("all_devices").check_every_device(self)
            return
        self.facts("execution", device=self.target, synchronized=False if on_gpu else None)
        start = time.monotonic()

        def reached(step: Step) -> None:
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
                          reached: Callable[[Step], None]) -> dict[str, Any]:
        """The fixed computation on the accelerator's device ``index`` (None: on the CPU): the
        values read back (the ``result`` event's). ``reached`` is told each step as it starts;
        a failure raises ComputeFailure, naming its step."""
        torch = self.torch
        accelerator = self.accelerator if index is not None else None
        target = accelerator.target(index) if accelerator is not None else "cpu"
        step: Step = "allocate"
        try:
            reached(step)
            if accelerator is not None:
                accelerator.set_device(index)
            a = torch.tensor(A_VALUES, dtype=torch.float32, device=target, requires_grad=True)
            b = torch.tensor(B_VALUES, dtype=torch.float32, device=target)
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
            raise ComputeFailure(step, exc, "out_of_memory" if is_out_of_memory(torch, exc)
                                 else "runtime_error") from None


def free_memory(module: Any, index: int) -> dict[str, int]:
    """The device's free memory before the computation (``torch.cuda.mem_get_info``, XPU's
    alike): what other processes left. Asked of the requested device only, since it creates a
    context there (the computation needs one anyway); nothing when the call fails or the backend
    has none (MPS), the computation then says why."""
    try:
        free, _ = module.mem_get_info(index)
        return {"free_memory_bytes": int(free)}
    except Exception:
        return {}


def encoded(values: Any) -> Any:
    """Values read back from the device (a number or nested lists of them), as JSON carries
    them: see encode_number."""
    if isinstance(values, (list, tuple)):
        return [encoded(item) for item in values]
    return encode_number(float(values))


VISIBILITY_VARIABLES = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")


def visibility(value: str | None) -> str:
    """What a device-visibility variable does, never its value: unset, empty, hides_all, lists N.

    The runtimes read the comma-separated list up to the first invalid entry: a list starting
    with a negative or non-numeric entry hides every device.
    """
    if value is None:
        return "unset"
    if not value.strip():
        return "empty"
    count = 0
    for raw in value.split(","):
        entry = raw.strip()
        if entry.isdigit() or entry.upper().startswith(("GPU-", "MIG-")):
            count += 1
        else:
            break
    return f"lists {count}" if count else "hides_all"


DEVICE_NODES = {
    "nvidiactl": "/dev/nvidiactl",
    "nvidia_uvm": "/dev/nvidia-uvm",
    "proc_driver_nvidia": "/proc/driver/nvidia/version",
    "dxg": "/dev/dxg",  # WSL 2's GPU paravirtualisation
}


def device_nodes() -> dict[str, Any]:
    """Which GPU device nodes exist (booleans only); /dev/kfd also says if it is usable."""
    nodes: dict[str, Any] = {name: os.path.exists(path) for name, path in DEVICE_NODES.items()}
    if not os.path.exists("/dev/kfd"):
        nodes["kfd"] = "absent"
    else:
        nodes["kfd"] = "ok" if os.access("/dev/kfd", os.R_OK | os.W_OK) else "no_access"
    return nodes


# What ``import torch`` can find besides the installed package: a file torch.py, a compiled
# torch.pyc, an extension module, a package folder torch/, a folder torch/ without __init__.py (a
# namespace package), a PyTorch source checkout. Each is named in the sentence the user reads.
SHADOW_MODULES = {"file": "torch.py", "compiled": "torch.pyc", "extension": "torch",
                  "package": "torch/", "folder": "torch/", "source-checkout": "torch/"}
SHADOW_KINDS = frozenset(SHADOW_MODULES)


class TorchInstall:
    """An installed torch distribution: its version and where its own package is."""

    def __init__(self, version: str | None, init_file: str, editable_folder: str | None) -> None:
        self.version = version
        self.init_file = init_file  # torch/__init__.py as the distribution placed it
        self.editable_folder = editable_folder  # pip install -e: the source folder it points to

    def owns(self, path: str) -> bool:
        if same_path(path, self.init_file):
            return True
        folder = self.editable_folder
        return folder is not None and is_inside(path, folder)


def torch_installs(path: list[str]) -> list[TorchInstall] | None:
    """Every torch distribution on ``path``, in search order (the first is what pip shows).

    None when the installed distributions cannot be read at all: nothing to compare with.
    """
    try:
        from importlib import metadata

        found = list(metadata.distributions(name="torch", path=path))
    except Exception:
        return None
    return [install for install in map(torch_install, found) if install is not None]


def torch_install(dist: Any) -> TorchInstall | None:
    try:
        init_file = str(dist.locate_file(os.path.join("torch", "__init__.py")))
        return TorchInstall(dist.version, init_file, editable_folder(dist))
    except Exception:  # a distribution whose metadata cannot be read is none to compare with
        return None


def editable_folder(dist: Any) -> str | None:
    """The source folder of an editable install (PEP 610's direct_url.json), or None."""
    from urllib.parse import unquote

    try:
        direct = json.loads(dist.read_text("direct_url.json") or "null")
    except Exception:
        return None
    if not (isinstance(direct, dict) and isinstance(direct.get("dir_info"), dict)
            and direct["dir_info"].get("editable") and isinstance(direct.get("url"), str)
            and direct["url"].startswith("file://")):
        return None
    path = unquote(str(direct["url"])[len("file://"):])
    if path.startswith("localhost/"):
        path = path[len("localhost"):]
    if os.name == "nt" and len(path) > 2 and path[0] == "/" and path[2] == ":":
        path = path[1:]  # file:///C:/src/pytorch
    return path


def locate(spec: Any, installs: list[TorchInstall]) -> tuple[str, str | None] | None:
    """What ``import torch`` would load, as (kind, the folder holding it), without running it.

    ``installed``: the installed distribution's own files (an editable install's source folder
    included). ``unverified``: a built package (with its compiled ``_C``) and no distribution to
    compare it with, or a module not in a file (a zip, a custom finder): imported as before.
    Otherwise a kind of SHADOW_KINDS: never imported.
    """
    origin = file_origin(spec)
    folder = module_folder(spec)
    if origin is None:
        # A folder torch/ without __init__.py, which imports as an empty namespace package.
        return ("folder", folder) if folder is not None else None
    if not os.path.isfile(origin):
        return "unverified", None
    if any(install.owns(origin) for install in installs):
        kind = "installed"
    elif getattr(spec, "submodule_search_locations", None) is not None:
        kind = package_kind(os.path.dirname(origin), installs)
    elif origin.endswith(tuple(extension_suffixes())):
        kind = "extension"
    else:
        kind = "compiled" if origin.endswith(".pyc") else "file"
    return kind, folder


def file_origin(spec: Any) -> str | None:
    origin = getattr(spec, "origin", None)
    if not isinstance(origin, str) or origin in ("namespace", "built-in", "frozen"):
        return None
    return origin


def package_kind(package: str, installs: list[TorchInstall]) -> str:
    """source-checkout, unverified (a built package and no install to compare) or package."""
    if (os.path.isfile(os.path.join(os.path.dirname(package), "setup.py"))
            or os.path.isdir(os.path.join(package, "csrc"))):
        return "source-checkout"
    if not installs and any(os.path.isfile(os.path.join(package, "_C" + suffix))
                            for suffix in extension_suffixes()):
        return "unverified"
    return "package"


def module_path(spec: Any) -> str | None:
    """The file of a module, or the folder of a package, found by ``spec``."""
    origin = file_origin(spec)
    locations = list(getattr(spec, "submodule_search_locations", None) or [])
    if locations:
        return str(locations[0])
    return origin


def module_folder(spec: Any) -> str | None:
    """The folder holding a module found by ``spec`` (for a package, its parent), or None."""
    origin = file_origin(spec)
    locations = list(getattr(spec, "submodule_search_locations", None) or [])
    if origin is not None:
        if getattr(spec, "submodule_search_locations", None) is not None:
            return os.path.dirname(os.path.dirname(origin))
        return os.path.dirname(origin)
    if locations:
        return os.path.dirname(str(locations[0]))
    return None


def place_of(folder: str, path0: str | None) -> str:
    """Where a folder is, as a category the report may carry (never the path).

    working-folder, script-folder (the first import path of the user's code when it is not
    the working folder: a script's or the zipapp's folder), pythonpath (an entry of
    PYTHONPATH), user-site, site-packages or elsewhere. The environment's own package folders
    stay what they are when PYTHONPATH lists them too; another Python's site-packages on
    PYTHONPATH is pythonpath.
    """
    import site

    own: list[str] = getattr(site, "getsitepackages", list)()
    user_site = getattr(site, "getusersitepackages", lambda: "")()
    pythonpath = [] if sys.flags.ignore_environment else \
        [entry for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if entry]
    # In this order: the first that holds names the folder.
    places: tuple[tuple[str, Callable[[], bool]], ...] = (
        ("working-folder", lambda: same_path(folder, os.getcwd())),
        ("script-folder", lambda: bool(path0) and same_path(folder, str(path0))),
        ("site-packages", lambda: any(same_path(folder, entry) for entry in own)),
        ("pythonpath", lambda: any(same_path(folder, entry) for entry in pythonpath)),
        ("user-site", lambda: bool(user_site) and same_path(folder, user_site)),
        ("site-packages", lambda: os.path.basename(folder) in ("site-packages",
                                                               "dist-packages")),
    )
    for place, holds in places:
        with contextlib.suppress(OSError):  # a working folder deleted under us is none of these
            if holds():
                return place
    return "elsewhere"


def failure_origin(exc: BaseException, path0: str | None) -> dict[str, str | None] | None:
    """The module a failed ``import torch`` broke in, and where the import system found it (a
    category, see place_of): the file an ImportError names (``cannot import name 'deprecated'
    from 'typing_extensions' (FILE)``), else the innermost frame of the traceback that is a file
    under an entry of sys.path. The module's name only when it is one torch needs or the standard
    library's (another name may be the user's own); None when no such file is found."""
    files = []
    named = getattr(exc, "path", None) if isinstance(exc, ImportError) else None
    if isinstance(named, str):
        files.append(named)
    frames = []
    trace = exc.__traceback__
    while trace is not None:
        frames.append(trace.tb_frame.f_code.co_filename)
        trace = trace.tb_next
    files += reversed(frames)
    entries = sorted({entry for entry in sys.path if entry}, key=lambda entry: len(real(entry)),
                     reverse=True)
    stdlib = stdlib_names()
    for file in files:
        if not os.path.isfile(file):
            continue  # <frozen importlib._bootstrap>, <string>
        entry = next((entry for entry in entries if is_inside(file, entry)), None)
        if entry is None:
            continue
        top = os.path.relpath(real(file), real(entry)).split(os.sep)[0]
        module = top.split(".")[0]
        return {"module": module if module in TORCH_NEEDS or module in stdlib else None,
                "place": place_of(entry, path0)}
    return None


def same_path(a: str, b: str) -> bool:
    return real(a) == real(b)


def is_inside(path: str, folder: str) -> bool:
    inner, outer = real(path), real(folder)
    return inner == outer or inner.startswith(outer.rstrip(os.sep) + os.sep)


def real(path: str) -> str:
    return os.path.normcase(os.path.realpath(os.path.abspath(path)))


def extension_suffixes() -> list[str]:
    import importlib.machinery

    return list(importlib.machinery.EXTENSION_SUFFIXES)


# Modules torch imports beyond the standard library: its wheel's requirements, what they need,
# and the other top-level packages its wheel installs. A user's module of one of these names
# breaks ``import torch`` in the user's own program.
TORCH_NEEDS = frozenset((
    "torch", "torchgen", "functorch", "numpy", "typing_extensions", "sympy", "mpmath",
    "networkx", "jinja2", "markupsafe", "filelock", "fsspec", "setuptools", "pkg_resources",
    "triton", "nvidia", "opt_einsum", "optree",
))
# Python 3.9 has no sys.stdlib_module_names: its public standard-library modules (3.10's list,
# plus the three that 3.10 removed).
_STDLIB_3_9_NAMES = """
__future__ abc aifc argparse array ast asynchat asyncio asyncore atexit audioop base64 bdb
binascii binhex bisect builtins bz2 cProfile calendar cgi cgitb chunk cmath cmd code codecs codeop
collections colorsys compileall concurrent configparser contextlib contextvars copy copyreg crypt
csv ctypes curses dataclasses datetime dbm decimal difflib dis distutils doctest email encodings
ensurepip enum errno faulthandler fcntl filecmp fileinput fnmatch formatter fractions ftplib
functools gc genericpath getopt getpass gettext glob graphlib grp gzip hashlib heapq hmac html http
imaplib imghdr imp importlib inspect io ipaddress itertools json keyword lib2to3 linecache locale
logging lzma mailbox mailcap marshal math mimetypes mmap modulefinder msilib msvcrt
multiprocessing netrc nis nntplib nt ntpath nturl2path numbers opcode operator optparse os
ossaudiodev parser pathlib pdb pickle pickletools pipes pkgutil platform plistlib poplib posix
posixpath pprint profile pstats pty pwd py_compile pyclbr pydoc pydoc_data pyexpat queue quopri
random re readline reprlib resource rlcompleter runpy sched secrets select selectors shelve shlex
shutil signal site smtpd smtplib sndhdr socket socketserver spwd sqlite3 sre_compile
sre_constants sre_parse ssl stat statistics string stringprep struct subprocess sunau symbol
symtable sys sysconfig syslog tabnanny tarfile telnetlib tempfile termios textwrap threading time
timeit tkinter token tokenize trace traceback tracemalloc tty turtle types typing unicodedata
unittest urllib uu uuid venv warnings wave weakref webbrowser winreg winsound wsgiref xdrlib xml
xmlrpc zipapp zipfile zipimport zlib zoneinfo
"""
STDLIB_3_9 = frozenset(_STDLIB_3_9_NAMES.split())


def stdlib_names() -> frozenset[str]:
    return frozenset(getattr(sys, "stdlib_module_names", STDLIB_3_9))
# Standard-library modules no library imports: a user's module of that name breaks nothing.
NEVER_IMPORTED = frozenset(("__main__", "antigravity", "this", "idlelib", "turtledemo"))
MAX_LOCAL_MODULES = 20
MAX_FOLDER_ENTRIES = 20_000  # a home folder can be huge: past this many entries, stop looking


def local_modules(path0: str | None, installs: list[TorchInstall]) -> list[dict[str, str]]:
    """The user's modules that hide one their program needs, in the folders it imports from first.

    ``python app.py`` searches app.py's folder before anything installed, ``python -m`` the
    working folder: a typing.py or numpy.py there replaces the real one for the user's program,
    whichever way the check itself was started (the worker has loaded its own typing already, and
    the installed command or the zipapp imports from elsewhere). Names and categories only, at
    most MAX_LOCAL_MODULES. None searched when the interpreter's flags say the program's folder
    is not searched (path0 is None).
    """
    if path0 is None:
        return []
    folders: list[tuple[str, str]] = []
    with contextlib.suppress(OSError):
        folders.append(("working-folder", os.getcwd()))
    if not any(same_path(path0, folder) for _, folder in folders):
        folders.append(("script-folder", path0))
    stdlib = stdlib_names()
    found: list[dict[str, str]] = []
    for place, folder in folders:
        for name, entry, path in modules_in(folder):
            if name in TORCH_NEEDS:
                hides = "torch" if name == "torch" else "torch-dependency"
            elif name in stdlib and name not in NEVER_IMPORTED:
                hides = "standard-library"
            else:
                continue
            if preloaded(name) or (name == "torch" and any(i.owns(path) for i in installs)):
                continue  # loaded before any script, or the installed torch itself
            found.append({"name": name, "file": entry, "folder": place, "hides": hides})
            if len(found) >= MAX_LOCAL_MODULES:
                return found
    return found


def modules_in(folder: str) -> list[tuple[str, str, str]]:
    """(module name, file name, module file) of each importable module in ``folder``, by name."""
    import importlib.machinery

    suffixes = sorted(importlib.machinery.all_suffixes(), key=len, reverse=True)
    found: dict[str, tuple[str, str, str]] = {}
    try:
        with os.scandir(folder) as entries:
            for count, entry in enumerate(entries):
                if count >= MAX_FOLDER_ENTRIES:
                    break
                name = entry.name
                with contextlib.suppress(OSError):
                    if entry.is_dir():
                        init = next((os.path.join(entry.path, "__init__" + suffix)
                                     for suffix in suffixes
                                     if os.path.isfile(os.path.join(entry.path,
                                                                    "__init__" + suffix))),
                                    None) if name.isidentifier() else None
                        if init is not None:  # a package comes first, as the import system finds
                            found[name] = (name, name + "/", init)
                        continue
                suffix = next((s for s in suffixes if name.endswith(s)), None)
                stem = name[:-len(suffix)] if suffix else ""
                if stem.isidentifier() and stem not in found:
                    found[stem] = (stem, name, entry.path)
    except OSError:
        return []
    return [found[name] for name in sorted(found)]


def preloaded(name: str) -> bool:
    """Whether no file can hide ``name``: loaded before any script, built in, or frozen."""
    import importlib.machinery

    if name in STARTUP_MODULES or name in sys.builtin_module_names:
        return True
    try:
        return importlib.machinery.FrozenImporter.find_spec(name) is not None
    except Exception:
        return False


def count_distributions(name: str) -> int:
    """How many installed distributions of ``name`` are visible on sys.path (dist- and egg-info)."""
    seen = set()
    prefix = name.lower() + "-"
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for item in names:
            lowered = item.lower()
            if lowered.startswith(prefix) and lowered.endswith((".dist-info", ".egg-info")):
                seen.add(os.path.realpath(os.path.join(entry or ".", item)))
    return len(seen)


def module_present(name: str) -> bool:
    import importlib.util
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def build_facts(torch: Any) -> tuple[dict[str, Any], dict[str, str]]:
    """The GPU build's own facts (architectures, cuDNN, NCCL), read without asking the driver.

    Each is read on its own: one that raises is None, and its exception's type is kept apart
    (the second mapping), so "this build has none" (None, not in the mapping) is never confused
    with "this build could not say".
    """
    readers: dict[str, Callable[[], Any]] = {
        "arch_list": lambda: build_arch_list(torch),
        # The lambdas defer attribute lookups that themselves raise on some builds.
        "cudnn_version": lambda: torch.backends.cudnn.version(),  # noqa: PLW0108 - None: no cuDNN
        "nccl_version": lambda: nccl_version(torch),
    }
    values: dict[str, Any] = {}
    raised: dict[str, str] = {}
    for name, read in readers.items():
        try:
            value = read()
        except Exception as exc:
            values[name], raised[name] = None, type(exc).__name__
            continue
        if isinstance(value, (list, tuple)):
            values[name] = [str(item) for item in value] or None  # an empty list says nothing
        else:
            values[name] = None if value is None else str(value)
    return values, raised


def build_arch_list(torch: Any) -> list[str] | None:
    """The architectures the build has code for: sm_90, compute_120, gfx942...

    Read from the build's own flags: ``torch.cuda.get_arch_list()`` returns [] without a usable
    GPU in some releases. A torch without that binding is asked through the public function.
    """
    flags = getattr(getattr(torch, "_C", None), "_cuda_getArchFlags", None)
    if flags is None:
        return list(torch.cuda.get_arch_list())
    text = flags()
    return str(text).split() if text else None  # None: not a GPU build


def nccl_version(torch: Any) -> str | None:
    """NCCL's (or RCCL's) version, e.g. 2.26.2; None when the build has no NCCL (CPU, Windows)."""
    if getattr(getattr(torch, "_C", None), "_nccl_version", None) is None:
        return None
    return ".".join(map(str, torch.cuda.nccl.version()))


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
        if len(into) < MAX_WARNINGS_PER_STAGE:
            name = getattr(category, "__name__", None) or type(message).__name__
            into.append((str(name), bounded(str(message))))

    previous = warnings.showwarning
    warnings.showwarning = keep
    try:
        yield
    finally:
        # A library that installed its own display meanwhile (logging.captureWarnings) keeps it.
        if warnings.showwarning is keep:
            warnings.showwarning = previous


def warnings_as_errors() -> bool:
    """An active warning filter turns warnings into errors (-W error, PYTHONWARNINGS=error...).

    Only the fact: a filter's text may name the user's modules.
    """
    return any(entry[0] == "error" for entry in warnings.filters)


def tracemalloc_frames() -> int:
    """How many frames tracemalloc records per allocation (PYTHONTRACEMALLOC=N, -X tracemalloc=N);
    0 when it is not tracing. Tracing every allocation makes `import torch` many times slower."""
    try:  # the C module: tracemalloc.py would import pickle and more for two calls
        import _tracemalloc
    except ImportError:  # an interpreter without it (PyPy) cannot trace this way
        return 0
    return int(_tracemalloc.get_traceback_limit()) if _tracemalloc.is_tracing() else 0


def is_out_of_memory(torch: Any, exc: BaseException) -> bool:
    oom_type = getattr(getattr(torch, "cuda", None), "OutOfMemoryError", None)
    if isinstance(oom_type, type) and isinstance(exc, oom_type):
        return True
    return "out of memory" in str(exc).lower()


def environment_kind() -> str:
    if os.path.isdir(os.path.join(sys.prefix, "conda-meta")):
        return "conda"
    if sys.prefix != getattr(sys, "base_prefix", sys.prefix):
        return "venv"
    if sys.prefix and os.path.isdir(sys.prefix):
        return "system"
    return "unknown"


def distribution_version(name: str) -> str | None:
    try:
        from importlib import metadata
        return metadata.version(name)
    except Exception:  # absent metadata is a fact (None), not a failure
        return None


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


def watch_front(events_path: str) -> None:
    """End this worker, its children and its private folder as soon as the front is gone.

    The front gives the worker a pipe as stdin and keeps the only write end: reading it gives
    end-of-file once the front has ended by any cause (SIGKILL, a closed terminal, a crash), on
    every system. On POSIX the watch is a forked process, not a thread: a worker stuck in a native
    call that holds the GIL (a driver hung in its initialisation) would never let a thread run.
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
                if _front_gone():
                    _remove(folder)
                    _kill_worker(worker)  # its group: this watch goes with it
            finally:
                os._exit(0)
        if child > 0:
            return
    import threading

    threading.Thread(target=_watch_in_thread, args=(folder, worker), daemon=True,
                     name="front-watch").start()


def _watch_in_thread(folder: str | None, worker: int) -> None:
    if _front_gone():
        _remove(folder)  # on Windows, files still open here stay: see docs/reliability.md
        _kill_worker(worker)
        os._exit(EXIT_FRONT_GONE)


def _front_gone() -> bool:
    """Block until stdin (the front's pipe) reads end-of-file; False when it cannot be read."""
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
    """The run's private folder, the one holding the events file and this worker, if it is a
    ``kernodeck-`` folder: no other folder is ever removed."""
    folder = os.path.dirname(os.path.abspath(events_path))
    here = os.path.dirname(os.path.abspath(__file__))
    if (os.path.basename(folder).startswith("kernodeck-")
            and os.path.normcase(folder) == os.path.normcase(here)):
        return folder
    return None


def _remove(folder: str | None) -> None:
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    if sys.version_info < MINIMUM_PYTHON:
        # Before any event: the front, seeing none, asks the interpreter its version and says
        # it is too old (a partial run on 3.7 or 3.8 would look like a diagnosis).
        sys.stderr.write(f"worker: Python {MINIMUM_PYTHON[0]}.{MINIMUM_PYTHON[1]} or newer is "
                         "needed\n")
        return EXIT_PYTHON_TOO_OLD
    import argparse  # here: the front, which imports this module, may not need it

    parser = argparse.ArgumentParser(prog="worker")
    parser.add_argument("--events", required=True)
    parser.add_argument("--device", choices=("gpu", "cpu"), required=True)
    parser.add_argument("--device-index", type=int, default=0)
    parser.add_argument("--path0", help="the first import path of the user's own code")
    parser.add_argument("--watch-front", action="store_true",
                        help="stdin is a pipe the front holds: its end means the front is gone")
    parser.add_argument("--all-devices", action="store_true",
                        help="the computation on every visible device (all_devices.py)")
    # The front's time limit, in seconds from the worker's start (--extensions, --kernels).
    parser.add_argument("--budget-s", type=float)
    # --distributed (collective.py): the front's limit as time.monotonic() says it, and this
    # rank's place in the job.
    parser.add_argument("--deadline", type=float)
    parser.add_argument("--launcher")
    for name in ("--rank", "--world-size", "--local-rank", "--node", "--master-port"):
        parser.add_argument(name, type=int)
    parser.add_argument("--master-addr")
    for name in LIBRARY_STAGES:  # --extensions, --kernels (libraries.py)
        parser.add_argument(f"--{name}", action="store_true")
    args = parser.parse_args(argv)
    if args.watch_front:
        watch_front(args.events)
    for name in COMPANIONS:  # now, before the user's folder is on the import path
        companion(name)
    events = Events(args.events)
    worker = Worker(events, args.device, args.device_index, search_path0(args.path0))
    worker.all_devices = args.all_devices
    worker.libraries = frozenset(name for name in LIBRARY_STAGES if getattr(args, name))
    worker.budget_s = args.budget_s
    if args.launcher is not None:
        worker.distributed = {
            "launcher": args.launcher, "rank": args.rank, "world_size": args.world_size,
            "local_rank": args.local_rank, "node": args.node, "master_addr": args.master_addr,
            "master_port": args.master_port,
            "deadline": companion("collective").worker_deadline(args.deadline)}
    worker.run()
    return 0


if __name__ == "__main__":
    status = main()
    # Every event is written and flushed: skip the interpreter's teardown (unloading torch takes
    # 0.3-0.5 s), which the front would otherwise wait for with nothing left to learn.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)

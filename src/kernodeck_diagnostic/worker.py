"""The worker: imports torch, reads its facts and runs the fixed computation, one stage at a time.

It is run by path, in the interpreter under diagnosis, from a private temporary folder:

    python worker.py --events EVENTS.jsonl --device gpu --device-index 0

It depends on the standard library and torch only (the interpreter under diagnosis lacks our
package), runs on Python 3.9+, and writes newline-delimited JSON events to the events file as each
stage finishes, never to stdout (libraries print there). The supervisor decides the result code;
the worker only says what happened, so a crash or a hang still leaves the last stage reached.
Messages are written raw but bounded; the supervisor redacts them.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
import warnings
from typing import Any, Callable

MAX_MESSAGE_CHARS = 2000
MAX_WARNINGS_PER_STAGE = 20

# The fixed computation (DESIGN section 4): exact in float32 on any backend.
A_VALUES = [[1.0, 2.0], [3.0, 4.0]]
B_VALUES = [[2.0, 0.0], [1.0, 2.0]]
EXPECTED_PRODUCT = [[4.0, 4.0], [10.0, 8.0]]
EXPECTED_LOSS = 196.0
EXPECTED_GRADIENT = [[16.0, 24.0], [40.0, 52.0]]


class StageError(Exception):
    """A diagnosed failure: the stage ends and the worker stops after reporting it.

    Either an exception (its type and message are reported) or a sentence of the tool's own,
    named by a key of the front's message catalog (``error.*``) and its values: the front writes
    it in English in the report and in the user's language on the terminal.
    """

    def __init__(self, kind: str, exc: BaseException | None = None, key: str = "",
                 **values: Any) -> None:
        super().__init__(key)
        self.kind = kind
        self.exc = exc
        self.key = key
        self.values = values


class Events:
    """Appends one JSON object per line to the events file, flushed at once."""

    def __init__(self, path: str) -> None:
        self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 - lives as long as the run
        self._start = time.monotonic()

    def emit(self, event: str, **fields: Any) -> None:
        record = {"event": event, "t_ms": round((time.monotonic() - self._start) * 1000, 1)}
        record.update(fields)
        self._file.write(json.dumps(record, ensure_ascii=True, default=str) + "\n")
        self._file.flush()


def bounded(text: str) -> str:
    """One line, at most MAX_MESSAGE_CHARS characters."""
    line = " ".join(str(text).split())
    if len(line) > MAX_MESSAGE_CHARS:
        line = line[: MAX_MESSAGE_CHARS - 1] + "\u2026"
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

    def run(self) -> None:
        stages: list[Callable[[], None]] = [
            self.stage_interpreter, self.stage_import, self.stage_backend,
            self.stage_device, self.stage_compute,
        ]
        for stage in stages:
            name = stage.__name__[len("stage_"):]
            if not self._run_stage(name, stage):
                break
        self.events.emit("final")

    def _run_stage(self, name: str, body: Callable[[], None]) -> bool:
        self.events.emit("stage_started", stage=name)
        start = time.monotonic()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                body()
                failure: StageError | None = None
            except StageError as err:
                failure = err
            except Exception as exc:  # a stage that fails in an unforeseen way is still reported
                failure = StageError(
                    "import_failed" if name == "import" else "runtime_error", exc)
        for item in caught[:MAX_WARNINGS_PER_STAGE]:
            self.events.emit("warning", stage=name, category=item.category.__name__,
                             message=bounded(str(item.message)))
        duration = round((time.monotonic() - start) * 1000, 1)
        if failure is not None:
            error: dict[str, Any] = {"stage": name, "kind": failure.kind}
            if failure.exc is not None:
                error.update(describe_exception(failure.exc))
            else:
                error.update(type=None, message_key=failure.key,
                             message_values={k: bounded(str(v)) for k, v in failure.values.items()})
            self.events.emit("error", **error)
            self.events.emit("stage_failed", stage=name, duration_ms=duration)
            return False
        self.events.emit("stage_finished", stage=name, duration_ms=duration)
        return True

    def facts(self, block: str, **values: Any) -> None:
        self.events.emit("facts", block=block, values=values)

    # -- stages ---------------------------------------------------------------------------------

    def stage_interpreter(self) -> None:
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
        # Import torch from where the user's own code would: the worker runs from a private
        # folder, so the first search path is put back to the one the front was started with.
        if self.path0 is not None and sys.path:
            sys.path[0] = self.path0
        try:
            import torch
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            raise StageError("import_failed", exc) from None
        self.torch = torch
        self.events.emit("local_paths", interpreter=sys.executable,
                         torch=os.path.dirname(getattr(torch, "__file__", None) or "") or None)
        self.facts("pytorch", imported=True, origin=origin_category(torch),
                   distributions_on_path=count_distributions("torch"),
                   numpy_present=module_present("numpy"),
                   numpy_version=distribution_version("numpy"))

    def stage_backend(self) -> None:
        torch = self.torch
        version_module = getattr(torch, "version", None)
        cuda_build = getattr(version_module, "cuda", None)
        hip_build = getattr(version_module, "hip", None)
        backend = "rocm" if hip_build else "cuda" if cuda_build else "cpu"
        self.facts(
            "pytorch",
            version=str(getattr(torch, "__version__", "")) or None,
            distribution_version=distribution_version("torch"),
            cuda_build=str(cuda_build) if cuda_build else None,
            hip_build=str(hip_build) if hip_build else None,
            backend=backend,
        )
        if self.device == "gpu" and backend == "cpu":
            raise StageError("backend_absent", key="error.backend_absent")

    def stage_device(self) -> None:
        if self.device == "cpu":
            return  # CPU mode never asks the GPU driver anything: gpu facts stay null
        cuda = self.torch.cuda
        try:
            available = bool(cuda.is_available())
            count = int(cuda.device_count())
        except Exception as exc:
            raise StageError("gpu_unavailable", exc) from None
        self.facts("pytorch", gpu_available=available, visible_device_count=count)
        if not available or count == 0:
            reason = self.initialisation_error(cuda)
            self.facts("pytorch", init_error=reason)
            key = "error.gpu_unavailable" if not available else "error.no_visible_device"
            if reason:
                raise StageError("gpu_unavailable", key=key + ".reason", reason=reason)
            raise StageError("gpu_unavailable", key=key)
        devices = [self.describe_device(cuda, index) for index in range(count)]
        self.facts("pytorch", devices=devices,
                   arch_list=guarded(lambda: cuda.get_arch_list()),  # noqa: PLW0108
                   # The lambdas defer attribute lookups that themselves raise on some builds.
                   cudnn_version=guarded(lambda: self.torch.backends.cudnn.version()),  # noqa: PLW0108
                   nccl_version=guarded(lambda: ".".join(map(str, cuda.nccl.version()))))
        if not 0 <= self.index < count:
            raise StageError("device_index_invalid", key="error.device_index_invalid",
                             index=self.index, count=count)

    @staticmethod
    def initialisation_error(cuda: Any) -> str | None:
        """The reason the backend gives when asked to initialise (is_available() only says no)."""
        try:
            cuda.init()
        except Exception as exc:
            return bounded(str(exc)) or type(exc).__name__
        return None

    @staticmethod
    def describe_device(cuda: Any, index: int) -> dict[str, Any]:
        device: dict[str, Any] = {"index": index, "name": None, "capability": None,
                                  "total_memory_bytes": None}
        try:
            props = cuda.get_device_properties(index)
            device["name"] = str(props.name)
            device["capability"] = f"{props.major}.{props.minor}"
            device["total_memory_bytes"] = int(props.total_memory)
            gcn_arch = getattr(props, "gcnArchName", None)  # ROCm only: gfx942:sramecc+:xnack-
            if gcn_arch:
                device["gcn_arch"] = str(gcn_arch)
        except Exception as exc:  # one unreadable device is a partial result, not a failed run
            device["error"] = f"{type(exc).__name__}: {bounded(str(exc))}"
        return device

    def stage_compute(self) -> None:
        torch = self.torch
        on_gpu = self.device == "gpu"
        target = f"cuda:{self.index}" if on_gpu else "cpu"
        self.facts("execution", device=target, product_verified=False, gradient_verified=False,
                   loss=None, synchronized=False if on_gpu else None)
        start = time.monotonic()
        step = "allocate"
        try:
            self.events.emit("step", stage="compute", step=step)
            if on_gpu:
                torch.cuda.set_device(self.index)
            a = torch.tensor(A_VALUES, dtype=torch.float32, device=target, requires_grad=True)
            b = torch.tensor(B_VALUES, dtype=torch.float32, device=target)
            step = "product"
            self.events.emit("step", stage="compute", step=step)
            product = a @ b
            loss = (product ** 2).sum()
            step = "gradient"
            self.events.emit("step", stage="compute", step=step)
            loss.backward()
            if on_gpu:
                step = "synchronize"
                self.events.emit("step", stage="compute", step=step)
                torch.cuda.synchronize(self.index)
                self.facts("execution", synchronized=True)
            step = "verify"
            self.events.emit("step", stage="compute", step=step)
            product_values = product.detach().cpu().tolist()
            loss_value = float(loss.detach().cpu().item())
            gradient = a.grad.detach().cpu().tolist() if a.grad is not None else None
        except Exception as exc:
            kind = "out_of_memory" if is_out_of_memory(torch, exc) else "runtime_error"
            self.events.emit("step_failed", stage="compute", step=step)
            raise StageError(kind, exc) from None
        product_ok = product_values == EXPECTED_PRODUCT
        gradient_ok = gradient == EXPECTED_GRADIENT
        self.facts("execution", product_verified=product_ok, gradient_verified=gradient_ok,
                   loss=loss_value if math.isfinite(loss_value) else None,  # NaN is not JSON
                   duration_ms=round((time.monotonic() - start) * 1000, 1))
        if not (product_ok and gradient_ok and loss_value == EXPECTED_LOSS):
            checks = (("product", product_ok), ("loss", loss_value == EXPECTED_LOSS),
                      ("gradient", gradient_ok))
            wrong = [name for name, ok in checks if not ok]
            raise StageError("check_failed", key="error.check_failed", what=", ".join(wrong))


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


def origin_category(module: Any) -> str:
    """Where the imported package lives: site-packages, user-site, current-folder or other."""
    spec = getattr(module, "__spec__", None)
    origin = getattr(spec, "origin", None)
    locations = list(getattr(spec, "submodule_search_locations", None) or [])
    if origin in ("namespace", "built-in"):
        origin = None
    if origin and os.path.basename(origin) == "__init__.py":
        folder = os.path.dirname(os.path.dirname(origin))
    elif origin:
        folder = os.path.dirname(origin)  # a torch.py module
    elif locations:
        folder = os.path.dirname(locations[0])  # a bare torch/ folder, imported as a namespace
    else:
        return "other"
    folder = os.path.realpath(folder)
    if folder == os.path.realpath(os.getcwd()):
        return "current-folder"
    import site
    site_folders = {os.path.realpath(p) for p in getattr(site, "getsitepackages", list)()}
    if folder in site_folders or os.path.basename(folder) in ("site-packages", "dist-packages"):
        user_site = getattr(site, "getusersitepackages", lambda: "")()
        if user_site and folder == os.path.realpath(user_site):
            return "user-site"
        return "site-packages"
    return "other"


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


def guarded(read: Callable[[], Any]) -> Any:
    """A fact that some builds cannot give (they raise): None instead of a failed stage."""
    try:
        value = read()
    except Exception:
        return None
    if isinstance(value, (list, tuple)):
        return [str(item) for item in value]
    return None if value is None else str(value)


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="worker")
    parser.add_argument("--events", required=True)
    parser.add_argument("--device", choices=("gpu", "cpu"), required=True)
    parser.add_argument("--device-index", type=int, default=0)
    parser.add_argument("--path0", help="the first import path of the user's own code")
    args = parser.parse_args(argv)
    Worker(Events(args.events), args.device, args.device_index, args.path0).run()
    return 0


if __name__ == "__main__":
    status = main()
    # Every event is written and flushed: skip the interpreter's teardown (unloading torch takes
    # 0.3-0.5 s), which the front would otherwise wait for with nothing left to learn.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)

"""The check as a function: for notebooks, scripts and the command line alike.

    >>> import kernodeck_diagnostic
    >>> report = kernodeck_diagnostic.check(device="cpu")
    >>> report.code, report.exit_code, report.passed
    ('CPU_CHECK_PASSED', 0, True)

By default the worker runs in the caller's own interpreter (``sys.executable``): in a notebook,
that is the kernel's Python, the one the notebook's code really uses. A diagnosed failure is a
value (a ``Report`` whose ``passed`` is False), never an exception; only invalid arguments raise:
``TypeError`` for a wrong type (``timeout="30"``), ``ValueError`` for a wrong value
(``timeout=500``), each naming the parameter.
"""

from __future__ import annotations

import importlib
import json
import math
import operator
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any, Literal, TypeVar

from .i18n import ENGLISH, Translate
from .request import (  # below the API and the report
    DEVICES,
    LIBRARY_FLAGS,
    Device,
    Request,
    contradiction,
)
from .supervision.process import kill_all, kill_tree, spawn

if TYPE_CHECKING:
    from .facts.launcher import Launch
    from .report.distributed import Job
    from .report.findings import Finding
    from .supervision.supervisor import WorkerRun

_T = TypeVar("_T")
TIMEOUT_MIN_S, TIMEOUT_MAX_S, TIMEOUT_DEFAULT_S = 5, 120, 30
# The command's limit with --kernels when none is given: a cold torch.compile takes 20 to 50 s.
KERNELS_TIMEOUT_DEFAULT_S = TIMEOUT_MAX_S
MINIMUM_PYTHON = (3, 9)
_PROBE_TIMEOUT_S = 20.0
# At least this long to tell why a worker never ran, even when it ended at the limit.
_PROBE_MIN_S = 0.5
_PROBE_TAIL_BYTES = 4096
# A line of its own, after anything a wrapper printed; Python 2.7 parses it too.
_VERSION_PROBE = ("import sys; sys.stdout.write('\\nkernodeck-python-version %d.%d\\n'"
                  " % sys.version_info[:2])")
_VERSION_LINE = re.compile(rb"^kernodeck-python-version (\d+)\.(\d+)\r?$", re.MULTILINE)


@dataclass(frozen=True)
class Options(Request):
    """A validated request for one check, with what the report never holds: the interpreter's
    path (this one by default)."""

    python: str = field(default_factory=lambda: sys.executable)
    # --distributed: this rank's place in the job, read from the launcher's variables.
    launch: Launch | None = None
    # check() in the caller's own interpreter (a notebook's kernel, a script): its sys.path, in
    # order, which the worker imports torch with, and the torch it imported, which the worker
    # compares with its own (facts/caller.py). None from the command line, or for another
    # interpreter.
    caller: dict[str, Any] | None = None


class Report:
    """One check's report: the code and findings as attributes, the full report as a dict.

    In Jupyter it displays as the same markdown the command line prints with --format markdown.
    """

    def __init__(self, data: dict[str, Any], local_paths: dict[str, str | None] | None = None,
                 found: Sequence[Finding] | None = None) -> None:
        self._data = data
        self.local_paths = dict(local_paths or {})  # for the caller's eyes; never in to_dict()
        # The findings as the rules gave them when the report was built (ids, variants, values):
        # what the terminal and markdown show in any language, never derived again. None for a
        # report made elsewhere: it shows the findings it holds, in English.
        self.found: tuple[Finding, ...] | None = None if found is None else tuple(found)

    @property
    def code(self) -> str:
        return str(self._data["code"])

    @property
    def exit_code(self) -> int:
        return int(self._data["exit_code"])

    @property
    def passed(self) -> bool:
        return bool(self._data["status"] == "passed")

    @property
    def stage(self) -> str:
        return str(self._data["stage"])

    @property
    def findings(self) -> list[dict[str, Any]]:
        return [dict(finding) for finding in self._data["findings"]]

    def to_dict(self) -> dict[str, Any]:
        copied: dict[str, Any] = json.loads(json.dumps(self._data))
        return copied  # a deep copy: the caller may change it

    def to_json(self) -> str:
        return json.dumps(self._data, indent=2, ensure_ascii=False) + "\n"

    def _repr_markdown_(self) -> str:
        from .report.render import markdown

        return markdown(self._data, findings=self.found)

    def __repr__(self) -> str:
        return f"<Report {self.code} exit={self.exit_code} stage={self.stage}>"


def check(device: str = "gpu", device_index: int = 0, timeout: float | None = None,
          host_check: bool = False, python: str | None = None, *,
          distributed: bool = False, all_devices: bool = False, extensions: bool = False,
          kernels: bool = False,
          progress: Callable[[str, float], None] | bool | None = None) -> Report:
    """Run the check (controls 1-3) and return its report.

    ``python`` names another interpreter to diagnose (a venv's, a service's); by default, this
    one. Raises for invalid arguments only: ``TypeError`` for a wrong type (``timeout`` is None,
    an int or a float, ``device_index`` an int, ``host_check`` a bool, ``device`` a str,
    ``python`` a str, an ``os.PathLike`` or None), ``ValueError`` for a wrong value (``device``
    is exactly "gpu" or "cpu", ``device_index`` 0 or more, ``timeout`` 5 to 120 seconds).

    ``distributed=True`` runs this process's rank of a job started by torchrun or Slurm (see
    docs/scale.md): ``ValueError`` outside a launcher, naming the variables missing.

    ``all_devices=True`` checks every visible GPU, each with its own result. Arguments that
    contradict each other are a ``ValueError`` naming both: ``all_devices=True`` with
    ``device="cpu"``, a ``device_index`` other than 0 or ``distributed=True``; a
    ``device_index`` other than 0 with ``device="cpu"`` or ``distributed=True`` (a rank checks
    the device of its local rank).

    ``extensions=True`` also imports every installed torch extension, each bounded;
    ``kernels=True`` also verifies the kernels applications use (see docs/libraries.md). Both
    are bools (``TypeError`` otherwise). Without a ``timeout``, the check has 30 seconds, and
    120 with ``kernels=True`` (a cold ``torch.compile`` alone takes 20 to 50), as on the command
    line.

    ``progress(stage, elapsed_s)`` is called about 20 times a second while the worker runs,
    with the stage it is in ("import", "compute"...) and the seconds since it started. By
    default (None), a notebook's cell shows the stage and the time used, as the command line's
    live line does, removed when the check ends (nothing outside a kernel), and True the same;
    False shows nothing (``TypeError`` for anything else that cannot be called).

    In this interpreter (``python`` None, the default), the worker imports torch with this
    program's own ``sys.path``, in order: in a notebook, the kernel's, with the notebook's
    folder and any entry a cell added. The report says how the torch this program already
    imported compares with the one the check found (``runtime.caller``).
    """
    if not (progress is None or isinstance(progress, bool) or callable(progress)):
        raise TypeError(ENGLISH("api.type.progress", type=type(progress).__name__))
    if timeout is None:
        timeout = KERNELS_TIMEOUT_DEFAULT_S if kernels is True else TIMEOUT_DEFAULT_S
    options = validate(device=device, device_index=device_index, timeout=timeout,
                       host_check=host_check, python=python, distributed=distributed,
                       all_devices=all_devices, extensions=extensions, kernels=kernels)
    if callable(progress) or progress is False:
        return run(as_caller(options), on_progress=progress or None)
    live = _CellProgress(options.timeout_s)
    try:
        return run(as_caller(options), on_progress=live.update if live.shown else None)
    finally:
        live.clear()


# Each stage's label while it runs, in the order the stages run (worker.protocol.STAGES: a test
# holds them alike): the command line's live line and a notebook's.
LIVE_LABELS: dict[str, str] = {
    "interpreter": "ui.live.interpreter", "import": "ui.live.import",
    "backend": "ui.live.backend", "device": "ui.live.device", "compute": "ui.live.compute",
    "extensions": "ui.live.extensions", "kernels": "ui.live.kernels",
    "collective": "ui.live.collective"}


def progress_text(stage: str, elapsed_s: float, limit_s: float,
                  translate: Translate = ENGLISH) -> str:
    """``importing torch... 3.1 s / 30 s``: the stage running and the time used of the limit."""
    stage, _, step = stage.partition(":")  # "kernels:compile": the stage and its sub-step
    label = translate(LIVE_LABELS[stage]) if stage in LIVE_LABELS else stage
    if step:
        label = f"{label} ({step})"
    return f"{label}... {elapsed_s:.1f} s / {limit_s:g} s"


class _CellProgress:
    """The check's live line in a notebook: one output of the running cell, updated in place
    (at most 5 times a second, from half a second on); when the check ends, the time it took
    (``check done in 3.1 s``): an output emptied instead stayed in the saved notebook, empty.
    Nothing outside a Jupyter kernel (``shown`` False)."""

    def __init__(self, limit_s: float) -> None:
        from .facts.caller import in_kernel

        self.shown = in_kernel()
        self._limit = limit_s
        self._handle: Any = None
        self._last = 0.0
        self._start = time.monotonic()

    def update(self, stage: str, elapsed_s: float) -> None:
        if elapsed_s < 0.5 or elapsed_s - self._last < 0.2:
            return
        self._last = elapsed_s
        shown = {"text/plain": progress_text(stage, elapsed_s, self._limit)}
        if self._handle is None:
            display = importlib.import_module("IPython.display").display  # the kernel's own
            self._handle = display(shown, raw=True, display_id=True)
        else:
            self._handle.update(shown, raw=True)

    def clear(self) -> None:
        if self._handle is not None:
            took = ENGLISH("ui.live.done", seconds=f"{time.monotonic() - self._start:.1f}")
            self._handle.update({"text/plain": took}, raw=True)


def as_caller(options: Options) -> Options:
    """The options with the caller's import path and state, when the worker runs in the
    caller's own interpreter (another interpreter has its own path: nothing of this one's)."""
    from .interpreter import is_front_interpreter

    if not is_front_interpreter(options.python):
        return options
    from dataclasses import replace

    from .facts import caller

    return replace(options, caller=caller.caller_state())


def validate(*, device: Any, device_index: Any, timeout: Any, host_check: Any = False,
             python: Any = None, distributed: Any = False, all_devices: Any = False,
             extensions: Any = False, kernels: Any = False,
             translate: Translate = ENGLISH) -> Options:
    """Check every argument of ``check()``: ``TypeError`` for a wrong type, ``ValueError`` for a
    wrong value or two that contradict each other, each one line naming the parameters
    (``check(timeout=...)``).

    The command line converts its text first and uses the same rules (``known_device``,
    ``index_in_range``, ``timeout_in_range``, ``request.contradiction``) in its own words.
    """
    if python is not None and not isinstance(python, (str, os.PathLike)):
        raise TypeError(translate("api.type.python", type=type(python).__name__))
    mode = validate_device(device, translate)
    index = validate_device_index(device_index, translate)
    every = validate_bool("api.type.all_devices", all_devices, translate)
    asked = {"cpu"} if mode == "cpu" else set()
    asked |= {name for name, on in (("device_index", index != 0), ("all_devices", every),
                                    ("distributed", distributed is True)) if on}
    refuse_contradiction(asked, index, translate)
    launch = validate_distributed(distributed, translate)
    return Options(device=mode,
                   # each rank checks its own device
                   device_index=index if launch is None else launch.local_rank,
                   timeout_s=validate_timeout(timeout, translate),
                   host_check=validate_host_check(host_check, translate),
                   python=validate_python(python, translate),
                   distributed=launch is not None, launch=launch, all_devices=every,
                   extensions=validate_flag("extensions", extensions, translate),
                   kernels=validate_flag("kernels", kernels, translate))


# How check() writes each option of ``request.contradiction`` in its refusal.
_API_WORDS = {"cpu": "device='cpu'", "device_index": "device_index={index}",
              "all_devices": "all_devices=True", "distributed": "distributed=True"}


def refuse_contradiction(asked: set[str], index: int, translate: Translate = ENGLISH) -> None:
    """``ValueError`` naming two of check()'s arguments that contradict each other, in its own
    words (never a --flag): ``check(all_devices=True, device='cpu'): ...``."""
    found = contradiction(asked)
    if found is not None:
        first, second, why = found
        raise ValueError(translate(
            "api.contradiction", first=_API_WORDS[first].format(index=index),
            second=_API_WORDS[second].format(index=index), reason=translate(why)))


def validate_distributed(value: Any, translate: Translate = ENGLISH) -> Launch | None:
    """``check(distributed=...)``: True or False; True only under torchrun or Slurm."""
    validate_bool("api.type.distributed", value, translate)
    if not value:
        return None
    from .facts.launcher import LaunchError, detect

    try:
        return detect(os.environ)
    except LaunchError as exc:
        raise ValueError(translate("api.argument", parameter="distributed",
                                   reason=translate(exc.key, **exc.values))) from None


def validate_bool(key: str, value: Any, translate: Translate = ENGLISH) -> bool:
    """A parameter that is True or False; else ``TypeError`` with the message ``key``, which
    names the parameter."""
    if not isinstance(value, bool):
        raise TypeError(translate(key, type=type(value).__name__))
    return value


def validate_device(value: Any, translate: Translate = ENGLISH) -> Device:
    """``check(device=...)``: exactly "gpu" or "cpu"."""
    if not isinstance(value, str):
        raise TypeError(translate("api.type.device", type=type(value).__name__))
    return _as_parameter("device", lambda: known_device(value, translate, "api"), translate)


def validate_device_index(value: Any, translate: Translate = ENGLISH) -> int:
    """``check(device_index=...)``: an int (or another integer type, like NumPy's), not a bool."""
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        raise TypeError(translate("api.type.device_index", type=type(value).__name__))
    index = operator.index(value)
    return _as_parameter("device_index", lambda: index_in_range(index, translate), translate)


def validate_timeout(value: Any, translate: Translate = ENGLISH) -> float:
    """``check(timeout=...)``: seconds as an int or a float, not a bool or a str."""
    if isinstance(value, bool) or not (isinstance(value, (int, float))
                                       or hasattr(type(value), "__index__")):
        raise TypeError(translate("api.type.timeout", type=type(value).__name__))
    try:
        seconds = float(value)
    except OverflowError:  # an integer no float holds (10**400): far out of range, as is inf
        seconds = math.inf if operator.index(value) > 0 else -math.inf
    return _as_parameter("timeout", lambda: timeout_in_range(seconds, translate), translate)


def validate_host_check(value: Any, translate: Translate = ENGLISH) -> bool:
    """``check(host_check=...)``: True or False."""
    if not isinstance(value, bool):
        raise TypeError(translate("api.type.host_check", type=type(value).__name__))
    return value


def validate_flag(parameter: str, value: Any, translate: Translate = ENGLISH) -> bool:
    """``check(extensions=...)``, ``check(kernels=...)``: True or False."""
    if not isinstance(value, bool):
        raise TypeError(translate("api.type.flag", parameter=parameter,
                                  type=type(value).__name__))
    return value


# -- the rules, one place each: the API and the command line both use them ---------------------

def known_device(name: str, translate: Translate = ENGLISH,
                 surface: Literal["api", "cli"] = "api") -> Device:
    """The device mode: "gpu" or "cpu". ROCm and CUDA are not modes (both use the GPU mode); the
    hint says how to ask for it in the caller's own terms."""
    for device in DEVICES:
        if name == device:
            return device
    if name.strip().lower() in ("rocm", "hip", "cuda"):
        raise ValueError(translate("api.device.rocm" if surface == "api" else "cli.device.rocm",
                                   value=repr(name)))
    raise ValueError(translate("arg.device.unknown", value=repr(name)))


def index_in_range(index: int, translate: Translate = ENGLISH) -> int:
    """A device index: 0 or more (whether that device exists is the check's to find out)."""
    if index < 0:
        raise ValueError(translate("arg.index.negative", value=index))
    return index


def timeout_in_range(seconds: float, translate: Translate = ENGLISH) -> float:
    """The limit for the whole check: finite, from TIMEOUT_MIN_S to TIMEOUT_MAX_S seconds."""
    if not (math.isfinite(seconds) and TIMEOUT_MIN_S <= seconds <= TIMEOUT_MAX_S):
        raise ValueError(translate("arg.timeout.range", low=TIMEOUT_MIN_S, high=TIMEOUT_MAX_S,
                                   value=f"{seconds:g}"))
    return seconds


def _as_parameter(parameter: str, rule: Callable[[], _T], translate: Translate) -> _T:
    """``rule()``, its refusal prefixed with ``check(parameter=...)``: an API caller reads the
    parameter's name where the command line reads its --flag."""
    try:
        return rule()
    except ValueError as exc:
        raise ValueError(translate("api.argument", parameter=parameter, reason=exc)) from None


def validate_python(value: Any, translate: Translate = ENGLISH) -> str:
    """The interpreter to diagnose: this one by default, or a file that can be started.

    Only what can be told without running anything is checked here, at once: a missing path, a
    folder, a link whose target is gone, a file without the right to run. Whether the program is
    a Python, and which, is learned within the check's time limit (``run``): an interpreter that
    hangs at start is a ``TIMEOUT`` at stage ``interpreter``, not a usage error.
    """
    if value is None:
        return sys.executable
    path = os.fspath(value)
    key = interpreter_problem(path)
    if key is not None:
        raise ValueError(translate("api.argument", parameter="python", reason=translate(key)))
    return str(path)


def interpreter_problem(path: str) -> str | None:
    """Why ``path`` cannot be an interpreter, without running it (a message key), or None."""
    if not path:
        return "arg.python.missing"
    if not os.path.lexists(path):
        return "arg.python.no_access" if _denied(os.lstat, path) else "arg.python.missing"
    if not os.path.exists(path):
        # A virtual environment's python is a link to the Python it was made from: removed or
        # upgraded since, the link leads nowhere; or it is there, in a folder this user may not
        # enter (another user's home, mode 0700): permission denied, not gone.
        return "arg.python.no_access" if _denied(os.stat, path) else "arg.python.dangling"
    if os.path.isdir(path):
        return "arg.python.folder"
    if not os.access(path, os.X_OK):
        return "arg.python.not_executable"
    return None


def _denied(stat: Callable[[str], Any], path: str) -> bool:
    """Whether ``stat(path)`` fails for want of permission (a folder on the way this user may not
    search), as opposed to a file that is not there."""
    try:
        stat(path)
    except PermissionError:
        return True
    except (OSError, ValueError):
        return False
    return False


class InterpreterRejected(ValueError):
    """The program given as the interpreter is not a Python 3.9+: an invalid argument, found
    by running it (within the time limit). ``key`` and ``values`` say why in any language."""

    def __init__(self, key: str, **values: str) -> None:
        super().__init__(ENGLISH("api.argument", parameter="python",
                                 reason=ENGLISH(key, **values)))
        self.key = key
        self.values = values


@dataclass(frozen=True)
class InterpreterProbe:
    """What running ``PATH -E -S -c <probe>`` showed: a Python and its version, or not."""

    outcome: Literal["python", "not_python", "not_started", "timeout", "died"]
    version: tuple[int, int] | None = None


def interpreter_version(path: str, timeout_s: float = _PROBE_TIMEOUT_S) -> InterpreterProbe:
    """Ask the program at ``path`` for its Python version, within ``timeout_s`` seconds.

    -E and -S: only the interpreter itself answers, not a broken environment variable or site
    hook (those the check reports on). The answer is a marked line found in the output's tail:
    a wrapper script or a program that prints a banner first is still read right, and the front
    never holds more than that tail. The probe itself parses on Python 2.7, so that an old
    Python is named as one.
    """
    import tempfile

    from .supervision.captures import tail_of

    with _scratch_file(tempfile) as output:
        try:
            process = spawn([path, "-E", "-S", "-c", _VERSION_PROBE], stdout=output,
                            stderr=subprocess.DEVNULL)
        except OSError:
            return InterpreterProbe("not_started")
        try:
            process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            return InterpreterProbe("timeout")
        finally:
            kill_tree(process)
        found = _VERSION_LINE.findall(tail_of(output, _PROBE_TAIL_BYTES)[0])
    if not found:
        # Killed by a signal before it answered (a library preloaded into it aborts, a crash at
        # start): a program that died, not one that is no Python. The worker's report says how.
        return InterpreterProbe("died" if (process.returncode or 0) < 0 else "not_python")
    major, minor = found[-1]
    return InterpreterProbe("python", (int(major), int(minor)))


def _scratch_file(tempfile: Any) -> IO[bytes]:
    """A nameless file for a child's output: in the temporary folder, or, where no folder takes
    one (a full ``/tmp``, a read-only ``/var/tmp``), in memory (Linux's ``memfd_create``)."""
    try:
        return tempfile.TemporaryFile()  # type: ignore[no-any-return]
    except OSError:
        if not hasattr(os, "memfd_create"):
            raise
        return os.fdopen(os.memfd_create("kernodeck-probe"), "w+b")


def refuse_what_is_not_a_python(python: str, worker: WorkerRun, deadline: float) -> None:
    """Raise ``InterpreterRejected`` when the worker never ran because ``python`` is not a
    Python 3.9+ (it wrote no event at all); a Python that ran it, or hung, has its report, and
    so does a program that died of a signal at start (WORKER_FAILED at the interpreter stage):
    that is a fault of the interpreter checked, not a wrong argument."""
    if worker.state.events or worker.outcome == "timeout":
        return
    probe = interpreter_version(python, max(deadline - time.monotonic(), _PROBE_MIN_S))
    if probe.outcome == "not_started":
        raise InterpreterRejected("arg.python.not_runnable")
    if probe.outcome == "not_python":
        raise InterpreterRejected("arg.python.not_python")
    if probe.version is not None and probe.version < MINIMUM_PYTHON:
        raise InterpreterRejected("arg.python.too_old", version="{}.{}".format(*probe.version),
                                  minimum="{}.{}".format(*MINIMUM_PYTHON))
    # A Python 3.9+ that ended before the worker's first event: the report says how.


def run(options: Options, on_progress: Callable[[str, float], None] | None = None, *,
        command_line: bool = False) -> Report:
    """Run a validated check: host probe and worker side by side, then the report.

    ``command_line``: the check of the command line, whose user's program is one started in the
    working folder; else the calling program is the user's (``supervisor.user_path0``)."""
    if options.host_check:
        # First of all: the probe's few seconds overlap everything that follows. Only when asked:
        # a check without it never loads the module.
        from .facts.host import HostProbe

        host: HostProbe | None = HostProbe().start()
    else:
        host = None
    from .interpreter import is_front_interpreter
    from .supervision.supervisor import run_worker, user_path0
    deadline = time.monotonic() + options.timeout_s
    launch = options.launch
    if launch is not None:
        # Before the worker: rank 0's store binds the port the test binds.
        from .facts.network import collect as network_facts

        network = network_facts(os.environ, serves_port=launch.master_port
                                if launch.serves_store(os.environ) else None)
    system: list[Callable[[], dict[str, Any] | None]] = []
    redactors: list[Redactor] = []
    nodes: list[dict[str, Any] | None] = []

    def beside_the_worker() -> None:
        # Once the worker runs, not before (its start is the critical path): the machine's facts
        # (system block), whose nvcc run overlaps the check, what reads the result, the
        # redaction's rules (this process's environment, names and folders) and the node's
        # facts (its kernel, devices and loader cache), neither of which the worker's run
        # changes: read once it has ended, they would delay the verdict.
        from .facts.system import start_probe

        system.append(start_probe())
        _load_what_reads_the_result()
        from .facts.node import collect as node_facts
        from .report.redact import Redactor

        redactors.append(Redactor.for_this_machine(secrets=_store_place(launch)))
        nodes.append(node_facts())

    worker = run_worker(options.python, device=options.device,
                        device_index=options.device_index, timeout_s=options.timeout_s,
                        on_progress=on_progress, on_started=beside_the_worker,
                        path0=user_path0(command_line=command_line), caller=options.caller,
                        extra=[*(launch.worker_arguments() if launch is not None else
                                 ["--all-devices"] if options.all_devices else []),
                               *library_arguments(options)])
    if not is_front_interpreter(options.python):
        try:
            refuse_what_is_not_a_python(options.python, worker, deadline)
        except InterpreterRejected:
            if host is not None:
                kill_all()  # the host probe's tool, if it still runs
            raise
    from .facts.environment import library_override, tool_environment, working_folder_missing
    from .report.build import build
    from .report.redact import Redactor
    state = worker.state
    # The worker inherited this process's environment: the raw messages (not yet redacted) name
    # the library the loader rejected, and the variables here say which folder supplied it.
    texts = [(state.error or {}).get("message"), state.facts.get("pytorch", {}).get("init_error"),
             worker.stderr_line, *(warning.get("message") for warning in state.warnings)]
    from .facts.node import collect as node_facts
    # import torch raised (not "No module named", not a shadow never imported) or killed the
    # worker: a C++ libtorch on LD_LIBRARY_PATH may be why, whatever the message says.
    raised = (state.error or {}).get("type")
    import_failed = (state.stage == "import"
                     and state.facts.get("pytorch", {}).get("imported") is not True
                     and (raised not in (None, "ModuleNotFoundError")
                          or (state.error is None and not state.final)))
    front = {"library_override": library_override(texts, torch_failed=import_failed),
             "tool_environment": tool_environment(options.python),
             "working_folder_missing": working_folder_missing(),
             "node": nodes[0] if nodes else node_facts(),  # read now when no worker started
             "system": _system_facts(system)}
    if options.caller is not None:
        # What the front knows of its caller without the worker (the worker adds where its
        # torch came from): kept when the worker hangs or crashes before saying it.
        front["caller"] = {name: options.caller.get(name)
                           for name in ("kernel", "torch_imported", "torch_version")}
    # Called in a Jupyter kernel: advice in a notebook's words, whichever interpreter was checked.
    front["called_from_kernel"] = importlib.import_module(".facts.caller", __package__).in_kernel()
    job: dict[str, Job] = {}
    if launch is not None:
        # The job's verdict is decided with the rank's own, before the report is assembled.
        from .report.distributed import Job

        job["job"] = Job(launch, network)
    redactor = (redactors[0] if redactors
                else Redactor.for_this_machine(secrets=_store_place(launch)))
    built = build(options, worker, host.result() if host else None, redactor, front, **job)
    return Report(built.report, worker.state.local_paths, built.findings)


# What the front needs once the worker has ended: loaded while the worker starts its interpreter
# and imports torch (a second or more; on another processor where there is one), not before the
# worker starts. It matters most where each module is compiled on every run (the zipapp under a
# Python it holds no bytecode for). The distributed report's module chooses every report's next
# line (with hashlib's OpenSSL, which a job's digest needs): loaded here too, even for a check
# that is not part of a job.
_READS_THE_RESULT = ("report.build", "report.redact", "report.render", "report.distributed",
                     "facts.environment", "facts.node")


def _system_facts(started: list[Callable[[], dict[str, Any] | None]]) -> dict[str, Any] | None:
    """The system block: the probe started beside the worker, or now when no worker started."""
    if not started:
        from .facts.system import start_probe

        started.append(start_probe())
    return started[0]()


def _store_place(launch: Launch | None) -> list[str]:
    """--distributed: the store's address and port, hidden wherever a message quotes them (a
    c10d line names ``[host]:port``); a port is too short for the rule on variables' values."""
    if launch is None:
        return []
    return [launch.master_addr, f":{launch.master_port}", f"port {launch.master_port}"]


def _load_what_reads_the_result() -> None:
    for name in _READS_THE_RESULT:
        importlib.import_module(f".{name}", __package__)


def library_arguments(options: Options) -> list[str]:
    """The worker's arguments for the library stages asked for (the check's time limit, which
    bounds each extension's import, reaches every worker: see ``run_worker``)."""
    return [f"--{name}" for name in LIBRARY_FLAGS if getattr(options, name)]

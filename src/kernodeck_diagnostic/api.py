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
import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from .arguments import (
    KERNELS_TIMEOUT_DEFAULT_S,
    TIMEOUT_DEFAULT_S,
    TIMEOUT_MAX_S,
    TIMEOUT_MIN_S,
    Options,
    index_in_range,
    known_device,
    refuse_contradiction,
    timeout_in_range,
    validate,
    validate_bool,
    validate_device,
    validate_device_index,
    validate_distributed,
    validate_flag,
    validate_host_check,
    validate_python,
    validate_timeout,
)
from .children import kill_all
from .i18n import ENGLISH, Translate
from .interpreter import interpreter_problem
from .interpreter_probe import (
    MINIMUM_PYTHON,
    InterpreterProbe,
    InterpreterRejected,
    interpreter_version,
    refuse_what_is_not_a_python,
)
from .request import LIBRARY_FLAGS, Device, Request

if TYPE_CHECKING:
    from .facts.host import HostProbe
    from .facts.launcher import Launch
    from .report.findings import Finding
    from .report.redact import Redactor
    from .supervision.supervisor import WorkerRun

# The API: check(), run() and Report, and the names of check()'s arguments and of the
# interpreter probe, which live beside the request and the interpreter (``arguments``,
# ``interpreter``, ``interpreter_probe``) and are given here as they always were.
__all__ = [
    "KERNELS_TIMEOUT_DEFAULT_S",
    "LIVE_LABELS",
    "MINIMUM_PYTHON",
    "TIMEOUT_DEFAULT_S",
    "TIMEOUT_MAX_S",
    "TIMEOUT_MIN_S",
    "Device",
    "InterpreterProbe",
    "InterpreterRejected",
    "Options",
    "Report",
    "Request",
    "as_caller",
    "check",
    "index_in_range",
    "interpreter_problem",
    "interpreter_version",
    "known_device",
    "library_arguments",
    "progress_text",
    "refuse_contradiction",
    "refuse_what_is_not_a_python",
    "run",
    "timeout_in_range",
    "validate",
    "validate_bool",
    "validate_device",
    "validate_device_index",
    "validate_distributed",
    "validate_flag",
    "validate_host_check",
    "validate_python",
    "validate_timeout",
]


class Report:
    """One check's report: the code and findings as attributes, the full report as a dict.

    In Jupyter it displays as the same markdown the command line prints with --format markdown.
    """

    def __init__(self, data: Mapping[str, Any], local_paths: dict[str, str | None] | None = None,
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
        from .report import shapes
        from .report.render import markdown

        # A report this tool made (``check``), or one read as JSON: rendered as the schema has it.
        return markdown(cast(shapes.Report, self._data), findings=self.found)

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


def run(options: Options, on_progress: Callable[[str, float], None] | None = None, *,
        command_line: bool = False) -> Report:
    """Run a validated check: host probe and worker side by side, then the report.

    ``command_line``: the check of the command line, whose user's program is one started in the
    working folder; else the calling program is the user's (``supervisor.user_path0``)."""
    host: HostProbe | None = None
    if options.host_check:
        # First of all: the probe's few seconds overlap everything that follows. Only when asked:
        # a check without it never loads the module.
        from .facts.host import HostProbe

        host = HostProbe().start()
    from .interpreter import is_front_interpreter
    from .supervision.supervisor import run_worker, user_path0
    deadline = time.monotonic() + options.timeout_s
    launch = options.launch
    network = None
    if launch is not None:
        # Before the worker: rank 0's store binds the port the test binds.
        from .facts.network import collect as network_facts

        network = network_facts(os.environ, serves_port=launch.master_port
                                if launch.serves_store(os.environ) else None)
    beside = _BesideTheWorker(launch)
    worker = run_worker(options.python, device=options.device,
                        device_index=options.device_index, timeout_s=options.timeout_s,
                        on_progress=on_progress, on_started=beside.start,
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
    from .report.build import build

    front = _front_facts(options, worker, beside)
    place = None
    if launch is not None:
        # The job's verdict is decided with the rank's own, before the report is assembled.
        from .report.distributed import RankPlace

        place = RankPlace(launch, network)
    built = build(options, worker, host.result() if host else None, beside.redactor(), front,
                  place=place)
    return Report(built.report, worker.state.local_paths, built.findings)


class _BesideTheWorker:
    """What the front reads once the worker runs, not before (its start is the critical path):
    the machine's facts (the system block), whose nvcc run overlaps the check, what reads the
    result, the redaction's rules (this process's environment, names and folders) and the
    node's facts (its kernel, devices and loader cache), neither of which the worker's run
    changes: read once it has ended, they would delay the verdict. When no worker started
    (``start`` never called), each is read when it is asked for."""

    def __init__(self, launch: Launch | None) -> None:
        self._launch = launch
        self._system: Callable[[], dict[str, Any] | None] | None = None
        self._redactor: Redactor | None = None
        self._node: dict[str, Any] | None = None
        self._started = False

    def start(self) -> None:
        """The worker's ``on_started``."""
        from .facts.system import start_probe

        self._system = start_probe()
        _load_what_reads_the_result()
        from .facts.node import collect as node_facts

        self._redactor = self._new_redactor()
        self._node = node_facts()
        self._started = True

    def system(self) -> dict[str, Any] | None:
        """The system block: the probe started beside the worker, or now."""
        if self._system is None:
            from .facts.system import start_probe

            self._system = start_probe()
        return self._system()

    def node(self) -> dict[str, Any] | None:
        if self._started:
            return self._node
        from .facts.node import collect as node_facts

        return node_facts()

    def redactor(self) -> Redactor:
        return self._redactor if self._redactor is not None else self._new_redactor()

    def _new_redactor(self) -> Redactor:
        from .report.redact import Redactor

        return Redactor.for_this_machine(secrets=_store_place(self._launch))


def _front_facts(options: Options, worker: WorkerRun,
                 beside: _BesideTheWorker) -> dict[str, Any]:
    """What the front reads itself once the worker has ended (``report.build``'s ``front``)."""
    from .facts.environment import (
        library_override,
        python_home_set,
        tool_environment,
        working_folder_missing,
    )

    state = worker.state
    # The worker inherited this process's environment: the raw messages (not yet redacted) name
    # the library the loader rejected, and the variables here say which folder supplied it.
    texts = [(state.error or {}).get("message"), state.facts.get("pytorch", {}).get("init_error"),
             worker.stderr_line, *(warning.get("message") for warning in state.warnings)]
    # import torch raised (not "No module named", not a shadow never imported) or killed the
    # worker: a C++ libtorch on LD_LIBRARY_PATH may be why, whatever the message says.
    raised = (state.error or {}).get("type")
    import_failed = (state.stage == "import"
                     and state.facts.get("pytorch", {}).get("imported") is not True
                     and (raised not in (None, "ModuleNotFoundError")
                          or (state.error is None and not state.final)))
    front = {"library_override": library_override(
                 texts, torch_failed=import_failed,
                 interpreter=state.local_paths.get("interpreter") or options.python),
             "tool_environment": tool_environment(options.python),
             "working_folder_missing": working_folder_missing(),
             "python_home_set": python_home_set(),
             "node": beside.node(),  # read now when no worker started
             "system": beside.system()}
    if options.caller is not None:
        # What the front knows of its caller without the worker (the worker adds where its
        # torch came from): kept when the worker hangs or crashes before saying it.
        front["caller"] = {name: options.caller.get(name)
                           for name in ("kernel", "torch_imported", "torch_version")}
    # Called in a Jupyter kernel: advice in a notebook's words, whichever interpreter was checked.
    front["called_from_kernel"] = importlib.import_module(".facts.caller", __package__).in_kernel()
    return front


# What the front needs once the worker has ended: loaded while the worker starts its interpreter
# and imports torch (a second or more; on another processor where there is one), not before the
# worker starts. It matters most where each module is compiled on every run (the zipapp under a
# Python it holds no bytecode for). The distributed report's module chooses every report's next
# line (with hashlib's OpenSSL, which a job's digest needs): loaded here too, even for a check
# that is not part of a job.
_READS_THE_RESULT = ("report.build", "report.redact", "report.render", "report.distributed",
                     "facts.environment", "facts.node")


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

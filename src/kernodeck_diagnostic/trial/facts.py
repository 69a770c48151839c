"""What an attempt says about its environment: the check report's ``runtime`` and ``pytorch``
blocks, read in the user's own process by the worker's own code, and the command line.

The worker's stages emit their facts as events; here they are collected from an in-memory sink,
held to the report's schema exactly as the front holds a worker's (``supervision/events.py``),
given the report's shape (``report/build.py``) and redacted (``report/redact.py``). torch is the
one the program already imported: nothing here imports it, and no device the program did not
initialise is asked anything.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any, Callable

from ..report.redact import Redactor
from .memory import Devices


class _Collected:
    """Stands for the worker's event file: keeps the ``facts`` events, drops the others."""

    def __init__(self) -> None:
        from ..supervision.events import WorkerState

        self.state = WorkerState()

    def emit(self, event: str, **fields: Any) -> None:
        if event == "facts":
            self.state.apply({"event": event, **fields})


def environment(torch: Any, redactor: Redactor) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ``runtime`` and ``pytorch`` blocks, as a check report gives them, redacted."""
    from ..report.build import _pytorch, _runtime
    from ..worker import stages

    sink = _Collected()
    # The device the program computes on, if any: the worker reads its facts (count, names,
    # memory) only then, as the program itself has initialised it already.
    in_use = Devices().in_use(torch)
    worker = stages.Worker(sink, "cpu", (in_use[0].index or 0) if in_use else 0)  # type: ignore[arg-type]
    worker.facts("runtime", warnings_as_errors=stages.warnings_as_errors())
    steps = [worker.stage_interpreter]
    if torch is not None:
        worker.torch = torch
        # The import stage finds the torch already imported (sys.modules) and only reads where
        # it came from; without a first import path (None) it looks at no folder of the user's.
        steps += [worker.stage_import, worker.stage_backend]
    _run(steps)
    if torch is not None and getattr(worker, "backend", "cpu") != "cpu":
        # A GPU build: its backend stage again, in GPU mode, for the build's own facts
        # (architectures, cuDNN, NCCL), then the devices when the program uses one.
        worker.device = "gpu"
        _run([worker.stage_backend, *([worker.stage_device] if in_use else [])])
    facts = redactor.value(sink.state.facts)
    runtime = {**_runtime(facts.get("runtime", {})), "library_override": None,
               "tool_environment": None}
    return runtime, _pytorch(facts.get("pytorch", {}))


def _run(steps: list[Callable[[], None]]) -> None:
    for step in steps:
        # A stage's diagnosis (StageError) or a fact that could not be read: the facts read
        # before it stay, and the next step still runs.
        with contextlib.suppress(Exception):
            step()


def command_line(redactor: Redactor) -> list[str]:
    """How the program was started, redacted: the interpreter's file name, then its arguments."""
    interpreter = os.path.basename(sys.executable or "") or "python"
    return [interpreter, *(redactor.text(str(argument)) for argument in sys.argv)]

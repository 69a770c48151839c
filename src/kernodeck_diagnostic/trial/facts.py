"""What an attempt says about its environment: the check report's ``runtime`` and ``pytorch``
blocks, read in the user's own process by the worker's own code, and the command line.

The functions the worker's stages read them with read them here too
(``worker.readings.environment``); here they are held to the report's schema exactly as the front
holds a worker's events (``supervision/events.py``), given the report's shape
(``report/build.py``) and redacted (``report/redact.py``). torch is the one the program already
imported: nothing here imports it, and no device the program did not initialise is asked
anything.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from ..report.redact import Redactor, redact_argv
from .memory import Devices


def environment(torch: Any, redactor: Redactor) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ``runtime`` and ``pytorch`` blocks, as a check report gives them, redacted."""
    from ..report.build import pytorch_block, runtime_block
    from ..supervision.events import WorkerState
    from ..worker.readings import environment as read_environment

    # The device the program computes on, if any: the worker reads its facts (count, names,
    # memory) only then, as the program itself has initialised it already.
    in_use = Devices().in_use(torch)
    index = (in_use[0].index or 0) if in_use else None
    state = WorkerState()
    for block, values in read_environment(torch, index).items():
        state.apply({"event": "facts", "block": block, "values": values})
    facts = redactor.value(state.facts)
    runtime = {**runtime_block(facts.get("runtime", {})), "library_override": None,
               "tool_environment": None, "working_folder_missing": None}
    return runtime, pytorch_block(facts.get("pytorch", {}))


def command_line(redactor: Redactor) -> list[str]:
    """How the program was started, redacted: the interpreter's file name, then its arguments.

    In a Jupyter kernel, ``ipykernel`` and the notebook's file name when known: its arguments
    are the launcher and a connection file that changes at every start (noise in a record, and
    a difference in every comparison of two runs of the same notebook)."""
    from ..facts.caller import kernel_command

    interpreter = os.path.basename(sys.executable or "") or "python"
    kernel = kernel_command()
    if kernel is not None:
        return [interpreter, *(redactor.text(part) for part in kernel)]
    return [interpreter, *redact_argv(sys.argv, redactor)]

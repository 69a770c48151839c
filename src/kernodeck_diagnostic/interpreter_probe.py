"""The interpreter to diagnose asked what it is, when the worker never ran in it: a program that
is not a Python 3.9+ is an invalid argument (``InterpreterRejected``), found within the check's
time limit; a Python that ran the worker, or hung, or died of a signal at start has its report."""

from __future__ import annotations

import os
import re
import subprocess
import time
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, Literal

from .children import kill_tree, spawn
from .i18n import ENGLISH

if TYPE_CHECKING:
    from .supervision.supervisor import WorkerRun

MINIMUM_PYTHON = (3, 9)
_PROBE_TIMEOUT_S = 20.0
# At least this long to tell why a worker never ran, even when it ended at the limit.
_PROBE_MIN_S = 0.5
_PROBE_TAIL_BYTES = 4096
# A line of its own, after anything a wrapper printed; Python 2.7 parses it too.
_VERSION_PROBE = ("import sys; sys.stdout.write('\\nkernodeck-python-version %d.%d\\n'"
                  " % sys.version_info[:2])")
_VERSION_LINE = re.compile(rb"^kernodeck-python-version (\d+)\.(\d+)\r?$", re.MULTILINE)


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
    if worker.state.events or worker.outcome == "timeout" or worker.tool_need is not None:
        return  # the tool's own need (open files, a process) is the report's, not the argument's
    probe = interpreter_version(python, max(deadline - time.monotonic(), _PROBE_MIN_S))
    if probe.outcome == "not_started":
        raise InterpreterRejected("arg.python.not_runnable")
    if probe.outcome == "not_python":
        raise InterpreterRejected("arg.python.not_python")
    if probe.version is not None and probe.version < MINIMUM_PYTHON:
        raise InterpreterRejected("arg.python.too_old", version="{}.{}".format(*probe.version),
                                  minimum="{}.{}".format(*MINIMUM_PYTHON))
    # A Python 3.9+ that ended before the worker's first event: the report says how.

"""What the tool itself could not get from this process's limits (issue 44): a few open files,
a process or a thread, memory for the worker beside the front. Torch may well run within the
same limits: such a failure is no verdict on the machine, and never ``WORKER_FAILED``.

Each need is read from evidence the run left, never guessed from a limit alone:

- open files: the system refused a descriptor (``EMFILE``, ``ENFILE``) when the worker was
  started, or the worker ended on that error (its last line on stderr) while this process's
  soft limit (``ulimit -n``) is below what the tool is known to need with room (``ROOMY_FILES``);
- processes: the system refused the worker's process (``EAGAIN`` at its start: ``ulimit -u``, a
  cgroup's ``pids.max``), or the worker ended unable to start a thread;
- memory: the worker died of SIGKILL while a memory cgroup of the run (the front's, the
  worker's) counted an OOM kill (``oom_killer.OomWatch``, the reading the ramp uses), named with
  that cgroup's limit (``memory.max``, v1 ``memory.limit_in_bytes``).

Each is a message key (``error.tool_needs.*``) and its values: the limit, and the value the
advice asks for, which the tests apply as printed (tests/reliability/test_tool_needs.py).
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import sys
from typing import TYPE_CHECKING

from ..untrusted_json import read_regular
from .oom_killer import CGROUP_ROOT

if TYPE_CHECKING:
    from .oom_killer import OomWatch

# A message key (error.tool_needs.*) and its values.
Need = tuple[str, dict[str, str]]

# The tool runs with 12 descriptors on Linux (the front's pipes and captures, the worker's); the
# advice asks for this many at least, and a soft limit this high is no shortage of the tool's.
ROOMY_FILES = 64
ROOMY_PROCESSES = 64  # the front, the worker, their threads and torch's, with room
ROOMY_MEMORY_MB = 1024  # torch's CPU import takes about 220 MB here, a GPU context far more
_MB = 1024 * 1024
_NO_LIMIT = 1 << 60  # cgroup v1's "no limit" is a page-aligned 2**63 - 1
_FILES = (errno.EMFILE, errno.ENFILE)
_SMALL_FILE_BYTES = 4096
_SIGKILL = getattr(signal, "SIGKILL", 9)


def at_start(code: int | None) -> Need | None:
    """What the worker's start lacked, from the system's refusal (``errno``), if it is one."""
    if code in _FILES:
        return open_files(code)
    if code == errno.EAGAIN:
        return "error.tool_needs.processes", {"suggested": str(ROOMY_PROCESSES)}
    return None


def after_run(crashed: bool, returncode: int | None, stderr_line: str | None,
              watch: OomWatch | None) -> Need | None:
    """What the worker lacked, for one that ended without a result and without saying an error
    (``crashed``): its exit status, its last line on stderr, the OOM kills its cgroups counted."""
    if not crashed:
        return None
    if returncode == -_SIGKILL and watch is not None:
        grown = watch.grown()
        if grown:
            return memory(grown)
    line = stderr_line or ""
    if "[Errno 23]" in line:
        return open_files(errno.ENFILE)
    if "[Errno 24]" in line and _soft_limit("RLIMIT_NOFILE") < ROOMY_FILES:
        return open_files(errno.EMFILE)
    if "can't start new thread" in line:
        return "error.tool_needs.processes", {"suggested": str(ROOMY_PROCESSES)}
    return None


def open_files(code: int | None) -> Need:
    """Too few open files (``EMFILE``: this process's soft limit, and the one the advice asks
    for; ``ENFILE``: the system's table)."""
    limit = _soft_limit("RLIMIT_NOFILE")
    if code == errno.ENFILE or limit >= _NO_LIMIT:
        return "error.tool_needs.open_files_system", {}
    return "error.tool_needs.open_files", {"limit": str(limit),
                                           "suggested": str(max(ROOMY_FILES, 2 * limit))}


def memory(folders: list[str]) -> Need:
    """An OOM kill counted by the cgroups ``folders``: the smallest limit among them and their
    parents (a v1 hierarchy counts a kill where a parent's limit applies), and twice it."""
    limits = [limit for folder in folders if (limit := memory_limit(folder)) is not None]
    if not limits:
        return "error.tool_needs.memory_unknown", {"suggested": str(ROOMY_MEMORY_MB)}
    limit_mb = max(1, min(limits) // _MB)
    return "error.tool_needs.memory", {"limit": str(limit_mb),
                                       "suggested": str(max(ROOMY_MEMORY_MB, 2 * limit_mb))}


def memory_limit(folder: str) -> int | None:
    """The smallest memory limit (bytes) of the cgroup ``folder`` and its parents, up to the
    hierarchy's root; None when none is set or readable."""
    found: list[int] = []
    root = os.path.abspath(CGROUP_ROOT)
    place = os.path.abspath(folder)
    while place.startswith(root + os.sep):
        for name in ("memory.max", "memory.limit_in_bytes"):
            with contextlib.suppress(OSError, ValueError):
                text = read_regular(os.path.join(place, name), _SMALL_FILE_BYTES, cut=True)
                value = text.decode("ascii", "replace").strip()
                if value != "max" and int(value) < _NO_LIMIT:
                    found.append(int(value))
        place = os.path.dirname(place)
    return min(found) if found else None


def _soft_limit(name: str) -> int:
    """This process's soft limit ``name`` (the worker's too: it inherits them); no limit where
    there are none (Windows)."""
    if sys.platform == "win32":
        return _NO_LIMIT  # no resource module there
    import resource

    try:
        soft = resource.getrlimit(getattr(resource, name))[0]
    except (AttributeError, OSError, ValueError):
        return _NO_LIMIT
    return _NO_LIMIT if soft == resource.RLIM_INFINITY else int(soft)

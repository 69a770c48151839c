"""Whether the kernel's OOM killer ended a process: the signs Linux leaves, read without a shell.

A process the OOM killer ends dies of SIGKILL, like one killed by ``kill -9``, a container's
runtime or the process itself: the signal alone says nothing about memory. Two signs do:

- a cgroup's count of OOM kills (cgroup v2 ``memory.events``, line ``oom_kill N``; cgroup v1
  ``memory.oom_control``, same line), read for the cgroups the front and the application were
  seen in, before and after the attempt: a count that grew while the application died of SIGKILL;
- the kernel log (``/dev/kmsg``): ``Killed process <pid>`` or ``oom-kill:... pid=<pid>`` naming
  the application's process id. Reading it needs privileges on most systems
  (``kernel.dmesg_restrict``), and inside a PID namespace the log names other ids.

Neither may be readable (no /proc, another system, a container without its cgroup files):
then nothing is claimed, and the caller reports a plain SIGKILL (docs/operating-range.md).
"""

from __future__ import annotations

import contextlib
import os
import re
from typing import Literal

from ..untrusted_json import read_regular

Evidence = Literal["cgroup_oom_kill", "kernel_log"]
CGROUP_ROOT = "/sys/fs/cgroup"
KMSG = "/dev/kmsg"
MAX_KMSG_RECORDS = 100_000  # the ring buffer holds far fewer; a bound, not a guess
_OOM_KILL = re.compile(r"^oom_kill (\d+)$", re.MULTILINE)
_SMALL_FILE_BYTES = 64 * 1024  # a process's cgroups, a cgroup's memory events (read bounded)


def cgroups_of(pid: int | str = "self") -> list[str]:
    """The folders of the memory cgroups ``pid`` is in (v2 unified and v1 memory), existing."""
    try:
        lines = read_regular(f"/proc/{pid}/cgroup", _SMALL_FILE_BYTES, cut=True).decode(
            "utf-8", "replace").splitlines()
    except OSError:
        return []
    found = []
    for entry in lines:
        parts = entry.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":
            candidates = [os.path.join(CGROUP_ROOT, path.lstrip("/")),
                          os.path.join(CGROUP_ROOT, "unified", path.lstrip("/"))]
        elif "memory" in controllers.split(","):
            candidates = [os.path.join(CGROUP_ROOT, "memory", path.lstrip("/"))]
        else:
            continue
        found += [folder for folder in candidates if os.path.isdir(folder)]
    return found


def oom_kill_count(folder: str) -> int | None:
    """The cgroup's count of OOM kills, or None when it cannot be read."""
    for name in ("memory.events", "memory.oom_control"):
        with contextlib.suppress(OSError):
            text = read_regular(os.path.join(folder, name), _SMALL_FILE_BYTES, cut=True)
            match = _OOM_KILL.search(text.decode("ascii", "replace"))
            if match:
                return int(match.group(1))
    return None


class OomWatch:
    """Counts of OOM kills in every cgroup seen, taken before the attempt or at first sight."""

    def __init__(self) -> None:
        self._before: dict[str, int] = {}
        self.see("self")

    def see(self, pid: int | str) -> None:
        """Note the cgroups of ``pid`` (the front at the start, the application while it runs)."""
        for folder in cgroups_of(pid):
            if folder not in self._before:
                count = oom_kill_count(folder)
                if count is not None:
                    self._before[folder] = count

    def kills(self) -> int | None:
        """How many OOM kills the cgroups seen counted since they were first seen (any process
        of the run: a child, a data loader's worker, not only the application itself); None
        when no cgroup's count could be read."""
        if not self._before:
            return None
        return sum(max(0, (oom_kill_count(folder) or before) - before)
                   for folder, before in self._before.items())

    def grown(self) -> list[str]:
        """The cgroups seen whose count of OOM kills grew since they were first seen."""
        return [folder for folder, before in self._before.items()
                if (oom_kill_count(folder) or 0) > before]

    def evidence(self, pid: int) -> list[Evidence]:
        """The signs that the OOM killer ended ``pid``, which died of SIGKILL."""
        found: list[Evidence] = []
        if self.grown():
            found.append("cgroup_oom_kill")
        if kernel_log_names(pid):
            found.append("kernel_log")
        return found


def kernel_log_names(pid: int) -> bool:
    """Whether the kernel log says the OOM killer killed ``pid``; False when it cannot be read."""
    pattern = re.compile(rf"(?:Killed process {pid}\b|oom-kill:.*\bpid={pid}\b)")
    try:
        fd = os.open(KMSG, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return False
    try:
        for _ in range(MAX_KMSG_RECORDS):
            try:
                record = os.read(fd, 8192)
            except BlockingIOError:
                return False  # the end of the log
            except OSError:
                continue  # EPIPE: records overwritten while reading; the next one follows
            if not record:
                return False
            if pattern.search(record.decode("utf-8", "replace")):
                return True
        return False
    finally:
        os.close(fd)

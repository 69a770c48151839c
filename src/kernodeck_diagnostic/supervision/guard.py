"""The application's guard: what the tool started ends with the tool, however the tool ends.

``ramp`` and ``resume-check`` run the user's program in a session of its own, so that its whole
tree can be stopped. When the tool ends by itself, or is interrupted, it stops the program first
(supervision/application.py). A SIGKILL gives it no such chance (a Slurm job's time limit past its
grace, the OOM killer, ``kill -9`` on the front): the program and what it started went on,
re-parented to init, holding the GPU and writing into the ledger of a run nobody reads.

The guard is a small process, one per front, started with the first application (POSIX). It
reads the front's lifeline (its stdin: a pipe whose write end only the front holds) for the
session of the application that is running now (``run <pid>``) and its end (``end``), and the
front's private folders (``own``, ``released``: resume-check's captures). When the lifeline
closes while an application runs, the front is gone: the guard kills every process of that
session (``/proc``'s session field on Linux; elsewhere the session's first group), removes the
folders still owned, then ends. A normal end of the front closes the lifeline with no
application running and no folder owned: nothing is killed or removed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from typing import IO, cast

from ..children import spawn

_GUARD_TIMEOUT_S = 2.0

# Run with -I -S: no site, no user paths, no import of this package (the zipapp's or a venv's):
# the front's interpreter and the standard library only. The program comes first on the
# lifeline (its length, then its text), so that `ps` shows one short line.
_LOADER = ("import sys; source = sys.stdin.buffer.read(int(sys.stdin.buffer.readline())); "
           "exec(compile(source, 'kernodeck-diagnostic guard', 'exec'))")
_PROGRAM = rb"""
import os, shutil, signal, sys

def members(session):
    found = {session}
    try:
        names = os.listdir("/proc")
    except OSError:
        return found
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open("/proc/" + name + "/stat", "rb") as stat:
                line = stat.read(4096)
        except OSError:
            continue
        fields = line[line.rfind(b")") + 2:].split()
        if len(fields) > 3 and fields[3] == str(session).encode():
            found.add(int(name))
    return found

def end(session):
    with_proc = os.path.isdir("/proc/self")
    for _ in range(3):  # what a member forks while it is killed is a member too
        try:
            os.killpg(session, signal.SIGKILL)
        except OSError:
            pass
        if not with_proc:
            return
        for pid in members(session):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass

running = None
owned = set()
for line in sys.stdin.buffer:
    words = line.split()
    if words[:1] == [b"run"] and len(words) == 2 and words[1].isdigit():
        running = int(words[1])
    elif words == [b"end"]:
        running = None
    elif words[:1] in ([b"own"], [b"released"]) and len(words) == 2:
        try:
            folder = os.fsdecode(bytes.fromhex(words[1].decode("ascii")))
        except ValueError:
            continue
        (owned.add if words[0] == b"own" else owned.discard)(folder)
if running is not None:
    end(running)
for folder in owned:  # the front's own, private: removed without following a link
    shutil.rmtree(folder, ignore_errors=True)
"""


class Guard:
    """The front's guard (POSIX): ``running(pid)`` before the application runs, ``ended()``
    once it is stopped and reaped."""

    def __init__(self) -> None:
        self._lifeline: IO[bytes] | None = None
        self._lock = threading.Lock()
        self._failed = False

    def running(self, pid: int) -> None:
        self._say(f"run {pid}\n")

    def ended(self) -> None:
        self._say("end\n")

    def owns(self, folder: str) -> None:
        """``folder``, this process's private one, is removed should this process be killed."""
        self._say(f"own {os.fsencode(folder).hex()}\n")

    def released(self, folder: str) -> None:
        """``folder`` was removed by this process: not the guard's to remove any more."""
        self._say(f"released {os.fsencode(folder).hex()}\n")

    def _say(self, line: str) -> None:
        if sys.platform == "win32":  # the job's tree: kill_tree's taskkill, no session to end
            return
        with self._lock:
            if self._lifeline is None and not self._failed:
                self._lifeline = self._start()
            if self._lifeline is None:
                return
            try:
                self._lifeline.write(line.encode())
                self._lifeline.flush()
            except OSError:  # the guard is gone (killed with the tool's children): none now
                self._lifeline = None
                self._failed = True

    def _start(self) -> IO[bytes] | None:
        try:
            process = spawn([sys.executable, "-I", "-S", "-c", _LOADER],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
            lifeline = cast("IO[bytes]", process.stdin)  # stdin=PIPE: never None
            lifeline.write(b"%d\n%s" % (len(_PROGRAM), _PROGRAM))
        except OSError:  # no guard: the program still ends with the tool, save a SIGKILL
            self._failed = True
            return None
        return lifeline


GUARD = Guard()


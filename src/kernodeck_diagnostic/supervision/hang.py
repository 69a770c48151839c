"""Where a worker the time limit ends was hanging: its Python stack, asked for before it is killed.

The worker armed faulthandler at its start (``worker/runtime.dump_stacks``): on a signal, every
thread's Python stack goes to a file of its private folder. At the time limit the front sends
that signal to the worker alone (``ask_where``), waits at most STACK_WAIT_S for the dump to stop
growing and reads at most STACK_MAX_BYTES of it. Of the thread that runs the worker's stages, the
innermost frame that is neither the tool's own nor the standard library's is where it hung
(``locate``): a plugin torch loads as it is imported, the user's module, torch itself. It is said
as its package (the top-level import name), its file relative to the folder it is imported from
and its line: never an absolute path, a user or a host name. A frame that torch's loading of its
device plugins called (``_import_device_backends``: the entry points of the group
``torch.backends``) is such a plugin, with the distribution that declares it where its metadata
says so. POSIX only: Windows has no such signal, and a worker there is ended as before.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from typing import TYPE_CHECKING, Any

from ..worker.protocol import STACK_FILE, STACK_SIGNAL

if TYPE_CHECKING:
    from .start import Started

STACK_WAIT_S = 0.5
_POLL_S = 0.02
STACK_MAX_BYTES = 256 * 1024
_HEAD_BYTES = 4096
# faulthandler's words, Python 3.9 to 3.14: a thread's header, then its frames, innermost first.
_THREAD = re.compile(r"(?:Current thread|Thread) 0x[0-9a-fA-F]+")
_FRAME = re.compile(r'\s+File "(?P<file>.+)", line (?P<line>\d+) in (?P<function>.*)')
# The folders where the tool's own code runs in the worker: its private folder (by its name's
# prefix) and this package's worker modules (a worker forked from the front, or a Trial).
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_PRIVATE_PREFIX = "kernodeck-"
_SITE_FOLDERS = ("site-packages", "dist-packages")
_MAX_DEPTH = 32
_NAME = re.compile(r"[\w.-]{1,100}")


def ask_where(started: Started) -> dict[str, Any] | None:
    """Where the worker of ``started``, still running, hangs (``locate``), or None when it
    cannot tell (no stack armed, no dump within STACK_WAIT_S, no frame of anyone else's)."""
    path = started.path(STACK_FILE)
    if STACK_SIGNAL is None:
        return None
    try:
        before = os.lstat(path).st_size  # the worker's first line: the dump comes after it
        os.kill(started.process.pid, STACK_SIGNAL)
    except OSError:  # not armed (an interpreter that could not), or the worker just ended
        return None
    text = _read_dump(path, before)
    return None if text is None else locate(text, own=(started.folder,))


def locate(dump: str, own: tuple[str, ...] = ()) -> dict[str, Any] | None:
    """``{"package", "file", "line", "torch_backend", "distribution"}`` from a dump written by
    ``worker/runtime.dump_stacks`` (its first line the worker's standard library's folder, then
    faulthandler's threads); ``own``, more folders of the tool's own code (the private folder)."""
    head, _, rest = dump.partition("\n")
    stdlib = head.strip()
    threads = _threads(rest)
    ours = [frames for frames in threads if any(_is_own(path, own) for path, _, _ in frames)]
    for frames in ours or threads[-1:]:
        for index, (path, line, _) in enumerate(frames):
            if path.startswith("<") or _is_own(path, own) or _in_stdlib(path, stdlib):
                continue
            place = _import_place(path)
            if place is None:  # a relative name: nothing to tell its package by
                continue
            root, relative = place
            package = re.split(r"[/.]", relative, maxsplit=1)[0]
            backend = any(function == "_import_device_backends"
                          and (_import_place(outer) or ("", ""))[1].startswith("torch/")
                          for outer, _, function in frames[index + 1:])
            return {"package": package, "file": relative, "line": line,
                    "torch_backend": backend,
                    "distribution": plugin_distribution(root, package) if backend else None}
    return None


def plugin_distribution(root: str, package: str) -> str | None:
    """The distribution installed in ``root`` whose entry point of the group ``torch.backends``
    is in ``package`` (what pip uninstalls), or None when its metadata does not say."""
    try:
        from importlib import metadata

        for dist in metadata.distributions(path=[root]):
            for entry in dist.entry_points:
                module = entry.value.partition(":")[0].strip()
                if entry.group == "torch.backends" and module.split(".")[0] == package:
                    name = dist.metadata["Name"]
                    return name if name and _NAME.fullmatch(name) else None
    except Exception:  # metadata of anyone's: never a reason to lose the location
        return None
    return None


def _threads(text: str) -> list[list[tuple[str, int, str]]]:
    """Each thread's frames, innermost first, in the dump's order."""
    threads: list[list[tuple[str, int, str]]] = []
    for line in text.splitlines():
        if _THREAD.match(line):
            threads.append([])
        elif threads and (frame := _FRAME.fullmatch(line)) is not None:
            threads[-1].append((frame["file"], int(frame["line"]), frame["function"].strip()))
    return threads


def _is_own(path: str, own: tuple[str, ...]) -> bool:
    folder = os.path.dirname(path)
    if os.path.basename(folder).startswith(_PRIVATE_PREFIX) or folder in own:
        return True
    return _within(path, _PACKAGE_DIR)


def _in_stdlib(path: str, stdlib: str) -> bool:
    """Under the standard library's folder, and not in its site-packages."""
    if not stdlib or not _within(path, stdlib):
        return False
    first = os.path.relpath(path, stdlib).split(os.sep)[0]
    return first not in _SITE_FOLDERS


def _within(path: str, folder: str) -> bool:
    try:
        return os.path.commonpath([path, folder]) == folder
    except ValueError:  # another drive, relative and absolute
        return False


def _import_place(path: str) -> tuple[str, str] | None:
    """The folder ``path`` is imported from and its path relative to it (``pkg/sub/mod.py``):
    up from its folder while each holds an ``__init__.py`` (a package). None for a path that is
    not absolute."""
    if not os.path.isabs(path):
        return None
    folder, parts = os.path.dirname(path), [os.path.basename(path)]
    for _ in range(_MAX_DEPTH):
        parent = os.path.dirname(folder)
        if parent == folder or not os.path.isfile(os.path.join(folder, "__init__.py")):
            break
        parts.insert(0, os.path.basename(folder))
        folder = parent
    return folder, "/".join(parts)


def _read_dump(path: str, before: int) -> str | None:
    """The dump once it has grown past ``before`` bytes (the first line's) and stopped growing,
    waited for at most STACK_WAIT_S: the file's first line and its last STACK_MAX_BYTES (the main
    thread, which runs the stages, is the last one written)."""
    from .captures import read_tail

    end, last = time.monotonic() + STACK_WAIT_S, -1
    while True:
        time.sleep(_POLL_S)
        found = read_tail(path, STACK_MAX_BYTES)
        if found is None:
            return None
        tail, size = found
        if (size > before and size == last) or time.monotonic() >= end:
            break
        last = size
    if size > len(tail):  # the tail's first line may be cut anywhere: the head's first instead
        tail = _head(path).partition(b"\n")[0] + b"\n" + tail.partition(b"\n")[2]
    text = tail.decode("utf-8", "replace")
    return text if _THREAD.search(text) else None


def _head(path: str) -> bytes:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    with contextlib.suppress(OSError):
        fd = os.open(path, flags)
        try:
            return os.read(fd, _HEAD_BYTES)
        finally:
            os.close(fd)
    return b""

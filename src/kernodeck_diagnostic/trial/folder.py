"""The attempt folder: its name, its files, written once and never overwritten.

``<root>/<attempt-id>/`` where the id is the UTC time and a short random part
(``20261201T061502Z-3f9a1c``), created with ``mkdir`` (which fails rather than reuse a folder).
When ``KERNODECK_RUN_DIR`` is set it is the root, whatever the program asked: a driver such as
``kernodeck-diagnostic ramp`` gives each attempt its own place that way. Every file is created
exclusively (``O_EXCL``): nothing is ever written over. And nothing is written through a link:
the root is opened and checked once, the attempt folder made and opened relative to it, and every
file created relative to the attempt folder's descriptor (``safe_files``): a root that is another
user's link, or an attempt folder renamed and replaced by a link during the run, never receives
a file.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import time
from collections.abc import Callable, Iterator
from typing import Any

from ..safe_files import PRIVATE_MODE, Folder, descriptor_path
from ..untrusted_json import loads_utf8
from .accessors import judge_document

ATTEMPT_FILE = "attempt.json"
LATEST_FILE = "latest"  # in the root: the newest attempt's id
# An attempt folder's name: the UTC time of its start and a random part.
ATTEMPT_ID = re.compile(r"\d{8}T\d{6}Z-[0-9a-f]{6}")
TRACE_FILE = "trace.txt"
SNAPSHOT_FILE = "memory_snapshot.pickle"
FORMAT = "kernodeck-attempt"
MAX_ATTEMPT_BYTES = 16 * 2**20  # an attempt.json larger than this is not read
VERSION = 1
# What only the attempt's owner may read (PRIVATE_MODE, 0600): the trace holds every path and
# message unredacted, the snapshot every stack of the allocator's history.
TRACE_HEADER = ("# kernodeck-diagnostic trace: local only, not redacted (paths, messages, values "
                "as they were); do not share it. attempt.json holds what can be shared.\n")
# The variables a driver that runs the program once per attempt (``kernodeck-diagnostic ramp``)
# sets for it: where a Trial puts its attempt folder (read here), and the axis and the value the
# attempt runs with (for the program itself). Named here once; the docs give the names.
RUN_DIR_VARIABLE = "KERNODECK_RUN_DIR"
AXIS_NAME_VARIABLE = "KERNODECK_AXIS_NAME"
AXIS_VALUE_VARIABLE = "KERNODECK_AXIS_VALUE"


def root_folder(root: str | os.PathLike[str]) -> str:
    """Where attempts go: ``KERNODECK_RUN_DIR`` when set (and not empty), else ``root``."""
    return os.environ.get(RUN_DIR_VARIABLE) or os.fspath(root)


def create(root: str, keep: int | None = None) -> tuple[str, Folder]:
    """A new attempt folder under ``root`` (created if needed): (its id, the folder, open).

    ``root/latest`` then holds its id (a file, replaced whole: no link, on every system), so
    the newest attempt of a notebook re-run many times is found at once; with ``keep``, the
    older attempt folders beyond the newest ``keep`` (this one included) are removed."""
    with Folder.open(root, create=True) as parent:
        while True:
            attempt_id = (time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-"
                          + secrets.token_hex(3))
            try:
                made = parent.subfolder(attempt_id)
                break
            except FileExistsError:  # the same second and the same random part: draw again
                continue
        with contextlib.suppress(OSError):  # a pointer is a help: the attempt goes on without
            parent.replace(LATEST_FILE, (attempt_id + "\n").encode("ascii"))
        if keep is not None:
            prune(parent, keep, attempt_id, every_cause=bool(os.environ.get(RUN_DIR_VARIABLE)))
        return attempt_id, made


def prune(parent: Folder, keep: int, current: str, *, every_cause: bool = False) -> list[str]:
    """Remove the attempt folders of ``parent`` older than its newest ``keep`` (``current``
    always kept): only folders named as attempts are (``ATTEMPT_ID``), holding plain files
    only, and only attempts that ended (their ``attempt.json`` written): one still running
    (another process's, another rank's of the same root) or killed is never removed; anything
    else, a link above all, is left where it is. The names removed.

    ``every_cause``: the root is a tool's run folder (``KERNODECK_RUN_DIR``: ``ramp`` judges
    every attempt the run wrote). An older attempt is then removed only when the judge passes
    it, or when an older one kept shows the same deciding cause (``_needed``): the run's
    verdict, its deciding cause and the Trial that speaks for it stay what every attempt would
    have given (a failed attempt removed before ``ramp`` read it was a false pass), and the
    folder stays bounded: the newest ``keep``, and at most one older attempt per cause."""
    with contextlib.suppress(OSError):
        attempts = sorted((name for name in parent.names()
                           if ATTEMPT_ID.fullmatch(name) and name != current
                           and parent.lstat(f"{name}/{ATTEMPT_FILE}") is not None),
                          key=lambda name: _started(parent, name), reverse=True)
        older = attempts[max(keep - 1, 0):]
        needed = _needed(parent, older) if every_cause else set()
        removed = []
        for name in older:
            if name in needed:
                continue
            with contextlib.suppress(OSError):
                if parent.remove_files_folder(name):
                    removed.append(name)
        return removed
    return []


def _needed(parent: Folder, older: list[str]) -> set[str]:
    """Of ``older`` (newest first, each ended), the attempts a run's verdict needs: the oldest
    of each deciding cause the judge finds in its ``attempt.json`` alone (the judge's decider is
    the first Trial read with its cause), and every one whose ``attempt.json`` cannot be read
    (no evidence read, nothing removed)."""
    needed: set[str] = set()
    causes: set[str] = set()
    axis = _ramp_axis()
    for name in reversed(older):
        try:
            data = parent.read(f"{name}/{ATTEMPT_FILE}", MAX_ATTEMPT_BYTES)
            document = loads_utf8(data) if data is not None else None
        except (OSError, ValueError):
            document = None
        if not isinstance(document, dict) or document.get("format") != FORMAT:
            needed.add(name)
            continue
        judged = judge_document(document, name, axis)
        if judged.passed:
            continue
        cause = judged.reasons[0].kind if judged.reasons else judged.outcome
        if cause not in causes:
            causes.add(cause)
            needed.add(name)
    return needed


def _ramp_axis() -> tuple[str, int] | None:
    """The axis and value a ramp runs this attempt with (its variables), which the run's judge
    holds each Trial's parameters to (``axis_not_followed``); None outside a ramp."""
    name, value = os.environ.get(AXIS_NAME_VARIABLE), os.environ.get(AXIS_VALUE_VARIABLE, "")
    return (name, int(value)) if name and value.lstrip("-").isdigit() else None


def _started(parent: Folder, name: str) -> tuple[str, int]:
    """An attempt's place in time: the second its name says, then (two attempts started in the
    same second, whose random parts say nothing) when its folder last changed."""
    info = parent.lstat(name)
    return name.split("-", 1)[0], info.st_mtime_ns if info is not None else 0


def write_new(folder: Folder, name: str, data: bytes, mode: int = 0o644) -> None:
    """Write the file ``name`` of ``folder``, which must not exist yet, and make it durable."""
    folder.create_file(name, data, mode)


def dump_snapshot(folder: Folder, dump: Callable[[str], Any]) -> None:
    """The allocator's snapshot, ``dump(filename)`` (PyTorch's ``_dump_snapshot``), written to
    a file created here exclusively and reached through its descriptor (``/proc/self/fd``) where
    the system has such names: the folder's path is never walked again."""
    fd = folder.open_new(SNAPSHOT_FILE, PRIVATE_MODE)
    try:
        dump(descriptor_path(fd) or folder.child(SNAPSHOT_FILE))
    except BaseException:
        with contextlib.suppress(OSError):
            folder.unlink(SNAPSHOT_FILE)
        raise
    finally:
        os.close(fd)


def write_json(folder: Folder, name: str, document: dict[str, Any]) -> None:
    """Replace the file ``name`` with the JSON of ``document``, encoded and written a piece at a
    time (``Folder.replace``): never the whole text at once, and a reader sees the whole file or
    none."""
    folder.replace(name, _pieces(document))


def _pieces(document: dict[str, Any]) -> Iterator[bytes]:
    for piece in _ENCODER.iterencode(document):
        yield piece.encode("utf-8")
    yield b"\n"


_ENCODER = json.JSONEncoder(indent=2, ensure_ascii=False, allow_nan=False)


def to_json(document: dict[str, Any]) -> bytes:
    return (json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode(
        "utf-8")

"""The attempt folder: its name, its files, written once and never overwritten.

``<root>/<attempt-id>/`` where the id is the UTC time and a short random part
(``20261201T061502Z-3f9a1c``), created with ``mkdir`` (which fails rather than reuse a folder).
When ``KERNODECK_RUN_DIR`` is set it is the root, whatever the program asked: a driver such as
``kernodeck-diagnostic ramp`` gives each attempt its own place that way. Every file is created
exclusively (``O_EXCL``): nothing is ever written over.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from typing import Any

ATTEMPT_FILE = "attempt.json"
TRACE_FILE = "trace.txt"
SNAPSHOT_FILE = "memory_snapshot.pickle"
FORMAT = "kernodeck-attempt"
VERSION = 1
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
# The variables a driver that runs the program once per attempt (``kernodeck-diagnostic ramp``)
# sets for it: where a Trial puts its attempt folder (read here), and the axis and the value the
# attempt runs with (for the program itself). Named here once; the docs give the names.
RUN_DIR_VARIABLE = "KERNODECK_RUN_DIR"
AXIS_NAME_VARIABLE = "KERNODECK_AXIS_NAME"
AXIS_VALUE_VARIABLE = "KERNODECK_AXIS_VALUE"


def root_folder(root: str | os.PathLike[str]) -> str:
    """Where attempts go: ``KERNODECK_RUN_DIR`` when set (and not empty), else ``root``."""
    return os.environ.get(RUN_DIR_VARIABLE) or os.fspath(root)


def create(root: str) -> tuple[str, str]:
    """A new attempt folder under ``root`` (created if needed): (its id, its path)."""
    os.makedirs(root, exist_ok=True)
    while True:
        attempt_id = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + secrets.token_hex(3)
        path = os.path.join(root, attempt_id)
        try:
            os.mkdir(path)
        except FileExistsError:  # the same second and the same random part: draw again
            continue
        return attempt_id, path


def write_new(path: str, data: bytes) -> None:
    """Write a file that must not exist yet, and make it durable."""
    fd = os.open(path, _NEW, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)


def to_json(document: dict[str, Any]) -> bytes:
    return (json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode(
        "utf-8")

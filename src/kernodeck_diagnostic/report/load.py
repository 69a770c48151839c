"""Reading reports made elsewhere: a regular file, bounded in size, judged before it is used.

    >>> from kernodeck_diagnostic.report.load import load
    >>> load("no-such-file.json").reason
    'not_found'

A report is *readable* when its file is a regular file of at most 8 MiB holding JSON, an object,
with ``schema_version`` 1 and a ``code`` a report can carry (``codes.VERDICTS``). Anything else
gets one of the reasons of ``Reason``; a FIFO or a device is refused without waiting on it.
Reports come from other machines and other people: a report's fields are read with ``field()``,
which never fails on a missing or odd-typed block.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from ..i18n import Translate
from ..terminal import cell
from ..untrusted_json import loads
from . import SCHEMA_VERSION
from .codes import VERDICTS

# A report is a few kilobytes; a bigger file is not one, and is not read whole into memory.
MAX_REPORT_BYTES = 8 * 2**20


# Why a file is not a readable report: the ids JSON output carries, each a catalog message.
Reason = Literal["not_found", "not_a_file", "permission", "unreadable", "not_json",
                 "schema_version", "not_a_report", "too_large"]
_REASON_KEYS: dict[Reason | None, str] = {
    "not_found": "reports.reason.not_found", "not_a_file": "reports.reason.not_a_file",
    "permission": "reports.reason.permission", "unreadable": "reports.reason.unreadable",
    "not_json": "reports.reason.not_json", "schema_version": "reports.reason.schema_version",
    "not_a_report": "reports.reason.not_a_report", "too_large": "reports.reason.too_large"}


# Opening must never wait: a FIFO with no writer (or a device) would block open() forever. Only
# a regular file is then read; O_NOCTTY keeps a terminal named by mistake from becoming ours.
_OPEN_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
               | getattr(os, "O_BINARY", 0))


@dataclass(frozen=True)
class Loaded:
    """One file given to a command: its shown name and its report, or why there is none."""

    name: str
    report: dict[str, Any] | None = None
    reason: Reason | None = None
    detail: str | None = None  # for schema_version: the version found

    def why(self, t: Translate) -> str:
        """Why the file is not a readable report (asked only of one that is not)."""
        return reason_text(self.reason, t, version=self.detail)


def reason_text(reason: Reason | None, t: Translate, *, version: str | None = None,
                limit: int = MAX_REPORT_BYTES) -> str:
    """Why a file could not be read as asked, in the reader's language (``limit``: the most
    bytes it could have had)."""
    return t(_REASON_KEYS[reason], version=version, limit=f"{limit // 2**20} MiB")


def load(path: str, name: str | None = None,
         judged: Callable[[Any, str], Loaded] | None = None,
         mode: int | None = None) -> Loaded:
    """Read and judge one file. ``name`` is what is shown for it (default: its file name only);
    ``judged`` judges the parsed document (default ``judge``: a report; a trial attempt's
    ``trial.compare`` gives its own); ``mode``, the path's ``st_mode`` from the caller's own
    ``os.stat``, spares ``read_bounded`` one."""
    shown = file_name(path) if name is None else name
    try:
        data = read_bounded(path, mode)
    except OSError as exc:
        return Loaded(shown, reason=reason_of(exc))
    if isinstance(data, str):
        return Loaded(shown, reason=data)
    try:
        document = loads(data.decode("utf-8-sig"))
    except ValueError:  # bad UTF-8 or JSON, absurd integers, absurd nesting (untrusted_json)
        return Loaded(shown, reason="not_json")
    return (judged or judge)(document, shown)


def judge(document: Any, name: str) -> Loaded:
    """Whether a parsed JSON document is a report this tool can read."""
    if not isinstance(document, dict) or "schema_version" not in document:
        return Loaded(name, reason="not_a_report")
    version = document["schema_version"]
    if version != SCHEMA_VERSION or isinstance(version, bool):
        return Loaded(name, reason="schema_version", detail=cell(json.dumps(version), 20))
    if not isinstance(document.get("code"), str) or document["code"] not in VERDICTS:
        return Loaded(name, reason="not_a_report")
    return Loaded(name, report=document)


def read_bounded(path: str, mode: int | None = None,
                 limit: int = MAX_REPORT_BYTES) -> bytes | Reason:
    """The bytes of a regular file of at most ``limit`` bytes (``MAX_REPORT_BYTES``: a report),
    or the reason id why not.

    A FIFO, a socket or a device is refused before it is opened (by ``mode``, the path's
    ``st_mode`` when the caller has made an ``os.stat`` of it, else by one made here; and again
    after, in case it was swapped in between): reading one could wait forever or never end.
    """
    if not stat.S_ISREG(os.stat(path).st_mode if mode is None else mode):
        return "not_a_file"
    fd = os.open(path, _OPEN_FLAGS)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return "not_a_file"
        if info.st_size > limit:
            return "too_large"
        # Reads of the file's size and a byte (plain os.read: a buffered file object would first
        # set aside the whole limit, 8 MiB, for every small report), until its end: an empty
        # read, or a short one once the size fstat gave is all there (a report takes one read; a
        # short read before that, which a network file system may give, is read on from). A file
        # that grew since is still cut at one byte over the limit.
        chunks: list[bytes] = []
        got, most = 0, limit + 1
        while got < most:
            wanted = min(most - got, max(info.st_size + 1, 64 * 1024))
            chunk = os.read(fd, wanted)
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
            if len(chunk) < wanted and got >= info.st_size:
                break
    finally:
        os.close(fd)
    data = b"".join(chunks)
    return "too_large" if len(data) > limit else data


def reason_of(error: OSError) -> Reason:
    """The reason id for a file that could not be opened or listed."""
    if isinstance(error, FileNotFoundError):
        return "not_found"
    if isinstance(error, (IsADirectoryError, NotADirectoryError)):
        return "not_a_file"
    return "permission" if isinstance(error, PermissionError) else "unreadable"


def file_name(path: str) -> str:
    """The last component of a path: what is shown of a file, never the machine's folders."""
    return cell(os.path.basename(os.path.normpath(path)) or path)


def field(report: dict[str, Any], path: str) -> Any:
    """The value at a dotted path (``pytorch.version``), or None when any part is missing."""
    value: Any = report
    for key in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def exit_code_of(report: dict[str, Any]) -> int:
    """The report's own exit code, else its code's in the code table."""
    value = report.get("exit_code")
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return VERDICTS[report["code"]].exit_code

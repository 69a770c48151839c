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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from ..i18n import Translate
from ..terminal import cell
from ..untrusted_json import NotARegularFile, TooLarge, loads_utf8, read_regular
from . import SCHEMA_VERSION
from .codes import VERDICTS

# A report is a few kilobytes; a bigger file is not one, and is not read whole into memory.
MAX_REPORT_BYTES = 8 * 2**20


# Why a file is not a readable report: the ids JSON output carries, each a catalog message.
Reason = Literal["not_found", "not_a_file", "permission", "unreadable", "not_json",
                 "schema_version", "not_a_report", "too_large", "link_not_followed"]
_REASON_KEYS: dict[Reason | None, str] = {
    "not_found": "reports.reason.not_found", "not_a_file": "reports.reason.not_a_file",
    "permission": "reports.reason.permission", "unreadable": "reports.reason.unreadable",
    "not_json": "reports.reason.not_json", "schema_version": "reports.reason.schema_version",
    "not_a_report": "reports.reason.not_a_report", "too_large": "reports.reason.too_large",
    "link_not_followed": "reports.reason.link_not_followed"}


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
         mode: int | None = None, *, follow_links: bool = True) -> Loaded:
    """Read and judge one file. ``name`` is what is shown for it (default: its file name only);
    ``judged`` judges the parsed document (default ``judge``: a report; a trial attempt's
    ``trial.compare`` gives its own); ``mode``, the path's ``st_mode`` from the caller's own
    ``os.stat``, spares ``read_bounded`` one; ``follow_links`` False for a file looked up by its
    name in a folder (a link there is not a regular file of its own)."""
    shown = file_name(path) if name is None else name
    try:
        data = read_bounded(path, mode, follow_links=follow_links)
    except OSError as exc:
        return Loaded(shown, reason=reason_of(exc))
    if isinstance(data, str):
        return Loaded(shown, reason=data)
    try:
        document = loads_utf8(data)
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
                 limit: int = MAX_REPORT_BYTES, *, follow_links: bool = True) -> bytes | Reason:
    """The bytes of a regular file of at most ``limit`` bytes (``MAX_REPORT_BYTES``: a report),
    or the reason id why not; read by the one reader (``untrusted_json.read_regular``: opened
    without waiting, one read for a report). A FIFO, a socket or a device is refused before it
    is opened (by ``mode``, the path's ``st_mode`` when the caller has made an ``os.stat`` of
    it, else by one made here) and again after, in case it was swapped in between; a link, when
    ``follow_links`` is False."""
    if mode is None:
        mode = (os.stat(path) if follow_links else os.lstat(path)).st_mode
    try:
        return read_regular(path, limit, mode=mode, follow_links=follow_links)
    except NotARegularFile:
        return "not_a_file"
    except TooLarge:
        return "too_large"


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

"""Reading reports made elsewhere, for ``compare`` and ``summarize``: load, judge, show safely.

    >>> from kernodeck_diagnostic.reading import load
    >>> load("no-such-file.json").reason
    'not_found'

A report is *readable* when its file is a regular file of at most 8 MiB holding JSON, an object,
with ``schema_version`` 1 and a ``code`` known to the code table. Anything else gets one of the
reasons in ``REASONS``; a FIFO or a device is refused without waiting on it. Reports come from
other machines and other people: every value shown is made one line, printable and short (and
escaped for markdown by ``markup``), and a report's fields are read with ``field()``, which never
fails on a missing or odd-typed block. A signal ends a command like the check: one line, exit
128 + the signal's number.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import stat
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from .codes import CODES, EXIT_INTERNAL, EXIT_USAGE
from .i18n import LANGUAGES, Translate, language_from, translator
from .markup import code, escape
from .process import Interrupted
from .terminal import discard, language_asked, line, one_line

SCHEMA_VERSION = 1  # the version this tool writes and reads (report.SCHEMA_VERSION)
# A report is a few kilobytes; a bigger file is not one, and is not read whole into memory.
MAX_REPORT_BYTES = 8 * 2**20
# Why a file is not a readable report: the ids JSON output carries, each a catalog message.
REASONS = ("not_found", "not_a_file", "permission", "unreadable", "not_json", "schema_version",
           "not_a_report", "too_large")
# Opening must never wait: a FIFO with no writer (or a device) would block open() forever. Only
# a regular file is then read; O_NOCTTY keeps a terminal named by mistake from becoming ours.
_OPEN_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
               | getattr(os, "O_BINARY", 0))
FORMATS = ("text", "json", "markdown")
CELL_LIMIT = 80  # characters of one value in a table; longer ones are cut with an ellipsis


@dataclass(frozen=True)
class Loaded:
    """One file given to a command: its shown name and its report, or why there is none."""

    name: str
    report: dict[str, Any] | None = None
    reason: str | None = None
    detail: str | None = None  # for schema_version: the version found

    def why(self, t: Translate) -> str:
        return t(f"reports.reason.{self.reason}", version=self.detail,
                 limit=f"{MAX_REPORT_BYTES // 2**20} MiB")


def load(path: str, name: str | None = None) -> Loaded:
    """Read and judge one file. ``name`` is what is shown for it (default: its file name only)."""
    shown = file_name(path) if name is None else name
    try:
        data = read_bounded(path)
    except OSError as exc:
        return Loaded(shown, reason=reason_of(exc))
    if isinstance(data, str):
        return Loaded(shown, reason=data)
    try:
        document = json.loads(data.decode("utf-8-sig"))
    except (ValueError, RecursionError):  # bad UTF-8 or JSON, absurd numbers, absurd nesting
        return Loaded(shown, reason="not_json")
    return judge(document, shown)


def judge(document: Any, name: str) -> Loaded:
    """Whether a parsed JSON document is a report this tool can read."""
    if not isinstance(document, dict) or "schema_version" not in document:
        return Loaded(name, reason="not_a_report")
    version = document["schema_version"]
    if version != SCHEMA_VERSION or isinstance(version, bool):
        return Loaded(name, reason="schema_version", detail=cell(json.dumps(version), 20))
    if not isinstance(document.get("code"), str) or document["code"] not in CODES:
        return Loaded(name, reason="not_a_report")
    return Loaded(name, report=document)


def read_bounded(path: str) -> bytes | str:
    """The bytes of a regular file of at most ``MAX_REPORT_BYTES``, or the reason id why not.

    A FIFO, a socket or a device is refused before it is opened (and again after, in case it
    was swapped in between): reading one could wait forever or never end.
    """
    if not stat.S_ISREG(os.stat(path).st_mode):
        return "not_a_file"
    fd = os.open(path, _OPEN_FLAGS)
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return "not_a_file"
        if info.st_size > MAX_REPORT_BYTES:
            return "too_large"
        data = file.read(MAX_REPORT_BYTES + 1)  # a file that grew since is still cut here
    return "too_large" if len(data) > MAX_REPORT_BYTES else data


def reason_of(error: OSError) -> str:
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
    """The report's own exit code (INTERRUPTED may say 130 or 143), else the code table's."""
    value = report.get("exit_code")
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return CODES[report["code"]].exit_code


def cell(value: Any, limit: int = CELL_LIMIT) -> str:
    """A value as one short printable line: JSON spelling for null and booleans."""
    if value is None or isinstance(value, bool):
        text = json.dumps(value)
    elif isinstance(value, float):
        text = f"{value:g}"
    elif isinstance(value, (list, tuple)):
        text = ", ".join(cell(item, limit) for item in value) if value else "[]"
    elif isinstance(value, dict):
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    else:
        text = str(value)
    text = one_line(text)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def md(value: Any) -> str:
    """A value for markdown: a short cell, shown as the text it is (``markup.escape``)."""
    return escape(cell(value))


def md_code(value: Any) -> str:
    """A value as inline code in markdown when it can be, else as escaped text."""
    return code(cell(value))


def table(rows: Sequence[Sequence[str]], indent: str = "") -> list[str]:
    """Rows (the first one the header) aligned in columns two spaces apart."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [indent + "  ".join(value.ljust(width) for value, width in zip(row, widths)).rstrip()
            for row in rows]


class UsageError(Exception):
    """Invalid arguments: one line on stderr, exit 2."""


class Parser(argparse.ArgumentParser):
    """argparse that raises instead of printing the usage and exiting."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def add_common_options(parser: argparse.ArgumentParser, t: Translate) -> None:
    default = language_from(os.environ)
    parser.add_argument("--format", choices=FORMATS, default="text",
                        help=_help(t("reports.help.format")))
    parser.add_argument("--lang", choices=LANGUAGES, default=default,
                        help=_help(t("reports.help.lang", default=default)))


def run_command(prog: str, argv: Sequence[str],
                build: Callable[[Translate], argparse.ArgumentParser],
                act: Callable[[argparse.Namespace, Translate], int]) -> int:
    """Parse ``argv`` and act, as a command's ``main``: usage errors and bugs as one line."""
    t = translator(language_asked(argv))
    try:
        args = build(t).parse_args(list(argv))
    except UsageError as exc:
        line(sys.stderr, t("reports.usage_error", prog=prog, message=exc))
        return EXIT_USAGE
    except SystemExit as exc:  # --help: argparse printed it and wants to exit
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    t = translator(args.lang)
    try:
        return act(args, t)
    except (Interrupted, KeyboardInterrupt) as exc:
        # Like the check: a signal ends the command, it is not a bug. What was not yet written
        # to stdout goes nowhere, so a reader that stopped reading cannot hold the exit.
        signum = exc.signum if isinstance(exc, Interrupted) else int(signal.SIGINT)
        discard(sys.stdout)
        line(sys.stderr, t("reports.interrupted", prog=prog, signal=_signal_name(signum)))
        return 128 + signum
    except Exception as exc:  # a bug of ours: one line, never a traceback
        from .redact import Redactor

        detail = Redactor.for_this_machine().text(f"{type(exc).__name__}: {exc}")
        line(sys.stderr, t("reports.internal_error", prog=prog, detail=detail))
        return EXIT_INTERNAL


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return str(signum)


def _help(text: str) -> str:
    return text.replace("%", "%%")  # argparse formats help with %

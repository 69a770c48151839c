"""Writing to the terminal safely: any console encoding, a reader that left, one-line messages."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from typing import IO

from .i18n import LANGUAGES, language_from


def write(stream: IO[str], message: str) -> None:
    """Write, degrading characters the console cannot encode instead of failing.

    A reader that left (`| head -1`, a closed pager) is not an error: the command still ends with
    its own code (and still saves its report); what is left for that stream goes nowhere.
    """
    try:
        try:
            stream.write(message)
        except UnicodeEncodeError:
            encoding = getattr(stream, "encoding", None) or "ascii"
            stream.write(message.encode(encoding, "replace").decode(encoding, "replace"))
        stream.flush()
    except BrokenPipeError:
        _discard(stream)


def line(stream: IO[str], message: str) -> None:
    """One line, whatever the message holds: controls and line separators are escaped."""
    write(stream, one_line(message) + "\n")


def one_line(message: str) -> str:
    return "".join(char if char.isprintable() else
                   char.encode("unicode_escape", "backslashreplace").decode("ascii")
                   for char in message)


def language_asked(argv: Sequence[str]) -> str:
    """The ``--lang`` asked for, read before parsing so that usage errors speak it too; else the
    locale's (LC_ALL, LC_MESSAGES, LANG)."""
    language = language_from(os.environ)
    for index, argument in enumerate(argv):
        if argument == "--lang" and index + 1 < len(argv):
            value = argv[index + 1]
        elif argument.startswith("--lang="):
            value = argument.split("=", 1)[1]
        else:
            continue
        if value in LANGUAGES:
            language = value
    return language


def _discard(stream: IO[str]) -> None:
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)

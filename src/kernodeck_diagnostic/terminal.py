"""Writing to the terminal safely: any console encoding, a reader that left, one-line messages."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import stat
from collections.abc import Sequence
from typing import IO, Any

from .i18n import LANGUAGES, language_from


def write(stream: IO[str] | None, message: str) -> None:
    """Write, degrading characters the console cannot encode instead of failing.

    A reader that left (`| head -1`, a closed pager) is not an error: the command still ends with
    its own code (and still saves its report); what is left for that stream goes nowhere. A
    terminal that is gone (closed window, dropped ssh session: EIO) is a reader that left, and so
    is a stream closed before the start (``2>&-``: Python then has no ``sys.stderr`` at all,
    None). Whether a closed stdout is a failure is the caller's to say (``writer.show``).
    """
    if stream is None:
        return
    try:
        try:
            stream.write(message)
        except UnicodeEncodeError:
            encoding = getattr(stream, "encoding", None) or "ascii"
            stream.write(message.encode(encoding, "replace").decode(encoding, "replace"))
        stream.flush()
    except BrokenPipeError:
        discard(stream)
    except OSError as exc:
        if not _terminal_gone(stream, exc):
            raise
        discard(stream)  # else the interpreter's own flush at exit fails again: exit 120


def line(stream: IO[str] | None, message: str) -> None:
    """One line, whatever the message holds: controls and line separators are escaped."""
    write(stream, one_line(message) + "\n")


# What a terminal must never receive raw from data, in every form the tool prints: whatever
# ``str.isprintable`` refuses. C0 and C1 controls (ESC starts a sequence, U+009B is CSI, BEL
# ends an OSC), line and paragraph separators, bidi marks and overrides (U+202E), the other
# format characters (zero-width ones, U+E0000's tags) and separators other than the space.
# ``one_line`` (text) and ``json_text`` (JSON) are its two spellings; both are decided here.
def safe(char: str) -> bool:
    """Whether ``char`` may reach a terminal as it is."""
    return char.isprintable()


def one_line(message: str) -> str:
    """``message`` as one printable line: every character ``safe`` refuses (a line break
    included) written as its Python escape (``\\x1b``, ``\\u202e``)."""
    if message.isprintable():  # the usual case, without a Python step per character
        return message
    return "".join(char if safe(char) else
                   char.encode("unicode_escape", "backslashreplace").decode("ascii")
                   for char in message)


# The characters JSON text may hold raw that ``safe`` might refuse: all but the printable ASCII
# and the line breaks of its indentation (JSON escapes C0 controls inside strings itself).
_JSON_CANDIDATE = re.compile("[^\n\x20-\x7e]")


def _json_escape(found: re.Match[str]) -> str:
    char = found.group()
    if safe(char):
        return char
    code = ord(char)
    if code > 0xFFFF:  # JSON writes a character beyond the first plane as a surrogate pair
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def json_text(text: str) -> str:
    """JSON text (``json.dumps(..., ensure_ascii=False)``) whose strings hold nothing ``safe``
    refuses raw: each such character becomes its ``\\uXXXX`` escape, the same JSON. They can
    only stand inside strings (JSON's own syntax is ASCII, its line breaks kept), where the
    escape means the character."""
    return _JSON_CANDIDATE.sub(_json_escape, text)


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


def _terminal_gone(stream: IO[str], exc: OSError) -> bool:
    """EIO from a terminal (a character device): it was hung up. EIO from a file is a disk's."""
    if exc.errno != errno.EIO:
        return False
    try:
        return stat.S_ISCHR(os.fstat(stream.fileno()).st_mode)
    except (OSError, ValueError, AttributeError):
        return False


def discard(stream: IO[str]) -> None:
    """Send what is left for ``stream`` to the null device: a reader that left, a full disk."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)


CELL_LIMIT = 80  # characters of one value in a table; longer ones are cut with an ellipsis


def cell(value: Any, limit: int = CELL_LIMIT) -> str:
    """A value as one short printable line: JSON spelling for null and booleans."""
    if type(value) is str and len(value) <= limit and value.isprintable():
        return value  # the usual case, quickly: thousands of cells in summarize
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

"""Decoding JSON the front did not write: the worker's events, reports saved elsewhere, the
output of a GPU tool (amd-smi, rocm-smi), a ledger's lines; and opening the files that hold it
(``open_regular``, ``json_lines``: a FIFO or a device refused, a line bounded).

Each comes from where the front does not trust (an interpreter that may be hostile, another
person's file, a tool of the machine under diagnosis), and JSON itself bounds nothing. An integer
of thousands of digits is valid JSON, and becomes an int no float can hold (``float()``,
``math.isfinite``, ``:.0f`` and ``/`` raise OverflowError wherever it goes); a document nested a
thousand levels deep is valid too, and every walk over it (a comparison, a renderer) would
recurse past Python's limit. Here both are refused like any other malformed JSON, with
ValueError, before a value reaches anything:

    >>> from kernodeck_diagnostic.untrusted_json import loads
    >>> loads('{"t_ms": 12.5, "sizes": [1, -2]}')
    {'t_ms': 12.5, 'sizes': [1, -2]}
    >>> loads('{"t_ms": ' + "9" * 400 + '}')
    Traceback (most recent call last):
      ...
    ValueError: an integer of more than 20 digits
"""

from __future__ import annotations

import errno
import json
import os
import stat
import sys
from collections.abc import Iterator
from typing import IO, Any

# 2**64 has 20 digits: every count, size, index and duration an event or a report holds fits.
MAX_INT_DIGITS = 20
# Nesting of lists and objects: an event of the protocol needs 4, a report 5.
MAX_DEPTH = 16


# Everything but brackets and quotes, deleted from the text to measure its nesting; then
# objects' braces read as lists' brackets (_nested_deeper_than).
_NOT_STRUCTURE = bytes(byte for byte in range(256) if byte not in b'[]{}"')
_BRACES_AS_BRACKETS = bytes.maketrans(b"{}", b"[]")
# Digits as "1", anything else as " ": a run of more "1" than an integer may have digits is the
# only way the text can hold an integer too long (_bounded_int).
_DIGIT_RUNS = bytes(ord("1") if byte in b"0123456789" else ord(" ") for byte in range(256))
_TOO_LONG = b"1" * (MAX_INT_DIGITS + 1)


def loads(text: str, *, max_depth: int | None = MAX_DEPTH,
          max_int_digits: int = MAX_INT_DIGITS) -> Any:
    """``text`` decoded as JSON; ValueError when it is not JSON, or holds an integer of more
    than ``max_int_digits`` digits, or lists and objects nested deeper than ``max_depth``
    (None: as deep as the decoder goes, never a RecursionError either way). A reader of
    documents of its own shape keeps the defaults; a reader of the user's own data (a ledger's
    records) gives wider bounds."""
    data = text.encode("utf-8", "surrogatepass")
    # Each integer goes through _bounded_int (a Python call each) only when some run of digits,
    # in a number or a string, is long enough to be a number too long: reports read fast.
    if b"1" * (max_int_digits + 1) in data.translate(_DIGIT_RUNS):
        decoder = _checking(max_int_digits)
    else:
        decoder = _PLAIN
    try:
        value = decoder.decode(text)
    except RecursionError:  # deeper than the decoder itself can go
        raise ValueError("nested too deep") from None
    # A list or an object at depth max_depth (the top level is 0) is one level too deep.
    if max_depth is not None and _nested_deeper_than(data, max_depth):
        raise ValueError("nested too deep")
    return value


def _checking(max_int_digits: int) -> json.JSONDecoder:
    """The decoder that refuses integers of more than ``max_int_digits`` digits (built once per
    bound: json.loads with an argument builds a new decoder at every call)."""
    decoder = _CHECKING.get(max_int_digits)
    if decoder is None:
        def bounded_int(digits: str) -> int:
            if len(digits) - digits.startswith("-") > max_int_digits:
                raise ValueError(f"an integer of more than {max_int_digits} digits")
            return int(digits)

        decoder = _CHECKING[max_int_digits] = json.JSONDecoder(parse_int=bounded_int)
    return decoder


_CHECKING: dict[int, json.JSONDecoder] = {}
_PLAIN = json.JSONDecoder()


# -- files ------------------------------------------------------------------------------------

# Opening must never wait: a FIFO with no writer (or a device) would block open() forever.
# O_NOCTTY keeps a terminal named by mistake from becoming ours.
_OPEN_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
               | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0))
# One line of JSON Lines held at most: a longer one is skipped, never read whole into memory.
MAX_LINE_BYTES = 16 * 2**20
_CHUNK_BYTES = 2**20


class NotARegularFile(OSError):
    """A FIFO, a device, a socket or a folder where a file was to be read."""

    def __init__(self, path: str) -> None:
        super().__init__(errno.EINVAL, "not a regular file", path)


def open_regular(path: str) -> int:
    """A read-only descriptor on the regular file at ``path`` (following links, as a reader
    does), opened without waiting; ``NotARegularFile`` (an OSError) for anything else: reading
    a FIFO waits forever, ``/dev/zero`` never ends."""
    fd = os.open(path, _OPEN_FLAGS)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotARegularFile(path)
        if sys.platform != "win32":  # no O_NONBLOCK there
            os.set_blocking(fd, True)  # a regular file never waits; reads as usual
    except BaseException:
        os.close(fd)
        raise
    return fd


def load_file(path: str, max_bytes: int) -> Any:
    """The value of the JSON file at ``path`` (a regular file of at most ``max_bytes``, read as
    UTF-8 with what is not replaced), or None when it is none of that: missing, unreadable, a
    FIFO or a device, too large, not JSON."""
    try:
        with os.fdopen(open_regular(path), "rb") as file:
            data = file.read(max_bytes + 1)
    except OSError:
        return None
    if len(data) > max_bytes:
        return None
    try:
        return loads(data.decode("utf-8", "replace"))
    except ValueError:
        return None


def json_lines(file: IO[bytes], max_line_bytes: int = MAX_LINE_BYTES
               ) -> Iterator[tuple[bytes | None, int, bool]]:
    """Each line of ``file``: its bytes without the newline (None when longer than
    ``max_line_bytes``: skipped as it is read, never held), its length, and whether a newline
    ended it (only the last line may lack one; an empty last line is not one)."""
    pieces: list[bytes] = []
    held = length = 0
    while True:
        chunk = file.read(_CHUNK_BYTES)
        if not chunk:
            break
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            length += len(piece)
            if held <= max_line_bytes:
                pieces.append(piece)
                held += len(piece)
                if held > max_line_bytes:
                    pieces = []  # too long: what comes of it is only counted
            if end < 0:
                break
            yield (b"".join(pieces) if held <= max_line_bytes else None), length, True
            pieces, held, length = [], 0, 0
            start = end + 1
    if length:
        yield (b"".join(pieces) if held <= max_line_bytes else None), length, False


def _nested_deeper_than(data: bytes, levels: int) -> bool:
    """Whether lists and objects in ``data`` (valid JSON in UTF-8) nest more than ``levels``
    deep, the outermost being the first level.

    Read from the text rather than by walking the decoded value: a walk takes a step of Python
    for every value, and summarize reads thousands of reports. Escaped backslashes and escaped
    quotes go first (pairs, left to right, as JSON reads them); the quotes left then delimit the
    strings, so every other piece between them is outside any string, where brackets and braces
    nest. Most strings hold no bracket and are left as two quotes side by side: those pairs go
    first, in one pass (two adjacent quotes are either an empty string or the end of a string and
    the start of the next with no bracket between them: taking them away leaves every other quote
    where it was, opening or closing, and no bracket moves in or out of a string), so only the
    strings with brackets in them are split apart. Each pass of removing every empty pair ``[]``
    takes away exactly one level (a pair goes in the pass after the last of its children), so
    what is left after ``levels`` passes nests deeper. Every step is a bytes method, and UTF-8
    never puts these ASCII bytes inside another character.
    """
    if b"\\" in data:
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    structure = data.translate(None, _NOT_STRUCTURE).replace(b'""', b"")
    if b'"' in structure:
        structure = b"".join(structure.split(b'"')[::2])
    brackets = structure.translate(_BRACES_AS_BRACKETS)
    for _ in range(levels):
        if not brackets:
            return False
        brackets = brackets.replace(b"[]", b"")
    return bool(brackets)

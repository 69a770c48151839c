"""Decoding JSON the front did not write: the worker's events, reports saved elsewhere, the
output of a GPU tool (amd-smi, rocm-smi), a ledger's lines, a trial's event log; and the one
reader of every file the tool reads from disk (``open_regular``, ``read_regular``,
``read_tail``, ``load_file``, ``json_lines``, ``json_objects``: a regular file only, opened
without waiting, read within a bound; see "files" below).

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
from typing import Any, Protocol

# 2**64 has 20 digits: every count, size, index and duration an event or a report holds fits.
MAX_INT_DIGITS = 20
# Nesting of lists and objects: an event of the protocol needs 4, a report 5.
MAX_DEPTH = 16


# Everything but brackets and quotes, deleted from the text to measure its nesting; then
# objects' braces read as lists' brackets (_nested_deeper_than).
_NOT_STRUCTURE = bytes(byte for byte in range(256) if byte not in b'[]{}"')
_BRACES_AS_BRACKETS = bytes.maketrans(b"{}", b"[]")
# Digits as "1", anything else as " ": a run of more "1" than an integer may have digits is the
# only way the text can hold an integer too long (then decoded by ``_checking``'s decoder).
_DIGIT_RUNS = bytes(ord("1") if byte in b"0123456789" else ord(" ") for byte in range(256))
_RUN = b"1" * (MAX_INT_DIGITS + 1)


def loads(text: str, *, max_depth: int | None = MAX_DEPTH,
          max_int_digits: int = MAX_INT_DIGITS) -> Any:
    """``text`` decoded as JSON; ValueError when it is not JSON, or holds an integer of more
    than ``max_int_digits`` digits, or lists and objects nested deeper than ``max_depth``
    (None: as deep as the decoder goes, never a RecursionError either way). A reader of
    documents of its own shape keeps the defaults; a reader of the user's own data (a ledger's
    records) gives wider bounds."""
    return _loads(text, text.encode("utf-8", "surrogatepass"), max_depth, max_int_digits)


_BOM = b"\xef\xbb\xbf"


def loads_utf8(data: bytes, *, max_depth: int | None = MAX_DEPTH,
               max_int_digits: int = MAX_INT_DIGITS) -> Any:
    """``loads`` of ``data`` read as UTF-8, a byte-order mark at its start dropped (as the
    ``utf-8-sig`` codec reads it; ValueError too when it is not UTF-8). The bounds are read from
    ``data`` itself: no copy of the text encoded back (summarize reads a million reports)."""
    if data[:3] == _BOM:
        data = data[3:]
    return _loads(data.decode("utf-8"), data, max_depth, max_int_digits)


def _loads(text: str, data: bytes, max_depth: int | None, max_int_digits: int) -> Any:
    """``loads`` of ``text``, its bounds read from ``data``: its UTF-8, or the bytes it was
    decoded from (what decoding replaced is never one of the ASCII bytes the bounds read)."""
    # Each integer goes through the checking decoder (a Python call each) only when some run of
    # digits, in a number or a string, is long enough to be a number too long: reports read fast.
    if (_RUN if max_int_digits == MAX_INT_DIGITS else b"1" * (max_int_digits + 1)) \
            in data.translate(_DIGIT_RUNS):
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
#
# The one reader: every file the tool reads from disk is opened here (``open_regular``) and read
# here, whole up to a bound (``read_regular``), by its end (``read_tail``), as one JSON value
# (``load_file``) or as JSON Lines, one line at a time (``json_lines``, ``json_objects``).
#
# - Regular files only: a FIFO, a device, a socket or a folder is refused (``NotARegularFile``),
#   before it is opened when the caller knows its mode, and always after: reading a FIFO waits
#   for a writer forever, ``/dev/zero`` never ends.
# - Opened without waiting (``O_NONBLOCK``: a FIFO with no writer would block ``open()`` itself),
#   then read as a regular file is.
# - Through links when the user named the file, as any reader does (``summarize latest.json``);
#   never through a link (``follow_links=False``) for a file the tool looks up by its name in a
#   folder it was given (an attempt's ``attempt.json``, ``events.jsonl``, ``stage.bin``): the
#   tool never makes a link there, so a link there was planted.
# - Bounded: a whole read stops one byte past its limit (``TooLarge``, or the head kept when
#   the caller asks for ``cut``); a line of JSON Lines is held up to its limit, a longer one
#   skipped as it is read; a log is read at most ``max_bytes`` of it, its head and its tail.

# Opening must never wait: a FIFO with no writer (or a device) would block open() forever.
# O_NOCTTY keeps a terminal named by mistake from becoming ours.
_OPEN_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
               | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0))
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
# One line of JSON Lines held at most: a longer one is skipped, never read whole into memory.
MAX_LINE_BYTES = 16 * 2**20
_CHUNK_BYTES = 2**20
_SMALL_READ = 64 * 1024  # the least a whole read asks for at once


class NotARegularFile(OSError):
    """A FIFO, a device, a socket, a folder (or, where links are not followed, a link) where a
    file was to be read."""

    def __init__(self, path: str) -> None:
        super().__init__(errno.EINVAL, "not a regular file", path)


class TooLarge(OSError):
    """A file larger than the reader's limit: not read past it."""

    def __init__(self, path: str, limit: int) -> None:
        super().__init__(errno.EFBIG, f"larger than {limit} bytes", path)


def open_regular(path: str, *, follow_links: bool = True, dir_fd: int | None = None,
                 mode: int | None = None) -> int:
    """A read-only descriptor on the regular file at ``path`` (relative to the folder ``dir_fd``
    when given), opened without waiting; ``NotARegularFile`` (an OSError) for anything else:
    reading a FIFO waits forever, ``/dev/zero`` never ends. A link is followed, as a reader
    does, unless ``follow_links`` is False (then it is refused, never opened). ``mode``: the
    path's ``st_mode`` from the caller's own ``os.stat``, refused before the open when it is not
    a regular file's."""
    return _open_regular(path, follow_links, dir_fd, mode)[0]


def _open_regular(path: str, follow_links: bool, dir_fd: int | None, mode: int | None
                  ) -> tuple[int, os.stat_result]:
    """``open_regular``'s descriptor and its ``fstat`` (a whole read needs the size)."""
    if mode is not None and not stat.S_ISREG(mode):
        raise NotARegularFile(path)
    flags = _OPEN_FLAGS | (0 if follow_links else _NOFOLLOW)
    try:
        fd = os.open(path, flags, dir_fd=dir_fd) if dir_fd is not None else os.open(path, flags)
    except OSError as exc:
        # O_NOFOLLOW met a link (ELOOP; EMLINK on the BSDs); without O_NOFOLLOW (Windows) a
        # link is looked for by lstat below.
        if not follow_links and exc.errno in (errno.ELOOP, errno.EMLINK):
            raise NotARegularFile(path) from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or (
                not follow_links and not _NOFOLLOW and os.path.islink(path)):
            raise NotARegularFile(path)
        if sys.platform != "win32":  # no O_NONBLOCK there
            os.set_blocking(fd, True)  # a regular file never waits; reads as usual
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def read_regular(path: str, limit: int, *, cut: bool = False, follow_links: bool = True,
                 dir_fd: int | None = None, mode: int | None = None) -> bytes:
    """The bytes of the regular file at ``path`` (``open_regular``), at most ``limit``:
    ``TooLarge`` when it holds more, or, with ``cut``, its first ``limit`` bytes (a system
    file read for a prefix: ``/proc``'s files, whose size says 0, are read to their end too).

    One read for a small file: the file's size and a byte (plain ``os.read``: a buffered file
    would first set aside the whole limit for every small file), until its end: an empty read,
    or a short one once the size ``fstat`` gave is all there (a short read before that, which a
    network file system may give, is read on from). A file that grows meanwhile is still cut at
    one byte past the limit."""
    fd, info = _open_regular(path, follow_links, dir_fd, mode)
    try:
        size = info.st_size
        if size > limit and not cut:
            raise TooLarge(path, limit)
        most = limit if cut else limit + 1
        chunks: list[bytes] = []
        got = 0
        while got < most:
            wanted = min(most - got, max(size + 1, _SMALL_READ))
            chunk = os.read(fd, wanted)
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
            if len(chunk) < wanted and size and got >= size:
                break
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        raise TooLarge(path, limit)
    return data


def read_tail(path: str, limit: int, *, follow_links: bool = True) -> tuple[bytes, int]:
    """The last ``limit`` bytes of the regular file at ``path`` (``open_regular``) and its size.
    """
    with os.fdopen(open_regular(path, follow_links=follow_links), "rb") as file:
        size = os.fstat(file.fileno()).st_size
        file.seek(max(0, size - limit))
        return file.read(limit), size


def load_file(path: str, max_bytes: int, *, follow_links: bool = True) -> Any:
    """The value of the JSON file at ``path`` (a regular file of at most ``max_bytes``, read as
    UTF-8 with what is not replaced), or None when it is none of that: missing, unreadable, a
    FIFO or a device, too large, not JSON."""
    try:
        data = read_regular(path, max_bytes, follow_links=follow_links)
    except OSError:
        return None
    try:
        return loads(data.decode("utf-8", "replace"))
    except ValueError:
        return None


class Readable(Protocol):
    """What ``json_lines`` reads from: a binary file, or a window of one."""

    def read(self, size: int, /) -> bytes: ...


def json_lines(file: Readable, max_line_bytes: int = MAX_LINE_BYTES
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


class Tally:
    """What ``json_objects`` read of a file: the objects it gave, the lines it skipped (too
    long, not JSON, not an object, cut by the window), and the bytes it never read (the middle
    of a log larger than its ``max_bytes``). ``whole``: every line of the file was read."""

    __slots__ = ("objects", "skipped", "unread_bytes")

    def __init__(self) -> None:
        self.objects = 0
        self.skipped = 0
        self.unread_bytes = 0

    @property
    def whole(self) -> bool:
        return self.skipped == 0 and self.unread_bytes == 0


class _Window:
    """A file read between two offsets only (``read`` gives nothing past ``end``)."""

    def __init__(self, fd: int, start: int, end: int | None) -> None:
        self.fd, self.at, self.end = fd, start, end
        os.lseek(fd, start, os.SEEK_SET)

    def read(self, size: int) -> bytes:
        if self.end is not None:
            size = min(size, self.end - self.at)
            if size <= 0:
                return b""
        chunk = os.read(self.fd, size)
        self.at += len(chunk)
        return chunk


def json_objects(path: str, *, tally: Tally | None = None, max_line_bytes: int = MAX_LINE_BYTES,
                 max_bytes: int | None = None, tail_bytes: int = 0, follow_links: bool = True,
                 max_depth: int | None = MAX_DEPTH) -> Iterator[dict[str, Any]]:
    """Each JSON object line of the regular file at ``path`` (``open_regular``), one at a time:
    what is held at once is one line of at most ``max_line_bytes`` (a longer one is skipped as
    it is read) and its value, whatever the file's size. A line that is not a JSON object
    (``loads``' bounds) is skipped; ``tally`` counts what was read and skipped.

    ``max_bytes``: the most read of the file. A larger one is read from its start up to
    ``max_bytes - tail_bytes`` bytes, then its last ``tail_bytes`` (where a log says how it
    ended); the line cut at each end of the gap is skipped, and the gap counted as unread.
    OSError (``NotARegularFile`` among them) when the file cannot be opened: raised at the
    first ``next()``."""
    tally = tally if tally is not None else Tally()
    fd = open_regular(path, follow_links=follow_links)
    try:
        size = os.fstat(fd).st_size
        if max_bytes is None or size <= max_bytes:
            windows: list[tuple[int, int | None]] = [(0, max_bytes)]
        else:
            tail_bytes = min(tail_bytes, max_bytes)
            windows = [(0, max_bytes - tail_bytes), (size - tail_bytes, size)]
            tally.unread_bytes = size - max_bytes
        for number, (start, end) in enumerate(windows):
            if end is not None and start >= end:
                continue
            # A window that starts or ends inside a line holds only a piece of it.
            cut_before = number > 0 and _byte_at(fd, start - 1) != b"\n"
            cut_after = number < len(windows) - 1
            lines = json_lines(_Window(fd, start, end), max_line_bytes)
            for index, (raw, _, ended) in enumerate(lines):
                if raw is not None and not raw.strip():
                    continue  # an empty line: nothing skipped
                if (index == 0 and cut_before) or (cut_after and not ended):
                    tally.skipped += 1
                    continue
                value = _object(raw, max_depth)
                if value is None:
                    tally.skipped += 1
                    continue
                tally.objects += 1
                yield value
    finally:
        os.close(fd)


def _byte_at(fd: int, offset: int) -> bytes:
    os.lseek(fd, offset, os.SEEK_SET)
    return os.read(fd, 1)


def _object(raw: bytes | None, max_depth: int | None) -> dict[str, Any] | None:
    """One line's JSON object; None when it is too long, empty, not JSON or not an object."""
    if raw is None or not raw.strip():
        return None
    try:
        value = _loads(raw.decode("utf-8", "replace"), raw, max_depth, MAX_INT_DIGITS)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


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
    structure = data.translate(None, _NOT_STRUCTURE)
    # Text with no more brackets and braces than ``levels`` cannot nest deeper (an event's line:
    # counted on what is left of the text, a tenth of a report's).
    if structure.count(b"[") + structure.count(b"{") <= levels:
        return False
    structure = structure.replace(b'""', b"")
    if b'"' in structure:
        structure = b"".join(structure.split(b'"')[::2])
    brackets = structure.translate(_BRACES_AS_BRACKETS)
    for _ in range(levels):
        if not brackets:
            return False
        brackets = brackets.replace(b"[]", b"")
    return bool(brackets)

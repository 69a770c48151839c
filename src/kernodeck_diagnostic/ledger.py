"""A durable record of the outputs an application has written, so that a stopped run resumes
without losing or repeating any.

    from kernodeck_diagnostic import OutputLedger

    ledger = OutputLedger("out/results.jsonl", expected_ids=[str(i) for i in range(1000)])
    done = ledger.done_ids()
    for item_id in ledger.expected_ids or ():
        if item_id in done:
            continue                      # written by an earlier run: never twice
        ledger.append(item_id, {"dim": 768, "norm": 1.0})

The file is JSON Lines: a header line ``{"format": "kernodeck-ledger", "version": 1,
"expected_ids": [...] | null}``, then one line per record, ``{"id": "...", "record": {...}}``.
An embedding job may declare what each record holds: ``OutputLedger(..., vector_dim=768,
vector_field="embedding")`` adds ``"vectors": {"dim": 768, "field": "embedding"}`` to the header,
and ``resume-check`` then holds every record to the trial's ``expect_vectors`` rules (one finite
vector of that dimension, at ``record[field]``, or the record itself when ``field`` is None).
``append`` writes the whole line with one ``write`` on a file opened in append mode, then
``fsync``: once it returns, the record survives a crash, a kill or a power cut. A process killed
in the middle of a write can leave a *half record* (a last line without its newline, or one that
is not JSON): it never counts as written, ``done_ids`` ignores it, and the next ``OutputLedger``
opened on the file cuts it off before appending, so the record is simply done again.

A ledger whose folder does not exist is refused in one line (``FileNotFoundError``), unless
``create_folder=True`` asks for it to be made. Reading names what a line is when it is not a
record: a *half record* (a write cut by a kill), binary bytes, text that is not JSON, JSON
without an id, or a ledger header away from line 1 (``LedgerContents.not_records``).

Nothing is written through a link: the ledger's folder is opened and checked, and the file
created exclusively or opened without following a link (``safe_files``); a link at the ledger's
name, or another user's file there, raises ``UnsafePath`` (an ``OSError``).

This module runs in the user's application: standard library only, Python 3.9+. ``read_ledger``
is what ``kernodeck-diagnostic resume-check`` uses to verify a ledger (docs/operating-range.md).
"""

from __future__ import annotations

import errno
import io
import json
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any, Literal

from .safe_files import Folder, check_file
from .untrusted_json import MAX_LINE_BYTES, json_lines, loads, open_regular

FORMAT = "kernodeck-ledger"
VERSION = 1
# What a line that is not a record holds (a half record is apart: ``half_records``).
NotRecord = Literal["misplaced_header", "binary", "not_json", "no_id"]
_NOT_RECORD: dict[str, NotRecord] = {"header": "misplaced_header", "binary": "binary",
                                     "not_json": "not_json", "no_id": "no_id"}
# Digits of an integer in a record: CPython's own bound for int() of a text (3.11+), kept on
# every version (a million digits take int() seconds).
MAX_INT_DIGITS = 4300


class OutputLedger:
    """An append-only, fsynced JSON Lines file of the records an application has written."""

    def __init__(self, path: str | os.PathLike[str],
                 expected_ids: Iterable[str] | None = None, *, vector_dim: int | None = None,
                 vector_field: str | None = None, create_folder: bool = False) -> None:
        self.path = os.fspath(path)
        self._folder, self._name = os.path.split(self.path)
        wanted = None if expected_ids is None else [str(item) for item in expected_ids]
        if vector_dim is not None and (isinstance(vector_dim, bool)
                                       or not isinstance(vector_dim, int) or vector_dim < 1):
            raise ValueError(f"vector_dim must be a positive whole number, not {vector_dim!r}")
        vectors = None if vector_dim is None else {"dim": vector_dim, "field": vector_field}
        self._make_folder(create_folder)
        with self._open_folder() as folder:
            existing = None
            found = folder.lstat(self._name)
            if found is not None:
                check_file(found, self.path)  # a link, a FIFO, another user's file: refused
                fd = folder.open_existing(self._name, os.O_RDONLY)
                with os.fdopen(fd, "rb") as file:
                    existing = scan_ledger(file)
            if existing is not None and existing.has_header:
                if wanted is not None and existing.expected_ids not in (None, wanted):
                    raise ValueError(
                        "the ledger was started with other expected ids; use a new file")
                self.expected_ids = existing.expected_ids if wanted is None else wanted
                if vectors is not None and existing.vectors != vectors:
                    raise ValueError(
                        "the ledger was started with other vectors (dimension, field); use a "
                        "new file")
                self.vector_dim = existing.vector_dim
                if existing.torn_tail_bytes:
                    # A record cut by a kill: it never counted; the next append starts a clean
                    # line.
                    _truncate(folder, self._name, existing.size - existing.torn_tail_bytes)
                return
            if existing is not None and existing.size:
                raise ValueError("the file exists and is not an output ledger")
            self.expected_ids = wanted
            self.vector_dim = vector_dim
            header: dict[str, Any] = {"format": FORMAT, "version": VERSION, "expected_ids": wanted}
            if vectors is not None:
                header["vectors"] = vectors
            self._write_line(header, folder, new=existing is None)
            folder.sync()  # the new file's name is durable too

    def append(self, record_id: str, record: Any = None) -> None:
        """Write one record durably (one write, then fsync): done once this returns."""
        with self._open_folder() as folder:
            self._write_line({"id": str(record_id), "record": record}, folder)

    def done_ids(self) -> set[str]:
        """The ids of every complete record in the file: the work to skip."""
        return set(read_ledger(self.path).counts)

    def _make_folder(self, create: bool) -> None:
        """The ledger's folder must exist: said in one line, or made when asked (``create``)."""
        folder = self._folder or "."
        if os.path.isdir(folder):
            return
        if create:
            os.makedirs(folder, exist_ok=True)
            return
        if not os.path.lexists(folder):
            raise FileNotFoundError(
                errno.ENOENT, f"the ledger's folder does not exist: {folder} (create it, or "
                "pass create_folder=True)")

    def _open_folder(self) -> Folder:
        """The ledger's folder, opened and checked again for each write (``safe_files``): a
        link planted at the ledger's name, or on its way, is refused and never written through."""
        return Folder.open(self._folder or ".")

    def _write_line(self, document: dict[str, Any], folder: Folder, new: bool = False) -> None:
        data = (json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        if new:
            fd = folder.open_new(self._name, 0o666, append=True)
        else:
            fd = folder.open_existing(self._name, os.O_WRONLY | os.O_APPEND)
        try:
            written = 0
            while written < len(data):  # a short write (a signal, a full pipe) goes on
                written += os.write(fd, data[written:])
            os.fsync(fd)
        finally:
            os.close(fd)


@dataclass
class LedgerContents:
    """What a ledger file holds, judged line by line."""

    size: int = 0
    has_header: bool = False
    expected_ids: list[str] | None = None
    vectors: dict[str, Any] | None = None  # the header's {"dim", "field"}, when declared
    counts: dict[str, int] = field(default_factory=dict)  # id -> complete records with it
    # Line numbers (1-based) of records cut by a kill: the last line without its newline, or a
    # line that starts as a record and is not JSON (a cut record, then another written after it).
    half_records: list[int] = field(default_factory=list)
    not_records: dict[int, NotRecord] = field(default_factory=dict)  # line -> what it holds
    torn_tail_bytes: int = 0  # the last line's bytes when it has no newline (a cut write)

    @property
    def vector_dim(self) -> int | None:
        dim = (self.vectors or {}).get("dim")
        return dim if isinstance(dim, int) and not isinstance(dim, bool) and dim > 0 else None

    @property
    def vector_field(self) -> str | None:
        name = (self.vectors or {}).get("field")
        return name if isinstance(name, str) else None

    @property
    def duplicated(self) -> list[str]:
        return sorted((key for key, count in self.counts.items() if count > 1), key=_natural)


def read_ledger(path: str) -> LedgerContents:
    """Every complete record of a ledger, and where half records are (line numbers). A FIFO, a
    device or a folder is refused (``NotARegularFile``, an OSError) without waiting on it, and
    no line longer than MAX_LINE_BYTES is held: such a line is a half record."""
    with os.fdopen(open_regular(path), "rb") as file:
        return scan_ledger(file)


def parse_ledger(data: bytes) -> LedgerContents:
    """``read_ledger`` of a ledger's bytes."""
    return scan_ledger(io.BytesIO(data))


def scan_ledger(file: IO[bytes]) -> LedgerContents:
    """``read_ledger`` of an open ledger, read line by line (``json_lines``)."""
    contents = LedgerContents()
    for number, (raw, length, ended) in enumerate(json_lines(file, MAX_LINE_BYTES), start=1):
        contents.size += length + ended
        if not ended:  # after the final newline: only when the last write was cut
            contents.torn_tail_bytes = length
            contents.half_records.append(number)
            break
        kind, document = _line(raw)
        if kind == "header" and number == 1:
            contents.has_header = True
            ids = document.get("expected_ids")
            contents.expected_ids = [str(i) for i in ids] if isinstance(ids, list) else None
            vectors = document.get("vectors")
            contents.vectors = vectors if isinstance(vectors, dict) else None
        elif kind == "record":
            key = str(document["id"])
            contents.counts[key] = contents.counts.get(key, 0) + 1
        elif kind == "half":
            contents.half_records.append(number)
        elif kind is not None:
            contents.not_records[number] = _NOT_RECORD[kind]
    return contents


def records(data: bytes) -> Iterator[tuple[int, str, Any]]:
    """(line number, id, record) of each complete record of a ledger's bytes, in order."""
    for number, (raw, _, ended) in enumerate(json_lines(io.BytesIO(data), MAX_LINE_BYTES),
                                             start=1):
        if not ended:  # the last line without its newline is a half record
            break
        kind, document = _line(raw)
        if kind == "record":
            yield number, str(document["id"]), document.get("record")


# A cut record starts as one ({"id": ...) and is followed, on the same line, by what was written
# after it.
_RECORD_START = re.compile(rb'^\s*\{\s*"(?:id|record)"')
_NOT_JSON = object()


def _line(raw: bytes | None) -> tuple[str | None, Any]:
    """What one complete line holds: ``header``, ``record`` (with its document), ``half`` (a
    cut record, or a line longer than a record may be: ``raw`` None), ``binary``, ``not_json``,
    ``no_id``; None for a blank line."""
    if raw is None or not raw.strip():
        return ("half" if raw is None else None), None
    text: str | None = None
    document: Any = _NOT_JSON
    try:
        text = raw.decode("utf-8")
        if "\x00" not in text:
            # The records are the application's own: as deep as JSON goes, numbers as Python's.
            document = loads(text, max_depth=None, max_int_digits=MAX_INT_DIGITS)
    except ValueError:  # not UTF-8 (UnicodeDecodeError is one), not JSON
        pass
    if document is _NOT_JSON:
        if _RECORD_START.match(raw):
            return "half", None
        return ("binary" if text is None or "\x00" in text else "not_json"), None
    if isinstance(document, dict) and document.get("format") == FORMAT:
        return "header", document
    if isinstance(document, dict) and isinstance(document.get("id"), (str, int)):
        return "record", document
    return "no_id", None



def _natural(text: str) -> tuple[tuple[int, int | str], ...]:
    """Ids in the order people expect: doc-2 before doc-10 (runs of digits by value)."""
    return tuple((0, int(part)) if part.isdigit() else (1, part)
                 for part in re.split(r"(\d+)", text) if part)


def natural_order(ids: Iterable[str]) -> list[str]:
    """``ids`` sorted with numbers by value (``2`` before ``10``)."""
    return sorted(ids, key=_natural)


def _truncate(folder: Folder, name: str, size: int) -> None:
    fd = folder.open_existing(name, os.O_WRONLY)
    try:
        os.ftruncate(fd, size)
        os.fsync(fd)
    finally:
        os.close(fd)

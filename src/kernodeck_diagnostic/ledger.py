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
``append`` writes the whole line with one ``write`` on a file opened in append mode, before it
returns: a process killed by SIGKILL or the OOM killer loses no record it appended. When the
record is also on disk (safe from a power cut or a kernel panic) is the ledger's *durability*
(``group_commit``): ``"group"`` (the default) syncs in batches, at most ``sync_interval_s``
after a record and before the ``sync_records``-th record waiting returns, and on ``sync()`` and
``close()``; a crash of the machine costs at most that window, whose ids are not in
``done_ids()`` and so are simply done again. ``"record"`` syncs each record before ``append``
returns, for records whose effects elsewhere must never be repeated. ``append_many`` writes a
batch with one ``write``. Appending an id the ledger already holds raises ``ValueError``: never
a record twice. A process killed in the middle of a write can leave a *half record* (a last
line without its newline, or one that is not JSON): it never counts as written, ``done_ids``
ignores it, and the next ``OutputLedger`` opened on the file cuts it off before appending, so
the record is simply done again. docs/performance.md measures each mode against a bare write and
SQLite.

One writer at a time: the ledger holds a lock on its file (``flock``, POSIX) from its opening to
``close``, and a second ``OutputLedger`` on the same file, in this process or another, raises
``LedgerInUse`` (an ``OSError``). A torn tail is cut only under that lock, so a live writer's
line in progress is never taken for one. A header cut short (a full disk, a kill while it was
written: the file is then one line without its newline that begins as a header) held no record
and is written again, whole; a failed header write is taken back at once.

A ledger whose folder does not exist is refused in one line (``FileNotFoundError``), unless
``create_folder=True`` asks for it to be made (mode 0700, the folders above it too, whatever the
umask). Reading names what a line is when it is not a record: a *half record* (a write cut by a
kill), binary bytes, text that is not JSON, JSON without an id, or a ledger header away from
line 1 (``LedgerContents.not_records``).

Nothing is written through a link: the ledger's folder is opened and checked, and the file
created exclusively or opened without following a link (``safe_files``); a link at the ledger's
name, or another user's file there, raises ``UnsafePath`` (an ``OSError``). Both stay open until
``close``. Whether the name still is the file open is checked before each sync, not at each
append (a system call per record would cost a fifth of an append): a ledger renamed and
replaced (by a link, by another file) is refused, never written through, within one sync window
(``sync_interval_s``) or at the next ``sync()``; the records appended in that window are in the
renamed file, and their ids, not in the file at the name, are simply done again.

This module runs in the user's application: standard library only, Python 3.9+. ``read_ledger``
is what ``kernodeck-diagnostic resume-check`` uses to verify a ledger (docs/operating-range.md).
"""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import re
import stat
import sys
import weakref
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any, Literal

try:  # POSIX: the writer's lock
    import fcntl
except ImportError:  # pragma: no cover (Windows: no lock, a second writer is not refused)
    fcntl = None  # type: ignore[assignment]

from .group_commit import GroupCommit, Mode, NotDurable, check_settings
from .safe_files import Folder, UnsafePath, check_file
from .untrusted_json import MAX_LINE_BYTES, json_lines, loads, open_regular

FORMAT = "kernodeck-ledger"
VERSION = 1
HEADER_START = b'{"format":"kernodeck-ledger"'  # how every header this module writes begins
# What a line that is not a record holds (a half record is apart: ``half_records``).
NotRecord = Literal["misplaced_header", "binary", "not_json", "no_id"]
_NOT_RECORD: dict[str, NotRecord] = {"header": "misplaced_header", "binary": "binary",
                                     "not_json": "not_json", "no_id": "no_id"}
# Digits of an integer in a record: CPython's own bound for int() of a text (3.11+), kept on
# every version (a million digits take int() seconds).
MAX_INT_DIGITS = 4300
# The group-commit window (``durability="group"``): what a crash of the machine can cost at most.
SYNC_INTERVAL_S = 0.1
SYNC_RECORDS = 1000


class LedgerInUse(OSError):
    """Another ``OutputLedger`` (in this process or another) holds the ledger open for writing:
    a second writer is refused, never raced."""

    def __init__(self, path: str) -> None:
        super().__init__(errno.EBUSY, "another OutputLedger has this ledger open for writing "
                         "(close it, or wait for its program to end)", path)


class OutputLedger:
    """An append-only JSON Lines file of the records an application has written, each id once.

    ``durability``, ``sync_interval_s``, ``sync_records``: when records reach the disk (see the
    module's docstring). Use it as a context manager, or call ``close()``: what is still waiting
    is synced then (and at the interpreter's exit when neither was done).
    """

    def __init__(self, path: str | os.PathLike[str],
                 expected_ids: Iterable[str] | None = None, *, vector_dim: int | None = None,
                 vector_field: str | None = None, create_folder: bool = False,
                 durability: Mode = "group", sync_interval_s: float = SYNC_INTERVAL_S,
                 sync_records: int = SYNC_RECORDS) -> None:
        self.path = os.fspath(path)
        self._folder, self._name = os.path.split(self.path)
        wanted = None if expected_ids is None else [str(item) for item in expected_ids]
        if vector_dim is not None and (isinstance(vector_dim, bool)
                                       or not isinstance(vector_dim, int) or vector_dim < 1):
            raise ValueError(f"vector_dim must be a positive whole number, not {vector_dim!r}")
        vectors = None if vector_dim is None else {"dim": vector_dim, "field": vector_field}
        check_settings(durability, sync_interval_s, sync_records)  # before any file is touched
        self._make_folder(create_folder)
        folder = Folder.open(self._folder or ".")
        try:
            fd = self._open_locked(folder)
            try:
                self._done = self._open_or_start(folder, fd, wanted, vectors)
                identity = _identity(os.fstat(fd))
                self._writer = GroupCommit(fd, mode=durability, interval_s=sync_interval_s,
                                           max_records=sync_records,
                                           check=_NameCheck(folder, self._name, identity,
                                                            self.path))
            except BaseException:
                os.close(fd)
                raise
        except BaseException:
            folder.close()
            raise
        self._dir = folder
        # At the interpreter's exit, what waits is synced (the finalizer holds no ledger).
        self._finalizer = weakref.finalize(self, _close, self._writer, folder)

    def _open_locked(self, folder: Folder) -> int:
        """The ledger's file, opened (created exclusively when missing) for appending without
        following a link, and locked for writing: held until ``close``, so that a torn tail is
        only ever cut by the one writer (``LedgerInUse`` for a second)."""
        fd = None
        found = folder.lstat(self._name)
        if found is None:
            with contextlib.suppress(FileExistsError):  # made meanwhile: opened as existing
                fd = folder.open_new(self._name, 0o666, append=True)
        if fd is None:
            found = folder.lstat(self._name)
            if found is not None:
                check_file(found, self.path)  # a link, a FIFO, another user's file: refused
            fd = folder.open_existing(self._name, os.O_WRONLY | os.O_APPEND)
        try:
            if sys.platform != "win32" and fcntl is not None:  # Windows: no flock
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    raise LedgerInUse(self.path) from None
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _open_or_start(self, folder: Folder, fd: int, wanted: list[str] | None,
                       vectors: dict[str, Any] | None) -> set[str]:
        """Read the ledger (its torn tail cut off: the lock is held) or start it with its
        header: the ids it already holds."""
        with os.fdopen(folder.open_existing(self._name, os.O_RDONLY), "rb") as file:
            existing = scan_ledger(file)
            file.seek(0)
            start = file.read(len(HEADER_START))
        if existing.has_header:
            if wanted is not None and existing.expected_ids not in (None, wanted):
                raise ValueError("the ledger was started with other expected ids; use a new file")
            self.expected_ids = existing.expected_ids if wanted is None else wanted
            if vectors is not None and existing.vectors != vectors:
                raise ValueError("the ledger was started with other vectors (dimension, field); "
                                 "use a new file")
            self.vector_dim = existing.vector_dim
            if existing.torn_tail_bytes:
                # A record cut by a kill: it never counted; the next append starts a clean line.
                _truncate(fd, existing.size - existing.torn_tail_bytes)
            return set(existing.counts)
        if existing.size and not _cut_header(existing, start):
            raise ValueError("the file exists and is not an output ledger (its first line is no "
                             "ledger header); use a new file")
        # Empty, or a header cut short (a full disk, a kill while it was written): no record
        # was ever written after it, so the header is written again, whole.
        self.expected_ids = wanted
        self.vector_dim = vectors["dim"] if vectors else None
        header: dict[str, Any] = {"format": FORMAT, "version": VERSION, "expected_ids": wanted}
        if vectors is not None:
            header["vectors"] = vectors
        if existing.size:
            _truncate(fd, 0)
        try:
            _write_all(fd, _encode(header))
            os.fsync(fd)
        except BaseException:
            with contextlib.suppress(OSError):  # no cut header left behind (a full disk)
                _truncate(fd, 0)
            raise
        folder.sync()  # the new file's name is durable too
        return set()

    def append(self, record_id: str, record: Any = None) -> None:
        """Write one record, whole, before returning; durable by the ledger's durability. An id
        the ledger already holds is refused (``ValueError``)."""
        key = str(record_id)
        if key in self._done:
            raise ValueError(f"the ledger already holds the id {key!r}: a record is written "
                             "once (skip the ids in done_ids())")
        data = _encode({"id": key, "record": record})
        try:
            self._writer.append(data)
        except NotDurable:
            self._done.add(key)  # written whole, its sync failed: held all the same
            raise
        self._done.add(key)

    def append_many(self, records: Iterable[tuple[str, Any]]) -> None:
        """Write a batch of ``(id, record)`` with one write; durable by the ledger's durability.
        The whole batch is refused when one of its ids is already held or comes twice."""
        keys: list[str] = []
        lines: list[bytes] = []
        for record_id, record in records:
            keys.append(str(record_id))
            lines.append(_encode({"id": keys[-1], "record": record}))
        held = [key for key in keys if key in self._done]
        if held or len(set(keys)) != len(keys):
            shown = held[0] if held else next(key for key in keys if keys.count(key) > 1)
            raise ValueError(f"the ledger already holds the id {shown!r}, or the batch has it "
                             "twice: a record is written once; nothing of the batch was written")
        if not keys:
            return
        try:
            self._writer.append(b"".join(lines), records=len(keys))
        except NotDurable:
            self._done.update(keys)  # written whole, their sync failed: held all the same
            raise
        self._done.update(keys)

    def sync(self) -> None:
        """Every record appended so far is on disk when this returns."""
        self._writer.sync()

    @property
    def unsynced_records(self) -> int:
        """Records appended and not yet on disk: what a crash of the machine could cost now."""
        return self._writer.unsynced

    def close(self) -> None:
        """Sync what waits and close the file (safe to call again)."""
        self._finalizer()

    def __enter__(self) -> OutputLedger:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def done_ids(self) -> set[str]:
        """The ids of every complete record in the file: the work to skip."""
        return set(read_ledger(self.path).counts)

    def _make_folder(self, create: bool) -> None:
        """The ledger's folder must exist: said in one line, or made when asked (``create``)."""
        folder = self._folder or "."
        if os.path.isdir(folder):
            return
        if create:
            _make_private(folder)
            return
        if not os.path.lexists(folder):
            raise FileNotFoundError(
                errno.ENOENT, f"the ledger's folder does not exist: {folder} (create it, or "
                "pass create_folder=True)")


class _NameCheck:
    """The ledger's name still is the file open: a ledger renamed and replaced (by a link, by
    another file) is refused (``GroupCommit`` calls it before each sync, off the path of each
    append). It holds no ledger, so that an unreferenced ledger is still closed at once."""

    def __init__(self, folder: Folder, name: str, identity: tuple[int, int], path: str) -> None:
        self.folder, self.name, self.identity, self.path = folder, name, identity, path

    def __call__(self) -> None:
        found = self.folder.lstat(self.name)
        if found is not None and stat.S_ISLNK(found.st_mode):
            raise UnsafePath("link", self.path)
        if found is None or _identity(found) != self.identity:
            raise FileNotFoundError(errno.ENOENT, "the ledger was moved or replaced since it "
                                    "was opened; open it again", self.path)


def _encode(document: dict[str, Any]) -> bytes:
    return (json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def _identity(info: os.stat_result) -> tuple[int, int]:
    return info.st_dev, info.st_ino


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _close(writer: GroupCommit, folder: Folder) -> None:
    try:
        writer.close()
    finally:
        folder.close()


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


def scan_ledger(file: IO[bytes], *, header: bool = True) -> LedgerContents:
    """``read_ledger`` of an open ledger, read line by line (``json_lines``) from where the file
    is; ``header`` False: from the middle of a ledger (a header there is misplaced)."""
    contents = LedgerContents()
    for number, (raw, length, ended) in enumerate(json_lines(file, MAX_LINE_BYTES), start=1):
        contents.size += length + ended
        if not ended:  # after the final newline: only when the last write was cut
            contents.torn_tail_bytes = length
            contents.half_records.append(number)
            break
        kind, document = _line(raw)
        if kind == "header" and number == 1 and header:
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
    for number, key, record, _ in scan_records(io.BytesIO(data)):
        yield number, key, record


def scan_records(file: IO[bytes]) -> Iterator[tuple[int, str, Any, bytes]]:
    """(line number, id, record, the line's bytes) of each complete record of an open ledger,
    in order, read line by line."""
    for number, (raw, _, ended) in enumerate(json_lines(file, MAX_LINE_BYTES), start=1):
        if not ended:  # the last line without its newline is a half record
            break
        kind, document = _line(raw)
        if kind == "record" and raw is not None:
            yield number, str(document["id"]), document.get("record"), raw


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


def _make_private(folder: str) -> None:
    """``folder`` and the folders missing above it, each made with the explicit mode 0700:
    never one that others may write in, whatever the umask (``umask 000`` would make
    ``os.makedirs``'s 0777, which the ledger then refuses)."""
    missing = []
    while folder and not os.path.lexists(folder):
        missing.append(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    for path in reversed(missing):
        # 0700 is within any umask; one made by someone else meanwhile is checked when opened
        with contextlib.suppress(FileExistsError):
            os.mkdir(path, 0o700)


def _truncate(fd: int, size: int) -> None:
    os.ftruncate(fd, size)
    os.fsync(fd)


def _cut_header(existing: LedgerContents, start: bytes) -> bool:
    """The file is one line without its newline that begins as a ledger header does (or is a
    prefix of that beginning): a header whose write was cut, with no record after it."""
    return (existing.torn_tail_bytes == existing.size
            and (start.startswith(HEADER_START) or HEADER_START.startswith(start)))

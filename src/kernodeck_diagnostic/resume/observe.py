"""The ledger as the runs left it: read from disk, line by line, never whole into memory.

- ``Snapshot`` of the ledger when the first run's process really ended: its records, and the
  bytes of its whole lines (their length and digest), so that what the second run did to them is
  known later;
- ``after_stop``: the ledger at the end, and the records the second run wrote: those after the
  stop's bytes when it kept them, else every record (it truncated or replaced the file, so each
  record in it is its own);
- ``judge_ids`` and ``check_records``: which ids are lost, duplicated, redone or not expected,
  and which records break their rules (the header's vectors; a NaN or an infinity anywhere, which
  is not standard JSON).

What grows with the ledger is only what the verdict names: its ids and their counts.
"""

from __future__ import annotations

import hashlib
import math
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from ..ledger import LedgerContents, natural_order, scan_ledger, scan_records
from ..trial.contracts import vector_problem
from ..untrusted_json import MAX_LINE_BYTES, open_regular
from .verdict import Observation

_CHUNK = 2**20


@dataclass(frozen=True)
class Snapshot:
    """The ledger at one moment: what it held, and the bytes of its whole lines."""

    contents: LedgerContents = field(default_factory=LedgerContents)
    kept: int = 0  # bytes of its whole lines (a torn last line excluded)
    digest: bytes = hashlib.sha256().digest()  # of those bytes
    identity: tuple[int, int] | None = None  # the file's (device, inode); None: no file

    @property
    def records(self) -> int:
        return sum(self.contents.counts.values())


def snapshot(path: str) -> Snapshot:
    """The ledger at ``path`` now (none yet: empty). A FIFO or a device put at its name is
    refused (``NotARegularFile``), never waited on."""
    try:
        fd = open_regular(path)
    except FileNotFoundError:
        return Snapshot()
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(file.fileno())
        contents = scan_ledger(file)
        kept = contents.size - contents.torn_tail_bytes
        file.seek(0)
        return Snapshot(contents, kept, _digest(file, kept), (info.st_dev, info.st_ino))


class RewriteWatch:
    """Watches the ledger while the second run runs (``look``, at each poll of its process):
    a file shorter than the stop's whole lines (truncated), or another file at its name
    (replaced, removed), means the program started over, even when it wrote the same bytes
    again (a deterministic program does)."""

    POLL_S = 0.001  # a start over rewrites the stop's records in a few ms: looked at this often

    def __init__(self, path: str, at_stop: Snapshot) -> None:
        self.path = path
        self.at_stop = at_stop
        self.rewrote = False
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> RewriteWatch:
        """Looks in a thread of its own as well, every POLL_S while the second run runs: the
        run's own poll (50 ms) can miss a truncation that the same bytes refill sooner. Still a
        poll: a program that truncates and rewrites faster than that is not seen (see
        docs/operating-range.md)."""
        self._thread = threading.Thread(target=self._poll, daemon=True, name="rewrite-watch")
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join(1.0)

    def _poll(self) -> None:
        while not self.rewrote and not self._done.wait(self.POLL_S):
            self.look()

    def look(self, _elapsed: float = 0.0) -> bool:
        """Never asks for a stop (False); notes a rewrite."""
        if self.rewrote or self.at_stop.identity is None:
            return False
        try:
            info = os.stat(self.path)
        except OSError:
            self.rewrote = True
            return False
        if (info.st_dev, info.st_ino) != self.at_stop.identity or info.st_size < self.at_stop.kept:
            self.rewrote = True
        return False


@dataclass(frozen=True)
class AfterStop:
    contents: LedgerContents  # the whole ledger at the end
    written: dict[str, int]  # id -> records the second run wrote
    rewrote: bool  # the stop's bytes were not kept as they were


def after_stop(path: str, at_stop: Snapshot, watch: RewriteWatch | None = None) -> AfterStop:
    """The ledger at the end, and what the second run wrote after ``at_stop`` (``watch``: what
    was seen while it ran)."""
    if watch is not None:
        watch.look()
    try:
        fd = open_regular(path)
    except FileNotFoundError:
        return AfterStop(LedgerContents(), {}, rewrote=at_stop.kept > 0)
    with os.fdopen(fd, "rb") as file:
        contents = scan_ledger(file)
        file.seek(0)
        kept = (contents.size >= at_stop.kept and not (watch is not None and watch.rewrote)
                and _digest(file, at_stop.kept) == at_stop.digest)
        if not kept:
            return AfterStop(contents, dict(contents.counts), rewrote=True)
        file.seek(at_stop.kept)
        return AfterStop(contents, dict(scan_ledger(file, header=False).counts), rewrote=False)


def _digest(file: IO[bytes], size: int) -> bytes:
    digest = hashlib.sha256()
    left = size
    while left > 0:
        chunk = file.read(min(_CHUNK, left))
        if not chunk:
            break
        digest.update(chunk)
        left -= len(chunk)
    return digest.digest() if left <= 0 else b""


def judge_ids(seen: Observation, contents: LedgerContents, expected: list[str] | None) -> None:
    """Which ids are lost, duplicated or not expected, and the lines that are no record."""
    wanted = expected if expected is not None else contents.expected_ids
    seen.expected = None if wanted is None else len(set(wanted))
    seen.duplicated = {key: contents.counts[key] for key in contents.duplicated}
    seen.half_records = contents.half_records
    seen.not_records = dict(contents.not_records)
    if wanted is not None:
        seen.lost = natural_order(set(wanted) - set(contents.counts))
        seen.unexpected = natural_order(set(contents.counts) - set(wanted))


def judge_second_run(seen: Observation, at_stop: Snapshot, end: AfterStop) -> None:
    """What the second run wrote: how many records, and which of them the stop already held."""
    seen.second_run_records = sum(end.written.values())
    seen.rewrote_ledger = end.rewrote
    seen.redone = natural_order(set(end.written) & set(at_stop.contents.counts))


def check_records(path: str, contents: LedgerContents) -> tuple[list[dict[str, Any]], int]:
    """Each record held to the header's vector rules (when it declares them) and to standard
    JSON (no NaN, no infinity): the bad ones, and how many were checked."""
    dim, name = contents.vector_dim, contents.vector_field
    bad: list[dict[str, Any]] = []
    checked = 0
    with os.fdopen(open_regular(path), "rb") as file:
        for number, key, record, raw in scan_records(file):
            checked += 1
            problem = None
            if dim is not None:
                vector = record.get(name) if name is not None and isinstance(record, dict) \
                    else (None if name is not None else record)
                problem = vector_problem(vector, dim)
            if problem is not None:
                kind, found = problem
                detail = (f"{'none' if found is None else found}, expected {dim}"
                          if kind == "wrong_dimension" else None)
                bad.append({"id": key, "line": number, "problem": kind, "detail": detail})
            elif (b"NaN" in raw or b"Infinity" in raw) and _non_finite(record):
                bad.append({"id": key, "line": number, "problem": "non_finite", "detail": None})
    return bad, checked


def _non_finite(value: Any) -> bool:
    """A NaN or an infinity anywhere in ``value`` (as deep as it goes, without recursion)."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, float):
            if not math.isfinite(item):
                return True
        elif isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return False


def iter_records(path: str) -> Iterator[tuple[int, str, Any]]:
    """(line, id, record) of each complete record of the ledger at ``path``, in order."""
    with os.fdopen(open_regular(path), "rb") as file:
        for number, key, record, _ in scan_records(file):
            yield number, key, record


class RecordCounter:
    """Counts the ledger's complete records as it grows, reading only what was added."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._offset = 0
        self._records = 0
        self._rest = b""

    def count(self) -> int:
        try:  # a regular file only, a bounded read each time (what is left comes next time)
            with os.fdopen(open_regular(self.path), "rb") as file:
                file.seek(self._offset)
                data = file.read(MAX_LINE_BYTES)
        except OSError:
            return self._records
        self._offset += len(data)
        lines = (self._rest + data).split(b"\n")
        # A line longer than a record may be is none (read_ledger skips it): only its end is
        # kept, enough to know it is too long.
        self._rest = lines.pop()[-(MAX_LINE_BYTES + 1):]
        self._records += sum(1 for raw in lines if b'"id"' in raw and len(raw) <= MAX_LINE_BYTES)
        return self._records

"""A fleet of reports read as a stream (``summarize`` past ``SMALL`` files; issue 46): nothing
of a report that passed is kept past its counts, and the failing ones are grouped.

What is read: folders (searched recursively for ``*.json``, one folder's entries at a time),
report files, a list of files on stdin (``-``: NUL- or newline-separated, ``find -print0``),
JSON Lines on stdin (``-`` whose first byte is ``{``: one report per line) and tar archives
(``.tar``, ``.tar.gz``, ``.tgz``, ``.tar.bz2``, ``.tar.xz``: read as a stream with the standard
library's ``tarfile``, a member at a time, never extracted: no path of a member ever reaches the
file system). Every report goes through the same bounds as one read alone (``report/load.py``): a
regular file only (a FIFO or a device is refused before it is opened), at most 8 MiB (a bigger
member or line is skipped as it is read, counted ``too_large``), decoded by ``untrusted_json``
(integers and nesting bounded), judged by ``load.judge``.

``Tally`` is what is kept, a few counters whatever the count of reports: the count of each code,
of each group of failing reports (code, stage and cause: the error's kind, or the launcher's stop)
with the first ``FEW`` of each named, the unreadable files by reason (the first ``FEW`` named),
the ranks of ``--distributed`` jobs (``report/jobs.py``: a few numbers per rank report), the
failing ``--all-devices`` reports' devices. With ``--only failed`` every failing report's row is
kept too (for scripts: memory grows with the failing reports, never with the passing ones).

A folder is read in parts at once (``forked.in_parts``, one per processor it may use, up to 8):
each part walks the folders (their names only) and reads every ``parts``-th batch of ``BATCH``
files (a folder none of whose batches is its own only counted: no sort, no paths); the tallies
are added up, the first named of each group by the order they were found in: the output is the
same however many parts. A file is read once however it is named: a link,
every file named directly or listed on stdin, and every file when more than one path is given are
looked up by identity (device and inode) in every part, which then knows which name came first.
One limit: inside a single folder given alone, two hard links of one file (not a symbolic link)
are two names of its own each, read twice (no ``stat`` per file is made there, the cost of which
a million files would pay).
"""

from __future__ import annotations

import gc
import os
import stat
import tarfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, Optional

from ..safe_files import link_within
from ..terminal import cell
from ..untrusted_json import (
    MAX_LINE_BYTES,
    NotARegularFile,
    TooLarge,
    json_lines,
    loads_utf8,
    read_regular,
)
from .codes import VERDICTS
from .devices import EveryDeviceRow, every_device_row
from .jobs import Member, member_of
from .load import MAX_REPORT_BYTES, Loaded, Reason, judge, reason_of
from .redact import Redactor, without_user_names
from .summary import name_cell, natural, row

# Up to this many files named: read as ever, each report's line (``report/summary.py``); more is
# a fleet, read here.
SMALL = 40
# The reports named of each group of failing ones, and the unreadable files named.
FEW = 3
# Files per batch of a part (consecutive files, as they are found).
BATCH = 256
MAX_PARTS = 8
# A tar archive's names: the suffixes that say one.
TAR_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")

# (code, stage, cause): a group of failing reports.
Group = tuple[str, str, str]


@dataclass
class Tally:
    """What is kept of a fleet's reports (see the module's docstring); added up across parts."""

    by_code: Counter[str] = field(default_factory=Counter)
    groups: Counter[Group] = field(default_factory=Counter)
    # The first FEW named of each group: (order found, name, the report's row).
    named: dict[Group, list[tuple[int, str, dict[str, Any]]]] = field(default_factory=dict)
    unreadable: Counter[str] = field(default_factory=Counter)
    unreadable_named: list[tuple[int, str, str, str | None]] = field(default_factory=list)
    members: list[tuple[int, Member]] = field(default_factory=list)
    every_device: list[tuple[int, EveryDeviceRow]] = field(default_factory=list)
    failed_rows: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    attempts: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    reports: int = 0
    passed: int = 0
    list_unreadable: bool = False  # every unreadable file named (--list-unreadable), not FEW

    def add(self, other: Tally) -> None:
        self.by_code.update(other.by_code)
        self.groups.update(other.groups)
        for group, named in other.named.items():
            self.named[group] = sorted(self.named.get(group, []) + named)[:FEW]
        self.unreadable.update(other.unreadable)
        self.unreadable_named = sorted(self.unreadable_named + other.unreadable_named)[
            :None if self.list_unreadable else FEW]
        self.members = sorted(self.members + other.members, key=lambda item: item[0])
        self.every_device = sorted(self.every_device + other.every_device,
                                   key=lambda item: item[0])
        self.failed_rows = sorted(self.failed_rows + other.failed_rows, key=lambda item: item[0])
        self.attempts = sorted(self.attempts + other.attempts, key=lambda item: item[0])
        self.reports += other.reports
        self.passed += other.passed

    @property
    def files(self) -> int:
        return self.reports + sum(self.unreadable.values())

    @property
    def failed(self) -> int:
        return self.reports - self.passed


def cause_of(report: dict[str, Any]) -> str:
    """Why a report failed, in one identifier: the launcher's stop of a ``--distributed`` rank
    (``launcher_stop:time_limit``), else its error's kind (``gpu_unavailable``), else ``-``."""
    block = report.get("distributed")
    if isinstance(block, dict) and block.get("launcher_stopped") is True:
        stop = block.get("launcher_stop")
        return "launcher_stop:" + (stop if stop in ("time_limit", "cancelled", "sigterm")
                                   else "sigterm")
    error = report.get("error")
    kind = error.get("kind") if isinstance(error, dict) else None
    return kind if isinstance(kind, str) and kind.isidentifier() and len(kind) <= 40 else "-"


def _stage(report: dict[str, Any]) -> str:
    stage = report.get("stage")
    return stage if isinstance(stage, str) and stage.isidentifier() and len(stage) <= 40 else "-"


class Reader:
    """Judges one report at a time into a ``Tally`` (``only_failed``: every failing row kept;
    ``out``: each report's row given as it is read, for an export)."""

    def __init__(self, tally: Tally, only_failed: bool = False,
                 out: Callable[[dict[str, Any]], None] | None = None,
                 other: Callable[[str, str], list[dict[str, Any]] | None] | None = None
                 ) -> None:
        self.tally = tally
        self.other = other
        self.only_failed = only_failed
        self.out = out

    def bytes_(self, order: int, name: Callable[[], str], data: bytes | Reason,
               path: str | None = None) -> None:
        """One file's bytes (or why there are none) judged and counted; a folder's file that
        is no report (``path``) may be a trial attempt or a ramp (``other``, as
        ``report/summary.py`` reads them)."""
        reason: str
        detail = None
        if isinstance(data, str):
            reason = data
        else:
            try:
                document = loads_utf8(data)
            except ValueError:
                document, reason = None, "not_json"
            if document is not None:
                loaded = judge(document, "")
                if loaded.report is not None:
                    self.report(order, name, loaded.report)
                    return
                reason, detail = loaded.reason or "not_a_report", loaded.detail
        if path is not None and self.other is not None \
                and reason in ("not_a_report", "not_json", "too_large"):
            rows = self.other(path, name())
            if rows is not None:
                self.tally.attempts += [(order, item) for item in rows]
                return
        self.unreadable(order, name(), reason, detail)

    def report(self, order: int, name: Callable[[], str], report: dict[str, Any]) -> None:
        tally = self.tally
        code = report["code"]
        tally.reports += 1
        tally.by_code[code] += 1
        passed = VERDICTS[code].passed
        tally.passed += passed
        shown: str | None = None
        if "distributed" in report:
            shown = name()
            member = member_of(report, shown)
            if member is not None:
                tally.members.append((order, member))
        request = report.get("request")
        if not passed and isinstance(request, dict) and request.get("all_devices") is True:
            shown = shown or name()
            devices = every_device_row(report, shown)
            if devices is not None:
                tally.every_device.append((order, devices))
        if passed and self.out is None:
            return
        if not passed:
            group = (code, _stage(report), cause_of(report))
            tally.groups[group] += 1
            named = tally.named.setdefault(group, [])
            wanted = len(named) < FEW or self.only_failed
        else:
            wanted = False
        if not wanted and self.out is None:
            return
        shown = shown or name()
        values = row(Loaded(shown, report=report))
        values["cause"] = cause_of(report)
        if self.out is not None and (not self.only_failed or not passed):
            self.out(values)
        if not passed:
            if len(named) < FEW:
                named.append((order, shown, values))
            if self.only_failed and self.out is None:
                tally.failed_rows.append((order, values))

    def unreadable(self, order: int, shown: str, reason: str, detail: str | None = None) -> None:
        self.tally.unreadable[reason] += 1
        if self.tally.list_unreadable or len(self.tally.unreadable_named) < FEW:
            self.tally.unreadable_named.append((order, shown, reason, detail))


class Namer:
    """What a file is shown as: its path below the folder the arguments have in common, users'
    own folders as ``<user>``, redacted (as ``report/summary.py`` names a file below it); a file
    outside it (a list's absolute path, a root that would name the machine) by the label of the
    home or working folder it is in and its last folders, never absolute."""

    def __init__(self, root: str | None, redactor: Redactor | None = None) -> None:
        self.redactor = Redactor.for_this_machine() if redactor is None else redactor
        labelled = [folder for folder, _ in self.redactor.folders]
        self.root = root if root is not None and os.path.dirname(root) != root and not any(
            _within(folder, root) for folder in labelled) else None

    def __call__(self, path: str) -> str:
        full = os.path.abspath(path)
        relative = [part for part in path.replace(os.sep, "/").split("/") if part not in ("", ".")]
        if self.root is None and not os.path.isabs(path) and ".." not in relative and relative:
            # A list's relative path, as the user gave it (``find . -print0``): no folder of the
            # machine above the working folder.
            return name_cell(self.redactor.text("/".join(without_user_names(relative))))
        if self.root is not None and _within(full, self.root) and full != self.root:
            parts = os.path.relpath(full, self.root).split(os.sep)
            label = ""
        else:
            label, folder = next(((label, folder) for folder, label in self.redactor.folders
                                  if _within(full, folder)), ("", ""))
            parts = (os.path.relpath(full, folder) if folder else full).split(os.sep)
            parts = [part for part in parts if part][-3:]
        shown = "/".join(without_user_names(parts))
        return name_cell(self.redactor.text(label + "/" + shown if label else shown))


def _within(path: str, folder: str) -> bool:
    try:
        return os.path.commonpath([path, folder]) == os.path.normpath(folder)
    except ValueError:
        return False


# -- files: folders and lists -------------------------------------------------------------------

# A file to read: its path; its st_mode when known (a folder's entry that is a regular file by its
# type, no link); whether it must be looked up by identity (a link, a file named directly).
Entry = tuple[str, Optional[int], bool]
LINK = -1  # an Entry's mode for a link to a folder: never followed, shown as unreadable
# Files found together (a folder's, or one file): how many, whether any must be looked up by
# identity, and the entries in order, made when asked (a part skips a folder none of whose
# batches is its own: no sorting, no paths; each part walks every folder).
Found = tuple[int, bool, Callable[[], list[Entry]]]


def walk(top: str, also: Callable[[str, Sequence[str]], bool] | None = None,
         every_lookup: bool = False) -> Iterator[Found]:
    """Every ``*.json`` under a folder, each folder's in natural order, then its subfolders
    (not through a link to a folder, as ``os.walk``: such a link is given as itself with the mode
    ``LINK``, shown as not followed); a folder that cannot be listed is given as itself with a
    mode of 0 (unreadable). ``every_lookup``: every file looked up by identity."""
    stack = [top]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as listing:
                found = list(listing)
        except OSError:
            yield 1, False, lambda folder=folder: [(folder, 0, False)]  # type: ignore[misc]
            continue
        files, folders = [], []
        names: list[str] | None = None
        for entry in found:
            if entry.is_dir(follow_symlinks=False):
                folders.append(entry.path)
                continue
            if entry.is_symlink() and entry.is_dir():  # never followed; shown, not skipped
                if not link_within(entry.path, top):  # latest -> run-42: listed there already
                    yield 1, False, lambda path=entry.path: [  # type: ignore[misc]
                        (path, LINK, False)]
                continue
            name = entry.name
            if not name.lower().endswith(".json"):
                if also is None:
                    continue
                if names is None:
                    names = [each.name for each in found]
                if not also(name, names):
                    continue
            files.append(entry)
        if files:
            yield (len(files), every_lookup or any(entry.is_symlink() for entry in files),
                   lambda files=files: _in_order(files, every_lookup))  # type: ignore[misc]
        stack += sorted(folders, key=natural, reverse=True)


def _in_order(files: list[os.DirEntry[str]], every_lookup: bool) -> list[Entry]:
    files.sort(key=lambda entry: natural(entry.name))
    made: list[Entry] = []
    for entry in files:
        link = entry.is_symlink()
        regular = not link and entry.is_file(follow_symlinks=False)
        made.append((entry.path, stat.S_IFREG if regular else None, link or every_lookup))
    return made


def entries(paths: Sequence[str], also: Callable[[str, Sequence[str]], bool] | None = None
            ) -> Iterator[Found]:
    """The files of the arguments in order: a folder's as ``walk`` finds them, a file as itself;
    with more than one argument, every file is looked up by identity (a file may be named
    through a folder and directly, or through two folders)."""
    several = len(paths) > 1
    for path in paths:
        if os.path.isdir(path):
            yield from walk(path, also, every_lookup=several)
        else:
            yield _one(path)


def _one(path: str) -> Found:
    """A file named as itself: looked up by identity."""
    return 1, True, lambda: [(path, None, True)]


def listed(stream: IO[bytes], first: bytes) -> Iterator[Found]:
    """The files a list on stdin names: separated by NUL when it holds one, else by newlines
    (``find -print0``, ``find``); an empty name is skipped."""
    pending = first
    separator: bytes | None = None
    while True:
        chunk = stream.read(1 << 16)
        pending += chunk
        if separator is None and (b"\0" in pending or not chunk):
            separator = b"\0" if b"\0" in pending else b"\n"
        if separator is not None:
            *names, pending = pending.split(separator)
            for raw in names:
                name = raw.rstrip(b"\r") if separator == b"\n" else raw
                if name:
                    yield _one(os.fsdecode(name))
        elif len(pending) > 1 << 20:  # no NUL in the first MiB: lines
            separator = b"\n"
        if not chunk:
            break
    if pending.strip():
        yield _one(os.fsdecode(pending.rstrip(b"\r\n")))


def read_entries(reader: Reader, found: Iterable[Found], namer: Callable[[str], str],
                 mine: Callable[[int], bool] = lambda batch: True,
                 seen: set[tuple[int, int]] | None = None) -> None:
    """Read each file found whose batch is ``mine``, once by identity (``seen``): a file to be
    looked up by identity is looked up in every part (each part then knows which name came
    first), read in its own. Files none of which is to be looked up, in no batch of this part's,
    are only counted."""
    seen = set() if seen is None else seen
    start = 0
    for count, lookups, made in found:
        first = start
        start += count
        if not lookups and not any(mine(batch) for batch in
                                   range(first // BATCH, (start - 1) // BATCH + 1)):
            continue
        for order, (path, known, lookup) in enumerate(made(), start=first):
            own = mine(order // BATCH)
            mode = known
            if lookup or (own and mode is None):
                try:
                    info = os.stat(path)
                except OSError as error:
                    if own:
                        reader.unreadable(order, namer(path), reason_of(error))
                    continue
                mode = info.st_mode
                if lookup:
                    identity = (info.st_dev, info.st_ino)
                    if identity in seen:
                        continue
                    seen.add(identity)
            if not own:
                continue
            if mode == 0:  # a folder that could not be listed
                reader.unreadable(order, namer(path), "unreadable")
                continue
            if mode == LINK:
                reader.unreadable(order, namer(path), "link_not_followed")
                continue
            reader.bytes_(order, lambda path=path: namer(path),  # type: ignore[misc]
                          _read(path, mode or 0), path)


def _read(path: str, mode: int) -> bytes | Reason:
    try:
        return read_regular(path, MAX_REPORT_BYTES, mode=mode)
    except NotARegularFile:
        return "not_a_file"
    except TooLarge:
        return "too_large"
    except OSError as error:
        return reason_of(error)


def read_in_parts(paths: Sequence[str], namer: Callable[[str], str], parts: int, *,
                  only_failed: bool, list_unreadable: bool = False,
                  also: Callable[[str, Sequence[str]], bool] | None,
                  other: Callable[[str, str], list[dict[str, Any]] | None] | None,
                  run: Callable[[Callable[[Sequence[int]], Tally], Sequence[int], int],
                                list[Tally]]) -> Tally:
    """The folders and files of the arguments read in ``parts`` at once (``run``:
    ``forked.in_parts``), each part every ``parts``-th batch; the tallies added up."""
    def work(numbers: Sequence[int]) -> Tally:
        tally = Tally(list_unreadable=list_unreadable)
        reader = Reader(tally, only_failed, other=other)
        for number in numbers:
            read_entries(reader, entries(paths, also), namer,
                         lambda batch, number=number: batch % parts == number)  # type: ignore[misc]
        return tally

    collecting = gc.isenabled()
    gc.disable()  # decoded reports hold no cycle (as in report/summary.py)
    try:
        results = run(work, list(range(parts)), parts)
    finally:
        if collecting:
            gc.enable()
    total = Tally(list_unreadable=list_unreadable)
    for result in results:
        total.add(result)
    return total


# -- streams: JSON Lines, tar archives -------------------------------------------------------------

def read_json_lines(reader: Reader, stream: IO[bytes], first: bytes) -> None:
    """One report per line of stdin (``<stdin>:LINE``), a line of more than 8 MiB skipped as
    it is read (``too_large``); empty lines are skipped."""
    for number, (raw, _, _) in enumerate(json_lines(_Prefixed(first, stream),
                                                         min(MAX_LINE_BYTES, MAX_REPORT_BYTES)),
                                              start=1):
        if raw is not None and not raw.strip():
            continue
        reader.bytes_(number, lambda number=number: f"<stdin>:{number}",  # type: ignore[misc]
                      "too_large" if raw is None else raw)


class _Prefixed:
    """A binary stream with the bytes already read from it put back in front."""

    def __init__(self, first: bytes, stream: IO[bytes]) -> None:
        self.first, self.stream = first, stream

    def read(self, size: int = -1) -> bytes:
        if self.first:
            data, self.first = self.first, b""
            return data
        return self.stream.read(size)


def read_tar(reader: Reader, path: str, shown: str, order: int = 0) -> int:
    """Each ``*.json`` member of a tar archive, read from the stream (``r|*``: one member after
    the other, never extracted, never seeking); a member that is not a regular file is
    ``not_a_file`` (a link in an archive points at anything), a bigger one ``too_large`` (not
    read). Shown as ``ARCHIVE:MEMBER``. An archive that cannot be read counts once as
    unreadable. The next order."""
    try:
        fd_mode = os.stat(path).st_mode
        if not stat.S_ISREG(fd_mode):
            reader.unreadable(order, shown, "not_a_file")
            return order + 1
        archive = tarfile.open(path, "r|*")  # noqa: SIM115 (closed below, after the loop)
    except OSError as error:
        reader.unreadable(order, shown, reason_of(error))
        return order + 1
    except tarfile.TarError:
        reader.unreadable(order, shown, "unreadable")
        return order + 1
    try:
        for member in archive:
            if member.isdir() or not member.name.lower().endswith(".json"):
                continue
            name = shown + ":" + cell(member.name.lstrip("/"), 200)
            if not member.isfile():
                reader.unreadable(order, name, "not_a_file")
            elif member.size > MAX_REPORT_BYTES:
                reader.unreadable(order, name, "too_large")
            else:
                extracted = archive.extractfile(member)
                data = extracted.read(MAX_REPORT_BYTES + 1) if extracted is not None else b""
                reader.bytes_(order, lambda name=name: name, data)  # type: ignore[misc]
            order += 1
    except (tarfile.TarError, OSError, EOFError):
        reader.unreadable(order, shown, "unreadable")
        order += 1
    finally:
        archive.close()
    return order


def is_tar(path: str) -> bool:
    return path.lower().endswith(TAR_SUFFIXES) and not os.path.isdir(path)

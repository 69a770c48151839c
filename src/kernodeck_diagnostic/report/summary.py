"""Many reports at a glance (``summarize``, the command: ``commands/summarize.py``): which files
the arguments name, what each is shown as, and what is kept of each report read.

A path given is a report file or a folder, searched recursively for ``*.json`` (in natural order:
``r-2`` before ``r-10``).
A file is shown by its path relative to the folder the arguments have in common
(``node-1/report.json``, ``node-2/report.json``): never by the machine's folders above it, never
absolute. When that folder is the file system's root, a drive's, or holds the home or working
folder (``summarize ~/reports/a.json /tmp/b.json``: ``/``), the relative path would name them: a
file is then shown by the fewest last folders that tell it from the others (``b.json``,
``run-1/report.json``), after ``<home>/`` or ``<cwd>/`` when it is inside the home or working
folder (``<home>/a.json``). In every name a user's own folder (after ``home`` or ``Users``) is
``<user>``, and the name goes through the privacy rules of the report (``report/redact.py``): no
user or host name, no value of a variable. A file named twice (directly and through its folder,
or through a link) is read and counted once. Only regular files are read, up to 8 MiB each, one at
a time: of a report only the line printed for it is kept, so memory grows by about 1 KiB per file
(its name and its line), not by the report (docs/performance.md). A FIFO, a device or a bigger
file is not waited for. Files that are not readable reports (not JSON, another schema version, not
a report at all, too large, not a regular file, missing) are kept with the reason, and the others
are still summarized. The three outputs: ``report/summary_render.py``.

A file that is not a report may be a trial attempt or a ramp's record: ``Summary``'s ``other``
(``ramp/rows.py``, given by the command) turns it into rows of a second table, across attempts;
a folder's ``events.jsonl`` without an ``attempt.json`` beside it (an attempt killed first) is
found too. Reports are read and counted exactly as without it.

The reports of a ``--distributed`` job are grouped too (``Summary.jobs``, report/jobs.py): each
rank's verdict, the ranks that never reported, the job's verdict, shown before the files; and
of each ``--all-devices`` report, each device's verdict and its copies (``Summary.every_device``,
report/devices.py): peer access that nothing could say is unknown, never "no", and the copies
never tried because the worker was stopped first are named.
"""

from __future__ import annotations

import gc
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Optional

from ..safe_files import link_within
from ..terminal import CELL_LIMIT, one_line
from .codes import VERDICTS
from .devices import EveryDeviceRow, every_device_row
from .jobs import Job, Member, as_part, jobs, member_of
from .load import Loaded, Reason, exit_code_of, file_name, load, reason_of
from .redact import Redactor, without_user_names

# Worst first: the order of the counts per code, for every code a report can carry. The one
# place this order is defined.
SEVERITY = (
    # A wrong result is the most dangerous: the device computes, silently, the wrong numbers.
    "CHECK_FAILED",
    # No verdict at all: the check crashed or hung, nothing is known of the layers.
    "WORKER_FAILED", "TIMEOUT",
    # No verdict either: the tool could not get what it needs from the process's limits.
    "TOOL_RESOURCES",
    # A layer failed: the lower the layer, the less of the stack works.
    "TORCH_MISSING", "TORCH_IMPORT_FAILED", "GPU_BACKEND_ABSENT", "GPU_UNAVAILABLE",
    "DEVICE_INDEX_INVALID", "RUNTIME_ERROR", "OUT_OF_MEMORY",
    # --distributed: this rank's own layers passed, the job across ranks did not.
    "COLLECTIVE_FAILED",
    # --extensions: torch and the device passed, an extension the application imports did not.
    "EXTENSION_FAILED",
    # Passes last; a CPU pass says nothing about the GPU, so it comes before a GPU pass.
    "CPU_CHECK_PASSED", "GPU_CHECK_PASSED",
)
RANK = {name: rank for rank, name in enumerate(SEVERITY)}
# The headers of a report's line (their catalog keys), in the order of ROW_KEYS.
COLUMNS = ("summarize.header.report", "summarize.header.code", "summarize.header.exit",
           "summarize.header.stage", "summarize.header.python", "summarize.header.torch",
           "summarize.header.backend", "summarize.header.devices")
# The headers of an attempt's line (their catalog keys).
ATTEMPT_COLUMNS = ("summarize.header.attempt", "summarize.header.status",
                   "summarize.header.error_stage", "summarize.header.contracts",
                   "summarize.header.peak", "summarize.header.last_started")


@dataclass(frozen=True)
class Found:
    """A file the arguments name and what it is shown as; or a folder that could not be listed
    (``reason``)."""

    path: str
    name: str
    reason: Reason | None = None


def collect(paths: Sequence[str], redactor: Redactor | None = None,
            also: Also | None = None) -> list[Found]:
    """Every file the arguments name, in the order given (folders sorted), named as the module's
    docstring says: in a folder, every ``*.json`` and the other files ``also`` takes (an
    attempt's event log). Nothing is read yet: ``Summary.read`` reads them."""
    found: list[tuple[str, Reason | None]] = []  # a file, or a folder that could not be listed
    for path in paths:
        if os.path.isdir(path):
            files, failed = _folder(path, also)
            found += [(file, None) for file in files] + failed
        else:
            found.append((path, None))
    names = _names([path for path, _ in found], common_root(paths),
                   Redactor.for_this_machine() if redactor is None else redactor)
    return [Found(path, names[path], reason) for path, reason in found]


# The files to read, each with its ``st_mode`` (None when its ``os.stat`` failed); what reading
# some of them gives: the code of each readable report and what is kept of it, in order, and the
# files that are not readable reports.
Files = Sequence[tuple[Found, Optional[int]]]


class Judged(NamedTuple):
    """What reading a part of the files gives (``Summary._judge``), each list in the files'
    order."""

    codes: list[str]  # the code of each readable report
    kept: list[Any]  # what is kept of it (``Summary.keep``)
    unreadable: list[Loaded]  # the files that are not readable reports
    attempts: list[dict[str, Any]]  # the rows of trial attempts and ramps (``Summary.other``)
    members: list[Member]  # the ranks of --distributed jobs (report/jobs.py)
    every_device: list[EveryDeviceRow]  # --all-devices reports (report/devices.py)


# Whether a folder's file that is not ``*.json`` is read too: (its name, the folder's names).
Also = Callable[[str, Sequence[str]], bool]
# The rows of a file that is not a report (an attempt, a ramp), or None: (path, shown name).
Other = Callable[[str, str], Optional[list[dict[str, Any]]]]
# How ``Summary.read`` has the files judged: ``work`` of each part of them, the results in order
# (``forked.in_parts``; by default, all of them here at once).
Runner = Callable[[Callable[[Files], Judged], Files], Iterable[Judged]]


def all_here(work: Callable[[Files], Judged], files: Files) -> list[Judged]:
    """The files judged in one part, in this process."""
    return [work(files)]


def row(loaded: Loaded) -> dict[str, Any]:
    """One report's line: the fields shown for it, as JSON output carries them."""
    return dict(zip(ROW_KEYS, row_values(loaded)))


ROW_KEYS = ("file", "code", "exit_code", "stage", "python_version", "torch_version", "backend",
            "devices")


def row_values(loaded: Loaded) -> tuple[Any, ...]:
    """The values of a report's line, in the order of ROW_KEYS (and of COLUMNS)."""
    report = loaded.report or {}
    runtime, pytorch = report.get("runtime"), report.get("pytorch")
    runtime = runtime if isinstance(runtime, dict) else {}
    pytorch = pytorch if isinstance(pytorch, dict) else {}
    return (loaded.name, report.get("code"), exit_code_of(report), report.get("stage"),
            runtime.get("python_version"), pytorch.get("version"), pytorch.get("backend"),
            pytorch.get("visible_device_count"))


class Summary:
    """What summarize keeps of the files it reads, one at a time: for each report only the row it
    prints (``keep``: the text's cells, the markdown's line, the JSON's object), never the report
    itself; the count of each code; the unreadable files. Memory grows by a row per report, not
    by a report per report (docs/performance.md)."""

    def __init__(self, keep: Callable[[Loaded], Any], other: Other | None = None,
                 part: bool = False) -> None:
        self.keep = keep
        self.other = other
        self.part = part  # the reports are a part of a fleet (``jobs.as_part``)
        self.attempts: list[dict[str, Any]] = []
        self.members: list[Member] = []  # the reports of --distributed jobs (report/jobs.py)
        self.every_device: list[EveryDeviceRow] = []  # --all-devices reports (report/devices.py)
        self.rows: list[Any] = []
        self.by_code: Counter[str] = Counter()
        self.passed = 0
        self.unreadable: list[Loaded] = []

    def read(self, found: Iterable[Found], run: Runner = all_here) -> Summary:
        """Load and judge each file, each real file once however it was named. ``run`` has them
        judged in parts: ``summarize`` reads thousands in parts at once, one per processor it
        may use (``forked.in_parts``, commands/summarize.py): the same result, sooner."""
        files = _once_each(found)
        # Decoded JSON is a tree, and what is kept holds no cycle either: reference counting
        # frees it all, and the cycle collector's passes over the growing rows would only cost
        # time (about 8 % of reading 20,000 reports). It is back as it was at the end.
        collecting = gc.isenabled()
        gc.disable()
        try:
            for part in run(self._judge, files):
                self.attempts += part.attempts
                self.members += part.members
                self.every_device += part.every_device
                self.rows += part.kept
                self.by_code.update(part.codes)
                self.passed += sum(VERDICTS[code].passed for code in part.codes)
                self.unreadable += part.unreadable
        finally:
            if collecting:
                gc.enable()
        return self

    def _judge(self, files: Files) -> Judged:
        """The code of each readable report and what is kept of it, in order; the files that
        are not readable reports."""
        codes: list[str] = []
        kept: list[Any] = []
        unreadable: list[Loaded] = []
        attempts: list[dict[str, Any]] = []
        members: list[Member] = []
        every: list[EveryDeviceRow] = []
        for item, mode in files:
            loaded = (Loaded(item.name, reason=item.reason) if item.reason is not None
                      else load(item.path, item.name, mode=mode))
            rows = (self.other(item.path, item.name) if self.other is not None
                    and loaded.reason in ("not_a_report", "not_json", "too_large") else None)
            if rows is not None:
                attempts += rows
            elif loaded.report is None:
                unreadable.append(loaded)
            else:
                codes.append(loaded.report["code"])
                kept.append(self.keep(loaded))
                member = member_of(loaded.report, loaded.name)
                if member is not None:
                    members.append(member)
                devices = every_device_row(loaded.report, loaded.name)
                if devices is not None:
                    every.append(devices)
        return Judged(codes, kept, unreadable, attempts, members, every)

    @property
    def files(self) -> int:
        return len(self.rows) + len(self.unreadable)

    def jobs(self) -> list[Job]:
        """The --distributed jobs among the reports: each rank's verdict, the ranks that never
        reported, the job's verdict (report/jobs.py)."""
        found = jobs(self.members, RANK)
        return as_part(found) if self.part else found

    @property
    def attempts_failed(self) -> int:
        """The attempts and ramps counted (not a ramp's own attempts: its row speaks for them)
        that failed: judged (``trial/judge.py``, ``ramp/record.py``'s verdict) not passed and
        not inconclusive."""
        return sum(1 for row in self.attempts if row["counted"] and not row["passed"]
                   and not row.get("inconclusive"))

    @property
    def attempts_inconclusive(self) -> int:
        """The attempts and ramps counted that could not be judged: no evidence of a pass."""
        return sum(1 for row in self.attempts if row["counted"] and not row["passed"]
                   and row.get("inconclusive"))

    def counts(self) -> list[tuple[str, int]]:
        """How many reports have each code, worst first (``SEVERITY``)."""
        return sorted(self.by_code.items(), key=lambda item: (RANK.get(item[0], -1), item[0]))


def _folder(top: str, also: Also | None = None
            ) -> tuple[list[str], list[tuple[str, Reason | None]]]:
    """Every *.json under a folder, in the natural order of its path there (``report-2.json``
    before ``report-10.json``); and the subfolders that cannot be listed, and the links to a
    folder (never followed), with the reason, to be shown as unreadable rather than skipped in
    silence."""
    found: list[str] = []
    failed: list[tuple[str, Reason | None]] = []

    def on_error(error: OSError) -> None:
        failed.append((str(error.filename or top), reason_of(error)))

    for folder, subfolders, files in os.walk(top, onerror=on_error):
        subfolders.sort()
        # os.walk lists a link to a folder among the subfolders and never enters it: not
        # followed (another user's link), but shown, never skipped in silence.
        failed += [(path, "link_not_followed") for path in
                   (os.path.join(folder, name) for name in subfolders)
                   if os.path.islink(path) and not link_within(path, top)]
        found += [os.path.join(folder, name) for name in files if name.lower().endswith(".json")
                  or (also is not None and also(name, files))]
    # Every path os.walk gives starts with the folder and a separator: the rest is its path
    # there (what os.path.relpath gives, without its cost for each of thousands of files).
    start = len(os.path.join(top, ""))
    return sorted(found, key=lambda file: natural(_slashed(file[start:]))), failed


def common_root(paths: Sequence[str]) -> str | None:
    """The deepest folder holding every argument (a folder itself, or a file's folder); None
    when there is none (Windows drives that differ)."""
    folders = [absolute if os.path.isdir(absolute) else os.path.dirname(absolute)
               for absolute in (os.path.abspath(path) for path in paths)]
    try:
        return os.path.commonpath(folders) if folders else None
    except ValueError:
        return None


def _names(paths: Sequence[str], root: str | None, redactor: Redactor) -> dict[str, str]:
    """What each path is shown as (see the module's docstring), redacted."""
    # The shared folder names nothing of the machine when it is below the root and does not
    # hold the home or working folder.
    deep = root is not None and os.path.dirname(root) != root and not any(
        _inside(folder, root) and not _same(folder, root) for folder, _ in redactor.folders)
    shown: dict[str, str] = {}
    # By label ("" for none): each path's components, and how many of them the folder has.
    groups: dict[str, dict[str, tuple[list[str], int]]] = {}
    root_depth = len(_components(root)) if root is not None else 0
    # What a path strictly inside the root starts with: the quick test for thousands of files
    # under one folder (the others go through _inside).
    prefix = os.path.join(os.path.normcase(root), "") if deep and root is not None else None
    # Thousands of files share a few folders: below the root, a file is shown as its folder's
    # shown path, made once per folder, and its own name.
    below: dict[str, tuple[str, str] | None] = {}
    for path in paths:
        full = os.path.abspath(path)
        folder, name = os.path.split(full)
        if prefix is not None and root is not None and name:  # strictly inside the root
            if folder not in below:
                below[folder] = _shown_below(folder, root, prefix, root_depth)
            known = below[folder]
            if known is not None:
                start, parent = known
                shown[path] = start + without_user_names([parent, name])[1]
                continue
        parts = _components(full)
        folder, label = next(((folder, label) for folder, label in redactor.folders
                              if _inside(full, folder)), ("", ""))
        if folder and _same(full, folder):
            shown[path] = label
        else:
            groups.setdefault(label, {})[path] = (parts, len(_components(folder)) if folder else 0)
    for label, members in groups.items():
        counts = _distinct_endings({path: parts[above:]
                                    for path, (parts, above) in members.items()})
        for path, (parts, _) in members.items():
            tail = "/".join(without_user_names(parts)[-counts[path]:]) if parts else file_name(path)
            shown[path] = label + "/" + tail if label else tail
    if redactor.unchanged(list(shown.values())):  # the usual case: one search per rule in all
        return {path: name_cell(name) for path, name in shown.items()}
    return {path: name_cell(redactor.text(name)) for path, name in shown.items()}


def name_cell(name: str, limit: int = CELL_LIMIT) -> str:
    """A file's shown name in one cell of at most ``limit`` characters. A longer one is cut in
    its middle, keeping its start and its end (the file's own name): names that differ only
    at their end (``.../run-1.json``, ``.../run-2.json``) stay told apart."""
    text = one_line(name)  # escaped whole (longer than the name), then cut in its middle
    if len(text) <= limit:
        return text
    head = (limit - 1) // 4
    return text[:head] + "…" + text[len(text) - (limit - 1 - head):]


def _shown_below(folder: str, root: str, prefix: str, root_depth: int) -> tuple[str, str] | None:
    """For the files of an absolute folder inside the root (or the root itself): what their
    shown paths start with (its components below the root, users' own folders as ``<user>``,
    each followed by a slash), and its last component (which says whether a file's name is a
    user's folder). None for a folder outside the root."""
    if not (os.path.normcase(os.path.join(folder, "")).startswith(prefix)
            or _inside(folder, root)):
        return None
    parts = _components(folder)
    return ("".join(part + "/" for part in without_user_names(parts)[root_depth:]),
            parts[-1] if parts else "")


def _distinct_endings(paths: dict[str, list[str]]) -> dict[str, int]:
    """For each path (its components), the fewest last components no other path ends with
    (``b.json``, ``run-1/report.json``); all of them when none is enough."""
    distinct = {tuple(parts) for parts in paths.values()}
    endings = Counter(parts[-count:] for parts in distinct for count in range(1, len(parts) + 1))
    return {path: next((count for count in range(1, len(parts))
                        if endings[tuple(parts[-count:])] == 1), len(parts))
            for path, parts in paths.items()}


def _components(path: str) -> list[str]:
    """The folders and the name of an absolute path, without its root or drive."""
    return [part for part in re.split(r"[\\/]", os.path.splitdrive(path)[1]) if part]


def _inside(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or inside it."""
    try:
        return _same(os.path.commonpath([os.path.normcase(path), os.path.normcase(folder)]),
                     folder)
    except ValueError:  # different drives, or one relative
        return False


def _same(path: str, other: str) -> bool:
    return os.path.normcase(os.path.normpath(path)) == os.path.normcase(os.path.normpath(other))


_DIGITS = re.compile(r"(\d+)")


def natural(text: str) -> tuple[tuple[Any, ...], str]:
    """The key that sorts numbers inside names by value: ``r-2`` before ``r-10``; names equal
    but for zero padding (``r-02``, ``r-2``) stay in their text's order."""
    parts: list[Any] = _DIGITS.split(text)  # text, digits, text, ...: each place of one kind
    parts[1::2] = map(int, parts[1::2])
    return tuple(parts), text


def _slashed(relative: str) -> str:
    """A relative path with / whatever the system."""
    return relative.replace(os.sep, "/")


def _once_each(found: Iterable[Found]) -> list[tuple[Found, int | None]]:
    """The files, each real file once (its first name), with its ``st_mode`` (None when its
    ``os.stat`` fails); and the folders that could not be listed."""
    seen: set[tuple[Any, ...]] = set()
    files: list[tuple[Found, int | None]] = []
    for item in found:
        if item.reason is not None:
            files.append((item, None))
            continue
        info, identity = _identity(item.path)
        if identity not in seen:
            seen.add(identity)
            files.append((item, None if info is None else info.st_mode))
    return files


def _identity(path: str) -> tuple[os.stat_result | None, tuple[Any, ...]]:
    """The file's ``os.stat`` (None when it fails), and what makes it the same file however it
    was named: its device and inode (links, a folder given twice), else its real path (a file
    that does not exist)."""
    try:
        info = os.stat(path)
    except OSError:
        return None, ("path", os.path.realpath(path))
    if info.st_ino:
        return info, ("file", info.st_dev, info.st_ino)
    return info, ("path", os.path.realpath(path))


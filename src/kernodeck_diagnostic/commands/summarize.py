"""``kernodeck-diagnostic summarize PATH...``: many reports (say, one per machine) at a glance.

    $ kernodeck-diagnostic summarize reports/
    report        code              exit  stage    python  torch        backend  devices
    node-1.json   GPU_CHECK_PASSED  0     compute  3.11.7  2.7.0+cu128  cuda     1
    node-2.json   OUT_OF_MEMORY     9     compute  3.11.7  2.7.0+cu128  cuda     1

    counts per code, worst first
      OUT_OF_MEMORY     1
      GPU_CHECK_PASSED  1

    unreadable (1)
      notes.json  not a report

    3 file(s): 2 report(s), 1 passed, 1 failed, 1 unreadable

A PATH is a report file or a folder, searched recursively for ``*.json`` (in sorted order). A file
is shown by its path relative to the folder the arguments have in common (``node-1/report.json``,
``node-2/report.json``): never by the machine's folders above it, never absolute. When that folder
is the file system's root, a drive's, or holds the home or working folder (``summarize
~/reports/a.json /tmp/b.json``: ``/``), the relative path would name them: a file is then shown
by the fewest last folders that tell it from the others (``b.json``, ``run-1/report.json``), after
``<home>/`` or ``<cwd>/`` when it is inside the home or working folder (``<home>/a.json``). In
every name a user's own folder (after ``home`` or ``Users``) is ``<user>``, and the name goes
through the privacy rules of the report (``report/redact.py``): no user or host name, no value of
a variable. A file named twice
(directly and through its folder, or through a link) is read and counted once. Only regular files
are read, up to 8 MiB each, one at a time: of a report only the line printed for it is kept, so
memory grows by about 1 KiB per file (its name and its line), not by the report
(docs/performance.md). Thousands of files are read in parts at once, on Linux, one per processor
the command may use (up to 8): the first here, each other in a forked child (``forked.py``); the
output is the same. A FIFO, a device or a bigger file is not waited for. Files that are not
readable reports (not JSON, another schema version, not a report at all, too large, not a regular
file, missing) are listed with the reason, and the others are still summarized.

Exit codes: 0 when every report passed and no file was unreadable; 1 when a report failed or a
file was unreadable; 2 on a usage error, or when no readable report was found at all; 15
(STDOUT_WRITE_FAILED, as for the check) when stdout is closed or refuses the result, a full
device (``commands/runner.py``).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..forked import in_parts, usable_cpus
from ..i18n import Translate
from ..report.codes import VERDICTS
from ..report.load import Loaded, Reason, exit_code_of, file_name, load, reason_of
from ..report.markup import escape
from ..report.markup import table as markdown_table
from ..report.redact import Redactor, without_user_names
from ..terminal import cell, line
from .runner import InterruptOnSignals, Parser, add_common_options, print_result, run_command
from .tables import md, md_code, table, table_lines

PROG = "kernodeck-diagnostic summarize"
EXIT_ALL_PASSED, EXIT_SOME_FAILED, EXIT_NOTHING_READ = 0, 1, 2
# The version of the layout of ``--format json``, its first key: raised when a key is renamed or
# removed, or changes meaning (a key added keeps it).
SUMMARIZE_VERSION = 1

# Worst first: the order of the counts per code, for every code a report can carry. The one
# place this order is defined.
SEVERITY = (
    # A wrong result is the most dangerous: the device computes, silently, the wrong numbers.
    "CHECK_FAILED",
    # No verdict at all: the check crashed or hung, nothing is known of the layers.
    "WORKER_FAILED", "TIMEOUT",
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
COLUMNS = ("report", "code", "exit", "stage", "python", "torch", "backend", "devices")
# Reading in parts (Summary.read): at most this many at once, each of at least this many files
# (below that, the time a part saves is not worth a process).
MAX_PARTS, FILES_PER_PART = 8, 1000


def main(argv: Sequence[str]) -> int:
    return run_command(PROG, argv, _parser, _act)


@dataclass(frozen=True)
class Found:
    """A file the arguments name and what it is shown as; or a folder that could not be listed
    (``reason``)."""

    path: str
    name: str
    reason: Reason | None = None


def collect(paths: Sequence[str], redactor: Redactor | None = None) -> list[Found]:
    """Every file the arguments name, in the order given (folders sorted), named as the module's
    docstring says. Nothing is read yet: ``Summary.read`` reads them."""
    found: list[tuple[str, Reason | None]] = []  # a file, or a folder that could not be listed
    for path in paths:
        if os.path.isdir(path):
            files, failed = _folder(path)
            found += [(file, None) for file in files] + failed
        else:
            found.append((path, None))
    names = _names([path for path, _ in found], _common_root(paths),
                   Redactor.for_this_machine() if redactor is None else redactor)
    return [Found(path, names[path], reason) for path, reason in found]


def row(loaded: Loaded) -> dict[str, Any]:
    """One report's line: the fields shown for it, as JSON output carries them."""
    return dict(zip(ROW_KEYS, _values(loaded)))


ROW_KEYS = ("file", "code", "exit_code", "stage", "python_version", "torch_version", "backend",
            "devices")


def _values(loaded: Loaded) -> tuple[Any, ...]:
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

    def __init__(self, keep: Callable[[Loaded], Any]) -> None:
        self.keep = keep
        self.rows: list[Any] = []
        self.by_code: Counter[str] = Counter()
        self.passed = 0
        self.unreadable: list[Loaded] = []

    def read(self, found: Iterable[Found]) -> Summary:
        """Load and judge each file, each real file once however it was named. Thousands of
        files are read in parts at once, one per processor this process may use, up to
        ``MAX_PARTS`` (``forked.in_parts``): the same result, sooner."""
        files = _once_each(found)
        # Decoded JSON is a tree, and what is kept holds no cycle either: reference counting
        # frees it all, and the cycle collector's passes over the growing rows would only cost
        # time (about 8 % of reading 20,000 reports). It is back as it was at the end.
        collecting = gc.isenabled()
        gc.disable()
        try:
            parts = min(usable_cpus(), MAX_PARTS, len(files) // FILES_PER_PART)
            for codes, kept, unreadable in in_parts(self._judge, files, parts):
                self.rows += kept
                self.by_code.update(codes)
                self.passed += sum(VERDICTS[code].passed for code in codes)
                self.unreadable += unreadable
        finally:
            if collecting:
                gc.enable()
        return self

    def _judge(self, files: Sequence[tuple[Found, int | None]]
               ) -> tuple[list[str], list[Any], list[Loaded]]:
        """The code of each readable report and what is kept of it, in order; the files that
        are not readable reports."""
        codes: list[str] = []
        kept: list[Any] = []
        unreadable: list[Loaded] = []
        for item, mode in files:
            loaded = (Loaded(item.name, reason=item.reason) if item.reason is not None
                      else load(item.path, item.name, mode=mode))
            if loaded.report is None:
                unreadable.append(loaded)
            else:
                codes.append(loaded.report["code"])
                kept.append(self.keep(loaded))
        return codes, kept, unreadable

    @property
    def files(self) -> int:
        return len(self.rows) + len(self.unreadable)

    def counts(self) -> list[tuple[str, int]]:
        """How many reports have each code, worst first (``SEVERITY``)."""
        return sorted(self.by_code.items(), key=lambda item: (RANK.get(item[0], -1), item[0]))

    def exit_code(self) -> int:
        if not self.rows:
            return EXIT_NOTHING_READ
        if self.unreadable or self.passed < len(self.rows):
            return EXIT_SOME_FAILED
        return EXIT_ALL_PASSED


def text_lines(summary: Summary, t: Translate) -> Iterator[str]:
    """The text output, line by line (``summary`` kept ``_cells``)."""
    if summary.rows:
        header = tuple(t(f"summarize.header.{column}") for column in COLUMNS)
        yield from table_lines([header, *summary.rows])
        yield from ("", t("summarize.counts"))
        yield from table([(code, str(count)) for code, count in summary.counts()], indent="  ")
    if summary.unreadable:
        yield from ("", t("summarize.unreadable", count=len(summary.unreadable)))
        yield from table([(item.name, item.why(t)) for item in summary.unreadable], indent="  ")
    yield from ("", _total(summary, t))


def markdown_lines(summary: Summary, t: Translate) -> Iterator[str]:
    """The markdown output, line by line (``summary`` kept ``_markdown_row``)."""
    yield from (f"**{md(_total(summary, t))}**", "")
    if summary.rows:
        header = tuple(md(t(f"summarize.header.{column}")) for column in COLUMNS)
        yield from (*markdown_table([header]), *summary.rows, "")
        yield from (md(t("summarize.counts")), "")
        yield from markdown_table([(md(t("summarize.header.code")),
                                    md(t("summarize.header.count"))),
                                   *((md_code(code), str(count))
                                     for code, count in summary.counts())])
        yield ""
    if summary.unreadable:
        yield from (md(t("summarize.unreadable", count=len(summary.unreadable))), "")
        yield from (f"- {_md_name(item.name, line_start=True)}: {md(item.why(t))}"
                    for item in summary.unreadable)


def json_lines(summary: Summary) -> Iterator[str]:
    """``--format json``, line by line: the same text as ``json.dumps(..., indent=2)`` of the
    whole document, without ever holding it (``summary`` kept ``_json_row``)."""
    yield "{"
    yield f'  "summarize_version": {SUMMARIZE_VERSION},'
    yield from _json_list("reports", summary.rows, last=False)
    yield from _json_list("counts", [_json_row({"code": code, "count": count})
                                     for code, count in summary.counts()], last=False)
    yield from _json_list("unreadable", [_json_row({"file": item.name, "reason": item.reason,
                                                    "detail": item.detail})
                                         for item in summary.unreadable], last=True)
    yield "}"


def _json_list(key: str, items: Sequence[str], last: bool) -> Iterator[str]:
    end = "" if last else ","
    if not items:
        yield f'  "{key}": []{end}'
        return
    yield f'  "{key}": ['
    for index, item in enumerate(items):
        yield item + ("," if index < len(items) - 1 else "")
    yield "  ]" + end


def _json_row(values: dict[str, Any]) -> str:
    """One object of a list of the JSON output, as json.dumps indents it there (two levels).

    An object of plain values is written here, each value by json's C encoder: with ``indent``,
    json.dumps runs its Python encoder, whose closures refer to each other, a cycle left for the
    cycle collector, which is off while the reports are read (``Summary.read``).
    """
    if not values or any(isinstance(value, (dict, list)) for value in values.values()):
        text = json.dumps(values, indent=2, ensure_ascii=False)  # a report's odd field
    else:
        text = "{\n" + ",\n".join(f"  {_PLAIN_JSON.encode(key)}: {_PLAIN_JSON.encode(value)}"
                                   for key, value in values.items()) + "\n}"
    return "\n".join("    " + part for part in text.split("\n"))


_PLAIN_JSON = json.JSONEncoder(ensure_ascii=False)


def _markdown_row(loaded: Loaded) -> str:
    cells = _cells(loaded)
    shown = (_md_name(loaded.name), md_code(cells[1]), *(md(value) for value in cells[2:]))
    return "| " + " | ".join(shown) + " |"  # a row of markup.table


def _keep(form: str) -> Callable[[Loaded], Any]:
    """What a format keeps of a report: the text's cells (aligned once all are read), the
    markdown's line, the JSON's object."""
    if form == "json":
        return lambda loaded: _json_row(row(loaded))
    return _markdown_row if form == "markdown" else _cells


def _parser(t: Translate) -> Parser:
    parser = Parser(translate=t, prog=PROG, description=t("summarize.help.description"),
                    epilog=t("summarize.help.epilog", order=", ".join(SEVERITY)))
    parser.add_argument("paths", nargs="+", metavar="PATH", help=t("summarize.help.paths"))
    add_common_options(parser, t)
    return parser


def _act(args: argparse.Namespace, t: Translate, _guard: InterruptOnSignals) -> int:
    found = collect(args.paths)
    if not found:
        line(sys.stderr, f"{PROG}: " + t("summarize.nothing_found"))
        return EXIT_NOTHING_READ
    summary = Summary(_keep(args.format)).read(found)
    if args.format == "json":
        lines = json_lines(summary)
    elif args.format == "markdown":
        lines = markdown_lines(summary, t)
    else:
        lines = text_lines(summary, t)
    _write_lines(lines)
    return summary.exit_code()


def _write_lines(lines: Iterable[str], chunk: int = 64 * 1024) -> None:
    """Write lines to stdout about ``chunk`` characters at a time, without the empty lines at
    either end: the text of the whole output is never held at once."""
    started, blanks, size = False, 0, 0
    batch: list[str] = []
    for text in lines:
        if not text:
            blanks += started  # an empty line counts once text follows it
            continue
        started = True
        batch += [""] * blanks + [text]
        size += blanks + len(text) + 1
        blanks = 0
        if size >= chunk:
            print_result("\n".join(batch) + "\n")
            batch, size = [], 0
    if batch:
        print_result("\n".join(batch) + "\n")


def _folder(top: str) -> tuple[list[str], list[tuple[str, Reason | None]]]:
    """Every *.json under a folder, sorted by its path there; and the subfolders that cannot be
    listed, with the reason, to be shown as unreadable rather than skipped in silence."""
    found: list[str] = []
    failed: list[tuple[str, Reason | None]] = []

    def on_error(error: OSError) -> None:
        failed.append((str(error.filename or top), reason_of(error)))

    for folder, subfolders, files in os.walk(top, onerror=on_error):
        subfolders.sort()
        found += [os.path.join(folder, name) for name in files if name.lower().endswith(".json")]
    # Every path os.walk gives starts with the folder and a separator: the rest is its path
    # there (what os.path.relpath gives, without its cost for each of thousands of files).
    start = len(os.path.join(top, ""))
    return sorted(found, key=lambda file: _slashed(file[start:])), failed


def _common_root(paths: Sequence[str]) -> str | None:
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
        return {path: cell(name) for path, name in shown.items()}
    return {path: cell(redactor.text(name)) for path, name in shown.items()}


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


def _md_name(name: str, line_start: bool = False) -> str:
    """A file's name in markdown: as inline code when it can be, else as escaped text."""
    shown = md_code(name)
    return shown if shown.startswith("`") else escape(name, line_start=line_start)


def _cells(item: Loaded) -> tuple[str, ...]:
    name, code, exit_status, *rest = _values(item)
    return (name, cell(code), cell(exit_status), *map(_dash, rest))


def _dash(value: Any) -> str:
    return "-" if value is None or value == "" else cell(value, 40)


def _total(summary: Summary, t: Translate) -> str:
    reports = len(summary.rows)
    return t("summarize.total", files=summary.files, reports=reports, passed=summary.passed,
             failed=reports - summary.passed, unreadable=len(summary.unreadable))

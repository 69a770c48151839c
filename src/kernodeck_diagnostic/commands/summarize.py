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
are read, up to 8 MiB each: a FIFO, a device or a bigger file is not waited for. Files that are not
readable reports (not JSON, another schema version, not a report at all, too large, not a regular
file, missing) are listed with the reason, and the others are still summarized.

Exit codes: 0 when every report passed and no file was unreadable; 1 when a report failed or a
file was unreadable; 2 on a usage error, or when no readable report was found at all.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections import Counter
from collections.abc import Sequence
from typing import Any

from ..i18n import Translate
from ..report.codes import VERDICTS
from ..report.load import Loaded, Reason, exit_code_of, field, file_name, load, reason_of
from ..report.markup import escape
from ..report.markup import table as markdown_table
from ..report.redact import Redactor, without_user_names
from ..terminal import cell, line, write
from .runner import InterruptOnSignals, Parser, add_common_options, run_command
from .tables import md, md_code, table

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
    # Passes last; a CPU pass says nothing about the GPU, so it comes before a GPU pass.
    "CPU_CHECK_PASSED", "GPU_CHECK_PASSED",
)
RANK = {name: rank for rank, name in enumerate(SEVERITY)}
COLUMNS = ("report", "code", "exit", "stage", "python", "torch", "backend", "devices")


def main(argv: Sequence[str]) -> int:
    return run_command(PROG, argv, _parser, _act)


def collect(paths: Sequence[str], redactor: Redactor | None = None) -> list[Loaded]:
    """Every file the arguments name, loaded and judged, in the order given (folders sorted),
    each real file once, named as the module's docstring says."""
    found: list[tuple[str, Reason | None]] = []  # a file, or a folder that could not be listed
    for path in paths:
        if os.path.isdir(path):
            files, failed = _folder(path)
            found += [(file, None) for file in files] + failed
        else:
            found.append((path, None))
    names = _names([path for path, _ in found], _common_root(paths),
                   Redactor.for_this_machine() if redactor is None else redactor)
    loaded: list[Loaded] = []
    seen: set[tuple[Any, ...]] = set()
    for path, reason in found:
        if reason is not None:
            loaded.append(Loaded(names[path], reason=reason))
            continue
        identity = _identity(path)
        if identity not in seen:
            seen.add(identity)
            loaded.append(load(path, names[path]))
    return loaded


def row(loaded: Loaded) -> dict[str, Any]:
    """One report's line: the fields shown for it, as JSON output carries them."""
    report = loaded.report or {}
    return {"file": loaded.name, "code": report.get("code"), "exit_code": exit_code_of(report),
            "stage": report.get("stage"), "python_version": field(report, "runtime.python_version"),
            "torch_version": field(report, "pytorch.version"),
            "backend": field(report, "pytorch.backend"),
            "devices": field(report, "pytorch.visible_device_count")}


def counts(reports: Sequence[dict[str, Any]]) -> list[tuple[str, int]]:
    """How many reports have each code, worst first (``SEVERITY``)."""
    counter = Counter(str(report["code"]) for report in reports)
    return sorted(counter.items(), key=lambda item: (RANK.get(item[0], -1), item[0]))


def exit_code(loaded: Sequence[Loaded]) -> int:
    reports = [item.report for item in loaded if item.report is not None]
    if not reports:
        return EXIT_NOTHING_READ
    if len(reports) < len(loaded) or not all(VERDICTS[r["code"]].passed for r in reports):
        return EXIT_SOME_FAILED
    return EXIT_ALL_PASSED


def render_text(loaded: Sequence[Loaded], t: Translate) -> str:
    reports = [item for item in loaded if item.report is not None]
    unreadable = [item for item in loaded if item.report is None]
    lines: list[str] = []
    if reports:
        header = tuple(t(f"summarize.header.{column}") for column in COLUMNS)
        lines += table([header, *(_cells(item) for item in reports)])
        lines += ["", t("summarize.counts")]
        lines += table([(code, str(count)) for code, count in
                        counts([item.report for item in reports if item.report])], indent="  ")
    if unreadable:
        lines += ["", t("summarize.unreadable", count=len(unreadable))]
        lines += table([(item.name, item.why(t)) for item in unreadable], indent="  ")
    lines += ["", _total(loaded, t)]
    return "\n".join(lines).lstrip("\n") + "\n"


def render_markdown(loaded: Sequence[Loaded], t: Translate) -> str:
    reports = [item for item in loaded if item.report is not None]
    unreadable = [item for item in loaded if item.report is None]
    lines = [f"**{md(_total(loaded, t))}**", ""]
    if reports:
        header = tuple(md(t(f"summarize.header.{column}")) for column in COLUMNS)
        body = [(_md_name(item.name), md_code(cells[1]), *(md(value) for value in cells[2:]))
                for item, cells in ((item, _cells(item)) for item in reports)]
        lines += [*markdown_table([header, *body]), ""]
        lines += [md(t("summarize.counts")), ""]
        lines += markdown_table([(md(t("summarize.header.code")), md(t("summarize.header.count"))),
                                 *((md_code(code), str(count)) for code, count in
                                   counts([item.report for item in reports if item.report]))])
        lines.append("")
    if unreadable:
        lines += [md(t("summarize.unreadable", count=len(unreadable))), ""]
        lines += [f"- {_md_name(item.name, line_start=True)}: {md(item.why(t))}"
                  for item in unreadable]
    return "\n".join(lines).rstrip("\n") + "\n"


def render_json(loaded: Sequence[Loaded]) -> dict[str, Any]:
    reports = [item.report for item in loaded if item.report is not None]
    return {"summarize_version": SUMMARIZE_VERSION,
            "reports": [row(item) for item in loaded if item.report is not None],
            "counts": [{"code": code, "count": count} for code, count in counts(reports)],
            "unreadable": [{"file": item.name, "reason": item.reason, "detail": item.detail}
                           for item in loaded if item.report is None]}


def _parser(t: Translate) -> Parser:
    parser = Parser(translate=t, prog=PROG, description=t("summarize.help.description"),
                    epilog=t("summarize.help.epilog", order=", ".join(SEVERITY)))
    parser.add_argument("paths", nargs="+", metavar="PATH", help=t("summarize.help.paths"))
    add_common_options(parser, t)
    return parser


def _act(args: argparse.Namespace, t: Translate, _guard: InterruptOnSignals) -> int:
    loaded = collect(args.paths)
    if not loaded:
        line(sys.stderr, f"{PROG}: " + t("summarize.nothing_found"))
        return EXIT_NOTHING_READ
    if args.format == "json":
        write(sys.stdout, json.dumps(render_json(loaded), indent=2, ensure_ascii=False) + "\n")
    elif args.format == "markdown":
        write(sys.stdout, render_markdown(loaded, t))
    else:
        write(sys.stdout, render_text(loaded, t))
    return exit_code(loaded)


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
    return sorted(found, key=lambda file: _slashed(os.path.relpath(file, top))), failed


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
    for path in paths:
        full = os.path.abspath(path)
        parts = _components(full)
        if deep and root is not None and _inside(full, root) and not _same(full, root):
            shown[path] = "/".join(without_user_names(parts)[len(_components(root)):])
            continue
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
    return {path: cell(redactor.text(name)) for path, name in shown.items()}


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


def _identity(path: str) -> tuple[Any, ...]:
    """What makes a file the same file, however it was named: its device and inode (links,
    a folder given twice), else its real path (a file that does not exist)."""
    try:
        info = os.stat(path)
    except OSError:
        return ("path", os.path.realpath(path))
    if info.st_ino:
        return ("file", info.st_dev, info.st_ino)
    return ("path", os.path.realpath(path))


def _md_name(name: str, line_start: bool = False) -> str:
    """A file's name in markdown: as inline code when it can be, else as escaped text."""
    shown = md_code(name)
    return shown if shown.startswith("`") else escape(name, line_start=line_start)


def _cells(item: Loaded) -> tuple[str, ...]:
    values = row(item)
    devices = values["devices"]
    return (item.name, cell(values["code"]), cell(values["exit_code"]),
            *(_dash(values[key]) for key in ("stage", "python_version", "torch_version",
                                             "backend")),
            _dash(devices))


def _dash(value: Any) -> str:
    return "-" if value is None or value == "" else cell(value, 40)


def _total(loaded: Sequence[Loaded], t: Translate) -> str:
    reports = [item.report for item in loaded if item.report is not None]
    passed = sum(1 for report in reports if VERDICTS[report["code"]].passed)
    return t("summarize.total", files=len(loaded), reports=len(reports), passed=passed,
             failed=len(reports) - passed, unreadable=len(loaded) - len(reports))

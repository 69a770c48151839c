"""``summarize`` of a fleet (``report/fleet.py``): more than ``fleet.SMALL`` files, stdin (a list
of files or JSON Lines), tar archives, ``--only failed``, or an export (``--format jsonl`` or
``csv``). Folders and files are read in parts at once (one per processor this process may use, up
to 8) unless the output is an export, which is written as the reports are read, in their order;
stdin and archives are read here, as a stream. The exit statuses are summarize's
(``commands/summarize.py``): the same judge, whatever the view.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

from ..forked import usable_cpus
from ..i18n import Translate
from ..package_data import TOOL_NAME
from ..ramp.rows import read_too, rows_of
from ..report.codes import CODES
from ..report.fleet import (
    MAX_PARTS,
    Namer,
    Reader,
    Tally,
    entries,
    is_tar,
    listed,
    read_entries,
    read_in_parts,
    read_json_lines,
    read_tar,
)
from ..report.fleet_metrics import summary_metrics
from ..report.fleet_render import (
    export_header,
    export_line,
    failed_lines,
    json_document,
    markdown_lines,
    text_lines,
)
from ..report.jobs import Job, as_part, jobs
from ..report.summary import RANK, Summary, common_root
from ..report.summary_render import attempt_cells, attempts_total
from ..report.tables import table_lines
from ..terminal import json_text, line
from .runner import print_result, save_metrics

EXIT_ALL_PASSED, EXIT_SOME_FAILED, EXIT_NOTHING_READ, EXIT_INCONCLUSIVE = (
    CODES[name].exit_code for name in ("SUMMARY_ALL_PASSED", "SUMMARY_SOME_FAILED",
                                       "SUMMARY_NOTHING_READ", "SUMMARY_INCONCLUSIVE"))

Run = Callable[..., list[Any]]


def fleet_main(args: argparse.Namespace, t: Translate, run: Run) -> int:
    paths: Sequence[str] = args.paths
    files = [path for path in paths if path != "-" and not is_tar(path)]
    namer = Namer(common_root([path for path in paths if path != "-"]) if len(paths) > (
        "-" in paths) else None)
    form = args.format
    export = form in ("jsonl", "csv")
    writer = _Lines()
    header = export_header(form)
    if header is not None:
        writer.add(header)
    only_failed = args.only == "failed"
    if files and not export:
        tally = read_in_parts(files, namer, max(1, min(usable_cpus(), MAX_PARTS)),
                              only_failed=only_failed, list_unreadable=args.list_unreadable,
                              also=read_too, other=rows_of, run=run)
    else:
        tally = Tally(list_unreadable=args.list_unreadable)
    out = (lambda values: writer.add(export_line(values, form))) if export else None
    _read_here(Reader(tally, only_failed, out=out, other=rows_of), paths,
               files if export else [], namer)
    found = jobs([member for _, member in tally.members], RANK)
    if args.part:
        found = as_part(found)
    if export:
        writer.flush()
    else:
        _write(tally, found, args, t, writer)
    status = _exit_status(tally, found)
    if args.prometheus is not None and not save_metrics(args.prometheus, summary_metrics(
            tally.by_code, tally.unreadable, found, tally.groups), t):
        return EXIT_SOME_FAILED if status != EXIT_NOTHING_READ else status
    if not tally.files and not tally.attempts:
        line(sys.stderr, f"{TOOL_NAME} summarize: " + t("summarize.nothing_found"))
    return status


def _read_here(reader: Reader, paths: Sequence[str], files: Sequence[str],
               namer: Callable[[str], str]) -> None:
    """What is read in this process, as a stream: the folders and files of an export, the tar
    archives, stdin (a list of files, or JSON Lines when its first byte is ``{``)."""
    seen: set[tuple[int, int]] = set()
    if files:
        read_entries(reader, entries(files, read_too), namer, seen=seen)
    order = reader.tally.files
    for path in paths:
        if is_tar(path) and path != "-":
            order = read_tar(reader, path, namer(path), order)
    if "-" in paths:
        first = sys.stdin.buffer.read(1 << 16)
        if first.lstrip()[:1] == b"{":
            read_json_lines(reader, sys.stdin.buffer, first)
        else:
            read_entries(reader, listed(sys.stdin.buffer, first), namer, seen=seen)


def _write(tally: Tally, found: Sequence[Job], args: argparse.Namespace, t: Translate,
           writer: _Lines) -> None:
    if args.only == "failed":
        for text in failed_lines(tally, args.format):
            writer.add(json_text(text) if args.format == "json" else text)
    elif args.format == "json":
        import json
        writer.add(json_text(json.dumps(json_document(tally, found), indent=2,
                                        ensure_ascii=False)))
    else:
        lines = markdown_lines(tally, found, t) if args.format == "markdown" \
            else text_lines(tally, found, t, args.list_unreadable)
        for text in lines:
            writer.add(text)
        if tally.attempts:
            summary = Summary(lambda loaded: None)
            summary.attempts = [item for _, item in tally.attempts]
            writer.add("")
            writer.add(t("summarize.attempts"))
            from ..report.summary import ATTEMPT_COLUMNS
            header = tuple(t(column) for column in ATTEMPT_COLUMNS)
            for text in table_lines([header, *(attempt_cells(item)
                                               for item in summary.attempts)]):
                writer.add(text)
            writer.add(attempts_total(summary, t))
    writer.flush()


def _exit_status(tally: Tally, found: Sequence[Job]) -> int:
    """As ``summarize._exit_status`` judges: the same rules, read from the tally."""
    attempts = [item for _, item in tally.attempts]
    counted = [item for item in attempts if item["counted"] and not item["passed"]]
    failed_attempts = sum(1 for item in counted if not item.get("inconclusive"))
    if not tally.reports and not attempts:
        return EXIT_NOTHING_READ
    if tally.unreadable or tally.failed or failed_attempts \
            or any(job.status not in ("passed", "partial") for job in found):
        return EXIT_SOME_FAILED
    if len(counted) > failed_attempts or any(job.status == "partial" for job in found):
        return EXIT_INCONCLUSIVE
    return EXIT_ALL_PASSED


class _Lines:
    """Lines written to stdout about 64 KiB at a time, never all held."""

    def __init__(self) -> None:
        self.batch: list[str] = []
        self.size = 0
        self.started = False

    def add(self, text: str) -> None:
        if not text and not self.started:
            return  # no empty line before the first
        self.started = True
        self.batch.append(text)
        self.size += len(text) + 1
        if self.size >= 1 << 16:
            self.flush()

    def flush(self) -> None:
        if self.batch:
            print_result("\n".join(self.batch) + "\n")
        self.batch, self.size = [], 0


__all__ = ["fleet_main", "save_metrics", "summary_metrics"]

"""``kernodeck-diagnostic summarize PATH...``: many reports (say, one per machine) at a glance.

    $ kernodeck-diagnostic summarize reports/
    report        code              exit  stage    python  torch        backend  devices
    node-1.json   GPU_CHECK_PASSED  0     compute  3.11.7  2.7.0+cu128  cuda     1
    node-2.json   OUT_OF_MEMORY     9     compute  3.11.7  2.7.0+cu128  cuda     1

    counts per code, worst first
      OUT_OF_MEMORY     1
      GPU_CHECK_PASSED  1

    unreadable: 1 file(s), 1 not a report (--list-unreadable lists them)

    3 file(s): 2 report(s), 1 passed, 1 failed, 1 unreadable

A PATH is a report file or a folder, searched recursively for ``*.json`` (in sorted order). How a
file is shown (never by the machine's folders above the arguments, never absolute, redacted), and
how it is read (once however it is named, only a regular file of up to 8 MiB, keeping only the
line printed for it): ``report/summary.py``; the outputs: ``report/summary_render.py``. Thousands
of files are read in parts at once, on Linux, one per processor the command may use (up to 8):
the first here, each other in a forked child (``forked.py``); the output is the same. Files that
are not readable reports (not JSON, another schema version, not a report at all, too large, not a
regular file, missing) are one line, their count and kinds (each listed with its reason with
``--list-unreadable``; always in JSON), and the others are still summarized. Trial
attempts (``attempt.json``, or the ``events.jsonl`` a killed attempt left) and ramps
(``ramp.json``, each attempt with its trial folder) get a second table, across attempts: status,
first error stage, contracts, peak memory, last started stage (``ramp/rows.py``). Each attempt
is judged by the one judge (``trial/judge.py``): a failed attempt counts as a failed report (a
stage failure the program caught included), one that never ended without a failure as
inconclusive. A ramp counts once, by what its attempts measured (``ramp/record.py``'s
verdict): nothing passed, no single limit or flaky is a failure; a ramp left running, or one
that measured nothing, inconclusive; its attempts are shown, not counted.

The reports of a ``--distributed`` job come first, grouped by the job's identity: the job's
verdict (passed, failed, or incomplete when a rank never reported), then each rank's, from its
own report or from rank 0's (``report/jobs.py``); then each ``--all-devices`` report's devices
and copies, peer access nothing could say as unknown and the copies never tried named
(``report/devices.py``).

Past ``fleet.SMALL`` (40) files, or for stdin (``-``: a list of files, or JSON Lines), a tar
archive, ``--only failed``, ``--format jsonl|csv`` or ``--prometheus``, the fleet view instead
(``commands/fleet_summary.py``, ``report/fleet.py``): a screenful whatever the count of reports,
nothing of a passing report kept past its counts. ``--part``: the reports are one part of a
fleet (``xargs``): a job whose ranks are not all among them is ``partial`` (33), not incomplete.

Exit statuses (the codes table's ``SUMMARY_*``): 0 when every report passed, every job was whole
and no file was unreadable; 22 when a report failed, a job is incomplete (a rank never reported:
no evidence, no pass), an attempt or a ramp failed, or a file was unreadable; 23 when no
readable report was found at all; 33 when nothing failed but an attempt or a ramp was
inconclusive (no evidence of a pass); 2 on a usage error; 15 (STDOUT_WRITE_FAILED, as for the
check) when stdout is closed or refuses the result, a full device (``commands/runner.py``); 1 a
bug of the tool.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable, Sequence

from ..forked import in_parts, usable_cpus
from ..i18n import Translate
from ..ramp.rows import read_too, rows_of
from ..report.codes import CODES
from ..report.fleet import SMALL, entries, is_tar
from ..report.summary import SEVERITY, Files, Judged, Summary, collect
from ..report.summary_render import json_lines, keep, markdown_lines, text_lines
from ..terminal import json_text, line
from .fleet_summary import fleet_main
from .runner import (
    InterruptOnSignals,
    Parser,
    UsageError,
    add_common_options,
    print_result,
    run_command,
    statuses_epilog,
)

PROG = "kernodeck-diagnostic summarize"
EXIT_ALL_PASSED, EXIT_SOME_FAILED, EXIT_NOTHING_READ, EXIT_INCONCLUSIVE = (
    CODES[name].exit_code for name in ("SUMMARY_ALL_PASSED", "SUMMARY_SOME_FAILED",
                                       "SUMMARY_NOTHING_READ", "SUMMARY_INCONCLUSIVE"))
# Reading in parts (_in_parts): at most this many at once, each of at least this many files
# (below that, the time a part saves is not worth a process).
MAX_PARTS, FILES_PER_PART = 8, 1000


def main(argv: Sequence[str]) -> int:
    return run_command(PROG, argv, _parser, _act)


def _parser(t: Translate) -> Parser:
    parser = Parser(translate=t, prog=PROG, description=t("summarize.help.description"),
                    epilog=t("summarize.help.epilog", order=", ".join(SEVERITY)) + "\n\n"
                    + statuses_epilog("summarize", t))
    parser.add_argument("paths", nargs="+", metavar="PATH", help=t("summarize.help.paths"))
    parser.add_argument("--list-unreadable", action="store_true",
                        help=t("summarize.help.list_unreadable"))
    parser.add_argument("--only", choices=("failed",), help=t("summarize.help.only"))
    parser.add_argument("--part", action="store_true", help=t("summarize.help.part"))
    parser.add_argument("--prometheus", metavar="FILE", help=t("summarize.help.prometheus"))
    # The exports: one line per report, read as a stream (report/fleet_render.py).
    add_common_options(parser, t, exports=("jsonl", "csv"))
    return parser


def _act(args: argparse.Namespace, t: Translate, _guard: InterruptOnSignals) -> int:
    if args.prometheus is not None and not args.prometheus.endswith(".prom"):
        raise UsageError(t("summarize.prometheus_suffix"))
    if args.paths.count("-") > 1:
        raise UsageError(t("summarize.stdin_twice"))
    if not _fleet_needed(args):
        return _small(args, t)
    return fleet_main(args, t, in_parts)


def _fleet_needed(args: argparse.Namespace) -> bool:
    """Whether the files are a fleet (report/fleet.py): more than ``SMALL`` of them, a stream
    (stdin, a tar archive), an export, ``--only failed`` or ``--prometheus`` (its groups of
    failing reports are the fleet's); else every report's line, as ever."""
    if args.only or args.prometheus or args.format in ("jsonl", "csv") or "-" in args.paths \
            or any(is_tar(path) for path in args.paths):
        return True
    files = 0
    for count, _, _ in entries(args.paths, read_too):  # a folder's files come as one batch
        files += count
        if files > SMALL:
            return True
    return False


def _small(args: argparse.Namespace, t: Translate) -> int:
    found = collect(args.paths, also=read_too)
    if not found:
        line(sys.stderr, f"{PROG}: " + t("summarize.nothing_found"))
        return EXIT_NOTHING_READ
    summary = Summary(keep(args.format), rows_of, part=args.part).read(found, _in_parts)
    lines: Iterable[str]
    if args.format == "json":
        lines = map(json_text, json_lines(summary))  # a report's text: no raw control
    elif args.format == "markdown":
        lines = markdown_lines(summary, t, args.list_unreadable)
    else:
        lines = text_lines(summary, t, args.list_unreadable)
    _write_lines(lines)
    return _exit_status(summary)


def _in_parts(work: Callable[[Files], Judged], files: Files) -> list[Judged]:
    """The files judged in parts at once, one per processor this process may use, up to
    ``MAX_PARTS`` (``forked.in_parts``): the same result, sooner."""
    return in_parts(work, files, min(usable_cpus(), MAX_PARTS, len(files) // FILES_PER_PART))


def _exit_status(summary: Summary) -> int:
    if not summary.rows and not summary.attempts:
        return EXIT_NOTHING_READ
    jobs = summary.jobs()
    if summary.unreadable or summary.passed < len(summary.rows) or summary.attempts_failed \
            or any(job.status not in ("passed", "partial") for job in jobs):
        return EXIT_SOME_FAILED
    if summary.attempts_inconclusive or any(job.status == "partial" for job in jobs):
        return EXIT_INCONCLUSIVE
    return EXIT_ALL_PASSED


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


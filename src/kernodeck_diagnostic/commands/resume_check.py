"""``kernodeck-diagnostic resume-check``: stop the application cleanly mid-run, run it again, and
verify that the outputs already written were neither lost nor counted twice.

    $ kernodeck-diagnostic resume-check --ledger out/results.jsonl --stop-after-records 20 \\
          -- python app.py

The application writes its outputs to the ledger (``OutputLedger``, ``ledger.py``: one JSON line
per record, fsynced) and skips the ids already there when it starts. The command runs it (no
shell) until the ledger holds N complete records (``--stop-after-records``) or S seconds have
passed (``--stop-after``), stops it as Ctrl-C would (SIGINT to its process group; SIGTERM after
``--grace`` seconds; then SIGKILL), runs it again to its end, and reads the ledger: every expected
id exactly once, no half record. The expected ids come from ``--expect-ids FILE`` (one per line),
else from the ledger's header. Each run is bounded by ``--timeout``.

Exit codes: 0 when nothing is lost, duplicated or half written, and the application was really
stopped and then finished; 1 otherwise (what is wrong is named); 2 on a usage error (the ledger
must not exist yet: the check starts from nothing); 15 when stdout is closed or refuses the
verdict (a full device); 130/143/129 when interrupted.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..i18n import Translate
from ..ledger import LedgerContents, natural_order, read_ledger
from ..report.load import read_bounded
from ..report.markup import escape
from ..report.redact import Redactor, argument_secrets
from ..safe_files import Folder, UnsafePath, check_file
from ..supervision.application import GRACE_S, Ending, run_application
from ..supervision.captures import last_stderr_line
from ..terminal import cell, line, one_line
from ..untrusted_json import MAX_LINE_BYTES, NotARegularFile, open_regular
from .ramp import split_command
from .runner import (
    InterruptOnSignals,
    Parser,
    UsageError,
    add_common_options,
    print_result,
    run_command,
)

PROG = "kernodeck-diagnostic resume-check"
EXIT_INTACT, EXIT_NOT_INTACT = 0, 1
DEFAULT_TIMEOUT_S = 3600.0
RESUME_CHECK_VERSION = 1  # the layout of --format json, its first key
MAX_NAMED_IDS = 50  # ids named on the terminal per kind; JSON output has them all
MAX_EXPECTED_IDS_BYTES = 64 * 2**20  # --expect-ids: millions of ids, never a device's stream


@dataclass
class Verdict:
    """What the two runs and the ledger showed."""

    stopped: bool  # the first run was stopped (not finished before the stop condition)
    first_exit: int | None
    second_exit: int | None
    second_timed_out: bool
    records_at_stop: int
    expected: int | None  # None: no expected ids known
    lost: list[str] = field(default_factory=list)
    duplicated: dict[str, int] = field(default_factory=dict)
    unexpected: list[str] = field(default_factory=list)
    half_records: list[int] = field(default_factory=list)
    error: str | None = None  # the second run's last stderr line when it failed

    @property
    def intact(self) -> bool:
        return (self.stopped and self.second_exit == 0 and self.expected is not None
                and not self.lost and not self.duplicated and not self.half_records)

    def as_json(self) -> dict[str, Any]:
        return {"resume_check_version": RESUME_CHECK_VERSION, "intact": self.intact,
                "stopped": self.stopped, "first_run_exit": self.first_exit,
                "second_run_exit": self.second_exit, "second_run_timed_out": self.second_timed_out,
                "records_at_stop": self.records_at_stop, "expected": self.expected,
                "lost": self.lost,
                "duplicated": [{"id": key, "count": count}
                               for key, count in self.duplicated.items()],
                "unexpected": self.unexpected, "half_records": self.half_records}


def main(argv: Sequence[str]) -> int:
    options, command = split_command(argv)
    return run_command(PROG, options, _parser,
                       lambda args, t, guard: _act(args, command, t, guard))


def _parser(t: Translate) -> Parser:
    parser = Parser(translate=t, prog=PROG, description=t("resume.help.description"),
                    usage=f"{PROG} --ledger FILE (--stop-after-records N | --stop-after SECONDS)"
                          " [options] -- COMMAND...")
    parser.add_argument("--ledger", required=True, metavar="FILE", help=t("resume.help.ledger"))
    when = parser.add_mutually_exclusive_group(required=True)
    when.add_argument("--stop-after-records", type=int, metavar="N",
                      help=t("resume.help.stop_after_records"))
    when.add_argument("--stop-after", type=float, metavar="SECONDS",
                      help=t("resume.help.stop_after"))
    parser.add_argument("--expect-ids", metavar="FILE", help=t("resume.help.expect_ids"))
    parser.add_argument("--grace", type=float, default=GRACE_S, metavar="SECONDS",
                        help=t("resume.help.grace"))
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                        help=t("resume.help.timeout"))
    add_common_options(parser, t)
    return parser


def _act(args: argparse.Namespace, command: list[str], t: Translate,
         _guard: InterruptOnSignals) -> int:
    if not command:
        raise UsageError(t("ramp.no_command"), typed=False)
    for name, value in (("--stop-after-records", args.stop_after_records),
                        ("--stop-after", args.stop_after), ("--grace", args.grace),
                        ("--timeout", args.timeout)):
        if value is not None and not 0 < value < float("inf"):
            raise UsageError(t("resume.not_positive", option=name), typed=False)
    _check_ledger(args.ledger, t)
    expected = _expected_ids(args.expect_ids, t)
    counter = _RecordCounter(args.ledger)
    at_stop: list[int] = []  # the ledger's records when the stop was decided

    def stop_when(elapsed: float) -> bool:
        records = counter.count()
        if args.stop_after is not None:
            stop = bool(elapsed >= args.stop_after)
        else:
            stop = records >= int(args.stop_after_records)
        if stop:
            at_stop.append(records)
        return stop

    with tempfile.TemporaryDirectory(prefix="kd-resume-") as captures, \
            Folder.made(captures) as capture_folder:
        first = _run(command, capture_folder, "first", args, stop_when)
        records_at_stop = at_stop[0] if at_stop else counter.count()
        line(sys.stderr, t("resume.first_run", records=records_at_stop) if first.stopped
             else t("resume.not_stopped", exit=first.returncode))
        second = _run(command, capture_folder, "second", args, None)
        error = (last_stderr_line(os.path.join(captures, "second.stderr"))
                 if second.returncode != 0 else None)
    if error is not None:  # the application's words: a URL's password, a secret option's value
        error = Redactor.for_this_machine(secrets=argument_secrets(command)).text(error)
    try:
        contents = read_ledger(args.ledger) if os.path.exists(args.ledger) else LedgerContents()
    except NotARegularFile:  # put there while the application ran: never waited on
        raise UsageError(t("resume.unsafe_ledger", reason=t("files.unsafe.not_file")),
                         typed=False) from None
    verdict = _verdict(first, second, records_at_stop, contents, expected)
    verdict.error = error
    if args.format == "json":
        print_result(json.dumps(verdict.as_json(), indent=2, ensure_ascii=False) + "\n")
    else:
        print_result(render_text(verdict, t, markdown=args.format == "markdown"))
    return EXIT_INTACT if verdict.intact else EXIT_NOT_INTACT


def _check_ledger(path: str, t: Translate) -> None:
    """The ledger must not exist yet (or be empty), and nothing at its name may be a link or
    another user's file: the application's ``OutputLedger`` would refuse it after the first
    run started, and an older one would have written through it."""
    folder_path, name = os.path.split(path)
    try:
        with Folder.open(folder_path or ".") as folder:
            found = folder.lstat(name) if name else None
            if found is not None:
                check_file(found, folder.child(name))
    except UnsafePath as exc:
        raise UsageError(t("resume.unsafe_ledger", reason=t(f"files.unsafe.{exc.reason}")),
                         typed=False) from None
    except OSError:  # no such folder...: the application says so, and the verdict
        return
    if found is not None and found.st_size > 0:
        raise UsageError(t("resume.ledger_exists"), typed=False)


def _run(command: list[str], captures: Folder, name: str, args: argparse.Namespace,
         stop_when: Any) -> Ending:
    """One run of the application, its output kept aside (the terminal stays the verdict's)."""
    return run_application(command, env=os.environ, captures=captures,
                           stdout_name=f"{name}.stdout", stderr_name=f"{name}.stderr",
                           timeout_s=args.timeout, grace_s=args.grace, stop_when=stop_when)


def _expected_ids(path: str | None, t: Translate) -> list[str] | None:
    if path is None:
        return None
    try:  # a regular file, bounded: a FIFO is not waited on, /dev/zero not read forever
        data = read_bounded(path, limit=MAX_EXPECTED_IDS_BYTES)
        if isinstance(data, str):
            raise UsageError(t("resume.bad_expect_ids", reason=t(
                f"reports.reason.{data}", limit=f"{MAX_EXPECTED_IDS_BYTES // 2**20} MiB")),
                typed=False)
        return [entry.strip() for entry in data.decode("utf-8-sig").splitlines()
                if entry.strip()]
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or type(exc).__name__
        raise UsageError(t("resume.bad_expect_ids", reason=str(reason).lower()),
                         typed=False) from None


def _verdict(first: Ending, second: Ending, records_at_stop: int, contents: LedgerContents,
             expected: list[str] | None) -> Verdict:
    wanted = expected if expected is not None else contents.expected_ids
    verdict = Verdict(stopped=first.stopped and first.returncode is not None,
                      first_exit=first.returncode, second_exit=second.returncode,
                      second_timed_out=second.timed_out, records_at_stop=records_at_stop,
                      expected=None if wanted is None else len(set(wanted)))
    verdict.duplicated = {key: contents.counts[key] for key in contents.duplicated}
    verdict.half_records = contents.half_records
    if wanted is not None:
        verdict.lost = natural_order(set(wanted) - set(contents.counts))
        verdict.unexpected = natural_order(set(contents.counts) - set(wanted))
    return verdict


def render_text(verdict: Verdict, t: Translate, markdown: bool = False) -> str:
    """The verdict, then each problem with the ids it concerns."""
    bullet = "- " if markdown else "  "
    shown = escape if markdown else one_line  # the application's words, its ids: never raw
    lines = [t("resume.intact" if verdict.intact else "resume.not_intact")]
    if not verdict.stopped:
        lines.append(bullet + t("resume.never_stopped"))
    if verdict.second_exit != 0:
        lines.append(bullet + t("resume.second_failed", exit=verdict.second_exit,
                                error=shown(verdict.error or "-")))
    if verdict.expected is None:
        lines.append(bullet + t("resume.no_expected_ids"))
    else:
        lines.append(bullet + t("resume.expected", count=verdict.expected))
    for key, ids in (("resume.lost", verdict.lost),
                     ("resume.duplicated", [f"{i} (x{n})" for i, n in verdict.duplicated.items()]),
                     ("resume.unexpected", verdict.unexpected)):
        if ids:
            lines.append(bullet + t(key, count=len(ids), ids=_named(ids, shown)))
    if verdict.half_records:
        lines.append(bullet + t("resume.half_records", count=len(verdict.half_records),
                                lines=_named([str(n) for n in verdict.half_records], shown)))
    return "\n".join(lines) + "\n"


def _named(ids: list[str], show: Callable[[str], str] = one_line) -> str:
    shown = ", ".join(show(cell(i, 60)) for i in ids[:MAX_NAMED_IDS])
    return shown + (f", … (+{len(ids) - MAX_NAMED_IDS})" if len(ids) > MAX_NAMED_IDS else "")


class _RecordCounter:
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

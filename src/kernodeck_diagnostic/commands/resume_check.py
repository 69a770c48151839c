"""``kernodeck-diagnostic resume-check``: stop the application mid-run, run it again, and verify
that the outputs already written were neither lost, redone nor counted twice; or verify a ledger
left by a job that was stopped for real, without running anything.

    $ kernodeck-diagnostic resume-check --ledger out/results.jsonl --stop-after-records 20 \\
          -- python app.py
    $ kernodeck-diagnostic resume-check --verify-ledger out/results.jsonl --expect-ids ids.txt

This module parses the command line, refuses what cannot work before anything runs, and prints;
the plan and the runs, the ledger's reading and the verdict are the ``resume`` package's (the
verdict a pure function of what was observed: ``resume/verdict.py``, with the order of the
statuses). 2 is a usage error (the ledger must not exist yet: the check starts from nothing); 12
a ledger whose folder does not exist or cannot be written, refused before anything runs (as the
check's ``--output``); 15 a stdout that refuses the verdict; 130/143/129 an interrupt.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Sequence

from ..i18n import Translate
from ..ledger import LedgerContents, read_ledger
from ..report.codes import EXIT_OUTPUT
from ..report.load import read_bounded, reason_text
from ..report.writer import OutputError, preflight
from ..resume import record_check
from ..resume.observe import check_records, judge_ids
from ..resume.render import render_text
from ..resume.runs import DEFAULT_STOP_SIGNAL, Plan, private_folder, run_twice
from ..resume.verdict import Observation, as_json, judge
from ..safe_files import Folder, UnsafePath, check_file
from ..supervision.application import GRACE_S, STOP_SIGNALS
from ..terminal import json_text, line
from ..untrusted_json import NotARegularFile, open_regular
from .ramp import split_command
from .runner import (
    InterruptOnSignals,
    Parser,
    UsageError,
    add_common_options,
    print_result,
    run_command,
    statuses_epilog,
)

PROG = "kernodeck-diagnostic resume-check"
COMMAND = "resume-check"
DEFAULT_TIMEOUT_S = 3600.0
RECORD_CHECK = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")
MAX_EXPECTED_IDS_BYTES = 64 * 2**20  # --expect-ids: millions of ids, never a device's stream


def main(argv: Sequence[str]) -> int:
    options, command = split_command(argv)
    return run_command(PROG, options, _parser,
                       lambda args, t, guard: _act(args, command, t, guard))


def _parser(t: Translate) -> Parser:
    parser = Parser(translate=t, prog=PROG, description=t("resume.help.description"),
                    usage=f"{PROG} --ledger FILE (--stop-after-records N | --stop-after SECONDS)"
                          f" [options] -- COMMAND...\n       {PROG} --verify-ledger FILE "
                          "[--expect-ids FILE] [--record-check MODULE:FUNCTION]",
                    epilog=statuses_epilog(COMMAND, t, output=True))
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--ledger", metavar="FILE", help=t("resume.help.ledger"))
    which.add_argument("--verify-ledger", metavar="FILE", help=t("resume.help.verify_ledger"))
    when = parser.add_mutually_exclusive_group()
    when.add_argument("--stop-after-records", type=int, metavar="N",
                      help=t("resume.help.stop_after_records"))
    when.add_argument("--stop-after", type=float, metavar="SECONDS",
                      help=t("resume.help.stop_after"))
    parser.add_argument("--stop-signal", choices=STOP_SIGNALS, default=None,
                        help=t("resume.help.stop_signal"))
    parser.add_argument("--expect-ids", metavar="FILE", help=t("resume.help.expect_ids"))
    parser.add_argument("--record-check", metavar="MODULE:FUNCTION",
                        help=t("resume.help.record_check"))
    parser.add_argument("--grace", type=float, default=None, metavar="SECONDS",
                        help=t("resume.help.grace"))
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                        help=t("resume.help.timeout"))
    add_common_options(parser, t)
    return parser


def _validate(args: argparse.Namespace, command: list[str], t: Translate) -> None:
    if args.verify_ledger is not None:
        for name, value in (("--stop-after-records", args.stop_after_records),
                            ("--stop-after", args.stop_after), ("--grace", args.grace),
                            ("--stop-signal", args.stop_signal)):
            if value is not None:
                raise UsageError(t("resume.run_only", option=name), typed=False)
        if command:
            raise UsageError(t("resume.verify_no_command"), typed=False)
    else:
        if not command:
            raise UsageError(t("ramp.no_command"), typed=False)
        if args.stop_after_records is None and args.stop_after is None:
            raise UsageError(t("resume.no_stop"), typed=False)
    for name, value in (("--stop-after-records", args.stop_after_records),
                        ("--stop-after", args.stop_after), ("--grace", args.grace),
                        ("--timeout", args.timeout)):
        if value is not None and not 0 < value < float("inf"):
            raise UsageError(t("resume.not_positive", option=name), typed=False)
    if args.record_check is not None and not RECORD_CHECK.fullmatch(args.record_check):
        raise UsageError(t("resume.bad_record_check_spec", spec=args.record_check))


def _act(args: argparse.Namespace, command: list[str], t: Translate,
         _guard: InterruptOnSignals) -> int:
    _validate(args, command, t)
    expected = _expected_ids(args.expect_ids, t)
    with private_folder() as folder:
        if args.verify_ledger is not None:
            path = args.verify_ledger
            _check_readable(path, t)
            _probe(args.record_check, folder, args.timeout, t)
            seen = Observation(mode="verify")
        else:
            path = args.ledger
            refused = _check_ledger(path, t)
            if refused is not None:
                line(sys.stderr, f"{PROG}: " + t("resume.ledger_preflight", reason=refused,
                                                  exit=EXIT_OUTPUT))
                return EXIT_OUTPUT
            _probe(args.record_check, folder, args.timeout, t)
            plan = Plan(command=command, ledger=path, stop_after_records=args.stop_after_records,
                        stop_after_s=args.stop_after,
                        stop_signal=args.stop_signal or DEFAULT_STOP_SIGNAL,
                        grace_s=GRACE_S if args.grace is None else args.grace,
                        timeout_s=args.timeout, expected=expected)
            try:
                seen = run_twice(plan, folder, lambda seen: _progress(seen, t)).seen
                _judge_ledger(seen, path, expected, args, folder)
            except NotARegularFile:  # put at the ledger's name while the application ran
                raise UsageError(t("resume.unsafe_ledger", reason=t("files.unsafe.not_file")),
                                 typed=False) from None
        if seen.mode == "verify":
            _judge_ledger(seen, path, expected, args, folder)
    judgement = judge(seen)
    if args.format == "json":
        print_result(json_text(json.dumps(as_json(seen, judgement), indent=2,
                                          ensure_ascii=False)) + "\n")
    else:
        print_result(render_text(seen, judgement, t, markdown=args.format == "markdown"))
    return judgement.code.exit_code


def _progress(seen: Observation, t: Translate) -> None:
    line(sys.stderr, t("resume.first_run", records=seen.records_at_stop,
                       remaining="?" if seen.remaining_at_stop is None
                       else seen.remaining_at_stop) if seen.stopped
         else t("resume.not_stopped", exit=seen.first_exit))


def _judge_ledger(seen: Observation, path: str, expected: list[str] | None,
                  args: argparse.Namespace, folder: Folder) -> None:
    """The ledger's ids and lines, then each record held to its rules and the user's check."""
    try:
        contents = read_ledger(path)
    except FileNotFoundError:  # the program never made it
        contents = LedgerContents()
    judge_ids(seen, contents, expected)
    bad: list[dict[str, object]] = []
    checked = None
    if contents.counts or contents.vector_dim is not None:
        found, checked = check_records(path, contents)
        bad += found
    if args.record_check is not None:
        seen.record_check = True
        result = record_check.check(args.record_check, path, folder, args.timeout)
        seen.record_check_error = result.error
        bad += result.failures
        checked = result.count if checked is None else max(checked, result.count)
    seen.records_checked = checked
    seen.bad_records = sorted(bad, key=lambda item: (int(str(item["line"])),
                                                     str(item["problem"])))


def _probe(spec: str | None, folder: Folder, timeout_s: float, t: Translate) -> None:
    """The record check can be imported: said before anything runs, else a usage error."""
    if spec is None:
        return
    try:
        record_check.probe(spec, folder, timeout_s)
    except record_check.CannotImport as exc:
        raise UsageError(t("resume.bad_record_check", spec=spec, reason=str(exc))) from None


def _check_ledger(path: str, t: Translate) -> str | None:
    """The ledger must not exist yet (or be empty), and nothing at its name may be a link or
    another user's file: the application's ``OutputLedger`` would refuse it after the first
    run started, and an older one would have written through it. A folder that is missing or
    cannot be written: the reason (the command ends as the check's ``--output`` does)."""
    folder_path, name = os.path.split(path)
    try:
        with Folder.open(folder_path or ".") as folder:
            found = folder.lstat(name) if name else None
            if found is not None:
                check_file(found, folder.child(name))
    except UnsafePath as exc:
        raise UsageError(t("resume.unsafe_ledger", reason=t(exc.key)),
                         typed=False) from None
    except OSError:
        found = None
    if found is None:
        try:
            preflight(path)
        except OutputError as exc:
            return exc.explain(t)
        return None
    if found.st_size > 0:
        raise UsageError(t("resume.ledger_exists"), typed=False)
    return None


def _check_readable(path: str, t: Translate) -> None:
    """The ledger to verify is a regular file that can be read (a FIFO would block a read)."""
    try:
        fd = open_regular(path)
    except NotARegularFile:
        raise UsageError(t("resume.bad_verify_ledger", reason=t("files.unsafe.not_file")),
                         typed=False) from None
    except OSError as exc:
        reason = (exc.strerror or type(exc).__name__).lower()
        raise UsageError(t("resume.bad_verify_ledger", reason=reason), typed=False) from None
    os.close(fd)


def _expected_ids(path: str | None, t: Translate) -> list[str] | None:
    if path is None:
        return None
    try:  # a regular file, bounded: a FIFO is not waited on, /dev/zero not read forever
        data = read_bounded(path, limit=MAX_EXPECTED_IDS_BYTES)
        if isinstance(data, str):
            raise UsageError(t("resume.bad_expect_ids", reason=reason_text(
                data, t, limit=MAX_EXPECTED_IDS_BYTES)), typed=False)
        return [entry.strip() for entry in data.decode("utf-8-sig").splitlines()
                if entry.strip()]
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or type(exc).__name__
        raise UsageError(t("resume.bad_expect_ids", reason=str(reason).lower()),
                         typed=False) from None

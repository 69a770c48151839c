"""``kernodeck-diagnostic resume-check``: stop the application mid-run, run it again, and verify
that the outputs already written were neither lost nor counted twice; or verify a ledger left by
a job that was stopped for real, without running anything.

    $ kernodeck-diagnostic resume-check --ledger out/results.jsonl --stop-after-records 20 \\
          -- python app.py
    $ kernodeck-diagnostic resume-check --verify-ledger out/results.jsonl --expect-ids ids.txt

The application writes its outputs to the ledger (``OutputLedger``, ``ledger.py``: one JSON line
per record, fsynced) and skips the ids already there when it starts. The command runs it (no
shell) until the ledger holds N complete records (``--stop-after-records``) or S seconds have
passed (``--stop-after``), stops it (``--stop-signal``: SIGINT as Ctrl-C, then SIGTERM after
``--grace`` seconds, then SIGKILL; or SIGTERM first; or SIGKILL at once, as a preemption or the
OOM killer), runs it again to its end, and reads the ledger: every expected id exactly once, every
line a whole record, every record what it must be. The expected ids come from ``--expect-ids FILE``
(one per line), else from the ledger's header. Each run is bounded by ``--timeout``.

What a record must be: the ledger header's ``vectors`` (``OutputLedger(..., vector_dim=768)``: the
trial's ``expect_vectors`` rules, ``trial/contracts.py``), and ``--record-check module:function``,
the user's own function, imported from the current folder as ``python -m`` would, called as
``function(record_id, record)`` in a child process of this Python bounded by ``--timeout``: a
record fails it when it raises or returns False.

No false pass: a resume is proven only when the first run was stopped with work left (judged from
the ledger when its process really ended, not when the stop was decided) and the second run did
some of it. Otherwise the verdict is inconclusive, with its own exit status. The statuses are the
codes table's (``report/codes.py``, ``RESUME_*``), worst first: duplicated records, a bad record
(a line that is no whole record, a record failing its rules), a run that failed, lost records,
inconclusive, intact. 2 is a usage error (the ledger must not exist yet: the check starts from
nothing); 12 a ledger whose folder does not exist or cannot be written, refused before anything
runs (as the check's ``--output``); 15 a stdout that refuses the verdict; 130/143/129 an interrupt.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..i18n import Translate
from ..ledger import LedgerContents, natural_order, parse_ledger, records
from ..report.codes import CODES, EXIT_OUTPUT, Code
from ..report.load import read_bounded, reason_text
from ..report.markup import escape
from ..report.redact import Redactor, argument_secrets
from ..report.writer import OutputError, preflight
from ..safe_files import Folder, UnsafePath, check_file
from ..supervision.application import GRACE_S, STOP_SIGNALS, Ending, run_application
from ..supervision.captures import last_stderr_line
from ..terminal import cell, json_text, line, one_line
from ..trial.contracts import vector_problem
from ..untrusted_json import MAX_LINE_BYTES, NotARegularFile, open_regular
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
INTACT, LOST, DUPLICATED, BAD_RECORD, INCONCLUSIVE, RUN_FAILED = (
    CODES[name] for name in ("RESUME_INTACT", "RESUME_RECORDS_LOST", "RESUME_RECORDS_DUPLICATED",
                             "RESUME_BAD_RECORD", "RESUME_INCONCLUSIVE", "RESUME_RUN_FAILED"))
DEFAULT_TIMEOUT_S = 3600.0
RESUME_CHECK_VERSION = 1  # the layout of --format json, its first key
MAX_NAMED_IDS = 50  # ids named on the terminal per kind; JSON output has them all
MAX_DETAIL_CHARS = 300  # of what a record check said of one record
RECORD_CHECK = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")
# The record check, run by this Python as ``-c``: the current folder first on the path (as
# ``python -m``), the function imported, then called on each record the front read from the
# ledger (``records.jsonl``: line, id, record); each failure a line of ``result.jsonl``, and a last
# line {"checked": N} once every record was seen (without it, the check did not finish). Exit 3:
# the function cannot be imported; its reason is the last line of stderr.
CHECK_SCRIPT = """
import importlib, json, os, sys
sys.path.insert(0, os.getcwd())
spec, records_path, result_path, limit = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
module_name, _, name = spec.partition(":")
try:
    function = importlib.import_module(module_name)
    for part in name.split("."):
        function = getattr(function, part)
    if not callable(function):
        raise TypeError(spec + " is not a function")
except Exception as exc:
    sys.stderr.write(type(exc).__name__ + ": " + " ".join(str(exc).split()) + "\\n")
    sys.exit(3)
if records_path == "-":
    sys.exit(0)
checked = 0
with open(records_path, encoding="utf-8") as entries, \\
        open(result_path, "w", encoding="utf-8") as result:
    for text in entries:
        entry = json.loads(text)
        try:
            failed = function(entry["id"], entry["record"]) is False
            said = "returned False"
        except Exception as exc:
            failed, said = True, type(exc).__name__ + (": " + str(exc) if str(exc) else "")
        checked += 1
        if failed:
            said = " ".join(said.split())[:limit]
            result.write(json.dumps({"line": entry["line"], "id": entry["id"],
                                     "detail": said}) + "\\n")
    result.write(json.dumps({"checked": checked}) + "\\n")
"""
MAX_EXPECTED_IDS_BYTES = 64 * 2**20  # --expect-ids: millions of ids, never a device's stream


@dataclass
class Verdict:
    """What the two runs (or none, ``mode`` "verify") and the ledger showed."""

    mode: str = "run"  # "run": two runs of the program; "verify": a ledger as it was found
    stop_signal: str | None = None
    stopped: bool | None = None  # the first run was stopped (not finished before the stop)
    first_exit: int | None = None
    first_signal: str | None = None  # the signal that ended the first run (SIGKILL...)
    first_error: str | None = None  # the first run's last stderr line when it failed itself
    second_exit: int | None = None
    second_timed_out: bool | None = None
    records_at_stop: int | None = None  # complete records when the first run really ended
    remaining_at_stop: int | None = None  # expected ids not in the ledger then
    second_run_records: int | None = None  # complete records the second run added
    expected: int | None = None  # None: no expected ids known
    lost: list[str] = field(default_factory=list)
    duplicated: dict[str, int] = field(default_factory=dict)
    unexpected: list[str] = field(default_factory=list)
    half_records: list[int] = field(default_factory=list)
    not_records: dict[int, str] = field(default_factory=dict)
    bad_records: list[dict[str, Any]] = field(default_factory=list)
    records_checked: int | None = None  # by the header's vector rules or --record-check
    record_check_error: str | None = None  # the record check did not finish: why
    error: str | None = None  # the second run's last stderr line when it failed

    @property
    def first_failed(self) -> bool:
        """The first run ended by itself with a failure (or never started) before the stop."""
        return self.mode == "run" and not self.stopped and self.first_exit != 0

    @property
    def second_failed(self) -> bool:
        return self.mode == "run" and (self.second_exit != 0 or bool(self.second_timed_out))

    @property
    def inconclusive(self) -> list[str]:
        """Why nothing was proven, when nothing wrong was found either."""
        reasons = []
        if self.expected is None:
            reasons.append("no_expected_ids")
        if self.mode == "run":
            if not self.stopped and self.first_exit == 0:
                reasons.append("never_stopped")
            elif self.stopped and self.remaining_at_stop == 0:
                reasons.append("first_run_finished")
            if self.second_run_records == 0:
                reasons.append("second_run_idle")
        if self.record_check_error is not None:
            reasons.append("record_check_unfinished")
        return reasons

    @property
    def code(self) -> Code:
        """The verdict: what is wrong in the ledger first, then why nothing was proven."""
        if self.duplicated:
            return DUPLICATED
        if self.bad_records or self.half_records or self.not_records:
            return BAD_RECORD
        if self.first_failed or self.second_failed:
            return RUN_FAILED
        if self.lost:
            return LOST
        if self.inconclusive:
            return INCONCLUSIVE
        return INTACT

    @property
    def intact(self) -> bool:
        return self.code is INTACT

    def as_json(self) -> dict[str, Any]:
        code = self.code
        return {"resume_check_version": RESUME_CHECK_VERSION, "intact": self.intact,
                "code": code.name, "exit_code": code.exit_code, "mode": self.mode,
                "inconclusive": self.inconclusive, "stop_signal": self.stop_signal,
                "stopped": self.stopped, "first_run_exit": self.first_exit,
                "first_run_signal": self.first_signal,
                "second_run_exit": self.second_exit, "second_run_timed_out": self.second_timed_out,
                "records_at_stop": self.records_at_stop,
                "remaining_at_stop": self.remaining_at_stop,
                "second_run_records": self.second_run_records, "expected": self.expected,
                "lost": self.lost,
                "duplicated": [{"id": key, "count": count}
                               for key, count in self.duplicated.items()],
                "unexpected": self.unexpected, "half_records": self.half_records,
                "not_records": [{"line": number, "kind": kind}
                                for number, kind in sorted(self.not_records.items())],
                "bad_records": self.bad_records, "records_checked": self.records_checked,
                "record_check_error": self.record_check_error}


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
    with tempfile.TemporaryDirectory(prefix="kd-resume-") as work, Folder.made(work) as folder:
        if args.verify_ledger is not None:
            data = _read_existing(args.verify_ledger, t)
            if args.record_check is not None:
                _probe(args.record_check, folder, args.timeout, t)
            verdict = Verdict(mode="verify")
        else:
            refused = _check_ledger(args.ledger, t)
            if refused is not None:
                line(sys.stderr, f"{PROG}: " + t("resume.ledger_preflight", reason=refused,
                                                  exit=EXIT_OUTPUT))
                return EXIT_OUTPUT
            if args.record_check is not None:
                _probe(args.record_check, folder, args.timeout, t)
            try:
                verdict, data = _two_runs(args, command, expected, folder, t)
            except NotARegularFile:  # put at the ledger's name while the application ran
                raise UsageError(t("resume.unsafe_ledger", reason=t("files.unsafe.not_file")),
                                 typed=False) from None
        contents = parse_ledger(data)
        _judge_ledger(verdict, contents, expected)
        _check_records(verdict, data, contents, args, folder)
    if args.format == "json":
        print_result(json_text(json.dumps(verdict.as_json(), indent=2, ensure_ascii=False))
                     + "\n")
    else:
        print_result(render_text(verdict, t, markdown=args.format == "markdown"))
    return verdict.code.exit_code


def _two_runs(args: argparse.Namespace, command: list[str], expected: list[str] | None,
              folder: Folder, t: Translate) -> tuple[Verdict, bytes]:
    """Run the program, stop it, judge where it really was, run it again; the ledger after."""
    stop_signal = args.stop_signal or "SIGINT"
    counter = _RecordCounter(args.ledger)

    def stop_when(elapsed: float) -> bool:
        if args.stop_after is not None:
            return bool(elapsed >= args.stop_after)
        return counter.count() >= int(args.stop_after_records)

    # The runs' last error lines are the application's words: a URL's password, the value of a
    # secret option it was given.
    redactor = Redactor.for_this_machine(secrets=argument_secrets(command))
    first = _run(command, folder, "first", args, stop_when=stop_when, stop_signal=stop_signal)
    at_stop = parse_ledger(_read(args.ledger))  # the ledger when the process really ended
    wanted = expected if expected is not None else at_stop.expected_ids
    verdict = Verdict(mode="run", stop_signal=stop_signal,
                      stopped=first.stopped and first.returncode is not None,
                      first_exit=first.returncode, first_signal=first.signal_name,
                      records_at_stop=sum(at_stop.counts.values()),
                      remaining_at_stop=None if wanted is None
                      else len(set(wanted) - set(at_stop.counts)))
    if verdict.first_failed:
        verdict.first_error = redactor.text(
            first.start_error or last_stderr_line(os.path.join(folder.path, "first.stderr")) or "")
    line(sys.stderr, t("resume.first_run", records=verdict.records_at_stop,
                       remaining="?" if verdict.remaining_at_stop is None
                       else verdict.remaining_at_stop) if verdict.stopped
         else t("resume.not_stopped", exit=first.returncode))
    second = _run(command, folder, "second", args, stop_when=None, stop_signal=stop_signal)
    verdict.second_exit, verdict.second_timed_out = second.returncode, second.timed_out
    if second.returncode != 0:
        verdict.error = redactor.text(
            second.start_error or last_stderr_line(os.path.join(folder.path, "second.stderr"))
            or "")
    data = _read(args.ledger)
    verdict.second_run_records = sum(parse_ledger(data).counts.values()) \
        - sum(at_stop.counts.values())
    return verdict, data


def _judge_ledger(verdict: Verdict, contents: LedgerContents,
                  expected: list[str] | None) -> None:
    wanted = expected if expected is not None else contents.expected_ids
    verdict.expected = None if wanted is None else len(set(wanted))
    verdict.duplicated = {key: contents.counts[key] for key in contents.duplicated}
    verdict.half_records = contents.half_records
    verdict.not_records = dict(contents.not_records)
    if wanted is not None:
        verdict.lost = natural_order(set(wanted) - set(contents.counts))
        verdict.unexpected = natural_order(set(contents.counts) - set(wanted))


def _check_records(verdict: Verdict, data: bytes, contents: LedgerContents,
                   args: argparse.Namespace, folder: Folder) -> None:
    """Each record held to the header's vector rules, then to the user's own check."""
    dim, name = contents.vector_dim, contents.vector_field
    bad: list[dict[str, Any]] = []
    checked = None
    if dim is not None:
        checked = 0
        for number, key, record in records(data):
            checked += 1
            vector = record.get(name) if name is not None and isinstance(record, dict) else (
                None if name is not None else record)
            problem = vector_problem(vector, dim)
            if problem is not None:
                kind, found = problem
                detail = (f"{'none' if found is None else found}, expected {dim}"
                          if kind == "wrong_dimension" else None)
                bad.append({"id": key, "line": number, "problem": kind, "detail": detail})
    if args.record_check is not None:
        failures, count, error = _record_check(args.record_check, data, folder, args.timeout)
        verdict.record_check_error = error
        bad += failures
        checked = count if checked is None else max(checked, count)
    verdict.records_checked = checked
    verdict.bad_records = sorted(bad, key=lambda item: (item["line"], item["problem"]))


def _probe(spec: str, folder: Folder, timeout_s: float, t: Translate) -> None:
    """The record check can be imported: said before anything runs, else a usage error."""
    ending = _check_run(spec, "-", folder, name="probe", timeout_s=timeout_s)
    if ending.returncode != 0:
        reason = (ending.start_error or last_stderr_line(os.path.join(folder.path,
                                                                      "probe.stderr"))
                  or f"exit {ending.returncode}")
        raise UsageError(t("resume.bad_record_check", spec=spec, reason=reason))


def _record_check(spec: str, data: bytes, folder: Folder,
                  timeout_s: float) -> tuple[list[dict[str, Any]], int, str | None]:
    """The failures of the user's check, the records it checked, and why it did not finish."""
    entries = "".join(json.dumps({"line": number, "id": key, "record": record}) + "\n"
                      for number, key, record in records(data))
    folder.replace("records.jsonl", entries.encode("utf-8"))
    ending = _check_run(spec, os.path.join(folder.path, "records.jsonl"), folder, name="check",
                        timeout_s=timeout_s)
    failures: list[dict[str, Any]] = []
    count = 0
    finished = False
    redactor = Redactor.for_this_machine()
    for document in _json_lines(os.path.join(folder.path, "result.jsonl")):
        if "checked" in document:
            count, finished = int(document["checked"]), True
        else:
            failures.append({"id": str(document["id"]), "line": int(document["line"]),
                             "problem": "record_check",
                             "detail": redactor.text(str(document["detail"]))})
    error = None
    if ending.timed_out:
        error = f"timed out after {timeout_s:g} s"
    elif ending.returncode != 0 or not finished:
        said = last_stderr_line(os.path.join(folder.path, "check.stderr"))
        error = redactor.text(f"exit {ending.returncode}" + (f": {said}" if said else ""))
    return failures, count, error


def _check_run(spec: str, records_path: str, folder: Folder, *, name: str,
               timeout_s: float) -> Ending:
    argv = [sys.executable, "-c", CHECK_SCRIPT, spec, records_path,
            os.path.join(folder.path, "result.jsonl"), str(MAX_DETAIL_CHARS)]
    return run_application(argv, env=os.environ, captures=folder, stdout_name=f"{name}.stdout",
                           stderr_name=f"{name}.stderr", timeout_s=timeout_s, grace_s=1.0)


def _json_lines(path: str) -> Iterable[dict[str, Any]]:
    try:
        with open(path, encoding="utf-8") as file:
            for text in file:
                try:
                    document = json.loads(text)
                except ValueError:
                    continue  # a line cut by the time limit's kill
                if isinstance(document, dict):
                    yield document
    except OSError:
        return


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


def _read(path: str) -> bytes:
    """The ledger's bytes (none yet: empty); a FIFO or a device put at its name while the
    application ran is never waited on or read forever."""
    try:
        with os.fdopen(open_regular(path), "rb") as file:
            return file.read()
    except FileNotFoundError:
        return b""


def _read_existing(path: str, t: Translate) -> bytes:
    """The ledger to verify: a regular file (a FIFO would block the read), read once."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as file:
            if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
                raise UsageError(t("resume.bad_verify_ledger", reason=t("files.unsafe.not_file")),
                                 typed=False)
            return file.read()
    except OSError as exc:
        reason = (exc.strerror or type(exc).__name__).lower()
        raise UsageError(t("resume.bad_verify_ledger", reason=reason), typed=False) from None


def _run(command: list[str], captures: Folder, name: str, args: argparse.Namespace, *,
         stop_when: Callable[[float], bool] | None, stop_signal: str) -> Ending:
    """One run of the application, its output kept aside (the terminal stays the verdict's)."""
    return run_application(command, env=os.environ, captures=captures,
                           stdout_name=f"{name}.stdout", stderr_name=f"{name}.stderr",
                           timeout_s=args.timeout,
                           grace_s=GRACE_S if args.grace is None else args.grace,
                           stop_when=stop_when, stop_signal=stop_signal)


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



# Why nothing was proven, and what a line that is no record is: each with its sentence.
_INCONCLUSIVE = {
    "no_expected_ids": "resume.inconclusive.no_expected_ids",
    "never_stopped": "resume.inconclusive.never_stopped",
    "first_run_finished": "resume.inconclusive.first_run_finished",
    "second_run_idle": "resume.inconclusive.second_run_idle",
    "record_check_unfinished": "resume.inconclusive.record_check_unfinished",
}
_NOT_RECORDS = {
    "binary": "resume.not_record.binary",
    "not_json": "resume.not_record.not_json",
    "no_id": "resume.not_record.no_id",
}

def render_text(verdict: Verdict, t: Translate, markdown: bool = False) -> str:
    """The verdict and its exit status, then each problem with the ids it concerns."""
    bullet = "- " if markdown else "  "
    code = verdict.code
    head = {INTACT.name: "resume.intact", INCONCLUSIVE.name: "resume.inconclusive_head"}.get(
        code.name, "resume.not_intact")
    shown = escape if markdown else one_line  # the application's words, its ids: never raw
    lines = [t(head) if code is INTACT else t(head, exit=code.exit_code, code=code.name)]
    if verdict.first_failed:
        lines.append(bullet + t("resume.first_failed", exit=verdict.first_exit,
                                error=shown(verdict.first_error or "-")))
    if verdict.second_failed:
        lines.append(bullet + t("resume.second_failed", exit=verdict.second_exit,
                                error=shown(verdict.error or "-")))
    for reason in verdict.inconclusive:
        lines.append(bullet + t(_INCONCLUSIVE[reason],
                                records=verdict.records_at_stop,
                                error=shown(verdict.record_check_error or "-")))
    if verdict.expected is not None:
        lines.append(bullet + t("resume.expected", count=verdict.expected))
    for key, ids in (("resume.lost", verdict.lost),
                     ("resume.duplicated", [f"{i} (x{n})" for i, n in verdict.duplicated.items()]),
                     ("resume.unexpected", verdict.unexpected)):
        if ids:
            lines.append(bullet + t(key, count=len(ids), ids=_named(ids, shown)))
    if verdict.half_records:
        lines.append(bullet + t("resume.half_records", count=len(verdict.half_records),
                                lines=_named([str(n) for n in verdict.half_records], shown)))
    for number, kind in sorted(verdict.not_records.items()):
        if kind == "misplaced_header":
            lines.append(bullet + t("resume.misplaced_header", line=number))
    others = [f"{number} ({t(_NOT_RECORDS[kind])})"
              for number, kind in sorted(verdict.not_records.items())
              if kind != "misplaced_header"]
    if others:
        lines.append(bullet + t("resume.not_records", count=len(others),
                                lines=_named(others, shown)))
    if verdict.bad_records:
        named = [f"{bad['id']} ({bad['problem']}" + (f": {bad['detail']})" if bad["detail"]
                                                      else ")")
                 for bad in verdict.bad_records]
        lines.append(bullet + t("resume.bad_records", count=len(named),
                                ids=_named(named, shown, width=MAX_DETAIL_CHARS)))
    return "\n".join(lines) + "\n"


def _named(ids: list[str], show: Callable[[str], str] = one_line, width: int = 60) -> str:
    shown = ", ".join(show(cell(i, width)) for i in ids[:MAX_NAMED_IDS])
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

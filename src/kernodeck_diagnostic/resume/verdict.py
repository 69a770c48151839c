"""What ``resume-check`` observed (``Observation``) and the verdict drawn from it alone (``judge``).

Nothing here runs, reads or prints: every fact comes in, a code and its reasons go out, so each
branch is tested with a row that plants exactly one cause (tests/test_resume_verdict.py).

The order, worst first (the codes table's ``RESUME_*``, ``report/codes.py``):

1. ``RESUME_RECORDS_DUPLICATED``: an id has more than one record, or the second run wrote again
   an id the ledger held when the first run was stopped (*redone*: a program that starts over,
   truncating or replacing its output, leaves each id once and yet redid all the work).
2. ``RESUME_BAD_RECORD``: a half record, a line that is no record, a record failing its rules
   (the header's vectors, ``--record-check``, a NaN or an infinity, which standard JSON has
   not), or a record of an id never expected.
3. ``RESUME_RUN_FAILED``: a run failed by itself: the first before the stop (a crash, its time
   limit), or the second (a non-zero status, its time limit).
4. ``RESUME_RECORDS_LOST``: an expected id has no record.
5. ``RESUME_INCONCLUSIVE``: nothing wrong was found, and no resume was proven (``reasons``).
6. ``RESUME_INTACT``: stopped by the tool with records written and expected ids left, the
   second run wrote exactly those left, every expected id once, every line a valid record.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..report.codes import CODES, Code

INTACT, LOST, DUPLICATED, BAD_RECORD, INCONCLUSIVE, RUN_FAILED = (
    CODES[name] for name in ("RESUME_INTACT", "RESUME_RECORDS_LOST", "RESUME_RECORDS_DUPLICATED",
                             "RESUME_BAD_RECORD", "RESUME_INCONCLUSIVE", "RESUME_RUN_FAILED"))
RESUME_CHECK_VERSION = 1  # the layout of --format json, its first key

# Why nothing was proven (``Judgement.reasons``), in the order they are said.
REASONS = ("no_expected_ids", "never_stopped", "stopped_before_any_record", "first_run_finished",
           "second_run_idle", "record_check_unfinished")


@dataclass
class Observation:
    """Every fact ``resume-check`` gathered: of the two runs (``mode`` "run") or of none
    (``mode`` "verify": a ledger as it was found), and of the ledger."""

    mode: str = "run"
    stop_signal: str | None = None  # the signal the stop started with
    stopped: bool | None = None  # the tool stopped the first run (it had not ended by itself)
    first_exit: int | None = None  # None: it never started
    first_signal: str | None = None  # the signal that ended it (SIGKILL...)
    first_timed_out: bool | None = None  # its time limit ended it
    first_error: str | None = None  # its last stderr line, when it failed by itself
    second_exit: int | None = None
    second_timed_out: bool | None = None
    error: str | None = None  # the second run's last stderr line, when it failed
    timeout_s: float | None = None  # each run's time limit
    records_at_stop: int | None = None  # complete records when the first run really ended
    remaining_at_stop: int | None = None  # expected ids not in the ledger then
    second_run_records: int | None = None  # complete records the second run wrote
    # The second run did not keep the ledger as the stop left it (truncated, replaced): every
    # record in it is the second run's.
    rewrote_ledger: bool | None = None
    redone: list[str] = field(default_factory=list)  # held at the stop, written again after it
    expected: int | None = None  # None: no expected ids known
    lost: list[str] = field(default_factory=list)
    duplicated: dict[str, int] = field(default_factory=dict)
    unexpected: list[str] = field(default_factory=list)
    half_records: list[int] = field(default_factory=list)
    not_records: dict[int, str] = field(default_factory=dict)
    bad_records: list[dict[str, Any]] = field(default_factory=list)
    records_checked: int | None = None  # by the header's vector rules or --record-check
    record_check: bool = False  # --record-check was given
    record_check_error: str | None = None  # the record check did not finish: why

    @property
    def first_failed(self) -> bool:
        """The first run ended by itself, with a failure or its time limit, before the stop (or
        never started)."""
        return self.mode == "run" and not self.stopped and (
            self.first_exit != 0 or bool(self.first_timed_out))

    @property
    def second_failed(self) -> bool:
        return self.mode == "run" and (self.second_exit != 0 or bool(self.second_timed_out))


@dataclass(frozen=True)
class Judgement:
    code: Code
    reasons: tuple[str, ...]  # why nothing was proven (REASONS), whatever the code

    @property
    def intact(self) -> bool:
        return self.code is INTACT


def judge(seen: Observation) -> Judgement:
    """The verdict: what is wrong first (see the module's docstring), then why nothing was
    proven."""
    reasons = _reasons(seen)
    if seen.duplicated or seen.redone:
        code = DUPLICATED
    elif seen.bad_records or seen.half_records or seen.not_records or seen.unexpected:
        code = BAD_RECORD
    elif seen.first_failed or seen.second_failed:
        code = RUN_FAILED
    elif seen.lost:
        code = LOST
    elif reasons:
        code = INCONCLUSIVE
    else:
        code = INTACT
    return Judgement(code, reasons)


def _reasons(seen: Observation) -> tuple[str, ...]:
    found = set()
    if seen.expected is None:
        found.add("no_expected_ids")
    if seen.mode == "run":
        if not seen.stopped:
            if not seen.first_failed:
                found.add("never_stopped")
        elif seen.remaining_at_stop is None:
            found.add("no_expected_ids")  # none known when the first run was stopped
        elif seen.remaining_at_stop <= 0:
            found.add("first_run_finished")
        if seen.stopped and not seen.records_at_stop:
            found.add("stopped_before_any_record")  # nothing was there to skip
        if not seen.second_run_records and not seen.second_failed:
            found.add("second_run_idle")
    if seen.record_check_error is not None:
        found.add("record_check_unfinished")
    return tuple(reason for reason in REASONS if reason in found)


def as_json(seen: Observation, judgement: Judgement) -> dict[str, Any]:
    """``--format json``: the verdict, then every fact it was drawn from."""
    code = judgement.code
    return {"resume_check_version": RESUME_CHECK_VERSION, "intact": judgement.intact,
            "code": code.name, "exit_code": code.exit_code, "mode": seen.mode,
            "inconclusive": list(judgement.reasons), "stop_signal": seen.stop_signal,
            "stopped": seen.stopped, "first_run_exit": seen.first_exit,
            "first_run_signal": seen.first_signal,
            "first_run_timed_out": seen.first_timed_out,
            "second_run_exit": seen.second_exit, "second_run_timed_out": seen.second_timed_out,
            "timeout_s": seen.timeout_s,
            "records_at_stop": seen.records_at_stop,
            "remaining_at_stop": seen.remaining_at_stop,
            "second_run_records": seen.second_run_records,
            "second_run_rewrote_ledger": seen.rewrote_ledger, "redone": seen.redone,
            "expected": seen.expected, "lost": seen.lost,
            "duplicated": [{"id": key, "count": count} for key, count in seen.duplicated.items()],
            "unexpected": seen.unexpected, "half_records": seen.half_records,
            "not_records": [{"line": number, "kind": kind}
                            for number, kind in sorted(seen.not_records.items())],
            "bad_records": seen.bad_records, "records_checked": seen.records_checked,
            "record_check": seen.record_check, "record_check_error": seen.record_check_error}

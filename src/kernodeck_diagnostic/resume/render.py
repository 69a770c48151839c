"""The verdict as text (or markdown): its line, then each problem with the ids it concerns."""

from __future__ import annotations

from collections.abc import Callable

from ..i18n import Translate
from ..report.markup import escape
from ..terminal import cell, one_line
from .verdict import INCONCLUSIVE, INTACT, Judgement, Observation

MAX_NAMED_IDS = 50  # ids named on the terminal per kind; JSON output has them all
DETAIL_WIDTH = 300  # of what a record check said of one record
# What OutputLedger says when it refuses an id it already holds (ledger.py): the program did
# not skip the ids already done. It explains a failure, never causes one.
REFUSED_DUPLICATE = "the ledger already holds the id"

_REASONS = {
    "no_expected_ids": "resume.inconclusive.no_expected_ids",
    "never_stopped": "resume.inconclusive.never_stopped",
    "stopped_before_any_record": "resume.inconclusive.stopped_before_any_record",
    "first_run_finished": "resume.inconclusive.first_run_finished",
    "second_run_idle": "resume.inconclusive.second_run_idle",
    "record_check_unfinished": "resume.inconclusive.record_check_unfinished",
}
_NOT_RECORDS = {
    "binary": "resume.not_record.binary",
    "not_json": "resume.not_record.not_json",
    "no_id": "resume.not_record.no_id",
}


def render_text(seen: Observation, judgement: Judgement, t: Translate,
                markdown: bool = False) -> str:
    """The verdict's line, then how the runs went, what the ledger holds, and what was not
    verified."""
    code = judgement.code
    if code is INTACT:
        head = (t("resume.intact_after_stop", signal=seen.stop_signal) if seen.mode == "run"
                else t("resume.intact"))
    else:
        head = t("resume.inconclusive_head" if code is INCONCLUSIVE else "resume.not_intact",
                 exit=code.exit_code, code=code.name)
    said = _Said(t, markdown)
    _runs(said, seen, judgement)
    _ledger(said, seen)
    if code is INTACT:
        if seen.mode == "run" and seen.stop_signal != "SIGKILL":
            said("resume.gentle_stop", signal=seen.stop_signal)
        if not seen.record_check:
            said("resume.no_record_check")
    return "\n".join([head, *said.lines]) + "\n"


class _Said:
    """The verdict's bullets, each a catalogued sentence."""

    def __init__(self, t: Translate, markdown: bool) -> None:
        self.t = t
        self.bullet = "- " if markdown else "  "
        self.shown: Callable[[str], str] = escape if markdown else one_line  # never raw
        self.lines: list[str] = []

    def __call__(self, key: str, **values: object) -> None:
        self.lines.append(self.bullet + self.t(key, **values))


def _runs(said: _Said, seen: Observation, judgement: Judgement) -> None:
    shown = said.shown
    if seen.mode == "run" and seen.stopped:
        said("resume.stopped_by", signal=seen.stop_signal, records=seen.records_at_stop,
             remaining="?" if seen.remaining_at_stop is None else seen.remaining_at_stop)
    if seen.first_failed:
        if seen.first_timed_out:
            said("resume.first_time_limit", timeout=f"{seen.timeout_s:g}")
        else:
            said("resume.first_failed", exit=seen.first_exit,
                 error=shown(seen.first_error or "-"))
    if seen.second_failed:
        if seen.second_timed_out:
            said("resume.second_time_limit", timeout=f"{seen.timeout_s:g}")
        else:
            said("resume.second_failed", exit=seen.second_exit, error=shown(seen.error or "-"))
            if REFUSED_DUPLICATE in (seen.error or ""):
                said("resume.refused_duplicate")
    if judgement.code is INCONCLUSIVE:
        for reason in judgement.reasons:
            said(_REASONS[reason], records=seen.records_at_stop,
                 error=shown(seen.record_check_error or "-"))


def _ledger(said: _Said, seen: Observation) -> None:
    shown = said.shown
    if seen.expected is not None:
        said("resume.expected", count=seen.expected)
    if seen.rewrote_ledger and seen.redone:
        said("resume.rewrote")
    for key, ids in (("resume.lost", seen.lost),
                     ("resume.duplicated", [f"{i} (x{n})" for i, n in seen.duplicated.items()]),
                     ("resume.redone", seen.redone),
                     ("resume.unexpected", seen.unexpected)):
        if ids:
            said(key, count=len(ids), ids=_named(ids, shown))
    if seen.half_records:
        said("resume.half_records", count=len(seen.half_records),
             lines=_named([str(n) for n in seen.half_records], shown))
    for number, kind in sorted(seen.not_records.items()):
        if kind == "misplaced_header":
            said("resume.misplaced_header", line=number)
    others = [f"{number} ({said.t(_NOT_RECORDS[kind])})"
              for number, kind in sorted(seen.not_records.items()) if kind in _NOT_RECORDS]
    if others:
        said("resume.not_records", count=len(others), lines=_named(others, shown))
    if seen.bad_records:
        named = [f"{bad['id']} ({bad['problem']}"
                 + (f": {bad['detail']})" if bad["detail"] else ")") for bad in seen.bad_records]
        said("resume.bad_records", count=len(named), ids=_named(named, shown, width=DETAIL_WIDTH))


def _named(ids: list[str], show: Callable[[str], str] = one_line, width: int = 60) -> str:
    shown = ", ".join(show(cell(i, width)) for i in ids[:MAX_NAMED_IDS])
    return shown + (f", … (+{len(ids) - MAX_NAMED_IDS})" if len(ids) > MAX_NAMED_IDS else "")

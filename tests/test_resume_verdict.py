"""resume-check's verdict as a pure function of what it observed (``resume/verdict.py``), and the
ledger's reading it is drawn from (``resume/observe.py``), without running anything.

The table has one row per branch of ``judge``: each row starts from an observation that is
intact and plants exactly one cause, so that dropping any one condition fails its row.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from kernodeck_diagnostic.i18n import translator
from kernodeck_diagnostic.ledger import OutputLedger, read_ledger
from kernodeck_diagnostic.resume.observe import (
    RewriteWatch,
    after_stop,
    check_records,
    judge_ids,
    judge_second_run,
    snapshot,
)
from kernodeck_diagnostic.resume.render import render_text
from kernodeck_diagnostic.resume.verdict import Observation, as_json, judge

# Stopped by the tool with 6 of 10 ids left, the second run wrote exactly those 6.
INTACT = Observation(mode="run", stop_signal="SIGKILL", stopped=True, first_exit=-9,
                     first_signal="SIGKILL", first_timed_out=False, second_exit=0,
                     second_timed_out=False, timeout_s=60.0, records_at_stop=4,
                     remaining_at_stop=6, second_run_records=6, rewrote_ledger=False,
                     expected=10, records_checked=10)

ROWS: list[tuple[str, dict[str, Any], str, tuple[str, ...]]] = [
    ("intact", {}, "RESUME_INTACT", ()),
    ("duplicated", {"duplicated": {"doc-1": 2}}, "RESUME_RECORDS_DUPLICATED", ()),
    ("redone (started over)", {"redone": ["doc-1"]}, "RESUME_RECORDS_DUPLICATED", ()),
    ("bad record", {"bad_records": [{"id": "doc-1", "line": 2, "problem": "non_finite",
                                     "detail": None}]}, "RESUME_BAD_RECORD", ()),
    ("half record", {"half_records": [5]}, "RESUME_BAD_RECORD", ()),
    ("only lines that are no record", {"not_records": {3: "not_json"}}, "RESUME_BAD_RECORD",
     ()),
    ("an id never expected", {"unexpected": ["doc-99"]}, "RESUME_BAD_RECORD", ()),
    ("first run crashed, second complete", {"stopped": False, "first_exit": 1,
                                            "first_signal": None}, "RESUME_RUN_FAILED", ()),
    ("first run never started", {"stopped": False, "first_exit": None, "first_signal": None},
     "RESUME_RUN_FAILED", ()),
    # Its exit status 0, as the second run's below: the time limit alone is the cause.
    ("first run's time limit", {"stopped": False, "first_exit": 0, "first_signal": None,
                                "first_timed_out": True}, "RESUME_RUN_FAILED", ()),
    ("second run failed", {"second_exit": 1}, "RESUME_RUN_FAILED", ()),
    # A failed run is not an idle one: nothing written is the failure's, not a reason.
    ("second run failed before any record", {"second_exit": 1, "second_run_records": 0},
     "RESUME_RUN_FAILED", ()),
    # Its exit status 0: a program that ends cleanly on the time limit's stop still failed.
    ("second run's time limit", {"second_timed_out": True}, "RESUME_RUN_FAILED", ()),
    ("lost", {"lost": ["doc-7"]}, "RESUME_RECORDS_LOST", ()),
    ("never stopped", {"stopped": False, "first_exit": 0, "first_signal": None},
     "RESUME_INCONCLUSIVE", ("never_stopped",)),
    # No stop, so no count at it: that is no stop "before any record".
    ("never stopped, nothing counted", {"stopped": False, "first_exit": 0, "first_signal": None,
                                        "records_at_stop": None},
     "RESUME_INCONCLUSIVE", ("never_stopped",)),
    ("stopped before any record", {"records_at_stop": 0}, "RESUME_INCONCLUSIVE",
     ("stopped_before_any_record",)),
    ("first run had finished", {"remaining_at_stop": 0}, "RESUME_INCONCLUSIVE",
     ("first_run_finished",)),
    # The boundary: one id left at the stop, written by the second run, is a resume proven.
    ("one id left at the stop", {"records_at_stop": 9, "remaining_at_stop": 1,
                                 "second_run_records": 1}, "RESUME_INTACT", ()),
    ("no expected ids at the stop", {"remaining_at_stop": None}, "RESUME_INCONCLUSIVE",
     ("no_expected_ids",)),
    ("second run idle", {"second_run_records": 0}, "RESUME_INCONCLUSIVE",
     ("second_run_idle",)),
    ("no expected ids", {"expected": None}, "RESUME_INCONCLUSIVE", ("no_expected_ids",)),
    ("record check unfinished", {"record_check": True, "record_check_error": "exit -9"},
     "RESUME_INCONCLUSIVE", ("record_check_unfinished",)),
]


@pytest.mark.parametrize(("cause", "change", "code", "reasons"), ROWS,
                         ids=[row[0] for row in ROWS])
def test_each_branch_of_the_verdict_has_its_own_cause(cause: str, change: dict[str, Any],
                                                      code: str, reasons: tuple[str, ...]) -> None:
    judgement = judge(replace(INTACT, **change))
    assert (judgement.code.name, judgement.reasons) == (code, reasons), cause


def test_a_ledger_verified_as_found_needs_no_runs() -> None:
    seen = Observation(mode="verify", expected=3, records_checked=3)
    assert judge(seen).code.name == "RESUME_INTACT"
    assert judge(replace(seen, expected=None)).code.name == "RESUME_INCONCLUSIVE"


def test_the_json_carries_the_verdict_and_every_fact() -> None:
    seen = replace(INTACT, redone=["doc-1"], rewrote_ledger=True)
    data = as_json(seen, judge(seen))
    # The layout's version comes first: a reader tells the layouts apart by it.
    assert next(iter(data.items())) == ("resume_check_version", 1)
    assert (data["code"], data["exit_code"], data["intact"]) == (
        "RESUME_RECORDS_DUPLICATED", 27, False)
    assert (data["redone"], data["second_run_rewrote_ledger"], data["stop_signal"]) == (
        ["doc-1"], True, "SIGKILL")


T = translator("en")


def _text(seen: Observation) -> list[str]:
    return render_text(seen, judge(seen), T).splitlines()


def test_the_verdict_line_names_the_stop_and_asks_for_a_record_check() -> None:
    lines = _text(INTACT)
    assert lines[0] == ("RESUME OK after a stop by SIGKILL: nothing lost, nothing redone, "
                        "nothing counted twice")
    assert "  the first run was stopped by SIGKILL with 4 record(s) in the ledger (6 expected " \
           "id(s) left)" in lines
    assert any("--record-check MODULE:FUNCTION (examples/resume_record_check.py)" in line
               for line in lines)
    assert not any("gentle stop" in line for line in lines)
    gentle = _text(replace(INTACT, stop_signal="SIGINT"))
    assert gentle[0].startswith("RESUME OK after a stop by SIGINT")
    assert any("SIGINT is a gentle stop" in line for line in gentle)
    checked = _text(replace(INTACT, record_check=True))
    assert not any("--record-check" in line for line in checked)


def test_a_hung_second_run_is_said_ended_by_its_time_limit() -> None:
    lines = _text(replace(INTACT, second_timed_out=True, second_exit=-9, second_run_records=0,
                          lost=["doc-5", "doc-6"]))
    assert lines[0] == "RESUME FAILED (exit 30, RESUME_RUN_FAILED)"
    assert "  the second run was ended by its time limit (60 s, --timeout): it hung (a stale " \
           "lock, a wait that never ends) or needs more time" in lines
    assert not any("exit -9" in line or "no resume was exercised" in line for line in lines)


def test_a_refused_duplicate_is_explained() -> None:
    error = ("ValueError: the ledger already holds the id 'doc-3': a record is written once "
             "(skip the ids in done_ids())")
    lines = _text(replace(INTACT, second_exit=1, error=error, second_run_records=0,
                          lost=["doc-5"]))
    assert f"  the second run did not end well (exit 1): {error}" in lines
    assert "  the ledger refused an id it already held: the program does not skip the ids in " \
           "done_ids() when it starts" in lines
    assert not any("no resume was exercised" in line for line in lines)


def test_a_program_that_started_over_has_its_redone_ids_named() -> None:
    lines = _text(replace(INTACT, redone=["doc-0", "doc-1"], rewrote_ledger=True,
                          second_run_records=10))
    assert lines[0] == "RESUME FAILED (exit 27, RESUME_RECORDS_DUPLICATED)"
    assert "  the second run did not keep the ledger as the stop left it (truncated or " \
           "replaced): it started over instead of resuming" in lines
    assert "  redone (2): held by the ledger at the stop, written again by the second run: " \
           "doc-0, doc-1" in lines


# -- the ledger's reading ------------------------------------------------------------------------

IDS = [f"doc-{i}" for i in range(6)]


def _write(path: Path, ids: list[str], records: list[str]) -> None:
    with OutputLedger(path, expected_ids=ids) as ledger:
        for item in records:
            ledger.append(item, {"n": len(item)})


def _second_run(path: Path, at_stop: Any, watch: RewriteWatch | None = None) -> Observation:
    seen = Observation()
    end = after_stop(str(path), at_stop, watch)
    judge_second_run(seen, at_stop, end)
    judge_ids(seen, end.contents, None)
    return seen


def test_a_second_run_that_appends_the_rest_wrote_only_what_was_missing(tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl"
    _write(path, IDS, IDS[:2])
    with open(path, "ab") as file:
        file.write(b'{"id": "doc-2", "rec')  # a record cut by the kill
    at_stop = snapshot(str(path))
    assert (at_stop.records, at_stop.contents.torn_tail_bytes) == (2, 20)
    _write(path, IDS, IDS[2:])  # cuts the torn tail, appends the rest
    seen = _second_run(path, at_stop, RewriteWatch(str(path), at_stop))
    assert (seen.second_run_records, seen.redone, seen.rewrote_ledger) == (4, [], False)
    assert (seen.lost, seen.duplicated) == ([], {})


@pytest.mark.parametrize("how", ["truncated", "replaced"])
def test_a_second_run_that_starts_over_has_redone_every_id(tmp_path: Path, how: str) -> None:
    """Before: the ledger at the end held each id once, and the second run "wrote 4 records"
    (the difference of the counts) though it rewrote all 6."""
    path = tmp_path / "l.jsonl"
    _write(path, IDS, IDS[:2])
    at_stop = snapshot(str(path))
    watch = RewriteWatch(str(path), at_stop)  # as resume-check polls while the second run runs
    if how == "truncated":  # the same bytes written again: only the watch can tell
        path.write_bytes(b"")
        watch.look()
        _write(path, IDS, IDS)
    else:
        _write(tmp_path / "l.jsonl.tmp", IDS, IDS)
        os.replace(tmp_path / "l.jsonl.tmp", path)
    seen = _second_run(path, at_stop, watch)
    assert (seen.second_run_records, seen.redone, seen.rewrote_ledger) == (6, IDS[:2], True)
    assert (seen.lost, seen.duplicated) == ([], {})
    assert judge(replace(INTACT, second_run_records=6, redone=seen.redone,
                         rewrote_ledger=True)).code.name == "RESUME_RECORDS_DUPLICATED"


def test_a_second_run_that_never_skips_has_redone_and_duplicated(tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl"
    _write(path, IDS, IDS[:2])
    at_stop = snapshot(str(path))
    with open(path, "a") as file:
        file.writelines(json.dumps({"id": item, "record": {}}) + "\n" for item in IDS)
    seen = _second_run(path, at_stop)
    assert (seen.second_run_records, seen.redone, seen.rewrote_ledger) == (6, IDS[:2], False)
    assert seen.duplicated == {"doc-0": 2, "doc-1": 2}


def test_a_nan_is_a_bad_record_without_a_declared_dimension(tmp_path: Path) -> None:
    """Decided: NaN and infinities are not standard JSON (other readers refuse the line), and an
    output holding one is almost always a bug: a bad record whatever the header declares."""
    path = tmp_path / "l.jsonl"
    with OutputLedger(path, expected_ids=["a", "b", "c", "d"]) as ledger:
        ledger.append("a", {"v": [1.0, float("nan")]})
        ledger.append("b", {"v": [1.0], "deep": [[{"x": float("-inf")}]]})
        ledger.append("c", {"text": "NaN and Infinity as words"})
        ledger.append("d", [0.5])
    bad, checked = check_records(str(path), read_ledger(str(path)))
    assert checked == 4
    assert [(item["id"], item["line"], item["problem"]) for item in bad] == [
        ("a", 2, "non_finite"), ("b", 3, "non_finite")]

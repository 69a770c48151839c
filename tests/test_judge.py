"""The one judge (``trial/judge.py``): one row per branch of its rule, each planting exactly ONE
cause on evidence that passes, so that removing any check of the judge fails its row. The same
for what a ramp's attempts say together (``ramp/record.py``'s ``verdict``), the accessors of an
attempt's stages, and ``compare``'s verdict on two attempts. Pure functions: the fast tier.

The end-to-end false passes (a real program, a real process, real Trial folders) are in
``test_judge_programs.py``.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest

from kernodeck_diagnostic.ramp.record import verdict
from kernodeck_diagnostic.trial.accessors import judge_document, record_of, stage_counts
from kernodeck_diagnostic.trial.compare import compare
from kernodeck_diagnostic.trial.judge import (
    OUTCOMES,
    Process,
    TrialRecord,
    judge,
)

ROOT = Path(__file__).resolve().parents[1]

# Evidence that passes: one Trial that ended completed, four stage calls, a contract that held;
# its process exited 0 and its cgroup counted no OOM kill.
TRIAL = TrialRecord(name="20261206T000000Z-aaaaaa", source="attempt.json", status="completed",
                    ended=True, stage_open=False, last_started_stage="compute",
                    stage_calls=4, contracts=(("vectors", True),), params={"batch": 8})
PROCESS = Process(exit_code=0, oom_kills=0)
AXIS = ("batch", 8)


def _trial(**changes: Any) -> TrialRecord:
    return dataclasses.replace(TRIAL, **changes)


def _process(**changes: Any) -> Process:
    return dataclasses.replace(PROCESS, **changes)


WORKER_DIED = {"stage": "load_batch", "pass_index": 3, "type": "RuntimeError",
               "message": "DataLoader worker (pid 4242) is killed by signal: Killed."}

# (id, trials, process, axis, outcome, the deciding cause's kind)
ROWS = [
    ("all evidence passes", [TRIAL], PROCESS, AXIS, "passed", None),
    ("the time limit", [TRIAL], _process(exit_code=None, timed_out=True), AXIS, "timeout",
     "timeout"),
    ("the OOM killer ended the program", [TRIAL],
     _process(exit_code=None, signal="SIGKILL", oom_evidence=("cgroup_oom_kill",)), AXIS,
     "out_of_memory", "oom_killer_main"),
    ("the OOM killer ended another process of the run, the program exited 0", [TRIAL],
     _process(oom_kills=1), AXIS, "out_of_memory", "oom_killer_run"),
    ("a Trial's own out-of-memory", [_trial(oom={"phase": "first_pass", "pass_index": 0,
                                                 "requested_bytes": 2**30})],
     PROCESS, AXIS, "out_of_memory", "trial_oom"),
    ("ended by a signal", [TRIAL], _process(exit_code=None, signal="SIGSEGV"), AXIS, "crashed",
     "signal"),
    ("its last words are an allocator's refusal", [TRIAL],
     _process(exit_code=1, error_text="MemoryError: can't allocate memory"), AXIS,
     "out_of_memory", "oom_text"),
    ("a contract failed", [_trial(contracts=(("vectors", False),))], PROCESS, AXIS,
     "contract_failed", "contracts_failed"),
    ("a non-zero exit", [TRIAL], _process(exit_code=3), AXIS, "failed", "exit_status"),
    ("the program never started", [], _process(exit_code=None, start_error="no such file"),
     AXIS, "failed", "never_started"),
    ("the Trial ended failed", [_trial(status="failed")], PROCESS, AXIS, "failed",
     "status_failed"),
    ("interrupted, then sys.exit(0)", [_trial(status="interrupted")], PROCESS, AXIS, "failed",
     "status_interrupted"),
    ("a pass started and never completed", [_trial(status="incomplete")], PROCESS, AXIS,
     "failed", "status_incomplete"),
    ("a stage failure the program caught (a service answering 500, exit 0)",
     [_trial(stage_failures=1, failed_stages=("handle",))], PROCESS, AXIS, "failed",
     "stage_calls_failed"),
    ("an error recorded outside every stage", [_trial(first_error={
        "stage": None, "pass_index": None, "type": "ValueError", "message": "bad row"})],
     PROCESS, AXIS, "failed", "error_recorded"),
    ("os._exit(0) inside a stage: the attempt never ended, a stage open",
     [_trial(source="events.jsonl", ended=False, stage_open=True)], PROCESS, AXIS, "failed",
     "ended_in_stage"),
    ("the attempt never ended, no stage open", [_trial(source="events.jsonl", ended=False)],
     PROCESS, AXIS, "inconclusive", "never_ended"),
    ("a contract had nothing to check (an adapter saw no training loss)",
     [_trial(unchecked=(("finite_loss", "no training loss seen in 6 training steps"),))],
     PROCESS, AXIS, "inconclusive", "contracts_unchecked"),
    ("the Trial's own parameters say another value of the axis",
     [_trial(params={"batch": 4096})], PROCESS, AXIS, "inconclusive", "axis_not_followed"),
    ("nothing read at all", [], None, None, "inconclusive", "nothing_read"),
    ("a second Trial after the first, failing", [TRIAL, _trial(name="second", status="failed")],
     PROCESS, AXIS, "failed", "status_failed"),
    ("a pass failed (first_failed_pass), nothing else said",
     [_trial(failed_pass=3)], PROCESS, AXIS, "failed", "pass_failed"),
    ("an adapter's finite_loss contract failed",
     [_trial(contracts=(("training_step", True), ("finite_loss", False)))], PROCESS, AXIS,
     "contract_failed", "contracts_failed"),
    ("a child process's Trial failing, the parent's passing",
     [TRIAL, _trial(name="child/20261206T000001Z-bbbbbb", stage_failures=2, stage_calls=2)],
     PROCESS, AXIS, "failed", "stage_calls_failed"),
]


@pytest.mark.parametrize(("trials", "process", "axis", "outcome", "cause"),
                         [row[1:] for row in ROWS], ids=[row[0] for row in ROWS])
def test_one_cause_decides_the_outcome(trials: list[TrialRecord], process: Process | None,
                                       axis: tuple[str, int] | None, outcome: str,
                                       cause: str | None) -> None:
    judged = judge(trials, process, axis)
    assert judged.outcome == outcome
    if cause is None:
        assert judged.reasons == ()
    else:
        assert judged.reasons[0].kind == cause
        assert judged.reasons[0].text  # every cause can be said in one line


# A time limit names the stage open then, by each Trial's own evidence, never the last one
# started (``last_started_stage`` is "compute" in every row): (id, trials, open, stage, pass,
# its words).
TIMEOUT = _process(exit_code=None, timed_out=True)
KILLED = _trial(source="events.jsonl", ended=False, status=None)
TIMEOUT_ROWS = [
    ("the beacon: a stage still open", [dataclasses.replace(
        KILLED, stage_open=True, last_started_stage="embed", pass_index=7)],
     True, "embed", 7, "the time limit was reached in stage embed, pass 7"),
    ("the beacon: no stage open", [dataclasses.replace(KILLED, stage_open=False)],
     False, None, None, "the time limit was reached outside every stage (no stage was open)"),
    ("the beacon unreadable", [dataclasses.replace(KILLED, stage_open=None)],
     None, None, None, "the time limit was reached (no Trial says which stage was open)"),
    ("SIGTERM's block: the stage open when it came",
     [_trial(status="interrupted", signal={"signal": "SIGTERM", "stage": "load",
                                           "pass_index": None})],
     True, "load", None, "the time limit was reached in stage load"),
    ("SIGTERM's block: outside every stage",
     [_trial(status="interrupted", signal={"signal": "SIGTERM", "stage": None,
                                           "pass_index": 2})],
     False, None, None, "the time limit was reached outside every stage (no stage was open)"),
    ("a Trial that ended before the limit, then one killed in a stage",
     [TRIAL, dataclasses.replace(KILLED, name="second", stage_open=True,
                                 last_started_stage="train")],
     True, "train", None, "the time limit was reached in stage train"),
    ("no Trial at all", [], None, None, None,
     "the time limit was reached (no Trial says which stage was open)"),
]


@pytest.mark.parametrize(("trials", "is_open", "stage", "index", "said"),
                         [row[1:] for row in TIMEOUT_ROWS], ids=[row[0] for row in TIMEOUT_ROWS])
def test_a_time_limit_names_the_stage_open_then(trials: list[TrialRecord], is_open: bool | None,
                                                stage: str | None, index: int | None,
                                                said: str) -> None:
    judged = judge(trials, TIMEOUT)
    assert (judged.outcome, judged.reasons[0].kind) == ("timeout", "timeout")
    facts = judged.reasons[0].facts
    assert (facts["open"], facts["stage"], facts["pass_index"]) == (is_open, stage, index)
    assert judged.reasons[0].text == said



# The out-of-memory facts, each row ONE Trial beside the same end: the stage a Trial's log
# stopped in only from an ``events.jsonl`` Trial (its process killed before it wrote
# attempt.json), never from an attempt.json's last stage started. (id, trials, process, oom)
OOM_KILLER = _process(exit_code=None, signal="SIGKILL", oom_evidence=("cgroup_oom_kill",))
BY_THE_KERNEL = {"phase": None, "pass_index": None, "requested_bytes": None, "source": "kernel",
                 "oom_killer": True, "evidence": ["cgroup_oom_kill"]}
TRIAL_OOM = {"phase": "first_pass", "pass_index": 0, "requested_bytes": 2**30}
OOM_FACTS_ROWS = [
    ("no Trial", [], OOM_KILLER, BY_THE_KERNEL),
    ("an attempt.json Trial", [TRIAL], OOM_KILLER, BY_THE_KERNEL),
    ("an events.jsonl Trial killed in a stage",
     [_trial(source="events.jsonl", ended=False, status=None, last_started_stage="forward",
             phase="first_pass")], OOM_KILLER,
     {**BY_THE_KERNEL, "phase": "first_pass", "stage": "forward"}),
    ("an events.jsonl Trial killed before any stage",
     [_trial(source="events.jsonl", ended=False, status=None, last_started_stage=None)],
     OOM_KILLER, BY_THE_KERNEL),
    ("an attempt.json Trial's own out-of-memory", [_trial(oom=TRIAL_OOM)], PROCESS,
     {**TRIAL_OOM, "source": "attempt"}),
    ("an events.jsonl Trial's own out-of-memory",
     [_trial(source="events.jsonl", ended=False, status=None, oom=TRIAL_OOM)], PROCESS,
     {**TRIAL_OOM, "source": "events", "stage": "compute"}),
]


@pytest.mark.parametrize(("trials", "process", "oom"), [row[1:] for row in OOM_FACTS_ROWS],
                         ids=[row[0] for row in OOM_FACTS_ROWS])
def test_the_out_of_memory_facts_name_a_logs_stage_only_from_its_log(
        trials: list[TrialRecord], process: Process, oom: dict[str, Any]) -> None:
    judged = judge(trials, process)
    assert judged.outcome == "out_of_memory"
    assert judged.oom == oom

def test_passes_read_from_a_document_reach_the_judge() -> None:
    """An attempt document's passes: a failed pass fails it; fewer passes completed than
    requested, because the program stopped asking (``islice``), is no missing pass."""
    base = {"status": "completed", "contracts": [], "first_error": None,
            "stage_summary": [{"stage": "step", "count": 3, "completed": 3, "failed": 0}],
            "passes": {"requested": 10, "completed": 3, "first_failed_pass": None,
                       "left_at_pass": 3}}
    assert judge_document(base).outcome == "passed"
    failed = {**base, "passes": {**base["passes"], "first_failed_pass": {
        "index": 1, "stage": None, "error_type": "ValueError"}}}
    judged = judge_document(failed)
    assert (judged.outcome, judged.explain()) == ("failed", "pass 1 failed")
    bad_loss = {**base, "contracts": [{"name": "finite_loss", "passed": False,
                                       "detail": "loss nan at step 4"}]}
    assert judge_document(bad_loss).outcome == "contract_failed"
    signal = {**base, "status": "interrupted",
              "signal": {"signal": "SIGTERM", "stage": "step", "pass_index": 2}}
    assert record_of(signal, "x").signal == signal["signal"]


def test_every_outcome_has_a_row_and_every_kind_of_cause_a_sentence() -> None:
    assert {row[4] for row in ROWS} == set(OUTCOMES)


def test_a_data_loader_worker_killed_by_the_oom_killer_is_out_of_memory_while_loading() -> None:
    worker = _trial(status="failed", first_error=WORKER_DIED, stage_failures=1,
                    failed_stages=("load_batch",))
    judged = judge([worker], _process(exit_code=1, oom_kills=1))
    assert (judged.outcome, judged.reasons[0].kind) == ("out_of_memory", "oom_killer_data_loader")
    assert judged.oom is not None
    assert (judged.oom["phase"], judged.oom["process"]) == ("data_loading", "data_loader_worker")
    # The same death without the kernel's evidence is a failure, never a guessed out-of-memory.
    unproven = judge([worker], _process(exit_code=1, oom_kills=0))
    assert unproven.outcome == "failed"
    assert unproven.oom is None


def test_the_reasons_name_the_count_of_failed_calls() -> None:
    judged = judge([_trial(stage_failures=3, stage_calls=10, failed_stages=("handle",))])
    assert judged.explain() == "3 of 10 stage calls failed (handle)"


def test_the_axis_is_read_under_either_spelling_and_as_text() -> None:
    for params in ({"max_len": 512}, {"max-len": "512"}, {"max_len": 512.0}):
        assert judge([_trial(params=params)], PROCESS, ("max_len", 512)).passed, params
    assert judge([_trial(params={"other": 1})], PROCESS, ("max_len", 512)).passed


# -- the accessors of an attempt document ------------------------------------------------------

def test_stage_counts_come_from_the_summaries_and_the_calls_written_in_full() -> None:
    document = {"stage_summary": [{"stage": "compute", "count": 10, "completed": 7,
                                   "failed": 3, "interrupted": 0}],
                "stages": [{"name": "load", "status": "completed"},
                           {"name": "compute", "status": "failed"}]}
    counts = {item.name: item for item in stage_counts(document)}
    assert (counts["compute"].calls, counts["compute"].failed) == (10, 3)
    assert (counts["load"].calls, counts["load"].completed) == (1, 1)


def test_a_completed_attempt_whose_program_caught_a_stage_failure_is_failed() -> None:
    document = {"status": "completed", "contracts": [], "first_error": {
        "stage": "handle", "pass_index": 2, "type": "KeyError", "message": "'id'"},
        "stage_summary": [{"stage": "handle", "count": 4, "completed": 3, "failed": 1}]}
    judged = judge_document(document)
    assert judged.outcome == "failed"
    assert judged.explain() == "1 of 4 stage calls failed (handle)"


def test_an_attempt_told_by_its_events_alone_never_passes() -> None:
    told = {"status": "unfinished", "work_done": None, "last_started_stage": "compute",
            "last_started_open": True, "last_started_pass": 1, "contracts": [], "stages": []}
    record = record_of(told, "killed")
    assert (record.ended, record.stage_open, record.source) == (False, True, "events.jsonl")
    assert judge([record]).outcome == "failed"
    assert judge([record_of({**told, "last_started_open": False}, "k")]).outcome == \
        "inconclusive"


# -- what a ramp's attempts say together ---------------------------------------------------------

def _ramp(*attempts: tuple[int, str], status: str = "complete",
          reasons: list[dict[str, str]] | None = None) -> dict[str, Any]:
    return {"status": status, "attempts": [
        {"value": value, "outcome": outcome, "exit_code": None if outcome == "failed" else 0,
         "signal": None, "reasons": reasons or []} for value, outcome in attempts]}


RAMP_ROWS = [
    ("a limit", _ramp((1, "passed"), (2, "passed"), (4, "out_of_memory")), "range",
     "RAMP_RANGE_MEASURED"),
    ("every value passed", _ramp((1, "passed"), (2, "passed")), "all_passed",
     "RAMP_RANGE_MEASURED"),
    ("the first value failed", _ramp((1, "crashed")), "none_passed", "RAMP_NOTHING_PASSED"),
    ("a failure below a pass", _ramp((1, "passed"), (2, "crashed"), (4, "passed"),
                                     (8, "crashed")), "no_single_limit", "RAMP_NO_SINGLE_LIMIT"),
    ("a value both passed and failed", _ramp((1, "passed"), (2, "passed"), (2, "crashed")),
     "flaky", "RAMP_FLAKY"),
    ("the axis changed nothing", _ramp((1, "inconclusive"), reasons=[
        {"kind": "axis_not_followed", "text": "the axis changed nothing"}]), "axis_ignored",
     "RAMP_INCONCLUSIVE"),
    ("the program never started", _ramp((1, "failed")), "never_started", "RAMP_INCONCLUSIVE"),
    ("the first value not passed was inconclusive", _ramp((1, "passed"), (2, "inconclusive")),
     "inconclusive", "RAMP_INCONCLUSIVE"),
    ("the ramp never reached its end", _ramp((1, "passed"), status="running"), "unfinished",
     "RAMP_INCONCLUSIVE"),
]


@pytest.mark.parametrize(("document", "kind", "code"), [row[1:] for row in RAMP_ROWS],
                         ids=[row[0] for row in RAMP_ROWS])
def test_what_a_ramps_attempts_say_together(document: dict[str, Any], kind: str,
                                            code: str) -> None:
    found = verdict(document)
    assert (found["kind"], found["code"]) == (kind, code)


def test_a_ramp_says_which_values_were_tried() -> None:
    found = verdict(_ramp((1, "passed"), (2, "passed"), (4, "passed"), (8, "passed"),
                          (16, "passed")))
    assert (found["passed"], found["not_tried"]) == ([1, 2, 4, 8, 16], True)
    assert verdict(_ramp((1, "passed"), (2, "passed"), (3, "passed")))["not_tried"] is False


# -- compare: what a CI gate sees ---------------------------------------------------------------

def _attempt(**changes: Any) -> dict[str, Any]:
    document: dict[str, Any] = {
        "format": "kernodeck-attempt", "version": 1, "status": "completed",
        "first_error": None, "oom": None, "params": {"batch": 8},
        "runtime": {"python_version": "3.11.7", "os_family": "linux", "machine": "x86_64"},
        "pytorch": {"version": "2.7.0", "backend": "cpu"},
        "contracts": [{"name": "vectors", "passed": True, "detail": "100 vectors",
                       "expected_dim": 768}],
        "output": {"vectors": {"vectors": 100, "ids": 100, "dimensions": [768]}},
        "stage_summary": [{"stage": "embed", "count": 4, "completed": 4, "failed": 0}],
        "passes": {"requested": 4, "completed": 4}, "tensors": []}
    document.update(changes)
    return document


def test_a_stage_that_stopped_completing_is_a_regression() -> None:
    b = _attempt(stage_summary=[{"stage": "embed", "count": 4, "completed": 0, "failed": 4}])
    result = compare(_attempt(), b)
    assert result.verdict == "regression"
    assert {"kind": "stage_stopped", "stage": "embed", "a": "4/4", "b": "0/4"} in \
        result.regressions


@pytest.mark.parametrize("changed", [
    {"contracts": [{"name": "vectors", "passed": True, "detail": "100 vectors",
                    "expected_dim": 384}],
     "output": {"vectors": {"vectors": 100, "ids": 100, "dimensions": [384]}}},
    {"output": {"vectors": {"vectors": 10, "ids": 10, "dimensions": [768]}}},
], ids=["dimension 768 -> 384", "100 -> 10 ids"])
def test_a_contract_whose_declaration_changed_is_a_change_a_gate_sees(
        changed: dict[str, Any]) -> None:
    result = compare(_attempt(), _attempt(**changed))
    assert result.verdict == "changed"
    assert result.exit_code != 0


def test_a_killed_attempt_is_compared_on_what_its_log_says() -> None:
    killed = {"format": "kernodeck-attempt", "version": 1, "status": "unfinished",
              "work_done": None, "last_started_stage": "embed", "last_started_open": True,
              "last_started_pass": 2, "first_error": None, "oom": None, "contracts": [],
              "params": {"batch": 8}, "runtime": {"python_version": "3.11.7"},
              "pytorch": {"version": "2.7.0"}, "stages": [], "stage_summary": [],
              "passes": {"requested": None, "completed": 2}}
    result = compare(_attempt(), killed)
    nulls = [change["field"] for change in result.changes if change["b"] is None
             and change["a"] is not None]
    assert not any(re.match(r"(runtime|pytorch|output|tensors)\b", field) for field in nulls), \
        nulls
    assert result.verdict == "regression"


def test_the_docs_table_names_every_cause() -> None:
    doc = (ROOT / "docs" / "trial.md").read_text(encoding="utf-8")
    table = doc.split("## How an attempt is judged", 1)[1].split("\n\n## ", 1)[0]
    named = set(re.findall(r"`([a-z_]+)`", table))
    kinds = {row[5] for row in ROWS if row[5]} | {"oom_killer_data_loader"}
    assert kinds <= named, kinds - named
    assert set(OUTCOMES) <= named


# -- the OOM kills of any process of the run -----------------------------------------------------

def test_the_oom_kills_a_run_counted_whatever_process_they_ended(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kernodeck_diagnostic.supervision import oom_killer

    events = tmp_path / "memory.events"
    events.write_text("oom 3\noom_kill 3\n")
    monkeypatch.setattr(oom_killer, "cgroups_of", lambda pid="self": [str(tmp_path)])
    watch = oom_killer.OomWatch()
    assert watch.kills() == 0
    events.write_text("oom 4\noom_kill 4\n")  # a data loader's worker, a child: not the program
    assert watch.kills() == 1
    monkeypatch.setattr(oom_killer, "cgroups_of", lambda pid="self": [])
    assert oom_killer.OomWatch().kills() is None  # nothing readable: no claim either way

"""One judge: an attempt's outcome from all of its evidence, the same for every consumer.

``ramp``, ``summarize``, ``compare``, ``open_attempt``, the Trial's end line, the adapters'
summary and the notebook display all call ``judge``. It passes an attempt only on positive
evidence; anything missing is ``inconclusive``, anything wrong a failure. The evidence:

- how the run's process ended (``Process``: its exit status or signal, the time limit, the OOM
  kills its cgroups counted while it ran, whichever process of the run they ended), when the
  consumer ran it (``ramp``); None when an attempt is read alone (its folder);
- every Trial folder the run wrote (``TrialRecord``, read by ``trial/evidence.py``): a child
  process's, each rank's, a second Trial after the first, not only the newest;
- for a ramp, the axis and the value the attempt ran with, held to the Trial's own parameters.

The rule, checked in this order (the first that holds decides; every one that holds is kept
in ``reasons``), is the table of docs/trial.md ("How an attempt is judged"):

1. ``timeout``: the run reached its time limit (naming the stage open then, by a Trial's beacon
   or its record of SIGTERM, or that none was open, or that no Trial says);
2. ``out_of_memory``: the kernel's OOM killer ended the main process (SIGKILL and a sign of it),
   or the run's cgroups counted an OOM kill while it ran (a child, a data loader's worker:
   phase ``data_loading`` when the Trial's error says a DataLoader worker died);
3. ``out_of_memory``: a Trial's first error is an out-of-memory one;
4. ``crashed``: the process was ended by a signal;
5. ``out_of_memory``: the process failed and its last words are an allocator's refusal;
6. ``contract_failed``: a contract of a Trial failed;
7. ``failed``: the process exited non-zero (or never started);
8. ``failed``: a Trial ended ``failed``, ``interrupted`` or ``incomplete``;
9. ``failed``: a stage call failed, even when the program caught the error and went on; a pass
   failed (``passes.first_failed_pass``);
10. ``failed``: an error was recorded outside every stage;
11. ``failed``: a Trial never ended (no ``attempt.json``) and a stage was still open;
12. ``inconclusive``: a Trial never ended, no stage open (or unknown); a contract of a Trial
    had nothing to check (an adapter saw no training loss: no evidence, no pass); a link to
    a folder among the run's folders, never followed (what it holds was not read); a Trial
    folder neither of whose files can be read;
13. ``inconclusive``: the Trial's own parameters say another value of the axis;
14. ``inconclusive``: nothing was read at all (no process, no Trial);
15. ``passed``: none of the above.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

# How an attempt ended: every consumer holds to these names (ramp.json's schema, summarize's
# rows, compare's verdict). Every outcome but PASSED is not a pass; INCONCLUSIVE is no failure
# of the program either: evidence is missing.
Outcome = Literal["passed", "out_of_memory", "timeout", "crashed", "contract_failed", "failed",
                  "inconclusive"]
OUTCOMES: tuple[Outcome, ...] = get_args(Outcome)
PASSED: Outcome = "passed"
INCONCLUSIVE: Outcome = "inconclusive"
FAILURES: tuple[Outcome, ...] = tuple(name for name in OUTCOMES
                                      if name not in (PASSED, INCONCLUSIVE))

# An allocator's refusal as PyTorch and Python word it: CUDA/HIP/MPS "out of memory",
# torch.OutOfMemoryError, the CPU allocator's "can't allocate memory", MemoryError, bad_alloc
# (St9bad_alloc: its mangled name, when there was no memory left to demangle it).
OOM_TEXT = re.compile(r"out of memory|OutOfMemoryError|\bMemoryError\b|can't allocate memory|"
                      r"std::bad_alloc|St9bad_alloc|Cannot allocate memory", re.IGNORECASE)
# PyTorch's words when a DataLoader worker dies: "DataLoader worker (pid 123) is killed by
# signal: Killed.", "DataLoader worker (pid(s) 123) exited unexpectedly".
DATA_LOADER_WORKER = re.compile(r"DataLoader worker \(pid", re.IGNORECASE)
DATA_LOADING = "data_loading"  # the phase of an OOM kill of a data loader's worker


@dataclass(frozen=True)
class Process:
    """How the run's main process ended, as its runner saw it."""

    exit_code: int | None  # None: ended by a signal, or never started
    signal: str | None = None
    timed_out: bool = False
    start_error: str | None = None  # why it could not be started
    oom_kills: int | None = None  # OOM kills the run's cgroups counted while it ran; None unread
    oom_evidence: tuple[str, ...] = ()  # the kernel's signs that it killed the main process
    error_text: str | None = None  # the last line of its stderr that says why


@dataclass(frozen=True)
class TrialRecord:
    """What one Trial folder says (``trial/evidence.py`` reads it)."""

    name: str  # the folder, relative to where the run's Trials were looked for
    source: Literal["attempt.json", "events.jsonl"]
    status: str | None = None  # attempt.json's; from the log, the status work_done gave
    ended: bool = False  # attempt.json written: the attempt ended
    stage_open: bool | None = None  # the beacon: a stage still open (None: unknown)
    last_started_stage: str | None = None
    stage_calls: int = 0  # every stage call counted
    stage_failures: int = 0  # the failed ones, caught by the program or not
    failed_stages: tuple[str, ...] = ()  # the names of the stages that failed
    first_error: Mapping[str, Any] | None = None  # {stage, pass_index, type, message}
    contracts: tuple[tuple[str, bool | None], ...] = ()  # (name, passed) each time checked
    unchecked: tuple[tuple[str, str], ...] = ()  # (name, why): contracts with nothing to check
    oom: Mapping[str, Any] | None = None  # {phase, pass_index, requested_bytes}
    phase: str | None = None  # where the log stops: loading, first_pass, later_pass, after_work
    params: Mapping[str, Any] | None = None
    peak_memory_bytes: int | None = None
    pass_index: int | None = None  # the pass a stage was open in, when it never ended
    # attempt.json's ``signal``: the SIGTERM that ended the attempt and the stage open when it
    # came (None: outside every stage), with its pass.
    signal: Mapping[str, Any] | None = None
    failed_pass: int | None = None  # ``passes.first_failed_pass``: the first pass that failed
    # A link to a folder where the run's Trial folders were looked for: never followed (another
    # user's link), nothing of it read; no evidence, no pass.
    link: bool = False
    # A Trial folder whose attempt.json and events.jsonl cannot be read (a link, cut short, past
    # the bound): nothing of it read; no evidence, no pass.
    unreadable: bool = False

    @property
    def contracts_failed(self) -> list[str]:
        return [name for name, passed in self.contracts if passed is False]

    @property
    def error_text(self) -> str | None:
        error = self.first_error or {}
        kind, message = _text(error.get("type")), _text(error.get("message"))
        if kind and message:
            return f"{kind}: {message}"
        return kind or message


@dataclass(frozen=True)
class Reason:
    """One cause found: its kind and its facts; ``text`` says it in one line (English)."""

    kind: str
    facts: Mapping[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return reason_text(self)


@dataclass(frozen=True)
class Judgement:
    """An attempt's outcome, every cause found (the deciding one first), and the Trial that
    speaks for it (the first whose evidence decided, else the first read)."""

    outcome: Outcome
    reasons: tuple[Reason, ...] = ()
    trial: TrialRecord | None = None
    oom: Mapping[str, Any] | None = None  # {phase, pass_index, requested_bytes, source, ...}
    trials: int = 0  # how many Trial folders were read

    @property
    def passed(self) -> bool:
        return self.outcome == PASSED

    @property
    def inconclusive(self) -> bool:
        return self.outcome == INCONCLUSIVE

    def explain(self, limit: int = 3) -> str:
        """The causes in one line: ``3 of 10 stage calls failed (compute)``."""
        return "; ".join(reason.text for reason in self.reasons[:limit])


Add = Callable[..., None]  # add(outcome, kind, trial=None, **facts): one cause found
_ORDER = ("timeout", "out_of_memory", "crashed", "contract_failed", "failed", INCONCLUSIVE)


def judge(trials: Sequence[TrialRecord], process: Process | None = None,
          axis: tuple[str, int] | None = None) -> Judgement:
    """The outcome of one attempt from every piece of its evidence (the module's rule)."""
    found: list[tuple[Outcome, Reason, TrialRecord | None]] = []

    def add(outcome: Outcome, kind: str, trial: TrialRecord | None = None,
            **facts: Any) -> None:
        found.append((outcome, Reason(kind, facts), trial))

    worker = next((trial for trial in trials
                   if DATA_LOADER_WORKER.search(trial.error_text or "")), None)
    oomed = next((trial for trial in trials if trial.oom is not None), None)
    open_trial = next((trial for trial in trials if not trial.ended and trial.stage_open), None)
    speaker = worker or oomed or open_trial or next(iter(trials), None)
    oom = _killed(process, trials, worker, speaker, add) if process is not None else None
    if oomed is not None:
        add("out_of_memory", "trial_oom", oomed, stage=(oomed.first_error or {}).get("stage"),
            phase=oomed.oom.get("phase") if oomed.oom else None)
        oom = oom or {**_trial_oom(oomed),
                      "source": "attempt" if oomed.source == "attempt.json" else "events"}
    if process is not None:
        oom = _process_end(process, add, oom)
    for trial in trials:
        if trial.contracts_failed:
            add("contract_failed", "contracts_failed", trial, names=trial.contracts_failed)
    if process is not None and _failed_exit(process):
        if process.exit_code is None:
            add("failed", "never_started", error=process.start_error)
        else:
            add("failed", "exit_status", code=process.exit_code)
    for trial in trials:
        _trial_reasons(trial, add)
        said = _axis_value(trial.params, axis[0]) if axis is not None else None
        if axis is not None and said is not None and said != str(axis[1]):
            add(INCONCLUSIVE, "axis_not_followed", trial, axis=axis[0], value=axis[1],
                said=said)
    if process is None and not trials:
        add(INCONCLUSIVE, "nothing_read")
    if not found:
        return Judgement(PASSED, trial=speaker, trials=len(trials))
    # The deciding cause first: the rule's order (a stable sort keeps the kinds' order within).
    found.sort(key=lambda item: _ORDER.index(item[0]))
    outcome, _, decider = found[0]
    return Judgement(outcome, tuple(reason for _, reason, _ in found),
                     trial=decider or speaker, oom=oom if outcome == "out_of_memory" else None,
                     trials=len(trials))


def _killed(process: Process, trials: Sequence[TrialRecord], worker: TrialRecord | None,
            speaker: TrialRecord | None, add: Add) -> dict[str, Any] | None:
    """Rules 1 to 3: the time limit, the OOM killer (the program's, another process's of the
    run, a data loader's worker); the out-of-memory facts when it was one."""
    if process.timed_out:
        trial, facts = open_at_end(trials)
        add("timeout", "timeout", trial, **facts)
        return None
    if process.signal == "SIGKILL" and process.oom_evidence:
        add("out_of_memory", "oom_killer_main", evidence=list(process.oom_evidence))
        return {**_trial_oom(speaker), "source": "kernel", "oom_killer": True,
                "evidence": list(process.oom_evidence)}
    if not process.oom_kills:
        return None
    if worker is not None:
        add("out_of_memory", "oom_killer_data_loader", worker, kills=process.oom_kills)
        return {**_trial_oom(worker), "phase": DATA_LOADING, "source": "kernel",
                "oom_killer": True, "evidence": ["cgroup_oom_kill"],
                "process": "data_loader_worker"}
    add("out_of_memory", "oom_killer_run", kills=process.oom_kills)
    return {**_trial_oom(speaker), "source": "kernel", "oom_killer": True,
            "evidence": ["cgroup_oom_kill"], "process": "other"}


def _process_end(process: Process, add: Add,
                 oom: dict[str, Any] | None) -> dict[str, Any] | None:
    """Rules 5 and 6: a signal; an allocator's refusal in the last words of a failed exit."""
    if process.signal is not None and not process.timed_out:
        add("crashed", "signal", signal=process.signal)
    text = process.error_text or ""
    if _failed_exit(process) and process.exit_code is not None and oom is None \
            and OOM_TEXT.search(text):
        add("out_of_memory", "oom_text")
        return {"phase": None, "pass_index": None, "requested_bytes": requested_bytes(text),
                "source": "error_text"}
    return oom


def open_at_end(trials: Sequence[TrialRecord]) -> tuple[TrialRecord | None, dict[str, Any]]:
    """The stage open when the run was stopped, from each Trial's own evidence, never from the
    last stage started: the signal it recorded (``attempt.json``'s ``signal``: the stage open
    when SIGTERM came, or none), else, for a Trial that never ended, its beacon
    (``stage.bin``: a stage still open, the last started; or none); a Trial that ended without a
    signal ended before the limit, with no stage open. The facts: ``open`` (True, False, None:
    no Trial says), ``stage`` and ``pass_index``; the Trial that says it."""
    known = bool(trials)
    for trial in trials:
        block = trial.signal
        if block is not None:
            stage = block.get("stage")
            if isinstance(stage, str):
                index = block.get("pass_index")
                return trial, {"open": True, "stage": stage, "pass_index": index if isinstance(
                    index, int) and not isinstance(index, bool) else None}
        elif not trial.ended:
            if trial.stage_open:
                return trial, {"open": True, "stage": trial.last_started_stage,
                               "pass_index": trial.pass_index}
            known = known and trial.stage_open is False
    return None, {"open": False if known else None, "stage": None, "pass_index": None}


def _failed_exit(process: Process) -> bool:
    """Exited non-zero, or never started (not a signal, not the time limit)."""
    return not process.timed_out and process.signal is None and process.exit_code != 0


def _trial_reasons(trial: TrialRecord, add: Add) -> None:
    """What one Trial folder says against a pass (rules 8 to 12; 14b: a link not followed; 14c:
    a folder that cannot be read)."""
    if trial.link or trial.unreadable:
        add(INCONCLUSIVE, "link_not_followed" if trial.link else "attempt_unreadable", trial,
            folder=trial.name)
        return
    if trial.status in ("failed", "interrupted", "incomplete"):
        add("failed", f"status_{trial.status}", trial)
    if trial.stage_failures:
        add("failed", "stage_calls_failed", trial, failed=trial.stage_failures,
            calls=max(trial.stage_calls, trial.stage_failures),
            stages=list(trial.failed_stages))
    elif trial.first_error is not None:
        add("failed", "error_recorded", trial, stage=trial.first_error.get("stage"),
            error=trial.error_text)
    elif trial.failed_pass is not None:
        add("failed", "pass_failed", trial, pass_index=trial.failed_pass)
    if not trial.ended:
        if trial.stage_open:
            add("failed", "ended_in_stage", trial, stage=trial.last_started_stage,
                pass_index=trial.pass_index)
        else:
            add(INCONCLUSIVE, "never_ended", trial)
    if trial.unchecked:
        add(INCONCLUSIVE, "contracts_unchecked", trial,
            contracts=[f"{name} ({why})" if why else name for name, why in trial.unchecked])


def _trial_oom(trial: TrialRecord | None) -> dict[str, Any]:
    """The out-of-memory facts a Trial gives: its own ``oom`` block, else where its log stops."""
    if trial is None:
        return {"phase": None, "pass_index": None, "requested_bytes": None}
    found: dict[str, Any] = dict(trial.oom) if trial.oom is not None else {
        "phase": trial.phase, "pass_index": None, "requested_bytes": None}
    if trial.source == "events.jsonl" and trial.last_started_stage is not None:
        found["stage"] = trial.last_started_stage
    return found


def _axis_value(params: Mapping[str, Any] | None, axis: str) -> str | None:
    """The value the Trial's own parameters give the axis (``max_len`` or ``max-len``), as
    text; None when they do not name it."""
    if not isinstance(params, Mapping):
        return None
    for name in (axis, axis.replace("_", "-"), axis.replace("-", "_")):
        value = params.get(name)
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, (int, str)):
            return str(value)
        if isinstance(value, float) and value.is_integer():
            return str(int(value))
    return None


_REQUESTED_BYTES = re.compile(r"you tried to allocate (\d+) bytes", re.IGNORECASE)
_REQUESTED_SIZE = re.compile(r"Tried to allocate ([0-9.]+) ?(B|KiB|MiB|GiB|TiB)\b")
_UNITS = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}


def requested_bytes(text: str) -> int | None:
    """The size the allocator refused, when the message says it (CPU allocator, CUDA)."""
    match = _REQUESTED_BYTES.search(text)
    if match:
        return int(match.group(1))
    match = _REQUESTED_SIZE.search(text)
    if match:
        return int(float(match.group(1)) * _UNITS[match.group(2)])
    return None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


# -- each cause in one line --------------------------------------------------------------------

def reason_text(reason: Reason) -> str:
    """One cause in one line (English: what the end line, ``ramp``'s details and ``summarize``
    show)."""
    said = _SAID.get(reason.kind)
    return said(reason.facts) if said is not None else reason.kind.replace("_", " ")


def _stages_failed(facts: Mapping[str, Any]) -> str:
    stages = ", ".join(facts.get("stages") or [])
    return (f"{facts['failed']} of {facts['calls']} stage calls failed"
            + (f" ({stages})" if stages else ""))


def _ended_in_stage(facts: Mapping[str, Any]) -> str:
    where = f", pass {facts['pass_index']}" if facts.get("pass_index") is not None else ""
    return (f"the process ended inside stage {facts.get('stage')}{where}: its attempt never "
            "ended")


def _timeout(facts: Mapping[str, Any]) -> str:
    if facts.get("open"):
        where = f", pass {facts['pass_index']}" if facts.get("pass_index") is not None else ""
        return f"the time limit was reached in stage {facts.get('stage')}{where}"
    if facts.get("open") is False:
        return "the time limit was reached outside every stage (no stage was open)"
    return "the time limit was reached (no Trial says which stage was open)"


def _fixed(text: str) -> Callable[[Mapping[str, Any]], str]:
    return lambda _facts: text


_SAID: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "stage_calls_failed": _stages_failed,
    "ended_in_stage": _ended_in_stage,
    "error_recorded": lambda facts: "an error was recorded" + (
        f" in stage {facts['stage']}" if facts.get("stage") else " outside every stage")
    + f": {facts.get('error')}",
    "axis_not_followed": lambda facts: (
        f"the axis changed nothing: at {facts['axis']}={facts['value']} the program's own "
        f"parameters say {facts['axis']}={facts['said']}"),
    "contracts_failed": lambda facts: "contract failed: " + ", ".join(facts.get("names") or []),
    "contracts_unchecked": lambda facts: "no evidence, contract never checked: " + ", ".join(
        facts.get("contracts") or []),
    "exit_status": lambda facts: f"exit status {facts['code']}",
    "signal": lambda facts: f"ended by {facts['signal']}",
    "never_started": lambda facts: (
        f"the program never started ({facts.get('error') or 'no reason given'})"),
    "trial_oom": lambda facts: "out of memory" + (
        f" in stage {facts['stage']}" if facts.get("stage") else ""),
    "timeout": _timeout,
    "pass_failed": lambda facts: f"pass {facts.get('pass_index')} failed",
    "oom_killer_main": _fixed("the OOM killer ended the program"),
    "oom_killer_run": _fixed("the OOM killer ended a process of the run"),
    "oom_killer_data_loader": _fixed("the OOM killer ended a DataLoader worker"),
    "oom_text": _fixed("the allocator refused memory"),
    "status_failed": _fixed("the attempt ended failed"),
    "status_interrupted": _fixed("the attempt was interrupted"),
    "status_incomplete": _fixed("a pass started and never completed"),
    "never_ended": _fixed("the attempt never ended (no attempt.json, no stage open): what "
                          "followed its last event is unknown"),
    "nothing_read": _fixed("no evidence: no process, no Trial"),
    "link_not_followed": lambda facts: (
        f"{facts.get('folder')} is a link to a folder, not followed: what it holds was not read"),
    "attempt_unreadable": lambda facts: (
        f"{facts.get('folder')}: neither its attempt.json nor its events.jsonl can be read (a "
        "link, cut short, too large): what it holds is unknown"),
}

"""How one attempt of a ramp ended, from what it left: its exit, its attempt folder, its stderr.

The outcomes, checked in this order:

- ``timeout``: the attempt reached ``--attempt-timeout`` and was killed;
- ``out_of_memory`` by the kernel's OOM killer: SIGKILL, and a sign of the kernel that it was the
  OOM killer (``supervision/oom_killer.py``); the phase from where the trial's event log stops;
- ``out_of_memory``: the trial's ``attempt.json`` holds an ``oom`` (with its phase), else its
  ``events.jsonl`` records a failure that is one;
- ``crashed``: ended by a signal (named), a SIGKILL without the OOM killer's sign included;
- ``out_of_memory``: the error text (the last line of stderr that says why) is an allocator's
  refusal (phase unknown);
- ``contract_failed``: the trial's output contract failed;
- ``failed``: any other non-zero exit (or a trial whose status is ``failed``, or
  ``incomplete``: a pass started and never completed);
- ``passed``: exit 0.

The attempt folder is the one a ``Trial`` of the application made inside ``KERNODECK_RUN_DIR``:
``attempt.json`` when the trial ended, only ``events.jsonl`` when the process was killed first.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from ..report.redact import Redactor
from ..supervision.application import Ending
from ..supervision.captures import last_stderr_line
from ..trial.folder import ATTEMPT_FILE
from ..trial.folder import FORMAT as ATTEMPT_FORMAT
from ..trial.log import EVENTS_FILE
from ..trial.log_reader import LastStarted, events
from ..trial.oom import PHASES, Phase
from ..untrusted_json import Tally, load_file

# How an attempt ended: defined here once (ramp.json's schema, its record and the command hold
# to these names); every outcome but PASSED is a failure, the ramp's limit.
Outcome = Literal["passed", "out_of_memory", "timeout", "crashed", "contract_failed", "failed"]
OUTCOMES: tuple[Outcome, ...] = get_args(Outcome)
PASSED: Outcome = "passed"
FAILURES: tuple[Outcome, ...] = tuple(name for name in OUTCOMES if name != PASSED)
# Where an attempt's out-of-memory happened: one of the trial's phases, or ``after_work``: the
# trial's event log says the program's work was done (``work_done``) and the process ended after
# it, in the trial's teardown: never a pass's out-of-memory.
RampPhase = Literal[Phase, "after_work"]
RAMP_PHASES: tuple[RampPhase, ...] = (*PHASES, "after_work")
# Where the out-of-memory's facts come from, most precise first.
OomSource = Literal["attempt", "events", "error_text", "kernel"]
MAX_FILE_BYTES = 16 * 2**20  # an attempt's files are small; a larger one is read from its end

# An allocator's refusal as PyTorch and Python word it: CUDA/HIP/MPS "out of memory",
# torch.OutOfMemoryError, the CPU allocator's "can't allocate memory", MemoryError, bad_alloc
# (St9bad_alloc: its mangled name, when there was no memory left to demangle it).
OOM_TEXT = re.compile(r"out of memory|OutOfMemoryError|\bMemoryError\b|can't allocate memory|"
                      r"std::bad_alloc|St9bad_alloc|Cannot allocate memory", re.IGNORECASE)
_REQUESTED_BYTES = re.compile(r"you tried to allocate (\d+) bytes", re.IGNORECASE)
_REQUESTED_SIZE = re.compile(r"Tried to allocate ([0-9.]+) ?(B|KiB|MiB|GiB|TiB)\b")
_UNITS = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}


@dataclass
class Classified:
    """One attempt's outcome and what is known of it."""

    outcome: Outcome
    signal: str | None = None
    oom: dict[str, Any] | None = None  # {"phase", "pass_index", "requested_bytes", "source", ...}
    error: str | None = None  # one line, redacted
    contracts_failed: list[str] = field(default_factory=list)
    peak_memory_bytes: int | None = None
    peak_memory_source: Literal["attempt", "events", "process"] | None = None
    trial: Literal["attempt.json", "events.jsonl"] | None = None
    last_started_stage: str | None = None  # the stage running when it ended, from the trial


@dataclass
class TrialFacts:
    """What the attempt folder says, from ``attempt.json`` or else ``events.jsonl``."""

    source: Literal["attempt.json", "events.jsonl"] | None = None
    status: str | None = None
    oom: dict[str, Any] | None = None
    contracts_failed: list[str] = field(default_factory=list)
    peak_memory_bytes: int | None = None
    error: str | None = None  # "type: message" of the first error
    phase: RampPhase | None = None  # where the event log stops: before, in or after the first pass
    last_started_stage: str | None = None


def classify(ending: Ending, run_dir: str, stderr_path: str,
             redactor: Redactor | None = None) -> Classified:
    """The outcome of one attempt (see the module's docstring for the order)."""
    facts = read_trial(run_dir)
    redactor = redactor or Redactor.for_this_machine()
    text = facts.error or last_stderr_line(stderr_path) or ending.start_error
    result = Classified("failed", signal=ending.signal_name, trial=facts.source,
                        error=redactor.text(text) if text else None,
                        contracts_failed=facts.contracts_failed,
                        last_started_stage=facts.last_started_stage)
    _peak(result, facts, ending)
    if ending.timed_out:
        result.outcome = "timeout"
        result.signal = None  # the tool's own kill at the limit says nothing of the attempt
    elif ending.oom_evidence:
        result.outcome = "out_of_memory"
        result.oom = {**(facts.oom or {"phase": facts.phase, "pass_index": None,
                                       "requested_bytes": None}),
                      "source": "kernel", "oom_killer": True, "evidence": ending.oom_evidence}
        if facts.source == "events.jsonl" and facts.last_started_stage is not None:
            result.oom["stage"] = facts.last_started_stage
    elif facts.oom is not None:  # the first error was one, whatever ended the process after
        result.outcome = "out_of_memory"
        result.oom = {**facts.oom, "source": "attempt" if facts.source == "attempt.json"
                      else "events"}
    elif ending.signal_name is not None:
        result.outcome = "crashed"
    elif ending.returncode != 0 and text and OOM_TEXT.search(text):
        result.outcome = "out_of_memory"
        result.oom = {"phase": None, "pass_index": None,
                      "requested_bytes": requested_bytes(text), "source": "error_text"}
    elif facts.contracts_failed:
        result.outcome = "contract_failed"
    elif ending.returncode != 0 or facts.status in ("failed", "incomplete"):
        result.outcome = "failed"
    else:
        result.outcome = PASSED
    if result.outcome == PASSED:
        result.error = None
    return result


def requested_bytes(text: str) -> int | None:
    """The size the allocator refused, when the message says it (CPU allocator, CUDA)."""
    match = _REQUESTED_BYTES.search(text)
    if match:
        return int(match.group(1))
    match = _REQUESTED_SIZE.search(text)
    if match:
        return int(float(match.group(1)) * _UNITS[match.group(2)])
    return None


def _peak(result: Classified, facts: TrialFacts, ending: Ending) -> None:
    if facts.peak_memory_bytes is not None:
        result.peak_memory_bytes = facts.peak_memory_bytes
        result.peak_memory_source = "attempt" if facts.source == "attempt.json" else "events"
    elif ending.peak_rss_bytes:
        result.peak_memory_bytes = ending.peak_rss_bytes
        result.peak_memory_source = "process"


# -- the attempt folder ----------------------------------------------------------------------------

def read_trial(run_dir: str) -> TrialFacts:
    """The facts of the newest attempt folder in ``run_dir`` (none: empty facts). A job of
    several processes keeps one attempt per rank (``rank-N/``, the trial's adapters): the first
    rank whose attempt did not pass speaks for the job, else rank 0's."""
    folders = [_newest_attempt(run_dir)]
    if folders[0] is None:
        folders = [_newest_attempt(os.path.join(run_dir, name)) for name in _rank_folders(run_dir)]
    read = [_facts_of(folder) for folder in folders if folder is not None]
    failing = (facts for facts in read
               if facts.status != "completed" or facts.contracts_failed or facts.oom)
    return next(failing, read[0] if read else TrialFacts())


def _facts_of(folder: str) -> TrialFacts:
    document = load_file(os.path.join(folder, ATTEMPT_FILE), MAX_FILE_BYTES, follow_links=False)
    if isinstance(document, dict) and document.get("format") == ATTEMPT_FORMAT:
        return _from_attempt(document)
    return _from_events(os.path.join(folder, EVENTS_FILE))


def _rank_folders(run_dir: str) -> list[str]:
    """The ``rank-N`` folders of ``run_dir``, by rank."""
    try:
        names = os.listdir(run_dir)
    except OSError:
        return []
    ranks = [name for name in names if name.startswith("rank-") and name[5:].isdigit()]
    return sorted(ranks, key=lambda name: int(name[5:]))


def _newest_attempt(run_dir: str) -> str | None:
    try:
        entries = [os.path.join(run_dir, name) for name in os.listdir(run_dir)]
    except OSError:
        return None
    folders = [path for path in entries if os.path.isdir(path) and (
        os.path.isfile(os.path.join(path, ATTEMPT_FILE))
        or os.path.isfile(os.path.join(path, EVENTS_FILE)))]
    return max(folders, key=lambda path: (os.path.getmtime(path), path), default=None)


def _from_attempt(document: dict[str, Any]) -> TrialFacts:
    facts = TrialFacts(source="attempt.json", status=_text(document.get("status")),
                       last_started_stage=_text(document.get("last_started_stage")))
    oom = document.get("oom")
    if isinstance(oom, dict):
        facts.oom = _oom(oom)
    contracts = document.get("contracts")
    facts.contracts_failed = [str(item.get("name")) for item in
                              (contracts if isinstance(contracts, list) else [])
                              if isinstance(item, dict) and item.get("passed") is False]
    facts.peak_memory_bytes = _count(document.get("peak_memory_bytes"))
    error = document.get("first_error")
    if isinstance(error, dict):
        facts.error = _error_text(error)
    return facts


def _from_events(path: str) -> TrialFacts:
    """Facts from the event log alone (the process was killed before writing attempt.json),
    read in one pass, a line at a time, only what the facts need kept (``trial/log_reader.py``:
    a regular file of its own, bounded in time and memory whatever its size). A log not read
    whole (lines skipped, its middle too large to read) with no failure in what was read is
    ``incomplete``: what was not read may have held one."""
    tally = Tally()
    started = LastStarted(path)
    passes_done, pass_started, trial_log, work_done = 0, False, False, False
    peak: int | None = None
    failed, error, oom, oom_in_text = False, None, None, False  # of the first failure
    try:
        for event in events(path, tally):
            kind = event.get("event")
            started.add(event)
            passes_done += kind == "pass_completed"
            # A trial writes pass_started before each pass: none yet is before the first one.
            pass_started = pass_started or kind == "pass_started"
            trial_log = trial_log or kind == "attempt_started"
            work_done = work_done or kind == "work_done"
            for value in _peaks(event):
                peak = value if peak is None else max(peak, value)
            if kind != "stage_failed" or error is not None:
                continue
            failed = True
            block = event.get("error")
            error = _error_text(block) if isinstance(block, dict) else None
            found = event.get("oom")
            if isinstance(found, dict):
                oom, oom_in_text = _oom(found), False
            elif error and OOM_TEXT.search(error):
                oom_in_text = True
    except OSError:
        return TrialFacts()
    if not tally.objects:
        return TrialFacts()
    facts = TrialFacts(source="events.jsonl", error=error, oom=oom, peak_memory_bytes=peak)
    facts.phase = ("after_work" if work_done else "later_pass" if passes_done
                   else "first_pass" if pass_started else "loading" if trial_log else None)
    facts.last_started_stage = _text(started.result()[0])  # the beacon's, or the log's
    if failed:
        facts.status = "failed"
    elif not tally.whole:
        facts.status = "incomplete"
    if oom_in_text and error:
        facts.oom = {"phase": facts.phase, "pass_index": passes_done if passes_done else None,
                     "requested_bytes": requested_bytes(error)}
    return facts


def _oom(oom: dict[str, Any]) -> dict[str, Any]:
    phase = oom.get("phase")
    return {"phase": phase if phase in RAMP_PHASES else None,
            "pass_index": _count(oom.get("pass_index")),
            "requested_bytes": _count(oom.get("requested_bytes"))}


def _peaks(event: dict[str, Any]) -> list[int]:
    """Peak sizes an event carries: ``peak_memory_bytes`` or ``*peak*bytes`` keys, one level down
    too (a ``memory`` object)."""
    found = []
    for holder in (event, *(value for value in event.values() if isinstance(value, dict))):
        found += [count for key, value in holder.items()
                  if "peak" in str(key) and str(key).endswith("bytes")
                  and (count := _count(value)) is not None]
    return found


def _error_text(error: dict[str, Any]) -> str | None:
    kind, message = _text(error.get("type")), _text(error.get("message"))
    if kind and message:
        return f"{kind}: {message}"
    return kind or message


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None

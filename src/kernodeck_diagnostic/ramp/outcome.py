"""How one attempt of a ramp ended: the one judge (``trial/judge.py``) given all its evidence.

The evidence: how the application's process ended (its exit status or signal, the time limit,
the kernel's signs that its OOM killer ended it, the OOM kills its cgroups counted while it ran,
whichever process of the run they ended, its last stderr line) and every Trial folder it wrote
in ``KERNODECK_RUN_DIR`` (``trial/evidence.py``: each rank's, a child process's, a second
Trial's), and the axis value, held to each Trial's own parameters. The rule and its order:
``trial/judge.py`` and the table of docs/trial.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..report.redact import Redactor
from ..supervision.application import Ending
from ..supervision.captures import last_stderr_line
from ..trial.evidence import Records, run_records
from ..trial.judge import (
    INCONCLUSIVE,
    OOM_TEXT,
    OUTCOMES,
    PASSED,
    Outcome,
    Process,
    judge,
    requested_bytes,
)
from ..trial.oom import PHASES, Phase

__all__ = ["FAILURES", "INCONCLUSIVE", "OOM_TEXT", "OUTCOMES", "PASSED", "RAMP_PHASES",
           "Classified", "Outcome", "classify", "requested_bytes"]

# Every outcome but PASSED ends the ramp's growth: its limit (or, inconclusive, no limit known).
FAILURES: tuple[Outcome, ...] = tuple(name for name in OUTCOMES if name != PASSED)
# Where an attempt's out-of-memory happened: one of the trial's phases; ``after_work``: the
# trial's event log says the program's work was done (``work_done``) and the process ended after
# it, in the trial's teardown: never a pass's out-of-memory; ``data_loading``: the OOM killer
# ended a data loader's worker.
RampPhase = Literal[Phase, "after_work", "data_loading"]
RAMP_PHASES: tuple[RampPhase, ...] = (*PHASES, "after_work", "data_loading")


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
    # The judge's causes, the deciding one first: {"kind", "text"} (one line, redacted).
    reasons: list[dict[str, str]] = field(default_factory=list)
    trials: int = 0  # how many Trial folders the attempt wrote


def classify(ending: Ending, run_dir: str, stderr_path: str,
             redactor: Redactor | None = None, axis: tuple[str, int] | None = None
             ) -> Classified:
    """The outcome of one attempt: the judge's, from everything it left."""
    records = run_records(run_dir, axis)
    redactor = redactor or Redactor.for_this_machine()
    stderr_line = last_stderr_line(stderr_path)
    process = Process(
        exit_code=ending.returncode if ending.signal_name is None else None,
        signal=None if ending.timed_out else ending.signal_name, timed_out=ending.timed_out,
        start_error=ending.start_error, oom_kills=None if ending.timed_out or ending.stopped
        else ending.oom_kills, oom_evidence=tuple(ending.oom_evidence),
        error_text=redactor.text(stderr_line) if stderr_line else None)
    verdict = judge(records, process, axis)
    speaker = verdict.trial
    failing = [name for record in records for name in record.contracts_failed]
    text = (speaker.error_text if speaker is not None else None) or process.error_text or \
        ending.start_error
    result = Classified(verdict.outcome, signal=process.signal,
                        trial=speaker.source if speaker is not None else None,
                        error=redactor.text(text) if text else None,
                        contracts_failed=list(dict.fromkeys(failing)),
                        last_started_stage=speaker.last_started_stage if speaker else None,
                        oom=dict(verdict.oom) if verdict.oom is not None else None,
                        reasons=[{"kind": reason.kind, "text": redactor.text(reason.text)}
                                 for reason in verdict.reasons],
                        trials=records.read)
    _peak(result, records, ending)
    if result.outcome == PASSED:
        result.error = None
    return result


def _peak(result: Classified, records: Records, ending: Ending) -> None:
    peaks = [(record.peak_memory_bytes, record.source) for record in [*records, records.peak]
             if record is not None and record.peak_memory_bytes is not None]
    if peaks:
        peak, source = max(peaks, key=lambda item: item[0] or 0)
        result.peak_memory_bytes = peak
        result.peak_memory_source = "attempt" if source == "attempt.json" else "events"
    elif ending.peak_rss_bytes:
        result.peak_memory_bytes = ending.peak_rss_bytes
        result.peak_memory_source = "process"

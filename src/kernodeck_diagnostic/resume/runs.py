"""The plan (when and how the first run is stopped, each run's limit) and the two runs of the
program, with what the ledger held when the first run's process really ended and at the end.

The default stop is a hard one, SIGKILL at once: a preemption and the OOM killer end jobs that
way, and only a hard stop proves that what the program counted done was on disk. A gentle stop
(SIGINT as Ctrl-C, or SIGTERM; then SIGKILL after the grace period) lets the program's
``finally`` flush what it still held, which hides the records a kill loses.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from ..report.redact import Redactor, argument_secrets
from ..safe_files import Folder
from ..supervision.application import GRACE_S, Ending, run_application
from ..supervision.captures import last_stderr_line
from ..supervision.guard import GUARD
from .observe import (
    AfterStop,
    RecordCounter,
    RewriteWatch,
    Snapshot,
    after_stop,
    judge_second_run,
    snapshot,
)
from .verdict import Observation

DEFAULT_STOP_SIGNAL = "SIGKILL"


@dataclass(frozen=True)
class Plan:
    command: Sequence[str]
    ledger: str
    stop_after_records: int | None = None  # stop once the ledger holds this many records
    stop_after_s: float | None = None  # or after this many seconds
    stop_signal: str = DEFAULT_STOP_SIGNAL
    grace_s: float = GRACE_S
    timeout_s: float = 3600.0
    expected: Sequence[str] | None = None  # --expect-ids; else the ledger's header


@contextlib.contextmanager
def private_folder() -> Iterator[Folder]:
    """The check's own folder (mode 0700, removed at the end): the runs' captured output, the
    record check's files."""
    work = None
    try:
        with tempfile.TemporaryDirectory(prefix="kd-resume-") as work, \
                Folder.made(work) as folder:
            GUARD.owns(work)  # removed by the guard should this process be killed
            yield folder
    finally:
        if work is not None:
            GUARD.released(work)


@dataclass(frozen=True)
class Runs:
    seen: Observation
    at_stop: Snapshot
    end: AfterStop


def run_twice(plan: Plan, captures: Folder,
              said: Callable[[Observation], None] = lambda seen: None) -> Runs:
    """Run the program, stop it, judge where it really was, run it again; ``said`` is told
    between the runs (a progress line)."""
    counter = RecordCounter(plan.ledger)

    def stop_when(elapsed: float) -> bool:
        if plan.stop_after_s is not None:
            return bool(elapsed >= plan.stop_after_s)
        return counter.count() >= int(plan.stop_after_records or 0)

    # The runs' last error lines are the program's words: a URL's password, a secret option's.
    redactor = Redactor.for_this_machine(secrets=argument_secrets(list(plan.command)))
    first = _run(plan, captures, "first", stop_when=stop_when)
    at_stop = snapshot(plan.ledger)  # when the process really ended, not when the stop began
    wanted = plan.expected if plan.expected is not None else at_stop.contents.expected_ids
    seen = Observation(mode="run", stop_signal=plan.stop_signal,
                       stopped=first.stopped and first.returncode is not None,
                       first_exit=first.returncode, first_signal=first.signal_name,
                       first_timed_out=first.timed_out, timeout_s=plan.timeout_s,
                       records_at_stop=at_stop.records,
                       remaining_at_stop=None if wanted is None
                       else len(set(wanted) - set(at_stop.contents.counts)))
    if seen.first_failed:
        seen.first_error = _error(first, captures, "first", redactor)
    said(seen)
    # A start over, even one writing the same bytes again: watched while the second run runs.
    with RewriteWatch(plan.ledger, at_stop) as watch:
        second = _run(plan, captures, "second", stop_when=watch.look)
    seen.second_exit, seen.second_timed_out = second.returncode, second.timed_out
    if second.returncode != 0 or second.timed_out:
        seen.error = _error(second, captures, "second", redactor)
    end = after_stop(plan.ledger, at_stop, watch)
    judge_second_run(seen, at_stop, end)
    return Runs(seen, at_stop, end)


def _run(plan: Plan, captures: Folder, name: str, *,
         stop_when: Callable[[float], bool] | None) -> Ending:
    """One run of the program, its output kept aside (the terminal stays the verdict's)."""
    return run_application(list(plan.command), env=os.environ, captures=captures,
                           stdout_name=f"{name}.stdout", stderr_name=f"{name}.stderr",
                           timeout_s=plan.timeout_s, grace_s=plan.grace_s,
                           stop_when=stop_when, stop_signal=plan.stop_signal)


def _error(ending: Ending, captures: Folder, name: str, redactor: Redactor) -> str:
    return redactor.text(ending.start_error
                         or last_stderr_line(captures.child(f"{name}.stderr")) or "")

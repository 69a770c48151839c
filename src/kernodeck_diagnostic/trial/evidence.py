"""The judge's evidence read from Trial folders: every folder a run wrote, each as a
``TrialRecord`` (``trial/judge.py``).

A folder holding ``attempt.json`` is read from it (the attempt ended); one holding only
``events.jsonl`` (the process ended first: a SIGKILL, the OOM killer, ``os._exit``) from its
log and its beacon ``stage.bin`` (``trial/log_reader.py``), each through ``accessors.record_of``.
"""

from __future__ import annotations

import collections
import os
from collections.abc import Iterator

from ..safe_files import link_within
from ..untrusted_json import load_file
from .accessors import record_of
from .folder import ATTEMPT_FILE, MAX_ATTEMPT_BYTES
from .judge import TrialRecord, judge
from .log import EVENTS_FILE
from .log_reader import from_events, is_attempt_document

# Trial folders kept whole for one run (ranks, children, a second Trial): past it, each further
# one is still read, and kept only when it adds to the verdict (``_cause``): memory bounded, no
# folder left unread (a failing 1001st Trial was dropped in silence: ramp said passed).
MAX_FOLDERS = 1000
MAX_DEPTH = 3  # <run dir>/<attempt>, <run dir>/rank-N/<attempt>, one level more for a child's


class Records(list[TrialRecord]):
    """The records a run's folders gave, in the order of their names; ``read``: how many Trial
    folders were read, all of them (past ``MAX_FOLDERS``, more than the records kept);
    ``peak``: the record of the highest memory peak of all read, kept or not."""

    read = 0
    peak: TrialRecord | None = None


def read_folder(folder: str, name: str) -> TrialRecord | None:
    """A Trial folder's record; None when it holds no attempt this tool can read."""
    document = load_file(os.path.join(folder, ATTEMPT_FILE), MAX_ATTEMPT_BYTES,
                         follow_links=False)
    if is_attempt_document(document):
        return record_of(document, name)
    events = os.path.join(folder, EVENTS_FILE)
    if os.path.isfile(events):
        told = from_events(events)
        if told is not None:
            return record_of(told, name)
    return None


def run_records(run_dir: str, axis: tuple[str, int] | None = None) -> Records:
    """Every Trial folder under ``run_dir`` (the folder a run's Trials were told to use,
    ``KERNODECK_RUN_DIR``): its attempts, each rank's (``rank-N/``), a child process's, a second
    Trial's after the first; in the order of their names (an attempt's id starts with its
    time). Links are not followed: a link to a folder is a record of its own (``link``), which
    the judge never passes; MAX_DEPTH levels down. Every folder is read: the first
    MAX_FOLDERS kept whole, each later one kept only when it adds to the verdict (``_cause``;
    ``axis``: the ramp's, held to each Trial's parameters)."""
    found = Records()
    causes: set[str] = set()
    for folder, link in _trial_folders(run_dir):
        name = folder.replace(os.sep, "/")
        record = (TrialRecord(name, "attempt.json", ended=True, link=True) if link
                  else read_folder(os.path.join(run_dir, folder), name)
                  # a Trial's files that cannot be read: never skipped in silence
                  or TrialRecord(name, "attempt.json", ended=True, unreadable=True))
        found.read += 1
        if record.peak_memory_bytes is not None and (
                found.peak is None or record.peak_memory_bytes > (found.peak.peak_memory_bytes
                                                                  or 0)):
            found.peak = record
        cause = _cause(record, axis)
        if len(found) < MAX_FOLDERS or (cause is not None and cause not in causes):
            found.append(record)
        if cause is not None:
            causes.add(cause)
    return found


def _cause(record: TrialRecord, axis: tuple[str, int] | None) -> str | None:
    """The cause the judge finds deciding in ``record`` alone (None: it passes alone). Past
    MAX_FOLDERS a Trial is kept when it is the first with its cause: the judge's outcome is the
    first rule that holds in any Trial, and its decider the first Trial with it, both what
    every folder would have given; another that passes, or repeats a cause, is counted, not
    kept (its peak of memory still weighed: ``Records.peak``)."""
    judged = judge([record], axis=axis)
    if judged.passed:
        return None
    return judged.reasons[0].kind if judged.reasons else judged.outcome


def _trial_folders(top: str) -> Iterator[tuple[str, bool]]:
    """Each Trial folder under ``top`` (relative), and each link to a folder met on the way
    (never followed, never skipped in silence: the judge says it was not read): (path, link)."""
    pending = collections.deque([("", 0)])
    while pending:
        relative, depth = pending.popleft()
        try:
            entries = sorted(os.scandir(os.path.join(top, relative) if relative else top),
                             key=lambda entry: entry.name)
        except OSError:
            continue
        names = {entry.name for entry in entries}
        if relative and (ATTEMPT_FILE in names or EVENTS_FILE in names):
            yield relative, False
            continue
        if depth >= MAX_DEPTH:
            continue
        for entry in entries:
            if entry.is_symlink() and entry.is_dir() and not link_within(entry.path, top):
                yield os.path.join(relative, entry.name), True
        pending.extend((os.path.join(relative, entry.name), depth + 1) for entry in entries
                       if entry.is_dir(follow_symlinks=False))

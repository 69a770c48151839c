"""The judge's evidence read from Trial folders: every folder a run wrote, each as a
``TrialRecord`` (``trial/judge.py``).

A folder holding ``attempt.json`` is read from it (the attempt ended); one holding only
``events.jsonl`` (the process ended first: a SIGKILL, the OOM killer, ``os._exit``) from its
log and its beacon ``stage.bin`` (``trial/log_reader.py``), each through ``accessors.record_of``.
"""

from __future__ import annotations

import os

from ..untrusted_json import load_file
from .accessors import record_of
from .folder import ATTEMPT_FILE
from .judge import TrialRecord
from .log import EVENTS_FILE
from .log_reader import from_events, is_attempt_document

MAX_FILE_BYTES = 16 * 2**20  # an attempt.json larger than this is not read
MAX_FOLDERS = 1000  # Trial folders read for one run: a bound, not a guess (ranks, children)
MAX_DEPTH = 3  # <run dir>/<attempt>, <run dir>/rank-N/<attempt>, one level more for a child's


def read_folder(folder: str, name: str) -> TrialRecord | None:
    """A Trial folder's record; None when it holds no attempt this tool can read."""
    document = load_file(os.path.join(folder, ATTEMPT_FILE), MAX_FILE_BYTES, follow_links=False)
    if is_attempt_document(document):
        return record_of(document, name)
    events = os.path.join(folder, EVENTS_FILE)
    if os.path.isfile(events):
        told = from_events(events)
        if told is not None:
            return record_of(told, name)
    return None


def run_records(run_dir: str) -> list[TrialRecord]:
    """Every Trial folder under ``run_dir`` (the folder a run's Trials were told to use,
    ``KERNODECK_RUN_DIR``): its attempts, each rank's (``rank-N/``), a child process's, a second
    Trial's after the first; in the order of their names (an attempt's id starts with its
    time). Links are not followed; at most MAX_FOLDERS, MAX_DEPTH levels down."""
    found: list[TrialRecord] = []
    for folder in _trial_folders(run_dir):
        record = read_folder(os.path.join(run_dir, folder), folder.replace(os.sep, "/"))
        if record is not None:
            found.append(record)
    return found


def _trial_folders(top: str) -> list[str]:
    found: list[str] = []
    pending = [("", 0)]
    while pending and len(found) < MAX_FOLDERS:
        relative, depth = pending.pop(0)
        try:
            entries = sorted(os.scandir(os.path.join(top, relative) if relative else top),
                             key=lambda entry: entry.name)
        except OSError:
            continue
        names = {entry.name for entry in entries}
        if relative and (ATTEMPT_FILE in names or EVENTS_FILE in names):
            found.append(relative)
            continue
        if depth >= MAX_DEPTH:
            continue
        pending += [(os.path.join(relative, entry.name), depth + 1) for entry in entries
                    if entry.is_dir(follow_symlinks=False)]
    return found

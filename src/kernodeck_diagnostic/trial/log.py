"""The attempt's event log, ``events.jsonl``: what a killed process still leaves behind.

Each event is one JSON object a line, written and flushed to the kernel before the call returns,
so a process ended by SIGKILL or the OOM killer leaves every completed event in the file. Each
is then made durable on disk (``fsync``) by a helper thread at once, not by the program's own
thread: an fsync costs about 0.1 ms on a virtual disk, more than everything else a stage does,
and it releases the GIL, so the program goes on while it runs (events written within
``COALESCE_S`` of each other share one fsync). The last event (the attempt's end) is synced by
the caller itself before the file is closed.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from typing import IO, Any

from ..safe_files import Folder

EVENTS_FILE = "events.jsonl"
COALESCE_S = 0.005
# One encoder for every event (json.dumps with options builds a new one per call).
_ENCODE = json.JSONEncoder(ensure_ascii=False, allow_nan=False, default=str).encode


class EventLog:
    """Appends events to ``events.jsonl``; see the module's docstring for when they are safe."""

    def __init__(self, folder: Folder) -> None:
        # Created exclusively, relative to the attempt folder's descriptor (``safe_files``).
        fd = folder.open_new(EVENTS_FILE, 0o644, append=True)
        self._file: IO[str] | None = os.fdopen(fd, "w", encoding="utf-8", newline="\n")
        self._start = time.perf_counter()
        self._pending = threading.Event()
        self._closing = False
        self._syncer = threading.Thread(target=self._sync_forever, name="kernodeck-trial-fsync",
                                        daemon=True)
        self._syncer.start()

    def elapsed_ms(self) -> float:
        return round((time.perf_counter() - self._start) * 1000, 3)

    def write(self, event: str, **fields: Any) -> None:
        """Append one event, flushed before returning; synced to disk right after."""
        self.write_fields(event, fields)

    def write_fields(self, event: str, fields: dict[str, Any]) -> None:
        """``write`` with the fields as one mapping (a stage's, built once)."""
        if self._file is None:
            return
        record = {"event": event, "t_ms": self.elapsed_ms()}
        record.update(fields)
        self._file.write(_ENCODE(record) + "\n")
        self._file.flush()
        if not self._pending.is_set():  # a read; set() takes a lock
            self._pending.set()

    def stage_started(self, encoded_name: str, pass_index: int | None,
                      stage_index: int | None = None) -> None:
        """``stage_started``: one small line, built without the encoder (``encoded_name`` is the
        stage's name already as JSON). ``stage_index`` is the number the beacon (``stage.bin``)
        gives the name: what a reader needs to name the stage a SIGKILL came in."""
        if self._file is None:
            return
        index = "" if stage_index is None else f', "stage_index": {stage_index}'
        self._file.write(f'{{"event": "stage_started", "t_ms": {self.elapsed_ms()}, '
                         f'"stage": {encoded_name}, "pass_index": '
                         f'{"null" if pass_index is None else pass_index}{index}}}\n')
        self._file.flush()
        if not self._pending.is_set():
            self._pending.set()

    def forked(self) -> None:
        """In a child forked meanwhile (``Trial._forked``): this copy's file is the null device,
        so that nothing its buffer holds (an event caught by another thread's fork between its
        write and its flush) or is given is ever flushed into the parent's log."""
        file = self._file
        if file is None:
            return
        with contextlib.suppress(OSError, ValueError):
            null = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(null, file.fileno())
            finally:
                os.close(null)

    def close(self) -> None:
        """Sync what was written, stop the helper thread, close the file."""
        if self._file is None:
            return
        self._closing = True
        self._pending.set()
        self._syncer.join(timeout=5)
        with contextlib.suppress(OSError):  # no fsync there: what was flushed is all there is
            os.fsync(self._file.fileno())
        self._file.close()
        self._file = None

    def _sync_forever(self) -> None:
        file = self._file
        while file is not None:
            self._pending.wait()
            # Events that follow within a few milliseconds share one fsync: a loop of short
            # stages neither queues a sync per event nor wakes this thread for each.
            time.sleep(COALESCE_S)
            self._pending.clear()
            if self._closing:
                return
            try:
                os.fsync(file.fileno())
            except (OSError, ValueError):  # no fsync there, or the file closed under us
                return

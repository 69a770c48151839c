"""Whole lines appended to a file, made durable one by one or in batches (group commit).

An ``fsync`` costs from a tenth of a millisecond (a virtual disk) to several (a real one): one
per record makes a loop of small records wait on the disk, not on its own work. With group
commit, a record is written whole to the kernel (one ``write`` of its whole line, on a file
opened with ``O_APPEND``) before ``append`` returns, so a process killed by SIGKILL or the OOM
killer loses nothing that was appended; what only a crash of the machine (a power cut, a kernel
panic) can lose is the *window*: the records appended since the last ``fsync``. A helper thread
syncs ``interval_s`` after the first record of a window, and ``append`` syncs itself, before
returning, once ``max_records`` are waiting: the window never holds more than ``max_records``
records nor lasts much longer than ``interval_s``. ``sync`` and ``close`` make everything
durable before they return.

``mode="record"`` syncs each record before ``append`` returns, for programs whose records have
effects elsewhere (a message sent, a row in another system) that must never be done twice.

``check`` (the ledger's: its name still is the file open) runs before each sync, never on the
path of each ``append`` in the default mode (in ``"record"`` mode, before each write): once it
raises, every later ``append`` and ``sync`` raises the same. In the default mode a file swapped
under the writer is so refused within one window (``interval_s``), or at the next ``sync``; the
records of that window are in the file the writer holds (moved, not lost: their ids are simply
done again from the file at the name).

Standard library only: this runs inside the user's program.
"""

from __future__ import annotations

import contextlib
import errno
import os
import threading
import weakref
from collections.abc import Callable
from typing import Literal

from .at_fork import copies_told

Mode = Literal["group", "record"]
MODES: tuple[Mode, ...] = ("group", "record")


class NotDurable(OSError):
    """The records were written whole but a sync failed: they may not survive a crash of the
    machine, and nothing written through this writer can be said durable any more."""


def check_settings(mode: str, interval_s: float, max_records: int) -> None:
    """``ValueError`` for settings ``GroupCommit`` refuses (before any file is touched)."""
    if mode not in MODES:
        raise ValueError(f"durability must be one of {', '.join(MODES)}, not {mode!r}")
    if not interval_s > 0 or isinstance(max_records, bool) or max_records < 1:
        raise ValueError("the sync window needs interval_s > 0 and max_records >= 1")


class GroupCommit:
    """Appends whole lines to the file open at ``fd`` (owned from now on, closed by ``close``)
    and makes them durable by ``mode``: see the module's docstring."""

    def __init__(self, fd: int, *, mode: Mode = "group", interval_s: float = 0.1,
                 max_records: int = 1000, check: Callable[[], None] | None = None) -> None:
        check_settings(mode, interval_s, max_records)
        self._check = check
        self.mode = mode
        self.interval_s = float(interval_s)
        self.max_records = int(max_records)
        self._fd: int | None = fd
        self._written = 0  # records handed to the kernel (the appending thread alone adds)
        self._durable = 0  # of which synced
        self._lock = threading.Lock()  # one fsync at a time, and _durable with it
        self._pending = threading.Event()
        self._stop = threading.Event()  # set by close: the helper's window ends at once
        self._closing = False
        self._broken: OSError | None = None  # the failed sync: every later call raises it
        # ``check`` raised: every later call raises again (a fresh exception each time: one kept
        # here would hold, through its traceback, the frames of the program that appended).
        self._refused = False
        self._helper: threading.Thread | None = None
        _LIVE.add(self)
        if mode == "group":
            self._helper = threading.Thread(target=self._sync_forever, daemon=True,
                                            name="kernodeck-ledger-sync")
            self._helper.start()

    @property
    def unsynced(self) -> int:
        """Records appended and not yet durable (what a crash of the machine could cost)."""
        return self._written - self._durable

    def append(self, data: bytes, records: int = 1) -> None:
        """Write ``data`` (``records`` whole lines) with one ``write`` where the kernel takes it
        whole, then sync by the mode (``NotDurable``: written, a sync failed)."""
        fd = self._fd
        if fd is None:
            raise ValueError("the file is closed")
        self._raise_if_broken()
        if self.mode == "record":  # a sync per record anyway: the name checked before writing
            with self._lock:
                self._run_check()
        view = memoryview(data)
        try:
            while view:  # a short write (a full disk, a signal) goes on where it stopped
                view = view[os.write(fd, view):]
        except BaseException:
            # Part of the line may be in the file: cut it back to where the line began, so no
            # torn line stands before the next one (the retried record starts clean).
            written = len(data) - len(view)
            if written:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, os.lseek(fd, 0, os.SEEK_END) - written)
            raise
        self._written += records
        if self.mode == "record":
            self.sync(checked=False)  # checked before the write
        elif self._written - self._durable >= self.max_records:
            self.sync()
        elif not self._pending.is_set():  # a read; set() takes a lock
            self._pending.set()

    def sync(self, *, checked: bool = True) -> None:
        """Every record appended so far is durable when this returns (``NotDurable`` if not).
        ``check`` runs first (``checked``): what it raises refuses every later call."""
        with self._lock:
            self._raise_if_broken()
            if checked:
                self._run_check()
            target = self._written
            if self._fd is None or self._durable >= target:
                return
            try:
                os.fsync(self._fd)
            except OSError as exc:
                self._broken = exc.with_traceback(None)  # kept without the callers' frames
                self._raise_if_broken()
            self._durable = target

    def _run_check(self) -> None:
        """``check``, with the lock held: what it raises refuses every later call."""
        if self._check is not None and self._fd is not None:
            try:
                self._check()
            except OSError:
                self._refused = True
                raise

    def _raise_if_broken(self) -> None:
        if self._refused:
            if self._check is not None:
                self._check()  # says again why, afresh
            raise FileNotFoundError(errno.ENOENT, "the file was refused by its check since it "
                                    "was opened; open it again")
        if self._broken is not None:
            raise NotDurable(self._broken.errno, "a sync of the file failed; the records "
                             f"written since the last one may be lost ({self._broken})")

    def close(self) -> None:
        """Sync, stop the helper thread, close the file. Safe to call again."""
        if self._fd is None:
            return
        try:
            if not self._refused:  # the records are durable wherever the file now is
                self.sync(checked=False)
        finally:
            self._closing = True
            self._stop.set()
            self._pending.set()
            if self._helper is not None and self._helper is not threading.current_thread():
                self._helper.join(timeout=5)
            with self._lock:
                fd, self._fd = self._fd, None
                if fd is not None:
                    os.close(fd)

    def forked(self) -> None:
        """In a child forked meanwhile: fresh locks (the parent's helper may have held one at
        the fork), and no helper thread (threads do not survive a fork): its appends sync by
        count and on ``sync``/``close``."""
        self._lock = threading.Lock()
        self._pending = threading.Event()
        self._stop = threading.Event()
        self._helper = None

    def _sync_forever(self) -> None:
        while True:
            self._pending.wait()
            if self._closing:
                return
            # The records of the next interval_s share this sync; the program's thread goes on
            # meanwhile (fsync releases the GIL). close() ends the wait at once: a long window
            # never keeps this thread, nor the program's exit, waiting.
            self._stop.wait(self.interval_s)
            self._pending.clear()
            if self._closing:
                return
            # A failed sync breaks the writer: the program's next append, sync or close raises
            # it (a later fsync would not report it again).
            with contextlib.suppress(OSError, ValueError):
                self.sync()


# Every writer alive: in a child forked meanwhile, each is its parent's (``GroupCommit.forked``).
_LIVE: weakref.WeakSet[GroupCommit] = copies_told("forked")

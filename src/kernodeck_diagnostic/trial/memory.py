"""Memory and synchronisation of the devices the user's program is using, read cheaply.

Nothing here initialises a device the program has not used: CUDA (and ROCm, which PyTorch
drives through ``torch.cuda``) and XPU count only once ``is_initialized()``; MPS once the
program has allocated on it. torch itself is the one the program imported (``sys.modules``):
this module never imports it.

On the CPU, the resident set size and its peak are read from ``/proc/self/status`` (``VmRSS``,
``VmHWM``; the resident size alone, cheaper, from ``/proc/self/statm``) and the peak is reset at
the start of each stage by writing ``5`` to ``/proc/self/clear_refs`` (Linux 4.0+): a stage's
peak is then its own, read at its end with ``getrusage`` (a seventh of the cost of ``status``)
where that is the same value. A later call of a stage name skips the reset while the peak read
last is not above its name's last reading, itself not above the one before (a level its calls
held: ``reset_peak(bound)``). Its reading then also covers the time since the last reset: at
least its own peak, and at most the larger of its own and that level, unless code outside any
stage set a higher peak after the last reading. Never another stage's higher peak (the call
resets after it), nor a spike of its own name's (the call after a rise resets); a name's largest
is never below a call's own.

It is not always: Linux's ``ru_maxrss`` is the larger of the process's peak and a peak the kernel
keeps apart, set when the process started its program (``exec``) to the memory of the process
that launched it, and on some kernels raised when a thread ends. A script started by a Jupyter
kernel, a launcher or a test runner of 2 GiB reads 2 GiB at every stage whose own peak is below
it; no reset lowers it. So a reading not above that value (``CpuMemory.inherited``) is checked
against ``status``, which has the process's own peak only.

Elsewhere the peak is the process's since it started (``getrusage``) and the current size is
unknown.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from typing import Any, Callable

_STATUS = "/proc/self/status"
_STATM = "/proc/self/statm"  # sizes in pages: the resident set is the second
# VmHWM (the peak) comes right before VmRSS in every kernel's status file.
_RSS = re.compile(rb"VmHWM:\s*(\d+) kB\nVmRSS:\s*(\d+) kB")
_CLEAR_REFS = "/proc/self/clear_refs"


class CpuMemory:
    """The process's resident set: now and its peak since the last ``reset_peak``.

    The two files stay open for the attempt (``open``, ``close``): reading ``status`` again from
    offset 0 gives fresh values, and each write to ``clear_refs`` is a reset, so a stage costs
    one system call for each instead of three.
    """

    def __init__(self) -> None:
        self._status: int | None = None
        self._statm: int | None = None
        self._clear_refs: int | None = None
        # At least the peak getrusage adds that is not this process's (see the module's
        # docstring): a reading above it is the process's own peak.
        self.inherited = 0
        # At least the process's peak since the last reset, as last read; None after a reset
        # (the peak is then the resident size at that moment, not read).
        self.high: int | None = None

    def open(self) -> None:
        self._status = _open(_STATUS, os.O_RDONLY)
        self._statm = _open(_STATM, os.O_RDONLY)
        self._clear_refs = _open(_CLEAR_REFS, os.O_WRONLY)
        # Until ``status`` says otherwise, everything getrusage reports now may be inherited.
        self.inherited = _process_peak() or 0

    def reopen(self) -> None:
        """In a forked child: the files the parent opened are the parent's (/proc/self was it):
        this process's own instead, so that a stage here never resets the parent's peak."""
        opened = self._status is not None or self._clear_refs is not None
        for fd in (self._status, self._statm, self._clear_refs):
            if fd is not None:
                _close(fd)
        self._status = self._statm = self._clear_refs = None
        self.high = None
        if opened:
            self.open()

    def reset_peak(self, bound: int | None = None) -> None:
        """The peak starts over from the resident size now. With ``bound`` (the level the stage
        name about to start held at its last calls), skipped while the peak read last is at most
        ``bound``: the reading at the call's end is then still at least the call's own peak, and
        at most the larger of its own and ``bound`` (unless code outside any stage set a higher
        one since that last reading). A system call spared on a flat loop, and the write lock on
        the process's memory map that a reset takes."""
        high = self.high
        if bound is not None and high is not None and high <= bound:
            return
        self.high = None
        if self._clear_refs is not None:
            try:
                os.write(self._clear_refs, b"5")
            except OSError:  # not allowed here: the peak is then the process's since it started
                _close(self._clear_refs)
                self._clear_refs = None

    def peak(self, known: int | None = None) -> int | None:
        """The peak resident bytes since the last ``reset_peak`` (Linux), else since the process
        started; None where it cannot be read (Windows). With ``known`` (the largest peak the
        caller keeps), a reading not above it may be returned as it is, inherited or not: the
        peak, at most that reading, cannot raise what the caller keeps, and ``status`` (a
        seventh of a ``getrusage``'s speed) is not read."""
        reported = _process_peak()
        if reported is None or reported > self.inherited or self._status is None or (
                known is not None and reported <= known):
            self.high = reported
            return reported
        return self.read()[1]

    def read(self) -> tuple[int | None, int | None]:
        """(resident bytes, peak resident bytes), the peak the process's own."""
        if self._status is not None and sys.platform != "win32":
            try:
                found = _RSS.search(os.pread(self._status, 8192, 0))
                if found is not None:
                    peak = int(found.group(1)) * 1024
                    self._learn(peak)
                    self.high = peak
                    return int(found.group(2)) * 1024, peak
            except OSError:
                _close(self._status)
                self._status = None
        self.high = reported = _process_peak()
        return None, reported

    def resident(self) -> int | None:
        """The resident bytes now (Linux), from ``statm``: the same count as ``status``'s
        ``VmRSS`` at a fifth of its cost, without the peak (a pass's memory kept, read every
        ``passes.MEMORY_EVERY_S``); None where it cannot be read."""
        if self._statm is not None and sys.platform != "win32":
            try:
                return int(os.pread(self._statm, 128, 0).split()[1]) * _PAGE
            except (OSError, IndexError, ValueError):
                _close(self._statm)
                self._statm = None
        return self.read()[0]

    def _learn(self, peak: int) -> None:
        """What getrusage adds, known again from the process's own ``peak`` read just now."""
        reported = _process_peak() or 0
        # Above the process's peak, the kernel's value is that added peak itself (a thread that
        # ended may have raised it); otherwise the added peak is at most what it reports now.
        self.inherited = reported if reported > peak else min(self.inherited, reported)

    def close(self) -> None:
        _close(self._status)
        _close(self._statm)
        _close(self._clear_refs)
        self._status = self._statm = self._clear_refs = None


def _open(path: str, flags: int) -> int | None:
    """A /proc file opened for the attempt, once it was read or written as it will be."""
    if sys.platform == "win32":
        return None  # no /proc (and no pread)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        if flags == os.O_WRONLY:
            os.write(fd, b"5")
        else:
            os.pread(fd, 8192, 0)
    except OSError:
        _close(fd)
        return None
    return fd


def _close(fd: int | None) -> None:
    if fd is not None:
        with contextlib.suppress(OSError):
            os.close(fd)


def _process_peak() -> int | None:
    if _getrusage is None:
        return None  # Windows: no resource module; the Windows API would be needed
    return int(_getrusage(_WHO).ru_maxrss) * _PEAK_UNIT


if sys.platform == "win32":
    _getrusage: Callable[[int], Any] | None = None
    _WHO = 0
    _PAGE = 4096  # no /proc: never used
else:
    import resource

    _PAGE = resource.getpagesize()

    # Linux: a thread's usage has the same ``ru_maxrss`` as the process's (the memory is the
    # process's), without the walk over every thread that the process's makes to sum their CPU
    # time (a cost that grows with the threads; docs/performance.md measures both).
    _getrusage = resource.getrusage
    _WHO = getattr(resource, "RUSAGE_THREAD", resource.RUSAGE_SELF) if sys.platform.startswith(
        "linux") else resource.RUSAGE_SELF
_PEAK_UNIT = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB elsewhere


class Accelerator:
    """One device backend the program uses: how to synchronise it and read its memory."""

    def __init__(self, name: str, module: Any, index: int | None) -> None:
        self.name = name  # "cuda:0", "xpu:0", "mps"
        self.module = module
        self.index = index
        self._peaks = all(hasattr(module, attribute) for attribute in
                          ("memory_allocated", "memory_reserved", "max_memory_allocated",
                           "reset_peak_memory_stats"))

    def synchronize(self) -> None:
        if self.index is None:
            self.module.synchronize()
        else:
            self.module.synchronize(self.index)

    def reset_peak(self) -> None:
        if self._peaks:
            self.module.reset_peak_memory_stats(self.index)

    def read(self) -> dict[str, Any]:
        if self._peaks:
            return {"device": self.name,
                    "allocated_bytes": int(self.module.memory_allocated(self.index)),
                    "reserved_bytes": int(self.module.memory_reserved(self.index)),
                    "peak_allocated_bytes": int(self.module.max_memory_allocated(self.index))}
        if self.name == "mps":
            return {"device": self.name,
                    "allocated_bytes": int(self.module.current_allocated_memory()),
                    "reserved_bytes": int(self.module.driver_allocated_memory()),
                    "peak_allocated_bytes": None}
        return {"device": self.name, "allocated_bytes": None, "reserved_bytes": None,
                "peak_allocated_bytes": None}


class Devices:
    """Finds the device backends the program has started using (none on a CPU-only program).

    Asked at every stage boundary, so it stays cheap: whether MPS exists is asked once.
    """

    def __init__(self) -> None:
        self._mps = False
        self._torch: Any = None
        self._started: list[tuple[str, Any, Callable[[], Any], dict[str, Any] | None]] = []
        # Every backend's flag, where each has one and MPS does not exist: while all are
        # false, no device is in use, known in a few reads (the common case: a CPU program).
        self._flags_only: list[dict[str, Any]] | None = None

    def in_use(self, torch: Any) -> list[Accelerator]:
        if torch is None:
            return []
        if torch is not self._torch:  # the lookups, once per torch module
            self._look_up(torch)
        flags_only = self._flags_only
        if flags_only is not None:
            for backend in flags_only:
                if backend["_initialized"]:
                    break
            else:
                return []
        found: list[Accelerator] = []
        for name, module, started, flags in self._started:
            if flags is not None and not flags["_initialized"]:
                continue  # torch's own flag, false: is_initialized() is false, not called
            try:  # asked at each stage's two ends: the check inline, no helper call
                running = bool(started())
            except Exception:  # a backend that cannot answer is one the program does not use
                running = False
            if running:
                index = int(module.current_device())
                found.append(Accelerator(f"{name}:{index}", module, index))
        if self._mps and _true(lambda: torch.mps.current_allocated_memory() > 0):
            found.append(Accelerator("mps", torch.mps, None))
        return found

    def flags(self, torch: Any) -> list[dict[str, Any]] | None:
        """The flags of ``torch``'s device backends (``_flags``): while each is false, no device
        is in use; None where a backend has none, or MPS exists (``in_use`` must ask)."""
        if torch is not self._torch:
            self._look_up(torch)
        return self._flags_only

    def _look_up(self, torch: Any) -> None:
        self._torch = torch
        self._started = [(name, module, module.is_initialized, _flags(module))
                         for name in ("cuda", "xpu")
                         if (module := getattr(torch, name, None)) is not None
                         and _compiled(module)
                         and callable(getattr(module, "is_initialized", None))]
        available = getattr(getattr(getattr(torch, "backends", None), "mps", None),
                            "is_available", None)
        self._mps = available is not None and _true(available)
        flags = [flags for _, _, _, flags in self._started if flags is not None]
        self._flags_only = flags if len(flags) == len(self._started) and not self._mps \
            else None


def _flags(module: Any) -> dict[str, Any] | None:
    """The globals of a device module (``torch.cuda``, ``torch.xpu``) whose ``is_initialized()``
    is torch's own function of them, ``_initialized and not _is_in_bad_fork()``: while their flag
    ``_initialized`` is false the device is not in use, read without a call (a stage asks at
    both ends). None where the module keeps no such flag, or its ``is_initialized`` is another
    function (replaced) or one that does not read the flag (another torch): that one is called."""
    flags = getattr(module, "__dict__", None)
    asked = getattr(module, "is_initialized", None)
    own = getattr(asked, "__globals__", None) is flags and "_initialized" in getattr(
        getattr(asked, "__code__", None), "co_names", ())
    return flags if own and isinstance(flags, dict) and isinstance(
        flags.get("_initialized"), bool) else None


def _compiled(module: Any) -> bool:
    """Whether torch was built with the backend of ``module`` (``torch.cuda``, ``torch.xpu``):
    where it was not (a CPU-only build; XPU in a CUDA build) the backend can never start (its
    initialisation raises before it sets its flag), so no stage asks it. Where torch cannot say
    (no such function, or it fails), it is asked."""
    compiled = getattr(module, "_is_compiled", None)
    return not callable(compiled) or _true(compiled, failing=True)


def _true(ask: Callable[[], Any], *, failing: bool = False) -> bool:
    """``ask()``'s answer; ``failing`` where it raises (by default: a backend that cannot
    answer is one the program does not use)."""
    try:
        return bool(ask())
    except Exception:
        return failing


HISTORY_ENTRIES = 100_000  # allocator events kept by memory_history (PyTorch's own example)


class AllocatorHistory:
    """CUDA's allocator history (``Trial(memory_history=True)``): recorded from the attempt's
    start (or the first stage after torch is imported), saved as a snapshot for PyTorch's memory
    visualiser when the attempt runs out of memory; ``block`` is attempt.json's
    ``memory_history``."""

    def __init__(self, requested: bool) -> None:
        self.block: dict[str, Any] = {"requested": requested, "recorded": False,
                                      "snapshot": None}

    def start(self, torch: Any) -> None:
        if not self.block["requested"] or self.block["recorded"] or torch is None:
            return
        cuda = getattr(torch, "cuda", None)
        record = getattr(getattr(cuda, "memory", None), "_record_memory_history", None)
        if record is None or not _true(getattr(cuda, "is_available", lambda: False)):
            return
        # An older torch or a build without it: the attempt goes on without the history.
        with contextlib.suppress(Exception):
            record(max_entries=HISTORY_ENTRIES)
            self.block["recorded"] = True

    def save(self, attempt_folder: Any, torch: Any) -> None:
        if not self.block["recorded"]:
            return
        from . import folder

        # No room left even for the snapshot: the attempt still says why it failed.
        with contextlib.suppress(Exception):
            folder.dump_snapshot(attempt_folder, torch.cuda.memory._dump_snapshot)
            self.block["snapshot"] = folder.SNAPSHOT_FILE

    def stop(self) -> None:
        if self.block["recorded"]:
            # Recording that cannot be stopped stops with the process.
            with contextlib.suppress(Exception):
                sys.modules["torch"].cuda.memory._record_memory_history(enabled=None)

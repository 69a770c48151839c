"""``Trial``: the attempt of the user's own program, stage by stage, kept in a small folder.

    from kernodeck_diagnostic import Trial

    with Trial("runs", params={"batch": 8}) as trial:
        with trial.stage("load_weights"):
            model = load()
        for step in trial.passes(3):             # pass 0 is reported apart
            with trial.stage("compute", sync=True):
                out = model(batch)
        trial.expect_vectors(ids, out, dim=768)

It runs inside the user's process and imports torch only as the program already did
(``sys.modules``). A stage costs less than ``torch.profiler.record_function`` when it does not
synchronise, and the event log grows with the distinct stages, not the calls (``stages``;
measured in docs/performance.md); everything else happens once, when the attempt ends.
docs/trial.md is the guide; the attempt folder's format is ``schema/attempt-v1.json``.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
import traceback
import weakref
from collections.abc import Iterable, Iterator, Mapping
from threading import get_ident
from types import TracebackType
from typing import Any, Literal

from .. import terminal
from ..at_fork import copies_told
from ..package_data import TOOL_NAME, VERSION
from ..report.redact import (
    Redactor,
    argument_secrets,
    hide_secret_keys,
    secret_key_values,
)
from ..safe_files import PRIVATE_MODE, Folder
from ..worker.protocol import bounded, encode_number
from . import contracts, folder, notebook, oom, signals, stage_summary
from .accessors import judge_document
from .log import EventLog
from .memory import Accelerator, AllocatorHistory, CpuMemory, Devices
from .pass_loop import PassLoop, Step
from .signals import Terminated, signals_held
from .stages import Recorder, Stage, memory_reading, timings_of

# Terminated: the name trial/__init__ exports; timings_of: where trial/compare.py reads it.
__all__ = ["Terminated", "Trial", "timings_of"]

# How an attempt, and each of its stages, ended. ``incomplete`` is no longer written (a pass the
# program stopped asking for is not a missing pass: ``passes.left_at_pass`` says where it
# stopped); it stays for the attempts written before.
Status = Literal["completed", "failed", "interrupted", "incomplete"]
MAX_TENSORS = 200  # descriptions kept in attempt.json and events.jsonl (a loop that describes
# every batch): the rest are counted
DATA_LOADING = "data_loading"  # where an error of trial.passes(iterable)'s fetch is placed
# Stage records kept in attempt.json: each name's first, failed and slowest calls.
MAX_STAGE_RECORDS = 10_000
# Memory held from the attempt's start and given back when the work is done, so that the trial's
# own end (attempt.json, written a piece at a time) has room where the program left none.
RESERVE_BYTES = 2**20


class Trial:
    """One attempt of the program: stages, passes, memory, timings, contracts, first error.

    ``root``: the folder that receives the attempt folders (``KERNODECK_RUN_DIR``, when set,
    wins). ``params``: the attempt's parameters (batch size, input length...), kept as given.
    ``memory_history``: on CUDA, record the allocator's history and save a snapshot for
    PyTorch's memory visualiser when the attempt runs out of memory. When the attempt ends, one
    line on stderr says how (status, first error or failed contract, the attempt folder);
    ``summary=True`` adds a table of the stages (``summary()`` returns it at any time).
    ``root/latest`` names the newest attempt; ``keep=N`` keeps only the newest N attempt
    folders under ``root`` (a notebook re-run all day leaves N, not hundreds); under
    ``KERNODECK_RUN_DIR``, also the oldest failed one of each cause (``folder.prune``).
    ``nvtx``: on CUDA, each stage is also an NVTX range (Nsight Systems).
    """

    def __init__(self, root: str | os.PathLike[str] = "runs",
                 params: Mapping[str, Any] | None = None, *, memory_history: bool = False,
                 summary: bool = False, keep: int | None = None, nvtx: bool = False) -> None:
        self.root = folder.root_folder(root)
        self.params = dict(params or {})
        self.memory_history = memory_history
        self.print_summary = summary
        if keep is not None and (isinstance(keep, bool) or not isinstance(keep, int) or keep < 1):
            raise ValueError(f"Trial(keep=...) takes a count of at least 1, or None; not {keep!r}")
        self.keep = keep  # the attempt folders kept under root, this one included (None: all)
        self.attempt_id: str | None = None
        self.folder: str | None = None
        self._dir: Folder | None = None  # the attempt folder, open: every file relative to it
        self._log: EventLog | None = None
        self._redactor: Redactor | None = None
        self._cpu = CpuMemory()
        self._devices = Devices()
        self._recorder = Recorder(self._cpu, self._devices, nvtx=nvtx)
        self._reserve: bytes | None = None
        self._environment: tuple[dict[str, Any], dict[str, Any]] | None = None
        self._first_error: dict[str, Any] | None = None
        self._completed_at_error = -1  # the stages completed when the first error came
        self._error: BaseException | None = None
        self._oom: dict[str, Any] | None = None
        self._loop = PassLoop(self._recorder, self._write, self._memory_now, self._kept_now)
        self._tensors: list[dict[str, Any]] = []
        self._tensors_described = 0
        self._contracts = contracts.Kept()
        self._unchecked: list[dict[str, str]] = []  # contracts nothing was there to check
        self._terminated = False  # SIGTERM came: what fails after it is its consequence
        self._child = False  # a forked child's copy of the attempt (``_forked``)
        self._signal: dict[str, Any] | None = None  # the SIGTERM: the stage open, the pass
        self._output: dict[str, Any] = {}
        self._history = AllocatorHistory(memory_history)
        self._previous_sigterm: Any = None
        self._started_at = ""
        self._ended: dict[str, Any] | None = None  # attempt.json's document, once written
        self._interrupt: BaseException | None = None  # a stage's KeyboardInterrupt or SIGTERM
        self._cells = notebook.Cells()  # start() under IPython: its cells
        self._command: list[str] = []

    # -- the attempt -------------------------------------------------------------------------------

    def __enter__(self) -> Trial:
        if self._log is not None or self._started_at:
            raise RuntimeError("a Trial is one attempt: it is entered once")
        _ENTERED.add(self)  # before its first file: a child forked from here on is a copy
        self._redactor = Redactor.for_this_machine(
            secrets=[*argument_secrets(sys.argv), *secret_key_values(self.params)])
        self.attempt_id, self._dir = folder.create(self.root, self.keep)
        self.folder = self._dir.path
        self._log = EventLog(self._dir)
        self._cpu.open()
        self._recorder.attach(self._log, self._dir)
        self._recorder.failed = self._stage_failed
        if self.memory_history:
            self._recorder.before = self._history.start
        self._started_at = _now()
        from .facts import command_line

        self._command = command_line(self._redactor)
        torch = sys.modules.get("torch")
        self._log.write("attempt_started", format=folder.FORMAT, version=folder.VERSION,
                        attempt_id=self.attempt_id, command=self._command,
                        params=self._jsonable(hide_secret_keys(self.params)),
                        python_version=sys.version.split()[0],
                        torch_version=_torch_version(torch))
        self._recorder.owner = get_ident()
        signals.OPEN.append(self)
        self._previous_sigterm = signals.catch_sigterm()
        self._history.start(torch)
        self._prepare_end(torch)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> Literal[False]:
        try:
            self._finish(exc)
        except Exception as error:  # the toolkit never replaces the program's own outcome
            sys.stderr.write(f"{TOOL_NAME}: the attempt could not be closed "
                             f"({type(error).__name__}); events.jsonl holds what happened\n")
        return False  # the exception, if any, goes on to the program

    def start(self) -> Trial:
        """Begin the attempt without a ``with`` block, so that it spans a notebook's cells;
        ``end()`` ends it. An error is recorded when raised in a stage (or given to ``end``).
        Under IPython, a cell stopped by an interrupt or SIGTERM ends it (``notebook.Cells``)."""
        self._cells.watch(self.__enter__().__exit__, lambda: self._log is not None,
                          lambda: self._terminated)
        return self

    def end(self, error: BaseException | None = None) -> None:
        """End an attempt begun with ``start()``: completed, or failed with ``error``. The
        attempt is then over: every later use of the trial is refused.

        A stage whose error left its cell (no stage completed since) fails the attempt even
        without ``error``: in a notebook the error stopped the cell, not the attempt, and the
        next cell's ``end()`` must not call it completed, nor after an interrupted stage."""
        self._refuse_unless_open("end")
        error = self._interrupt if error is None else error
        if error is None and self._error is not None \
                and self._completed_calls() == self._completed_at_error:
            error = self._error
        self.__exit__(None if error is None else type(error), error, None)

    def _completed_calls(self) -> int:
        return sum(stats.completed for stats in self._recorder.stats.values())

    def stage(self, name: str, sync: bool = False) -> Stage:
        """A stage of the program: timed, its memory read (its own CPU peak; the device's),
        counted and summarised by name (``stages``).

        ``sync=True`` synchronises the devices in use (CUDA, ROCm, XPU, MPS) at both ends, so
        the duration includes the device's work; the CPU has nothing to synchronise.
        """
        if self._log is None:
            self._refuse_unless_open("stage")
        if get_ident() != self._recorder.owner:
            self._refuse_other_thread("stage")
        stats = self._recorder.stats.get(name)
        if stats is None:
            shown = self._text(str(name))
            stats = self._recorder.named(name, shown, json.dumps(shown, ensure_ascii=False))
        return Stage(self._recorder, stats, sync)

    def passes(self, count: int | Iterable[Any]) -> Iterator[Any]:
        """Yield the pass indexes (0, 1, ...) of ``count`` passes, or each item of an iterable
        (a DataLoader's batches, its fetch timed with its pass: an error while fetching is
        placed in that pass, stage ``data_loading``): each pass is timed and its memory read at
        its end; the report keeps pass 0 apart from the following ones. What is kept does not
        grow with the passes (``passes``). A loop the program leaves (``break``, ``islice``, a
        ``zip`` with a shorter loader) ends the passes where it left them, the attempt
        unharmed: the pass it was in counts as completed when a stage of it ran (the evidence
        that its work did; an error raised in it fails it), and ``passes.left_at_pass`` names
        it."""
        self._pass_asked()
        if isinstance(count, bool) or not isinstance(count, (int, Iterable)):
            raise TypeError(f"passes() takes a count or an iterable (a DataLoader), not "
                            f"{type(count).__name__}")
        if isinstance(count, int):
            if count < 1:
                raise ValueError("passes(count) needs a count of at least 1")
            return self._loop.run(iter(range(count)), count, indexes=True,
                                  fetch_failed=self._fetch_failed, ended=self._has_ended)
        return self._loop.run(iter(count), _length(count), indexes=False,
                              fetch_failed=self._fetch_failed, ended=self._has_ended)

    def _has_ended(self) -> bool:
        return self._log is None

    def _step(self, name: str) -> Step:
        """A pass and its one stage ``name``, begun and ended as one, again and again
        (``pass_loop.Step``): an adapter's training step."""
        return Step(self._loop, self.stage(name), self._pass_asked)

    def _pass_asked(self) -> None:
        """A pass is asked for: refused outside the attempt or from another thread; the pass the
        program left before it was whole (the program went on)."""
        if self._log is None:
            self._refuse_unless_open("passes")
        if get_ident() != self._recorder.owner:
            self._refuse_other_thread("passes")
        if self._loop.left is not None:
            self._resolve_left(failed=False)

    def describe(self, **values: Any) -> str:
        """Record the dtype, shape and device of tensors (never their values); return the
        description, one line per name: ``input_ids: int64 8x512 cuda:0``."""
        self._refuse_unless_open("describe")
        torch = sys.modules.get("torch")
        described = [contracts.describe_value(self._text(name), value, torch)
                     for name, value in values.items()]
        where = {"stage": self._open[-1] if self._open else None, "pass_index": self._pass}
        for item in described:
            item.update(where)
            if len(self._tensors) < MAX_TENSORS:
                self._tensors.append(item)
        self._tensors_described += len(described)
        if self._tensors_described - len(described) < MAX_TENSORS:
            self._write("tensors_described", tensors=described, **where)
        return "\n".join(item["text"] for item in described)

    def expect(self, name: str, ok: bool, detail: str = "") -> bool:
        """A contract of the program's own (a business metric): ``ok`` says if it holds."""
        return self._contract({"name": self._text(name), "passed": bool(ok),
                               "detail": self._text(str(detail))})

    def expect_vectors(self, ids: Iterable[Any], vectors: Any, dim: int, *,
                       output_ids: Iterable[Any] | None = None) -> bool:
        """One finite vector of dimension ``dim`` per input id (see ``contracts.vectors``)."""
        found, obtained = contracts.vectors(ids, vectors, dim, sys.modules.get("torch"),
                                            output_ids)
        self._output["vectors"] = obtained
        return self._contract(found)

    def expect_training_step(self, loss: Any, params_before: Mapping[str, Any],
                             params_after: Mapping[str, Any], *,
                             checkpoint: str | os.PathLike[str] | None = None) -> bool:
        """A finite, usable loss; every parameter named in ``params_before`` changed in
        ``params_after``; the checkpoint saved and loadable (see ``contracts.training_step``)."""
        found, obtained = contracts.training_step(loss, params_before, params_after, checkpoint,
                                                  sys.modules.get("torch"))
        self._output["training_step"] = obtained
        return self._contract(found)

    def _no_evidence(self, name: str, detail: str) -> None:
        """Contract ``name`` had nothing to check (an adapter saw no training loss): no pass,
        ``inconclusive`` (the judge's ``contracts_unchecked``)."""
        self._refuse_unless_open("expect")
        item = {"name": self._text(name), "detail": self._text(detail)}
        self._unchecked.append(item)
        self._write("contract_unchecked", **item)

    # -- what a stage reports ----------------------------------------------------------------------

    def _stage_failed(self, exc: BaseException, stage: str) -> dict[str, Any]:
        """A stage failed: its error kept when it is the first; the fields its event carries."""
        if isinstance(exc, (KeyboardInterrupt, Terminated)) and self._interrupt is None:
            self._interrupt = exc  # the attempt was interrupted (``end``)
        self._failed(exc, stage)
        return self._error_fields(exc)

    def _error_fields(self, exc: BaseException) -> dict[str, Any]:
        """An error (type, redacted message) and, for the first one, its out-of-memory block,
        as the events carry them."""
        if exc is self._error and self._first_error is not None:
            error = {"type": self._first_error["type"], "message": self._first_error["message"]}
            return {"error": error, "oom": self._oom}
        return {"error": {"type": type(exc).__name__, "message": self._text(bounded(str(exc)))},
                "oom": None}

    def _memory(self, devices: list[Accelerator]) -> dict[str, Any]:
        rss, peak = self._cpu.read()
        return memory_reading(rss, peak, devices)

    def _memory_now(self) -> dict[str, Any]:
        return self._memory(self._devices.in_use(sys.modules.get("torch")))

    def _kept_now(self) -> int | None:
        """The memory a pass keeps: the first device in use's allocated bytes, else the CPU's
        resident set (``CpuMemory.resident``: no peak, a cheaper read)."""
        devices = self._devices.in_use(sys.modules.get("torch"))
        return self._memory(devices)["allocated_bytes"] if devices else self._cpu.resident()

    def _resolve_left(self, failed: bool) -> None:
        """The pass the program left (``PassLoop.resolve_left``)."""
        self._loop.resolve_left(failed, self._terminated)

    def _fetch_failed(self, error: BaseException, index: int) -> None:
        """Fetching pass ``index``'s item raised: its data loading failed (an out-of-memory
        error there is that pass's, in its data-loading phase)."""
        self._recorder.pass_index = None
        if isinstance(error, Exception) and self._log is not None:
            self._failed(error, DATA_LOADING, pass_index=index)

    def _refuse_other_thread(self, use: str) -> None:
        owner = self._recorder.owner
        if owner is not None and get_ident() != owner:
            raise RuntimeError(
                f"Trial.{use}(): a Trial records the thread that began it; another thread's "
                "stages would land in its passes: give each thread its own Trial")

    def _failed(self, exc: BaseException, stage: str | None, *,
                pass_index: int | None = None) -> None:
        """Keep the first error: its type and redacted message, its trace (locally), and, for
        an out-of-memory failure, its phase, sizes and the allocator's snapshot. An error that
        follows a SIGTERM (a DataLoader worker killed by the same signal) is its consequence,
        not the program's failure."""
        if not isinstance(exc, Exception) or self._terminated or self._child:
            return  # KeyboardInterrupt, Terminated: no error of the program; a forked copy's
        loop = self._loop
        if pass_index is None:
            pass_index = self._pass if self._pass is not None else loop.left_pass
        if loop.left is not None and loop.left[0] == pass_index:
            self._resolve_left(failed=True)
        if pass_index is not None:
            loop.failed(pass_index, stage, type(exc).__name__)
        if self._error is not None:
            return
        self._error = exc
        self._completed_at_error = self._completed_calls()
        self._first_error = {"stage": stage, "pass_index": pass_index,
                             "type": type(exc).__name__, "message": self._text(bounded(str(exc)))}
        self._write_trace(exc)
        torch = sys.modules.get("torch")
        if oom.is_oom(exc, torch):
            phase = oom.phase_of(pass_index, loop.started)
            memory, indexes = loop.record.memory_after_pass()
            self._oom = oom.describe(exc, phase, pass_index if phase != "loading" else None,
                                     memory, loop.record.growth(), indexes=indexes,
                                     data_loading=stage == DATA_LOADING)
            if self._dir is not None:
                self._history.save(self._dir, torch)
        if stage is None or stage == DATA_LOADING:  # a failed stage's own event carries it
            self._write("error", stage=stage, pass_index=pass_index, **self._error_fields(exc))

    def _write_trace(self, exc: BaseException) -> None:
        if self._dir is None:
            return
        text = folder.TRACE_HEADER + "".join(
            traceback.format_exception(type(exc), exc, exc.__traceback__))
        with contextlib.suppress(OSError):  # attempt.json still says what failed
            folder.write_new(self._dir, folder.TRACE_FILE, text.encode("utf-8", "replace"),
                             PRIVATE_MODE)

    # -- the end -----------------------------------------------------------------------------------

    def _finish(self, exc: BaseException | None) -> None:
        log = self._log
        if log is None or self._dir is None:
            return
        if self._child:  # a forked child's copy: its parent ends the attempt (``_forked``)
            self._log = None
            self._cells.close()
            return
        signals.release_sigterm(self._previous_sigterm)
        self._cells.close()
        with signals_held(drop_sigchld=lambda: self._terminated):
            self._end(exc, log, self._dir)
        notebook.after_terminated(exc, Terminated)

    def _end(self, exc: BaseException | None, log: EventLog, attempt_folder: Folder) -> None:
        """The end, with SIGTERM, SIGINT, SIGHUP and a Python SIGCHLD handler (PyTorch's, that
        raises when a DataLoader worker dies) held until attempt.json is written."""
        if self in signals.OPEN:
            signals.OPEN.remove(self)
        recorder = self._recorder
        if recorder.pass_index is not None:  # a pass still running: the program ended in it
            self._resolve_left(failed=False)
            self._loop.leave(recorder.pass_index, self._loop.start)
        if exc is not None and exc is not self._error:
            self._failed(exc, None)  # raised outside every stage
        self._resolve_left(failed=exc is not None)
        status: Status = ("interrupted" if self._terminated or (
            exc is not None and not isinstance(exc, Exception))
            else "failed" if exc is not None else "completed")
        # The program's work is over: said first, so that an end killed from here on (the OOM
        # killer during the teardown) is known as one after the work, never as a pass's.
        # With each stage's summary and the passes': the log alone then says all of them.
        if self._signal is not None:
            self._write("terminated", **self._signal)
        self._write("passes_summary", **self._loop.record.summary())
        self._write("work_done", status=status, last_completed_stage=self._last_completed,
                    contracts_passed=self._contracts.passed(),
                    stage_summary=self._stage_summary())
        self._reserve = None  # its room is the teardown's
        self._history.stop()
        document = self._document(status)
        written = False
        try:
            folder.write_json(attempt_folder, folder.ATTEMPT_FILE, document)
            written = True
        except OSError as error:
            sys.stderr.write(f"{TOOL_NAME}: the attempt's attempt.json could not be written "
                             f"({type(error).__name__}); events.jsonl holds what happened\n")
        self._write("attempt_ended", status=status,
                    last_completed_stage=self._last_completed,
                    contracts_passed=document["contracts_passed"],
                    peak_memory_bytes=document["peak_memory_bytes"])
        self._recorder.close(attempt_folder if written else None)  # the beacon, if needed
        log.close()
        self._log = None  # the attempt is over: what uses it now is refused
        self._cpu.close()
        attempt_folder.close()
        self._ended = document
        with contextlib.suppress(Exception):  # stderr closed: the folder still says it all
            ending = terminal.one_line(self._ending_line(document)) + "\n"  # the program's text
            if not notebook.show(self._repr_markdown_(), ending + self.summary()):  # its cell
                terminal.write(sys.stderr, ending + (self.summary() if self.print_summary else ""))

    @property
    def pass_index(self) -> int | None:
        """The pass running now (``passes``), None outside the passes."""
        return self._recorder.pass_index

    @property
    def ended_by_sigterm(self) -> bool:
        """Whether SIGTERM came during the attempt (it ends ``interrupted``)."""
        return self._terminated

    def terminated(self) -> None:
        """SIGTERM arrived (``_terminate``, or an adapter told of it): the stage open now (the
        innermost, or none) is the one it came in, whatever ran before it."""
        if self._terminated:
            return
        self._terminated = True
        opened = self._recorder.open
        self._signal = {"signal": "SIGTERM", "stage": opened[-1].name if opened else None,
                        "pass_index": self._recorder.pass_index}
        self._cells.sigterm()  # a kernel between cells: the attempt ends now

    def _forked(self) -> None:
        """In a child forked once the attempt had begun (a pool's worker, the program's own
        ``os.fork``, from any thread; ``_after_fork_in_child``): the attempt is the parent's,
        which alone writes and ends it. This copy writes nothing to its folder, its log or
        stderr, its end included (a child that left the ``with`` block would otherwise have
        written ``attempt.json`` for an attempt still running, or killed later); its stages are
        its own (``Recorder.forked``). A Trial the child enters is its own attempt."""
        self._child = True
        if self._log is not None:
            self._log.forked()

    def _repr_markdown_(self) -> str:
        """The attempt's summary, which a notebook displays: ``trial`` as a cell's last line."""
        shown = self._text(os.path.join(self.root, self.attempt_id or ""))
        return notebook.markdown(self._ended or {**self._document("completed"),
                                                 "status": "running"}, shown)

    def _prepare_end(self, torch: Any) -> None:
        """What the end needs, made now while memory is there: the modules it uses loaded, the
        environment's facts read once (read again at the end, these kept if that fails), and
        ``RESERVE_BYTES`` held (every page touched) until the work is done."""
        if torch is not None:
            with contextlib.suppress(Exception):
                from .facts import environment

                self._environment = environment(torch, self._redactor or Redactor())
        self._reserve = b"\x5a" * RESERVE_BYTES

    def verdict_line(self) -> str | None:
        """The end line's words (the judge's verdict included) without the folder: what the
        adapters' ``summary.txt`` says above its table; None until the attempt has ended."""
        if self._ended is None:
            return None
        return terminal.one_line(self._ending_line(self._ended, with_folder=False))

    def _ending_line(self, document: Mapping[str, Any], with_folder: bool = True) -> str:
        """``kernodeck-diagnostic: attempt failed; first error in stage compute: ValueError:
        ...; folder runs/<id>``: how the attempt ended, in one line."""
        parts = [f"{TOOL_NAME}: attempt {document['status']}"]
        judged = judge_document(document)  # the one judge: a caught stage failure is no pass
        untold = [reason.text for reason in judged.reasons if reason.kind != "contracts_failed"]
        if document["status"] == "completed" and untold:  # a failed contract is said below
            parts[0] += f", judged {judged.outcome}: " + "; ".join(untold[:3])
        error = self._first_error
        if error is not None:
            where = f" in stage {error['stage']}" if error.get("stage") else ""
            message = f": {error['message']}" if error["message"] else ""
            parts.append(f"first error{where}: {error['type']}{message}")
        if self._signal is not None:
            where = self._signal["stage"]
            parts.append("SIGTERM " + (f"in stage {where}" if where is not None
                                       else "outside every stage"))
        passes = self._loop.record
        if passes.left_at is not None and document["status"] == "completed":
            parts.append(f"{passes.completed} pass(es) completed; the program stopped asking "
                         f"for passes at pass {passes.left_at}")
        if passes.first_failed is not None and passes.first_failed["index"] != (
                error or {}).get("pass_index"):
            parts.append(f"first failing pass {passes.first_failed['index']}")
        parts += self._contracts.told()
        if with_folder:
            shown = os.path.join(self.root, self.attempt_id or "")
            parts.append(f"folder {self._text(shown)}")
        return "; ".join(" ".join(part.split()) for part in parts)

    def summary(self) -> str:
        """A table of the stages so far (``stage_summary``): each name's calls, failures, first
        call, total, mean, p95 and slowest time, peak memory, in the order the names first ran."""
        return stage_summary.table(stage_summary.rows(
            {"stages": self._stage_records(), "stage_summary": self._stage_summary()}))

    def _stage_summary(self) -> list[dict[str, Any]]:
        return self._recorder.summaries()

    def _document(self, status: Status) -> dict[str, Any]:
        from .facts import environment

        torch = sys.modules.get("torch")
        try:
            runtime, pytorch = environment(torch, self._redactor or Redactor())
        except Exception:  # facts are a help, never a reason to lose the attempt
            runtime, pytorch = self._environment or ({}, {})
        return {
            "format": folder.FORMAT,
            "version": folder.VERSION,
            "attempt_id": self.attempt_id,
            "tool": {"name": TOOL_NAME, "version": VERSION},
            "started_at": self._started_at,
            "ended_at": _now(),
            "status": status,
            "last_completed_stage": self._last_completed,
            "last_started_stage": self._recorder.last_started,
            "first_error": self._first_error,
            "oom": self._oom,
            "contracts": self._contracts.results,
            "contracts_passed": self._contracts.passed(),
            "contracts_summary": self._contracts.summary(),
            "contracts_unchecked": self._unchecked,
            "peak_memory_bytes": self._peak(),
            "command": self._command,
            "params": self._jsonable(hide_secret_keys(self.params)),
            "runtime": runtime,
            "pytorch": pytorch,
            "stages": self._stage_records(),
            "stage_summary": self._stage_summary(),
            "passes": self._passes_summary(),
            "timings": self._timings(),
            "tensors": self._tensors,
            "tensors_described": self._tensors_described,
            "signal": self._signal,
            "output": self._output,
            "memory_history": self._history.block,
            "trace": folder.TRACE_FILE if self._first_error is not None
            and self._dir is not None and self._dir.lstat(folder.TRACE_FILE) is not None
            else None,
        }

    def _peak(self) -> int | None:
        return self._recorder.peak()

    def _stage_records(self) -> list[dict[str, Any]]:
        """Each stage name's first, failed and slowest calls (``stages``), in the order they
        ran, at most MAX_STAGE_RECORDS; ``stage_summary`` counts every call."""
        return [{key: value for key, value in record.items() if key != "occurrence_sequence"}
                for record in self._recorder.records()[:MAX_STAGE_RECORDS]]

    def _passes_summary(self) -> dict[str, Any]:
        return self._loop.record.document()

    def _timings(self) -> list[dict[str, Any]]:
        return self._recorder.timings()

    # What the stages share with the rest of the attempt (the recorder holds it).

    @property
    def _pass(self) -> int | None:
        return self._recorder.pass_index

    @_pass.setter
    def _pass(self, index: int | None) -> None:
        self._recorder.pass_index = index

    @property
    def _open(self) -> list[str]:
        return [stage.name for stage in self._recorder.open]

    @property
    def _last_completed(self) -> str | None:
        return self._recorder.last_completed

    # -- helpers -----------------------------------------------------------------------------------

    def _refuse_unless_open(self, use: str) -> None:
        """Refuse to record anything outside the attempt: nothing may be silently dropped."""
        if self._log is not None:
            return
        if self._started_at:
            how = {"interrupted": "ended interrupted (the stop button, Ctrl-C or SIGTERM)"}.get(
                str((self._ended or {}).get("status")), "has ended (its with block or trial.end())")
            raise RuntimeError(f"Trial.{use}(): this attempt {how}; start a new Trial for "
                               "another attempt")
        raise RuntimeError(f"Trial.{use}(): the attempt has not begun: use it inside "
                           "`with Trial(...) as trial:`, or after trial.start()")

    def _contract(self, found: dict[str, Any]) -> bool:
        """A contract's result, counted; kept and written when ``contracts.Kept`` keeps it."""
        self._refuse_unless_open("expect")
        if not self._contracts.add(found):
            return bool(found["passed"])
        for problem in found.get("problems", ()):
            if "ids" in problem:
                problem["ids"] = [self._text(identifier) for identifier in problem["ids"]]
        found["detail"] = self._text(found["detail"])
        self._write("contract_checked", name=found["name"], passed=found["passed"],
                    detail=found["detail"])
        return bool(found["passed"])

    def _write(self, event: str, **fields: Any) -> None:
        if self._log is not None and not self._child:
            self._log.write(event, **fields)

    def _text(self, text: str) -> str:
        return text if self._redactor is None else self._redactor.text(text)

    def _jsonable(self, value: Any) -> Any:
        """A value as JSON holds it (non-finite numbers and other objects as text), redacted."""
        if isinstance(value, Mapping):
            return {self._text(str(key)): self._jsonable(item) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            return [self._jsonable(item) for item in value]
        if isinstance(value, float):
            return encode_number(value)
        if value is None or isinstance(value, (bool, int)):
            return value
        return self._text(str(value))


def _length(items: Iterable[Any]) -> int | None:
    """How many items an iterable holds, when it says (a DataLoader, a list), else None."""
    try:
        return len(items)  # type: ignore[arg-type]
    except Exception:  # no len(), or one that fails (an IterableDataset's DataLoader)
        return None


def _torch_version(torch: Any) -> str | None:
    version = getattr(torch, "__version__", None) if torch is not None else None
    return str(version) if version is not None else None


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


# Every Trial entered in this process, ended or not: in a child forked meanwhile, each is its
# parent's attempt (``Trial._forked``); one the child enters later is the child's own.
_ENTERED: weakref.WeakSet[Trial] = copies_told("_forked")

"""What a notebook shows of an attempt, and what a kernel changes for one.

An attempt's summary as markdown (``markdown``): the status, the last stage, the first error,
the out-of-memory phase and its advice, the contracts, a table of the stages and the folder, from
an attempt document (``attempt.json``, or one rebuilt from ``events.jsonl`` for an attempt that
was killed), every value escaped (``report/markup.py``). A notebook shows it when a ``Trial``
ends (``Trial._repr_markdown_``) and for an attempt loaded from Python (``compare.Attempt``).

In a Jupyter kernel a SIGTERM that arrives during an attempt ends it as ``interrupted``, and
IPython would then catch the ``SystemExit`` the trial raised for it and keep the kernel running:
``after_terminated`` delivers the signal again once the attempt is written, so the kernel stops
as it would have without the trial (a script exits with status 143 the same way).

An attempt begun with ``Trial.start()`` spans cells, and IPython catches what stops a cell (the
stop button's ``KeyboardInterrupt``, SIGTERM's ``SystemExit``): ``Cells`` reads each cell's
error, so that such a cell ends the attempt, ``interrupted`` and written whole.
A SIGTERM that comes between cells (the kernel idle, none of the trial's code running) ends the
attempt at once, from the handler, then the kernel.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Callable, Mapping
from typing import Any

from ..facts.caller import in_kernel
from ..report.markup import code, escape, table
from . import stage_summary
from .accessors import judge_document
from .signals import Terminated


def markdown(document: Mapping[str, Any], folder: str) -> str:
    """The attempt's summary as markdown: what a notebook displays."""
    lines = [f"**kernodeck-diagnostic: attempt {escape(document.get('status'))}** "
             f"(folder {code(folder)})", ""]
    if document.get("status") != "running":  # the one judge's outcome, once it ended
        judged = judge_document(document)
        lines.append(f"- judged {code(judged.outcome)}"
                     + (f": {escape(judged.explain())}" if judged.explain() else ""))
    lines.append(f"- last completed stage: {_value(document.get('last_completed_stage'))}; "
                 f"last started: {_value(document.get('last_started_stage'))}")
    error = document.get("first_error")
    if isinstance(error, Mapping):
        where = f" in stage {code(error.get('stage'))}" if error.get("stage") else ""
        if isinstance(error.get("pass_index"), int):
            where += f", pass {error['pass_index']}"
        lines.append(f"- first error{where}: {escape(error.get('type'))}: "
                     f"{escape(error.get('message') or '')}")
    oom = document.get("oom")
    if isinstance(oom, Mapping):
        lines.append(f"- out of memory, phase {code(oom.get('phase'))}: "
                     f"{escape(oom.get('advice') or '')}")
    for contract in document.get("contracts") or []:
        if isinstance(contract, Mapping):
            mark = "passed" if contract.get("passed") else "**failed**"
            lines.append(f"- contract {code(contract.get('name'))} {mark}: "
                         f"{escape(contract.get('detail') or '')}")
    rows = stage_summary.cells(stage_summary.rows(document))
    if rows:
        lines += ["", *table([stage_summary.COLUMNS, *[tuple(escape(cell) for cell in row)
                                                       for row in rows]])]
    return "\n".join(lines) + "\n"


def _value(value: Any) -> str:
    return "none" if value is None else code(value)


def show(text: str, plain: str) -> bool:
    """Display ``text`` (markdown) in the notebook whose kernel runs this, as a cell's output,
    with ``plain`` as its plain-text form (what a console, ``nbconvert --to script`` or a front
    end without markdown shows: text, not markdown's escapes); False outside a kernel (the
    caller prints its one line instead)."""
    if not in_kernel():
        return False
    from importlib import import_module

    display = import_module("IPython.display").display  # the kernel's IPython, loaded already
    display({"text/markdown": text, "text/plain": plain}, raw=True)
    return True


def after_each_cell(told: Callable[[BaseException | None], None],
                    starting: Callable[[], None]) -> Callable[[], None] | None:
    """Under IPython (a kernel, or its terminal): ``told(error)`` after each cell, with the
    error that stopped it (None if none), and ``starting()`` before each. What undoes it, or
    None outside IPython."""
    module = sys.modules.get("IPython")
    shell = getattr(module, "get_ipython", lambda: None)() if module is not None else None
    events = getattr(shell, "events", None)
    if events is None:
        return None

    def before(info: Any) -> None:
        starting()

    def after(result: Any) -> None:
        told(getattr(result, "error_in_exec", None))

    events.register("pre_run_cell", before)
    events.register("post_run_cell", after)

    def forget() -> None:
        events.unregister("pre_run_cell", before)
        events.unregister("post_run_cell", after)

    return forget


class Cells:
    """The cells of an attempt begun with ``Trial.start()`` under IPython, which catches what
    stops a cell: a cell stopped by an interrupt or SIGTERM (its ``Terminated``, or whatever
    the program raised once SIGTERM came) ends the attempt (``end``, as ``__exit__``) when the
    cell ends; a SIGTERM between cells (the kernel idle: no code of the program's or the
    trial's runs, and what the handler raises would stop the kernel's own loop) ends it at once
    (``sigterm``). Idle until ``watch``: a ``with`` block ends its attempt itself."""

    def __init__(self) -> None:
        self.between = False  # no cell runs now
        self._end: Callable[..., object] | None = None
        self._open: Callable[[], bool] = lambda: False
        self._terminated: Callable[[], bool] = lambda: False
        self._forget: Callable[[], None] | None = None

    def watch(self, end: Callable[..., object], is_open: Callable[[], bool],
              terminated: Callable[[], bool]) -> None:
        self._end, self._open, self._terminated = end, is_open, terminated
        self._forget = after_each_cell(self._ended, self._starts)

    def _starts(self) -> None:
        self.between = False

    def _ended(self, error: BaseException | None) -> None:
        self.between = True
        if not self._open():
            return
        if not isinstance(error, (KeyboardInterrupt, Terminated)):
            if not self._terminated():
                return
            error = Terminated()  # SIGTERM came, and what it raised was caught in the cell
        if self._end is not None:
            self._end(type(error), error, None)

    def sigterm(self) -> None:
        """SIGTERM came (from its handler): between cells, the attempt ends now."""
        if self.between and self._open() and self._end is not None:
            self.between = False
            self._end(Terminated, Terminated(), None)

    def close(self) -> None:
        """The attempt ended: IPython no longer tells of its cells."""
        forget, self._forget = self._forget, None
        if forget is not None:
            with contextlib.suppress(Exception):
                forget()


def after_terminated(exc: BaseException | None, terminated: type[BaseException]) -> None:
    """In a kernel, once an attempt ended by SIGTERM is written: SIGTERM again, with the
    default action restored (``Trial._release_sigterm``), so the kernel ends as asked."""
    if isinstance(exc, terminated) and in_kernel() \
            and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        os.kill(os.getpid(), signal.SIGTERM)

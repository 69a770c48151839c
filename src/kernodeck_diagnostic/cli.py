"""The command line's entry point: picks the command the arguments name and runs it.

``kernodeck-diagnostic compare ...``, ``summarize ...``, ``ramp ...`` and ``resume-check ...`` run
those commands; any other arguments are the check's (``commands/check.py``), which says a first
word that is no option is an unknown command ("did you mean summarize?"). Every command is a
module of ``commands`` with ``main(argv) -> int`` built on ``commands/runner.py``, so all of them
treat usage errors, ``--debug``, signals and exit statuses alike. A command's module is imported
only when it runs: the check's start-up pays for nothing else (docs/performance.md).
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable, Sequence

from .commands import SUBCOMMANDS

# Not typing's: it would lengthen the path to the worker's start (docs/performance.md).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn

CHECK = "commands.check"
__all__ = ["CHECK", "SUBCOMMANDS", "entry", "main", "may_be_a_check"]


def entry() -> NoReturn:
    """The console script's and the zipapp's entry point: exit with the command's status.

    First of all, the check's worker is started (``supervision/start.py``): its interpreter
    starts while this one imports what reading the command line needs, and reads it.
    """
    discard: Callable[[], None] | None = None
    if may_be_a_check(sys.argv[1:]):  # the other commands never load what starts a worker
        from .supervision.start import discard_early, start_early

        start_early()
        discard = discard_early
    try:
        from .commands.runner import InterruptOnSignals

        InterruptOnSignals.process_ends_after = True
        status = main()
    finally:
        if discard is not None:
            discard()
    # Nothing of the front runs after this. The interpreter's teardown collects its garbage
    # again and again while it unloads the modules; objects frozen out of the collector's reach
    # are only released, never traversed (19 ms → 7 ms here: docs/performance.md).
    gc.freeze()
    end(status)


def end(status: int) -> NoReturn:
    """End this process with ``status`` as the interpreter would, without its teardown (the
    modules unloaded one by one: 3-4 ms here, after the verdict) when this process is the
    command itself: every atexit handler run (a coverage tool's, a profiler's), stdout and
    stderr flushed, then ``os._exit``. Anything else is left to the interpreter: a program that
    runs the command in its own process, a thread that is no daemon still running (the
    interpreter waits for it), a stream that cannot be flushed (the interpreter says so)."""
    import atexit
    import os

    from .interpreter import started_as_a_program

    threading = sys.modules.get("threading")
    waits = threading is not None and any(
        not thread.daemon and thread is not threading.main_thread()
        for thread in threading.enumerate())
    run_exit_functions = getattr(atexit, "_run_exitfuncs", None)
    if waits or run_exit_functions is None or not started_as_a_program():
        sys.exit(status)
    run_exit_functions()
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except Exception:
        sys.exit(status)
    os._exit(status)


def may_be_a_check(argv: Sequence[str]) -> bool:
    """Whether ``argv`` may ask for a check in this interpreter, judged before it is parsed: not
    another command, not the help, and no ``--python`` (nor an abbreviation of it, which argparse
    accepts: the check's only option that begins with ``--p``). A wrong guess costs a worker
    started for nothing, or a check that starts its own (``supervision.start.take``)."""
    if argv and argv[0] in SUBCOMMANDS:
        return False
    return not any(word in ("-h", "--help") or word.startswith("--p") for word in argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command ``argv`` names (default: this process's arguments); its exit status."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    module = CHECK
    if arguments and arguments[0] in SUBCOMMANDS:
        module, arguments = SUBCOMMANDS[arguments[0]], arguments[1:]
    import importlib  # here: with warnings, off the path to the worker's start

    command = importlib.import_module(f"{__package__}.{module}")
    return int(command.main(arguments))

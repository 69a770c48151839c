"""Which interpreter is the front's own: the one test of it, for the supervisor (the worker's
options), the API (whether to ask another program for its Python version) and the facts (the
tool's own install); whether this process is the command itself (``started_as_a_program``:
the early worker forked from it, its end without the interpreter's teardown); and why a path
cannot be an interpreter, told without running it (``interpreter_problem``)."""

from __future__ import annotations

import os
import sys

# No typing at run time: this module is on the path to the worker's start (docs/performance.md).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def is_front_interpreter(python: str, front: str | None = None) -> bool:
    """Whether ``python`` starts the interpreter the front runs in (``front``, default
    ``sys.executable``), in the same environment: the one test of it, wherever it is asked.

    The same path, however written (``./venv/bin/python``, ``venv/bin/../bin/python``), or the
    same file under another name in the same folder (``python3``, a link to ``python3.11``).
    The same file in another folder is another interpreter: a virtual environment's
    ``bin/python`` is a link to the Python it was made from, yet starts in the environment of
    the folder it is in (its ``pyvenv.cfg``), with other packages.
    """
    own = sys.executable if front is None else front
    if not own or not python:
        return False
    mine, theirs = os.path.abspath(own), os.path.abspath(python)
    if mine == theirs:
        return True
    try:
        return (os.path.samefile(theirs, mine)
                and os.path.samefile(os.path.dirname(theirs), os.path.dirname(mine)))
    except (OSError, ValueError):  # gone, unreadable, or a name no file can have (NUL)
        return False


def started_as_a_program() -> bool:
    """Whether this process is the command itself, started anew: the console script (its
    ``__main__`` calls ``cli.entry``), ``python -m kernodeck_diagnostic`` or the zipapp (runpy
    runs it as ``__main__``), never a program that runs it in its own process (runpy's
    ``run_path``, a notebook's ``%run``): a fork would carry its state into the worker, and an
    end without the interpreter's teardown would end it too."""
    if not hasattr(sys, "_getframe"):
        return False
    frame = sys._getframe()
    while frame.f_back is not None:
        frame = frame.f_back
    package = __package__
    if frame.f_code.co_name == "_run_module_as_main":  # python -m, or an archive run by path
        return frame.f_locals.get("mod_name") in (package, package + ".__main__", "__main__")
    main = sys.modules.get("__main__")
    entry = getattr(sys.modules.get(package + ".cli"), "entry", None)
    return (frame.f_code.co_name == "<module>" and main is not None
            and frame.f_globals is vars(main) and entry is not None
            and frame.f_globals.get("entry") is entry)


def interpreter_problem(path: str) -> str | None:
    """Why ``path`` cannot be an interpreter, without running it (a message key), or None."""
    if not path:
        return "arg.python.missing"
    if not os.path.lexists(path):
        return "arg.python.no_access" if _denied(os.lstat, path) else "arg.python.missing"
    if not os.path.exists(path):
        # A virtual environment's python is a link to the Python it was made from: removed or
        # upgraded since, the link leads nowhere; or it is there, in a folder this user may not
        # enter (another user's home, mode 0700): permission denied, not gone.
        return "arg.python.no_access" if _denied(os.stat, path) else "arg.python.dangling"
    if os.path.isdir(path):
        return "arg.python.folder"
    if not os.access(path, os.X_OK):
        return "arg.python.not_executable"
    return None


def _denied(stat: Callable[[str], Any], path: str) -> bool:
    """Whether ``stat(path)`` fails for want of permission (a folder on the way this user may not
    search), as opposed to a file that is not there."""
    try:
        stat(path)
    except PermissionError:
        return True
    except (OSError, ValueError):
        return False
    return False

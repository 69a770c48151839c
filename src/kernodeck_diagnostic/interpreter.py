"""Which interpreter is the front's own: the one test of it, for the supervisor (the worker's
options), the API (whether to ask another program for its Python version) and the facts (the
tool's own install)."""

from __future__ import annotations

import os
import sys


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

"""The worker's script: runs the worker module (``stages.py``, copied beside it) from its bytecode.

The supervisor copies this file as ``worker.py`` into the worker's private folder, beside
``stages.py`` and the companions, and runs it by path. A script run by path is compiled on every
run (Python never caches ``__main__``), and the worker module is the largest of the worker's
files: loaded as a module instead, it runs from the bytecode the supervisor shares with it
(``supervision.start.share_bytecode``), or is compiled as before when there is none (the
zipapp, another interpreter). About 6 ms of the check's critical path (docs/performance.md).

The worker module runs as ``_kernodeck_worker_stages``, the name its companions reach it by; it
is given the modules loaded before this file's first line (``STARTUP_MODULES``): what the
interpreter loads before any script, as it does before the user's own. Nothing is imported here
that the interpreter has not loaded already: the import system's own modules are frozen into it.
It runs on Python 3.9+ and depends on nothing but the interpreter.
"""

from __future__ import annotations

import sys

STARTUP_MODULES = frozenset(sys.modules)

import os  # noqa: E402 - loaded already by the interpreter's start-up, like the two below

try:  # the import system's own modules (importlib.util's functions, without importlib.util)
    from _frozen_importlib import module_from_spec
    from _frozen_importlib_external import spec_from_file_location
except ImportError:  # an interpreter without them: importlib.util, loaded now
    from importlib.util import module_from_spec, spec_from_file_location

NAME = "_kernodeck_worker_stages"


def load() -> object:
    """The worker module, loaded from the file ``stages.py`` beside this one."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "stages.py")
    spec = spec_from_file_location(NAME, path)
    if spec is None or spec.loader is None:
        raise ImportError("the worker module is missing")
    module = module_from_spec(spec)
    module.STARTUP_MODULES = STARTUP_MODULES  # type: ignore[attr-defined]
    sys.modules[NAME] = module
    # Its bytecode is not written: it would go into this run's folder, removed at the end, or
    # under a PYTHONPYCACHEPREFIX, where one tree per run would pile up (as for the companions,
    # which stages.companion loads the same way: this file cannot import it, nor can it import
    # this one when it runs alone). Put back for the user's own modules, as they would be
    # imported; a module that fails to load ends the worker here.
    writes = sys.dont_write_bytecode
    sys.dont_write_bytecode = True
    spec.loader.exec_module(module)
    sys.dont_write_bytecode = writes
    return module


if __name__ == "__main__":
    status = load().main()  # type: ignore[attr-defined]
    # Every event is written and flushed: skip the interpreter's teardown (unloading torch takes
    # 0.3-0.5 s), which the front would otherwise wait for with nothing left to learn.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)

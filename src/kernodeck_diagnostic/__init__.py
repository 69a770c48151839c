"""kernodeck-diagnostic: find the first layer of a PyTorch GPU setup that fails.

    >>> import kernodeck_diagnostic
    >>> kernodeck_diagnostic.check(device="cpu")
    <Report CPU_CHECK_PASSED exit=0 stage=compute>
"""

from __future__ import annotations

import os
import sys

# What was loaded, and where imports were searched, when this package began: the interpreter's
# start-up and what the program that imports it did before. A worker forked from the front
# (supervision/start.py) starts from these, as a fresh interpreter starts from its own.
MODULES_AT_START = frozenset(sys.modules)
PATH_AT_START = tuple(sys.path)


def _started_by_python_m() -> bool:
    """Whether ``python -m kernodeck_diagnostic`` is importing this package right now.

    While ``python -m`` imports the package of the module it runs, ``sys.argv[0]`` is ``-m`` and
    runpy's ``_run_module_as_main`` is on the stack with the module's name (CPython 3.9-3.13).
    """
    if sys.argv[:1] != ["-m"] or not hasattr(sys, "_getframe"):
        return False
    frame: FrameType | None = sys._getframe(1)  # annotations are never evaluated here
    while frame is not None:
        if frame.f_code.co_name == "_run_module_as_main":
            return frame.f_locals.get("mod_name") in (__name__, __name__ + ".__main__")
        frame = frame.f_back
    return False


def _leave_the_working_folder() -> str | None:
    """Take the working folder off the front's import path; return it.

    ``python -m`` puts the working folder first: a typing.py, re.py or argparse.py of the user's
    there would replace the standard library's for the tool's own imports, and end the run in a
    traceback. The user's program does see that folder, so the worker is given it back, as from
    every entry point of the command line (``supervisor.user_path0``). Nothing else is touched:
    under -P (PYTHONSAFEPATH) or -I, or when another program imports this package, the import
    path stays as it is.
    """
    if not (_started_by_python_m() and sys.path):
        return None
    try:
        working = os.getcwd()
    except OSError:
        return None
    if not sys.path[0] or os.path.realpath(sys.path[0]) != os.path.realpath(working):
        return None
    return sys.path.pop(0)


# First of all, before any import of the package: see _leave_the_working_folder.
PYTHON_M_PATH0 = _leave_the_working_folder()

# No typing at run time: this module is on the path to the worker's start (docs/performance.md).
TYPE_CHECKING = False

# The package's identity lives beside its files (package_data): the root repeats it for its users.
# (Imported here, after the working folder is off the path: package_data imports only os and sys.)
from .package_data import TOOL_NAME as TOOL_NAME  # noqa: E402
from .package_data import VERSION  # noqa: E402

__version__ = VERSION

__all__ = ["OutputLedger", "Report", "Trial", "__version__", "check"]

if TYPE_CHECKING:
    from types import FrameType
    from typing import Any

    from .api import Report, check
    from .ledger import OutputLedger
    from .trial import Trial


def __getattr__(name: str) -> Any:
    # The API is loaded on first use: the command line, which imports this package first, does
    # not pay for it.
    if name in ("check", "Report"):
        from . import api

        return getattr(api, name)
    if name == "OutputLedger":
        from .ledger import OutputLedger

        return OutputLedger
    if name == "Trial":  # used inside the user's own program (docs/trial.md)
        from .trial import Trial

        return Trial
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    # The lazy attributes too: a notebook's tab completion and dir() list what __getattr__ gives.
    return sorted({*globals(), *__all__})

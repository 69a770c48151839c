"""The program that calls the API, as its next ``import torch`` would see it: its import path, the
torch it already imported, and whether it is a Jupyter kernel (and which notebook).

In a kernel the front runs inside the user's own process: ``sys.path[0]`` is not the program's
folder there (ipykernel puts the notebook's folder, ``''``, just before site-packages), and a
notebook may have changed ``sys.path`` or imported torch long before the check. Read here, in the
caller, and handed to the worker (``supervisor.run_worker``), which imports torch from that same
path and says how the caller's torch compares with the one it found. Nothing here imports torch
or IPython: both are read from ``sys.modules`` when the program has loaded them.
"""

from __future__ import annotations

import os
import sys
from typing import Any

# The recorded command of a kernel whose notebook is not known: never its connection file.
KERNEL_MARKER = "ipykernel"
NOTEBOOK_SUFFIX = ".ipynb"


def import_path() -> list[str]:
    """The caller's ``sys.path``, in order (entries that are no text dropped, as import does)."""
    return [entry for entry in sys.path if isinstance(entry, str)]


def kernel_shell() -> Any:
    """The running IPython kernel's shell, or None outside a Jupyter kernel (a plain IPython
    terminal included: its import path is a script's)."""
    ipython = sys.modules.get("IPython")
    if ipython is None or "ipykernel" not in sys.modules:
        return None
    try:
        shell = ipython.get_ipython()
    except Exception:  # an IPython too broken to answer runs no kernel we can read
        return None
    return shell if getattr(shell, "kernel", None) is not None else None


def in_kernel() -> bool:
    return kernel_shell() is not None


def caller_state() -> dict[str, Any]:
    """What the worker needs to import torch as this program would, and to compare this
    program's state with its own: the import path, whether this is a kernel, the torch this
    process already imported (its file, which stays local, and its version).

    The paths are local: the worker turns the file into a category, the report holds no path.
    """
    torch = sys.modules.get("torch")
    found: dict[str, Any] = {"import_path": import_path(), "kernel": in_kernel(),
                             "torch_file": None, "torch_version": None}
    if torch is not None:
        file = getattr(torch, "__file__", None)
        version = getattr(torch, "__version__", None)
        found["torch_file"] = file if isinstance(file, str) else None
        found["torch_version"] = str(version)[:100] if version is not None else None
    found["torch_imported"] = torch is not None
    return found


def notebook_name() -> str | None:
    """The file name (never its folder) of the notebook this kernel runs, when the front end
    says it: VS Code's ``__vsc_ipynb_file__``, Jupyter Server's ``JPY_SESSION_NAME`` (2.x) or
    ipykernel's ``__session__``; None when none names an ``.ipynb`` file."""
    shell = kernel_shell()
    if shell is None:
        return None
    namespace = getattr(shell, "user_ns", None) or {}
    for candidate in (namespace.get("__vsc_ipynb_file__"), os.environ.get("JPY_SESSION_NAME"),
                      namespace.get("__session__")):
        if isinstance(candidate, str) and candidate.endswith(NOTEBOOK_SUFFIX):
            name = candidate.replace("\\", "/").rsplit("/", 1)[-1]
            if name != NOTEBOOK_SUFFIX:
                return name
    return None


def kernel_command() -> list[str] | None:
    """How a kernel's program is named in a record: ``ipykernel`` and the notebook's file name
    when known. Never ``ipykernel_launcher.py -f <connection file>``: the connection file is a
    per-start secret and differs on every run. None outside a kernel."""
    if not in_kernel():
        return None
    name = notebook_name()
    return [KERNEL_MARKER, name] if name else [KERNEL_MARKER]

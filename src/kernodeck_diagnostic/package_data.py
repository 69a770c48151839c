"""The package's identity (its name and version), and the files shipped inside it (the worker's
source, the report's schema), read from an installed package or from inside the single-file
zipapp alike, and how their bytecode is named."""

from __future__ import annotations

import os
import sys

# The package's identity: its name, as the command and every record say it, and its version (the
# one source: pyproject.toml reads it from here, the root's ``__version__`` repeats it).
TOOL_NAME = "kernodeck-diagnostic"
VERSION = "1.0.0"


def read(*parts: str) -> bytes:
    """The bytes of the package's file ``parts`` (relative to the package's folder)."""
    path = os.path.join(os.path.dirname(__file__), *parts)
    # The package's own loader reads inside the zipapp too, where ``open`` cannot.
    get_data = getattr(globals().get("__loader__"), "get_data", None)
    if get_data is not None:
        return bytes(get_data(path))
    with open(path, "rb") as file:
        return file.read()


def bytecode_name(source: str) -> str:
    """The name this interpreter gives the bytecode of ``source`` ("stages.py") in a
    ``__pycache__`` folder, as ``importlib.util.cache_from_source`` names it (not loaded here: 1-2
    ms on the path to the worker's start): its cache tag and optimisation level. For an
    interpreter that keeps bytecode (``sys.implementation.cache_tag`` not None)."""
    level = f".opt-{sys.flags.optimize}" if sys.flags.optimize else ""
    return f"{source.rpartition('.')[0]}.{sys.implementation.cache_tag}{level}.pyc"

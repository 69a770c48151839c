"""Files shipped inside the package (the worker's source, the report's schema), read from an
installed package or from inside the single-file zipapp alike."""

from __future__ import annotations

import os


def read(*parts: str) -> bytes:
    """The bytes of the package's file ``parts`` (relative to the package's folder)."""
    path = os.path.join(os.path.dirname(__file__), *parts)
    # The package's own loader reads inside the zipapp too, where ``open`` cannot.
    get_data = getattr(globals().get("__loader__"), "get_data", None)
    if get_data is not None:
        return bytes(get_data(path))
    with open(path, "rb") as file:
        return file.read()

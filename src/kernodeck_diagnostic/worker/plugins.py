"""A device plugin torch loaded at its import, and what made it fail.

torch imports every entry point of the group ``torch.backends`` (PyTorch's out-of-tree device
plugins: Ascend's torch_npu, HPU, a vendor's) as it is imported, and one that raises becomes
"Failed to load the backend extension: NAME", the plugin's own error kept only as the exception's
cause, which the report's one line drops: the missing library that is the real reason. This
reads it back: the plugin's name, its distribution, and its cause's type and first line.

A companion of the worker (see ``stages``): the standard library only, Python 3.9+.
"""

from __future__ import annotations

import re
from typing import Any

# torch/__init__.py's words (_import_device_backends), 2.5 and later.
_FAILED = re.compile(r"Failed to load the backend extension: ([\w.-]{1,100})\.")
MAX_CAUSE_CHARS = 500


def backend_plugin(exc: BaseException) -> dict[str, Any] | None:
    """``{"name", "distribution", "cause"}`` for an ``import torch`` that a plugin of the group
    ``torch.backends`` failed; None for any other failure."""
    found = _FAILED.match(str(exc)) if isinstance(exc, RuntimeError) else None
    if found is None:
        return None
    cause = exc.__cause__ or exc.__context__
    said = None
    if cause is not None:
        line = (str(cause).strip().splitlines() or [""])[0][:MAX_CAUSE_CHARS]
        said = f"{type(cause).__name__}: {line}" if line else type(cause).__name__
    return {"name": found.group(1), "distribution": distribution_of(found.group(1)),
            "cause": said}


def distribution_of(name: str) -> str | None:
    """The distribution that declares the ``torch.backends`` entry point ``name`` (what pip
    uninstalls), or None when it cannot be told (Python 3.9's entry points name none)."""
    try:
        from importlib import metadata

        for dist in metadata.distributions():
            for entry in dist.entry_points:
                if entry.group == "torch.backends" and entry.name == name:
                    value = dist.metadata["Name"]
                    return str(value) if value and re.fullmatch(r"[\w.-]{1,100}", value) \
                        else None
    except Exception:
        return None
    return None

"""The trial toolkit: an attempt of the user's own program, kept in a small folder (control 4).

``Trial`` runs in the user's process; docs/trial.md is the guide and ``schema/attempt-v1.json``
the attempt folder's format. ``compare`` (the command) reads attempts through ``trial.compare``
alone: the library is loaded on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["Terminated", "Trial"]

if TYPE_CHECKING:
    from .session import Terminated, Trial


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import session

        return getattr(session, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""The trial toolkit: an attempt of the user's own program, kept in a small folder (control 4).

``Trial`` runs in the user's process; docs/trial.md is the guide and ``schema/attempt-v1.json``
the attempt folder's format. ``compare`` (the command) reads attempts through ``trial.compare``
alone: the library is loaded on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["Attempt", "Terminated", "Trial", "compare_attempts", "open_attempt"]
# Reading attempts from Python (a notebook): trial.compare's names.
_READERS = ("Attempt", "compare_attempts", "open_attempt")

if TYPE_CHECKING:
    from .compare import Attempt, compare_attempts, open_attempt
    from .session import Terminated, Trial


def __getattr__(name: str) -> Any:
    if name in _READERS:
        from . import compare

        return getattr(compare, name)
    if name in __all__:
        from . import session

        return getattr(session, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""kernodeck-diagnostic: find the first layer of a PyTorch GPU setup that fails.

    >>> import kernodeck_diagnostic
    >>> kernodeck_diagnostic.check(device="cpu")
    <Report CPU_CHECK_PASSED exit=0 stage=compute>
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "1.0.0"
TOOL_NAME = "kernodeck-diagnostic"

__all__ = ["Report", "__version__", "check"]

if TYPE_CHECKING:
    from .api import Report, check


def __getattr__(name: str) -> Any:
    # The API is loaded on first use: the command line, which imports this package first, does
    # not pay for it.
    if name in ("check", "Report"):
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

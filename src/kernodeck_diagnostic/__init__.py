"""kernodeck-diagnostic: find the first layer of a PyTorch GPU setup that fails."""

from __future__ import annotations

__version__ = "1.0.0"

__all__ = ["__version__"]

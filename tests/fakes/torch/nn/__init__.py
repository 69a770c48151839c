"""The fake ``torch.nn``: only what the kernels use (see ``torch/_kernels.py``)."""

from . import attention, functional

__all__ = ["attention", "functional"]

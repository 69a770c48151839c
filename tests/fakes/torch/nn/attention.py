"""The fake ``torch.nn.attention``: choosing sdpa's backends (see ``torch/_kernels.py``)."""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Iterator
from typing import Any

from .. import _kernels


class SDPBackend(enum.Enum):
    MATH = "MATH"
    FLASH_ATTENTION = "FLASH_ATTENTION"
    EFFICIENT_ATTENTION = "EFFICIENT_ATTENTION"
    CUDNN_ATTENTION = "CUDNN_ATTENTION"


@contextlib.contextmanager
def sdpa_kernel(backends: Any) -> Iterator[None]:
    previous = list(_kernels.enabled_backends)
    _kernels.enabled_backends[:] = [backend.value for backend in backends]
    try:
        yield
    finally:
        _kernels.enabled_backends[:] = previous

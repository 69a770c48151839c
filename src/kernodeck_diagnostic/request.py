"""What one check is asked for (``Request``), as its report's ``request`` block says it.

The standard library only: the API validates it (``api``), the report states it
(``report/build.py``); neither imports the other for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Device = Literal["gpu", "cpu"]
DEVICES: tuple[Device, ...] = ("gpu", "cpu")
# The library layer's flags (--extensions, --kernels): the worker stages of the same names.
LIBRARY_FLAGS = ("extensions", "kernels")
# Options that contradict each other: neither could be honoured without silently dropping the
# other. Each pair by the ids of ``contradiction``, with why (its catalog key); the command line
# and the API each name the two options in their own words (a --flag, a parameter).
_CONTRADICTIONS = (
    ("all_devices", "cpu", "arg.contradiction.all_devices.cpu"),
    ("all_devices", "distributed", "arg.contradiction.all_devices.distributed"),
    ("all_devices", "device_index", "arg.contradiction.all_devices.device_index"),
    ("distributed", "device_index", "arg.contradiction.distributed.device_index"),
    ("cpu", "device_index", "arg.contradiction.cpu.device_index"),
)


def contradiction(asked: set[str]) -> tuple[str, str, str] | None:
    """The first two of the options ``asked`` that contradict each other, and why (a catalog
    key); None when they go together. The ids: ``cpu`` (the CPU mode), ``device_index`` (a GPU
    index chosen), ``all_devices``, ``distributed``."""
    return next(((first, second, why) for first, second, why in _CONTRADICTIONS
                 if first in asked and second in asked), None)


@dataclass(frozen=True)
class Request:
    """What one check is asked for, as its report says it (the ``request`` block)."""

    device: Device
    device_index: int
    timeout_s: float
    host_check: bool
    # Under a launcher, this rank's check and the collective one (``distributed``); the device
    # index is then the rank's local rank.
    distributed: bool = False
    # Every visible device checked, each with its own result (``pytorch.devices[].check``).
    all_devices: bool = False
    # The library layer (``libraries``): the torch extensions imported, the kernels verified.
    extensions: bool = False
    kernels: bool = False

    def as_dict(self) -> dict[str, Any]:
        timeout: float | int = int(self.timeout_s) if self.timeout_s == int(self.timeout_s) \
            else self.timeout_s
        asked: dict[str, Any] = {"device": self.device, "device_index": self.device_index,
                                 "timeout_s": timeout, "host_check": self.host_check}
        if self.distributed:  # present only when asked: a plain check's request is unchanged
            asked["distributed"] = True
        if self.all_devices:  # the same
            asked["all_devices"] = True
        for name in LIBRARY_FLAGS:  # the same
            if getattr(self, name):
                asked[name] = True
        return asked

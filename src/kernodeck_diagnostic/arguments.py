"""The arguments of ``check()``, checked: ``Options``, the validated request, and the rules each
argument is held to, one place each (the command line converts its text first and uses the same
rules in its own words). ``TypeError`` for a wrong type, ``ValueError`` for a wrong value or two
that contradict each other, each one line naming the parameters (``check(timeout=...)``)."""

from __future__ import annotations

import math
import operator
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from .i18n import ENGLISH, Translate
from .interpreter import interpreter_problem
from .request import DEVICES, Device, Request, contradiction

if TYPE_CHECKING:
    from .facts.launcher import Launch

_T = TypeVar("_T")
TIMEOUT_MIN_S, TIMEOUT_MAX_S, TIMEOUT_DEFAULT_S = 5, 120, 30
# The command's limit with --kernels when none is given: a cold torch.compile takes 20 to 50 s.
KERNELS_TIMEOUT_DEFAULT_S = TIMEOUT_MAX_S


@dataclass(frozen=True)
class Options(Request):
    """A validated request for one check, with what the report never holds: the interpreter's
    path (this one by default)."""

    python: str = field(default_factory=lambda: sys.executable)
    # --distributed: this rank's place in the job, read from the launcher's variables.
    launch: Launch | None = None
    # check() in the caller's own interpreter (a notebook's kernel, a script): its sys.path, in
    # order, which the worker imports torch with, and the torch it imported, which the worker
    # compares with its own (facts/caller.py). None from the command line, or for another
    # interpreter.
    caller: dict[str, Any] | None = None



def validate(*, device: Any, device_index: Any, timeout: Any, host_check: Any = False,
             python: Any = None, distributed: Any = False, all_devices: Any = False,
             extensions: Any = False, kernels: Any = False,
             translate: Translate = ENGLISH) -> Options:
    """Check every argument of ``check()``: ``TypeError`` for a wrong type, ``ValueError`` for a
    wrong value or two that contradict each other, each one line naming the parameters
    (``check(timeout=...)``).

    The command line converts its text first and uses the same rules (``known_device``,
    ``index_in_range``, ``timeout_in_range``, ``request.contradiction``) in its own words.
    """
    if python is not None and not isinstance(python, (str, os.PathLike)):
        raise TypeError(translate("api.type.python", type=type(python).__name__))
    mode = validate_device(device, translate)
    index = validate_device_index(device_index, translate)
    every = validate_bool("api.type.all_devices", all_devices, translate)
    asked = {"cpu"} if mode == "cpu" else set()
    asked |= {name for name, on in (("device_index", index != 0), ("all_devices", every),
                                    ("distributed", distributed is True)) if on}
    refuse_contradiction(asked, index, translate)
    launch = validate_distributed(distributed, translate)
    return Options(device=mode,
                   # each rank checks its own device
                   device_index=index if launch is None else launch.local_rank,
                   timeout_s=validate_timeout(timeout, translate),
                   host_check=validate_host_check(host_check, translate),
                   python=validate_python(python, translate),
                   distributed=launch is not None, launch=launch, all_devices=every,
                   extensions=validate_flag("extensions", extensions, translate),
                   kernels=validate_flag("kernels", kernels, translate))


# How check() writes each option of ``request.contradiction`` in its refusal.
_API_WORDS = {"cpu": "device='cpu'", "device_index": "device_index={index}",
              "all_devices": "all_devices=True", "distributed": "distributed=True"}


def refuse_contradiction(asked: set[str], index: int, translate: Translate = ENGLISH) -> None:
    """``ValueError`` naming two of check()'s arguments that contradict each other, in its own
    words (never a --flag): ``check(all_devices=True, device='cpu'): ...``."""
    found = contradiction(asked)
    if found is not None:
        first, second, why = found
        raise ValueError(translate(
            "api.contradiction", first=_API_WORDS[first].format(index=index),
            second=_API_WORDS[second].format(index=index), reason=translate(why)))


def validate_distributed(value: Any, translate: Translate = ENGLISH) -> Launch | None:
    """``check(distributed=...)``: True or False; True only under torchrun or Slurm."""
    validate_bool("api.type.distributed", value, translate)
    if not value:
        return None
    from .facts.launcher import LaunchError, detect

    try:
        return detect(os.environ)
    except LaunchError as exc:
        raise ValueError(translate("api.argument", parameter="distributed",
                                   reason=translate(exc.key, **exc.values))) from None


def validate_bool(key: str, value: Any, translate: Translate = ENGLISH) -> bool:
    """A parameter that is True or False; else ``TypeError`` with the message ``key``, which
    names the parameter."""
    if not isinstance(value, bool):
        raise TypeError(translate(key, type=type(value).__name__))
    return value


def validate_device(value: Any, translate: Translate = ENGLISH) -> Device:
    """``check(device=...)``: exactly "gpu" or "cpu"."""
    if not isinstance(value, str):
        raise TypeError(translate("api.type.device", type=type(value).__name__))
    return _as_parameter("device", lambda: known_device(value, translate, "api"), translate)


def validate_device_index(value: Any, translate: Translate = ENGLISH) -> int:
    """``check(device_index=...)``: an int (or another integer type, like NumPy's), not a bool."""
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        raise TypeError(translate("api.type.device_index", type=type(value).__name__))
    index = operator.index(value)
    return _as_parameter("device_index", lambda: index_in_range(index, translate), translate)


def validate_timeout(value: Any, translate: Translate = ENGLISH) -> float:
    """``check(timeout=...)``: seconds as an int or a float, not a bool or a str."""
    if isinstance(value, bool) or not (isinstance(value, (int, float))
                                       or hasattr(type(value), "__index__")):
        raise TypeError(translate("api.type.timeout", type=type(value).__name__))
    try:
        seconds = float(value)
    except OverflowError:  # an integer no float holds (10**400): far out of range, as is inf
        seconds = math.inf if operator.index(value) > 0 else -math.inf
    return _as_parameter("timeout", lambda: timeout_in_range(seconds, translate), translate)


def validate_host_check(value: Any, translate: Translate = ENGLISH) -> bool:
    """``check(host_check=...)``: True or False."""
    if not isinstance(value, bool):
        raise TypeError(translate("api.type.host_check", type=type(value).__name__))
    return value


def validate_flag(parameter: str, value: Any, translate: Translate = ENGLISH) -> bool:
    """``check(extensions=...)``, ``check(kernels=...)``: True or False."""
    if not isinstance(value, bool):
        raise TypeError(translate("api.type.flag", parameter=parameter,
                                  type=type(value).__name__))
    return value


# -- the rules, one place each: the API and the command line both use them ---------------------

def known_device(name: str, translate: Translate = ENGLISH,
                 surface: Literal["api", "cli"] = "api") -> Device:
    """The device mode: "gpu" or "cpu". ROCm and CUDA are not modes (both use the GPU mode); the
    hint says how to ask for it in the caller's own terms."""
    for device in DEVICES:
        if name == device:
            return device
    if name.strip().lower() in ("rocm", "hip", "cuda"):
        raise ValueError(translate("api.device.rocm" if surface == "api" else "cli.device.rocm",
                                   value=repr(name)))
    raise ValueError(translate("arg.device.unknown", value=repr(name)))


def index_in_range(index: int, translate: Translate = ENGLISH) -> int:
    """A device index: 0 or more (whether that device exists is the check's to find out)."""
    if index < 0:
        raise ValueError(translate("arg.index.negative", value=index))
    return index


def timeout_in_range(seconds: float, translate: Translate = ENGLISH) -> float:
    """The limit for the whole check: finite, from TIMEOUT_MIN_S to TIMEOUT_MAX_S seconds."""
    if not (math.isfinite(seconds) and TIMEOUT_MIN_S <= seconds <= TIMEOUT_MAX_S):
        raise ValueError(translate("arg.timeout.range", low=TIMEOUT_MIN_S, high=TIMEOUT_MAX_S,
                                   value=f"{seconds:g}"))
    return seconds


def _as_parameter(parameter: str, rule: Callable[[], _T], translate: Translate) -> _T:
    """``rule()``, its refusal prefixed with ``check(parameter=...)``: an API caller reads the
    parameter's name where the command line reads its --flag."""
    try:
        return rule()
    except ValueError as exc:
        raise ValueError(translate("api.argument", parameter=parameter, reason=exc)) from None


def validate_python(value: Any, translate: Translate = ENGLISH) -> str:
    """The interpreter to diagnose: this one by default, or a file that can be started.

    Only what can be told without running anything is checked here, at once: a missing path, a
    folder, a link whose target is gone, a file without the right to run. Whether the program is
    a Python, and which, is learned within the check's time limit (``run``): an interpreter that
    hangs at start is a ``TIMEOUT`` at stage ``interpreter``, not a usage error.
    """
    if value is None:
        return sys.executable
    path = os.fspath(value)
    key = interpreter_problem(path)
    if key is not None:
        raise ValueError(translate("api.argument", parameter="python", reason=translate(key)))
    return str(path)

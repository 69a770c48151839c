"""The check as a function: for notebooks, scripts and the command line alike.

    >>> import kernodeck_diagnostic
    >>> report = kernodeck_diagnostic.check(device="cpu")
    >>> report.code, report.exit_code, report.passed
    ('CPU_CHECK_PASSED', 0, True)

By default the worker runs in the caller's own interpreter (``sys.executable``): in a notebook,
that is the kernel's Python, the one the notebook's code really uses. A diagnosed failure is a
value (a ``Report`` whose ``passed`` is False), never an exception; only invalid arguments raise
``ValueError``.
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .i18n import ENGLISH, Translate
from .process import run_bounded

DEVICES = ("gpu", "cpu")
TIMEOUT_MIN_S, TIMEOUT_MAX_S, TIMEOUT_DEFAULT_S = 5, 120, 30
MINIMUM_PYTHON = (3, 9)
_PROBE_TIMEOUT_S = 20.0
_VERSION_PROBE = "import sys; sys.stdout.write('%d.%d' % sys.version_info[:2])"


@dataclass(frozen=True)
class Options:
    """A validated request for one check."""

    device: str = "gpu"
    device_index: int = 0
    timeout_s: float = float(TIMEOUT_DEFAULT_S)
    host_check: bool = False
    python: str = field(default_factory=lambda: sys.executable)


class Report:
    """One check's report: the code and findings as attributes, the full report as a dict.

    In Jupyter it displays as the same markdown the command line prints with --format markdown.
    """

    def __init__(self, data: dict[str, Any], local_paths: dict[str, str | None] | None = None,
                 ) -> None:
        self._data = data
        self.local_paths = dict(local_paths or {})  # for the caller's eyes; never in to_dict()

    @property
    def code(self) -> str:
        return str(self._data["code"])

    @property
    def exit_code(self) -> int:
        return int(self._data["exit_code"])

    @property
    def passed(self) -> bool:
        return bool(self._data["status"] == "passed")

    @property
    def stage(self) -> str:
        return str(self._data["stage"])

    @property
    def findings(self) -> list[dict[str, Any]]:
        return [dict(finding) for finding in self._data["findings"]]

    def to_dict(self) -> dict[str, Any]:
        copied: dict[str, Any] = json.loads(json.dumps(self._data))
        return copied  # a deep copy: the caller may change it

    def to_json(self) -> str:
        return json.dumps(self._data, indent=2, ensure_ascii=False) + "\n"

    def _repr_markdown_(self) -> str:
        from .render import markdown

        return markdown(self._data)

    def __repr__(self) -> str:
        return f"<Report {self.code} exit={self.exit_code} stage={self.stage}>"


def check(device: str = "gpu", device_index: int = 0, timeout: float = TIMEOUT_DEFAULT_S,
          host_check: bool = False, python: str | None = None) -> Report:
    """Run the check (controls 1-3) and return its report.

    ``python`` names another interpreter to diagnose (a venv's, a service's); by default, this
    one. Raises ``ValueError`` for invalid arguments only.
    """
    options = validate(device=device, device_index=device_index, timeout=timeout,
                       host_check=host_check, python=python)
    return run(options)


def validate(*, device: Any, device_index: Any, timeout: Any, host_check: Any = False,
             python: Any = None, translate: Translate = ENGLISH) -> Options:
    """Check every argument; the ``ValueError`` message is one line, ready for a user."""
    return Options(device=validate_device(device, translate),
                   device_index=validate_device_index(device_index, translate),
                   timeout_s=validate_timeout(timeout, translate),
                   host_check=bool(host_check),
                   python=validate_python(python, translate))


def validate_device(value: Any, translate: Translate = ENGLISH) -> str:
    name = str(value).strip().lower()
    if name in ("rocm", "hip", "cuda"):
        raise ValueError(translate("cli.device.rocm", value=repr(value)))
    if name not in DEVICES:
        raise ValueError(translate("cli.device.unknown", value=repr(value)))
    return name


def validate_device_index(value: Any, translate: Translate = ENGLISH) -> int:
    if isinstance(value, bool):
        raise ValueError(translate("cli.index.not_a_number", value=repr(value)))
    try:
        index = int(value)
    except (TypeError, ValueError):
        raise ValueError(translate("cli.index.not_a_number", value=repr(value))) from None
    if index != value and not isinstance(value, str):
        raise ValueError(translate("cli.index.not_a_number", value=repr(value)))
    if index < 0:
        raise ValueError(translate("cli.index.negative", value=value))
    return index


def validate_timeout(value: Any, translate: Translate = ENGLISH) -> float:
    if isinstance(value, bool):
        raise ValueError(translate("cli.timeout.not_a_number", value=repr(value)))
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise ValueError(translate("cli.timeout.not_a_number", value=repr(value))) from None
    if not (math.isfinite(seconds) and TIMEOUT_MIN_S <= seconds <= TIMEOUT_MAX_S):
        raise ValueError(translate("cli.timeout.range", low=TIMEOUT_MIN_S, high=TIMEOUT_MAX_S,
                                   value=value))
    return seconds


def validate_python(value: Any, translate: Translate = ENGLISH) -> str:
    """The interpreter to diagnose: this one by default, or a runnable Python 3.9+."""
    if value is None:
        return sys.executable
    path = os.fspath(value)
    version = interpreter_version(path)
    if version is None:
        raise ValueError(translate("cli.python.not_runnable"))
    if version < MINIMUM_PYTHON:
        raise ValueError(translate("cli.python.too_old", version="{}.{}".format(*version),
                                   minimum="{}.{}".format(*MINIMUM_PYTHON)))
    return str(path)


def interpreter_version(path: str) -> tuple[int, int] | None:
    """(major, minor) of the Python at ``path``, or None when it does not run as one."""
    if not path or not os.path.isfile(path) or not os.access(path, os.X_OK):
        return None
    result = run_bounded([path, "-c", _VERSION_PROBE], _PROBE_TIMEOUT_S)
    if result.timed_out or result.returncode != 0:
        return None
    try:
        major, minor = (int(part) for part in result.stdout.strip().split("."))
    except ValueError:
        return None
    return major, minor


def run(options: Options, on_progress: Callable[[str, float], None] | None = None) -> Report:
    """Run a validated check: host probe and worker side by side, then the report."""
    if options.host_check:
        # First of all: the probe's few seconds overlap everything that follows. Only when asked:
        # a check without it never loads the module.
        from .host import HostProbe

        host: HostProbe | None = HostProbe().start()
    else:
        host = None
    from .redact import Redactor
    from .report import Request, build
    from .supervisor import run_worker, user_path0
    worker = run_worker(options.python, device=options.device,
                        device_index=options.device_index, timeout_s=options.timeout_s,
                        on_progress=on_progress, path0=user_path0())
    request = Request(options.device, options.device_index, options.timeout_s,
                      options.host_check)
    data = build(request, worker, host.result() if host else None, Redactor.for_this_machine())
    return Report(data, worker.state.local_paths)

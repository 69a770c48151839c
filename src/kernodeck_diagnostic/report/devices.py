"""--all-devices: each device's own verdict, each copy's, and the check's, decided by the front.

The worker sends the values every device computed (and every copy between two devices held);
this module compares them with the expected ones, as for a single device. A device that was
being checked when the time limit (or a crash) ended the worker gets that ending as its verdict
(``TIMEOUT``, ``WORKER_FAILED``); the devices checked before it keep theirs, and the ones after
it were never reached (``code`` null). The check's code is that of the lowest-index device that
failed; when every device passed, that of the first copy that failed; else the worker's own
ending, if any; else ``GPU_CHECK_PASSED``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..supervision.events import WorkerState
from ..worker.protocol import A_VALUES, EXPECTED
from .codes import VERDICTS, classify

ErrorReport = Callable[[dict[str, Any]], dict[str, Any]]


def device_name(backend: object, index: int) -> str:
    """The name tensors use for device ``index`` of ``backend``: ``cuda:0`` (ROCm too),
    ``xpu:1``, ``mps``."""
    if backend == "mps":
        return "mps"
    return f"{'xpu' if backend == 'xpu' else 'cuda'}:{index}"


@dataclass
class EveryDevice:
    """The verdicts of one --all-devices run, before redaction."""

    backend: object
    # By device index: the check's fields (see ``_device``), its error not yet redacted.
    devices: dict[int, dict[str, Any]] = field(default_factory=dict)
    peers: list[dict[str, Any]] = field(default_factory=list)
    error: dict[str, Any] | None = None
    shown: int | None = None  # the device the ``execution`` block describes

    def fill(self, pytorch: dict[str, Any], report_error: ErrorReport) -> dict[str, Any]:
        """Put each verdict in its ``pytorch.devices[]`` entry (``check``) and the copies in
        ``pytorch.peers``, their errors as the report says them (``report_error``); the
        ``execution`` block, of the device whose code is the check's (the first one when all
        passed)."""
        for entry in pytorch["devices"]:
            check = self.devices.get(entry["index"])
            if check is not None:
                entry["check"] = _reported(check, report_error)
        pytorch["peers"] = [_reported(peer, report_error) for peer in self.peers] \
            if len(self.devices) > 1 else None
        index = self.shown
        shown = self.devices.get(index) if index is not None else None
        if index is None or shown is None:
            return {"device": None, "product_verified": False, "gradient_verified": False,
                    "loss": None, "synchronized": None, "duration_ms": None}
        return {"device": device_name(self.backend, index),
                **{name: shown[name] for name in ("product_verified", "gradient_verified",
                                                  "loss", "synchronized", "duration_ms")}}


def every_device(state: WorkerState, ending: dict[str, Any] | None,
                 backend: object) -> EveryDevice:
    """The verdicts of every visible device (the ``visible_device_count`` the worker gave) and
    of every copy, from the worker's values; ``ending`` is how the worker ended when it did not
    finish (the time limit, a crash), else None."""
    every = EveryDevice(backend)
    count = state.facts.get("pytorch", {}).get("visible_device_count")
    indexes = sorted(set(range(count if isinstance(count, int) else 0)) | set(state.devices))
    copying = state.step == "copy"
    for index in indexes:
        values = state.devices.get(index)
        if values is None and ending is None:
            # The worker ended on its own without this device's values: nothing verified.
            stopped: dict[str, Any] | None = _said(None, "error.no_verified_result")
        else:
            stopped = ending if index == state.device and not copying else None
        every.devices[index] = _device(values, stopped)
    for (source, target), values in sorted(state.peers.items()):
        every.peers.append(_peer(source, target, values, backend))
    if copying and ending is not None and (state.device, state.peer) not in state.peers \
            and state.device is not None and state.peer is not None:
        every.peers.append(_peer(state.device, state.peer, None, backend, ending))
    failed = [(index, check) for index, check in every.devices.items()
              if check["code"] not in (None, "GPU_CHECK_PASSED")]
    failed_copies = [peer for peer in every.peers if peer["code"] != "GPU_CHECK_PASSED"]
    if failed:
        every.shown, every.error = failed[0][0], failed[0][1]["error"]
    else:
        every.shown = next((index for index, check in every.devices.items()
                            if check["code"] is not None), None)
        every.error = failed_copies[0]["error"] if failed_copies else ending
    return every


def copies_named(backend: object, copies: list[tuple[int, int]], shown: int = 12) -> str:
    """Copies as a person reads them: ``cuda:0 -> cuda:1, cuda:1 -> cuda:0``, the first
    ``shown`` of them and how many in all."""
    text = ", ".join(f"{device_name(backend, source)} -> {device_name(backend, target)}"
                     for source, target in copies[:shown])
    return text + (f", \u2026 ({len(copies)})" if len(copies) > shown else "")


# Reports are also read from elsewhere (``summarize``): what is read of their devices and
# copies is checked as it is read, an odd entry left out, never a crash nor a stray character
# on a terminal. More devices than this is not a node: their copies are not counted as untried.
MAX_DEVICES = 256


def computed(pytorch: Mapping[str, Any]) -> list[int]:
    """The devices of a report's ``pytorch`` block whose fixed computation gave values, right
    or wrong: those the worker copies between (worker/all_devices.py)."""
    found = []
    for entry in _entries(pytorch.get("devices")):
        check, index = entry.get("check"), _index(entry.get("index"))
        if not isinstance(check, dict) or index is None or check.get("code") is None:
            continue
        error = check.get("error")
        if error is None or (isinstance(error, dict)
                             and error.get("message_key") == "error.check_failed"):
            found.append(index)
    return found


def untried_copies(pytorch: Mapping[str, Any]) -> list[tuple[int, int]]:
    """The copies between devices that computed which were never tried: the worker was
    stopped first (a hang, a crash), on a device or on another copy. Empty when it finished."""
    peers = pytorch.get("peers")
    devices = computed(pytorch)
    if not isinstance(peers, list) or len(devices) > MAX_DEVICES:  # one device, not a node
        return []
    tried = {pair for pair in ((_index(peer.get("source")), _index(peer.get("target")))
                               for peer in _entries(peers)) if None not in pair}
    return [(source, target) for source in devices for target in devices
            if source != target and (source, target) not in tried]


class Copies(NamedTuple):
    """The copies between devices of one --all-devices report, as people read them (the
    report's text and markdown, and ``summarize``); picklable, a few numbers and pairs."""

    backend: str
    tried: int
    verified: int
    access: int  # reached their target directly
    unknown: int  # could not say whether: the backend has no such question, or never ended
    failed: tuple[tuple[int, int, str], ...]  # (source, target, code)
    untried: tuple[tuple[int, int], ...]


def copies_of(pytorch: Mapping[str, Any]) -> Copies | None:
    """The copies of a report's ``pytorch`` block; None when there are none to speak of (one
    device, or not --all-devices, or no copy expected)."""
    if not isinstance(pytorch.get("peers"), list):
        return None
    peers = [peer for peer in _entries(pytorch["peers"]) if _index(peer.get("source")) is not None
             and _index(peer.get("target")) is not None]
    untried = untried_copies(pytorch)
    if not peers and not untried:
        return None
    return Copies(_backend(pytorch), len(peers),
                  sum(peer.get("copy_verified") is True for peer in peers),
                  sum(peer.get("access") is True for peer in peers),
                  sum(peer.get("access") is None for peer in peers),
                  tuple((peer["source"], peer["target"], _code(peer.get("code")) or "-")
                        for peer in peers if peer.get("code") != "GPU_CHECK_PASSED"),
                  tuple(untried))


class EveryDeviceRow(NamedTuple):
    """What ``summarize`` keeps of an --all-devices report: each device's verdict (code None:
    not checked) and where it failed, and its copies (picklable, never the report)."""

    file: str
    code: str
    backend: str
    devices: tuple[tuple[int, str | None, str | None], ...]  # (index, code, failed step)
    copies: Copies | None


def every_device_row(report: dict[str, Any], file: str) -> EveryDeviceRow | None:
    """An --all-devices report as ``summarize`` shows it; None for any other report."""
    request, pytorch = report.get("request"), report.get("pytorch")
    if not isinstance(request, dict) or request.get("all_devices") is not True \
            or not isinstance(pytorch, dict):
        return None
    devices = []
    for entry in _entries(pytorch.get("devices")):
        check, index = entry.get("check"), _index(entry.get("index"))
        if isinstance(check, dict) and index is not None:
            error = check.get("error")
            step = error.get("step") if isinstance(error, dict) else None
            devices.append((index, _code(check.get("code")),
                            step if isinstance(step, str) else None))
    return EveryDeviceRow(file, str(report["code"]), _backend(pytorch), tuple(devices),
                          copies_of(pytorch))


def _entries(items: Any) -> list[dict[str, Any]]:
    """The objects of a list a report holds (none when it holds no list)."""
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []


def _index(value: Any) -> int | None:
    return value if type(value) is int and value >= 0 else None


def _code(value: Any) -> str | None:
    """A code a report can carry, else None (nothing else reaches a summary)."""
    return value if isinstance(value, str) and value in VERDICTS else None


def _backend(pytorch: Mapping[str, Any]) -> str:
    backend = pytorch.get("backend")
    return backend if backend in ("cuda", "rocm", "xpu", "mps") else "cuda"


def _device(values: dict[str, Any] | None, ending: dict[str, Any] | None) -> dict[str, Any]:
    """One device's check: its values compared, or the ending that stopped it, or nothing."""
    if values is None:
        return {"code": classify("gpu", ending).name if ending else None,
                "stage": "compute" if ending else None,
                "product_verified": False, "gradient_verified": False, "loss": None,
                "synchronized": False if ending else None, "duration_ms": None,
                "error": ending}
    wrong = [name for name, expected in EXPECTED.items() if values.get(name) != expected]
    error = _failure(values.get("error"))
    if error is None and wrong:
        error = _said("verify", "error.check_failed", what=", ".join(wrong))
    loss = values.get("loss")
    return {"code": classify("gpu", error).name, "stage": "compute",
            "product_verified": "product" not in wrong,
            "gradient_verified": "gradient" not in wrong,
            # The value, right or wrong, when JSON can hold it (NaN and infinities it cannot).
            "loss": loss if isinstance(loss, float) and math.isfinite(loss) else None,
            "synchronized": values.get("synchronized"), "duration_ms": values.get("duration_ms"),
            "error": error}


def _peer(source: int, target: int, values: dict[str, Any] | None, backend: object,
          ending: dict[str, Any] | None = None) -> dict[str, Any]:
    """One copy from ``source`` to ``target``: the values it held compared with A's."""
    values = values or {}
    copied = values.get("copy") == A_VALUES
    error = ending or _failure(values.get("error"))
    if error is None and not copied:
        error = _said("copy", "error.check_failed",
                      what=f"copy {device_name(backend, source)} -> "
                           f"{device_name(backend, target)}")
    return {"source": source, "target": target, "access": values.get("access"),
            "copy_verified": error is None and copied, "code": classify("gpu", error).name,
            "duration_ms": values.get("duration_ms"), "error": error}


def _failure(error: Any) -> dict[str, Any] | None:
    """A device's or a copy's own failure, as the report's error says it (before redaction)."""
    if not isinstance(error, dict):
        return None
    return {"stage": "compute", "step": error.get("step"), "kind": error.get("kind"),
            "type": error.get("type"), "message": error.get("message") or "",
            "missing_module": error.get("missing_module")}


def _said(step: str | None, key: str, **values: str) -> dict[str, Any]:
    """A failure in the tool's own words (a message key and its values)."""
    return {"stage": "compute", "step": step, "kind": "check_failed", "type": None,
            "message": "", "message_key": key, "message_values": values}


def _reported(check: dict[str, Any], report_error: ErrorReport) -> dict[str, Any]:
    error = check["error"]
    return {**check, "error": report_error(error) if error is not None else None}

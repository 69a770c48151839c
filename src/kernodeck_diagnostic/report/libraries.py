"""The report's ``libraries`` block (--extensions, --kernels): the worker's facts, and the front's
own verdicts on them.

The worker says what it found and what happened: each extension's declared torch requirement and
its import, each kernel's largest difference from its known answer. Here the front decides:
whether the installed torch meets each requirement (``pep440``, as ``pip check`` does) and whether
each kernel that ran passed (within ``worker.protocol.TOLERANCE``). The findings read this block.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

from ..i18n import Translate
from ..worker.protocol import decode_number, tolerance
from .pep440 import satisfies
from .shapes import EMPTY, Extension, Kernel, Libraries

EntryT = TypeVar("EntryT", Extension, Kernel)

# An import failing like this was built against another torch: its operators are not
# registered (torchvision's "operator torchvision::nms does not exist"), or its library
# wants symbols this torch does not have.
TORCH_MISMATCH_SIGNS = re.compile(
    r"operator \S+::\S+ does not exist|undefined symbol|"
    r"was compiled against|compiled with a different version of torch", re.IGNORECASE)
# torchvision's (and torchaudio's) own check at import.
CUDA_MISMATCH_SIGNS = re.compile(r"compiled with different CUDA (major )?versions",
                                 re.IGNORECASE)


def library_block(asked: dict[str, Any], facts: dict[str, Any] | None,
                  pytorch: dict[str, Any]) -> dict[str, Any] | None:
    """The ``libraries`` block: None when neither --extensions nor --kernels was asked."""
    if not (asked.get("extensions") or asked.get("kernels")):
        return None
    facts = facts or {}
    torch_version = pytorch.get("distribution_version") or pytorch.get("version")
    extensions = facts.get("extensions") if asked.get("extensions") else None
    kernels = facts.get("kernels") if asked.get("kernels") else None
    return {
        "torch_version": torch_version,
        "extensions": None if extensions is None else [
            _extension(entry, torch_version) for entry in extensions],
        "kernels": None if kernels is None else [_kernel(entry) for entry in kernels],
    }


def _extension(entry: dict[str, Any], torch_version: str | None) -> dict[str, Any]:
    wanted = entry.get("requires_torch")
    met = satisfies(torch_version, wanted) if torch_version and wanted is not None else None
    return {"name": entry.get("name"), "version": entry.get("version"),
            "module": entry.get("module"), "requires_torch": wanted, "requirement_met": met,
            "cuda": entry.get("cuda"),
            # Found, but the stage ended (the time limit) before its import was tried.
            "status": entry.get("status", "skipped"),
            "duration_ms": entry.get("duration_ms"), "error": entry.get("error"),
            **({"limit_s": entry["limit_s"]} if entry.get("limit_s") is not None else {})}


def _kernel(entry: dict[str, Any]) -> dict[str, Any]:
    """A kernel with the front's verdict: what the worker could not run keeps its status
    (failed with an error, unsupported, skipped); one that ran passes only within tolerance."""
    kernel = dict(entry)
    status = entry.get("status")
    if status not in ("failed", "unsupported", "skipped"):
        difference = decode_number(entry.get("max_abs_error"))
        within = difference is not None and difference <= tolerance(
            str(entry.get("name")), entry.get("dtype"))
        status = "passed" if within else "failed"
    kernel["status"] = status
    for name in ("dtype", "duration_ms", "max_abs_error", "error", "reason"):
        kernel.setdefault(name, None)
    return kernel


def wrong_kernel(block: dict[str, Any] | None) -> dict[str, Any] | None:
    """The first kernel that ran and gave a wrong result (failed without an error), if any."""
    for kernel in (block or {}).get("kernels") or []:
        if kernel["status"] == "failed" and kernel.get("error") is None:
            return dict(kernel)
    return None


def torch_mismatch(extension: Extension) -> bool:
    """The extension was built for another torch: its declared requirement excludes the
    installed torch, or its import failed with the signs of it."""
    if extension.get("requirement_met") is False:
        return True
    return _failed_with(extension, TORCH_MISMATCH_SIGNS)


def cuda_mismatch(extension: Extension, torch_cuda: str | None) -> bool:
    """The extension's CUDA (its version's label, or what it says) is not the build's: another
    CUDA version, a CPU build beside a CUDA torch, a CUDA build beside a CPU-only torch; or its
    import says so. Compared where both can be read."""
    if _failed_with(extension, CUDA_MISMATCH_SIGNS):
        return True
    theirs = extension.get("cuda")
    if not theirs or str(theirs).startswith("rocm"):
        return False
    if theirs == "cpu":
        return torch_cuda is not None
    if torch_cuda is None:  # a CUDA build beside a CPU-only (or ROCm) torch: fails to load
        return extension.get("status") == "failed"
    return _major_minor(theirs) != _major_minor(torch_cuda)


def _major_minor(version: str) -> tuple[str, ...]:
    return tuple(version.split(".")[:2])


def _failed_with(extension: Extension, signs: re.Pattern[str]) -> bool:
    error = extension.get("error") or EMPTY
    return extension.get("status") == "failed" and bool(signs.search(
        str(error.get("message") or "")))


# -- what the terminal and markdown show (report/render.py) ----------------------------------------

def library_rows(block: Libraries | None, t: Translate) -> list[tuple[str, str]]:
    """The extensions and kernels, one labelled row each (nothing when neither was asked)."""
    if block is None:
        return []
    return [*_entry_rows(t, "ui.label.extensions", "ui.libraries.none", block.get("extensions"),
                         _extension_row),
            *_entry_rows(t, "ui.label.kernels", "ui.libraries.not_reached", block.get("kernels"),
                         _kernel_row)]


def _entry_rows(t: Translate, label: str, empty: str, entries: list[EntryT] | None,
                describe: Callable[[EntryT, Translate], str]) -> list[tuple[str, str]]:
    """One kind's rows: none when it was not asked, ``empty`` when it has no entry."""
    if entries is None:
        return []
    rows = [(t(label), t(empty))] if not entries else []
    return rows + [(t(label) if index == 0 else "", describe(entry, t))
                   for index, entry in enumerate(entries)]


def _parts(*parts: str | None) -> str:
    return " | ".join(part for part in parts if part)


_STATUSES = {"passed": "ui.libraries.status.passed", "failed": "ui.libraries.status.failed",
             "timeout": "ui.libraries.status.timeout", "skipped": "ui.libraries.status.skipped",
             "unsupported": "ui.libraries.status.unsupported"}


def _status(entry: Extension | Kernel, t: Translate) -> str:
    duration = entry.get("duration_ms")
    return t(_STATUSES[entry["status"]]) + (
        f" ({duration:.0f} ms)" if isinstance(duration, (int, float)) else "")


def _failure(entry: Extension | Kernel, reason: str | None = None) -> str | None:
    """The entry's error, else ``reason`` (a kernel's why it did not run)."""
    error = entry.get("error") or EMPTY
    if error:
        return f"{error['type']}: {error.get('message')}" if error.get("type") else \
            str(error.get("message"))
    return reason


def _extension_row(entry: Extension, t: Translate) -> str:
    wanted = entry.get("requires_torch")
    requires = None if not wanted else t("ui.libraries.requires", wants=wanted) + (
        " (!)" if entry.get("requirement_met") is False else "")
    return _parts(f"{entry.get('name')} {entry.get('version')}", requires,
                  f"CUDA {entry['cuda']}" if str(entry.get("cuda") or "")[:1].isdigit()
                  else entry.get("cuda"), _status(entry, t), _failure(entry))


def _kernel_row(entry: Kernel, t: Translate) -> str:
    extra: list[str | None] = []
    if entry.get("compile_ms") is not None:
        extra.append(t("ui.libraries.compile", ms=f"{entry['compile_ms']:.0f}"))
    to_device, to_host = (entry.get("host_to_device_bytes_per_s"),
                          entry.get("device_to_host_bytes_per_s"))
    if isinstance(to_device, (int, float)) and isinstance(to_host, (int, float)):
        extra.append(t("ui.libraries.bandwidth", to_device=f"{to_device / 1e9:.1f}",
                       to_host=f"{to_host / 1e9:.1f}"))
    backends = entry.get("backends") or EMPTY
    if backends:
        extra.append(" ".join(
            f"{name}{'+' if isinstance(backend, dict) and backend.get('available') else '-'}"
            for name, backend in backends.items()))
    wrong = entry["status"] == "failed" and not entry.get("error")
    return _parts(f"{entry.get('name')} {entry.get('device') or ''}".strip(), _status(entry, t),
                  *extra, t("ui.libraries.wrong", difference=entry.get("max_abs_error"))
                  if wrong else _failure(entry, entry.get("reason")))

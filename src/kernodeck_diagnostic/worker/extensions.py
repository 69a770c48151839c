"""The library layer's ``--extensions``, in the worker: the torch extensions installed beside
torch, each imported bounded, each with its own result.

Extensions are found from installed-distribution metadata, without importing anything: every
distribution that requires ``torch`` (unconditionally, not only through an extra). Each is then
imported in a short-lived child of the worker, one after another, because an import cannot be
stopped from inside the process that runs it (a thread with a deadline could only stop waiting):
the child imports torch, then each extension in turn, and writes a line as each starts and ends.
An import that outlives its share of the time left is killed with its child, named, and the next
child goes on with the rest; one that kills its child (a segmentation fault) is named the same
way. The worker only says what happened (versions, the declared requirement, the error): the
front evaluates the requirement against the installed torch and decides what is a mismatch.

A companion of the worker (see ``stages``): the standard library only at its top, Python 3.9+.
The kernels (--kernels) are ``kernels``'.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING or not __name__.startswith("_kernodeck_worker_"):
    from . import origin, protocol, stages
else:  # copied beside the worker, which loaded this file (stages.companion)
    origin = sys.modules["_kernodeck_worker_origin"]
    protocol = sys.modules["_kernodeck_worker_protocol"]
    stages = sys.modules["_kernodeck_worker_stages"]

MAX_EXTENSIONS = 50
# The longest one import may take, whatever time is left; each also gets no more than its share
# of the time left (see share_s), so that one hanging import leaves time for the others.
IMPORT_LIMIT_S = 20.0
IMPORT_MIN_S = 2.0
# Kept for what follows the last import: the stage's events, the kernels' first steps, the report.
END_RESERVE_S = 1.5
POLL_S = 0.02
_LOCAL_CUDA = re.compile(r"\+cu(\d{2,3})\b")
_LOCAL_OTHER = re.compile(r"\+(cpu|rocm[\d.]*)\b")



def normalized(name: str) -> str:
    """A distribution name as PEP 503 compares them: torch, Torch and TORCH are one."""
    return re.sub(r"[-_.]+", "-", name).lower()


_REQUIREMENT = re.compile(
    r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*\(?([^;()]*)\)?\s*(?:;(.*))?$")


def torch_requirement(requires: list[str]) -> str | None:
    """The version specifier of an unconditional requirement on torch (``>=2.14.0``; "" for any
    version), or None when the distribution does not require torch. A requirement only under an
    extra (``extra == "torch"``) is optional: not one."""
    for line in requires:
        match = _REQUIREMENT.match(line)
        if match is None or normalized(match.group(1)) != "torch":
            continue
        marker = match.group(3) or ""
        if re.search(r"\bextra\b", marker):
            continue
        return " ".join(match.group(2).split())
    return None


def find_extensions(path: list[str]) -> list[dict[str, Any]]:
    """Every distribution on ``path`` that requires torch: name, version, the torch it declares,
    the module to import and the CUDA its version names. The first of a name wins, as for
    imports. Metadata only: nothing is imported."""
    from importlib import metadata

    seen: set[str] = set()
    found: list[dict[str, Any]] = []
    for dist in metadata.distributions(path=path):
        try:
            name = str(dist.metadata["Name"] or "")
            requires = list(dist.requires or [])
            version = str(dist.version)
        except Exception:  # noqa: S112 - unreadable metadata: nothing to say about it
            continue
        key = normalized(name)
        if not name or key in seen:
            continue
        seen.add(key)
        wanted = torch_requirement(requires)
        if wanted is None or key == "torch":
            continue
        found.append({"name": protocol.bounded(name), "version": protocol.bounded(version),
                      "requires_torch": protocol.bounded(wanted), "module": import_name(dist, key),
                      "cuda": build_cuda(version)})
    found.sort(key=lambda entry: normalized(entry["name"]))
    return found[:MAX_EXTENSIONS]


def import_name(dist: Any, key: str) -> str | None:
    """The module a distribution is imported as: its top-level name matching the distribution's
    (``flash-attn`` -> ``flash_attn``), else its first public top-level module (top_level.txt,
    else the files it installed), else the distribution's name with underscores."""
    wanted = key.replace("-", "_")
    names: list[str] = []
    try:
        names = (dist.read_text("top_level.txt") or "").split()
    except Exception:
        names = []
    if not names:
        try:
            names = sorted({_top_level(str(file)) for file in (dist.files or [])} - {""})
        except Exception:
            names = []
    if wanted in names:
        return wanted
    public = [name for name in names if name.isidentifier() and not name.startswith("_")]
    if public:
        return public[0]
    return wanted if wanted.isidentifier() else None


def _top_level(file: str) -> str:
    """The top-level module a RECORD entry belongs to, or "" (metadata, scripts, data)."""
    parts = file.replace("\\", "/").split("/")
    if len(parts) > 1:
        folder = parts[0]
        return "" if folder.endswith((".dist-info", ".data", ".libs")) or folder in (
            "..", "__pycache__") else folder
    for suffix in (".py", *origin.extension_suffixes()):
        if file.endswith(suffix):
            return file[: -len(suffix)]
    return ""


def build_cuda(version: str | None) -> str | None:
    """The CUDA a version's local label names: ``0.29.1+cu128`` -> ``12.8``; ``cpu`` or a
    ``rocm...`` label as it is; None when it names none."""
    if not version:
        return None
    found = _LOCAL_CUDA.search(version)
    if found:
        digits = found.group(1)
        return f"{digits[:-1]}.{digits[-1]}"
    other = _LOCAL_OTHER.search(version)
    return other.group(1) if other else None


def cuda_of(value: Any) -> str | None:
    """A module's own ``version.cuda`` (torchvision's: ``"12.8"``, or an int such as 12080 once
    it checked the library) as ``MAJOR.MINOR``; None for anything else."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 1000:
        return f"{value // 1000}.{value % 1000 // 10}"
    if isinstance(value, str) and re.fullmatch(r"\d+\.\d+(\.\d+)?", value):
        return ".".join(value.split(".")[:2])
    return None


# What each child runs (``python -c``): torch first, as an application does, then each module,
# one line of JSON per event to the file given. Python 3.9, standard library only.
_CHILD = r"""
import json, sys, time
out = open(sys.argv[1], "a", encoding="utf-8")
def say(**fields):
    out.write(json.dumps(fields, default=str) + "\n")
    out.flush()
if sys.argv[2]:
    with open(sys.argv[2], encoding="utf-8") as given:
        sys.path[:] = json.load(given)
import importlib
import torch
say(event="ready")
for name in sys.argv[3:]:
    say(event="start", module=name)
    start = time.monotonic()
    try:
        module = importlib.import_module(name)
    except BaseException as exc:
        say(event="done", module=name, ok=False, type=type(exc).__name__,
            message=str(exc)[:4000], ms=(time.monotonic() - start) * 1000)
        continue
    cuda = getattr(getattr(module, "version", None), "cuda", None)
    say(event="done", module=name, ok=True, ms=(time.monotonic() - start) * 1000,
        module_version=str(getattr(module, "__version__", "") or "")[:100],
        module_cuda=cuda if isinstance(cuda, (int, str)) else None)
"""


class ImportChild:
    """One child importing modules in order; its lines read back as they come."""

    def __init__(self, folder: str, serial: int, import_path: list[str] | None,
                 modules: list[str]) -> None:
        self.lines = os.path.join(folder, f"extensions-{serial}.jsonl")
        open(self.lines, "w").close()
        # The import path in a file of the worker's private folder, never on the command line,
        # which any user of the machine can read (/proc/<pid>/cmdline).
        path_file = ""
        if import_path is not None:
            path_file = os.path.join(folder, f"extensions-{serial}.path.json")
            with open(path_file, "w", encoding="utf-8") as file:
                json.dump(import_path, file)
        self._offset = 0
        self.started = time.monotonic()
        self.startup_s = 0.0  # how long it took to import torch: known once it is ready
        # The interpreter's own options (-W, -X, -E, -s, -I...), as the worker was started:
        # the child imports as the user's program would.
        flags: list[str] = getattr(subprocess, "_args_from_interpreter_flags", list)()
        # Not a session of its own: the front ends the worker's process group, children included.
        self.process = subprocess.Popen(
            [sys.executable, *flags, "-c", _CHILD, self.lines,
             path_file, *modules],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def read(self) -> list[dict[str, Any]]:
        try:
            with open(self.lines, encoding="utf-8", errors="replace") as file:
                file.seek(self._offset)
                text = file.read()
        except OSError:
            return []
        complete = text[: text.rfind("\n") + 1]
        self._offset += len(complete.encode("utf-8"))
        events = []
        for line in complete.splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict):
                events.append(event)
        return events

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        # A process stuck in the kernel: the front's kill of the worker's group ends it.
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(2.0)
        with contextlib.suppress(OSError):
            os.remove(self.lines)


def share_s(deadline: float, left: int, startup_s: float) -> float:
    """The time the next import may take: its share of what is left, within the bounds, once
    a new child's start (``startup_s``: importing torch again) is kept for the ones after it,
    should this one hang."""
    remaining = deadline - time.monotonic() - (startup_s if left > 1 else 0.0)
    return max(min(IMPORT_LIMIT_S, remaining / max(left, 1)), min(IMPORT_MIN_S, remaining))


def import_each(modules: list[str], folder: str, import_path: list[str] | None,
                deadline: float) -> dict[str, dict[str, Any]]:
    """Import each module in a child, in order: what happened to each, by module.

    ``status``: ``passed``, ``failed`` (with ``error``), ``timeout`` (killed after ``limit_s``)
    or ``skipped`` (the check's time ran out first).
    """
    results: dict[str, dict[str, Any]] = {}
    pending = list(modules)
    serial = 0
    while pending:
        if deadline - time.monotonic() <= 0:
            break
        serial += 1
        child = ImportChild(folder, serial, import_path, pending)
        try:
            pending = _follow(child, pending, results, deadline)
        finally:
            child.stop()
    for name in pending:
        results.setdefault(name, {"status": "skipped", "duration_ms": None, "error": None})
    return results


def _follow(child: ImportChild, pending: list[str], results: dict[str, dict[str, Any]],
            deadline: float) -> list[str]:
    """Read ``child`` until it has imported every module, one hangs or it dies: the modules
    still to import (in a new child) after that."""
    current: str | None = None
    started = limit = 0.0
    while True:
        for event in child.read():
            kind, name = event.get("event"), event.get("module")
            if kind == "ready":
                child.startup_s = time.monotonic() - child.started
            elif kind == "start" and isinstance(name, str):
                current, started = name, time.monotonic()
                limit = share_s(deadline, len(pending), child.startup_s)
            elif kind == "done" and name == current and current is not None:
                results[current] = _imported(event)
                pending = pending[1:]
                current = None
        if not pending:
            return []
        now = time.monotonic()
        if current is not None and now - started > limit:
            results[current] = {"status": "timeout", "duration_ms": round(limit * 1000, 1),
                                "error": None, "limit_s": round(limit, 1)}
            return pending[1:]
        if now > deadline:
            return pending
        if child.process.poll() is not None:
            return _after_end(child, current, pending, results, started)
        time.sleep(POLL_S)


def _after_end(child: ImportChild, current: str | None, pending: list[str],
               results: dict[str, dict[str, Any]], started: float) -> list[str]:
    """The child ended: the module it was importing failed (unless its line came just before
    the end); without one, torch itself did not import there, and nothing more is tried."""
    for event in child.read():  # lines written just before it ended
        if current is not None and event.get("event") == "done" \
                and event.get("module") == current:
            results[current] = _imported(event)
            return pending[1:]
    ended = _ending(child.process.returncode)
    if current is None:
        for name in pending:
            results[name] = {"status": "failed", "duration_ms": None, "error": {
                "type": None, "message": f"the child importing torch {ended}"}}
        return []
    results[current] = {"status": "failed",
                        "duration_ms": round((time.monotonic() - started) * 1000, 1),
                        "error": {"type": None, "message": f"the import {ended}"}}
    return pending[1:]


def _imported(event: dict[str, Any]) -> dict[str, Any]:
    ms = event.get("ms")
    result: dict[str, Any] = {"duration_ms": round(float(ms), 1)
                              if isinstance(ms, (int, float)) else None}
    if event.get("ok"):
        result.update(status="passed", error=None,
                      module_version=event.get("module_version") or None,
                      module_cuda=cuda_of(event.get("module_cuda")))
    else:
        result.update(status="failed", error={
            "type": protocol.bounded(str(event.get("type") or "")) or None,
            "message": protocol.bounded(str(event.get("message") or ""))})
    return result


def _ending(code: int | None) -> str:
    if code is not None and code < 0:
        import signal

        try:
            return f"ended its process (signal {signal.Signals(-code).name})"
        except ValueError:
            return f"ended its process (signal {-code})"
    return f"ended its process (exit code {code})"


def stage_extensions(worker: Any) -> None:
    """The ``extensions`` stage: find the extensions, import each, say what happened."""
    extensions = find_extensions(list(sys.path))
    worker.facts("libraries", extensions=extensions)
    modules = [entry["module"] for entry in extensions if entry["module"]]
    folder = os.path.dirname(os.path.abspath(worker.events.path))
    # The user's import path, as the import stage put it in place (the caller's own, or the
    # first entry put back); none to give under -I or -P, where the program's folder is unseen.
    import_path = list(sys.path) if worker.path0 is not None or worker.caller else None
    results = import_each(modules, folder, import_path, stage_deadline(worker))
    for entry in extensions:
        result = results.get(entry["module"] or "") or {
            "status": "skipped", "duration_ms": None, "error": None}
        entry.update(status=result["status"], duration_ms=result["duration_ms"],
                     error=result["error"])
        # The CUDA the module says it was built with, when its version's label did not.
        entry["cuda"] = entry["cuda"] or build_cuda(result.get("module_version")) \
            or result.get("module_cuda")
        if result.get("limit_s") is not None:
            entry["limit_s"] = result["limit_s"]
    worker.facts("libraries", extensions=extensions)
    failed = [entry for entry in extensions if entry["status"] in ("failed", "timeout")]
    # Not imported for want of time (one without a module to import was never tried).
    skipped = [entry for entry in extensions if entry["status"] == "skipped" and entry["module"]]
    if failed:
        first = failed[0]
        values = {"count": len(failed), "total": len(extensions), "name": first["name"],
                  "version": first["version"]}
        if first["status"] == "timeout":
            raise stages.StageError("extension_failed", key="error.extension_failed.timeout",
                                    seconds=first.get("limit_s"), **values)
        error = first["error"] or {}
        what = f"{error['type']}: {error['message']}" if error.get("type") else error["message"]
        raise stages.StageError("extension_failed", key="error.extension_failed", what=what,
                                **values)
    if skipped:
        raise stages.StageError("extension_failed", key="error.extension_failed.skipped",
                                count=len(skipped), total=len(extensions))


def stage_deadline(worker: Any) -> float:
    """When this stage must be done: END_RESERVE_S before the front's limit (``--deadline``, as
    this process's ``time.monotonic()``); without one, IMPORT_LIMIT_S per import at most."""
    deadline = getattr(worker, "deadline", None)
    if deadline is None:
        return time.monotonic() + IMPORT_LIMIT_S * MAX_EXTENSIONS
    return float(deadline) - END_RESERVE_S

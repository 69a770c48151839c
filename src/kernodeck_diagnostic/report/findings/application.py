"""Application: what the user's own program brings to the check and runs with (control 4 of the
method): its modules named like ones it needs, what it hung in when the time limit ended it,
warning filters that turn a warning into the failure, allocation tracing, debugging variables left
set.
"""

from __future__ import annotations

from ..codes import Verdict
from ..shapes import EMPTY
from .core import (
    Finding,
    Layer,
    Report,
    check_passed,
    configuration_variables,
    cuda_or_unknown,
    gpu_mode,
    node_block,
    quote,
)
from .interpreter import torch_shadowed

layer = Layer("application")


@layer.rule(150, "LOCAL_MODULE_SHADOWS", variants=(None, "working_folder", "script_folder",
                                                   "breaks_import"))
def local_module_shadows(report: Report) -> Finding | None:
    """Modules of the user's, where their program imports first, named like ones it needs.

    The sentence names the folder: the working folder (the command line's program starts
    there; running it from another folder helps), the calling script's own (Python searches it
    first wherever the script is run from), or both (the plain one). An error, the failure's
    cause (``breaks_import``), when ``import torch`` failed inside one of them: the import's
    own traceback says so (``pytorch.import_error_origin``), not a guess. A module of torch's
    installed there that the path holds nowhere else (``hides`` ``nothing``: a ``pip install
    --target`` folder's) is never named: renaming it would take it from torch."""
    pytorch = report["pytorch"]
    entries = [entry for entry in report["runtime"].get("local_modules") or []
               # torch hidden where the check imports it from is TORCH_SHADOWED's to say
               if not (entry.get("name") == "torch" and torch_shadowed(report) is not None
                       and entry.get("folder") == pytorch.get("origin"))
               and entry.get("hides") != "nothing"]
    if not entries:
        return None
    evidence = []
    for entry in entries:
        name, hides = entry.get("name"), entry.get("hides")
        what = ("the installed torch" if hides == "torch" else
                f"{name}, which torch needs" if hides == "torch-dependency" else
                f"the standard library's {name}")
        evidence.append(f"{entry.get('file')} in the {entry.get('folder')} hides {what}")
    names = ", ".join(dict.fromkeys(str(entry.get("name")) for entry in entries))
    origin = pytorch.get("import_error_origin") or EMPTY
    culprit = next((entry for entry in entries if report["code"] == Verdict.TORCH_IMPORT_FAILED
                    and entry.get("hides") != "torch"
                    and str(origin.get("module") or "").split(".")[0] == entry.get("name")
                    and origin.get("place") == entry.get("folder")), None)
    if culprit is not None:
        evidence.insert(0, f"import torch failed in {culprit.get('name')}, loaded from "
                        f"{culprit.get('file')} in the {culprit.get('folder')}")
        return Finding("LOCAL_MODULE_SHADOWS", "error", tuple(evidence),
                       {"names": names, "module": str(culprit.get("name")),
                        "file": str(culprit.get("file"))}, variant="breaks_import")
    places = {entry.get("folder") for entry in entries}
    variant = ("working_folder" if places == {"working-folder"} else
               "script_folder" if places == {"script-folder"} else None)
    return Finding("LOCAL_MODULE_SHADOWS", "warning", tuple(evidence), {"names": names},
                   variant=variant)


@layer.rule(155, "HUNG_IN", variants=(None, "torch_backend"))
def hung_in(report: Report) -> Finding | None:
    """The time limit ended a worker that hung in code that is not torch's: where, from the
    worker's own stack at the limit (``error.hung_in``, supervision/hang.py), and, for a device
    plugin that torch loads as it is imported (entry point group ``torch.backends``), how to run
    torch without it. A hang in torch itself is the stage's and the device's to explain."""
    error = report.get("error") or EMPTY
    hung = error.get("hung_in")
    if report["code"] != Verdict.TIMEOUT or not hung or hung["package"] == "torch":
        return None
    place = f"{hung['file']}:{hung['line']}"
    evidence = [f"the worker's stack at the time limit: hung in {hung['package']} ({place}), "
                f"at the {error.get('stage')} stage"]
    if hung["torch_backend"]:
        evidence.append("torch was loading it as a device plugin (entry point group "
                        "torch.backends), as it does when it is imported")
    if hung.get("distribution"):
        evidence.append(f"it is declared by the distribution {hung['distribution']}")
    return Finding("HUNG_IN", "error", tuple(evidence),
                   {"package": hung["package"], "place": place, "stage": str(error.get("stage")),
                    "distribution": str(hung.get("distribution") or hung["package"])},
                   variant="torch_backend" if hung["torch_backend"] else None)


@layer.rule(240, "WARNING_AS_ERROR")
def warning_as_error(report: Report) -> Finding | None:
    """A warning the interpreter's filters turned into an error (-W error, PYTHONWARNINGS=error)
    stopped the check: the failure is the filter, not what the warning says."""
    error = report.get("error") or EMPTY
    category = str(error.get("type") or "")
    if not (category.endswith("Warning") and report["runtime"].get("warnings_as_errors") is True):
        return None
    message = " ".join(str(error.get("message") or "").split())
    return Finding(
        "WARNING_AS_ERROR", "error",
        (f"{category} raised as an error at the {error.get('stage')} stage: "
         f"\"{quote(message)}\"",
         "a warning filter turns warnings into errors (action 'error')"),
        {"category": category})


@layer.rule(250, "TRACEMALLOC_ON")
def tracemalloc_on(report: Report) -> Finding | None:
    """tracemalloc records every allocation in the worker's interpreter (PYTHONTRACEMALLOC, -X
    tracemalloc): ``import torch`` then takes many times longer (2.3 s became 27 s with 5 frames,
    a CUDA build here), enough to end the check on its limit. An error when the limit ended it,
    a warning on a check that passed (the user's program pays the same); nothing otherwise."""
    frames = report["runtime"].get("tracemalloc_frames")
    timed_out = report["code"] == Verdict.TIMEOUT
    if not (isinstance(frames, int) and frames > 0 and (timed_out or check_passed(report))):
        return None
    evidence = [f"tracemalloc traces every allocation with {frames} frame(s) each "
                "(PYTHONTRACEMALLOC or -X tracemalloc)"]
    if timed_out:
        evidence.append(f"the time limit ended the check at the {report['stage']} stage")
    return Finding("TRACEMALLOC_ON", "error" if timed_out else "warning", tuple(evidence),
                   {"frames": str(frames)})


@layer.rule(330, "CUDA_LAUNCH_BLOCKING_ON")
def cuda_launch_blocking(report: Report) -> Finding | None:
    """CUDA_LAUNCH_BLOCKING=1 makes every kernel launch wait for the GPU: for debugging only."""
    if report["pytorch"].get("backend") != "cuda" or \
            configuration_variables(report).get("CUDA_LAUNCH_BLOCKING") != "1":
        return None
    return Finding("CUDA_LAUNCH_BLOCKING_ON", "warning", ("CUDA_LAUNCH_BLOCKING=1",))


@layer.rule(500, "DEBUG_INJECTION_SET")
def debug_injection_set(report: Report) -> Finding | None:
    names = [str(name) for name in node_block(report).get("debug_variables") or []]
    if not (names and gpu_mode(report) and cuda_or_unknown(report)):
        return None
    return Finding("DEBUG_INJECTION_SET", "warning",
                   (f"set (names only): {', '.join(names)}",), {"names": ", ".join(names)})


# A worker that used at least this share of the CPU time it could have had was working, not
# waiting: a hang (a lock, a driver call that never returns) uses next to none.
PROGRESSING_SHARE = 0.3
TIMEOUT_MAXIMUM_S = 120


@layer.rule(650, "TIME_LIMIT_REACHED", variants=(None, "at_maximum"))
def time_limit_reached(report: Report) -> Finding | None:
    """The time limit ended a worker that was still working (it used CPU time): a slow machine,
    a cold cache, a CPU quota; the limit, not a fault, ended it. A worker that used next to no
    CPU was waiting (a hang): that is not this finding's."""
    timings = report.get("timings_ms") or {}
    cpu, total = timings.get("worker_cpu"), timings.get("worker_total")
    last, recent = timings.get("worker_cpu_last"), timings.get("worker_last")
    if isinstance(last, (int, float)) and isinstance(recent, (int, float)) and recent > 0:
        cpu, total = last, recent  # what it did at the end: a long import then a hang waits
    if not (report["code"] == Verdict.TIMEOUT and isinstance(cpu, (int, float))
            and isinstance(total, (int, float)) and total > 0):
        return None
    system = report.get("system") or EMPTY
    quota = system.get("cpu_quota")
    could = min(1.0, quota) if isinstance(quota, (int, float)) and quota > 0 else 1.0
    if cpu < total * could * PROGRESSING_SHARE:
        return None
    limit = report["request"].get("timeout_s")
    evidence = [f"the worker used {cpu / 1000:.1f} s of CPU time in "
                f"{'its last ' if total is recent else ''}{total / 1000:.1f} s: it was "
                "working, not waiting",
                f"the time limit ({limit} s) ended it at the {report['stage']} stage"]
    at_maximum = isinstance(limit, (int, float)) and limit >= TIMEOUT_MAXIMUM_S
    return Finding("TIME_LIMIT_REACHED", "error", tuple(evidence),
                   {"seconds": f"{limit:g}" if isinstance(limit, (int, float)) else "?",
                    "stage": report["stage"], "maximum": TIMEOUT_MAXIMUM_S},
                   variant="at_maximum" if at_maximum else None)

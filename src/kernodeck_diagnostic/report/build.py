"""The report (schema version 1): built from the worker's run, redacted, serialised."""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from ..i18n import ENGLISH, compose
from ..package_data import TOOL_NAME, VERSION
from ..request import Request
from ..supervision.events import WorkerState
from ..supervision.supervisor import WorkerRun
from ..terminal import json_text
from ..worker.protocol import EXPECTED, NON_FINITE, STAGES
from . import SCHEMA_VERSION
from .codes import classify
from .findings import Finding, find
from .kernel_form import notebook_advice
from .libraries import library_block, wrong_kernel
from .redact import Redactor
from .shapes import Report

if TYPE_CHECKING:
    from .codes import Code
    from .devices import EveryDevice
    from .distributed import RankPlace


@dataclass(frozen=True)
class Built:
    """One check's report and its findings as the rules gave them (``findings.find``): the
    report holds them in English; the terminal and markdown show these in their language."""

    report: Report
    findings: tuple[Finding, ...]


@dataclass(frozen=True)
class Decision:
    """What one check decided, before any report is assembled (``decide``)."""

    code: Code
    stage: str
    error: dict[str, Any] | None  # the ``error`` block, redacted
    every: EveryDevice | None = None  # --all-devices: each device's verdict
    distributed: dict[str, Any] | None = None  # --distributed: the ``distributed`` block


def build(request: Request, run: WorkerRun, host: dict[str, Any] | None,
          redactor: Redactor, front: dict[str, Any] | None = None, *,
          place: RankPlace | None = None) -> Built:
    """The full report of one check, every string that came from the machine redacted.

    ``front`` holds the facts the front read itself once the worker ended (``runtime``'s
    ``library_override``, ``tool_environment`` and ``working_folder_missing``, see
    ``environment``; the ``node`` block, see ``facts.node``), and the ``system`` block the front
    read beside the worker (``facts.system``).
    ``place``, under ``--distributed``: the rank's place in its job, for the ``distributed`` block
    and the job's verdict.

    The code is decided first (``decide``, the job's included), then the report is assembled,
    once (``assemble``), and its findings derived from it, once.
    """
    facts = redactor.value(run.state.facts)
    libraries = library_block(request.as_dict(), facts.get("libraries"), facts.get("pytorch", {}))
    decision = decide(request, run, facts, libraries, redactor=redactor, place=place)
    report = assemble(request, run, decision, facts, libraries=libraries, host=host,
                      redactor=redactor, front=front)
    found = find(report)
    report["findings"] = [finding.as_dict() for finding in found]
    notebook_advice(report, found)  # made from a notebook: its advice in the notebook's words
    return Built(report, found)


def decide(request: Request, run: WorkerRun, facts: dict[str, Any],
           libraries: dict[str, Any] | None, *, redactor: Redactor,
           place: RankPlace | None = None) -> Decision:
    """The verdict of one check from what the worker said (``run``), its facts redacted
    (``facts``) and the ``libraries`` block: the code, the stage and the error, the job's
    verdict included under --distributed. Nothing is assembled here."""
    state = run.state
    error = _error(request, run) if run.tool_need is None else _tool_needs(run)
    wrong = _unverified(state.result)
    every = None
    if request.all_devices and _reached_compute(state):
        # --all-devices: the verdict is that of the lowest-index device that failed, from
        # each device's own values (a time limit or a crash ends the device it stopped).
        from .devices import every_device

        every = every_device(state, error, facts.get("pytorch", {}).get("backend"))
        error, wrong = every.error, []
    if error is None and wrong and state.unreadable_lines:
        # Lines of the event log could not be read: what they said (maybe the error) is unknown,
        # so nothing is claimed about the computation.
        error = _said("worker_failed", state.stage or "interpreter", state.step,
                      "error.unreadable_log", count=state.unreadable_lines)
    elif error is None and wrong and state.result:
        error = _said("check_failed", "compute", state.step, "error.check_failed",
                      what=", ".join(wrong))
    elif error is None and wrong:
        error = _said("check_failed", "compute", None, "error.no_verified_result")
    if error is None and (wrong_one := wrong_kernel(libraries)) is not None:
        # A kernel that ran (--kernels) and gave a wrong result, as the front judges its values.
        error = _said("check_failed", "kernels", wrong_one["name"], "error.kernel_wrong",
                      kernel=wrong_one["name"], difference=wrong_one.get("max_abs_error"))
    code = classify(request.device, error)
    error_block = None if error is None else error_report(error, redactor, state.stage)
    stage = error_block["stage"] if error_block else "compute"
    distributed = None
    if place is not None:
        # --distributed: a rank whose own check passed takes the job's verdict, at its stage.
        from .distributed import job_block, job_verdict

        distributed = job_block(request.device, place, state)
        decided = job_verdict(code, distributed, state)
        if decided is not None:
            stage = "collective"
            if decided[1] is not None:
                code, error_block = decided
    return Decision(code, stage, error_block, every, distributed)


def assemble(request: Request, run: WorkerRun, decision: Decision, facts: dict[str, Any], *,
             libraries: dict[str, Any] | None, host: dict[str, Any] | None,
             redactor: Redactor, front: dict[str, Any] | None = None) -> Report:
    """The report of a decided check (``decide``), its findings not yet derived (empty)."""
    state, code, every = run.state, decision.code, decision.every
    timings: dict[str, float] = {name: state.stage_ms[name] for name in STAGES
                                 if name in state.stage_ms}
    timings["worker_total"] = round(run.elapsed_s * 1000, 1)
    if run.cpu_s is not None:  # a worker the time limit ended: the CPU time it had used
        timings["worker_cpu"] = round(run.cpu_s * 1000, 1)
    if run.cpu_last_s is not None and run.last_s is not None:  # and in its last seconds
        timings["worker_cpu_last"] = round(run.cpu_last_s * 1000, 1)
        timings["worker_last"] = round(run.last_s * 1000, 1)
    pytorch = pytorch_block(facts.get("pytorch", {}))
    for device in pytorch["devices"]:  # each device's verdict is the front's: never a worker's
        device.pop("check", None)
    execution = (_execution(facts.get("execution", {}), state.result) if every is None
                 else every.fill(pytorch, lambda failure: error_report(failure, redactor)))
    # The worker's facts are JSON (Any): the schema, not the type checker, vouches for them here
    # (every test's report meets it); from here on the report is read as ``shapes.Report``.
    report = cast(Report, {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": TOOL_NAME, "version": VERSION},
        # time, not datetime: the front imports no module it can do without (docs/performance.md)
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "status": "passed" if code.passed else "failed",
        "code": code.name,
        "exit_code": code.exit_code,
        "stage": decision.stage,
        "summary": code.summary,
        "next_action": code.next_action,  # a job's error may have its own: below
        "request": request.as_dict(),
        "runtime": {**runtime_block(facts.get("runtime", {})),
                    **_pick(redactor.value(front or {}),
                            {"library_override": None, "tool_environment": None,
                             "working_folder_missing": None, "python_home_set": None}),
                    **_caller(facts.get("runtime", {}), redactor.value(front or {})),
                    # present only when check() was called in a Jupyter kernel
                    **({"called_from_kernel": True}
                       if (front or {}).get("called_from_kernel") is True else {})},
        "pytorch": pytorch,
        "execution": execution,
        "libraries": libraries,
        "host": redactor.value(host),  # a GPU tool's words: the machine's too
        "system": redactor.value((front or {}).get("system")),
        "node": redactor.value((front or {}).get("node")),
        **({} if decision.distributed is None else {"distributed": decision.distributed}),
        "findings": [],  # derived by build, from the report itself
        "error": decision.error,
        "warnings": redactor.value(state.warnings + state.notes()),
        "timings_ms": timings,
    })
    if decision.distributed is not None:
        from .distributed import next_action_key

        report["next_action"] = ENGLISH(next_action_key(report))
    return report


def _caller(runtime: dict[str, Any], front: dict[str, Any]) -> dict[str, Any]:
    """``runtime.caller`` from what the front knows of its caller when the worker, hung or
    crashed before its import ended, did not say it (where its torch came from then unknown)."""
    known = front.get("caller")
    if runtime.get("caller") is not None or not isinstance(known, dict):
        return {}
    return {"caller": {"kernel": known.get("kernel") is True,
                       "torch_imported": known.get("torch_imported") is True,
                       "torch_version": known.get("torch_version"), "torch_origin": None,
                       "torch_same": None}}


def _reached_compute(state: WorkerState) -> bool:
    """The worker reached the compute stage (or a later one), and did not fail in it on its own
    (a failure outside any device's check: then that failure is the verdict)."""
    return (state.stage is not None and STAGES.index(state.stage) >= STAGES.index("compute")
            and (state.error or {}).get("stage") != "compute")


def error_report(error: dict[str, Any], redactor: Redactor,
                 stage: str | None = None) -> dict[str, Any]:
    """An error as the report says it (the ``error`` block), redacted; ``stage`` is the one
    reached, for an error that names none."""
    block = {"stage": error.get("stage") or stage or "interpreter", "kind": error.get("kind"),
             "type": error.get("type"), "message": redactor.text(str(error.get("message") or ""))}
    if error.get("step"):
        block["step"] = error["step"]
    if error.get("hung_in"):
        block["hung_in"] = redactor.value(error["hung_in"])
    key, values = error.get("message_key"), redactor.value(error.get("message_values") or {})
    if key and (english := compose(key, values, ENGLISH)) is not None:
        # One of the tool's own sentences: English here, any language on the terminal.
        block.update(message=english, message_key=key, message_values=values)
    return block


def to_json(report: dict[str, Any]) -> bytes:
    return (json_text(json.dumps(report, indent=2, ensure_ascii=False)) + "\n").encode("utf-8")


# --distributed: the launcher's SIGTERM cut the limit, and why (facts/launcher.stop_reason).
_STOPPED = {"time_limit": "error.launcher_stop.time_limit",
            "cancelled": "error.launcher_stop.cancelled", "sigterm": "error.launcher_stop.sigterm"}


def _error(request: Request, run: WorkerRun) -> dict[str, Any] | None:
    state = run.state
    if state.error is not None:
        return state.error  # diagnosed by the worker, even if it died right after saying so
    where = state.stage or "interpreter"
    at = f"{where} ({state.step})" if state.step else where
    if run.outcome == "not_started" and run.start_error is not None:
        key, detail = run.start_error
        return _said("worker_failed", "interpreter", None, key, detail=detail)
    if run.outcome == "timeout" and not state.events:
        # Not one event: the interpreter itself never got as far as running the worker.
        return _said("timeout", "interpreter", None, "error.timeout_at_start",
                     seconds=request.as_dict()["timeout_s"])
    if run.outcome == "timeout":
        return _timed_out(request, run, at)
    if run.outcome == "crashed" or not state.final:
        key, values = run.end_description()
        return _said("worker_failed", where, state.step, key, at=at, **values)
    return None


def _timed_out(request: Request, run: WorkerRun, at: str) -> dict[str, Any]:
    """The error of a worker the time limit ended during ``at``, its stage (and step)."""
    where, step = run.state.stage or "interpreter", run.state.step
    # The limit the launcher's SIGTERM cut is not --timeout: said as the launcher's stop, and
    # why (the job cancelled, its time limit), never "no result within" the whole limit.
    if run.launcher_stop:
        return _said("timeout", where, step, _STOPPED[run.launcher_stop], at=at)
    seconds, hung = request.as_dict()["timeout_s"], run.hung_in
    if hung is None:
        return _said("timeout", where, step, "error.timeout", at=at, seconds=seconds)
    # Where it hung, from the worker's stack (supervision/hang.py): said, and kept for the
    # findings (HUNG_IN).
    return {**_said("timeout", where, step, "error.timeout_hung_in", at=at, seconds=seconds,
                    package=hung["package"], place=f"{hung['file']}:{hung['line']}"),
            "hung_in": hung}


def _tool_needs(run: WorkerRun) -> dict[str, Any]:
    """What the tool itself could not get (supervision/tool_needs.py): no fault of the machine."""
    key, values = run.tool_need or ("", {})
    where = run.state.stage or "interpreter"
    at = f"{where} ({run.state.step})" if run.state.step else where
    return _said("tool_resources", where, run.state.step, key, at=at, **values)


def _said(kind: str, stage: str, step: str | None, key: str, **values: Any) -> dict[str, Any]:
    """An error in the tool's own words: a message key and its values (see ``compose``)."""
    return {"stage": stage, "step": step, "kind": kind, "type": None, "message": "",
            "message_key": key, "message_values": {name: str(v) for name, v in values.items()}}



def _unverified(result: dict[str, Any]) -> list[str]:
    """The computed values (product, loss, gradient) that are not the expected ones, or missing.

    The front compares the values the worker sent (``result``): the worker never says whether
    they are right, and a verdict it sent would have been dropped on arrival.
    """
    return [name for name, expected in EXPECTED.items() if result.get(name) != expected]


def _pick(values: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    return {key: values.get(key, default) for key, default in defaults.items()}


def runtime_block(values: dict[str, Any]) -> dict[str, Any]:
    """The report's ``runtime`` block from the worker's facts: every field, null where unsaid
    (the front's own, ``library_override``, ``tool_environment`` and ``working_folder_missing``,
    not included)."""
    return _pick(values, {"python_version": None, "python_implementation": None,
                          "os_family": None, "machine": None, "environment_kind": None,
                          "visibility": None, "device_nodes": None, "local_modules": None,
                          "caller": None, "warnings_as_errors": None, "tracemalloc_frames": None})


def pytorch_block(values: dict[str, Any]) -> dict[str, Any]:
    """The report's ``pytorch`` block from the worker's facts: every field, null where unsaid."""
    return _pick(values, {"imported": False, "version": None, "distribution_version": None,
                          "cuda_build": None, "hip_build": None, "backend": None,
                          "gpu_available": None, "visible_device_count": None, "devices": [],
                          "init_error": None, "arch_list": None, "cudnn_version": None,
                          "nccl_version": None, "build_fact_errors": None, "origin": None,
                          "module_kind": None, "distributions_on_path": None,
                          "numpy_present": None, "numpy_version": None,
                          "xpu_build": None, "mps": None, "peers": None,
                          "debug_build": None, "git_version": None, "cuda_libraries": None,
                          "triton_version": None, "torchvision_version": None,
                          "torchaudio_version": None, "import_error_origin": None,
                          "extension_tags": None, "interpreter_tag": None, "hidden_by": None,
                          "orphan_metadata": None, "torch_libraries_elsewhere": None,
                          "damaged_libraries": None, "backend_plugin": None,
                          "noexec_mount": None, "unreadable_file": None,
                          "path_not_utf8": None})


def _execution(values: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    """The worker's facts of the computation, and the front's own verdicts on its values."""
    wrong = _unverified(result)
    loss = result.get("loss")
    block = {"device": values.get("device"), "product_verified": "product" not in wrong,
             "gradient_verified": "gradient" not in wrong,
             # The value, right or wrong, when JSON can hold it (NaN and infinities it cannot).
             "loss": loss if isinstance(loss, float) and math.isfinite(loss) else None,
             "synchronized": values.get("synchronized"), "duration_ms": values.get("duration_ms")}
    how = {name: wrong_how(result[name]) for name in wrong if name in result}
    if how:  # only when values came back and some were not the known answer
        block["wrong_values"] = how
    return block


def wrong_how(value: Any) -> str:
    """How a value the worker sent differs from the known answer: "non_finite" when it holds a
    NaN or an infinity (read back, or still encode_number's strings), "wrong" otherwise."""
    if isinstance(value, list):
        return "non_finite" if any(wrong_how(item) == "non_finite" for item in value) else "wrong"
    if isinstance(value, float):
        return "wrong" if math.isfinite(value) else "non_finite"
    return "non_finite" if isinstance(value, str) and value in NON_FINITE else "wrong"

"""The boundary between the worker and the front: one protocol, and a front that trusts nothing.

The worker module owns the protocol (stages, events, error kinds, bounds, expected values); the
front imports it from there. The worker sends the computation's values and the front verifies
them; every field of every event is type-checked on arrival, a wrong one dropped and noted.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import SRC, assert_valid_report, clean_env, fake_gpu_env, run_tool, schema
from kernodeck_diagnostic import api
from kernodeck_diagnostic import report_schema as validate
from kernodeck_diagnostic.api import Request
from kernodeck_diagnostic.i18n import LANGUAGES, messages
from kernodeck_diagnostic.report import build as report_build
from kernodeck_diagnostic.report import codes, compare
from kernodeck_diagnostic.report.build import build, to_json
from kernodeck_diagnostic.report.findings import derive
from kernodeck_diagnostic.report.redact import Redactor
from kernodeck_diagnostic.supervision import events, supervisor
from kernodeck_diagnostic.supervision.events import EventReader
from kernodeck_diagnostic.supervision.supervisor import WorkerRun
from kernodeck_diagnostic.worker import collective, extensions
from kernodeck_diagnostic.worker import protocol as stages

WORKER = SRC / "kernodeck_diagnostic" / "worker" / "stages.py"
RIGHT = {"product": [[4.0, 4.0], [10.0, 8.0]], "loss": 196.0,
         "gradient": [[16.0, 24.0], [40.0, 52.0]]}


def line(**event: Any) -> bytes:
    return json.dumps(event).encode() + b"\n"


def state_of(log: bytes) -> events.WorkerState:
    reader = EventReader(_Chunks(log))  # type: ignore[arg-type]
    reader.poll()
    reader.close()
    return reader.state


class _Chunks:
    """The log as the front reads it: in pieces of at most 1 MiB."""

    def __init__(self, data: bytes) -> None:
        self._data, self._at = data, 0

    def read(self, size: int) -> bytes:
        chunk = self._data[self._at:self._at + size]
        self._at += len(chunk)
        return chunk


def report_of(log: bytes) -> dict[str, Any]:
    """The report the front builds from a GPU check's event log; it must meet the schema."""
    run = WorkerRun(state_of(log), "finished", 0, 0.5)
    report = build(Request("gpu", 0, 30, False), run, None, Redactor()).report
    assert_valid_report(report)
    json.loads(to_json(report), parse_constant=_no_constant)  # strict JSON: no NaN, no Infinity
    return report


def _no_constant(name: str) -> None:
    raise AssertionError(f"the report holds {name}, which is not JSON")


def passing_log(*extra: bytes, result: dict[str, Any] | None = None) -> bytes:
    """A complete, passing GPU run in the protocol's words, ``extra`` lines before its end."""
    return b"".join((
        line(event="facts", block="runtime", values={"python_version": "3.12.3"}),
        *(line(event="stage_started", stage=name) + line(event="stage_finished", stage=name,
                                                         duration_ms=1.0)
          for name in stages.STAGES[:-1]),
        line(event="facts", block="pytorch", values={
            "imported": True, "version": "2.7.0+cu128", "cuda_build": "12.8", "backend": "cuda",
            "gpu_available": True, "visible_device_count": 1, "devices": [
                {"index": 0, "name": "NVIDIA H200", "capability": "9.0",
                 "total_memory_bytes": 150_000_000_000}]}),
        line(event="stage_started", stage="compute"),
        line(event="facts", block="execution", values={"device": "cuda:0",
                                                        "synchronized": True}),
        line(event="step", stage="compute", step="verify"),
        line(event="result", **(RIGHT if result is None else result)),
        *extra,
        line(event="stage_finished", stage="compute", duration_ms=2.0),
        line(event="final"),
    ))


def run_worker(python: Path | str, worker: Path, tmp_path: Path, env: dict[str, str],
               device: str = "cpu") -> list[dict[str, Any]]:
    """The events a worker file writes when run by path, as the front runs it."""
    log = tmp_path / "events.jsonl"
    subprocess.run([str(python), str(worker), "--events", str(log), "--device", device],
                   env=env, capture_output=True, timeout=120, check=True)
    text = log.read_text(encoding="utf-8")
    return [json.loads(item, parse_constant=_no_constant) for item in text.splitlines()]


# -- one source of truth: the front imports the worker's protocol ---------------------------------

def test_the_front_takes_the_protocol_from_the_worker_module() -> None:
    assert report_build.STAGES is stages.STAGES
    assert report_build.EXPECTED is stages.EXPECTED
    assert events.MAX_TEXT_CHARS is stages.MAX_TEXT_CHARS
    assert tuple(api.LIVE_LABELS) == stages.STAGES
    assert compare.STAGE_ORDER[:len(stages.STAGES)] == stages.STAGES
    assert stages.EXPECTED == RIGHT
    # The contract's order: the last three run only when their flag asks for them.
    assert stages.STAGES == ("interpreter", "import", "backend", "device", "compute",
                             "extensions", "kernels", "collective")


def test_the_protocol_agrees_with_the_schema_and_the_catalogs() -> None:
    """Every stage, step and error kind the protocol has is one the report may carry, each event
    is type-checked, and each worker kind and stage has its code and its words."""
    report = schema()["properties"]
    error = report["error"]["oneOf"][1]["properties"]
    assert set(stages.STAGES) <= set(report["stage"]["enum"])
    assert set(stages.STEPS) == set(error["step"]["enum"])
    assert set(stages.ERROR_KINDS) | {"check_failed", "timeout", "worker_failed"} <= set(
        error["kind"]["enum"])
    assert set(stages.FACT_BLOCKS) <= set(report)
    assert set(events.FIELDS) == set(stages.EVENTS)
    for kind in stages.ERROR_KINDS:
        code = codes.classify("gpu", {"kind": kind, "stage": "compute"})
        assert code.name != "WORKER_FAILED", kind
    for language in LANGUAGES:
        assert all(api.LIVE_LABELS[stage] in messages(language) for stage in stages.STAGES)


def test_the_schema_uses_only_keywords_the_front_checks() -> None:
    def keywords(node: Any) -> set[str]:
        if isinstance(node, list):
            return set().union(*map(keywords, node)) if node else set()
        if not isinstance(node, dict):
            return set()
        found = set(node) - {"properties", "$defs"}
        for name, value in node.items():
            if name in ("properties", "$defs"):
                found |= set().union(*map(keywords, value.values()))
            elif isinstance(value, (dict, list)) and name not in ("enum", "required", "type"):
                found |= keywords(value)
        return found

    assert keywords(schema()) <= validate.KEYWORDS | validate.ANNOTATIONS


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2**40, 2**40) | st.floats()
    | st.sampled_from(["", "9.0", "sm_90", "cuda:0", "cpu", "lists 2", "absent", "x.y", "12"])
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["index", "name", "capability", "total_memory_bytes", "kfd", "dxg",
                         "nvidiactl", "nvidia_uvm", "proc_driver_nvidia", "error", "x"]),
        inner, max_size=6),
    max_leaves=12)
_FACTS = [(block, name) for block in stages.FACT_BLOCKS
          for name in schema()["properties"][block]["properties"]]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(_FACTS), _JSON)
def test_what_the_front_lets_through_meets_the_schema(fact: tuple[str, str], value: Any) -> None:
    """The front's check never lets through a value the shipped schema refuses (it may be
    stricter: no NaN, no 1.0 for an integer)."""
    import jsonschema

    rule = validate.fact_schema(*fact)
    assert rule is not None
    if validate.conforms(value, rule):
        jsonschema.validate(value, {**rule, "$defs": schema()["$defs"]})


# -- stage names come from the protocol, never from a method's name -------------------------------

@pytest.mark.slow
def test_renaming_a_stage_method_changes_no_stage_name(cpu_torch_python: Path,
                                                       tmp_path: Path) -> None:
    """A copy of the worker with its methods renamed, run with a real torch, names the stages as
    before."""
    from kernodeck_diagnostic.supervision.start import worker_files

    source = WORKER.read_text(encoding="utf-8")
    renamed = tmp_path / "stages.py"
    renamed.write_text(source.replace("stage_import", "load_torch")
                       .replace("stage_compute", "multiply"), encoding="utf-8")
    for name, companion in worker_files().items():  # its companions, as the supervisor copies
        if name != "worker.py":
            (tmp_path / name).write_bytes(companion)
    said = run_worker(cpu_torch_python, renamed, tmp_path, clean_env())
    started = [event["stage"] for event in said if event["event"] == "stage_started"]
    # Asked for nothing more (--extensions, --kernels, --distributed): the stages always run.
    optional = {*stages.LIBRARY_STAGES, "collective"}
    assert tuple(started) == tuple(stage for stage in stages.STAGES if stage not in optional)


# -- values, not verdicts --------------------------------------------------------------------------

@pytest.mark.slow
def test_a_real_worker_sends_the_values_and_no_verdict(cpu_torch_python: Path,
                                                       tmp_path: Path) -> None:
    said = run_worker(cpu_torch_python, WORKER, tmp_path, clean_env())
    results = [event for event in said if event["event"] == "result"]
    assert [{k: v for k, v in event.items() if k not in ("event", "t_ms")}
            for event in results] == [RIGHT]
    execution = {name for event in said if event.get("block") == "execution"
                 for name in event["values"]}
    assert not execution & {"product_verified", "gradient_verified", "loss"}
    assert [event["kind"] for event in said if event["event"] == "error"] == []


def test_non_finite_values_survive_json_and_fail_the_check(pyz: Path, tmp_path: Path) -> None:
    """A NaN in the product (a faulty kernel): the worker writes strict JSON ("nan"), the front
    reads the values back and names all three wrong; the report's loss is null."""
    said = run_worker(sys.executable, WORKER, tmp_path, fake_gpu_env("nan_in_product"), "gpu")
    result = next(event for event in said if event["event"] == "result")
    assert result["product"] == [[4.0, 4.0], [10.0, "nan"]]
    assert result["loss"] == "nan"
    out = tmp_path / "nan.json"
    run = run_tool(sys.executable, pyz, ["--output", str(out)],
                   env=fake_gpu_env("nan_in_product"))
    assert run.report is not None, run.stdout + run.stderr
    assert_valid_report(run.report)
    assert (run.returncode, run.report["code"]) == (8, "CHECK_FAILED")
    assert run.report["execution"]["loss"] is None
    assert run.report["execution"]["product_verified"] is False
    assert run.report["error"]["message"] == "wrong product, loss, gradient"
    assert run.report["error"]["step"] == "verify"


def test_encoding_of_the_values_round_trips() -> None:
    for value in (4.0, -0.0, 1e300, float("inf"), float("-inf")):
        text = json.dumps(stages.encode_number(value), allow_nan=False)
        assert stages.decode_number(json.loads(text)) == value
    assert json.dumps(stages.encode_number(float("nan")), allow_nan=False) == '"nan"'
    junk: Any
    for junk in (True, None, "4.0", "NaN", [4.0], {}):
        assert stages.decode_number(junk) is None


def test_a_worker_that_claims_verdicts_with_a_wrong_product_is_check_failed() -> None:
    """The worker's word on its own result is not taken: the values are compared."""
    wrong = {**RIGHT, "product": [[5.0, 4.0], [10.0, 8.0]]}
    lie = line(event="facts", block="execution",
               values={"product_verified": True, "gradient_verified": True, "loss": 196.0})
    report = report_of(passing_log(lie, result=wrong))
    assert (report["code"], report["stage"]) == ("CHECK_FAILED", "compute")
    assert report["error"]["message"] == "wrong product"
    assert report["error"]["step"] == "verify"
    assert report["execution"]["product_verified"] is False
    assert report["execution"]["gradient_verified"] is True
    assert report["execution"]["loss"] == 196.0
    note = report["warnings"][-1]
    assert note["category"] == events.NOTE_CATEGORY
    assert note["message"].startswith("3 field(s)")
    assert "facts.execution.product_verified" in note["message"]


def test_right_values_pass_and_leave_no_note() -> None:
    report = report_of(passing_log())
    assert report["code"] == "GPU_CHECK_PASSED"
    assert report["execution"] == {"device": "cuda:0", "product_verified": True,
                                   "gradient_verified": True, "loss": 196.0,
                                   "synchronized": True, "duration_ms": None}
    assert report["warnings"] == []


@pytest.mark.parametrize(("result", "wrong"), [
    ({**RIGHT, "loss": 197.0}, "loss"),
    ({**RIGHT, "gradient": [[16.0, 24.0]]}, "gradient"),
    ({"product": RIGHT["product"], "loss": RIGHT["loss"]}, "gradient"),
    ({**RIGHT, "loss": "inf"}, "loss"),
])
def test_each_wrong_or_missing_value_is_named(result: dict[str, Any], wrong: str) -> None:
    report = report_of(passing_log(result=result))
    assert report["code"] == "CHECK_FAILED"
    assert report["error"]["message"] == f"wrong {wrong}"


def test_no_result_at_all_is_no_verified_result() -> None:
    log = passing_log().replace(line(event="result", **RIGHT), b"")
    report = report_of(log)
    assert report["code"] == "CHECK_FAILED"
    assert report["error"]["message_key"] == "error.no_verified_result"


# -- every field type-checked on arrival -----------------------------------------------------------

def test_an_error_whose_stage_is_an_object_gives_a_report() -> None:
    """It crashed the front (an unhashable dict in the findings): INTERNAL_ERROR, no report."""
    log = (line(event="stage_started", stage="backend")
           + line(event="error", stage={"name": "backend"}, kind="runtime_error",
                  type="RuntimeError", message="CUDA error: unknown error")
           + line(event="final"))
    report = report_of(log)
    assert (report["code"], report["stage"]) == ("RUNTIME_ERROR", "backend")
    assert "error.stage" in report["warnings"][-1]["message"]


def test_an_error_type_that_is_a_number_is_dropped() -> None:
    log = (line(event="stage_started", stage="compute")
           + line(event="error", stage="compute", kind="out_of_memory", type=7, message="oom")
           + line(event="final"))
    report = report_of(log)
    assert report["code"] == "OUT_OF_MEMORY"
    assert report["error"]["type"] is None


@pytest.mark.parametrize("kind", [None, 3, "check_failed", "timeout", "interrupted", "bogus"])
def test_an_error_kind_not_of_the_worker_is_a_failed_worker(kind: Any) -> None:
    """The worker cannot decide a verdict that is the front's (a wrong result, a timeout)."""
    log = (line(event="stage_started", stage="device")
           + line(event="error", stage="device", kind=kind, type=None, message="?")
           + line(event="final"))
    report = report_of(log)
    assert (report["code"], report["error"]["kind"]) == ("WORKER_FAILED", "worker_failed")


def test_facts_of_the_wrong_type_are_dropped_not_trusted() -> None:
    """devices not a list, a capability that is a number, a count that is a string: each fact is
    held to the report's schema; the rules and the renderers never see them."""
    bad = line(event="facts", block="pytorch", values={
        "devices": {"index": 0}, "visible_device_count": "1", "arch_list": ["sm_90", 90],
        "backend": "metal", "imported": "yes", "nonsense": [1, 2]})
    bad_device = line(event="facts", block="pytorch", values={"devices": [
        {"index": 0, "name": "X", "capability": 9.0, "total_memory_bytes": 1}]})
    report = report_of(passing_log(bad, bad_device))
    pytorch = report["pytorch"]
    assert pytorch["devices"][0]["capability"] == "9.0"  # the well-typed fact stands
    assert (pytorch["visible_device_count"], pytorch["backend"], pytorch["imported"]) == (
        1, "cuda", True)
    assert pytorch["arch_list"] is None
    note = report["warnings"][-1]["message"]
    assert note.startswith("7 field(s)")
    for name in ("facts.pytorch.devices", "facts.pytorch.visible_device_count",
                 "facts.pytorch.arch_list", "a fact of pytorch not of the report"):
        assert name in note
    assert "nonsense" not in note  # a name the worker made up never reaches the report


def test_a_cuda_build_without_a_number_breaks_no_rule() -> None:
    odd = line(event="facts", block="pytorch", values={"cuda_build": "custom"})
    log = passing_log(odd).replace(line(event="result", **RIGHT), b"")
    report = report_of(log)
    assert report["code"] == "CHECK_FAILED"


def test_unknown_events_fields_and_names_are_counted() -> None:
    log = passing_log(line(event="bogus", x=1), line(event="final", extra=True),
                      line(event="stage_started", stage="training"),
                      line(event="step", stage="compute", step="dance"), b'{"no_event": 1}\n')
    report = report_of(log)
    assert report["code"] == "GPU_CHECK_PASSED"
    note = report["warnings"][-1]
    assert note["stage"] == "compute"
    assert note["message"].startswith("5 field(s)")
    assert "step.step" in note["message"]
    assert "stage_started.stage" in note["message"]


def test_a_line_nested_too_deep_is_unreadable_not_a_crash() -> None:
    """A RecursionError escaped the reader: the front died with no report."""
    deep = b'{"event": "facts", "block": "pytorch", "values": {"x": ' + b"[" * 5000 \
        + b"]" * 5000 + b"}}\n"
    state = state_of(deep + line(event="final"))
    assert state.unreadable_lines == 1
    assert state.final is True
    shallow = b'{"event": "facts", "block": "pytorch", "values": {"devices": ' + b"[" * 20 \
        + b"]" * 20 + b"}}\n"
    assert state_of(shallow).unreadable_lines == 1


def test_the_note_names_at_most_ten_fields() -> None:
    fields = {name: 12345 for name in ("python_version", "python_implementation", "os_family",
                                        "machine", "environment_kind", "visibility",
                                        "device_nodes", "local_modules", "warnings_as_errors",
                                        "library_override", "tool_environment")}
    report = report_of(passing_log(line(event="facts", block="runtime", values=fields)))
    message = report["warnings"][-1]["message"]
    assert message.startswith("11 field(s)")
    assert message.endswith(", \u2026)")


def test_the_worker_runs_its_own_file_alone(tmp_path: Path) -> None:
    """The protocol adds no import of the package: the worker runs by path with nothing but the
    files the supervisor copies beside it (its companions), under the names it gives them."""
    from kernodeck_diagnostic.supervision.start import worker_files

    folder = tmp_path / "alone"
    folder.mkdir()
    for name, source in worker_files().items():
        (folder / name).write_bytes(source)
    alone = folder / "worker.py"
    said = run_worker(sys.executable, alone, tmp_path, fake_gpu_env("cuda_pass"), "gpu")
    assert said[-1]["event"] == "final"
    assert any(event["event"] == "result" for event in said)


def test_rules_read_every_report_built_from_typed_facts() -> None:
    """derive() runs on what build() made, in every language, without an exception."""
    report = report_of(passing_log(line(event="facts", block="pytorch",
                                        values={"cuda_build": "12.x"})))
    for language in LANGUAGES:
        from kernodeck_diagnostic.i18n import translator

        derive(report, translator(language))


def test_the_time_limit_reaches_every_worker_as_one_deadline(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """--deadline, in every case (a plain check, library stages, a rank): the front's limit as
    the wall clock says it, read by the worker on its own monotonic clock; the library stages and
    the collective end their margins before it."""
    seen: list[list[str]] = []

    def fake_supervise(started: Any, request: list[str], **_: Any) -> WorkerRun:
        seen.append([*started.argv, *request])  # the worker's whole command line
        return WorkerRun(events.WorkerState(), "finished", 0, 0.0)

    monkeypatch.setattr(supervisor, "_supervise", fake_supervise)
    for extra in ([], ["--kernels"], ["--launcher", "torchrun", "--rank", "0"]):
        supervisor.run_worker(sys.executable, device="cpu", device_index=0, timeout_s=30,
                              extra=extra)
    for argv in seen:
        assert argv.count("--deadline") == 1
        assert not [word for word in argv if word.startswith("--budget")]
        deadline = float(argv[argv.index("--deadline") + 1])
        assert abs(deadline - (time.time() + 30)) < 5
        assert abs(stages.monotonic_deadline(deadline) - (time.monotonic() + 30)) < 5
    worker = SimpleNamespace(deadline=100.0)
    assert extensions.stage_deadline(worker) == 100.0 - extensions.END_RESERVE_S
    assert collective.worker_deadline(100.0) == 100.0 - collective.END_MARGIN_S

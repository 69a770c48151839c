"""Property-based: any event stream a worker could write gives a report that meets the schema.

The worker runs in the interpreter under diagnosis, which may write anything. Hypothesis builds
event logs from the protocol's own events, well formed and not: fields of the wrong type or
missing, unknown events and fields, huge strings, junk nested in lists and objects, lines that
are not JSON, a last line cut short. Each goes through the real path of a check: the event
reader (in pieces, as the log grows), ``build`` with its findings, the JSON writer, and the text
and markdown renderers in every language. None may raise, and every report meets the shipped
schema. Bounded for CI: a few hundred examples, in-process, no worker started.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any

import jsonschema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import schema
from kernodeck_diagnostic.api import Request
from kernodeck_diagnostic.i18n import LANGUAGES, translator
from kernodeck_diagnostic.report.build import build, to_json
from kernodeck_diagnostic.report.findings import derive
from kernodeck_diagnostic.report.redact import Redactor
from kernodeck_diagnostic.report.render import markdown, text
from kernodeck_diagnostic.supervision.captures import last_stderr_line
from kernodeck_diagnostic.supervision.events import EventReader
from kernodeck_diagnostic.supervision.supervisor import WorkerRun
from kernodeck_diagnostic.worker import protocol as stages

EXAMPLES = 300  # in-process, 20 to 40 ms each (six renderings, the schema): about 10 s
# What conftest.assert_valid_report checks (the shipped schema, its formats), with the schema
# itself checked against its meta-schema once here rather than at every example (that check
# is most of the time jsonschema.validate takes).
_CHECKER = jsonschema.validators.validator_for(schema())
_CHECKER.check_schema(schema())
VALIDATOR = _CHECKER(schema(), format_checker=jsonschema.FormatChecker())

# -- values: the protocol's own, near misses, and junk ---------------------------------------------

# Strings the rules and the renderers look for, and strings that test the bounds.
WORDS = st.sampled_from([
    "", "12.8", "6.3.42131", "9.0", "12.0", "sm_90", "compute_90", "gfx942:sramecc+:xnack-",
    "cuda", "rocm", "cpu", "cuda:0", "cuda:7", "venv", "lists 2", "hides_all", "absent", "ok",
    "no_access", "site-packages", "working-folder", "file", "torch", "numpy", "MIG 1g.10gb",
    "NVIDIA H200", "RuntimeError", "UserWarning", "MemoryError", "ModuleNotFoundError",
    "CUDA error: unknown error", "found no NVIDIA driver on your system",
    "The NVIDIA driver on your system is too old (found version 11040)",
    "no kernel image is available for execution on the device", "error 802: system not yet "
    "initialized", "libcudnn.so.9: cannot open shared object file", "undefined symbol: ncclX",
    "DLL load failed while importing _C", "std::bad_alloc", "/home/alice/envs/lib/libc10.so",
    "token hf_abcdefghijklmnop", "p\udce9riph\udce9rique", "line\nbreak\ttab\x1b[31m", "`|*_<b>",
    "nan", "inf", "-inf", "error.check_failed", "error.gpu_unavailable.reason", "error.bogus",
])
HUGE = st.builds(lambda char, count: char * count, st.sampled_from(["x", "é", " ", "\n", "\ufffd"]),
                 st.integers(2_000, 70_000))
SCALARS = (st.none() | st.booleans() | st.integers(-10, 2**70) | st.floats()
           | WORDS | st.text(max_size=12))
JUNK = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=6) | WORDS, inner, max_size=3),
                    max_leaves=8)
NUMBER = st.sampled_from([4.0, 4, 8.0, 10.0, 16.0, 24.0, 40.0, 52.0, 196.0, 197.0, 0.0, "nan",
                          "inf", "-inf"]) | st.floats()
MATRIX = st.one_of(st.just([[4.0, 4.0], [10.0, 8.0]]), st.just([[16.0, 24.0], [40.0, 52.0]]),
                   st.lists(st.lists(NUMBER, max_size=3), max_size=3))
DEVICE = st.fixed_dictionaries(
    {"index": st.integers(0, 3), "name": st.none() | WORDS,
     "capability": st.none() | st.sampled_from(["9.0", "12.0", "8.6", "7.5"]),
     "total_memory_bytes": st.none() | st.integers(0, 2**40)},
    optional={"gcn_arch": WORDS, "error": WORDS})
# Values of the right shape for the facts the rules read most, so that the rules fire too.
GOOD_FACTS: dict[str, Any] = {
    "devices": st.lists(DEVICE, max_size=3),
    "arch_list": st.none() | st.lists(st.sampled_from(["sm_80", "sm_90", "compute_90", "gfx942"]),
                                      max_size=3),
    "visibility": st.none() | st.fixed_dictionaries({}, optional={
        "CUDA_VISIBLE_DEVICES": st.sampled_from(["unset", "empty", "hides_all", "lists 1"])}),
    "device_nodes": st.none() | st.fixed_dictionaries({
        "nvidiactl": st.booleans(), "nvidia_uvm": st.booleans(),
        "proc_driver_nvidia": st.booleans(), "dxg": st.booleans(),
        "kfd": st.sampled_from(["absent", "ok", "no_access"])}),
    "local_modules": st.none() | st.lists(st.fixed_dictionaries({
        "name": st.sampled_from(["typing", "numpy", "torch"]), "file": WORDS,
        "folder": st.sampled_from(["working-folder", "script-folder"]),
        "hides": st.sampled_from(["standard-library", "torch", "torch-dependency"])}),
        max_size=2),
    "visible_device_count": st.none() | st.integers(0, 4),
    **dict.fromkeys(("version", "distribution_version", "cuda_build", "hip_build",
                     "python_version", "numpy_version"),
                    st.sampled_from(["12.8", "11.8", "2.7.0+cu128", "2.7.0", "3.9.0", "custom",
                                     "", "13", "v"])),
    "backend": st.sampled_from(["cuda", "rocm", "cpu"]),
    "imported": st.booleans(),
    "distributions_on_path": st.none() | st.integers(0, 3),
    "duration_ms": st.none() | st.floats(0, 10_000),
}
FACT_NAMES = {block: sorted(schema()["properties"][block]["properties"])
              for block in stages.FACT_BLOCKS}


def fact_value(name: str) -> st.SearchStrategy[Any]:
    good = GOOD_FACTS.get(name, SCALARS)
    return st.one_of(good, good, SCALARS, JUNK)


@st.composite
def facts_event(draw: st.DrawFn) -> dict[str, Any]:
    block = draw(st.sampled_from(stages.FACT_BLOCKS))
    names = draw(st.lists(st.sampled_from(FACT_NAMES[block]) | st.text(max_size=8), max_size=5))
    return {"event": "facts", "block": block,
            "values": {name: draw(fact_value(name)) for name in names}}


def fields(**strategies: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(strategies)


STAGE = st.sampled_from(stages.STAGES)
ERROR = st.fixed_dictionaries(
    {"event": st.just("error"), "stage": STAGE, "kind": st.sampled_from(stages.ERROR_KINDS),
     "type": st.none() | WORDS, "message": WORDS | HUGE},
    optional={"missing_module": st.none() | st.sampled_from(["torch", "numpy"]),
              "message_key": WORDS,
              "message_values": st.dictionaries(st.sampled_from(
                  ["what", "reason", "index", "count", "module", "origin", "missing"]),
                  WORDS, max_size=3)})
RESULT = fields(event=st.just("result"), product=MATRIX, loss=NUMBER, gradient=MATRIX)
# Each event of the protocol, well formed.
WELL_FORMED = st.one_of(
    facts_event(),
    fields(event=st.just("stage_started"), stage=STAGE),
    fields(event=st.sampled_from(["stage_finished", "stage_failed"]), stage=STAGE,
           duration_ms=st.floats(0, 1e6)),
    fields(event=st.sampled_from(["step", "step_failed"]), stage=st.just("compute"),
           step=st.sampled_from(stages.STEPS)),
    fields(event=st.just("warning"), stage=STAGE, category=WORDS, message=WORDS | HUGE),
    ERROR,
    RESULT,
    fields(event=st.just("local_paths"), interpreter=st.none() | WORDS, torch=st.none() | WORDS),
    st.just({"event": "final"}),
)


@st.composite
def mangled(draw: st.DrawFn, events: st.SearchStrategy[dict[str, Any]] = WELL_FORMED,
            ) -> dict[str, Any]:
    """A protocol event with fields dropped, of the wrong type, or added."""
    event = dict(draw(events))
    names = sorted(set(event) - {"event"}) or ["t_ms"]
    for name in draw(st.lists(st.sampled_from(names), min_size=1, max_size=3, unique=True)):
        if draw(st.booleans()):
            event[name] = draw(st.sampled_from([{"stage": "compute"}, [], ["compute"], 7, 2.5,
                                                True, None, "bogus"]) | JUNK)
        else:
            event.pop(name, None)
    for name in draw(st.lists(st.text(max_size=6) | WORDS | st.sampled_from(
            ["stage", "kind", "values", "t_ms"]), max_size=2)):
        event[name] = draw(JUNK)
    return event


EVENT = st.one_of(WELL_FORMED, WELL_FORMED, facts_event(), mangled(),
                  st.dictionaries(st.text(max_size=8), JUNK, max_size=4))  # not an event at all


@st.composite
def log_line(draw: st.DrawFn) -> bytes:
    kind = draw(st.integers(0, 9))
    if kind == 0:  # not JSON, not UTF-8, not an object
        return draw(st.binary(max_size=40) | st.sampled_from(
            [b"[1, 2]", b'"text"', b"null", b'{"event": "err', b"\xff\xfe\x00"]))
    if kind == 1:  # nested deeper than any event
        depth = draw(st.integers(10, 3000))
        return b'{"event": "facts", "block": "pytorch", "values": {"devices": ' \
            + b"[" * depth + b"]" * depth + b"}}"
    event = draw(EVENT)
    return json.dumps(event, ensure_ascii=draw(st.booleans())).encode("utf-8", "surrogatepass")


@st.composite
def run_log(draw: st.DrawFn) -> list[bytes]:
    """A run as a worker tells it (facts, the stages up to one, maybe a result, an error, the
    final event), then spoiled: lines of any kind put anywhere, some of its own lines lost."""
    def encoded(event: dict[str, Any]) -> bytes:
        return json.dumps(event).encode("utf-8", "surrogatepass")

    lines = [encoded({"event": "facts", "block": block, "values": {
        name: draw(fact_value(name)) for name in draw(st.lists(
            st.sampled_from(FACT_NAMES[block]), unique=True, max_size=len(FACT_NAMES[block])))}})
        for block in stages.FACT_BLOCKS]
    for stage in stages.STAGES[:draw(st.integers(0, len(stages.STAGES)))]:
        lines += [encoded({"event": "stage_started", "stage": stage}),
                  encoded({"event": "stage_finished", "stage": stage, "duration_ms": 1.5})]
    lines += map(encoded, draw(st.lists(RESULT | mangled(RESULT), max_size=1)))
    lines += map(encoded, draw(st.lists(ERROR | mangled(ERROR) | mangled(ERROR), max_size=2)))
    if draw(st.booleans()):
        lines.append(encoded({"event": "final"}))
    for lost in sorted(draw(st.lists(st.integers(0, len(lines) - 1), max_size=2, unique=True)),
                       reverse=True):
        del lines[lost]
    for extra in draw(st.lists(log_line(), max_size=8)):
        lines.insert(draw(st.integers(0, len(lines))), extra)
    return lines


class Growing:
    """The log as the front reads it while the worker writes: ``step`` bytes at a time."""

    def __init__(self, data: bytes, step: int) -> None:
        self._data, self._step, self._at = data, step, 0

    def read(self, size: int) -> bytes:
        chunk = self._data[self._at:self._at + min(size, self._step)]
        self._at += len(chunk)
        return chunk


REQUEST = st.builds(Request, st.sampled_from(["gpu", "cpu"]), st.integers(0, 3),
                    st.sampled_from([5, 30, 120, 7.5]), st.booleans())
HOST: st.SearchStrategy[dict[str, Any] | None] = st.none() | st.fixed_dictionaries({
    "tool": st.just("nvidia-smi"), "status": st.just("ok"),
    "driver_version": st.none() | st.sampled_from(["470.82.01", "570.124.06", "x"]),
    "gpus": st.just([]), "mig_devices": st.none() | st.integers(0, 7)})
FRONT = st.none() | st.fixed_dictionaries({}, optional={
    "tool_environment": st.sampled_from(["pipx", "uv_tool", "venv"]),
    "library_override": st.just({"variable": "LD_LIBRARY_PATH", "library": "libcudnn.so.9",
                                 "conda_env_lib": False})})


@settings(max_examples=EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(lines=run_log() | st.lists(log_line(), max_size=25), ends_with_newline=st.booleans(),
       step=st.sampled_from([1 << 20, 4096, 7]),
       outcome=st.sampled_from(["finished", "crashed", "timeout"]),
       returncode=st.sampled_from([0, 1, -9, -11, None]),
       stderr=st.none() | st.binary(max_size=30) | WORDS.map(
           lambda words: words.encode("utf-8", "surrogateescape")), request=REQUEST,
       host=HOST, front=FRONT)
def test_any_event_stream_gives_a_valid_report_in_every_language(
        *, lines: list[bytes], ends_with_newline: bool, step: int, outcome: str,
        returncode: int | None, stderr: bytes | None, request: Request,
        host: dict[str, Any] | None, front: dict[str, Any] | None) -> None:
    log = b"\n".join(lines) + (b"\n" if ends_with_newline else b"")
    reader = EventReader(Growing(log, step))  # type: ignore[arg-type]
    reader.poll()
    reader.close()
    run = WorkerRun(reader.state, outcome, returncode, 0.25,  # type: ignore[arg-type]
                    stderr_line=None if stderr is None else _last_line(stderr))
    made = build(request, run, host, Redactor(), front)
    report = made.report

    VALIDATOR.validate(report)
    written = to_json(report).decode("utf-8")  # strict UTF-8: no lone surrogate is left
    assert json.loads(written, parse_constant=_not_json) == report
    for language in LANGUAGES:
        translate = translator(language)
        assert report["code"] in text(report, translate=translate, findings=made.findings)
        text(report, colour=True, translate=translate, findings=made.findings)
        markdown(report, translate, made.findings)
        assert [f["id"] for f in derive(report, translate)] == [
            f["id"] for f in report["findings"]]


def _last_line(stderr: bytes) -> str | None:
    """The worker's last line on stderr, as the supervisor reads it from its capture file."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "stderr")
        with open(path, "wb") as file:
            file.write(stderr)
        return last_stderr_line(path)


def _not_json(name: str) -> None:
    raise AssertionError(f"the report holds {name}, which JSON does not have")

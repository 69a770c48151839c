"""``compare`` for two trial attempts: what changed between them, as for two check reports.

An argument is an attempt when it is an attempt folder (holding ``attempt.json``) or a file
whose JSON says ``"format": "kernodeck-attempt"`` (``attempt.json`` itself, or a copy). An
attempt folder without ``attempt.json`` (the process was killed first: a SIGKILL, the OOM killer)
is read from its ``events.jsonl`` (and its beacon ``stage.bin``, the stage it was in), streamed and
bounded (``trial/log_reader.py``): its status is then ``unfinished``, and what the events say is
compared (stages started and completed, the first error, contracts, passes, parameters).

The two attempts are compared by their status (the headline, as the code heads a comparison of
reports), then, most important first: the last completed and last started stage, the first
error, the out-of-memory block, the contracts, the parameters, the command, the versions
(``pytorch``, ``runtime``), what was obtained, the tensors described, the memory peak per stage
(a change counts from 1 MiB and 10 percent) and the timing per stage (pass 0 apart from the
later passes' median, p95 and max, the slowest pass named; the reports' noise rule) and of the
passes. The verdict: a regression when the one judge (``trial/judge.py``) passes A and not B (a
stage failure B's program caught, B killed before its end), when a stage every call of which
completed in A has calls in B and none completed, or a contract that passed in A fails or is
missing in B (or fails in B, unchecked in A); changed when the judge's outcome, a contract's
result or declaration (its dimension), what was obtained (counts of vectors, ids, dimensions,
parameters) or the first error (type, stage) differs; else the same. An attempt read from its
events alone is compared on what its log says (the Python and torch versions of
``attempt_started`` included): what only ``attempt.json`` holds is left out, never "changed
to null". The walk over the facts, the
noise rule of the timings and the output are those of two reports (``report/compare.py``);
``compare`` (the command) is ``commands/compare.py``.
"""

from __future__ import annotations

import os
from typing import Any

from ..i18n import ENGLISH
from ..report.compare import (
    TIMINGS,
    Comparison,
    differences,
    moved,
    render_markdown,
    timing_moved,
)
from ..report.load import Loaded, file_name
from ..report.load import load as read_report
from . import notebook
from .accessors import UNFINISHED, judge_document, stage_counts
from .folder import ATTEMPT_FILE, VERSION
from .judge import Judgement
from .log import EVENTS_FILE
from .log_reader import from_events, is_attempt_document

__all__ = ["UNFINISHED", "Attempt", "Compared", "compare", "compare_attempts", "from_events",
           "is_attempt_document", "load", "open_attempt", "regressions"]

PASSES = "passes_ms"  # the passes' own durations, compared like a stage's

# A peak counts as changed when it moved by this many bytes and this fraction of the smaller.
MEMORY_MIN_DELTA_BYTES = 2**20
MEMORY_MIN_RATIO = 0.1


def compare(a: dict[str, Any], b: dict[str, Any]) -> Comparison:
    """The differences between two trial attempts, headed by their status as a comparison of
    reports is by their code."""
    facts_a, facts_b = comparable(a), comparable(b)
    for mine, other, document in ((facts_a, facts_b, a), (facts_b, facts_a, b)):
        if document.get("status") == UNFINISHED:  # what its log cannot say is left out
            _known_only(mine, other)
    changes = list(differences("", facts_a, facts_b))
    changes += memory_changes(a, b)
    timings_a, timings_b = timings(a), timings(b)
    for key in [*timings_a, *(k for k in timings_b if k not in timings_a)]:
        before, after = timings_a.get(key), timings_b.get(key)
        if timing_moved(before, after):
            changes.append({"field": key, "a": before, "b": after})
            if key.endswith(".later_passes_max"):  # which pass it was
                slowest = key[:-len("later_passes_max")] + "slowest_pass"
                changes.append({"field": slowest, "a": _slowest(a, slowest),
                                "b": _slowest(b, slowest)})
    contracts_a, contracts_b = _contract_results(a), _contract_results(b)
    error_a, error_b = _error_key(a), _error_key(b)
    judged_a, judged_b = judge_document(a), judge_document(b)
    return Comparison(str(a.get("status")), str(b.get("status")), changes, [], [], "status",
                      regressions=regressions(a, b),
                      verdict_changed=contracts_a != contracts_b or error_a != error_b
                      or judged_a.outcome != judged_b.outcome
                      or _declared(a) != _declared(b),
                      notes=[{"which": which, "stage": document.get("last_started_stage"),
                              "pass_index": _last_started_pass(document)}
                             for which, document in (("A", a), ("B", b))
                             if document.get("status") == UNFINISHED])


class Attempt:
    """An attempt read from Python (``open_attempt``): its document (``attempt.json``'s, or the
    one its ``events.jsonl`` tells when the process was killed first: status ``unfinished``),
    displayed in a notebook as the summary a ``Trial`` shows when it ends."""

    def __init__(self, document: dict[str, Any], name: str) -> None:
        self.document = document
        self.name = name

    @property
    def status(self) -> str:
        return str(self.document.get("status"))

    @property
    def verdict(self) -> Judgement:
        """The one judge's outcome of the attempt and its causes (``trial/judge.py``)."""
        return judge_document(self.document, self.name)

    def _repr_markdown_(self) -> str:
        return notebook.markdown(self.document, self.name)

    def __repr__(self) -> str:
        return f"<Attempt {self.name} {self.status}: {self.verdict.outcome}>"


class Compared:
    """Two attempts compared from Python (``compare_attempts``): the comparison the command
    prints, displayed in a notebook as its markdown."""

    def __init__(self, result: Comparison, a: Attempt, b: Attempt) -> None:
        self.result, self.a, self.b = result, a, b

    @property
    def verdict(self) -> str:
        return self.result.verdict

    @property
    def changes(self) -> list[dict[str, Any]]:
        return list(self.result.changes)

    def _repr_markdown_(self) -> str:
        return render_markdown(self.result, self.a.name, self.b.name, ENGLISH)

    def __repr__(self) -> str:
        return f"<Compared {self.a.name} {self.b.name}: {self.verdict}>"


def open_attempt(path: str | os.PathLike[str]) -> Attempt:
    """The attempt in a folder (or an ``attempt.json``); ``ValueError`` saying why when it is
    none this tool can read."""
    loaded = load(os.fspath(path))
    if loaded.report is None:
        raise ValueError(f"{loaded.name}: {loaded.why(ENGLISH)}")
    return Attempt(loaded.report, loaded.name)


def compare_attempts(a: str | os.PathLike[str] | Attempt,
                     b: str | os.PathLike[str] | Attempt) -> Compared:
    """What changed from attempt A to attempt B, as ``kernodeck-diagnostic compare A B``."""
    first, second = (item if isinstance(item, Attempt) else open_attempt(item)
                     for item in (a, b))
    return Compared(compare(first.document, second.document), first, second)


def regressions(a: dict[str, Any], b: dict[str, Any]) -> list[dict[str, Any]]:
    """What got worse from A to B: the judge passes A and not B; a stage whose every call
    completed in A has calls in B, none completed; a contract that passed in A fails in B or is
    gone; a contract that fails in B and was not checked in A."""
    found: list[dict[str, Any]] = []
    judged_a, judged_b = judge_document(a), judge_document(b)
    # Failed contracts are each named below: the judge's other causes are said here.
    why = [reason.text for reason in judged_b.reasons if reason.kind != "contracts_failed"]
    if judged_a.passed and not judged_b.passed and why:
        found.append({"kind": "passed_to", "b": judged_b.outcome, "why": "; ".join(why[:3])})
    counts_b = {item.name: item for item in stage_counts(b)}
    for stage in stage_counts(a):
        then = counts_b.get(stage.name)
        if stage.calls and stage.completed == stage.calls and then is not None \
                and then.calls and not then.completed:
            found.append({"kind": "stage_stopped", "stage": stage.name,
                          "a": f"{stage.completed}/{stage.calls}",
                          "b": f"{then.completed}/{then.calls}"})
    before, after = _contract_results(a), _contract_results(b)
    for name, passed in before.items():
        if passed and after.get(name) is False:
            found.append({"kind": "contract_failing", "name": name})
        elif passed and name not in after:
            found.append({"kind": "contract_lost", "name": name})
    found += [{"kind": "contract_new_failing", "name": name} for name, passed in after.items()
              if passed is False and name not in before]
    return found


def _contract_results(attempt: dict[str, Any]) -> dict[str, bool]:
    """Each contract's result by name (a name checked many times passes when each passed)."""
    results: dict[str, bool] = {}
    for item in _list(attempt.get("contracts")):
        if isinstance(item, dict):
            name = str(item.get("name"))
            results[name] = results.get(name, True) and item.get("passed") is True
    return results


def _declared(attempt: dict[str, Any]) -> tuple[Any, ...]:
    """What the contracts declared and obtained, as counts: each contract's declared dimension
    (``expected_dim``), and ``output`` (vectors, ids, dimensions; parameters): 768 → 384, or
    100 → 10 ids, is a change a gate sees even when both attempts passed."""
    dims = sorted((str(item.get("name")), str(item.get("expected_dim")))
                  for item in _list(attempt.get("contracts"))
                  if isinstance(item, dict) and "expected_dim" in item)
    output = _object(attempt.get("output"))
    counts = sorted((str(block), str(key), str(value)) for block, held in output.items()
                    if isinstance(held, dict) for key, value in held.items()
                    if key in ("vectors", "ids", "dimensions", "parameters"))
    return tuple(dims), tuple(counts)


def _known_only(unfinished: dict[str, Any], other: dict[str, Any]) -> None:
    """What an attempt read from its log cannot say is left out on both sides: of the versions,
    the keys its ``attempt_started`` gave; what only ``attempt.json`` holds (what was obtained,
    the tensors described), unless the log said it."""
    for block in ("runtime", "pytorch"):
        known = _object(unfinished.get(block))
        other[block] = {key: value for key, value in _object(other.get(block)).items()
                        if key in known}
    for key in ("output", "tensors"):
        if not unfinished.get(key):
            unfinished[key] = other[key] = None
    passes = _object(unfinished.get("passes"))
    if passes.get("requested") is None:
        other["passes"] = {**_object(other.get("passes")), "requested": None}


def _error_key(attempt: dict[str, Any]) -> tuple[Any, Any]:
    error = _object(attempt.get("first_error"))
    return error.get("type"), error.get("stage")


def _slowest(attempt: dict[str, Any], field: str) -> int | None:
    """The index of the slowest later pass for ``timings_ms.<stage>.slowest_pass`` (or the
    passes' own)."""
    if field.startswith(PASSES + "."):
        later = _object(_object(attempt.get("passes")).get("later_passes"))
    else:
        stage = field[len(TIMINGS) + 1:-len(".slowest_pass")]
        item = next((item for item in _list(attempt.get("timings")) if isinstance(item, dict)
                     and str(item.get("stage")) == stage), {})
        later = _object(item.get("later_passes"))
    index = later.get("slowest_pass")
    return index if isinstance(index, int) and not isinstance(index, bool) else None


def _last_started_pass(attempt: dict[str, Any]) -> int | None:
    index = attempt.get("last_started_pass")
    return index if isinstance(index, int) and not isinstance(index, bool) else None


def load(path: str) -> Loaded:
    """An attempt, from its folder or its attempt.json, as ``report.load.Loaded``: shown by its
    attempt id (the folder's name), never the folders above it."""
    target = os.path.join(path, ATTEMPT_FILE) if os.path.isdir(path) else path
    shown = file_name(path)
    if os.path.isdir(path) and not os.path.lexists(target) and os.path.isfile(
            os.path.join(path, EVENTS_FILE)):
        document = from_events(os.path.join(path, EVENTS_FILE))
        if document is not None:
            return Loaded(file_name(os.path.abspath(path)), report=document)
    if os.path.basename(target) == ATTEMPT_FILE:
        shown = file_name(os.path.dirname(os.path.abspath(target)))
    # The attempt.json of a folder given is looked up by its name: never through a link there.
    return read_report(target, shown, judge, follow_links=target == path)


def judge(document: Any, name: str) -> Loaded:
    """Whether a parsed JSON document is an attempt this tool can read."""
    if not is_attempt_document(document):
        return Loaded(name, reason="not_a_report")
    if document.get("version") != VERSION or isinstance(document.get("version"), bool):
        return Loaded(name, reason="schema_version", detail=str(document.get("version"))[:20])
    return Loaded(name, report=document)


def comparable(attempt: dict[str, Any]) -> dict[str, Any]:
    """The facts of an attempt in the order they are compared (status aside: it heads)."""
    contracts = {str(item.get("name")): {"passed": item.get("passed"),
                                         "detail": item.get("detail")}
                 for item in _list(attempt.get("contracts")) if isinstance(item, dict)}
    tensors = {str(item.get("name")): item.get("text")
               for item in _list(attempt.get("tensors")) if isinstance(item, dict)}
    passes = _object(attempt.get("passes"))
    return {
        "last_completed_stage": attempt.get("last_completed_stage"),
        "last_started_stage": attempt.get("last_started_stage"),
        "first_error": attempt.get("first_error"),
        "oom": _without(attempt.get("oom"), "advice"),
        "contracts": contracts,
        "params": attempt.get("params"),
        "command": attempt.get("command"),
        "pytorch": attempt.get("pytorch"),
        "runtime": attempt.get("runtime"),
        "output": attempt.get("output"),
        "passes": {"requested": passes.get("requested"), "completed": passes.get("completed")},
        "tensors": tensors,
    }


def memory_changes(a: dict[str, Any], b: dict[str, Any]) -> list[dict[str, Any]]:
    """The stages whose memory peak moved noticeably (``memory.<stage>.peak_bytes``)."""
    peaks_a, peaks_b = _peaks(a), _peaks(b)
    changes = []
    for stage in [*peaks_a, *(name for name in peaks_b if name not in peaks_a)]:
        before, after = peaks_a.get(stage), peaks_b.get(stage)
        if _moved(before, after):
            changes.append({"field": f"memory.{stage}.peak_bytes", "a": before, "b": after})
    return changes


def timings(attempt: dict[str, Any]) -> dict[str, float]:
    """Per stage: outside the passes, pass 0, the later passes' median, p95 and max
    (``timings_ms.*``); the passes' own (``passes_ms.*``)."""
    found: dict[str, float] = {}
    items = [(f"{TIMINGS}.{item.get('stage')}", item)
             for item in _list(attempt.get("timings")) if isinstance(item, dict)]
    items.append((PASSES, _object(attempt.get("passes"))))
    for prefix, item in items:
        later = _object(item.get("later_passes"))
        for key, value in (("", item.get("outside_passes_ms")),
                           (".first_pass", item.get("first_pass_ms")),
                           (".later_passes_median", later.get("median_ms")),
                           (".later_passes_p95", later.get("p95_ms")),
                           (".later_passes_max", later.get("max_ms"))):
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                found[f"{prefix}{key}"] = float(value)
    return found


def _peaks(attempt: dict[str, Any]) -> dict[str, int]:
    """The largest peak of each stage: the device's when it ran on one, else the process's."""
    peaks: dict[str, int] = {}
    for item in _list(attempt.get("stage_summary")):  # every call's, where it is kept
        if isinstance(item, dict):
            peak = item.get("device_peak_bytes")
            peak = peak if isinstance(peak, int) else item.get("rss_peak_bytes")
            if isinstance(peak, int) and not isinstance(peak, bool):
                peaks[str(item.get("stage"))] = peak
    for record in _list(attempt.get("stages")):
        memory = record.get("memory") if isinstance(record, dict) else None
        if not isinstance(memory, dict):
            continue
        peak = memory.get("peak_allocated_bytes") if memory.get("device") else \
            memory.get("rss_peak_bytes")
        if isinstance(peak, int) and not isinstance(peak, bool):
            name = str(record.get("name"))
            peaks[name] = max(peak, peaks.get(name, peak))
    return peaks


def _moved(a: int | None, b: int | None) -> bool:
    return moved(a, b, MEMORY_MIN_DELTA_BYTES, MEMORY_MIN_RATIO)


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _without(value: Any, key: str) -> Any:
    """An object without one of its keys (a sentence that only restates the others)."""
    return {k: v for k, v in value.items() if k != key} if isinstance(value, dict) else value

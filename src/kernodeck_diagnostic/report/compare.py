"""What changed between two readable reports (``compare``, the command: ``commands/compare.py``).

Every fact of the two reports is compared, whatever block it is in, and only what differs is
shown, most important first: the verdict (code, status, stage, exit code, the error), what was
asked, then the layers in the order the check runs them (the runtime, the PyTorch build, the
devices it sees, the computation, the host), the findings (by id: added, removed, or with other
evidence), the warnings, and the tool's own version. Not compared: when a report was written, and
the sentences that only restate the code. Stage timings come last, and only those that moved
noticeably.

Two trial attempts are compared by the same walk (``differences``), headed by their status
instead of a code: what of an attempt is compared is ``trial/compare.py``'s.

The comparison's verdict (``compare``'s exit status, codes ``COMPARE_*``): ``regression`` when A
passed and B did not (for attempts: see ``trial/compare.py``), each named; ``changed`` when the
code differs otherwise (a failure fixed, one failure for another); else ``same``, whatever other
fact changed (listed all the same).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from ..i18n import Translate
from ..terminal import CELL_LIMIT, cell
from ..worker.protocol import STAGES
from .codes import CODES, VERDICTS
from .markup import table as markdown_table
from .tables import md, md_code, table

# The version of the layout of ``--format json``, its first key: raised when a key is renamed or
# removed, or changes meaning (a key added keeps it).
COMPARE_VERSION = 1

# The order of importance of the report's blocks: the verdict, what was asked, the layers in the
# order the check runs them, then what the tool itself said. Blocks not named here (a newer
# report's) follow, in the report's own order.
ORDER = ("code", "status", "stage", "exit_code", "error", "request", "runtime", "pytorch",
         "execution", "distributed", "libraries", "host", "system", "findings", "warnings",
         "tool",
         "schema_version")
# Within ``pytorch``: the build's facts first, then what it sees of the devices.
DEVICE_FACTS = ("gpu_available", "visible_device_count", "init_error", "devices")
# Not facts to compare: when the report was written; the code's own sentences (they change with
# the code, which heads the comparison); the error message's key and values (the message itself
# is compared). Durations are compared apart, with a noise rule (TIMINGS).
SKIPPED = frozenset({"created_at", "summary", "next_action", "error.message_key",
                     "error.message_values", "timings_ms", "execution.duration_ms",
                     "distributed.collective.duration_ms"})
# Other lists of objects walked by each entry's name, not by position: one library more or less
# must not shift every other (``pytorch.cuda_libraries[nvidia-cudnn-cu12].version``).
NAMED_FACTS = ("pytorch.cuda_libraries",)
TIMINGS = "timings_ms"
# other durations, compared like the stage timings
DURATIONS = ("execution.duration_ms", "distributed.collective.duration_ms")
# The library layer's lists, walked by each entry's name (``libraries.kernels[compile].status``);
# their measurements: durations compared like the stage timings, bandwidths not at all (two runs
# never copy at the same speed, and the speed is a fact, not a verdict).
NAMED_LISTS = ("libraries.extensions", "libraries.kernels")
LIBRARY_DURATIONS = ("duration_ms", "compile_ms", "run_ms")
LIBRARY_SKIPPED = ("host_to_device_bytes_per_s", "device_to_host_bytes_per_s")
# Stage timings in the order the stages run; any other key follows, sorted, then the total.
STAGE_ORDER = STAGES
TOTAL = "worker_total"
# Two runs never take exactly the same time: a timing counts as changed when it moved by at least
# this many milliseconds AND by at least this fraction of the smaller of the two values.
TIMING_MIN_DELTA_MS = 100.0
TIMING_MIN_RATIO = 0.2


@dataclass(frozen=True)
class Comparison:
    """What differs between report A and report B."""

    code_a: str
    code_b: str
    changes: list[dict[str, Any]]  # {"field", "a", "b"}: field is the path, most important first
    findings_added: list[str]      # ids in B, not in A
    findings_removed: list[str]    # ids in A, not in B
    # What heads the comparison: a report's code, or a trial attempt's status (code_a, code_b).
    subject: Literal["code", "status"] = "code"
    # What got worse from A to B: {"kind", ...} (kinds: the catalog's compare.regression.*).
    regressions: list[dict[str, Any]] = field(default_factory=list)
    # The verdict differs besides the headline (an attempt's contracts, its first error).
    verdict_changed: bool = False
    # An attempt that did not finish: the stage it had started ({"which", "stage", "pass_index"}).
    notes: list[dict[str, Any]] = field(default_factory=list)

    @property
    def same_code(self) -> bool:
        return self.code_a == self.code_b

    @property
    def verdict(self) -> Literal["same", "changed", "regression"]:
        if self.regressions:
            return "regression"
        return "changed" if self.verdict_changed or not self.same_code else "same"

    @property
    def exit_code(self) -> int:
        """``compare``'s exit status: COMPARE_SAME, COMPARE_CHANGED or COMPARE_REGRESSION."""
        return CODES[f"COMPARE_{self.verdict.upper()}"].exit_code

    def as_json(self) -> dict[str, Any]:
        return {"compare_version": COMPARE_VERSION, f"same_{self.subject}": self.same_code,
                "verdict": self.verdict, "regressions": self.regressions,
                "changes": self.changes,
                "findings_added": self.findings_added, "findings_removed": self.findings_removed}


def compare(a: dict[str, Any], b: dict[str, Any]) -> Comparison:
    """The differences between two readable reports (see ``report.load.load``).

    A change's ``field`` is the path of the fact: ``pytorch.cudnn_version``,
    ``pytorch.devices[0].capability``, ``findings[NUMPY_MISSING].evidence``, ``timings_ms.import``.
    A value missing on one side is null there.
    """
    changes = list(differences("", a, b))
    changes += _timing_changes(a, b)
    ids_a, ids_b = _finding_ids(a), _finding_ids(b)
    passed_a, passed_b = (VERDICTS.get(report["code"]) for report in (a, b))
    worse = passed_a is not None and passed_a.passed and not (passed_b and passed_b.passed)
    return Comparison(a["code"], b["code"], changes,
                      [i for i in ids_b if i not in ids_a], [i for i in ids_a if i not in ids_b],
                      regressions=[{"kind": "passed_to_failed", "a": a["code"], "b": b["code"]}]
                      if worse else [])


# A regression's kind and its sentence.
REGRESSIONS = {
    "passed_to_failed": "compare.regression.passed_to_failed",
    "passed_to": "compare.regression.passed_to",
    "stage_stopped": "compare.regression.stage_stopped",
    "contract_failing": "compare.regression.contract_failing",
    "contract_lost": "compare.regression.contract_lost",
    "contract_new_failing": "compare.regression.contract_new_failing",
}


def verdict_lines(result: Comparison, t: Translate) -> list[str]:
    """The lines under the headline: each regression, the stage an unfinished attempt had
    started."""
    lines = [t("compare.regression", what=t(REGRESSIONS[item["kind"]],
                                            **{k: v for k, v in item.items() if k != "kind"}))
             for item in result.regressions]
    for note in result.notes:
        if note["pass_index"] is None:
            lines.append(t("compare.last_started", which=note["which"], stage=note["stage"]))
        else:
            lines.append(t("compare.last_started_pass", which=note["which"], stage=note["stage"],
                           index=note["pass_index"]))
    return lines


def render_text(result: Comparison, name_a: str, name_b: str, t: Translate) -> str:
    lines = [_headline(result, t), *(cell(text, 400) for text in verdict_lines(result, t))]
    rows = [(cell(change["field"]), _shown(change, "a"), _shown(change, "b"))
            for change in result.changes if change["field"] != "code"]
    if rows:
        lines += table([(t("compare.header.field"), f"A ({name_a})", f"B ({name_b})"), *rows])
    if result.findings_added:
        lines.append(t("compare.findings_added", ids=cell(result.findings_added, 400)))
    if result.findings_removed:
        lines.append(t("compare.findings_removed", ids=cell(result.findings_removed, 400)))
    if not rows and not result.findings_added and not result.findings_removed:
        lines.append(t("compare.nothing_else"))
    return "\n".join(lines) + "\n"


def render_markdown(result: Comparison, name_a: str, name_b: str, t: Translate) -> str:
    lines = [f"**{_headline(result, t, md)}**", ""]
    extra = verdict_lines(result, t)
    if extra:
        lines += [*(f"- {md(text)}" for text in extra), ""]
    rows = [(md_code(change["field"]), md(_shown(change, "a")), md(_shown(change, "b")))
            for change in result.changes if change["field"] != "code"]
    if rows:
        header = (md(t("compare.header.field")), f"A ({md_code(name_a)})", f"B ({md_code(name_b)})")
        lines += [*markdown_table([header, *rows]), ""]
    if result.findings_added:
        lines.append("- " + t("compare.findings_added",
                              ids=", ".join(md_code(i) for i in result.findings_added)))
    if result.findings_removed:
        lines.append("- " + t("compare.findings_removed",
                              ids=", ".join(md_code(i) for i in result.findings_removed)))
    if not rows and not result.findings_added and not result.findings_removed:
        lines.append(md(t("compare.nothing_else")))
    return "\n".join(lines).rstrip("\n") + "\n"


# What the headline compares (``Comparison.subject``): its sentence when alike, when not.
_HEADLINES = {"code": ("compare.same_code", "compare.code_changed"),
              "status": ("compare.same_status", "compare.status_changed")}


def _headline(result: Comparison, t: Translate, shown: Callable[[Any], str] = str) -> str:
    """The first line; ``shown`` prepares the codes (markdown escapes them, the text does not)."""
    same, changed = _HEADLINES[result.subject]
    if result.same_code:
        return t(same, code=shown(result.code_a))
    return t(changed, a=shown(result.code_a), b=shown(result.code_b))


# -- the walk over every fact ---------------------------------------------------------------------

def differences(path: str, a: Any, b: Any) -> Iterator[dict[str, Any]]:
    """Every fact that differs under ``path``, walking objects by key and lists of objects by
    position (findings by id), most important first."""
    if path in SKIPPED or _library_measurement(path):
        return
    if path == "findings" and _listish(a) and _listish(b):
        yield from _finding_differences(a or [], b or [])
    elif (path in NAMED_LISTS or path in NAMED_FACTS) and _listish(a) and _listish(b) and (
            a is not None or b is not None):
        by_name_a, by_name_b = _keyed(a or [], "name"), _keyed(b or [], "name")
        for name in [*by_name_a, *(n for n in by_name_b if n not in by_name_a)]:
            yield from differences(f"{path}[{name}]", by_name_a.get(name), by_name_b.get(name))
    elif _objectish(a) and _objectish(b) and (isinstance(a, dict) or isinstance(b, dict)):
        a, b = a or {}, b or {}
        for key in _keys(path, a, b):
            yield from differences(f"{path}.{key}" if path else str(key), a.get(key), b.get(key))
    elif _listish(a) and _listish(b) and _has_objects(a, b):
        a, b = a or [], b or []
        for index in range(max(len(a), len(b))):
            yield from differences(f"{path}[{index}]", a[index] if index < len(a) else None,
                                    b[index] if index < len(b) else None)
    elif not (a == b and _same_types(a, b)):
        yield {"field": path, "a": a, "b": b}


def _keys(path: str, a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """The keys of both objects in the order of importance: A's order, then B's new keys."""
    keys = [*a, *(key for key in b if key not in a)]
    if path == "":
        first = [key for key in ORDER if key in keys]
        return first + [key for key in keys if key not in ORDER]
    if path == "pytorch":
        return ([key for key in keys if key not in DEVICE_FACTS]
                + [key for key in DEVICE_FACTS if key in keys])
    return keys


def _finding_differences(a: list[Any], b: list[Any]) -> Iterator[dict[str, Any]]:
    """Findings by id, in B's order then A's: a finding added or removed whole (the other side
    null), or the facts of one found in both that differ (its evidence, its severity)."""
    by_id_a, by_id_b = _findings_by_id(a), _findings_by_id(b)
    for identifier in [*by_id_b, *(i for i in by_id_a if i not in by_id_b)]:
        before, after = by_id_a.get(identifier), by_id_b.get(identifier)
        path = f"findings[{identifier}]"
        if before is None or after is None:
            yield {"field": path, "a": before, "b": after}
        else:
            yield from differences(path, before, after)


def _findings_by_id(findings: list[Any]) -> dict[str, dict[str, Any]]:
    return _keyed(findings, "id")


def _keyed(entries: list[Any], key: str) -> dict[str, dict[str, Any]]:
    """The objects of a list by their ``key`` (a finding's id, an extension's name), the first
    of each."""
    found: dict[str, dict[str, Any]] = {}
    for entry in entries:
        identifier = entry.get(key) if isinstance(entry, dict) else None
        if isinstance(identifier, str) and identifier not in found:
            found[identifier] = entry
    return found


def _finding_ids(report: dict[str, Any]) -> list[str]:
    findings = report.get("findings")
    return list(_findings_by_id(findings if isinstance(findings, list) else []))


def _library_measurement(path: str) -> bool:
    """A measurement of an extension or a kernel: compared as a timing, or not at all."""
    return path.startswith(NAMED_LISTS) and path.rsplit(".", 1)[-1] in (
        *LIBRARY_DURATIONS, *LIBRARY_SKIPPED)


def _objectish(value: Any) -> bool:
    return value is None or isinstance(value, dict)


def _listish(value: Any) -> bool:
    return value is None or isinstance(value, list)


def _has_objects(*lists: list[Any] | None) -> bool:
    return any(isinstance(item, dict) for items in lists for item in items or ())


def _same_types(a: Any, b: Any) -> bool:
    """True and 1, or 1 and 1.0, differ in a report; inside lists and objects too."""
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return all(_same_types(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return all(_same_types(a[key], b[key]) for key in a)
    return True


# -- timings ---------------------------------------------------------------------------------------

def _timing_changes(a: dict[str, Any], b: dict[str, Any]) -> list[dict[str, Any]]:
    timings_a, timings_b = _timings(a), _timings(b)
    changes = []
    for key in _timing_keys(timings_a, timings_b):
        before, after = timings_a.get(key), timings_b.get(key)
        if timing_moved(before, after):
            changes.append({"field": key, "a": before, "b": after})
    return changes


def _timings(report: dict[str, Any]) -> dict[str, float]:
    """The stage timings (``timings_ms.<stage>``) and the other durations, by path."""
    timings = report.get(TIMINGS)
    pairs: list[tuple[str, Any]] = [(f"{TIMINGS}.{stage}", ms) for stage, ms in
                                    (timings.items() if isinstance(timings, dict) else ())]
    for path in DURATIONS:
        *blocks, key = path.split(".")
        holder: Any = report
        for block in blocks:
            holder = holder.get(block) if isinstance(holder, dict) else None
        pairs.append((path, holder.get(key) if isinstance(holder, dict) else None))
    libraries = report.get("libraries")
    for path in NAMED_LISTS:
        entries = libraries.get(path.split(".")[1]) if isinstance(libraries, dict) else None
        for name, entry in _keyed(entries if isinstance(entries, list) else [], "name").items():
            pairs += [(f"{path}[{name}].{key}", entry.get(key)) for key in LIBRARY_DURATIONS]
    return {str(path): float(ms) for path, ms in pairs
            if isinstance(ms, (int, float)) and not isinstance(ms, bool)}


def _timing_keys(a: dict[str, float], b: dict[str, float]) -> list[str]:
    present = set(a) | set(b)
    stages = [f"{TIMINGS}.{stage}" for stage in STAGE_ORDER]
    total = f"{TIMINGS}.{TOTAL}"
    known = [key for key in stages if key in present]
    others = sorted(key for key in present - set(stages) - {total} - set(DURATIONS))
    return (known + others + ([total] if total in present else [])
            + [key for key in DURATIONS if key in present])


def moved(a: float | None, b: float | None, at_least: float, ratio: float) -> bool:
    """The one rule of a measure that changed between two runs: it moved by ``at_least`` (its
    unit) AND by ``ratio`` of the smaller of the two values; one side unknown is a change when
    the other is known."""
    if a is None or b is None:
        return a is not b
    delta = abs(b - a)
    return delta >= at_least and delta >= ratio * min(a, b)


def timing_moved(a: float | None, b: float | None) -> bool:
    return moved(a, b, TIMING_MIN_DELTA_MS, TIMING_MIN_RATIO)


# -- showing a value -------------------------------------------------------------------------------

def _shown(change: dict[str, Any], side: str) -> str:
    value, other = change[side], change["b" if side == "a" else "a"]
    if (change["field"].startswith(f"{TIMINGS}.") or change["field"] in DURATIONS
            or _library_measurement(change["field"])):
        return _duration(value, change["a"] if side == "b" else None)
    if change["field"].startswith("findings[") and isinstance(value, dict):
        return cell(f"{value.get('severity')}: {value.get('summary')}")
    return _differing_part(_flat(value), _flat(other))


def _duration(value: float | None, before: float | None) -> str:
    if value is None:
        return cell(None)
    text = f"{value:.1f} ms"
    if before is not None:
        text += f" ({value - before:+.1f} ms)"
    return text


def _flat(value: Any) -> str:
    return cell(value, limit=2**31)


def _differing_part(text: str, other: str, limit: int = CELL_LIMIT) -> str:
    """``text`` cut to ``limit``, starting a little before where it departs from ``other``: two
    long messages that differ late must not look the same once cut."""
    if len(text) <= limit:
        return text
    same = 0
    for mine, theirs in zip(text, other):
        if mine != theirs:
            break
        same += 1
    start = max(0, same - 20) if same > limit - 20 else 0
    shown = ("…" + text[start + 1:]) if start else text
    return shown if len(shown) <= limit else shown[:limit - 1] + "…"

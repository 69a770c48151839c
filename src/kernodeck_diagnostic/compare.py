"""``kernodeck-diagnostic compare A.json B.json``: what changed between two attempts.

    $ kernodeck-diagnostic compare before.json after.json
    code changed: GPU_CHECK_PASSED -> OUT_OF_MEMORY
    field                        A (before.json)  B (after.json)
    exit_code                    0                9
    status                       passed           failed
    execution.product_verified   true             false
    execution.gradient_verified  true             false
    error.type                   null             OutOfMemoryError
    error.step                   null             allocate

Only what differs is shown: the code, exit code, stage, status, versions, backend, devices, where
the computation ran, whether it was verified, the error's type and step, the driver, findings added
or removed (by id) and the stage timings that moved noticeably. Exit 0 when both reports have the
same code, 1 when the code changed, 2 when an argument is not a readable report (one line says
which and why; only file names are shown, never the folders they are in).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .i18n import Translate
from .reading import (
    Loaded,
    Parser,
    add_common_options,
    cell,
    field,
    load,
    markdown_table,
    md,
    md_code,
    run_command,
    table,
)
from .terminal import line, write

PROG = "kernodeck-diagnostic compare"
EXIT_SAME, EXIT_CHANGED, EXIT_UNREADABLE = 0, 1, 2

# The fields compared, in the order shown. Paths name report fields (see docs/report.md).
FIELDS = (
    "code", "exit_code", "status", "stage",
    "request.device", "request.device_index",
    "runtime.python_version", "runtime.environment_kind",
    "pytorch.version", "pytorch.cuda_build", "pytorch.hip_build", "pytorch.backend",
    "pytorch.gpu_available", "pytorch.visible_device_count",
)
DEVICE_NAMES = "pytorch.devices[].name"
LATER_FIELDS = (
    "host.driver_version",
    "execution.device", "execution.product_verified", "execution.gradient_verified",
    "error.type", "error.step",
)
# Stage timings in the order the stages run; any other key follows, sorted, then the total.
STAGE_ORDER = ("interpreter", "import", "backend", "device", "compute", "collective", "output")
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
    changes: list[dict[str, Any]]  # {"field", "a", "b"}, in the order of FIELDS, then timings
    findings_added: list[str]      # ids in B, not in A
    findings_removed: list[str]    # ids in A, not in B

    @property
    def same_code(self) -> bool:
        return self.code_a == self.code_b

    def as_json(self) -> dict[str, Any]:
        return {"same_code": self.same_code, "changes": self.changes,
                "findings_added": self.findings_added, "findings_removed": self.findings_removed}


def main(argv: Sequence[str]) -> int:
    return run_command(PROG, argv, _parser, _act)


def compare(a: dict[str, Any], b: dict[str, Any]) -> Comparison:
    """The differences between two readable reports (see ``reading.load``)."""
    changes = [_change(path, field(a, path), field(b, path)) for path in FIELDS]
    changes.append(_change(DEVICE_NAMES, _device_names(a), _device_names(b)))
    changes += [_change(path, field(a, path), field(b, path)) for path in LATER_FIELDS]
    timings_a, timings_b = _timings(a), _timings(b)
    for stage in _timing_keys(timings_a, timings_b):
        before, after = timings_a.get(stage), timings_b.get(stage)
        if _timing_moved(before, after):
            changes.append({"field": f"timings_ms.{stage}", "a": before, "b": after})
    ids_a, ids_b = _finding_ids(a), _finding_ids(b)
    return Comparison(a["code"], b["code"], [change for change in changes if change],
                      [i for i in ids_b if i not in ids_a], [i for i in ids_a if i not in ids_b])


def render_text(result: Comparison, name_a: str, name_b: str, t: Translate) -> str:
    lines = [_headline(result, t)]
    rows = [(change["field"], _shown(change, "a"), _shown(change, "b"))
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
    lines = [f"**{md(_headline(result, t))}**", ""]
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


def _parser(t: Translate) -> argparse.ArgumentParser:
    parser = Parser(prog=PROG, description=t("compare.help.description"), allow_abbrev=False)
    parser.add_argument("a", metavar="A.json", help=t("compare.help.a"))
    parser.add_argument("b", metavar="B.json", help=t("compare.help.b"))
    add_common_options(parser, t)
    return parser


def _act(args: argparse.Namespace, t: Translate) -> int:
    a, b = load(args.a), load(args.b)
    if a.report is None or b.report is None:
        parts = [t("compare.argument", which=which, name=loaded.name, reason=loaded.why(t))
                 for which, loaded in (("A", a), ("B", b)) if loaded.report is None]
        line(sys.stderr, f"{PROG}: " + t("compare.cannot_read", what="; ".join(parts)))
        return EXIT_UNREADABLE
    result = compare(a.report, b.report)
    write(sys.stdout, _render(args.format, result, a, b, t))
    return EXIT_SAME if result.same_code else EXIT_CHANGED


def _render(form: str, result: Comparison, a: Loaded, b: Loaded, t: Translate) -> str:
    if form == "json":
        return json.dumps(result.as_json(), indent=2, ensure_ascii=False) + "\n"
    if form == "markdown":
        return render_markdown(result, a.name, b.name, t)
    return render_text(result, a.name, b.name, t)


def _headline(result: Comparison, t: Translate) -> str:
    if result.same_code:
        return t("compare.same_code", code=result.code_a)
    return t("compare.code_changed", a=result.code_a, b=result.code_b)


def _change(path: str, a: Any, b: Any) -> dict[str, Any]:
    """A change (``{"field", "a", "b"}``), or an empty dict when both are equal."""
    if a == b and type(a) is type(b):  # true and 1 differ in a report
        return {}
    return {"field": path, "a": a, "b": b}


def _device_names(report: dict[str, Any]) -> list[Any]:
    devices = field(report, "pytorch.devices")
    if not isinstance(devices, list):
        return []
    return [device.get("name") if isinstance(device, dict) else None for device in devices]


def _finding_ids(report: dict[str, Any]) -> list[str]:
    findings = report.get("findings")
    ids: list[str] = []
    for finding in findings if isinstance(findings, list) else []:
        identifier = finding.get("id") if isinstance(finding, dict) else None
        if isinstance(identifier, str) and identifier not in ids:
            ids.append(identifier)
    return ids


def _timings(report: dict[str, Any]) -> dict[str, float]:
    timings = report.get("timings_ms")
    if not isinstance(timings, dict):
        return {}
    return {str(stage): float(ms) for stage, ms in timings.items()
            if isinstance(ms, (int, float)) and not isinstance(ms, bool)}


def _timing_keys(a: dict[str, float], b: dict[str, float]) -> list[str]:
    present = set(a) | set(b)
    known = [stage for stage in STAGE_ORDER if stage in present]
    others = sorted(present - set(STAGE_ORDER) - {TOTAL})
    return known + others + ([TOTAL] if TOTAL in present else [])


def _timing_moved(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is not b
    delta = abs(b - a)
    return delta >= TIMING_MIN_DELTA_MS and delta >= TIMING_MIN_RATIO * min(a, b)


def _shown(change: dict[str, Any], side: str) -> str:
    value = change[side]
    if not change["field"].startswith("timings_ms."):
        return cell(value)
    if value is None:
        return cell(None)
    text = f"{value:.1f} ms"
    other = change["a"]
    if side == "b" and other is not None:
        text += f" ({value - other:+.1f} ms)"
    return text

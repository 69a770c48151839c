"""The record of a ramp: ``ramp.json`` (versioned, schema ``ramp/schema/ramp-v1.json``), its
markdown table ``ramp.md`` and, with matplotlib, its plot ``ramp.png``.

``ramp.json`` is rewritten (atomically) after every attempt: it is also what a second run of the
same command with the same ``--out`` resumes from. A ramp is the same ramp when its axis, start,
stop, factor, bisection, command and program are the same; the command is kept as a SHA-256 of
its arguments (to recognise it) and, for people, with paths and secrets redacted; the program
as a SHA-256 of each file its command names (``program_files``): a program changed since is
another ramp, whose recorded attempts would be stale.

What the attempts say together (``verdict``) is decided here, once, for the command and for
``summarize``: a range measured, every value tried passed, no single limit (a failure below a
passing value), flaky (a value that both passed and failed), inconclusive (the axis changed
nothing, nothing started, the first value not passed was inconclusive, the ramp never ended).
"""

from __future__ import annotations

import hashlib
import io
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..package_data import TOOL_NAME
from ..package_data import VERSION as TOOL_VERSION
from ..report.markup import escape
from ..report.markup import table as markdown_table
from ..report.redact import hidden_options
from ..safe_files import Folder
from ..terminal import cell
from ..untrusted_json import loads
from .outcome import INCONCLUSIVE, PASSED

FORMAT = "kernodeck-ramp"
VERSION = 1
RECORD, TABLE, PLOT = "ramp.json", "ramp.md", "ramp.png"
SCHEMA_FILE = ("ramp", "schema", "ramp-v1.json")
Status = Literal["running", "interrupted", "complete"]
# The settings that make two runs the same ramp (resume) rather than another one.
IDENTITY = ("axis", "start", "stop", "factor", "bisect", "command_sha256", "program_files")
DETAIL_LIMIT = 100  # characters of an attempt's detail in a table; ramp.json has it whole


@dataclass
class Ramp:
    """A ramp's settings and its attempts so far."""

    axis: str
    start: int
    stop: int
    factor: float
    bisect: bool
    attempt_timeout_s: float
    command: list[str]  # redacted, for people
    command_sha256: str
    attempts: list[dict[str, Any]] = field(default_factory=list)
    status: Status = "running"
    repeat: int = 1  # the values around the limit are run this many times in all
    # Each file the command names: {"name": its last component, redacted, "sha256"}.
    program_files: list[dict[str, str]] = field(default_factory=list)

    def recorded(self, value: int) -> dict[str, Any] | None:
        return next((item for item in self.attempts if item["value"] == value), None)

    def runs(self, value: int) -> list[dict[str, Any]]:
        """Every attempt of ``value``, in the order they ran (``--repeat``)."""
        return [item for item in self.attempts if item["value"] == value]

    @property
    def last_passing_value(self) -> int | None:
        return last_passing_value(self.attempts)

    @property
    def first_failing(self) -> dict[str, Any] | None:
        return first_failing(self.attempts)

    def as_json(self) -> dict[str, Any]:
        first = self.first_failing
        document = {
            "format": FORMAT, "version": VERSION,
            "tool": {"name": TOOL_NAME, "version": TOOL_VERSION},
            "updated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "status": self.status, "axis": self.axis, "start": self.start, "stop": self.stop,
            "factor": self.factor, "bisect": self.bisect,
            "attempt_timeout_s": self.attempt_timeout_s,
            "command": self.command, "command_sha256": self.command_sha256,
            "program_files": self.program_files, "repeat": self.repeat,
            "attempts": self.attempts,
            "last_passing_value": self.last_passing_value,
            "first_failing": None if first is None else {
                "value": first["value"], "outcome": first["outcome"],
                "phase": (first.get("oom") or {}).get("phase"), "signal": first.get("signal")},
        }
        document["verdict"] = verdict(document)
        return document


def last_passing_value(attempts: Sequence[dict[str, Any]]) -> int | None:
    """The largest value below every value that did not pass, which passed (None: none)."""
    first = first_failing(attempts)
    return max((int(item["value"]) for item in attempts if item["outcome"] == PASSED
                and (first is None or int(item["value"]) < int(first["value"]))), default=None)


def first_failing(attempts: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The attempt of the smallest value that did not pass (a failure or inconclusive)."""
    failing = [item for item in attempts if item["outcome"] != PASSED]
    return min(failing, key=lambda item: int(item["value"]), default=None)


# What the attempts say together (``verdict``'s kind) and the ramp's exit status's code.
VERDICT_CODES = {"range": "RAMP_RANGE_MEASURED", "all_passed": "RAMP_RANGE_MEASURED",
                 "none_passed": "RAMP_NOTHING_PASSED", "no_single_limit": "RAMP_NO_SINGLE_LIMIT",
                 "flaky": "RAMP_FLAKY", "axis_ignored": "RAMP_INCONCLUSIVE",
                 "never_started": "RAMP_INCONCLUSIVE", "inconclusive": "RAMP_INCONCLUSIVE",
                 "unfinished": "RAMP_INCONCLUSIVE"}
MEASURED = ("range", "all_passed")  # a range was measured: the ramp's pass


def verdict(document: dict[str, Any]) -> dict[str, Any]:
    """What a ramp's attempts say together: ``{"kind", "code", ...}`` with the values that tell
    it (``passed``, ``failed``, ``flaky``, ``inconclusive``: sorted values; ``not_tried``:
    whether values between those tried were left out). The kinds, first that holds:
    ``unfinished`` (the ramp never reached its end), ``axis_ignored`` (an attempt's own Trial
    parameters name another value of the axis), ``never_started`` (no attempt ran the program),
    ``flaky`` (a value both passed and failed), ``no_single_limit`` (a value failed below one
    that passed), ``none_passed`` / ``inconclusive`` (nothing passed, or the first value not
    passed was inconclusive: no limit known), ``all_passed`` (nothing failed), ``range``."""
    attempts = [item for item in document.get("attempts") or [] if isinstance(item, dict)]
    outcomes: dict[int, set[str]] = {}
    for item in attempts:
        outcomes.setdefault(int(item["value"]), set()).add(str(item["outcome"]))
    passed = sorted(value for value, seen in outcomes.items() if PASSED in seen)
    failed = sorted(value for value, seen in outcomes.items()
                    if seen - {PASSED, INCONCLUSIVE})
    flaky = sorted(value for value in failed if PASSED in outcomes[value])
    unsure = sorted(value for value, seen in outcomes.items() if seen == {INCONCLUSIVE})
    tried = sorted(outcomes)
    found: dict[str, Any] = {
        "passed": passed, "failed": failed, "flaky": flaky, "inconclusive": unsure,
        "not_tried": any(later - earlier > 1 for earlier, later in zip(tried, tried[1:]))}
    ignored = next((reason for item in attempts for reason in item.get("reasons") or []
                    if isinstance(reason, dict) and reason.get("kind") == "axis_not_followed"),
                   None)
    first = first_failing(attempts)
    if document.get("status") != "complete":
        kind = "unfinished"
    elif ignored is not None:
        kind = "axis_ignored"
        found["reason"] = ignored.get("text")
    elif attempts and all(never_started(item) for item in attempts):
        kind = "never_started"
    elif flaky:
        kind = "flaky"
    elif failed and passed and min(failed) < max(passed):
        kind = "no_single_limit"
    elif first is not None and first["outcome"] == INCONCLUSIVE:
        kind = "inconclusive"
    elif not passed:
        kind = "none_passed"
    elif first is None:
        kind = "all_passed"
    else:
        kind = "range"
    return {"kind": kind, "code": VERDICT_CODES[kind], **found}


def never_started(attempt: dict[str, Any]) -> bool:
    """The attempt's program could not be started (no exit status, no signal, no time limit)."""
    return (attempt["outcome"] == "failed" and attempt.get("exit_code") is None
            and attempt.get("signal") is None)


def values_text(values: Sequence[int], limit: int = 12) -> str:
    """Values for people: ``1, 2, 4, 8, 16``; a long list keeps its ends (``1, 2, …, 4096``)."""
    shown = [str(value) for value in values]
    if len(shown) > limit:
        shown = [*shown[:limit // 2], "…", *shown[-(limit // 2):]]
    return ", ".join(shown) if shown else "-"


def command_sha256(argv: Sequence[str]) -> str:
    """The command's identity, its secret options' values left out (``hidden_options``): a
    hash of a known command and a short password would give the password away."""
    return hashlib.sha256(json.dumps(hidden_options(argv)).encode("utf-8")).hexdigest()


def save(ramp: Ramp, folder: Folder) -> None:
    """Write ramp.json atomically (``ramp.json.partial``, then renamed): a reader (or a resume)
    never sees half of it, and nothing is written through a link planted at either name."""
    data = json.dumps(ramp.as_json(), indent=2, ensure_ascii=False) + "\n"
    folder.replace(RECORD, data.encode("utf-8"))


def load(folder: Folder) -> dict[str, Any] | None:
    """The ramp.json of ``folder`` (None when there is none); ValueError when it is not one,
    ``UnsafePath`` when it is a link or not a regular file."""
    data = folder.read(RECORD, 16 * 2**20)
    if data is None:
        return None
    document = loads(data.decode("utf-8"))
    if (not isinstance(document, dict) or document.get("format") != FORMAT
            or document.get("version") != VERSION or not isinstance(document.get("attempts"),
                                                                     list)):
        raise ValueError("not a ramp record of this version")
    attempts = [attempt_from(item) for item in document["attempts"]]
    document["attempts"] = [item for item in attempts if item is not None]
    return document


# What an attempt of a saved ramp.json may hold (its schema's ``attempt``), for attempt_from.
_OUTCOMES = ("passed", "out_of_memory", "timeout", "crashed", "contract_failed", "failed",
             "inconclusive")
_PHASES = ("loading", "first_pass", "later_pass", "after_work", "data_loading")
_PEAK_SOURCES = ("attempt", "events", "process")
_OOM_SOURCES = ("attempt", "events", "error_text", "kernel")
_EVIDENCE = ("cgroup_oom_kill", "kernel_log")
_TRIAL_FILES = ("attempt.json", "events.jsonl")
ERROR_LIMIT = 1000  # characters of an attempt's error read back (the ramp writes one line)


def attempt_from(item: Any) -> dict[str, Any] | None:
    """An attempt of a ramp.json read back, as untrusted input: another run (or person) wrote
    the file. None when it is not an attempt (no integer value, no known outcome, no duration):
    that value is run again. Every other field takes its type or null; every text is one
    printable line, bounded (``cell``), so nothing read back reaches a terminal raw."""
    if not isinstance(item, dict):
        return None
    value, outcome, seconds = item.get("value"), item.get("outcome"), item.get("duration_s")
    if (not _integer(value) or outcome not in _OUTCOMES or isinstance(seconds, bool)
            or not isinstance(seconds, (int, float))):
        return None
    duration = float(seconds)
    if not 0 <= duration < float("inf"):
        return None
    oom = item.get("oom")
    return {"value": value, "outcome": outcome,
            "exit_code": item["exit_code"] if _integer(item.get("exit_code")) else None,
            "signal": _text(item.get("signal"), 40), "duration_s": duration,
            "peak_memory_bytes": _count(item.get("peak_memory_bytes")),
            "peak_memory_source": _one_of(item.get("peak_memory_source"), _PEAK_SOURCES),
            "oom": _oom_from(oom) if isinstance(oom, dict) else None,
            "contracts_failed": [cell(name, 100) for name in item.get("contracts_failed") or []
                                 if isinstance(name, str)]
            if isinstance(item.get("contracts_failed"), list) else [],
            "error": _text(item.get("error"), ERROR_LIMIT),
            "trial": _one_of(item.get("trial"), _TRIAL_FILES),
            "folder": _text(item.get("folder"), 200) or f"value-{value}",
            "run": item["run"] if _integer(item.get("run")) and item["run"] >= 1 else 1,
            "trials": _count(item.get("trials")) or 0,
            "reasons": [{"kind": _text(reason.get("kind"), 40), "text": _text(
                reason.get("text"), ERROR_LIMIT)} for reason in item.get("reasons") or []
                if isinstance(reason, dict)][:20]
            if isinstance(item.get("reasons"), list) else []}


def _oom_from(oom: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {"phase": _one_of(oom.get("phase"), _PHASES),
                             "pass_index": _count(oom.get("pass_index")),
                             "requested_bytes": _count(oom.get("requested_bytes")),
                             "source": _one_of(oom.get("source"), _OOM_SOURCES) or "attempt"}
    if oom.get("oom_killer") is True:
        found["oom_killer"] = True
    if oom.get("process") in ("data_loader_worker", "other"):
        found["process"] = oom["process"]
    if isinstance(oom.get("evidence"), list):
        found["evidence"] = [kind for kind in oom["evidence"] if kind in _EVIDENCE]
    return found


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _count(value: Any) -> int | None:
    return value if _integer(value) and value >= 0 else None


def _one_of(value: Any, allowed: tuple[str, ...]) -> str | None:
    return value if isinstance(value, str) and value in allowed else None


def _text(value: Any, limit: int) -> str | None:
    return cell(value, limit) if isinstance(value, str) else None


def same_ramp(document: dict[str, Any], ramp: Ramp) -> list[str]:
    """The settings in which a saved ramp differs from this one (empty: the same ramp)."""
    mine = ramp.as_json()
    return [key for key in IDENTITY if document.get(key) != mine[key]]


def changed_files(document: dict[str, Any], ramp: Ramp) -> list[str]:
    """The names of the program's files that differ from the saved ramp's (a file added or gone
    included)."""
    saved = document.get("program_files")
    before = {(str(item.get("name")), str(item.get("sha256"))) for item in
              (saved if isinstance(saved, list) else []) if isinstance(item, dict)}
    now = {(item["name"], item["sha256"]) for item in ramp.program_files}
    return sorted({name for name, _ in before ^ now}) or ["?"]


# -- for people ------------------------------------------------------------------------------

def size(count: int | None) -> str:
    """Bytes for people: 512.0 MiB."""
    if count is None:
        return "-"
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"


def detail(attempt: dict[str, Any]) -> str:
    """What a table says of an attempt besides its outcome: phase, signal, contracts, error."""
    parts = []
    oom = attempt.get("oom") or {}
    if oom.get("phase"):
        parts.append(f"phase {oom['phase']}")
    if oom.get("requested_bytes"):
        parts.append(f"requested {size(oom['requested_bytes'])}")
    if oom.get("oom_killer"):
        parts.append("OOM killer")
    # A time limit names the stage open then (its reason, below), never the last one started.
    stage = oom.get("stage") or (attempt.get("last_started_stage")
                                 if attempt["outcome"] not in ("passed", "timeout") else None)
    if stage:
        parts.append(f"in stage {stage}")
    # The judge's causes that the outcome alone hides, before the error's words.
    parts += [str(reason.get("text")) for reason in attempt.get("reasons") or []
              if isinstance(reason, dict) and reason.get("kind") in _TOLD_BY_REASON][:2]
    if attempt.get("signal"):
        parts.append(str(attempt["signal"]))
    elif attempt.get("exit_code"):
        parts.append(f"exit {attempt['exit_code']}")
    if attempt.get("contracts_failed"):
        parts.append("contracts: " + ", ".join(attempt["contracts_failed"]))
    if attempt.get("error") and attempt["outcome"] != PASSED:
        parts.append(str(attempt["error"]))
    if attempt.get("run", 1) > 1:
        parts.append(f"run {attempt['run']}")
    return "; ".join(parts)


# The judge's causes a table names besides the facts above (those the outcome alone hides).
_TOLD_BY_REASON = ("timeout", "pass_failed", "stage_calls_failed", "ended_in_stage",
                   "never_ended", "link_not_followed", "attempt_unreadable", "axis_not_followed",
                   "oom_killer_run",
                   "oom_killer_data_loader", "status_interrupted", "error_recorded")


def rows(document: dict[str, Any]) -> list[tuple[str, str, str, str, str]]:
    """One row per attempt, by value: value, outcome, duration, peak memory, detail (cut)."""
    return [(str(item["value"]), item["outcome"], f"{item['duration_s']:.2f} s",
             size(item.get("peak_memory_bytes")), cell(detail(item), DETAIL_LIMIT))
            for item in sorted(document["attempts"],
                               key=lambda item: (int(item["value"]), item.get("run", 1)))]


def markdown(document: dict[str, Any], header: Sequence[str], conclusion: str) -> str:
    """ramp.md: the table of attempts and the range found."""
    body = [tuple(escape(value) for value in row) for row in rows(document)]
    lines = [f"# {escape(conclusion)}", "", *markdown_table([tuple(header), *body]), ""]
    return "\n".join(lines)


def plot(document: dict[str, Any], labels: dict[str, str]) -> bytes | None:
    """ramp.png: value → duration and peak memory, failures marked. None without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display: a file only
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        return None
    attempts = sorted(document["attempts"], key=lambda item: int(item["value"]))
    passed = [item for item in attempts if item["outcome"] == PASSED]
    failed = [item for item in attempts if item["outcome"] != PASSED]
    figure, left = plt.subplots(figsize=(8, 4.5))
    left.plot([item["value"] for item in attempts], [item["duration_s"] for item in attempts],
              "o-", color="tab:blue", label=labels["duration"])
    left.set_xscale("log", base=2)
    left.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    left.set_xlabel(document["axis"])
    left.set_ylabel(labels["duration"], color="tab:blue")
    # A failed attempt's peak is where it stopped, not what it needed: passes only.
    peaks = [(item["value"], item["peak_memory_bytes"] / 2**20) for item in passed
             if item.get("peak_memory_bytes")]
    if peaks:
        right = left.twinx()
        right.plot([p[0] for p in peaks], [p[1] for p in peaks], "s--", color="tab:green",
                   label=labels["memory"])
        right.set_ylabel(labels["memory"], color="tab:green")
    left.plot([item["value"] for item in failed], [item["duration_s"] for item in failed], "x",
              color="tab:red", markersize=12, mew=2, linestyle="none")
    first = document.get("first_failing")
    if first is not None:
        left.axvline(first["value"], color="tab:red", linestyle=":")
        left.annotate(first["outcome"], (first["value"], 1.0), xycoords=("data", "axes fraction"),
                      textcoords="offset points", xytext=(4, -14), color="tab:red")
    left.set_title(labels["title"])
    figure.tight_layout()
    image = io.BytesIO()
    figure.savefig(image, format="png", dpi=100)
    plt.close(figure)
    return image.getvalue()

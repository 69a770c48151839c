"""The outputs of ``summarize`` (``commands/summarize.py``): aligned text, markdown and JSON, each
line by line, and what each keeps of a report while the files are read (``report/summary.py``):
the text's cells, the markdown's line, the JSON's object, never the report. The jobs of
``--distributed`` reports (report/jobs.py) come first: each job's verdict, then its ranks'.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ..i18n import Translate
from ..terminal import cell
from .devices import EveryDeviceRow, device_name
from .jobs import Job, RankVerdict
from .load import Loaded
from .markup import escape
from .markup import table as markdown_table
from .render import copies_lines
from .summary import ATTEMPT_COLUMNS, COLUMNS, Summary, row, row_values
from .tables import md, md_code, table, table_lines

# The version of the layout of ``--format json``, its first key: raised when a key is renamed or
# removed, or changes meaning (a key added keeps it).
SUMMARIZE_VERSION = 1


def text_lines(summary: Summary, t: Translate, list_unreadable: bool = False) -> Iterator[str]:
    """The text output, line by line (``summary`` kept ``_cells``). The files that are no
    readable report are one line (their count and kinds), each listed when asked: a folder of
    other files would otherwise bury the summary under thousands of lines."""
    for index, job in enumerate(summary.jobs()):
        yield from [t("summarize.jobs")] if index == 0 else []
        yield from ("  " + line for line in job_head(job, t))
        header = tuple(t(column) for column in JOB_COLUMNS)
        yield from table([header, *(_rank_cells(entry, t) for entry in job.ranks)],
                         indent="    ")
        yield ""
    for index, node in enumerate(summary.every_device):
        yield from [t("summarize.every_device")] if index == 0 else []
        yield f"  {node.file}: {node.code}"
        header = tuple(t(column) for column in DEVICE_COLUMNS)
        yield from table([header, *(_device_cells(node, entry, t) for entry in node.devices)],
                         indent="    ")
        label = t("summarize.every_device.copies")
        yield from (f"    {label if number == 0 else ' ' * len(label)}  {line}"
                    for number, line in enumerate(_copies(node, t)))
        yield ""
    if summary.rows:
        header = tuple(t(column) for column in COLUMNS)
        yield from table_lines([header, *summary.rows])
        yield from ("", t("summarize.counts"))
        yield from table([(code, str(count)) for code, count in summary.counts()], indent="  ")
    if summary.attempts:
        yield from ("", t("summarize.attempts"))
        header = tuple(t(column) for column in ATTEMPT_COLUMNS)
        yield from table_lines([header, *(attempt_cells(item) for item in summary.attempts)])
    if summary.unreadable and list_unreadable:
        yield from ("", t("summarize.unreadable", count=len(summary.unreadable)))
        yield from table([(item.name, item.why(t)) for item in summary.unreadable], indent="  ")
    elif summary.unreadable:
        yield from ("", f"{unreadable_line(summary, t)} {t('summarize.unreadable.hint')}")
    yield from ("", _total(summary, t))
    if summary.attempts:
        yield attempts_total(summary, t)


def markdown_lines(summary: Summary, t: Translate, list_unreadable: bool = False,
                   ) -> Iterator[str]:
    """The markdown output, line by line (``summary`` kept ``_markdown_row``); the unreadable
    files as in ``text_lines``."""
    yield from (f"**{md(_total(summary, t))}**", "")
    for index, job in enumerate(summary.jobs()):
        yield from ([escape(t("summarize.jobs")), ""] if index == 0 else [])
        yield from (*(f"- {escape(line)}" for line in job_head(job, t)), "")
        header = tuple(md(t(column)) for column in JOB_COLUMNS)
        yield from markdown_table([header, *(_md_rank(entry, t) for entry in job.ranks)])
        yield ""
    for index, node in enumerate(summary.every_device):
        yield from ([escape(t("summarize.every_device")), ""] if index == 0 else [])
        yield from (f"- {_md_name(node.file)}: {md_code(node.code)}", "")
        header = tuple(md(t(column)) for column in DEVICE_COLUMNS)
        yield from markdown_table([header, *(
            (md_code(cells[0]), md_code(cells[1]), escape(cells[2]))
            for cells in (_device_cells(node, entry, t) for entry in node.devices))])
        copies = _copies(node, t)
        if copies:
            # Each line whole (a cell's limit would cut the copies named): text of the tool's.
            yield from ("", *(f"- {escape(t('summarize.every_device.copies'))}: {escape(line)}"
                              for line in copies))
        yield ""
    if summary.rows:
        header = tuple(md(t(column)) for column in COLUMNS)
        yield from (*markdown_table([header]), *summary.rows, "")
        yield from (md(t("summarize.counts")), "")
        yield from markdown_table([(md(t("summarize.header.code")),
                                    md(t("summarize.header.count"))),
                                   *((md_code(code), str(count))
                                     for code, count in summary.counts())])
        yield ""
    if summary.attempts:
        yield from (md(t("summarize.attempts")), "")
        header = tuple(md(t(column)) for column in ATTEMPT_COLUMNS)
        yield from markdown_table([header, *(
            (_md_name(cells[0]), *(md(value) for value in cells[1:]))
            for cells in map(attempt_cells, summary.attempts))])
        yield from ("", md(attempts_total(summary, t)), "")
    if summary.unreadable and list_unreadable:
        yield from (md(t("summarize.unreadable", count=len(summary.unreadable))), "")
        yield from (f"- {_md_name(item.name, line_start=True)}: {md(item.why(t))}"
                    for item in summary.unreadable)
    elif summary.unreadable:
        yield escape(unreadable_line(summary, t))  # each kind a cell already: not cut again


def unreadable_line(summary: Summary, t: Translate) -> str:
    """The unreadable files in one line: their count, then each kind with its count, the most
    frequent first ("unreadable: 31 file(s), 30 not a report, 1 not JSON")."""
    kinds = Counter(cell(item.why(t)) for item in summary.unreadable)  # a version from the file
    return t("summarize.unreadable.line", count=len(summary.unreadable),
             kinds=", ".join(f"{count} {kind}" for kind, count in kinds.most_common()))


def json_lines(summary: Summary) -> Iterator[str]:
    """``--format json``, line by line: the same text as ``json.dumps(..., indent=2)`` of the
    whole document, without ever holding it (``summary`` kept ``_json_row``)."""
    yield "{"
    yield f'  "summarize_version": {SUMMARIZE_VERSION},'
    yield from _json_list("reports", summary.rows, last=False)
    yield from _json_list("counts", [_json_row({"code": code, "count": count})
                                     for code, count in summary.counts()], last=False)
    jobs = summary.jobs()
    if jobs:  # without a --distributed job: the output as it always was
        yield from _json_list("jobs", [json_job_object(job) for job in jobs], last=False)
    if summary.every_device:  # the same without an --all-devices report
        yield from _json_list("every_device", [_json_every_device(node)
                                               for node in summary.every_device], last=False)
    if summary.attempts:  # reports alone: the output as it always was
        yield from _json_list("attempts", [_json_row(item) for item in summary.attempts],
                              last=False)
    yield from _json_list("unreadable", [_json_row({"file": item.name, "reason": item.reason,
                                                    "detail": item.detail})
                                         for item in summary.unreadable], last=True)
    yield "}"


# The headers of a job's ranks (their catalog keys), in the order of ``_rank_cells``.
JOB_COLUMNS = ("summarize.header.rank", "summarize.header.code", "summarize.header.stage",
               "summarize.header.node", "summarize.header.report")


_JOB_STATUSES = {"passed": "summarize.job.passed", "failed": "summarize.job.failed",
                 "incomplete": "summarize.job.incomplete", "partial": "summarize.job.in_part"}
# Why the launcher stopped a rank (``distributed.launcher_stop``), shown in its job's head.
_STOPS = {"time_limit": "summarize.job.stop.time_limit",
          "cancelled": "summarize.job.stop.cancelled", "sigterm": "summarize.job.stop.sigterm"}


def job_head(job: Job, t: Translate) -> Iterator[str]:
    """A job's verdict first: its status and worst code, then the ranks that never reported
    and a disagreement on the world size."""
    named = job.job if job.runs == 1 else t("summarize.job.run", job=job.job, run=job.run,
                                             runs=job.runs)
    yield t("summarize.job", job=named, launcher=cell(job.launcher), world_size=job.world_size,
            status=t(_JOB_STATUSES[job.status]), code=cell(job.code))
    if job.never_reported:
        yield t("summarize.job.not_among" if job.status == "partial"
                else "summarize.job.never_reported", ranks=_ranks(job.never_reported))
    stopped = [entry for entry in job.ranks if entry.stopped]
    if stopped:  # the launcher's stop, not the ranks' failure (issue 45)
        yield t(_STOPS.get(stopped[0].stop, "summarize.job.stop.sigterm"),
                ranks=_ranks([entry.rank for entry in stopped]))
    if job.world_sizes:
        yield t("summarize.job.world_sizes", sizes=", ".join(map(str, job.world_sizes)))


def _rank_cells(entry: RankVerdict, t: Translate) -> tuple[str, ...]:
    """One rank's line: its verdict and where it is known from."""
    if entry.source is None:
        return (str(entry.rank), "-", "-", "-", t("summarize.job.no_report"))
    where = (t("summarize.job.in_rank_0") if entry.file is None
             else t("summarize.job.stopped", file=entry.file) if entry.stopped else entry.file)
    return (str(entry.rank), cell(entry.code), _dash(entry.stage), _dash(entry.node), where)


_SLOT = "KERNODECKFILE"  # where the file's name goes in a sentence: letters, never escaped


def _md_rank(entry: RankVerdict, t: Translate) -> tuple[str, ...]:
    """One rank's line in markdown: its own report's name as code, the rest as text."""
    cells = _rank_cells(entry, t)
    where = md(cells[4]) if entry.file is None else (
        md(t("summarize.job.stopped", file=_SLOT)).replace(_SLOT, _md_name(entry.file))
        if entry.stopped else _md_name(entry.file))
    return (cells[0], md_code(cells[1]), md(cells[2]), md(cells[3]), where)


def _ranks(numbers: Sequence[int], shown: int = 20) -> str:
    """Rank numbers, the first ``shown`` of them and how many in all."""
    text = ", ".join(map(str, numbers[:shown]))
    return text + (f", \u2026 ({len(numbers)})" if len(numbers) > shown else "")


def json_job_object(job: Job) -> str:
    """A job's object of the JSON output (``jobs``)."""
    return _json_row({
        "job": job.job, "run": job.run, "runs": job.runs, "launcher": job.launcher,
        "world_size": job.world_size,
        "world_sizes": list(job.world_sizes) if job.world_sizes else None,
        "status": job.status, "code": job.code, "never_reported": job.never_reported,
        "ranks": [{"rank": entry.rank, "code": entry.code, "stage": entry.stage,
                   "node": entry.node, "file": entry.file, "from": entry.source,
                   "launcher_stopped": entry.stopped,
                   # why, for a rank the launcher stopped (issue 45): time_limit, cancelled,
                   # sigterm
                   **({"launcher_stop": entry.stop} if entry.stopped else {})}
                  for entry in job.ranks]})


# The headers of an --all-devices report's devices (their catalog keys).
DEVICE_COLUMNS = ("summarize.header.device", "summarize.header.code", "summarize.header.step")


def _device_cells(node: EveryDeviceRow, entry: tuple[int, str | None, str | None],
                  t: Translate) -> tuple[str, str, str]:
    """One device's line: its name, its verdict (or that it was never checked), the step it
    failed at."""
    index, code, step = entry
    name = device_name(node.backend, index)
    if code is None:
        return (name, "-", t("ui.device.not_checked"))
    return (name, cell(code), _dash(step))


def _copies(node: EveryDeviceRow, t: Translate) -> list[str]:
    return copies_lines(node.copies, t) if node.copies is not None else []


def _json_every_device(node: EveryDeviceRow) -> str:
    """An --all-devices report's object of the JSON output (``every_device``)."""
    copies = node.copies
    name = device_name
    return _json_row({
        "file": node.file, "code": node.code, "backend": node.backend,
        "devices": [{"device": name(node.backend, index), "code": code, "step": step}
                    for index, code, step in node.devices],
        "copies": None if copies is None else {
            "tried": copies.tried, "verified": copies.verified, "access": copies.access,
            "access_unknown": copies.unknown,
            "failed": [{"source": name(node.backend, source),
                        "target": name(node.backend, target), "code": code}
                       for source, target, code in copies.failed],
            "not_tried": [{"source": name(node.backend, source),
                           "target": name(node.backend, target)}
                          for source, target in copies.untried]}})


def _json_list(key: str, items: Sequence[str], last: bool) -> Iterator[str]:
    end = "" if last else ","
    if not items:
        yield f'  "{key}": []{end}'
        return
    yield f'  "{key}": ['
    for index, item in enumerate(items):
        yield item + ("," if index < len(items) - 1 else "")
    yield "  ]" + end


def _json_row(values: dict[str, Any]) -> str:
    """One object of a list of the JSON output, as json.dumps indents it there (two levels).

    An object of plain values is written here, each value by json's C encoder: with ``indent``,
    json.dumps runs its Python encoder, whose closures refer to each other, a cycle left for the
    cycle collector, which is off while the reports are read (``Summary.read``).
    """
    if not values or any(isinstance(value, (dict, list)) for value in values.values()):
        text = json.dumps(values, indent=2, ensure_ascii=False)  # a report's odd field
    else:
        text = "{\n" + ",\n".join(f"  {_PLAIN_JSON.encode(key)}: {_PLAIN_JSON.encode(value)}"
                                   for key, value in values.items()) + "\n}"
    return "\n".join("    " + part for part in text.split("\n"))


_PLAIN_JSON = json.JSONEncoder(ensure_ascii=False)


def _markdown_row(loaded: Loaded) -> str:
    cells = _cells(loaded)
    shown = (_md_name(loaded.name), md_code(cells[1]), *(md(value) for value in cells[2:]))
    return "| " + " | ".join(shown) + " |"  # a row of markup.table


def keep(form: str) -> Callable[[Loaded], Any]:
    """What a format keeps of a report: the text's cells (aligned once all are read), the
    markdown's line, the JSON's object."""
    if form == "json":
        return lambda loaded: _json_row(row(loaded))
    return _markdown_row if form == "markdown" else _cells


def _md_name(name: str, line_start: bool = False) -> str:
    """A file's name in markdown: as inline code when it can be, else as escaped text."""
    shown = md_code(name)
    return shown if shown.startswith("`") else escape(name, line_start=line_start)


def _cells(item: Loaded) -> tuple[str, ...]:
    name, code, exit_status, *rest = row_values(item)
    return (name, cell(code), cell(exit_status), *map(_dash, rest))


def _dash(value: Any) -> str:
    return "-" if value is None or value == "" else cell(value, 40)


def attempt_cells(item: dict[str, Any]) -> tuple[str, ...]:
    contracts = ("-" if item["contracts_passed"] is None and not item["contracts_failed"]
                 else "passed" if not item["contracts_failed"]
                 else "failed: " + ", ".join(item["contracts_failed"]))
    peak = item["peak_memory_bytes"]
    return (cell(item["attempt"]), _dash(item["status"]), _dash(item["first_error_stage"]),
            cell(contracts, 60), "-" if peak is None else f"{peak / 2**20:.1f} MiB",
            _dash(item["last_started_stage"]))


def attempts_total(summary: Summary, t: Translate) -> str:
    counted = [item for item in summary.attempts if item["counted"]]
    unsure = summary.attempts_inconclusive
    return t("summarize.attempts_total", attempts=len(summary.attempts),
             passed=len(counted) - summary.attempts_failed - unsure,
             failed=summary.attempts_failed, ramp=len(summary.attempts) - len(counted)) + (
        "; " + t("summarize.inconclusive", count=unsure) if unsure else "")


def _total(summary: Summary, t: Translate) -> str:
    reports = len(summary.rows)
    return t("summarize.total", files=summary.files, reports=reports, passed=summary.passed,
             failed=reports - summary.passed, unreadable=len(summary.unreadable))

"""The fleet view's outputs (``report/fleet.py``): a screenful whatever the count of reports.

Text (markdown: the same lines as a list): the count of each code, worst first; the failing
reports by group (code, stage, cause), the largest first, the first ``fleet.FEW`` of each named
and the rest counted, at most ``GROUPS`` groups (the others counted); the jobs that did not pass
(``JOBS`` at most, each with its first failing or missing ranks), the passed ones counted; the
failing ``--all-devices`` reports counted; the unreadable files by reason, the first few named;
the totals. ``--format json`` carries the same, bounded alike. ``--only failed``: every failing
report's row instead (text: one tab-separated line each; json: a list), for scripts. ``jsonl`` and
``csv``: one line per report as it is read (``export_line``), the fields an engine needs
(docs/compare-summarize.md has the DuckDB query).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator, Sequence
from typing import Any

from ..i18n import Translate
from ..terminal import cell
from .codes import VERDICTS
from .fleet import FEW, Tally
from .jobs import Job
from .load import reason_text
from .markup import escape
from .summary import RANK, ROW_KEYS
from .tables import table

GROUPS = 12  # groups of failing reports shown
JOBS = 10  # jobs that did not pass shown
RANKS = 5  # ranks of such a job named
EXPORT_KEYS = (*ROW_KEYS, "cause")


def groups(tally: Tally) -> list[tuple[tuple[str, str, str], int]]:
    """The groups of failing reports, the worst code first, then the largest."""
    return sorted(tally.groups.items(),
                  key=lambda item: (RANK.get(item[0][0], -1), -item[1], item[0]))


def counts(tally: Tally) -> list[tuple[str, int]]:
    return sorted(tally.by_code.items(), key=lambda item: (RANK.get(item[0], -1), item[0]))


def text_lines(tally: Tally, jobs: Sequence[Job], t: Translate,
               list_unreadable: bool = False) -> Iterator[str]:
    if tally.by_code:
        yield t("summarize.counts")
        yield from _aligned([(code, str(count)) for code, count in counts(tally)], "  ")
    shown = groups(tally)
    if shown:
        yield from ("", t("summarize.fleet.groups", few=FEW))
        for (code, stage, cause), count in shown[:GROUPS]:
            yield "  " + t("summarize.fleet.group", code=code, stage=stage, cause=cell(cause),
                           count=count)
            named = tally.named.get((code, stage, cause), [])
            yield from (f"    {name}" for _, name, _ in named)
            if count > len(named):
                yield "    " + t("summarize.fleet.more", count=count - len(named))
        rest = shown[GROUPS:]
        if rest:
            yield "  " + t("summarize.fleet.more_groups", groups=len(rest),
                           count=sum(count for _, count in rest))
    if jobs:
        yield from ("", *job_lines(jobs, t))
    if tally.every_device:
        yield from ("", t("summarize.fleet.every_device", count=len(tally.every_device)))
    if tally.unreadable:
        kinds = ", ".join(f"{count} {cell(reason_text(reason, t))}"  # type: ignore[arg-type]
                          for reason, count in tally.unreadable.most_common())
        count = sum(tally.unreadable.values())
        if list_unreadable:  # each one, as report/summary_render.py lists them
            yield from ("", t("summarize.unreadable", count=count))
            yield from table([(name, cell(reason_text(
                reason, t, version=detail)))  # type: ignore[arg-type]
                for _, name, reason, detail in tally.unreadable_named],
                             indent="  ")
        else:
            yield from ("", t("summarize.unreadable.line", count=count, kinds=kinds) + " "
                        + t("summarize.unreadable.hint"))
    yield from ("", total(tally, t))


def job_lines(jobs: Sequence[Job], t: Translate) -> Iterator[str]:
    """The jobs that did not pass, each in a few lines; the passed ones counted."""
    bad = [job for job in jobs if job.status != "passed"]
    if not bad:
        yield t("summarize.fleet.jobs_all_passed", jobs=len(jobs))
        return
    yield t("summarize.fleet.jobs", jobs=len(jobs), passed=len(jobs) - len(bad))
    from .summary_render import job_head
    for job in bad[:JOBS]:
        yield from ("  " + line for line in job_head(job, t))
        failing = [entry for entry in job.ranks
                   if entry.code is not None and not VERDICTS[entry.code].passed]
        for entry in failing[:RANKS]:
            yield "    " + t("summarize.fleet.rank", rank=entry.rank, code=cell(entry.code),
                             file=entry.file or "-")
        if len(failing) > RANKS:
            yield "    " + t("summarize.fleet.more", count=len(failing) - RANKS)
    if len(bad) > JOBS:
        yield "  " + t("summarize.fleet.more_jobs", count=len(bad) - JOBS)


def total(tally: Tally, t: Translate) -> str:
    return t("summarize.total", files=tally.files, reports=tally.reports, passed=tally.passed,
             failed=tally.failed, unreadable=sum(tally.unreadable.values()))


def markdown_lines(tally: Tally, jobs: Sequence[Job], t: Translate) -> Iterator[str]:
    """The text's lines as a markdown list (each escaped: a name never becomes markup)."""
    for text in text_lines(tally, jobs, t):
        depth = (len(text) - len(text.lstrip(" "))) // 2
        yield "  " * depth + "- " + escape(text.strip()) if text else ""


def json_document(tally: Tally, jobs: Sequence[Job]) -> dict[str, Any]:
    """``--format json`` of a fleet: bounded as the text is."""
    from .summary_render import SUMMARIZE_VERSION, json_job_object
    shown = groups(tally)
    bad = [job for job in jobs if job.status != "passed"]
    return {
        "summarize_version": SUMMARIZE_VERSION,
        "view": "fleet",
        "files": tally.files, "reports_read": tally.reports, "passed": tally.passed,
        "failed": tally.failed,
        "counts": [{"code": code, "count": count} for code, count in counts(tally)],
        "groups": [{"code": code, "stage": stage, "cause": cause, "count": count,
                    "reports": [values for _, _, values in tally.named.get((code, stage, cause),
                                                                          [])]}
                   for (code, stage, cause), count in shown[:GROUPS]],
        "groups_not_shown": {"groups": len(shown[GROUPS:]),
                             "reports": sum(count for _, count in shown[GROUPS:])},
        "jobs": {"count": len(jobs), "passed": len(jobs) - len(bad),
                 "not_passed": [json_job_object(job) for job in bad[:JOBS]],
                 "not_shown": max(0, len(bad) - JOBS)},
        "every_device_failed": len(tally.every_device),
        "attempts": {"count": len(tally.attempts),
                     "not_passed": sum(1 for _, item in tally.attempts
                                       if item["counted"] and not item["passed"])},
        "unreadable": {"count": sum(tally.unreadable.values()),
                       "reasons": dict(tally.unreadable.most_common()),
                       "first": [{"file": name, "reason": reason, "detail": detail}
                                 for _, name, reason, detail in tally.unreadable_named]},
    }


def failed_lines(tally: Tally, form: str) -> Iterator[str]:
    """``--only failed``: every failing report, one line each (text: tab-separated file, code,
    stage, cause), or one JSON list."""
    if form == "json":
        yield json.dumps([values for _, values in tally.failed_rows], indent=2,
                         ensure_ascii=False)
        return
    for _, values in tally.failed_rows:
        yield "\t".join(cell(values[key]) if values[key] is not None else "-"
                        for key in ("file", "code", "stage", "cause"))


def export_header(form: str) -> str | None:
    return _csv_line(EXPORT_KEYS) if form == "csv" else None


def export_line(values: dict[str, Any], form: str) -> str:
    """One report's line of ``--format jsonl`` or ``csv`` (``EXPORT_KEYS``)."""
    if form == "jsonl":
        return json.dumps({key: values.get(key) for key in EXPORT_KEYS}, ensure_ascii=False,
                          separators=(",", ":"))
    return _csv_line(["" if values.get(key) is None else str(values[key])
                      for key in EXPORT_KEYS])


def _csv_line(values: Sequence[str]) -> str:
    buffer = io.StringIO()
    # A cell a spreadsheet would run as a formula is quoted with a leading apostrophe.
    csv.writer(buffer, lineterminator="").writerow(
        ["'" + value if value[:1] in ("=", "+", "-", "@") and value != "-" else value
         for value in values])
    return buffer.getvalue()


def _aligned(rows: list[tuple[str, str]], indent: str) -> Iterator[str]:
    width = max(len(first) for first, _ in rows)
    yield from (f"{indent}{first.ljust(width)}  {second}" for first, second in rows)

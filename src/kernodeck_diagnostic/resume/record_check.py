"""The user's ``--record-check MODULE:FUNCTION``: imported once before anything runs (a usage
error otherwise), then called on every record of the ledger, in a child process of the tool's
Python (``check_child.py``, a file of this package copied to the check's private folder), bounded
by the time limit. What the child writes is read back as untrusted JSON: it ran the user's code.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .. import package_data
from ..report.redact import Redactor
from ..safe_files import Folder
from ..supervision.application import Ending, run_application
from ..supervision.captures import last_stderr_line
from ..untrusted_json import json_lines, loads, open_regular
from .observe import iter_records

MAX_DETAIL_CHARS = 300  # of what a record check said of one record
CHILD = "check_child.py"
_RESULT_LINE_BYTES = 4 * MAX_DETAIL_CHARS + 2**12  # a failure's line, its id included


class CannotImport(Exception):
    """The function cannot be imported: why (its exception, or the child's exit)."""


@dataclass
class Checked:
    failures: list[dict[str, Any]] = field(default_factory=list)
    count: int = 0  # records the function saw
    error: str | None = None  # why the check did not finish


def probe(spec: str, folder: Folder, timeout_s: float) -> None:
    """``CannotImport`` unless the function can be imported (said before anything runs)."""
    ending = _run(spec, "-", folder, name="probe", timeout_s=timeout_s)
    if ending.returncode != 0:
        raise CannotImport(ending.start_error or last_stderr_line(folder.child("probe.stderr"))
                           or f"exit {ending.returncode}")


def check(spec: str, ledger: str, folder: Folder, timeout_s: float) -> Checked:
    """The function called on every record of the ledger at ``ledger``."""
    folder.replace("records.jsonl", _entries(ledger))
    ending = _run(spec, folder.child("records.jsonl"), folder, name="check",
                  timeout_s=timeout_s)
    found = Checked()
    finished = False
    redactor = Redactor.for_this_machine()
    for document in _results(folder.child("result.jsonl")):
        checked = document.get("checked")
        if isinstance(checked, int) and not isinstance(checked, bool) and checked >= 0:
            found.count, finished = checked, True
            continue
        line, key, detail = document.get("line"), document.get("id"), document.get("detail")
        if isinstance(line, int) and not isinstance(line, bool) and isinstance(key, str):
            found.failures.append({"id": key, "line": line, "problem": "record_check",
                                   "detail": redactor.text(str(detail)[:MAX_DETAIL_CHARS])})
    if ending.timed_out:
        found.error = f"timed out after {timeout_s:g} s"
    elif ending.returncode != 0 or not finished:
        said = last_stderr_line(folder.child("check.stderr"))
        found.error = redactor.text(f"exit {ending.returncode}" + (f": {said}" if said else ""))
    return found


def _entries(ledger: str) -> Iterator[bytes]:
    for number, key, record in iter_records(ledger):
        yield (json.dumps({"line": number, "id": key, "record": record}) + "\n").encode("utf-8")


def _results(path: str) -> Iterator[dict[str, Any]]:
    """The child's lines, each decoded by the bounded decoder; a line cut by the time limit's
    kill, or anything else that is no object, skipped."""
    try:
        fd = open_regular(path)
    except OSError:
        return
    with os.fdopen(fd, "rb") as file:
        for raw, _, ended in json_lines(file, _RESULT_LINE_BYTES):
            if raw is None or not ended:
                continue
            try:
                document = loads(raw.decode("utf-8"))
            except ValueError:
                continue
            if isinstance(document, dict):
                yield document


def _run(spec: str, records_path: str, folder: Folder, *, name: str,
         timeout_s: float) -> Ending:
    if folder.lstat(CHILD) is None:
        folder.create_file(CHILD, package_data.read("resume", CHILD), mode=0o600)
    argv = [sys.executable, folder.child(CHILD), spec, records_path,
            folder.child("result.jsonl"), str(MAX_DETAIL_CHARS)]
    return run_application(argv, env=os.environ, captures=folder, stdout_name=f"{name}.stdout",
                           stderr_name=f"{name}.stderr", timeout_s=timeout_s, grace_s=1.0)

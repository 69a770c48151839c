"""The user's ``--record-check MODULE:FUNCTION``, run by the tool's own Python as a script (a
copy of this file in the check's private folder): standard library only, nothing of the tool
imported.

    python check_child.py SPEC RECORDS RESULT LIMIT

The current folder goes first on the import path (as ``python -m`` puts it), the function is
imported, then called as ``function(record_id, record)`` on each entry of RECORDS (JSON lines
``{"line", "id", "record"}`` the tool wrote); each failure (it raised, or returned False) is a line
``{"line", "id", "detail"}`` of RESULT, the detail cut to LIMIT characters, and a last line
``{"checked": N}`` once every record was seen (without it, the check did not finish). RECORDS
``-`` only imports the function. Exit 3: the function cannot be imported, its reason the last
line of stderr.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from typing import Any, Callable


def load(spec: str) -> Callable[..., Any]:
    module_name, _, name = spec.partition(":")
    function: Any = importlib.import_module(module_name)
    for part in name.split("."):
        function = getattr(function, part)
    if not callable(function):
        raise TypeError(spec + " is not a function")
    return function  # type: ignore[no-any-return]


def check(function: Callable[..., Any], records_path: str, result_path: str, limit: int) -> None:
    checked = 0
    with open(records_path, encoding="utf-8") as entries, \
            open(result_path, "w", encoding="utf-8") as result:
        for text in entries:
            entry = json.loads(text)
            try:
                failed = function(entry["id"], entry["record"]) is False
                said = "returned False"
            except Exception as exc:  # the user's function: whatever it raises is its verdict
                failed, said = True, type(exc).__name__ + (": " + str(exc) if str(exc) else "")
            checked += 1
            if failed:
                said = " ".join(said.split())[:limit]
                result.write(json.dumps({"line": entry["line"], "id": entry["id"],
                                         "detail": said}) + "\n")
        result.write(json.dumps({"checked": checked}) + "\n")


def main(argv: list[str]) -> int:
    spec, records_path, result_path, limit = argv[0], argv[1], argv[2], int(argv[3])
    sys.path[0] = os.getcwd()  # this script's folder (the check's own) no more
    try:
        function = load(spec)
    except Exception as exc:  # why it cannot be imported: said on stderr's last line
        sys.stderr.write(type(exc).__name__ + ": " + " ".join(str(exc).split()) + "\n")
        return 3
    if records_path != "-":
        check(function, records_path, result_path, limit)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

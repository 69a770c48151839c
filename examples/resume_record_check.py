"""A job whose real output is a file per id, and the record check that proves each file is there.

The ledger only says which ids are done; when each id's output is a file of its own (a ``.pt``, a
``.npy``), that file must be written, whole, *before* the id goes to the ledger: a job stopped
between the two then simply does the id again. Written the other way round, a kill between the
two leaves an id "done" with no file, and the ledger alone cannot see it. ``--record-check`` can:

    cd examples && mkdir -p out
    kernodeck-diagnostic resume-check --ledger out/results.jsonl --stop-after-records 20 \\
        --record-check resume_record_check:output_exists \\
        -- python resume_record_check.py out/results.jsonl

``output_exists`` is imported from the current folder (as ``python -m`` would) and called on
every record of the ledger: a record fails when its file is missing or is not what was written.
Standard library only (the work is real hashing). See docs/operating-range.md.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys

from kernodeck_diagnostic import OutputLedger

IDS = [f"doc-{number}" for number in range(100)]


def compute(item: str) -> bytes:
    """A stand-in for a model's output: some milliseconds of real hashing."""
    digest = item.encode()
    for _ in range(20000):
        digest = hashlib.sha256(digest).digest()
    return json.dumps({"id": item, "values": list(digest)}).encode()


def write_whole(path: str, data: bytes) -> None:
    """The file appears whole or not at all: written aside, synced, then renamed."""
    partial = path + ".partial"
    with open(partial, "wb") as file:
        file.write(data)
        file.flush()
        os.fsync(file.fileno())
    os.replace(partial, path)


def main(ledger_path: str) -> int:
    outputs = os.path.join(os.path.dirname(ledger_path) or ".", "outputs")
    os.makedirs(outputs, mode=0o700, exist_ok=True)
    with OutputLedger(ledger_path, expected_ids=IDS) as ledger:
        done = ledger.done_ids()
        for item in IDS:
            if item in done:
                continue  # written by an earlier run: never twice
            data = compute(item)
            path = os.path.join(outputs, f"{item}.json")
            write_whole(path, data)  # first the output...
            # ...then the id, with what proves the output: where it is, and its digest.
            ledger.append(item, {"output": path, "sha256": hashlib.sha256(data).hexdigest()})
    return 0


def output_exists(record_id: str, record: dict[str, str]) -> bool:
    """``--record-check``: the record's output file is there, and is what was written."""
    try:
        with open(record["output"], "rb") as file:
            found = hashlib.sha256(file.read()).hexdigest()
    except FileNotFoundError:
        raise AssertionError(f"no output file for {record_id}") from None
    if found != record["sha256"]:
        raise AssertionError(f"the output of {record_id} is not what was written")
    return True


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

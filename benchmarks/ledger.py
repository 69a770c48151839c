"""``OutputLedger.append`` against a bare write + flush of the same line, for records of 64 floats
(issue 42: the target is a ratio of at most 1.2; a per-append ``lstat`` of the ledger's name made
it 1.31-1.44).

    python benchmarks/ledger.py [--records 2000] [--rounds 41] [--dim 64]

Each round writes the same records both ways into a new folder, in alternating order (a load
that rises or falls within a round favours neither side); the ratio is the median over rounds of
the paired ratios, each side's time the median over rounds. The ledger is opened before its
clock starts and closed after it stops (the header's and the final sync happen once per ledger,
not per record); its helper thread's syncs run meanwhile, as in a program. Prints one JSON
object. Standard library only; the package is imported from ``src/`` next to this folder unless
``PYTHONPATH`` says otherwise (to measure another version of it).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from typing import Any

if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

from kernodeck_diagnostic import OutputLedger

TARGET = 1.20


def bare(folder: str, records: list[tuple[str, Any]]) -> float:
    """µs per record: one line written and flushed per record, as a program would by hand."""
    start = time.perf_counter()
    with open(os.path.join(folder, "bare.jsonl"), "a", encoding="utf-8") as file:
        for key, record in records:
            file.write(json.dumps({"id": key, "record": record}, ensure_ascii=False,
                                  separators=(",", ":")) + "\n")
            file.flush()
    return (time.perf_counter() - start) / len(records) * 1e6


def ledger(folder: str, records: list[tuple[str, Any]]) -> float:
    """µs per record: ``append`` in the default durability (group commit)."""
    opened = OutputLedger(os.path.join(folder, "ledger.jsonl"))
    start = time.perf_counter()
    for key, record in records:
        opened.append(key, record)
    seconds = time.perf_counter() - start
    opened.close()
    return seconds / len(records) * 1e6


def measure(count: int, rounds: int, dim: int) -> dict[str, Any]:
    rng = random.Random(42)  # noqa: S311 (values to write, not secrets)
    records = [(f"doc-{index}", [rng.random() for _ in range(dim)]) for index in range(count)]
    times: dict[str, list[float]] = {"bare": [], "ledger": []}
    with tempfile.TemporaryDirectory(prefix="kd-ledger-bench-") as where:
        for turn in range(rounds):
            folder = os.path.join(where, str(turn))
            os.mkdir(folder)
            order = [("bare", bare), ("ledger", ledger)]
            for name, function in (order if turn % 2 == 0 else order[::-1]):
                times[name].append(function(folder, records))
    ratio = statistics.median(a / b for a, b in zip(times["ledger"], times["bare"]))
    return {"records": count, "rounds": rounds, "dim": dim,
            "ledger_us": round(statistics.median(times["ledger"]), 2),
            "bare_write_flush_us": round(statistics.median(times["bare"]), 2),
            "ratio": round(ratio, 3), "target": TARGET, "met": ratio <= TARGET}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=41)
    parser.add_argument("--dim", type=int, default=64)
    args = parser.parse_args()
    print(json.dumps(measure(args.records, args.rounds, args.dim)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

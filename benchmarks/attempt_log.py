"""Reading back a killed attempt's ``events.jsonl``, against its anchor: the same file read line
by line with plain ``json.loads`` and nothing kept (the least any reader of it does).

A log of the shape a ``Trial`` writes (``attempt_started``, then per pass ``pass_started``,
a stage's start and end, and ``pass_completed`` with its memory and its stages' times) is
generated to ``--mb`` megabytes in a temporary folder; then, in alternated rounds, the tool's
reader (``trial.log_reader.from_events``, which ``compare``, ``summarize`` and ``open_attempt()``
use) and the anchor read it. Printed: the medians, their ratio (the median of the per-round
ratios: the load of the moment cancels out), and the reader's peak of Python memory
(``tracemalloc``, in a round of its own). With ``--baseline DIR`` (another checkout's ``src``,
e.g. ``git archive COMMIT src | tar -x -C DIR``), that checkout's reader is timed once in a child,
with its peak resident memory, for the figures of a change.

    python benchmarks/attempt_log.py [--mb 66] [--rounds 5] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from kernodeck_diagnostic.trial.log_reader import from_events  # noqa: E402

MEMORY = {"rss_bytes": 1_000_000_000, "rss_peak_bytes": 1_200_000_000, "device": None,
          "allocated_bytes": None, "reserved_bytes": None, "peak_allocated_bytes": None}


def write_log(path: Path, megabytes: float) -> int:
    """A Trial's event log of about ``megabytes`` MB, one pass after another; its passes."""
    limit = int(megabytes * 1e6)
    with path.open("w", encoding="utf-8") as file:
        file.write(json.dumps({"event": "attempt_started", "t_ms": 1.0,
                               "format": "kernodeck-attempt", "version": 1,
                               "attempt_id": "20261206T000000Z-bench0", "command": ["app.py"],
                               "params": {"batch": 8}}) + "\n")
        index = 0
        while file.tell() < limit:
            t = index * 10.0
            ms = 5.0 + (index * 7919 % 1000) / 100
            file.write(json.dumps({"event": "pass_started", "t_ms": t, "pass_index": index})
                       + "\n")
            file.write(json.dumps({"event": "stage_started", "t_ms": t + 1, "stage": "compute",
                                   "pass_index": index, "stage_index": 1}) + "\n")
            file.write(json.dumps({"event": "stage_completed", "t_ms": t + ms,
                                   "stage": "compute", "pass_index": index,
                                   "status": "completed", "duration_ms": ms,
                                   "synchronized": None, "memory": MEMORY,
                                   "occurrence": index + 1}) + "\n")
            file.write(json.dumps({"event": "pass_completed", "t_ms": t + ms + 1,
                                   "pass_index": index, "duration_ms": ms + 1, "memory": MEMORY,
                                   "stage_ms": {"compute": ms}}) + "\n")
            index += 1
    return index


def anchor(path: Path) -> None:
    with path.open("rb") as file:
        for line in file:
            json.loads(line)


def timed(work: object, path: Path) -> float:
    start = time.perf_counter()
    work(path)  # type: ignore[operator]
    return time.perf_counter() - start


BASELINE = """
import resource, sys, time
from kernodeck_diagnostic.trial.compare import from_events
start = time.perf_counter()
from_events(sys.argv[1])
print(time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=66.0)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--baseline", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "events.jsonl"
        passes = write_log(path, args.mb)
        size = os.path.getsize(path)
        reader: list[float] = []
        bare: list[float] = []
        for round_number in range(args.rounds):
            pair = [("reader", lambda p: from_events(str(p))), ("anchor", anchor)]
            for name, work in pair if round_number % 2 == 0 else pair[::-1]:
                (reader if name == "reader" else bare).append(timed(work, path))
        tracemalloc.start()
        from_events(str(path))
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        ratios = [a / b for a, b in zip(reader, bare)]
        print(f"| log | {size / 1e6:.1f} MB, {passes} passes |")
        print("|---|---|")
        print(f"| reader (`from_events`), median of {args.rounds} | "
              f"{statistics.median(reader):.2f} s |")
        print(f"| anchor (`json.loads` per line, nothing kept) | {statistics.median(bare):.2f} s |")
        print(f"| reader / anchor (median of the per-round ratios) | "
              f"{statistics.median(ratios):.2f} |")
        print(f"| reader's peak of Python memory (tracemalloc) | {peak / 2**20:.1f} MiB |")
        if args.baseline is not None:
            done = subprocess.run(
                [sys.executable, "-c", BASELINE, str(path)], capture_output=True, text=True,
                check=True, timeout=3600,
                env={**os.environ, "PYTHONPATH": str(args.baseline / "src"),
                     "PYTHONDONTWRITEBYTECODE": "1"})
            seconds, rss = done.stdout.split()
            print(f"| baseline reader, one run | {float(seconds):.2f} s, peak RSS "
                  f"{int(rss) / 1024:.0f} MiB |")
        if sys.platform != "win32":  # resource is POSIX's
            own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            print(f"| this process's peak RSS (the reader, the anchor, tracemalloc) | "
                  f"{own / 1024:.0f} MiB |")


if __name__ == "__main__":
    main()

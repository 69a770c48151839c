"""``summarize`` on a fleet of reports (issue 46), side by side with DuckDB's best reading of the
same files and a plain-Python anchor, in the same run.

    python benchmarks/fleet.py --make FOLDER --reports 100000     # once: the fleet
    python benchmarks/fleet.py FOLDER [--duckdb PYTHON] [--rounds 3] [--baseline DIR]

The fleet replicates the recorded real reports (``tests/snapshots/``): about 3 % failing over a
handful of codes (GPU_UNAVAILABLE 1.5 %, OUT_OF_MEMORY 1 %, TORCH_MISSING 0.5 %, the rest
GPU_CHECK_PASSED), nested per day and node (``day-01/node-0001/check-000.json``: 10 days, 1000
nodes, a node's checks of the day side by side). Each round runs, in alternating order:

- ``summarize``: the installed package's ``python -m kernodeck_diagnostic summarize FOLDER`` (the
  fleet view, its default output), its wall time and peak RSS (of the largest process: each part
  is a forked child);
- ``anchor``: plain Python, one process: every file read and ``json.loads``-ed, the codes counted
  (no bound, no name, no judgement): what a user's own loop costs;
- ``baseline`` (with ``--baseline DIR``, ``DIR`` holding another version's ``src``: ``git archive
  COMMIT src | tar -x -C DIR``): the same ``summarize`` of that version, the change measured
  against the code before it in the same rounds;
- ``duckdb`` (when ``--duckdb`` names a Python that has it: never a dependency of the project):
  ``read_text`` over the fleet's glob and the fields extracted with ``json_extract_string``, the
  codes counted and the failing files listed (its fastest reading measured in issue 46; its
  ``read_json`` took 4-14 times longer here).

Prints one JSON object: each side's median wall time and peak RSS, and the ratios. Standard
library only; the package is imported from ``src/`` next to this folder unless ``PYTHONPATH``
says otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from typing import Any

assert sys.platform != "win32", "POSIX only: resource, os.getloadavg"  # noqa: S101
import resource  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "src")
SNAPSHOTS = os.path.join(HERE, "..", "tests", "snapshots")
MIX = (("gpu_unavailable", 0.015), ("out_of_memory", 0.025), ("torch_missing", 0.03))
TIMEOUT_S = 3600

ANCHOR = """
import json, os, sys
from collections import Counter
codes = Counter()
for folder, _, files in os.walk(sys.argv[1]):
    for name in files:
        if name.endswith(".json"):
            with open(os.path.join(folder, name), "rb") as file:
                codes[json.loads(file.read()).get("code")] += 1
print(sum(codes.values()))
"""

DUCKDB = """
import sys, duckdb
con = duckdb.connect()
con.execute("SET threads TO %d" % int(sys.argv[2]))
glob = sys.argv[1].rstrip("/") + "/**/*.json"
rows = con.execute(
    "SELECT json_extract_string(content, '$.code') AS code, count(*) FROM read_text(?) "
    "GROUP BY code", [glob]).fetchall()
failed = con.execute(
    "SELECT filename, json_extract_string(content, '$.code') AS code, "
    "json_extract_string(content, '$.stage') AS stage, "
    "json_extract_string(content, '$.error.kind') AS cause FROM read_text(?) "
    "WHERE json_extract_string(content, '$.code') NOT IN ('GPU_CHECK_PASSED', 'CPU_CHECK_PASSED')",
    [glob]).fetchall()
print(sum(count for _, count in rows), len(failed))
"""


def make(folder: str, reports: int, seed: int = 46) -> None:
    """The fleet (see the module's docstring), written once."""
    blobs = {}
    for name in ("gpu_pass", *(name for name, _ in MIX)):
        with open(os.path.join(SNAPSHOTS, name + ".json"), "rb") as file:
            blobs[name] = file.read()
    rng = random.Random(seed)  # noqa: S311 (a mix of codes, not a secret)
    days, nodes = 10, 1000
    per = max(1, -(-reports // (days * nodes)))
    written = 0
    for day in range(days):
        for node in range(nodes):
            folder_of = os.path.join(folder, f"day-{day + 1:02d}", f"node-{node:04d}")
            os.makedirs(folder_of, exist_ok=True)
            for check in range(per):
                if written == reports:
                    return
                draw = rng.random()
                name = next((name for name, limit in MIX if draw < limit), "gpu_pass")
                with open(os.path.join(folder_of, f"check-{check:03d}.json"), "wb") as file:
                    file.write(blobs[name])
                written += 1


def timed(command: list[str]) -> tuple[float, float, str]:
    """Wall seconds, peak RSS (MB) of the largest process among the command's, its stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S,
                          check=False)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if done.returncode not in (0, 22):
        raise SystemExit(f"{command[:3]} failed ({done.returncode}): {done.stderr[-2000:]}")
    # ru_maxrss of the children is the largest of any of them so far: measured in a fresh
    # process per side (see main), it is this command's.
    return seconds, max(peak, before) / 1024, done.stdout


def measure_one(side: str, folder: str, duckdb: str | None, threads: int,
                baseline: str | None = None) -> dict[str, Any]:
    """One side once, in a fresh process of its own (its children's peak RSS is its own)."""
    command = [sys.executable, os.path.abspath(__file__), "--one", side, folder,
               "--threads", str(threads)] + (["--duckdb", duckdb] if duckdb else []) + (
                   ["--baseline", baseline] if baseline else [])
    done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S,
                          check=True)
    measured: dict[str, Any] = json.loads(done.stdout)
    return measured


def one(side: str, folder: str, duckdb: str | None, threads: int,
        baseline: str | None = None) -> dict[str, Any]:
    env_python = sys.executable
    if side == "baseline":
        os.environ["PYTHONPATH"] = os.path.join(os.path.abspath(baseline or ""), "src")
    if side in ("summarize", "baseline"):
        command = [env_python, "-m", "kernodeck_diagnostic", "summarize", folder]
    elif side == "anchor":
        command = [env_python, "-c", ANCHOR, folder]
    else:
        command = [duckdb or "", "-c", DUCKDB, folder, str(threads)]
    seconds, peak, out = timed(command)
    return {"seconds": seconds, "peak_mb": peak, "lines": out.count("\n")}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("--make", action="store_true")
    parser.add_argument("--reports", type=int, default=100_000)
    parser.add_argument("--duckdb", help="a Python that has duckdb (a venv of its own)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--one")
    parser.add_argument("--baseline", help="a folder holding another version's src/")
    parser.add_argument("--no-anchor", action="store_true", help="at 1M: the anchor's time is "
                        "known from 100k (it scales linearly); spare the machine")
    args = parser.parse_args()
    if not os.environ.get("PYTHONPATH"):
        os.environ["PYTHONPATH"] = os.path.abspath(SRC)
    if args.make:
        make(args.folder, args.reports)
        return
    if args.one:
        print(json.dumps(one(args.one, args.folder, args.duckdb, args.threads, args.baseline)))
        return
    sides = ["summarize"] + (["baseline"] if args.baseline else []) + (
        [] if args.no_anchor else ["anchor"]) + (["duckdb"] if args.duckdb else [])
    runs: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
    for number in range(args.rounds):
        order = sides if number % 2 == 0 else sides[::-1]  # a drifting load favours neither
        for side in order:
            runs[side].append(measure_one(side, args.folder, args.duckdb, args.threads,
                                          args.baseline))
            print(side, json.dumps(runs[side][-1]), file=sys.stderr, flush=True)
    result: dict[str, Any] = {"reports": sum(1 for _, _, files in os.walk(args.folder)
                                             for name in files if name.endswith(".json")),
                              "rounds": args.rounds, "load_average": os.getloadavg()}
    for side, measured in runs.items():
        result[side] = {"seconds_median": statistics.median(m["seconds"] for m in measured),
                        "seconds": [round(m["seconds"], 2) for m in measured],
                        "peak_mb_max": max(m["peak_mb"] for m in measured),
                        "output_lines": measured[0]["lines"]}
    base = result["summarize"]["seconds_median"]
    for side in sides[1:]:
        result[f"{side}_over_summarize"] = round(result[side]["seconds_median"] / base, 2)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

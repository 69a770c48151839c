"""What the trial toolkit costs inside a program, each cost against its anchors in the same run.

Run by ``benchmarks/run.py`` (rows 8 to 10) with the benchmark's torch environment, where the
tool is installed; it prints one line, ``KD-BENCH-TRIAL {json}``, on stderr:

- ``with trial.stage(...)`` (no sync, torch imported, CPU) against a bare context manager and
  ``torch.profiler.record_function`` (no profiler session: what it costs in a job), alternated
  round by round, medians of the rounds; and the CPU time of the program's thread;
- a step of a loop, a pass of ``trial.passes(n)`` with a stage in it, against two
  ``record_function`` ranges, in the same rounds;
- the bytes of ``events.jsonl`` after ``million`` stage calls of three names;
- one event written to ``events.jsonl`` (JSON, write, flush) and a write made durable (fsync);
- ``OutputLedger.append`` of records of 256 floats, in each durability mode, against a bare
  ``write`` + ``flush`` of the same line, SQLite in WAL mode (``synchronous=NORMAL``, one commit
  per record) and a ``write`` + ``flush`` + ``fsync`` per record. The group mode's appends are
  timed with its helper thread's syncs running beside them; its final ``close`` (the last sync,
  once per ledger) is timed apart.

    python benchmarks/trial_probe.py CALLS ROUNDS MILLION RECORDS
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import torch

from kernodeck_diagnostic import OutputLedger, Trial
from kernodeck_diagnostic.safe_files import Folder
from kernodeck_diagnostic.trial.log import EventLog

FSYNC_SHARE = 10  # the modes that fsync each record write a tenth of the records


class Bare:
    """The cheapest context manager: the floor of any ``with``."""

    __slots__ = ()

    def __enter__(self) -> Bare:
        return self

    def __exit__(self, *exc_info: object) -> None:
        return None


def per_call_us(run: Callable[[], None], calls: int) -> float:
    start = time.perf_counter()
    run()
    return (time.perf_counter() - start) / calls * 1e6


def stage_costs(where: str, calls: int, rounds: int) -> dict[str, float]:
    """Per call: a bare ``with``, ``record_function``, ``trial.stage``, alternated by round."""
    bare = Bare()
    times: dict[str, list[float]] = {"bare": [], "record_function": [], "stage": [],
                                     "two_record_functions": [], "step": []}
    stage_cpu: list[float] = []
    with Trial(where) as trial:

        def two_ranges_loop() -> None:
            for _ in range(calls):
                with torch.profiler.record_function("bench"):
                    pass
                with torch.profiler.record_function("bench"):
                    pass

        def step_loop() -> None:  # a training loop's step: a pass and a stage in it
            for _ in trial.passes(calls):
                with trial.stage("step"):
                    pass

        def bare_loop() -> None:
            for _ in range(calls):
                with bare:
                    pass

        def profiler_loop() -> None:
            for _ in range(calls):
                with torch.profiler.record_function("bench"):
                    pass

        def stage_loop() -> None:
            for _ in range(calls):
                with trial.stage("bench"):
                    pass

        for _ in range(rounds):
            times["bare"].append(per_call_us(bare_loop, calls))
            times["record_function"].append(per_call_us(profiler_loop, calls))
            cpu = time.thread_time()
            times["stage"].append(per_call_us(stage_loop, calls))
            stage_cpu.append((time.thread_time() - cpu) / calls * 1e6)
            times["two_record_functions"].append(per_call_us(two_ranges_loop, calls))
            times["step"].append(per_call_us(step_loop, calls))
    found = {f"{key}_us": statistics.median(values) for key, values in times.items()}
    found["stage_min_us"] = min(times["stage"])
    found["stage_cpu_us"] = statistics.median(stage_cpu)
    # Paired: each round ran both, so the load of the moment cancels out.
    found["stage_vs_record_function"] = statistics.median(
        a / b for a, b in zip(times["stage"], times["record_function"]))
    found["step_vs_two_record_functions"] = statistics.median(
        a / b for a, b in zip(times["step"], times["two_record_functions"]))
    return found


def events_bytes(where: str, calls: int) -> dict[str, float]:
    """The event log of ``calls`` stage calls of three names (two nested in passes of 10,000)."""
    start = time.perf_counter()
    with Trial(where) as trial:
        for _ in trial.passes(max(1, calls // 30_000)):
            for _ in range(10_000):
                with trial.stage("fetch"):
                    pass
                with trial.stage("compute"), trial.stage("kernel"):
                    pass
    seconds = time.perf_counter() - start
    [folder] = [entry.path for entry in os.scandir(where) if entry.is_dir()]
    calls_made = max(1, calls // 30_000) * 30_000
    return {"events_bytes": os.path.getsize(os.path.join(folder, "events.jsonl")),
            "events_calls": calls_made, "events_run_s": seconds}


def event_write(where: str, calls: int, rounds: int) -> dict[str, float]:
    memory = {"rss_bytes": 2**28, "rss_peak_bytes": 2**28, "device": None,
              "allocated_bytes": None, "reserved_bytes": None, "peak_allocated_bytes": None}
    write_us, fsync_us = [], []
    log = EventLog(Folder.made(tempfile.mkdtemp(dir=where)))
    for _ in range(rounds):
        start = time.perf_counter()
        for index in range(calls):
            log.write("stage_completed", stage="bench", pass_index=index, duration_ms=0.01,
                      synchronized=None, memory=memory)
        write_us.append((time.perf_counter() - start) / calls * 1e6)
    log.close()
    with open(os.path.join(where, "fsync.jsonl"), "a") as file:
        for _ in range(rounds):
            start = time.perf_counter()
            for _ in range(calls // 10):
                file.write(json.dumps(memory) + "\n")
                file.flush()
                os.fsync(file.fileno())
            fsync_us.append((time.perf_counter() - start) / (calls // 10) * 1e6)
    return {"write_us": statistics.median(write_us), "write_min_us": min(write_us),
            "fsync_us": statistics.median(fsync_us)}


def ledger_costs(where: str, count: int, rounds: int) -> dict[str, float]:
    """Per record: the ledger's modes and their anchors, alternated by round (see the module's
    docstring)."""
    rng = random.Random(25)  # noqa: S311 (values to write, not secrets)
    records = [(f"doc-{index}", {"vector": [rng.random() for _ in range(256)]})
               for index in range(count)]
    few = records[:max(1, count // FSYNC_SHARE)]
    closing: list[float] = []  # the group mode's final close, ms
    times: dict[str, list[float]] = {name: [] for name in (
        "bare_write", "sqlite_wal", "ledger_group", "fsync_write", "ledger_record")}
    measures: dict[str, Callable[[str], float]] = {
        "bare_write": lambda folder: _bare_write(folder, records, sync=False),
        "sqlite_wal": lambda folder: _sqlite(folder, records),
        "ledger_group": lambda folder: _ledger(folder, records, "group", closing),
        "fsync_write": lambda folder: _bare_write(folder, few, sync=True),
        "ledger_record": lambda folder: _ledger(folder, few, "record", [])}
    for turn in range(rounds):
        folder = os.path.join(where, f"ledger-{turn}")
        os.mkdir(folder)
        # Every other round in the opposite order: a load that rises or falls within a round
        # favours neither side.
        for name in (list(measures) if turn % 2 == 0 else list(measures)[::-1]):
            times[name].append(measures[name](folder))
    found = {f"{name}_us": statistics.median(values) for name, values in times.items()}
    found["ledger_group_close_ms"] = statistics.median(closing)
    for mode, anchor in (("ledger_group", "bare_write"), ("ledger_group", "sqlite_wal"),
                         ("ledger_record", "fsync_write")):
        found[f"{mode}_vs_{anchor}"] = statistics.median(
            a / b for a, b in zip(times[mode], times[anchor]))
    found["ledger_records"] = count
    return found


def _bare_write(folder: str, records: list[tuple[str, Any]], *, sync: bool) -> float:
    name = "fsync.jsonl" if sync else "bare.jsonl"
    start = time.perf_counter()
    with open(os.path.join(folder, name), "a", encoding="utf-8") as file:
        for key, record in records:
            file.write(json.dumps({"id": key, "record": record}, ensure_ascii=False,
                                  separators=(",", ":")) + "\n")
            file.flush()
            if sync:
                os.fsync(file.fileno())
    return (time.perf_counter() - start) / len(records) * 1e6


def _sqlite(folder: str, records: list[tuple[str, Any]]) -> float:
    connection = sqlite3.connect(os.path.join(folder, "records.sqlite"))
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    connection.execute("CREATE TABLE records (id TEXT PRIMARY KEY, record TEXT)")
    connection.commit()
    start = time.perf_counter()
    for key, record in records:
        connection.execute("INSERT INTO records VALUES (?, ?)",
                           (key, json.dumps(record, separators=(",", ":"))))
        connection.commit()
    seconds = time.perf_counter() - start
    connection.close()
    return seconds / len(records) * 1e6


def _ledger(folder: str, records: list[tuple[str, Any]], mode: str,
            closing: list[float]) -> float:
    """Per record: the appends (the helper thread's syncs run meanwhile); the final ``close``
    (the last sync, once per ledger) is added to ``closing`` in ms."""
    # Opened before the clock starts: the header's creation (a sync of the file and the
    # folder) happens once per ledger, not per record.
    ledger = OutputLedger(os.path.join(folder, f"ledger-{mode}.jsonl"),
                          durability=mode)  # type: ignore[arg-type]
    start = time.perf_counter()
    for key, record in records:
        ledger.append(key, record)
    appended = time.perf_counter()
    ledger.close()
    closing.append((time.perf_counter() - appended) * 1000)
    return (appended - start) / len(records) * 1e6


def main() -> None:
    calls, rounds, million, records = (int(value) for value in sys.argv[1:5])
    found: dict[str, float] = {"calls": calls, "rounds": rounds}
    with tempfile.TemporaryDirectory() as where:
        found.update(stage_costs(os.path.join(where, "stages"), calls, rounds))
        found.update(events_bytes(os.path.join(where, "events"), million))
        found.update(event_write(where, calls, rounds))
        found.update(ledger_costs(where, records, rounds))
    sys.stderr.write("KD-BENCH-TRIAL " + json.dumps(found) + "\n")


if __name__ == "__main__":
    main()

"""Where the check's time goes: a timeline of the front and the worker against the floor.

    python benchmarks/timeline.py [--runs 10] [--torch-double]

Runs ``kernodeck-diagnostic --device cpu`` (installed), the zipapp and the floor (the bare
computation ending with ``os._exit(0)``, benchmarks/run.py's FLOOR_CHECK) in alternated rounds
(rotated, and reversed every other round, each command started once every process of the last
one has ended, as benchmarks/run.py's ``alternate`` and ``settle`` run them), each with a
``sitecustomize`` of this script's own on ``PYTHONPATH`` (the worker inherits it) that
stamps, in every process, the system-wide monotonic clock and the process's own CPU time at:

- the interpreter ready (``sitecustomize`` runs last in its start-up);
- the worker's start as the front asks for it (the ``os.fork``, ``os.posix_spawn`` or
  ``subprocess.Popen`` audit event): in the console script, first thing, before the command line
  is read (supervision/start.py); a worker forked from the front stamps its first moment in a
  file of its own (an ``os.register_at_fork`` hook; a child of the worker, its watch, stamps
  nothing);
- in the front: the request's places written, right before the request is sent;
- in the worker: its events file opened, once it has read its request (the ``Events`` clock's
  zero, which dates every event the worker writes), and ``import torch`` beginning (the
  ``import`` audit event);
- in the worker and the floor: their ``os._exit`` (which raises no audit event: the function is
  wrapped, for that process alone, not for a child it forks);
- in the front: the worker's private folder removed (the worker has ended and been read; its
  events file is copied first, for their times), and ``main()`` returned (an ``atexit`` hook,
  before the process ends: ``cli.end``).

The launch and the exit are stamped here. Medians of each mark, in milliseconds after the launch
(wall) and of each process's CPU time (which the machine's other load inflates far less: read
those on a shared machine), then, against the floor, the paired ratios (the median of the
per-round ratios, which rows 1f and 3f of benchmarks/run.py judge) with their 95 % intervals
(``run.median_interval``), the paired differences and the ratios of the medians, and each run cut
in three stretches at marks the check and the floor share (launch to ``import torch``, to the
``os._exit``, to the exit seen), each stretch paired with the floor's. ``--torch-double`` runs all
three with torch's double (benchmarks/run.py's ``double_env``, rows 1d and 3d) in place of the
real import: what is left is the tool's own time, without the real import's noise. Nothing of
this is in the tool: the stamps come from outside it.
Linux only (the monotonic clock is shared by every process there; tests/envs.py locks with
fcntl).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import (
    DOUBLE_IMPORT_S,
    FLOOR_CHECK,
    RUN_LIMIT_S,
    adopt_orphans,
    base_env,
    double_env,
    load_envs,
    median_interval,
    prepare,
    settle,
)

# Written into a temporary folder put on PYTHONPATH; KD_TIMELINE_STAMPS names the folder where
# each process writes its stamps.
SITECUSTOMIZE = r'''
import os, sys, time
_folder = os.environ.get("KD_TIMELINE_STAMPS")
if _folder:
    _worker = "--events" in sys.argv
    _fd = os.open(os.path.join(_folder, f"{os.getpid()}.stamps"), os.O_WRONLY | os.O_CREAT)
    _seen = set()

    def _stamp(what):
        if what not in _seen:
            _seen.add(what)
            os.write(_fd, f"{time.monotonic()} {time.process_time()} {what}\n".encode())

    _stamp("worker ready" if _worker else "front ready")

    def _forked():
        # A child of the front is its worker (forked first thing): its stamps in a file of its
        # own. A child of the worker (its watch) stamps nothing the worker would.
        global _fd, _pid, _seen, _worker
        if _worker:
            _pid = -1  # the watch: no os._exit of its stamped
            return
        _worker, _pid, _seen = True, os.getpid(), set()
        _fd = os.open(os.path.join(_folder, f"{_pid}.stamps"), os.O_WRONLY | os.O_CREAT)
        _stamp("worker forked")

    os.register_at_fork(after_in_child=_forked)

    def _hook(event, args):
        if event == "import" and args[0] == "torch":
            _stamp(("worker" if _worker else "floor") + " import torch")
        elif (event in ("subprocess.Popen", "os.posix_spawn")
              and "--watch-front" in list(args[1] or ())) or (event == "os.fork" and not _worker):
            _stamp("front starts the worker")
        elif event == "open" and _worker and str(args[0]).endswith("events.jsonl"):
            _stamp("worker events")
        elif event == "open" and not _worker and str(args[0]).endswith("places.json"):
            _stamp("front: the request's places written")  # sent right after
        elif event == "shutil.rmtree" and os.path.basename(str(args[0])).startswith("kernodeck-"):
            _stamp("front: worker ended and read")
            try:
                import shutil
                shutil.copy(os.path.join(str(args[0]), "events.jsonl"),
                            os.path.join(_folder, "events.jsonl"))
            except OSError:
                pass

    sys.addaudithook(_hook)
    # The worker and the floor end with os._exit (no audit event): stamped by this process only,
    # not by a child it forked (the worker's watch), which inherited the wrapper.
    _exit, _pid = os._exit, os.getpid()

    def _exiting(status):
        # The front ends with os._exit too (cli.end): not a mark of its own, main() returned is.
        if os.getpid() == _pid and (_worker or sys.argv[:1] == ["-c"]):
            _stamp(("worker" if _worker else "floor") + ": os._exit")
        _exit(status)

    os._exit = _exiting
    import atexit
    atexit.register(_stamp, "front: main() returned")
'''
# The worker's own events shown in the timeline (their t_ms, dated by "worker events").
WORKER_EVENTS = {("stage_finished", "import"): "worker: torch imported (import stage ends)",
                 ("result", None): "worker: computation done",
                 ("final", None): "worker: final event"}


def run_once(argv: list[str], env: dict[str, str]) -> dict[str, tuple[float, float | None]]:
    """One run: each mark's (ms after the launch, the process's CPU ms or None)."""
    stamps = Path(tempfile.mkdtemp(prefix="kd-timeline-"))
    try:
        launch = time.monotonic()
        completed = subprocess.run(argv, env={**env, "KD_TIMELINE_STAMPS": str(stamps)},
                                   capture_output=True, stdin=subprocess.DEVNULL,
                                   timeout=RUN_LIMIT_S, check=False)
        end = time.monotonic()
        settle(Path(argv[-3]).name)  # its worker's exit too, before the next command starts
        if completed.returncode != 0:
            raise SystemExit(f"{argv[-3:]} exited {completed.returncode}:\n"
                             f"{completed.stderr.decode(errors='replace')[-2000:]}")
        marks: dict[str, tuple[float, float | None]] = {"exit seen": ((end - launch) * 1000, None)}
        for path in stamps.glob("*.stamps"):
            for line in path.read_text().splitlines():
                wall, cpu, what = line.split(" ", 2)
                marks[what] = ((float(wall) - launch) * 1000, float(cpu) * 1000)
        events = stamps / "events.jsonl"
        if events.exists() and "worker events" in marks:
            zero = marks["worker events"][0]
            for line in events.read_text().splitlines():
                event = json.loads(line)
                name = WORKER_EVENTS.get((event["event"], event.get("stage")))
                if name is not None:
                    marks[name] = (zero + event["t_ms"], None)
        return marks
    finally:
        shutil.rmtree(stamps, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="measured rounds (default 10)")
    parser.add_argument("--torch-double", action="store_true",
                        help="torch's double in place of the real import (benchmarks/run.py's "
                             f"rows 1d and 3d: the standard modules torch loads, then a "
                             f"{DOUBLE_IMPORT_S} s wait): the tool's own time, without the "
                             "noise of the real import")
    args = parser.parse_args(argv)
    adopt_orphans()
    envs = load_envs()
    work = Path(tempfile.mkdtemp(prefix="bench-timeline-", dir=envs.cache_root()))
    try:
        setup = prepare(work, Path(envs.torch_cpu()), Path(__file__).resolve().parent.parent)
        site = work / "site"
        site.mkdir()
        (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
        env = double_env(setup.work) if args.torch_double else base_env()
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
        commands = {"installed": [str(setup.installed), "--device", "cpu"],
                    "zipapp": [str(setup.python), str(setup.pyz), "--device", "cpu"],
                    "floor": [str(setup.python), "-c", FLOOR_CHECK]}
        found: dict[str, list[dict[str, tuple[float, float | None]]]] = {k: [] for k in commands}
        names = list(commands)
        for index in range(args.runs + 1):  # the first round warms up, uncounted
            order = names[index % 3:] + names[:index % 3]
            for name in order[::-1] if index % 2 else order:  # as run.alternate
                marks = run_once(commands[name], env)
                if index:
                    found[name].append(marks)
            print(f"[timeline] round {index}/{args.runs}", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(render(found))
    return 0


def render(found: dict[str, list[dict[str, tuple[float, float | None]]]]) -> str:
    lines = []
    for name, runs in found.items():
        lines += ["", f"### {name} ({len(runs)} runs; medians, ms)", "",
                  "| mark | wall, after the launch | CPU time of its process |", "|---|---|---|"]
        marks = {mark for marks in runs for mark in marks}
        for mark in sorted(marks, key=lambda m: statistics.median(
                r[m][0] for r in runs if m in r)):
            wall = statistics.median(r[mark][0] for r in runs if mark in r)
            cpus = [used for r in runs if mark in r and (used := r[mark][1]) is not None]
            cpu = f"{statistics.median(cpus):.1f}" if cpus else "-"
            lines.append(f"| {mark} | {wall:.1f} | {cpu} |")
    lines += stretches(found)
    floor = [r["exit seen"][0] for r in found["floor"]]
    lines += ["", "| command | / floor, paired ratio | its 95 % interval | paired difference | "
                  "/ floor (medians) |", "|---|---|---|---|---|"]
    for name in ("installed", "zipapp"):
        times = [r["exit seen"][0] for r in found[name]]
        ratios = [a / b for a, b in zip(times, floor)]
        interval = median_interval(ratios)
        paired = statistics.median(a - b for a, b in zip(times, floor))
        lines.append(f"| {name} | {statistics.median(ratios):.3f} | "
                     f"{f'{interval[0]:.3f}-{interval[1]:.3f}' if interval else '-'} | "
                     f"{paired:+.0f} ms | "
                     f"{statistics.median(times) / statistics.median(floor):.3f} |")
    return "\n".join(lines)


# Each command's run cut in three at marks that both the check and the floor have: before
# ``import torch`` begins, from there to the process's os._exit (torch's import and the
# computation: the same work in both, less the standard modules the worker had loaded already),
# and from the os._exit to the exit seen here (the check's front reads the worker's end, reports
# and ends; the floor only ends).
STRETCHES = (("launch → `import torch` begins", None, "import torch"),
             ("`import torch` → os._exit", "import torch", "os._exit"),
             ("os._exit → exit seen", "os._exit", "exit seen"))


def stretches(found: dict[str, list[dict[str, tuple[float, float | None]]]]) -> list[str]:
    """The table of STRETCHES: each one's median length per command, and the check's paired
    difference with the floor's (rounds paired in order; each round ran all three)."""

    def lengths(name: str, start: str | None, end: str) -> list[float | None]:
        role = "floor" if name == "floor" else "worker"
        named = {"import torch": f"{role} import torch", "os._exit": f"{role}: os._exit"}
        first, last = named[start] if start else None, named.get(end, end)
        return [marks[last][0] - (marks[first][0] if first else 0.0)
                if last in marks and (first is None or first in marks) else None
                for marks in found[name]]

    lines = ["", "| stretch (medians, ms) | installed | zipapp | floor | installed - floor, "
                 "paired | zipapp - floor, paired |", "|---|---|---|---|---|---|"]
    for label, start, end in STRETCHES:
        each = {name: lengths(name, start, end) for name in ("installed", "zipapp", "floor")}
        cells = [_median(each[name]) for name in ("installed", "zipapp", "floor")]
        for name in ("installed", "zipapp"):
            cells.append(_median([a - b if a is not None and b is not None else None
                                  for a, b in zip(each[name], each["floor"])], signed=True))
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines


def _median(values: list[float | None], signed: bool = False) -> str:
    known = [value for value in values if value is not None]
    if not known:
        return "-"
    return f"{statistics.median(known):{'+' if signed else ''}.1f}"


if __name__ == "__main__":
    sys.exit(main())

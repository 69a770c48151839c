"""A ``Trial`` loop's step as a training batch leaves the caches: cold (``Evicted`` before each
step), this checkout against another in the same process, step by step.

A batch of a millisecond runs far more code and data than the trial's calls around it, which
then find nothing of theirs cached: there each object they touch is a miss, dearer still on a
virtual machine. An epoch's time moves by more than such a cut from one run to the next, so a
change to the per-step path is measured here instead: the two trees loaded in one process (the
other one's package under the name ``kd_baseline``, from its ``src``), each with its own
attempt, their steps alternated one by one, the order swapped every other step, and judged on
the median of the per-step differences (paired: a slow moment of the machine weighs on both).

Four steps, each in its own attempt: ``pass+stage`` (``trial.passes`` over a loader with a
``trial.stage`` in each pass: what a program's own loop, or Accelerate's, does each batch),
``pass`` (the pass alone), ``stage`` (a stage outside any pass) and ``batch`` (a training
batch as the Lightning and Transformers adapters make it: ``TrainingAttempt.batch_started``,
then ``batch_ended`` with its loss, kept for the finite-loss check). Without ``--baseline`` this
checkout runs against itself: the differences are then the method's own noise. Torch is
imported first when it is installed, as in a real program (the trial asks it whether a device
or a profiler is in use; without torch every stage takes the general path).

Prints a Markdown table: per process, each step's median µs in both trees and the median of
their per-step differences (this checkout minus the baseline).

    python benchmarks/trial_cold.py [--baseline DIR] [--steps N] [--processes K] [--kinds K,...]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CHECKOUT = HERE.parent
WARM_STEPS = 400  # past the first passes and calls kept in full, the slowest found
STEPS = ("pass+stage", "pass", "stage", "batch")
TIMEOUT_S = 1800


class Evicted:
    """What a batch's own work does to the caches between two batches, done on purpose: a copy
    of 16 MiB, a JSON encoding and a regular expression's scan (a training batch runs far more
    code and data than that; the hooks then find nothing of theirs cached)."""

    def __init__(self) -> None:
        self.block = bytearray(16 << 20)
        self.data = {f"k{i}": [i, str(i), {"x": i * 1.5}] for i in range(3000)}
        self.pattern = re.compile(r"(\w+)-(\d+)")
        self.text = " ".join(f"w{i}-{i}" for i in range(2000))

    def __call__(self) -> None:
        bytes(self.block)
        json.dumps(self.data)
        self.pattern.findall(self.text)


def alternated(order: list[tuple[str, Callable[[], None]]], steps: int,
               evict: Callable[[], None]) -> dict[str, list[int]]:
    """Each of ``order``'s named steps in turn, ``steps`` times, the caches evicted before each
    and the order reversed every other time: the ns each took, by name."""
    timed: dict[str, list[int]] = {name: [] for name, _ in order}
    for index in range(steps):
        for name, step in order if index % 2 else order[::-1]:
            evict()
            start = time.perf_counter_ns()
            step()
            timed[name].append(time.perf_counter_ns() - start)
    return timed


def _loader() -> Iterator[int]:
    """A loader of unknown length, as a DataLoader's iterator is to ``trial.passes``."""
    index = 0
    while True:
        yield index
        index += 1


def _batch(package: Any, where: Path) -> tuple[Callable[[], None], Callable[[], None]]:
    """An adapter's training batch (``batch``) in an attempt of its own, and what ends it."""
    attempt = package.trial.adapters.attempt.TrainingAttempt(where, {"step": "batch"},
                                                              check_step=False)
    attempt.start()
    torch = sys.modules.get("torch")
    loss = 0.5 if torch is None else torch.tensor(0.5)

    def batch() -> None:
        attempt.batch_started(after=("save_checkpoint",))
        attempt.batch_ended(loss=loss)

    return batch, attempt.end


def _step(trial: Any, kind: str) -> tuple[Callable[[], None], Callable[[], None]]:
    """One step of ``kind`` in ``trial``'s attempt, and what closes its loop."""
    passes = trial.passes(_loader())

    def pass_and_stage() -> None:
        next(passes)
        with trial.stage("train_step"):
            pass

    def pass_alone() -> None:
        next(passes)

    def stage_alone() -> None:
        with trial.stage("train_step"):
            pass

    step = {"pass+stage": pass_and_stage, "pass": pass_alone, "stage": stage_alone}[kind]
    return step, passes.close


def measure(baseline_src: str, steps: int, kinds: tuple[str, ...] = STEPS) -> dict[str, Any]:
    """In this process: each step of ``kinds``, this checkout's and the baseline's alternated
    (caches evicted before each): their median ns and the median of the differences."""
    with contextlib.suppress(ImportError):
        import torch  # noqa: F401 (imported as a program does: the trial then asks it)
    sys.path.insert(0, baseline_src)
    sys.path.insert(0, str(CHECKOUT / "src"))
    trees = {"this": importlib.import_module("kernodeck_diagnostic"),
             "baseline": importlib.import_module("kd_baseline")}
    for package in trees.values():
        importlib.import_module(f"{package.__name__}.trial.adapters.attempt")
    evict = Evicted()
    found: dict[str, Any] = {"torch": "torch" in sys.modules}
    with tempfile.TemporaryDirectory() as where:
        for kind in kinds:
            trials = {name: package.Trial(Path(where) / kind / name, params={"step": kind},
                                          summary=False) for name, package in trees.items()}
            closers = []
            for trial in trials.values():
                trial.__enter__()
            try:
                order = []
                for name, trial in trials.items():
                    step, close = (_batch(trees[name], Path(where) / "batch" / name)
                                   if kind == "batch" else _step(trial, kind))
                    closers.append(close)
                    order.append((name, step))
                    for _ in range(WARM_STEPS):
                        step()
                timed = alternated(order, steps, evict)
            finally:
                for close in closers:
                    close()
                for trial in trials.values():
                    trial.__exit__(None, None, None)
            found[kind] = {"this_ns": statistics.median(timed["this"]),
                           "baseline_ns": statistics.median(timed["baseline"]),
                           "difference_ns": statistics.median(
                               a - b for a, b in zip(timed["this"], timed["baseline"]))}
    return found


def _baseline_copy(baseline: Path, into: Path) -> str:
    """The baseline checkout's package, copied as ``kd_baseline`` (its imports are relative)."""
    source = baseline / "src" / "kernodeck_diagnostic"
    if not (source / "trial").is_dir():
        raise SystemExit(f"--baseline: no src/kernodeck_diagnostic/trial under {baseline}")
    shutil.copytree(source, into / "kd_baseline",
                    ignore=shutil.ignore_patterns("__pycache__", "__main__.py"))
    return str(into)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, default=CHECKOUT,
                        help="another checkout (default: this one, against itself)")
    parser.add_argument("--steps", type=int, default=1500, help="timed steps of each kind")
    parser.add_argument("--processes", type=int, default=3, help="processes, one after another")
    parser.add_argument("--kinds", default=",".join(STEPS),
                        help=f"the steps measured, of {', '.join(STEPS)} (default: all)")
    parser.add_argument("--in-process", dest="in_process", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    kinds = tuple(kind for kind in arguments.kinds.split(",") if kind)
    if not kinds or set(kinds) - set(STEPS):
        parser.error(f"--kinds: one or more of {', '.join(STEPS)}")
    if arguments.in_process:  # one process's measure, as a JSON line on stdout
        print(json.dumps(measure(arguments.in_process, arguments.steps, kinds)))
        return
    rows = []
    with tempfile.TemporaryDirectory() as copy:
        baseline_src = _baseline_copy(arguments.baseline.resolve(), Path(copy))
        for process in range(arguments.processes):
            print(f"process {process + 1} of {arguments.processes}...", file=sys.stderr)
            completed = subprocess.run(
                [sys.executable, str(Path(__file__).resolve()), "--in-process", baseline_src,
                 "--steps", str(arguments.steps), "--kinds", ",".join(kinds)],
                capture_output=True, text=True,
                timeout=TIMEOUT_S, stdin=subprocess.DEVNULL, check=True)
            rows.append(json.loads(completed.stdout.splitlines()[-1]))
    print(f"Steps of each kind: {arguments.steps}, caches evicted before each; torch imported: "
          f"{'yes' if rows[0]['torch'] else 'no (every stage on the general path)'}.\n")
    print("| process | step | this checkout, µs | baseline, µs | difference (paired), µs |")
    print("|---|---|---|---|---|")
    for process, row in enumerate(rows, 1):
        for kind in kinds:
            cells = row[kind]
            print(f"| {process} | {kind} | {cells['this_ns'] / 1000:.1f} | "
                  f"{cells['baseline_ns'] / 1000:.1f} | {cells['difference_ns'] / 1000:+.1f} |")


if __name__ == "__main__":
    main()

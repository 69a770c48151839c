"""``health-check``'s own wall time, its p95 against the time budgets of the programs that run it
(docs/fleet.md: Slurm's HealthCheckProgram killed at 60 s, NHC 30 s for all its checks and 5 s
per external command by default, node-problem-detector 5 s by default).

    python benchmarks/health_check.py [--runs 20] [--timeout 40]

Each round runs, alternated (so that the machine's load falls on both alike):

1. the anchor, a bare ``python -c "import torch; torch.ones(1).sum()"``: what any check of the
   node's torch costs by hand, Python's teardown of torch included;
2. the floor, the same ending with ``os._exit(0)`` (docs/performance.md's floor): no teardown,
   which the check's worker skips too;
3. ``python -m kernodeck_diagnostic health-check --exit-profile npd --timeout T`` (never
   ``--slurm``: nothing is drained), the package from src/ on PYTHONPATH, in the same
   interpreter, as the tool installed into the node's venv runs.

Both under the real CPU build of torch 2.13.0 (tests/envs.py's cached environment). On a machine
without a GPU the check ends at its backend stage (``GPU_BACKEND_ABSENT``, the environment's
fault), after ``import torch`` and the host probe: the path every run takes; on a GPU node the
computation on each device comes after it (docs/performance.md, ``--all-devices``). Printed:
the median, p95 (nearest rank) and largest wall time of each, the ratio of the check's p95 to
each anchor's, and each host's budget against the check's p95. Every subprocess is bounded.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ANCHOR = "import torch; torch.ones(1).sum()"
FLOOR = ANCHOR + "; import os; os._exit(0)"
# The hosts' limits on one run of the check, in seconds (docs/fleet.md's recipes).
BUDGETS = {"Slurm HealthCheckProgram": 60.0, "NHC, all checks": 30.0,
           "NHC, one command (default -t)": 5.0, "node-problem-detector (default)": 5.0}


def cpu_python() -> Path:
    from run import load_envs  # benchmarks/run.py, beside this script

    envs = load_envs()
    return Path(envs.python_of(envs.torch_cpu()))


def environment() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("SLURM_", "PYTHON", "KD_"))}
    env["PYTHONPATH"] = str(ROOT / "src")
    return env


def timed(argv: list[str], env: dict[str, str], bound: float) -> tuple[float, int]:
    """Wall seconds of one run of ``argv``, and its exit status."""
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, timeout=bound, check=False)
    return time.perf_counter() - start, done.returncode


def p95(values: list[float]) -> float:
    """The 95th percentile, nearest rank: the value 95 % of the runs did not exceed."""
    ordered = sorted(values)
    return ordered[max(math.ceil(0.95 * len(ordered)) - 1, 0)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--timeout", type=float, default=40.0, help="health-check's --timeout")
    args = parser.parse_args()
    python = str(cpu_python())
    env = environment()
    bound = args.timeout + 120  # a loaded machine: a bare import of torch took 50 s here
    commands = {
        "anchor: import torch; torch.ones(1).sum()": [python, "-c", ANCHOR],
        "floor: the same; os._exit(0)": [python, "-c", FLOOR],
        "health-check": [python, "-m", "kernodeck_diagnostic", "health-check",
                         "--exit-profile", "npd", "--timeout", str(args.timeout)]}
    for argv in commands.values():  # one warm-up round: the page cache
        timed(argv, env, bound)
    walls: dict[str, list[float]] = {name: [] for name in commands}
    statuses: dict[str, set[int]] = {name: set() for name in commands}
    for _ in range(args.runs):
        for name, argv in commands.items():
            wall, status = timed(argv, env, bound)
            walls[name].append(wall)
            statuses[name].add(status)
    print(f"{args.runs} alternated runs each, Python {sys.version.split()[0]} front, torch 2.13.0"
          f" CPU build, {os.cpu_count()} CPUs")
    print(f"{'command':45} {'median':>8} {'p95':>8} {'max':>8}  exit")
    for name, values in walls.items():
        print(f"{name:45} {statistics.median(values):8.2f} {p95(values):8.2f} "
              f"{max(values):8.2f}  {sorted(statuses[name])}")
    check = p95(walls["health-check"])
    for name in list(walls)[:2]:
        print(f"health-check p95 / {name.split(':')[0]} p95: {check / p95(walls[name]):.2f}")
    for host, budget in BUDGETS.items():
        verdict = "fits" if check <= budget else "does NOT fit: raise the host's limit"
        print(f"{host:34} {budget:5.0f} s: p95 {check:.2f} s {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The --distributed rows of docs/performance.md and docs/scale.md, measured in one run.

    python benchmarks/distributed.py [--runs 5] [--timeout 10]

1. ``torchrun --nproc-per-node 2 -m kernodeck_diagnostic --distributed --device cpu`` against
   ``torchrun --nproc-per-node 2`` running a bare script that imports torch, joins the group
   (gloo) and all-reduces: the median wall time of each, alternated round by round, and their
   ratio (target: at most 1.10).
2. A missing rank: ranks 0 and 1 of a world of 3 started by hand with torchrun's variables, rank
   2 never started: when each rank's verdict (its exit) comes, against ``--timeout`` + 5 s.

The real CPU build of torch (tests/envs.py's cached environment) runs both; the package comes
from src/ on PYTHONPATH; torchrun is run as ``python -m torch.distributed.run`` (what the
``torchrun`` script runs). Every subprocess is bounded.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BOUND_S = 180
BARE = """\
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
value = torch.tensor([dist.get_rank() + 1], dtype=torch.int64)
dist.all_reduce(value)
world = dist.get_world_size()
assert int(value.item()) == world * (world + 1) // 2
dist.barrier()
dist.destroy_process_group()
"""


def cpu_python() -> Path:
    from run import load_envs  # benchmarks/run.py, beside this script

    envs = load_envs()
    return Path(envs.python_of(envs.torch_cpu()))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def environment() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("SLURM_", "PYTHON")) and key not in (
               "RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "GROUP_RANK")}
    env["PYTHONPATH"] = str(ROOT / "src")
    return env


def timed(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    completed = subprocess.run(argv, cwd=cwd, env=environment(), capture_output=True,
                               timeout=BOUND_S, check=False)
    elapsed = time.perf_counter() - start
    if completed.returncode != 0:
        raise SystemExit(f"{argv[3:]} exited {completed.returncode}: "
                         f"{completed.stderr.decode(errors='replace')[-2000:]}")
    return elapsed


def launch_overhead(python: Path, runs: int, timeout: int, work: Path) -> tuple[float, float]:
    bare = work / "bare_allreduce.py"
    bare.write_text(BARE, encoding="utf-8")
    tool: list[float] = []
    plain: list[float] = []
    for round_index in range(runs + 1):  # the first round warms the caches, and is not kept

        def torchrun(*program: str) -> list[str]:
            return [str(python), "-m", "torch.distributed.run", "--nproc-per-node", "2",
                    "--master-addr", "127.0.0.1", "--master-port", str(free_port()), *program]

        pair = [("tool", torchrun("-m", "kernodeck_diagnostic", "--distributed", "--device",
                                  "cpu", "--timeout", str(timeout))),
                ("bare", torchrun(str(bare)))]
        if round_index % 2:
            pair.reverse()
        for name, argv in pair:
            elapsed = timed(argv, work)
            if round_index:
                (tool if name == "tool" else plain).append(elapsed)
    return statistics.median(tool), statistics.median(plain)


def missing_rank(python: Path, timeout: int, work: Path) -> list[tuple[int, int, float]]:
    port = free_port()
    start = time.perf_counter()
    ranks = []
    for rank in (0, 1):
        env = environment()
        env.update(RANK=str(rank), WORLD_SIZE="3", LOCAL_RANK=str(rank), GROUP_RANK="0",
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        ranks.append((rank, subprocess.Popen(
            [str(python), "-m", "kernodeck_diagnostic", "--distributed", "--device", "cpu",
             "--timeout", str(timeout)], cwd=work, env=env, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)))
    ended = []
    for rank, process in ranks:
        process.wait(BOUND_S)
        ended.append((rank, process.returncode, time.perf_counter() - start))
    return ended


def main() -> int:
    parser = argparse.ArgumentParser(prog="benchmarks/distributed.py")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--timeout", type=int, default=10)
    args = parser.parse_args()
    python = cpu_python()
    with tempfile.TemporaryDirectory(prefix="kd-bench-distributed-") as folder:
        work = Path(folder)
        tool, bare = launch_overhead(python, args.runs, args.timeout, work)
        print(f"torchrun --nproc-per-node 2, tool --distributed --device cpu: {tool:.2f} s "
              f"(median of {args.runs})")
        print(f"torchrun --nproc-per-node 2, bare import + group + all-reduce: {bare:.2f} s")
        print(f"ratio: {tool / bare:.2f} (target <= 1.10)")
        for rank, code, elapsed in missing_rank(python, args.timeout, work):
            print(f"missing rank 2 of 3: rank {rank} exit {code} after {elapsed:.1f} s "
                  f"(limit {args.timeout} s + 5 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

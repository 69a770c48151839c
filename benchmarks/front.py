"""The front's own time, before and after a change: two checkouts head to head, many rounds.

    python benchmarks/front.py --baseline DIR [--runs 40]

benchmarks/run.py alternates a dozen commands per round, each taking seconds; a change of tens of
milliseconds in the front is lost in that run's noise on a small machine. This script alternates
only the commands the front's time shows in, for this checkout and for ``--baseline`` (e.g.
``git archive HEAD`` unpacked before the change), in the same rounds, in an order that turns
every round:

- the zipapp (``python kernodeck-diagnostic-v1.pyz --device cpu``), built from each checkout by
  its own ``scripts/build_pyz.py``;
- the installed package, as ``python -m kernodeck_diagnostic --device cpu`` with the checkout's
  ``src`` on ``PYTHONPATH`` (its bytecode written once, in a warm-up round: what an install has);

each with the real CPU build of torch (tests/envs.py's cached environment) and with the fake torch
that imports at once (tests/fakes), where the front is nearly all there is. It prints the medians,
the median of the per-round differences (paired: the load of the moment cancels out) and the
zipapp / installed ratio of each checkout (docs/performance.md, row 3: at most 1.05). Nothing is
written outside a temporary folder, removed at the end; every subprocess is bounded.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BOUND_S = 120
TARGET_ZIPAPP_VS_INSTALLED = 1.05


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True, metavar="DIR",
                        help="the checkout to compare with (e.g. `git archive HEAD` unpacked)")
    parser.add_argument("--runs", type=int, default=40, help="measured rounds (default 40)")
    args = parser.parse_args(argv)
    if args.runs < 2:
        parser.error("--runs must be at least 2")
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from run import load_envs  # benchmarks/run.py, beside this script

    envs = load_envs()
    python = str(envs.python_of(envs.torch_cpu()))
    work = Path(tempfile.mkdtemp(prefix="bench-front-"))
    try:
        checkouts = {"this": ROOT, "baseline": args.baseline.resolve()}
        commands: dict[tuple[str, str, str], tuple[list[str], dict[str, str]]] = {}
        for name, checkout in checkouts.items():
            # A copy of src: the bytecode the warm-up writes stays out of both checkouts.
            source = work / name / "src"
            shutil.copytree(checkout / "src", source,
                            ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
            pyz = work / name / "kernodeck-diagnostic-v1.pyz"
            subprocess.run([sys.executable, str(checkout / "scripts" / "build_pyz.py"),
                            "--output", str(pyz)], check=True, capture_output=True,
                           timeout=BOUND_S)
            for torch, fake in (("real torch", False), ("fake instant torch", True)):
                commands[(name, "zipapp", torch)] = (
                    [python, str(pyz), "--device", "cpu"], _env([], fake=fake))
                commands[(name, "installed", torch)] = (
                    [python, "-m", "kernodeck_diagnostic", "--device", "cpu"],
                    _env([str(source)], fake=fake))
        times: dict[tuple[str, str, str], list[float]] = {key: [] for key in commands}
        keys = list(commands)
        for round_ in range(args.runs + 1):  # the first is the warm-up: bytecode, caches
            order = keys[round_ % len(keys):] + keys[:round_ % len(keys)]
            for key in order:
                argv_, env = commands[key]
                start = time.perf_counter()
                completed = subprocess.run(argv_, env=env, cwd=work, capture_output=True,
                                           timeout=BOUND_S, stdin=subprocess.DEVNULL,
                                           check=False)
                elapsed = time.perf_counter() - start
                if b"CPU_CHECK_PASSED" not in completed.stdout:
                    said = (completed.stdout + completed.stderr)[-1000:].decode(errors="replace")
                    print(f"benchmark failed: {' '.join(key)} did not pass:\n{said}",
                          file=sys.stderr)
                    return 2
                if round_:
                    times[key].append(elapsed)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"## The front, this checkout against --baseline ({args.runs} alternated rounds, "
          "medians)\n")
    print("| command | torch | this checkout | --baseline | paired difference |")
    print("|---|---|---|---|---|")
    for form in ("zipapp", "installed"):
        for torch in ("real torch", "fake instant torch"):
            mine, theirs = times[("this", form, torch)], times[("baseline", form, torch)]
            paired = statistics.median(a - b for a, b in zip(mine, theirs))
            print(f"| {form} | {torch} | {statistics.median(mine):.3f} s | "
                  f"{statistics.median(theirs):.3f} s | {paired * 1000:+.0f} ms |")
    print(f"\n| zipapp / installed, real torch (row 3, <= {TARGET_ZIPAPP_VS_INSTALLED:.2f}) | "
          "this checkout | --baseline |\n|---|---|---|")
    ratios = [statistics.median(times[(name, "zipapp", "real torch")])
              / statistics.median(times[(name, "installed", "real torch")])
              for name in ("this", "baseline")]
    print(f"| ratio of the medians | {ratios[0]:.3f} | {ratios[1]:.3f} |")
    return 0


def _env(paths: list[str], *, fake: bool) -> dict[str, str]:
    """benchmarks/run.py's clean environment, with ``paths`` first on the import path, and the
    fake torch (tests/fakes) after them when ``fake``."""
    from run import FAKES, base_env

    paths = [*paths, str(FAKES)] if fake else paths
    return base_env(**({"KD_FAKE_TORCH": "cuda_pass"} if fake else {}),
                    **({"PYTHONPATH": os.pathsep.join(paths)} if paths else {}))


if __name__ == "__main__":
    sys.exit(main())

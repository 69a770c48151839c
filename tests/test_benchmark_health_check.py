"""benchmarks/health_check.py works end to end: one round prints every row (no timing asserted:
timings flake on shared machines; the numbers live in docs/performance.md and docs/fleet.md)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import ROOT, clean_env

pytestmark = pytest.mark.slow


def test_one_round_prints_the_check_the_anchor_and_every_hosts_budget() -> None:
    completed = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "health_check.py"), "--runs", "1",
         "--timeout", "20"], cwd=ROOT / "benchmarks", capture_output=True, text=True,
        timeout=600, env=clean_env(), stdin=subprocess.DEVNULL, check=False)
    assert completed.returncode == 0, completed.stdout + completed.stderr[-3000:]
    table = completed.stdout
    for words in ("anchor: import torch; torch.ones(1).sum()", "health-check", "p95",
                  "health-check p95 / anchor p95:",
                  "floor: the same; os._exit(0)", "health-check p95 / floor p95:",
                  "Slurm HealthCheckProgram",
                  "NHC, all checks", "NHC, one command (default -t)",
                  "node-problem-detector (default)"):
        assert words in table, words
